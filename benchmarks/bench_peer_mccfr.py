"""Hold'em solving beside a peer: efgkit's sampled CFR+ and OpenSpiel's C++ external-sampling
MCCFR on the same reduced hold'em, both measured by efgkit's exact full-game best response.

Issue 33 ("Peer, side by side"), docs/benchmarks.md section "peer-mccfr":
* the game is a ``LimitPoker`` spec; OpenSpiel plays it as ``universal_poker`` with the same
  ACPC game definition (``interop.universal_poker``), efgkit as the lossless bucket layout
  (every hand and board its own row: no card abstraction), so both solve the same game;
* efgkit runs ``SampledCFR`` (CFR+, public chance sampling, float64, seed 0) and OpenSpiel
  ``pyspiel.ExternalSamplingMCCFRSolver`` (seed 0, its default simple averaging); each is
  stopped at geometrically growing iteration counts (x2; efgkit x4 at scale, where the exact
  evaluations dominate the run), its average strategy taken (OpenSpiel's converted
  by ``bucket_strategy_from_policy``) and evaluated exactly (``StreamedEvaluator``);
* time is CPU seconds of this process spent in the solvers' iterations only
  (``time.process_time``; conversions and evaluations excluded): the machine is shared, and
  the two runs are interleaved (the one with less CPU time so far goes next), so the load
  hits both alike; numba's compilation is done before timing (a warm-up solver);
* exploitability is NashConv / 2 (OpenSpiel's convention) in mbb/g where the game has a big
  blind; the time each needs to reach a common target (the best value OpenSpiel reached)
  is read off its curve (log-log interpolation between checkpoints) and given as a ratio;
* LiteEFG reads OpenSpiel games by walking the whole tree into its own graph; it is run
  only when Knuth's estimate of the tree (``interop.openspiel.estimated_nodes``) is under
  ``LITEEFG_NODES``, otherwise the estimate is reported.

Run ``python benchmarks/bench_peer_mccfr.py`` (holdem(ranks=3,rounds=2); writes
docs/benchmarks.md, docs/img/peer-mccfr.png and benchmarks/results/peer-mccfr.json) or with
``--quick`` (Leduc, seconds, writes nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import math
import os
import platform
import resource
import time
from pathlib import Path

from markdown_sections import update_section

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "img" / "peer-mccfr.png"
RESULTS = ROOT / "benchmarks" / "results" / "peer-mccfr.json"
LITEEFG_NODES = 5e6
"""LiteEFG walks an OpenSpiel game into memory; larger trees are not attempted."""


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class EfgkitRun:
    """efgkit's sampled CFR+ on the lossless layout, advanced to growing iteration counts."""

    name = "efgkit sampled CFR+"

    def __init__(self, layout, seed: int, factor: int) -> None:
        from efgkit.poker.streamed.sampled_cfr import SampledCFR

        SampledCFR(layout, seed=seed + 1).iterate(2)  # compile (or load numba's cache) untimed
        self.solver = SampledCFR(layout, seed=seed)
        self.iterations, self.cpu, self.next, self.factor = 0, 0.0, 1, factor

    def advance(self) -> None:
        start = time.process_time()
        self.solver.iterate(self.next - self.iterations)
        self.cpu += time.process_time() - start
        self.iterations, self.next = self.next, self.factor * self.next

    def strategy(self, layout, game):
        return self.solver.average_strategy()


class OpenSpielRun:
    """OpenSpiel's C++ external-sampling MCCFR, advanced to growing iteration counts."""

    name = "OpenSpiel C++ ES-MCCFR"

    def __init__(self, game, seed: int, first: int, factor: int) -> None:
        import pyspiel

        self.solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed=seed)
        self.iterations, self.cpu, self.next, self.factor = 0, 0.0, first, factor

    def advance(self) -> None:
        run = self.solver.run_iteration
        start = time.process_time()
        for _ in range(self.next - self.iterations):
            run()
        self.cpu += time.process_time() - start
        self.iterations, self.next = self.next, self.factor * self.next

    def strategy(self, layout, game):
        from efgkit.interop.universal_poker import bucket_strategy_from_policy

        # the policy reads the solver's table, which the solver (kept in self) owns
        return bucket_strategy_from_policy(self.solver.average_policy(), layout, game)


