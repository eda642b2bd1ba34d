"""``efgkit solve --engine sampled`` and ``efgkit evaluate --engine streamed``: poker games on
card abstractions without building their tree (docs/poker-engine.md, docs/holdem.md)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import click

from efgkit.cli.app import Interrupted, checkpoints_line, emit, interruption_note, poker_game, show_progress
from efgkit.cli.big_blinds import evaluation_report
from efgkit.core.evaluation import Evaluation
from efgkit.core.run_loop import run_iterations
from efgkit.io.progress import progress_bar
from efgkit.storage.checkpoint import SampledCheckpoints, resume_sampled, write_sampled


def streamed_evaluation(layout, strategy, workers: int, scheduler: str | None,
                        game_value: bool, abstract_game: bool = False) -> tuple[Evaluation, str]:
    """Exact full-game (or ``abstract_game``: abstract-game) evaluation with a progress bar over
    the work items; where it ran."""
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.poker.streamed.abstract_best_response import abstract_evaluation, abstract_walks
    from efgkit.poker.streamed.full_game import StreamedEvaluator

    evaluator = StreamedEvaluator(layout)
    walks = abstract_walks(evaluator) if abstract_game else (2 + game_value) * evaluator.work_items
    with ChunkRunner(scheduler=scheduler, workers=workers) as runner, \
            progress_bar(total=walks, unit="flop", desc="best response", enabled=show_progress()) as bar:
        if abstract_game:
            return abstract_evaluation(evaluator, strategy, runner, bar.update), runner.description
        evaluation = evaluator.evaluate(strategy, runner=runner, game_value=game_value,
                                        progress=bar.update)
        return evaluation, runner.description


def abstract_exactness(layout) -> str:
    """What an abstract-game best response on ``layout`` is (``abstract_best_response``)."""
    return "exact: perfect recall" if layout.abstraction.perfect_recall else "imperfect recall: a lower bound"


class SampledRun(NamedTuple):
    """What ``efgkit solve --engine sampled`` was asked to do (flags of ``efgkit solve``)."""

    spec: str
    algorithm: str
    options: dict
    iterations: int
    buckets: str
    seed: int
    precision: str
    every: int | None
    """Evaluate every this many iterations (None: never)."""
    final_nash_conv: bool
    """Evaluate at the end."""
    lbr_boards: int | None
    """Evaluate by local best response over this many boards (None: the exact best response)."""
    out: str | None
    plot: str | None
    state: str | None
    checkpoint_every: int | None
    checkpoint_seconds: float | None
    resume: bool
    mapped: bool = False
    """Keep the solver's arrays memory-mapped in a working file beside ``state``."""
    abstract_game: bool = False
    """Evaluate in the abstract game (``abstract_best_response``) instead of the full game."""
    time_limit: float | None = None
    """Stop after this many seconds of solving (None: run every iteration)."""
    boards_per_iteration: int = 1
    board_groups: int | None = None
    """None: one board a group (``sampled_batches``)."""
    workers: int = 0
    scheduler: str | None = None


def solve_sampled(run: SampledRun, as_json: bool) -> None:
    """CFR with public chance sampling on the card abstraction ``run.buckets``: checkpointed,
    resumable, evaluated exactly every ``run.every`` iterations. With ``run.mapped`` the
    working file is removed however the run ends (the state file holds the last checkpoint;
    only a killed process leaves it, and the next run replaces it)."""
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.poker.streamed.sampled_batches import check_batches

    check_batches(run.boards_per_iteration, run.board_groups, run.workers > 0 or run.scheduler is not None)
    with ChunkRunner(scheduler=run.scheduler, workers=0 if run.scheduler else run.workers) as runner:
        if not run.mapped:
            _solve_sampled(run, as_json, None, runner)
            return
        from efgkit.storage.sampled_working import WorkingFile

        working = WorkingFile(run.state)
        try:
            _solve_sampled(run, as_json, working, runner)
        finally:
            working.remove()


