"""`efgkit refine` and `efgkit tradeoff`: FPIRA / CFR+IRA abstraction refinement and
memory against exploitability."""

from __future__ import annotations

import time
from pathlib import Path

import click

from efgkit.cli.app import (
    build_game,
    check_state_file,
    check_writable,
    emit,
    json_option,
    main,
    save_figure,
    show_progress,
    size_lines,
    with_options,
)
from efgkit.cli.engine_options import given_flags
from efgkit.core.run_loop import CheckpointSchedule
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.io.lock import exclusive_lock
from efgkit.io.progress import progress_bar
from efgkit.maps.infoset_map import InfosetMap
from efgkit.storage.abstraction_file import is_card_abstraction_file, load_card_abstraction
from efgkit.storage.strategy_file import load_strategy, save_strategy

# --------------------------------------------------------------------------- refine
REFINERS = ("cfr+ira", "fpira")
CONVENTIONS = ("paper", "reference")
conventions_option = click.option(
    "--conventions", type=click.Choice(CONVENTIONS), default=None,
    help="paper: Čermák et al.'s text; reference: the authors' code where it departs from "
         "the text (docs/conventions.md, 'FPIRA and CFR+IRA'). Default: reference for FPIRA, "
         "paper for CFR+IRA; a resumed run keeps the conventions its checkpoint records.")


def _default_conventions(algorithm: str) -> str:
    from efgkit.abstraction import cfr_plus_ira, fpira

    return (fpira if algorithm == "fpira" else cfr_plus_ira).DEFAULT_CONVENTIONS


def _initial_abstraction(tree: GameTree, initial: str) -> InfosetMap:
    if initial == "coarsest":
        return InfosetMap.coarsest(tree)
    if initial == "identity":
        return InfosetMap.identity(tree)
    if is_card_abstraction_file(initial):
        return load_card_abstraction(initial, tree).infoset_map
    strategy, _ = load_strategy(initial, tree)
    return strategy.infoset_map


def _make_refiner(tree: GameTree, algorithm: str, initial: InfosetMap, kb: int, kh: int,
                  delay: int, seed: int, conventions: str | None = None):
    from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
    from efgkit.abstraction.fpira import FPIRA

    conventions = conventions or _default_conventions(algorithm)

    if algorithm == "fpira":
        return FPIRA(tree, initial=initial, conventions=conventions)
    return CFRPlusIRA(tree, initial=initial, k_bound=kb, k_heuristic=kh, delay=delay,
                      random_state=seed, conventions=conventions)


def _refinement_parameters(ctx: click.Context, algorithm: str, kb: int, kh: int, delay: int,
                           seed: int, conventions: str) -> dict[str, object]:
    # Checkpoints of the paper's conventions record no key, as before the option existed.
    chosen = {} if conventions == "paper" else {"conventions": conventions}
    if algorithm == "fpira":
        given = given_flags(ctx, "kb", "kh", "delay", "seed")
        if given:
            raise ParameterError(f"{', '.join(given)} apply to --algorithm cfr+ira only")
        return chosen
    return {"k_bound": kb, "k_heuristic": kh, "delay": delay, "seed": seed, **chosen}


def _run_refinement(refiner, target: float, max_iterations: int, every: int, report,
                    history=None, checkpoint=None, time_limit: float | None = None):
    from efgkit.abstraction.refinement import run_refinement

    with progress_bar(total=max_iterations, initial=refiner.iteration, unit="it", desc="refining",
              enabled=show_progress()) as bar:
        def callback(record) -> None:
            bar.update(record.iteration - bar.n)
            bar.set_postfix(nash_conv=f"{record.nash_conv:.4g}",
                            abstract=record.abstract_infosets, words=record.memory_words)
            report(record, bar)
            if checkpoint is not None:
                checkpoint(record)

        return run_refinement(refiner, target, max_iterations=max_iterations, every=every,
                              callback=callback, history=history, time_limit=time_limit)


class _RefinementCheckpoints(CheckpointSchedule):
    """Write the refiner's state to ``--state`` at the first evaluation point K or more
    iterations, or S or more seconds, after the last checkpoint, and at the end (``write``);
    a kill loses at most the work since the last one."""

    def __init__(self, path: str, tree: GameTree, algorithm: str, parameters: dict,
                 every: int | None, seconds: float | None) -> None:
        super().__init__(every=every, seconds=seconds)
        self.path, self.tree, self.algorithm, self.parameters = path, tree, algorithm, parameters
        self.last_iteration = 0
        self.history: list = []

    def __call__(self, refiner, record) -> None:
        """At an evaluation point: keep ``record`` and write a checkpoint if one is due."""
        if not self.history or self.history[-1] is not record:
            self.history.append(record)
        by_count = self.every is not None and refiner.iteration - self.last_iteration >= self.every
        by_time = self.seconds is not None and self._clock() - self._last_time >= self.seconds
        if by_count or by_time:
            self.write(refiner, self.history)

    def save(self, refiner, history: list) -> None:
        from efgkit.storage.refinement_state import save_refinement_state

        state = refiner.state()
        state.history = list(history)
        save_refinement_state(self.path, self.tree, self.algorithm, self.parameters, state)
        self.last_iteration = refiner.iteration


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
                 help="Initial abstraction: coarsest, identity, a card abstraction file "
                      "(efgkit cards --out), or a strategy file whose abstraction to start from."),
    click.option("--max-iterations", type=click.IntRange(min=0), default=100_000,
                 show_default=True, help="Give up after this many iterations."),
    click.option("--every", "-k", type=click.IntRange(min=1), default=10, show_default=True,
                 help="Evaluate NashConv every K iterations."),
    conventions_option,
]


