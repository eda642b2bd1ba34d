"""`efgkit solve` and `efgkit evaluate`: equilibrium solvers and exact evaluation."""

from __future__ import annotations

import math
import time
from pathlib import Path

import click

from efgkit.cli.app import (
    Interrupted,
    build_game,
    check_state_file,
    check_writable,
    checkpoints_line,
    emit,
    given_options,
    interruption_note,
    json_option,
    main,
    show_progress,
    size_lines,
)
from efgkit.cli.big_blinds import big_blind_fields, evaluation_report, rules_of
from efgkit.cli.engine_options import Engine, describe_engines, flag_of, given_flags
from efgkit.cli.game_argument import GameAndFile, game_then_file, recorded_game
from efgkit.core.regret_rules import SCHEDULED, VARIANT_PARAMETERS
from efgkit.core.run_loop import RunEnd, run_iterations
from efgkit.errors import ParameterError
from efgkit.io.lock import exclusive_lock
from efgkit.io.sizes import size_in_bytes
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import BestResponse, Evaluation, FictitiousPlay, SequenceFormLP
from efgkit.solvers.cfr import SOLVER_CLASSES
from efgkit.specs import canonical_spec, load_game
from efgkit.storage.checkpoint import Checkpoints
from efgkit.storage.disk_solve import (
    DiskSolver,
    compile_working_file,
    peak_rss,
    working_file_matches,
)
from efgkit.storage.strategy_file import load_strategy, save_strategy, stored_game

ITERATIVE_SOLVERS = {**SOLVER_CLASSES, "fp": FictitiousPlay}
ALGORITHMS = (*ITERATIVE_SOLVERS, "lp")
SAMPLED_PRECISIONS = ("float64", "float32", "int32")
"""sampled_cfr.PRECISIONS, spelled out so that the command line does not import the poker engine."""
CFR_VARIANTS = tuple(SOLVER_CLASSES)
IN_MEMORY = frozenset({"every", "out", "plot", "abstraction_file"})
SOLVE_ENGINES = {engine.name: engine for engine in (
    Engine("tree", "the compiled GameTree, every algorithm", IN_MEMORY),
    Engine("public-tree", "the poker engine (betting x boards, hands as vectors) for limit-poker "
                          "games; the same iterates, checkpoints and strategy files", IN_MEMORY,
           algorithms=CFR_VARIANTS),
    Engine("disk", "the GameTree with every solver array on disk (chosen by --memory-limit)",
           frozenset({"memory_limit"}), needs=("memory_limit", "state"), algorithms=CFR_VARIANTS,
           refusal_note=": a solve on disk runs the full game and evaluates nothing during the run "
                        "(the --state file is a strategy file for efgkit evaluate)"),
    Engine("sampled", "CFR with public chance sampling on the card abstraction --buckets, nothing "
                      "built (full hold'em)",
           IN_MEMORY - {"abstraction_file"} | {"buckets", "seed", "precision", "regret_scaling",
                                                "average_scaling", "mapped", "final_nash_conv",
                                                "lbr_boards", "abstract_game", "boards_per_iteration",
                                                "board_groups", "workers", "scheduler"},
           needs=("buckets",), algorithms=CFR_VARIANTS),
)}
"""The engines of ``efgkit solve`` and the options each takes (``engine_options``)."""
LP_REFUSES = ("iterations", "every", "time_limit", "plot", "abstraction_file")
"""Options of the iterative algorithms, refused by the LP, which solves the full game exactly."""


def _defaults(name: str) -> str:
    """``--NAME``'s defaults per algorithm, for the help text."""
    return ", ".join(f"{algorithm} {parameters[name]:g}"
                     for algorithm, parameters in VARIANT_PARAMETERS.items() if name in parameters)


