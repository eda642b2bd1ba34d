"""Sampled CFR with a batch of boards per iteration (``sampled_batches``): the same state bit
for bit in this process and on Dask workers, resumable, the plain walk where no board is
dealt, and one clear refusal for what cannot run."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli.app import main
from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.streamed import sampled_batches
from efgkit.poker.streamed.sampled_batches import sampled_solver
from efgkit.poker.streamed.sampled_cfr import SampledCFR
from efgkit.specs import make_game

GAME = "holdem(ranks=3,rounds=2)"


@pytest.fixture(scope="module")
def canonical_layout():
    game = make_game(GAME)
    return BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))


@pytest.fixture(scope="module")
def two_workers():
    """A scheduler with two single-threaded workers in this process (what --scheduler reaches)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


def _states(solver: SampledCFR) -> dict[str, np.ndarray]:
    return {**solver.state_arrays(), "strategy": solver.current_strategy()}


@pytest.mark.parametrize("variant", ["cfr", "cfr+", "dcfr", "pcfr+"])
def test_two_boards_without_a_deal_are_the_plain_walk_twice(variant):
    """Kuhn deals no board: both boards of an iteration are the plain engine's walk, so the
    batch's regrets are exactly twice the plain run's and the strategy equal; the averages
    twice too, up to rounding (the plain run adds each contribution into the accumulator,
    the batch each group's sum)."""
    game = make_game("kuhn")
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    plain = SampledCFR(layout, variant=variant).iterate(40)
    batched = sampled_solver(layout, variant=variant, boards_per_iteration=2).iterate(40)
    assert np.array_equal(batched.regrets, 2 * plain.regrets)
    assert np.allclose(batched.average_accumulator, 2 * plain.average_accumulator, rtol=1e-13, atol=0)
    assert np.array_equal(batched.current_strategy(), plain.current_strategy())


@pytest.mark.parametrize("precision, variant, groups", [
    ("float64", "cfr+", None), ("float64", "dcfr", 2), ("float32", "pcfr+", None), ("int32", "cfr+", 2)])
def test_batches_are_bit_identical_here_and_on_two_workers(canonical_layout, two_workers, precision, variant,
                                                           groups):
    here = sampled_solver(canonical_layout, variant=variant, precision=precision, seed=5,
                          boards_per_iteration=4, board_groups=groups).iterate(12)
    with ChunkRunner(scheduler=two_workers) as runner:
        there = sampled_solver(canonical_layout, variant=variant, precision=precision, seed=5,
                               boards_per_iteration=4, board_groups=groups, runner=runner).iterate(12)
    for name, array in _states(here).items():
        assert np.array_equal(_states(there)[name], array), name
    plain = SampledCFR(canonical_layout, variant=variant, precision=precision, seed=5).iterate(12)
    assert not np.array_equal(plain.regrets, here.regrets)


def test_two_worker_processes_equal_this_process_and_resume_bit_identically(canonical_layout):
    """What --workers 2 runs (a LocalCluster of two processes, persistent walkers): stopped
    after 4 iterations and resumed by another solver for 5 more, the state is this process's
    uninterrupted 9 iterations bit for bit."""
    def solver(seed, runner=None):
        return sampled_solver(canonical_layout, variant="cfr+", seed=seed, boards_per_iteration=4,
                              board_groups=2, runner=runner)

    here = solver(4).iterate(9)
    with ChunkRunner(workers=2) as runner:
        first = solver(4, runner).iterate(4)
        arrays = {name: array.copy() for name, array in first.state_arrays().items()}
        second = solver(0, runner)
        second.load_state(SolverState(arrays, first.iteration, first.rng_state))
        second.iterate(5)
        for name, array in _states(here).items():
            assert np.array_equal(_states(second)[name], array), name


_HELD, _RELEASE = threading.Event(), threading.Event()


def _hold_a_worker() -> None:
    """Keep a worker of the in-process cluster busy until the test releases it."""
    _HELD.set()
    _RELEASE.wait(60)


