"""The ``efgkit`` command: list games, show their sizes, solve them, evaluate stored strategies.

Every command has ``--help`` and ``--json`` (one JSON object on stdout, snake_case keys).
Progress bars go to stderr and only when it is a terminal. Bad input of any kind (an
EfgkitError or a click usage error) prints one line ``efgkit: error: ...`` on stderr and
exits with code 2; output files are written atomically, so a failure never damages them.
Exploitability is reported as NashConv (sum of both best-response gains, what Čermák et
al. plot) and NashConv/2 (OpenSpiel's "exploitability"), each labelled.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import sys
import time
from pathlib import Path

import click
from tqdm import tqdm

from efgkit.abstraction.infoset_map import InfosetMap
from efgkit.errors import EfgkitError, ParameterError
from efgkit.games.registry import ALIASES, load_game, registered_games
from efgkit.games.tree import GameTree
from efgkit.solvers import (
    BestResponse,
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    FictitiousPlay,
    SequenceFormLP,
    Strategy,
)
from efgkit.storage.strategy_file import atomic_output_path, load_strategy, save_strategy

ITERATIVE_SOLVERS = {"cfr": CFRSolver, "cfr+": CFRPlusSolver, "dcfr": DCFRSolver, "fp": FictitiousPlay}
ALGORITHMS = (*ITERATIVE_SOLVERS, "lp")
CFR_DEFAULTS = {name: parameter.default for name, parameter
                in inspect.signature(CFRSolver.__init__).parameters.items()}
SLOW_CHUNK_SECONDS = 0.25
"""Iterations run in chunks that grow while a chunk takes less than this (progress bar pace)."""


class _EfgkitGroup(click.Group):
    """A click group whose every user error is one stderr line and exit code 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.format_message())
            sys.exit(0)
        except click.ClickException as exc:
            _fail(_usage_message(exc))
        except EfgkitError as exc:
            _fail(str(exc))
        except click.Abort:
            click.echo("efgkit: interrupted", err=True)
            sys.exit(130)
        sys.exit(result if isinstance(result, int) else 0)


def _usage_message(exc: click.ClickException) -> str:
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def _fail(message: str) -> None:
    click.echo(f"efgkit: error: {' '.join(message.split())}", err=True)
    sys.exit(2)


def _show_progress() -> bool:
    return sys.stderr.isatty()


def _emit(as_json: bool, data: dict, lines: list[str]) -> None:
    if as_json:
        click.echo(json.dumps(data))
    else:
        for line in lines:
            click.echo(line)


def _build(spec: str, node_limit: int | None = None) -> tuple[GameTree, float]:
    start = time.perf_counter()
    tree = load_game(spec, node_limit=node_limit, progress=_show_progress())
    return tree, time.perf_counter() - start


def _size_lines(tree: GameTree, build_seconds: float) -> list[str]:
    sizes = tree.sizes()
    return [
        f"game {tree.spec}: {sizes['histories']:,} histories ({sizes['decision_nodes']:,} decision, "
        f"{sizes['chance_nodes']:,} chance, {sizes['terminal_nodes']:,} terminal), "
        f"{sizes['infosets']:,} infosets ({sizes['infosets_player0']:,} + "
        f"{sizes['infosets_player1']:,}), built in {build_seconds:.2f} s",
    ]


json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print one JSON object on stdout instead of text.")


@click.group(cls=_EfgkitGroup, no_args_is_help=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="efgkit")
def main() -> None:
    """Small, provably good strategies for two-player zero-sum imperfect-information games.

    A GAME is a spec in OpenSpiel's style: leduc, kuhn(cards=4), poker(bets=2,raises=2,cap=4),
    goofspiel(cards=5), pursuit(moves=5), an alias (P224, GS6, GP5, ...) or
    openspiel:<name>(params). `efgkit games` lists them.
    """


