"""Local best response: a lower bound on the exploitability of a limit-poker strategy.

Lisý & Bowling 2017 ("Equilibrium Approximation Quality of Current No-Limit Poker Bots",
AAAI-17 workshop; arXiv 1612.07547). LBR plays the game against the strategy: at each of
its decisions it takes the strategy's range (the opponent's hands, Bayes-updated with the
strategy's action probabilities along the betting, with card removal), its equity against
that range with the rest of the board rolled out, and plays the action of Algorithm 1
(``board_walk._choose``: calling values ``wp * pot - (1 - wp) * asked``, a raise adds what
the range folds to it at once and assumes a call-down otherwise, fold is worth 0). LBR is
a legitimate strategy of the full game (it uses only its cards, the board and the
betting), so its expected winnings, averaged over both seats, are at most the best
response's: a lower bound on exploitability (NashConv / 2).

Variance reduction: a sampled board is played by every LBR hand against the whole
opponent range at once (``board_walk``), exactly over both players' hands and every mixed
action of the strategy, in both seats; only the board is random. Equities before the last
round average ``rollouts`` completions of the board (all of them when there are no more;
the last round is exact); the preflop ones (``preflop_rollouts`` completions, drawn once)
do not depend on the board and are computed once per run. Completions are drawn
independently of the board dealt, so LBR never sees cards it should not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import combinations

import numpy as np

from efgkit.errors import ParameterError
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.materialised.public_tree import showdown_tables
from efgkit.poker.streamed.board_walk import (
    LOCAL,
    BoardDealer,
    Estimate,
    LocalTables,
    new_walk,
    play_boards,
    responder_value,
    seat_sides,
)

ACTION_KINDS = "fcr"


def allowed_actions(actions: str, rounds: int) -> np.ndarray:
    """bool (rounds, 3): the kinds of action (fold, call, raise) LBR considers per round, from
    the paper's notation: ``fcr`` every round, or one set per round separated by slashes
    (``c/c/fcr/fcr``: only check or call before the turn)."""
    parts = actions.lower().split("/")
    if len(parts) == 1:
        parts = parts * rounds
    if len(parts) != rounds or any(not part or set(part) - set(ACTION_KINDS) for part in parts):
        raise ParameterError(f"LBR actions {actions!r}: letters of {ACTION_KINDS!r} (fold, call, raise), one "
                             f"set or {rounds} separated by '/'")
    return np.array([[kind in part for kind in ACTION_KINDS] for part in parts], np.bool_)


class LocalBestResponse:
    """LBR against ``strategy`` (a ``BucketLayout`` strategy of ``layout``).

    ``rollouts`` completions of the board per equity after the first deal and
    ``preflop_rollouts`` before it (all completions where there are no more); ``actions`` the
    kinds of action LBR considers per round (``allowed_actions``; the paper's action sets,
    e.g. ``c/c/fcr/fcr``); ``seed`` fixes the boards and completions drawn. ``run(boards)``
    samples boards, ``run()`` plays every board (small games); chips per game, averaged over
    the two seats (``seat_values_``: the last run's per-seat estimates).
    """

    def __init__(self, layout: BucketLayout, strategy, *, rollouts: int = 100, preflop_rollouts: int = 2000,
                 actions: str = "fcr", seed: int = 0) -> None:
        if rollouts < 1 or preflop_rollouts < 1:
            raise ParameterError(f"rollouts must be >= 1 (got {rollouts} and {preflop_rollouts})")
        self.layout = layout
        self.strategy = layout.checked(strategy)
        betting = layout.betting
        self.betting = betting
        self.actions = actions
        allowed = allowed_actions(actions, betting.game.num_rounds)
        self.big_blind = max(betting.game.blinds)
        self.rng = np.random.default_rng(seed)
        self.dealer = BoardDealer(betting, [layout.abstraction])
        self.view = layout.view()
        self._sides = [seat_sides([layout], [self.strategy], (0, 0))] * 2
        hands = self.dealer.hand_cards.shape[0]
        self._walk = new_walk(betting.max_depth + 2, hands, betting.num_cards)
        self._remaining, sizes = [], []
        for level in range(betting.num_levels - 1):
            dealt = int(betting.deal_size[:level].sum())
            rest = self.dealer.cards_dealt - dealt
            limit = preflop_rollouts if level == 0 else rollouts
            sizes.append(min(limit, math.comb(betting.num_cards - dealt, rest)))
            self._remaining.append(rest)
        start = np.concatenate([[0], np.cumsum(sizes), [sum(sizes)]]).astype(np.int64)
        rows = int(start[-1])
        decisions = betting.decision_nodes.shape[0]
        self._local = LocalTables(start, np.zeros(rows, np.int64), np.zeros((rows, hands), np.int64),
                                  np.zeros((rows, hands), np.int64), np.zeros((decisions, hands), np.int64),
                                  np.zeros(decisions, np.bool_), allowed, betting.round.astype(np.int64))
        if betting.num_levels > 1:
            self._complete(np.zeros(0, np.int64), 0)
        self.seat_values_: tuple[Estimate, Estimate] | None = None

    def _complete(self, board: np.ndarray, level: int) -> None:
        """Fill level ``level``'s rows with completions of ``board`` (all, or drawn at random)."""
        start, stop = self._local.level_start[level], self._local.level_start[level + 1]
        rest = self._remaining[level]
        left = np.setdiff1d(np.arange(self.betting.num_cards), board)
        rows = stop - start
        if math.comb(left.shape[0], rest) == rows:
            completions = np.array(list(combinations(left.tolist(), rest)), np.int64).reshape(rows, rest)
        else:
            completions = left[np.argsort(self.rng.random((rows, left.shape[0])), axis=1)[:, :rest]]
        boards = np.concatenate([np.broadcast_to(board, (rows, board.shape[0])), completions], axis=1)
        count, ordered, strength = showdown_tables(self.betting.game.card_structure, self.dealer.hand_cards,
                                                   self.dealer.hand_mask, boards)
        self._local.count[start:stop] = count
        self._local.hands[start:stop] = ordered
        self._local.strength[start:stop] = strength

    def board_values(self, cards) -> tuple[float, float]:
        """LBR's expected winnings in seat 0 and in seat 1 on the board ``cards`` (every deal's
        cards in order), exact over both players' hands."""
        cards = self.dealer.ordered(cards)
        board = self.dealer.deal(cards)
        dealt = 0
        for level in range(1, self.betting.num_levels - 1):
            dealt += int(self.betting.deal_size[level - 1])
            self._complete(cards[:dealt], level)
        return tuple(float(responder_value(self.view, board, self._sides[seat], self._local, self._walk,
                                           seat, LOCAL)) for seat in (0, 1))

    def run(self, boards: int | None = None, progress: Callable[[int], None] | None = None) -> Estimate:
        """LBR's winnings per game, both seats averaged, over ``boards`` sampled boards or
        (None) every board; the rollouts may still be sampled."""
        values, exact = play_boards(self.board_values, self.dealer, boards, self.rng, progress)
        self.seat_values_ = (Estimate.of(values[:, 0], exact), Estimate.of(values[:, 1], exact))
        return Estimate.of(values.mean(axis=1), exact)
