"""Full-game best response benchmark: the streamed engine on hold'em, per canonical flop.

Measures (issue 13 targets in brackets):
* a reduced hold'em whose public tree fits in memory: the streamed walk against the
  materialised public-tree engine, same strategy (time, and the values agree to 1e-9);
* ``holdem(ranks=8)`` (32 cards, four rounds): CPU seconds per canonical flop for both players'
  best responses on a sample of flops, extrapolated to all 400 canonical flops on one core
  and on two Dask workers                                              [<= 15 min, 2 cores];
* heads-up limit hold'em (52 cards): the same per canonical flop, extrapolated to the 1,755
  canonical flops                       [goal <= 24 CPU-hours; Johanson et al. 2011: 76 CPU-days];
* strategy bytes and peak RSS (nothing proportional to the public tree is allocated).

The strategies are random (every probability > 0, so no subtree is pruned: the worst case) on
random suit-symmetric imperfect-recall buckets (``IsomorphicCards.hashed``; the walk's cost
depends on the bucket counts only through the strategy's size). ``--full`` runs only the whole
``holdem(ranks=8)`` best response on a LocalCluster (two workers by default). ``--cost-model``
walks nothing: it counts the river boards walked below each canonical flop and corrects the
sample's extrapolation by them (CPU per flop taken proportional to river boards).

Run ``python benchmarks/bench_full_game.py`` (writes the "full-game" section of
docs/benchmarks.md) or ``--quick`` for a smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import resource
import time
from pathlib import Path

import numpy as np
from markdown_sections import update_section

from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards
from efgkit.poker.codes import BEST_RESPONSE
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.streamed.card_blind import blind_classes, blind_item_values
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.specs import make_game

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
CROSS_CHECK = "holdem(ranks=4,rounds=3,caps=1-1-1)"
QUICK_CROSS_CHECK = "holdem(ranks=3,rounds=3,caps=1-1-1)"
"""The smoke run's cross-check: the materialised public tree of CROSS_CHECK takes 2.8 GB."""
JOHANSON_2011_CPU_HOURS = 76 * 24


def setup(spec: str, buckets: tuple[int, ...]) -> tuple[StreamedEvaluator, np.ndarray]:
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, buckets, seed=1))
    return StreamedEvaluator(layout), layout.random(2)


def cross_check(spec: str = CROSS_CHECK) -> list[str]:
    evaluator, strategy = setup(spec, (20, 50, 50, 50))
    start = time.perf_counter()
    public = PublicTree(evaluator.betting.game)
    reference = evaluate_strategy(StrategyLayout.from_bucket_layout(public, evaluator.layout), strategy)
    materialised = time.perf_counter() - start
    start = time.perf_counter()
    streamed = evaluator.evaluate(strategy)
    seconds = time.perf_counter() - start
    difference = max(abs(a - b) for a, b in zip(streamed.best_response_values, reference.best_response_values,
                                                 strict=True))
    return [f"| {spec} | {public.num_nodes:,} x {public.num_hands} | {materialised:.1f} s "
            f"(build + layout + evaluate) | {seconds:.2f} s | {difference:.1e} |"]


def sample_picks(flops: int, sample: int) -> list[int]:
    """The indices into the canonical flops that ``per_flop`` times for ``sample``."""
    return np.linspace(0, flops - 1, sample).round().astype(int).tolist()


WARM_UP = ("holdem(ranks=4)", (4, 6, 6, 6))
"""A four-round game whose first flop compiles (or loads) the walk's kernels before the timings:
the kernels' types do not depend on the deck."""


