"""`efgkit export` and `efgkit play`: a stored strategy as a compact file, and playing it."""

from __future__ import annotations

import random
import time
from pathlib import Path

import click

from efgkit.cli.app import build_game, check_writable, emit, json_option, main, show_progress
from efgkit.cli.engine_options import given_flags
from efgkit.cli.game_argument import GameAndFile, game_then_file, recorded_game
from efgkit.errors import FileFormatError, ParameterError
from efgkit.exact_rounding import EVALUATIONS, ROUNDINGS, round_for_exploitability
from efgkit.games.tree import GameTree
from efgkit.io.error_text import one_line
from efgkit.io.progress import progress_bar
from efgkit.maps.infoset_map import InfosetMap
from efgkit.play.playout import CompactPolicy, UniformPolicy, expected_payoff, play_hand, play_match
from efgkit.solvers import BestResponse
from efgkit.specs import BUILT_FROM_FILES, game_of_strategy_file
from efgkit.storage.compact import KEY_MAPS, export_compact
from efgkit.storage.compact_gamedef import write_game_definition
from efgkit.storage.compact_reader import MAGIC, CompactFormatError, CompactStrategy, row_code
from efgkit.storage.policy_tables import json_table, openspiel_policy_table, write_json
from efgkit.storage.strategy_file import load_strategy

FORMATS = ("efgs", "json", "openspiel")
FORMAT_OF_SUFFIX = {".efgs": "efgs", ".json": "json"}


def _output_format(out: str, output_format: str | None) -> str:
    if output_format is not None:
        return output_format
    suffix = Path(out).suffix.lower()
    if suffix not in FORMAT_OF_SUFFIX:
        raise ParameterError(f"--out {out}: cannot tell the format from {suffix or 'no suffix'!r}; "
                             f"pass --format {' | '.join(FORMATS)}")
    return FORMAT_OF_SUFFIX[suffix]


@main.command()
@game_then_file("STRATEGY.h5")
@click.option("--out", "-o", default=None, type=click.Path(dir_okay=False),
              help="Output file: .efgs (compact), .json, or any name with --format (required "
                   "unless STRATEGY is an .efgs file and only --gamedef is asked for).")
@click.option("--gamedef", "gamedef_out", default=None, type=click.Path(dir_okay=False),
              metavar="FILE",
              help="Also write the ACPC game definition the .efgs file carries to FILE (for an "
                   "ACPC dealer; efgs_acpc and efgkit bot read it from the .efgs). With an .efgs "
                   "STRATEGY and no --out, write only that.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
              help="efgs: compact binary with quantized probabilities (docs/compact-format.md); "
                   "json: {infoset key: {action: probability}} for inspection; openspiel: "
                   "OpenSpiel's policy table {information state: [[action id, probability]]}, "
                   "for pyspiel.TabularPolicy  [default: from the --out suffix]")
@click.option("--bits", type=click.Choice(["16", "8", "4"]), default="8", show_default=True,
              help="Bits per action (efgs), on average: with exact rounding the rows reached "
                   "most may get twice as many and the least reached half (not at 16); a row "
                   "of A actions at b bits stores its first A - 1 weights in floor(A b / (A - 1)) "
                   "bits each, summing with the last to 2**that - 2 exactly.")
@click.option("--prune-unreachable", is_flag=True,
              help="Leave out infosets the strategy itself never reaches (efgs).")
@click.option("--with-keys", is_flag=True,
              help="Also store the infoset keys (efgs; larger file, readers confirm each lookup "
                   "and can list the keys).")
@click.option("--check-bits", type=click.IntRange(0, 24), default=8, show_default=True,
              help="Bits of key fingerprint in the index (efgs): a key not in the file is "
                   "reported missing except with probability 2**-check-bits (a class rule "
                   "raises them so that no key of the game misreads).")
