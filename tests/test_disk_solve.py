"""Solves with their arrays on disk: bit-identical to the in-memory solvers, checkpointed and
resumed like them, and dropping mapped pages keeps the resident set down without losing data."""

import json

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli import main
from efgkit.errors import FileFormatError, ParameterError
from efgkit.io.mapped_arrays import MappedFile, create_contiguous, create_file
from efgkit.io.sizes import size_in_bytes
from efgkit.solvers import (
    CFRPlusSolver,
    CFRSolver,
    DCFRPlusSolver,
    DCFRSolver,
    HSDCFRSolver,
    HSPCFRPlusSolver,
    LinearCFRSolver,
    PCFRPlusSolver,
    PDCFRPlusSolver,
)
from efgkit.specs import load_game
from efgkit.storage.checkpoint import resume, write_checkpoint
from efgkit.storage.disk_solve import DiskSolver, build_working_file, current_rss
from efgkit.storage.strategy_file import load_checkpoint

TINY_WINDOWS = 20_000  # bytes: dozens of windows on Leduc
NO_LIMIT = 1 << 40


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture(scope="module")
def working_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("work") / "leduc.work"
    build_working_file(load_game, "leduc", str(path))
    return path


@pytest.mark.parametrize("variant, solver_class, options", [
    ("cfr+", CFRPlusSolver, {"delay": 3}),
    ("dcfr", DCFRSolver, {"alpha": 1.2, "gamma": 3.0}),
    ("cfr", CFRSolver, {"alternating": False}),
    ("lcfr", LinearCFRSolver, {}),
    ("dcfr+", DCFRPlusSolver, {"alpha": 1.2}),
    ("pdcfr+", PDCFRPlusSolver, {}),
    ("hs-dcfr", HSDCFRSolver, {"horizon": 9}),
    ("hs-pcfr+", HSPCFRPlusSolver, {"horizon": 12, "gamma_start": 15.0}),
])
def test_disk_solver_is_bit_identical_to_the_in_memory_solver(leduc, working_file, variant,
                                                              solver_class, options):
    disk = DiskSolver(working_file, variant=variant, memory_limit=NO_LIMIT,
                      window_bytes=TINY_WINDOWS, **options)
    assert len(disk._node_windows) > 10 and all(len(w) > 1 for w in disk._infoset_windows)
    disk.iterate(9)
    memory = solver_class(leduc, **options).iterate(9)
    assert np.array_equal(disk.regrets, memory.regrets)
    assert np.array_equal(disk.average_accumulator, memory.average_accumulator)
    disk.close()


def test_disk_checkpoint_resumes_bit_identically_and_is_a_strategy_file(tmp_path, leduc,
                                                                        working_file):
    disk = DiskSolver(working_file, variant="cfr+", memory_limit=NO_LIMIT,
                      window_bytes=TINY_WINDOWS).iterate(6)
    write_checkpoint(tmp_path / "s.h5", disk, algorithm="cfr+", parameters={}, history=[])
    disk.close()
    memory = CFRPlusSolver(leduc).iterate(6)
    strategy, provenance, state = load_checkpoint(tmp_path / "s.h5", leduc)
    assert np.array_equal(strategy.probabilities, memory.average_strategy().probabilities)
    assert state.iteration == 6 and np.array_equal(state.arrays["regrets"], memory.regrets)

    resumed = DiskSolver(working_file, variant="cfr+", memory_limit=NO_LIMIT,
                         window_bytes=TINY_WINDOWS)
    resume(tmp_path / "s.h5", resumed, algorithm="cfr+", parameters={}, iterations=10)
    resumed.iterate(4)
    memory.iterate(4)
    assert np.array_equal(resumed.regrets, memory.regrets)
    assert np.array_equal(resumed.average_accumulator, memory.average_accumulator)
    resumed.close()


def test_disk_solver_refuses_a_checkpoint_of_another_game_or_a_damaged_one(tmp_path, working_file):
    write_checkpoint(tmp_path / "kuhn.h5", CFRPlusSolver(load_game("kuhn")).iterate(2),
                     algorithm="cfr+", parameters={}, history=[])
    disk = DiskSolver(working_file, variant="cfr+", memory_limit=NO_LIMIT)
    with pytest.raises(FileFormatError, match="for game 'kuhn'"):
        disk.restore(tmp_path / "kuhn.h5")
    write_checkpoint(tmp_path / "s.h5", disk.iterate(2), algorithm="cfr+", parameters={},
                     history=[])
    with h5py.File(tmp_path / "s.h5", "r+") as handle:
        handle["solver_state/average_accumulator"][5] += 1.0
    with pytest.raises(FileFormatError, match="corrupted"):
        disk.restore(tmp_path / "s.h5")
    disk.close()


def test_a_limit_below_the_arrays_read_at_random_is_a_clear_error(working_file):
    with pytest.raises(ParameterError, match="too small .* give at least"):
        DiskSolver(working_file, variant="cfr+", memory_limit=current_rss())


@pytest.mark.parametrize("text, size", [("1GiB", 2**30), ("512 MiB", 512 * 2**20),
                                        ("2GB", 2 * 10**9), ("1000", 1000), ("1.5KiB", 1536)])
