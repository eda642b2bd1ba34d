"""Export a strategy to the compact .efgs format: abstract rows once, a class rule or a card
table, a key index.

The file keeps the abstraction: each abstract infoset's row of quantized probabilities
is stored once in ``bits`` = 16, 8 or 4 bits per action (the row code of
``compact_reader.row_code``: the first ``A - 1`` weights in ``floor(A b / (A - 1))`` bits
each, the last the rest of the row's total, where ``b`` is the row's tier: ``2 bits`` for
the rows reached most, ``bits // 2`` for the rows reached least, as
``quantization.tier_bits`` chooses, ``bits`` on average; rounded by
``efgkit.storage.quantization``), and every original infoset reaches its row in one of
three ways:

* the class rule (Čermák et al. §4.1.1): the coarsest abstraction is a function of
  (player, own-sequence length, number of actions), so a table of one row per class
  costs nothing per infoset; the row of a class is its largest abstract set;
* explicit entries, for the infosets outside their class's largest set (the paper's
  explicit map entries, what a refinement adds): a static function, an xor table (Graf
  & Lemire, "Xor filters: faster and smaller than Bloom and cuckoo filters", 2020) of
  ``1.23 n + 32`` slots of ``row bits + check_bits`` bits, where the three slots a key
  hashes to XOR to its row number and a fingerprint of the key. Keys that follow their
  class must miss the index, so the fingerprint has at least ``log2(those keys) + 1``
  bits, and one whose fingerprint still matches by chance is added as an entry too: every
  infoset of the file reads its own row.

* a card table, for a strategy on a card abstraction (``card_abstraction``): the
  abstraction's bucket tables are stored (tiny for Leduc-like decks, and a reference to
  the HDF5 file would be neither smaller nor readable by the readers), the key index
  holds one entry per betting history, giving its block of rows (one per bucket, or
  bucket sequence with perfect recall), and the key's cards pick the row in the block.

``key_map="auto"`` writes the smallest of these files: the class rule when it makes the
file smaller (the coarsest abstraction: no entry at all; a refinement: its explicit
entries), the card table when a card abstraction is given, else every key an explicit
entry (an unabstracted game: 16 bytes per class would buy back only ``1.23 slot_bits``
bits each), and readers then need only the key. The layout is in
docs/compact-format.md; readers are ``compact_reader`` (Python standard library) and
``efgs_c`` (C99).

``prune_unreachable`` leaves out original infosets the (quantized) strategy itself never
reaches (its owner's own reach is 0), and rows none of whose members are left: what is
played there never matters to the strategy's payoff or exploitability, and a player
using the file never looks them up.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass

import numba
import numpy as np

from efgkit.abstraction.cards.bucketing import RECALLS, CardAbstraction
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.error_text import one_line
from efgkit.maps.infoset_map import InfosetMap, coarsest_classes
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import infoset_view, own_infoset_reach
from efgkit.storage.compact_reader import (
    ACTION_GROUP,
    BY_COMBINATION,
    CARD_HEAD,
    CARD_ROUND,
    CLASS_ENTRY,
    FLAG_KEYS,
    FLAG_PRUNED,
    HEADER,
    MAGIC,
    MAX_SLOT_BITS,
    VALUES_HEAD,
    VERSION,
    CardTable,
    fingerprint_of,
    header_crc,
    key_hash,
    slot_positions,
)
from efgkit.storage.quantization import (
    EVALUATIONS,
    action_totals,
    quantize,
    round_for_exploitability,
    row_codes,
    tier_bits,
)

MAX_SEED_TRIES = 64
SLOTS_PER_KEY = 1.23
"""Xor table size factor: three-way peeling succeeds with high probability above 1.222."""
ROUNDINGS = ("exact", "nearest")
KEY_MAPS = ("auto", "class", "explicit", "cards")


@dataclass(eq=False)
class CompactExport:
    """What ``export_compact`` wrote: sizes and the strategy the file plays."""

    path: str
    bytes: int
    bits: int
    infosets: int
    infosets_pruned: int
    rows: int
    index_bytes: int
    """Bytes of the key index (the xor table of the explicit entries)."""
    explicit_entries: int
    """Keys in the index: all of them, or with a class rule those outside their class's
    row (and the few whose fingerprint would match by chance)."""
    classes: int
    """Entries of the class rule (0: none, every key is explicit)."""
    key_map: str
    """How keys reach their rows: ``class``, ``explicit`` or ``cards``."""
    card_table_bytes: int
    """Bytes of the card table (0 without one)."""
    tier_rows: tuple[int, int, int]
    """Rows at ``2 bits``, ``bits`` and ``bits // 2`` bits per action."""
    dequantized: Strategy
    """What the file plays, per original infoset (left-out infosets play uniformly)."""
    max_abs_error: float
    nash_conv_nearest: float | None
    """Exact NashConv of the largest-remainder rounding (with ``rounding='exact'``)."""

    @property
    def bytes_per_infoset(self) -> float:
        return self.bytes / max(self.infosets, 1)