@click.option("--rounding", type=click.Choice(ROUNDINGS), default="exact", show_default=True,
              help="efgs: exact = choose each row's rounding by exact NashConv, largest-reach "
                   "rows first, then a descent (docs/compact-format.md); nearest = largest "
                   "remainder.")
@click.option("--key-map", type=click.Choice(KEY_MAPS), default="auto", show_default=True,
              help="efgs: class = the coarsest class rule (player, own-sequence length, "
                   "actions) costs nothing, only explicit map entries are indexed, readers are "
                   "given the class; explicit = every key indexed, readers need only the key; "
                   "auto = class when the file is smaller.")
@click.option("--card-abstraction", "card_abstraction_file", metavar="ABS.h5",
              type=click.Path(dir_okay=False), default=None,
              help="efgs: the card abstraction (efgkit cards --out) the strategy was solved on, "
                   "if it is not beside the strategy under its recorded name (its content digest "
                   "must match), or for a strategy that recorded none; its bucket tables go into "
                   "the file.")
@click.option("--bucket-tables", default="auto", show_default=True,
              metavar="auto|inline|FILE.efgb",
              help="Bucket strategies (efgkit solve --engine sampled): where the bucket tables "
                   "go. auto = in the .efgs up to 8 MiB, else into a bucket-table file beside "
                   "it named by its digest (written once, shared by strategies on the same "
                   "abstraction, checked by sha256 when read); inline; or that file.")
@click.option("--buckets", "bucket_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Bucket strategies: the bucket file, if it is not beside the strategy under its "
                   "recorded name (its digest must match).")
@click.option("--coded", is_flag=True,
              help="Entropy-code the rows in blocks (format 7: smaller for nearly pure strategies, "
                   "read as fast; docs/compact-format.md, Coded rows).")
@click.option("--model-grid", type=click.IntRange(2, 256), default=None, metavar="STEPS",
              help="Bucket strategies: round every row to multiples of 1/STEPS and code the rows "
                   "with the context model and range coder (format 9: the previous bucket's row "
                   "as context; docs/compact-format.md, Modelled rows). Not with --coded.")
@click.option("--snap", type=click.FloatRange(0.0), default=0.0, show_default=True, metavar="LAMBDA",
              help="With --model-grid: set an action of a row to zero when its probability is below "
                   "LAMBDA / the row's reach (its share of the solver's average-strategy "
                   "accumulator, 1 on average), unless it is the row's largest: rows the strategy "
                   "rarely reaches cost fewer bits. Needs the solver state in the strategy file.")
@click.option("--compute-buckets", "compute_budget", type=click.IntRange(0, 2**32 - 1), default=None,
              metavar="EVALS",
              help="Bucket strategies on a hold'em pipeline bucket file: store a street as a small "
                   "description the device computes its bucket from (format 8) where one lookup "
                   "costs at most EVALS hand evaluations and the description is smaller than the "
                   "table (2000: about 50 us in C here, the 52-card river; docs/compact-format.md, "
                   "Computed buckets).")
@click.option("--compress-tables", "decode_budget", type=click.IntRange(1, 2**32 - 1), default=None,
              metavar="HANDS",
              help="Bucket strategies on hold'em canonical tables: per street the smallest of the "
                   "packed table, a compressed table (a lookup decodes at most HANDS hands: blocks "
                   "of min(HANDS, 64)) and, with --compute-buckets, the computed description; the "
                   "file records the rule (format 10; docs/compact-format.md, Compressed bucket "
                   "tables).")
@click.option("--nash-conv", is_flag=True,
              help="Bucket strategies: also the exact NashConv before and after quantization "
                   "(streamed best response in the full game: reduced decks only).")