def per_flop(spec: str, buckets: tuple[int, ...], sample: int) -> dict:
    """CPU seconds of both players' best-response walks per canonical flop, on ``sample``
    flops spread over the canonical list (CPU time, not wall: the machine may be shared),
    after one flop of ``WARM_UP`` (compiling is not timed)."""
    warm, warm_strategy = setup(*WARM_UP)
    for player in (0, 1):
        warm.item_values(warm_strategy, player, BEST_RESPONSE, warm.entry_reach(warm_strategy, player), 0)
    evaluator, strategy = setup(spec, buckets)
    evaluator.layout.checked(strategy)
    reach = [evaluator.entry_reach(strategy, player) for player in (0, 1)]
    picks = sample_picks(len(evaluator.items), sample)
    seconds = []
    for item in picks:
        start = time.process_time()
        for player in (0, 1):
            evaluator.item_values(strategy, player, BEST_RESPONSE, reach[player], item)
        seconds.append(time.process_time() - start)
        print(f"{spec}: flop {evaluator.items[item]} {seconds[-1]:.1f} s", flush=True)
    return {"flops": len(evaluator.items), "sample": picks, "seconds": seconds,
            "strategy_bytes": strategy.nbytes, "hands": evaluator.hand_cards.shape[0]}


def board_counts(spec: str) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The canonical flops of ``spec`` and int64 (flops, later deals) the boards the streamed
    walk visits after each (turns, rivers): those ``StreamedEvaluator.level_boards`` keeps, the
    canonical deal of each class under the permutations fixing the board so far (a
    suit-symmetric abstraction; which one does not change the boards)."""
    evaluator = StreamedEvaluator(BucketLayout(BettingTree(make_game(spec)), CardIndependent()))
    counts = [[sum(board is not None for board, _, _ in level) for level in evaluator.level_boards(flop)[2:]]
              for flop in evaluator.items]
    return evaluator.items, np.array(counts, np.int64)


def sample_factors(flops: list[tuple[int, ...]], rivers: np.ndarray, sample: int) -> str:
    """A table cell: ``per_flop``'s ``sample`` flops, their river boards and the all-flop mean
    of river boards over their mean (what the sample mean of CPU is multiplied by when CPU per
    flop is proportional to river boards)."""
    picks = sample_picks(len(flops), sample)
    mean = rivers[picks].mean()
    boards = ", ".join(f"{flops[i]}: {rivers[i]}" for i in picks)
    return f"{boards}; mean {mean:.1f}, **{rivers.mean() / mean:.3f}x**"


def cost_model_row(spec: str) -> str:
    """A row of the ``--cost-model`` table: the boards walked per flop of ``spec`` and the
    sample factors."""
    flops, counts = board_counts(spec)
    turns, rivers = counts[:, 0], counts[:, -1]
    return (f"| {spec} | {len(flops):,} | {turns.mean():.1f} ({turns.min()}-{turns.max()}) | "
            f"{rivers.sum():,} | {rivers.mean():.1f} ({rivers.min()}-{rivers.max()}) | "
            f"{sample_factors(flops, rivers, 3)} | {sample_factors(flops, rivers, 4)} |")


def cost_model_section() -> str:
    """The ``--cost-model`` section body: the boards walked per flop of ``holdem(ranks=8)``
    and HULHE with the sample factors."""
    rows = [cost_model_row(spec) for spec in ("holdem(ranks=8)", "holdem")]
    title = f"## Cost model of the full-game best response: river boards per flop — {datetime.date.today()}"
    return (f"{title}\n\n`python benchmarks/bench_full_game.py --cost-model`, no walk. Below each "
            "canonical flop the streamed walk visits one turn per suit-isomorphism class under the flop's "
            "stabiliser and one river per class under the stabiliser of flop and turn, so flops with "
            "symmetry (one rank in three suits, monotone) walk fewer boards (the evaluator's own "
            "`level_boards`, counted without walking). If CPU per flop is "
            "proportional to the river boards, `per_flop`'s sample mean times the factor below is the "
            "all-flop mean (the full-game section's last columns extrapolate so). The model leaves out the "
            "work per flop and per turn board (turns vary less than rivers between flops).\n\n"
            "| game | canonical flops | turn boards per flop (min-max) | river boards | per flop (min-max) "
            "| sample 3: river boards; mean, all-flop / sample mean | sample 4 |\n"
            "|---|---:|---:|---:|---:|---|---|\n" + "\n".join(rows) + "\n")


BASELINES = {
    "always fold": lambda labels: labels.index("fold") if "fold" in labels else labels.index("call"),
    "always call": lambda labels: labels.index("call"),
    "always raise": lambda labels: next(labels.index(a) for a in ("raise", "bet", "call") if a in labels),
}
"""Pure card-independent baselines (``BucketLayout.pure`` choices); "uniform random" is the fourth."""


def baseline_strategy(layout: BucketLayout, name: str) -> np.ndarray:
    """The strategy ``name`` (a key of ``BASELINES`` or "uniform random") on ``layout``."""
    return layout.uniform() if name == "uniform random" else layout.pure(BASELINES[name])


def _peak_rss() -> int:
    """This process's peak resident set size in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def card_blind_per_flop(spec: str, names: list[str], sample: int) -> list[str]:
    """CPU seconds per canonical flop of both players' best responses to card-blind
    baselines, the general walk and the card-blind one alternating flop by flop in this
    process (``item_values`` per player against ``card_blind.blind_item_values`` for both:
    each builds the flop's board tables once per call)."""
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), CardIndependent())
    evaluator = StreamedEvaluator(layout)
    picks = sample_picks(len(evaluator.items), sample)
    targets = [(0, BEST_RESPONSE), (1, BEST_RESPONSE)]
    rows = []
    for name in names:
        strategy = baseline_strategy(layout, name)
        reach = [evaluator.entry_reach(strategy, player) for player in (0, 1)]
        classes = [blind_classes(evaluator.templates, layout.betting, layout, strategy, *t) for t in targets]
        general, blind = [], []
        for player in (0, 1):  # compile (or load) both walks' kernels outside the timings
            evaluator.item_values(strategy, player, BEST_RESPONSE, reach[player], picks[-1])
        blind_item_values(evaluator, classes, targets, picks[-1])
        for item in picks:
            start = time.process_time()
            sums = [evaluator.item_values(strategy, p, BEST_RESPONSE, reach[p], item).sum() for p in (0, 1)]
            general.append(time.process_time() - start)
            start = time.process_time()
            blind_item_values(evaluator, classes, targets, item)
            blind.append(time.process_time() - start)
            print(f"{spec} {name} flop {evaluator.items[item]}: general {general[-1]:.2f} CPU-s, card-blind "
                  f"{blind[-1]:.2f} (entry sums {sums[0]:.6g} {sums[1]:.6g})", flush=True)
        g, b = float(np.mean(general)), float(np.mean(blind))
        river = int(classes[0].class_start[-1] - classes[0].class_start[-2])
        flops = ", ".join(str(evaluator.items[i]) for i in picks)
        rows.append(f"| {spec} | {name} | {len(picks)} ({flops}) | "
                    f"{g:.2f} ({', '.join(f'{x:.2f}' for x in general)}) | "
                    f"{b:.2f} ({', '.join(f'{x:.2f}' for x in blind)}) | {g / b:.1f}x | "
                    f"{b * len(evaluator.items) / 3600:.2f} h | "
                    f"{river} ({'/'.join(str(int(c.live_count[-1])) for c in classes)}) |")
        print(rows[-1], flush=True)
    return rows


