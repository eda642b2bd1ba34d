"""Export a strategy to the compact .efgs format: quantized rows indexed by infoset-key hash.

Every original infoset's probabilities are quantized to ``bits`` (16, 8 or 4) bit
integers that sum exactly to ``2**bits - 1``, as slumbot2019's ``Quantize`` does for u8
("always sum to exactly 255"; ../shared/research/anchors_abstraction.md §6), by the
largest-remainder rule: floor every scaled probability, then give the missing units to
the largest remainders. Each probability moves by less than one unit, the smallest
change a rounding that keeps the sum can make. Rows are found through a sorted table of
64-bit BLAKE2b hashes of the infoset keys, so a reader binary-searches a memory-mapped
file instead of loading it. The layout is in docs/compact-format.md; readers are
``compact_reader`` (Python standard library) and ``efgs_c`` (C99).

An abstract strategy is expanded: each original infoset gets its abstract infoset's row.
``prune_unreachable`` leaves out infosets the (quantized) strategy itself never reaches
(its owner's own reach is 0): what is played there never matters to the strategy's
payoff or exploitability, and a player using the file never looks them up.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.error_text import one_line
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import own_infoset_reach
from efgkit.storage.compact_reader import FLAG_KEYS, FLAG_PRUNED, HEADER, MAGIC, VERSION, header_crc, key_hash

BITS = (16, 8, 4)
MAX_SEED_TRIES = 64


@dataclass(eq=False)
class CompactExport:
    """What ``export_compact`` wrote: sizes and the strategy the file plays."""

    path: str
    bytes: int
    bits: int
    infosets: int
    infosets_pruned: int
    dequantized: Strategy
    max_abs_error: float

    @property
    def bytes_per_infoset(self) -> float:
        return self.bytes / max(self.infosets, 1)


def quantize(probabilities: np.ndarray, action_offset: np.ndarray, bits: int) -> np.ndarray:
    """uint32 weights per action summing to ``2**bits - 1`` in every row (largest remainder).

    ``probabilities``: float64 per action, rows given by the CSR ``action_offset``; ties
    between equal remainders go to the lower action index.
    """
    if bits not in BITS:
        raise ParameterError(f"bits must be one of {BITS}, got {bits}")
    total = (1 << bits) - 1
    scaled = np.asarray(probabilities, np.float64) * total
    weights = np.floor(scaled)
    remainder = scaled - weights
    counts = np.diff(action_offset)
    row = np.repeat(np.arange(counts.shape[0]), counts)
    missing = total - np.add.reduceat(weights, action_offset[:-1]) if row.size else weights
    order = np.lexsort((np.arange(row.shape[0]), -remainder, row))
    rank = np.empty(row.shape[0], np.int64)
    rank[order] = np.arange(row.shape[0]) - np.repeat(action_offset[:-1], counts)
    weights += rank < np.repeat(missing, counts)
    return weights.astype(np.uint32)


def reachable_infosets(tree: GameTree, behavior: np.ndarray) -> np.ndarray:
    """bool per infoset: its owner reaches it with positive probability playing ``behavior``."""
    own_reach = np.zeros(tree.num_infosets)
    for player in (0, 1):
        own_infoset_reach(tree.infosets_of(player), tree.infoset_parent_action, tree.action_infoset,
                          tree.infoset_action_offset, tree.infoset_action_offset[:-1].astype(np.int32),
                          behavior, own_reach)
    return own_reach > 0.0


def key_hashes(keys: list[str], seed: int) -> np.ndarray:
    """uint64 hash of every key (the reader's ``key_hash``)."""
    return np.array([key_hash(key, seed) for key in keys], dtype=np.uint64)


def _distinct_hashes(keys: list[str]) -> tuple[int, np.ndarray]:
    """The first seed under which the keys' hashes are all distinct, and those hashes."""
    for seed in range(MAX_SEED_TRIES):
        hashes = key_hashes(keys, seed)
        if np.unique(hashes).shape[0] == hashes.shape[0]:
            return seed, hashes
    raise FileFormatError(f"no hash seed below {MAX_SEED_TRIES} separates the infoset keys; "
                          f"are two keys equal?")


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


def _layout(tree: GameTree, keys: list[str], weights: list[np.ndarray], bits: int, flags: int,
            seed: int, hashes: np.ndarray, with_keys: bool) -> bytes:
    """The whole file as bytes (docs/compact-format.md)."""
    counts = np.array([row.shape[0] for row in weights], np.int64)
    starts = np.zeros(len(weights) + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    if starts[-1] >= 1 << 32:
        raise ParameterError("the compact format holds at most 2**32 - 1 actions in total")
    values = _pack(np.concatenate(weights) if weights else np.zeros(0, np.uint32), bits)
    spec = tree.spec.encode()
    sections = [hashes.astype("<u8").tobytes(), starts.astype("<u4").tobytes(), values]
    if with_keys:
        encoded = [key.encode() for key in keys]
        key_offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(key) for key in encoded], out=key_offsets[1:])
        sections.append(key_offsets.astype("<u4").tobytes() + b"".join(encoded))
    offsets = []
    position = _aligned(HEADER.size + len(spec))
    for section in sections:
        offsets.append(position)
        position = _aligned(position + len(section))
    size = offsets[-1] + len(sections[-1])
    body = bytearray(size - HEADER.size - len(spec))
    base = HEADER.size + len(spec)
    for offset, section in zip(offsets, sections, strict=True):
        body[offset - base:offset - base + len(section)] = section
    payload_crc = zlib.crc32(body)
    keys_at = offsets[3] if with_keys else 0
    fields = [MAGIC, VERSION, bits, flags, len(weights), int(starts[-1]), seed, offsets[0],
              offsets[1], offsets[2], keys_at, size, payload_crc, 0,
              bytes.fromhex(tree.fingerprint), len(spec)]
    header = HEADER.pack(*fields) + spec
    fields[13] = header_crc(header)
    return HEADER.pack(*fields) + spec + bytes(body)