@main.command()
@click.argument("game")
@click.option("--algorithm", "-a", type=click.Choice(REFINERS), default="cfr+ira",
              show_default=True, help="CFR+IRA or FPIRA (Čermák, Lisý & Bošanský).")
@with_options(refine_options)
@click.option("--seed", type=int, default=0, show_default=True,
              help="CFR+IRA: seed of the infoset sampling.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the abstraction and its strategy to this HDF5 strategy file.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of NashConv and abstraction size against iterations.")
@click.option("--state", type=click.Path(dir_okay=False), default=None, metavar="FILE.h5",
              help="Checkpoint file: the whole refinement state (map, regrets or averages, samples, "
                   "random state), written atomically at checkpoints and at the end.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=None, metavar="K",
              help="Checkpoint at the first evaluation K or more iterations after the last one.")
@click.option("--checkpoint-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="S", help="Checkpoint at the first evaluation S or more seconds after the last one.")
@click.option("--resume", is_flag=True,
              help="Continue from the --state checkpoint, bit-identical to an uninterrupted run.")
@click.option("--time", "seconds_limit", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS", help="Stop at the first evaluation after this many seconds (the result "
                                      "and --state are written as at any other stop).")
@json_option
@click.pass_context
def refine(ctx: click.Context, game: str, algorithm: str, target: float, kb: int, kh: int,
           delay: int, initial: str, max_iterations: int, every: int, conventions: str | None,
           seed: int, out: str | None, plot: str | None, state: str | None, checkpoint_every: int | None,
           checkpoint_seconds: float | None, resume: bool, seconds_limit: float | None,
           as_json: bool) -> None:
    """Refine an imperfect-recall abstraction of GAME until NashConv <= TARGET.

    Regrets and strategies live on the abstraction; best responses are exact in the
    original game. The result file holds the abstraction (InfosetMap) and the average
    strategy, and `efgkit evaluate` reads it.
    """
    check_writable(out, "--out")
    check_writable(plot, "--plot")
    check_state_file(ctx, state, resume)
    if conventions is None and resume and Path(state).exists():
        from efgkit.storage.refinement_state import recorded_conventions

        conventions = recorded_conventions(state)
    conventions = conventions or _default_conventions(algorithm)
    parameters = _refinement_parameters(ctx, algorithm, kb, kh, delay, seed, conventions)
    if state is not None:
        ctx.with_resource(exclusive_lock(state))
    tree, build_seconds = build_game(game)
    if not as_json:
        for line in size_lines(tree, build_seconds):
            click.echo(line)
    refiner = _make_refiner(tree, algorithm, _initial_abstraction(tree, initial), kb, kh,
                            delay, seed, conventions)
    checkpoints = previous = None
    if state is not None:
        recorded = {"initial": initial, **parameters}
        checkpoints = _RefinementCheckpoints(state, tree, algorithm, recorded, checkpoint_every,
                                             checkpoint_seconds)
        if resume and Path(state).exists():
            from efgkit.storage.refinement_state import load_refinement_state

            saved = load_refinement_state(state, tree, algorithm, recorded)
            refiner.restore(saved)
            previous = checkpoints.history = list(saved.history)
            checkpoints.last_iteration = refiner.iteration
            if not as_json:
                click.echo(f"resumed from {state} at iteration {refiner.iteration}")

    def report(record, bar) -> None:
        if not as_json and (record.iteration % (every * 10) == 0 or record.nash_conv <= target):
            bar.clear()
            click.echo(f"iteration {record.iteration:>7}  NashConv {record.nash_conv:.4e}  "
                       f"abstract infosets {record.abstract_infosets:,}  "
                       f"words {record.memory_words:,}")
            bar.refresh()

    started = time.perf_counter()
    history = _run_refinement(refiner, target, max_iterations, every, report, previous,
                              None if checkpoints is None else lambda record: checkpoints(refiner, record),
                              seconds_limit)
    if checkpoints is not None:
        checkpoints.write(refiner, checkpoints.history)
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
        "game": tree.spec, "algorithm": algorithm, "conventions": conventions, "parameters": parameters,
        "target": target, "reached": final.nash_conv <= target,
        "nash_conv": final.nash_conv, "exploitability": final.nash_conv / 2,
        "abstract_infosets": memory["abstract_infosets"],
        "original_infosets": memory["original_infosets"],
        "abstract_percent": 100.0 * memory["abstract_infosets"] / tree.num_infosets,
        "memory_words": memory["memory_words"], "map_entries": memory["map_entries"],
        "iterations": final.iteration, "seconds": seconds,
        "iterating_seconds": final.seconds, "history": records,
        "time_limit": seconds_limit, "stopped_by_time": (
            seconds_limit is not None and final.nash_conv > target and final.iteration < max_iterations),
    }
    verdict = "reached" if data["reached"] else "did NOT reach"
    if data["stopped_by_time"]:
        verdict += f" (stopped by --time {seconds_limit:g})"
    lines = [
        f"{algorithm} {verdict} NashConv {target} after {final.iteration} iterations "
        f"({seconds:.2f} s): NashConv {final.nash_conv:.4e} (NashConv/2 "
        f"{final.nash_conv / 2:.4e})",
        f"abstraction: {memory['abstract_infosets']:,} of {tree.num_infosets:,} infosets "
        f"({data['abstract_percent']:.1f}%), {memory['map_entries']:,} map entries, "
        f"{memory['memory_words']:,} 32-bit words of solver state",
    ]
    if checkpoints is not None:
        data.update(state=state, checkpoints_written=checkpoints.written)
    lines += [f"abstraction and strategy written to {out}"] if out else []
    lines += [f"refinement state written to {state} ({checkpoints.written} checkpoints)"] if state else []
    lines += [f"plot written to {plot}"] if plot else []
    emit(as_json, data, lines)


def _write_refinement_plot(path: str, spec: str, algorithm: str, history, infosets: int) -> None:
    from efgkit.cli.plots import new_figure

    figure, (left, right) = new_figure(1, 2, figsize=(10, 4))
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
    save_figure(figure, path, "--plot")


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
@conventions_option
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), required=True,
              help="Write every evaluation point of every run to this CSV.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of memory (32-bit words) against NashConv.")