@json_option
@click.pass_context
def export(ctx: click.Context, game_and_file: GameAndFile, out: str | None, gamedef_out: str | None,
           output_format: str | None, bits: str, prune_unreachable: bool, with_keys: bool,
           check_bits: int, rounding: str, key_map: str, card_abstraction_file: str | None,
           bucket_tables: str, bucket_file: str | None, coded: bool, model_grid: int | None,
           snap: float, compute_budget: int | None, decode_budget: int | None, nash_conv: bool,
           as_json: bool) -> None:
    """Export STRATEGY.h5 as a compact .efgs file (or JSON / an OpenSpiel policy table).

    GAME is the strategy's game, by default the built-in game the file names (a game read
    from a file, efg: or acpc:, must be given).

    An abstract strategy keeps its abstraction: each abstract row is stored once. Reports
    the file's size, bytes per infoset and the NashConv of the strategy before and after
    quantization (the dequantized strategy evaluated exactly in the full game; NashConv/2
    is OpenSpiel's exploitability).

    A bucket strategy (hold'em and other limit poker, efgkit solve --engine sampled) keeps
    its rows per (betting decision, bucket) and the bucket tables; readers answer hole
    cards, board and ACPC betting string (docs/compact-format.md).
    """
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file

    game, strategy_file = game_and_file
    if out is None:
        _export_game_definition(strategy_file, gamedef_out, as_json)
        return
    output_format = _output_format(out, output_format)
    if gamedef_out is not None and output_format != "efgs":
        raise ParameterError("--gamedef goes with --format efgs (the .efgs file carries the definition)")
    check_writable(gamedef_out, "--gamedef")
    bucket_only = given_flags(ctx, "bucket_tables", "nash_conv", "compute_budget", "decode_budget",
                              "bucket_file", "model_grid", "snap")
    if is_bucket_strategy_file(strategy_file):
        tree_only = given_flags(ctx, "prune_unreachable", "with_keys", "rounding", "key_map",
                                "card_abstraction_file")
        if output_format != "efgs" or tree_only:
            raise ParameterError(f"a bucket strategy exports to --format efgs with --bits, "
                                 f"--check-bits, --bucket-tables, --buckets and --nash-conv "
                                 f"(rows are rounded by largest remainder), not "
                                 f"{tree_only[0] if tree_only else '--format ' + output_format}")
        if snap and model_grid is None:
            raise ParameterError("--snap goes with --model-grid")
        _export_bucket_strategy(strategy_file, out, int(bits), check_bits, bucket_tables,
                                bucket_file, nash_conv, game, as_json, coded, compute_budget,
                                (model_grid, snap), decode_budget)
        _also_game_definition(out, gamedef_out, as_json)
        return
    if bucket_only:
        raise ParameterError(f"{bucket_only[0]} applies to bucket strategies (efgkit solve "
                             f"--engine sampled) only")
    efgs_only = given_flags(ctx, "bits", "prune_unreachable", "with_keys", "check_bits", "rounding",
                            "key_map", "card_abstraction_file", "coded")
    if output_format != "efgs" and efgs_only:
        raise ParameterError(f"{efgs_only[0]} applies to --format efgs only")
    check_writable(out, "--out")
    started = time.perf_counter()
    tree = build_game(game)[0] if game is not None else game_of_strategy_file(strategy_file)
    strategy, provenance = load_strategy(strategy_file, tree)
    evaluator = BestResponse(strategy.infoset_map)
    before = evaluator.evaluate(strategy)
    after, pruned, max_error, quantization, rows, tier_rows = before, 0, 0.0, None, None, None
    explicit_entries = classes = used_key_map = None
    if output_format == "efgs":
        cards = _card_abstraction(strategy_file, provenance, tree, card_abstraction_file,
                                  key_map)
        card_abstraction, quantized = cards and cards.card_abstraction, None
        if rounding == "exact":
            with progress_bar(total=EVALUATIONS, unit="evaluation", desc="rounding",
                              enabled=show_progress()) as bar:
                quantized = round_for_exploitability(  # a card table's blocks keep one tier
                    strategy, int(bits), tiers=card_abstraction is None, evaluator=evaluator,
                    progress=lambda done: bar.update(done - bar.n)).rows
        result = export_compact(strategy, out, bits=int(bits), quantized=quantized,
                                prune_unreachable=prune_unreachable, with_keys=with_keys,
                                check_bits=check_bits, key_map=key_map,
                                card_abstraction=card_abstraction,
                                recall=cards.recall if cards else "imperfect", coded=coded)
        after = BestResponse(InfosetMap.identity(tree)).evaluate(result.dequantized)
        size, written, pruned, rows = result.bytes, result.infosets, result.infosets_pruned, result.rows
        max_error, quantization, tier_rows = result.max_abs_error, int(bits), result.tier_rows
        explicit_entries, classes, used_key_map = result.explicit_entries, result.classes, result.key_map
    elif output_format == "json":
        size, written = write_json(out, json_table(strategy)), tree.num_infosets
    else:
        size, written = write_json(out, openspiel_policy_table(strategy)), tree.num_infosets
    increase = (after.nash_conv - before.nash_conv) / before.nash_conv if before.nash_conv > 0 else (
        0.0 if after.nash_conv == before.nash_conv else float("inf"))
    data = {
        "out": out, "format": output_format, "game": tree.spec, "bits": quantization,
        "bytes": size, "infosets": written, "infosets_pruned": pruned, "rows": rows,
        "explicit_entries": explicit_entries, "classes": classes, "key_map": used_key_map,
        "tier_rows": tier_rows,
        "rounding": rounding if quantization else None,
        "bytes_per_infoset": size / max(written, 1),
        "nash_conv_before": before.nash_conv, "nash_conv_after": after.nash_conv,
        "nash_conv_relative_increase": increase,
        "exploitability_before": before.exploitability, "exploitability_after": after.exploitability,
        "max_abs_error": max_error, "seconds": time.perf_counter() - started,
    }
    card_tables = used_key_map == "cards"
    lines = [
        f"wrote {out} ({output_format}{f', {bits}-bit' if quantization else ''}): {written:,} "
        f"infosets{f' ({pruned:,} unreachable ones pruned)' if pruned else ''}"
        f"{f' on {rows:,} abstract rows' if rows is not None else ''}"
        f"{f' ({classes:,} class entries, {explicit_entries:,} explicit)' if classes else ''}"
        f"{f' (card bucket tables, {explicit_entries:,} betting histories indexed)' if card_tables else ''}, "
        f"{size:,} bytes "
        f"({data['bytes_per_infoset']:.2f} bytes per infoset)",
        f"NashConv {before.nash_conv:.6e} before, {after.nash_conv:.6e} after "
        f"({100 * increase:+.3f}%; NashConv/2, OpenSpiel's exploitability: "
        f"{before.exploitability:.6e} -> {after.exploitability:.6e})",
    ]
    if quantization:
        wide, normal, narrow = tier_rows
        coarsest = quantization // 2 if narrow else quantization
        widest = int(tree.infoset_num_actions.max())
        lines.append(f"rows at {2 * quantization}/{quantization}/{quantization // 2} bits per "
                     f"action (the rows reached most get the most): {wide:,}/{normal:,}/{narrow:,}; "
                     f"largest change of a probability: {max_error:.3e} (less than one step of "
                     f"its row, at most 1/{row_code(coarsest, widest)[1]:,})")
    emit(as_json, data, lines)
    _also_game_definition(out, gamedef_out, as_json)


