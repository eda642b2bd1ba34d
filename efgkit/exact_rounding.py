"""The exact rounding of a compact export: the rows' tiers and units chosen by exact NashConv.

A compact file stores a probability as whole units of its row's total, within one unit
(``storage.compact_writer``); this module spends the bits and units where an opponent
gains least, by exact best responses in the original game, so it is a floor above
storage, and the exporter only writes the ``QuantizedRows`` it chose.

``tier_bits`` spends the bits unevenly, ``2 bits`` per action for the rows the strategy
reaches most and ``bits // 2`` for twice as many actions of the rows it reaches least (an
opponent gains from an error only where the row is reached), ``bits`` on average, the
share chosen by exact NashConv. ``round_for_exploitability`` keeps largest remainder's
floors and number of units per row, but which actions get them is chosen by exact
evaluation, in two phases.

1. Sequential search. Rows are visited in decreasing reach (chance and both players);
   for each row every admissible assignment is tried with the rows already visited
   quantized and the others still exact, and the one whose profile has the smallest
   exact NashConv stays. An opponent gains from a rounding error only where it breaks
   the opponent's indifference, and errors of rows it cannot tell apart (Leduc's two
   suits of a card, say) cancel when the later row rounds the other way; rounding each
   row alone sends them all the same way.
2. Descent. NashConv is the sum of two best-response values, and player ``i``'s rows
   change only the one against ``i``; so each player's rows are improved against that
   value alone, half an evaluation per trial. A move takes a row's unit from one action
   and gives it to another that has none (both stay within a step of the exact
   probability). Moves are tried in the order of their first-order effect: the
   opponent's counterfactual value of each action under (the quantized strategy, the
   opponent's best response to it), so units first leave the actions the opponent
   gains most from, which are the player's own worst actions. A move stays if the
   exact best-response value decreases; sweeps repeat until one changes nothing.

Pure actions stay exact (a probability of 0 or 1 has no remainder and never gains or
loses a unit), and mass is never moved to an action the strategy does not play. Both
phases share ``evaluations`` exact evaluations: the sequential search spends at most
half (rows beyond it keep the largest-remainder rounding, for the descent to improve),
the descent the rest; the result is kept only if its exact NashConv is not
worse than the largest-remainder one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.protocol import CHANCE
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import ProfileLayout
from efgkit.storage.compact_writer import QuantizedRows, action_totals, quantize

ROUNDINGS = ("exact", "nearest")
"""What ``efgkit export --rounding`` offers: this module's, or largest remainder."""
REMAINDER_TOLERANCE = 1e-9
"""A scaled probability this close to an integer is that integer (no unit to give)."""
MAX_CANDIDATES = 8
"""Assignments tried per row: the largest-remainder one first, then the next ones."""
EVALUATIONS = 16384
"""Default budget of exact evaluations (a best response counts as one)."""
IMPROVEMENT_TOLERANCE = 1e-13
"""A descent move stays only if the best-response value drops by more than this."""
TIER_FRACTIONS = (0.0, 0.02, 0.05, 0.1, 0.2)
"""Shares of the actions ``tier_bits`` tries for the wide tier (the rows reached most)."""



@dataclass(eq=False)
class Rounding:
    """What ``round_for_exploitability`` chose, with both exact NashConvs."""

    rows: QuantizedRows
    """The rows chosen: int64 weights per abstract infoset-action, bits per abstract row."""
    nash_conv: float
    nash_conv_largest_remainder: float
    rows_searched: int
    evaluations: int
    moves: int = 0
    """Units moved by the descent (phase 2)."""


def _assignments(scaled: np.ndarray) -> list[np.ndarray]:
    """Admissible weights of one row: floors plus one unit for ``missing`` of the actions
    with a remainder, the largest-remainder choice first."""
    floors = np.floor(scaled)
    remainder = scaled - floors
    missing = int(round(scaled.sum() - floors.sum()))
    open_actions = [int(a) for a in np.argsort(-remainder, kind="stable")
                    if remainder[a] > REMAINDER_TOLERANCE]
    if missing == 0 or len(open_actions) <= missing:
        weights = floors.copy()
        weights[open_actions[:missing]] += 1
        return [weights]
    choices = []
    for chosen in itertools.islice(itertools.combinations(open_actions, missing), MAX_CANDIDATES):
        weights = floors.copy()
        weights[list(chosen)] += 1
        choices.append(weights)
    return choices


def row_reach(evaluator: BestResponse, probabilities: np.ndarray) -> np.ndarray:
    """float64 per abstract infoset: reach probability of its members' histories."""
    infoset_map = evaluator.infoset_map
    tree = infoset_map.tree
    evaluator.layout.set_strategy(probabilities)
    reach = evaluator.layout.others_reach(-1)
    decision = np.flatnonzero(tree.node_kind < CHANCE)
    per_infoset = np.bincount(tree.node_infoset[decision], weights=reach[decision],
                              minlength=tree.num_infosets)
    return np.bincount(infoset_map.abstract_of, weights=per_infoset,
                       minlength=infoset_map.num_abstract)


