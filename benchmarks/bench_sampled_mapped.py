"""Sampled CFR with its arrays in memory against memory-mapped in a working file (--mapped).

Measures (issue 14, docs/holdem.md section "mapped-state"): for one abstraction with a large
solver state, per storage: the peak resident set (``VmHWM``) of a child process after the
iterations and after writing a checkpoint (the state file), and CFR+ iterations per CPU
second (``time.process_time``, the best of three windows; the machine is shared). The mapped
run drops its resident pages after every chunk of iterations, as ``efgkit solve --mapped``
does. Each storage runs once in its own child, memory first (a second pair would double the
minutes; the two differ by far more than the machine's noise in RSS).

Run ``python benchmarks/bench_sampled_mapped.py`` (writes the section; minutes) or with
``--quick`` for a seconds-long smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
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

CHILD = """
import json, sys, time
from efgkit.cli.streamed import write_sampled
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.bucket_layout import BucketLayout
from efgkit.poker.card_abstraction import IsomorphicCards
from efgkit.poker.sampled_cfr import SampledCFR
from efgkit.specs import make_game
from efgkit.storage.disk_solve import current_rss, peak_rss
from efgkit.storage.sampled_working import WorkingFile
spec, buckets, precision, seconds, storage, state = sys.argv[1:7]
game = make_game(spec)
layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, json.loads(buckets), seed=0))
working = WorkingFile(state) if storage == "mapped" else None
solver = SampledCFR(layout, seed=0, precision=precision, allocate=working and working.allocate).iterate(2)
if working:
    working.release()
rate, done = 0.0, 0
for window in range(3):
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
print(json.dumps({"actions": layout.num_actions, "state_bytes": solver.memory()["state"],
                  "working_bytes": solver.memory()["working"], "iterations_per_cpu_second": rate,
                  "iterations": done, "solving_peak_rss": solving_peak, "checkpoint_peak_rss": peak_rss()}))
if working:
    working.remove()
"""


def measure(run, storage: str, directory: str) -> dict:
    spec, buckets, precision, seconds = run
    state = Path(directory) / f"{storage}.h5"
    state.unlink(missing_ok=True)
    out = subprocess.run([sys.executable, "-c", CHILD, spec, json.dumps(buckets), precision, str(seconds),
                          storage, str(state)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--directory", default=None, help="where the state and working files go")
    args = parser.parse_args()
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
    lines = [f"Measured {datetime.date(2026, 11, 24)} by benchmarks/bench_sampled_mapped.py: CFR+ on {spec}, "
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
