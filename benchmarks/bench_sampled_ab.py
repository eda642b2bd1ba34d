"""Sampled CFR+ CPU time per iteration: this tree against another, interleaved (issue 33).

Runs ``bench_sampled.iterations_per_second`` (float64 CFR+, seed 0, the best of three
CPU-second windows in a fresh process with its own PYTHONPATH) for each game, alternating the
two trees round by round so the load of the shared machine hits both alike, and reports per
game the median rate of each tree and the ratio of medians (target: 5x on HULHE hashed
169-1000-1000-1000 and holdem(ranks=5)).

Run ``python benchmarks/bench_sampled_ab.py --before DIR`` (DIR an efgkit source tree, e.g. a
checkout of main) to write docs/benchmarks.md's section "sampled-ab"; ``--quick`` for a
smoke run on Leduc that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
from pathlib import Path

from bench_sampled import iterations_per_second
from markdown_sections import update_section

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
RUNS = (("holdem(ranks=5)", "none"), ("holdem", "hashed 169-1000-1000-1000"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", required=True,
                        help="the efgkit source tree to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per game (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="seconds-long smoke run on Leduc; writes nothing")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"this": here, "before": args.before}
    seconds = 0.5 if args.quick else 4.5
    lines = ["| game | card abstraction | rounds | before: it/CPU-s (median) | this: it/CPU-s (median) | "
             "CPU s per iteration, before / this |", "|---|---|---:|---:|---:|---:|"]
    for spec, buckets in (("leduc", "lossless"),) if args.quick else RUNS:
        rates = {name: [] for name in trees}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
            for name in order:
                rate = iterations_per_second(trees[name], spec, buckets, seconds, "float64")["rate"]
                rates[name].append(rate)
                print(spec, buckets, name, f"{rates[name][-1]:,.2f} it/CPU-s", flush=True)
        before, this = statistics.median(rates["before"]), statistics.median(rates["this"])
        listed = {name: ", ".join(f"{r:,.2f}" for r in values) for name, values in rates.items()}
        lines.append(f"| {spec} | {buckets} | {args.rounds} | {before:,.2f} ({listed['before']}) "
                     f"| {this:,.2f} ({listed['this']}) | **{this / before:.2f}x** |")
        print(lines[-1], flush=True)
    if not args.quick:
        load = os.getloadavg()[0]
        header = (f"## Sampled CFR+ speed, this tree against main (issue 33) — {datetime.date.today()}, "
                  f"load average {load:.1f} at the end\n\n"
                  f"`python benchmarks/bench_sampled_ab.py --before DIR`: float64 CFR+, seed 0, each rate "
                  f"the best of three {seconds / 3:g} CPU-second windows in a fresh process, the two trees "
                  f"alternating round by round.\n\n")
        update_section(DOCS, "sampled-ab", header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
