"""Outputs: never a non-regular target, names checked before the work, stale temporaries cleaned,
non-finite checkpoints refused."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from efgkit.cli import main
from efgkit.errors import FileFormatError
from efgkit.io.atomic import atomic_output_path, output_problem, write_atomically


def test_symlinks_and_non_regular_targets_are_never_replaced(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("keep")
    link = tmp_path / "link.h5"
    link.symlink_to(target)
    fifo = tmp_path / "pipe.h5"
    os.mkfifo(fifo)
    for path in (link, fifo):
        with pytest.raises(FileFormatError, match="symbolic link|not a regular file"):
            with atomic_output_path(path) as temporary:
                temporary.write_text("x")
    assert target.read_text() == "keep" and link.is_symlink() and not fifo.is_file()


def test_a_name_too_long_for_its_temporary_is_refused_before_the_work(tmp_path, runner):
    name = "s" * 248 + ".h5"
    assert "too long" in output_problem(tmp_path / name)
    result = runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(tmp_path / name)])
    assert result.exit_code == 2 and "too long" in result.output and "iteration" not in result.output


def test_cli_refuses_a_device_as_output(runner):
    result = runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", "/dev/null"])
    assert result.exit_code == 2 and "not a regular file" in result.output


def test_temporaries_of_dead_writers_are_removed_by_the_next_write(tmp_path):
    target = tmp_path / "out.h5"
    stale = tmp_path / f".out.h5.{2**22 - 3}.deadbeef.tmp"  # no such process
    stale.write_text("partial")
    with atomic_output_path(target) as temporary:
        temporary.write_text("done")
    assert target.read_text() == "done" and not stale.exists()


def test_a_failed_write_is_one_line_and_keeps_the_old_file(tmp_path, monkeypatch):
    """write_atomically (the compact exports', the policy tables'): the new bytes replace
    the file, and a write that fails leaves the old file and no temporary behind."""
    target = tmp_path / "out.efgs"
    write_atomically(target, b"old")
    write_atomically(target, b"new")

    def disk_full(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    with pytest.raises(FileFormatError, match="out.efgs: cannot write .*No space left") as raised:
        write_atomically(target, b"newer")
    monkeypatch.undo()
    assert "\n" not in str(raised.value)
    assert target.read_bytes() == b"new" and [path.name for path in tmp_path.iterdir()] == ["out.efgs"]


def test_a_checkpoint_with_non_finite_regrets_is_refused(runner, tmp_path):
    import h5py

    from efgkit.io.checked_hdf5 import manifest_digest

    state = tmp_path / "state.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "20", "--state", str(state)]).exit_code == 0
    with h5py.File(state, "r+") as handle:
        regrets = handle["solver_state/regrets"]
        values = regrets[...]
        values[0] = np.nan
        regrets[...] = values
        import hashlib

        regrets.attrs["sha256"] = hashlib.sha256(values.astype("<f8").tobytes()).hexdigest()
        handle.attrs["content_sha256"] = manifest_digest(handle)
    result = runner.invoke(main, ["solve", "kuhn", "-n", "40", "--state", str(state), "--resume"])
    assert result.exit_code == 2 and "not finite" in result.output


def test_a_second_run_on_the_same_state_is_refused(runner, tmp_path):
    from efgkit.io.lock import exclusive_lock

    state = tmp_path / "state.h5"
    with exclusive_lock(state):
        result = runner.invoke(main, ["solve", "kuhn", "-n", "10", "--state", str(state)])
    assert result.exit_code == 2 and "in use by another efgkit run" in result.output
    assert not state.exists()
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--state", str(state)]).exit_code == 0
    assert not (tmp_path / "state.h5.lock").exists()  # a finished run leaves no lock file


def test_a_lock_file_removed_by_a_finishing_run_is_not_locked_again(tmp_path, monkeypatch):
    """The run that opened the lock file just before the holder removed it locks the new file."""
    from efgkit.io import lock

    state = tmp_path / "state.h5"
    opened = []
    real_open = open

    def open_then_lose_the_race(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        if str(path).endswith(".lock") and not opened:
            opened.append(path)
            os.unlink(path)  # as a finishing run does between this open and the flock
        return handle

    monkeypatch.setattr("builtins.open", open_then_lose_the_race)
    with lock.exclusive_lock(state):
        monkeypatch.setattr("builtins.open", real_open)
        assert (tmp_path / "state.h5.lock").exists()
        with pytest.raises(FileFormatError, match="in use by another efgkit run"):
            with lock.exclusive_lock(state):
                pass
    assert opened and not (tmp_path / "state.h5.lock").exists()


def test_hdf5_external_links_are_refused_before_they_are_followed(tmp_path, runner):
    import h5py

    from efgkit.io.checked_hdf5 import manifest_digest
    from efgkit.specs import load_game
    from efgkit.storage.strategy_file import load_strategy

    out = tmp_path / "kuhn.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(out)]).exit_code == 0
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as handle:
        handle["secret"] = np.arange(3)
    with h5py.File(out, "r+") as handle:
        handle["leak"] = h5py.ExternalLink(str(other), "/secret")
        handle.attrs["content_sha256"] = manifest_digest(handle)
    with pytest.raises(FileFormatError, match="soft or external link at /leak"):
        load_strategy(out, load_game("kuhn"))


def test_an_efg_game_is_identified_by_its_content_not_its_path(runner, json_output, tmp_path):
    import shutil

    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    assert runner.invoke(main, ["convert", "kuhn", str(first / "game.efg")]).exit_code == 0
    shutil.copy(first / "game.efg", second / "game.efg")
    out = tmp_path / "s.h5"
    solved = runner.invoke(main, ["solve", f"efg:{first / 'game.efg'}", "-n", "50", "--out", str(out)])
    assert solved.exit_code == 0
    moved = json_output(runner.invoke(main, ["evaluate", f"efg:{second / 'game.efg'}", str(out), "--json"]))
    assert moved["nash_conv"] > 0
    assert runner.invoke(main, ["convert", "leduc", str(second / "game.efg")]).exit_code == 0
    result = runner.invoke(main, ["evaluate", f"efg:{second / 'game.efg'}", str(out)])
    assert result.exit_code == 2 and "different tree" in result.output


def test_ctrl_c_during_solve_out_keeps_the_strategy_reached(runner, tmp_path, monkeypatch):
    from efgkit.solvers.cfr import CFRSolver
    from efgkit.specs import load_game
    from efgkit.storage.strategy_file import load_strategy

    original = CFRSolver.iterate

    def interrupted(self, iterations=1):
        if self.iteration >= 40:
            raise KeyboardInterrupt
        return original(self, min(iterations, 40 - self.iteration))

    monkeypatch.setattr(CFRSolver, "iterate", interrupted)
    out = tmp_path / "kuhn.h5"
    result = runner.invoke(main, ["solve", "kuhn", "-n", "1000", "--out", str(out)])
    assert result.exit_code == 130 and "the average strategy so far is in" in result.stderr
    _, provenance = load_strategy(out, load_game("kuhn"))
    assert provenance["iterations"] == 40


@pytest.mark.parametrize("spec", ["efg:/dev/zero", "acpc:/dev/zero"])
def test_game_files_that_are_not_regular_files_are_refused_before_reading(runner, spec):
    result = runner.invoke(main, ["info", spec])
    assert result.exit_code == 2 and "not a regular file" in result.stderr


def test_a_fifo_game_file_never_hangs(runner, tmp_path):
    fifo = tmp_path / "game.efg"
    os.mkfifo(fifo)
    result = runner.invoke(main, ["info", f"efg:{fifo}"])
    assert result.exit_code == 2 and "not a regular file" in result.stderr


@pytest.mark.parametrize("name, command", [
    ("s.h5", ["evaluate", "kuhn", "{input}"]),
    ("s.h5", ["export", "{input}", "-o", "{folder}/s.efgs"]),
    ("s.efgs", ["play", "kuhn", "{input}", "--against", "random", "-n", "2"]),
    ("t.npz", ["convert", "{input}", "{folder}/k.efg"]),
    ("a.h5", ["refine", "leduc", "--initial", "{input}", "--max-iterations", "2"]),
])
def test_inputs_that_are_fifos_are_refused_before_they_are_opened(tmp_path, name, command):
    """Opening a FIFO for reading blocks until a writer comes: every reader checks the kind
    of file first (run in a child, so a hang fails the test instead of stopping it)."""
    import subprocess
    import sys

    fifo = tmp_path / name
    os.mkfifo(fifo)
    arguments = [part.format(input=fifo, folder=tmp_path) for part in command]
    result = subprocess.run([sys.executable, "-m", "efgkit", *arguments], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2 and "not a regular file" in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_small_file_declaring_a_huge_dataset_is_refused_before_reading(runner, tmp_path):
    import h5py

    from efgkit.io.checked_hdf5 import manifest_digest
    from efgkit.specs import load_game
    from efgkit.storage.strategy_file import load_strategy

    out = tmp_path / "kuhn.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(out)]).exit_code == 0
    with h5py.File(out, "r+") as handle:
        digest = handle["strategy/probabilities"].attrs["sha256"]
        del handle["strategy/probabilities"]
        forged = handle.create_dataset("strategy/probabilities", shape=(300_000_000,), dtype="<f8")
        forged.attrs["sha256"] = digest
        handle.attrs["content_sha256"] = manifest_digest(handle)
    assert out.stat().st_size < 100_000
    with pytest.raises(FileFormatError, match="declares 2,400,000,000 bytes but the file stores 0"):
        load_strategy(out, load_game("kuhn"))


def test_a_compressed_dataset_must_store_what_its_filter_could_have_shrunk(tmp_path):
    import h5py

    from efgkit.io.checked_hdf5 import storage_problem

    with h5py.File(tmp_path / "c.h5", "w") as handle:
        zeros = handle.create_dataset("zeros", data=np.zeros(2_000_000, np.float32), chunks=(262_144,),
                                      compression="lzf", shuffle=True)
        forged = handle.create_dataset("forged", shape=(100_000_000,), dtype="<f4", chunks=(262_144,),
                                       compression="lzf")
        assert storage_problem(zeros) is None  # the best LZF can do is still stored
        assert "declares 400,000,000 bytes but the file stores 0 (compressed lzf)" in storage_problem(forged)
