"""Sampled CFR on card abstractions: iterations per second and what narrow storage costs.

Measures (issue 14, docs/benchmarks.md section "sampled-cfr"):
* CFR+ iterations/s with public chance sampling per game and abstraction, float64, float32
  and int32, and the milliseconds to deal one board (cards, valid hands, buckets, showdown
  order); with ``--before DIR`` (an efgkit source tree, e.g. ``git archive`` of an
  older commit), the same float64 runs of that tree in a child process, same machine, same run;
* rates are per CPU second of the measuring process (``time.process_time``): on a machine
  shared with other jobs wall-clock rates move several-fold with the load;
* the NashConv (exact, full game, streamed) after the same iterations on the same boards in
  each precision, with the bytes of the solver state.

Run ``python benchmarks/bench_sampled.py [--before DIR]`` (writes the section) or with
``--quick`` for a seconds-long smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from markdown_sections import update_section

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SPEED_RUNS = (("leduc", "lossless"), ("holdem(ranks=3,rounds=2)", "canonical"),
              ("holdem(ranks=5,rounds=2)", "canonical"), ("holdem(ranks=5)", "none"), ("holdem", "hashed"),
              ("holdem", "hashed 169-1000-1000-1000"))
"""``hashed``: random suit-symmetric buckets, 10 per round or the counts given per round
(``IsomorphicCards.hashed``, seed 0), the bucket lookup of a 52-card bucket file without one on
disk; 169-1000-1000-1000 has the row count of the pipeline's HULHE abstraction (docs/holdem.md)."""
QUICK_SPEED_RUNS = (("leduc", "lossless"),)
PRECISION_RUNS = (("leduc", "lossless", 20_000), ("holdem(ranks=3,rounds=2)", "canonical", 20_000),
                  ("holdem(ranks=5,rounds=2)", "canonical", 2_000))
PRECISIONS = ("float64", "float32", "int32")

SETUP = """
import json, sys, time
from efgkit.poker.betting_tree import BettingTree
try:
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.buckets.named_abstractions import abstraction_named
    from efgkit.poker.streamed.sampled_cfr import SampledCFR
except ModuleNotFoundError:  # a tree from before the engines were grouped by package (48e1735)
    from efgkit.poker.bucket_layout import BucketLayout
    from efgkit.poker.card_abstraction import IsomorphicCards
    from efgkit.poker.named_abstractions import abstraction_named
    from efgkit.poker.sampled_cfr import SampledCFR
from efgkit.specs import make_game
spec, buckets, number, precision = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
game = make_game(spec)
counts = buckets.split()[1].split("-") if " " in buckets else [10] * game.num_rounds
cards = (IsomorphicCards.hashed(game, tuple(map(int, counts)), seed=0) if buckets.startswith("hashed")
         else abstraction_named(game, buckets))
layout = BucketLayout(BettingTree(game), cards)
options = {} if precision == "float64" else {"precision": precision}
"""
"""A child's start: the tree's modules, ``game``, ``layout`` and the solver's ``options`` from
``sys.argv`` (spec, buckets, a number, precision)."""

RATE = SETUP + """
solver = SampledCFR(layout, seed=0, **options).iterate(2)
rate = 0.0
for window in range(3):  # the best of three: the machine is shared
    batch, done, start = 1, 0, time.process_time()
    while time.process_time() - start < number / 3:
        solver.iterate(batch)
        done += batch
        batch = min(2 * batch, 1000)
    rate = max(rate, done / (time.process_time() - start))
if hasattr(solver, "_sample_board"):  # before: numpy and the abstraction's buckets() per board
    def deal(count):
        for _ in range(count):
            solver._sample_board()
else:  # in the kernel, as _run deals them
    import numba
    kernels = sys.modules[SampledCFR.__module__]
    _deal, _sample_cards = kernels._deal, kernels._sample_cards

    @numba.njit
    def deals(sampler, tables, board, uniforms):
        for i in range(uniforms.shape[0]):
            _sample_cards(sampler, uniforms[i])
            _deal(sampler, tables, board)

    def deal(count):
        uniforms = solver.rng.random((count, solver._sampler.cards.shape[0]))
        deals(solver._sampler, solver._tables, solver._board, uniforms)
deal(1)
board_ms = float("inf")
for window in range(3):
    boards, count, start = 0, 1, time.process_time()
    while time.process_time() - start < min(number / 3, 1.0):
        deal(count)
        boards += count
        count = min(2 * count, 1000)
    board_ms = min(board_ms, (time.process_time() - start) / boards * 1e3)
print(json.dumps({"rate": rate, "actions": layout.num_actions, "board_ms": board_ms}))
"""


FIXED = SETUP + """
iterations = int(number)
solver = SampledCFR(layout, seed=0, **options).iterate(iterations)  # every page of the state touched
start = time.process_time()
solver.iterate(iterations)
print(json.dumps({"cpu_per_iteration": (time.process_time() - start) / iterations}))
"""
"""CPU seconds per iteration over iterations N + 1 .. 2N (seed 0: the same boards in every tree)."""