def _also_game_definition(out: str, gamedef_out: str | None, as_json: bool) -> None:
    """After an export with --gamedef: the definition the written .efgs carries, to FILE."""
    if gamedef_out is None:
        return
    write_game_definition(out, gamedef_out)
    if not as_json:
        click.echo(f"wrote {gamedef_out}: the ACPC game definition {out} carries")


def _export_game_definition(strategy_file: str, gamedef_out: str | None, as_json: bool) -> None:
    """``efgkit export FILE.efgs --gamedef OUT``: the ACPC game definition the file carries."""
    if gamedef_out is None:
        raise ParameterError("--out is required (or --gamedef FILE with an .efgs STRATEGY)")
    with open(strategy_file, "rb") as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise ParameterError(f"{strategy_file}: --gamedef without --out reads an .efgs file; "
                                 f"export this strategy with --out FILE.efgs --gamedef {gamedef_out}")
    check_writable(gamedef_out, "--gamedef")
    text = write_game_definition(strategy_file, gamedef_out)
    emit(as_json, {"gamedef": gamedef_out, "strategy": strategy_file, "text": text},
         [f"wrote {gamedef_out}: the ACPC game definition of {strategy_file}"])


def _export_bucket_strategy(strategy_file: str, out: str, bits: int, check_bits: int,
                            bucket_tables: str, bucket_file: str | None, nash_conv: bool,
                            game: str | None, as_json: bool, coded: bool = False,
                            compute_budget: int | None = None,
                            model: tuple[int | None, float] = (None, 0.0),
                            decode_budget: int | None = None) -> None:
    """``efgkit export`` of a bucket-strategy file (compact_holdem.export_bucket_strategy);
    ``model``: (``--model-grid``, ``--snap``)."""
    import h5py

    from efgkit.cli.app import poker_game
    from efgkit.storage.bucket_strategy import load_bucket_strategy
    from efgkit.storage.compact_holdem import EXPORT_STAGES, TABLE_PLACES, export_bucket_strategy
    from efgkit.storage.snapped_rows import row_importance

    if bucket_tables not in TABLE_PLACES and not bucket_tables.endswith(".efgb"):
        raise ParameterError(f"--bucket-tables {bucket_tables}: auto, inline or a FILE.efgb")
    check_writable(out, "--out")
    started = time.perf_counter()
    if game is None:
        with h5py.File(strategy_file, "r") as handle:
            game = str(handle.attrs.get("game", ""))
        if game.startswith(BUILT_FROM_FILES):  # the file is untrusted: it does not pick a file to read
            raise ParameterError(f"{strategy_file}: the strategy is for {game!r}, a game read from a "
                                 f"file; name it yourself as GAME before the file")
    layout, strategy, provenance, state = load_bucket_strategy(strategy_file, poker_game(game),
                                                               bucket_file)
    model_grid, snap = model
    importance = None
    if snap:
        if "average_accumulator" not in state:
            raise ParameterError(f"{strategy_file}: --snap needs the solver's average-strategy "
                                 f"accumulator, which the file does not hold")
        importance = row_importance(state["average_accumulator"], layout.row_offsets())
    with progress_bar(total=len(EXPORT_STAGES), unit="step", desc="exporting",
                      enabled=show_progress()) as bar:
        result = export_bucket_strategy(layout, strategy, out, bits=bits, check_bits=check_bits,
                                        bucket_tables=bucket_tables, coded=coded,
                                        compute_budget=compute_budget, model_grid=model_grid,
                                        snap=snap, row_importance=importance,
                                        decode_budget=decode_budget,
                                        progress=lambda stage: bar.set_postfix_str(stage)
                                        or bar.update(1))
    data = {"out": out, "format": "efgs", "game": layout.betting.game.spec, "bits": bits,
            "bytes": result.bytes, "rows": result.rows, "key_map": "cards",
            "betting_histories": result.explicit_entries, "index_bytes": result.index_bytes,
            "card_table_bytes": result.card_table_bytes,
            "abstraction": layout.abstraction.description,
            "bucket_tables": result.bucket_tables_path,
            "bucket_tables_bytes": result.bucket_tables_bytes,
            "bucket_tables_written": result.bucket_tables_written,
            "rounding": "nearest", "max_abs_error": result.max_abs_error, "coded": coded,
            "model_grid": model_grid, "snap": snap,
            "computed_buckets": result.computed,
            "bucket_rule": None if decode_budget is None else {"evaluations": compute_budget or 0,
                                                               "decoded_hands": decode_budget}}
    setting = f"{bits}-bit" if model_grid is None else f"rows on a grid of 1/{model_grid}, modelled"
    lines = [f"wrote {out} (efgs, {setting}): {result.rows:,} rows of "
             f"{layout.abstraction.description}, {result.explicit_entries:,} betting histories "
             f"indexed, {result.bytes:,} bytes (card table {result.card_table_bytes:,})"]
    if result.bucket_tables_path:
        lines.append(f"bucket tables in {result.bucket_tables_path} ({result.bucket_tables_bytes:,} "
                     f"bytes, {'written' if result.bucket_tables_written else 'already there'}; "
                     f"the .efgs checks its sha256)")
    for street in result.computed if decode_budget is not None else ():
        described = (f", description {street['description_bytes']:,} bytes ({street['exceptions']:,} "
                     f"exceptions, {street['evaluations']:,} hand evaluations per lookup)"
                     if street["description_bytes"] is not None else "")
        lines.append(f"{street['street']} buckets: {street['method']} (table {street['table_bytes']:,} "
                     f"bytes, compressed {street['compressed_bytes']:,}{described})")
    for street in result.computed if decode_budget is None else ():
        lines.append(f"{street['street']} buckets {'computed' if street['computed'] else 'from its table'}: "
                     f"description {street['description_bytes']:,} bytes ({street['exceptions']:,} "
                     f"exceptions), table {street['table_bytes']:,} bytes, {street['evaluations']:,} "
                     f"hand evaluations per lookup")
    step = int(result.totals.min()) if result.totals.size else 1
    lines.append(f"largest change of a probability: {result.max_abs_error:.3e} " + (
        f"(snapped rows: their small actions set to zero, --snap {snap:g})" if snap else
        f"(less than one step of its row, at most 1/{step:,})"))
    if nash_conv:
        from efgkit.poker.streamed.full_game import StreamedEvaluator

        evaluator = StreamedEvaluator(layout)
        before = evaluator.evaluate(strategy, game_value=False)
        after = evaluator.evaluate(result.dequantized(), game_value=False)
        data.update(nash_conv_before=before.nash_conv, nash_conv_after=after.nash_conv)
        lines.append(f"NashConv {before.nash_conv:.6e} before, {after.nash_conv:.6e} after")
    data["seconds"] = time.perf_counter() - started
    data["iterations"] = provenance.get("iterations")
    emit(as_json, data, lines)


