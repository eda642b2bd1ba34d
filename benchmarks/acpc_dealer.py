"""A dealer of the ACPC protocol (``efgkit.interop.acpc_protocol``) for tests and benchmarks
(the server itself is C code outside this project): seeded deals, the seats swapping
positions every hand, and a duplicate option that plays every deal twice, once from each
seat, so that the cards' luck cancels. It reports each seat's total and every hand's value,
and counts invalid actions (a malformed answer or an illegal action is counted and played as
a call, as the server does). Sockets on 127.0.0.1 only.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass

import numpy as np

from efgkit.errors import GameDefinitionError, ParameterError
from efgkit.interop.acpc import GameDefinition, limit_poker
from efgkit.interop.acpc_protocol import (
    MAX_LINE,
    VERSION_LINE,
    AcpcBetting,
    AcpcDeck,
    ProtocolError,
    two_player_limit,
)

LOCALHOST = "127.0.0.1"


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
