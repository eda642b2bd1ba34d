"""What re-solving every subgame after the turn (or the flop) of a game costs, from measured flops.

For games whose whole re-solve does not fit a session here (52-card turn hold'em): each technique
of Brown & Sandholm's tables re-solves the subgames of a few canonical flops, spread over the
canonical list, and the combined strategy's values on them are computed as
``StreamedResolver.resolve`` computes them (``flop_values``; the reach techniques first gather
their gift totals on the same flops, ``flop_gift_totals``: wrong totals for the whole game, the
same work). The blueprint is a random strategy on hashed suit-symmetric buckets
(``bench_full_game.setup``): a gadget's work and the walks' do not depend on its values. CPU
seconds per flop are taken as proportional to the boards the cut round deals below the flop (one
per suit class: ``bench_full_game.board_counts``), so the whole game's CPU time is the sample's
CPU per board times every flop's boards. The blueprint's own evaluation (three streamed walks per
flop) is a row too; building buckets and solving the blueprint are not included. Kernels are
compiled (or loaded) on one flop of ``--warm-up`` first.

    python benchmarks/bench_resolve_cost.py --game 'holdem(rounds=3,caps=1-1-1)' --sample 3 \\
        --out benchmarks/results/resolve-cost-turn52.json
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np
from bench_full_game import board_counts, sample_picks, setup
from bench_resolve_holdem import TECHNIQUES

from efgkit.poker.codes import BEST_RESPONSE, EXPECTED
from efgkit.resolve.gadgets import REACH_GADGETS
from efgkit.resolve.streamed_resolver import StreamedResolver
from efgkit.specs import make_game

WALKS = ((0, BEST_RESPONSE), (1, BEST_RESPONSE), (0, EXPECTED))
"""The three walks of an exact evaluation: both players' best responses and player 0's value."""


def technique_seconds(spec: str, buckets: tuple[int, ...], technique: tuple, iterations: int,
                      round_number: int, picks: list[int]) -> list[float]:
    """CPU seconds of ``technique`` (a row of ``TECHNIQUES``) on each flop of ``picks``: its gift
    totals (reach techniques) and its ``flop_values``."""
    _, gadget, constraints, split = technique
    evaluator, strategy = setup(spec, buckets)
    resolver = StreamedResolver(evaluator.layout, strategy, gadget=gadget, constraints=constraints,
                                iterations=iterations, split_gifts=split, round_number=round_number)
    seconds = [0.0] * len(picks)
    if gadget in REACH_GADGETS:
        totals = []
        for k, item in enumerate(picks):
            started = time.process_time()
            totals.append(resolver.flop_gift_totals(item))
            seconds[k] += time.process_time() - started
        resolver.gather_gifts(totals)
    for k, item in enumerate(picks):
        started = time.process_time()
        resolver.flop_values(item)
        seconds[k] += time.process_time() - started
    return seconds


def evaluation_seconds(spec: str, buckets: tuple[int, ...], picks: list[int]) -> list[float]:
    """CPU seconds of the blueprint's exact evaluation (``WALKS``) on each flop of ``picks``."""
    evaluator, strategy = setup(spec, buckets)
    reach = [evaluator.entry_reach(strategy, player) for player in (0, 1)]
    seconds = []
    for item in picks:
        started = time.process_time()
        for player, mode in WALKS:
            evaluator.item_values(strategy, player, mode, reach[player], item)
        seconds.append(time.process_time() - started)
    return seconds


def run(spec: str, buckets: tuple[int, ...], round_number: int, sample: int, iterations: int, warm_up: str,
        techniques: list[str], out: Path | None) -> dict:
    flops, boards = board_counts(spec)
    per_flop = boards[:, round_number - 3] if round_number > 2 else np.ones(len(flops), np.int64)
    picks = sample_picks(len(flops), sample)
    results = {"game": spec, "buckets": list(buckets), "round": round_number, "iterations": iterations,
               "flops": len(flops),
               "sample": [list(flops[i]) for i in picks], "boards_per_flop_sample": per_flop[picks].tolist(),
               "boards_all_flops": int(per_flop.sum()), "rows": {}}
    rows = [("Blueprint evaluation", None)] + [(t[0], t) for t in TECHNIQUES if t[0] in techniques]
    for name, technique in rows:
        if technique is None:
            evaluation_seconds(warm_up, buckets, [0])
            seconds = evaluation_seconds(spec, buckets, picks)
        else:
            technique_seconds(warm_up, buckets, technique, iterations, round_number, [0])
            seconds = technique_seconds(spec, buckets, technique, iterations, round_number, picks)
        per_board = sum(seconds) / per_flop[picks].sum()
        results["rows"][name] = {"seconds": seconds, "cpu_hours": per_board * per_flop.sum() / 3600}
        print(f"{name:45s} {', '.join(f'{s:.1f}' for s in seconds)} CPU s per flop; "
              f"whole game {results['rows'][name]['cpu_hours']:.2f} CPU h", flush=True)
        results["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if out is not None:
            out.write_text(json.dumps(results, indent=1))
    return results


def markdown(results: dict) -> str:
    pairs = zip(results["sample"], results["boards_per_flop_sample"], strict=True)
    sample = ", ".join(f"{tuple(f)} ({b} boards)" for f, b in pairs)
    lines = [f"| technique | CPU s per flop: {sample} | whole game, CPU hours | on 2 cores, hours |",
             "|---|---|---:|---:|"]
    for name, row in results["rows"].items():
        lines.append(f"| {name} | {', '.join(f'{s:.1f}' for s in row['seconds'])} | "
                     f"{row['cpu_hours']:.2f} | {row['cpu_hours'] / 2:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem(rounds=3,caps=1-1-1)")
    parser.add_argument("--round", type=int, default=None, help="the cut: 2 after the flop, 3 after the turn "
                                                                "(default: the game's last round)")
    parser.add_argument("--buckets", default="169,1000,1000",
                        help="hashed buckets per round of the random blueprint (its first ROUNDS counts)")
    parser.add_argument("--sample", type=int, default=3, help="canonical flops measured")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warm-up", default="holdem(ranks=5,rounds=3,caps=1-1-1)")
    parser.add_argument("--techniques", default=",".join(t[0] for t in TECHNIQUES))
    parser.add_argument("--out", default=None)
    parser.add_argument("--markdown", default=None, metavar="JSON", help="print the table of a run's JSON")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())))
        return
    game = make_game(args.game)
    buckets = tuple(int(b) for b in args.buckets.split(","))[:game.num_rounds]
    results = run(args.game, buckets, args.round or game.num_rounds, args.sample, args.iterations,
                  args.warm_up, args.techniques.split(","), Path(args.out) if args.out else None)
    print(markdown(results))


if __name__ == "__main__":
    main()
