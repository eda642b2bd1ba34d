"""Brown & Sandholm's Table 1 shape on a reduced flop hold'em, measured exactly on the poker engine.

For each flop bucket count: a ``--rounds 2`` bucket file (preflop lossless), a blueprint solved by
vector CFR+ on its buckets, then every technique re-solves every subgame after the flop with
both players' hands unabstracted (``resolve.vector_resolver``; one board per suit-isomorphism
class, the bucket blueprint being suit-symmetric) and the combined strategy is evaluated exactly.
Prints and writes JSON; CPU seconds per run and the process's peak RSS so far (``ru_maxrss``:
monotone, so a run's own peak is at most the value shown).

    python benchmarks/bench_resolve_holdem.py --game 'holdem(ranks=5,rounds=2,caps=1-1)' \
        --buckets 10,100 --iterations 30 --out /tmp/resolve-holdem.json
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

TECHNIQUES = (
    ("Unsafe", "unsafe", "br", True),
    ("Resolve", "resolve", "br", True),
    ("Maxmargin", "maxmargin", "br", True),
    ("Reach-Maxmargin", "reach-maxmargin", "br", True),
    ("Reach-Maxmargin (not split)", "reach-maxmargin", "br", False),
    ("Estimated", "resolve", "selfplay", True),
    ("Estimated + Distributional", "distributional-hedge", "selfplay", True),
    ("Reach-Estimated + Distributional", "reach-distributional-hedge", "selfplay", True),
    ("Reach-Estimated + Distributional (not split)", "reach-distributional-hedge", "selfplay", False),
)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(spec: str, flop_buckets: list[int], iterations: int, blueprint_iterations: int, seed: int) -> dict:
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.poker.materialised.vector_cfr import VectorCFR
    from efgkit.resolve.vector_resolver import VectorResolver
    from efgkit.specs import make_game

    game = make_game(spec)
    ranks = game.card_structure.num_ranks
    big_blind = max(game.blinds)
    tree = PublicTree(game)
    results: dict = {"game": game.spec, "iterations": iterations,
                     "blueprint_iterations": blueprint_iterations,
                     "public_nodes": tree.num_nodes, "hands": tree.num_hands, "columns": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for count in flop_buckets:
            path = Path(scratch) / f"b{count}.h5"
            classes = {5: 25, 6: 36}.get(ranks, 169)
            build_abstraction(AbstractionOptions(buckets=(classes, count), rounds=2, bins=8, num_ranks=ranks,
                                                 opponent_clusters=4, seed=seed), path)
            buckets = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, path))
            layout = StrategyLayout.from_bucket_layout(tree, buckets)
            started = time.process_time()
            solver = VectorCFR(tree, layout, variant="cfr+").iterate(blueprint_iterations)
            blueprint = solver.average_strategy()
            column = {"rows": {}, "blueprint_cpu_seconds": time.process_time() - started}
            evaluation = evaluate_strategy(layout, blueprint)
            column["rows"]["Blueprint"] = {"mbb": evaluation.exploitability / big_blind * 1000,
                                           "cpu_seconds": column["blueprint_cpu_seconds"],
                                           "peak_mb": _peak_mb()}
            print(f"{count} buckets  {'Blueprint':30s} {column['rows']['Blueprint']['mbb']:10.2f} mbb/g  "
                  f"{column['blueprint_cpu_seconds']:7.1f} s CPU  peak {_peak_mb():.0f} MB", flush=True)
            for name, gadget, constraints, split in TECHNIQUES:
                started = time.process_time()
                result = VectorResolver(tree, layout, blueprint, gadget=gadget, constraints=constraints,
                                        iterations=iterations, split_gifts=split, isomorphic=True).resolve()
                column["rows"][name] = {"mbb": result.after.exploitability / big_blind * 1000,
                                        "cpu_seconds": time.process_time() - started, "peak_mb": _peak_mb()}
                print(f"{count} buckets  {name:30s} {column['rows'][name]['mbb']:10.2f} mbb/g  "
                      f"{column['rows'][name]['cpu_seconds']:7.1f} s CPU  peak {_peak_mb():.0f} MB",
                      flush=True)
            results["columns"][str(count)] = column
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem(ranks=5,rounds=2,caps=1-1)")
    parser.add_argument("--buckets", default="10,100")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--blueprint-iterations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    results = run(args.game, [int(b) for b in args.buckets.split(",")], args.iterations,
                  args.blueprint_iterations, args.seed)
    text = json.dumps(results, indent=1)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
