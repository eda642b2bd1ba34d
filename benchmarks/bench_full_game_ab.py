"""Full-game best response CPU time per flop: this tree against another, interleaved (issue 33).

Each measurement is a fresh process with the tree's own PYTHONPATH and numba cache: both
players' best-response walks (``StreamedEvaluator.item_values``) on the chosen canonical flops
of ``holdem(ranks=8)`` (64-300-300-300 random buckets, as ``bench_full_game.py``), CPU
seconds of the process, after one warm-up flop. The trees alternate round by round so the
load of the shared machine hits both alike; the item values of every flop are compared
between the trees (largest difference relative to the largest value).

Strategies: ``random`` (every probability > 0: nothing to prune, the benchmark's worst case)
and ``sparse`` (the same with one action of about half the rows set to 0: the opponent's
zero-reach subtrees, what pruning skips).

Run ``python benchmarks/bench_full_game_ab.py --before DIR`` (DIR an efgkit source tree, e.g.
a checkout of main); ``--quick`` walks one small flop.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SPEC, BUCKETS = "holdem(ranks=8)", (64, 300, 300, 300)
QUICK = "holdem(ranks=5)", (10, 20, 20, 20)


def sparse(strategy: np.ndarray, layout, seed: int) -> np.ndarray:
    """``strategy`` with one action of about half of its rows set to 0 (rows renormalised)."""
    rng = np.random.default_rng(seed)
    out = strategy.copy()
    for d in range(layout.width.shape[0]):
        rows = out[layout.action_start[d]:layout.action_start[d + 1]].reshape(-1, layout.width[d])
        hit = rng.random(rows.shape[0]) < 0.5
        rows[hit, rng.integers(0, layout.width[d], rows.shape[0])[hit]] = 0.0
        rows /= rows.sum(axis=1, keepdims=True)
    return out


def measure(spec: str, buckets: tuple[int, ...], kind: str, items: list[int], out: str) -> None:
    """In the child process: CPU seconds of both players' walks per flop, values saved to ``out``."""
    import time

    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.codes import BEST_RESPONSE
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.specs import make_game

    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, buckets, seed=1))
    evaluator = StreamedEvaluator(layout)
    strategy = layout.random(2)
    if kind == "sparse":
        strategy = sparse(strategy, layout, 3)
    reach = [evaluator.entry_reach(strategy, player) for player in (0, 1)]
    for player in (0, 1):  # warm-up: the kernels compiled or loaded
        evaluator.item_values(strategy, player, BEST_RESPONSE, reach[player], items[0])
    seconds, values = [], []
    for item in items:
        start = time.process_time()
        for player in (0, 1):
            values.append(evaluator.item_values(strategy, player, BEST_RESPONSE, reach[player], item))
        seconds.append(time.process_time() - start)
    np.save(out, np.stack(values))
    print(json.dumps({"seconds": seconds}))


def run(tree: str, cache: str, spec: str, buckets, kind: str, items: list[int], out: str) -> list[float]:
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            f"import bench_full_game_ab as b; "
            f"b.measure({spec!r}, {tuple(buckets)!r}, {kind!r}, {items!r}, {out!r})")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="DIR", required=True,
                        help="the efgkit source tree to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--items", default="0", help="canonical flop indices, comma-separated (default 0)")
    parser.add_argument("--kinds", default="random,sparse", help="strategies (default random,sparse)")
    parser.add_argument("--scratch", default=None,
                        help="directory for the numba caches and values (default: a new temporary one)")
    parser.add_argument("--quick", action="store_true", help="one small flop, one round")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"this": here, "before": args.before}
    spec, buckets = QUICK if args.quick else (SPEC, BUCKETS)
    items = [int(x) for x in args.items.split(",")]
    scratch = args.scratch or tempfile.mkdtemp(prefix="full-game-ab-")
    caches = {name: os.path.join(scratch, f"numba-{name}") for name in trees}
    for kind in args.kinds.split(","):
        cpu = {name: [] for name in trees}
        for round_ in range(1 if args.quick else args.rounds):
            for name in (list(trees) if round_ % 2 == 0 else list(trees)[::-1]):
                out = os.path.join(scratch, f"{kind}-{name}.npy")
                cpu[name].append(sum(run(trees[name], caches[name], spec, buckets, kind, items, out)))
                print(f"{kind} {name}: {cpu[name][-1]:.2f} CPU-s, load {os.getloadavg()[0]:.1f}", flush=True)
        a, b = (np.load(os.path.join(scratch, f"{kind}-{name}.npy")) for name in ("before", "this"))
        difference = float(np.abs(a - b).max() / np.abs(a).max())
        before, this = statistics.median(cpu["before"]), statistics.median(cpu["this"])
        print(f"| {spec} | {kind} | flops {items} | before {before:.2f} ({cpu['before']}) | this {this:.2f} "
              f"({cpu['this']}) | before/this {before / this:.2f}x | largest relative difference "
              f"{difference:.1e} |", flush=True)


if __name__ == "__main__":
    main()
