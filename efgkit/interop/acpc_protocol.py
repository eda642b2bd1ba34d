"""The ACPC dealer protocol (version 2.0) for two-player limit games: match states and a
client loop that plays a policy.

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

The dealer the tests and benchmarks play against is ``benchmarks/acpc_dealer.py``.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

from efgkit.errors import FileFormatError
from efgkit.games.poker import SUIT_SYMBOLS
from efgkit.interop.acpc import GameDefinition, limit_poker

VERSION_LINE = "VERSION:2.0.0"
ACPC_RANKS = "23456789TJQKA"
ACPC_SUITS = "cdhs"
ACTIONS = "fcr"
MAX_LINE = 4096


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
    with socket.create_connection((host, port), timeout=timeout) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # one line at a time
        connection.sendall(f"{VERSION_LINE}\r\n".encode())
        reader = connection.makefile("rb")
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


__all__ = ["AcpcDeck", "AcpcBetting", "MatchState", "ProtocolError", "play_acpc"]
