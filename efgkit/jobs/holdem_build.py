"""The hold'em main job (``efgkit build "holdem(...)"``, docs/build.md): one command and one
folder for a game too large for a tree.

1. card buckets from the pipeline (``abstraction/cards/holdem``): hand-strength histograms
   with exact EMD k-means on the flop and turn, OCHS on the river, the preflop's classes
   kept; counts given, or scaled to the deck (``default_buckets``);
2. sampled CFR+ (public chance sampling, ``poker/streamed/sampled_cfr.py``) on those buckets to a
   time budget, evaluated exactly at 1/32, 1/16, .. 1 of it as far as half of the evaluation
   budget pays, so the report has a convergence curve against CPU time;
3. the final strategy measured in the real game: the exact full-game best response
   (``StreamedEvaluator``) where its cost, estimated by timing sampled work items first,
   fits the evaluation budget — with the abstract game's exploitability beside it — else
   local best response, a lower bound with its interval;
4. a duplicate match against always-call and always-raise;
5. the strategy as a bucket-strategy file (HDF5, resumable) and a compact ``.efgs`` export
   with its bucket tables, for a device.

Each step's numbers go into the dict ``run_holdem_build`` returns; the CLI writes the report
and the plot. Every file is written atomically.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from efgkit.core.run_loop import run_iterations
from efgkit.errors import ParameterError
from efgkit.games.poker import LimitPoker

BUCKET_FILE, STRATEGY_FILE, EXPORT_FILE = "buckets.h5", "strategy.h5", "strategy.efgs"
MAX_BUCKETS = 1000
CURVE_POINTS = 6
"""Exact evaluations of the convergence curve at most (at 1/32 .. 1 of the solve's budget)."""
ABSTRACT_COST = 4
"""An abstract-game evaluation's cost in exact evaluations, assumed: on holdem(ranks=5) with
3.3M rows it had not finished after 125 CPU s, against 67 s for the exact one."""
UNBOUNDED = 2**62
"""Iterations asked of the run loop when the time budget ends the run."""
COST_SAMPLES = 3
STREETS = ("preflop", "flop", "turn", "river")
BASELINE_OPPONENTS = ("call", "raise")


def canonical_hands(num_ranks: int) -> tuple[int, int, int, int]:
    """Canonical (suit-isomorphic) hands of each street of a ``num_ranks`` deck."""
    from efgkit.abstraction.cards.holdem.features import hand_indexer

    sizes = []
    for board_cards in (0, 3, 4, 5):
        indexer = hand_indexer(board_cards, num_ranks)
        sizes.append(indexer.round_size(indexer.num_rounds - 1))
    return tuple(sizes)  # type: ignore[return-value]


def default_buckets(num_ranks: int) -> tuple[int, int, int, int]:
    """Bucket counts per street for a ``num_ranks`` deck: every preflop class, and after the
    flop about twice the square root of the street's canonical hands, at most MAX_BUCKETS
    (13 ranks: 169-1000-1000-1000, as the released abstractions; 5 ranks: 25-176-330-542)."""
    preflop, *later = canonical_hands(num_ranks)
    return (preflop, *(min(MAX_BUCKETS, round(2 * math.sqrt(canonical))) for canonical in later))


def is_holdem(game) -> bool:
    """Whether ``game`` is hold'em-shaped (two hole cards, four suits, cards dealt one by
    one): the games this job and the bucket pipeline serve."""
    if not isinstance(game, LimitPoker):
        return False
    cards = game.card_structure
    return (cards.num_suits == 4 and cards.private_cards_per_player == 2 and not game.deal_by_rank
            and game.num_rounds == 4 and tuple(cards.public_cards_per_round) == (0, 3, 1, 1))


@dataclass(frozen=True)
class HoldemBuild:
    """What to build (see the module docstring); ``buckets`` None scales them to the deck."""

    game: LimitPoker
    folder: Path
    solve_seconds: float = 120.0
    eval_seconds: float = 300.0
    buckets: tuple[int, int, int, int] | None = None
    bits: int = 8
    seed: int = 0
    workers: int = 0
    match_boards: int = 2000
    lbr_boards: int = 200
    target_mbb: float | None = None
    """Stop the solve at the first curve point whose exact exploitability (mbb/g) is at most this."""
    sizes: tuple[int, ...] = ()
    """Flop, turn and river bucket counts of the memory-against-exploitability sweep (``sweep``)."""

    def check(self) -> None:
        if not is_holdem(self.game):
            raise ParameterError(f"{self.game.spec}: the hold'em build needs a holdem(...) game with four "
                                 f"betting rounds")
        if not self.solve_seconds > 0 or not self.eval_seconds > 0:
            raise ParameterError(f"--time and --eval-time must be > 0 seconds, got {self.solve_seconds} and "
                                 f"{self.eval_seconds}")
        if self.buckets is not None and (len(self.buckets) != 4 or min(self.buckets) < 1):
            raise ParameterError(f"--buckets {self.buckets}: four positive counts (preflop,flop,turn,river)")
        hands = canonical_hands(self.game.card_structure.num_ranks)
        for option, counts in [("--buckets", self.buckets or ())] + [("--sizes", (hands[0], n, n, n))
                                                                     for n in self.sizes]:
            for street, count, canonical in zip(STREETS, counts, hands, strict=False):  # --buckets may be ()
                if not 1 <= count <= canonical:
                    raise ParameterError(f"{option}: {count:,} {street} buckets; the {street} of "
                                         f"{self.game.spec} has {canonical:,} canonical hands (1 to "
                                         f"{canonical:,} buckets)")
        if self.target_mbb is not None and not self.target_mbb > 0:
            raise ParameterError(f"--target {self.target_mbb:g}: an exploitability in mbb/g > 0 (no finite "
                                 f"solve reaches 0)")
        if self.match_boards < 2 or self.lbr_boards < 2:
            raise ParameterError("the match and LBR need at least 2 boards")


def estimated_exact_seconds(evaluator, strategy: np.ndarray, seed: int) -> float:
    """Seconds of one exact full-game evaluation (both best responses) in this process: the
    mean time of COST_SAMPLES work items drawn at random (after one untimed item, which
    compiles or loads the kernels), times the work items, times two players."""
    from efgkit.poker.codes import BEST_RESPONSE

    items = evaluator.work_items
    reach = evaluator.entry_reach(strategy, 0)
    rng = np.random.default_rng(seed)
    evaluator.item_values(strategy, 0, BEST_RESPONSE, reach, items - 1)
    drawn = rng.choice(items, size=min(COST_SAMPLES, items), replace=False)
    started = time.process_time()
    for item in drawn.tolist():
        evaluator.item_values(strategy, 0, BEST_RESPONSE, reach, item)
    return (time.process_time() - started) / drawn.size * items * 2


def run_holdem_build(build: HoldemBuild, say: Callable[[str], None], progress: bool = False) -> dict:
    """Run the job (module docstring); ``say`` hears a line as each step starts or ends."""
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_cfr import SampledCFR
    from efgkit.storage.checkpoint import write_sampled

    build.check()
    game, folder = build.game, build.folder
    ranks = game.card_structure.num_ranks
    buckets = build.buckets or default_buckets(ranks)
    data: dict = {"game": game.spec, "buckets": list(buckets), "solve_seconds_budget": build.solve_seconds,
                  "eval_seconds_budget": build.eval_seconds, "seed": build.seed, "bits": build.bits}

    say(f"1/5 card buckets {'-'.join(map(str, buckets))} for the {ranks}-rank deck (EMD flop and turn, "
        f"OCHS river)")
    options = AbstractionOptions(buckets=buckets, num_ranks=ranks, seed=build.seed)
    with ChunkRunner(workers=build.workers) as runner:
        summary = build_abstraction(options, folder / BUCKET_FILE, runner=runner, progress=progress)
    data["abstraction"] = {"seconds": summary["seconds"], "buckets": summary["buckets"],
                           "streets": summary["streets"], "file": BUCKET_FILE}
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, folder / BUCKET_FILE))
    solver = SampledCFR(layout, seed=build.seed)
    evaluator = StreamedEvaluator(layout)
    data["rows"], data["solver_bytes"] = layout.num_rows, int(sum(solver.memory().values()))

    say(f"2/5 sampled CFR+ on {layout.num_rows:,} rows for {build.solve_seconds:g} s")
    history, cpu, cost = _solve(solver, evaluator, build, progress)
    strategy = solver.average_strategy()
    data.update(iterations=solver.iteration, solve_cpu_seconds=cpu, history=history,
                estimated_exact_seconds_at_start=cost)
    if build.target_mbb is not None:
        data.update(target_mbb=build.target_mbb, target_reached=bool(history) and (
            history[-1]["exploitability_mbb_per_game"] <= build.target_mbb))
    provenance = {"algorithm": "cfr+", "parameters": solver.parameters, "precision": solver.precision,
                  "seed": build.seed}
    write_sampled(str(folder / STRATEGY_FILE), solver, provenance, history, cpu)

    say("3/5 exploitability in the real game")
    data["evaluation"] = _evaluate(evaluator, layout, strategy, build, history, solver.iteration)
    say("4/5 duplicate matches against " + " and ".join(f"always-{name}" for name in BASELINE_OPPONENTS))
    data["matches"] = _matches(layout, strategy, build)
    say(f"5/5 export ({build.bits}-bit probabilities) for a device")
    data["export"] = _export(layout, strategy, build, evaluator, data["evaluation"]["kind"] == "exact")
    if build.sizes:
        say(f"memory against exploitability: {len(build.sizes)} more bucket counts")
        data["sizes"] = sweep(build, buckets[0], say, progress)
    return data


