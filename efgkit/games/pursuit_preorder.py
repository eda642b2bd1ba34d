"""The numba kernel that writes Graph Pursuit's tree in depth-first preorder for
``GraphPursuit.compile``, with each player's infoset trie (the rules are in ``pursuit``)."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.typed import Dict

from efgkit.games.pursuit import (
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
    ``unit2_start``."""

    out_offset: np.ndarray
    out_target: np.ndarray
    distance: np.ndarray
    radius: int
    goal: int
    attacker_start: int
    unit1_start: int
    unit2_start: int


# The graph in CSR form: node n's out-edges lead to OUT_TARGET[OUT_OFFSET[n]:OUT_OFFSET[n + 1]].
OUT_OFFSET = np.cumsum([0] + [len(GRAPH_OUT_EDGES.get(n, ())) for n in range(NUM_GRAPH_NODES)],
                       dtype=np.int64)
OUT_TARGET = np.array([t for n in range(NUM_GRAPH_NODES) for t in GRAPH_OUT_EDGES.get(n, ())],
                      np.int64)
BOARD = PursuitBoard(OUT_OFFSET, OUT_TARGET, DISTANCE, VISIBILITY_RADIUS, GOAL, ATTACKER_START,
                     UNIT_STARTS[0], UNIT_STARTS[1])
# Observation codes in the kernel: attacker 0 (no unit seen), 1 + n (one unit on n),
# 1 + N + N * n1 + n2 (unit 1 on n1, unit 2 on n2); defender 0 (nothing) or 1 + n.
NUM_OBSERVATIONS = 1 + NUM_GRAPH_NODES + NUM_GRAPH_NODES * NUM_GRAPH_NODES
MAX_JOINT_ACTIONS = max(len(t) for t in GRAPH_OUT_EDGES.values()) ** 2
# Columns of the per-player infoset trie the kernel fills (row 0 = empty history).
PARENT, ACTION, OBSERVATION, POSITION_A, POSITION_B = range(5)


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


@numba.njit(cache=True, no_cfunc_wrapper=True)
def emit_preorder(moves, board, out, trie):
    """Write GP``moves`` on ``board`` (a ``PursuitBoard``) in depth-first preorder into
    ``out``, a ``builder.Preorder`` (its ``chance_prob`` stays 1: the game has no chance).

    Level ``2 * round`` is the attacker's decision, ``2 * round + 1`` the defender's; a
    frame per level holds the positions, each player's infoset row and the
    action it last took there (its next infoset's trie parent), and the next child to
    expand. ``trie`` (int64 (2, rows, 5)) receives both players' infoset tries. Returns
    (nodes written, trie rows used per player).
    """
    out_offset, out_target, distance, radius, goal = (board.out_offset, board.out_target, board.distance,
                                                      board.radius, board.goal)
    kind, depth, num_children = out.kind, out.depth, out.num_children
    utility, infoset_code, public_code = out.utility, out.infoset_code, out.public_code
    levels = 2 * moves
    origin = np.zeros(levels, np.int64)
    attacker = np.zeros(levels, np.int64)
    unit1 = np.zeros(levels, np.int64)
    unit2 = np.zeros(levels, np.int64)
    own_row = np.zeros((levels, 2), np.int64)  # each player's latest infoset row
    own_action = np.zeros((levels, 2), np.int64)  # the action taken there
    next_child = np.zeros(levels, np.int64)
    child_count = np.zeros(levels, np.int64)
    table = Dict.empty(key_type=types.int64, value_type=types.int64)
    rows = np.ones(2, np.int64)

    origin[0] = board.attacker_start
    attacker[0] = board.attacker_start
    unit1[0] = board.unit1_start
    unit2[0] = board.unit2_start
    node = 0
    level = 0
    while True:
        # Write the node that ``level``'s frame describes and start its children.
        round_index = level >> 1
        if level & 1 == 0:
            here = attacker[level]
            seen = 0
            first = distance[here, unit1[level]] <= radius
            second = distance[here, unit2[level]] <= radius
            if first and second:
                seen = 1 + distance.shape[0] * (1 + unit1[level]) + unit2[level]
            elif first:
                seen = 1 + unit1[level]
            elif second:
                seen = 1 + unit2[level]
            code = _intern_infoset(table, trie, rows, 0, own_row[level, 0], own_action[level, 0],
                                   seen, here, -1)
            child_count[level] = out_offset[here + 1] - out_offset[here]
        else:
            start = origin[level]
            seen = 0
            if min(distance[start, unit1[level]], distance[start, unit2[level]]) <= radius:
                seen = 1 + start
            code = _intern_infoset(table, trie, rows, 1, own_row[level, 1], own_action[level, 1],
                                   seen, unit1[level], unit2[level])
            child_count[level] = ((out_offset[unit1[level] + 1] - out_offset[unit1[level]])
                                  * (out_offset[unit2[level] + 1] - out_offset[unit2[level]]))
        kind[node] = level & 1
        depth[node] = level
        num_children[node] = child_count[level]
        infoset_code[node] = code
        public_code[node] = round_index
        node += 1
        own_row[level, level & 1] = code >> 1
        next_child[level] = 0

        # Advance to the next node in preorder, writing terminal children on the way.
        while True:
            if next_child[level] == child_count[level]:
                level -= 1
                if level < 0:
                    return node, rows
                continue
            child = next_child[level]
            next_child[level] += 1
            if level & 1 == 0:
                destination = out_target[out_offset[attacker[level]] + child]
                origin[level + 1] = origin[level]
                unit1[level + 1] = unit1[level]
                unit2[level + 1] = unit2[level]
            else:
                second_degree = out_offset[unit2[level] + 1] - out_offset[unit2[level]]
                to1 = out_target[out_offset[unit1[level]] + child // second_degree]
                to2 = out_target[out_offset[unit2[level]] + child % second_degree]
                start = origin[level]
                destination = attacker[level]
                caught = (destination == to1 or destination == to2
                          or (destination == unit1[level] and start == to1)
                          or (destination == unit2[level] and start == to2))
                on_goal = not caught and destination == goal
                if caught or (level >> 1) + 1 == moves:
                    kind[node] = 3
                    depth[node] = level + 1
                    num_children[node] = 0
                    utility[node] = (GOAL_UTILITY if on_goal
                                     else CAPTURE_UTILITY if caught else TIMEOUT_UTILITY)
                    infoset_code[node] = -1
                    public_code[node] = (level >> 1) + 1
                    node += 1
                    continue
                origin[level + 1] = destination
                unit1[level + 1] = to1
                unit2[level + 1] = to2
            attacker[level + 1] = destination
            own_row[level + 1] = own_row[level]
            own_action[level + 1] = own_action[level]
            own_action[level + 1, level & 1] = child
            level += 1
            break
