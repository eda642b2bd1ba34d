"""CFR with public chance sampling on card abstractions: exact where nothing is sampled,
unbiased where boards are, converging in the full game (streamed best response)."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest

from efgkit.errors import ParameterError
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.bucket_layout import BucketLayout
from efgkit.poker.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.full_game import StreamedEvaluator
from efgkit.poker.layout import StrategyLayout
from efgkit.poker.public_tree import PublicTree
from efgkit.poker.sampled_cfr import SampledCFR, _walk_player
from efgkit.poker.vector_cfr import MODE_REGRETS, VectorCFR, reach_pass, value_pass
from efgkit.specs import make_game


@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)"])
@pytest.mark.parametrize("variant", ["cfr", "cfr+", "dcfr", "pcfr+", "pdcfr+"])
def test_without_boards_it_is_vector_cfr(spec, variant):
    """One-round games have no public chance: every iterate equals the vector engine's."""
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    public = PublicTree(game)
    sampled = SampledCFR(layout, variant=variant).iterate(30)
    full = VectorCFR(public, StrategyLayout.from_bucket_layout(public, layout), variant=variant).iterate(30)
    np.testing.assert_allclose(sampled.regrets, full.regrets, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sampled.average_accumulator, full.average_accumulator, rtol=0, atol=1e-12)


@pytest.mark.parametrize("spec", ["leduc", "holdem(ranks=3,rounds=2,caps=2-1)"])
def test_sampled_regrets_average_to_the_full_ones(spec):
    """Over every board sequence (each equally likely to be sampled) the mean of one
    iteration's regrets equals the full vector CFR's: public chance sampling is unbiased."""
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    solver = SampledCFR(layout, variant="cfr")
    solver._state.strategy[:] = np.random.default_rng(1).random(layout.num_actions) + 0.1
    solver._state.strategy[:] /= np.repeat(np.add.reduceat(solver._state.strategy, solver.action_offset[:-1]),
                                           np.diff(solver.action_offset))
    sizes = layout.betting.deal_size.tolist()
    mean = np.zeros(layout.num_actions)
    sequences = 0
    for cards in permutations(range(layout.betting.num_cards), sum(sizes)):
        deals, start = [], 0
        for size in sizes:
            deals.append(cards[start:start + size])
            start += size
        if any(list(deal) != sorted(deal) for deal in deals):
            continue  # one order per deal: the sampler sorts each deal's cards
        solver._state.instant[:] = 0.0
        _walk_player(solver._view, solver.board_of(cards), solver._walk, solver._state, 0, 0.0, solver._fixed)
        mean += solver._state.instant
        sequences += 1
    mean /= sequences
    public = PublicTree(game)
    full = VectorCFR(public, StrategyLayout.from_bucket_layout(public, layout), variant="cfr")
    full.strategy[:] = solver._state.strategy
    full._state.instant[:] = 0.0
    reach_pass(full._tree_view, full._layout_view, full.strategy, full._work.reach)
    value_pass(full._tree_view, full._layout_view, full.strategy, 0, MODE_REGRETS, full._work,
               full._state.instant)
    np.testing.assert_allclose(mean, full._state.instant, rtol=0, atol=1e-12)


def test_it_converges_in_the_full_game_and_is_reproducible():
    game = make_game("holdem(ranks=3,rounds=2)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))
    evaluator = StreamedEvaluator(layout)
    uniform = evaluator.evaluate(layout.uniform(), game_value=False).nash_conv
    first = SampledCFR(layout, seed=4).iterate(300)
    early = evaluator.evaluate(first.average_strategy(), game_value=False).nash_conv
    first.iterate(1200)
    late = evaluator.evaluate(first.average_strategy(), game_value=False).nash_conv
    assert late < early < uniform / 4
    again = SampledCFR(layout, seed=4).iterate(1500)
    assert np.array_equal(again.average_accumulator, first.average_accumulator)


def test_bad_parameters_are_refused():
    layout = BucketLayout(BettingTree(make_game("kuhn")), LosslessCards(make_game("kuhn")))
    with pytest.raises(ParameterError, match="alpha"):
        SampledCFR(layout, variant="cfr+", alpha=2.0)
    with pytest.raises(ParameterError, match="no parameter"):
        SampledCFR(layout, variant="cfr+", speed=2.0)
    with pytest.raises(ParameterError, match="iterations"):
        SampledCFR(layout).iterate(-1)