def test_a_walker_that_never_starts_ends_the_run_with_a_clear_error(canonical_layout, two_workers,
                                                                     monkeypatch):
    """One of the two workers is busy, so the walker pinned to it never starts: a ParameterError
    within WALKER_START_SECONDS, not a hang, and the cluster runs the next solve once freed. (On
    a loaded machine the free worker's walker may miss the 0.5 s too: "2 of the 2".)"""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(sampled_batches, "WALKER_START_SECONDS", 0.5)
    _HELD.clear()
    _RELEASE.clear()
    with distributed.Client(two_workers) as client, ChunkRunner(scheduler=two_workers) as runner:
        second_worker = sorted(client.scheduler_info()["workers"])[1]
        busy = client.submit(_hold_a_worker, workers=[second_worker], pure=False)
        try:
            assert _HELD.wait(30)
            with pytest.raises(ParameterError, match="[12] of the 2 walkers .* did not start within 0.5 s"):
                sampled_solver(canonical_layout, seed=1, boards_per_iteration=2, runner=runner).iterate(3)
        finally:
            _RELEASE.set()
            busy.result()
        with pytest.raises(ParameterError, match="3 calls that wait on each other need as many Dask workers"):
            runner.start_apart(print, [(), (), ()])
        there = sampled_solver(canonical_layout, seed=1, boards_per_iteration=2, runner=runner).iterate(3)
    here = sampled_solver(canonical_layout, seed=1, boards_per_iteration=2).iterate(3)
    assert np.array_equal(there.regrets, here.regrets)


def test_a_walker_that_fails_ends_the_run_with_its_error(canonical_layout, two_workers, monkeypatch):
    """A walker's exception on its worker (here: every group walk fails) reaches the solver as
    itself, not as a wait for a DONE that never comes."""
    def fail(*arguments):
        raise ParameterError("this group cannot be walked")

    monkeypatch.setattr(sampled_batches, "walk_group", fail)  # the workers run in this process
    with ChunkRunner(scheduler=two_workers) as runner, pytest.raises(ParameterError, match="be walked"):
        sampled_solver(canonical_layout, seed=1, boards_per_iteration=2, runner=runner).iterate(2)


@pytest.mark.parametrize("groups", [None, 1, 3])
def test_a_stopped_batched_run_resumes_bit_identically(canonical_layout, groups):
    def solver(seed):
        return sampled_solver(canonical_layout, variant="cfr+", seed=seed, boards_per_iteration=3,
                          board_groups=groups)

    uninterrupted = solver(9).iterate(20)
    first = solver(9).iterate(7)
    arrays = {name: array.copy() for name, array in first.state_arrays().items()}
    second = solver(1)
    second.load_state(SolverState(arrays, first.iteration, first.rng_state))
    second.iterate(13)
    for name, array in _states(uninterrupted).items():
        assert np.array_equal(_states(second)[name], array), name


def test_the_groups_change_the_sums_not_the_boards(canonical_layout):
    """One group adds every board into one accumulator, three groups sum three: the same
    boards (the Generator advances alike), float sums in another order."""
    one = sampled_solver(canonical_layout, seed=2, boards_per_iteration=3, board_groups=1).iterate(10)
    three = sampled_solver(canonical_layout, seed=2, boards_per_iteration=3).iterate(10)
    assert one.rng_state == three.rng_state
    assert np.allclose(one.regrets, three.regrets, rtol=1e-9, atol=1e-12)


def test_bad_batches_are_refused(canonical_layout, two_workers):
    for given, message in (({"boards_per_iteration": 0}, "must be an integer >= 1"),
                           ({"boards_per_iteration": 2.5}, "must be an integer >= 1"),
                           ({"boards_per_iteration": 4, "board_groups": 3}, "must divide"),
                           ({"boards_per_iteration": 2, "board_groups": 0}, "must divide")):
        with pytest.raises(ParameterError, match=message):
            sampled_solver(canonical_layout, **given)
    with ChunkRunner(scheduler=two_workers) as runner:
        with pytest.raises(ParameterError, match="2 or more"):
            sampled_solver(canonical_layout, runner=runner)
        with pytest.raises(ParameterError, match="at most 16384 groups run on Dask"):
            sampled_solver(canonical_layout, boards_per_iteration=16385, runner=runner)


@pytest.mark.parametrize("arguments, message", [
    (["--workers", "2"], "--boards-per-iteration 2 or more"),
    (["--boards-per-iteration", "4", "--board-groups", "3"], "must divide"),
    (["--boards-per-iteration", "0"], "--boards-per-iteration"),
])
def test_the_command_line_refuses_bad_batches_in_one_line(arguments, message):
    result = CliRunner().invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical",
                                       "-n", "4", *arguments])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_the_command_line_runs_and_resumes_a_batched_solve(tmp_path):
    state = str(tmp_path / "state.h5")
    common = ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "--boards-per-iteration", "2",
              "--state", state, "--json"]
    first = CliRunner().invoke(main, [*common, "-n", "3"])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(main, [*common, "-n", "5", "--resume", "--boards-per-iteration", "4"])
    assert again.exit_code == 2 and "boards_per_iteration 2" in again.output
    resumed = CliRunner().invoke(main, [*common, "-n", "5", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert '"boards_per_iteration": 2' in resumed.output and '"iterations": 5' in resumed.output
