"""How tight the post-flop best response over sampled flops is (``evaluate --sample-flops``).

On reduced hold'em games where the exact best response is affordable: a CFR+ strategy (public
chance sampling, random suit-symmetric buckets or canonical hands, ``bench_lbr.solved``) at two
iteration counts; per strategy the exact exploitability, the post-flop bound with every flop
(exact: the responder restricted to the strategy's own pre-flop play), its estimate from K
sampled flops with the 95% interval (seeds 0-2), and local best response over every board — all in
mbb/g, CPU seconds beside. Writes the "postflop-bound" section of docs/benchmarks.md.

    python benchmarks/bench_postflop_bound.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench_lbr import solved
from markdown_sections import update_section

from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.local_best_response import LocalBestResponse
from efgkit.poker.streamed.sampled_flops import draw_flops, postflop_response

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
LBR_BOARDS = 1000
"""LBR's boards on four-round games (every board on fewer rounds)."""
CASES = (("holdem(ranks=5,rounds=2)", None), ("holdem(ranks=6,rounds=3,caps=2-2-2)", (30, 60, 60)),
         ("holdem(ranks=5)", (25, 50, 50, 50)))


def rows(spec: str, buckets, iterations: int, samples: int) -> list[str]:
    layout, strategy, label = solved(spec, buckets, 0, iterations)
    game = layout.betting.game
    evaluator = StreamedEvaluator(layout)
    started = time.process_time()
    exact = evaluator.evaluate(strategy, game_value=False)
    exact_cpu, started = time.process_time() - started, time.process_time()
    every = postflop_response(evaluator, strategy, None)
    every_cpu, started = time.process_time() - started, time.process_time()
    boards = None if layout.betting.num_levels < 4 else LBR_BOARDS
    lbr = LocalBestResponse(layout, strategy, seed=1).run(boards)
    lbr_cpu = time.process_time() - started
    cells = [f"{game.mbb(exact.exploitability):.2f} ({exact_cpu:.1f} s)",
             f"{game.mbb(every.nash_conv.mean / 2):.2f} ({every_cpu:.1f} s)"]
    for seed in range(3):
        started = time.process_time()
        estimate = postflop_response(evaluator, strategy, draw_flops(evaluator, samples, seed)).nash_conv
        low, high = estimate.confidence_interval
        cells.append(f"{game.mbb(estimate.mean / 2):.2f} [{game.mbb(low / 2):.2f}, {game.mbb(high / 2):.2f}] "
                     f"({time.process_time() - started:.1f} s)")
    interval = "" if lbr.exact else f" +- {game.mbb(lbr.confidence_interval[1] - lbr.mean):.2f}"
    cells.append(f"{game.mbb(lbr.mean):.2f}{interval} ({lbr_cpu:.1f} s)")
    line = f"| {spec} | {label} | {len(evaluator.items)} | " + " | ".join(cells) + " |"
    print(line, flush=True)
    return [line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", default="2000,20000")
    parser.add_argument("--samples", type=int, default=24, help="flops per sampled estimate")
    args = parser.parse_args()
    lines = ["| game | strategy | canonical flops | exact exploitability | post-flop bound, every flop "
             f"| {args.samples} flops, seed 0 [95% CI] | seed 1 | seed 2 "
             f"| LBR (every board; {LBR_BOARDS:,} on 4 rounds) |",
             "|---|---|---:|---|---|---|---|---|---|"]
    for spec, buckets in CASES:
        for iterations in map(int, args.iterations.split(",")):
            lines += rows(spec, buckets, iterations, args.samples)
    text = "\n".join([
        f"## The post-flop bound against the exact best response — {time.strftime('%Y-%m-%d')}",
        "",
        "`python benchmarks/bench_postflop_bound.py` (`efgkit evaluate --sample-flops K`: each player's best "
        "response after the flop, the responder playing the strategy's own pre-flop actions; a lower bound "
        "on exploitability, unbiased over flops drawn uniformly). mbb/g, CPU seconds in brackets.",
        "",
        *lines,
    ])
    update_section(DOCS, "postflop-bound", text)


if __name__ == "__main__":
    main()
