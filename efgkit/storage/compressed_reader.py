"""A round's bucket table compressed with random access (bucket method ``compressed table``,
compact format 10; docs/compact-format.md "Compressed bucket tables"), read with the
Python standard library only, as ``compact_reader`` (which uses it) and the C reader
(``efgs_c/efgs_compressed.c``) do.

A hand's bucket is almost a function of its ranks: where no flush can matter, the suits
change no feature (at most the card removal of suited opponent classes), so every suit
variant of a rank pattern has one bucket. The table therefore stores a *prediction* per
*pattern* and the *residuals* of the canonical hands:

* the pattern of (hole cards, board) is (the hole ranks as a multiset, the board ranks as
  a multiset, and with ``flush_states`` the flush state: the most board cards of one suit
  ``m`` and the most hole cards in a suit holding ``m`` board cards ``h``), numbered densely
  (``pattern_index``); the *base* table holds one bucket per pattern, ``bits_r`` bits each;
* the residual ``bucket - base[pattern]`` of every canonical hand, in canonical-index order,
  is coded in blocks of ``E`` hands with one canonical Huffman code (Huffman 1952; canonical
  as in DEFLATE, RFC 1951 §3.2.2; most significant bit first, at most ``MAX_CODE_LENGTH``
  bits): symbol ``r + B - 1`` for a residual ``r != 0``, symbol ``2 B - 1 + k - 1`` for a
  run of ``k`` zero residuals (runs end at a block's end). A block index holds each block's
  first bit, so a lookup computes one pattern and decodes at most ``E`` symbols of one block.

Layout (little-endian; ``COMPRESSED_HEAD``): coding (1), longest code ``L``, flush states
(0 or 1), zero, entries per block ``E``, entries ``N`` (the round's canonical hands),
symbols ``S``, zero (u32), stream bits, patterns ``K``; then the number of codes of each
length 1..L (u32), the symbols in code order (u16), padding to 8 bytes, the base table
(``K`` entries of ``bits_r`` bits, least significant first), padding to 8 bytes, the block
index (u32 first bit per block, ``ceil(N / E)``), padding to 8 bytes, the bit stream.
"""

from __future__ import annotations

import struct
from math import comb

COMPRESSED_HEAD = struct.Struct("<BBBBIQIIQQQ")
"""coding, longest code, flush states, longest code of the base, entries per block, entries,
symbols, symbols of the base, stream bits, patterns, base stream bits."""
RANK_PATTERN_RESIDUALS = 1
MAX_CODE_LENGTH = 24
MAX_BLOCK_ENTRIES = 1 << 12
MAX_COMPRESSED_BUCKETS = (1 << 15) - MAX_BLOCK_ENTRIES
"""Symbols (2 B - 1 residuals and E run lengths) are u16."""
SUITS = 4


class CompressedTableError(ValueError):
    """A damaged compressed table (the compact reader reports it as a corrupted card table)."""


def _aligned(offset: int) -> int:
    return (offset + 7) // 8 * 8


def pattern_count(num_ranks: int, board: int, flush_states: bool) -> int:
    """Patterns of a round: hole-rank multisets x board-rank multisets (x flush states)."""
    count = num_ranks * (num_ranks + 1) // 2 * comb(num_ranks + board - 1, board)
    return count * (3 * board if flush_states and board else 1)


def pattern_index(hand: list[int], board: list[int], num_ranks: int, flush_states: bool) -> int:
    """The dense index of a hand's pattern (card ids ``4 rank + suit``): the hole ranks'
    multiset (``C(high + 1, 2) + low``), then the board ranks' (``sum C(r_j + j - 1, j)``
    over the sorted ranks, j from 1), then the flush state ``3 (m - 1) + h``."""
    low, high = sorted(card >> 2 for card in hand)
    index = high * (high + 1) // 2 + low
    ranks = sorted(card >> 2 for card in board)
    index = index * comb(num_ranks + len(board) - 1, len(board)) + sum(
        comb(rank + j, j + 1) for j, rank in enumerate(ranks))
    if not flush_states or not board:
        return index
    per_suit = [0] * SUITS
    for card in board:
        per_suit[card & 3] += 1
    most = max(per_suit)
    held = max(sum(1 for card in hand if card & 3 == suit) for suit in range(SUITS) if per_suit[suit] == most)
    return index * 3 * len(board) + 3 * (most - 1) + held


