"""The one writer of the compact .efgs format (docs/compact-format.md), whatever its rows
come from.

A row source quantizes its rows (``QuantizedRows``: the row code, ``row_codes``, in tiers of
``2 bits``, ``bits`` or ``bits // 2`` per action; ``quantize``, largest remainder, or
``efgkit.exact_rounding``) and says which key reaches which row: a GameTree strategy
(``compact.export_compact``: abstract rows, original infoset keys, a class rule or a card
table) or a bucket strategy (``compact_holdem.export_bucket_strategy``: rows per betting
decision and bucket, a card table). This module lays the file out: the header and its
checksums (``file_bytes``), the rows (``pack_rows``), the xor key index (``key_index``:
Graf & Lemire, "Xor filters: faster and smaller than Bloom and cuckoo filters", 2020), and
a card-table file (``card_file``: a block of rows per betting history, ``CardBlocks``, and
the card table taking a key's cards to its row in the block). Readers: ``compact_reader``
(Python standard library) and ``efgs_c`` (C99).
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np

from efgkit.abstraction.cards.bucketing import RECALLS
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.csr import positions_within
from efgkit.io.atomic import write_atomically
from efgkit.storage.compact_reader import (
    ACTION_GROUP,
    BITS,
    CARD_HEAD,
    CARD_ROUND,
    CLASS_ENTRY,
    COMPUTED_VERSION,
    FLAG_CODED,
    FLAG_COMPUTED,
    FLAG_MODELLED,
    FLAG_RULE,
    HEADER,
    MAGIC,
    MAX_SLOT_BITS,
    MODELLED_VERSION,
    PACKED_VERSION,
    RULE,
    RULE_VERSION,
    VALUES_HEAD,
    VERSION,
    fingerprint_of,
    header_crc,
    key_hash,
    row_code,
    slot_positions,
)
from efgkit.storage.row_coding import code_rows
from efgkit.storage.row_model import model_rows

MAX_SEED_TRIES = 64
SLOTS_PER_KEY = 1.23
"""Xor table size factor: three-way peeling succeeds with high probability above 1.222."""


class QuantizedRows(NamedTuple):
    """Rows on the grid of the row code: ``weights`` (int64 per action) sum to their row's
    total at ``row_bits`` (int64 per row: its bits per action, ``2 bits``, ``bits`` or
    ``bits // 2``)."""

    weights: np.ndarray
    row_bits: np.ndarray


def row_codes(action_offset: np.ndarray, bits: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(field bits, total), int64 per row of the CSR ``action_offset``, at ``bits`` bits
    per action (one for all rows, or int per row: ``tier_bits``), by
    ``compact_reader.row_code``: a row's weights sum to its total."""
    if np.ndim(bits) == 0 and bits not in BITS:
        raise ParameterError(f"bits must be one of 16, 8 or 4, got {bits}")
    counts = np.diff(action_offset)
    widths = np.broadcast_to(np.asarray(bits, np.int64), counts.shape)
    field_bits, totals = np.zeros(counts.shape, np.int64), np.zeros(counts.shape, np.int64)
    for width in (np.unique(widths) if np.ndim(bits) else (bits,)):
        rows = widths == width
        codes = np.array([row_code(int(width), count) for count in
                          range(int(counts.max(initial=0)) + 1)], np.int64)  # by count
        field_bits[rows], totals[rows] = codes[counts[rows], 0], codes[counts[rows], 1]
    return field_bits, totals


def action_totals(action_offset: np.ndarray, bits: int | np.ndarray) -> np.ndarray:
    """int64 per action: its row's total (``weights / action_totals`` are probabilities)."""
    return np.repeat(row_codes(action_offset, bits)[1], np.diff(action_offset))


def quantize(probabilities: np.ndarray, action_offset: np.ndarray,
             bits: int | np.ndarray) -> np.ndarray:
    """int64 weights per action summing to the row's total (``row_codes`` at ``bits``, one
    for all rows or int per row) in every row, by largest remainder. ``probabilities``:
    float64 per action, rows given by the CSR ``action_offset``."""
    return largest_remainder(probabilities, action_offset, row_codes(action_offset, bits)[1])


def largest_remainder(probabilities: np.ndarray, action_offset: np.ndarray,
                      total: np.ndarray) -> np.ndarray:
    """int64 weights per action summing to ``total`` (int64 per row) in every row: the
    floors of the scaled probabilities plus a unit for the largest remainders, ties to
    the lower action index."""
    scaled = np.asarray(probabilities, np.float64) * np.repeat(total, np.diff(action_offset))
    weights = np.floor(scaled)
    remainder = scaled - weights
    counts = np.diff(action_offset)
    row = np.repeat(np.arange(counts.shape[0]), counts)
    missing = total - np.add.reduceat(weights, action_offset[:-1]) if row.size else weights
    order = np.lexsort((np.arange(row.shape[0]), -remainder, row))
    rank = np.empty(row.shape[0], np.int64)
    rank[order] = np.arange(row.shape[0]) - np.repeat(action_offset[:-1], counts)
    weights += rank < np.repeat(missing, counts)
    return weights.astype(np.int64)


class CardTableUnavailable(ParameterError):
    """A card table cannot serve this game: its infoset keys do not name their cards one
    by one (a deck dealt by rank shows ranks only), or a block does not fit a slot."""


@dataclass(eq=False, kw_only=True)
class CompactFile:
    """A compact file as bytes and what it holds: what every export reports."""

    data: bytes
    bits: int
    key_map: str
    """How keys reach their rows: ``class``, ``explicit`` or ``cards``."""
    rows: int
    explicit_entries: int
    """Keys in the index: every infoset's, those outside their class's row with a class
    rule (and the few whose fingerprint would match by chance), or a card table's betting
    histories."""
    classes: int = 0
    """Entries of the class rule (0: none)."""
    index_bytes: int
    """Bytes of the key index (the xor table)."""
    tier_rows: tuple[int, int, int]
    """Rows at ``2 bits``, ``bits`` and ``bits // 2`` bits per action."""
    card_table_bytes: int = 0
    """Bytes of the card table (0 without one), with any inline bucket tables."""
    path: str = ""

    @property
    def bytes(self) -> int:
        return len(self.data)

    def write(self, path: str | os.PathLike) -> None:
        """Write the file at ``path``, atomically."""
        write_atomically(path, self.data)
        self.path = str(path)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def peel_order(positions, num_slots):
    """Order in which keys can be assigned a slot of their own (xor filter peeling).

    ``positions``: int64 (keys, 3), each key's three slots. Returns (int64 key order,
    int64 slot per key in that order); fewer than ``keys`` entries means the hypergraph
    has a core and another seed is needed.
    """
    keys = positions.shape[0]
    count = np.zeros(num_slots, np.int64)
    xor_key = np.zeros(num_slots, np.int64)
    for k in range(keys):
        for j in range(3):
            count[positions[k, j]] += 1
            xor_key[positions[k, j]] ^= k
    queue = np.empty(num_slots, np.int64)
    head = tail = 0
    for slot in range(num_slots):
        if count[slot] == 1:
            queue[tail] = slot
            tail += 1
    order = np.empty(keys, np.int64)
    own_slot = np.empty(keys, np.int64)
    done = 0
    while head < tail:
        slot = queue[head]
        head += 1
        if count[slot] != 1:
            continue
        k = xor_key[slot]
        order[done] = k
        own_slot[done] = slot
        done += 1
        for j in range(3):
            other = positions[k, j]
            count[other] -= 1
            xor_key[other] ^= k
            if count[other] == 1:
                queue[tail] = other
                tail += 1
    return order[:done], own_slot[:done]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def assign_slots(positions, values, order, own_slot, table):
    """Fill ``table`` (uint64 per slot) so each key's three slots XOR to its value,
    assigning keys in reverse peeling order."""
    for i in range(order.shape[0] - 1, -1, -1):
        k = order[i]
        value = values[k]
        for j in range(3):
            if positions[k, j] != own_slot[i]:
                value ^= table[positions[k, j]]
        table[own_slot[i]] = value



def segment_length(num_keys: int) -> int:
    """Slots per segment of the xor table for ``num_keys`` keys (3 segments)."""
    return (int(SLOTS_PER_KEY * num_keys) + 32) // 3 if num_keys else 0


def index_bytes(num_keys: int, slot_bits: int) -> int:
    """Bytes of the key index of ``num_keys`` keys."""
    return (3 * segment_length(num_keys) * slot_bits + 7) // 8


def check_check_bits(check_bits: int) -> None:
    """Refuse fingerprint widths that leave a slot too little room (the readers' ``MAX_SLOT_BITS``)."""
    if not 0 <= check_bits <= MAX_SLOT_BITS - 32:
        raise ParameterError(f"check_bits must be between 0 and {MAX_SLOT_BITS - 32}, got {check_bits}")


def block_slot_bits(num_rows: int, max_actions: int, check_bits: int) -> tuple[int, int]:
    """(action bits, slot bits) of a key index over blocks of rows: a slot holds a block's
    first row (of ``num_rows``), its action count (at most ``max_actions``) and
    ``check_bits`` of fingerprint; beyond ``MAX_SLOT_BITS`` no card table serves the rows."""
    row_bits = max(int(num_rows - 1).bit_length(), 0)
    action_bits = int(max_actions).bit_length()
    slot_bits = row_bits + action_bits + check_bits
    if slot_bits > MAX_SLOT_BITS:
        raise CardTableUnavailable(f"{num_rows:,} rows of up to {max_actions} actions need "
                                   f"{slot_bits}-bit index slots, more than {MAX_SLOT_BITS}; "
                                   f"lower check_bits")
    return action_bits, slot_bits


def key_index(keys: list[str], values: np.ndarray, check_bits: int) -> tuple[int, int, np.ndarray]:
    """(seed, segment length, uint64 slots) such that the three slots of key ``i`` XOR to
    ``values[i] << check_bits | fingerprint(key)``: the first seed (from 0) whose three-slot
    hypergraph peels (Graf & Lemire 2020, Algorithm 3)."""
    segment = segment_length(len(keys))
    for seed in range(MAX_SEED_TRIES):
        hashes = [key_hash(key, seed) for key in keys]
        positions = np.array([slot_positions(hashed, segment) for hashed in hashes],
                             dtype=np.int64).reshape(-1, 3)
        order, own_slot = peel_order(positions, 3 * segment)
        if order.shape[0] == len(keys):
            fingerprints = np.array([fingerprint_of(hashed, check_bits) for hashed in hashes],
                                    np.uint64)
            table = np.zeros(3 * segment, np.uint64)
            assign_slots(positions, values.astype(np.uint64) << np.uint64(check_bits) | fingerprints,
                    order, own_slot, table)
            return seed, segment, table
    raise FileFormatError(f"no hash seed below {MAX_SEED_TRIES} builds the key index; "
                          f"are two infoset keys equal?")


def index_rows(table: np.ndarray, seed: int, segment: int, keys: list[str], check_bits: int,
               num_rows: int) -> np.ndarray:
    """int64 per key: the row the xor ``table`` gives it, -1 where its fingerprint does not
    match or the row is out of range (what a reader's lookup does)."""
    rows = np.full(len(keys), -1, np.int64)
    if not table.size:
        return rows
    for i, key in enumerate(keys):
        hashed = key_hash(key, seed)
        value = 0
        for position in slot_positions(hashed, segment):
            value ^= int(table[position])
        row = value >> check_bits
        if value & ((1 << check_bits) - 1) == fingerprint_of(hashed, check_bits) and row < num_rows:
            rows[i] = row
    return rows


def explicit_index(keys: list[str], rows: np.ndarray, explicit: np.ndarray, check_bits: int,
                    num_rows: int) -> tuple[int, int, np.ndarray] | None:
    """The key index of the ``explicit`` keys (``explicit`` is updated in place): a key
    that follows its class but that the index would give another row (its fingerprint
    matches by chance) becomes explicit too, until none does (None if that takes more
    than ``MAX_SEED_TRIES`` rebuilds)."""
    for _ in range(MAX_SEED_TRIES):
        members = np.flatnonzero(explicit)
        if not members.size:
            return 0, 0, np.zeros(0, np.uint64)
        seed, segment, table = key_index([keys[i] for i in members], rows[members], check_bits)
        others = np.flatnonzero(~explicit)
        read = index_rows(table, seed, segment, [keys[i] for i in others], check_bits, num_rows)
        misread = others[(read >= 0) & (read != rows[others])]
        if not misread.size:
            return seed, segment, table
        explicit[misread] = True
    return None


PACK_CHUNK = 1 << 20
"""Entries packed at a time (a multiple of 8, so every chunk ends on a byte)."""


def pack_bits(table: np.ndarray, slot_bits: int) -> bytes:
    """Slot ``j`` at bits ``[j * slot_bits, (j + 1) * slot_bits)``, least significant first."""
    chunks = []
    shifts = np.arange(slot_bits, dtype=np.uint64)
    for start in range(0, table.shape[0], PACK_CHUNK):
        part = np.asarray(table[start:start + PACK_CHUNK], np.uint64)
        bits = ((part[:, None] >> shifts) & np.uint64(1)).astype(np.uint8)
        chunks.append(np.packbits(bits.reshape(-1), bitorder="little").tobytes())
    return b"".join(chunks)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _pack_rows_kernel(weights, row_offsets, row_bit, field_bits, present, out):
    """Row ``r``'s first ``A - 1`` weights at ``field_bits[r]`` bits each from bit
    ``row_bit[r]`` of ``out`` (uint8, zeros), least significant first; an absent row's
    bits, up to ``row_bit[r + 1]``, all ones."""
    for row in range(row_offsets.shape[0] - 1):
        lo, hi = row_offsets[row], row_offsets[row + 1]
        base = row_bit[row]
        if not present[row]:
            for bit in range(base, row_bit[row + 1]):
                out[bit >> 3] |= np.uint8(1 << (bit & 7))
            continue
        width = field_bits[row]
        for j in range(hi - lo - 1):
            value = weights[lo + j]
            for b in range(width):
                if (value >> b) & 1:
                    bit = base + j * width + b
                    out[bit >> 3] |= np.uint8(1 << (bit & 7))


def pack_rows(weights: np.ndarray, row_offsets: np.ndarray, bits: int,
              present: np.ndarray | None = None, row_bits: np.ndarray | None = None,
              coded: bool = False, model_total: int | None = None) -> bytes:
    """The values section: rows of ``weights`` (int64, each row summing to its total, rows
    given by the CSR ``row_offsets``) in the row code of ``compact_reader.row_code`` at
    ``row_bits`` bits per action (int per row: ``2 bits`` rows first, then ``bits``, then
    ``bits // 2``; default ``bits`` for all), after the two tier counts; rows not
    ``present`` (bool per row) are empty cells, all ones. ``coded``: the rows entropy-coded
    in blocks (format 7, ``row_coding.code_rows``) instead of packed; ``model_total``: every
    row sums to it and is coded by the context model (format 9, ``row_model.model_rows``;
    one tier)."""
    row_offsets = np.asarray(row_offsets, np.int64)
    rows, actions = row_offsets.shape[0] - 1, np.diff(row_offsets)
    row_bits = np.full(rows, bits, np.int64) if row_bits is None else np.asarray(row_bits, np.int64)
    tier = np.searchsorted([-2 * bits, -bits, -(bits // 2)], -row_bits)
    if np.any(np.diff(tier) < 0) or not np.all(np.isin(row_bits, (2 * bits, bits, bits // 2))):
        raise ValueError("rows must come in tiers of 2 bits, bits, bits // 2 per action")
    wide_end, narrow_start = (int(row_offsets[np.searchsorted(tier, level)]) for level in (1, 2))
    present = np.ones(rows, bool) if present is None else np.asarray(present, bool)
    if model_total is not None:
        return VALUES_HEAD.pack(0, int(row_offsets[-1])) + model_rows(
            np.asarray(weights, np.int64), row_offsets, present, model_total)
    if coded:
        return VALUES_HEAD.pack(wide_end, narrow_start) + code_rows(
            np.asarray(weights, np.int64), row_offsets, row_bits, present)
    row_bit = np.zeros(rows + 1, np.int64)
    np.cumsum(actions * row_bits, out=row_bit[1:])
    out = np.zeros((int(row_bit[-1]) + 7) // 8, np.uint8)
    _pack_rows_kernel(np.asarray(weights, np.int64), row_offsets, row_bit,
                      row_codes(row_offsets, row_bits)[0], present, out)
    return VALUES_HEAD.pack(wide_end, narrow_start) + out.tobytes()


def aligned(offset: int) -> int:
    """``offset`` rounded up to a multiple of 8 (where every section starts)."""
    return (offset + 7) // 8 * 8


def key_section(keys: list[str], rows: np.ndarray, num_rows: int) -> bytes:
    """Keys grouped by row, sorted by UTF-8 bytes within a row: u32 group starts, u32
    key offsets, the key bytes."""
    encoded = [key.encode() for key in keys]
    order = sorted(range(len(keys)), key=lambda i: (rows[i], encoded[i]))
    group_starts = np.searchsorted(rows[order], np.arange(num_rows + 1)).astype("<u4")
    offsets = np.zeros(len(keys) + 1, np.int64)
    np.cumsum([len(encoded[i]) for i in order], out=offsets[1:])
    if offsets[-1] >= 1 << 32:
        raise ParameterError("the compact format holds at most 4 GiB of keys")
    return group_starts.tobytes() + offsets.astype("<u4").tobytes() + b"".join(
        encoded[i] for i in order)


def file_bytes(spec: str, fingerprint: str, *, bits: int, flags: int, check_bits: int, seed: int,
               segment: int, slot_bits: int, slots: bytes, num_keys: int, num_explicit: int,
               values: bytes, num_values: int, row_offsets: np.ndarray | None, keys: bytes | None,
               classes: np.ndarray, cards: bytes | None = None, num_rows: int = 0) -> bytes:
    """The whole file as bytes (docs/compact-format.md) for game ``spec`` (``fingerprint``:
    hex sha256 of its tree, or of its betting tree for a bucket strategy): ``values`` is
    the values section (``pack_rows``) of ``num_values`` actions; a file with a card table
    has no row-start table (``row_offsets`` None, ``num_rows`` rows)."""
    if num_rows >= 1 << 32 or num_values >= 1 << 64:
        raise ParameterError("the compact format holds at most 2**32 - 1 rows")
    spec = spec.encode()
    class_table = b"".join(CLASS_ENTRY.pack(*map(int, entry)) for entry in classes)
    named = {"slots": slots}
    if row_offsets is not None:
        named["starts"] = row_offsets.astype("<u4").tobytes()
        num_rows = row_offsets.shape[0] - 1
        if num_values >= 1 << 32:
            raise ParameterError("the compact format holds at most 2**32 - 1 actions in rows "
                                 "with a row-start table")
    named["values"] = values
    if keys is not None:
        named["keys"] = keys
    if classes.shape[0]:
        named["classes"] = class_table
    if cards is not None:
        named["cards"] = cards
    offsets = dict.fromkeys(("slots", "starts", "values", "keys", "classes", "cards"), 0)
    position = aligned(HEADER.size + len(spec))
    for name, section in named.items():
        offsets[name] = position
        position = aligned(position + len(section))
    last = list(named)[-1]
    size = offsets[last] + len(named[last])
    base = HEADER.size + len(spec)
    body = bytearray(size - base)
    for name, section in named.items():
        body[offsets[name] - base:offsets[name] - base + len(section)] = section
    version = (RULE_VERSION if flags & FLAG_RULE else MODELLED_VERSION if flags & FLAG_MODELLED
               else COMPUTED_VERSION if flags & FLAG_COMPUTED
               else VERSION if flags & FLAG_CODED else PACKED_VERSION)
    fields = [MAGIC, version, bits, flags, num_keys, num_rows, num_values,
              seed, segment, slot_bits, check_bits, 0, num_explicit, classes.shape[0],
              *offsets.values(), size, zlib.crc32(body), 0, bytes.fromhex(fingerprint),
              len(spec)]
    fields[-3] = header_crc(HEADER.pack(*fields) + spec)
    return HEADER.pack(*fields) + spec + bytes(body)


@dataclass(eq=False)
class RoundBuckets:
    """How a card table finds one round's bucket (``compact_reader.METHODS``)."""

    dealt: int
    """Board cards dealt in the round."""
    method: int
    buckets: int
    table: np.ndarray | None = None
    """The bucket of every entry (hand and board ranks, or canonical index), for the
    table methods."""
    external: bool = False
    """The table lives in the bucket-table file, not in the compact file."""
    description: bytes | None = None
    """The method ``COMPUTED``'s description (``computed_buckets``) or ``COMPRESSED``'s table
    (``compressed_tables``), inline where a table would be."""

    @property
    def bits(self) -> int:
        return int(self.buckets - 1).bit_length()



class CardSection(NamedTuple):
    """What a card table holds besides the blocks (docs/compact-format.md): the deck's card
    names (``card_names``), private cards per player, how each round finds its bucket,
    the recall of the buckets (``RECALLS``), and the (sha256, name) of the bucket-table file
    holding the ``external`` rounds' tables."""

    names: list[bytes]
    private: int
    rounds: list[RoundBuckets]
    recall: str = "imperfect"
    tables_reference: tuple[bytes, str] | None = None
    rule: tuple[int, int] | None = None
    """(hand evaluations, decoded hands) a lookup may cost: the rule that chose each round's
    method (format 10, ``FLAG_RULE``), or None."""


class CardBlocks(NamedTuple):
    """A row source's rows as a card-table file lays them out: one block per betting
    history (``keys``, the index's keys), each of ``cells`` rows (int64 per block: a row
    per bucket, or bucket sequence with perfect recall) of ``actions`` actions (int64 per
    block); ``sources`` (int64 per cell, blocks and their cells in order) is the source row
    each cell copies, -1 for a cell no key reaches (an empty row, all ones)."""

    keys: list[str]
    cells: np.ndarray
    actions: np.ndarray
    sources: np.ndarray


def card_table_bytes(cards: CardSection, *, groups: list[tuple[int, int, int]] = ((1, 0, 0),),
                     action_bits: int = 1) -> bytes:
    """The card table of a compact file (docs/compact-format.md): the deck's card names,
    per round how its bucket is found, the blocks' action groups, the bucket-table file's
    (sha256, name) if a round's table lives there, then the inline tables, ``ceil(log2
    buckets)`` bits per entry."""
    names, rounds = cards.names, cards.rounds
    if len(set(names)) != len(names) or len({len(name) for name in names}) != 1:
        raise CardTableUnavailable("a card table needs a distinct name of one length per card")
    if cards.recall not in RECALLS:
        raise ParameterError(f"recall must be one of {', '.join(RECALLS)}, got {cards.recall!r}")
    parts = [CARD_HEAD.pack(len(names[0]), len(names), cards.private, len(rounds),
                            RECALLS.index(cards.recall), len(groups), action_bits)]
    parts += [CARD_ROUND.pack(r.dealt, r.bits, r.method, int(r.external), r.buckets) for r in rounds]
    parts += [ACTION_GROUP.pack(*map(int, group)) for group in groups]
    parts += names
    if any(r.external for r in rounds):
        sha, name = cards.tables_reference
        encoded = name.encode()
        parts += [sha, struct.pack("<H", len(encoded)), encoded]
    if cards.rule is not None:
        parts.append(RULE.pack(*cards.rule))
    parts += [r.description if r.description is not None else pack_bits(r.table, r.bits) for r in rounds
              if r.description is not None or (r.table is not None and not r.external and r.bits)]
    return b"".join(parts)


def card_names(structure) -> list[bytes]:
    """The name of every card of a ``CardStructure``, in card-id order."""
    return [structure.card_name(card).encode() for card in range(structure.num_cards)]


def block_groups(block_rows: np.ndarray, block_actions: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """Blocks laid out by number of actions (then in their order): (int64 first row and
    first value of every block, the action groups (actions, first row, first value)), so
    an index value needs only a block's first row and actions."""
    order = np.lexsort((np.arange(block_rows.shape[0]), block_actions))
    rows, values = block_rows[order], block_rows[order] * block_actions[order]
    first_row, first_value = np.empty_like(block_rows), np.empty_like(block_rows)
    first_row[order] = np.concatenate([[0], np.cumsum(rows)[:-1]])
    first_value[order] = np.concatenate([[0], np.cumsum(values)[:-1]])
    groups = []
    for actions in np.unique(block_actions).tolist():
        start = order[np.searchsorted(block_actions[order], actions)]
        groups.append((actions, int(first_row[start]), int(first_value[start])))
    return first_row, first_value, groups


def copied_rows(weights: np.ndarray, row_offsets: np.ndarray, sources: np.ndarray,
                counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, int64 CSR row starts) of rows of ``counts`` actions each (int64 per
    row), row ``r`` a copy of source row ``sources[r]`` of ``weights`` (rows given by the
    CSR ``row_offsets``), zeros where ``sources`` is -1."""
    starts = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    values = np.zeros(int(starts[-1]), np.int64)
    present = np.flatnonzero(sources >= 0)
    within = positions_within(counts[present])
    values[np.repeat(starts[present], counts[present]) + within] = weights[
        np.repeat(row_offsets[sources[present]], counts[present]) + within]
    return values, starts


def card_file(head: dict, weights: np.ndarray, row_offsets: np.ndarray, blocks: CardBlocks,
              cards: CardSection, check_bits: int,
              stored_keys: tuple[list[str], np.ndarray] | None = None,
              model_total: int | None = None) -> CompactFile:
    """The file with a card table: the ``blocks`` grouped by number of actions
    (``block_groups``), each cell a copy of its source row of ``weights`` (int64 per source
    action, rows by the CSR ``row_offsets``) in one tier, one index entry per betting
    history giving its block's first row and number of actions, and no row-start table.
    ``head``: the header fields ``file_bytes`` takes from the source (spec, fingerprint,
    bits, flags, num_keys); ``stored_keys``: keys to store, each with its cell;
    ``model_total``: the rows' grid, modelled (``pack_rows``; header flag ``FLAG_MODELLED``)."""
    first_row, first_value, groups = block_groups(blocks.cells, blocks.actions)
    cell_block = np.repeat(np.arange(blocks.cells.shape[0]), blocks.cells)
    file_row = first_row[cell_block] + positions_within(blocks.cells)
    num_rows = int(blocks.cells.sum())
    sources, row_actions = np.full(num_rows, -1, np.int64), np.zeros(num_rows, np.int64)
    sources[file_row], row_actions[file_row] = blocks.sources, blocks.actions[cell_block]
    values, starts = copied_rows(weights, row_offsets, sources, row_actions)
    action_bits, slot_bits = block_slot_bits(num_rows, blocks.actions.max(), check_bits)
    section = card_table_bytes(cards, groups=groups, action_bits=action_bits)
    seed, segment, table = key_index(blocks.keys, first_row << action_bits | blocks.actions,
                                     check_bits)
    slots = pack_bits(table, slot_bits)
    keys = None if stored_keys is None else key_section(stored_keys[0], file_row[stored_keys[1]],
                                                        num_rows)
    data = file_bytes(**head, check_bits=check_bits, seed=seed, segment=segment,
                      slot_bits=slot_bits, slots=slots, num_explicit=len(blocks.keys),
                      values=pack_rows(values, starts, head["bits"], sources >= 0,
                                       coded=bool(head["flags"] & FLAG_CODED), model_total=model_total),
                      num_values=values.shape[0], row_offsets=None, num_rows=num_rows, keys=keys,
                      classes=np.zeros((0, 4), np.int64), cards=section)
    return CompactFile(data=data, bits=head["bits"], key_map="cards", rows=num_rows,
                       explicit_entries=len(blocks.keys), index_bytes=len(slots),
                       tier_rows=(0, num_rows, 0), card_table_bytes=len(section))