def _card_abstraction(strategy_file: str, provenance: dict, tree: GameTree, path: str | None,
                      key_map: str):
    """The card abstraction (a StoredAbstraction) whose bucket tables the export may store:
    the one the strategy recorded (at ``path`` if given, with the recorded digest), else
    the file at ``path``; None if neither, or if ``key_map`` keeps keys in the index."""
    from efgkit.storage.abstraction_file import (
        load_card_abstraction,
        load_referenced_card_abstraction,
    )

    reference = provenance.get("parameters", {}).get("card_abstraction")
    if key_map in ("class", "explicit"):
        if path is not None:
            raise ParameterError(f"--card-abstraction goes with --key-map auto or cards, not "
                                 f"{key_map}")
        return None
    if reference is not None:
        return load_referenced_card_abstraction(reference, tree, strategy_file, path)
    return load_card_abstraction(path, tree) if path is not None else None


# --------------------------------------------------------------------------- play
def _open_compact(path: str, tree: GameTree) -> CompactPolicy:
    try:
        strategy = CompactStrategy(path)
        strategy.verify()  # the payload checksum: a damaged file never plays
    except (CompactFormatError, OSError) as exc:
        raise FileFormatError(one_line(exc)) from exc
    if strategy.spec != tree.spec or strategy.fingerprint != tree.fingerprint:
        strategy.close()
        raise FileFormatError(f"{path}: strategy is for game {strategy.spec!r}"
                              f"{' (another version of its rules)' * (strategy.spec == tree.spec)}, "
                              f"not {tree.spec!r}")
    return CompactPolicy(strategy, path, tree)