def compressed_size(longest: int, symbols: int, base_longest: int, base_symbols: int, patterns: int,
                    entries: int, block_entries: int, stream_bits: int, base_bits: int) -> int:
    """Bytes of a compressed table of these sizes, from its start."""
    size = _aligned(COMPRESSED_HEAD.size + 4 * longest + 2 * symbols + 4 * base_longest + 2 * base_symbols)
    size = _aligned(size + 4 * -(-patterns // block_entries))
    size = _aligned(size + (base_bits + 7) // 8)
    return _aligned(size + 4 * -(-entries // block_entries)) + (stream_bits + 7) // 8


class _Code:
    """One canonical Huffman code and its blocked stream (the residuals', or the base's)."""

    def __init__(self, data, counts_at: int, longest: int, symbols: int, index_at: int, stream_at: int,
                 stream_bits: int, limit_symbol: int) -> None:
        self.counts = struct.unpack_from(f"<{longest}I", data, counts_at)
        self.symbols = struct.unpack_from(f"<{symbols}H", data, counts_at + 4 * longest)
        kraft = sum(count << (longest - length) for length, count in enumerate(self.counts, 1))
        if sum(self.counts) != symbols or kraft > 1 << longest or max(self.symbols) >= limit_symbol:
            raise CompressedTableError("compressed bucket table is corrupted")
        self.data, self.index_at, self.stream_at, self.stream_bits = data, index_at, stream_at, stream_bits

    def _symbol(self, bit: int) -> tuple[int, int]:
        """(symbol, next bit) of the code at ``bit`` (canonical decoding)."""
        code = first = position = 0
        for count in self.counts:
            if bit >= self.stream_bits:
                break
            code |= self.data[self.stream_at + (bit >> 3)] >> (bit & 7) & 1
            bit += 1
            if code - first < count:
                return self.symbols[position + code - first], bit
            position += count
            first = (first + count) << 1
            code <<= 1
        raise CompressedTableError("compressed bucket table is corrupted")

    def value(self, block: int, within: int, buckets: int, accumulate: bool) -> int:
        """The value at position ``within`` of ``block`` (``accumulate``: the sum of the
        block's values up to it)."""
        bit = struct.unpack_from("<I", self.data, self.index_at + 4 * block)[0]
        run_symbol, position, total = 2 * buckets - 1, 0, 0
        while True:
            symbol, bit = self._symbol(bit)
            if symbol >= run_symbol:
                position += symbol - run_symbol + 1
                if position > within:
                    return total if accumulate else 0
            else:
                value = symbol - (buckets - 1)
                if position == within:
                    return total + value if accumulate else value
                total += value
                position += 1


class CompressedRound:
    """One round's compressed table, read from ``data`` at ``offset`` (ending by ``limit``),
    checked against the round: its ``buckets``, canonical hands ``entries``, the deck's
    ``num_ranks`` and the ``board`` cards seen; ``size`` is its length in bytes,
    ``bucket(hand, board, index)`` the bucket of a hand whose canonical index is ``index``."""

    def __init__(self, data, offset: int, limit: int, *, buckets: int, entries: int, num_ranks: int,
                 board: int) -> None:
        if offset + COMPRESSED_HEAD.size > limit:
            raise CompressedTableError("compressed bucket table is out of range")
        (coding, longest, flush_states, base_longest, self.block_entries, self.entries, symbols, base_symbols,
         stream_bits, self.patterns, base_bits) = COMPRESSED_HEAD.unpack_from(data, offset)
        self.flush_states, self.num_ranks, self.buckets = bool(flush_states), num_ranks, buckets
        limit_symbol = 2 * buckets - 1 + self.block_entries
        if (coding != RANK_PATTERN_RESIDUALS or flush_states > 1
                or not 1 <= longest <= MAX_CODE_LENGTH or not 1 <= base_longest <= MAX_CODE_LENGTH
                or not 1 <= self.block_entries <= MAX_BLOCK_ENTRIES or self.entries != entries
                or buckets > MAX_COMPRESSED_BUCKETS or not 1 <= symbols <= limit_symbol
                or not 1 <= base_symbols <= limit_symbol or stream_bits >= 1 << 32 or base_bits >= 1 << 32
                or self.patterns != pattern_count(num_ranks, board, self.flush_states)):
            raise CompressedTableError("compressed bucket table is corrupted")
        self.size = compressed_size(longest, symbols, base_longest, base_symbols, self.patterns, entries,
                                    self.block_entries, stream_bits, base_bits)
        if offset + self.size > limit:
            raise CompressedTableError("compressed bucket table is truncated")
        # sections are aligned to 8 bytes from the table's start (which need not be aligned)
        base_counts_at = offset + COMPRESSED_HEAD.size + 4 * longest + 2 * symbols
        base_index_at = offset + _aligned(base_counts_at + 4 * base_longest + 2 * base_symbols - offset)
        base_blocks = -(-self.patterns // self.block_entries)
        base_stream_at = offset + _aligned(base_index_at - offset + 4 * base_blocks)
        index_at = offset + _aligned(base_stream_at - offset + (base_bits + 7) // 8)
        stream_at = offset + _aligned(index_at - offset + 4 * -(-entries // self.block_entries))
        self.residuals = _Code(data, offset + COMPRESSED_HEAD.size, longest, symbols, index_at, stream_at,
                               stream_bits, limit_symbol)
        self.base = _Code(data, base_counts_at, base_longest, base_symbols, base_index_at, base_stream_at,
                          base_bits, limit_symbol)

    def bucket(self, hand: list[int], board: list[int], index: int) -> int:
        """The bucket of ``hand`` with ``board`` (card ids), canonical index ``index``: its
        pattern's base bucket plus its residual. A damaged table raises CompressedTableError."""
        pattern = pattern_index(hand, board, self.num_ranks, self.flush_states)
        value = (self.base.value(*divmod(pattern, self.block_entries), self.buckets, True)
                 + self.residuals.value(*divmod(index, self.block_entries), self.buckets, False))
        if not 0 <= value < self.buckets:
            raise CompressedTableError("compressed bucket table is corrupted")
        return value
