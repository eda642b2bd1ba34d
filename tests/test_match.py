"""Head-to-head duplicate matches between bucket strategies: exact against the streamed
engine's expected value, zero against oneself, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from efgkit.errors import ParameterError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.codes import EXPECTED
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.match import BASELINES, HeadToHead, baseline
from efgkit.specs import make_game


def _seated(layout: BucketLayout, seat0: np.ndarray, seat1: np.ndarray) -> np.ndarray:
    """One strategy array: player 0's rows from ``seat0``, player 1's from ``seat1``."""
    betting = layout.betting
    out = seat0.copy()
    for d, node in enumerate(betting.decision_nodes.tolist()):
        if betting.kind[node] == 1:
            rows = slice(layout.action_start[d], layout.action_start[d + 1])
            out[rows] = seat1[rows]
    return out


@pytest.mark.parametrize("spec, abstraction", [
    ("leduc", LosslessCards),
    ("holdem(ranks=4,rounds=2)", lambda game: IsomorphicCards.hashed(game, (5, 7), 1)),
])
def test_a_match_on_every_board_is_the_exact_expected_value(spec, abstraction):
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), abstraction(game))
    a, b = layout.random(1), layout.random(2)
    evaluator, runner = StreamedEvaluator(layout), ChunkRunner()
    expected = (evaluator.value(_seated(layout, a, b), 0, EXPECTED, runner)
                - evaluator.value(_seated(layout, b, a), 0, EXPECTED, runner)) / 2
    assert HeadToHead(layout, a, layout, b).run().mean == pytest.approx(expected, abs=1e-12)


def test_a_strategy_against_itself_scores_exactly_zero():
    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (4, 5, 5, 5), 2))
    strategy = layout.random(7)
    result = HeadToHead(layout, strategy, layout, strategy, seed=3).run(4)
    assert result.mean == 0.0 and result.standard_error == 0.0


def test_strategies_on_different_abstractions_play_each_other():
    game = make_game("holdem(ranks=4,rounds=2)")
    betting = BettingTree(game)
    buckets = BucketLayout(betting, IsomorphicCards.hashed(game, (5, 7), 1))
    strategy = buckets.random(3)
    for name in BASELINES:
        other_layout, other = baseline(betting, name)
        forward = HeadToHead(buckets, strategy, other_layout, other).run()
        backward = HeadToHead(other_layout, other, buckets, strategy).run()
        assert forward.mean == pytest.approx(-backward.mean, abs=1e-12)
    call_layout, call = baseline(betting, "call")
    fold_layout, fold = baseline(betting, "fold")
    # always fold gives up its blind whenever it faces a bet: as big blind (player 0) it
    # checks the small blind's call down to a tie-or-showdown, as small blind it folds
    assert HeadToHead(fold_layout, fold, call_layout, call).run().mean == pytest.approx(-5 / 2, abs=1e-12)


def test_bad_matches_are_refused():
    betting = BettingTree(make_game("leduc"))
    with pytest.raises(ParameterError, match="unknown baseline"):
        baseline(betting, "bluff")
    leduc, strategy = baseline(betting, "call")
    other, other_strategy = baseline(BettingTree(make_game("holdem(ranks=3,rounds=2)")), "call")
    with pytest.raises(ParameterError, match="one game"):
        HeadToHead(leduc, strategy, other, other_strategy)
    with pytest.raises(ParameterError, match="at least 2 boards"):
        HeadToHead(leduc, strategy, leduc, strategy).run(1)
