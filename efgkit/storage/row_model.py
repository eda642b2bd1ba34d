"""Context-modelled rows of a compact file (format 9, docs/compact-format.md "Modelled rows").

A bucket strategy's rows are quantized on one grid (weights summing to ``total``) and coded
with a binary range coder (the LZMA coder's arithmetic: 32-bit range, 12-bit probabilities,
adaptive by a shift of 5) under a context model:

* per row, one bit *empty* (a card table's cell no infoset has);
* per weight ``j < A - 1`` of a row of ``A`` actions, with ``R`` what the weights before it
  leave: a bit *zero*, a bit *all of R* (when ``R >= 2``), else the weight minus one in
  ``g = bit_length(total - 2)`` bits down a binary tree (one context per tree node). The
  *zero* and *all* bits take their context from the weight ``j`` of the previous row of
  ``A`` actions in the block (none, 0, ``R`` or between): buckets are ordered, and
  neighbouring buckets of a betting decision play alike.

Every context's probability starts at the value the file stores (one byte per context,
the writer's count over the whole file), so a block of ``block_rows`` rows, whose first
byte the block index holds, decodes on its own: random access by decoding at most
``block_rows`` rows, no allocation. Readers: ``compact_reader`` and ``efgs_c``.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.storage.compact_reader import (
    MAX_MODEL_ACTIONS,
    MAX_MODEL_TOTAL,
    MODEL_HEAD,
    model_contexts,
)

BLOCK_ROWS = 128
"""Rows per block: 4 bytes of index and one or two bytes of coder flush per block."""
PROBABILITY_BITS = 12
ADAPT_SHIFT = 5


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _shift_low(state, out, length):
    """The LZMA range encoder's ShiftLow: ``state`` = [low, range, cache, cache size]
    (int64); bytes go to ``out`` from ``length``; returns the new length."""
    low = state[0]
    if (low & 0xFFFFFFFF) < 0xFF000000 or (low >> 32) != 0:
        carry = low >> 32
        temp = state[2]
        while True:
            out[length] = (temp + carry) & 0xFF
            length += 1
            temp = 0xFF
            state[3] -= 1
            if state[3] == 0:
                break
        state[2] = (low >> 24) & 0xFF
    state[3] += 1
    state[0] = (low & 0x00FFFFFF) << 8
    return length


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _put(context, bit, probability, counts, state, out, length):
    """Code ``bit`` under ``context``: counted (``counts`` (contexts, 2)) and, when ``state``
    is given (non-empty), range-coded with the adaptive ``probability`` of a zero."""
    counts[context, bit] += 1
    if state.shape[0] == 0:
        return length
    p = probability[context]
    bound = (state[1] >> PROBABILITY_BITS) * p
    if bit == 0:
        state[1] = bound
        probability[context] = p + (((1 << PROBABILITY_BITS) - p) >> ADAPT_SHIFT)
    else:
        state[0] += bound
        state[1] -= bound
        probability[context] = p - (p >> ADAPT_SHIFT)
    while state[1] < (1 << 24):
        state[1] = (state[1] << 8) & 0xFFFFFFFF
        length = _shift_low(state, out, length)
    return length


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _row_bits(weights, lo, actions, total, tree_bits, previous, has_previous, probability, counts,
              state, out, length):
    """Code the weights of one present row (values ``weights[lo:lo + actions]``) against the
    ``previous`` row of its action count (``has_previous``); returns the new length."""
    per = 8 + (1 << tree_bits)
    first = 1 + per * ((actions - 1) * (actions - 2) // 2)
    rest = total
    for j in range(actions - 1):
        if rest == 0:
            break
        w = weights[lo + j]
        base = first + per * j
        kind = 0
        if has_previous:
            predicted = min(previous[j], rest)
            kind = 1 if predicted == 0 else (2 if predicted == rest else 3)
        length = _put(base + kind, 1 if w == 0 else 0, probability, counts, state, out, length)
        if w != 0 and rest >= 2:
            length = _put(base + 4 + kind, 1 if w == rest else 0, probability, counts, state, out, length)
            if w != rest:
                node = 1
                for i in range(tree_bits - 1, -1, -1):
                    b = ((w - 1) >> i) & 1
                    length = _put(base + 8 + node, b, probability, counts, state, out, length)
                    node = 2 * node + b
        rest -= w
    return length


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _code_kernel(weights, row_offsets, present, total, tree_bits, block_rows, probability_init,
                 counts, coding, out, block_start):
    """Every row, block by block (``coding``: range-code into ``out`` with each block's first
    byte in ``block_start``; else only count each context's bits into ``counts``). Returns
    the bytes written."""
    rows = row_offsets.shape[0] - 1
    previous = np.zeros((MAX_MODEL_ACTIONS + 1, MAX_MODEL_ACTIONS), np.int64)
    seen = np.zeros(MAX_MODEL_ACTIONS + 1, np.bool_)
    probability = probability_init.copy()
    state = np.zeros(4 if coding else 0, np.int64)
    length = 0
    for row in range(rows):
        if row % block_rows == 0:
            seen[:] = False
            if coding:
                probability[:] = probability_init
                state[0], state[1], state[2], state[3] = 0, 0xFFFFFFFF, 0, 1
                block_start[row // block_rows] = length
        lo = row_offsets[row]
        actions = row_offsets[row + 1] - lo
        length = _put(0, 0 if present[row] else 1, probability, counts, state, out, length)
        if present[row]:
            length = _row_bits(weights, lo, actions, total, tree_bits, previous[actions], seen[actions],
                               probability, counts, state, out, length)
            for j in range(actions):
                previous[actions, j] = weights[lo + j]
            seen[actions] = True
        if coding and (row % block_rows == block_rows - 1 or row == rows - 1):
            start = block_start[row // block_rows]
            # any value in [low, low + range) decodes the block; the multiple of 2**24 in it
            # ends in zero bytes, which are not stored (range >= 2**24 after every bit)
            state[0] = (state[0] + 0xFFFFFF) & ~np.int64(0xFFFFFF)
            for _ in range(5):
                length = _shift_low(state, out, length)
            out[start:length - 1] = out[start + 1:length].copy()  # the first byte is always 0
            length -= 1
            while length > start and out[length - 1] == 0:  # readers read zeros past a block
                length -= 1
    return length


def tree_bits(total: int) -> int:
    """Bits of a weight between 1 and ``total - 1`` less one (the binary tree's depth)."""
    return max(int(total - 2).bit_length(), 0)


def check_total(total: int) -> None:
    if not 2 <= total <= MAX_MODEL_TOTAL:
        raise ParameterError(f"the modelled rows' grid must be 2 to {MAX_MODEL_TOTAL} steps, got {total}")


def model_rows(weights: np.ndarray, row_offsets: np.ndarray, present: np.ndarray, total: int,
               block_rows: int = BLOCK_ROWS) -> bytes:
    """The modelled rows (what follows the values section's tier bounds in format 9):
    ``weights`` (int64 per value, each present row summing to ``total``), rows by the CSR
    ``row_offsets``, ``present`` (bool per row; False: an empty cell)."""
    check_total(total)
    row_offsets = np.asarray(row_offsets, np.int64)
    actions = np.diff(row_offsets)
    max_actions = int(actions.max(initial=1))
    if max_actions > MAX_MODEL_ACTIONS or actions.min(initial=1) < 1:
        raise ParameterError(f"modelled rows have 1 to {MAX_MODEL_ACTIONS} actions, not {max_actions}")
    weights = np.asarray(weights, np.int64)
    present = np.asarray(present, np.bool_)
    sums = np.add.reduceat(weights, row_offsets[:-1]) if weights.size else np.zeros(0, np.int64)
    if np.any(sums[present] != total) or np.any(weights < 0):
        raise ParameterError(f"every row's weights must be non-negative and sum to {total}")
    depth = tree_bits(total)
    contexts = model_contexts(max_actions, depth)
    counts = np.zeros((contexts, 2), np.int64)
    init = np.full(contexts, 128 << 4, np.int64)
    rows = actions.shape[0]
    blocks = -(-rows // block_rows)
    _code_kernel(weights, row_offsets, present, total, depth, block_rows, init, counts, False,
                 np.zeros(0, np.uint8), np.zeros(0, np.int64))
    seen = counts.sum(axis=1)
    stored = np.where(seen > 0, np.clip(np.rint(256 * (counts[:, 0] + 0.5) / (seen + 1)), 1, 255), 128
                      ).astype(np.int64)
    # at most 12 bits a decision, 10 decisions a weight; a byte a row, 5 bytes of flush a block
    out = np.zeros(16 * int(weights.shape[0]) + 2 * rows + 8 * blocks + 16, np.uint8)
    block_start = np.zeros(blocks, np.int64)
    length = _code_kernel(weights, row_offsets, present, total, depth, block_rows, stored << 4,
                          np.zeros((contexts, 2), np.int64), True, out, block_start)
    if length >= 1 << 32:
        raise ParameterError("modelled rows hold at most 4 GiB of code")
    table = stored.astype(np.uint8).tobytes()
    index_at = (MODEL_HEAD.size + len(table) + 7) // 8 * 8
    stream_at = index_at + 4 * blocks
    head = MODEL_HEAD.pack(block_rows, total, max_actions, blocks, index_at, stream_at, length)
    body = head + table
    return (body + bytes(index_at - len(body)) + block_start.astype("<u4").tobytes()
            + out[:length].tobytes())


__all__ = ["BLOCK_ROWS", "check_total", "model_rows", "tree_bits"]
