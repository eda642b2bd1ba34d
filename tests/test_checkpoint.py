"""Checkpoints: resuming is bit-identical to an uninterrupted run, and a kill at any moment,
also in the middle of writing a checkpoint, leaves the previous good checkpoint in use."""

import json
import os
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli import main
from efgkit.errors import FileFormatError, ParameterError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import CFRPlusSolver, CFRSolver, DCFRSolver
from efgkit.specs import load_game
from efgkit.storage.checkpoint import Checkpoints, resume, write_checkpoint
from efgkit.storage.strategy_file import load_checkpoint, load_strategy, save_strategy

SOLVERS = {"cfr": CFRSolver, "cfr+": CFRPlusSolver, "dcfr": DCFRSolver}


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture
def runner():
    return CliRunner()


def _state_arrays(path):
    with h5py.File(path, "r") as handle:
        return {name: handle[name][()] for name in
                ("solver_state/regrets", "solver_state/average_accumulator",
                 "strategy/probabilities")}


def _assert_same_state(path_a, path_b):
    a, b = _state_arrays(path_a), _state_arrays(path_b)
    for name in a:
        assert np.array_equal(a[name], b[name]), name


@pytest.mark.parametrize("algorithm", sorted(SOLVERS))
def test_resumed_solver_is_bit_identical_to_an_uninterrupted_one(tmp_path, leduc, algorithm):
    solver_class = SOLVERS[algorithm]
    uninterrupted = solver_class(leduc).iterate(37)
    first = solver_class(leduc).iterate(15)
    write_checkpoint(tmp_path / "c.h5", first, algorithm=algorithm, parameters={}, history=[])
    second = solver_class(leduc)
    resume(tmp_path / "c.h5", second, algorithm=algorithm, parameters={}, iterations=37)
    assert second.iteration == 15
    second.iterate(22)
    assert np.array_equal(second.regrets, uninterrupted.regrets)
    assert np.array_equal(second.average_accumulator, uninterrupted.average_accumulator)
    assert np.array_equal(second.current_strategy().probabilities,
                          uninterrupted.current_strategy().probabilities)
    assert np.array_equal(second.average_strategy().probabilities,
                          uninterrupted.average_strategy().probabilities)


def test_checkpoint_is_also_a_strategy_file(tmp_path, leduc):
    solver = CFRPlusSolver(leduc).iterate(10)
    write_checkpoint(tmp_path / "c.h5", solver, algorithm="cfr+", parameters={"delay": 0},
                     history=[{"iteration": 10, "nash_conv": 0.5}])
    strategy, provenance = load_strategy(tmp_path / "c.h5", leduc)
    assert np.array_equal(strategy.probabilities, solver.average_strategy().probabilities)
    assert provenance["iterations"] == 10 and provenance["nash_conv_history"] == [(10, 0.5)]
    _, _, state = load_checkpoint(tmp_path / "c.h5", leduc)
    assert state.iteration == 10 and state.rng_state is None


def test_schedule_checkpoints_every_k_iterations_and_every_s_seconds(tmp_path, leduc):
    now = [0.0]
    checkpoints = Checkpoints(tmp_path / "c.h5", algorithm="cfr+", parameters={}, every=4,
                              seconds=10.0, clock=lambda: now[0])
    solver = CFRPlusSolver(leduc)
    assert checkpoints.next_stop(0) == 4 and checkpoints.next_stop(4) == 8
    solver.iterate(3)
    checkpoints.after_chunk(solver, [])
    assert checkpoints.written == 0
    solver.iterate(1)
    checkpoints.after_chunk(solver, [])
    assert checkpoints.written == 1
    solver.iterate(1)
    now[0] = 10.5
    checkpoints.after_chunk(solver, [])
    assert checkpoints.written == 2 and load_checkpoint(tmp_path / "c.h5", leduc)[2].iteration == 5


def test_resume_refuses_a_mismatched_checkpoint(tmp_path, leduc):
    path = tmp_path / "c.h5"
    write_checkpoint(path, CFRPlusSolver(leduc).iterate(5), algorithm="cfr+",
                     parameters={"delay": 0}, history=[])
    with pytest.raises(ParameterError, match="made by cfr\\+"):
        resume(path, CFRSolver(leduc), algorithm="cfr", parameters={"delay": 0}, iterations=10)
    with pytest.raises(ParameterError, match="parameters"):
        resume(path, CFRPlusSolver(leduc), algorithm="cfr+", parameters={"delay": 3}, iterations=10)
    with pytest.raises(ParameterError, match="beyond"):
        resume(path, CFRPlusSolver(leduc), algorithm="cfr+", parameters={"delay": 0}, iterations=4)
    with pytest.raises(FileFormatError, match="another abstraction"):
        resume(path, CFRPlusSolver(InfosetMap.coarsest(leduc)), algorithm="cfr+",
               parameters={"delay": 0}, iterations=10)
    with pytest.raises(FileFormatError, match="for game 'leduc'"):
        resume(path, CFRPlusSolver(load_game("kuhn")), algorithm="cfr+",
               parameters={"delay": 0}, iterations=10)
    plain = tmp_path / "plain.h5"
    save_strategy(plain, CFRPlusSolver(leduc).average_strategy(), provenance={"algorithm": "cfr+"})
    with pytest.raises(FileFormatError, match="no solver state"):
        resume(plain, CFRPlusSolver(leduc), algorithm="cfr+", parameters={}, iterations=10)


