"""Strategies on a card abstraction: one row per (betting decision node, bucket).

The bucket of a hand is the card abstraction's (``card_abstraction.py``) for the board of
the node's round, so a row is an information set of the abstract game: imperfect recall
when the buckets forget earlier boards, the unabstracted game with ``LosslessCards``. Row
``(d, b)`` of decision node ``d`` (``BettingTree.decision_nodes[d]``) holds that node's
actions in order at ``action_start[d] + b * width[d]``: a strategy is one float64 array of
``num_actions`` probabilities — the layout the released HULHE CFR+ code keeps its regrets
and averages in (Burch's thesis §3.2).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from efgkit.errors import StrategyError
from efgkit.games.csr import offsets_of
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.card_abstraction import HandBuckets

ROW_SUM_TOLERANCE = 1e-6


class BettingView(NamedTuple):
    """What the streamed kernels read: ``BettingTree`` arrays (``kind``, ``first_child``,
    ``num_children``, ``level`` int64, ``contribution``, ``folder``, ``decision_index``,
    ``chance_weight`` (levels,)) and the layout's ``action_start`` int64
    (decisions + 1,): row (d, b) starts at ``action_start[d] + b * num_children``."""

    kind: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    level: np.ndarray
    contribution: np.ndarray
    folder: np.ndarray
    decision_index: np.ndarray
    action_start: np.ndarray
    chance_weight: np.ndarray


class BucketLayout:
    """Rows of ``abstraction``'s buckets at every decision node of ``betting``."""

    def __init__(self, betting: BettingTree, abstraction: HandBuckets) -> None:
        self.betting = betting
        self.abstraction = abstraction
        decisions = betting.decision_nodes
        self.width = betting.num_children[decisions].astype(np.int64)
        self.buckets = np.array([abstraction.num_buckets(int(r)) for r in betting.round[decisions]], np.int64)
        sizes = self.width * self.buckets
        self.action_start = offsets_of(sizes)
        self.num_actions = int(self.action_start[-1])
        self.num_rows = int(self.buckets.sum())

    def row_offsets(self) -> np.ndarray:
        """int64 (rows + 1,): where each row's actions start, rows in order (8 bytes a row:
        for checks and small layouts; the solvers compute a row's place instead)."""
        starts = [self.action_start[d] + np.arange(self.buckets[d]) * self.width[d]
                  for d in range(self.width.shape[0])]
        return np.concatenate([*starts, [self.num_actions]]).astype(np.int64)

    def row(self, strategy: np.ndarray, decision: int, round_index: int, board, hand) -> np.ndarray:
        """``strategy``'s probabilities at betting decision ``decision`` (an index into the
        betting tree's decision nodes) for the hole cards ``hand`` (card indices, ascending) on
        ``board``, the cards dealt up to round ``round_index``."""
        bucket = int(self.abstraction.buckets(round_index, np.asarray(board, np.int64),
                                              np.array([hand], np.int64))[0])
        start = int(self.action_start[decision]) + bucket * int(self.width[decision])
        return strategy[start:start + int(self.width[decision])]

    def view(self) -> BettingView:
        b = self.betting
        return BettingView(b.kind, b.first_child, b.num_children, b.level.astype(np.int64), b.contribution,
                           b.folder, b.decision_index, self.action_start, b.chance_weight)

    def random(self, seed: int) -> np.ndarray:
        """Every row a random distribution (each probability > 0): tests and benchmarks."""
        strategy = np.random.default_rng(seed).random(self.num_actions) + 1e-3
        for d in range(self.width.shape[0]):
            rows = strategy[self.action_start[d]:self.action_start[d + 1]].reshape(-1, self.width[d])
            rows /= rows.sum(axis=1, keepdims=True)
        return strategy

    def uniform(self) -> np.ndarray:
        """Every row uniform over its actions."""
        return np.repeat(1.0 / self.width, self.width * self.buckets)

    def pure(self, choose) -> np.ndarray:
        """Every row plays ``choose(labels)``'s action (an index into the node's action labels)."""
        strategy = np.zeros(self.num_actions)
        for d, node in enumerate(self.betting.decision_nodes.tolist()):
            action = choose(self.betting.action_labels[node])
            start = self.action_start[d]
            strategy[start + action:self.action_start[d + 1]:self.width[d]] = 1.0
        return strategy

    def checked(self, strategy) -> np.ndarray:
        """``strategy`` as float64 after checking its shape, finiteness and row sums."""
        array = np.ascontiguousarray(strategy, np.float64)
        if array.shape != (self.num_actions,):
            raise StrategyError(f"the strategy has shape {array.shape}, the layout {self.num_actions} "
                                f"actions ({self.abstraction.description})")
        if not np.all(np.isfinite(array)) or np.any(array < 0):
            raise StrategyError("the strategy holds negative or non-finite probabilities")
        for d in range(self.width.shape[0]):
            rows = array[self.action_start[d]:self.action_start[d + 1]].reshape(-1, self.width[d])
            sums = rows.sum(axis=1)
            if np.any(np.abs(sums - 1.0) > ROW_SUM_TOLERANCE):
                bad = int(np.flatnonzero(np.abs(sums - 1.0) > ROW_SUM_TOLERANCE)[0])
                raise StrategyError(f"row (decision {d}, bucket {bad}) sums to {sums[bad]:.6g}, not 1")
        return array
