"""Entropy-coded rows of a compact file (format 7, docs/compact-format.md "Coded rows").

A converged strategy's rows are mostly pure or nearly so, and many rows repeat exactly
(the same pure action in thousands of buckets). So a row is coded as one symbol of a
canonical Huffman code (Huffman 1952; canonical codes as in DEFLATE, RFC 1951 §3.2.2)
per *context* (its number of actions ``A`` and field width ``w``, ``compact_reader.row_code``):
symbol 0 is an escape followed by the row's ``A - 1`` fields raw (``w`` bits each, least
significant first), symbol 1 an empty cell, symbols 2.. a dictionary of the context's
most frequent rows (their fields stored once). Codes are at most ``MAX_CODE_LENGTH``
bits. The rows are cut into blocks of ``block_rows`` rows and an index holds each
block's first bit, so a reader decodes at most ``block_rows`` rows to reach any row:
random access without decoding the file. The readers (``compact_reader``, ``efgs_c``)
decode it; the file otherwise is format 6's.
"""

from __future__ import annotations

import heapq

import numba
import numpy as np

from efgkit.storage.compact_reader import (
    CODED_CONTEXT,
    CODED_HEAD,
    MAX_CODE_LENGTH,
    MAX_CODED_SYMBOLS,
    row_code,
)

BLOCK_ROWS = 128
"""Rows per block of the index: 8 bytes per 128 rows, at most 127 rows decoded to reach one."""
ESCAPE, EMPTY, FIRST_ENTRY = 0, 1, 2
DICTIONARY_FIELD_BITS = 32
"""Bits a dictionary entry's field costs (u32): an entry must save more than it costs."""


def huffman_lengths(frequencies: np.ndarray, limit: int = MAX_CODE_LENGTH) -> np.ndarray:
    """int64 code length per symbol (0 for a symbol of frequency 0) of a Huffman code of
    ``frequencies`` (int64 per symbol), at most ``limit`` bits: frequencies are halved
    (keeping every used symbol at least 1) until the longest code fits. One used symbol
    gets a 1-bit code."""
    frequencies = np.asarray(frequencies, np.int64).copy()
    used = np.flatnonzero(frequencies > 0)
    lengths = np.zeros(frequencies.shape[0], np.int64)
    if used.size == 1:
        lengths[used] = 1
        return lengths
    while used.size:
        heap = [(int(frequencies[s]), int(s), (int(s),)) for s in used]
        heapq.heapify(heap)
        depth = np.zeros(frequencies.shape[0], np.int64)
        while len(heap) > 1:
            f1, t1, m1 = heapq.heappop(heap)
            f2, t2, m2 = heapq.heappop(heap)
            depth[list(m1 + m2)] += 1
            heapq.heappush(heap, (f1 + f2, min(t1, t2), m1 + m2))
        if depth.max() <= limit:
            return depth
        frequencies[used] = np.maximum(frequencies[used] >> 1, 1)
    return lengths


