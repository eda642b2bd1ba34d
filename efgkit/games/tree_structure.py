"""Kernels over a GameTree's node arrays: derived structure (parents, depths, last own
actions, perfect-recall data) and the structural check behind ``GameTree.validate``.

Kept apart from ``tree`` so that the rules of every game, and ``efgkit games``, load
without numba; ``GameTree`` imports this module when it first derives something.
Node arrays follow ``GameTree``: ``kind`` int8, ``infoset`` int32, ``first_child`` int32,
``num_children`` int16, ``chance_prob`` float64, all (nodes,), breadth-first.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def own_action_structure(kind, infoset, first_child, num_children, action_offset, action_infoset):
    """Each player's own action sequences, in one kernel (one compilation on a first run):
    int32 (2, nodes) last own flat action on the path to each node (-1: none); int32
    (infosets,) the owner's last flat action before each infoset (-1: none) and the length
    of the owner's action sequence leading to it; and the first infoset reached by two
    different own sequences (-1 under perfect recall; the lengths are then not computed).

    ``action_offset`` int32 (infosets + 1,) is the tree's CSR ``infoset_action_offset``,
    ``action_infoset`` int32 (infoset-actions,) the infoset of each flat action.
    """
    n = kind.shape[0]
    num_infosets = action_offset.shape[0] - 1
    # Every node but the root copies its parent's entries (parents come first breadth-first),
    # so only the root needs its -1s.
    last = np.empty((2, n), np.int32)
    last[0, 0] = last[1, 0] = -1
    for node in range(n):
        start = first_child[node]
        for k in range(num_children[node]):
            child = start + k
            last[0, child] = last[0, node]
            last[1, child] = last[1, node]
            if kind[node] < 2:
                last[kind[node], child] = action_offset[infoset[node]] + k
    parent_action = np.empty(num_infosets, np.int32)
    length = np.zeros(num_infosets, np.int32)
    for i in range(num_infosets):
        parent_action[i] = -2
    for node in range(n):
        if kind[node] >= 2:
            continue
        i = infoset[node]
        own = last[kind[node], node]
        if parent_action[i] == -2:
            parent_action[i] = own
        elif parent_action[i] != own:
            return last, parent_action, length, i
    # Infosets are numbered by first appearance in breadth-first order, so an infoset's
    # parent infoset always has a smaller id and one forward pass suffices.
    for i in range(num_infosets):
        if parent_action[i] >= 0:
            length[i] = length[action_infoset[parent_action[i]]] + 1
    return last, parent_action, length, -1


@numba.njit(cache=True)
def _structure_problem_code(kind, infoset, first_child, num_children, chance_prob,
                            infoset_player, infoset_num_actions):
    """(code, node) of the first broken invariant (``_STRUCTURE_PROBLEMS``), (0, -1) if none.

    ``infoset_player`` int8 and ``infoset_num_actions`` int32, (infosets,).
    """
    n = kind.shape[0]
    expected_next = 1
    next_new_infoset = 0
    for node in range(n):
        m = num_children[node]
        if kind[node] == 3:
            if m != 0:
                return 1, node
            continue
        if m <= 0:
            return 2, node
        if first_child[node] != expected_next:
            return 3, node
        expected_next += m
        if kind[node] == 2:
            total = 0.0
            for k in range(m):
                p = chance_prob[first_child[node] + k]
                if p < 0.0:
                    return 4, node
                total += p
            if abs(total - 1.0) > 1e-9:
                return 4, node
        else:
            i = infoset[node]
            if i < 0 or i >= infoset_player.shape[0]:
                return 5, node
            if i == next_new_infoset:
                next_new_infoset += 1
            elif i > next_new_infoset:
                return 9, node
            if infoset_player[i] != kind[node]:
                return 6, node
            if infoset_num_actions[i] != m:
                return 7, node
    if expected_next != n:
        return 8, n
    if next_new_infoset != infoset_player.shape[0]:
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