def check_target(build: HoldemBuild) -> None:
    """Refuse --target (before anything is built or written) when the exact evaluation it is
    checked with does not fit half of --eval-time: its cost, estimated on card-independent
    rows, depends on the boards and hands walked, hardly on the buckets."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import CardIndependent
    from efgkit.poker.streamed.full_game import StreamedEvaluator

    layout = BucketLayout(BettingTree(build.game), CardIndependent())
    cost = estimated_exact_seconds(StreamedEvaluator(layout), layout.uniform(), build.seed)
    if 2 * cost > build.eval_seconds:
        raise ParameterError(_target_refusal(build, cost))


def _target_refusal(build: HoldemBuild, cost: float) -> str:
    return (f"--target {build.target_mbb:g}: the exact evaluation it is checked with is estimated at "
            f"{cost:,.0f} CPU s, more than half of --eval-time ({build.eval_seconds:g} s); raise --eval-time "
            f"to {2 * cost:,.0f} or more")


def _solve(solver, evaluator, build: HoldemBuild, progress: bool) -> tuple[list[dict], float, float]:
    """Iterate for the time budget (after a first, uncounted iteration that compiles or loads
    the kernels), stopping at 1/2**k of it for the exact evaluations of the convergence
    curve: as many of the last CURVE_POINTS stops as half of --eval-time pays for at the
    estimated cost of one. With a target the solve ends at the first of them whose
    exploitability reaches it; a target needs at least one such evaluation (else a
    ParameterError: no lower bound or abstract-game value may stand in for it). The
    history, the solver's CPU seconds and that estimate."""
    from efgkit.io.progress import progress_bar

    started = time.process_time()
    solver.iterate(1)
    cost = estimated_exact_seconds(evaluator, solver.average_strategy(), build.seed)
    points = min(CURVE_POINTS, int(build.eval_seconds / 2 // max(cost, 1e-9)))
    if build.target_mbb is not None and not points:
        raise ParameterError(_target_refusal(build, cost))
    stops = [build.solve_seconds / 2 ** k for k in reversed(range(max(points, 1)))]
    history: list[dict] = []
    cpu = time.process_time() - started
    begun = time.monotonic()
    with progress_bar(total=round(build.solve_seconds), unit="s", desc="sampled CFR+",
                      enabled=progress) as bar:
        for stop in stops:
            remaining = begun + stop - time.monotonic()
            started = time.process_time()
            if remaining > 0:
                run_iterations(solver, UNBOUNDED, time_limit=remaining)
            cpu += time.process_time() - started
            bar.update(min(round(stop), bar.total) - bar.n)
            bar.set_postfix(iterations=solver.iteration)
            if points:
                evaluation = evaluator.evaluate(solver.average_strategy(), game_value=False)
                history.append({"iteration": solver.iteration, "cpu_seconds": cpu,
                                "nash_conv": evaluation.nash_conv, "exploitability_mbb_per_game":
                                solver.betting.game.mbb(evaluation.exploitability)})
                if build.target_mbb is not None and (history[-1]["exploitability_mbb_per_game"]
                                                     <= build.target_mbb):
                    break
    return history, cpu, cost


def _evaluate(evaluator, layout, strategy: np.ndarray, build: HoldemBuild, history: list[dict],
              iterations: int) -> dict:
    """The exact full-game exploitability where its estimated cost fits the evaluation budget
    (the curve's last point when it is the final strategy's), with the abstract game's beside
    it where the budget left pays for one more walk; else LBR, a lower bound."""
    from efgkit.poker.streamed.abstract_best_response import abstract_evaluation
    from efgkit.poker.streamed.local_best_response import LocalBestResponse

    game = layout.betting.game
    estimate = estimated_exact_seconds(evaluator, strategy, build.seed)
    result: dict = {"estimated_exact_seconds": estimate}
    started = time.process_time()
    if estimate > build.eval_seconds:
        lbr = LocalBestResponse(layout, strategy, seed=build.seed).run(build.lbr_boards)
        low, high = lbr.confidence_interval
        result.update(kind="lbr", lbr_mbb_per_game=game.mbb(lbr.mean), lbr_boards=lbr.boards,
                      lbr_ci95_mbb=[game.mbb(low), game.mbb(high)])
    else:
        if history and history[-1]["iteration"] == iterations:
            nash_conv = history[-1]["nash_conv"]
        else:
            nash_conv = evaluator.evaluate(strategy, game_value=False).nash_conv
        result.update(kind="exact", nash_conv=nash_conv,
                      exploitability_mbb_per_game=game.mbb(nash_conv / 2))
        if time.process_time() - started + ABSTRACT_COST * estimate <= build.eval_seconds:
            abstract = abstract_evaluation(evaluator, strategy)
            result.update(abstract_exploitability_mbb_per_game=game.mbb(abstract.exploitability),
                          abstract_exact=abstract.exact)
    result["seconds"] = time.process_time() - started
    return result


def _matches(layout, strategy: np.ndarray, build: HoldemBuild) -> dict:
    from efgkit.poker.streamed.match import HeadToHead, baseline

    game = layout.betting.game
    matches = {}
    for name in BASELINE_OPPONENTS:
        opponent_layout, opponent = baseline(layout.betting, name)
        match = HeadToHead(layout, strategy, opponent_layout, opponent, seed=build.seed)
        estimate = match.run(build.match_boards)
        low, high = estimate.confidence_interval
        matches[name] = {"mbb_per_game": game.mbb(estimate.mean), "boards": estimate.boards,
                         "ci95_mbb": [game.mbb(low), game.mbb(high)], "every_board": estimate.exact}
    return matches


def _export(layout, strategy: np.ndarray, build: HoldemBuild, evaluator, exact: bool) -> dict:
    """The compact file and its bucket tables; what the device plays measured exactly too
    where the exact evaluation ran."""
    from efgkit.storage.compact_holdem import export_bucket_strategy

    exported = export_bucket_strategy(layout, strategy, build.folder / EXPORT_FILE, bits=build.bits)
    result = {"file": EXPORT_FILE, "bytes": exported.bytes, "index_bytes": exported.index_bytes,
              "card_table_bytes": exported.card_table_bytes,
              "bucket_tables_file": exported.bucket_tables_path and Path(exported.bucket_tables_path).name,
              "bucket_tables_bytes": exported.bucket_tables_bytes,
              "total_bytes": exported.bytes + (exported.bucket_tables_bytes if exported.bucket_tables_path
                                               else 0),
              "max_abs_error": exported.max_abs_error}
    if exact:
        played = evaluator.evaluate(exported.dequantized(), game_value=False)
        result["exploitability_mbb_per_game"] = layout.betting.game.mbb(played.exploitability)
    return result


def sweep(build: HoldemBuild, preflop: int, say: Callable[[str], None], progress: bool = False) -> list[dict]:
    """Memory against exploitability across bucket counts: for each of ``build.sizes`` (the
    flop, turn and river buckets; the preflop keeps ``preflop``), a bucket file in
    ``sizes/``, sampled CFR+ for the solve budget and the evaluation of step 3 (exact where
    its estimate fits --eval-time, else local best response, a lower bound). One dict a size:
    buckets, rows, solver memory in bytes and 32-bit words, and the evaluation."""
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_cfr import SampledCFR

    game, points = build.game, []
    (build.folder / "sizes").mkdir(exist_ok=True)
    for number, size in enumerate(build.sizes, 1):
        buckets = (preflop, size, size, size)
        say(f"size {number}/{len(build.sizes)}: buckets {'-'.join(map(str, buckets))}")
        path = build.folder / "sizes" / f"buckets-{size}.h5"
        with ChunkRunner(workers=build.workers) as runner:
            build_abstraction(AbstractionOptions(buckets=buckets, num_ranks=game.card_structure.num_ranks,
                                                 seed=build.seed), path, runner=runner, progress=progress)
        layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, path))
        solver = SampledCFR(layout, seed=build.seed)
        started = time.process_time()
        solver.iterate(1)
        run_iterations(solver, UNBOUNDED, time_limit=build.solve_seconds)
        cpu = time.process_time() - started
        solver_bytes = int(sum(solver.memory().values()))
        evaluation = _evaluate(StreamedEvaluator(layout), layout, solver.average_strategy(), build, [],
                               solver.iteration)
        points.append({"size": size, "buckets": list(buckets), "rows": layout.num_rows,
                       "iterations": solver.iteration, "solve_cpu_seconds": cpu, "solver_bytes": solver_bytes,
                       "memory_words": solver_bytes // 4, "evaluation": evaluation})
    return points