def _progress_printer(name: str, total: int, start: float):
    """A ``progress`` callback printing every 100 first-deal walks (of ``total``)."""
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
        if done[0] % 100 < n or done[0] == total:
            print(f"{name}: {done[0]:,} of {total:,} first-deal walks, {time.perf_counter() - start:.0f} s",
                  flush=True)
    return progress


def timed_evaluate(evaluator: StreamedEvaluator, strategy: np.ndarray, name: str, workers: int,
                   card_blind: bool | None = None) -> tuple:
    """Both players' best responses to ``strategy`` on ``workers`` fresh Dask workers: the
    result, where it ran, wall seconds, CPU seconds (this process and its workers) and the
    largest peak RSS of any process."""
    start, cpu_start = time.perf_counter(), time.process_time()
    with ChunkRunner(workers=workers) as runner:
        progress = _progress_printer(name, 2 * evaluator.work_items, start)
        result = evaluator.evaluate(strategy, runner=runner, game_value=False, card_blind=card_blind,
                                    progress=progress)
        worker_cpu = sum(runner.on_workers(time.process_time))  # fresh workers: all theirs
        peak = max([_peak_rss(), *runner.on_workers(_peak_rss)])
        where = runner.description
    return result, where, time.perf_counter() - start, time.process_time() - cpu_start + worker_cpu, peak