def reachable_infosets(tree: GameTree, behavior: np.ndarray) -> np.ndarray:
    """bool per infoset: its owner reaches it with positive probability playing ``behavior``."""
    own_reach = np.zeros(tree.num_infosets)
    view = infoset_view(tree)
    for player in (0, 1):
        own_infoset_reach(tree.infosets_of(player), view, behavior, own_reach)
    return own_reach > 0.0


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


def class_rule(tree: GameTree, infosets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int64 (classes, 4) table of player, own-sequence length, number of actions, row,
    sorted; bool per infoset: explicit). A class's row is the one most of its infosets
    use (the lowest on a tie): Čermák et al.'s largest abstract set of the class."""
    if not infosets.size:
        return np.zeros((0, 4), np.int64), np.zeros(0, bool)
    classes = coarsest_classes(tree)[infosets].astype(np.int64)
    pairs, counts = np.unique(np.stack([classes, rows], axis=1), axis=0, return_counts=True)
    order = np.lexsort((pairs[:, 1], -counts, pairs[:, 0]))  # per class: most members first
    largest = order[np.r_[True, pairs[order[1:], 0] != pairs[order[:-1], 0]]]
    class_row = np.full(int(classes.max()) + 1, -1, np.int64)
    class_row[pairs[largest, 0]] = pairs[largest, 1]
    member = np.zeros(class_row.shape[0], np.int64)
    member[classes] = infosets
    used = pairs[largest, 0]
    table = np.stack([tree.infoset_player[member[used]], tree.infoset_sequence_length[member[used]],
                      tree.infoset_num_actions[member[used]], class_row[used]], axis=1).astype(np.int64)
    return table[np.lexsort(table[:, ::-1].T)], rows != class_row[classes]


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