def _solve_sampled(run: SampledRun, as_json: bool, working, runner) -> None:
    """``solve_sampled`` with the solver's arrays mapped from ``working`` (a WorkingFile) or
    in memory (None), the board groups run by ``runner`` (a ChunkRunner)."""
    from efgkit.cli.plots import write_plot
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.named_abstractions import abstraction_named
    from efgkit.poker.streamed.sampled_batches import sampled_solver

    game = poker_game(run.spec)
    layout = BucketLayout(BettingTree(game), abstraction_named(game, run.buckets))
    solver = sampled_solver(layout, variant=run.algorithm, seed=run.seed, precision=run.precision,
                            allocate=working and working.allocate, runner=runner,
                            boards_per_iteration=run.boards_per_iteration, board_groups=run.board_groups,
                            **run.options)
    provenance = {"algorithm": run.algorithm, "parameters": solver.parameters, "precision": run.precision,
                  "seed": run.seed, "engine": "sampled", **solver.batch_provenance()}
    history: list[dict] = []
    seconds_before, resumed_from = 0.0, None
    if run.resume and Path(run.state).exists():
        history, seconds_before = resume_sampled(run.state, solver, provenance, run.iterations)
        resumed_from = solver.iteration
    solve_started, evaluating = time.perf_counter() - seconds_before, 0.0

    def solve_seconds() -> float:
        """Wall time of the solve, over every resumed part, without the evaluations."""
        return time.perf_counter() - solve_started - evaluating

    prefix = "abstract_" if run.abstract_game else ""  # the history fields of the abstract game's evaluation
    checkpoints = None if run.state is None else SampledCheckpoints(
        run.state, provenance, solve_seconds, every=run.checkpoint_every, seconds=run.checkpoint_seconds)

    def evaluate_lbr() -> None:
        from efgkit.cli.bucket_play import lbr_fields
        from efgkit.poker.streamed.local_best_response import LocalBestResponse

        nonlocal evaluating
        point = {"iteration": solver.iteration, "seconds": solve_seconds()}
        started = time.perf_counter()
        lbr = LocalBestResponse(layout, solver.average_strategy(), seed=run.seed)
        fields, text = lbr_fields(lbr.run(run.lbr_boards), game)
        evaluating += time.perf_counter() - started
        history.append({**point, **fields})
        if not as_json:
            click.echo(f"iteration {solver.iteration:>10,}  local best response {text}")

    def evaluate() -> None:
        nonlocal evaluating
        if run.lbr_boards is not None:
            evaluate_lbr()
            return
        point = {"iteration": solver.iteration, "seconds": solve_seconds()}
        started = time.perf_counter()
        evaluation, _ = streamed_evaluation(layout, solver.average_strategy(), 0, None, game_value=False,
                                            abstract_game=run.abstract_game)
        evaluating += time.perf_counter() - started
        fields, _ = evaluation_report(game, evaluation)
        point[prefix + "nash_conv"] = evaluation.nash_conv
        if "exploitability_mbb_per_game" in fields:
            point[prefix + "exploitability_mbb_per_game"] = fields["exploitability_mbb_per_game"]
        history.append(point)
        if not as_json:
            mbb = (f"  ({point[prefix + 'exploitability_mbb_per_game']:.3f} mbb/g)"
                   if "exploitability_mbb_per_game" in fields else "")
            where = " in the abstract game" if run.abstract_game else ""
            click.echo(f"iteration {solver.iteration:>10,}  NashConv{where} {evaluation.nash_conv:.6e}{mbb}")

    started_at = solver.iteration
    try:
        end = run_iterations(solver, run.iterations, every=run.every, evaluate=evaluate, history=history,
                             checkpoints=checkpoints, time_limit=run.time_limit, progress=show_progress(),
                             description=f"{run.algorithm} (public chance sampling)",
                             after_chunk=working.release if working is not None else None)
    except KeyboardInterrupt:
        if run.out is not None:
            write_sampled(run.out, solver, provenance, history, solve_seconds())
        raise Interrupted(interruption_note(solver.iteration, run.out, run.state)) from None
    # The loop's evaluation at the last iteration (with --every) serves as the final one.
    if run.final_nash_conv and (not history or history[-1]["iteration"] != solver.iteration):
        evaluate()
    seconds = solve_seconds()
    if checkpoints is not None:
        checkpoints.write(solver, history)
    if run.out is not None:
        write_sampled(run.out, solver, provenance, history, seconds)
    if run.plot is not None:
        write_plot(run.plot, game.spec, f"{run.algorithm} {run.precision}, sampled", history,
                   "lbr_mbb_per_game" if run.lbr_boards is not None else
                   prefix + ("exploitability_mbb_per_game" if max(game.blinds) > 0 else "nash_conv"))
    memory = solver.memory()
    strategy_bytes = layout.num_actions * 8
    done = solver.iteration - started_at
    data = {"game": game.spec, "engine": "sampled", "algorithm": run.algorithm,
            "parameters": solver.parameters, "precision": run.precision, "iterations": solver.iteration,
            "seconds": seconds,
            "iterations_per_second": done / max(seconds - seconds_before, 1e-9),
            "abstraction": layout.abstraction.description, "rows": layout.num_rows,
            "actions": layout.num_actions,
            "strategy_bytes": strategy_bytes, "solver_state_bytes": memory["state"],
            "working_bytes": memory["working"], "history": history, "state": run.state,
            "state_storage": "mapped" if working else "memory",
            "resumed_from_iteration": resumed_from, "boards_per_iteration": run.boards_per_iteration,
            "board_groups": solver.board_groups, "ran_on": runner.description,
            "checkpoints_written": checkpoints.written if checkpoints else 0}
    if run.time_limit is not None:
        data["stopped_by_time"] = end.out_of_time
    lines = [f"{run.algorithm} with public chance sampling on {game.spec}: {solver.iteration:,} iterations "
             f"in {seconds:.2f} s" + (f" (resumed at iteration {resumed_from:,})" if resumed_from else "")
             + (f" (stopped by --time {run.time_limit:g} s)" if end.out_of_time else "")
             + (f"; {run.boards_per_iteration} boards an iteration in {solver.board_groups} groups on "
                f"{runner.description}" if run.boards_per_iteration > 1 else ""),
             f"abstraction: {layout.abstraction.description}; {layout.num_rows:,} rows, "
             f"{layout.num_actions:,} actions",
             f"{run.precision} regrets and averages: solver state {memory['state']:,} bytes, working arrays "
             f"{memory['working']:,} bytes (the average strategy: {strategy_bytes:,} bytes of float64)"
             + (f", memory-mapped from {working.path}" if working else ", in memory")]
    if history and run.lbr_boards is not None:
        last = history[-1]
        data.update({key: value for key, value in last.items() if key.startswith("lbr_")})
        lines.append(f"local best response (a lower bound on exploitability): {last['lbr_text']}")
    elif history:
        last = history[-1]
        data.update({prefix + "nash_conv": last[prefix + "nash_conv"],
                     prefix + "exploitability": last[prefix + "nash_conv"] / 2})
        if prefix + "exploitability_mbb_per_game" in last:
            data[prefix + "exploitability_mbb_per_game"] = last[prefix + "exploitability_mbb_per_game"]
    if run.final_nash_conv and run.lbr_boards is None:
        where = f"in the abstract game ({abstract_exactness(layout)}) " if prefix else ""
        mbb = data.get(prefix + "exploitability_mbb_per_game")
        lines.append(f"NashConv {where}{data[prefix + 'nash_conv']:.6e}  (NashConv/2, OpenSpiel's "
                     f"exploitability: {data[prefix + 'exploitability']:.6e})"
                     + (f"; {mbb:.3f} mbb/g" if mbb is not None else ""))
    if checkpoints is not None:
        lines.append(checkpoints_line(run.state, checkpoints))
    if run.out is not None:
        data["out"] = run.out
        lines.append(f"strategy written to {run.out}; NashConv: efgkit evaluate {run.spec} {run.out}")
    if run.plot is not None:
        lines.append(f"plot written to {run.plot}")
    emit(as_json, data, lines)


