"""A best response whose ties are broken against an opponent who trembles toward uniform.

The ordinary best response (``best_response``) gives every action of an infoset the
opponent never reaches the value 0 and takes the first. The authors' code of Čermák et al.
(GTLibrary ``FPIRABestResponse.bestResponse``) instead values such an infoset as if the
opponent had reached it, from the opponent's strategy further down, so fictitious play
prescribes sensible actions there (docs/conventions.md, "FPIRA and CFR+IRA"). This module
gives the limit of that rule that fits one sequence-form pass: the best response to the
opponent's strategy mixed with epsilon of uniform, as epsilon -> 0. Every terminal carries
its reach r and the first-order term s of its reach in epsilon (at an opponent node with
probability p out of m actions: s' = s p + r (1/m - p)); an infoset takes the actions of
greatest value sum r u and among those (up to rounding) the first of greatest sum s u.
Where the opponent reaches the infoset, this is an ordinary best response (same value);
where it does not, the infoset answers the opponent's single most likely deviations.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.games.protocol import CHANCE
from efgkit.solvers.best_response import TIE_TOLERANCE, BestResponse


def trembling_best_response(responder: BestResponse, player: int,
                            behavior: np.ndarray) -> tuple[float, np.ndarray]:
    """Value (``player``'s utility, the ordinary best-response value) and the action per
    infoset (int32, -1 for the other player's) of the trembling-tie-broken best response
    to ``behavior`` (float64 per action of ``responder``'s map)."""
    tree = responder.infoset_map.tree
    layout = responder.layout
    layout.set_strategy(behavior)
    reach = np.empty(tree.num_nodes)
    slope = np.empty(tree.num_nodes)
    _reach_and_slope(layout.passes, layout.edge_prob, player, CHANCE, reach, slope)
    actions = np.full(tree.num_infosets, -1, dtype=np.int32)
    size = tree.num_infoset_actions + 1
    value = _lexicographic_best_response(
        player, reach, slope, layout.terminal_nodes, tree.node_utility,
        tree.node_last_action[player], responder._order[player], responder._parent_action,
        tree.infoset_action_offset, tree.infoset_num_actions, np.zeros((4, size)), actions)
    return float(value), actions


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _reach_and_slope(passes, edge_prob, player, chance, reach, slope):
    """reach[n]: chance times opponent probability to n; slope[n]: its derivative when the
    opponent plays (1 - eps) sigma + eps uniform, at eps = 0. ``passes`` a ``NodePasses``,
    ``edge_prob`` float64 (profile entries + nodes,), ``reach``/``slope`` float64 (nodes,)."""
    reach[0] = 1.0
    slope[0] = 0.0
    for i in range(passes.nodes.shape[0]):
        start = passes.first_child[i]
        node = passes.nodes[i]
        r = reach[node]
        s = slope[node]
        m = passes.num_children[i]
        offset = passes.prob_offset[i]
        for k in range(m):
            if passes.kind[i] == player:
                reach[start + k] = r
                slope[start + k] = s
            else:
                p = edge_prob[offset + k]
                reach[start + k] = r * p
                slope[start + k] = s * p
                if passes.kind[i] != chance:
                    slope[start + k] += r * (1.0 / m - p)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _lexicographic_best_response(player, reach, slope, terminal_nodes, utility, last_action,
                                 order, parent_action, action_offset, num_actions, work,
                                 best_action):
    """``_best_response_kernel`` on value pairs (sum reach u, sum slope u), compared
    lexicographically (the first up to ``TIE_TOLERANCE``). ``work`` float64 (4, flat actions
    + 1): terminal and continuation values of both terms, slot 0 the root."""
    sign = 1.0 if player == 0 else -1.0
    for x in range(work.shape[1]):
        for row in range(4):
            work[row, x] = 0.0
    for i in range(terminal_nodes.shape[0]):
        z = terminal_nodes[i]
        work[0, last_action[z] + 1] += reach[z] * sign * utility[z]
        work[2, last_action[z] + 1] += slope[z] * sign * utility[z]
    for j in range(order.shape[0]):
        infoset = order[j]
        base = action_offset[infoset] + 1
        best = work[0, base] + work[1, base]
        for k in range(1, num_actions[infoset]):
            value = work[0, base + k] + work[1, base + k]
            if value > best:
                best = value
        tolerance = TIE_TOLERANCE * (abs(best) if abs(best) > 1.0 else 1.0)
        arg = -1
        second = 0.0
        for k in range(num_actions[infoset]):
            if work[0, base + k] + work[1, base + k] >= best - tolerance:
                candidate = work[2, base + k] + work[3, base + k]
                if arg < 0 or candidate > second + TIE_TOLERANCE * max(1.0, abs(second)):
                    arg = k
                    second = candidate
        best_action[infoset] = arg
        parent = parent_action[infoset] + 1
        work[1, parent] += work[0, base + arg] + work[1, base + arg]
        work[3, parent] += second
    return work[0, 0] + work[1, 0]
