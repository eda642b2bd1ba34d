"""A lower bound on a hold'em strategy's exploitability from a sample of flops, without bias.

The exact best response (``full_game.StreamedEvaluator``) walks every first deal: 1,755
canonical flops of HULHE at about 50 CPU-s each. Restrict the responder to the strategy's own
pre-flop play and let it best-respond from the flop on: its value is then a sum over flops of
each flop's contribution, linear in the values the streamed walk returns at the entries (the
nodes where the flop is dealt), so a uniformly random flop, its values divided by its
probability, estimates it without bias. Each player's restricted value is at most its best-response
value, so their sum estimates a lower bound on NashConv; both players are evaluated on the
same flops, paired, and the 95% interval is over the sampled flops. It is exact in expectation
where LBR (``local_best_response``) is a heuristic: LBR's responder plays an equity rule
everywhere, this one the exact best response after the flop.

The responder may also best-respond before the flop (``respond_before_flop``: backward induction
over its pre-flop decisions, one pure action per pre-flop bucket, against the entries' values).
Chosen on the flops that are then evaluated, that choice would fit their noise and bias the
estimate upwards; so the draws are split in two halves (cross-fitting), each half's pre-flop
response is chosen on the other half's flops, and each half is evaluated under the response it
did not choose: an unbiased estimate of a responder strategy's value again, so still a lower
bound, and usually a much tighter one.

With every flop (``flops`` None) both are exact and the pre-flop response is the full best
response's (with a lossless pre-flop abstraction; a coarser one restricts the responder to its
buckets): the same walks give ``evaluate``'s best-response values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import ParameterError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.codes import BEST_RESPONSE, EXPECTED
from efgkit.poker.streamed.board_walk import Estimate
from efgkit.poker.streamed.full_game import StreamedEvaluator, run_item


class PostflopResponse(NamedTuple):
    """Lower bounds on NashConv from best responses after the first deal (chips per game)."""

    own_preflop: Estimate
    """Both players' values summed, each responder playing the strategy's own pre-flop actions."""
    responded: Estimate
    """The same with each responder's pre-flop best response (cross-fitted when sampled)."""
    distinct_flops: int
    """First deals walked (the sample's distinct flops, up to suit isomorphism)."""
    full: Evaluation | None
    """With every flop: the full best response (pre-flop maximised too) from the same walks."""


def deal_probabilities(evaluator: StreamedEvaluator) -> np.ndarray:
    """Per canonical first deal (``evaluator.items``): the probability that a uniformly random
    first deal is in its suit class."""
    sizes = len(evaluator.hand_perms) * np.asarray(evaluator.item_weight, dtype=np.float64)
    return sizes / sizes.sum()


def draw_flops(evaluator: StreamedEvaluator, samples: int, seed: int = 0) -> np.ndarray:
    """``samples`` first deals drawn uniformly with replacement (``seed``), as indices of their
    canonical deals in ``evaluator.items``."""
    if not evaluator.items:
        raise ParameterError(f"{evaluator.betting.game.spec} has no board deal: its exact best response "
                             f"is one walk, nothing to sample")
    if samples < MIN_FLOPS:
        raise ParameterError(f"--sample-flops {samples}: at least {MIN_FLOPS} flops (two halves of two)")
    return np.random.default_rng(seed).choice(len(evaluator.items), size=samples,
                                              p=deal_probabilities(evaluator))


MIN_FLOPS = 4
"""Draws a sampled estimate needs: two halves with an interval each."""


def respond_before_flop(evaluator: StreamedEvaluator, strategy: np.ndarray, player: int,
                        entry_values: np.ndarray) -> np.ndarray:
    """``strategy`` with ``player``'s pre-flop rows replaced by its best response to the entries'
    values ``entry_values`` (entries, hands): per decision, deepest first (the betting tree is built
    breadth first, so a child's index exceeds its parent's), per pre-flop bucket the action whose
    hands' values sum highest, the decisions above it still uniform (so every hand reaches it)."""
    layout, betting = evaluator.layout, evaluator.betting
    decisions = [d for d, node in enumerate(betting.decision_nodes.tolist())
                 if betting.level[node] == 0 and betting.kind[node] == player]
    bucket = layout.abstraction.buckets(int(betting.round_of_level[0]), np.zeros(0, np.int64),
                                        evaluator.hand_cards)
    response = strategy.copy()
    for d in decisions:
        response[layout.action_start[d]:layout.action_start[d + 1]] = 1.0 / layout.width[d]
    for d in sorted(decisions, reverse=True):
        start, width, buckets = int(layout.action_start[d]), int(layout.width[d]), int(layout.buckets[d])
        rows = response[start:start + width * buckets].reshape(buckets, width)
        action_values = np.empty((buckets, width))
        for a in range(width):
            rows[:] = 0.0
            rows[:, a] = 1.0
            hands = evaluator.pre_deal_hand_values(response, player, EXPECTED, entry_values)
            action_values[:, a] = np.bincount(bucket, weights=hands, minlength=buckets)
        rows[:] = 0.0
        rows[np.arange(buckets), action_values.argmax(axis=1)] = 1.0
    return response