def _strategy_fields(layout, provenance: dict) -> dict:
    """The JSON fields that say which bucket strategy was evaluated."""
    return {"algorithm": provenance.get("algorithm"), "iterations": provenance.get("iterations"),
            "abstraction": layout.abstraction.description, "rows": layout.num_rows}


def _strategy_line(path: str, game, layout, provenance: dict) -> str:
    """The text that says which bucket strategy was evaluated (a line's start)."""
    return (f"{path}: {provenance.get('algorithm')} strategy for {game.spec} after "
            f"{provenance.get('iterations'):,} iterations on {layout.abstraction.description} "
            f"({layout.num_rows:,} rows)")


def evaluate_streamed(spec: str, path: str, bucket_file: str | None, workers: int, scheduler: str | None,
                      game_value: bool, abstract_game: bool, as_json: bool) -> None:
    """Exact full-game (or abstract-game) NashConv of a bucket-strategy file, split by first deal."""
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    game = poker_game(spec)
    layout, strategy, provenance, _ = load_bucket_strategy(path, game, bucket_file)
    started = time.perf_counter()
    evaluation, where = streamed_evaluation(layout, strategy, workers, scheduler, game_value, abstract_game)
    seconds = time.perf_counter() - started
    fields, lines = evaluation_report(game, evaluation)
    response = (f"best response in the abstract game ({abstract_exactness(layout)})" if abstract_game
                else "exact best response in the full game")
    data = {"game": game.spec, "engine": "streamed",
            "game_of_response": "abstract" if abstract_game else "full", **fields,
            "seconds": seconds, "ran_on": where, **_strategy_fields(layout, provenance)}
    if abstract_game:
        data["abstract_response_exact"] = layout.abstraction.perfect_recall
    head = [f"{_strategy_line(path, game, layout, provenance)}; {response}, streamed on {where}, "
            f"{seconds:.1f} s"]
    emit(as_json, data, head + lines)