def baselines(spec: str, names: list[str], workers: int, card_blind: bool | None = None) -> list[str]:
    """Exact full-game exploitability (mbb/g) of card-independent baseline strategies: the
    walk that ran, wall and CPU time (this process and its workers), peak RSS per process."""
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), CardIndependent())
    evaluator = StreamedEvaluator(layout)
    rows = []
    for name in names:
        result, where, seconds, cpu, peak = timed_evaluate(evaluator, baseline_strategy(layout, name), name,
                                                           workers, card_blind)
        mbb = result.exploitability / max(game.blinds) * 1000
        rows.append(f"| {spec} | {name} | {mbb:.3f} | {result.best_response_values[0]:.6f} | "
                    f"{result.best_response_values[1]:.6f} | {' / '.join(sorted(set(evaluator.paths)))} | "
                    f"{seconds / 60:.1f} min on {where}, {cpu:,.0f} CPU-s | {peak / 2**20:,.0f} MiB |")
        print(rows[-1], flush=True)
    return rows


def full_run(spec: str, buckets: tuple[int, ...], workers: int) -> str:
    """The whole best response of ``spec`` (both players, random strategy on random buckets,
    the same as ``per_flop``'s) on ``workers`` Dask workers, as a markdown section body."""
    evaluator, strategy = setup(spec, buckets)
    result, where, seconds, cpu, peak = timed_evaluate(evaluator, strategy, spec, workers)
    mbb = result.exploitability / max(evaluator.betting.game.blinds) * 1000
    return (f"| game | flops | wall time | CPU time | per flop | peak RSS per process | exploitability |\n"
            f"|---|---:|---:|---:|---:|---:|---:|\n"
            f"| {spec} ({'-'.join(map(str, buckets))} random buckets) | {len(evaluator.items):,} | "
            f"**{seconds / 60:.1f} min** on {where} | {cpu / 3600:.2f} h | "
            f"{cpu / len(evaluator.items):.1f} s | "
            f"{peak / 2**20:,.0f} MiB | {mbb:,.1f} mbb/g |\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small games only; writes nothing")
    parser.add_argument("--sample", type=int, default=4, help="canonical flops timed per game (default 4)")
    parser.add_argument("--full", action="store_true",
                        help="only the whole holdem(ranks=8) best response on --workers workers (section "
                             "full-game-whole)")
    parser.add_argument("--baselines", metavar="GAME", default=None,
                        help="only the exact exploitability of always fold / call / raise in GAME (section "
                             "full-game-baselines)")
    parser.add_argument("--which", default="always fold,always call,always raise",
                        help="the baselines of --baselines, comma-separated")
    parser.add_argument("--workers", type=int, default=2,
                        help="Dask workers for --baselines and --full (default 2)")
    parser.add_argument("--walk", choices=("auto", "general", "card-blind"), default="auto",
                        help="--baselines: the card-blind walk where it applies (auto), or force one")
    parser.add_argument("--card-blind", action="store_true",
                        help="only CPU s per canonical flop of the general and the card-blind walk on "
                             "always raise / uniform random (section full-game-card-blind)")
    parser.add_argument("--cost-model", action="store_true",
                        help="only the river boards walked per flop, no walk: how far the sample's mean "
                             "misestimates the all-flop mean (section full-game-cost-model)")
    args = parser.parse_args()
    if args.cost_model:
        body = cost_model_section()
        print(body)
        if not args.quick:
            update_section(DOCS, "full-game-cost-model", body)
        return
    if args.card_blind:
        rows = ["| game | strategy | flops | general walk, CPU s per flop | card-blind walk | ratio | "
                "card-blind, all flops (CPU) | river classes (live p0/p1) |",
                "|---|---|---|---:|---:|---:|---:|---:|"]
        for spec, sample in (("holdem(ranks=8)", args.sample), ("holdem", 3)):
            rows += card_blind_per_flop(spec, ["always raise", "uniform random"], 1 if args.quick else sample)
        peak = _peak_rss() / 2**20
        header = (f"## Full-game best response against card-blind strategies — {datetime.date.today()}\n\n"
                  f"`python benchmarks/bench_full_game.py --card-blind --sample {args.sample}`: both "
                  "players' best responses per canonical flop (CPU seconds, the two walks alternating flop "
                  f"by flop in one process on a shared machine; peak RSS {peak:,.0f} MiB).\n\n")
        print("\n".join(rows))
        if not args.quick:
            update_section(DOCS, "full-game-card-blind", header + "\n".join(rows) + "\n")
        return
    if args.full:
        body = full_run("holdem(ranks=8)", (64, 300, 300, 300), args.workers)
        print(body)
        header = (f"## Whole `holdem(ranks=8)` best response — {datetime.date.today()}, "
                  f"{platform.processor() or platform.machine()}\n\n"
                  f"`python benchmarks/bench_full_game.py --full --workers {args.workers}`: both players' "
                  "best responses, every canonical flop, on a Dask LocalCluster (target: <= 15 min on 2 "
                  "cores). CPU time is this process's and its workers'.\n\n")
        update_section(DOCS, "full-game-whole", header + body)
        return
    if args.baselines:
        rows = baselines(args.baselines, args.which.split(","), args.workers,
                         {"auto": None, "general": False, "card-blind": True}[args.walk])
        header = (f"## Baseline strategies, exact in the full game — {datetime.date.today()}\n\n"
                  f"`python benchmarks/bench_full_game.py --baselines {args.baselines}`: card-independent "
                  f"strategies evaluated by the streamed best response (both players, suit isomorphism).\n\n"
                  "| game | strategy | exploitability mbb/g | BR value p0 | BR value p1 | walk | time | "
                  "peak RSS per process |\n|---|---|---:|---:|---:|---|---|---:|\n")
        if not args.quick:
            update_section(DOCS, f"full-game-baselines-{args.baselines}", header + "\n".join(rows) + "\n")
        return
    lines = []
    games = ((("holdem(ranks=5,rounds=3)", (10, 20, 20)),) if args.quick else
             (("holdem(ranks=8)", (64, 300, 300, 300)), ("holdem", (169, 1000, 1000, 1000))))
    lines += ["| game | canonical flops | hands | CPU s per flop (both players), sample | "
              "extrapolated CPU time | on 2 cores | by river boards walked: CPU time | on 2 cores | "
              "strategy bytes |", "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for spec, buckets in games:
        measured = per_flop(spec, buckets, 1 if args.quick else args.sample)
        mean = float(np.mean(measured["seconds"]))
        total = mean * measured["flops"]
        rivers = board_counts(spec)[1][:, -1]  # CPU per flop taken proportional to its river boards
        weighted = mean / rivers[measured["sample"]].mean() * rivers.sum()
        sample = ", ".join(f"{s:.1f}" for s in measured["seconds"])
        lines.append(f"| {spec} ({'-'.join(map(str, buckets))} random buckets) | {measured['flops']:,} | "
                     f"{measured['hands']:,} | {mean:.1f} ({sample}) | {total / 3600:.2f} h | "
                     f"{total / 7200:.2f} h | {weighted / 3600:.2f} h | {weighted / 7200:.2f} h | "
                     f"{measured['strategy_bytes']:,} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    lines += ["", f"Peak RSS of the streamed runs above: {peak / 2**20:,.0f} MiB. Johanson et al. 2011 "
                  f"report {JOHANSON_2011_CPU_HOURS:,} CPU-hours (76 CPU-days) for the full best response "
                  f"in HULHE.", "",
              "| cross-check | public nodes x hands | public-tree engine | streamed "
              "| largest BR difference |",
              "|---|---:|---:|---:|---:|", *cross_check(QUICK_CROSS_CHECK if args.quick else CROSS_CHECK)]
    table = "\n".join(lines)
    print(table)
    if not args.quick:
        machine = platform.processor() or platform.machine()
        header = (f"## Full-game best response (streamed) — {datetime.date.today()}, {machine}\n\n"
                  f"`python benchmarks/bench_full_game.py --sample {args.sample}`. Targets: "
                  "`holdem(ranks=8)` in <= 15 min on 2 cores; "
                  f"HULHE <= 24 CPU-hours (goal).\n\n")
        update_section(DOCS, "full-game", header + table + "\n")


if __name__ == "__main__":
    main()
