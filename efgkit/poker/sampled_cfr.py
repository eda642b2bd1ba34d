"""CFR with public chance sampling on a card abstraction (Johanson et al. 2012).

Each iteration samples one whole board (every public chance event), then walks the
betting tree with that board: hands stay full vectors (every private deal at once), so
only the public chance is sampled. The regrets and averages live per (betting decision,
bucket) as in ``BucketLayout`` — the abstract game's information sets — and are updated
by the same rules as every efgkit CFR variant (``vector_cfr.update_rows``: alternating
updates, player 0 first; CFR+, DCFR, the predictive and scheduled variants). Memory is the
strategy arrays plus O(depth x hands); nothing grows with the number of boards, so
heads-up limit hold'em runs as its abstraction allows.

Values at terminals carry the chance weight of the sampled board divided by the probability
of sampling it (every board sequence equally likely), so an iteration's counterfactual
values are unbiased estimates of the full ones; with no board (one-round games) the walk is
exactly vector CFR's (tests/test_sampled_cfr.py).
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.poker.betting_tree import DEAL, FOLD
from efgkit.poker.bucket_layout import BucketLayout
from efgkit.poker.public_tree import showdown_orders
from efgkit.poker.terminal_values import fold_payoff, fold_values, showdown_values
from efgkit.poker.vector_cfr import SolverState, clear_rows, match_rows, update_rows
from efgkit.solvers.cfr import (
    PREDICTIVE,
    VARIANT_CODES,
    Settings,
    average_weight,
    check_iterations,
    checked_parameters,
    discount,
    kernel_parameters,
)
from efgkit.solvers.strategy import normalize_per_infoset


class SampledBoard(NamedTuple):
    """One sampled board: per level the ``valid`` hands (levels, hands) int64 and their
    ``valid_count``, each hand's ``bucket`` (levels, hands) int64 (-1 off the board), the
    terminal ``weight`` (levels,); the final board's hands sorted by ``strength``
    (``sorted_hands``, ``strength`` (1, hands), ``sorted_count`` (1,)); ``hand_cards``."""

    valid: np.ndarray
    valid_count: np.ndarray
    bucket: np.ndarray
    weight: np.ndarray
    sorted_hands: np.ndarray
    strength: np.ndarray
    sorted_count: np.ndarray
    hand_cards: np.ndarray


class Walk(NamedTuple):
    """Per depth int64 ``node``, ``cursor``, ``action``; float64 (depth, hands) ``own`` and
    ``opponent`` reach and ``values`` of the updating player; ``card_sum`` (cards,) scratch."""

    node: np.ndarray
    cursor: np.ndarray
    action: np.ndarray
    own: np.ndarray
    opponent: np.ndarray
    values: np.ndarray
    card_sum: np.ndarray


@numba.njit(cache=True)
def _open(view, board, walk, state, player, weight, depth):
    """Start the node at ``depth``; True for a terminal (its values filled). At the updating
    player's node, add its average-strategy contribution (``weight`` x own reach x strategy)."""
    node = walk.node[depth]
    kind = view.kind[node]
    level = view.level[node]
    if kind > DEAL:
        scale = board.weight[level]
        out = walk.values[depth]
        if kind == FOLD:
            folder = view.folder[node]
            payoff = fold_payoff(view.contribution, node, folder, player)
            fold_values(walk.opponent[depth], board.hand_cards, board.valid[level, :board.valid_count[level]],
                        walk.card_sum, payoff * scale, out)
        else:
            count = board.sorted_count[0]
            showdown_values(walk.opponent[depth], board.hand_cards, board.sorted_hands[0, :count],
                            board.strength[0, :count], walk.card_sum,
                            view.contribution[node, 1 - player] * scale,
                            view.contribution[node, player] * scale, out)
        return True
    walk.values[depth, :] = 0.0
    walk.cursor[depth] = 0
    if kind == player and weight > 0.0:
        m = view.num_children[node]
        start = view.action_start[view.decision_index[node]]
        for h in board.valid[level, :board.valid_count[level]]:
            w = weight * walk.own[depth, h]
            if w != 0.0:
                row = start + board.bucket[level, h] * m
                for a in range(m):
                    state.average[row + a] += w * state.strategy[row + a]
    return False


