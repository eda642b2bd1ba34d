"""The engine core: one solver state, one run loop, one evaluation type, two protocols that
every engine's solvers and evaluators implement."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli import main
from efgkit.core.evaluation import Evaluation, Evaluator, Solver
from efgkit.core.run_loop import CheckpointSchedule, run_iterations
from efgkit.core.solver_state import SolverState
from efgkit.errors import FileFormatError, ParameterError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.named_abstractions import abstraction_named
from efgkit.poker.materialised.solver import PublicTreeBestResponse, PublicTreeCFR
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.sampled_cfr import SampledCFR
from efgkit.solvers import BestResponse, CFRPlusSolver, PCFRPlusSolver
from efgkit.specs import load_game, make_game

HOLDEM = "holdem(ranks=3,rounds=2)"


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn")


@pytest.fixture(scope="module")
def bucket_layout():
    game = make_game(HOLDEM)
    return BucketLayout(BettingTree(game), abstraction_named(game, "canonical"))


def test_a_state_that_is_not_the_solvers_is_refused_with_one_reason(kuhn):
    solver = PCFRPlusSolver(kuhn).iterate(3)
    good = {name: array.copy() for name, array in solver.state_arrays().items()}
    cases = [
        ({k: v for k, v in good.items() if k != "prediction"}, 3, "this solver needs"),
        ({**good, "regrets": good["regrets"][:-1]}, 3, "expected float64"),
        ({**good, "regrets": good["regrets"].astype(np.float32)}, 3, "expected float64"),
        ({**good, "average_accumulator": np.full_like(good["regrets"], np.nan)}, 3, "not finite"),
        (good, -1, "invalid iteration"),
        (good, True, "invalid iteration"),
    ]
    for arrays, iteration, message in cases:
        with pytest.raises(FileFormatError, match=message):
            PCFRPlusSolver(kuhn).load_state(SolverState(arrays, iteration))


def test_every_in_memory_solver_resumes_from_its_state_bit_identically(kuhn, bucket_layout):
    makers = [lambda: CFRPlusSolver(kuhn), lambda: PCFRPlusSolver(kuhn),
              lambda: PublicTreeCFR(InfosetMap.identity(kuhn), variant="pdcfr+"),
              lambda: SampledCFR(bucket_layout, seed=3, precision="int32")]
    for make in makers:
        straight, first, resumed = make().iterate(12), make().iterate(5), make()
        assert isinstance(straight, Solver)
        state = first.state()
        resumed.load_state(SolverState({k: np.array(v) for k, v in state.arrays.items()}, state.iteration,
                                       state.rng_state))
        resumed.iterate(7)
        for name, array in straight.state().arrays.items():
            assert np.array_equal(resumed.state().arrays[name], array), (type(straight).__name__, name)


def test_the_run_loop_is_the_solvers_iterates_whatever_it_evaluates_and_checkpoints(kuhn):
    straight = CFRPlusSolver(kuhn).iterate(37)
    looped, evaluated, saved = CFRPlusSolver(kuhn), [], []

    class Schedule(CheckpointSchedule):
        def save(self, solver, history):
            saved.append(solver.iteration)

    end = run_iterations(looped, 37, every=10, evaluate=lambda: evaluated.append(looped.iteration),
                         checkpoints=Schedule(every=8))
    assert end == (37, False) and evaluated == [10, 20, 30, 37] and saved == [8, 16, 24, 32]
    assert np.array_equal(looped.regrets, straight.regrets)
    assert np.array_equal(looped.average_accumulator, straight.average_accumulator)


def test_a_time_budget_stops_the_run_and_evaluates_where_it_stopped(kuhn):
    now = [0.0]
    solver, evaluated = CFRPlusSolver(kuhn), []

    class Ticking:
        """A solver whose every chunk takes one second of the fake clock."""

        iteration = 0

        def iterate(self, n):
            solver.iterate(n)
            self.iteration = solver.iteration
            now[0] += 1.0

    ticking = Ticking()
    end = run_iterations(ticking, 1000, every=500, evaluate=lambda: evaluated.append(ticking.iteration),
                         time_limit=3.5, clock=lambda: now[0])
    # the budget starts after the first chunk (a first run's compilation): chunks of 2, 4, 8
    # and 16 iterations follow, the last ending past 1 + 3.5 s
    assert end.out_of_time and end.iteration == 1 + 2 + 4 + 8 + 16 and evaluated == [31]
    with pytest.raises(ParameterError, match="time budget"):
        run_iterations(ticking, 10, time_limit=0.0)


def test_every_engine_evaluates_into_one_evaluation(kuhn, bucket_layout):
    identity = InfosetMap.identity(kuhn)
    strategy = CFRPlusSolver(kuhn).iterate(50).average_strategy()
    tree, public = BestResponse(identity), PublicTreeBestResponse(identity)
    results = [tree.evaluate(strategy), public.evaluate(strategy)]
    assert all(isinstance(e, Evaluator) for e in (tree, public, StreamedEvaluator(bucket_layout)))
    assert all(isinstance(result, Evaluation) for result in results)
    np.testing.assert_allclose(results[0].best_response_values, results[1].best_response_values, atol=1e-12)
    sampled = SampledCFR(bucket_layout).iterate(20).average_strategy()
    streamed = StreamedEvaluator(bucket_layout).evaluate(sampled)
    assert isinstance(streamed, Evaluation) and streamed.game == "full" and streamed.exact
    assert streamed.nash_conv == sum(streamed.best_response_values) > 0
    half = Evaluation.of((0.25, 0.5), float("nan"))
    assert half.exploitability == 0.375 and np.isnan(half.to_dict()["game_value"])


def test_solve_time_budget_stops_early_and_says_so():
    result = CliRunner().invoke(main, ["solve", "leduc", "-n", "100000000", "--time", "0.5", "--json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["stopped_by_time"]
    assert 100 < data["iterations"] < 100000000 and data["history"][-1]["iteration"] == data["iterations"]


def test_ctrl_c_during_a_sampled_solve_keeps_the_strategy_reached(tmp_path, monkeypatch):
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    original = SampledCFR.iterate

    def interrupted(self, iterations=1):
        if self.iteration >= 30:
            raise KeyboardInterrupt
        return original(self, min(iterations, 30 - self.iteration))

    monkeypatch.setattr(SampledCFR, "iterate", interrupted)
    out = tmp_path / "s.h5"
    result = CliRunner().invoke(main, ["solve", HOLDEM, "--engine", "sampled", "--buckets", "canonical",
                                       "-n", "1000", "--out", str(out)])
    assert result.exit_code == 130 and result.stderr.count("interrupted") == 1
    assert "interrupted at iteration 30; the average strategy so far is in" in result.stderr
    _, _, provenance, _ = load_bucket_strategy(out, make_game(HOLDEM))
    assert provenance["iterations"] == 30
