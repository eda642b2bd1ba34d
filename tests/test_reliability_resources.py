"""Resources: one memory budget governs every engine before it allocates, and a full disk is
one line and exit code 2, never a signal (issue 32, findings 2 and 3)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest

from efgkit.cli import main
from efgkit.errors import DiskSpaceError, ParameterError
from efgkit.io.budget import check_disk_space, memory_budget, zeros_within_budget
from efgkit.io.mapped_arrays import MappedFile, create_contiguous, create_file

SAMPLED = ["solve", "holdem(ranks=5)", "--engine", "sampled", "-n", "2"]


def test_the_budget_is_the_variable_or_half_the_memory(monkeypatch):
    monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", "3MiB")
    assert memory_budget() == 3 * 2**20
    with pytest.raises(ParameterError, match="needs 4 MiB of memory, more than the budget of 3 MiB.*coarser"):
        zeros_within_budget({"a": (2**19, np.float64)}, "a test", "coarser")
    assert zeros_within_budget({"a": (2**18, np.float64)}, "a test", "")["a"].sum() == 0


@pytest.mark.parametrize("arguments", [
    [*SAMPLED, "--buckets", "lossless"],  # 37 TiB of arrays before this check
    [*SAMPLED, "--buckets", "none"],
    ["solve", "leduc", "--engine", "public-tree", "-n", "2"],
])
def test_every_engine_checks_the_budget_before_it_allocates(runner, monkeypatch, arguments):
    monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", "64KiB")
    monkeypatch.setenv("EFGKIT_NODE_LIMIT", "100000")  # the GameTree the public tree is read from
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2, result.output
    assert "of memory, more than the budget of 64 KiB (EFGKIT_MEMORY_BUDGET" in result.output
    assert result.output.count("efgkit: error") == 1 and "Traceback" not in result.output


def test_canonical_tables_and_bucket_file_features_check_the_budget(monkeypatch, tmp_path):
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction, feature_bytes
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.specs import make_game

    monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", "1KiB")
    with pytest.raises(ParameterError, match="canonical buckets of holdem"):
        IsomorphicCards.canonical(make_game("holdem(ranks=5)"))
    options = AbstractionOptions(buckets=(10, 10, 10, 10), num_ranks=5)
    assert feature_bytes(options) > 1024
    with pytest.raises(ParameterError, match="the features of a 5-rank bucket file"):
        build_abstraction(options, tmp_path / "b.h5")
    assert not (tmp_path / "b.h5").exists()


def test_a_mapped_solve_larger_than_the_disk_is_refused_before_it_writes(runner, tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(2**21, 2**21 - 2**16, 2**16))
    state = tmp_path / "state.h5"
    result = runner.invoke(main, [*SAMPLED, "--buckets", "none", "--mapped", "--state", str(state)])
    assert result.exit_code == 2 and "KiB on disk" in result.output and "64 KiB free" in result.output
    assert not (tmp_path / "state.h5.work").exists() and not state.exists()


def test_a_mapped_array_is_reserved_on_disk_before_it_is_written(tmp_path, monkeypatch):
    path = tmp_path / "w.h5"
    with create_file(path) as handle:
        create_contiguous(handle, "a", (4096,), np.float64)
    import h5py

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "posix_fallocate", full)
    with h5py.File(path, "r") as handle, MappedFile(path, writable=True) as mapped:
        with pytest.raises(DiskSpaceError, match="no room on disk for 32,768 bytes"):
            mapped.map(handle["a"])
    with pytest.raises(DiskSpaceError, match="needs 1 TiB on disk"):
        check_disk_space(path, 2**40, "a test")


def _tmpfs(folder) -> bool:
    """A 1 MiB tmpfs at ``folder`` where this process may mount one (root in a container)."""
    if sys.platform != "linux" or shutil.which("mount") is None or os.geteuid() != 0:
        return False
    folder.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(folder)],
                          capture_output=True).returncode == 0


def test_a_full_disk_is_one_line_not_a_signal(tmp_path):
    """On a real full file system (where a tmpfs can be mounted): a mapped solve whose working
    file would not fit, and a solve whose checkpoint cannot be written, end with one line."""
    disk = tmp_path / "disk"
    if not _tmpfs(disk):
        pytest.skip("cannot mount a small file system here; the injected ENOSPC tests cover it")
    def efgkit(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "efgkit", *arguments], capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}, timeout=300)

    try:
        state = disk / "k.h5"
        assert efgkit("solve", "kuhn", "-n", "10", "--state", str(state)).returncode == 0
        before = state.read_bytes()
        (disk / "filler").write_bytes(b"\0" * (shutil.disk_usage(disk).free - 64 * 1024))
        for arguments in ([*SAMPLED, "--buckets", "none", "--mapped", "--state", str(disk / "m.h5")],
                          ["solve", "kuhn", "-n", "20", "--state", str(state), "--resume"]):
            run = efgkit(*arguments)
            assert run.returncode == 2, (run.returncode, run.stderr[-2000:])  # 139 (SIGSEGV) or 135 before
            assert run.stderr.count("efgkit: error") == 1 and "disk" in run.stderr
            assert "Traceback" not in run.stderr and not (disk / "m.h5.work").exists()
            with open(disk / "filler", "ab") as filler:  # then a disk with no room at all
                try:
                    filler.write(b"\0" * 1024 * 1024)
                except OSError:
                    pass
        assert state.read_bytes() == before
    finally:
        subprocess.run(["umount", str(disk)], check=False)


@pytest.mark.parametrize("address", ["tls://127.0.0.1:1", "tcp://127.0.0.1:notaport", "http://x",
                                     "tcp://127.0.0.1:70000", "127.0.0.1"])
def test_scheduler_addresses_are_checked_before_connecting(address):
    from efgkit.io.chunk_runner import ChunkRunner

    with pytest.raises(ParameterError, match="expected a Dask scheduler address tcp://HOST:PORT"):
        ChunkRunner(scheduler=address)


def test_a_local_cluster_keeps_its_workers_while_this_process_holds_the_gil():
    """The LocalCluster's scheduler runs in a thread here; a driver kernel that held the GIL past
    Dask's worker time-to-live made it restart both idle workers (their scattered data and the
    batched solver's walkers lost). Here libc's sleep holds the GIL as a numba kernel does, past
    a time-to-live of 1 s (5 s with Dask's floor of 10 heartbeats; on the old code 8 s of it did not
    trigger the restart, 12 s did)."""
    import ctypes
    import time

    import dask
    import distributed  # noqa: F401  (its defaults in dask's config before the setting below)

    from efgkit.io.chunk_runner import ChunkRunner

    with dask.config.set({"distributed.scheduler.worker-ttl": "1s"}):
        runner = ChunkRunner(workers=1)
    with runner:
        before = runner.on_workers(os.getpid)
        ctypes.PyDLL(None).sleep(12)
        time.sleep(4)  # the scheduler's checks run
        assert runner.worker_count == 1 and runner.on_workers(os.getpid) == before


@pytest.mark.parametrize("answer", [None, b"\xff" * 64])
def test_a_scheduler_that_never_answers_or_answers_garbage_is_one_line(monkeypatch, answer):
    """A server that accepts and stays silent hung the command (still waiting after 120 s); one
    that sent bytes made Dask try to allocate 3.07 EiB."""
    import socket
    import threading

    from efgkit.io import chunk_runner

    monkeypatch.setattr(chunk_runner, "CONNECT_DEADLINE", 3.0)
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve() -> None:
        connection, _ = server.accept()
        accepted.append(connection)
        if answer is not None:
            connection.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        with pytest.raises(ParameterError, match=f"--scheduler {address}: (no answer|cannot connect)"):
            chunk_runner.ChunkRunner(scheduler=address)
    finally:
        server.close()
        for connection in accepted:
            connection.close()


def test_the_streamed_best_response_checks_its_walk_buffers(monkeypatch):
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.named_abstractions import abstraction_named
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.specs import make_game

    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), abstraction_named(game, "none"))
    needed = StreamedEvaluator(layout).workspace_bytes()
    assert needed == sum(a.nbytes for a in StreamedEvaluator(layout).workspace()[3:9])  # the float blocks
    monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", str(needed - 1))
    with pytest.raises(ParameterError, match="a streamed best response on holdem.ranks=5. .one walk"):
        StreamedEvaluator(layout)


def test_evaluate_refuses_a_damaged_strategy_file_before_building_the_game(tmp_path, runner, monkeypatch):
    """A truncated strategy file for a game given as GAME gets its one line without the
    game's tree being built first (holdem(ranks=3,rounds=2)'s tree took 5 GB for nothing)."""
    from efgkit.cli import main, solve

    path = tmp_path / "kuhn.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "5", "--out", str(path)]).exit_code == 0
    path.write_bytes(path.read_bytes()[:2000])

    def no_build(spec, **_):
        raise AssertionError(f"built {spec} before reading the strategy file")

    monkeypatch.setattr(solve, "build_game", no_build)
    result = runner.invoke(main, ["evaluate", "kuhn", str(path)])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
