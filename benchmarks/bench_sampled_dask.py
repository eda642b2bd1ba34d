"""Sampled CFR+ with a batch of boards per iteration on two Dask workers against one process.

Measures (issue 33, docs/benchmarks.md section "sampled-dask"), boards per wall second and
CPU seconds per board (this process, which holds the scheduler, plus the workers) of
* ``plain``: ``SampledCFR``, one board an iteration, in this process (today's engine);
* ``batch here``: B boards an iteration in G groups (``sampled_batches``), in this process;
* ``batch dask``: the same on a LocalCluster of 2 single-threaded worker processes, one
  persistent walker on each for every ``iterate`` call (bit-identical to ``batch here``, checked
  at the end);
after WARM_BOARDS boards each, in rounds that alternate the modes, each mode a wall-clock
window per round, so the load of the shared machine hits every mode alike; the load average
is read at every round. The target is 2 workers at >= 1.7x the boards per wall second of
``plain``.

Run ``python benchmarks/bench_sampled_dask.py`` (writes the section) or ``--quick`` for a
seconds-long smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
from markdown_sections import update_section

from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.poker.buckets.named_abstractions import abstraction_named
from efgkit.poker.streamed.sampled_batches import BatchedSampledCFR
from efgkit.poker.streamed.sampled_cfr import SampledCFR
from efgkit.specs import make_game

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
ALL_MODES = ("plain", "batch here", "batch dask")
RUNS = (("holdem(ranks=5)", "none", 8, 2, 4.0, ALL_MODES), ("holdem(ranks=5)", "none", 32, 2, 4.0, ALL_MODES),
        ("holdem(ranks=5)", "none", 32, 8, 4.0, ALL_MODES),
        ("holdem", "hashed 169-1000-1000-1000", 8, 2, 25.0, ("plain", "batch dask")),
        ("holdem", "hashed 169-1000-1000-1000", 32, 2, 40.0, ("plain", "batch dask")))
"""(game, card abstraction, boards an iteration B, groups G, seconds a window, modes): HULHE
without ``batch here``, whose third copy of the 530 MB state would pass 3 GiB in this process."""
WARM_BOARDS = 1024
"""Boards every solver walks before the windows: a walk against the first iterations' strategies
costs a fraction of a later one (about 0.001 CPU-s a board at iteration 3 of B = 32 on
holdem(ranks=5), 0.015 from iteration 20 on), and one board an iteration reaches later
iterations 32 times sooner than B = 32."""
WARM_STEP = 32
"""Boards per ``iterate`` call of the warm-up: a kernel call holds the GIL, and the LocalCluster's
scheduler runs in a thread of this process; one call of 1,024 HULHE boards (about 5 minutes)
starved it past Dask's worker time-to-live, and it dropped both workers."""
QUICK_RUNS = (("holdem(ranks=3,rounds=2)", "canonical", 4, 2, 0.5, ALL_MODES),)


def layout_of(spec: str, buckets: str) -> BucketLayout:
    game = make_game(spec)
    cards = (IsomorphicCards.hashed(game, tuple(int(c) for c in buckets.split()[1].split("-")), seed=0)
             if buckets.startswith("hashed") else abstraction_named(game, buckets))
    return BucketLayout(BettingTree(game), cards)


def cpu_seconds(runner: ChunkRunner | None) -> float:
    """CPU seconds of this process and of ``runner``'s workers so far."""
    return time.process_time() + (sum(runner.on_workers(time.process_time)) if runner else 0.0)


def window(solver: SampledCFR, boards: int, seconds: float,
           runner: ChunkRunner | None) -> tuple[float, float]:
    """Boards per wall second and CPU seconds per board over ``seconds`` of iterations."""
    done, batch = 0, 1
    cpu, start = cpu_seconds(runner), time.perf_counter()
    while time.perf_counter() - start < seconds:
        solver.iterate(batch)
        done += batch
        batch = min(2 * batch, 64)
    wall = time.perf_counter() - start
    return done * boards / wall, (cpu_seconds(runner) - cpu) / (done * boards)


