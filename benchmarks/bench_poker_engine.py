"""Poker engine benchmark: the public-tree vector engine against the GameTree kernels and the
peers (OpenSpiel C++ CFR+, LiteEFG), same run, one core.

Measures (issue 13 targets in brackets):
* CFR+ full iterations per second on Leduc through the engine          [>= 25,000 it/s]
* exact best response (NashConv) of a strategy, engine and GameTree
* public-tree bytes, strategy bytes and peak RSS, against the GameTree's bytes,
  for leduc, leduc(ranks=13), P222, twocard and a hold'em variant

Rates are in CPU time (``time.process_time``; the machine is shared, so wall time is
noise). ``--reference DIR`` (another checkout, e.g. ``git archive main``) also measures the
engine's Leduc CFR+ rate there: both trees in child processes, interleaved, best of three.
Run ``python benchmarks/bench_poker_engine.py`` (writes the "poker-engine" section of
docs/benchmarks.md) or with ``--quick`` for a seconds-long smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench_foundation import _rate, liteefg_cfr_plus_leduc, openspiel_cfr_plus_leduc
from markdown_sections import update_section

from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import VectorCFR
from efgkit.solvers import BestResponse, CFRPlusSolver
from efgkit.specs import load_game, make_game

BENCHMARKS = Path(__file__).resolve().parent
DOCS = BENCHMARKS.parent / "docs" / "benchmarks.md"
SIZE_GAMES = ("leduc", "leduc(ranks=13)", "P222", "twocard", "holdem(ranks=2,rounds=2)")


def engine_cfr_plus_leduc(min_seconds: float) -> float:
    engine = VectorCFR(PublicTree(make_game("leduc")), variant="cfr+")
    return _rate(lambda n: engine.iterate(n), min_seconds, batch=200, clock=time.process_time)


def engine_rate_of_trees(trees: dict[str, Path], min_seconds: float, rounds: int = 3) -> dict[str, float]:
    """``engine_cfr_plus_leduc`` with efgkit imported from each tree, in child processes
    (interleaved, best of ``rounds``)."""
    best = dict.fromkeys(trees, 0.0)
    code = "import sys, bench_poker_engine as b; print(b.engine_cfr_plus_leduc(float(sys.argv[1])))"
    for _ in range(rounds):
        for label, root in trees.items():
            out = subprocess.run([sys.executable, "-c", code, str(min_seconds)], cwd=BENCHMARKS, check=True,
                                 capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)})
            best[label] = max(best[label], float(out.stdout.split()[-1]))
    return best


def gametree_cfr_plus_leduc(min_seconds: float) -> float:
    solver = CFRPlusSolver(load_game("leduc"))
    return _rate(lambda n: solver.iterate(n), min_seconds, batch=100, clock=time.process_time)


def best_response_seconds(spec: str, min_seconds: float) -> tuple[float, float]:
    """Seconds per exact NashConv of a CFR+ strategy: (engine, GameTree)."""
    tree = load_game(spec)
    infoset_map = InfosetMap.identity(tree)
    layout = StrategyLayout.from_infoset_map(PublicTree(tree.game), infoset_map)
    strategy = CFRPlusSolver(infoset_map).iterate(20).average_strategy()
    responder = BestResponse(infoset_map)
    engine = 1.0 / _rate(lambda n: [evaluate_strategy(layout, strategy.probabilities) for _ in range(n)],
                         min_seconds, clock=time.process_time)
    gametree = 1.0 / _rate(lambda n: [responder.evaluate(strategy) for _ in range(n)], min_seconds,
                           clock=time.process_time)
    return engine, gametree


def sizes(spec: str) -> dict:
    """Public tree and strategy bytes of the lossless engine, and the GameTree's bytes."""
    public = PublicTree(make_game(spec))
    layout = StrategyLayout.lossless(public)
    tree = load_game(spec)
    return {"spec": spec, "public_nodes": public.num_nodes, "hands": public.num_hands,
            "public_bytes": public.nbytes, "workspace_bytes": public.num_nodes * public.num_hands * 8 * 3,
            "strategy_bytes": layout.num_actions * 8 * 3, "gametree_nodes": tree.num_nodes,
            "gametree_bytes": int(tree.num_nodes * tree.bytes_per_node())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run; writes nothing")
    parser.add_argument("--reference", type=Path, help="another checkout whose engine rate to measure too")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    seconds = 0.2 if args.quick else 3.0
    engine = "efgkit public-tree engine"
    if args.reference is None:
        rates = {engine: engine_cfr_plus_leduc(seconds)}
    else:
        reference = f"{engine}, reference ({args.reference.name})"
        trees = {engine: BENCHMARKS.parent, reference: args.reference.resolve()}
        rates = engine_rate_of_trees(trees, seconds, rounds=1 if args.quick else 3)
    rates |= {"efgkit GameTree kernels": gametree_cfr_plus_leduc(seconds),
              "OpenSpiel C++": openspiel_cfr_plus_leduc(seconds, clock=time.process_time),
              "LiteEFG": liteefg_cfr_plus_leduc(seconds, clock=time.process_time)}
    engine_rate = rates[engine]
    lines = ["| CFR+ on Leduc, full iterations/s (CPU time) | it/s | engine / this |", "|---|---:|---:|"]
    for name, rate in rates.items():
        ratio = f"{engine_rate / rate:.2f}x" if rate else "n/a"
        lines.append(f"| {name} | {rate:,.0f} | {ratio} |" if rate else f"| {name} | not installed | |")
    lines += ["", "| exact NashConv of a strategy | engine | GameTree | GameTree / engine |",
              "|---|---:|---:|---:|"]
    for spec in (("leduc",) if args.quick else ("leduc", "P222", "twocard")):
        engine, gametree = best_response_seconds(spec, seconds)
        lines.append(f"| {spec} | {engine * 1e3:.3f} ms | {gametree * 1e3:.3f} ms | "
                     f"{gametree / engine:.1f}x |")
    lines += ["", "| game | public nodes x hands | public tree bytes | engine solver bytes (reach, values, "
              "3 strategy arrays) | GameTree nodes | GameTree bytes |", "|---|---:|---:|---:|---:|---:|"]
    for spec in (("leduc",) if args.quick else SIZE_GAMES):
        s = sizes(spec)
        lines.append(f"| {spec} | {s['public_nodes']:,} x {s['hands']:,} | {s['public_bytes']:,} | "
                     f"{s['workspace_bytes'] + s['strategy_bytes']:,} | {s['gametree_nodes']:,} | "
                     f"{s['gametree_bytes']:,} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    lines += ["", f"Peak RSS of the whole run: {peak / 2**20:,.0f} MiB."]
    table = "\n".join(lines)
    print(table)
    if not args.quick:
        machine = platform.processor() or platform.machine()
        command = "python benchmarks/bench_poker_engine.py" + (" --reference REF" if args.reference else "")
        header = (f"## Poker engine (public tree) — {datetime.date.today()}, {machine}, one core\n\n"
                  f"`{command}`, CPU time (load average {os.getloadavg()[0]:.1f} at the end). Target: "
                  f">= 25,000 CFR+ iterations/s on Leduc through the engine.\n\n")
        update_section(DOCS, "poker-engine", header + table + "\n")


if __name__ == "__main__":
    main()
