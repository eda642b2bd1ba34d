"""Sampled CFR with its arrays in memory against memory-mapped in a working file (--mapped).

Measures (issue 14, docs/holdem.md section "mapped-state"): for one abstraction with a large
solver state, per storage: the peak resident set (``VmHWM``) of a child process after the
iterations and after writing a checkpoint (the state file), and CFR+ iterations per CPU
second (``time.process_time``, the best of three windows; the machine is shared). The mapped
run drops its resident pages after every chunk of iterations, as ``efgkit solve --mapped``
does. Each storage runs once in its own child, memory first (a second pair would double the
minutes; the two differ by far more than the machine's noise in RSS).

``--memory-limit MIB`` (root, a cgroup memory controller) instead runs a larger state, one
that does not fit in MIB with the process's other memory, in a memory cgroup of MIB: each
storage runs ``LIMITED_ITERATIONS`` iterations (enough that the boards reach nearly every
row, so the in-memory arrays become resident in full), then a checkpoint; a run the kernel
kills for memory is reported as such. It writes the section "mapped-limit".

Run ``python benchmarks/bench_sampled_mapped.py`` (writes the section; minutes) or with
``--quick`` for a seconds-long smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from markdown_sections import update_section

DOCS = Path(__file__).resolve().parent.parent / "docs" / "holdem.md"
RUN = ("holdem", (169, 3000, 3000, 3000), "float32", 60.0)
"""52-card hold'em, random suit-symmetric buckets (``IsomorphicCards.hashed``), float32, CPU
seconds of iterations."""
QUICK_RUN = ("holdem(ranks=3,rounds=2)", (3, 10), "float32", 1.0)
LIMITED_RUN = ("holdem", (169, 20000, 20000, 20000), "float32", 0.0)
"""The memory-limited comparison: 331 M actions, 5.3 GB of float32 arrays (4 per action) beside
about 1.2 GB of the abstraction's tables and the walk; 100 iterations take about 40 minutes
mapped in 6 GiB (docs/holdem.md)."""
LIMITED_ITERATIONS = 100

CHILD = """
import json, sys, time
from efgkit.storage.checkpoint import write_sampled
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.poker.streamed.sampled_cfr import SampledCFR
from efgkit.specs import make_game
from efgkit.storage.disk_solve import current_rss, peak_rss
from efgkit.storage.sampled_working import WorkingFile
spec, buckets, precision, seconds, storage, state, iterations = sys.argv[1:8]
game = make_game(spec)
layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, json.loads(buckets), seed=0))
working = WorkingFile(state) if storage == "mapped" else None
solver = SampledCFR(layout, seed=0, precision=precision, allocate=working and working.allocate).iterate(2)
if working:
    working.release()
