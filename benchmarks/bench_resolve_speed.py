"""Re-solving speed on the poker engine: an interleaved A/B of source trees (issue 29).

Each run is a child process with ``PYTHONPATH`` at one tree (numba caches by source path): the public tree
and lossless layout of ``--game``, a blueprint (``--blueprint-iterations`` of vector CFR+,
deterministic), then ``VectorResolver(...).resolve()`` with ``--gadget`` and ``--iterations`` per
gadget, over every subgame or the first ``--roots`` of them per player (for a tree too slow to
re-solve them all). The trees alternate (A, B, A, B, ...) after one warm-up run each that compiles
or loads the kernels; reported per run: the child's CPU seconds of ``resolve()`` (the machine is
shared; wall time moves with the load), its peak RSS, NashConv after and a digest of the combined
strategy (equal digests: bit-identical results).

    python benchmarks/bench_resolve_speed.py --tree main=/path/to/main --tree new=. \\
        --game 'holdem(ranks=3,rounds=2)' --gadget resolve --iterations 30 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import hashlib, json, resource, time
import numpy as np
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import VectorCFR
from efgkit.resolve.vector_resolver import VectorResolver
from efgkit.specs import make_game
args = json.loads({args!r})
tree = PublicTree(make_game(args["game"]))
layout = StrategyLayout.lossless(tree)
blueprint = VectorCFR(tree, layout).iterate(args["blueprint_iterations"]).average_strategy()
extra = {{"isomorphic": True}} if args["isomorphic"] else {{}}
resolver = VectorResolver(tree, layout, blueprint, gadget=args["gadget"], constraints=args["constraints"],
                          iterations=args["iterations"], split_gifts=args["split"], **extra)
if args["roots"]:
    resolver.roots = resolver.roots[:args["roots"]]
started = time.process_time()
result = resolver.resolve()
classes = resolver.__dict__.get("classes")
solved = len(resolver.roots if classes is None else classes.representatives)
print(json.dumps({{"cpu_seconds": time.process_time() - started, "nash_conv_after": result.after.nash_conv,
                  "subgames": solved * (1 if args["gadget"] == "unsafe" else 2),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "digest": hashlib.sha256(result.strategy.tobytes()).hexdigest()[:16]}}))
"""


def run_child(tree: Path, args: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD.format(args=json.dumps(args))], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree")
    parser.add_argument("--game", default="holdem(ranks=3,rounds=2)")
    parser.add_argument("--gadget", default="resolve")
    parser.add_argument("--constraints", default="br")
    parser.add_argument("--no-split", action="store_true")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--blueprint-iterations", type=int, default=10)
    parser.add_argument("--roots", type=int, default=0, help="re-solve only the first ROOTS subgames")
    parser.add_argument("--isomorphic", action="store_true",
                        help="one board per suit-isomorphism class (trees that have it; not with --roots)")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    trees = {name: Path(path).resolve() for name, path in (t.split("=", 1) for t in options.tree)}
    args = {"game": options.game, "gadget": options.gadget, "constraints": options.constraints,
            "split": not options.no_split, "iterations": options.iterations,
            "blueprint_iterations": options.blueprint_iterations, "roots": options.roots,
            "isomorphic": options.isomorphic}
    for tree in trees.values():
        run_child(tree, {**args, "roots": 2, "iterations": 2, "isomorphic": False})  # compile or load kernels
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(options.repeats):
        for name, tree in trees.items():
            runs[name].append(run_child(tree, args))
            print(name, json.dumps(runs[name][-1]), flush=True)
    first = next(iter(trees))
    summary = {"arguments": args, "runs": runs, "median_cpu_seconds": {}, "ratio_to_" + first: {}}
    for name in trees:
        summary["median_cpu_seconds"][name] = statistics.median(r["cpu_seconds"] for r in runs[name])
        summary["ratio_to_" + first][name] = (summary["median_cpu_seconds"][first]
                                              / summary["median_cpu_seconds"][name])
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
