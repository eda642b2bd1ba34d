"""Memory against exploitability of hold'em card abstractions (issue 14): the study a paper would print.

On a reduced-deck hold'em whose exact full-game best response takes seconds
(``holdem(ranks=5,caps=1-1-1-1)``; docs/results-holdem.md says why this one), every
card abstraction below is built by the hold'em pipeline (``efgkit holdem-abstraction``; the
features once, then each clustering), solved by CFR+ with public chance sampling
(``SampledCFR``) for the same number of iterations from several seeds, and each average
strategy is evaluated exactly in the full game (``StreamedEvaluator``: every hand on every
board its own information set for the responder); seed 0's strategy is also measured by
local best response (``LocalBestResponse``, fcr, on sampled boards), the lower bound a
52-card strategy gets, so the table shows how close that bound is, and in the abstract game
(``abstract_best_response``: a responder that sees only the buckets; exact with perfect recall,
a lower bound with imperfect recall), which Waugh et al. 2009 compare with the full game's.
Families:

* ``E[HS]``: 1-D k-means of E[HS] on the flop, turn and river (expectation-based);
* ``E[HS^2]``: E[HS^2] on the flop and turn, E[HS] on the river (where E[HS^2] = E[HS]^2);
* ``EMD, E[HS] river``: exact EMD k-means of strength histograms on the flop and turn;
* ``EMD, OCHS river``: the same with OCHS on the river (Johanson et al. 2013's KE-KO);
* ``perfect recall EMD, OCHS``: the tuple of an EMD/OCHS abstraction's buckets at every
  round so far (``efgkit.poker.buckets.perfect_recall``), from small per-round counts;
* ``lossless (suit isomorphism)``, with ``--lossless`` (always in the quick run): every
  canonical hand its own bucket, the reference point whose exploitability is the solver's
  error alone at this number of iterations. On the default game it has 18,038,145 actions and
  an iteration costs about 100 ms of CPU (``SampledCFR`` updates every row each iteration),
  50 times a clustered abstraction's: about 17 CPU-minutes.

The preflop keeps every class. Per abstraction: buckets per round, strategy bytes (the
float64 average strategy the evaluator reads: 8 bytes per (betting decision, bucket, action)),
bucket-table bytes (one entry per canonical hand and round in the smallest unsigned integer
that holds the bucket count; for perfect recall the base tables plus, per later round, the
map (earlier bucket, base bucket) -> bucket), exact exploitability in mbb/g (NashConv / 2
per game, in thousandths of a big blind: the mean over the seeds, with the lowest and
highest), LBR in mbb/g with its 95% interval, and CPU seconds of clustering, solving (all
seeds), evaluation and LBR. Two EMD/OCHS abstractions (``study``'s curves) are also evaluated at 1/27, 1/9 and
1/3 of the iterations.

Results go to benchmarks/results/holdem-tradeoff.jsonl (one line per abstraction; a rerun
with the same settings skips the abstractions already there, and adds the abstract game's
exploitability to a line written before it was measured: seed 0 solved again, checked to give
the recorded exploitability), the marked section
``holdem-tradeoff`` of ``--out`` and two plots next to it in docs/img. CPU seconds are
those of this process (the machine is shared; each invocation prints its wall-clock time).

    python benchmarks/bench_holdem_tradeoff.py --out docs/results-holdem.md
    python benchmarks/bench_holdem_tradeoff.py --quick        # a seconds-long smoke run
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from markdown_sections import update_section

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "holdem-tradeoff.jsonl"
IMAGES = ROOT / "docs" / "img"
SPEC = "holdem(ranks=5,caps=1-1-1-1)"


@dataclass(frozen=True)
class Abstraction:
    """One abstraction of the study: a family, the pipeline's methods and bucket counts per
    street, and whether the buckets are made perfect recall."""

    family: str
    flop: str
    turn: str
    river: str
    buckets: tuple[int, int, int, int]
    perfect_recall: bool = False

    @property
    def name(self) -> str:
        recall = "pr-" if self.perfect_recall else ""
        return f"{recall}{self.flop}-{self.turn}-{self.river}-{'-'.join(map(str, self.buckets))}"


LOSSLESS = "lossless (suit isomorphism)"
FAMILIES = {"E[HS]": ("ehs", "ehs", "ehs"), "E[HS^2]": ("ehs2", "ehs2", "ehs"),
            "EMD, E[HS] river": ("emd", "emd", "ehs"), "EMD, OCHS river": ("emd", "emd", "ochs")}


def study(quick: bool, preflop: int, lossless: bool) -> tuple[list[Abstraction], list[str]]:
    """The abstractions to run and the names of those with convergence curves."""
    sizes = (8,) if quick else (10, 30, 100, 300)
    recall_sizes = (2,) if quick else (2, 3, 5)
    runs = [Abstraction(family, *methods, (preflop, k, k, k)) for family, methods in FAMILIES.items()
            for k in sizes]
    runs += [Abstraction("perfect recall EMD, OCHS", "emd", "emd", "ochs", (preflop, k, k, k), True)
             for k in recall_sizes]
    if lossless or quick:
        runs.append(Abstraction(LOSSLESS, "canonical", "canonical", "canonical", (preflop, 0, 0, 0)))
    curves = [Abstraction("EMD, OCHS river", "emd", "emd", "ochs", (preflop, k, k, k)).name
              for k in (sizes if quick else (10, 300))]
    return runs, curves


def table_bytes(entries: int, buckets: int) -> int:
    """Bytes of a table of ``entries`` bucket numbers below ``buckets`` (1, 2, 4 or 8 each)."""
    width = next(size for size in (1, 2, 4, 8) if buckets <= 1 << (8 * size))
    return entries * width


def bucket_table_bytes(game, cards, base) -> int:
    """See the module docstring: the base tables, plus the tuple maps of a perfect-recall one
    (none for the lossless abstraction, whose bucket is the canonical index itself)."""
    from efgkit.abstraction.cards.holdem.features import hand_indexer

    structure = game.card_structure
    if base.reference["kind"] == "canonical":
        return 0
    total = 0
    for r in range(game.num_rounds):
        indexer = hand_indexer(sum(structure.public_cards_per_round[:r + 1]), structure.num_ranks)
        total += table_bytes(indexer.round_size(indexer.num_rounds - 1), base.num_buckets(r))
        if cards is not base and r:
            total += table_bytes(cards.num_buckets(r - 1) * base.num_buckets(r), cards.num_buckets(r))
    return total


def build_bucket_file(run: Abstraction, num_ranks: int, work: Path, features: Path) -> tuple[Path, float]:
    """The pipeline's bucket file of ``run`` (built once per base abstraction) and the CPU
    seconds of its clustering (features are shared and reported once)."""
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction

    options = AbstractionOptions(buckets=run.buckets, flop=run.flop, turn=run.turn, river=run.river,
                                 num_ranks=num_ranks)
    path = work / f"{run.flop}-{run.turn}-{run.river}-{'-'.join(map(str, run.buckets))}.h5"
    started = time.process_time()
    if run.family != LOSSLESS and not path.exists():
        build_abstraction(options, path, features=features)
    return path, time.process_time() - started


def abstraction_layout(spec: str, run: Abstraction, bucket_file: Path):
    """``run``'s game, ``BucketLayout``, card abstraction and base abstraction, and the CPU
    seconds of reading its bucket tables."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.buckets.perfect_recall import PerfectRecallCards
    from efgkit.specs import make_game

    game = make_game(spec)
    started = time.process_time()
    base = (IsomorphicCards.canonical(game) if run.family == LOSSLESS
            else IsomorphicCards.from_bucket_file(game, bucket_file))
    cards = PerfectRecallCards(game, base) if run.perfect_recall else base
    seconds = time.process_time() - started
    return game, BucketLayout(BettingTree(game), cards), cards, base, seconds


