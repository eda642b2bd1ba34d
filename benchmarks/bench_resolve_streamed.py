"""Brown & Sandholm's Table 1 on 52-card limit flop hold'em: streamed re-solving, exact evaluation.

For each blueprint (a bucket strategy of ``efgkit solve --engine sampled`` on a ``--rounds 2``
bucket file): its exact exploitability in the full game (``StreamedEvaluator``), then every
technique re-solves every subgame right after the flop, one flop per suit class, both players'
hands unabstracted (``resolve.streamed_resolver``), and the combined strategy is evaluated
exactly. Each run's CPU seconds (this process and the Dask workers), peak RSS (this process and
the largest worker's, monotone over the workers' lives) and the bytes of the unabstracted
strategy it never stores. ``--gift-bound min-payoff`` runs the reach techniques with Brown &
Sandholm's lower-bound gifts (rows named "... (min-payoff)", with flop 0's total gift under both
bounds, from the same run's totals). Results are appended to ``--out`` (JSON) after every run, so a stopped
run keeps what it measured; ``--table`` prints the markdown table of such a file.

    python benchmarks/bench_resolve_streamed.py --game 'holdem(rounds=2,caps=1-1)' \
        --blueprints b200.h5,b2000.h5 --iterations 30 --workers 2 --out resolve-52.json
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from bench_resolve_holdem import TECHNIQUES


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu(runner) -> float:
    return _cpu_seconds() + sum(runner.on_workers(_cpu_seconds))


def _gift_sizes(resolver) -> dict:
    """Per re-solver: flop 0's gifts summed over its roots and the opponent's hands under the run's
    bound and under cbv (the same totals), and per unit of the opponent's entering reach."""
    tree = resolver.flop_tree(0)
    one_flop, source = resolver.resolver(tree), resolver.gifts
    sizes = {}
    for player in (0, 1):
        ranges = one_flop.values.ranges(one_flop.roots, player, one_flop.constraints)
        bound = source(one_flop, ranges)
        alternatives, source.alternatives = source.alternatives, source.best
        cbv = source(one_flop, ranges)
        source.alternatives = alternatives
        reach = float(ranges.element_reach.sum())
        sizes[player] = {"roots": int(ranges.nodes.shape[0]), "reach": reach,
                         "min_payoff_total": float(bound.sum()), "cbv_total": float(cbv.sum()),
                         "min_payoff_per_reach": float(bound.sum()) / reach,
                         "cbv_per_reach": float(cbv.sum()) / reach,
                         "min_payoff_positive": int((bound > 0).sum()), "cbv_positive": int((cbv > 0).sum())}
    return sizes


def run(spec: str, blueprints: list[str], iterations: int, workers: int, techniques: list[str],
        out: Path, gift_bound: str = "cbv") -> dict:
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.resolve.streamed_resolver import StreamedResolver
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    game = make_game(spec)
    big_blind = max(game.blinds)
    results = json.loads(out.read_text()) if out.exists() else {"game": game.spec, "iterations": iterations,
                                                                "columns": {}}
    with ChunkRunner(workers=workers) as runner:
        for path in blueprints:
            buckets, strategy, provenance, _ = load_bucket_strategy(path, game)
            key = buckets.abstraction.description
            column = results["columns"].setdefault(key, {"blueprint": path, "rows": {}})
            column["abstract_exploitability_mbb"] = provenance.get("history", [{}])[-1].get(
                "abstract_exploitability_mbb_per_game") if provenance.get("history") else None
            started = _cpu(runner)
            before = StreamedEvaluator(buckets).evaluate(buckets.checked(strategy), runner=runner)
            column["rows"]["Blueprint"] = {"mbb": before.exploitability / big_blind * 1000,
                                           "cpu_seconds": _cpu(runner) - started, "peak_mb": _peak_mb(),
                                           "nash_conv": before.nash_conv}
            print(f"{key}  Blueprint {column['rows']['Blueprint']['mbb']:.3f} mbb/g", flush=True)
            for name, gadget, constraints, split in TECHNIQUES:
                if name not in techniques:
                    continue
                name = name if gift_bound == "cbv" else f"{name} ({gift_bound})"
                if name in column["rows"]:
                    continue
                started, wall = _cpu(runner), time.perf_counter()
                resolver = StreamedResolver(buckets, strategy, gadget=gadget, constraints=constraints,
                                            iterations=iterations, split_gifts=split, isomorphic=True,
                                            gift_bound=gift_bound)
                result = resolver.resolve(runner, before=before)
                column["rows"][name] = {
                    "mbb": result.after.exploitability / big_blind * 1000,
                    "nash_conv": result.after.nash_conv,
                    "cpu_seconds": _cpu(runner) - started, "wall_seconds": time.perf_counter() - wall,
                    "peak_mb": result.peak_rss / 2**20,
                    "worker_peak_mb": max(result.worker_peak_rss, default=0) / 2**20,
                    "flops": result.flops, "gadgets": result.gadgets,
                    "unabstracted_bytes": result.unabstracted_bytes}
                row = column["rows"][name]
                if resolver.gifts is not None and gift_bound != "cbv":
                    row["gift_sizes_flop0"] = _gift_sizes(resolver)
                print(f"{key}  {name:45s} {row['mbb']:9.3f} mbb/g  {row['cpu_seconds']:7.1f} CPU s  "
                      f"peak {row['peak_mb']:.0f} / worker {row['worker_peak_mb']:.0f} MB", flush=True)
                out.write_text(json.dumps(results, indent=1))
    return results


def table(results: dict) -> str:
    """The markdown table: rows the techniques, columns the blueprints."""
    columns = list(results["columns"].items())
    lines = ["| Technique | " + " | ".join(f"{k}: mbb/g (CPU s, peak MB)" for k, _ in columns) + " |",
             "|---|" + "---|" * len(columns)]
    names = ["Blueprint", *(t[0] for t in TECHNIQUES)]
    names += [n for _, column in columns for n in column["rows"] if n not in names]
    for name in dict.fromkeys(names):
        cells = []
        for _, column in columns:
            row = column["rows"].get(name)
            cells.append("not run" if row is None else
                         f"{row['mbb']:.2f} ({row['cpu_seconds']:.0f} s, "
                         f"{max(row['peak_mb'], row.get('worker_peak_mb', 0)):.0f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem(rounds=2,caps=1-1)")
    parser.add_argument("--blueprints", default="")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--techniques", default=",".join(t[0] for t in TECHNIQUES),
                        help="comma-separated technique names (default: every row of Table 1)")
    parser.add_argument("--gift-bound", choices=("cbv", "min-payoff"), default="cbv",
                        help="the reach techniques' gift bound (min-payoff rows are named so)")
    parser.add_argument("--out", default="resolve-streamed.json")
    parser.add_argument("--table", action="store_true", help="print the table of --out and stop")
    args = parser.parse_args()
    out = Path(args.out)
    if args.table:
        print(table(json.loads(out.read_text())))
        return
    results = run(args.game, [b for b in args.blueprints.split(",") if b], args.iterations, args.workers,
                  args.techniques.split(","), out, args.gift_bound)
    print(table(results))


if __name__ == "__main__":
    main()
