"""Export a bucket strategy (hold'em and the rest of the limit-poker family, solved by the
streamed engine) to the compact .efgs format, for a reader that answers "hole cards,
board, betting sequence -> action probabilities" (the bucket row source of
``compact_writer``).

A bucket strategy has one row per (betting decision, bucket) (``poker.bucket_layout``).
The file stores those rows, quantized (largest remainder, ``compact_writer.quantize``), in
blocks of one betting decision each (``compact_writer.card_file``), and a card table that
takes a key's cards to its bucket (docs/compact-format.md):

* the key index holds each decision's betting history, the ACPC action string
  (``cr/cc/r``; ``-`` before any action), and gives its block's first row;
* per round the bucket is: 0 (``CardIndependent``), the deal itself (``LosslessCards``),
  the canonical (suit-isomorphic) index of (hole cards, board) (``IsomorphicCards``
  canonical: Waugh's indexer, which both readers carry), a packed table over that
  index (a hold'em pipeline bucket file), ``ceil(log2 buckets)`` bits per entry, or, with
  ``compute_budget``, a description the reader computes the bucket from (format 8,
  ``computed_buckets``), or, with ``decode_budget``, whichever of the packed table, a
  compressed table (``compressed_tables``) and the description the rule
  (``compressed_tables.choose_method``) chooses (format 10, the rule recorded).

Small tables go into the file. Large ones (52-card turn and river tables: 1.4e7 and
1.2e8 canonical hands) are written once into a separate bucket-table file (.efgb:
packed, memory-mappable), which the compact file names and fingerprints by sha256, and
which both readers check when they open it; strategies on one abstraction share it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.poker import Betting, LimitPoker
from efgkit.io.atomic import write_atomically
from efgkit.io.budget import check_memory
from efgkit.io.error_text import one_line
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards, LosslessCards
from efgkit.storage.bucket_strategy import betting_digest
from efgkit.storage.compact_gamedef import size_with_game_definition, with_game_definition
from efgkit.storage.compact_reader import (
    ACTION_GROUP,
    BY_CANONICAL,
    CANONICAL,
    CARD_HEAD,
    CARD_ROUND,
    COMPRESSED,
    COMPUTED,
    CONSTANT,
    FLAG_CODED,
    FLAG_COMPUTED,
    FLAG_MODELLED,
    FLAG_RULE,
    HEADER,
    LOSSLESS,
    SUITS,
    TABLES_HEAD,
    TABLES_MAGIC,
    TABLES_ROUND,
    TABLES_VERSION,
    VALUES_HEAD,
    CanonicalIndex,
    CompactFormatError,
    CompactStrategy,
)
from efgkit.storage.compact_writer import (
    CardBlocks,
    CardSection,
    CompactFile,
    RoundBuckets,
    action_totals,
    aligned,
    block_slot_bits,
    card_file,
    card_names,
    check_check_bits,
    index_bytes,
    largest_remainder,
    pack_bits,
    quantize,
)
from efgkit.storage.row_model import check_total
from efgkit.storage.snapped_rows import snap_rows

INLINE_TABLE_BYTES = 8 << 20
"""Bucket tables up to this many bytes in all go into the compact file (``auto``)."""
TABLE_PLACES = ("auto", "inline")
EXPORT_STAGES = ("quantized", "bucket tables", "key index", "written")


@dataclass(eq=False, kw_only=True)
class BucketExport(CompactFile):
    """What ``export_bucket_strategy`` wrote: the file (its explicit entries are the betting
    tree's decisions), its bucket tables and the rows it plays."""

    bucket_tables_path: str | None
    """The bucket-table file the compact file needs, or None (every table inline)."""
    bucket_tables_bytes: int
    bucket_tables_written: bool
    """False when an identical bucket-table file was already there (written once)."""
    computed: list[dict]
    """Per round whose bucket could be computed on the device or its table compressed: the
    rule's inputs (street, description, compressed and table bytes, hand evaluations per
    lookup, exceptions) and its choice."""
    weights: np.ndarray
    """int64 quantized weights in the layout's order (``BucketLayout`` rows)."""
    totals: np.ndarray
    """int64 per row action: what its row's weights sum to (the row code)."""
    max_abs_error: float

    def dequantized(self) -> np.ndarray:
        """What the file plays, as a strategy on the layout (float64 per row action)."""
        return self.weights / self.totals


def round_buckets(game: LimitPoker, abstraction) -> list[RoundBuckets]:
    """How a card table finds each round's bucket of ``abstraction``."""
    dealt = game.card_structure.public_cards_per_round
    rounds = []
    for r in range(game.num_rounds):
        buckets = abstraction.num_buckets(r)
        if buckets >= 1 << 32:
            raise ParameterError(f"{abstraction.description}: {buckets:,} buckets in round {r}; "
                                 f"a compact file holds at most 2**32 - 1")
        if isinstance(abstraction, CardIndependent):
            rounds.append(RoundBuckets(dealt[r], CONSTANT, 1))
        elif isinstance(abstraction, LosslessCards):
            rounds.append(RoundBuckets(dealt[r], LOSSLESS, buckets))
        elif isinstance(abstraction, IsomorphicCards) and abstraction.reference.get("kind") == "canonical":
            rounds.append(RoundBuckets(dealt[r], CANONICAL, buckets))
        elif isinstance(abstraction, IsomorphicCards):
            rounds.append(RoundBuckets(dealt[r], BY_CANONICAL, buckets,
                                       np.asarray(abstraction.tables[r], np.uint64)))
        else:
            raise ParameterError(f"cannot export buckets of {abstraction.description}")
    return rounds


def bucket_table_file(rounds: list[RoundBuckets], num_ranks: int, hole_cards: int) -> bytes:
    """The bucket-table file (.efgb) of the rounds with ``external`` tables: a 16-byte head
    (magic, version, rounds, ranks), a 24-byte record per round of the strategy (hole
    cards, board cards, bits, buckets, entries, offset; entries 0 for a round whose
    table is not here), then the packed tables at 8-byte aligned offsets."""
    records, tables = [], []
    position = TABLES_HEAD.size + TABLES_ROUND.size * len(rounds)
    board = 0
    for r in rounds:
        board += r.dealt
        if not r.external:
            records.append(TABLES_ROUND.pack(hole_cards, board, 0, 0, 0, 0))
            continue
        position = aligned(position)
        packed = pack_bits(r.table, r.bits)
        records.append(TABLES_ROUND.pack(hole_cards, board, r.bits, r.buckets, r.table.shape[0], position))
        tables.append((position, packed))
        position += len(packed)
    data = bytearray(position)
    head = TABLES_HEAD.pack(TABLES_MAGIC, TABLES_VERSION, len(rounds), num_ranks, 0) + b"".join(records)
    data[:len(head)] = head
    for start, packed in tables:
        data[start:start + len(packed)] = packed
    return bytes(data)


def _write_once(path: Path, data: bytes) -> bool:
    """Write ``data`` at ``path`` unless the file already holds exactly it (False); refuse
    to replace another file (strategies exported earlier may reference it). Only a regular
    file of the same size is read (``atomic_output_path`` refuses anything else at ``path``)."""
    if path.is_file():
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
        raise ParameterError(f"{path} exists and holds other bucket tables (compact files may "
                             f"reference it); name another bucket-table file")
    write_atomically(path, data)
    return True


def canonical_table_entries(game: LimitPoker, round_index: int) -> int:
    """Canonical (hole cards, board) hands of a round: the entries of its bucket table."""
    structure = game.card_structure
    board = sum(structure.public_cards_per_round[:round_index + 1])
    hole = structure.private_cards_per_player
    return CanonicalIndex((hole, board) if board else (hole,), structure.num_ranks).size


def bucket_table_file_bytes(game: LimitPoker, buckets: tuple[int, ...]) -> int:
    """Bytes of the bucket-table file of a pipeline abstraction with ``buckets[r]`` buckets
    in round r, every round's table in the file (computed, nothing is built)."""
    position = TABLES_HEAD.size + TABLES_ROUND.size * game.num_rounds
    for r, count in enumerate(buckets[:game.num_rounds]):
        position = aligned(position) + (canonical_table_entries(game, r)
                                        * int(count - 1).bit_length() + 7) // 8
    return position


def planned_bytes(layout: BucketLayout, *, bits: int = 8, check_bits: int = 8,
                  tables_name: str | None = "buckets-0123456789abcdef.efgb") -> int:
    """Bytes of the compact file ``export_bucket_strategy`` writes for ``layout`` with every
    bucket table in a bucket-table file named ``tables_name`` (None: no table file), from
    the layout alone: what a 52-card abstraction's file will take, before its tables are
    built (docs/compact-format.md, byte layout)."""
    game = layout.betting.game
    rows = int(layout.buckets.sum())
    _, slot_bits = block_slot_bits(rows, layout.width.max(), check_bits)
    slots = index_bytes(layout.width.shape[0], slot_bits)
    values = VALUES_HEAD.size + (int(layout.num_actions) * bits + 7) // 8
    structure = game.card_structure
    card_table = (CARD_HEAD.size + CARD_ROUND.size * game.num_rounds
                  + ACTION_GROUP.size * np.unique(layout.width).shape[0]
                  + len(card_names(structure)[0]) * structure.num_cards
                  + (34 + len(tables_name.encode()) if tables_name else 0))
    return size_with_game_definition(
        aligned(aligned(aligned(HEADER.size + len(game.spec.encode())) + slots) + values) + card_table, game)


def export_bucket_strategy(layout: BucketLayout, strategy: np.ndarray, path: str | os.PathLike, *,
                           bits: int = 8, check_bits: int = 8, bucket_tables: str = "auto",
                           coded: bool = False, compute_budget: int | None = None,
                           model_grid: int | None = None, snap: float = 0.0,
                           row_importance: np.ndarray | None = None,
                           decode_budget: int | None = None, progress=None) -> BucketExport:
    """Write ``strategy`` (float64 per row action of ``layout``) as a compact file.

    ``bucket_tables``: ``auto`` (tables of at most ``INLINE_TABLE_BYTES`` in all go into
    the file, else into a bucket-table file beside it named by its digest), ``inline``,
    or the path of the bucket-table file (.efgb), written unless it already holds the
    same tables. ``coded``: the rows entropy-coded in blocks (format 7, ``row_coding``).
    ``compute_budget`` (hand evaluations per lookup; a pipeline bucket file's abstraction
    only): each street a device can compute is computed when the rule of
    ``computed_buckets.choose`` says so (format 8), the others keep their tables.
    ``model_grid`` (2 to 256): every row rounded to multiples of ``1 / model_grid``
    (largest remainder) and coded by the context model (format 9, ``row_model``; not with
    ``coded``), after ``snap_rows`` with ``snap`` and ``row_importance`` (float64 per row,
    ``snapped_rows.row_importance``; needed when ``snap > 0``).
    ``decode_budget`` (hands a compressed-table lookup may decode; a canonical hold'em
    table): per round the rule of ``compressed_tables.choose_method`` chooses among the
    packed table, a compressed table and (with ``compute_budget``) the description, and the
    file records it (format 10).
    ``progress(stage)`` after each of the ``EXPORT_STAGES``.
    """
    progress = progress or (lambda stage: None)
    game, betting = layout.betting.game, layout.betting
    check_check_bits(check_bits)
    strategy = layout.checked(strategy)
    row_offsets = np.concatenate([[0], np.cumsum(np.repeat(layout.width, layout.buckets))])
    if model_grid is None:
        weights = quantize(strategy, row_offsets, bits)
        total = action_totals(row_offsets, bits)
    else:
        check_total(model_grid)
        if coded:
            raise ParameterError("rows are either coded (format 7) or modelled (format 9), not both")
        if snap and row_importance is None:
            raise ParameterError("snapping rows needs each row's importance (the solver's average-"
                                 "strategy accumulator)")
        snapped = snap_rows(strategy, row_offsets, row_importance, snap) if snap else strategy
        total = np.full(row_offsets.shape[0] - 1, model_grid, np.int64)
        weights = largest_remainder(snapped, row_offsets, total)
        total = np.repeat(total, np.diff(row_offsets))
    progress(EXPORT_STAGES[0])
    rounds = round_buckets(game, layout.abstraction)
    if decode_budget is not None:
        computed = _ruled_rounds(rounds, layout.abstraction, game, compute_budget, decode_budget)
    else:
        computed = ([] if compute_budget is None
                    else _computed_rounds(rounds, layout.abstraction, compute_budget))
    tables_path, tables_data, written = _place_tables(rounds, game, path, bucket_tables)
    progress(EXPORT_STAGES[1])
    keys = [game.betting_text(Betting(betting.histories[node], (0, 0), 0))
            for node in betting.decision_nodes.tolist()]
    structure = game.card_structure
    reference = (hashlib.sha256(tables_data).digest(), tables_path.name) if tables_path else None
    rule = None if decode_budget is None else (compute_budget or 0, decode_budget)
    cards = CardSection(card_names(structure), structure.private_cards_per_player, rounds,
                        tables_reference=reference, rule=rule)
    blocks = CardBlocks(keys, layout.buckets, layout.width, np.arange(row_offsets.shape[0] - 1))
    flags = (FLAG_CODED * coded | FLAG_COMPUTED * any(r.method == COMPUTED for r in rounds)
             | FLAG_MODELLED * (model_grid is not None) | FLAG_RULE * (rule is not None))
    head = dict(spec=game.spec, fingerprint=betting_digest(betting), bits=bits, flags=flags, num_keys=0)
    compact = card_file(head, weights, row_offsets, blocks, cards, check_bits, model_total=model_grid)
    compact.data = with_game_definition(compact.data, game)
    progress(EXPORT_STAGES[2])
    compact.write(path)
    progress(EXPORT_STAGES[3])
    return BucketExport(
        **vars(compact), bucket_tables_path=str(tables_path) if tables_path else None,
        bucket_tables_bytes=len(tables_data) if tables_path else 0, bucket_tables_written=written,
        computed=computed,
        weights=weights, totals=total,
        max_abs_error=float(np.max(np.abs(weights / total - strategy), initial=0.0)))


def _computed_rounds(rounds: list[RoundBuckets], abstraction, budget: int, keep: bool = False) -> list[dict]:
    """Describe every round of a pipeline bucket file that a device can compute and, where
    the rule chooses it, replace its table by the description (in place); returns the
    rule's inputs and choice per described round (``keep``: with the description's bytes,
    ``data``, and no round replaced)."""
    from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
    from efgkit.abstraction.cards.holdem.deck import ROUND_NAMES
    from efgkit.storage.computed_buckets import check_budget, choose, describe_street

    check_budget(budget)
    if abstraction.reference.get("kind") != "bucket-file":
        raise ParameterError("computed buckets need a hold'em pipeline bucket file's abstraction "
                             "(its centroids and features)")
    report = []
    with BucketLookup(abstraction.reference["path"]) as lookup:
        for r, round_buckets_ in enumerate(rounds):
            description = describe_street(lookup, ROUND_NAMES[r], budget) if r else None
            if description is None:
                continue
            chosen = choose(description, budget)
            report.append({"street": description.street, "computed": chosen,
                           "description_bytes": len(description.data),
                           "table_bytes": description.table_bytes, "evaluations": description.evaluations,
                           "exceptions": description.exceptions,
                           "canonical_hands": description.canonical_hands})
            if keep:
                report[-1]["data"] = description.data
            elif chosen:
                rounds[r] = RoundBuckets(round_buckets_.dealt, COMPUTED, round_buckets_.buckets,
                                         description=description.data)
    return report


def _ruled_rounds(rounds: list[RoundBuckets], abstraction, game: LimitPoker, budget: int | None,
                  decode_budget: int) -> list[dict]:
    """Per round with a canonical table: its compressed table, its description (with
    ``budget``: a pipeline bucket file's street a device computes) and the packed table,
    the rule's choice among them put in place (in ``rounds``); returns what the rule weighed."""
    from efgkit.abstraction.cards.holdem.deck import ROUND_NAMES
    from efgkit.storage.compressed_tables import (
        BLOCK_ENTRIES,
        check_decode_budget,
        choose_method,
        compress_table,
    )

    check_decode_budget(decode_budget)
    structure = game.card_structure
    if structure.num_suits != SUITS or structure.private_cards_per_player != 2:
        raise ParameterError("compressed bucket tables are hold'em tables (two hole cards, four suits)")
    described = {}
    if budget is not None:
        described = {entry["street"]: entry for entry in _computed_rounds(
            [RoundBuckets(r.dealt, r.method, r.buckets, r.table) for r in rounds], abstraction, budget,
            keep=True)}
    report, board = [], 0
    for r, round_buckets_ in enumerate(rounds):
        board += round_buckets_.dealt
        if round_buckets_.method != BY_CANONICAL:
            continue
        compressed = compress_table(round_buckets_.table, round_buckets_.buckets, structure.num_ranks,
                                    board, block_entries=min(decode_budget, BLOCK_ENTRIES))
        table_bytes = (round_buckets_.table.shape[0] * round_buckets_.bits + 7) // 8
        description = described.get(ROUND_NAMES[r], {})
        chosen = choose_method(table_bytes, compressed, description.get("description_bytes"),
                               description.get("evaluations"), budget=budget or 0,
                               decode_budget=decode_budget)
        report.append({"street": ROUND_NAMES[r], "method": chosen, "computed": chosen == "computed",
                       "table_bytes": table_bytes, "compressed_bytes": len(compressed.data),
                       "compressed_block": compressed.block_entries, "flush_states": compressed.flush_states,
                       "nonzero_residuals": compressed.nonzero_residuals,
                       "canonical_hands": compressed.entries,
                       "description_bytes": description.get("description_bytes"),
                       "evaluations": description.get("evaluations"),
                       "exceptions": description.get("exceptions")})
        if chosen == "compressed":
            rounds[r] = RoundBuckets(round_buckets_.dealt, COMPRESSED, round_buckets_.buckets,
                                     description=compressed.data)
        elif chosen == "computed":
            rounds[r] = RoundBuckets(round_buckets_.dealt, COMPUTED, round_buckets_.buckets,
                                     description=description["data"])
    return report


def _place_tables(rounds: list[RoundBuckets], game: LimitPoker, path, bucket_tables: str
                  ) -> tuple[Path | None, bytes, bool]:
    """Mark the rounds whose tables go to a bucket-table file and write it: (its path, its
    bytes, whether it was written), or (None, b"", False) if every table is inline."""
    tabled = [r for r in rounds if r.table is not None]
    inline_bytes = sum((r.table.shape[0] * r.bits + 7) // 8 for r in tabled)
    if not tabled or bucket_tables == "inline" or (bucket_tables == "auto"
                                                   and inline_bytes <= INLINE_TABLE_BYTES):
        return None, b"", False
    if game.card_structure.num_suits != SUITS:
        raise ParameterError("a bucket-table file holds canonical hold'em tables (four suits)")
    for r in tabled:
        r.external = True
    data = bucket_table_file(rounds, game.card_structure.num_ranks,
                             game.card_structure.private_cards_per_player)
    if bucket_tables == "auto":
        target = Path(path).parent / f"buckets-{hashlib.sha256(data).hexdigest()[:16]}.efgb"
    else:
        target = Path(bucket_tables)
        if target.parent.resolve() != Path(path).parent.resolve():
            raise ParameterError(f"the bucket-table file {target} must be in the directory of "
                                 f"{path}: the compact file records its name only")
    return target, data, _write_once(target, data)


def _unpacked(packed: tuple[object, int, int, int]) -> np.ndarray:
    """A packed bucket table (``CardTable.packed_table``) as int64 per entry, unpacked in
    chunks of entries that start on a byte."""
    data, offset, entries, bits = packed
    table = np.empty(entries, np.int64)
    weights = np.int64(1) << np.arange(bits, dtype=np.int64)
    chunk = 8 * (1 << 17)
    for start in range(0, entries, chunk):
        count = min(chunk, entries - start)
        first = offset + start * bits // 8
        raw = np.frombuffer(data, np.uint8, count=(count * bits + 7) // 8, offset=first)
        stream = np.unpackbits(raw, bitorder="little")[:count * bits].reshape(count, bits)
        table[start:start + count] = stream.astype(np.int64) @ weights
    return table


def _exported_abstraction(card_table, game: LimitPoker, path: str):
    """The card abstraction a compact file's card table describes (``round_buckets`` read
    back): card independent, lossless, or canonical tables (the canonical index, packed or
    compressed tables)."""
    methods = set(card_table.methods[:game.num_rounds])
    if card_table.perfect:
        raise ParameterError(f"{path}: a perfect-recall card table plays through its reader only")
    if methods == {CONSTANT}:
        return CardIndependent()
    if methods == {LOSSLESS}:
        return LosslessCards(game)
    if not methods <= {CONSTANT, CANONICAL, BY_CANONICAL, COMPRESSED}:
        raise ParameterError(f"{path}: its bucket methods cannot be read back as a card abstraction")
    from efgkit.storage.compressed_tables import decoded_table

    tables = []
    for r in range(game.num_rounds):
        size = canonical_table_entries(game, r)
        method = card_table.methods[r]
        check_memory(8 * size, f"round {r}'s bucket table of {path} ({size:,} canonical hands)",
                     "play it by key at the terminal instead (efgkit play without --against)")
        if method == COMPRESSED:
            tables.append(decoded_table(card_table.compressed[r], card_table.board_sizes[r]))
            continue
        tables.append(np.zeros(size, np.int64) if method == CONSTANT else np.arange(size, dtype=np.int64)
                      if method == CANONICAL else _unpacked(card_table.packed_table(r)))
    return IsomorphicCards(game, tables, f"bucket tables of {path}", {"kind": "tables"})


def is_bucket_export(path: str, game: LimitPoker) -> bool:
    """Whether the compact file ``path`` is a bucket strategy of ``game``'s betting tree
    (``export_bucket_strategy``): a card table and the betting tree's digest as fingerprint.
    A file that is no compact strategy at all is a FileFormatError."""
    try:
        with CompactStrategy(path) as reader:
            return reader.card_table is not None and reader.fingerprint == betting_digest(BettingTree(game))
    except (CompactFormatError, OSError) as exc:
        raise FileFormatError(one_line(exc)) from exc


def open_bucket_export(path: str, game: LimitPoker) -> CompactStrategy:
    """The reader of a compact bucket export of ``game``, verified (payload checksum) and
    checked to be ``game``'s; anything else is one FileFormatError line."""
    try:
        reader = CompactStrategy(path)
    except (CompactFormatError, OSError) as exc:
        raise FileFormatError(one_line(exc)) from exc
    try:
        reader.verify()
        if reader.spec != game.spec or reader.fingerprint != betting_digest(BettingTree(game)):
            raise FileFormatError(f"{path}: the strategy is for {reader.spec!r}"
                                  f"{' (another betting tree)' * (reader.spec == game.spec)}, "
                                  f"not {game.spec!r}")
        if reader.card_table is None:
            raise FileFormatError(f"{path}: not a bucket strategy export (no card table)")
    except CompactFormatError as exc:
        reader.close()
        raise FileFormatError(one_line(exc)) from exc
    except FileFormatError:
        reader.close()
        raise
    return reader


def read_bucket_export(path: str, game: LimitPoker) -> tuple[BucketLayout, np.ndarray]:
    """(layout, strategy) a compact bucket export plays: its card table as the abstraction,
    its quantized rows as probabilities (weights over totals); a cell no infoset has (never
    dealt) plays uniformly. Checked as ``open_bucket_export``."""
    with open_bucket_export(path, game) as reader:
        betting = BettingTree(game)
        try:
            layout = BucketLayout(betting, _exported_abstraction(reader.card_table, game, path))
            strategy = np.empty(layout.num_actions)
            for d, node in enumerate(betting.decision_nodes.tolist()):
                text = game.betting_text(Betting(betting.histories[node], (0, 0), 0))
                _, rows = reader.block_rows(text)
                width = int(layout.width[d])
                if len(rows) != layout.buckets[d]:
                    raise FileFormatError(f"{path}: {len(rows)} cells at bets={text}, the abstraction "
                                          f"has {layout.buckets[d]}")
                block = strategy[layout.action_start[d]:layout.action_start[d + 1]].reshape(-1, width)
                for cell, weights in enumerate(rows):
                    block[cell] = 1.0 / width if weights is None else np.divide(weights, sum(weights))
        except CompactFormatError as exc:
            raise FileFormatError(one_line(exc)) from exc
    return layout, strategy


__all__ = ["BucketExport", "bucket_table_file_bytes", "export_bucket_strategy", "is_bucket_export",
           "open_bucket_export", "planned_bytes", "read_bucket_export"]
