"""Top-down reach and bottom-up value passes over a GameTree under a profile on an InfosetMap.

Every solver shares one layout: a flat ``edge_prob`` array holding the profile's
probabilities per abstract infoset-action, followed by the tree's per-node chance
probabilities, and an offset per internal node so that the probability of child ``k``
of internal node ``i`` is ``edge_prob[offset[i] + k]`` whatever kind the node is. The passes are
then branch-free loops over contiguous children (breadth-first order: forward loop =
top-down, backward loop = bottom-up).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.maps.protocol import AbstractionMap


class NodePasses(NamedTuple):
    """The internal nodes in breadth-first order, one entry each (internal nodes,): the node
    id ``nodes`` int32, ``kind`` int8, ``first_child`` int32, ``num_children`` int16, the
    ``prob_offset`` int32 of child 0's probability in ``edge_prob`` and the ``infoset``
    int32 (-1 at chance nodes). What every pass kernel reads first."""

    nodes: np.ndarray
    kind: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    prob_offset: np.ndarray
    infoset: np.ndarray


def node_passes(tree: GameTree, nodes: np.ndarray, infoset_offset: np.ndarray,
                chance_offset: int) -> NodePasses:
    """The ``NodePasses`` of the internal ``nodes`` (int32, breadth first), compact copies so the
    passes read consecutive memory instead of gathering through node ids. Child k of node i has
    probability ``edge_prob[prob_offset[i] + k]``: its infoset's entries of the profile
    (``infoset_offset`` per original infoset) at decision nodes, its own block of the tree's
    chance probabilities (stored after the first ``chance_offset`` entries) at chance nodes."""
    kind, first_child, infoset = tree.node_kind[nodes], tree.node_first_child[nodes], tree.node_infoset[nodes]
    prob_offset = first_child.astype(np.int64) + chance_offset
    decision = kind < CHANCE
    prob_offset[decision] = infoset_offset[infoset[decision]]
    return NodePasses(nodes, kind, first_child, tree.node_num_children[nodes], prob_offset.astype(np.int32),
                      infoset)


class ProfileLayout:
    """Offsets into ``edge_prob`` per internal node for one (tree, abstraction), plus buffers.

    Works with an InfosetMap or, for refinement algorithms, a RefinableMap: then the
    strategy block has the map's full capacity and ``reassign`` follows its splits.
    """

    def __init__(self, infoset_map: InfosetMap) -> None:
        tree = infoset_map.tree
        self.tree = tree
        self.infoset_map = infoset_map
        self.num_strategy_entries = infoset_map.capacity_actions
        self.edge_prob = np.concatenate(
            [np.zeros(self.num_strategy_entries), tree.node_chance_prob]
        )
        self.passes = node_passes(tree, tree.internal_nodes, infoset_map.infoset_offset,
                                  self.num_strategy_entries)
        self.terminal_nodes = np.flatnonzero(tree.node_kind == TERMINAL).astype(np.int32)
        self.values = tree.node_utility.copy()  # terminals keep utilities; internals overwritten
        self.reach = np.zeros(tree.num_nodes)
        self._nodes_by_infoset: tuple[np.ndarray, np.ndarray] | None = None

    def reassign(self, infosets: np.ndarray) -> None:
        """Re-read ``infoset_offset`` of these original infosets (after a split)."""
        if self._nodes_by_infoset is None:
            kind, infoset = self.passes.kind, self.passes.infoset
            decision = np.flatnonzero(kind < CHANCE)
            order = decision[np.argsort(infoset[decision], kind="stable")]
            bounds = np.searchsorted(infoset[order], np.arange(self.tree.num_infosets + 1))
            self._nodes_by_infoset = (order.astype(np.int32), bounds.astype(np.int64))
        order, bounds = self._nodes_by_infoset
        _reassign_offsets(np.asarray(infosets, np.int32), order, bounds,
                          self.infoset_map.infoset_offset, self.passes.prob_offset)

    def set_strategy(self, probabilities: np.ndarray) -> None:
        self.edge_prob[: probabilities.shape[0]] = probabilities

    @property
    def strategy(self) -> np.ndarray:
        return self.edge_prob[: self.num_strategy_entries]

    def expected_values(self) -> np.ndarray:
        """Player 0's expected utility at every node under the current strategy."""
        bottom_up_values(self.passes, self.edge_prob, self.values)
        return self.values

    def others_reach(self, player: int) -> np.ndarray:
        """Reach probability of every node due to chance and ``player``'s opponent."""
        others_reach(self.passes, self.edge_prob, player, self.reach)
        return self.reach


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _reassign_offsets(infosets, order, bounds, infoset_offset, offsets):
    """Point the decision nodes of ``infosets`` (int32) at their new ``infoset_offset``:
    ``order`` int32 lists decision nodes (positions in ``offsets``, int32 (internal nodes,))
    grouped by infoset, infoset I's group at ``order[bounds[I]:bounds[I + 1]]`` (int64)."""
    for j in range(infosets.shape[0]):
        infoset = infosets[j]
        for x in range(bounds[infoset], bounds[infoset + 1]):
            offsets[order[x]] = infoset_offset[infoset]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def bottom_up_values(passes, edge_prob, values):
    """values[n] = sum_k p(n, k) * values[child k] for the internal nodes, deepest first.

    ``passes`` a ``NodePasses``; ``edge_prob`` float64 (profile entries + nodes,);
    ``values`` float64 (nodes,), terminals holding their utilities.
    """
    for i in range(passes.nodes.shape[0] - 1, -1, -1):
        start = passes.first_child[i]
        offset = passes.prob_offset[i]
        total = 0.0
        for k in range(passes.num_children[i]):
            total += edge_prob[offset + k] * values[start + k]
        values[passes.nodes[i]] = total