def time_to(points: list[tuple[float, float]], target: float) -> float | None:
    """CPU seconds at which a curve of (seconds, exploitability) checkpoints first reaches
    ``target``, interpolated log-log between the checkpoints around the crossing; None if it
    never does. The first checkpoint's time if it is already there (an upper bound)."""
    for k, (seconds, value) in enumerate(points):
        if value <= target:
            if k == 0:
                return seconds
            (s0, v0), (s1, v1) = points[k - 1], (seconds, value)
            if v0 <= v1 or s0 <= 0:
                return seconds
            fraction = (math.log(v0) - math.log(target)) / (math.log(v0) - math.log(v1))
            return math.exp(math.log(s0) + fraction * (math.log(s1) - math.log(s0)))
    return None


def liteefg_note(game, quick: bool) -> str:
    """What LiteEFG does with the game: its CFR+ run when the tree is small, else why not."""
    from efgkit.interop.openspiel import estimated_nodes

    nodes = estimated_nodes(game)
    if nodes > LITEEFG_NODES:
        return (f"not run: LiteEFG converts an OpenSpiel game by walking its whole tree, about "
                f"{nodes:.2g} nodes here (Knuth's estimate; universal_poker deals one card per chance "
                f"node), beyond {LITEEFG_NODES:.0g}")
    try:
        import LiteEFG as leg
        from LiteEFG.baselines.CFR import graph
    except ImportError as exc:
        return f"not run: LiteEFG is not installed ({exc})"
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        env = leg.OpenSpielEnv(game, traverse_type="Enumerate", regenerate=False)
        algorithm = graph()
        env.set_graph(algorithm)
    load = time.process_time() - start
    iterations = 100 if quick else 1000
    start = time.process_time()
    for _ in range(iterations):
        algorithm.update_graph(env)
        env.update_strategy(algorithm.current_strategy(), update_best=False)
    cpu = time.process_time() - start
    nash_conv = sum(env.exploitability(algorithm.current_strategy(), "avg-iterate"))
    return (f"LiteEFG CFR, {iterations:,} iterations: {cpu:.2f} CPU-s (+ {load:.1f} s reading the game), "
            f"NashConv/2 {nash_conv / 2:.4g} chips by its own best response")


