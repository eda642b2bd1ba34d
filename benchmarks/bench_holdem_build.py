"""The hold'em main job end to end: `efgkit build "holdem(ranks=5)"` with its default card
buckets, timed per step, its exploitability, matches and device bytes recorded.

    python benchmarks/bench_holdem_build.py [--time 120] [--eval-time 300] [--game SPEC]

Writes benchmarks/results/holdem-build.json and the `holdem-build` section of
docs/benchmarks.md. tests/test_build_holdem.py runs a small version (1 s, 3 buckets a street).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from markdown_sections import update_section

ROOT = Path(__file__).resolve().parent.parent


def run(game: str, seconds: float, eval_seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "efgkit", "build", game, "--out", f"{folder}/b",
                               "--time", str(seconds), "--eval-time", str(eval_seconds), "--json"],
                              capture_output=True, text=True, check=True)
        data = json.loads(done.stdout)
        data["wall_seconds"] = time.perf_counter() - started
        data["report"] = Path(f"{folder}/b/report.md").read_text()
    return data


def table(data: dict) -> str:
    evaluation, export = data["evaluation"], data["export"]
    if evaluation["kind"] == "exact":
        measured = f"{evaluation['exploitability_mbb_per_game']:,.1f} mbb/g (exact)"
    else:
        low, high = evaluation["lbr_ci95_mbb"]
        measured = f"LBR {evaluation['lbr_mbb_per_game']:,.1f} mbb/g [{low:,.1f}, {high:,.1f}]"
    matches = ", ".join(f"{m['mbb_per_game']:+,.1f} vs always-{name}" for name, m in data["matches"].items())
    return "\n".join([
        f"`efgkit build \"{data['game']}\" --time {data['solve_seconds_budget']:g} --eval-time "
        f"{data['eval_seconds_budget']:g}` (buckets {'-'.join(map(str, data['buckets']))}):",
        "",
        "| step | result |",
        "|---|---|",
        f"| card buckets | {data['abstraction']['seconds']:.1f} s |",
        f"| sampled CFR+ | {data['iterations']:,} iterations, {data['solve_cpu_seconds']:.1f} CPU s, "
        f"{data['rows']:,} rows |",
        f"| exploitability | {measured}; exact evaluation estimated at "
        f"{evaluation['estimated_exact_seconds']:.0f} CPU s, the evaluation step took "
        f"{evaluation['seconds']:.0f} CPU s |",
        f"| convergence curve | {len(data['history'])} exact points |",
        f"| matches (mbb/g) | {matches} |",
        f"| device files | {export['total_bytes']:,} bytes |",
        f"| whole job | {data['wall_seconds']:.0f} s wall |",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem(ranks=5)")
    parser.add_argument("--time", type=float, default=120.0)
    parser.add_argument("--eval-time", type=float, default=300.0)
    arguments = parser.parse_args()
    data = run(arguments.game, arguments.time, arguments.eval_time)
    results = ROOT / "benchmarks" / "results" / "holdem-build.json"
    results.write_text(json.dumps({k: v for k, v in data.items() if k != "report"}, indent=1) + "\n")
    text = table(data)
    update_section(ROOT / "docs" / "benchmarks.md", "holdem-build", "## The hold'em main job\n\n" + text)
    print(text)


if __name__ == "__main__":
    main()