def block_slot_bits(num_rows: int, max_actions: int, check_bits: int,
                    too_wide: type[ParameterError] = ParameterError) -> tuple[int, int]:
    """(action bits, slot bits) of a key index over blocks of rows: a slot holds a block's
    first row (of ``num_rows``), its action count (at most ``max_actions``) and
    ``check_bits`` of fingerprint. Raises ``too_wide`` (the caller's error: a card table
    falls back to keys, a bucket strategy has no fallback) beyond ``MAX_SLOT_BITS``."""
    row_bits = max(int(num_rows - 1).bit_length(), 0)
    action_bits = int(max_actions).bit_length()
    slot_bits = row_bits + action_bits + check_bits
    if slot_bits > MAX_SLOT_BITS:
        raise too_wide(f"{num_rows:,} rows of up to {max_actions} actions need {slot_bits}-bit index "
                       f"slots, more than {MAX_SLOT_BITS}; lower check_bits")
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
              present: np.ndarray | None = None, row_bits: np.ndarray | None = None) -> bytes:
    """The values section: rows of ``weights`` (int64, each row summing to its total, rows
    given by the CSR ``row_offsets``) in the row code of ``compact_reader.row_code`` at
    ``row_bits`` bits per action (int per row: ``2 bits`` rows first, then ``bits``, then
    ``bits // 2``; default ``bits`` for all), after the two tier counts; rows not
    ``present`` (bool per row) are empty cells, all ones."""
    row_offsets = np.asarray(row_offsets, np.int64)
    rows, actions = row_offsets.shape[0] - 1, np.diff(row_offsets)
    row_bits = np.full(rows, bits, np.int64) if row_bits is None else np.asarray(row_bits, np.int64)
    tier = np.searchsorted([-2 * bits, -bits, -(bits // 2)], -row_bits)
    if np.any(np.diff(tier) < 0) or not np.all(np.isin(row_bits, (2 * bits, bits, bits // 2))):
        raise ValueError("rows must come in tiers of 2 bits, bits, bits // 2 per action")
    wide_end, narrow_start = (int(row_offsets[np.searchsorted(tier, level)]) for level in (1, 2))
    row_bit = np.zeros(rows + 1, np.int64)
    np.cumsum(actions * row_bits, out=row_bit[1:])
    out = np.zeros((int(row_bit[-1]) + 7) // 8, np.uint8)
    _pack_rows_kernel(np.asarray(weights, np.int64), row_offsets, row_bit,
                      row_codes(row_offsets, row_bits)[0],
                      np.ones(rows, bool) if present is None else present, out)
    return VALUES_HEAD.pack(wide_end, narrow_start) + out.tobytes()


def _aligned(offset: int) -> int:
    return (offset + 7) // 8 * 8


def _key_section(keys: list[str], rows: np.ndarray, num_rows: int) -> bytes:
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
    position = _aligned(HEADER.size + len(spec))
    for name, section in named.items():
        offsets[name] = position
        position = _aligned(position + len(section))
    last = list(named)[-1]
    size = offsets[last] + len(named[last])
    base = HEADER.size + len(spec)
    body = bytearray(size - base)
    for name, section in named.items():
        body[offsets[name] - base:offsets[name] - base + len(section)] = section
    fields = [MAGIC, VERSION, bits, flags, num_keys, num_rows, num_values,
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

    @property
    def bits(self) -> int:
        return int(self.buckets - 1).bit_length()


def _checked_recall(recall: str) -> str:
    if recall not in RECALLS:
        raise ParameterError(f"recall must be one of {', '.join(RECALLS)}, got {recall!r}")
    return recall


def card_table_bytes(names: list[bytes], private: int, rounds: list[RoundBuckets], *,
                     recall: str = "imperfect", groups: list[tuple[int, int, int]] = ((1, 0, 0),),
                     action_bits: int = 1, tables_reference: tuple[bytes, str] | None = None
                     ) -> bytes:
    """The card table of a compact file (docs/compact-format.md): the deck's card names,
    per round how its bucket is found, the blocks' action groups, the bucket-table file's
    (sha256, name) if a round's table lives there, then the inline tables, ``ceil(log2
    buckets)`` bits per entry."""
    if len(set(names)) != len(names) or len({len(name) for name in names}) != 1:
        raise CardTableUnavailable("a card table needs a distinct name of one length per card")
    parts = [CARD_HEAD.pack(len(names[0]), len(names), private, len(rounds),
                            RECALLS.index(_checked_recall(recall)),
                            len(groups), action_bits)]
    parts += [CARD_ROUND.pack(r.dealt, r.bits, r.method, int(r.external), r.buckets) for r in rounds]
    parts += [ACTION_GROUP.pack(*map(int, group)) for group in groups]
    parts += names
    if any(r.external for r in rounds):
        sha, name = tables_reference
        encoded = name.encode()
        parts += [sha, struct.pack("<H", len(encoded)), encoded]
    parts += [pack_bits(r.table, r.bits) for r in rounds
              if r.table is not None and not r.external and r.bits]
    return b"".join(parts)


def card_names(structure) -> list[bytes]:
    """The name of every card of a ``CardStructure``, in card-id order."""
    return [structure.card_name(card).encode() for card in range(structure.num_cards)]


def abstraction_rounds(abstraction: CardAbstraction) -> list[RoundBuckets]:
    """A card abstraction's bucket of every (private hand, board) pair per round,
    renumbered 0, 1, ... in the order of its labels."""
    structure = abstraction.card_structure
    rounds = []
    for situations, labels, dealt in zip(abstraction.situations.rounds, abstraction.labels,
                                         structure.public_cards_per_round, strict=True):
        buckets = np.unique(labels, return_inverse=True)[1].astype(np.uint64)
        entries = np.zeros(situations.hands.shape[0] * situations.boards.shape[0], np.uint64)
        entries[situations.hand_of * situations.boards.shape[0] + situations.board_of] = buckets
        rounds.append(RoundBuckets(dealt, BY_COMBINATION, int(buckets.max(initial=0)) + 1, entries))
    return rounds


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


class CardTableUnavailable(ParameterError):
    """A card table cannot serve this game: its infoset keys do not name their cards one
    by one (a deck dealt by rank shows ranks only), or a block does not fit a slot."""


@dataclass(eq=False)
class _File:
    """One candidate layout of the file: its bytes and what it holds."""

    data: bytes
    key_map: str
    rows: int
    explicit_entries: int
    classes: int
    index_bytes: int
    tier_rows: tuple[int, int, int]
    card_table_bytes: int = 0


def _rows(weights: np.ndarray, infoset_map: InfosetMap, sources: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """(values, int64 row starts) of file rows copying abstract rows ``sources`` (-1: an
    empty row)."""
    present = sources >= 0
    counts = np.where(present, infoset_map.abstract_num_actions[np.maximum(sources, 0)], 0)
    row_offsets = np.zeros(sources.shape[0] + 1, np.int64)
    np.cumsum(counts, out=row_offsets[1:])
    starts = infoset_map.abstract_action_offset[np.maximum(sources, 0)].astype(np.int64)
    taken = np.repeat(starts, counts) + np.arange(row_offsets[-1]) - np.repeat(row_offsets[:-1],
                                                                               counts)
    return weights[taken], row_offsets


def export_compact(strategy: Strategy, path: str | os.PathLike, *, bits: int = 8,
                   prune_unreachable: bool = False, with_keys: bool = False, check_bits: int = 8,
                   rounding: str = "exact", evaluations: int = EVALUATIONS,
                   key_map: str = "auto", card_abstraction: CardAbstraction | None = None,
                   recall: str = "imperfect", evaluator: BestResponse | None = None,
                   progress=None) -> CompactExport:
    """Write ``strategy`` (on any InfosetMap) as a compact file at ``path`` (atomically).

    ``check_bits``: bits of key fingerprint in the index; a key not in the file is still
    found, playing some row, with probability ``2**-check_bits`` (0: never detected).
    ``with_keys`` also stores the keys, and readers then compare them (and can list them).
    ``rounding``: ``exact`` (``round_for_exploitability``, at most ``evaluations`` exact
    evaluations, ``progress(evaluations done)`` after each row) or ``nearest`` (largest
    remainder). ``key_map``: ``class`` (the class rule and explicit entries), ``explicit``
    (every key in the index), ``cards`` (the ``card_abstraction``'s bucket tables with
    ``recall`` and one index entry per betting history; the strategy must be on that
    abstraction) or ``auto`` (the smallest of these files).
    """
    if rounding not in ROUNDINGS:
        raise ParameterError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    if key_map not in KEY_MAPS:
        raise ParameterError(f"key_map must be one of {', '.join(KEY_MAPS)}, got {key_map!r}")
    if key_map == "cards" and card_abstraction is None:
        raise ParameterError("key_map 'cards' needs the card abstraction the strategy was "
                             "solved on (efgkit export --card-abstraction ABS.h5)")
    infoset_map = strategy.infoset_map
    tree = infoset_map.tree
    check_check_bits(check_bits)
    nearest_nash_conv = None
    row_bits = np.full(infoset_map.num_abstract, bits, np.int64)
    if rounding == "exact":
        evaluator = evaluator or BestResponse(infoset_map)
        if card_abstraction is None:  # a card table's blocks keep one tier
            row_bits = tier_bits(strategy, bits, evaluator)
        chosen = round_for_exploitability(strategy, row_bits, evaluations=evaluations,
                                          evaluator=evaluator, progress=progress)
        weights, nearest_nash_conv = chosen.weights, chosen.nash_conv_largest_remainder
    else:
        weights = quantize(strategy.probabilities, infoset_map.abstract_action_offset, bits)
    dequantized_rows = weights / action_totals(infoset_map.abstract_action_offset, row_bits)
    behavior = dequantized_rows[infoset_map.abstract_action_of]
    kept = reachable_infosets(tree, behavior) if prune_unreachable else np.ones(tree.num_infosets,
                                                                                   bool)
    infosets = np.flatnonzero(kept)
    keys = [tree.infoset_keys[i] for i in infosets]
    flags = FLAG_PRUNED * prune_unreachable | FLAG_KEYS * with_keys
    layout = dict(spec=tree.spec, fingerprint=tree.fingerprint, bits=bits, flags=flags,
                  num_keys=len(keys))
    candidates = []
    if key_map != "cards":
        candidates.append(_keyed_file(layout, weights, row_bits, infoset_map, infosets, keys,
                                      key_map, check_bits, with_keys))
    if card_abstraction is not None and key_map in ("auto", "cards"):
        try:
            candidates.append(_card_file(layout, weights, infoset_map, infosets, keys,
                                         card_abstraction, recall, check_bits, with_keys))
        except CardTableUnavailable:
            if key_map == "cards":
                raise  # with auto the keyed file stays, and the result's key_map says so
    chosen_file = min(candidates, key=lambda candidate: len(candidate.data))
    try:
        with atomic_output_path(path) as temporary:
            temporary.write_bytes(chosen_file.data)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({one_line(exc)})") from exc
    played = np.where(np.repeat(kept, tree.infoset_num_actions), behavior,
                      1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions))
    return CompactExport(
        path=str(path), bytes=len(chosen_file.data), bits=bits, infosets=len(keys),
        infosets_pruned=int(tree.num_infosets - len(keys)), rows=chosen_file.rows,
        index_bytes=chosen_file.index_bytes, explicit_entries=chosen_file.explicit_entries,
        classes=chosen_file.classes, key_map=chosen_file.key_map,
        card_table_bytes=chosen_file.card_table_bytes,
        tier_rows=chosen_file.tier_rows,
        dequantized=Strategy(InfosetMap.identity(tree), played),
        max_abs_error=float(np.max(np.abs(dequantized_rows - strategy.probabilities), initial=0.0)),
        nash_conv_nearest=nearest_nash_conv,
    )


def _keyed_file(layout: dict, weights: np.ndarray, action_bits: np.ndarray, infoset_map: InfosetMap,
                infosets: np.ndarray, keys: list[str], key_map: str, check_bits: int,
                with_keys: bool) -> _File:
    """The file whose key index holds original infoset keys (with a class rule or not);
    its rows in tiers, widest first (``action_bits``: bits per action of each abstract row)."""
    tree = infoset_map.tree
    used_rows = np.unique(infoset_map.abstract_of[infosets])
    used_rows = used_rows[np.argsort(-action_bits[used_rows], kind="stable")]
    row_bits = max(int(used_rows.shape[0] - 1).bit_length(), 0)
    slot_bits = max(row_bits + check_bits, 1)
    new_row = np.full(infoset_map.num_abstract, -1, np.int64)
    new_row[used_rows] = np.arange(used_rows.shape[0])
    rows_of_keys = new_row[infoset_map.abstract_of[infosets]]
    classes, explicit = class_rule(tree, infosets, rows_of_keys)
    # Keys that follow their class must miss the index: with (keys - entries) of them,
    # log2 of that many fingerprint bits leave about one to add as an entry.
    class_check_bits = min(max(check_bits, int(len(keys) - explicit.sum()).bit_length() + 1),
                           MAX_SLOT_BITS - row_bits)
    index = None
    class_bytes = index_bytes(int(explicit.sum()), row_bits + class_check_bits)
    if key_map == "class" or (key_map == "auto" and class_bytes + CLASS_ENTRY.size * classes.shape[0]
                              < index_bytes(len(keys), slot_bits)):
        index = _explicit_index(keys, rows_of_keys, explicit, class_check_bits, used_rows.shape[0])
        if index is not None:
            check_bits, slot_bits = class_check_bits, max(row_bits + class_check_bits, 1)
    if index is None:  # every key explicit: asked for, smaller, or the class rule did not settle
        classes, explicit = classes[:0], np.ones(len(keys), bool)
        index = _explicit_index(keys, rows_of_keys, explicit, check_bits, used_rows.shape[0])
    seed, segment, table = index
    slots = pack_bits(table, slot_bits)
    row_weights, row_offsets = _rows(weights, infoset_map, used_rows)
    data = file_bytes(**layout, check_bits=check_bits, seed=seed, segment=segment,
                      slot_bits=slot_bits, slots=slots, num_explicit=int(explicit.sum()),
                      values=pack_rows(row_weights, row_offsets, layout["bits"],
                                       row_bits=action_bits[used_rows]),
                      num_values=row_weights.shape[0], row_offsets=row_offsets,
                      keys=_key_section(keys, rows_of_keys, used_rows.shape[0]) if with_keys else None,
                      classes=classes)
    bits = layout["bits"]
    tiers = tuple(int(np.sum(action_bits[used_rows] == width)) for width in (2 * bits, bits, bits // 2))
    return _File(data, "class" if classes.shape[0] else "explicit", int(used_rows.shape[0]),
                 int(explicit.sum()), int(classes.shape[0]), len(slots), tiers)


def _card_file(layout: dict, weights: np.ndarray, infoset_map: InfosetMap, infosets: np.ndarray,
               keys: list[str], card_abstraction: CardAbstraction, recall: str, check_bits: int,
               with_keys: bool) -> _File:
    """The file with a card table: rows in blocks of one betting history each (a row per
    cell: bucket, or bucket sequence with perfect recall; an empty row, all ones, for a
    cell no infoset has), one index entry per betting history giving its block's first
    row and number of actions (blocks grouped by actions), and no row-start table."""
    tree = infoset_map.tree
    structure = card_abstraction.card_structure
    names, rounds = card_names(structure), abstraction_rounds(card_abstraction)
    private = structure.private_cards_per_player
    readable = card_table_bytes(names, private, rounds, recall=_checked_recall(recall))
    cards = CardTable(readable, 0, len(readable))
    blocks: dict[str, int] = {}
    block_rows, block_actions = [], []
    key_blocks, key_cells = np.empty(len(keys), np.int64), np.empty(len(keys), np.int64)
    for i, (infoset, key) in enumerate(zip(infosets, keys, strict=True)):
        located = cards.locate(key)
        if located is None:
            raise CardTableUnavailable(f"the card table cannot read the cards of infoset {key!r} "
                                       f"(keys of {tree.spec} name ranks only?)")
        betting, round_index, cell = located
        if betting not in blocks:
            blocks[betting] = len(block_rows)
            block_rows.append(cards.block_size(round_index))
            block_actions.append(int(tree.infoset_num_actions[infoset]))
        key_blocks[i], key_cells[i] = blocks[betting], cell
    block_rows, block_actions = np.array(block_rows, np.int64), np.array(block_actions, np.int64)
    first_row, first_value, groups = block_groups(block_rows, block_actions)
    rows_of_keys = first_row[key_blocks] + key_cells
    num_rows, num_values = int(block_rows.sum()), int((block_rows * block_actions).sum())
    row_actions = np.zeros(num_rows, np.int64)
    row_starts = np.zeros(num_rows, np.int64)
    for block in range(block_rows.shape[0]):  # one slice per betting history
        cells = np.arange(block_rows[block])
        row_actions[first_row[block] + cells] = block_actions[block]
        row_starts[first_row[block] + cells] = first_value[block] + cells * block_actions[block]
    sources = np.full(num_rows, -1, np.int64)
    sources[rows_of_keys] = infoset_map.abstract_of[infosets]
    differing = np.flatnonzero(sources[rows_of_keys] != infoset_map.abstract_of[infosets])
    if differing.size:
        raise ParameterError(f"the strategy is not on this card abstraction: infoset "
                             f"{keys[differing[0]]!r} has the betting and buckets of another "
                             f"infoset but not its abstract infoset")
    present = np.flatnonzero(sources >= 0)
    counts = row_actions[present]
    within = positions_within(counts)
    row_weights = np.zeros(num_values, weights.dtype)
    row_weights[np.repeat(row_starts[present], counts) + within] = weights[
        np.repeat(infoset_map.abstract_action_offset[sources[present]], counts) + within]
    action_bits, slot_bits = block_slot_bits(num_rows, block_actions.max(), check_bits,
                                             CardTableUnavailable)
    section = card_table_bytes(names, private, rounds, recall=recall, groups=groups,
                               action_bits=action_bits)
    block_values = first_row << action_bits | block_actions
    seed, segment, table = key_index(list(blocks), block_values, check_bits)
    slots = pack_bits(table, slot_bits)
    data = file_bytes(**layout, check_bits=check_bits, seed=seed, segment=segment,
                      slot_bits=slot_bits, slots=slots, num_explicit=len(blocks),
                      values=pack_rows(row_weights, np.append(row_starts, num_values),
                                       layout["bits"], sources >= 0),
                      num_values=num_values, row_offsets=None, num_rows=num_rows,
                      keys=_key_section(keys, rows_of_keys, num_rows) if with_keys else None,
                      classes=np.zeros((0, 4), np.int64), cards=section)
    return _File(data, "cards", num_rows, len(blocks), 0, len(slots), (0, num_rows, 0),
                 len(section))


def _explicit_index(keys: list[str], rows: np.ndarray, explicit: np.ndarray, check_bits: int,
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
