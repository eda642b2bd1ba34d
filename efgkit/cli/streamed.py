"""``efgkit solve --engine sampled`` and ``efgkit evaluate --engine streamed``: poker games on
card abstractions without building their tree (docs/poker-engine.md, docs/holdem.md)."""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

from efgkit.cli.app import emit, show_progress
from efgkit.errors import ParameterError
from efgkit.games.poker import LimitPoker
from efgkit.poker.best_response import PokerEvaluation
from efgkit.specs import make_game


def poker_game(spec: str) -> LimitPoker:
    game = make_game(spec)
    if not isinstance(game, LimitPoker):
        raise ParameterError(f"{spec}: the sampled and streamed engines play limit poker games only")
    return game


def evaluation_lines(spec: str, game: LimitPoker, evaluation: PokerEvaluation) -> tuple[dict, list[str]]:
    """JSON fields and text lines of an evaluation, with mbb/g where the game has a big blind."""
    big_blind = max(game.blinds)
    data = {"nash_conv": evaluation.nash_conv, "exploitability": evaluation.exploitability,
            "best_response_values": list(evaluation.best_response_values),
            "game_value": evaluation.game_value}
    lines = [f"NashConv {evaluation.nash_conv:.6e}  (NashConv/2, OpenSpiel's exploitability: "
             f"{evaluation.exploitability:.6e})",
             f"best-response values: player 0 {evaluation.best_response_values[0]:.9f}, "
             f"player 1 {evaluation.best_response_values[1]:.9f}"]
    if big_blind > 0:
        data["exploitability_mbb_per_game"] = evaluation.exploitability / big_blind * 1000
        lines.append(f"exploitability {data['exploitability_mbb_per_game']:.3f} mbb/g "
                     f"(big blind {big_blind})")
    if evaluation.game_value == evaluation.game_value:  # not NaN
        lines.append(f"game value (player 0): {evaluation.game_value:.9f}")
    return data, lines


def streamed_evaluation(layout, strategy, workers: int, scheduler: str | None,
                        game_value: bool) -> tuple[PokerEvaluation, str]:
    """Exact full-game evaluation with a progress bar over the work items; where it ran."""
    from efgkit.abstraction.cards.holdem.executor import ChunkRunner
    from efgkit.poker.full_game import StreamedEvaluator

    evaluator = StreamedEvaluator(layout)
    walks = 2 + game_value
    with ChunkRunner(scheduler=scheduler, workers=workers) as runner, \
            tqdm(total=walks * evaluator.work_items, unit="flop", desc="best response", file=sys.stderr,
                 disable=not show_progress(), leave=False) as bar:
        evaluation = evaluator.evaluate(strategy, runner=runner, game_value=game_value,
                                        progress=bar.update)
        return evaluation, runner.description


def solve_sampled(spec: str, algorithm: str, options: dict, iterations: int, buckets: str, seed: int,
                  out: str | None, evaluate: bool, as_json: bool) -> None:
    """CFR with public chance sampling on the card abstraction ``buckets``."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.bucket_layout import BucketLayout
    from efgkit.poker.card_abstraction import abstraction_named
    from efgkit.poker.sampled_cfr import SampledCFR
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    game = poker_game(spec)
    layout = BucketLayout(BettingTree(game), abstraction_named(game, buckets))
    solver = SampledCFR(layout, variant=algorithm, seed=seed, **options)
    started = time.perf_counter()
    chunk = max(1, iterations // 200)
    with tqdm(total=iterations, unit="it", desc=f"{algorithm} (public chance sampling)", file=sys.stderr,
              disable=not show_progress(), leave=False) as bar:
        while solver.iteration < iterations:
            step = min(chunk, iterations - solver.iteration)
            solver.iterate(step)
            bar.update(step)
    seconds = time.perf_counter() - started
    strategy = solver.average_strategy()
    data = {"game": game.spec, "engine": "sampled", "algorithm": algorithm, "iterations": iterations,
            "seconds": seconds, "abstraction": layout.abstraction.description, "rows": layout.num_rows,
            "strategy_bytes": strategy.nbytes, "solver_state_bytes": 2 * strategy.nbytes}
    lines = [f"{algorithm} with public chance sampling on {game.spec}: {iterations:,} iterations in "
             f"{seconds:.2f} s",
             f"abstraction: {layout.abstraction.description}; {layout.num_rows:,} rows, "
             f"{layout.num_actions:,} actions ({strategy.nbytes:,} bytes per strategy array)"]
    if out is not None:
        provenance = {"algorithm": algorithm, "parameters": solver.parameters, "iterations": iterations,
                      "seed": seed, "engine": "sampled"}
        save_bucket_strategy(out, layout, strategy, provenance, solver.state_arrays())
        data["out"] = out
        lines.append(f"strategy written to {out}; NashConv: efgkit evaluate {spec} {out}")
    if evaluate:
        evaluation, where = streamed_evaluation(layout, strategy, 0, None, game_value=True)
        fields, more = evaluation_lines(spec, game, evaluation)
        data.update(fields)
        lines += more
    emit(as_json, data, lines)


def evaluate_streamed(spec: str, path: str, bucket_file: str | None, workers: int, scheduler: str | None,
                      game_value: bool, as_json: bool) -> None:
    """Exact full-game NashConv of a bucket-strategy file, split by first deal."""
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    game = poker_game(spec)
    layout, strategy, provenance, _ = load_bucket_strategy(path, game, bucket_file)
    started = time.perf_counter()
    evaluation, where = streamed_evaluation(layout, strategy, workers, scheduler, game_value)
    seconds = time.perf_counter() - started
    fields, lines = evaluation_lines(spec, game, evaluation)
    data = {"game": game.spec, "engine": "streamed", **fields, "seconds": seconds, "ran_on": where,
            "algorithm": provenance.get("algorithm"), "iterations": provenance.get("iterations"),
            "abstraction": layout.abstraction.description, "rows": layout.num_rows}
    head = [f"{path}: {provenance.get('algorithm')} strategy for {game.spec} after "
            f"{provenance.get('iterations'):,} iterations on {layout.abstraction.description} "
            f"({layout.num_rows:,} rows); exact best response in the full game, streamed on {where}, "
            f"{seconds:.1f} s"]
    emit(as_json, data, head + lines)
