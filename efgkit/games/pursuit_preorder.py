"""The numba kernel that writes Graph Pursuit's tree in depth-first preorder for
``GraphPursuit.compile``, with each player's infoset trie (the rules are in ``pursuit``, the
board in ``pursuit_board``)."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from efgkit.games.preorder_nodes import write_node
from efgkit.games.pursuit_board import (
    ATTACKER_START,
    CAPTURE_UTILITY,
    DISTANCE,
    GOAL,
    GOAL_UTILITY,
    GRAPH_OUT_EDGES,
    NUM_GRAPH_NODES,
    TIMEOUT_UTILITY,
    UNIT_STARTS,
    VISIBILITY_RADIUS,
)


class PursuitBoard(NamedTuple):
    """The graph and the start of play, as the kernel reads them: node ``n``'s out-edges lead
    to ``out_target[out_offset[n]:out_offset[n + 1]]`` (int64 (graph nodes + 1,) and int64
    (edges,)); ``distance`` int64 (graph nodes, graph nodes), shortest path lengths;
    a player sees what is within ``radius`` of it; the attacker wins on ``goal``; the
    attacker starts on ``attacker_start``, the defender's units on ``unit1_start`` and
    ``unit2_start``; a game that ends neither on the goal nor in a capture pays
    ``timeout_utility``, a capture with the attacker on the goal ``capture_on_goal_utility``."""

    out_offset: np.ndarray
    out_target: np.ndarray
    distance: np.ndarray
    radius: int
    goal: int
    attacker_start: int
    unit1_start: int
    unit2_start: int
    timeout_utility: float
    capture_on_goal_utility: float


# The graph in CSR form: node n's out-edges lead to OUT_TARGET[OUT_OFFSET[n]:OUT_OFFSET[n + 1]].
OUT_OFFSET = np.cumsum([0] + [len(GRAPH_OUT_EDGES.get(n, ())) for n in range(NUM_GRAPH_NODES)],
                       dtype=np.int64)
OUT_TARGET = np.array([t for n in range(NUM_GRAPH_NODES) for t in GRAPH_OUT_EDGES.get(n, ())],
                      np.int64)
BOARD = PursuitBoard(OUT_OFFSET, OUT_TARGET, DISTANCE, VISIBILITY_RADIUS, GOAL, ATTACKER_START,
                     UNIT_STARTS[0], UNIT_STARTS[1], TIMEOUT_UTILITY, CAPTURE_UTILITY)
# Observation codes in the kernel: attacker 0 (no unit seen), 1 + n (one unit on n),
# 1 + N + N * n1 + n2 (unit 1 on n1, unit 2 on n2); defender 0 (nothing) or 1 + n.
NUM_OBSERVATIONS = 1 + NUM_GRAPH_NODES + NUM_GRAPH_NODES * NUM_GRAPH_NODES
MAX_JOINT_ACTIONS = max(len(t) for t in GRAPH_OUT_EDGES.values()) ** 2
# Columns of the per-player infoset trie the kernel fills (row 0 = empty history).
PARENT, ACTION, OBSERVATION, POSITION_A, POSITION_B = range(5)
# Columns of the kernel's frame per level: the attacker's origin (where it was at the round's
# start), the attacker's and the units' positions, each player's latest infoset row and the
# action it took there (its next infoset's trie parent), the next child to expand, the children.
ORIGIN, ATTACKER, UNIT1, UNIT2, OWN_ROW, OWN_ACTION, NEXT_CHILD, CHILD_COUNT = 0, 1, 2, 3, 4, 6, 8, 9
FRAME_COLUMNS = 10


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _intern_infoset(table, trie, rows, player, parent, action, observation, position_a,
                    position_b):
    """Row of the infoset (parent row, action, observation) in ``player``'s trie; new rows
    are appended. Returns the int64 infoset code: row * 2 + player."""
    key = ((parent * MAX_JOINT_ACTIONS + action) * NUM_OBSERVATIONS + observation) * 2 + player
    row = table.get(key, -1)
    if row < 0:
        row = rows[player]
        rows[player] += 1
        table[key] = row
        trie[player, row, PARENT] = parent
        trie[player, row, ACTION] = action
        trie[player, row, OBSERVATION] = observation
        trie[player, row, POSITION_A] = position_a
        trie[player, row, POSITION_B] = position_b
    return row * 2 + player


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _advance(moves, board, out, frame, level, node):
    """Move to the next node in preorder from ``frame[level]`` (int64 (levels,
    ``FRAME_COLUMNS``)), writing into ``out`` (a ``builder.Preorder``) from ``node`` the
    terminal children passed on the way (capture or the last round's end). Returns (the
    level whose frame describes the next node, -1 when the tree is done; the next free node)."""
    while level >= 0:
        if frame[level, NEXT_CHILD] == frame[level, CHILD_COUNT]:
            level -= 1
            continue
        child = frame[level, NEXT_CHILD]
        frame[level, NEXT_CHILD] += 1
        origin, attacker = frame[level, ORIGIN], frame[level, ATTACKER]
        unit1, unit2 = frame[level, UNIT1], frame[level, UNIT2]
        if level & 1 == 0:
            attacker = board.out_target[board.out_offset[attacker] + child]
        else:
            second_degree = board.out_offset[unit2 + 1] - board.out_offset[unit2]
            to1 = board.out_target[board.out_offset[unit1] + child // second_degree]
            to2 = board.out_target[board.out_offset[unit2] + child % second_degree]
            caught = (attacker == to1 or attacker == to2
                      or (attacker == unit1 and origin == to1) or (attacker == unit2 and origin == to2))
            if caught or (level >> 1) + 1 == moves:
                write_node(out, node, 3, level + 1, 0, -1, (level >> 1) + 1)
                on_goal = attacker == board.goal
                out.utility[node] = ((board.capture_on_goal_utility if on_goal else CAPTURE_UTILITY)
                                     if caught else GOAL_UTILITY if on_goal else board.timeout_utility)
                node += 1
                continue
            origin, unit1, unit2 = attacker, to1, to2
        for column in range(OWN_ROW, NEXT_CHILD):
            frame[level + 1, column] = frame[level, column]
        frame[level + 1, OWN_ACTION + (level & 1)] = child
        frame[level + 1, ORIGIN] = origin
        frame[level + 1, ATTACKER] = attacker
        frame[level + 1, UNIT1] = unit1
        frame[level + 1, UNIT2] = unit2
        return level + 1, node
    return level, node


@numba.njit(cache=True, no_cfunc_wrapper=True)
def emit_preorder(moves, board, out, trie):
    """Write GP``moves`` on ``board`` (a ``PursuitBoard``) in depth-first preorder into
    ``out``, a ``builder.Preorder`` (its ``chance_prob`` stays 1: the game has no chance).

    Level ``2 * round`` is the attacker's decision, ``2 * round + 1`` the defender's; a
    frame per level (a row of int64 (levels, ``FRAME_COLUMNS``)) holds the positions, each
    player's infoset row and the action it last took there (its next infoset's trie parent),
    and the next child to expand. The attacker sees the units within the radius, the defender
    the attacker's origin if a unit is within the radius of it; ``trie`` (int64 (2, rows, 5))
    receives both players' infoset tries. Returns (nodes written, trie rows used per player).
    """
    out_offset, distance, radius = board.out_offset, board.distance, board.radius
    frame = np.zeros((2 * moves, FRAME_COLUMNS), np.int64)
    table = Dict.empty(key_type=types.int64, value_type=types.int64)
    rows = np.ones(2, np.int64)
    frame[0, ORIGIN] = board.attacker_start
    frame[0, ATTACKER] = board.attacker_start
    frame[0, UNIT1] = board.unit1_start
    frame[0, UNIT2] = board.unit2_start
    node = 0
    level = 0
    while level >= 0:  # write the node ``level``'s frame describes, then move on
        unit1, unit2 = frame[level, UNIT1], frame[level, UNIT2]
        if level & 1 == 0:
            here = frame[level, ATTACKER]
            first, second = distance[here, unit1] <= radius, distance[here, unit2] <= radius
            seen = 0
            if first and second:
                seen = 1 + distance.shape[0] * (1 + unit1) + unit2
            elif first:
                seen = 1 + unit1
            elif second:
                seen = 1 + unit2
            code = _intern_infoset(table, trie, rows, 0, frame[level, OWN_ROW], frame[level, OWN_ACTION],
                                   seen, here, -1)
            frame[level, CHILD_COUNT] = out_offset[here + 1] - out_offset[here]
        else:
            start = frame[level, ORIGIN]
            seen = 1 + start if min(distance[start, unit1], distance[start, unit2]) <= radius else 0
            code = _intern_infoset(table, trie, rows, 1, frame[level, OWN_ROW + 1],
                                   frame[level, OWN_ACTION + 1], seen, unit1, unit2)
            frame[level, CHILD_COUNT] = ((out_offset[unit1 + 1] - out_offset[unit1])
                                         * (out_offset[unit2 + 1] - out_offset[unit2]))
        frame[level, OWN_ROW + (level & 1)] = code >> 1
        frame[level, NEXT_CHILD] = 0
        write_node(out, node, level & 1, level, frame[level, CHILD_COUNT], code, level >> 1)
        level, node = _advance(moves, board, out, frame, level, node + 1)
    return node, rows
