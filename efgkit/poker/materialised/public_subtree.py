"""The subtree of a public tree below one public node, entered with given ranges.

A re-solving gadget on the poker engine solves the game below one subgame root (a public node
right after a board deal) with both players' hands as vectors; what lies above the root enters
only through each player's *range* there (``root_reach``, the kernels' reach of the subtree's
root). ``PublicSubtree`` holds the nodes below ``root`` renumbered breadth first (children stay
contiguous), with the full tree's per-board tables shared, so ``vector_cfr``'s kernels, a
``StrategyLayout`` (``subtree_layout``) and ``VectorCFR`` run on it as on a whole game.

With both players' blueprint ranges as ``root_reach`` this is Brown & Sandholm's unsafe
subgame (§4): the ranges act as chance, values stay counterfactual values of the full game (the
chance weights are the full tree's), and CFR's regrets and average of every (node, hand) row are
the unsafe gadget GameTree's (``resolve.gadgets.unsafe_gadget``) times a positive constant per
row (the row's own root reach and the gadget's normalisation), so their strategies are equal.
"""

from __future__ import annotations

import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree

_SHARED = ("game", "hand_cards", "hand_mask", "board_mask", "valid_start", "valid_list", "showdown_start",
           "showdown_hands", "showdown_strength", "board_cards", "num_hands", "num_cards",
           "betting_histories")
_PER_NODE = ("kind", "num_children", "board", "contribution", "folder", "chance_weight", "round", "betting")


class PublicSubtree:
    """The nodes of ``tree`` below public node ``root`` (``origin`` int64: the full tree's id of
    each), entered with ``root_reach`` float64 (2, hands): each player's reach of the root."""

    def __init__(self, tree: PublicTree, root: int, root_reach: np.ndarray) -> None:
        if not 0 <= root < tree.num_nodes:
            raise ParameterError(f"public node {root} is not in the tree (0..{tree.num_nodes - 1})")
        root_reach = np.ascontiguousarray(root_reach, np.float64)
        if root_reach.shape != (2, tree.num_hands) or np.any(root_reach < 0):
            raise ParameterError(f"root_reach must be non-negative, of shape (2, {tree.num_hands})")
        levels, level = [], np.array([root], np.int64)
        while level.size:
            levels.append(level)
            counts = tree.num_children[level].astype(np.int64)
            starts = np.repeat(tree.first_child[level] - np.cumsum(counts) + counts, counts)
            level = starts + np.arange(int(counts.sum()))
        self.origin = np.concatenate(levels)
        self.root, self.root_reach = int(root), root_reach
        for name in _SHARED:
            setattr(self, name, getattr(tree, name))
        for name in _PER_NODE:
            setattr(self, name, np.ascontiguousarray(getattr(tree, name)[self.origin]))
        new_of = np.full(tree.num_nodes, -1, np.int64)
        new_of[self.origin] = np.arange(self.origin.shape[0])
        parents = self.num_children > 0
        self.first_child = np.zeros(self.origin.shape[0], np.int64)
        self.first_child[parents] = new_of[tree.first_child[self.origin[parents]]]
        self.num_nodes = int(self.origin.shape[0])
        self.decision_nodes = np.flatnonzero(self.kind <= 1).astype(np.int64)
        self.decision_index = np.full(self.num_nodes, -1, np.int64)
        self.decision_index[self.decision_nodes] = np.arange(self.decision_nodes.shape[0])

    def valid_hands(self, node: int) -> np.ndarray:
        """Hands (indices) that do not share a card with the board at ``node``."""
        board = self.board[node]
        return self.valid_list[self.valid_start[board]:self.valid_start[board + 1]]


def subtree_layout(layout: StrategyLayout, subtree: PublicSubtree) -> tuple[StrategyLayout, np.ndarray]:
    """``layout``'s rows at the subtree's decision nodes renumbered ``0..n-1`` in ``layout``'s
    order, as a layout of the subtree alone (arrays the size of the subgame, not the game),
    and ``action_origin`` int64 (its actions,): each action's number in ``layout``."""
    full = layout.tree.decision_index[subtree.origin[subtree.decision_nodes]]
    rows = layout.rows[full]
    used = np.unique(rows[rows >= 0])
    compact = np.full(rows.shape, -1, np.int64)
    compact[rows >= 0] = np.searchsorted(used, rows[rows >= 0])
    width = layout.action_offset[used + 1] - layout.action_offset[used]
    offset = np.concatenate(([0], np.cumsum(width))).astype(np.int64)
    action_origin = np.repeat(layout.action_offset[used], width) + positions_within(width)
    return (StrategyLayout(subtree, compact, offset, layout.slot_weight[full],
                           f"{layout.description} below public node {subtree.root}"),
            action_origin.astype(np.int64))