def canonical_codes(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(uint64 code per symbol, int64 symbols in code order, int64 count per length
    0..max): the canonical code of ``lengths`` (symbols ordered by (length, symbol),
    consecutive codes within a length, RFC 1951 §3.2.2)."""
    max_length = int(lengths.max(initial=0))
    counts = np.bincount(lengths, minlength=max_length + 1).astype(np.int64)
    counts[0] = 0
    order = np.lexsort((np.arange(lengths.shape[0]), lengths))
    order = order[lengths[order] > 0]
    codes = np.zeros(lengths.shape[0], np.uint64)
    code = 0
    next_code = np.zeros(max_length + 2, np.int64)
    for length in range(1, max_length + 1):
        code = (code + int(counts[length - 1])) << 1
        next_code[length] = code
    for symbol in order:
        length = int(lengths[symbol])
        codes[symbol] = next_code[length]
        next_code[length] += 1
    return codes, order, counts


class _Context:
    """One (actions, field width) context: its dictionary, code and per-row symbols."""

    def __init__(self, actions: int, width: int, fields: np.ndarray, present: np.ndarray) -> None:
        self.actions, self.width = actions, width
        symbols = np.full(fields.shape[0], EMPTY, np.int64)
        entries = np.zeros((0, max(actions - 1, 0)), np.int64)
        if present.any():
            unique, inverse, counts = np.unique(fields[present], axis=0, return_inverse=True,
                                                return_counts=True)
            inverse = inverse.reshape(-1)
            saved = counts * (actions - 1) * width - (actions - 1) * DICTIONARY_FIELD_BITS
            keep = np.flatnonzero((saved > 0) | (actions == 1))
            keep = keep[np.argsort(-counts[keep], kind="stable")][:MAX_CODED_SYMBOLS - FIRST_ENTRY]
            entry_of = np.full(unique.shape[0], ESCAPE, np.int64)
            entry_of[keep] = FIRST_ENTRY + np.arange(keep.shape[0])
            symbols[present] = entry_of[inverse]
            entries = unique[keep]
        self.entries, self.symbols = entries, symbols
        frequencies = np.bincount(symbols, minlength=FIRST_ENTRY + entries.shape[0])
        self.lengths = huffman_lengths(frequencies)
        self.codes, self.order, self.counts = canonical_codes(self.lengths)

    def table(self) -> bytes:
        """Counts per length 1..max (u32), the symbols in code order (u16), the
        dictionary (u32 per field)."""
        return (self.counts[1:].astype("<u4").tobytes() + self.order.astype("<u2").tobytes()
                + self.entries.astype("<u4").tobytes())


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _emit_kernel(row_bit, codes, code_lengths, raw_fields, raw_start, raw_count, raw_width, out):
    """Row ``r``: its code (``code_lengths[r]`` bits, most significant first) from bit
    ``row_bit[r]`` of ``out`` (uint8, zeros; bit i is bit ``i & 7`` of byte ``i >> 3``),
    then ``raw_count[r]`` fields of ``raw_fields`` from ``raw_start[r]``, ``raw_width[r]``
    bits each, least significant first."""
    for row in range(row_bit.shape[0] - 1):
        bit = row_bit[row]
        for b in range(code_lengths[row] - 1, -1, -1):
            if (codes[row] >> np.uint64(b)) & np.uint64(1):
                out[bit >> 3] |= np.uint8(1 << (bit & 7))
            bit += 1
        for j in range(raw_count[row]):
            value = raw_fields[raw_start[row] + j]
            for b in range(raw_width[row]):
                if (value >> b) & 1:
                    out[bit >> 3] |= np.uint8(1 << (bit & 7))
                bit += 1


def code_rows(weights: np.ndarray, row_offsets: np.ndarray, row_bits: np.ndarray,
              present: np.ndarray, block_rows: int = BLOCK_ROWS) -> bytes:
    """The coded rows (what follows the values section's tier bounds in format 7):
    ``weights`` (int64 per value, each row summing to its total), rows by the CSR
    ``row_offsets``, ``row_bits`` (int64 per row: bits per action of its tier),
    ``present`` (bool per row; False: an empty cell)."""
    row_offsets = np.asarray(row_offsets, np.int64)
    actions = np.diff(row_offsets)
    rows = actions.shape[0]
    widths = np.array([row_code(int(b), int(a))[0] for b, a in zip(row_bits, actions, strict=True)],
                      np.int64).reshape(-1)
    field_count = np.maximum(actions - 1, 0)
    keys = np.unique(np.stack([actions, widths], axis=1), axis=0) if rows else np.zeros((0, 2), np.int64)
    symbols = np.zeros(rows, np.int64)
    codes, code_lengths = np.zeros(rows, np.uint64), np.zeros(rows, np.int64)
    contexts = []
    for a, w in keys.tolist():
        members = np.flatnonzero((actions == a) & (widths == w))
        fields = weights[row_offsets[members][:, None] + np.arange(a - 1)[None, :]] if a > 1 else (
            np.zeros((members.shape[0], 0), np.int64))
        context = _Context(a, w, fields, present[members])
        contexts.append(context)
        symbols[members] = context.symbols
        codes[members] = context.codes[context.symbols]
        code_lengths[members] = context.lengths[context.symbols]
    escaped = symbols == ESCAPE
    raw_count = np.where(escaped, field_count, 0)
    row_bit = np.zeros(rows + 1, np.int64)
    np.cumsum(code_lengths + raw_count * widths, out=row_bit[1:])
    stream = np.zeros((int(row_bit[-1]) + 7) // 8, np.uint8)
    _emit_kernel(row_bit, codes, code_lengths, np.asarray(weights, np.int64), row_offsets[:-1],
                 raw_count, widths, stream)
    block_index = row_bit[:-1][::block_rows].astype("<u8").tobytes()
    tables, position = [], CODED_HEAD.size + CODED_CONTEXT.size * len(contexts)
    records = []
    for context in contexts:
        table = context.table()
        records.append(CODED_CONTEXT.pack(context.actions, context.width, context.counts.shape[0] - 1,
                                          FIRST_ENTRY + context.entries.shape[0], position))
        tables.append(table)
        position += len(table)
    index_at = (position + 7) // 8 * 8
    stream_at = index_at + len(block_index)
    head = CODED_HEAD.pack(block_rows, len(contexts), len(block_index) // 8, index_at, stream_at,
                           int(row_bit[-1]))
    body = head + b"".join(records) + b"".join(tables)
    return body + bytes(index_at - len(body)) + block_index + stream.tobytes()


__all__ = ["BLOCK_ROWS", "canonical_codes", "code_rows", "huffman_lengths"]