def abstract_game_fields(evaluator, strategy, mbb: float) -> dict:
    """The abstract game's exploitability of ``strategy`` in mbb/g (exact with perfect-recall
    buckets, else a lower bound) and its CPU seconds."""
    from efgkit.poker.streamed.abstract_best_response import abstract_evaluation

    started = time.process_time()
    abstract = abstract_evaluation(evaluator, strategy)
    return {"abstract_mbb_per_game": abstract.exploitability * mbb,
            "abstract_exact": evaluator.layout.abstraction.perfect_recall,
            "abstract_cpu_seconds": time.process_time() - started}


def solve_and_evaluate(spec: str, run: Abstraction, bucket_file: Path, iterations: int,
                       checkpoints: list[int], seeds: int, lbr_boards: int | None) -> dict:
    """CFR+ with public chance sampling for ``iterations`` from each of ``seeds`` seeds, exact
    exploitability (mbb/g) at the end of each and at every checkpoint of seed 0, LBR and the
    abstract game's exploitability of seed 0's strategy (LBR over ``lbr_boards`` sampled
    boards, None: every board); sizes and CPU seconds (summed over the seeds)."""
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.local_best_response import LocalBestResponse
    from efgkit.poker.streamed.sampled_cfr import SampledCFR

    game, layout, cards, base, abstraction_seconds = abstraction_layout(spec, run, bucket_file)
    evaluator = StreamedEvaluator(layout)
    mbb = 1000 / max(game.blinds)
    curve, per_seed, solve_seconds, evaluate_seconds = [], [], 0.0, 0.0
    for seed in range(seeds):
        solver = SampledCFR(layout, variant="cfr+", seed=seed)
        for stop in sorted({*(checkpoints if seed == 0 else []), iterations}):
            started = time.process_time()
            solver.iterate(stop - solver.iteration)
            solve_seconds += time.process_time() - started
            started = time.process_time()
            result = evaluator.evaluate(solver.average_strategy(), game_value=False)
            evaluate_seconds += time.process_time() - started
            if seed == 0:
                curve.append({"iterations": stop, "mbb_per_game": result.exploitability * mbb,
                              "evaluate_cpu_seconds": time.process_time() - started})
        per_seed.append(result.exploitability * mbb)
        if seed == 0:
            started = time.process_time()
            lbr = LocalBestResponse(layout, solver.average_strategy(), seed=0).run(lbr_boards)
            lbr_seconds = time.process_time() - started
            abstract = abstract_game_fields(evaluator, solver.average_strategy(), mbb)
    return {"buckets": [cards.num_buckets(r) for r in range(game.num_rounds)],
            "strategy_bytes": layout.num_actions * 8,
            "bucket_table_bytes": bucket_table_bytes(game, cards, base),
            "mbb_per_game": sum(per_seed) / seeds, "mbb_per_seed": per_seed, "curve": curve,
            "lbr_mbb_per_game": lbr.mean * mbb, "lbr_standard_error": lbr.standard_error * mbb,
            "lbr_boards": lbr.boards, "lbr_exact": lbr.exact, "lbr_cpu_seconds": lbr_seconds,
            "abstraction_cpu_seconds": abstraction_seconds, "solve_cpu_seconds": solve_seconds,
            "evaluate_cpu_seconds": evaluate_seconds, **abstract}


