"""Foundation benchmark: efgkit against OpenSpiel (C++ via pyspiel) and LiteEFG, same run, one core.

Measures (issue 2 targets in brackets):
* CFR+ full iterations per second on Leduc            [>= 10,000 it/s]
* one exact NashConv of a Leduc strategy               [<= 1 ms]
* one CFR+ iteration on P224 (3M nodes)                [<= 0.1 s]
* building the P224 and GS6 trees                      [<= 20 s each]
* tree memory per node                                 [<= 32 bytes]

Run ``python benchmarks/bench_foundation.py`` (writes docs/benchmarks.md) or with ``--quick``
for a seconds-long smoke run that writes nothing. The process is pinned to one core.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from pathlib import Path

import numpy as np
from markdown_sections import update_section

from efgkit.solvers import BestResponse, CFRPlusSolver
from efgkit.specs import load_game

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def _rate(step, min_seconds: float, batch: int = 1, clock=time.perf_counter) -> float:
    """Calls per second of ``step`` (called with ``batch``) over at least ``min_seconds`` of
    ``clock`` (wall time, or ``time.process_time`` for CPU time on a shared machine)."""
    step(batch)  # warm-up (numba compilation, caches)
    calls, start = 0, clock()
    while clock() - start < min_seconds:
        step(batch)
        calls += batch
    return calls / (clock() - start)


def efgkit_cfr_plus_leduc(min_seconds: float) -> float:
    solver = CFRPlusSolver(load_game("leduc"))
    return _rate(lambda n: solver.iterate(n), min_seconds, batch=100)


def efgkit_nash_conv_leduc(min_seconds: float) -> float:
    tree = load_game("leduc")
    solver = CFRPlusSolver(tree).iterate(100)
    strategy = solver.average_strategy()
    responder = BestResponse(strategy.infoset_map)
    return 1.0 / _rate(lambda n: [responder.evaluate(strategy) for _ in range(n)], min_seconds, 10)


def openspiel_cfr_plus_leduc(min_seconds: float, clock=time.perf_counter) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    solver = pyspiel.CFRPlusSolver(pyspiel.load_game("leduc_poker"))

    def step(n):
        for _ in range(n):
            solver.evaluate_and_update_policy()

    return _rate(step, min_seconds, clock=clock)


def openspiel_nash_conv_leduc(min_seconds: float) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(10):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    return 1.0 / _rate(lambda n: [pyspiel.nash_conv(game, policy) for _ in range(n)], min_seconds)


def liteefg_cfr_plus_leduc(min_seconds: float, clock=time.perf_counter) -> float | None:
    try:
        import LiteEFG as leg
        import pyspiel
        from LiteEFG.baselines.CFRplus import graph as cfr_plus_graph
    except ImportError:
        return None
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        env = leg.OpenSpielEnv(pyspiel.load_game("leduc_poker"), traverse_type="Enumerate",
                               regenerate=False)
        graph = cfr_plus_graph()
        env.set_graph(graph)

    def step(n):
        for _ in range(n):
            graph.update_graph(env)
            env.update_strategy(graph.current_strategy(), update_best=False)

    return _rate(step, min_seconds, clock=clock)


def build_seconds(spec: str) -> tuple[float, object]:
    start = time.perf_counter()
    tree = load_game(spec)
    return time.perf_counter() - start, tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run, no docs")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    seconds = 0.3 if args.quick else 3.0
    rows: list[tuple[str, str, str, str, str]] = []

    ours = efgkit_cfr_plus_leduc(seconds)
    peers = {"OpenSpiel C++": openspiel_cfr_plus_leduc(seconds),
             "LiteEFG": liteefg_cfr_plus_leduc(seconds)}
    rows.append(("CFR+ on Leduc, full iterations/s", f"{ours:,.0f}", ">= 10,000",
                 *_peer_columns(peers, ours, higher_is_better=True)))

    ours_nc = efgkit_nash_conv_leduc(seconds)
    peers_nc = {"OpenSpiel C++": openspiel_nash_conv_leduc(seconds)}
    rows.append(("Exact NashConv of a Leduc strategy, ms", f"{ours_nc * 1e3:.3f}", "<= 1",
                 *_peer_columns({k: v and v * 1e3 for k, v in peers_nc.items()}, ours_nc * 1e3,
                                higher_is_better=False)))

    large = ("poker(bets=1,raises=1,cap=1)", "goofspiel(cards=4)") if args.quick else ("P224", "GS6")
    for spec in large:
        load_game(spec)  # warm the numba cache so the timing is the build, not compilation
        elapsed, tree = build_seconds(spec)
        rows.append((f"Build {spec} ({tree.num_nodes:,} nodes), s", f"{elapsed:.2f}", "<= 20",
                     "-", "-"))
        rows.append((f"{spec} tree memory, bytes/node", f"{tree.bytes_per_node():.0f}", "<= 32",
                     "-", "-"))
    p224 = tree if args.quick else load_game("P224")
    solver = CFRPlusSolver(p224)
    per_iteration = 1.0 / _rate(lambda n: solver.iterate(n), seconds)
    rows.append((f"One CFR+ iteration on {p224.spec} ({p224.num_nodes:,} nodes), s",
                 f"{per_iteration:.4f}", "<= 0.1", "-", "-"))
    table = _markdown(rows)
    print(table)
    if not args.quick:
        _write_docs(table)


def _peer_columns(peers: dict, ours: float, *, higher_is_better: bool) -> tuple[str, str]:
    values, ratios = [], []
    for name, value in peers.items():
        if value is None:
            values.append(f"{name}: not installed")
            continue
        values.append(f"{name}: {value:,.3f}" if value < 100 else f"{name}: {value:,.0f}")
        ratio = ours / value if higher_is_better else value / ours
        ratios.append(f"{ratio:,.1f}x vs {name}")
    return "; ".join(values), "; ".join(ratios) or "-"


def _markdown(rows) -> str:
    header = "| measurement | efgkit | target | peers (same run) | efgkit speed-up |\n"
    header += "|---|---|---|---|---|\n"
    return header + "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _write_docs(table: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = (
        "## Foundation: solvers, evaluation, tree building\n\n"
        "Generated by `python benchmarks/bench_foundation.py` (do not edit by hand).\n\n"
        f"Run {stamp} on {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, pinned to one core; Python {platform.python_version()}, "
        f"numpy {np.__version__}.\n\n{table}\n\n"
        "Peers: OpenSpiel's C++ `CFRPlusSolver` and `nash_conv` through pyspiel; LiteEFG's "
        "CFR+ baseline graph on `OpenSpielEnv(leduc_poker)` (one `update_graph` + "
        "`update_strategy` per iteration, as in its `train`). All solve the same 936-infoset "
        "Leduc. An efgkit iteration updates both players (alternating), like the peers'.\n\n"
        "Storage (memory-mapped files, compact readers, quantization, checkpoints, solves on "
        "disk): [benchmarks-storage.md](benchmarks-storage.md).\n"
    )
    update_section(DOCS, "foundation", text)


if __name__ == "__main__":
    main()
