"""Start-up and first-run cost of the efgkit command: ``--help``, ``games`` and a solve of
Leduc on an empty numba cache (every kernel compiled), on a warm one, and as the first run
after ``efgkit warm-up`` (the README's set-up command, which compiles the kernels at
install; its own cost is a row too); with ``--engines`` also the first solve of each poker
engine (``--engine public-tree``, ``--engine sampled``).

Each measurement runs the command in a fresh process (``python -c "from efgkit.cli import
main; main()"`` with ``PYTHONPATH`` at the tree measured) and keeps the best of the runs:
wall seconds, and CPU seconds of the process (user + system), which a busy shared machine
disturbs less. A cold run gets its own empty ``NUMBA_CACHE_DIR``; the kernels it compiles
are counted from the cache index files it leaves. ``--reference DIR`` measures another
checkout (e.g. ``git archive main``) in the same run, interleaved, for a before/after
table. Writes the ``startup`` section of docs/benchmarks.md; ``--quick`` is a smoke run
that prints the table and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from markdown_sections import update_section

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
LAUNCH = "from efgkit.cli import main; main()"


def run_command(tree: Path, arguments: list[str], cache_dir: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``efgkit ARGUMENTS`` process on ``tree``."""
    environment = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": cache_dir}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Run in ``tree``: ``python -c`` puts the working directory before PYTHONPATH, so from
    # another checkout both columns would measure that one.
    subprocess.run([sys.executable, "-c", LAUNCH, *arguments], env=environment, check=True, cwd=tree,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(trees: dict[str, Path], solves: dict[str, list[str]], repeats: int, cold_repeats: int,
            warm_up: list[str]) -> dict:
    """Best (wall, cpu) per tree and case, the cases interleaved across trees. ``solves``: the
    first-solve commands run on an empty cache, by case name (the first also warm)."""
    best: dict[tuple[str, str], tuple[float, float]] = {}
    kernels: dict[tuple[str, str], int] = {}
    solve = next(iter(solves.values()))

    def keep(label: str, case: str, result: tuple[float, float]) -> None:
        old = best.get((label, case), (float("inf"), float("inf")))
        best[label, case] = (min(old[0], result[0]), min(old[1], result[1]))

    with tempfile.TemporaryDirectory() as scratch:
        for attempt in range(cold_repeats):
            for case, arguments in solves.items():
                for label, tree in trees.items():
                    cache = os.path.join(scratch, f"cold-{label}-{case}-{attempt}")
                    keep(label, case, run_command(tree, arguments, cache))
                    kernels[label, case] = sum(name.endswith(".nbi") for _, _, names in os.walk(cache)
                                               for name in names)
        # the warm cache: the one the first cold run of ``solve`` filled (filling another costs
        # as much as that run)
        first = next(iter(solves))
        warm_caches = {label: os.path.join(scratch, f"cold-{label}-{first}-0") for label in trees}
        for _ in range(repeats):
            for label, tree in trees.items():
                keep(label, "--help", run_command(tree, ["--help"], warm_caches[label]))
                keep(label, "games", run_command(tree, ["games"], warm_caches[label]))
                keep(label, "solve, warm cache", run_command(tree, solve, warm_caches[label]))
        for attempt in range(cold_repeats):  # the install's warm-up, then each first solve
            for label, tree in trees.items():
                if not (tree / "efgkit" / "cli" / "warm_up.py").exists():
                    continue
                cache = os.path.join(scratch, f"warm-up-{label}-{attempt}")
                keep(label, "warm-up", run_command(tree, warm_up, cache))
                for case, arguments in solves.items():
                    keep(label, f"{case}, after warm-up", run_command(tree, arguments, cache))
    return {"best": best, "kernels": kernels, "warm_up": warm_up}


def table(trees: dict[str, Path], solves: dict[str, list[str]], result: dict) -> str:
    labels = list(trees)
    solve = next(iter(solves.values()))
    header = "| command | " + " | ".join(f"{label}: wall s (CPU s)" for label in labels) + " |"
    lines = [header, "|---|" + "---|" * len(labels)]
    rows = {"--help": "efgkit --help", "games": "efgkit games",
            "solve, warm cache": f"efgkit {' '.join(solve)} (warm cache)"}
    rows.update({case: f"efgkit {' '.join(arguments)} (empty cache)" for case, arguments in solves.items()})
    rows["warm-up"] = f"efgkit {' '.join(result['warm_up'])} (empty cache; the set-up command runs it)"
    rows.update({f"{case}, after warm-up": f"efgkit {' '.join(arguments)} (first run after the warm-up)"
                 for case, arguments in solves.items()})
    for case, command in rows.items():
        cells = [f"{result['best'][label, case][0]:.2f} ({result['best'][label, case][1]:.2f})"
                 if (label, case) in result["best"] else "-" for label in labels]
        lines.append(f"| {command} | " + " | ".join(cells) + " |")
    for case, arguments in solves.items():
        lines.append(f"| kernels compiled by `efgkit {' '.join(arguments)}` | "
                     + " | ".join(str(result["kernels"][label, case]) for label in labels) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="another checkout to measure alongside")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each warm case (best kept)")
    parser.add_argument("--cold-repeats", type=int, default=3, help="runs on an empty cache (best kept)")
    parser.add_argument("--engines", action="store_true",
                        help="also the first solve of the poker engines (public-tree, sampled)")
    parser.add_argument("--quick", action="store_true", help="smoke run on Kuhn, prints only")
    args = parser.parse_args()
    trees = {"this tree": ROOT}
    if args.reference is not None:
        trees = {"reference": args.reference.resolve(), **trees}
    solve = ["solve", "kuhn", "-n", "10"] if args.quick else ["solve", "leduc", "-n", "100"]
    solves = {"solve, empty cache": solve}
    if args.engines:
        solves["public-tree"] = [*solve, "--engine", "public-tree"]
        solves["sampled"] = ["solve", "holdem(ranks=5,rounds=2)", "-n", "100", "--engine", "sampled",
                             "--buckets", "canonical"]
    repeats, cold_repeats = (1, 1) if args.quick else (args.repeats, args.cold_repeats)
    load_before = os.getloadavg()[0]
    warm_up = ["warm-up", "--only", "solve"] if args.quick else ["warm-up"]
    result = measure(trees, solves, repeats, cold_repeats, warm_up)
    command = ("python benchmarks/bench_startup.py" + (" --engines" if args.engines else "")
               + (" --reference REF" if args.reference else ""))
    text = "\n".join([
        "## Start-up and first run",
        "",
        f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.machine()}, {os.cpu_count()} cores, load average {load_before:.1f} at the start "
        f"(the machine is shared: wall seconds grow with the load, CPU seconds much less).",
        "",
        f"Best of {repeats} runs (warm) and {cold_repeats} (empty numba cache), each a fresh process.",
        "",
        table(trees, solves, result),
    ])
    print(text)
    if not args.quick:
        update_section(DOCS, "startup", text)


if __name__ == "__main__":
    main()
