"""The best responses after the flop from sampled flops (``poker.streamed.sampled_flops``): exact
with every flop (the pre-flop response then the full best response's), unbiased over the draws,
lower bounds on NashConv; and the command line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.cli import main
from efgkit.errors import ParameterError
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.codes import BEST_RESPONSE, EXPECTED
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.sampled_flops import (
    deal_probabilities,
    draw_flops,
    postflop_response,
    respond_before_flop,
)
from efgkit.specs import make_game

GAMES = {
    "holdem(ranks=3,rounds=2)": lambda game: IsomorphicCards.canonical(game),
    "holdem(ranks=3,rounds=3,caps=1-1-1)": lambda game: IsomorphicCards.hashed(game, (2, 3, 3), seed=5),
    "leduc": LosslessCards,
}


def _evaluator(spec: str, seed: int):
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), GAMES[spec](game))
    return StreamedEvaluator(layout), layout.random(seed)


@pytest.mark.parametrize("spec", list(GAMES))
def test_every_flop_gives_the_exact_best_response_and_lower_bounds(spec):
    """With a lossless pre-flop (canonical hands, lossless cards) the pre-flop response is the best
    response's, so the responded bound is the exact NashConv; with pre-flop buckets it is at most it."""
    evaluator, strategy = _evaluator(spec, seed=3)
    exact = evaluator.evaluate(strategy, game_value=False)
    every = postflop_response(evaluator, strategy, None)
    assert every.full.best_response_values == pytest.approx(exact.best_response_values, abs=1e-12)
    assert every.own_preflop.exact and every.responded.exact
    assert every.own_preflop.mean <= every.responded.mean + 1e-12 <= exact.nash_conv + 2e-12
    if spec != "holdem(ranks=3,rounds=3,caps=1-1-1)":  # its pre-flop has 2 buckets
        assert every.responded.mean == pytest.approx(exact.nash_conv, abs=1e-12)
    assert every.distinct_flops == len(evaluator.items)


def test_the_pre_flop_response_is_pure_and_leaves_the_opponents_rows():
    evaluator, strategy = _evaluator("holdem(ranks=3,rounds=2)", seed=4)
    entry_values = np.random.default_rng(0).normal(size=evaluator.entry_reach(strategy, 0).shape)
    response = respond_before_flop(evaluator, strategy, 0, entry_values)
    layout, betting = evaluator.layout, evaluator.betting
    for d, node in enumerate(betting.decision_nodes.tolist()):
        rows = response[layout.action_start[d]:layout.action_start[d + 1]]
        if betting.level[node] == 0 and betting.kind[node] == 0:
            assert set(np.unique(rows)) <= {0.0, 1.0}
        else:
            assert np.array_equal(rows, strategy[layout.action_start[d]:layout.action_start[d + 1]])


@settings(max_examples=6, deadline=None)
@given(spec=st.sampled_from(list(GAMES)), seed=st.integers(0, 1000))
def test_the_estimate_is_unbiased_over_the_draws(spec, seed):
    """A draw of flop i (twice: a sample of one flop) estimates r_i; the r_i weighted by each
    flop class's probability sum to the exact restricted NashConv."""
    evaluator, strategy = _evaluator(spec, seed)
    exact = postflop_response(evaluator, strategy, None).own_preflop.mean
    probability = deal_probabilities(evaluator)
    assert probability.sum() == pytest.approx(1.0, abs=1e-15)
    items = range(len(evaluator.items))
    per_flop = [postflop_response(evaluator, strategy, np.array([i] * 4)) for i in items]
    assert all(r.own_preflop.standard_error == 0.0 and r.distinct_flops == 1 for r in per_flop)
    expectation = sum(p * r.own_preflop.mean for p, r in zip(probability, per_flop, strict=True))
    assert expectation == pytest.approx(exact, rel=1e-12, abs=1e-12)