def export_compact(strategy: Strategy, path: str | os.PathLike, *, bits: int = 8,
                   prune_unreachable: bool = False, with_keys: bool = False) -> CompactExport:
    """Write ``strategy`` as a compact file at ``path`` (atomically); returns what was written.

    ``with_keys`` also stores the infoset keys (readers then confirm every lookup and can
    list the keys); without, only their 64-bit hashes are stored.
    """
    if bits not in BITS:
        raise ParameterError(f"--bits must be one of 16, 8 or 4, got {bits}")
    tree = strategy.tree
    total = (1 << bits) - 1
    weights = quantize(strategy.behavior(), tree.infoset_action_offset, bits)
    dequantized = weights / total
    kept = reachable_infosets(tree, dequantized) if prune_unreachable else np.ones(
        tree.num_infosets, bool)
    infosets = np.flatnonzero(kept)
    keys = [tree.infoset_keys[i] for i in infosets]
    seed, hashes = _distinct_hashes(keys)
    order = np.argsort(hashes, kind="stable")
    offsets = tree.infoset_action_offset
    rows = [weights[offsets[infosets[j]]:offsets[infosets[j] + 1]] for j in order]
    data = _layout(tree, [keys[j] for j in order], rows, bits,
                   FLAG_PRUNED * prune_unreachable | FLAG_KEYS * with_keys, seed, hashes[order],
                   with_keys)
    try:
        with atomic_output_path(path) as temporary:
            temporary.write_bytes(data)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({one_line(exc)})") from exc
    played = np.where(np.repeat(kept, tree.infoset_num_actions), dequantized,
                      1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions))
    return CompactExport(
        path=str(path), bytes=len(data), bits=bits, infosets=int(infosets.shape[0]),
        infosets_pruned=int(tree.num_infosets - infosets.shape[0]),
        dequantized=Strategy.from_behavior(tree, played),
        max_abs_error=float(np.max(np.abs(dequantized - strategy.behavior()), initial=0.0)),
    )