def add_abstract_game(spec: str, run: Abstraction, bucket_file: Path, row: dict) -> dict:
    """``row`` (a result line from before the abstract game's exploitability was measured)
    with it: seed 0 solved again (the same boards, so the same strategy: its exact
    exploitability must equal the recorded one) and its abstract game evaluated."""
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_cfr import SampledCFR

    game, layout, _, _, _ = abstraction_layout(spec, run, bucket_file)
    evaluator = StreamedEvaluator(layout)
    mbb = 1000 / max(game.blinds)
    solver = SampledCFR(layout, variant="cfr+", seed=0)
    solver.iterate(row["iterations"])
    again = evaluator.evaluate(solver.average_strategy(), game_value=False).exploitability * mbb
    if abs(again - row["mbb_per_seed"][0]) > 1e-6 * max(1.0, again):
        raise SystemExit(f"{run.name}: seed 0 solved again is exploitable for {again} mbb/g, the recorded "
                         f"{row['mbb_per_seed'][0]}: the bucket file or the solver changed")
    return {**row, **abstract_game_fields(evaluator, solver.average_strategy(), mbb)}


def run_study(spec: str, iterations: int, seeds: int, lbr_boards: int | None, quick: bool, lossless: bool,
              results: Path | None, work: Path, progress: bool) -> dict:
    """Every abstraction of ``study``, reusing result lines with the same settings."""
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.specs import make_game

    game = make_game(spec)
    num_ranks = game.card_structure.num_ranks
    classes = num_ranks * num_ranks
    runs, curves = study(quick, classes, lossless)
    settings = {"spec": spec, "iterations": iterations, "seeds": seeds, "lbr_boards": lbr_boards,
                "quick": quick}
    done = {}
    if results is not None and results.exists():
        for line in results.read_text().splitlines():
            row = json.loads(line)
            if all(row.get(key) == value for key, value in settings.items()):
                done[row["name"]] = row
    features = work / f"features-{num_ranks}.h5"
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    feature_seconds = None
    complete = [r for r in runs if r.name in done and "abstract_mbb_per_game" in done[r.name]]
    if not features.exists() and len(complete) < len(runs):
        build_abstraction(AbstractionOptions(buckets=(classes, 1, 1, 1), num_ranks=num_ranks),
                          work / "features-only.h5", features=features)
        feature_seconds = time.process_time() - started_cpu
    checkpoints = [max(1, iterations // 27), max(1, iterations // 9), max(1, iterations // 3)]
    rows = []
    for number, run in enumerate(runs):
        if run.name in done and "abstract_mbb_per_game" in done[run.name]:
            rows.append(done[run.name])
            continue
        if progress:
            print(f"[{number + 1}/{len(runs)}] {run.name}", file=sys.stderr, flush=True)
        bucket_file, cluster_seconds = build_bucket_file(run, num_ranks, work, features)
        if run.name in done:
            row = add_abstract_game(spec, run, bucket_file, done[run.name])
        else:
            measured = solve_and_evaluate(spec, run, bucket_file, iterations,
                                          checkpoints if run.name in curves else [], seeds, lbr_boards)
            row = {**settings, "name": run.name, "family": run.family, "perfect_recall": run.perfect_recall,
                   "flop": run.flop, "turn": run.turn, "river": run.river, "base_buckets": list(run.buckets),
                   "cluster_cpu_seconds": cluster_seconds, **measured}
        rows.append(row)
        if results is not None:
            results.parent.mkdir(parents=True, exist_ok=True)
            with results.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
    if progress:
        wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
        print(f"{wall:.0f} s wall-clock, {cpu:.0f} s CPU in this invocation", file=sys.stderr)
    return {**settings, "rows": rows, "feature_cpu_seconds": feature_seconds}


def _front(rows: list[dict]) -> list[dict]:
    """The rows no other row beats in both strategy bytes and exploitability, by size."""
    from efgkit.cli.plots import pareto_front

    front = pareto_front([(r["mbb_per_game"], r["strategy_bytes"]) for r in rows])
    return sorted([r for r in rows if (r["mbb_per_game"], r["strategy_bytes"]) in front],
                  key=lambda r: r["strategy_bytes"])


def _plain_numbers(axis) -> None:
    """Label a log axis spanning about a decade with plain numbers (120, 150, 200, 300)."""
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    axis.set_major_locator(LogLocator(subs=(1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)))
    axis.set_major_formatter(ScalarFormatter())
    axis.set_minor_formatter(NullFormatter())


def write_plots(result: dict, prefix: Path) -> list[Path]:
    """``prefix``-pareto.png (exploitability against strategy bytes, the Pareto front of each
    family) and ``prefix``-convergence.png (exploitability against iterations)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    families = list(dict.fromkeys(r["family"] for r in rows))
    figure, axes = plt.subplots(figsize=(7, 4.8))
    for number, family in enumerate(families):
        mine = [r for r in rows if r["family"] == family]
        front = _front(mine)
        marker = "*" if family == LOSSLESS else "s" if mine[0]["perfect_recall"] else "o"
        color = f"C{number}"
        axes.plot([r["strategy_bytes"] for r in front], [r["mbb_per_game"] for r in front], color=color,
                  label=family)
        axes.scatter([r["strategy_bytes"] for r in mine], [r["mbb_per_game"] for r in mine], color=color,
                     marker=marker, edgecolor="black", zorder=3)
        spread = [[r["mbb_per_game"] - min(r["mbb_per_seed"]) for r in mine],
                  [max(r["mbb_per_seed"]) - r["mbb_per_game"] for r in mine]]
        axes.errorbar([r["strategy_bytes"] for r in mine], [r["mbb_per_game"] for r in mine], yerr=spread,
                      fmt="none", ecolor=color, capsize=3, zorder=2)
    axes.set_xscale("log")
    axes.set_yscale("log")
    _plain_numbers(axes.yaxis)
    axes.set_xlabel("strategy bytes (float64 average strategy)")
    axes.set_ylabel(f"exploitability in the full game, mbb/g\n"
                    f"(mean of {result['seeds']} seeds; bars: lowest-highest)")
    axes.set_title(f"{result['spec']}: memory against exploitability, "
                   f"CFR+ {result['iterations']:,} iterations", fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    paths = [prefix.with_name(prefix.name + "-pareto.png")]
    figure.savefig(paths[0], dpi=110)
    plt.close(figure)

    figure, axes = plt.subplots(figsize=(7, 4.8))
    for r in rows:
        if len(r["curve"]) > 1:
            label = f"{r['family']} {'-'.join(map(str, r['buckets']))}"
            axes.plot([p["iterations"] for p in r["curve"]], [p["mbb_per_game"] for p in r["curve"]],
                      marker="o", label=label)
    axes.set_xscale("log")
    axes.set_yscale("log")
    _plain_numbers(axes.yaxis)
    axes.set_xlabel("CFR+ iterations (public chance sampling)")
    axes.set_ylabel("exploitability in the full game, mbb/g")
    axes.set_title(f"{result['spec']}: convergence on card abstractions", fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    paths.append(prefix.with_name(prefix.name + "-convergence.png"))
    figure.savefig(paths[1], dpi=110)
    plt.close(figure)
    return paths


def section(result: dict, command: str, images: list[str]) -> str:
    """Markdown: the command, the table, the plots, the convergence numbers."""
    rows = sorted(result["rows"], key=lambda r: (r["family"], r["strategy_bytes"]))
    features = (f", plus {result['feature_cpu_seconds']:.0f} s of features" if result["feature_cpu_seconds"]
                else " (features were reused from an earlier run)")
    cpu = sum(r["cluster_cpu_seconds"] + r["abstraction_cpu_seconds"] + r["solve_cpu_seconds"]
              + r["evaluate_cpu_seconds"] + r["lbr_cpu_seconds"] + r["abstract_cpu_seconds"] for r in rows)
    seeds = result["seeds"]
    lbr_boards = "every board" if result["lbr_boards"] is None else f"{result['lbr_boards']:,} sampled boards"
    fronts = {id(r) for family in dict.fromkeys(r["family"] for r in rows)
              for r in _front([x for x in rows if x["family"] == family])}
    lines = [
        f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
        f"`{result['spec']}`, CFR+ with public chance sampling, {result['iterations']:,} iterations per "
        f"abstraction from each of {seeds} seeds (0-{seeds - 1}), exact full-game best response of each "
        f"(the mean, and the lowest and highest of the seeds), LBR (fcr, {lbr_boards}) of seed 0's "
        f"strategy with its 95% interval, and seed 0's exploitability in the abstract game (exact with "
        f"perfect recall; with imperfect recall a lower bound, marked >=). CPU time of the abstractions "
        f"(clustering, solving, evaluation, LBR, abstract game, one process): {cpu / 60:.1f} min{features}.",
        "",
        "| family | buckets (preflop-flop-turn-river) | strategy bytes | bucket-table bytes | exploitability "
        "mbb/g, mean of the seeds | lowest - highest seed | on the family's front | LBR mbb/g (seed 0) | "
        "exact mbb/g (seed 0) | LBR / exact | abstract game mbb/g (seed 0) | clustering s | solve s | "
        "evaluation s | LBR s | abstract game s |",
        "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        interval = "" if r["lbr_exact"] else f" ± {1.96 * r['lbr_standard_error']:.1f}"
        exact = r["mbb_per_seed"][0]
        bound = "" if r["abstract_exact"] else ">= "
        lines.append(f"| {r['family']} | {'-'.join(map(str, r['buckets']))} | {r['strategy_bytes']:,} | "
                     f"{r['bucket_table_bytes']:,} | {r['mbb_per_game']:.1f} | "
                     f"{min(r['mbb_per_seed']):.1f} - {max(r['mbb_per_seed']):.1f} | "
                     f"{'yes' if id(r) in fronts else ''} | {r['lbr_mbb_per_game']:.1f}{interval} | "
                     f"{exact:.1f} | {r['lbr_mbb_per_game'] / exact:.2f} | "
                     f"{bound}{r['abstract_mbb_per_game']:.1f} | "
                     f"{r['cluster_cpu_seconds']:.1f} | {r['solve_cpu_seconds']:.0f} | "
                     f"{r['evaluate_cpu_seconds']:.0f} | {r['lbr_cpu_seconds']:.0f} | "
                     f"{r['abstract_cpu_seconds']:.0f} |")
    lines += ["", *[f"![{Path(path).stem}]({path})" for path in images], ""]
    curves = [r for r in rows if len(r["curve"]) > 1]
    if curves:
        stops = [p["iterations"] for p in curves[0]["curve"]]
        lines += ["Exploitability (mbb/g, seed 0) against iterations:", "",
                  "| abstraction | " + " | ".join(f"{s:,}" for s in stops) + " |",
                  "|---|" + "---:|" * len(stops)]
        for r in curves:
            lines.append(f"| {r['family']} {'-'.join(map(str, r['buckets']))} | "
                         + " | ".join(f"{p['mbb_per_game']:.1f}" for p in r["curve"]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default=SPEC, help="the game (a reduced-deck hold'em)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="CFR+ iterations per abstraction (default 10,000; quick 60)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="solves per abstraction, seeds 0..SEEDS-1 (default 3; quick 2)")
    parser.add_argument("--lbr-boards", type=int, default=None,
                        help="boards LBR samples (default 300; quick: every board)")
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run (no results file)")
    parser.add_argument("--lossless", action="store_true",
                        help="also solve the lossless abstraction (suit isomorphism only): long")
    parser.add_argument("--out", type=Path, help="markdown file whose holdem-tradeoff section to write")
    parser.add_argument("--work", type=Path, default=None,
                        help="directory for the feature and bucket files (kept, so a rerun reuses them)")
    args = parser.parse_args()
    spec = "holdem(ranks=5,rounds=2,caps=1-1)" if args.quick and args.spec == SPEC else args.spec
    iterations = args.iterations or (60 if args.quick else 10_000)
    seeds = args.seeds or (2 if args.quick else 3)
    lbr_boards = args.lbr_boards or (None if args.quick else 300)
    if iterations < 1 or seeds < 1 or (lbr_boards is not None and lbr_boards < 2):
        parser.error("--iterations and --seeds must be >= 1 and --lbr-boards >= 2")
    command = " ".join(["python benchmarks/bench_holdem_tradeoff.py",
                        *([] if args.spec == SPEC else [f"--spec '{spec}'"]),
                        *([] if args.iterations is None else [f"--iterations {iterations}"]),
                        *([] if args.seeds is None else [f"--seeds {seeds}"]),
                        *([] if args.lbr_boards is None else [f"--lbr-boards {lbr_boards}"]),
                        *(["--quick"] if args.quick else []), *(["--lossless"] if args.lossless else []),
                        *([f"--out {args.out}"] if args.out else [])])
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        result = run_study(spec, iterations, seeds, lbr_boards, args.quick, args.lossless,
                           None if args.quick else RESULTS, work,
                           progress=sys.stderr.isatty() or not args.quick)
    if args.out:
        image_dir = IMAGES if args.out.resolve().parent == (ROOT / "docs") else args.out.parent
        image_dir.mkdir(parents=True, exist_ok=True)
        paths = write_plots(result, image_dir / ("holdem-tradeoff" + ("-quick" if args.quick else "")))
        images = [str(p.relative_to(args.out.resolve().parent)) if p.is_relative_to(args.out.resolve().parent)
                  else str(p) for p in paths]
    else:
        images = []
    text = section(result, command, images)
    print(text)
    if args.out:
        update_section(args.out, "holdem-tradeoff", text)
    if any(math.isnan(r["mbb_per_game"]) for r in result["rows"]):
        raise SystemExit("an exploitability is NaN")


if __name__ == "__main__":
    main()
