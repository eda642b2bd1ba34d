"""Export a strategy to the compact .efgs format: abstract rows once, and a key index.

The file keeps the abstraction: each abstract infoset's row of quantized probabilities
is stored once (``bits`` = 16, 8 or 4 bit integers summing exactly to ``2**bits - 1``,
rounded by ``efgkit.storage.quantization``), and every original infoset's key reaches
its row through a static function: an xor table (Graf & Lemire, "Xor filters: faster
and smaller than Bloom and cuckoo filters", 2020) of ``1.23 n + 32`` slots of ``row bits
+ check_bits`` bits, where the three slots a key hashes to XOR to its row number and a
fingerprint of the key. No key or per-key hash is stored, so the index costs about
``1.23 (ceil(log2 rows) + check_bits)`` bits per original infoset: an unabstracted game
pays for its rows, an abstraction pays for its row numbers (a coarsest abstraction of
Čermák et al. §4.1.1 with tens of classes: about 15 bits per infoset at 8 check bits).
The layout is in docs/compact-format.md; readers are ``compact_reader`` (Python standard
library) and ``efgs_c`` (C99).

``prune_unreachable`` leaves out original infosets the (quantized) strategy itself never
reaches (its owner's own reach is 0), and rows none of whose members are left: what is
played there never matters to the strategy's payoff or exploitability, and a player
using the file never looks them up.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numba
import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.error_text import one_line
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import own_infoset_reach
from efgkit.storage.compact_reader import (
    FLAG_KEYS,
    FLAG_PRUNED,
    HEADER,
    MAGIC,
    MAX_SLOT_BITS,
    VERSION,
    fingerprint_of,
    header_crc,
    key_hash,
    slot_positions,
)
from efgkit.storage.quantization import check_bits as total_of_bits
from efgkit.storage.quantization import EVALUATIONS, quantize, round_for_exploitability

MAX_SEED_TRIES = 64
SLOTS_PER_KEY = 1.23
"""Xor table size factor: three-way peeling succeeds with high probability above 1.222."""
ROUNDINGS = ("exact", "nearest")


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
    """Bytes of the key index (the xor table): what the map from keys to rows costs."""
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
    for player in (0, 1):
        own_infoset_reach(tree.infosets_of(player), tree.infoset_parent_action, tree.action_infoset,
                          tree.infoset_action_offset, tree.infoset_action_offset[:-1].astype(np.int32),
                          behavior, own_reach)
    return own_reach > 0.0


@numba.njit(cache=True)
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


@numba.njit(cache=True)
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


def key_index(keys: list[str], values: np.ndarray, check_bits: int) -> tuple[int, int, np.ndarray]:
    """(seed, segment length, uint64 slots) such that the three slots of key ``i`` XOR to
    ``values[i] << check_bits | fingerprint(key)``: the first seed (from 0) whose three-slot
    hypergraph peels (Graf & Lemire 2020, Algorithm 3)."""
    segment = (int(SLOTS_PER_KEY * len(keys)) + 32) // 3
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


def _pack_bits(table: np.ndarray, slot_bits: int) -> bytes:
    """Slot ``j`` at bits ``[j * slot_bits, (j + 1) * slot_bits)``, least significant first."""
    bits = ((table[:, None] >> np.arange(slot_bits, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    return np.packbits(bits.reshape(-1), bitorder="little").tobytes()


def _pack(weights: np.ndarray, bits: int) -> bytes:
    if bits == 16:
        return weights.astype("<u2").tobytes()
    if bits == 8:
        return weights.astype(np.uint8).tobytes()
    padded = np.zeros(weights.shape[0] + weights.shape[0] % 2, np.uint8)
    padded[: weights.shape[0]] = weights
    return (padded[0::2] | (padded[1::2] << 4)).astype(np.uint8).tobytes()


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


def _layout(tree: GameTree, *, bits: int, flags: int, check_bits: int, seed: int, segment: int,
            slot_bits: int, slots: bytes, num_keys: int, row_weights: np.ndarray,
            row_offsets: np.ndarray, keys: bytes | None) -> bytes:
    """The whole file as bytes (docs/compact-format.md)."""
    if row_offsets[-1] >= 1 << 32:
        raise ParameterError("the compact format holds at most 2**32 - 1 actions in total")
    spec = tree.spec.encode()
    sections = [slots, row_offsets.astype("<u4").tobytes(), _pack(row_weights, bits)]
    sections += [keys] if keys is not None else []
    offsets = []
    position = _aligned(HEADER.size + len(spec))
    for section in sections:
        offsets.append(position)
        position = _aligned(position + len(section))
    size = offsets[-1] + len(sections[-1])
    base = HEADER.size + len(spec)
    body = bytearray(size - base)
    for offset, section in zip(offsets, sections, strict=True):
        body[offset - base:offset - base + len(section)] = section
    fields = [MAGIC, VERSION, bits, flags, num_keys, row_offsets.shape[0] - 1, int(row_offsets[-1]),
              seed, segment, slot_bits, check_bits, 0, offsets[0], offsets[1], offsets[2],
              offsets[3] if keys is not None else 0, size, zlib.crc32(body), 0,
              bytes.fromhex(tree.fingerprint), len(spec)]
    fields[18] = header_crc(HEADER.pack(*fields) + spec)
    return HEADER.pack(*fields) + spec + bytes(body)


def export_compact(strategy: Strategy, path: str | os.PathLike, *, bits: int = 8,
                   prune_unreachable: bool = False, with_keys: bool = False, check_bits: int = 8,
                   rounding: str = "exact", evaluations: int = EVALUATIONS,
                   evaluator: BestResponse | None = None, progress=None) -> CompactExport:
    """Write ``strategy`` (on any InfosetMap) as a compact file at ``path`` (atomically).

    ``check_bits``: bits of key fingerprint in the index; a key not in the file is still
    found, playing some row, with probability ``2**-check_bits`` (0: never detected).
    ``with_keys`` also stores the keys, and readers then compare them (and can list them).
    ``rounding``: ``exact`` (``round_for_exploitability``, at most ``evaluations`` exact
    evaluations, ``progress(evaluations done)`` after each row) or ``nearest`` (largest
    remainder).
    """
    total = total_of_bits(bits)
    if rounding not in ROUNDINGS:
        raise ParameterError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    infoset_map = strategy.infoset_map
    tree = infoset_map.tree
    row_bits = max(int(infoset_map.num_abstract - 1).bit_length(), 0)
    if not 0 <= check_bits <= MAX_SLOT_BITS - 32:
        raise ParameterError(f"check_bits must be between 0 and {MAX_SLOT_BITS - 32}, "
                             f"got {check_bits}")
    slot_bits = max(row_bits + check_bits, 1)
    nearest_nash_conv = None
    if rounding == "exact":
        chosen = round_for_exploitability(strategy, bits, evaluations=evaluations,
                                          evaluator=evaluator, progress=progress)
        weights, nearest_nash_conv = chosen.weights, chosen.nash_conv_largest_remainder
    else:
        weights = quantize(strategy.probabilities, infoset_map.abstract_action_offset, bits)
    dequantized_rows = weights / total
    behavior = dequantized_rows[infoset_map.abstract_action_of]
    kept = reachable_infosets(tree, behavior) if prune_unreachable else np.ones(tree.num_infosets,
                                                                                   bool)
    infosets = np.flatnonzero(kept)
    used_rows = np.unique(infoset_map.abstract_of[infosets])
    new_row = np.full(infoset_map.num_abstract, -1, np.int64)
    new_row[used_rows] = np.arange(used_rows.shape[0])
    counts = infoset_map.abstract_num_actions[used_rows].astype(np.int64)
    row_offsets = np.zeros(used_rows.shape[0] + 1, np.int64)
    np.cumsum(counts, out=row_offsets[1:])
    starts = infoset_map.abstract_action_offset[used_rows]
    row_weights = weights[np.repeat(starts, counts) + np.arange(row_offsets[-1])
                          - np.repeat(row_offsets[:-1], counts)] if counts.size else weights[:0]
    keys = [tree.infoset_keys[i] for i in infosets]
    rows_of_keys = new_row[infoset_map.abstract_of[infosets]]
    seed, segment, table = key_index(keys, rows_of_keys, check_bits) if keys else (
        0, 0, np.zeros(0, np.uint64))
    slots = _pack_bits(table, slot_bits)
    data = _layout(tree, bits=bits, flags=FLAG_PRUNED * prune_unreachable | FLAG_KEYS * with_keys,
                   check_bits=check_bits, seed=seed, segment=segment, slot_bits=slot_bits,
                   slots=slots, num_keys=len(keys), row_weights=row_weights,
                   row_offsets=row_offsets,
                   keys=_key_section(keys, rows_of_keys, used_rows.shape[0]) if with_keys else None)
    try:
        with atomic_output_path(path) as temporary:
            temporary.write_bytes(data)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({one_line(exc)})") from exc
    played = np.where(np.repeat(kept, tree.infoset_num_actions), behavior,
                      1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions))
    return CompactExport(
        path=str(path), bytes=len(data), bits=bits, infosets=len(keys),
        infosets_pruned=int(tree.num_infosets - len(keys)), rows=int(used_rows.shape[0]),
        index_bytes=len(slots), dequantized=Strategy(InfosetMap.identity(tree), played),
        max_abs_error=float(np.max(np.abs(dequantized_rows - strategy.probabilities), initial=0.0)),
        nash_conv_nearest=nearest_nash_conv,
    )

