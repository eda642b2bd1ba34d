"""The ACPC dealer protocol (version 2.0) for two-player limit games: match states, a dealer
and a client loop that plays a policy.

The protocol is the one of the ACPC server (project_acpc_server: protocol.pdf, dealer.c,
game.c). A player connects to its seat's port and sends ``VERSION:2.0.0``; the dealer then
sends every seat a line ``MATCHSTATE:position:hand:betting:cards`` after each action and
at the end of each hand, ended by ``\\r\\n``. ``position`` is the player the seat is in
this hand (0 or 1; the seats swap positions every hand), ``betting`` the limit actions
``f``/``c``/``r`` of each round, rounds separated by ``/``, and ``cards`` the hole cards
of each position separated by ``|`` (another position's only at a showdown), then ``/``
and each later round's board cards. The player to act answers with the line it received,
``:`` and its action. Lines starting with ``#`` or ``;`` are comments. Card names are a
rank of ``23456789TJQKA`` and a suit of ``cdhs``; a reduced deck keeps the top ranks and
suits (``numRanks = 3``, ``numSuits = 2``: Qh Qs Kh Ks Ah As).

efgkit numbers the cards of its ``CardStructure`` ``rank * num_suits + suit`` with the
same ranks (weakest first) and suits in the order ``s h d c``; ``AcpcDeck`` maps the two.
A round ends when a call closes it (a check that opens a round does not), the hand when a
player folds or the last round ends; raises in a round are capped by ``maxRaises`` (the
blinds are no raise), a fold is valid only facing a bet, as in the server's
``isValidAction``.

``AcpcDealer`` is a dealer for tests and benchmarks (the server itself is C code outside
this project): seeded deals, the seats swapping positions every hand, and a duplicate
option that plays every deal twice, once from each seat, so that the cards' luck cancels.
It reports each seat's total and every hand's value, and counts invalid actions (a
malformed answer or an illegal action is counted and played as a call, as the server
does).
"""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from efgkit.errors import FileFormatError, GameDefinitionError, ParameterError
from efgkit.games.poker import SUIT_SYMBOLS
from efgkit.interop.acpc import GameDefinition, limit_poker

VERSION_LINE = "VERSION:2.0.0"
ACPC_RANKS = "23456789TJQKA"
ACPC_SUITS = "cdhs"
ACTIONS = "fcr"
MAX_LINE = 4096
LOCALHOST = "127.0.0.1"


class ProtocolError(FileFormatError):
    """A line of the ACPC protocol that is malformed or does not fit the game."""