class _Quit(Exception):
    """The person at the keyboard ended the session."""


class _Person:
    """Asks at the terminal; shows only what the player knows (the infoset key)."""

    name = "you"

    def __init__(self, err: bool) -> None:
        self.err = err

    def action(self, key: str, labels: list[str], rng: random.Random) -> int:
        click.echo(f"  you know: {key}", err=self.err)
        click.echo("  actions: " + "  ".join(f"[{i}] {label}" for i, label in enumerate(labels)),
                   err=self.err)
        while True:
            try:
                answer = click.prompt("  your action", err=self.err).strip()
            except click.Abort:
                raise _Quit from None
            if answer.lower() in ("q", "quit"):
                raise _Quit
            if answer.isdigit() and int(answer) < len(labels):
                return int(answer)
            if answer in labels:
                return labels.index(answer)
            click.echo(f"  choose 0-{len(labels) - 1} or an action's name (q quits)", err=self.err)


def _play_interactively(tree: GameTree, bot: CompactPolicy, hands: int | None, seat: int | None,
                        rng: random.Random, as_json: bool) -> dict:
    person, total, played = _Person(err=as_json), 0.0, 0
    while hands is None or played < hands:
        yours = played % 2 if seat is None else seat
        click.echo(f"hand {played + 1}: you are player {yours}", err=as_json)
        try:
            utility, moves = play_hand(tree, (person, bot) if yours == 0 else (bot, person), rng)
        except _Quit:
            break
        payoff = utility if yours == 0 else -utility
        total, played = total + payoff, played + 1
        opponent_views = [move.key for move in moves if move.player != yours]
        click.echo("  hand over: " + ", ".join(f"player {m.player} {m.label}" for m in moves),
                   err=as_json)
        if opponent_views:
            click.echo(f"  the strategy knew: {opponent_views[-1]}", err=as_json)
        click.echo(f"  you {'won' if payoff > 0 else 'lost' if payoff < 0 else 'tied'} "
                   f"{abs(payoff):g}; total {total:+g} over {played} hand{'s' * (played != 1)}",
                   err=as_json)
    return {"mode": "interactive", "hands": played, "total_payoff": total,
            "mean_payoff": total / played if played else None}