@numba.njit(cache=True)
def _next_child(view, board, walk, state, player, averaging, depth):
    """Set up the next child worth visiting at ``depth + 1`` — one the opponent reaches, or
    (``averaging``) one the updating player reaches, whose average strategy still counts;
    False when none is left."""
    node = walk.node[depth]
    kind = view.kind[node]
    a = walk.cursor[depth]
    m = view.num_children[node]
    child = view.first_child[node]
    if kind == DEAL:
        if a == 1:
            return False
        level = view.level[child]
        alive = False
        for x in range(board.valid_count[level]):
            h = board.valid[level, x]
            walk.own[depth + 1, h] = walk.own[depth, h]
            walk.opponent[depth + 1, h] = walk.opponent[depth, h]
            alive = alive or walk.opponent[depth, h] != 0.0 or (averaging and walk.own[depth, h] != 0.0)
        walk.cursor[depth] = 1
        walk.action[depth] = 0
        walk.node[depth + 1] = child
        return alive
    level = view.level[node]
    valid = board.valid[level, :board.valid_count[level]]
    start = view.action_start[view.decision_index[node]]
    while a < m:
        alive = False
        for h in valid:
            p = state.strategy[start + board.bucket[level, h] * m + a]
            if kind == player:
                walk.own[depth + 1, h] = walk.own[depth, h] * p
                walk.opponent[depth + 1, h] = walk.opponent[depth, h]
            else:
                walk.own[depth + 1, h] = walk.own[depth, h]
                walk.opponent[depth + 1, h] = walk.opponent[depth, h] * p
            reached = walk.opponent[depth + 1, h] != 0.0 or (averaging and walk.own[depth + 1, h] != 0.0)
            alive = alive or reached
        if alive:
            break
        a += 1
    walk.cursor[depth] = a + 1
    if a == m:
        return False
    walk.action[depth] = a
    walk.node[depth + 1] = child + a
    return True


@numba.njit(cache=True)
def _gather(view, board, walk, state, player, depth):
    """Add the finished child into the node at ``depth``; at the updating player's node also
    the child's value into its instantaneous regrets (the node's own value is taken off at
    ``_close``)."""
    node = walk.node[depth]
    kind = view.kind[node]
    level = view.level[walk.node[depth + 1]]
    valid = board.valid[level, :board.valid_count[level]]
    if kind != player:
        for h in valid:
            walk.values[depth, h] += walk.values[depth + 1, h]
        return
    m = view.num_children[node]
    start = view.action_start[view.decision_index[node]] + walk.action[depth]
    for h in valid:
        x = start + board.bucket[level, h] * m
        v = walk.values[depth + 1, h]
        walk.values[depth, h] += state.strategy[x] * v
        state.instant[x] += v


@numba.njit(cache=True)
def _close(view, board, walk, state, player, depth):
    """At the updating player's node: instantaneous regret = action value - node value."""
    node = walk.node[depth]
    if view.kind[node] != player:
        return
    m = view.num_children[node]
    level = view.level[node]
    start = view.action_start[view.decision_index[node]]
    for h in board.valid[level, :board.valid_count[level]]:
        row = start + board.bucket[level, h] * m
        v = walk.values[depth, h]
        for a in range(m):
            state.instant[row + a] -= v


@numba.njit(cache=True)
def _walk_player(view, board, walk, state, player, weight):
    """One player's update walk over the betting tree on the sampled board (explicit stack)."""
    walk.node[0] = 0
    for h in board.valid[0, :board.valid_count[0]]:
        walk.own[0, h] = 1.0
        walk.opponent[0, h] = 1.0
    if _open(view, board, walk, state, player, weight, 0):
        return
    depth = 0
    while True:
        if _next_child(view, board, walk, state, player, weight > 0.0, depth):
            depth += 1
            if not _open(view, board, walk, state, player, weight, depth):
                continue
        else:
            _close(view, board, walk, state, player, depth)
            if depth == 0:
                return
        depth -= 1
        _gather(view, board, walk, state, player, depth)


@numba.njit(cache=True)
def _iteration(view, board, walk, settings, rows0, rows1, action_offset, t, state):
    """Iteration ``t`` on one sampled board: both players, alternating, player 0 first."""
    weight = average_weight(settings.variant, t, settings.delay, settings.gamma, settings.horizon)
    for player in range(2):
        rows = rows0 if player == 0 else rows1
        clear_rows(rows, action_offset, state.instant)
        _walk_player(view, board, walk, state, player, weight)
        update_rows(rows, action_offset, settings, t, state)