def evaluate_postflop(spec: str, path: str, bucket_file: str | None, workers: int, scheduler: str | None,
                      samples: int, seed: int, as_json: bool) -> None:
    """``evaluate --sample-flops``: each player's best response after the flop, the responder playing
    the strategy before it, over ``samples`` flops drawn uniformly: a lower bound on NashConv,
    estimated without bias with a 95% interval (``poker.streamed.sampled_flops``)."""
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.poker.streamed.board_walk import Z_95
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_flops import draw_flops, postflop_response
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    game = poker_game(spec)
    layout, strategy, provenance, _ = load_bucket_strategy(path, game, bucket_file)
    evaluator = StreamedEvaluator(layout)
    flops = draw_flops(evaluator, samples, seed)
    started = time.perf_counter()
    with ChunkRunner(scheduler=scheduler, workers=workers) as runner, \
            progress_bar(total=2 * len(set(flops.tolist())), unit="flop", desc="post-flop best response",
                         enabled=show_progress()) as bar:
        result = postflop_response(evaluator, strategy, flops, runner, bar.update)
        where = runner.description
    seconds = time.perf_counter() - started
    low, high = result.nash_conv.confidence_interval
    mean = game.mbb(result.nash_conv.mean / 2)
    data = {"game": game.spec, "engine": "streamed", "game_of_response": "full, after the flop",
            "sampled_flops": samples, "distinct_flops": result.distinct_flops, "seed": seed,
            "postflop_nash_conv": result.nash_conv.mean,
            "postflop_nash_conv_standard_error": result.nash_conv.standard_error,
            "postflop_nash_conv_ci95": [low, high],
            "postflop_exploitability_mbb_per_game": mean,
            "postflop_exploitability_ci95_mbb": [game.mbb(low / 2), game.mbb(high / 2)],
            "postflop_response_values": [v.mean for v in result.values],
            "seconds": seconds, "ran_on": where, **_strategy_fields(layout, provenance)}
    lines = [f"{_strategy_line(path, game, layout, provenance)}; {samples:,} flops drawn "
             f"({result.distinct_flops:,} walked), streamed on {where}, {seconds:.1f} s",
             f"best response after the flop, the pre-flop play the strategy's own (a lower bound on "
             f"exploitability): {mean:,.3f} mbb/g, 95% CI {game.mbb(low / 2):,.3f} to "
             f"{game.mbb(high / 2):,.3f}",
             f"NashConv at least {result.nash_conv.mean:.6e} "
             f"(+- {Z_95 * result.nash_conv.standard_error:.2e}); "
             f"player values {result.values[0].mean:.6f}, {result.values[1].mean:.6f}"]
    emit(as_json, data, lines)
