"""The re-solving gadgets of ``gadgets.py`` solved on the poker engine: hands as vectors.

A gadget GameTree is a *head* (chance and opponent decisions above the subgame's roots) over
copies of the subgame. On the public tree the subgame is one ``PublicSubtree`` (a public node
right after a board deal, every hand a vector index) and the head becomes the subtree's root
ranges (``TreeView.root_reach``) plus, for the opponent's head decisions, a few extra regret
rows updated from the opponent's counterfactual values at the root — the same numbers, gadget
for gadget, as CFR on ``gadgets.py``'s GameTree (tests/test_poker_subgame_roots.py, Leduc, 1e-9):

* ``unsafe``: both players enter with their blueprint ranges (chance in the gadget); no head.
* ``resolve`` (Burch): one (terminate, follow) row per opponent hand ``h``; the re-solver enters
  with its range, the opponent with its follow probability. Terminate is worth ``c_I`` to the
  opponent (``terminate_payoffs`` times the head's chance probability ``π(I)/k``), follow its
  counterfactual value of the subgame's root.
* ``distributional`` / ``distributional-hedge`` (Brown & Sandholm §6.1): the resolve head with
  the opponent's follow probabilities set before every iteration by ``distributional.FollowRule``
  (Theorem 4's threshold or Appendix B's Hedge) from its normalised follow values under the
  current profile, as ``DistributionalSolver`` sets them on the GameTree.
* ``maxmargin`` / ``reach-maxmargin``: one opponent row choosing a live hand ``h`` (π(I) > 0);
  it enters with probability ``s(h)/π(I)`` (the gadget's chance picks the root in proportion to
  π(r)/π(I)); choosing ``h`` is worth ``v(h)/π(I) - alt(I)``. The gadget's payoff shift below
  the head changes no regret inside the subgame (every action of a node leaves the other
  player's reach, and so the shift's total, unchanged), so only the head sees it.

Rows inside the subgame carry the re-solver's range as a positive per-row factor the GameTree
gadget folds into chance: regrets and average accumulators differ by that factor, strategies
do not. The constraints are ``RootRanges`` (``poker.subgame_roots``), element by element
``RootConstraints``' numbers; ``alt(I)`` and the terminate payoff are defined once here and in
``gadgets.py`` (``normalized_values``, ``terminate_payoffs``).
"""

from __future__ import annotations

import numpy as np

from efgkit.core.regret_rules import VariantSolver, average_weight, clear_rows, match_rows
from efgkit.errors import ParameterError
from efgkit.poker.codes import EXPECTED, REGRETS
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_subtree import PublicSubtree, subtree_layout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import RootRanges
from efgkit.poker.materialised.vector_cfr import (
    RowState,
    player_reach_pass,
    tree_view,
    update_rows,
    value_and_average_pass,
    value_pass,
    workspace,
)
from efgkit.resolve.constraints import normalized_values
from efgkit.resolve.distributional import FollowRule
from efgkit.resolve.gadgets import terminate_payoffs
from efgkit.solvers.strategy import normalize_per_infoset

VECTOR_GADGETS = ("unsafe", "resolve", "maxmargin", "reach-maxmargin", "distributional",
                  "distributional-hedge")
_RESOLVE_HEADED = ("resolve", "distributional", "distributional-hedge")


