"""``poker.depth_first``: the explicit-stack walk visits a tree as recursion does.

Visitors over a random tree (children counts in breadth-first order) log every ``open_``,
``close`` and ``gather`` and fold a value bottom up; the log and the value must be those of
a recursive walk, whatever the tree, including a root that is a leaf.
"""

from typing import NamedTuple

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.poker.depth_first import depth_first, push_child

OPEN, CLOSE, GATHER = 0, 1, 2
PRIME = 1_000_003


class Stack(NamedTuple):
    node: np.ndarray
    cursor: np.ndarray
    action: np.ndarray
    value: np.ndarray


@numba.njit(inline="always")
def _note(log, event, node):
    log[log[0] + 1] = event * 1000 + node
    log[0] += 1


@numba.njit(inline="always")
def _open(args, d):
    first_child, num_children, stack, log = args
    node = stack.node[d]
    _note(log, OPEN, node)
    if num_children[node] == 0:
        stack.value[d] = node + 1
        return True
    stack.cursor[d] = 0
    stack.value[d] = 0
    return False


@numba.njit(inline="always")
def _next_child(args, d):
    first_child, num_children, stack, log = args
    node = stack.node[d]
    return push_child(stack, d, stack.cursor[d], num_children[node], first_child[node])


@numba.njit(inline="always")
def _close(args, d):
    first_child, num_children, stack, log = args
    _note(log, CLOSE, stack.node[d])
    stack.value[d] = (2 * stack.value[d] + 1) % PRIME


@numba.njit(inline="always")
def _gather(args, d):
    first_child, num_children, stack, log = args
    _note(log, GATHER, stack.node[d])
    stack.value[d] = (3 * stack.value[d] + (stack.action[d] + 1) * stack.value[d + 1]) % PRIME


@numba.njit
def _walk(first_child, num_children, stack, log):
    stack.node[0] = 0
    log[0] = 0
    depth_first(_open, _next_child, _close, _gather, (first_child, num_children, stack, log), np.int64(0))
    return stack.value[0]


def _recursive(first_child, num_children, node, log):
    log.append(OPEN * 1000 + node)
    if num_children[node] == 0:
        return node + 1
    value = 0
    for a in range(num_children[node]):
        child = _recursive(first_child, num_children, first_child[node] + a, log)
        log.append(GATHER * 1000 + node)
        value = (3 * value + (a + 1) * child) % PRIME
    log.append(CLOSE * 1000 + node)
    return (2 * value + 1) % PRIME


def _tree(counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first ``first_child`` and ``num_children`` of the tree whose nodes have
    ``counts`` children in turn, cut where the counts run out (the rest are leaves)."""
    num_children, first_child = [], []
    nodes, q = 1, 0
    while q < nodes:
        m = counts[q] if q < len(counts) else 0
        first_child.append(nodes)
        num_children.append(m)
        nodes += m
        q += 1
    return np.array(first_child, np.int64), np.array(num_children, np.int64)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=25))
def test_depth_first_visits_as_recursion_does(counts):
    first_child, num_children = _tree(counts)
    nodes = first_child.shape[0]
    stack = Stack(*(np.zeros(nodes + 1, np.int64) for _ in range(4)))
    log = np.zeros(3 * nodes + 1, np.int64)
    expected: list[int] = []
    value = _recursive(first_child, num_children, 0, expected)
    assert _walk(first_child, num_children, stack, log) == value
    assert log[1:log[0] + 1].tolist() == expected