def measure(spec: str, buckets: str, boards: int, groups: int, seconds: float, modes: tuple[str, ...],
            rounds: int, warm_boards: int) -> dict:
    layout = layout_of(spec, buckets)
    with ChunkRunner(workers=2) as runner:
        batch = {"boards_per_iteration": boards, "board_groups": groups}
        makers = {"plain": lambda: (SampledCFR(layout, seed=0), 1, None),
                  "batch here": lambda: (BatchedSampledCFR(layout, seed=0, **batch), boards, None),
                  "batch dask": lambda: (BatchedSampledCFR(layout, seed=0, runner=runner, **batch), boards,
                                         runner)}
        solvers = {mode: makers[mode]() for mode in modes}
        for solver, per_iteration, _ in solvers.values():  # compile the kernels; past the cheap first walks
            left = max(2, warm_boards // per_iteration)
            while left > 0:  # in calls of WARM_STEP boards: see WARM_STEP
                step = min(left, max(1, WARM_STEP // per_iteration))
                solver.iterate(step)
                left -= step
        rates: dict[str, list[tuple[float, float]]] = {mode: [] for mode in solvers}
        loads = []
        for _ in range(rounds):
            for mode, (solver, per_iteration, on) in solvers.items():
                rates[mode].append(window(solver, per_iteration, seconds, on))
            loads.append(os.getloadavg()[0])
        identical = None
        if "batch here" in solvers:
            here, there = solvers["batch here"][0], solvers["batch dask"][0]
            there.iterate(here.iteration - there.iteration) if here.iteration > there.iteration else \
                here.iterate(there.iteration - here.iteration)
            identical = all(np.array_equal(here.state_arrays()[name], array)
                            for name, array in there.state_arrays().items())
    return {"spec": spec, "buckets": buckets, "boards": boards, "groups": groups,
            "actions": layout.num_actions, "rates": rates, "loads": loads, "identical": identical,
            "iterations": solvers["batch dask"][0].iteration}


def table(results: list[dict]) -> list[str]:
    lines = ["| game | card abstraction | actions | B | G | mode | boards / wall s (per round) | median | "
             "vs plain | CPU-s / board | load average |",
             "|---|---|---:|---:|---:|---|---|---:|---:|---:|---|"]
    for r in results:
        plain = statistics.median(rate for rate, _ in r["rates"]["plain"])
        for mode, values in r["rates"].items():
            median = statistics.median(rate for rate, _ in values)
            lines.append(f"| {r['spec']} | {r['buckets']} | {r['actions']:,} | {r['boards']} | "
                         f"{r['groups']} | {mode} | {', '.join(f'{rate:.1f}' for rate, _ in values)} | "
                         f"{median:.2f} | "
                         f"{median / plain:.2f}x | {statistics.median(c for _, c in values):.4f} | "
                         f"{', '.join(f'{load:.1f}' for load in r['loads'])} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run; writes nothing")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of windows (each mode once a round)")
    parser.add_argument("--only", default=None, help="run only the games whose spec contains this")
    args = parser.parse_args()
    results = []
    for spec, buckets, boards, groups, seconds, modes in QUICK_RUNS if args.quick else RUNS:
        if args.only and args.only not in f"{spec} {buckets}":
            continue
        rounds = 1 if args.quick else args.rounds
        warm = 0 if args.quick else WARM_BOARDS
        results.append(measure(spec, buckets, boards, groups, seconds, modes, rounds, warm))
        for line in table(results[-1:])[2:]:
            print(line, f"(bit-identical here and on Dask: {results[-1]['identical']})", flush=True)
    if args.quick:
        return
    machine = platform.processor() or platform.machine()
    command = "python benchmarks/bench_sampled_dask.py" + (f" --only '{args.only}'" if args.only else "") + \
        f" --rounds {args.rounds}"
    header = (f"## Sampled CFR+ on two Dask workers (issue 33) — {datetime.date.today()}, {machine}, "
              f"{os.cpu_count()} cores shared with other sessions\n\n"
              f"`{command}`: float64 CFR+, seed 0; after {WARM_BOARDS} boards each, each round runs every "
              f"mode for one wall-clock window (plain: one board an iteration in this process; batch here: "
              f"B boards an iteration in G groups in this process; batch dask: the same on a LocalCluster "
              f"of 2 single-threaded worker processes, a persistent walker on each), the load average "
              f"(1 minute) read after each round. "
              f"CPU-s / board counts this process (with the scheduler) and the workers. Batch here and batch "
              f"dask end bit-identical (None: not compared): "
              f"{', '.join(str(r['identical']) for r in results)}. Target: batch dask >= 1.7x plain.\n\n")
    update_section(DOCS, "sampled-dask", header + "\n".join(table(results)) + "\n")


if __name__ == "__main__":
    main()