class VectorGadget(VariantSolver):
    """CFR (any non-predictive variant of the vector engine) on one subgame's gadget.

    ``tree`` / ``layout``: the full public tree and the layout whose rows the re-solved strategy
    fills (lossless for unabstracted re-solving); ``ranges``: the ``RootRanges`` of the subgame's
    root for the re-solving player (their ``nodes`` must hold ``node``; for reach-maxmargin,
    values already raised by the gifts); ``kind``: one of ``VECTOR_GADGETS``; ``spread``
    (distributional gadgets): the standard deviation of each opponent hand's alternative
    payoff, float64 (hands,).
    ``average_strategy()`` is a strategy of ``layout`` (rows outside the subgame uniform).
    """

    def __init__(self, tree: PublicTree, layout: StrategyLayout, ranges: RootRanges, node: int, kind: str,
                 *, variant: str = "cfr+", spread: np.ndarray | None = None, nodes: int = 40) -> None:
        if kind not in VECTOR_GADGETS:
            raise ParameterError(f"the poker engine runs the gadgets {', '.join(VECTOR_GADGETS)}, "
                                 f"not {kind!r}")
        self._configure(variant, {})
        if variant in ("pcfr+", "pdcfr+", "hs-pcfr+"):
            raise ParameterError(f"{variant} predicts regrets the gadget head does not keep; use cfr+")
        where = np.flatnonzero(ranges.nodes == node)
        if where.size != 1:
            raise ParameterError(f"the ranges are not those of public node {node}")
        i = int(where[0])
        self.kind, self.player, self.opponent = kind, ranges.player, 1 - ranges.player
        root_reach = np.zeros((2, tree.num_hands))
        root_reach[self.player] = ranges.range[i]
        if kind == "unsafe":
            root_reach[self.opponent] = ranges.opponent_reach[i]
        self.subtree = PublicSubtree(tree, node, root_reach)
        self.layout = subtree_layout(layout, self.subtree)
        actions = self.layout.num_actions
        # No volatility: the gadgets run the CFR+ family, not VAD-CFR's row rules.
        self._state = RowState(*(np.zeros(actions) for _ in range(4)), np.zeros(0))
        self._view, self._rows = tree_view(self.subtree), self.layout.view()
        self._work = workspace(self.subtree)
        self.iteration = 0
        reach = ranges.element_reach[i]
        self._reach = reach
        self._head_hands, self._head_offset, self._head_values = self._head_rows_of(ranges, i, reach)
        heads = self._head_offset.shape[0] - 1
        self._head_rows = np.arange(heads, dtype=np.int64)
        size = int(self._head_offset[-1])
        self._head = RowState(*(np.zeros(size) for _ in range(4)), np.zeros(0))
        for rows, offsets, state in ((self._head_rows, self._head_offset, self._head),
                                     *((r, self.layout.action_offset, self._state)
                                       for r in self.layout.rows_of_player)):
            match_rows(rows, offsets, False, 1.0, state.regrets, state.instant, state.strategy)
        self._rule = None
        if kind.startswith("distributional"):
            if spread is None or np.shape(spread) != (tree.num_hands,):
                raise ParameterError(f"distributional gadgets need a spread per hand ({tree.num_hands})")
            hands = self._head_hands
            self._rule = FollowRule(normalized_values(ranges.values[i], reach)[hands],
                                    np.asarray(spread, np.float64)[hands],
                                    "hedge" if kind.endswith("hedge") else "threshold", nodes)
        self._enter()

    def _head_rows_of(self, ranges: RootRanges, i: int, reach: np.ndarray):
        """The head rows: (hands, action offsets, fixed action values) — resolve: per hand
        (terminate, follow) with terminate worth c_I; maxmargin: one row over the live hands,
        action ``h`` worth ``-alt(I)`` plus the entering value added each iteration."""
        if self.kind == "unsafe":
            return np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0)
        values = ranges.values[i]
        if self.kind in _RESOLVE_HEADED:
            hands = self.subtree.valid_hands(0)
            k = float(reach.sum())
            terminate = reach / k * terminate_payoffs(values, reach, k)
            fixed = np.zeros(2 * hands.shape[0])
            fixed[0::2] = terminate[hands]
            return hands, np.arange(0, 2 * hands.shape[0] + 1, 2, dtype=np.int64), fixed
        hands = np.flatnonzero(reach > 0)
        return hands, np.array([0, hands.shape[0]], np.int64), -normalized_values(values, reach)[hands]

    def _enter(self) -> None:
        """The opponent's root range from its head strategy (follow; or pick h over π(I))."""
        if self.kind == "unsafe":
            return
        opponent = self.subtree.root_reach[self.opponent]
        opponent[:] = 0.0
        strategy = self._head.strategy
        if self.kind in _RESOLVE_HEADED:
            opponent[self._head_hands] = strategy[1::2]
        else:
            opponent[self._head_hands] = strategy / self._reach[self._head_hands]

    def _head_update(self, t: int, weight: float) -> None:
        """Instant regrets and average of the head rows from the opponent's root values."""
        root = self._work.values[0, self._head_hands]
        values = self._head_values.copy()
        if self.kind in _RESOLVE_HEADED:
            values[1::2] = root
        else:
            values += root / self._reach[self._head_hands]
        head = self._head
        product = head.strategy * values
        expected = np.add.reduceat(product, self._head_offset[:-1])
        head.instant[:] = values - np.repeat(expected, np.diff(self._head_offset))
        if weight > 0.0:
            head.average[:] += weight * head.strategy
        if self._rule is None:  # a distributional head is set by its rule, not by its regrets
            update_rows(self._head_rows, self._head_offset, self._settings, t, head)
            self._enter()

    def _hold_head(self) -> None:
        """Set the distributional head from the opponent's normalised follow values now."""
        state, hands = self._state, self._head_hands
        for p in (0, 1):
            player_reach_pass(self._view, self._rows, state.strategy, np.int64(p), self._work.reach)
        value_pass(self._view, self._rows, state.strategy, np.int64(self.opponent), np.int64(EXPECTED),
                   self._work, np.zeros(0))
        reach = self._reach[hands]
        follow_values = np.divide(self._work.values[0, hands], reach, out=self._rule.means.copy(),
                                  where=reach > 0)
        follow = self._rule(follow_values, self.iteration)
        self._head.strategy[0::2] = 1.0 - follow
        self._head.strategy[1::2] = follow
        self._enter()

    def iterate(self, iterations: int = 1) -> VectorGadget:
        """``iterations`` alternating iterations (player 0 first), the head with the opponent."""
        state, offsets = self._state, self.layout.action_offset
        for _ in range(iterations):
            t = self.iteration + 1
            if self._rule is not None:
                self._hold_head()
            weight = average_weight(self._settings.variant, t, self._settings.delay, self._settings.gamma,
                                    self._settings.horizon)
            for player in (0, 1):
                rows = self.layout.rows_of_player[player]
                clear_rows(rows, offsets, state.instant)
                for p in (0, 1):
                    player_reach_pass(self._view, self._rows, state.strategy, np.int64(p), self._work.reach)
                value_and_average_pass(self._view, self._rows, state.strategy, np.int64(player),
                                       np.int64(REGRETS), self._work, state.instant, weight, state.average)
                if player == self.opponent and self._head_rows.size:
                    self._head_update(t, weight)
                update_rows(rows, offsets, self._settings, t, state)
            self.iteration = t
        return self

    def average_strategy(self) -> np.ndarray:
        """The average strategy of ``layout``'s rows (uniform where nothing accumulated)."""
        return normalize_per_infoset(self._state.average, self.layout.action_offset)

    def head_average(self) -> np.ndarray:
        """The opponent's average head play: (terminate, follow) per hand, or the hand choice."""
        return normalize_per_infoset(self._head.average, self._head_offset)