@json_option
def tradeoff(game: str, settings: str, seeds: int, target: float, max_iterations: int,
             every: int, conventions: str | None, csv_path: str, plot: str | None,
             as_json: bool) -> None:
    """Memory against exploitability: run refinements of GAME and record both as they go.

    Each CSV row is one evaluation: setting, seed, iteration, NashConv, abstract infosets,
    memory words, map entries, seconds. Plain CFR+ on the full game is the reference
    (2 words per original infoset-action).
    """
    from efgkit.cli.plots import write_rows_csv, write_tradeoff_plot

    runs = _parse_settings(settings)
    check_writable(csv_path, "--csv")
    check_writable(plot, "--plot")
    tree, _ = build_game(game)
    identity_words = 2 * tree.num_infoset_actions
    rows: list[dict] = []
    summary = []
    plan = [(label, kb, kh, seed) for label, kb, kh in runs for seed in range(1 if kb < 0 else seeds)]
    with progress_bar(plan, unit="run", desc="tradeoff runs", enabled=show_progress()) as bar:
        for label, kb, kh, seed in bar:
            algorithm = "fpira" if kb < 0 else "cfr+ira"
            refiner = _make_refiner(tree, algorithm, InfosetMap.coarsest(tree), kb, kh, 100, seed,
                                    conventions)
            history = _run_refinement(refiner, target, max_iterations, every,
                                      lambda record, bar: None)
            for record in history:
                rows.append({"setting": label, "seed": seed, **vars(record)})
            final = history[-1]
            summary.append({"setting": label, "seed": seed, "iterations": final.iteration,
                            "nash_conv": final.nash_conv, "reached": final.nash_conv <= target,
                            "abstract_infosets": final.abstract_infosets,
                            "memory_words": final.memory_words, "seconds": final.seconds})
    write_rows_csv(csv_path, rows, "--csv")
    if plot is not None:
        write_tradeoff_plot(plot, game, rows, identity_words)
    data = {"game": tree.spec, "target": target, "original_infosets": tree.num_infosets,
            "full_game_words": identity_words, "runs": summary, "csv": csv_path}
    lines = [f"{s['setting']} seed {s['seed']}: NashConv {s['nash_conv']:.4e} after "
             f"{s['iterations']} iterations, {s['abstract_infosets']:,} abstract infosets, "
             f"{s['memory_words']:,} words" for s in summary]
    lines.append(f"CFR+ on the full game keeps {identity_words:,} words; rows written to "
                 f"{csv_path}" + (f", plot to {plot}" if plot else ""))
    emit(as_json, data, lines)
