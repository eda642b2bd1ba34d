"""Local best response (Lisý & Bowling 2017): a lower bound on exploitability, checked against
the exact best response of the streamed engine, and the numbers it must find in hold'em."""

from __future__ import annotations

import pytest

from efgkit.errors import ParameterError
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.local_best_response import LocalBestResponse
from efgkit.poker.streamed.match import baseline
from efgkit.specs import make_game

ALWAYS_CALL_HULHE_MBB = 1163.476
"""Always call's exact exploitability in heads-up limit hold'em (NashConv/2, mbb/g)."""


def _layout(spec: str, abstraction):
    game = make_game(spec)
    return BucketLayout(BettingTree(game), abstraction(game))


@pytest.mark.parametrize("spec, abstraction, seed", [
    ("leduc", LosslessCards, 1),
    ("leduc", LosslessCards, 2),
    ("holdem(ranks=4,rounds=2)", lambda game: IsomorphicCards.hashed(game, (6, 9), 3), 1),
    ("holdem(ranks=4,rounds=2)", IsomorphicCards.canonical, 2),
])
def test_lbr_on_every_board_is_at_most_the_exact_exploitability(spec, abstraction, seed):
    layout = _layout(spec, abstraction)
    strategy = layout.random(seed)
    exact = StreamedEvaluator(layout).evaluate(strategy, game_value=False)
    lbr = LocalBestResponse(layout, strategy, seed=seed)
    bound = lbr.run()
    assert bound.exact and bound.boards == lbr.dealer.num_boards and bound.standard_error == 0.0
    for seat in (0, 1):  # each seat's LBR is a strategy: never above that seat's best response
        assert lbr.seat_values_[seat].mean <= exact.best_response_values[seat] + 1e-9
    assert bound.mean <= exact.exploitability + 1e-9
    assert bound.mean >= 0.5 * exact.exploitability  # and close: random strategies are easy to exploit


@pytest.mark.parametrize("actions", ["c/fcr", "fc"])
def test_lbr_with_fewer_actions_is_still_a_lower_bound(actions):
    layout = _layout("holdem(ranks=4,rounds=2)", lambda game: IsomorphicCards.hashed(game, (6, 9), 3))
    strategy = layout.random(5)
    exact = StreamedEvaluator(layout).evaluate(strategy, game_value=False)
    full = LocalBestResponse(layout, strategy).run()
    fewer = LocalBestResponse(layout, strategy, actions=actions).run()
    assert fewer.mean <= exact.exploitability + 1e-9 and fewer.mean != full.mean


def test_lbr_calling_only_wins_250_mbb_from_always_fold_as_in_the_paper():
    layout, strategy = baseline(BettingTree(make_game("holdem")), "fold")
    bound = LocalBestResponse(layout, strategy, preflop_rollouts=100, actions="fc").run(2)
    assert bound.mean / 10 * 1000 == pytest.approx(250.0, abs=1e-9)  # Lisy & Bowling's FC/FC/FC/FC row


def test_lbr_finds_always_call_fully_in_leduc():
    layout, strategy = baseline(BettingTree(make_game("leduc")), "call")
    exact = StreamedEvaluator(layout).evaluate(strategy, game_value=False)
    assert LocalBestResponse(layout, strategy).run().mean == pytest.approx(exact.exploitability, abs=1e-12)


def test_lbr_wins_750_mbb_from_always_fold_in_hulhe():
    layout, strategy = baseline(BettingTree(make_game("holdem")), "fold")
    bound = LocalBestResponse(layout, strategy, preflop_rollouts=100, seed=3).run(2)
    assert bound.mean / 10 * 1000 == pytest.approx(750.0, abs=1e-9)  # raise as small blind, call as big
    assert bound.standard_error == pytest.approx(0.0, abs=1e-9)


def test_lbr_of_always_call_in_hulhe_is_close_below_the_exact_value():
    layout, strategy = baseline(BettingTree(make_game("holdem")), "call")
    lbr = LocalBestResponse(layout, strategy, rollouts=30, preflop_rollouts=300, seed=4)
    bound = lbr.run(12)
    low, high = (x / 10 * 1000 for x in bound.confidence_interval)
    assert low <= ALWAYS_CALL_HULHE_MBB and high >= 1000.0


def test_bad_lbr_parameters_are_refused():
    layout = _layout("leduc", LosslessCards)
    with pytest.raises(ParameterError, match="rollouts"):
        LocalBestResponse(layout, layout.uniform(), rollouts=0)
    with pytest.raises(ParameterError, match="at least 2 boards"):
        LocalBestResponse(layout, layout.uniform()).run(1)
    for actions in ("fcx", "c/c/c", ""):
        with pytest.raises(ParameterError, match="LBR actions"):
            LocalBestResponse(layout, layout.uniform(), actions=actions)