class AcpcDeck:
    """The ACPC names of a game's cards, both ways: efgkit card id <-> ``"Ks"``."""

    def __init__(self, definition: GameDefinition) -> None:
        self.num_ranks, self.num_suits = definition.num_ranks, definition.num_suits
        low_rank = len(ACPC_RANKS) - self.num_ranks
        self.names = [ACPC_RANKS[low_rank + card // self.num_suits]
                      + ACPC_SUITS[ACPC_SUITS.index(SUIT_SYMBOLS[card % self.num_suits])]
                      for card in range(self.num_ranks * self.num_suits)]
        self.ids = {name: card for card, name in enumerate(self.names)}

    def parse(self, text: str, count: int, line: str) -> list[int]:
        """The ids of ``count`` card names written together (``"KsQh"``)."""
        if len(text) != 2 * count:
            raise ProtocolError(f"expected {count} cards, found {text!r} in {line[:80]!r}")
        try:
            return [self.ids[text[i:i + 2]] for i in range(0, len(text), 2)]
        except KeyError:
            raise ProtocolError(f"{text!r} holds a card not in the game's deck: {line[:80]!r}") from None

    def text(self, cards) -> str:
        return "".join(self.names[card] for card in cards)


@dataclass
class AcpcBetting:
    """The betting of a hand so far, checked against the game's limit rules."""

    definition: GameDefinition
    rounds: list[str] = field(default_factory=lambda: [""])
    spent: list[int] = field(default_factory=list)
    folded: int = -1
    finished: bool = False
    own_actions: list[int] = field(default_factory=lambda: [0, 0])
    """Actions each position took (a decision's own-sequence length)."""

    def __post_init__(self) -> None:
        self.spent = list(self.definition.blind[:2])

    @property
    def round(self) -> int:
        return len(self.rounds) - 1

    def actor(self) -> int:
        """The position to act (the hand must not be finished)."""
        first = self.definition.first_player[self.round] - 1
        return (first + len(self.rounds[-1])) % 2

    def legal(self) -> str:
        """The legal actions, in efgkit's order: ``f`` facing a bet, ``c``, ``r`` below the cap."""
        actor = self.actor()
        facing = self.spent[1 - actor] > self.spent[actor]
        capped = self.rounds[-1].count("r") >= self.definition.max_raises[self.round]
        return ("f" if facing else "") + "c" + ("" if capped else "r")

    def apply(self, action: str) -> None:
        actor = self.actor()
        if self.finished or action not in self.legal():
            raise ProtocolError(f"action {action!r} is not legal after {self.text()!r}")
        self.own_actions[actor] += 1
        if action == "f":
            self.folded, self.finished = actor, True
        elif action == "c":
            self.spent[actor] = self.spent[1 - actor]
        else:
            self.spent[actor] = self.spent[1 - actor] + self.definition.raise_size[self.round]
        self.rounds[-1] += action
        if action == "c" and len(self.rounds[-1]) > 1:
            if self.round + 1 == self.definition.num_rounds:
                self.finished = True
            else:
                self.rounds.append("")

    def text(self) -> str:
        return "/".join(self.rounds)

    @classmethod
    def parse(cls, definition: GameDefinition, text: str, line: str = "") -> AcpcBetting:
        betting = cls(definition)
        for action in text.replace("/", ""):
            if action not in ACTIONS:
                raise ProtocolError(f"betting {text!r} holds {action!r}: {line[:80]!r}")
            try:
                betting.apply(action)
            except ProtocolError:
                raise ProtocolError(f"betting {text!r} is not legal in the game: {line[:80]!r}") from None
        if betting.text() != text:
            raise ProtocolError(f"betting {text!r} does not separate its rounds as the game does: "
                                f"{line[:80]!r}")
        return betting


@dataclass
class MatchState:
    """One dealer line: who the receiver is, the hand, the betting and the cards it shows."""

    position: int
    hand: int
    betting: AcpcBetting
    hole: list[list[int]]
    """Hole card ids per position ([] where hidden)."""
    board: list[int]
    """Board card ids dealt so far, in the order dealt."""
    line: str

    @classmethod
    def parse(cls, line: str, definition: GameDefinition, deck: AcpcDeck) -> MatchState:
        parts = line.split(":")
        if len(parts) != 5 or parts[0] != "MATCHSTATE" or not parts[1].isdigit() or not parts[2].isdigit():
            raise ProtocolError(f"not a MATCHSTATE line: {line[:80]!r}")
        position, hand = int(parts[1]), int(parts[2])
        if position > 1 or hand >= 1 << 32:
            raise ProtocolError(f"position {position} or hand {hand} out of range (two players, "
                                f"32-bit hand numbers): {line[:80]!r}")
        betting = AcpcBetting.parse(definition, parts[3], line)
        sections = parts[4].split("/")
        holes = sections[0].split("|")
        if len(holes) != 2 or len(sections) != betting.round + 1:
            raise ProtocolError(f"cards {parts[4]!r} do not fit two players in round {betting.round + 1}: "
                                f"{line[:80]!r}")
        hole = [deck.parse(text, definition.num_hole_cards, line) if text else [] for text in holes]
        if not hole[position]:
            raise ProtocolError(f"no hole cards for position {position}: {line[:80]!r}")
        board = [card for r, text in enumerate(sections[1:], start=1)
                 for card in deck.parse(text, definition.num_board_cards[r], line)]
        cards = hole[0] + hole[1] + board
        if len(set(cards)) != len(cards):
            raise ProtocolError(f"cards {parts[4]!r} repeat a card: {line[:80]!r}")
        return cls(position, hand, betting, hole, board, line)

    def to_act(self) -> bool:
        return not self.betting.finished and self.betting.actor() == self.position


Policy = Callable[[MatchState], list[float]]
"""Probabilities of ``state.betting.legal()`` for the receiver of ``state`` to act."""


def two_player_limit(definition: GameDefinition) -> GameDefinition:
    """``definition`` if the protocol code here plays it (efgkit's limit poker), else a
    GameDefinitionError."""
    limit_poker(definition, "acpc:gamedef")
    return definition


# ----------------------------------------------------------------------------- client
def play_acpc(host: str, port: int, definition: GameDefinition, policy: Policy, *, seed: int = 0,
              timeout: float = 60.0) -> int:
    """Connect to an ACPC dealer at ``host:port`` and play ``policy`` until the dealer
    closes the connection; the number of actions sent. ProtocolError for a malformed line."""
    deck = AcpcDeck(two_player_limit(definition))
    rng = random.Random(seed)
    sent = 0
    # the reader closed with the socket: a socket with a file open on it stays connected until
    # the file is closed, so a bot stopping at a bad line would leave its dealer waiting
    with socket.create_connection((host, port), timeout=timeout) as connection, \
            connection.makefile("rb") as reader:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # one line at a time
        connection.sendall(f"{VERSION_LINE}\r\n".encode())
        for raw in reader:
            if len(raw) > MAX_LINE or not raw.endswith(b"\n"):
                raise ProtocolError(f"a dealer line is longer than {MAX_LINE} bytes or unterminated")
            try:
                line = raw.decode("ascii").rstrip("\r\n")
            except UnicodeDecodeError:
                raise ProtocolError("a dealer line is not ASCII") from None
            if line[:1] in ("#", ";"):
                continue
            state = MatchState.parse(line, definition, deck)
            if not state.to_act():
                continue
            legal = state.betting.legal()
            action = rng.choices(legal, weights=policy(state))[0]
            connection.sendall(f"{line}:{action}\r\n".encode())
            sent += 1
    return sent


# ----------------------------------------------------------------------------- dealer
@dataclass
class MatchResult:
    """What a dealer reports: per seat (connection) its chips won in total and per hand."""

    hands: int
    totals: tuple[int, int]
    values: np.ndarray
    """int64 (hands, 2): chips each seat won in each hand."""
    invalid_actions: tuple[int, int]
    duplicate: bool

    def interval(self, seat: int = 0) -> tuple[float, float, float]:
        """(mean chips per hand of ``seat``, standard error, 95% half-width); with
        duplicate deals the two hands of a deal count as one sample."""
        values = self.values[:, seat].astype(np.float64)
        if self.duplicate:
            values = values[:values.shape[0] // 2 * 2].reshape(-1, 2).mean(axis=1)
        error = float(values.std(ddof=1) / np.sqrt(values.shape[0])) if values.shape[0] > 1 else float("inf")
        return float(values.mean()), error, 1.96 * error


class AcpcDealer:
    """A dealer for two seats on 127.0.0.1 (``ports`` are the seats' listening ports,
    chosen by the system unless given); ``run()`` plays ``hands`` hands and returns a
    MatchResult. Deals come from ``seed``; ``duplicate`` plays each deal twice, the seats
    in both positions."""

    def __init__(self, definition: GameDefinition, hands: int, *, seed: int = 0, duplicate: bool = False,
                 ports: tuple[int, int] = (0, 0), timeout: float = 60.0) -> None:
        if hands < 1 or (duplicate and hands % 2):
            raise ParameterError(f"hands must be positive{' and even with duplicate deals' * duplicate}, "
                                 f"got {hands}")
        self.definition = two_player_limit(definition)
        self.rules = limit_poker(definition, "acpc:gamedef")
        self.deck = AcpcDeck(definition)
        self.hands, self.seed, self.duplicate, self.timeout = hands, seed, duplicate, timeout
        self._listeners = []
        for port in ports:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((LOCALHOST, port))
            listener.listen(1)
            listener.settimeout(timeout)
            self._listeners.append(listener)
        self.ports = tuple(listener.getsockname()[1] for listener in self._listeners)

    def _deals(self):
        d = self.definition
        rng = np.random.default_rng(self.seed)
        cards = 2 * d.num_hole_cards + sum(d.num_board_cards)
        for hand in range(self.hands):
            if not self.duplicate or hand % 2 == 0:
                deal = rng.permutation(d.num_ranks * d.num_suits)[:cards].tolist()
            # ACPC's rotation: seat s is position (s + hand) % 2; with duplicate deals the
            # second hand of a deal gives each seat the other position's cards.
            yield hand, deal

    def run(self) -> MatchResult:
        seats = []
        try:
            for listener in self._listeners:
                connection, _ = listener.accept()
                connection.settimeout(self.timeout)
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                reader = connection.makefile("rb")
                if _read_line(reader) != VERSION_LINE:
                    raise ProtocolError(f"seat {len(seats) + 1} did not send {VERSION_LINE}")
                seats.append((connection, reader))
            values = np.zeros((self.hands, 2), np.int64)
            invalid = [0, 0]
            for hand, deal in self._deals():
                values[hand] = self._play_hand(hand, deal, seats, invalid)
            return MatchResult(self.hands, (int(values[:, 0].sum()), int(values[:, 1].sum())), values,
                               tuple(invalid), self.duplicate)
        finally:
            for connection, reader in seats:
                reader.close()
                connection.close()
            self.close()

    def close(self) -> None:
        for listener in self._listeners:
            listener.close()

    def _play_hand(self, hand: int, deal: list[int], seats, invalid: list[int]) -> tuple[int, int]:
        d = self.definition
        h = d.num_hole_cards
        hole = [deal[:h], deal[h:2 * h]]
        board = deal[2 * h:]
        position_of_seat = [(seat + hand) % 2 for seat in range(2)]
        betting = AcpcBetting(d)
        while True:
            for seat, (connection, _) in enumerate(seats):
                line = self._state_line(hand, position_of_seat[seat], betting, hole, board)
                connection.sendall(f"{line}\r\n".encode())
            if betting.finished:
                break
            actor = betting.actor()
            seat = position_of_seat.index(actor)
            expected = self._state_line(hand, actor, betting, hole, board)
            action = self._answer(seats[seat][1], expected)
            if action not in betting.legal():
                invalid[seat] += 1
                action = "c"
            betting.apply(action)
        value = self._value(betting, hole, board)
        return value[position_of_seat[0]], value[position_of_seat[1]]

    def _answer(self, reader, expected: str) -> str:
        """The action a seat answers ``expected`` with ("" if malformed)."""
        while True:
            line = _read_line(reader)
            if line[:1] in ("#", ";"):
                continue
            if line.startswith(expected + ":"):
                return line[len(expected) + 1:]
            if not line.startswith("MATCHSTATE:"):
                return ""

    def _state_line(self, hand: int, position: int, betting: AcpcBetting, hole, board) -> str:
        showdown = betting.finished and betting.folded < 0
        shown = [self.deck.text(hole[p]) if p == position or showdown else "" for p in range(2)]
        d = self.definition
        parts, at = ["|".join(shown)], 0
        for r in range(1, betting.round + 1):
            parts.append(self.deck.text(board[at:at + d.num_board_cards[r]]))
            at += d.num_board_cards[r]
        return f"MATCHSTATE:{position}:{hand}:{betting.text()}:{'/'.join(parts)}"

    def _value(self, betting: AcpcBetting, hole, board) -> tuple[int, int]:
        """Chips won by each position."""
        if betting.folded >= 0:
            winner = 1 - betting.folded
        else:
            outcome = self.rules.card_structure.showdown(tuple(hole[0]), tuple(hole[1]), tuple(board))
            winner = {1: 0, -1: 1, 0: -1}[outcome]
        if winner < 0:
            return 0, 0
        pot = betting.spent[1 - winner]
        return (pot, -pot) if winner == 0 else (-pot, pot)


def _read_line(reader) -> str:
    raw = reader.readline(MAX_LINE + 1)
    if not raw:
        raise ProtocolError("a player closed its connection")
    return raw.decode("ascii", errors="replace").rstrip("\r\n")


def serve_in_thread(dealer: AcpcDealer) -> tuple[threading.Thread, dict]:
    """Run ``dealer`` in a thread; the dict gets ``result`` or ``error`` when it ends."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = dealer.run()
        except (OSError, ProtocolError, GameDefinitionError) as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


__all__ = ["AcpcDealer", "AcpcDeck", "AcpcBetting", "MatchResult", "MatchState", "ProtocolError",
           "play_acpc", "serve_in_thread"]
