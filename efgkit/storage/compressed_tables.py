"""Write a round's canonical-hand -> bucket table compressed with random access (compact
format 10, bucket method ``compressed table``; ``compressed_reader`` and
``efgs_c/efgs_compressed.c`` read it), and the rule that chooses per round among a
computed bucket, a compressed table and a packed table.

A hand's bucket is predicted by its rank pattern (hole and board ranks, and optionally
its flush state: ``compressed_reader.pattern_index``), the most frequent bucket of the
pattern's hands; the residuals ``bucket - prediction`` of the canonical hands, in index
order, are mostly zero and are coded in blocks (zero runs and nonzero residuals as symbols
of one canonical Huffman code, ``row_coding``'s ``huffman_lengths`` and
``canonical_codes``). The writer decodes the whole stream again (the readers' algorithm in
a numba kernel) and refuses to write a table that does not give back every bucket.

The rule (``choose_method``): a lookup may cost at most ``budget`` hand evaluations (a
computed street: ``computed_buckets``) or decode at most ``decode_budget`` entries (a
compressed table: its block); among the affordable methods the smallest in bytes is chosen
(the packed table is always affordable). The file records both parameters (the card
table's rule record, format 10) and the export reports every candidate's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numba
import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.storage.compressed_reader import (
    COMPRESSED_HEAD,
    MAX_BLOCK_ENTRIES,
    MAX_CODE_LENGTH,
    MAX_COMPRESSED_BUCKETS,
    RANK_PATTERN_RESIDUALS,
    compressed_size,
    pattern_count,
)
from efgkit.storage.row_coding import canonical_codes, huffman_lengths

BLOCK_ENTRIES = 64
"""Hands per block: a lookup decodes at most 64 symbols, and the block index costs 0.5 bits
per hand."""
DEFAULT_DECODE_BUDGET = 256
"""Hands a compressed-table lookup may decode by default (the rule's second parameter)."""
UNINDEX_CHUNK = 1 << 20
METHOD_NAMES = ("table", "compressed", "computed")


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _patterns(cards, num_ranks, flush_states, binomial, out):
    """The pattern of every hand (``compressed_reader.pattern_index``): ``cards`` int8
    (n, 2 + board) canonical hands, ``binomial`` int64 (num_ranks + 6, 7) Pascal's triangle;
    into ``out`` (int64 per hand)."""
    board = cards.shape[1] - 2
    boards = binomial[num_ranks + board - 1, board] if board else 1
    ranks = np.empty(max(board, 1), np.int64)
    for i in range(cards.shape[0]):
        low, high = cards[i, 0] >> 2, cards[i, 1] >> 2
        if low > high:
            low, high = high, low
        index = high * (high + 1) // 2 + low
        for j in range(board):
            ranks[j] = cards[i, 2 + j] >> 2
        ranks[:board].sort()
        board_index = 0
        for j in range(board):
            board_index += binomial[ranks[j] + j, j + 1]
        index = index * boards + board_index
        if flush_states and board:
            per_suit = np.zeros(4, np.int64)
            for j in range(board):
                per_suit[cards[i, 2 + j] & 3] += 1
            most = per_suit.max()
            held = 0
            for suit in range(4):
                if per_suit[suit] == most:
                    here = ((cards[i, 0] & 3) == suit) + ((cards[i, 1] & 3) == suit)
                    held = max(held, here)
            index = index * 3 * board + 3 * (most - 1) + held
        out[i] = index


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _symbols(residuals, block_entries, offset, run_symbol, out):
    """The symbol stream of the residuals (int64 per hand): ``r + offset`` for ``r != 0``,
    ``run_symbol + k - 1`` for a run of ``k`` zeros within a block; into ``out``, returns
    the symbols written and, per block, the position of its first symbol (``out`` is
    int64 (n,), the starts int64 (blocks,))."""
    count = 0
    blocks = (residuals.shape[0] + block_entries - 1) // block_entries
    starts = np.empty(blocks, np.int64)
    for block in range(blocks):
        starts[block] = count
        end = min((block + 1) * block_entries, residuals.shape[0])
        i = block * block_entries
        while i < end:
            if residuals[i] != 0:
                out[count] = residuals[i] + offset
                i += 1
            else:
                run = 0
                while i < end and residuals[i] == 0:
                    run += 1
                    i += 1
                out[count] = run_symbol + run - 1
            count += 1
    return count, starts


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _emit(symbols, codes, lengths, starts, out):
    """Symbol ``k``'s code (most significant bit first) at bit ``starts[k]`` of ``out``
    (uint8, zeros; bit i is bit ``i & 7`` of byte ``i >> 3``)."""
    for k in range(symbols.shape[0]):
        symbol, bit = symbols[k], starts[k]
        length = lengths[symbol]
        for b in range(length):
            if (codes[symbol] >> np.uint64(length - 1 - b)) & np.uint64(1):
                out[(bit + b) >> 3] |= np.uint8(1 << ((bit + b) & 7))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _decode_residuals(stream, block_index, entries, block_entries, counts, symbols, offset, run_symbol, out):
    """Decode every block's residuals as a reader does (canonical decoding, codes per length
    ``counts[1..]``) into ``out`` (int64 per hand); returns the first hand a code or run
    could not be read for (past its length limit, the stream, or its block), else -1."""
    stream_bits = stream.shape[0] * 8
    longest = counts.shape[0] - 1
    for block in range(block_index.shape[0]):
        bit = block_index[block]
        i = block * block_entries
        end = min(i + block_entries, entries)
        while i < end:
            code = first = position = 0
            symbol = -1
            for length in range(1, longest + 1):
                if bit >= stream_bits:
                    return i
                code |= (stream[bit >> 3] >> (bit & 7)) & 1
                bit += 1
                if code - first < counts[length]:
                    symbol = symbols[position + code - first]
                    break
                position += counts[length]
                first = (first + counts[length]) << 1
                code <<= 1
            if symbol < 0:
                return i
            if symbol >= run_symbol:
                run = symbol - run_symbol + 1
                if i + run > end:
                    return i
                out[i:i + run] = 0
                i += run
            else:
                out[i] = symbol - offset
                i += 1
    return -1


def _binomials(num_ranks: int) -> np.ndarray:
    table = np.zeros((num_ranks + 7, 7), np.int64)
    for n in range(table.shape[0]):
        for k in range(7):
            table[n, k] = comb(n, k)
    return table


def hand_patterns(hands: np.ndarray, num_ranks: int, flush_states: bool) -> np.ndarray:
    """int64 (n,): the pattern of each hand (int8 (n, 2 + board) card ids)."""
    out = np.empty(hands.shape[0], np.int64)
    _patterns(np.ascontiguousarray(hands, np.int8), num_ranks, flush_states, _binomials(num_ranks), out)
    return out


def canonical_patterns(num_ranks: int, board: int, flush_states: bool) -> np.ndarray:
    """int64 (canonical hands,): the pattern of every canonical hand of a round, in index
    order (unindexed in chunks)."""
    from efgkit.abstraction.cards.holdem.features import hand_indexer

    indexer = hand_indexer(board, num_ranks)
    size = indexer.round_size(1 if board else 0)
    out = np.empty(size, np.int64)
    for start in range(0, size, UNINDEX_CHUNK):
        stop = min(start + UNINDEX_CHUNK, size)
        hands = indexer.unindex(1 if board else 0, np.arange(start, stop))
        out[start:stop] = hand_patterns(hands, num_ranks, flush_states)
    return out


def _mode_per_pattern(patterns: np.ndarray, labels: np.ndarray, num_patterns: int,
                      buckets: int) -> np.ndarray:
    """int64 (num_patterns,): the most frequent bucket of each pattern's hands (the lowest on
    a tie; a pattern no hand has copies the one before it, 0 before any)."""
    keys, counts = np.unique(patterns * buckets + labels, return_counts=True)
    pattern, label = keys // buckets, keys % buckets
    order = np.lexsort((label, -counts, pattern))
    first = np.ones(order.shape[0], bool)
    first[1:] = pattern[order][1:] != pattern[order][:-1]
    used = np.zeros(num_patterns, bool)
    base = np.zeros(num_patterns, np.int64)
    used[pattern[order][first]] = True
    base[pattern[order][first]] = label[order][first]
    # a pattern no hand has copies the one before it: a zero difference in the coded base
    return base[np.maximum.accumulate(np.where(used, np.arange(num_patterns), 0))]


@dataclass
class CompressedTable:
    """A compressed table's bytes and what the rule weighs."""

    data: bytes
    entries: int
    block_entries: int
    flush_states: bool
    patterns: int
    packed_bytes: int
    """Bytes of the packed table it replaces (``ceil(log2 B)`` bits per entry)."""
    nonzero_residuals: int

    @property
    def bits_per_entry(self) -> float:
        return 8 * len(self.data) / max(self.entries, 1)


def _coded(values: np.ndarray, block_entries: int, buckets: int) -> tuple:
    """A stream of ``values`` (int64, each in ``(-buckets, buckets)``) in blocks: (codes per
    length 0..L int64, symbols in code order int64, block index int64, stream uint8 of its
    bits), checked by decoding it back."""
    offset, run_symbol = buckets - 1, 2 * buckets - 1
    symbols = np.empty(values.shape[0], np.int64)
    count, block_symbol = _symbols(values, block_entries, offset, run_symbol, symbols)
    symbols = symbols[:count]
    frequencies = np.bincount(symbols, minlength=run_symbol + block_entries).astype(np.int64)
    lengths = huffman_lengths(frequencies, MAX_CODE_LENGTH)
    codes, order, counts = canonical_codes(lengths)
    starts = np.zeros(count + 1, np.int64)
    np.cumsum(lengths[symbols], out=starts[1:])
    if starts[-1] >= 1 << 32:
        raise ParameterError("a compressed table's stream holds less than 2**32 bits")
    stream = np.zeros((int(starts[-1]) + 7) // 8, np.uint8)
    _emit(symbols, codes, lengths, starts, stream)
    block_index = starts[block_symbol]
    decoded = np.empty(values.shape[0], np.int64)
    bad = _decode_residuals(stream, block_index, values.shape[0], block_entries, counts, order, offset,
                            run_symbol, decoded)
    if bad >= 0 or not np.array_equal(decoded, values):
        raise FileFormatError("the compressed bucket table does not decode to its buckets")
    return counts, order, block_index, stream, int(starts[-1])


def compress_table(labels: np.ndarray, buckets: int, num_ranks: int, board: int, *,
                   block_entries: int = BLOCK_ENTRIES, flush_states: bool | None = None) -> CompressedTable:
    """The compressed table of ``labels`` (int, the bucket of every canonical hand of a round
    with ``board`` board cards of a ``num_ranks``-rank deck, below ``buckets``), checked by
    decoding it whole. ``flush_states`` None: the smaller of with and without."""
    if flush_states is None:
        tables = [compress_table(labels, buckets, num_ranks, board, block_entries=block_entries,
                                 flush_states=states) for states in (False, True)]
        return min(tables, key=lambda table: len(table.data))
    labels = np.ascontiguousarray(labels, np.int64)
    entries = labels.shape[0]
    if not 1 <= block_entries <= MAX_BLOCK_ENTRIES:
        raise ParameterError(f"hands per block must be 1 to {MAX_BLOCK_ENTRIES}, got {block_entries}")
    if buckets > MAX_COMPRESSED_BUCKETS or entries == 0 or labels.min() < 0 or labels.max() >= buckets:
        raise ParameterError(f"a compressed table holds 1 to {MAX_COMPRESSED_BUCKETS:,} buckets, "
                             f"every entry below the round's count")
    num_patterns = pattern_count(num_ranks, board, flush_states)
    patterns = canonical_patterns(num_ranks, board, flush_states)
    if patterns.shape[0] != entries:
        raise ParameterError(f"{entries:,} buckets for a round of {patterns.shape[0]:,} canonical hands")
    base = _mode_per_pattern(patterns, labels, num_patterns, buckets)
    residuals = labels - base[patterns]
    # the base table as differences along the pattern order, from 0 at each block's start
    base_deltas = np.diff(base, prepend=0)
    base_deltas[::block_entries] = base[::block_entries]
    streams = [_coded(base_deltas, block_entries, buckets), _coded(residuals, block_entries, buckets)]
    base_counts, base_order, base_index, base_stream, base_bits = streams[0]
    counts, order, index, stream, bits = streams[1]
    head = COMPRESSED_HEAD.pack(RANK_PATTERN_RESIDUALS, counts.shape[0] - 1, int(flush_states),
                                base_counts.shape[0] - 1, block_entries, entries, order.shape[0],
                                base_order.shape[0], bits, num_patterns, base_bits)
    data = _padded(head + counts[1:].astype("<u4").tobytes() + order.astype("<u2").tobytes()
                   + base_counts[1:].astype("<u4").tobytes() + base_order.astype("<u2").tobytes())
    data += _padded(base_index.astype("<u4").tobytes()) + _padded(base_stream.tobytes())
    data += _padded(index.astype("<u4").tobytes()) + stream.tobytes()
    if len(data) != compressed_size(counts.shape[0] - 1, order.shape[0], base_counts.shape[0] - 1,
                                    base_order.shape[0], num_patterns, entries, block_entries, bits,
                                    base_bits):
        raise FileFormatError("the compressed bucket table's layout is inconsistent")
    return CompressedTable(data, entries, block_entries, flush_states, num_patterns,
                           (entries * max(int(buckets - 1).bit_length(), 0) + 7) // 8,
                           int(np.count_nonzero(residuals)))


def _decoded_stream(code, entries: int, block_entries: int, buckets: int) -> np.ndarray:
    """int64 (entries,): every value of one coded stream of a table (a reader's ``_Code``)."""
    counts = np.concatenate([[0], np.asarray(code.counts, np.int64)])
    blocks = -(-entries // block_entries)
    index = np.frombuffer(code.data, "<u4", blocks, code.index_at).astype(np.int64)
    stream = np.frombuffer(code.data, np.uint8, (code.stream_bits + 7) // 8, code.stream_at)
    out = np.empty(entries, np.int64)
    if _decode_residuals(stream, index, entries, block_entries, counts, np.asarray(code.symbols, np.int64),
                         buckets - 1, 2 * buckets - 1, out) >= 0:
        raise FileFormatError("compressed bucket table is corrupted")
    return out


def decoded_table(table, board: int) -> np.ndarray:
    """int64 (canonical hands,): every bucket of a compressed table (a reader's
    ``CompressedRound`` of a round with ``board`` board cards), decoded whole: what a reader
    returns for each canonical hand."""
    buckets, block_entries = table.buckets, table.block_entries
    deltas = _decoded_stream(table.base, table.patterns, block_entries, buckets)
    sums = np.cumsum(deltas)
    base = sums - np.concatenate([[0], sums])[np.arange(table.patterns) // block_entries * block_entries]
    labels = base[canonical_patterns(table.num_ranks, board, table.flush_states)] + _decoded_stream(
        table.residuals, table.entries, block_entries, buckets)
    if labels.min(initial=0) < 0 or labels.max(initial=0) >= buckets:
        raise FileFormatError("compressed bucket table is corrupted")
    return labels


def _padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % 8)


def choose_method(table_bytes: int, compressed: CompressedTable | None, computed_bytes: int | None,
                  evaluations: int | None, *, budget: int, decode_budget: int) -> str:
    """The rule: among the packed table (always affordable), the compressed table (if its
    block decodes at most ``decode_budget`` entries) and the computed bucket (if one lookup
    costs at most ``budget`` hand evaluations), the smallest in bytes ("table",
    "compressed" or "computed"; a tie keeps the cheaper lookup, in that order)."""
    sizes = [(table_bytes, 0, "table")]
    if compressed is not None and compressed.block_entries <= decode_budget:
        sizes.append((len(compressed.data), 1, "compressed"))
    if computed_bytes is not None and evaluations is not None and evaluations <= budget:
        sizes.append((computed_bytes, 2, "computed"))
    return min(sizes)[2]


def check_decode_budget(decode_budget: int) -> int:
    if not isinstance(decode_budget, int) or not 1 <= decode_budget < 1 << 32:
        raise ParameterError(f"the decode budget is entries a lookup may decode, 1 to 2**32 - 1, "
                             f"got {decode_budget!r}")
    return decode_budget


__all__ = ["BLOCK_ENTRIES", "DEFAULT_DECODE_BUDGET", "METHOD_NAMES", "CompressedTable", "canonical_patterns",
           "check_decode_budget", "choose_method", "compress_table", "decoded_table", "hand_patterns"]
