"""`efgkit build`: the whole job in one command and one folder (docs/build.md).

1. card buckets + CFR+ where the game has cards (feature and counts from the user);
2. the coarsest imperfect-recall abstraction refined by CFR+IRA (or FPIRA) to a target
   NashConv, the best strategy found kept if the target is not reached;
3. CFR+ on the full game, the reference;
4. memory against exploitability (CSV, PNG of Pareto fronts);
5. the refined strategy as an HDF5 strategy file and a compact .efgs export, its exact
   NashConv after quantization, its bytes beside the abstract solver state;
6. report.md (the table, the plot, the commands that reproduce it).

Every file is written atomically, so an interrupted build leaves only complete files.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from pathlib import Path

import click

from efgkit.cli.app import build_game, emit, json_option, main, show_progress, size_lines
from efgkit.cli.engine_options import flag_of, given_flags
from efgkit.errors import EfgkitError, ParameterError
from efgkit.io.progress import progress_bar

REFINERS = ("cfr+ira", "fpira")
FEATURES = ("ehs", "ehs2", "hist", "ochs", "pa")


class BuildInterrupted(EfgkitError):
    """The user interrupted a build; the files already written are complete."""


class TargetNotReached(EfgkitError):
    """The refinement stopped at its iteration cap above the target; the best strategy
    found was still exported."""


def _output_folder(out: str, force: bool) -> Path:
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"--out {out} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise ParameterError(f"--out {out} exists and is not empty; pass --force to overwrite "
                             f"its files")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(f"--out {out}: cannot create the folder ({exc})") from exc
    return folder


def _solve_records(solver, evaluator, setting: str, iterations: int, extra_words: int, bar,
                   memory_words: int) -> tuple[list[dict], object]:
    """Run a fixed-abstraction CFR+ solver, evaluating on a doubling schedule."""
    rows, done, checkpoint = [], 0, 1
    while True:
        strategy = solver.average_strategy()
        nash_conv = evaluator.evaluate(strategy).nash_conv
        rows.append({"setting": setting, "seed": 0, "iteration": done, "nash_conv": nash_conv,
                     "memory_words": memory_words + extra_words})
        if done >= iterations:
            return rows, strategy
        step = min(checkpoint, iterations) - done
        solver.iterate(step)
        done += step
        bar.update(step)
        checkpoint *= 2


HOLDEM_ONLY = ("seconds", "eval_time", "workers", "boards", "sizes")
TREE_ONLY = ("algorithm", "max_iterations", "every", "reference_iterations", "feature")


def _check_given(ctx: click.Context, allowed: tuple[str, ...], refused: tuple[str, ...], what: str) -> None:
    """ParameterError naming the first option of ``refused`` given on the command line."""
    given = given_flags(ctx, *refused)
    if given:
        raise ParameterError(f"{given[0]} does not apply to {what}; its options: "
                             + ", ".join(flag_of(ctx, a) for a in allowed))


def _sizes(text: str | None) -> tuple[int, ...]:
    """``--sizes A,B,...``: positive bucket counts."""
    if text is None:
        return ()
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise ParameterError(f"--sizes {text!r}: positive bucket counts separated by commas, e.g. 10,30,100")
    return sizes


def _build_holdem_folder(game: str, out: str | None, force: bool, buckets: str | None, seconds: float | None,
                         eval_time: float | None, workers: int, boards: int, bits: int, seed: int,
                         target: float | None, sizes: str | None, as_json: bool) -> None:
    from efgkit.cli.holdem import bucket_counts
    from efgkit.cli.holdem_build import build_holdem
    from efgkit.jobs.holdem_build import HoldemBuild, check_target, default_buckets
    from efgkit.specs import make_game

    rules = make_game(game)
    counts = default_buckets(rules.card_structure.num_ranks) if buckets is None else bucket_counts(buckets)
    job = HoldemBuild(rules, Path("."), solve_seconds=120.0 if seconds is None else seconds,
                      eval_seconds=300.0 if eval_time is None else eval_time, buckets=counts, bits=bits,
                      seed=seed, workers=workers, match_boards=boards, lbr_boards=max(2, boards // 10),
                      target_mbb=target, sizes=_sizes(sizes))
    job.check()
    if target is not None:
        check_target(job)
    folder = _output_folder(out or f"build-{_slug(game)}", force)
    job = dataclasses.replace(job, folder=folder)
    command = " ".join(shlex.quote(str(arg)) for arg in [
        "efgkit", "build", game, "--out", folder, "--force", "--time", job.solve_seconds, "--eval-time",
        job.eval_seconds, "--buckets", ",".join(map(str, counts)), "--boards", boards, "--bits", bits,
        "--seed", seed] + (["--target", target] if target is not None else [])
        + (["--sizes", ",".join(map(str, job.sizes))] if job.sizes else []))
    _run_into(folder, lambda: build_holdem(job, as_json, show_progress(), command), as_json)


@main.command()
@click.argument("game", default="leduc")
@click.option("--out", "-o", type=click.Path(file_okay=False), default=None,
              help="Output folder  [default: build-<game>]")
@click.option("--force", is_flag=True, help="Write into an output folder that is not empty.")
@click.option("--target", type=click.FloatRange(min=0.0), default=None,
              help="NashConv the refinement stops at  [default: 0.05]; hold'em: the exploitability in "
                   "mbb/g at which the solve stops, checked by the exact best response at the "
                   "convergence curve's points")
@click.option("--algorithm", "-a", type=click.Choice(REFINERS), default="cfr+ira",
              show_default=True, help="Refinement of the coarsest abstraction.")
@click.option("--max-iterations", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Iteration cap of the refinement.")
@click.option("--every", "-k", type=click.IntRange(min=1), default=25, show_default=True,
              help="Evaluate the refinement every K iterations.")
@click.option("--reference-iterations", type=click.IntRange(min=0), default=1000,
              show_default=True, help="CFR+ iterations on the full game (0 skips it) and on "
                                      "the card abstraction.")
@click.option("--feature", type=click.Choice(FEATURES), default="hist", show_default=True,
              help="Card feature of the buckets (poker games).")
@click.option("--buckets", default=None,
              help="Card buckets per round, comma-separated ('all' keeps a round; one value for "
                   "every round; 'none' skips the card abstraction)  [default: 3; hold'em: four counts "
                   "scaled to the deck, 169-1000-1000-1000 for 13 ranks]")
@click.option("--time", "seconds", type=float, default=None, metavar="SECONDS",
              help="hold'em: seconds of sampled CFR+  [default: 120]")
@click.option("--eval-time", type=float, default=None, metavar="SECONDS",
              help="hold'em: the exact full-game best response runs if its estimated cost fits, else "
                   "local best response  [default: 300]")
@click.option("--workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="hold'em: Dask worker processes for the card buckets (0: this process).")
@click.option("--sizes", default=None, metavar="A,B,...",
              help="hold'em: also solve with A, B, ... buckets on the flop, turn and river (each for --time) "
                   "and plot memory against exploitability across the bucket counts (tradeoff.png).")
@click.option("--boards", type=click.IntRange(min=20), default=2000, show_default=True,
              help="hold'em: boards of each duplicate match; local best response plays a tenth of them.")
@click.option("--bits", type=click.Choice(["16", "8", "4"]), default="8", show_default=True,
              help="Bits per quantized probability of the export.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the refinement's sampling and of the clustering.")
@json_option
@click.pass_context
def build(ctx: click.Context, game: str, out: str | None, force: bool, target: float, algorithm: str,
          max_iterations: int, every: int, reference_iterations: int, feature: str, buckets: str | None,
          seconds: float | None, eval_time: float | None, workers: int, sizes: str | None, boards: int,
          bits: str, seed: int, as_json: bool) -> None:
    """Build a memory-efficient abstraction of GAME (default leduc), measure memory against
    exploitability, and export the refined strategy for a small device.

    Writes into one folder: tradeoff.csv, tradeoff.png, strategy.h5, strategy.efgs and
    report.md. NashConv is the sum of both best-response gains (NashConv/2 is OpenSpiel's
    exploitability), always exact in the full game.
    """
    from efgkit.jobs.holdem_build import is_holdem
    from efgkit.specs import make_game

    if is_holdem(make_game(game)):
        _check_given(ctx, HOLDEM_ONLY, TREE_ONLY, "a hold'em build (sampled CFR+ on card buckets)")
        _build_holdem_folder(game, out, force, buckets, seconds, eval_time, workers, boards, int(bits), seed,
                             target, sizes, as_json)
        return
    _check_given(ctx, TREE_ONLY, HOLDEM_ONLY, f"{game} (a tree build)")
    target = 0.05 if target is None else target
    buckets = "3" if buckets is None else buckets
    folder = _output_folder(out or f"build-{_slug(game)}", force)
    command = " ".join(shlex.quote(str(arg)) for arg in [
        "efgkit", "build", game, "--out", folder, "--force", "--target", target, "--algorithm",
        algorithm, "--max-iterations", max_iterations, "--every", every,
        "--reference-iterations", reference_iterations, "--feature", feature, "--buckets",
        buckets, "--bits", bits, "--seed", seed])
    data = _run_into(folder, lambda: _build(game, folder, target, algorithm, max_iterations, every,
                                            reference_iterations, feature, buckets, int(bits), seed,
                                            as_json, command), as_json)
    if not data["reached"]:
        raise TargetNotReached(
            f"--target {target}: NashConv not reached within --max-iterations {max_iterations} "
            f"(best {data['nash_conv']:.4e}); the best strategy found is in {folder}")


def _run_into(folder: Path, run, as_json: bool) -> dict:
    """``run()`` (a build writing into ``folder``, returning its data and lines), timed and
    printed; Ctrl-C is one line listing the files already complete."""
    started = time.perf_counter()
    try:
        data, lines = run()
    except KeyboardInterrupt:
        written = sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []
        raise BuildInterrupted(f"interrupted; the files already in {folder} are complete "
                               f"({', '.join(written) or 'none'})") from None
    data["seconds"] = time.perf_counter() - started
    lines.append(f"done in {data['seconds']:.1f} s; report: {folder / 'report.md'}")
    emit(as_json, data, lines)
    return data


def _slug(game: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in game).strip("-").lower() or "game"


def _build(game: str, folder: Path, target: float, algorithm: str, max_iterations: int,
           every: int, reference_iterations: int, feature: str, buckets: str, bits: int,
           seed: int, as_json: bool, command: str) -> tuple[dict, list[str]]:
    from efgkit.abstraction.refinement import run_refinement
    from efgkit.cli.plots import write_rows_csv, write_tradeoff_plot
    from efgkit.exact_rounding import EVALUATIONS, round_for_exploitability
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.solvers import BestResponse, CFRPlusSolver
    from efgkit.storage.compact import export_compact
    from efgkit.storage.strategy_file import save_strategy

    tree, build_seconds = build_game(game)
    say = (lambda text: None) if as_json else click.echo
    for line in size_lines(tree, build_seconds):
        say(line)
    identity = InfosetMap.identity(tree)
    full_words = 2 * tree.num_infoset_actions
    evaluator = BestResponse(identity)
    rows: list[dict] = []
    card = _card_map(tree, feature, buckets, seed)
    with progress_bar(total=reference_iterations * (1 + (card is not None)), unit="it",
              desc="CFR+ references", enabled=show_progress()) as bar:
        if card is not None:
            card_map, table_words, card_label = card
            card_rows, _ = _solve_records(CFRPlusSolver(card_map), BestResponse(card_map),
                                          card_label, reference_iterations, table_words, bar,
                                          2 * card_map.num_abstract_actions)
            rows += card_rows
            say(f"{card_label}: {card_map.num_abstract:,} abstract infosets, NashConv "
                f"{card_rows[-1]['nash_conv']:.4e} after {reference_iterations} iterations")
        if reference_iterations:
            full_rows, _ = _solve_records(CFRPlusSolver(tree), evaluator, "CFR+ (full game)",
                                          reference_iterations, 0, bar, full_words)
            rows += full_rows
            say(f"CFR+ on the full game: NashConv {full_rows[-1]['nash_conv']:.4e} after "
                f"{reference_iterations} iterations, {full_words:,} words")

    refiner = _refiner(tree, algorithm, seed)
    label = "FPIRA" if algorithm == "fpira" else "CFR+IRA"
    best = {"nash_conv": float("inf"), "strategy": None, "memory": None, "iteration": 0}
    with progress_bar(total=max_iterations, unit="it", desc=label, enabled=show_progress()) as bar:
        def keep_best(record) -> None:
            bar.update(record.iteration - bar.n)
            bar.set_postfix(nash_conv=f"{record.nash_conv:.4g}", words=record.memory_words)
            if record.nash_conv < best["nash_conv"]:
                best.update(nash_conv=record.nash_conv, strategy=refiner.average_strategy(),
                            memory=refiner.memory(), iteration=record.iteration)

        history = run_refinement(refiner, target, max_iterations=max_iterations, every=every,
                                 callback=keep_best)
    rows += [{"setting": label, "seed": seed, "iteration": r.iteration, "nash_conv": r.nash_conv,
              "memory_words": r.memory_words} for r in history]
    reached = best["nash_conv"] <= target
    strategy, memory = best["strategy"], best["memory"]
    say(f"{label} {'reached' if reached else 'did NOT reach'} NashConv {target} "
        f"(best {best['nash_conv']:.4e} at iteration {best['iteration']}): "
        f"{memory['abstract_infosets']:,} of {tree.num_infosets:,} infosets, "
        f"{memory['memory_words']:,} words")

    csv_path, png_path = folder / "tradeoff.csv", folder / "tradeoff.png"
    write_rows_csv(str(csv_path), rows, "--out")
    write_tradeoff_plot(str(png_path), game, rows, full_words, "--out")
    save_strategy(folder / "strategy.h5", strategy, provenance={
        "algorithm": algorithm, "parameters": {"seed": seed, "conventions": refiner.conventions},
        "iterations": best["iteration"],
        "nash_conv_history": [{"iteration": r.iteration, "nash_conv": r.nash_conv}
                              for r in history]})
    with progress_bar(total=EVALUATIONS, unit="evaluation", desc="rounding", enabled=show_progress()) as bar:
        rounding = round_for_exploitability(strategy, bits, tiers=True,
                                            progress=lambda done: bar.update(done - bar.n))
    export = export_compact(strategy, folder / "strategy.efgs", bits=bits, quantized=rounding.rows)
    after = evaluator.evaluate(export.dequantized).nash_conv
    state_bytes = 4 * memory["memory_words"]
    data = {
        "game": tree.spec, "game_as_given": game, "out": str(folder), "target": target,
        "algorithm": algorithm, "conventions": refiner.conventions, "reached": reached,
        "iterations": best["iteration"],
        "nash_conv": best["nash_conv"], "exploitability": best["nash_conv"] / 2,
        "abstract_infosets": memory["abstract_infosets"], "original_infosets": tree.num_infosets,
        "memory_words": memory["memory_words"], "map_entries": memory["map_entries"],
        "solver_state_bytes": state_bytes, "full_game_words": full_words,
        "export_bits": bits, "export_bytes": export.bytes, "export_rows": export.rows,
        "nash_conv_exported": after, "exploitability_exported": after / 2,
        "export_to_state_ratio": export.bytes / state_bytes,
        "files": sorted(path.name for path in folder.iterdir()) + ["report.md"],
    }
    _write_report(folder / "report.md", game, data, rows, command)
    lines = [
        f"export: {export.bytes:,} bytes ({bits}-bit, {export.rows:,} rows for "
        f"{export.infosets:,} infosets) beside {state_bytes:,} bytes of abstract solver state "
        f"({data['export_to_state_ratio']:.2f}x); NashConv after quantization {after:.4e}",
    ]
    return data, lines


def _refiner(tree, algorithm: str, seed: int):
    from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
    from efgkit.abstraction.fpira import FPIRA
    from efgkit.maps.infoset_map import InfosetMap

    if algorithm == "fpira":
        return FPIRA(tree, initial=InfosetMap.coarsest(tree))
    return CFRPlusIRA(tree, initial=InfosetMap.coarsest(tree), k_bound=10, k_heuristic=90,
                      delay=100, random_state=seed)


def _card_map(tree, feature: str, buckets: str, seed: int):
    """(InfosetMap, words of its bucket tables, label) for a poker game, else None."""
    from efgkit.abstraction.cards.bucketing import poker_rules
    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.cli.cards import parse_buckets
    from efgkit.errors import AbstractionError

    if buckets.strip().lower() == "none":
        return None
    try:
        rules = poker_rules(tree)
    except AbstractionError:
        return None
    counts = parse_buckets(buckets, len(rules.card_structure.public_cards_per_round))
    abstraction = cluster_cards(rules.card_structure, feature, counts, random_state=seed)
    tables = sum(r.num_situations for r in abstraction.situations.rounds)
    label = f"{feature} buckets {','.join(map(str, abstraction.num_buckets))} + CFR+"
    return abstraction.infoset_map(tree, "imperfect"), tables, label


def verdict(data: dict, full_game: dict | None) -> str:
    """Whether the refined abstraction paid off: its memory and NashConv beside full CFR+'s."""
    saved = 1 - data["memory_words"] / data["full_game_words"]
    head = (f"{data['algorithm']} {'reached' if data['reached'] else 'did NOT reach'} NashConv "
            f"{data['target']:g} (best {data['nash_conv']:.3e}) with {data['memory_words']:,} words of "
            f"solver state, {data['memory_words'] / data['full_game_words']:.0%} of full CFR+'s "
            f"{data['full_game_words']:,}")
    reference = "" if full_game is None else (f"; full CFR+ reached {full_game['nash_conv']:.3e} after "
                                              f"{full_game['iteration']:,} iterations")
    if not data["reached"] or saved <= 0:
        why = "it saved no memory." if saved <= 0 else "it missed the target (the best strategy is exported)."
        return head + reference + ". The abstraction did not pay off here: " + why
    return head + reference + f". The abstraction saves {saved:.0%} of the memory at the target NashConv."


