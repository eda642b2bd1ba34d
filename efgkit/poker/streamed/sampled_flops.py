"""A lower bound on a hold'em strategy's exploitability from a sample of flops, without bias.

The exact best response (``full_game.StreamedEvaluator``) walks every first deal: 1,755
canonical flops of HULHE at about 75 CPU-s each. Restrict the responder to the strategy's own
pre-flop play and let it best-respond from the flop on: its value is then a sum over flops of
each flop's contribution, linear in the values the streamed walk returns at the entries (the
nodes where the flop is dealt), so a uniformly random flop, its values divided by its
probability, estimates it without bias. Each player's restricted value is at most its best-response
value, so their sum estimates a lower bound on NashConv; both players are evaluated on the
same flops, paired, and the 95% interval is over the sampled flops. It is exact in expectation
where LBR (``local_best_response``) is a heuristic: LBR's responder plays an equity rule
everywhere, this one the exact best response after the flop.

With every flop (``flops`` None) the value is exact and, from the same walks, the full
best response too (the responder also maximising before the flop): ``evaluate``'s values.
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
    """Best responses after the first deal, the responder playing the strategy before it."""

    nash_conv: Estimate
    """Both players' restricted values summed (chips per game): a lower bound on NashConv."""
    values: tuple[Estimate, Estimate]
    """Each player's restricted best-response value."""
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
    if samples < 2:
        raise ParameterError(f"--sample-flops {samples}: at least 2 flops (an interval needs two)")
    return np.random.default_rng(seed).choice(len(evaluator.items), size=samples,
                                              p=deal_probabilities(evaluator))


def postflop_response(evaluator: StreamedEvaluator, strategy, flops: np.ndarray | None,
                      runner: ChunkRunner | None = None,
                      progress: Callable[[int], None] | None = None) -> PostflopResponse:
    """Each player's best response after the first deal against ``strategy``: estimated from the
    drawn first deals ``flops`` (``draw_flops``; each one's values over its probability, the mean
    over the draws), or exact over every first deal (``flops`` None). ``progress`` gets 1 per first
    deal walked per player."""
    if flops is None and not evaluator.items:
        raise ParameterError(f"{evaluator.betting.game.spec} has no board deal: nothing to walk per flop")
    strategy = evaluator.layout.checked(strategy)
    runner = runner or ChunkRunner()
    probability = deal_probabilities(evaluator)
    sampled = flops is not None
    drawn = np.asarray(flops, dtype=np.int64) if sampled else np.arange(len(evaluator.items))
    walked = np.unique(drawn)
    slab = evaluator.slab(strategy)  # the strategy as the walks read it, rearranged once
    shared, shared_slab = runner.share(evaluator), runner.share(slab)
    no_action_values = np.zeros(0, np.int64)  # a best-response walk adds none up
    draws, sums = [], []
    for player in (0, 1):
        entry_reach = evaluator.entry_reach(None, player, slab=slab)
        arguments = [(shared, shared_slab, player, BEST_RESPONSE, entry_reach, int(i), None, 0,
                      no_action_values) for i in walked]
        summed, value = np.zeros_like(entry_reach), {}
        for i, (values, _) in zip(walked.tolist(), runner.imap(run_item, arguments), strict=True):
            summed += values
            if sampled:  # the deal's values over its probability: an estimate of the whole sum
                estimate = values / probability[i]
                value[i] = evaluator.pre_deal_value(None, player, EXPECTED, estimate, slab=slab)
            if progress is not None:
                progress(1)
        draws.append(np.array([value[i] for i in drawn.tolist()]) if sampled else None)
        sums.append(summed)
    if sampled:
        values = tuple(Estimate.of(v, exact=False) for v in draws)
        return PostflopResponse(Estimate.of(draws[0] + draws[1], exact=False), values, walked.shape[0], None)
    restricted = [evaluator.pre_deal_value(None, p, EXPECTED, sums[p], slab=slab) for p in (0, 1)]
    responses = [evaluator.pre_deal_value(None, p, BEST_RESPONSE, sums[p], slab=slab) for p in (0, 1)]
    full = Evaluation.of(responses, float("nan"))
    every = len(evaluator.items)
    return PostflopResponse(Estimate(sum(restricted), 0.0, every, True),
                            tuple(Estimate(v, 0.0, every, True) for v in restricted), every, full)