def test_a_cross_fitted_response_is_evaluated_on_flops_it_was_not_chosen_on():
    """Draws (a, b, a, b): the halves are (a, a) and (b, b); the response chosen on flop a is
    evaluated on flop b and the other way round, never on its own flop."""
    evaluator, strategy = _evaluator("holdem(ranks=3,rounds=2)", seed=5)
    probability = deal_probabilities(evaluator)

    def scaled(player, item):
        reach = evaluator.entry_reach(strategy, player)
        return evaluator.item_values(strategy, player, BEST_RESPONSE, reach, item) / probability[item]

    for a, b in [(0, 1), (2, 7)]:
        crossed = postflop_response(evaluator, strategy, np.array([a, b, a, b])).responded
        expected = 0.0
        for player in (0, 1):
            on_a, on_b = scaled(player, a), scaled(player, b)
            for chosen_on, evaluated_on in ((on_a, on_b), (on_b, on_a)):
                response = respond_before_flop(evaluator, strategy, player, chosen_on)
                expected += evaluator.pre_deal_value(response, player, EXPECTED, evaluated_on)
        assert crossed.mean == pytest.approx(expected / 2, rel=1e-12, abs=1e-12)
        assert crossed.standard_error == 0.0


def test_draws_follow_the_flop_classes_sizes():
    evaluator, _ = _evaluator("holdem(ranks=3,rounds=2)", seed=0)
    draws = draw_flops(evaluator, 20_000, seed=7)
    frequency = np.bincount(draws, minlength=len(evaluator.items)) / draws.shape[0]
    assert np.abs(frequency - deal_probabilities(evaluator)).max() < 0.01
    assert np.array_equal(draws, draw_flops(evaluator, 20_000, seed=7))


def test_games_without_a_flop_and_single_draws_are_refused():
    evaluator, _ = _evaluator("leduc", seed=0)
    with pytest.raises(ParameterError, match="at least 4 flops"):
        draw_flops(evaluator, 3)
    game = make_game("kuhn")
    kuhn = StreamedEvaluator(BucketLayout(BettingTree(game), LosslessCards(game)))
    with pytest.raises(ParameterError, match="no board deal"):
        draw_flops(kuhn, 10)


GAME = "holdem(ranks=3,rounds=2)"


def test_the_command_line_gives_both_bounds_with_intervals(tmp_path, runner, json_output):
    out = tmp_path / "s.h5"
    assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "300",
                                "--out", str(out)]).exit_code == 0
    sampled = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--sample-flops", "400",
                                               "--seed", "3", "--json"]))
    everything = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--no-game-value", "--json"]))
    low, high = sampled["postflop_nash_conv_ci95"]
    assert low <= sampled["postflop_nash_conv"] <= high and low <= everything["nash_conv"]
    exact_mbb = make_game(GAME).mbb(everything["nash_conv"] / 2)
    assert sampled["postflop_exploitability_mbb_per_game"] == pytest.approx(
        make_game(GAME).mbb(sampled["postflop_nash_conv"] / 2))
    own_low, own_high = sampled["own_preflop_exploitability_ci95_mbb"]
    assert own_low <= sampled["own_preflop_exploitability_mbb_per_game"] <= own_high < exact_mbb
    assert sampled["sampled_flops"] == 400 and sampled["distinct_flops"] <= 20
    text = runner.invoke(main, ["evaluate", GAME, str(out), "--sample-flops", "5"])
    assert text.exit_code == 0 and "lower bound on exploitability" in text.output


@pytest.mark.parametrize("arguments, message", [
    (["--sample-flops", "3"], "x>=4"),
    (["--sample-flops", "5", "--abstract-game"], "walks every flop"),
    (["--sample-flops", "5", "--lbr", "10"], "--sample-flops"),
])
def test_bad_sample_requests_get_one_line(tmp_path, runner, arguments, message):
    out = tmp_path / "s.h5"
    assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "none", "-n", "5", "--out",
                                str(out)]).exit_code == 0
    result = runner.invoke(main, ["evaluate", GAME, str(out), *arguments])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
