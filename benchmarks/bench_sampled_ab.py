"""Sampled CFR+ CPU time per iteration: this tree against another, interleaved (issue 33).

Runs ``bench_sampled.cpu_per_iteration`` (float64 CFR+, seed 0, in a fresh process with its
own PYTHONPATH: N iterations so every page of the state is touched, then N more timed) for
each game, alternating the two trees round by round so the load of the shared machine hits
both alike, and reports per game the median CPU seconds per iteration of each tree and their
ratio (target: 5x on HULHE hashed 169-1000-1000-1000 and holdem(ranks=5)). Both trees walk
the same boards: a board's cost varies with its cards, so windows of a few seconds (each on
other boards) moved the rate of one tree by 30% on HULHE-1000 (docs/benchmarks.md).

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

from bench_sampled import cpu_per_iteration
from markdown_sections import update_section
from refactor_ab import tree_description

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
RUNS = (("holdem(ranks=5)", "none", 300), ("holdem", "hashed 10-10-10-10", 12),
        ("holdem", "hashed 169-1000-1000-1000", 12))
"""(game, card abstraction, N): N iterations warm, N timed (a few CPU seconds each)."""


def _revision(tree: str) -> str:
    """``tree``'s commit (short) as ``refactor_ab.tree_description`` finds it, "+ changes" when
    tracked files differ from it; "unknown" outside git."""
    described = tree_description(Path(tree))
    return (described["commit"][:7] or "unknown") + (" + changes" if described["modified"] else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", required=True,
                        help="the efgkit source tree to compare with")
    parser.add_argument("--name", default=None,
                        help="what docs/benchmarks.md calls that tree, e.g. its commit (default: DIR)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per game (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="seconds-long smoke run on Leduc; writes nothing")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"this": here, "before": args.before}
    lines = ["| game | card abstraction | N | rounds | before: CPU s per iteration (median) | "
             "this: CPU s per iteration (median) | before / this |", "|---|---|---:|---:|---:|---:|---:|"]
    for spec, buckets, iterations in (("leduc", "lossless", 200),) if args.quick else RUNS:
        seconds = {name: [] for name in trees}
        for round_ in range(args.rounds):
            order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
            for name in order:
                seconds[name].append(cpu_per_iteration(trees[name], spec, buckets, iterations, "float64"))
                print(spec, buckets, name, f"{seconds[name][-1]:.4g} CPU-s per iteration", flush=True)
        before, this = statistics.median(seconds["before"]), statistics.median(seconds["this"])
        listed = {name: ", ".join(f"{s:.4g}" for s in values) for name, values in seconds.items()}
        lines.append(f"| {spec} | {buckets} | {iterations} | {args.rounds} | "
                     f"{before:.4g} ({listed['before']}) | {this:.4g} ({listed['this']}) | "
                     f"**{before / this:.2f}x** |")
        print(lines[-1], flush=True)
    if not args.quick:
        load = os.getloadavg()[0]
        header = (f"## Sampled CFR+ speed, this tree against another (issue 33) — {datetime.date.today()}, "
                  f"load average {load:.1f} at the end\n\n"
                  f"`python benchmarks/bench_sampled_ab.py --before DIR` with DIR "
                  f"{args.name or args.before}, this tree {_revision(here)}: float64 CFR+, seed 0, in a "
                  f"fresh process per measurement: N iterations, then the CPU seconds of N more (the same "
                  f"boards in both trees), the two trees alternating round by round.\n\n")
        update_section(DOCS, "sampled-ab", header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