@numba.njit(cache=True, no_cfunc_wrapper=True)
def others_reach(passes, edge_prob, player, reach):
    """reach[n] = product of chance and opponent probabilities on the path to n (all nodes).

    ``player = -1`` multiplies every edge (the full reach of the profile). ``passes`` a
    ``NodePasses``; ``edge_prob`` float64 (profile entries + nodes,); ``reach`` float64 (nodes,).
    """
    reach[0] = 1.0
    for i in range(passes.nodes.shape[0]):
        start = passes.first_child[i]
        r = reach[passes.nodes[i]]
        if passes.kind[i] == player:
            for k in range(passes.num_children[i]):
                reach[start + k] = r
        else:
            offset = passes.prob_offset[i]
            for k in range(passes.num_children[i]):
                reach[start + k] = r * edge_prob[offset + k]


class InfosetView(NamedTuple):
    """The tree's infosets and where their actions sit on the abstraction: ``parent_action``
    int32 (infosets,) (``GameTree.infoset_parent_action``), ``action_infoset`` int32
    (infoset-actions,), ``tree_action_offset`` int32 (infosets + 1,), ``num_actions`` int32
    (infosets,), ``infoset_offset`` int32 (infosets,) the first abstract action of each
    original infoset, ``action_offset`` int32 (abstract infosets + 1,) the abstraction's."""

    parent_action: np.ndarray
    action_infoset: np.ndarray
    tree_action_offset: np.ndarray
    num_actions: np.ndarray
    infoset_offset: np.ndarray
    action_offset: np.ndarray


def infoset_view(tree: GameTree, infoset_map: AbstractionMap | None = None) -> InfosetView:
    """The ``InfosetView`` of ``tree`` on ``infoset_map`` (an InfosetMap or RefinableMap, read
    through its offsets, so a map refined in place stays current), or on the tree's own
    infosets. Raises unless the tree has perfect recall (``GameTree.infoset_parent_action``)."""
    if infoset_map is None:
        infoset_offset, action_offset = tree.infoset_action_offset[:-1], tree.infoset_action_offset
    else:
        infoset_offset, action_offset = infoset_map.infoset_offset, infoset_map.abstract_action_offset
    return InfosetView(tree.infoset_parent_action, tree.action_infoset, tree.infoset_action_offset,
                       tree.infoset_num_actions, infoset_offset, action_offset)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def own_infoset_reach(player_infosets, view, strategy, own_reach):
    """own_reach[I] = the owner's own probability of reaching original infoset I.

    ``player_infosets`` int32 lists one player's infosets in increasing id, so each
    infoset's parent (an earlier id) is done first; ``view`` is an ``InfosetView``;
    ``strategy`` float64 is laid out by ``view.infoset_offset`` (original flat action ``a``
    of infoset ``J`` reads ``strategy[infoset_offset[J] + a - tree_action_offset[J]]``, the
    positional action mapping into the abstraction); ``own_reach`` float64 (infosets,) is
    written for ``player_infosets`` only. Needs a perfect-recall original game.
    """
    parent_action, action_infoset = view.parent_action, view.action_infoset
    tree_action_offset, infoset_offset = view.tree_action_offset, view.infoset_offset
    for j in range(player_infosets.shape[0]):
        infoset = player_infosets[j]
        parent = parent_action[infoset]
        if parent < 0:
            own_reach[infoset] = 1.0
        else:
            owner = action_infoset[parent]
            own_reach[infoset] = own_reach[owner] * strategy[
                infoset_offset[owner] + parent - tree_action_offset[owner]]