def _plays_on_buckets(game: str, strategy_file: str) -> bool:
    """Whether ``strategy_file`` is a strategy on a card abstraction of ``game``: a bucket
    strategy (.h5) or its compact export (.efgs), played without building a GameTree."""
    from efgkit.games.poker import LimitPoker
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file
    from efgkit.storage.compact_holdem import is_bucket_export

    if is_bucket_strategy_file(strategy_file):
        return True
    if Path(strategy_file).suffix.lower() != ".efgs" or game.startswith(("efg:", "openspiel:")):
        return False
    rules = make_game(game)
    if isinstance(rules, LimitPoker) and is_bucket_export(strategy_file, rules):
        return True
    recorded = recorded_game(strategy_file)
    if recorded != game and not recorded.startswith(("efg:", "openspiel:")):
        recorded_rules = make_game(recorded)
        if isinstance(recorded_rules, LimitPoker) and is_bucket_export(strategy_file, recorded_rules):
            raise FileFormatError(f"{strategy_file}: the strategy is for {recorded!r}, not {game!r}")
    return False


@main.command()
@game_then_file("STRATEGY.efgs|STRATEGY.h5")
@click.option("--against", default=None, metavar="random|call|raise|fold|OTHER.efgs|OTHER.h5",
              help="Play N hands against uniform random or another compact strategy and report "
                   "the mean payoff; without it, you play against the strategy at the terminal. A bucket "
                   "strategy (hold'em and other limit poker: STRATEGY.h5 of efgkit solve --engine sampled "
                   "or its .efgs export) plays a duplicate match in mbb/g against always "
                   "call|raise|fold, random or another bucket strategy.")
@click.option("--hands", "-n", type=click.IntRange(min=1), default=None,
              help="Hands to play  [default: 10000 with --against, until you quit otherwise]; in a "
                   "bucket strategy's match the boards dealt, each played in both seats with every "
                   "pair of hands [default: 1000]")