def _solver_options(ctx: click.Context, algorithm: str, iterations: int,
                    parameters: dict[str, float | None]) -> dict[str, float]:
    """Keyword arguments for the solver; options that do not apply to ``algorithm`` are errors."""
    if algorithm == "lp":
        refused = given_flags(ctx, *LP_REFUSES)
        if refused:
            raise ParameterError(f"--algorithm lp solves the full game exactly and takes no {refused[0]}")
    applicable = VARIANT_PARAMETERS.get(algorithm, {})
    options = {name: value for name, value in parameters.items() if value is not None}
    for name in options:
        flag = flag_of(ctx, name)
        if name not in applicable:
            owners = [variant for variant, names in VARIANT_PARAMETERS.items() if name in names]
            raise ParameterError(f"{flag} applies to --algorithm {', '.join(owners)} only")
        if not math.isfinite(options[name]):
            raise ParameterError(f"{flag} must be a finite number, got {options[name]}")
    delay = options.get("delay", VARIANT_PARAMETERS["cfr+"]["delay"])
    if algorithm == "cfr+" and 0 < iterations <= delay:
        raise ParameterError(
            f"--delay {delay} must be smaller than --iterations {iterations}: no iteration "
            f"would enter the average strategy"
        )
    if algorithm in SCHEDULED:
        horizon = options.setdefault("horizon", iterations)
        if horizon < iterations:
            raise ParameterError(f"--horizon {horizon} is shorter than --iterations {iterations}: "
                                 f"{algorithm}'s schedule is defined for iterations 1..horizon")
    return options


def _scalings(flag: str, text: str, precision: str | None) -> float | list[float]:
    """``--regret-scaling``/``--average-scaling`` ``16,16,0.5,0.5`` as numbers, one number for
    every round (the solver checks them against the game's rounds)."""
    if precision != "int32":
        raise ParameterError(f"{flag} goes with --precision int32")
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise ParameterError(f"{flag} takes numbers separated by commas, e.g. 16,16,0.5,0.5; "
                             f"got {text!r}") from None
    return values[0] if len(values) == 1 else values


def _recorded_parameters(algorithm: str, solver) -> dict[str, object]:
    """The parameters a solver actually ran with (defaults included), for provenance."""
    if solver is None:
        return {}
    recorded: dict[str, object] = {"alternating": solver.alternating}
    recorded.update({name: getattr(solver, name) for name in VARIANT_PARAMETERS.get(algorithm, {})})
    return recorded


def _run_iterative(solver, evaluator: BestResponse, iterations: int, every: int, report,
                   history: list[dict] | None, checkpoints: Checkpoints | None,
                   time_limit: float | None) -> tuple[list[dict], Evaluation | None, RunEnd]:
    """Iterate to ``iterations`` (``core.run_loop.run_iterations``), evaluating the average
    strategy every ``every`` iterations and at the last one.

    ``history`` continues a resumed run's; ``checkpoints`` are written when due;
    ``time_limit`` seconds stop the run early. Returns the NashConv history, the evaluation at
    the last iteration run if one was made here, and how the run ended.
    """
    history = [] if history is None else history
    final: list[Evaluation] = []

    def evaluate() -> None:
        evaluation = evaluator.evaluate(solver.average_strategy())
        history.append({"iteration": solver.iteration, "nash_conv": evaluation.nash_conv})
        report(solver.iteration, evaluation.nash_conv)
        final[:] = [evaluation]

    end = run_iterations(solver, iterations, every=every, evaluate=evaluate, history=history,
                         checkpoints=checkpoints, time_limit=time_limit, progress=show_progress())
    return history, (final[0] if final else None), end


def _keep_interrupted_run(solver, algorithm: str, out: str | None, state: str | None) -> Interrupted:
    """On Ctrl-C: write the average strategy reached so far to ``--out`` (a --state file
    already holds the last checkpoint); the one line that says where the work is."""
    if out is not None:
        save_strategy(out, solver.average_strategy(), provenance={
            "algorithm": algorithm, "parameters": _recorded_parameters(algorithm, solver),
            "iterations": solver.iteration, "nash_conv_history": []})
    return Interrupted(interruption_note(solver.iteration, out, state))


@main.command()
@click.argument("game", default="leduc")
@click.option("--engine", type=click.Choice(tuple(SOLVE_ENGINES)), default=None,
              help="[default: tree, or disk with --memory-limit]")
@click.option("--algorithm", "-a", type=click.Choice(ALGORITHMS), default="cfr+", show_default=True,
              help="cfr, cfr+ (alternating, linear averaging), dcfr, lcfr (linear CFR), dcfr+, "
                   "pcfr+ (predictive CFR+), pdcfr+ (predictive discounted CFR+), hs-dcfr and hs-pcfr+ "
                   "(their exponents on a schedule over --horizon iterations), sapcfr+ (simple "
                   "asymmetric PCFR+), vad-cfr (volatility-adaptive discounted CFR; tree and public-tree "
                   "engines), "
                   "fp (extensive-form fictitious play) or lp (exact sequence-form LP); docs/conventions.md.")
