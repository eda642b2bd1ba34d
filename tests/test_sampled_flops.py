"""The best response after the flop from sampled flops (``poker.streamed.sampled_flops``): exact
with every flop, unbiased over the draws, a lower bound on NashConv; and its command line."""

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
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.sampled_flops import deal_probabilities, draw_flops, postflop_response
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
def test_every_flop_gives_the_exact_best_response_and_a_lower_bound(spec):
    evaluator, strategy = _evaluator(spec, seed=3)
    exact = evaluator.evaluate(strategy, game_value=False)
    every = postflop_response(evaluator, strategy, None)
    assert every.full.best_response_values == pytest.approx(exact.best_response_values, abs=1e-12)
    for restricted, best in zip(every.values, exact.best_response_values, strict=True):
        assert restricted.exact and restricted.mean <= best + 1e-12
    assert every.nash_conv.mean == pytest.approx(sum(v.mean for v in every.values), abs=1e-12)
    assert every.distinct_flops == len(evaluator.items)


@settings(max_examples=6, deadline=None)
@given(spec=st.sampled_from(list(GAMES)), seed=st.integers(0, 1000))
def test_the_estimate_is_unbiased_over_the_draws(spec, seed):
    """A draw of flop i (twice: a sample of one flop) estimates r_i; the r_i weighted by each
    flop class's probability sum to the exact restricted NashConv."""
    evaluator, strategy = _evaluator(spec, seed)
    exact = postflop_response(evaluator, strategy, None).nash_conv.mean
    probability = deal_probabilities(evaluator)
    assert probability.sum() == pytest.approx(1.0, abs=1e-15)
    per_flop = [postflop_response(evaluator, strategy, np.array([i, i])) for i in range(len(evaluator.items))]
    assert all(r.nash_conv.standard_error == 0.0 and r.distinct_flops == 1 for r in per_flop)
    expectation = sum(p * r.nash_conv.mean for p, r in zip(probability, per_flop, strict=True))
    assert expectation == pytest.approx(exact, rel=1e-12, abs=1e-12)


def test_draws_follow_the_flop_classes_sizes():
    evaluator, _ = _evaluator("holdem(ranks=3,rounds=2)", seed=0)
    draws = draw_flops(evaluator, 20_000, seed=7)
    frequency = np.bincount(draws, minlength=len(evaluator.items)) / draws.shape[0]
    assert np.abs(frequency - deal_probabilities(evaluator)).max() < 0.01
    assert np.array_equal(draws, draw_flops(evaluator, 20_000, seed=7))


def test_games_without_a_flop_and_single_draws_are_refused():
    evaluator, _ = _evaluator("leduc", seed=0)
    with pytest.raises(ParameterError, match="at least 2 flops"):
        draw_flops(evaluator, 1)
    game = make_game("kuhn")
    kuhn = StreamedEvaluator(BucketLayout(BettingTree(game), LosslessCards(game)))
    with pytest.raises(ParameterError, match="no board deal"):
        draw_flops(kuhn, 10)


GAME = "holdem(ranks=3,rounds=2)"


def test_the_command_line_estimate_brackets_the_exact_restricted_value(tmp_path, runner, json_output):
    out = tmp_path / "s.h5"
    assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "300",
                                "--out", str(out)]).exit_code == 0
    sampled = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--sample-flops", "400",
                                               "--seed", "3", "--json"]))
    everything = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--no-game-value", "--json"]))
    low, high = sampled["postflop_nash_conv_ci95"]
    assert low <= sampled["postflop_nash_conv"] <= high <= everything["nash_conv"]
    assert sampled["postflop_exploitability_mbb_per_game"] == pytest.approx(
        make_game(GAME).mbb(sampled["postflop_nash_conv"] / 2))
    assert sampled["sampled_flops"] == 400 and sampled["distinct_flops"] <= 20
    text = runner.invoke(main, ["evaluate", GAME, str(out), "--sample-flops", "5"])
    assert text.exit_code == 0 and "lower bound on exploitability" in text.output


@pytest.mark.parametrize("arguments, message", [
    (["--sample-flops", "1"], "x>=2"),
    (["--sample-flops", "5", "--abstract-game"], "walks every flop"),
    (["--sample-flops", "5", "--lbr", "10"], "--sample-flops"),
    (["--seed", "3"], "draws nothing"),
])
def test_bad_sample_requests_get_one_line(tmp_path, runner, arguments, message):
    out = tmp_path / "s.h5"
    assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "none", "-n", "5", "--out",
                                str(out)]).exit_code == 0
    result = runner.invoke(main, ["evaluate", GAME, str(out), *arguments])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