class _Descent:
    """Phase 2 of ``round_for_exploitability``: unit moves within each row, per player.

    ``scaled``: float64 per abstract action, probability * its row's total (``total``,
    int64 per abstract action); the moves keep every weight in ``[floor(scaled),
    floor(scaled) + 1]`` and give units only to actions with a remainder.
    """

    def __init__(self, evaluator: BestResponse, scaled: np.ndarray, total: np.ndarray) -> None:
        infoset_map = evaluator.infoset_map
        tree = infoset_map.tree
        self.evaluator, self.total, self.infoset_map = evaluator, total, infoset_map
        self.floors = np.floor(scaled)
        remainder = scaled - self.floors
        self.open = (remainder > REMAINDER_TOLERANCE) & (remainder < 1.0 - REMAINDER_TOLERANCE)
        self.floors[~self.open] = np.rint(scaled[~self.open])
        self.identity = ProfileLayout(InfosetMap.identity(tree))
        decision = np.flatnonzero(tree.node_kind < CHANCE)
        self.nodes = [decision[tree.node_kind[decision] == player].astype(np.int64)
                      for player in (0, 1)]
        self.row_actions = np.split(np.arange(infoset_map.num_abstract_actions),
                                    infoset_map.abstract_action_offset[1:-1])

    def action_values(self, weights: np.ndarray, player: int) -> np.ndarray:
        """float64 per abstract action: the opponent's counterfactual value of ``player``
        taking it, under (``weights``, the opponent's best response to them), weighted by
        the reach of every player and chance (the derivative of that best response's
        value with respect to the action's probability)."""
        infoset_map, tree = self.infoset_map, self.infoset_map.tree
        opponent = 1 - player
        probabilities = weights / self.total
        _, best = self.evaluator.best_response(opponent, probabilities)
        behavior = probabilities[infoset_map.abstract_action_of]
        opponent_infosets = tree.infosets_of(opponent)
        starts = tree.infoset_action_offset[opponent_infosets]
        behavior[np.repeat(starts, tree.infoset_num_actions[opponent_infosets])
                 + positions_within(tree.infoset_num_actions[opponent_infosets])] = 0.0
        behavior[starts + best[opponent_infosets]] = 1.0
        self.identity.set_strategy(behavior)
        reach = self.identity.others_reach(-1).copy()
        values = self.identity.expected_values() * (1.0 if opponent == 0 else -1.0)
        per_action = np.zeros(tree.num_infoset_actions)
        _counterfactual_action_values(self.nodes[player], tree.node_first_child,
                                      tree.node_num_children, tree.node_infoset,
                                      tree.infoset_action_offset, reach, values, per_action)
        return np.bincount(infoset_map.abstract_action_of, weights=per_action,
                           minlength=infoset_map.num_abstract_actions)

    def moves(self, weights: np.ndarray, player: int) -> list[tuple[int, int]]:
        """Admissible (from, to) flat abstract actions of ``player``'s rows, the ones whose
        first-order effect lowers the opponent's value most first."""
        gradient = self.action_values(weights, player)
        has_unit = self.open & (weights > self.floors)
        can_take = self.open & (weights == self.floors)
        candidates = []
        for row in self.infoset_map.abstract_infosets_of(player):
            actions = self.row_actions[row]
            for source in actions[has_unit[actions]]:
                for target in actions[can_take[actions]]:
                    candidates.append((gradient[target] - gradient[source], source, target))
        candidates.sort()
        return [(int(source), int(target)) for _, source, target in candidates]

    def run(self, weights: np.ndarray, evaluations: int, progress=None) -> tuple[int, int]:
        """Improve ``weights`` in place; returns (moves kept, evaluations used)."""
        used = kept = 0
        improving = {0: True, 1: True}
        while any(improving.values()) and used < evaluations:
            for player in (0, 1):
                if not improving[player] or used >= evaluations:
                    continue
                opponent = 1 - player
                value, _ = self.evaluator.best_response(opponent, weights / self.total)
                improving[player] = False
                for source, target in self.moves(weights, player):
                    if weights[source] == self.floors[source] or weights[target] > self.floors[target]:
                        continue  # an earlier move in this sweep took the unit
                    if used >= evaluations:
                        break
                    weights[source] -= 1
                    weights[target] += 1
                    trial, _ = self.evaluator.best_response(opponent, weights / self.total)
                    used += 1
                    if trial < value - IMPROVEMENT_TOLERANCE:
                        value, kept, improving[player] = trial, kept + 1, True
                    else:
                        weights[source] += 1
                        weights[target] -= 1
                if progress is not None:
                    progress(used)
        return kept, used


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _counterfactual_action_values(nodes, first_child, num_children, node_infoset, action_offset,
                                  reach, values, out):
    """out[action of I] += reach(h) * value(child of h by the action), for nodes h of I."""
    for j in range(nodes.shape[0]):
        node = nodes[j]
        base = action_offset[node_infoset[node]]
        child = first_child[node]
        for k in range(num_children[node]):
            out[base + k] += reach[node] * values[child + k]