# --------------------------------------------------------------------------- games
@main.command()
@json_option
def games(as_json: bool) -> None:
    """List the built-in games, their parameters with defaults, and aliases."""
    entries = registered_games()
    listing = []
    lines = []
    for entry in entries.values():
        aliases = {alias: spec for alias, spec in ALIASES.items()
                   if spec.split("(")[0] == entry.name}
        parameters = [
            {"name": p.name, "type": p.kind.__name__, "default": p.default, "minimum": p.minimum,
             "maximum": p.maximum, "help": p.help}
            for p in entry.parameters
        ]
        listing.append({"name": entry.name, "summary": entry.summary, "parameters": parameters,
                        "aliases": aliases})
        lines.append(f"{entry.name}: {entry.summary}")
        for p in entry.parameters:
            bounds = "".join([f", min {p.minimum}" if p.minimum is not None else "",
                              f", max {p.maximum}" if p.maximum is not None else ""])
            default = json.dumps(p.default) if isinstance(p.default, bool) else p.default
            lines.append(f"    {p.name}={default} ({p.kind.__name__}{bounds}): {p.help}")
        if aliases:
            lines.append("    aliases: " + ", ".join(f"{a} = {s}" for a, s in aliases.items()))
    lines.append("openspiel:<name>(params): any two-player zero-sum OpenSpiel game "
                 "(needs open_spiel installed)")
    _emit(as_json, {"games": listing, "aliases": dict(ALIASES)}, lines)


# --------------------------------------------------------------------------- info
@main.command()
@click.argument("game")
@click.option("--node-limit", type=click.IntRange(min=1), default=None,
              help="Refuse to build trees with more nodes than this.")
@json_option
def info(game: str, node_limit: int | None, as_json: bool) -> None:
    """Sizes of GAME: histories, nodes by kind, infosets, and the coarsest abstraction."""
    tree, build_seconds = _build(game, node_limit)
    sizes = tree.sizes()
    coarsest = InfosetMap.coarsest(tree).num_abstract
    data = {"game": tree.spec, **sizes, "build_seconds": build_seconds,
            "coarsest_abstract_infosets": coarsest}
    lines = _size_lines(tree, build_seconds) + [
        f"infoset-actions {sizes['infoset_actions']:,}, max depth {sizes['max_depth']}, "
        f"{sizes['bytes_per_node']:.0f} bytes per node",
        f"coarsest abstraction (player, own-sequence length, #actions): "
        f"{coarsest:,} abstract infosets",
    ]
    _emit(as_json, data, lines)


# --------------------------------------------------------------------------- solve
def _check_writable(path: str | None, option: str) -> None:
    """Fail before a long solve, not after, if an output file cannot be written."""
    if path is None:
        return
    parent = Path(path).parent
    if not parent.is_dir():
        raise ParameterError(f"{option} {path}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise ParameterError(f"{option} {path}: directory {str(parent)!r} is not writable")
    if Path(path).is_dir():
        raise ParameterError(f"{option} {path} is a directory")


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
              disable=not _show_progress(), leave=False) as bar:
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
    try:
        with atomic_output_path(path) as temporary:
            figure.savefig(temporary, format="png", dpi=120)
    except OSError as exc:
        raise ParameterError(f"--plot {path}: cannot write ({exc})") from exc
    finally:
        plt.close(figure)


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
    _check_writable(out, "--out")
    _check_writable(plot, "--plot")

    tree, build_seconds = _build(game)
    if not as_json:
        for line in _size_lines(tree, build_seconds):
            click.echo(line)
    evaluator = BestResponse(InfosetMap.identity(tree))

    def report(iteration: int, nash_conv: float) -> None:
        if not as_json:
            click.echo(f"iteration {iteration:>8}  NashConv {nash_conv:.6e}  "
                       f"(NashConv/2 {nash_conv / 2:.6e})")

    started = time.perf_counter()
    lp_value = solver = None
    if algorithm == "lp":
        if _show_progress():
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
    _emit(as_json, data, lines)


# --------------------------------------------------------------------------- evaluate
@main.command()
@click.argument("game")
@click.argument("strategy_file", metavar="STRATEGY.h5", type=click.Path(exists=True, dir_okay=False))
@json_option
def evaluate(game: str, strategy_file: str, as_json: bool) -> None:
    """Exact NashConv, best-response values and game value of a stored strategy for GAME."""
    tree, _ = _build(game)
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
    _emit(as_json, data, lines)
