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
  the opponent's follow probabilities set before every iteration by ``core.follow_rules``
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

Everything a gadget holds is the size of its subgame: the subtree's own layout
(``subtree_layout``: its rows renumbered, ``action_origin`` back to the game's layout), the
workspace and the head; the iterations run in one numba kernel (``vector_cfr.run_iterations``
with the head), the head's regrets (or its follow rule) and the opponent's entering range
updated inside it.
"""

from __future__ import annotations

import numpy as np

from efgkit.core.follow_rules import HEDGE_NODES, follow_state
from efgkit.core.regret_rules import VariantSolver, match_rows
from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_subtree import PublicSubtree, subtree_layout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import RootRanges
from efgkit.poker.materialised.vector_cfr import (
    MAXMARGIN_HEAD,
    NO_HEAD,
    RESOLVE_HEAD,
    GadgetHead,
    RowState,
    enter,
    run_iterations,
    tree_view,
    workspace,
)
from efgkit.resolve.constraints import normalized_values
from efgkit.resolve.gadgets import REACH_GADGETS, terminate_payoffs
from efgkit.solvers.strategy import normalize_per_infoset

VECTOR_GADGETS = ("unsafe", "resolve", "maxmargin", "reach-maxmargin", "distributional",
                  "distributional-hedge", "reach-distributional", "reach-distributional-hedge")
_RESOLVE_HEADED = ("resolve", "distributional", "distributional-hedge")


class VectorGadget(VariantSolver):
    """CFR (any non-predictive variant of the vector engine) on one subgame's gadget.

    ``tree`` / ``layout``: the full public tree and the layout whose rows the re-solved strategy
    fills (lossless for unabstracted re-solving); ``ranges``: the ``RootRanges`` of the subgame's
    root for the re-solving player (their ``nodes`` must hold ``node``; for the reach gadgets,
    values already raised by the gifts); ``kind``: one of ``VECTOR_GADGETS``; ``spread``
    (distributional gadgets): the standard deviation of each opponent hand's alternative
    payoff, float64 (hands,).
    ``resolved_behavior(player)`` is a player's average strategy as (``layout``'s actions,
    probabilities); ``average_strategy()`` the subgame's rows as a strategy of ``layout``.
    """

    def __init__(self, tree: PublicTree, layout: StrategyLayout, ranges: RootRanges, node: int, kind: str,
                 *, variant: str = "cfr+", spread: np.ndarray | None = None,
                 nodes: int = HEDGE_NODES) -> None:
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
        kind = REACH_GADGETS.get(kind, kind)  # the ranges carry the gifts already
        self.kind, self.player, self.opponent = kind, ranges.player, 1 - ranges.player
        root_reach = np.zeros((2, tree.num_hands))
        root_reach[self.player] = ranges.range[i]
        if kind == "unsafe":
            root_reach[self.opponent] = ranges.opponent_reach[i]
        self.full_layout = layout
        self.subtree = PublicSubtree(tree, node, root_reach)
        self.layout, self.action_origin = subtree_layout(layout, self.subtree)
        actions = self.layout.num_actions
        # No volatility: the gadgets run the CFR+ family, not VAD-CFR's row rules.
        self._state = RowState(*(np.zeros(actions) for _ in range(4)), np.zeros(0))
        self._view, self._rows = tree_view(self.subtree), self.layout.view()
        self._work = workspace(self.subtree)
        self.iteration = 0
        self._reach = ranges.element_reach[i]
        if kind.startswith("distributional") and (spread is None or np.shape(spread) != (tree.num_hands,)):
            raise ParameterError(f"distributional gadgets need a spread per hand ({tree.num_hands})")
        self._head = self._head_of(ranges, i, spread, nodes)
        for rows, offsets, state in ((self._head.rows, self._head.offset, self._head.state),
                                     *((r, self.layout.action_offset, self._state)
                                       for r in self.layout.rows_of_player)):
            match_rows(rows, offsets, False, 1.0, state.regrets, state.instant, state.strategy)
        if self._head.mode != NO_HEAD:
            enter(self._head, self.subtree.root_reach)

    def _head_of(self, ranges: RootRanges, i: int, spread: np.ndarray | None, nodes: int) -> GadgetHead:
        """The head rows — resolve: per hand (terminate, follow) with terminate worth c_I, the
        distributional gadgets' set by their follow rule over the hands' ``alt(I)`` and
        ``spread``; maxmargin: one row over the live hands, action ``h`` worth ``-alt(I)`` plus the
        entering value added each iteration; unsafe: none."""
        values, reach = ranges.values[i], self._reach
        if self.kind == "unsafe":
            mode, hands, offset, fixed = NO_HEAD, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0)
        elif self.kind in _RESOLVE_HEADED:
            mode, hands = RESOLVE_HEAD, self.subtree.valid_hands(0).astype(np.int64)
            k = float(reach.sum())
            fixed = np.zeros(2 * hands.shape[0])
            fixed[0::2] = (reach / k * terminate_payoffs(values, reach, k))[hands]
            offset = np.arange(0, 2 * hands.shape[0] + 1, 2, dtype=np.int64)
        else:
            mode, hands = MAXMARGIN_HEAD, np.flatnonzero(reach > 0).astype(np.int64)
            offset, fixed = np.array([0, hands.shape[0]], np.int64), -normalized_values(values, reach)[hands]
        size = int(offset[-1])
        state = RowState(*(np.zeros(size) for _ in range(4)), np.zeros(0))
        free = not self.kind.startswith("distributional")
        if free:
            follow = follow_state(np.zeros(0), np.zeros(0), "threshold")
        else:
            follow = follow_state(normalized_values(values, reach)[hands],
                                  np.asarray(spread, np.float64)[hands],
                                  "hedge" if self.kind.endswith("hedge") else "threshold", nodes)
        return GadgetHead(mode, free, follow, self.opponent, hands, offset,
                          np.arange(offset.shape[0] - 1, dtype=np.int64), fixed, reach[hands], state)

    def iterate(self, iterations: int = 1) -> VectorGadget:
        """``iterations`` alternating iterations (player 0 first), the head with the opponent."""
        rows0, rows1 = self.layout.rows_of_player
        run_iterations(self._view, self._rows, self._settings, rows0, rows1, self.iteration, iterations,
                       self._state, self._work, None if self._head.mode == NO_HEAD else self._head)
        self.iteration += iterations
        return self

    def subgame_average(self) -> np.ndarray:
        """The average strategy of the subgame's rows (``self.layout``; uniform where nothing
        accumulated), float64 (subgame actions,)."""
        return normalize_per_infoset(self._state.average, self.layout.action_offset)

    def resolved_behavior(self, player: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``player``'s (default the re-solver's) average strategy in the subgame as (int64
        actions of ``layout``, float64 probabilities), like ``gadgets.Gadget.resolved_behavior``."""
        player = self.player if player is None else player
        offsets = self.layout.action_offset
        rows = self.layout.rows_of_player[player]
        width = offsets[rows + 1] - offsets[rows]
        actions = np.repeat(offsets[rows], width) + positions_within(width)
        return self.action_origin[actions], self.subgame_average()[actions]

    def average_strategy(self) -> np.ndarray:
        """The subgame's average strategy as a strategy of ``layout`` (float64 (layout actions,);
        rows outside the subgame uniform): a whole-layout array, for callers that want one."""
        width = np.diff(self.full_layout.action_offset)
        out = np.repeat(1.0 / np.maximum(width, 1), width)
        out[self.action_origin] = self.subgame_average()
        return out