@click.option("--iterations", "-n", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Iterations of the iterative algorithms.")
@click.option("--delay", "-d", type=click.IntRange(min=0), default=None,
              help="CFR+ averaging delay: iteration t has weight max(t - D, 0)  "
                   f"[default: {VARIANT_PARAMETERS['cfr+']['delay']}]")
@click.option("--alpha", type=float, default=None,
              help=f"Regret discount exponent  [defaults: {_defaults('alpha')}]")
@click.option("--beta", type=float, default=None,
              help=f"DCFR's negative-regret discount exponent  [default: {_defaults('beta')}]")
@click.option("--gamma", type=float, default=None,
              help=f"Average-strategy weight exponent  [defaults: {_defaults('gamma')}]")
@click.option("--gamma-start", type=float, default=None,
              help="hs-dcfr's and hs-pcfr+'s schedule gamma = G - 5t/n starts at G (30 or 15 in the "
                   f"paper; >= 5)  [default: {VARIANT_PARAMETERS['hs-dcfr']['gamma_start']:g}]")
@click.option("--horizon", type=int, default=None,
              help="n, the iterations hs-dcfr's and hs-pcfr+'s schedule spans  [default: --iterations]")
@click.option("--time", "time_limit", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="Stop after SECONDS of solving, counted after the first iteration (which compiles "
                   "the kernels on a first run), at the end of the chunk running then (--iterations "
                   "is then the most it runs); evaluate and write everything at the iteration reached.")
@click.option("--every", "--evaluate-every", "-k", type=click.IntRange(min=1), default=100, show_default=True,
              help="Evaluate NashConv of the average strategy every K iterations (sampled: only when "
                   "given, exactly in the full game, streamed).")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the final strategy to this HDF5 strategy file.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a log-log PNG of NashConv against iterations (sampled: mbb/g where the game "
                   "has blinds, from the --every evaluations).")
@click.option("--abstraction", "abstraction_file", metavar="ABS.h5",
              type=click.Path(exists=True, dir_okay=False), default=None,
              help="Solve on this card abstraction (efgkit cards --out); NashConv is still exact "
                   "in the full game.")
@click.option("--state", type=click.Path(dir_okay=False), default=None, metavar="FILE.h5",
              help="Checkpoint file (a strategy file with the solver state; a bucket-strategy file "
                   "for sampled): written atomically at every checkpoint and at the end (the CFR "
                   "variants).")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=None, metavar="K",
              help="Checkpoint every K iterations (needs --state).")