class SampledCFR:
    """Any efgkit CFR variant with public chance sampling on a ``BucketLayout``.

    ``seed`` fixes the boards sampled; ``state_arrays`` and the RNG state (``rng_state``)
    resume a run bit-identically.
    """

    def __init__(self, layout: BucketLayout, *, variant: str = "cfr+", seed: int = 0, **parameters) -> None:
        given = {name: parameters.get(name) for name in ("delay", "alpha", "beta", "gamma", "gamma_start",
                                                          "horizon")}
        unknown = set(parameters) - set(given)
        if unknown:
            raise ParameterError(f"SampledCFR takes no parameter {sorted(unknown)[0]!r}")
        self.parameters = checked_parameters(variant, given)
        kernel = kernel_parameters(variant, self.parameters)
        self.variant, self.layout = variant, layout
        self._settings = Settings(VARIANT_CODES[variant], *kernel)
        betting = layout.betting
        self.betting = betting
        self._view = layout.view()
        rows = [np.full(b, d) for d, b in enumerate(layout.buckets.tolist())]
        row_decision = np.concatenate(rows).astype(np.int64)
        row_bucket = np.concatenate([np.arange(b) for b in layout.buckets.tolist()]).astype(np.int64)
        first = layout.action_start[row_decision] + row_bucket * layout.width[row_decision]
        self.action_offset = np.append(first, layout.num_actions).astype(np.int64)
        player = betting.kind[betting.decision_nodes][row_decision]
        self._rows = [np.flatnonzero(player == p).astype(np.int64) for p in (0, 1)]
        actions = layout.num_actions
        self.regrets, self.average_accumulator = np.zeros(actions), np.zeros(actions)
        self._state = SolverState(self.regrets, self.average_accumulator, np.zeros(actions),
                                  np.zeros(actions))
        self.iteration = 0
        self.rng = np.random.default_rng(seed)
        n = betting.num_cards
        self.hand_cards, self.hand_mask = betting.hands()
        boards, left = [1], n
        for size in betting.deal_size.tolist():
            boards.append(boards[-1] * comb(left, size))
            left -= size
        self._level_weight = betting.chance_weight * np.array(boards, np.float64)
        depth = betting.max_depth + 2
        hands = self.hand_cards.shape[0]
        self._walk = Walk(np.zeros(depth, np.int64), np.zeros(depth, np.int64), np.zeros(depth, np.int64),
                          np.zeros((depth, hands)), np.zeros((depth, hands)), np.zeros((depth, hands)),
                          np.zeros(n))
        self._rematch()

    def _rematch(self) -> None:
        scale = (1.0 if self.variant in ("pcfr+", "hs-pcfr+")
                 else discount(self.iteration, self._settings.alpha))
        for rows in self._rows:
            match_rows(rows, self.action_offset, self.variant in PREDICTIVE, scale, self._state)

    def _sample_board(self) -> SampledBoard:
        total = int(self.betting.deal_size.sum())
        return self.board_of(self.rng.choice(self.betting.num_cards, size=total, replace=False))

    def board_of(self, cards) -> SampledBoard:
        """The kernel's view of the board dealing ``cards`` (int, every deal's cards in order)."""
        betting, abstraction = self.betting, self.layout.abstraction
        cards = np.array(cards, np.int64)
        levels, hands = betting.num_levels, self.hand_cards.shape[0]
        valid = np.zeros((levels, hands), np.int64)
        count = np.zeros(levels, np.int64)
        bucket = np.full((levels, hands), -1, np.int64)
        dealt = 0
        for level in range(levels):
            if level:
                dealt += int(betting.deal_size[level - 1])
                cards[dealt - int(betting.deal_size[level - 1]):dealt].sort()
            board = cards[:dealt]
            mask = int((np.int64(1) << board).sum()) if dealt else 0
            alive = np.flatnonzero((self.hand_mask & mask) == 0)
            valid[level, :alive.shape[0]] = alive
            count[level] = alive.shape[0]
            buckets = abstraction.buckets(betting.round_of_level[level], board, self.hand_cards)
            bucket[level, alive] = buckets[alive]
        sorted_hands = np.zeros((1, hands), np.int64)
        strength = np.zeros((1, hands), np.int64)
        sorted_count = np.zeros(1, np.int64)
        deck = betting.game.card_structure
        showdown_orders(self.hand_cards, self.hand_mask, cards[None, :dealt].copy(), np.ones(1, np.bool_),
                        deck.num_ranks, deck.num_suits, sorted_count, sorted_hands, strength)
        return SampledBoard(valid, count, bucket, self._level_weight, sorted_hands, strength, sorted_count,
                            self.hand_cards)

    def iterate(self, iterations: int = 1) -> SampledCFR:
        """Run ``iterations`` iterations, each on a newly sampled board."""
        check_iterations(self.variant, self._settings.horizon, self.iteration, iterations)
        for _ in range(iterations):
            self.iteration += 1
            _iteration(self._view, self._sample_board(), self._walk, self._settings, self._rows[0],
                       self._rows[1], self.action_offset, self.iteration, self._state)
        return self

    def state_arrays(self) -> dict[str, np.ndarray]:
        arrays = {"regrets": self.regrets, "average_accumulator": self.average_accumulator}
        if self.variant in PREDICTIVE:
            arrays["prediction"] = self._state.instant
        return arrays

    def average_strategy(self) -> np.ndarray:
        """The average strategy per layout action (uniform where nothing accumulated)."""
        return normalize_per_infoset(self.average_accumulator, self.action_offset)

    def current_strategy(self) -> np.ndarray:
        return self._state.strategy.copy()