def _write_report(path: Path, game: str, data: dict, rows: list[dict], command: str) -> None:
    from efgkit.cli.plots import write_report

    finals: dict[str, dict] = {}
    best: dict[str, dict] = {}
    for row in rows:
        finals[row["setting"]] = row
        if row["setting"] not in best or row["nash_conv"] < best[row["setting"]]["nash_conv"]:
            best[row["setting"]] = row
    table = ["| method | final NashConv | best NashConv (iteration) | solver memory (32-bit words) |",
             "|---|---:|---:|---:|"]
    table += [f"| {name} | {row['nash_conv']:.4e} | {best[name]['nash_conv']:.4e} "
              f"({best[name]['iteration']:,}) | {row['memory_words']:,} |" for name, row in finals.items()]
    rose = [name for name, row in finals.items() if row["nash_conv"] > 1.01 * best[name]["nash_conv"]]
    text = "\n".join([
        f"# {game}: memory against exploitability",
        "",
        f"**Verdict.** {verdict(data, finals.get('CFR+ (full game)'))}",
        "",
        f"Game `{data['game']}`: {data['original_infosets']:,} information sets. NashConv is "
        f"the sum of both players' best-response gains, exact in the full game (NashConv/2 "
        f"is OpenSpiel's exploitability).",
        "",
        "## Final points",
        "",
        *table,
        "",
        *([f"The NashConv of {', '.join(rose)} rose after its best point: CFR+ on an imperfect-recall "
           f"abstraction has no convergence guarantee, and the full-game exploitability of its average "
           f"strategy need not fall monotonically; the best point is the one the plot's front keeps.", ""]
          if rose else []),
        "![memory against exploitability](tradeoff.png)",
        "",
        "Every evaluation is a row of `tradeoff.csv`; the plot draws each method's Pareto "
        "front (the least NashConv reached with that memory or less), memory and NashConv on log axes.",
        "",
        "## The exported strategy",
        "",
        f"{data['algorithm']} {'reached' if data['reached'] else 'did not reach'} the target "
        f"NashConv {data['target']} (best {data['nash_conv']:.4e} after {data['iterations']:,} "
        f"iterations) with {data['abstract_infosets']:,} abstract infosets and "
        f"{data['map_entries']:,} explicit map entries: {data['memory_words']:,} words "
        f"({data['solver_state_bytes']:,} bytes) of solver state.",
        "",
        "| file | bytes | NashConv |",
        "|---|---:|---:|",
        f"| strategy.h5 (exact) | {(path.parent / 'strategy.h5').stat().st_size:,} | "
        f"{data['nash_conv']:.4e} |",
        f"| strategy.efgs ({data['export_bits']}-bit, {data['export_rows']:,} rows) | "
        f"{data['export_bytes']:,} | {data['nash_conv_exported']:.4e} |",
        "",
        f"The .efgs file is {data['export_to_state_ratio']:.2f} times the abstract solver "
        f"state. Play it with `efgkit play {shlex.quote(data['game'])} "
        f"{path.parent / 'strategy.efgs'}`; read it on a device with "
        f"`efgkit/storage/compact_reader.py` or the C99 reader (docs/compact-format.md).",
        "",
    ])
    write_report(path, text, command)