def _child(code: str, source: str, spec: str, buckets: str, number: float, precision: str) -> dict:
    """Run ``code`` for the efgkit tree at ``source`` in a fresh process (its own numba cache)."""
    environment = {**os.environ, "PYTHONPATH": source}
    result = subprocess.run([sys.executable, "-c", code, spec, buckets, str(number), precision],
                            capture_output=True, text=True, env=environment, check=True,
                            cwd=source)  # python -c puts the working directory first on sys.path
    return json.loads(result.stdout.strip().splitlines()[-1])


def cpu_per_iteration(source: str, spec: str, buckets: str, iterations: int, precision: str) -> float:
    """CPU seconds per iteration of the tree at ``source`` on iterations ``iterations`` + 1 to
    2 x ``iterations`` (the same boards in every tree, every page of the state touched first)."""
    return _child(FIXED, source, spec, buckets, iterations, precision)["cpu_per_iteration"]


def iterations_per_second(source: str, spec: str, buckets: str, seconds: float, precision: str) -> dict:
    """Rate of the efgkit tree at ``source``: the best of three windows of ``seconds`` / 3 CPU
    seconds (each on other boards) and the milliseconds to deal a board."""
    return _child(RATE, source, spec, buckets, seconds, precision)


def precision_cost(spec: str, buckets: str, iterations: int) -> list[dict]:
    """NashConv after ``iterations`` of CFR+ (seed 0, the same boards) in each precision."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.named_abstractions import abstraction_named
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_cfr import SampledCFR
    from efgkit.specs import make_game

    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), abstraction_named(game, buckets))
    evaluator = StreamedEvaluator(layout)
    rows = []
    for precision in PRECISIONS:
        solver = SampledCFR(layout, seed=0, precision=precision).iterate(iterations)
        nash_conv = evaluator.evaluate(solver.average_strategy(), game_value=False).nash_conv
        memory = solver.memory()
        big_blind = max(game.blinds)
        rows.append({"spec": spec, "buckets": buckets, "iterations": iterations, "precision": precision,
                     "nash_conv": nash_conv, "mbb": nash_conv / 2 / big_blind * 1000 if big_blind else None,
                     "state_bytes": memory["state"], "working_bytes": memory["working"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run; writes nothing")
    parser.add_argument("--before", metavar="DIR",
                        help="an older efgkit source tree to measure beside this one")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    seconds = 0.5 if args.quick else 4.5
    lines = ["| game | card abstraction | actions | " + " | ".join(f"{p} it/s" for p in PRECISIONS)
             + " | one board, ms" + (" | before: float64 it/s | float64 / before | before: one board, ms |"
                                      if args.before else " |"),
             "|---|---|---:|" + "---:|" * (len(PRECISIONS) + 1) + ("---:|---:|---:|" if args.before else "")]
    for spec, buckets in QUICK_SPEED_RUNS if args.quick else SPEED_RUNS:
        rates = {p: iterations_per_second(here, spec, buckets, seconds, p) for p in PRECISIONS}
        row = (f"| {spec} | {buckets} | {rates['float64']['actions']:,} | "
               + " | ".join(f"{rates[p]['rate']:,.1f}" for p in PRECISIONS)
               + f" | {rates['float64']['board_ms']:.4f} |")
        if args.before:
            before = iterations_per_second(args.before, spec, buckets, seconds, "float64")
            row += (f" {before['rate']:,.1f} | {rates['float64']['rate'] / before['rate']:.2f}x | "
                    f"{before['board_ms']:.4f} |")
        lines.append(row)
        print(lines[-1], flush=True)
    lines += ["", "| game | card abstraction | CFR+ iterations | precision | NashConv | mbb/g | solver state "
              "bytes | working bytes |", "|---|---|---:|---|---:|---:|---:|---:|"]
    for spec, buckets, iterations in ((("leduc", "lossless", 200),) if args.quick else PRECISION_RUNS):
        for r in precision_cost(spec, buckets, iterations):
            mbb = "" if r["mbb"] is None else f"{r['mbb']:,.2f}"
            lines.append(f"| {spec} | {buckets} | {iterations:,} | {r['precision']} | {r['nash_conv']:.6f} | "
                         f"{mbb} | {r['state_bytes']:,} | {r['working_bytes']:,} |")
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    if not args.quick:
        machine = platform.processor() or platform.machine()
        load = os.getloadavg()[0]
        header = (f"## Sampled CFR on card abstractions — {datetime.date.today()}, {machine}, load average "
                  f"{load:.1f} at the end\n\n"
                  f"`python benchmarks/bench_sampled.py --before DIR`: CFR+ with public chance sampling "
                  f"(`SampledCFR`), one process per rate, the best of three {seconds / 3:g} CPU-second "
                  f"windows after warm-up; rates and board times per CPU second of that process (on "
                  f"this shared machine wall-clock rates move several-fold with the load).\n\n")
        update_section(DOCS, "sampled-cfr", header + table + "\n")


if __name__ == "__main__":
    main()