@click.option("--seat", type=click.IntRange(0, 1), default=None,
              help="Your seat when playing interactively  [default: alternate]")
@click.option("--seed", type=int, default=None, help="Random seed (cards and mixed actions).")
@click.option("--resolve", "resolve_gadget", type=click.Choice(["resolve", "maxmargin", "unsafe"]),
              default=None,
              help="A bucket strategy re-solves, at each decision after a board deal, the subgame after "
                   "that deal with this gadget (public-tree engine; resolve and maxmargin are safe) and "
                   "plays --hands deals in both seats --against the opponent; reports mbb/g and the time "
                   "per decision.")
@click.option("--resolve-iterations", type=click.IntRange(min=1), default=200, show_default=True,
              help="CFR+ iterations of each decision-time re-solve.")
@json_option
def play(game_and_file: GameAndFile, against: str | None, hands: int | None, seat: int | None,
         seed: int | None, resolve_gadget: str | None, resolve_iterations: int, as_json: bool) -> None:
    """Play STRATEGY.efgs: against you at the terminal, or N hands --against random|OTHER.efgs.

    Seats alternate. A match reports the strategy's mean payoff per hand with its 95%
    confidence interval and the exact expected payoff the mean estimates. GAME is the game
    the strategy was made for, by default the one the file records.

    A strategy on a card abstraction (hold'em at any deck size: STRATEGY.h5 of efgkit solve
    --engine sampled, or its .efgs export) plays without building the game tree: at the
    terminal it shows your cards, the board and the betting, you answer with an action's
    number, name or first letter (q quits; moves are read from standard input, so they can
    be piped), and the running result is in mbb/hand; against a baseline or another file it
    plays a duplicate match in mbb/g.
    """
    game, strategy_file = game_and_file
    game = game or recorded_game(strategy_file)

    if _plays_on_buckets(game, strategy_file):
        from efgkit.cli.bucket_play import play_bucket_strategies

        play_bucket_strategies(game, strategy_file, against, hands, seat, seed, as_json, resolve_gadget,
                               resolve_iterations)
        return
    if resolve_gadget is not None:
        raise ParameterError("--resolve re-solves bucket strategies of limit poker (STRATEGY.h5 of efgkit "
                             "solve --engine sampled) on the public-tree engine")
    if seat is not None and against is not None:
        raise ParameterError("--seat is for interactive play; a match alternates seats")
    tree, _ = build_game(game)
    bot = _open_compact(strategy_file, tree)
    rng = random.Random(seed)
    if against is None:
        data = {"game": tree.spec, "strategy": strategy_file, **_play_interactively(
            tree, bot, hands, seat, rng, as_json)}
        lines = [f"{data['hands']} hands, total {data['total_payoff']:+g} for you"]
        emit(as_json, data, lines)
        return
    opponent = UniformPolicy() if against == "random" else _open_compact(against, tree)
    hands = hands or 10000
    with progress_bar(total=hands, unit="hand", desc="playing", enabled=show_progress()) as bar:
        result = play_match(tree, bot, opponent, hands, seed=seed,
                            progress=lambda done: bar.update(1))
    exact = expected_payoff(tree, bot.behavior(tree), opponent.behavior(tree))
    low, high = result.confidence_interval
    data = {"game": tree.spec, "strategy": strategy_file, "opponent": against, "hands": hands,
            "mean_payoff": result.mean, "standard_error": result.standard_error,
            "ci95_low": low, "ci95_high": high, "expected_payoff": exact, "seed": seed}
    lines = [
        f"{strategy_file} against {against}, {hands:,} hands (seats alternating): mean payoff "
        f"{result.mean:+.4f} per hand, 95% CI [{low:+.4f}, {high:+.4f}]",
        f"exact expected payoff: {exact:+.4f} per hand",
    ]
    emit(as_json, data, lines)
