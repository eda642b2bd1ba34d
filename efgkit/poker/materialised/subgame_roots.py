"""A blueprint's ranges and constraint values at the subgames after a public deal, on the public tree.

Re-solving on the poker engine (Brown & Sandholm 2017; Burch's thesis §5.2.4) needs, at the root
of every subgame — one public node right after a board deal: the entering betting sequence x
the board — what ``efgkit.resolve.constraints`` computes on a GameTree, with each player's
private hand as a vector index instead of a history:

* the re-solving ``player``'s *range*: its own blueprint reach of every hand at the root;
* per opponent hand ``h`` (the opponent's augmented infoset: in poker an opponent knows its hand,
  the board and the betting, nothing else), the reach ``π_{-o}(I)`` of chance and the re-solver:
  the chance weight of one deal times the re-solver's reach summed over its hands compatible with
  ``h`` (card removal as at a fold, ``terminal_values.fold_values``);
* the opponent's *unnormalised counterfactual values* ``c_I`` at the root: ``"br"`` the
  counterfactual best response to the blueprint (maximising at every (public node, hand): the
  bottom-up pass in ``BEST_RESPONSE`` mode), ``"selfplay"`` its value under the blueprint itself
  (Brown & Sandholm's "Estimated" payoffs; ``EXPECTED`` mode);
* ``opponent_reach``: the opponent's own blueprint reach of each hand at the root (Burch's
  ``q_I``).

These are ``RootConstraints``' arrays, element by element, so the gadgets of ``resolve/`` read
the same numbers on either engine (``resolve.constraints.normalized_values`` gives alt(I);
tests/test_poker_subgame_roots.py checks them against ``BlueprintValues`` on Leduc's GameTree
to 1e-12). The passes run once over the whole public
tree; memory is that of one ``evaluate_strategy`` call (two (nodes, hands) blocks per player
kept).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from efgkit.errors import ParameterError, StrategyError
from efgkit.poker.codes import BEST_RESPONSE, DEAL, EXPECTED
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import reach_pass, tree_view, value_pass, workspace
from efgkit.poker.terminal_values import fold_values

CONSTRAINT_KINDS = ("br", "selfplay")
_MODES = {"br": BEST_RESPONSE, "selfplay": EXPECTED}


def deal_roots(tree: PublicTree, round_number: int) -> np.ndarray:
    """The public nodes (int64, ascending) that start round ``round_number`` (1-based, as
    ``resolve.round_subgames`` counts) right after its board deal: one per (entering betting
    sequence, board). ParameterError if no board is dealt before that round."""
    deals = np.flatnonzero(tree.kind == DEAL)
    children = np.concatenate([tree.first_child[d] + np.arange(tree.num_children[d]) for d in deals]
                              or [np.zeros(0, np.int64)]).astype(np.int64)
    roots = children[tree.round[children] == round_number - 1]
    if round_number < 2 or roots.size == 0:
        raise ParameterError(f"{tree.game.spec} has no public deal before round {round_number}: "
                             f"re-solving starts after a board deal")
    return np.sort(roots)


class RootRanges(NamedTuple):
    """One re-solver's view of the subgames at ``nodes`` (int64 (roots,) public nodes). Per
    root and hand, float64 (roots, hands), 0 for hands that meet the board: ``range`` the
    re-solver's own reach; ``element_reach`` π_{-o}(I) of each opponent hand; ``values`` the
    opponent's unnormalised counterfactual values c_I (of ``kind``); ``opponent_reach`` the
    opponent's own reach q_I."""

    player: int
    kind: str
    nodes: np.ndarray
    range: np.ndarray
    element_reach: np.ndarray
    values: np.ndarray
    opponent_reach: np.ndarray


class BlueprintRoots:
    """Reach and counterfactual values of a blueprint on a public tree, computed once.

    ``layout``: the blueprint's ``StrategyLayout`` (an InfosetMap's, a bucket layout's or the
    lossless one); ``strategy``: float64 (layout actions,) behaviour probabilities.
    ``ranges(nodes, player, kind)`` gives the ``RootRanges`` of re-solving ``player``.
    """

    def __init__(self, layout: StrategyLayout, strategy: np.ndarray) -> None:
        strategy = np.ascontiguousarray(strategy, np.float64)
        if strategy.shape != (layout.num_actions,):
            raise StrategyError(f"the strategy has shape {strategy.shape}, the layout "
                                f"{layout.num_actions} actions")
        self.layout, self.tree, self.strategy = layout, layout.tree, strategy
        self._view, self._rows, self._work = tree_view(self.tree), layout.view(), workspace(self.tree)
        reach_pass(self._view, self._rows, strategy, self._work.reach)
        self.reach = self._work.reach.copy()
        self._values: dict[tuple[int, str], np.ndarray] = {}

    def counterfactual_values(self, player: int, kind: str) -> np.ndarray:
        """``player``'s counterfactual values (float64 (nodes, hands), chance included) against
        the blueprint: its best response (``"br"``) or the blueprint's own play (``"selfplay"``)."""
        if kind not in CONSTRAINT_KINDS:
            raise ParameterError(f"constraints on the poker engine must be one of "
                                 f"{', '.join(CONSTRAINT_KINDS)}, got {kind!r}")
        if (player, kind) not in self._values:
            self._work.reach[:] = self.reach
            value_pass(self._view, self._rows, self.strategy, player, _MODES[kind], self._work, np.zeros(0))
            self._values[player, kind] = self._work.values.copy()
        return self._values[player, kind]

    def ranges(self, nodes: np.ndarray, player: int, kind: str = "br") -> RootRanges:
        """The ``RootRanges`` of the subgames at public ``nodes`` for re-solving ``player``."""
        if player not in (0, 1):
            raise ParameterError(f"the re-solving player must be 0 or 1, got {player!r}")
        tree = self.tree
        nodes = np.asarray(nodes, np.int64)
        opponent = 1 - player
        values = self.counterfactual_values(opponent, kind)[nodes]
        element_reach = np.zeros((nodes.shape[0], tree.num_hands))
        card_sum = np.zeros(tree.num_cards)
        for i, node in enumerate(nodes.tolist()):
            fold_values(self.reach[player, node], tree.hand_cards, tree.valid_hands(node), card_sum,
                        float(tree.chance_weight[node]), element_reach[i])
        return RootRanges(player, kind, nodes, self.reach[player, nodes], element_reach, values,
                          self.reach[opponent, nodes])