rate, done = 0.0, 0
if int(iterations):
    start = time.process_time()
    for _ in range(int(iterations) // 4):
        solver.iterate(4)
        if working:
            working.release()
    done = int(iterations) // 4 * 4
    rate = done / (time.process_time() - start)
for window in range(3 * (not int(iterations))):
    batch, count, start = 1, 0, time.process_time()
    while time.process_time() - start < float(seconds) / 3:
        solver.iterate(batch)
        if working:
            working.release()
        count += batch
        batch = min(2 * batch, 64)
    rate = max(rate, count / (time.process_time() - start))
    done += count
solving_peak = peak_rss()
write_sampled(state, solver, {"algorithm": "cfr+"}, [], 0.0)
checkpoint_peak = peak_rss()
accumulated = solver.average_accumulator  # the actions any board reached, in slices
reached = sum(int((accumulated[i:i + (1 << 24)] != 0).sum()) for i in range(0, accumulated.shape[0], 1 << 24))
memory = solver.memory()
print(json.dumps({"actions": layout.num_actions, "actions_reached": reached, "state_bytes": memory["state"],
                  "working_bytes": memory["working"], "iterations_per_cpu_second": rate, "iterations": done,
                  "solving_peak_rss": solving_peak, "checkpoint_peak_rss": checkpoint_peak}))
if working:
    working.remove()
"""


def memory_cgroup(limit: int) -> Path:
    """A new memory cgroup of ``limit`` bytes (cgroup v2, else v1's memory controller)."""
    unified = Path("/sys/fs/cgroup")
    controllers = unified / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split():
        group = unified / f"efgkit-bench-{os.getpid()}"
        group.mkdir()
        (group / "memory.max").write_text(str(limit))
        return group
    group = Path("/sys/fs/cgroup/memory") / f"efgkit-bench-{os.getpid()}"
    group.mkdir()
    (group / "memory.limit_in_bytes").write_text(str(limit))
    return group


def measure(run, storage: str, directory: str, iterations: int = 0, cgroup: Path | None = None) -> dict:
    """One child's results (``CHILD``), or ``{"killed": signal}`` when the kernel killed it."""
    spec, buckets, precision, seconds = run
    state = Path(directory) / f"{storage}.h5"
    state.unlink(missing_ok=True)
    join = None if cgroup is None else lambda: (cgroup / "cgroup.procs").write_text(str(os.getpid()))
    done = subprocess.run([sys.executable, "-c", CHILD, spec, json.dumps(buckets), precision, str(seconds),
                           storage, str(state), str(iterations)], capture_output=True, text=True,
                          preexec_fn=join)
    if done.returncode < 0:
        return {"killed": -done.returncode}
    if done.returncode:
        raise SystemExit(f"the {storage} child failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.splitlines()[-1])


def limited(limit_mib: int, directory: str | None, quick: bool) -> None:
    """Both storages of ``LIMITED_RUN`` in a memory cgroup of ``limit_mib``: the "mapped-limit"
    section (``quick``: the small run for 8 iterations, printed only)."""
    run, iterations = (QUICK_RUN, 8) if quick else (LIMITED_RUN, LIMITED_ITERATIONS)
    try:
        group = memory_cgroup(limit_mib << 20)
    except OSError as error:
        raise SystemExit(f"--memory-limit needs root and a cgroup memory controller: {error}") from None
    results = {}
    try:
        with tempfile.TemporaryDirectory(dir=directory) as scratch:
            for storage in ("memory", "mapped"):
                results[storage] = measure(run, storage, scratch, iterations, group)
                print(storage, results[storage], flush=True)
    finally:
        group.rmdir()
    spec, buckets, precision, _ = run
    mib = 2.0**20
    sizes = next((r for r in results.values() if "killed" not in r), None)
    lines = [f"Measured {datetime.date.today()} by `benchmarks/bench_sampled_mapped.py --memory-limit "
             f"{limit_mib}`: CFR+ on {spec}, `IsomorphicCards.hashed` {'-'.join(map(str, buckets))} buckets, "
             f"{precision}, {iterations} iterations then a checkpoint, each storage in its own child "
             f"process inside a memory cgroup of {limit_mib:,} MiB (no swap)"
             + (f": {sizes['actions']:,} actions, solver state {sizes['state_bytes'] / mib:,.0f} MiB and "
                f"working arrays {sizes['working_bytes'] / mib:,.0f} MiB." if sizes else "."), "",
             "| storage | result | actions reached | peak RSS solving (MiB) | peak RSS after the checkpoint "
             "(MiB) | iterations / CPU s |", "|---|---|---:|---:|---:|---:|"]
    for storage, result in results.items():
        if "killed" in result:
            lines.append(f"| {storage} | killed by signal {result['killed']} (out of memory) | | | | |")
            continue
        reached = result["actions_reached"] / result["actions"]
        peaks = f"{result['solving_peak_rss'] / mib:,.0f} | {result['checkpoint_peak_rss'] / mib:,.0f}"
        lines.append(f"| {storage} | {result['iterations']} iterations and a checkpoint | {reached:.1%} | "
                     f"{peaks} | {result['iterations_per_cpu_second']:.2f} |")
    print("\n".join(lines))
    if not quick:
        update_section(DOCS, "mapped-limit", "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--directory", default=None, help="where the state and working files go")
    parser.add_argument("--memory-limit", type=int, metavar="MIB",
                        help="run the larger state in a memory cgroup of MIB instead (root)")
    args = parser.parse_args()
    if args.memory_limit is not None:
        limited(args.memory_limit, args.directory, args.quick)
        return
    run = QUICK_RUN if args.quick else RUN
    with tempfile.TemporaryDirectory(dir=args.directory) as directory:
        results = {}
        for storage in ("memory", "mapped"):
            results[storage] = [measure(run, storage, directory)]
            print(storage, results[storage][-1], flush=True)
    if args.quick:
        return
    spec, buckets, precision, seconds = run
    first = results["memory"][0]
    mib = 2.0**20
    lines = [f"Measured {datetime.date.today()} by benchmarks/bench_sampled_mapped.py: CFR+ on {spec}, "
             f"`IsomorphicCards.hashed` {'-'.join(map(str, buckets))} buckets, {precision}: "
             f"{first['actions']:,} actions, solver state {first['state_bytes'] / mib:,.0f} MiB and working "
             f"arrays {first['working_bytes'] / mib:,.0f} MiB. One run of each; peak RSS is "
             f"`VmHWM` of the child process, rates per CPU second (best of three windows of "
             f"{seconds / 3:.0f} s).", "",
             "| storage | peak RSS solving (MiB) | peak RSS after a checkpoint (MiB) | iterations / CPU s |",
             "|---|---:|---:|---:|"]
    for storage, runs in results.items():
        for result in runs:
            rate = result["iterations_per_cpu_second"]
            lines.append(f"| {storage} | {result['solving_peak_rss'] / mib:,.0f} | "
                         f"{result['checkpoint_peak_rss'] / mib:,.0f} | {rate:.2f} |")
    update_section(DOCS, "mapped-state", "\n".join(lines))


if __name__ == "__main__":
    main()