def postflop_response(evaluator: StreamedEvaluator, strategy, flops: np.ndarray | None,
                      runner: ChunkRunner | None = None,
                      progress: Callable[[int], None] | None = None) -> PostflopResponse:
    """Both lower bounds against ``strategy``: estimated from the drawn first deals ``flops``
    (``draw_flops``; each one's values over its probability, the mean over the draws), or exact
    over every first deal (``flops`` None). ``progress`` gets 1 per first deal walked per player."""
    if flops is None and not evaluator.items:
        raise ParameterError(f"{evaluator.betting.game.spec} has no board deal: nothing to walk per flop")
    strategy = evaluator.layout.checked(strategy)
    runner = runner or ChunkRunner()
    probability = deal_probabilities(evaluator)
    sampled = flops is not None
    drawn = np.asarray(flops, dtype=np.int64) if sampled else np.arange(len(evaluator.items))
    walked = np.unique(drawn)
    shared = runner.share(evaluator)
    values = []  # per player: the drawn deals' entry values over their probabilities
    for player in (0, 1):
        entry_reach = evaluator.entry_reach(strategy, player)
        arguments = [(shared, strategy, player, BEST_RESPONSE, entry_reach, int(i), None, 0) for i in walked]
        found = {}
        for i, (item_values, _) in zip(walked.tolist(), runner.imap(run_item, arguments), strict=True):
            found[i] = item_values / probability[i] if sampled else item_values
            if progress is not None:
                progress(1)
        values.append([found[i] for i in drawn.tolist()])
    if not sampled:
        return _every_flop(evaluator, strategy, [sum(v) for v in values])
    own = [np.array([evaluator.pre_deal_value(strategy, p, EXPECTED, v) for v in values[p]]) for p in (0, 1)]
    halves = (np.arange(drawn.shape[0]) % 2 == 0, np.arange(drawn.shape[0]) % 2 == 1)
    responded = [np.zeros(drawn.shape[0]), np.zeros(drawn.shape[0])]
    for p in (0, 1):
        for chosen_on, evaluated in (halves, halves[::-1]):
            mean = sum(v for v, keep in zip(values[p], chosen_on, strict=True) if keep) / chosen_on.sum()
            response = respond_before_flop(evaluator, strategy, p, mean)
            for k in np.flatnonzero(evaluated):
                responded[p][k] = evaluator.pre_deal_value(response, p, EXPECTED, values[p][k])
    totals = responded[0] + responded[1]
    parts = [Estimate.of(totals[half], exact=False) for half in halves]
    cross_fitted = Estimate((parts[0].mean + parts[1].mean) / 2,
                            float(np.hypot(parts[0].standard_error, parts[1].standard_error)) / 2,
                            drawn.shape[0], False)
    return PostflopResponse(Estimate.of(own[0] + own[1], exact=False), cross_fitted, walked.shape[0], None)


def _every_flop(evaluator: StreamedEvaluator, strategy: np.ndarray,
                sums: list[np.ndarray]) -> PostflopResponse:
    """The exact bounds from the entries' values summed over every first deal."""
    every = len(evaluator.items)
    own = sum(evaluator.pre_deal_value(strategy, p, EXPECTED, sums[p]) for p in (0, 1))
    responses = [respond_before_flop(evaluator, strategy, p, sums[p]) for p in (0, 1)]
    responded = sum(evaluator.pre_deal_value(responses[p], p, EXPECTED, sums[p]) for p in (0, 1))
    full = Evaluation.of([evaluator.pre_deal_value(strategy, p, BEST_RESPONSE, sums[p]) for p in (0, 1)],
                         float("nan"))
    return PostflopResponse(Estimate(own, 0.0, every, True), Estimate(responded, 0.0, every, True),
                            every, full)
