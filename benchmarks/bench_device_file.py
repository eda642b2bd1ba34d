"""A 52-card hold'em device file built end to end (issue 31, part 4).

A bucket strategy of ``efgkit solve --engine sampled`` on a pipeline bucket file is exported by
``efgkit export`` with the bucket rule (``--compress-tables`` and ``--compute-buckets``: per
street the smallest of packed table, compressed table and computed description within the
budgets) and its rows packed at 8 bits or modelled (``--model-grid 64 --snap 0.01``). For each
file: its bytes and the export's report per street, the peak RSS of a C process that loads it
and answers decisions (``efgs_time``: the reader, its keys and nothing else), and the time of
one ``efgs_probabilities`` call in C per street — canonical index, bucket (the computed river
enumerates the opponent's hands), row decoding — on random keys, the files interleaved.

    python benchmarks/bench_device_file.py --strategy S.h5 --bucket-file B.h5 --out device.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from bench_compact_holdem import c_times, random_keys

from efgkit.specs import make_game
from efgkit.storage.bucket_strategy import load_bucket_strategy

SETTINGS = {"8 bits, packed": ["--bits", "8"],
            "modelled, grid 1/64, snap 0.01": ["--model-grid", "64", "--snap", "0.01"]}
STREETS = ("preflop", "flop", "turn", "river")


def export(strategy: Path, buckets: Path, out: Path, options: list[str], hands: int, evals: int) -> dict:
    """``efgkit export`` with the bucket rule; its --json report, the wall seconds added."""
    started = time.perf_counter()
    result = subprocess.run(["efgkit", "export", str(strategy), "-o", str(out), "--buckets", str(buckets),
                             "--compress-tables", str(hands), "--compute-buckets", str(evals), *options,
                             "--json"], capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    report["export_seconds"] = time.perf_counter() - started
    return report


def peak_rss_kib(timer: Path, path: Path, keys: list[str]) -> int:
    """Peak RSS (KiB) of the C timer loading ``path`` and answering ``keys``."""
    text = "# all\n" + "".join(f"{key}\n" for key in keys)
    result = subprocess.run(["/usr/bin/time", "-f", "%M", str(timer), str(path)], input=text,
                            capture_output=True, text=True, check=True)
    return int(result.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="HULHE")
    parser.add_argument("--strategy", required=True, type=Path)
    parser.add_argument("--bucket-file", required=True, type=Path)
    parser.add_argument("--compress-tables", type=int, default=64)
    parser.add_argument("--compute-buckets", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    layout, _, provenance, _ = load_bucket_strategy(args.strategy, make_game(args.spec), args.bucket_file)
    results: dict = {"game": args.spec, "strategy": str(args.strategy), "actions": int(layout.num_actions),
                     "iterations": provenance.get("iterations"), "settings": {}}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        files = []
        for name, options in SETTINGS.items():
            path = work / f"{len(files)}.efgs"
            report = export(args.strategy, args.bucket_file, path, options, args.compress_tables,
                            args.compute_buckets)
            results["settings"][name] = {"file_bytes": path.stat().st_size, "export": report}
            files.append(path)
            print(f"{name}: {path.stat().st_size:,} bytes, exported in {report['export_seconds']:.0f} s",
                  flush=True)
        groups = {street: random_keys(layout, args.keys, (r,), seed=r) for r, street in enumerate(STREETS)}
        times = c_times(files, groups, work)
        timer = work / "efgs_time"  # built by c_times
        for f, name in enumerate(SETTINGS):
            setting = results["settings"][name]
            setting["c_decision_us"] = {street: times[f, street] / 1000 for street in STREETS}
            setting["c_peak_rss_kib"] = peak_rss_kib(timer, files[f], groups["river"])
            shown = ", ".join(f"{s} {v:.2f}" for s, v in setting["c_decision_us"].items())
            rss = setting["c_peak_rss_kib"] / 1024
            print(f"{name}: C decision us {shown}; C process peak RSS {rss:.1f} MiB", flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
