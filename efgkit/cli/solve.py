"""`efgkit solve` and `efgkit evaluate`: equilibrium solvers and exact evaluation."""

from __future__ import annotations

import inspect
import math
import sys
import time

import click
from tqdm import tqdm

from efgkit.abstraction.infoset_map import InfosetMap
from efgkit.cli.app import (
    build_game,
    check_writable,
    emit,
    json_option,
    main,
    save_figure,
    show_progress,
    size_lines,
)
from efgkit.errors import ParameterError
from efgkit.solvers import (
    BestResponse,
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    FictitiousPlay,
    SequenceFormLP,
    Strategy,
)
from efgkit.storage.strategy_file import load_strategy, save_strategy

ITERATIVE_SOLVERS = {"cfr": CFRSolver, "cfr+": CFRPlusSolver, "dcfr": DCFRSolver, "fp": FictitiousPlay}
ALGORITHMS = (*ITERATIVE_SOLVERS, "lp")
CFR_DEFAULTS = {name: parameter.default for name, parameter
                in inspect.signature(CFRSolver.__init__).parameters.items()}
SLOW_CHUNK_SECONDS = 0.25
"""Iterations run in chunks that grow while a chunk takes less than this (progress bar pace)."""


def _solver_options(ctx: click.Context, algorithm: str, iterations: int,
                    given_options: dict[str, float | None]) -> dict[str, float]:
    """Keyword arguments for the solver; options that do not apply to ``algorithm`` are errors."""
    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT

    if algorithm == "lp":
        extra = [f"--{name}" for name in ("iterations", "every") if given(name)]
        if extra:
            raise ParameterError(f"--algorithm lp solves exactly and takes no {' or '.join(extra)}")
    applicable = {"cfr+": ("delay",), "dcfr": ("alpha", "beta", "gamma")}.get(algorithm, ())
    options = {name: value for name, value in given_options.items() if value is not None}
    for name in options:
        if name not in applicable:
            owner = "cfr+" if name == "delay" else "dcfr"
            raise ParameterError(f"--{name} applies to --algorithm {owner} only")
        if not math.isfinite(options[name]):
            raise ParameterError(f"--{name} must be a finite number, got {options[name]}")
    delay = options.get("delay", CFR_DEFAULTS["delay"])
    if algorithm == "cfr+" and 0 < iterations <= delay:
        raise ParameterError(
            f"--delay {delay} must be smaller than --iterations {iterations}: no iteration "
            f"would enter the average strategy"
        )
    return options


def _recorded_parameters(algorithm: str, solver) -> dict[str, object]:
    """The parameters a solver actually ran with (defaults included), for provenance."""
    if solver is None:
        return {}
    recorded: dict[str, object] = {"alternating": solver.alternating}
    if algorithm == "cfr+":
        recorded["delay"] = solver.delay
    if algorithm == "dcfr":
        recorded.update(alpha=solver.alpha, beta=solver.beta, gamma=solver.gamma)
    return recorded


