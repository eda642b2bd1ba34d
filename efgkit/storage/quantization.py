"""Quantized strategies for the compact export: rows of integers summing to ``2**bits - 1``.

Two roundings of a strategy's rows (one row per abstract infoset):

* ``quantize`` (largest remainder): floor every scaled probability, then give the missing
  units to the largest remainders (slumbot2019's ``Quantize``; ../shared/research/
  anchors_abstraction.md §6). Every probability moves by less than one step.
* ``round_for_exploitability``: the same floors and the same number of units per row, but
  which actions get them is chosen by exact evaluation. Rows are visited in decreasing
  reach (chance and both players); for each row every admissible assignment is tried
  with the rows already visited quantized and the others still exact, and the one whose
  profile has the smallest exact NashConv stays. An opponent gains from a rounding error
  only where it breaks the opponent's indifference, and errors of rows it cannot tell
  apart (Leduc's two suits of a card, say) cancel when the later row rounds the other
  way; rounding each row alone sends them all the same way. Pure actions stay exact (a
  probability of 0 or 1 has no remainder and never gains or loses a unit), and mass is
  never moved to an action the strategy does not play.

The search evaluates at most ``evaluations`` profiles (rows beyond the budget keep the
largest-remainder rounding), and the result is kept only if its exact NashConv is not
worse than the largest-remainder one.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy

BITS = (16, 8, 4)
REMAINDER_TOLERANCE = 1e-9
"""A scaled probability this close to an integer is that integer (no unit to give)."""
MAX_CANDIDATES = 8
"""Assignments tried per row: the largest-remainder one first, then the next ones."""


def check_bits(bits: int) -> int:
    if bits not in BITS:
        raise ParameterError(f"bits must be one of 16, 8 or 4, got {bits}")
    return (1 << bits) - 1


def quantize(probabilities: np.ndarray, action_offset: np.ndarray, bits: int) -> np.ndarray:
    """uint32 weights per action summing to ``2**bits - 1`` in every row (largest remainder).

    ``probabilities``: float64 per action, rows given by the CSR ``action_offset``; ties
    between equal remainders go to the lower action index.
    """
    total = check_bits(bits)
    scaled = np.asarray(probabilities, np.float64) * total
    weights = np.floor(scaled)
    remainder = scaled - weights
    counts = np.diff(action_offset)
    row = np.repeat(np.arange(counts.shape[0]), counts)
    missing = total - np.add.reduceat(weights, action_offset[:-1]) if row.size else weights
    order = np.lexsort((np.arange(row.shape[0]), -remainder, row))
    rank = np.empty(row.shape[0], np.int64)
    rank[order] = np.arange(row.shape[0]) - np.repeat(action_offset[:-1], counts)
    weights += rank < np.repeat(missing, counts)
    return weights.astype(np.uint32)


@dataclass(eq=False)
class Rounding:
    """What ``round_for_exploitability`` chose, with both exact NashConvs."""

    weights: np.ndarray
    """uint32 per abstract infoset-action, every row summing to ``2**bits - 1``."""
    nash_conv: float
    nash_conv_largest_remainder: float
    rows_searched: int
    evaluations: int


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


def _row_reach(evaluator: BestResponse, probabilities: np.ndarray) -> np.ndarray:
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


def round_for_exploitability(strategy: Strategy, bits: int, *, evaluations: int = 4096,
                             evaluator: BestResponse | None = None, progress=None) -> Rounding:
    """Quantize ``strategy``'s rows choosing, row by row, the assignment of units with the
    least exact NashConv (see the module docstring). ``evaluations`` caps the exact
    evaluations; ``evaluator`` may pass a BestResponse already built for the map;
    ``progress(evaluations used)`` is called after every searched row."""
    total = check_bits(bits)
    if evaluations < 0:
        raise ParameterError(f"evaluations must be >= 0, got {evaluations}")
    infoset_map = strategy.infoset_map
    evaluator = evaluator or BestResponse(infoset_map)
    offsets = infoset_map.abstract_action_offset
    nearest = quantize(strategy.probabilities, offsets, bits)
    nearest_nash_conv = evaluator.evaluate(nearest / total).nash_conv
    scaled = strategy.probabilities * total
    current = strategy.probabilities.copy()
    used = searched = 0
    for row in np.argsort(-_row_reach(evaluator, strategy.probabilities), kind="stable"):
        lo, hi = offsets[row], offsets[row + 1]
        choices = _assignments(scaled[lo:hi])
        if len(choices) > 1 and used + len(choices) <= evaluations:
            scores = []
            for weights in choices:
                current[lo:hi] = weights / total
                scores.append(evaluator.evaluate(current).nash_conv)
            used += len(choices)
            searched += 1
            if progress is not None:
                progress(used)
            current[lo:hi] = choices[int(np.argmin(scores))] / total
        else:
            current[lo:hi] = nearest[lo:hi] / total
    weights = np.rint(current * total).astype(np.uint32)
    searched_nash_conv = evaluator.evaluate(weights / total).nash_conv if used else nearest_nash_conv
    if searched_nash_conv > nearest_nash_conv:
        weights, searched_nash_conv = nearest, nearest_nash_conv
    return Rounding(weights, searched_nash_conv, nearest_nash_conv, searched, used)