def run(spec: str, seconds: float, efgkit_seconds: float, first_openspiel: int, quick: bool,
        factors: tuple[int, int] = (2, 2)) -> dict:
    """Both runs to their CPU budgets, checkpoints at iterations growing by ``factors``
    (efgkit's, OpenSpiel's), each checkpoint evaluated exactly."""
    from efgkit.interop.universal_poker import lossless_layout, universal_poker_game
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.specs import make_game

    rules = make_game(spec)
    layout = lossless_layout(rules)
    game = universal_poker_game(rules)
    evaluator = StreamedEvaluator(layout)
    evaluator.evaluate(layout.uniform(), game_value=False)  # compile untimed
    big_blind = max(rules.blinds)
    per_chip = 1000.0 / big_blind if big_blind > 1 else 1.0
    unit = "mbb/g" if big_blind > 1 else "chips"
    runs = {"efgkit": (EfgkitRun(layout, 0, factors[0]), efgkit_seconds),
            "openspiel": (OpenSpielRun(game, 0, first_openspiel, factors[1]), seconds)}
    curves: dict[str, list[dict]] = {key: [] for key in runs}
    load = [os.getloadavg()[0]]
    while True:
        active = [key for key, (solver, budget) in runs.items() if solver.cpu < budget]
        if not active:
            break
        key = min(active, key=lambda k: runs[k][0].cpu)
        solver = runs[key][0]
        solver.advance()
        strategy = solver.strategy(layout, game)
        nash_conv = evaluator.evaluate(strategy, game_value=False).nash_conv
        point = {"iterations": solver.iterations, "cpu_seconds": solver.cpu,
                 "exploitability": nash_conv / 2 * per_chip}
        curves[key].append(point)
        load.append(os.getloadavg()[0])
        print(f"{solver.name}: {solver.iterations:,} iterations, {solver.cpu:.3f} CPU-s, "
              f"exploitability {point['exploitability']:.5g} {unit}", flush=True)
    best_openspiel = min(p["exploitability"] for p in curves["openspiel"])
    targets = sorted({best_openspiel, *(p["exploitability"] for p in curves["openspiel"][-3:])})
    ratios = []
    for target in targets:
        times = {key: time_to([(p["cpu_seconds"], p["exploitability"]) for p in curve], target)
                 for key, curve in curves.items()}
        ratio = (times["openspiel"] / times["efgkit"]) if None not in times.values() else None
        ratios.append({"target": target, "efgkit_seconds": times["efgkit"],
                       "openspiel_seconds": times["openspiel"], "ratio": ratio})
    return {"game": spec, "unit": unit, "rows": layout.num_rows, "curves": curves, "targets": ratios,
            "load_average": [min(load), max(load)], "peak_gib": peak_gib(),
            "liteefg": liteefg_note(game, quick)}


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {"efgkit": "efgkit sampled CFR+ (lossless)",
              "openspiel": "OpenSpiel C++ external-sampling MCCFR"}
    figure, axis = plt.subplots(figsize=(6.4, 4.4))
    for key, curve in result["curves"].items():
        axis.loglog([p["cpu_seconds"] for p in curve], [p["exploitability"] for p in curve], "o-",
                    markersize=3, label=labels[key])
    main = result["targets"][0]
    axis.axhline(main["target"], color="grey", linestyle=":", linewidth=1, label="common target")
    axis.set_xlabel("CPU seconds in the solver (one process)")
    axis.set_ylabel(f"exploitability, NashConv/2 ({result['unit']})")
    axis.set_title(f"{result['game']}: exact full-game best response")
    axis.legend()
    axis.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def report(result: dict) -> str:
    unit = result["unit"]
    lines = [f"Game `{result['game']}` ({result['rows']:,} lossless rows). Load average "
             f"{result['load_average'][0]:.1f}-{result['load_average'][1]:.1f} on 2 cores during the run; "
             f"peak memory of the process {result['peak_gib']:.2f} GiB.", "",
             "| solver | iterations | CPU-s | exploitability |", "|---|---:|---:|---:|"]
    names = {"efgkit": "efgkit sampled CFR+", "openspiel": "OpenSpiel ES-MCCFR"}
    for key, curve in result["curves"].items():
        for p in curve[-4:]:
            lines.append(f"| {names[key]} | {p['iterations']:,} | {p['cpu_seconds']:.3f} | "
                         f"{p['exploitability']:.4g} {unit} |")
    lines += ["", "| target | efgkit CPU-s | OpenSpiel CPU-s | OpenSpiel / efgkit |", "|---:|---:|---:|---:|"]
    for t in result["targets"]:
        def cell(value):
            return "not reached" if value is None else f"{value:.3g}"
        ratio = "n/a" if t["ratio"] is None else f"{t['ratio']:.0f}x"
        lines.append(f"| {t['target']:.4g} {unit} | {cell(t['efgkit_seconds'])} | "
                     f"{cell(t['openspiel_seconds'])} | {ratio} |")
    lines += ["", f"LiteEFG: {result['liteefg']}."]
    return "\n".join(lines)