@click.option("--checkpoint-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="S", help="Checkpoint every S seconds of wall time (needs --state).")
@click.option("--resume", is_flag=True,
              help="Continue from the --state checkpoint, bit-identical to an uninterrupted run (from "
                   "iteration 0 if no checkpoint was written yet).")
@click.option("--memory-limit", metavar="SIZE", default=None,
              help="Keep every solver array on disk (FILE.h5.work beside --state, memory-mapped; the "
                   "game is compiled in a child process) and the resident memory under SIZE, e.g. "
                   "1GiB. NashConv is not evaluated during such a run: evaluate the --state file "
                   "afterwards.")
@click.option("--buckets", default=None, metavar="BUCKETS.h5|canonical|none|lossless",
              help="A hold'em bucket file (efgkit holdem-abstraction), canonical (suit isomorphism "
                   "only), none (one bucket per round) or lossless.")
@click.option("--seed", type=int, default=0, show_default=True, help="The seed of the boards sampled.")
@click.option("--precision", type=click.Choice(SAMPLED_PRECISIONS), default=None,
              help="Regrets and averages as float64, float32, or int32 scaled as in the released "
                   "HULHE CFR+ code (cfr+ only)  [default: float64]")
@click.option("--regret-scaling", default=None, metavar="S[,S...]",
              help="--precision int32: regret units per chip, one per betting round (or one for all), "
                   "e.g. 16,16,0.5,0.5 as the HULHE run  [default: 16]")
@click.option("--average-scaling", default=None, metavar="S[,S...]",
              help="--precision int32: average-strategy units per chip and iteration, one per betting "
                   "round (or one for all), e.g. 16,16,1,1  [default: 16]")
@click.option("--boards-per-iteration", type=click.IntRange(min=1), default=1, show_default=True,
              metavar="B", help="Boards walked per iteration against the same current strategy, their "
                                "regret and average updates summed (public chance sampling with a batch "
                                "of boards); B > 1 splits them among --workers.")
@click.option("--board-groups", type=click.IntRange(min=1), default=None, metavar="G",
              help="The B boards as G groups of consecutive boards, each walked by one task into one "
                   "accumulator, the groups summed in order: the result depends on --seed, B and G, "
                   "not on the workers; fewer groups move less memory  [default: B]")
@click.option("--workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="A Dask LocalCluster of this many worker processes walking the board groups (0: this "
                   "process).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="A running Dask scheduler (tcp://host:8786) whose workers, on this machine, walk the "
                   "board groups.")
@click.option("--mapped", is_flag=True,
              help="Keep the regrets, averages and working arrays memory-mapped in FILE.h5.work beside "
                   "--state (abstractions larger than RAM comfortably holds); checkpoints copy them "
                   "into --state atomically.")
@click.option("--nash-conv", "final_nash_conv", is_flag=True,
              help="Evaluate the result exactly in the full game (streamed, split by flop; hours for "
                   "52-card hold'em).")
@click.option("--lbr", "lbr_boards", type=click.IntRange(min=2), default=None, metavar="BOARDS",
              help="Evaluate (every K iterations and at the end) by local best response over BOARDS "
                   "sampled boards, a lower bound on exploitability in minutes, instead of the exact "
                   "best response (52-card hold'em).")
@click.option("--abstract-game", is_flag=True,
              help="Evaluate (every K iterations and at the end) in the abstract game instead of the "
                   "full game: a responder that sees only the buckets (exact with perfect-recall "
                   "buckets, a lower bound otherwise; the solver's own convergence).")
@json_option
@click.pass_context
def solve(ctx: click.Context, game: str, engine: str | None, algorithm: str, iterations: int,
          delay: int | None, alpha: float | None, beta: float | None, gamma: float | None,
          gamma_start: float | None, horizon: int | None, time_limit: float | None, every: int,
          out: str | None, plot: str | None, abstraction_file: str | None, state: str | None,
          checkpoint_every: int | None, checkpoint_seconds: float | None, resume: bool,
          memory_limit: str | None, buckets: str | None, seed: int, precision: str | None,
          regret_scaling: str | None, average_scaling: str | None, boards_per_iteration: int,
          board_groups: int | None, workers: int, scheduler: str | None, mapped: bool, final_nash_conv: bool,
          lbr_boards: int | None, abstract_game: bool, as_json: bool) -> None:
    """Solve GAME (default: leduc with CFR+) and report NashConv over iterations.

    Prints the game's sizes, NashConv (and NashConv/2, OpenSpiel's exploitability) of the
    average strategy every K iterations, and the final game value for player 0. With
    --abstraction the solver's regrets and strategy live on the abstract infosets. An option
    marked [ENGINES] goes with those engines only.
    """
    engine = engine or ("disk" if memory_limit is not None else "tree")
    SOLVE_ENGINES[engine].check(ctx, SOLVE_ENGINES, algorithm)
    given = given_options(ctx)
    options = _solver_options(ctx, algorithm, iterations,
                              {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma,
                               "gamma_start": gamma_start, "horizon": horizon})
    if plot is not None and iterations == 0:
        raise ParameterError("--plot needs --iterations >= 1")
    check_state_file(ctx, state, resume)
    if state is not None and algorithm not in SOLVER_CLASSES:
        raise ParameterError(f"--state applies to {', '.join(SOLVER_CLASSES)} (the CFR variants: "
                             f"solvers with a state to checkpoint), not {algorithm}")
    memory_limit = None if memory_limit is None else size_in_bytes(memory_limit, "--memory-limit")
    check_writable(out, "--out")
    check_writable(plot, "--plot")
    final_evaluation = bool(given & {"final_nash_conv", "lbr_boards", "abstract_game"})
    for name, text in (("regret_scaling", regret_scaling), ("average_scaling", average_scaling)):
        if text is not None:
            options[name] = _scalings(flag_of(ctx, name), text, precision)
    if engine == "sampled" and plot is not None and not (final_evaluation or "every" in given):
        raise ParameterError("--plot draws the evaluations: give --every K, --nash-conv, --lbr or "
                             "--abstract-game")
    if abstract_game and lbr_boards is not None:
        raise ParameterError("--abstract-game and --lbr are two evaluations: choose one")
    if state is not None:
        ctx.with_resource(exclusive_lock(state))  # held until the command ends
    if engine == "disk":
        solve_on_disk(game, algorithm, options, iterations, state, checkpoint_every,
                      checkpoint_seconds, resume, memory_limit, as_json, time_limit)
        return
    if engine == "sampled":
        from efgkit.cli.streamed import SampledRun, solve_sampled

        solve_sampled(SampledRun(game, algorithm, options, iterations, buckets, seed, precision or "float64",
                                 every if "every" in given else None, final_evaluation, lbr_boards, out,
                                 plot, state, checkpoint_every, checkpoint_seconds, resume, mapped,
                                 abstract_game, time_limit, boards_per_iteration, board_groups, workers,
                                 scheduler), as_json)
        return

    tree, build_seconds = build_game(game)
    if not as_json:
        for line in size_lines(tree, build_seconds):
            click.echo(line)
    if abstraction_file is not None:
        from efgkit.storage.abstraction_file import load_card_abstraction

        card_abstraction = load_card_abstraction(abstraction_file, tree)
        infoset_map = card_abstraction.infoset_map
    else:
        card_abstraction, infoset_map = None, InfosetMap.identity(tree)
    if engine == "public-tree":
        from efgkit.poker.materialised.solver import PublicTreeBestResponse, PublicTreeCFR, public_layout

        layout = public_layout(infoset_map)
        evaluator = PublicTreeBestResponse(infoset_map, layout)
        if not as_json:
            sizes = layout.tree.sizes()
            click.echo(f"public tree: {sizes['public_nodes']:,} nodes x {sizes['hands']:,} hands, "
                       f"{sizes['bytes']:,} bytes")
    else:
        evaluator = BestResponse(infoset_map)

    def report(iteration: int, nash_conv: float) -> None:
        if not as_json:
            click.echo(f"iteration {iteration:>8}  NashConv {nash_conv:.6e}  "
                       f"(NashConv/2 {nash_conv / 2:.6e})")

    started = time.perf_counter()
    lp_value = solver = checkpoints = resumed_from = evaluation = None
    out_of_time = False
    if algorithm == "lp":
        if show_progress():
            click.echo("solving the sequence-form LP with HiGHS (no progress to show)", err=True)
        solution = SequenceFormLP(tree).solve()
        strategy, lp_value, history, iterations = solution.strategy, solution.game_value, [], 0
    else:
        if engine == "public-tree":
            solver = PublicTreeCFR(infoset_map, variant=algorithm, layout=layout, **options)
        else:
            solver = ITERATIVE_SOLVERS[algorithm](evaluator.infoset_map, **options)
        history = None
        if state is not None:
            checkpoints = Checkpoints(state, algorithm=algorithm,
                                      parameters=_recorded_parameters(algorithm, solver),
                                      every=checkpoint_every, seconds=checkpoint_seconds)
            if resume and Path(state).exists():
                history = checkpoints.resume(solver, iterations)
                resumed_from = solver.iteration
                if not as_json:
                    click.echo(f"resumed from {state} at iteration {resumed_from}")
        try:
            history, evaluation, end = _run_iterative(solver, evaluator, iterations, every, report,
                                                      history, checkpoints, time_limit)
        except KeyboardInterrupt:
            raise _keep_interrupted_run(solver, algorithm, out, state) from None
        strategy = solver.average_strategy()
        iterations, out_of_time = end
    seconds = time.perf_counter() - started
    parameters = _recorded_parameters(algorithm, solver)
    if evaluation is None:  # the lp, or a run resumed at its last iteration
        evaluation = evaluator.evaluate(strategy)
    if not history or history[-1]["iteration"] != iterations:
        history.append({"iteration": iterations, "nash_conv": evaluation.nash_conv})
        if algorithm != "lp":
            report(iterations, evaluation.nash_conv)
    if checkpoints is not None:
        checkpoints.write(solver, history)

    if out is not None:
        # The card abstraction's reference (path and content digest) lets efgkit export
        # store its bucket tables instead of a key per infoset.
        recorded = parameters if card_abstraction is None else {
            **parameters, "card_abstraction": card_abstraction.reference}
        save_strategy(out, strategy, provenance={
            "algorithm": algorithm, "parameters": recorded, "iterations": iterations,
            "nash_conv_history": history,
        })
    if plot is not None:
        from efgkit.cli.plots import write_plot

        write_plot(plot, tree.spec, algorithm, history)

    sizes = tree.sizes()
    data = {
        "game": tree.spec, "algorithm": algorithm, "engine": engine, "parameters": parameters,
        "iterations": iterations, "seconds": seconds, "build_seconds": build_seconds,
        **evaluation.to_dict(), "history": history, "infosets": sizes["infosets"],
        "histories": sizes["histories"], "abstract_infosets": evaluator.infoset_map.num_abstract,
        "abstraction": abstraction_file,
    }
    if lp_value is not None:
        data["lp_value"] = lp_value
    if time_limit is not None:
        data["stopped_by_time"] = out_of_time
    if checkpoints is not None:
        data.update(state=state, resumed_from_iteration=resumed_from,
                    checkpoints_written=checkpoints.written)
    lines = [
        f"{algorithm}: solved in {seconds:.2f} s" if algorithm == "lp" else
        f"{algorithm}: {iterations} iterations in {seconds:.2f} s"
        + (f" (stopped by --time {time_limit:g} s)" if out_of_time else ""),
        f"NashConv {evaluation.nash_conv:.6e}  (NashConv/2, OpenSpiel's exploitability: "
        f"{evaluation.exploitability:.6e})",
        f"game value (player 0's expected payoff under the "
        f"{'LP' if algorithm == 'lp' else 'final average'} profile): {evaluation.game_value:.9f}",
    ]
    fields, more = big_blind_fields(rules_of(tree.spec), evaluation.exploitability)
    data.update(fields)
    lines[2:2] = more
    if lp_value is not None:
        lines.append(f"LP value: {lp_value:.9f}")
    if abstraction_file is not None:
        lines.insert(0, f"on the abstraction {abstraction_file}: {evaluator.infoset_map.num_abstract:,} "
                        f"abstract infosets of {sizes['infosets']:,} (NashConv measured in the full game)")
    lines += [f"strategy written to {out}"] if out else []
    lines += [f"plot written to {plot}"] if plot else []
    lines += [checkpoints_line(state, checkpoints)] if checkpoints else []
    emit(as_json, data, lines)


describe_engines(solve, SOLVE_ENGINES)


def solve_on_disk(game: str, algorithm: str, options: dict, iterations: int, state: str,
                  checkpoint_every: int | None, checkpoint_seconds: float | None, resume: bool,
                  memory_limit: int, as_json: bool, time_limit: float | None = None) -> None:
    """``solve --memory-limit``: a DiskSolver over ``STATE.work``, checkpointing to ``state``
    (for at most ``time_limit`` seconds)."""
    spec = canonical_spec(game)
    work = Path(f"{state}.work")
    compiled = None
    if not working_file_matches(work, spec):
        if not as_json:
            click.echo(f"compiling {spec} into {work} in a child process")
        compiled = compile_working_file(load_game, spec, work)
    solver = DiskSolver(work, variant=algorithm, memory_limit=memory_limit, **options)
    checkpoints = Checkpoints(state, algorithm=algorithm,
                              parameters=_recorded_parameters(algorithm, solver),
                              every=checkpoint_every, seconds=checkpoint_seconds)
    history, resumed_from = [], None
    if resume and Path(state).exists():
        history = checkpoints.resume(solver, iterations)
        resumed_from = solver.iteration
    started = time.perf_counter()
    iterations, out_of_time = run_iterations(solver, iterations, history=history, checkpoints=checkpoints,
                                             time_limit=time_limit, progress=show_progress())
    seconds = time.perf_counter() - started
    checkpoints.write(solver, history)
    solver.close()
    data = {
        "game": spec, "algorithm": algorithm, "parameters": checkpoints.parameters,
        "iterations": iterations, "seconds": seconds, "state": state,
        "resumed_from_iteration": resumed_from, "checkpoints_written": checkpoints.written,
        "working_file": str(work), "working_file_bytes": work.stat().st_size,
        "state_bytes": Path(state).stat().st_size, "memory_limit_bytes": memory_limit,
        "peak_rss_bytes": peak_rss(), "window_bytes": solver.window_bytes,
        "compile_peak_rss_bytes": compiled and compiled["compile_peak_rss_bytes"],
        **{key: solver.sizes[key] for key in ("histories", "infosets", "infoset_actions")},
    }
    if time_limit is not None:
        data["stopped_by_time"] = out_of_time
    lines = [
        f"{algorithm} on {spec} with its arrays on disk: {iterations} iterations in "
        f"{seconds:.2f} s" + (f" (resumed at iteration {resumed_from})" if resumed_from else ""),
        f"working file {work}: {data['working_file_bytes'] / 2**20:,.1f} MiB; peak RSS "
        f"{data['peak_rss_bytes'] / 2**20:,.1f} MiB, "
        f"{'under' if data['peak_rss_bytes'] <= memory_limit else 'OVER'} the limit of "
        f"{memory_limit / 2**20:,.1f} MiB",
        f"{checkpoints_line(state, checkpoints)}; NashConv: efgkit evaluate {state}",
    ]
    if compiled:
        lines.insert(1, f"compiled in a child process (its peak RSS "
                        f"{compiled['compile_peak_rss_bytes'] / 2**20:,.1f} MiB)")
    emit(as_json, data, lines)


# --------------------------------------------------------------------------- evaluate
EVALUATE_ENGINES = {engine.name: engine for engine in (
    Engine("tree", "the GameTree"),
    Engine("public-tree", "the poker engine's public tree"),
    Engine("streamed", "the full game streamed board by board, split by flop (strategies of solve "
                       "--engine sampled)", frozenset({"bucket_file", "workers", "scheduler", "game_value",
                                                      "abstract_game", "sample_flops", "seed"})),
    Engine("lbr", "local best response, a lower bound on exploitability in minutes even for hold'em "
                  "(strategies of solve --engine sampled; chosen by --lbr)",
           frozenset({"lbr_boards", "bucket_file", "rollouts", "preflop_rollouts", "lbr_actions", "seed"}),
           needs=("lbr_boards",)),
)}
"""The engines of ``efgkit evaluate`` and the options each takes (``engine_options``)."""
BUCKET_ENGINES = ("streamed", "lbr")
"""The engines that evaluate bucket strategies (efgkit solve --engine sampled), and only those."""


@main.command()
@game_then_file("STRATEGY.h5")
@click.option("--engine", type=click.Choice(tuple(EVALUATE_ENGINES)), default=None,
              help="[default: lbr with --lbr, streamed for a bucket strategy, else tree]")
@click.option("--buckets", "bucket_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The bucket file, if it is not beside the strategy under its recorded name (its "
                   "digest must match).")
@click.option("--workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="A Dask LocalCluster of this many worker processes (0: this process).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="A running Dask scheduler (tcp://host:8786) to run the flops on.")
@click.option("--game-value/--no-game-value", default=True, show_default=True,
              help="Also compute player 0's expected value (one more walk).")
@click.option("--abstract-game", is_flag=True,
              help="The best response in the abstract game instead of the full game's: a responder "
                   "that sees only the buckets (exact with perfect-recall buckets, a lower bound with "
                   "imperfect recall; one walk per depth of the responder's decisions).")
@click.option("--sample-flops", type=click.IntRange(min=2), default=None, metavar="FLOPS",
              help="Instead of every flop, FLOPS drawn uniformly (--seed): each player's best response "
                   "after the flop with the strategy's own pre-flop play, a lower bound on exploitability "
                   "estimated without bias, with a 95% interval (HULHE: about 75 CPU-s a flop).")
@click.option("--lbr", "lbr_boards", default=None, metavar="BOARDS|all",
              help="Local best response over BOARDS sampled boards, or every board.")
@click.option("--rollouts", type=click.IntRange(min=1), default=100, show_default=True,
              help="Board completions per equity after the first deal.")
@click.option("--preflop-rollouts", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Board completions per equity before the first deal (computed once).")
@click.option("--lbr-actions", default="fcr", show_default=True, metavar="SETS",
              help="The actions LBR considers (f fold, c check/call, r bet/raise), for every round or "
                   "per round separated by '/', as in the paper (c/c/fcr/fcr: no raises before the turn).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="The boards and completions (lbr) or flops (--sample-flops) drawn.")
@json_option
@click.pass_context
def evaluate(ctx: click.Context, game_and_file: GameAndFile, engine: str | None, bucket_file: str | None,
             workers: int, scheduler: str | None, game_value: bool, abstract_game: bool,
             sample_flops: int | None, lbr_boards: str | None, rollouts: int, preflop_rollouts: int,
             lbr_actions: str, seed: int, as_json: bool) -> None:
    """Exact NashConv, best-response values and game value of a stored strategy (for GAME,
    by default the game the file records).

    With --lbr, a strategy on a card abstraction gets its local best response instead: a
    lower bound on exploitability in mbb/g with a 95% confidence interval. With
    --abstract-game, its best response in the abstract game (the responder sees the buckets
    only) instead of the full game's. An option marked [ENGINES] goes with those engines only.
    """
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file

    game, strategy_file = game_and_file
    game = game or recorded_game(strategy_file)
    bucket_strategy = is_bucket_strategy_file(strategy_file)
    engine = engine or ("lbr" if lbr_boards is not None else "streamed" if bucket_strategy else "tree")
    EVALUATE_ENGINES[engine].check(ctx, EVALUATE_ENGINES)
    if (engine in BUCKET_ENGINES) != bucket_strategy:
        raise ParameterError(f"{strategy_file}: " + (
            "a strategy on a card abstraction (efgkit solve --engine sampled) is evaluated by --engine "
            "streamed or lbr" if bucket_strategy else
            f"--engine {engine} evaluates bucket strategy files (efgkit solve --engine sampled)"))
    if engine == "lbr":
        from efgkit.cli.bucket_play import board_count, evaluate_lbr

        evaluate_lbr(game, strategy_file, bucket_file, board_count(lbr_boards), rollouts, preflop_rollouts,
                     lbr_actions, seed, as_json)
        return
    if engine == "streamed" and sample_flops is not None:
        from efgkit.cli.streamed import evaluate_postflop

        if abstract_game:
            raise ParameterError("--sample-flops estimates the full game's best response; --abstract-game "
                                 "walks every flop")
        evaluate_postflop(game, strategy_file, bucket_file, workers, scheduler, sample_flops, seed, as_json)
        return
    if engine == "streamed":
        from efgkit.cli.streamed import evaluate_streamed

        if "seed" in given_options(ctx):
            raise ParameterError("--seed draws the flops of --sample-flops (or LBR's boards): the exact "
                                 "evaluation draws nothing")

        evaluate_streamed(game, strategy_file, bucket_file, workers, scheduler, game_value, abstract_game,
                          as_json)
        return
    stored_game(strategy_file)  # a damaged file is refused before the game is built
    tree, _ = build_game(game)
    strategy, provenance = load_strategy(strategy_file, tree)
    started = time.perf_counter()
    if engine == "public-tree":
        from efgkit.poker.materialised.solver import PublicTreeBestResponse

        evaluation = PublicTreeBestResponse(strategy.infoset_map).evaluate(strategy)
    else:
        evaluation = BestResponse(strategy.infoset_map).evaluate(strategy)
    seconds = time.perf_counter() - started
    fields, lines = evaluation_report(rules_of(tree.spec), evaluation)
    data = {"game": tree.spec, "engine": engine, **fields, "seconds": seconds,
            "algorithm": provenance["algorithm"], "iterations": provenance["iterations"],
            "abstract_infosets": strategy.infoset_map.num_abstract}
    emit(as_json, data, [f"{strategy_file}: {provenance['algorithm']} strategy for {tree.spec} after "
                         f"{provenance['iterations']} iterations, {strategy.infoset_map.num_abstract:,} "
                         f"abstract infosets", *lines])


describe_engines(evaluate, EVALUATE_ENGINES)