def test_sizes_parse(text, size):
    assert size_in_bytes(text, "--memory-limit") == size


def test_a_bad_size_is_a_clear_error():
    with pytest.raises(ParameterError, match="expected a size"):
        size_in_bytes("lots", "--memory-limit")


def test_released_pages_leave_the_resident_set_and_keep_their_data(tmp_path):
    megabytes = 96
    path = tmp_path / "big.h5"
    with create_file(path) as handle:
        create_contiguous(handle, "data", (megabytes << 17,), "<f8")
    with h5py.File(path, "r") as handle, MappedFile(path, writable=True) as mapped:
        data = mapped.map(handle["data"])
        before = current_rss()
        for start in range(0, data.shape[0], 1 << 17):  # one MiB at a time, then dropped
            data[start:start + (1 << 17)] = start
            mapped.release()
            assert current_rss() - before < 16 << 20
        assert data[(megabytes - 1) << 17] == (megabytes - 1) << 17  # still there
        data[:] += 1.0
        assert current_rss() - before > (megabytes // 2) << 20  # touched, not dropped
        mapped.release()
        assert current_rss() - before < 16 << 20
        del data
    with h5py.File(path, "r") as handle:
        assert handle["data"][1 << 17] == (1 << 17) + 1.0


# ------------------------------------------------------------------------- command line
def _solve(runner, *arguments):
    result = runner.invoke(main, ["solve", "leduc", "--json", *arguments])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_solve_on_disk_resumes_to_the_in_memory_result(tmp_path):
    runner = CliRunner()
    first = _solve(runner, "-n", "12", "--state", str(tmp_path / "d.h5"), "--memory-limit",
                   "4GiB", "--checkpoint-every", "5")
    assert first["checkpoints_written"] == 3 and first["peak_rss_bytes"] <= 4 * 2**30
    assert first["compile_peak_rss_bytes"] > 0 and (tmp_path / "d.h5.work").exists()
    second = _solve(runner, "-n", "20", "--state", str(tmp_path / "d.h5"), "--memory-limit",
                    "4GiB", "--resume")
    assert second["resumed_from_iteration"] == 12 and second["compile_peak_rss_bytes"] is None
    _solve(runner, "-n", "20", "-k", "20", "--state", str(tmp_path / "m.h5"))
    with h5py.File(tmp_path / "d.h5", "r") as disk, h5py.File(tmp_path / "m.h5", "r") as memory:
        for name in ("solver_state/regrets", "solver_state/average_accumulator",
                     "strategy/probabilities"):
            assert np.array_equal(disk[name][()], memory[name][()]), name


@pytest.mark.parametrize("arguments, message", [
    (["--memory-limit", "1GiB"], "needs --state"),
    (["--state", "{tmp}/s.h5", "--memory-limit", "1GiB", "--out", "{tmp}/o.h5"],
     "--out goes with --engine tree|public-tree|sampled, not --engine disk"),
    (["--state", "{tmp}/s.h5", "--memory-limit", "1GiB", "-k", "5"], "--every goes with"),
    (["--state", "{tmp}/s.h5", "--memory-limit", "lots"], "expected a size"),
])
def test_cli_refuses_what_a_solve_on_disk_cannot_do(tmp_path, arguments, message):
    arguments = [a.replace("{tmp}", str(tmp_path)) for a in arguments]
    result = CliRunner().invoke(main, ["solve", "leduc", *arguments])
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_a_damaged_working_file_is_rebuilt_not_trusted(tmp_path):
    runner = CliRunner()
    state = tmp_path / "d.h5"
    _solve(runner, "-n", "10", "--state", str(state), "--memory-limit", "4GiB")
    work = tmp_path / "d.h5.work"
    with h5py.File(work, "r+") as handle:
        handle["internal/first_child"][3] = 10**9  # would send the kernels out of bounds
    resumed = _solve(runner, "-n", "20", "--state", str(state), "--memory-limit", "4GiB", "--resume")
    assert resumed["compile_peak_rss_bytes"] is not None  # compiled again
    _solve(runner, "-n", "20", "-k", "20", "--state", str(tmp_path / "m.h5"))
    with h5py.File(state, "r") as disk, h5py.File(tmp_path / "m.h5", "r") as memory:
        assert np.array_equal(disk["solver_state/regrets"][()], memory["solver_state/regrets"][()])


def test_a_predictive_disk_checkpoint_resumes_bit_identically(tmp_path, leduc, working_file):
    disk = DiskSolver(working_file, variant="pcfr+", memory_limit=NO_LIMIT,
                      window_bytes=TINY_WINDOWS).iterate(5)
    write_checkpoint(tmp_path / "p.h5", disk, algorithm="pcfr+", parameters={}, history=[])
    disk.close()
    resumed = DiskSolver(working_file, variant="pcfr+", memory_limit=NO_LIMIT, window_bytes=TINY_WINDOWS)
    resume(tmp_path / "p.h5", resumed, algorithm="pcfr+", parameters={}, iterations=9)
    resumed.iterate(4)
    memory = PCFRPlusSolver(leduc).iterate(9)
    assert np.array_equal(resumed.regrets, memory.regrets)
    assert np.array_equal(resumed.average_accumulator, memory.average_accumulator)
    resumed.close()
