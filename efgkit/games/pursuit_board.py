"""The board of Čermák et al.'s Graph Pursuit (Sec. 5.3.3): the directed graph, where the
pieces start, the goal, what each side sees and the payoffs, as the rules (``pursuit``) and
the tree kernel (``pursuit_preorder``) both read them."""

from __future__ import annotations

import numpy as np

GRAPH_OUT_EDGES: dict[int, tuple[int, ...]] = {
    0: (1, 4), 1: (2, 5), 2: (1, 3, 6), 3: (2, 7), 4: (5, 8), 5: (1, 4, 6, 9, 10),
    6: (2, 10), 7: (3, 6), 8: (4, 9), 9: (8, 10), 10: (7, 13), 12: (8, 13), 13: (9, 12),
}
NUM_GRAPH_NODES = 16
ATTACKER_START = 0
UNIT_STARTS = (7, 13)
GOAL = 10
VISIBILITY_RADIUS = 2
GOAL_UTILITY = 2.0
CAPTURE_UTILITY = -1.0
TIMEOUT_UTILITY = 0.0
REFERENCE_TIMEOUT_UTILITY = 1.0
"""The authors' code pays +1 on timeout (GTLibrary ``PursuitGameState.getEndGameUtilities``:
``return new double[]{1, -1};``); the paper's text says 0."""
PAYOFFS = {"paper": (TIMEOUT_UTILITY, CAPTURE_UTILITY),
           "reference": (REFERENCE_TIMEOUT_UTILITY, GOAL_UTILITY)}
"""Per reading: (timeout utility, utility of a capture with the attacker on the goal). The
authors' code tests the goal before the capture (``getEndGameUtilities``: ``if (onGoal())
return new double[]{2, -2};`` comes first), so a capture on the goal pays 2 there; the
paper's text makes any capture -1."""


def _shortest_distances() -> np.ndarray:
    """Directed shortest-path lengths along out-edges (Floyd-Warshall); unreachable = N."""
    distance = np.full((NUM_GRAPH_NODES, NUM_GRAPH_NODES), NUM_GRAPH_NODES, np.int64)
    np.fill_diagonal(distance, 0)
    for source, targets in GRAPH_OUT_EDGES.items():
        distance[source, list(targets)] = 1
    for middle in range(NUM_GRAPH_NODES):
        distance = np.minimum(distance, distance[:, [middle]] + distance[[middle], :])
    return distance


DISTANCE = _shortest_distances()