def write(result: dict) -> None:
    """The results file, the plot and the docs section of a full run."""
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    plot(result, PLOT)
    stamp = datetime.date.today().isoformat()
    update_section(DOCS, "peer-mccfr", (
        f"## Hold'em beside OpenSpiel's external-sampling MCCFR (issue 33) — {stamp}, "
        f"{platform.machine()}\n\n"
        "`python benchmarks/bench_peer_mccfr.py`: efgkit's sampled CFR+ (public chance sampling, "
        "CFR+, float64) on the lossless bucket layout (no card abstraction) and OpenSpiel's C++ "
        "`ExternalSamplingMCCFRSolver` (seed 0, its default simple averaging) on `universal_poker` "
        "with the same ACPC game definition, in one process, interleaved (the run with less CPU "
        "time so far goes next). Both average strategies are measured by efgkit's exact full-game "
        "best response; OpenSpiel's policy is converted by `efgkit.interop.universal_poker` "
        "(tests/test_universal_poker.py: converted uniform, random, CFR and ES-MCCFR policies on "
        "Kuhn and Leduc have OpenSpiel's own `nash_conv` to 1e-9). Information states OpenSpiel's "
        "table has not visited yet play uniformly (OpenSpiel's `nash_conv` refuses such a policy: "
        "its default policy answers no string look-up). Time is CPU seconds of the process in the "
        "solvers' iterations only (`time.process_time`; conversions, evaluations and numba's "
        "compilation excluded), because the machine was shared with other agents; the time to a "
        "target is read off each curve by log-log interpolation between checkpoints.\n\n"
        f"![exploitability against CPU time](img/{PLOT.name})\n\n{report(result)}\n\n{reading(result)}"))


def reading(result: dict) -> str:
    """What the run says beside the issue's target (efgkit at least 100x faster)."""
    main, unit = result["targets"][0], result["unit"]
    openspiel, efgkit = result["curves"]["openspiel"][-1], result["curves"]["efgkit"][-1]
    ratio = "not measured" if main["ratio"] is None else f"{main['ratio']:.0f}x"
    return (f"At the common target, OpenSpiel's best value ({main['target']:.4g} {unit} after "
            f"{openspiel['iterations']:,} iterations), efgkit is {ratio} faster in CPU time (issue 33's "
            f"target: at least 100x). External sampling deals one set of cards per iteration, so each "
            f"iteration updates a few of the game's information states, while every sampled CFR+ "
            f"iteration updates every hand on its board. efgkit went on to {efgkit['exploitability']:.4g} "
            f"{unit} in {efgkit['cpu_seconds']:.3g} CPU-s, a value OpenSpiel's run did not reach, so "
            f"ratios at lower targets were not measured. LiteEFG could not load the game (above); on "
            f"Leduc (`--quick`) it runs.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Leduc for a few seconds; writes nothing")
    parser.add_argument("--game", default=None, help="a limit-poker spec (default holdem(ranks=3,rounds=2))")
    parser.add_argument("--seconds", type=float, default=None, help="OpenSpiel's CPU budget (default 60)")
    parser.add_argument("--efgkit-seconds", type=float, default=None, help="efgkit's CPU budget (default 15)")
    parser.add_argument("--from-results", action="store_true",
                        help=f"rewrite the plot and docs section from {RESULTS.name} without running")
    args = parser.parse_args()
    if args.from_results:
        write(json.loads(RESULTS.read_text()))
        return
    spec = args.game or ("leduc" if args.quick else "holdem(ranks=3,rounds=2)")
    seconds = args.seconds or (1.0 if args.quick else 60.0)
    efgkit_seconds = args.efgkit_seconds or (0.5 if args.quick else 15.0)
    # the exact evaluations cost most of the run: fewer efgkit checkpoints at scale
    factors = (2, 2) if args.quick else (4, 2)
    result = run(spec, seconds, efgkit_seconds, 100 if args.quick else 1000, args.quick, factors)
    print(report(result))
    if not args.quick:
        write(result)


if __name__ == "__main__":
    main()