def _run_iterative(solver, evaluator: BestResponse, iterations: int, every: int,
                   report) -> tuple[Strategy, list[dict]]:
    """Iterate to ``iterations``, evaluating the average strategy every ``every`` iterations."""
    history = []
    chunk = 1
    with tqdm(total=iterations, unit="it", desc="solving", file=sys.stderr,
              disable=not show_progress(), leave=False) as bar:
        while solver.iteration < iterations:
            next_report = min((solver.iteration // every + 1) * every, iterations)
            step = min(chunk, next_report - solver.iteration)
            started = time.perf_counter()
            solver.iterate(step)
            if time.perf_counter() - started < SLOW_CHUNK_SECONDS:
                chunk *= 2
            bar.update(step)
            if solver.iteration == next_report:
                nash_conv = evaluator.evaluate(solver.average_strategy()).nash_conv
                history.append({"iteration": solver.iteration, "nash_conv": nash_conv})
                bar.clear()
                report(solver.iteration, nash_conv)
                bar.refresh()
    return solver.average_strategy(), history


def _write_plot(path: str, spec: str, algorithm: str, history: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    points = [(h["iteration"], h["nash_conv"]) for h in history if h["nash_conv"] > 0]
    axes.loglog([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3)
    axes.set_xlabel("iterations")
    axes.set_ylabel("NashConv (sum of best-response gains)")
    axes.set_title(f"{algorithm} on {spec}")
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path, "--plot")


@main.command()
@click.argument("game", default="leduc")
@click.option("--algorithm", "-a", type=click.Choice(ALGORITHMS), default="cfr+", show_default=True,
              help="cfr, cfr+ (alternating, linear averaging), dcfr, fp (extensive-form "
                   "fictitious play) or lp (exact sequence-form LP).")
@click.option("--iterations", "-n", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Iterations of the iterative algorithms.")
@click.option("--every", "-k", type=click.IntRange(min=1), default=100, show_default=True,
              help="Evaluate NashConv of the average strategy every K iterations.")
@click.option("--delay", "-d", type=click.IntRange(min=0), default=None,
              help="CFR+ averaging delay: iteration t has weight max(t - D, 0)  "
                   f"[default: {CFR_DEFAULTS['delay']}]")
@click.option("--alpha", type=float, default=None,
              help=f"DCFR alpha  [default: {CFR_DEFAULTS['alpha']}]")
@click.option("--beta", type=float, default=None,
              help=f"DCFR beta  [default: {CFR_DEFAULTS['beta']}]")
@click.option("--gamma", type=float, default=None,
              help=f"DCFR gamma  [default: {CFR_DEFAULTS['gamma']}]")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the final strategy to this HDF5 strategy file.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a log-log PNG of NashConv against iterations.")
@json_option
@click.pass_context
def solve(ctx: click.Context, game: str, algorithm: str, iterations: int, every: int,
          delay: int | None, alpha: float | None, beta: float | None, gamma: float | None,
          out: str | None, plot: str | None, as_json: bool) -> None:
    """Solve GAME (default: leduc with CFR+) and report NashConv over iterations.

    Prints the game's sizes, NashConv (and NashConv/2, OpenSpiel's exploitability) of the
    average strategy every K iterations, and the final game value for player 0.
    """
    options = _solver_options(ctx, algorithm, iterations,
                              {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma})
    if plot is not None and (algorithm == "lp" or iterations == 0):
        raise ParameterError("--plot needs an iterative algorithm and --iterations >= 1")
    check_writable(out, "--out")
    check_writable(plot, "--plot")

    tree, build_seconds = build_game(game)
    if not as_json:
        for line in size_lines(tree, build_seconds):
            click.echo(line)
    evaluator = BestResponse(InfosetMap.identity(tree))

    def report(iteration: int, nash_conv: float) -> None:
        if not as_json:
            click.echo(f"iteration {iteration:>8}  NashConv {nash_conv:.6e}  "
                       f"(NashConv/2 {nash_conv / 2:.6e})")

    started = time.perf_counter()
    lp_value = solver = None
    if algorithm == "lp":
        if show_progress():
            click.echo("solving the sequence-form LP with HiGHS (no progress to show)", err=True)
        solution = SequenceFormLP(tree).solve()
        strategy, lp_value, history, iterations = solution.strategy, solution.game_value, [], 0
    else:
        solver = ITERATIVE_SOLVERS[algorithm](evaluator.infoset_map, **options)
        strategy, history = _run_iterative(solver, evaluator, iterations, every, report)
    seconds = time.perf_counter() - started
    parameters = _recorded_parameters(algorithm, solver)
    evaluation = evaluator.evaluate(strategy)
    if not history or history[-1]["iteration"] != iterations:
        history.append({"iteration": iterations, "nash_conv": evaluation.nash_conv})
        if algorithm != "lp":
            report(iterations, evaluation.nash_conv)

    if out is not None:
        save_strategy(out, strategy, provenance={
            "algorithm": algorithm, "parameters": parameters, "iterations": iterations,
            "nash_conv_history": history,
        })
    if plot is not None:
        _write_plot(plot, tree.spec, algorithm, history)

    sizes = tree.sizes()
    data = {
        "game": tree.spec, "algorithm": algorithm, "parameters": parameters,
        "iterations": iterations, "seconds": seconds, "build_seconds": build_seconds,
        **evaluation.to_dict(), "history": history, "infosets": sizes["infosets"],
        "histories": sizes["histories"],
    }
    if lp_value is not None:
        data["lp_value"] = lp_value
    lines = [
        f"{algorithm}: solved in {seconds:.2f} s" if algorithm == "lp" else
        f"{algorithm}: {iterations} iterations in {seconds:.2f} s",
        f"NashConv {evaluation.nash_conv:.6e}  (NashConv/2, OpenSpiel's exploitability: "
        f"{evaluation.exploitability:.6e})",
        f"game value (player 0's expected payoff under the "
        f"{'LP' if algorithm == 'lp' else 'final average'} profile): {evaluation.game_value:.9f}",
    ]
    if lp_value is not None:
        lines.append(f"LP value: {lp_value:.9f}")
    lines += [f"strategy written to {out}"] if out else []
    lines += [f"plot written to {plot}"] if plot else []
    emit(as_json, data, lines)


# --------------------------------------------------------------------------- evaluate
@main.command()
@click.argument("game")
@click.argument("strategy_file", metavar="STRATEGY.h5", type=click.Path(exists=True, dir_okay=False))
@json_option
def evaluate(game: str, strategy_file: str, as_json: bool) -> None:
    """Exact NashConv, best-response values and game value of a stored strategy for GAME."""
    tree, _ = build_game(game)
    strategy, provenance = load_strategy(strategy_file, tree)
    started = time.perf_counter()
    evaluation = BestResponse(strategy.infoset_map).evaluate(strategy)
    seconds = time.perf_counter() - started
    data = {
        "game": tree.spec, **evaluation.to_dict(), "seconds": seconds,
        "algorithm": provenance["algorithm"], "iterations": provenance["iterations"],
        "abstract_infosets": strategy.infoset_map.num_abstract,
    }
    br0, br1 = evaluation.best_response_values
    lines = [
        f"{strategy_file}: {provenance['algorithm']} strategy for {tree.spec} after "
        f"{provenance['iterations']} iterations, {strategy.infoset_map.num_abstract:,} "
        f"abstract infosets",
        f"NashConv {evaluation.nash_conv:.6e}  (NashConv/2, OpenSpiel's exploitability: "
        f"{evaluation.exploitability:.6e})",
        f"best-response values: player 0 {br0:.9f}, player 1 {br1:.9f}",
        f"game value (player 0): {evaluation.game_value:.9f}",
    ]
    emit(as_json, data, lines)
