"""The ``efgkit`` command: list games, show their sizes, solve them, refine abstractions,
evaluate stored strategies, and sweep memory against exploitability.

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
    _save_figure(figure, path, "--plot")


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


# --------------------------------------------------------------------------- refine
REFINERS = ("cfr+ira", "fpira")


def _initial_abstraction(tree: GameTree, initial: str) -> InfosetMap:
    if initial == "coarsest":
        return InfosetMap.coarsest(tree)
    if initial == "identity":
        return InfosetMap.identity(tree)
    strategy, _ = load_strategy(initial, tree)
    return strategy.infoset_map


def _make_refiner(tree: GameTree, algorithm: str, initial: InfosetMap, kb: int, kh: int,
                  delay: int, seed: int):
    from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
    from efgkit.abstraction.fpira import FPIRA

    if algorithm == "fpira":
        return FPIRA(tree, initial=initial)
    return CFRPlusIRA(tree, initial=initial, k_bound=kb, k_heuristic=kh, delay=delay,
                      random_state=seed)


def _refinement_parameters(ctx: click.Context, algorithm: str, kb: int, kh: int, delay: int,
                           seed: int) -> dict[str, object]:
    if algorithm == "fpira":
        given = [f"--{name}" for name in ("kb", "kh", "delay", "seed")
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if given:
            raise ParameterError(f"{', '.join(given)} apply to --algorithm cfr+ira only")
        return {}
    return {"k_bound": kb, "k_heuristic": kh, "delay": delay, "seed": seed}


def _run_refinement(refiner, target: float, max_iterations: int, every: int, report):
    from efgkit.abstraction.refinement import run_refinement

    with tqdm(total=max_iterations, unit="it", desc="refining", file=sys.stderr,
              disable=not _show_progress(), leave=False) as bar:
        def callback(record) -> None:
            bar.update(record.iteration - bar.n)
            bar.set_postfix(nash_conv=f"{record.nash_conv:.4g}",
                            abstract=record.abstract_infosets, words=record.memory_words)
            report(record, bar)

        return run_refinement(refiner, target, max_iterations=max_iterations, every=every,
                              callback=callback)


refine_options = [
    click.option("--target", type=click.FloatRange(min=0.0), default=0.05, show_default=True,
                 help="Stop when NashConv (sum of both best-response gains) is at most this."),
    click.option("--kb", type=click.IntRange(min=0), default=100, show_default=True,
                 help="CFR+IRA: original infosets sampled for the regret-bound update."),
    click.option("--kh", type=click.IntRange(min=0), default=900, show_default=True,
                 help="CFR+IRA: original infosets sampled per update for the heuristic."),
    click.option("--delay", type=click.IntRange(min=0), default=100, show_default=True,
                 help="CFR+IRA: averaging delay (the paper's 100)."),
    click.option("--initial", default="coarsest", show_default=True,
                 help="Initial abstraction: coarsest, identity, or a strategy file whose "
                      "abstraction to start from."),
    click.option("--max-iterations", type=click.IntRange(min=0), default=100_000,
                 show_default=True, help="Give up after this many iterations."),
    click.option("--every", "-k", type=click.IntRange(min=1), default=10, show_default=True,
                 help="Evaluate NashConv every K iterations."),
]


def _with_options(options):
    def decorate(function):
        for option in reversed(options):
            function = option(function)
        return function
    return decorate


@main.command()
@click.argument("game")
@click.option("--algorithm", "-a", type=click.Choice(REFINERS), default="cfr+ira",
              show_default=True, help="CFR+IRA or FPIRA (Čermák, Lisý & Bošanský).")
@_with_options(refine_options)
@click.option("--seed", type=int, default=0, show_default=True,
              help="CFR+IRA: seed of the infoset sampling.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the abstraction and its strategy to this HDF5 strategy file.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of NashConv and abstraction size against iterations.")
@json_option
@click.pass_context
def refine(ctx: click.Context, game: str, algorithm: str, target: float, kb: int, kh: int,
           delay: int, initial: str, max_iterations: int, every: int, seed: int,
           out: str | None, plot: str | None, as_json: bool) -> None:
    """Refine an imperfect-recall abstraction of GAME until NashConv <= TARGET.

    Regrets and strategies live on the abstraction; best responses are exact in the
    original game. The result file holds the abstraction (InfosetMap) and the average
    strategy, and `efgkit evaluate` reads it.
    """
    parameters = _refinement_parameters(ctx, algorithm, kb, kh, delay, seed)
    _check_writable(out, "--out")
    _check_writable(plot, "--plot")
    tree, build_seconds = _build(game)
    if not as_json:
        for line in _size_lines(tree, build_seconds):
            click.echo(line)
    refiner = _make_refiner(tree, algorithm, _initial_abstraction(tree, initial), kb, kh,
                            delay, seed)

    def report(record, bar) -> None:
        if not as_json and (record.iteration % (every * 10) == 0 or record.nash_conv <= target):
            bar.clear()
            click.echo(f"iteration {record.iteration:>7}  NashConv {record.nash_conv:.4e}  "
                       f"abstract infosets {record.abstract_infosets:,}  "
                       f"words {record.memory_words:,}")
            bar.refresh()

    started = time.perf_counter()
    history = _run_refinement(refiner, target, max_iterations, every, report)
    seconds = time.perf_counter() - started
    final = history[-1]
    strategy = refiner.average_strategy()
    memory = refiner.memory()
    records = [vars(record) for record in history]
    if out is not None:
        save_strategy(out, strategy, provenance={
            "algorithm": algorithm, "parameters": parameters, "iterations": final.iteration,
            "nash_conv_history": [{"iteration": r.iteration, "nash_conv": r.nash_conv}
                                  for r in history],
        })
    if plot is not None:
        _write_refinement_plot(plot, tree.spec, algorithm, history, tree.num_infosets)
    data = {
        "game": tree.spec, "algorithm": algorithm, "parameters": parameters,
        "target": target, "reached": final.nash_conv <= target,
        "nash_conv": final.nash_conv, "exploitability": final.nash_conv / 2,
        "abstract_infosets": memory["abstract_infosets"],
        "original_infosets": memory["original_infosets"],
        "abstract_percent": 100.0 * memory["abstract_infosets"] / tree.num_infosets,
        "memory_words": memory["memory_words"], "map_entries": memory["map_entries"],
        "iterations": final.iteration, "seconds": seconds,
        "iterating_seconds": final.seconds, "history": records,
    }
    verdict = "reached" if data["reached"] else "did NOT reach"
    lines = [
        f"{algorithm} {verdict} NashConv {target} after {final.iteration} iterations "
        f"({seconds:.2f} s): NashConv {final.nash_conv:.4e} (NashConv/2 "
        f"{final.nash_conv / 2:.4e})",
        f"abstraction: {memory['abstract_infosets']:,} of {tree.num_infosets:,} infosets "
        f"({data['abstract_percent']:.1f}%), {memory['map_entries']:,} map entries, "
        f"{memory['memory_words']:,} 32-bit words of solver state",
    ]
    lines += [f"abstraction and strategy written to {out}"] if out else []
    lines += [f"plot written to {plot}"] if plot else []
    _emit(as_json, data, lines)


def _write_refinement_plot(path: str, spec: str, algorithm: str, history, infosets: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    iterations = [max(r.iteration, 1) for r in history]
    left.loglog(iterations, [max(r.nash_conv, 1e-12) for r in history])
    left.set_xlabel("iterations")
    left.set_ylabel("NashConv")
    left.grid(True, which="both", alpha=0.3)
    right.semilogx(iterations, [100.0 * r.abstract_infosets / infosets for r in history])
    right.set_xlabel("iterations")
    right.set_ylabel("abstract infosets, % of original")
    right.grid(True, which="both", alpha=0.3)
    figure.suptitle(f"{algorithm} on {spec}")
    figure.tight_layout()
    _save_figure(figure, path, "--plot")


def _save_figure(figure, path: str, option: str) -> None:
    import matplotlib.pyplot as plt

    try:
        with atomic_output_path(path) as temporary:
            figure.savefig(temporary, format="png", dpi=120)
    except OSError as exc:
        raise ParameterError(f"{option} {path}: cannot write ({exc})") from exc
    finally:
        plt.close(figure)


# --------------------------------------------------------------------------- tradeoff
def _parse_settings(text: str) -> list[tuple[str, int, int]]:
    """'B10H90,B100H900,fpira' -> [(label, kb, kh)]; kb = kh = -1 marks FPIRA."""
    import re

    settings = []
    for item in (part.strip() for part in text.split(",") if part.strip()):
        if item.lower() == "fpira":
            settings.append(("FPIRA", -1, -1))
            continue
        match = re.fullmatch(r"[Bb](\d+)[Hh](\d+)", item)
        if not match:
            raise ParameterError(f"--settings: {item!r} is not BxHy (e.g. B10H90) or fpira")
        settings.append((f"B{match.group(1)}H{match.group(2)} CFR+IRA", int(match.group(1)),
                         int(match.group(2))))
    if not settings:
        raise ParameterError("--settings is empty")
    return settings


@main.command()
@click.argument("game")
@click.option("--settings", default="B10H90,B100H900,fpira", show_default=True,
              help="Comma-separated runs: BxHy = CFR+IRA with k_b=x, k_h=y; fpira.")
@click.option("--seeds", type=click.IntRange(min=1), default=3, show_default=True,
              help="Seeds per CFR+IRA setting (FPIRA is deterministic: one run).")
@click.option("--target", type=click.FloatRange(min=0.0), default=0.05, show_default=True)
@click.option("--max-iterations", type=click.IntRange(min=0), default=20_000, show_default=True)
@click.option("--every", "-k", type=click.IntRange(min=1), default=25, show_default=True)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), required=True,
              help="Write every evaluation point of every run to this CSV.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of memory (32-bit words) against NashConv.")
@json_option
def tradeoff(game: str, settings: str, seeds: int, target: float, max_iterations: int,
             every: int, csv_path: str, plot: str | None, as_json: bool) -> None:
    """Memory against exploitability: run refinements of GAME and record both as they go.

    Each CSV row is one evaluation: setting, seed, iteration, NashConv, abstract infosets,
    memory words, map entries, seconds. Plain CFR+ on the full game is the reference
    (2 words per original infoset-action).
    """
    import csv
    import io

    runs = _parse_settings(settings)
    _check_writable(csv_path, "--csv")
    _check_writable(plot, "--plot")
    tree, _ = _build(game)
    identity_words = 2 * tree.num_infoset_actions
    rows: list[dict] = []
    summary = []
    for label, kb, kh in runs:
        for seed in range(1 if kb < 0 else seeds):
            algorithm = "fpira" if kb < 0 else "cfr+ira"
            refiner = _make_refiner(tree, algorithm, InfosetMap.coarsest(tree), kb, kh, 100, seed)
            history = _run_refinement(refiner, target, max_iterations, every,
                                      lambda record, bar: None)
            for record in history:
                rows.append({"setting": label, "seed": seed, **vars(record)})
            final = history[-1]
            summary.append({"setting": label, "seed": seed, "iterations": final.iteration,
                            "nash_conv": final.nash_conv, "reached": final.nash_conv <= target,
                            "abstract_infosets": final.abstract_infosets,
                            "memory_words": final.memory_words, "seconds": final.seconds})
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    try:
        with atomic_output_path(csv_path) as temporary:
            Path(temporary).write_text(buffer.getvalue())
    except OSError as exc:
        raise ParameterError(f"--csv {csv_path}: cannot write ({exc})") from exc
    if plot is not None:
        _write_tradeoff_plot(plot, tree.spec, rows, identity_words)
    data = {"game": tree.spec, "target": target, "original_infosets": tree.num_infosets,
            "full_game_words": identity_words, "runs": summary, "csv": csv_path}
    lines = [f"{s['setting']} seed {s['seed']}: NashConv {s['nash_conv']:.4e} after "
             f"{s['iterations']} iterations, {s['abstract_infosets']:,} abstract infosets, "
             f"{s['memory_words']:,} words" for s in summary]
    lines.append(f"CFR+ on the full game keeps {identity_words:,} words; rows written to "
                 f"{csv_path}" + (f", plot to {plot}" if plot else ""))
    _emit(as_json, data, lines)


def _write_tradeoff_plot(path: str, spec: str, rows: list[dict], identity_words: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.5, 4.5))
    for number, label in enumerate(dict.fromkeys(r["setting"] for r in rows)):
        color = f"C{number}"
        for seed in sorted({r["seed"] for r in rows if r["setting"] == label}):
            run = [r for r in rows if r["setting"] == label and r["seed"] == seed
                   and r["nash_conv"] > 0]
            axes.loglog([r["nash_conv"] for r in run], [r["memory_words"] for r in run],
                        color=color, alpha=0.7, label=label if seed == 0 else None)
    axes.axhline(identity_words, color="black", linestyle="--", label="CFR+ (full game)")
    axes.invert_xaxis()
    axes.set_xlabel("NashConv (sum of both best-response gains)")
    axes.set_ylabel("solver memory, 32-bit words")
    axes.set_title(f"memory against exploitability on {spec}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    _save_figure(figure, path, "--plot")