def test_resume_refuses_a_corrupted_checkpoint_and_leaves_it(tmp_path, leduc):
    path = tmp_path / "c.h5"
    write_checkpoint(path, CFRPlusSolver(leduc).iterate(5), algorithm="cfr+", parameters={},
                     history=[])
    with h5py.File(path, "r+") as handle:
        handle["solver_state/regrets"][3] += 1.0
    before = path.read_bytes()
    with pytest.raises(FileFormatError, match="corrupted .*regrets"):
        resume(path, CFRPlusSolver(leduc), algorithm="cfr+", parameters={}, iterations=10)
    assert path.read_bytes() == before


# ------------------------------------------------------------------------- command line
def _solve(runner, *arguments):
    result = runner.invoke(main, ["solve", "leduc", "-k", "20", "--json", *arguments])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_cli_resume_reaches_the_uninterrupted_result(runner, tmp_path):
    full = _solve(runner, "-n", "60", "--state", str(tmp_path / "full.h5"))
    _solve(runner, "-n", "30", "--state", str(tmp_path / "part.h5"), "--checkpoint-every", "10")
    resumed = _solve(runner, "-n", "60", "--state", str(tmp_path / "part.h5"), "--resume")
    assert resumed["resumed_from_iteration"] == 30
    assert resumed["nash_conv"] == full["nash_conv"]
    _assert_same_state(tmp_path / "full.h5", tmp_path / "part.h5")


@pytest.mark.parametrize("arguments, message", [
    (["--checkpoint-every", "5"], "needs --state"),
    (["--resume"], "needs --state"),
    (["-a", "lp", "--state", "{tmp}/s.h5"], "applies to cfr"),
    (["-a", "fp", "--state", "{tmp}/s.h5"], "applies to cfr"),
])
def test_cli_refuses_checkpoint_options_that_cannot_apply(runner, tmp_path, arguments, message):
    arguments = [a.replace("{tmp}", str(tmp_path)) for a in arguments]
    result = runner.invoke(main, ["solve", "kuhn", *arguments])
    assert result.exit_code == 2 and message in result.stderr


def test_cli_never_overwrites_a_checkpoint_without_resume(runner, tmp_path):
    _solve(runner, "-n", "20", "--state", str(tmp_path / "s.h5"))
    before = (tmp_path / "s.h5").read_bytes()
    result = runner.invoke(main, ["solve", "leduc", "-n", "20", "--state", str(tmp_path / "s.h5")])
    assert result.exit_code == 2 and "--resume" in result.stderr
    assert (tmp_path / "s.h5").read_bytes() == before


# ------------------------------------------------------------------------- kills
KILL_DURING_WRITE = """
import sys, time
from efgkit.storage import strategy_file
original = strategy_file._write_array
written = []
def write_then_hang(group, name, array, dtype, after_slice=None):
    original(group, name, array, dtype, after_slice)
    if name == "regrets":
        written.append(name)
        if len(written) == 3:  # the third checkpoint is half written
            open(sys.argv[2], "w").close()
            time.sleep(600)
strategy_file._write_array = write_then_hang
from efgkit.cli import main
main(["solve", "leduc", "-n", "80", "-k", "20", "--state", sys.argv[1], "--checkpoint-every", "20"])
"""


def _wait_for(path, process, seconds=120):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_sigkill_while_writing_a_checkpoint_keeps_the_previous_one(runner, tmp_path, leduc):
    state, marker = tmp_path / "s.h5", tmp_path / "writing"
    process = subprocess.Popen([sys.executable, "-c", KILL_DURING_WRITE, str(state), str(marker)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_for(marker, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) == 1  # the half-written checkpoint, never in place of the good one
    assert load_checkpoint(state, leduc)[2].iteration == 40

    resumed = _solve(runner, "-n", "80", "--state", str(state), "--resume")
    assert resumed["resumed_from_iteration"] == 40
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    _solve(runner, "-n", "80", "--state", str(tmp_path / "full.h5"))
    _assert_same_state(state, tmp_path / "full.h5")


def test_sigkill_at_random_moments_always_leaves_a_loadable_checkpoint(tmp_path, leduc):
    state = tmp_path / "s.h5"
    rng = np.random.default_rng(7)
    command = [sys.executable, "-c", "from efgkit.cli import main; main()", "solve", "leduc",
               "-n", "100000000", "-k", "100000000", "--state", str(state), "--checkpoint-every", "1"]
    iterations = []
    for attempt in range(3):
        process = subprocess.Popen(command + (["--resume"] if attempt else []),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not attempt:
            _wait_for(state, process)
        time.sleep(1.0 + rng.uniform(0.0, 1.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        iterations.append(load_checkpoint(state, leduc)[2].iteration)
    assert iterations[0] > 0 and iterations == sorted(iterations)
