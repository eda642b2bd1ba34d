"""Derived structure of a GameTree's node arrays (parents, depths, last own actions,
perfect-recall data) and the structural check behind ``GameTree.validate``.

Kept apart from ``tree`` so that the rules of every game, and ``efgkit games``, load
without numba; ``GameTree`` imports this module when it first derives something. What
every build and solve needs (the structural check, own action sequences) is numpy, so a
first run compiles no kernel for it; parents and depths are a kernel.
Node arrays follow ``GameTree``: ``kind`` int8, ``infoset`` int32, ``first_child`` int32,
``num_children`` int16, ``chance_prob`` float64, all (nodes,), breadth-first.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.games.csr import positions_within
from efgkit.games.protocol import CHANCE, TERMINAL


@numba.njit(cache=True, no_cfunc_wrapper=True)
def parents_and_depths(first_child, num_children):
    """int32 parent (-1 at the root) and int16 depth (root 0) of every node, (nodes,) each."""
    n = first_child.shape[0]
    parent = np.full(n, -1, np.int32)
    depth = np.zeros(n, np.int16)
    for node in range(n):
        start = first_child[node]
        for k in range(num_children[node]):
            parent[start + k] = node
            depth[start + k] = depth[node] + 1
    return parent, depth


@numba.njit(cache=True, no_cfunc_wrapper=True)
def subtree_utility_bounds(internal_nodes, first_child, num_children, utility):
    """Smallest and largest terminal utility below every node, float64 (nodes,) each,
    bottom-up over ``internal_nodes`` int32 (breadth-first); ``first_child`` int32,
    ``num_children`` int16 and ``utility`` float64 (nodes,) as in GameTree."""
    low = utility.copy()
    high = utility.copy()
    for i in range(internal_nodes.shape[0] - 1, -1, -1):
        node = internal_nodes[i]
        start = first_child[node]
        lo = np.inf
        hi = -np.inf
        for k in range(num_children[node]):
            lo = min(lo, low[start + k])
            hi = max(hi, high[start + k])
        low[node] = lo
        high[node] = hi
    return low, high


def own_action_structure(kind, infoset, first_child, num_children, action_offset, action_infoset):
    """Each player's own action sequences: int32 (2, nodes) last own flat action on the path
    to each node (-1: none); int32 (infosets,) the owner's last flat action before each
    infoset (-1: none) and the length of the owner's action sequence leading to it; and the
    first infoset (in node order) reached by two different own sequences (-1 under perfect
    recall; the lengths are then not computed).

    ``action_offset`` int32 (infosets + 1,) is the tree's CSR ``infoset_action_offset``,
    ``action_infoset`` int32 (infoset-actions,) the infoset of each flat action. Numpy, one
    depth level at a time (breadth-first order makes each level, and its children, a
    contiguous range of nodes): a kernel here would cost every first run its compilation.
    """
    n = kind.shape[0]
    num_infosets = action_offset.shape[0] - 1
    # Entry v - 1 describes the edge into node v > 0 (breadth-first: the children of
    # consecutive nodes are consecutive): its parent, who moved there and the flat action.
    counts = num_children.astype(np.int64)
    parent = np.repeat(np.arange(n, dtype=np.int32), counts)
    mover = kind[parent]
    action = (action_offset[np.maximum(infoset[parent], 0)] + positions_within(counts)).astype(np.int32)
    last = np.full((2, n), -1, np.int32)
    lo, hi = 0, 1
    while hi < n:
        level = slice(hi - 1, hi - 1 + int(counts[lo:hi].sum()))  # the children of nodes lo..hi-1
        if level.stop == level.start:
            break
        for player in (0, 1):
            last[player, level.start + 1:level.stop + 1] = np.where(
                mover[level] == player, action[level], last[player, parent[level]])
        lo, hi = hi, level.stop + 1
    decision = np.flatnonzero(kind < 2)
    own_before = last[kind[decision], decision]
    decision_infoset = infoset[decision]
    first = np.full(num_infosets, n, np.int64)  # every infoset of a valid tree has a node
    np.minimum.at(first, decision_infoset, decision)
    parent_action = last[kind[first], first]
    length = np.zeros(num_infosets, np.int32)
    differs = np.flatnonzero(own_before != parent_action[decision_infoset])
    if differs.shape[0]:
        return last, parent_action, length, int(decision_infoset[differs[0]])
    # Follow each infoset's chain of parent infosets: as many rounds as the longest sequence.
    parent_infoset = np.where(parent_action >= 0, action_infoset[parent_action], -1)
    ancestor = parent_infoset
    while np.any(ancestor >= 0):
        length += ancestor >= 0
        ancestor = np.where(ancestor >= 0, parent_infoset[ancestor], -1)
    return last, parent_action, length, -1


def _structure_problem_code(kind, infoset, first_child, num_children, chance_prob,
                            infoset_player, infoset_num_actions):
    """(code, node) of the first broken invariant (``_STRUCTURE_PROBLEMS``), (0, -1) if none.

    ``infoset_player`` int8 and ``infoset_num_actions`` int32, (infosets,). Every node's
    checks at once in numpy, then the first failing node (by node, then by code order in
    ``_STRUCTURE_PROBLEMS``' checks); before that node every invariant held, so the running
    quantities (next expected child, next new infoset) are those of a node-by-node scan.
    """
    n = kind.shape[0]
    num_infosets = infoset_player.shape[0]
    children = num_children.astype(np.int64)
    expected_first = 1 + np.cumsum(children) - children
    terminal = kind == TERMINAL
    internal = ~terminal
    chance = np.flatnonzero(kind == CHANCE)
    chance_children = children[chance]
    outcome = np.repeat(expected_first[chance], chance_children) + positions_within(chance_children)
    probability = chance_prob[np.minimum(outcome, n - 1)]
    owner = np.repeat(np.arange(chance.shape[0]), chance_children)
    bad_chance = np.zeros(n, bool)
    bad_chance[chance] = ((np.bincount(owner, probability < 0.0, chance.shape[0]) > 0)
                          | (np.abs(np.bincount(owner, probability, chance.shape[0]) - 1.0) > 1e-9))
    decision = kind < CHANCE
    decision_infoset = np.where(decision, infoset, -1).astype(np.int64)
    valid = (decision_infoset >= 0) & (decision_infoset < num_infosets)
    seen_before = np.maximum.accumulate(np.concatenate([[-1], decision_infoset[:-1]]))
    checked = np.flatnonzero(valid)  # decision nodes with an infoset to compare against
    wrong_player, wrong_actions = np.zeros(n, bool), np.zeros(n, bool)
    wrong_player[checked] = infoset_player[decision_infoset[checked]] != kind[checked]
    wrong_actions[checked] = infoset_num_actions[decision_infoset[checked]] != children[checked]
    broken = [terminal & (children != 0), internal & (children <= 0),
              internal & (first_child != expected_first), bad_chance, decision & ~valid,
              decision & (decision_infoset > seen_before + 1), wrong_player, wrong_actions]
    if any(condition.any() for condition in broken):
        code = np.select(broken, [1, 2, 3, 4, 5, 9, 6, 7])
        node = int(np.flatnonzero(code)[0])
        return int(code[node]), node
    if 1 + children.sum() != n:
        return 8, n
    if decision_infoset.max(initial=-1) + 1 != num_infosets:
        return 5, n
    return 0, -1


_STRUCTURE_PROBLEMS = {
    1: "terminal node {} has children",
    2: "non-terminal node {} has no children",
    3: "node {}'s children are not contiguous in breadth-first order",
    4: "chance node {}'s outcome probabilities are negative or do not sum to 1",
    5: "decision node {} has no valid infoset",
    6: "decision node {}'s player differs from its infoset's player",
    7: "decision node {}'s action count differs from its infoset's",
    8: "node count {} does not match the children listed",
    9: "infosets are not numbered by first appearance in breadth-first order (node {})",
}


def structure_problem(*arrays) -> str:
    """The first broken structural invariant of the arrays ``_structure_problem_code``
    takes, in words ("" when there is none)."""
    code, node = _structure_problem_code(*arrays)
    return _STRUCTURE_PROBLEMS[code].format(node) if code else ""