def reach_tiers(reach: np.ndarray, actions: np.ndarray, bits: int,
                fraction: float) -> np.ndarray | None:
    """int per row: bits per action, ``2 bits`` for the rows with a choice (two actions or
    more) of highest ``reach`` up to ``fraction`` of all actions, ``bits // 2`` for twice as
    many actions of the lowest reach, ``bits`` for the others, so no more bits in all than
    ``bits`` per action; None if the rows cannot pay for that share."""
    row_bits = np.full(actions.shape[0], bits, np.int64)
    order = np.argsort(-reach, kind="stable")
    mixed = order[actions[order] > 1]
    wide = mixed[np.cumsum(actions[mixed]) <= fraction * actions.sum()]
    if not wide.size:
        return row_bits
    least = mixed[::-1]
    narrow = least[:np.searchsorted(np.cumsum(actions[least]), 2 * actions[wide].sum()) + 1]
    if np.intersect1d(wide, narrow).size or (actions[narrow].sum() < 2 * actions[wide].sum()):
        return None
    row_bits[wide], row_bits[narrow] = 2 * bits, bits // 2
    return row_bits


def tier_bits(strategy: Strategy, bits: int, evaluator: BestResponse,
              fractions: tuple[float, ...] = TIER_FRACTIONS) -> np.ndarray:
    """int per abstract row: its bits per action (``reach_tiers``, reach by ``row_reach``),
    with the share of the wide tier among ``fractions`` (0: one tier) whose
    largest-remainder rounding has the smallest exact NashConv (docs/compact-format.md,
    "Tiers"). At 16 bits there is one tier: 32-bit weights would not fit the readers'
    words."""
    offsets = strategy.infoset_map.abstract_action_offset
    actions = np.diff(offsets)
    if bits == 16 or not actions.size:
        return np.full(actions.shape[0], bits, np.int64)
    reach = row_reach(evaluator, strategy.probabilities)
    tried = []
    for fraction in fractions:
        row_bits = reach_tiers(reach, actions, bits, fraction)
        if row_bits is not None:
            weights = quantize(strategy.probabilities, offsets, row_bits)
            tried.append((evaluator.evaluate(weights / action_totals(offsets, row_bits)).nash_conv,
                          fraction, row_bits))
    return min(tried, key=lambda entry: entry[:2])[2]


def round_for_exploitability(strategy: Strategy, bits: int | np.ndarray, *, tiers: bool = False,
                             evaluations: int = EVALUATIONS,
                             evaluator: BestResponse | None = None, progress=None) -> Rounding:
    """Quantize ``strategy``'s rows by the sequential search and the descent of the module
    docstring, at ``bits`` bits per action (int, or int per abstract row), in the tiers of
    ``tier_bits`` first if ``tiers`` (a card table keeps one tier). ``evaluations`` caps
    the exact evaluations of both; ``evaluator`` may pass a BestResponse already built for
    the map; ``progress(evaluations used)`` is called after every searched row and every
    descent sweep."""
    if evaluations < 0:
        raise ParameterError(f"evaluations must be >= 0, got {evaluations}")
    infoset_map = strategy.infoset_map
    evaluator = evaluator or BestResponse(infoset_map)
    offsets = infoset_map.abstract_action_offset
    bits = tier_bits(strategy, bits, evaluator) if tiers else bits
    total = action_totals(offsets, bits)
    nearest = quantize(strategy.probabilities, offsets, bits)
    nearest_nash_conv = evaluator.evaluate(nearest / total).nash_conv
    scaled = strategy.probabilities * total
    current = strategy.probabilities.copy()
    used = searched = 0
    for row in np.argsort(-row_reach(evaluator, strategy.probabilities), kind="stable"):
        lo, hi = offsets[row], offsets[row + 1]
        choices = _assignments(scaled[lo:hi])
        if len(choices) > 1 and used + len(choices) <= evaluations // 2:
            scores = []
            for weights in choices:
                current[lo:hi] = weights / total[lo:hi]
                scores.append(evaluator.evaluate(current).nash_conv)
            used += len(choices)
            searched += 1
            if progress is not None:
                progress(used)
            current[lo:hi] = choices[int(np.argmin(scores))] / total[lo:hi]
        else:
            current[lo:hi] = nearest[lo:hi] / total[lo:hi]
    weights = np.rint(current * total)
    moves = 0
    if used < evaluations:
        moves, descent_used = _Descent(evaluator, scaled, total).run(
            weights, evaluations - used,
            None if progress is None else lambda done: progress(used + done))
        used += descent_used
    weights = weights.astype(np.int64)
    searched_nash_conv = evaluator.evaluate(weights / total).nash_conv if used else nearest_nash_conv
    if searched_nash_conv > nearest_nash_conv:
        weights, searched_nash_conv = nearest, nearest_nash_conv
    row_bits = np.broadcast_to(np.asarray(bits, np.int64), (infoset_map.num_abstract,)).copy()
    return Rounding(QuantizedRows(weights, row_bits), searched_nash_conv, nearest_nash_conv,
                    searched, used, moves)
