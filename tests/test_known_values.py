"""Known game values and convergence on Kuhn and Leduc (OpenSpiel's and the papers' numbers)."""

import numpy as np
import pytest

from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import (
    BestResponse,
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    FictitiousPlay,
    SequenceFormLP,
    Strategy,
    evaluate,
)
from efgkit.specs import load_game

KUHN_VALUE = -1.0 / 18.0
LEDUC_VALUE = -0.085606424078


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn")


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


def test_lp_gives_kuhn_value(kuhn):
    solution = SequenceFormLP(kuhn).solve()
    assert solution.game_value == pytest.approx(KUHN_VALUE, abs=1e-9)
    assert evaluate(solution.strategy).nash_conv < 1e-9


def test_lp_gives_leduc_value(leduc):
    solution = SequenceFormLP(leduc).solve()
    assert solution.game_value == pytest.approx(LEDUC_VALUE, abs=1e-9)
    result = evaluate(solution.strategy)
    assert result.nash_conv < 1e-8
    assert result.game_value == pytest.approx(LEDUC_VALUE, abs=1e-8)


def test_uniform_kuhn_nash_conv_matches_openspiel(kuhn):
    # OpenSpiel's exploitability of the uniform Kuhn policy is 0.458333...
    result = evaluate(Strategy.uniform(InfosetMap.identity(kuhn)))
    assert result.exploitability == pytest.approx(0.4583333333333333, abs=1e-12)


def test_cfr_plus_reaches_kuhn_value(kuhn):
    result = evaluate(CFRPlusSolver(kuhn).iterate(200).average_strategy())
    assert result.game_value == pytest.approx(KUHN_VALUE, abs=1e-3)
    assert result.exploitability < 1e-3


def test_cfr_plus_leduc_nash_conv_below_1e3_within_1000_iterations(leduc):
    solver = CFRPlusSolver(leduc)
    responder = BestResponse(solver.infoset_map)
    reached = None
    for block in range(10):
        solver.iterate(100)
        result = responder.evaluate(solver.average_strategy())
        if result.nash_conv < 1e-3:
            reached = (block + 1) * 100
            break
    assert reached is not None, f"NashConv after 1000 iterations: {result.nash_conv}"
    assert result.game_value == pytest.approx(LEDUC_VALUE, abs=1e-3)


def test_cfr_dcfr_and_fictitious_play_converge_on_leduc(leduc):
    for solver, iterations, bound in ((CFRSolver(leduc), 300, 0.2),
                                      (DCFRSolver(leduc), 300, 0.01),
                                      (FictitiousPlay(leduc), 200, 0.3)):
        result = evaluate(solver.iterate(iterations).average_strategy())
        assert result.nash_conv < bound, type(solver).__name__


def test_cfr_plus_with_delay_ignores_early_iterations(kuhn):
    delayed = CFRPlusSolver(kuhn, delay=100).iterate(100)
    assert np.all(delayed.average_accumulator == 0)
    delayed.iterate(300)
    assert evaluate(delayed.average_strategy()).exploitability < 5e-3


def test_solvers_run_on_the_coarsest_abstraction_and_evaluate_in_the_full_game(leduc):
    coarse = InfosetMap.coarsest(leduc)
    assert coarse.num_abstract < leduc.num_infosets
    strategy = CFRPlusSolver(coarse).iterate(100).average_strategy()
    abstract = evaluate(strategy)
    expanded = evaluate(Strategy.from_behavior(leduc, strategy.behavior()))
    assert abstract.nash_conv == pytest.approx(expanded.nash_conv, abs=1e-12)
    assert abstract.nash_conv > 0.1  # the coarsest abstraction cannot express the equilibrium
