"""Exact best response in the full poker game, streamed board by board and split by first deal.

Johanson et al. 2011 ("Accelerating best response calculation in large extensive games"):
the responder's information sets in the unabstracted game are (public node, hand), so one
walk of the public tree with the opponent's reach vector over hands, maximising per hand at
the responder's nodes, gives the best-response values; terminals cost O(hands)
(``terminal_values.py``). Unlike ``best_response.py`` nothing here is materialised: the
card-independent ``BettingTree`` is walked with each board dealt at its deal nodes.

Batched by level: in limit poker the betting after a deal has the same shape whatever
betting led there (caps reset each round; only the chips differ), so each level's betting
is one *template* (``Templates``) and, for one board, the template is walked once with a
matrix (hands x entering betting sequences) instead of once per sequence: on a flop and
turn, the reach at all 567 HULHE river entries is gathered first (``MODE_RECORD``), then
every river card's betting is walked once with 567 columns, then the turn's betting again
with the river values (``MODE_REPLAY``). Per-node and per-hand work (card lookups, the
showdown's strength order, the bucket of a hand) is shared by the columns and the inner
loops run contiguous over them; the strategy is rearranged once per work item so the
probabilities of one (bucket, action) over the columns are contiguous too (``_slab``).
The last level's deals run block of columns outermost (``_last_deals``), so a block's slab
rows stay in cache across the river cards. Memory is O(depth x hands x entering sequences)
per level plus the per-board tables of one work item, never the public tree.

Work is split at the first board deal (the flop in hold'em): a pre-deal walk records the
opponent's reach at every node where the first board is dealt (an *entry*); each work item
(one first deal) returns the responder's values at every entry; a second pre-deal walk
maximises over them. With a suit-symmetric card abstraction one first deal per suit
isomorphism class is evaluated and its values spread over the class (``suits.py``):
HULHE has 1,755 canonical flops of 22,100. Items run in this process or on Dask
(``ChunkRunner``) and are summed in item order, so the result is bit-identical wherever
they ran.

The strategy is a ``BucketLayout`` strategy (rows per betting decision and bucket).
Values include chance (``BettingTree.chance_weight``): the root total is the responder's
expected utility; NashConv is the sum of both players' best-response values and the game
value is player 0's expected utility under the strategy (a third walk, ``EXPECTED``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations, product
from typing import NamedTuple

import numba
import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import ParameterError, StrategyError
from efgkit.games.csr import offsets_of
from efgkit.io.aligned_arrays import CACHE_LINE, aligned_zeros
from efgkit.io.budget import check_memory
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.io.numba_private import WITHOUT_REFCOUNTS
from efgkit.poker.betting_tree import BettingTree, card_mask
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.codes import ABSTRACT, BEST_RESPONSE, DEAL, EXPECTED, FOLD, SHOWDOWN
from efgkit.poker.dealt_hands import child_key, hand_lists, keep_off_board
from efgkit.poker.depth_first import depth_first, no_close
from efgkit.poker.materialised.public_tree import showdown_tables
from efgkit.poker.suits import canonical_deals, hand_permutations, renamed_deal, suit_permutations
from efgkit.poker.terminal_values import (
    ADD,
    MAXIMISE,
    WRITE,
    fold_payoff,
    fold_values_batch,
    showdown_values_batch,
)

MODE_RECORD, MODE_REPLAY, MODE_DESCEND = np.int64(0), np.int64(1), np.int64(2)
BLOCK = 64
FLOATS_PER_LINE = CACHE_LINE // 8
"""Columns walked together by default (``StreamedEvaluator.block``): a block's matrices stay
in cache."""


class BoardTables(NamedTuple):
    """The boards of one work item. Boards are numbered by *key*: level 0 (no board) is key
    0, level 1 (the item's first deal) key 1, level j >= 2 the keys ``key_start[j] +
    parent * deals[j] + i`` for the ``i``-th combination of that deal.

    ``hand_cards`` int64 (hands, k), ``hand_mask`` int64 (hands,); ``first_mask`` int64 (1,)
    the item's first deal; ``deal_mask`` int64 / ``deal_start`` int64 (levels + 1,): the card
    masks of every combination of level j's deal at ``deal_start[j]`` (levels >= 2);
    ``key_start`` int64 (levels + 1,); ``buckets`` int32 (keys, hands), -1 where the hand
    meets the board; ``showdown_count`` int64 (final keys,), ``showdown_hands`` /
    ``showdown_strength`` int64 (final keys, hands): the valid hands of each final board
    sorted by strength. Suit isomorphism of later deals: ``deal_weight`` float64 (keys,) is 0
    for a board not walked (overlapping, or not the canonical deal of its class under the
    parent board's group), else 1 / |permutations of the parent's group fixing the deal|;
    the group of key ``x``'s board is ``group_perm[group_start[x]:group_start[x + 1]]``,
    indices into ``hand_perm`` int64 (perms, hands): the hand each hand becomes;
    ``multiplicity`` float64 (keys,) the boards of the full game a walked board stands for (its
    suit class below its parent's, times the parent's; 0 where not walked)."""

    hand_cards: np.ndarray
    hand_mask: np.ndarray
    first_mask: np.ndarray
    deal_mask: np.ndarray
    deal_start: np.ndarray
    key_start: np.ndarray
    buckets: np.ndarray
    showdown_count: np.ndarray
    showdown_hands: np.ndarray
    showdown_strength: np.ndarray
    deal_weight: np.ndarray
    group_start: np.ndarray
    group_perm: np.ndarray
    hand_perm: np.ndarray
    multiplicity: np.ndarray


class Templates(NamedTuple):
    """The betting of every level, once: after each deal of level ``j - 1`` the betting tree
    has the same shape (caps reset each round; only the chips differ), so level ``j`` is one
    *template* walked with a matrix of ``columns[j]`` reach vectors — one per deal node it
    hangs below (the *entries* of the level; level 0 has one, the root). Template nodes of
    level ``j`` are ``start[j]:start[j + 1]`` (breadth first, children contiguous), int64 per
    template node: ``kind``, ``first_child`` (template index), ``num_children``, ``leaf`` (the
    number of a deal node among its level's, -1 elsewhere), ``node_base``: the betting node of
    column ``c`` is ``node_of[node_base[p] + c]``; ``slab_start`` the offset of a decision's
    rows in the strategy slab (``_slab``), -1 elsewhere. ``columns`` / ``depth`` int64
    (levels,): the entries and stack depth of each level; ``slab_columns`` int64 (levels,) the
    length of a level's slab rows, ``columns`` rounded up to a cache line of float64 so every
    row starts on one (``aligned_arrays``). Column ``leaf * columns[j] + c`` of level ``j + 1``
    is the deal ``leaf`` below column ``c`` of level ``j``."""

    start: np.ndarray
    columns: np.ndarray
    depth: np.ndarray
    kind: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    leaf: np.ndarray
    node_base: np.ndarray
    node_of: np.ndarray
    slab_start: np.ndarray
    slab_columns: np.ndarray


class WalkBuffers(NamedTuple):
    """Buffers of one walk, float64 blocks in flat arrays. Per level ``j``: ``enter`` /
    ``result`` (hands, columns[j]) at ``entry_start[j]``, the reach entering the level's
    template and the values it returns; ``reach`` / ``values`` (depth, hands, width) at
    ``level_start[j]``, the walk's stack over a block of at most ``block`` columns (the
    length of ``win``); below the last level ``record`` / ``acc``
    (hands, columns[j + 1]) at ``bridge_start[j]``: the reach at its deal nodes and the values
    summed over the next level's deals. int64 (levels, depth): ``node`` (template node),
    ``cursor`` (next child, at depth 0 the next deal), ``action``, ``slot`` (the stack row
    holding the reach at that depth: the responder's children share their parent's),
    ``value_row`` (the stack row holding the values at that depth: a node takes its first
    child's row instead of copying it, so the rows of a level are a permutation); bool
    ``filled`` (levels, depth): a child's values are in (the first is copied, not added); per
    level ``valid`` (levels, hands) / ``valid_count`` the hands off the board (level 0's, every
    hand, filled by ``hand_lists``), ``key``; scratch: ``live`` int64 (widest level,) the
    columns some reach enters (a block is a run of them), ``card_sum`` (cards, block),
    ``column_total`` / ``win`` / ``lose`` (block,); ``row_live`` bool (depth, hands): per row of
    the stack ``reach`` being walked, the hands some column's reach enters — the others are
    pruned (their rows are zero, left out of products and terminal sums: the opponent's zero
    reach, where the strategy never plays to; the responder's own hands are never pruned). Read by
    ``ABSTRACT`` walks only (empty otherwise): ``responder_depth`` int64 (betting nodes,) the
    responder's decisions above each node, ``depth_target`` int64 (1,), ``action_values``
    float64 (strategy actions,) where the action values of the responder's rows at that depth
    are added."""

    entry_start: np.ndarray
    level_start: np.ndarray
    bridge_start: np.ndarray
    enter: np.ndarray
    result: np.ndarray
    reach: np.ndarray
    values: np.ndarray
    record: np.ndarray
    acc: np.ndarray
    node: np.ndarray
    cursor: np.ndarray
    action: np.ndarray
    slot: np.ndarray
    value_row: np.ndarray
    filled: np.ndarray
    valid: np.ndarray
    valid_count: np.ndarray
    key: np.ndarray
    live: np.ndarray
    card_sum: np.ndarray
    column_total: np.ndarray
    win: np.ndarray
    lose: np.ndarray
    row_live: np.ndarray
    responder_depth: np.ndarray
    depth_target: np.ndarray
    action_values: np.ndarray


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _slab(templates, view, strategy, out):
    """``out``: ``strategy`` rearranged per template decision ``p`` as (bucket, action, column)
    at ``slab_start[p]``, so the probabilities of one (bucket, action) over the columns are
    contiguous (rows ``slab_columns[j]`` long, the padding left 0)."""
    for j in range(templates.columns.shape[0]):
        columns, stride = templates.columns[j], templates.slab_columns[j]
        for p in range(templates.start[j], templates.start[j + 1]):
            base = templates.slab_start[p]
            if base < 0:
                continue
            for c in range(columns):
                decision = view.decision_index[templates.node_of[templates.node_base[p] + c]]
                row = view.action_start[decision]
                for x in range(view.action_start[decision + 1] - row):
                    out[base + x * stride + c] = strategy[row + x]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _entry(templates, work, j):
    """Level ``j``'s ``enter`` and ``result``, (hands, columns[j])."""
    shape = (work.valid.shape[1], templates.columns[j])
    start, size = work.entry_start[j], shape[0] * shape[1]
    return work.enter[start:start + size].reshape(shape), work.result[start:start + size].reshape(shape)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _level(templates, work, j, width):
    """Level ``j``'s stack ``reach`` and ``values`` for a block of ``width`` columns,
    (depth, hands, width)."""
    shape = (templates.depth[j], work.valid.shape[1], width)
    start, size = work.level_start[j], shape[0] * shape[1] * shape[2]
    return work.reach[start:start + size].reshape(shape), work.values[start:start + size].reshape(shape)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _bridge(templates, work, j):
    """Level ``j``'s ``record`` and ``acc``, (hands, columns[j + 1])."""
    shape = (work.valid.shape[1], templates.columns[j + 1])
    start, size = work.bridge_start[j], shape[0] * shape[1]
    return work.record[start:start + size].reshape(shape), work.acc[start:start + size].reshape(shape)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _terminal(view, templates, tables, work, player, p, j, cols, reach, live, out, target, combine):
    """Fold or showdown values (with chance) of the responder's valid hands in the block of
    columns ``cols`` from the opponent's ``reach`` (its ``live`` rows): a fold's into ``out``, a
    showdown's ``combined`` (``combine``) into ``target`` with ``out`` its scratch (``target``
    itself when written)."""
    width = out.shape[1]
    weight = view.chance_weight[j]
    kind = templates.kind[p]
    for c in range(width):
        node = templates.node_of[templates.node_base[p] + cols[c]]
        if kind == FOLD:
            work.win[c] = fold_payoff(view.contribution, node, view.folder[node], player) * weight
        else:
            work.win[c] = view.contribution[node, 1 - player] * weight
            work.lose[c] = view.contribution[node, player] * weight
    if kind == FOLD:
        fold_values_batch(reach, tables.hand_cards, work.valid[j, :work.valid_count[j]], work.card_sum,
                          work.column_total, work.win, out, live)
        return
    row = work.key[j] - tables.key_start[j]
    count = tables.showdown_count[row]
    showdown_values_batch(reach, tables.hand_cards, tables.showdown_hands[row, :count],
                          tables.showdown_strength[row, :count], work.card_sum, work.column_total, work.win,
                          work.lose, out, target, combine, live)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _combine(templates, work, player, objective, j, d):
    """How the terminal at depth ``d`` takes part in its parent's values (``terminal_values``'
    codes): WRITE into its own values row (the parent's first child, or ``EXPECTED`` at the
    responder's: ``_gather`` does it), else straight into the parent's row, ADD (the
    opponent's node) or MAXIMISE (``BEST_RESPONSE`` at the responder's) — the same operation
    ``_gather`` would do."""
    if d == 0 or not work.filled[j, d - 1] or templates.kind[work.node[j, d]] == FOLD:
        return np.int64(WRITE)  # a fold is its parent's first child: never combined
    if templates.kind[work.node[j, d - 1]] != player:
        return np.int64(ADD)
    return np.int64(MAXIMISE) if objective == BEST_RESPONSE else np.int64(WRITE)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _open(args, d):
    """Start template node ``work.node[j, d]``: a leaf (terminal, or a deal node: its reach
    noted in ``MODE_RECORD``, the next level's values taken in ``MODE_REPLAY``) is finished
    and True returned; an inner node gets zero sums and its first child next (``args`` as
    ``_walk_block`` packs them: ``depth_first``'s visitors)."""
    view, templates, tables, work, slab, player, objective, mode, j, cols, reach, values = args
    p = work.node[j, d]
    kind = templates.kind[p]
    valid = work.valid[j, :work.valid_count[j]]
    here, live = reach[work.slot[j, d]], work.row_live[work.slot[j, d]]
    if kind == FOLD or kind == SHOWDOWN:
        if mode != MODE_RECORD:
            combine = _combine(templates, work, player, objective, j, d)
            out = values[work.value_row[j, d]]
            target = values[work.value_row[j, d - 1]] if combine != WRITE else out
            _terminal(view, templates, tables, work, player, p, j, cols, here, live, out, target, combine)
        return True
    if kind == DEAL:
        record, acc = _bridge(templates, work, j)
        lo = templates.leaf[p] * templates.columns[j]
        out = values[work.value_row[j, d]]
        for h in valid:
            for c in range(cols.shape[0]):
                if mode == MODE_RECORD:
                    record[h, lo + cols[c]] = here[h, c]
                else:
                    out[h, c] = acc[h, lo + cols[c]]
        return True
    work.cursor[j, d] = 0
    work.filled[j, d] = mode == MODE_RECORD  # values not wanted: nothing to fill
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _next_child(args, d):
    """Set up the next child of template node ``work.node[j, d]`` the opponent reaches in
    some column at ``d + 1`` (node and reach slot); False when none is left (and the node's
    values zero if no child was reached)."""
    view, templates, tables, work, slab, player, objective, mode, j, cols, reach, values = args
    p = work.node[j, d]
    m = templates.num_children[p]
    a = work.cursor[j, d]
    valid = work.valid[j, :work.valid_count[j]]
    if templates.kind[p] == player:
        if a == m:
            return False
        work.slot[j, d + 1] = work.slot[j, d]
    else:
        stride, width = templates.slab_columns[j], reach.shape[2]
        dense = cols[width - 1] - cols[0] == width - 1  # consecutive columns: contiguous slab rows
        key = work.key[j]
        here, child = reach[work.slot[j, d]], reach[d + 1]
        here_live, child_live = work.row_live[work.slot[j, d]], work.row_live[d + 1]
        while a < m:
            alive = False
            for h in valid:
                if not here_live[h]:  # pruned: no reach, no product (the row zero for its readers)
                    child[h, :width] = 0.0
                    child_live[h] = False
                    continue
                base = templates.slab_start[p] + (tables.buckets[key, h] * m + a) * stride
                source, target = here[h], child[h]
                nonzero = False
                if dense:  # a slice: indexed from 0, the loads are contiguous (not gathers)
                    weights = slab[base + cols[0]:base + cols[0] + width]
                    for c in range(width):
                        target[c] = source[c] * weights[c]
                        nonzero |= target[c] != 0.0
                else:
                    for c in range(width):
                        target[c] = source[c] * slab[base + cols[c]]
                        nonzero |= target[c] != 0.0
                child_live[h] = nonzero
                alive |= nonzero
            if alive:
                break
            a += 1
        if a == m:
            if not work.filled[j, d]:
                for h in valid:
                    values[work.value_row[j, d], h] = 0.0
            return False
        work.slot[j, d + 1] = d + 1
    work.action[j, d] = a
    work.cursor[j, d] = a + 1
    work.node[j, d + 1] = templates.first_child[p] + a
    return True


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _add_action_values(view, templates, tables, work, p, j, a, cols, child):
    """Add action ``a``'s values ``child`` (hands, block) at the responder's template node ``p``
    into ``work.action_values``, in the columns whose betting node lies below
    ``work.depth_target[0]`` of the responder's decisions: per hand its row (the node's
    decision, the hand's bucket on the board), times the boards this one stands for."""
    key = work.key[j]
    weight = tables.multiplicity[key]
    m = templates.num_children[p]
    valid = work.valid[j, :work.valid_count[j]]
    for c in range(cols.shape[0]):
        node = templates.node_of[templates.node_base[p] + cols[c]]
        if work.responder_depth[node] != work.depth_target[0]:
            continue
        row = view.action_start[view.decision_index[node]] + a
        for h in valid:
            work.action_values[row + tables.buckets[key, h] * m] += weight * child[h, c]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _gather(args, d):
    """Add the finished child at ``d + 1`` into template node ``work.node[j, d]`` (not in
    ``MODE_RECORD``: no values): a sum at the opponent's nodes; at the responder's the maximum
    (``BEST_RESPONSE``) or the strategy's expectation (``EXPECTED``; ``ABSTRACT`` also adds the
    child's values into the action values, ``_add_action_values``)."""
    view, templates, tables, work, slab, player, objective, mode, j, cols, reach, values = args
    if mode == MODE_RECORD:
        return
    child_kind = templates.kind[work.node[j, d + 1]]
    terminal = child_kind == FOLD or child_kind == SHOWDOWN
    if terminal and _combine(templates, work, player, objective, j, d + 1) != WRITE:
        return  # the terminal combined its values into this node's row itself
    p = work.node[j, d]
    valid = work.valid[j, :work.valid_count[j]]
    width = values.shape[2]
    filled = work.filled[j, d]
    work.filled[j, d] = True
    expected = objective != BEST_RESPONSE and templates.kind[p] == player
    node_row, child_row = work.value_row[j, d], work.value_row[j, d + 1]
    if not filled and not expected:  # the first child reached: its values row becomes the node's
        work.value_row[j, d], work.value_row[j, d + 1] = child_row, node_row
        return
    if templates.kind[p] != player:
        for h in valid:
            for c in range(width):
                values[node_row, h, c] += values[child_row, h, c]
        return
    if objective == BEST_RESPONSE:
        for h in valid:
            for c in range(width):
                values[node_row, h, c] = max(values[node_row, h, c], values[child_row, h, c])
        return
    m = templates.num_children[p]
    stride = templates.slab_columns[j]
    key = work.key[j]
    a = work.action[j, d]
    if objective == ABSTRACT:
        _add_action_values(view, templates, tables, work, p, j, a, cols, values[child_row])
    for h in valid:
        base = templates.slab_start[p] + (tables.buckets[key, h] * m + a) * stride
        parent, child = values[node_row, h], values[child_row, h]
        for c in range(width):
            probability = slab[base + cols[c]]
            parent[c] = parent[c] + probability * child[c] if filled else probability * child[c]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _walk_level(view, templates, tables, work, slab, player, objective, mode, j):
    """Walk level ``j``'s template on the board ``work.key[j]`` from its ``enter`` reach:
    ``MODE_RECORD`` notes the reach at its deal nodes, ``MODE_REPLAY`` / ``MODE_DESCEND`` (the
    last level) leave the values (``objective``) in its ``result``. Blocks of columns one
    after the other (of the columns some reach enters)."""
    columns, block = templates.columns[j], work.win.shape[0]
    enter, result = _entry(templates, work, j)
    valid = work.valid[j, :work.valid_count[j]]
    live = _live_columns(enter, valid, work.live)
    if live.shape[0] < columns:  # dead columns: nothing reaches them, their values are 0
        target = _bridge(templates, work, j)[0] if mode == MODE_RECORD else result
        for h in valid:
            target[h] = 0.0
    for start in range(0, live.shape[0], block):
        cols = live[start:start + block]
        _walk_block(view, templates, tables, work, slab, player, objective, mode, j, cols, enter)
        if mode != MODE_RECORD:
            values = _level(templates, work, j, cols.shape[0])[1][work.value_row[j, 0]]
            for h in valid:
                row, total = values[h], result[h]
                for c in range(cols.shape[0]):
                    total[cols[c]] = row[c]


@numba.njit(cache=True, no_cfunc_wrapper=True, **WITHOUT_REFCOUNTS)
def _walk_block(view, templates, tables, work, slab, player, objective, mode, j, cols, source):
    """Walk level ``j``'s template on the board ``work.key[j]`` for the columns ``cols``, the
    reach entering them the rows of ``source`` (hands, columns[j]) of the board's valid hands;
    the values (``objective``, not in ``MODE_RECORD``) are left in row ``work.value_row[j, 0]``
    of the level's stack.
    ``depth_first`` with this module's visitors; children no column of the block reaches are
    skipped. Returns False (and walks nothing) when no reach enters the block. The visitors
    are inlined and this is compiled without reference counting (``WITHOUT_REFCOUNTS``:
    nothing is allocated, every array is the caller's): a helper call counted the
    references of the arrays of its NamedTuples, 14% of the time."""
    valid = work.valid[j, :work.valid_count[j]]
    width = cols.shape[0]
    reach, values = _level(templates, work, j, width)
    alive = False
    first = cols[0]
    dense = cols[width - 1] - first == width - 1
    for h in valid:
        row, target = source[h], reach[0, h]
        nonzero = False
        if dense:
            row = row[first:first + width]
            for c in range(width):
                target[c] = row[c]
                nonzero |= target[c] != 0.0
        else:
            for c in range(width):
                target[c] = row[cols[c]]
                nonzero |= target[c] != 0.0
        work.row_live[0, h] = nonzero
        alive |= nonzero
    if not alive:
        return False
    work.node[j, 0] = templates.start[j]
    work.slot[j, 0] = 0
    for row in range(templates.depth[j]):
        work.value_row[j, row] = row
    depth_first(_open, _next_child, no_close, _gather,
                (view, templates, tables, work, slab, player, objective, mode, j, cols, reach, values),
                np.int64(0))
    return True


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _live_columns(enter, valid, out):
    """The columns of ``enter`` (hands, columns) with some reach in the rows ``valid``, a
    prefix of ``out``."""
    columns = enter.shape[1]
    flags = out[:columns]
    flags[:] = 0
    for h in valid:
        row = enter[h]
        for c in range(columns):
            if row[c] != 0.0:
                flags[c] = 1
    count = 0
    for c in range(columns):
        if flags[c]:
            out[count] = c
            count += 1
    return out[:count]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _deal_board(tables, work, j, mask):
    """Board ``j`` = board ``j - 1`` plus the cards ``mask``: its valid hands."""
    work.valid_count[j] = keep_off_board(tables.hand_mask, work.valid[j - 1, :work.valid_count[j - 1]], mask,
                                         work.valid[j])


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _deal_level(tables, work, j, mask, source, target):
    """Board ``j`` = board ``j - 1`` plus the cards ``mask``: its valid hands and their rows of
    ``source`` copied into ``target`` (hands, columns). Returns whether any reach is left."""
    _deal_board(tables, work, j, mask)
    alive = False
    for h in work.valid[j, :work.valid_count[j]]:
        target[h] = source[h]
        if not alive:
            for r in source[h]:
                if r != 0.0:
                    alive = True
                    break
    return alive


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _next_deal(args, j):
    """Set up the next deal of level ``j + 1`` below board ``work.key[j]`` worth walking (a
    canonical deal of its class that leaves some reach): its key and entering reach (``args``
    as ``_item`` packs them: ``depth_first``'s visitors)."""
    view, templates, tables, work, slab, player, objective = args
    lo = tables.deal_start[j + 1]
    deals = tables.deal_start[j + 2] - lo
    record, _ = _bridge(templates, work, j)
    enter, _ = _entry(templates, work, j + 1)
    for i in range(work.cursor[j, 0], deals):
        next_key = child_key(tables, j, work.key[j], i)
        if tables.deal_weight[next_key] != 0.0 and _deal_level(tables, work, j + 1, tables.deal_mask[lo + i],
                                                                record, enter):
            work.cursor[j, 0] = i + 1
            work.key[j + 1] = next_key
            return True
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _spread(args, j):
    """Add the values of level ``j + 1`` on its board into level ``j``'s ``acc``, over the
    deal's suit class: its values under every permutation of the group of board ``j``."""
    view, templates, tables, work, slab, player, objective = args
    _, acc = _bridge(templates, work, j)
    _, values = _entry(templates, work, j + 1)
    key = work.key[j]
    weight = tables.deal_weight[work.key[j + 1]]
    valid = work.valid[j + 1, :work.valid_count[j + 1]]
    for x in range(tables.group_start[key], tables.group_start[key + 1]):
        perm = tables.hand_perm[tables.group_perm[x]]
        for h in valid:
            target, source = acc[perm[h]], values[h]
            for c in range(source.shape[0]):
                target[c] += weight * source[c]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _last_deals(view, templates, tables, work, slab, player, objective, j):
    """The deals of the last level ``j + 1`` below board ``work.key[j]``, their values added
    into level ``j``'s ``acc`` as ``_spread`` does, walked block of columns outermost: one
    block of every deal before the next block, so the strategy slab's rows of one block stay
    in cache across the deals (per deal, a block of the last level reads a row of every
    bucket of the opponent's decisions; the slab of all columns does not fit in cache)."""
    k = j + 1
    lo = tables.deal_start[k]
    deals = tables.deal_start[k + 1] - lo
    record, acc = _bridge(templates, work, j)
    live = _live_columns(record, work.valid[j, :work.valid_count[j]], work.live)
    block = work.win.shape[0]
    parent = work.key[j]
    for start in range(0, live.shape[0], block):
        cols = live[start:start + block]
        width = cols.shape[0]
        dense = cols[width - 1] - cols[0] == width - 1
        for i in range(deals):
            key = child_key(tables, j, parent, i)
            weight = tables.deal_weight[key]
            if weight == 0.0:
                continue
            _deal_board(tables, work, k, tables.deal_mask[lo + i])
            work.key[k] = key
            if not _walk_block(view, templates, tables, work, slab, player, objective, MODE_DESCEND, k, cols,
                               record):
                continue
            values = _level(templates, work, k, width)[1][work.value_row[k, 0]]
            valid = work.valid[k, :work.valid_count[k]]
            for x in range(tables.group_start[parent], tables.group_start[parent + 1]):
                perm = tables.hand_perm[tables.group_perm[x]]
                for h in valid:
                    target, source = acc[perm[h]], values[h]
                    if dense:  # a slice indexed from 0: contiguous loads and stores, no scatter
                        target = target[cols[0]:cols[0] + width]
                        for c in range(width):
                            target[c] += weight * source[c]
                    else:
                        for c in range(width):
                            target[cols[c]] += weight * source[c]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _start_level(args, j):
    """Walk level ``j`` down to its deal nodes (True: it was the last level, its values are
    done), ready for the deals of level ``j + 1``."""
    view, templates, tables, work, slab, player, objective = args
    if j + 1 == templates.columns.shape[0]:
        _walk_level(view, templates, tables, work, slab, player, objective, MODE_DESCEND, j)
        return True
    _walk_level(view, templates, tables, work, slab, player, objective, MODE_RECORD, j)
    _, acc = _bridge(templates, work, j)
    for h in work.valid[j, :work.valid_count[j]]:
        acc[h] = 0.0
    work.cursor[j, 0] = 0
    if j + 2 == templates.columns.shape[0]:  # the deals of the last level, all at once
        _last_deals(view, templates, tables, work, slab, player, objective, j)
        work.cursor[j, 0] = tables.deal_start[j + 2] - tables.deal_start[j + 1]
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _replay_level(args, j):
    """Walk level ``j`` again, every deal below its board in: its values from their sums."""
    view, templates, tables, work, slab, player, objective = args
    _walk_level(view, templates, tables, work, slab, player, objective, MODE_REPLAY, j)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _pre_deal(view, templates, tables, work, slab, player, objective, mode):
    """The walk of level 0, before the first deal (``MODE_RECORD``: the entries' reach into
    level 0's ``record``; ``MODE_REPLAY``: their values from its ``acc``; ``MODE_DESCEND``: a
    game without boards). Returns the responder's total."""
    level = np.int64(0)
    enter, result = _entry(templates, work, level)
    enter[:] = 1.0
    work.key[0] = 0
    _walk_level(view, templates, tables, work, slab, player, objective, mode, level)
    return result.sum()


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _item(view, templates, tables, work, slab, player, objective, out):
    """Values at every entry of the item's first deal into ``out`` (hands, entries), from the
    entries' reach in level 0's ``record``: each level walked once per board with every
    entering betting sequence as a column, the deals of the next level in between
    (``depth_first`` over the boards)."""
    out[:] = 0.0
    j = np.int64(1)
    record, _ = _bridge(templates, work, j - 1)
    enter, result = _entry(templates, work, j)
    if not _deal_level(tables, work, j, tables.first_mask[0], record, enter):
        return
    work.key[1] = 1
    depth_first(_start_level, _next_deal, _replay_level, _spread,
                (view, templates, tables, work, slab, player, objective), j)
    for h in work.valid[1, :work.valid_count[1]]:
        out[h] = result[h]


class StreamedEvaluator:
    """Best response, NashConv and game value of ``layout`` strategies in the full game."""

    def __init__(self, layout: BucketLayout) -> None:
        self.layout = layout
        betting = layout.betting
        self.betting = betting
        game = betting.game
        cards = game.card_structure
        self.num_suits = cards.num_suits
        n = betting.num_cards
        self.hand_cards, self.hand_mask = betting.hands()
        self.view = layout.view()
        self.templates, self.slab_size = _templates(betting, layout)
        self.block = BLOCK
        """Columns (entering betting sequences) walked together; any width gives the same values."""
        check_memory(self.workspace_bytes(), f"a streamed best response on {game.spec} (one walk's buffers, "
                     f"per process)", "choose coarser buckets or a game with fewer betting sequences")
        self.paths: list[str] = []
        """The walk of each value computed since the last ``evaluate``: "card-blind" or "general"."""
        self.symmetric = layout.abstraction.suit_symmetric and not game.deal_by_rank and self.num_suits > 1
        self.suit_perms = suit_permutations(self.num_suits).tolist()
        self.hand_perms = (hand_permutations(self.hand_cards, self.num_suits) if self.symmetric
                           else np.arange(self.hand_cards.shape[0], dtype=np.int64)[None, :])
        if betting.num_levels > 1:
            size = int(betting.deal_size[0])
            if self.symmetric:
                self.items, stabilisers = canonical_deals(n, self.num_suits, size)
                self.item_weight = [1.0 / s for s in stabilisers]
            else:
                self.items = list(combinations(range(n), size))
                self.item_weight = [1.0] * len(self.items)
        else:
            self.items, self.item_weight = [], []

    # ------------------------------------------------------------------ tables
    def level_boards(self, first: tuple[int, ...] | None) -> list[list[tuple]]:
        """Per level, per key: (board or None where deals overlap or the deal is not the
        canonical one of its class, the suit permutations fixing the board, the key's weight:
        1 / the permutations of the parent's group fixing the new deal). Level 0 is the
        empty board; without suit symmetry every group is the identity."""
        identity = [0]
        levels: list[list[tuple]] = [[((), identity, 1.0)]]
        if first is None:
            return levels
        perms = self.suit_perms if self.symmetric else self.suit_perms[:1]
        fixing = [g for g, perm in enumerate(perms) if renamed_deal(first, perm) == tuple(sorted(first))]
        levels.append([(tuple(first), fixing, 1.0)])
        n = self.betting.num_cards
        for size in self.betting.deal_size[1:].tolist():
            level = []
            for (parent, group, _), combo in product(levels[-1], combinations(range(n), size)):
                if parent is None or set(parent) & set(combo):
                    level.append((None, identity, 0.0))
                    continue
                images = [renamed_deal(combo, self.suit_perms[g]) for g in group]
                if min(images) != combo:
                    level.append((None, identity, 0.0))
                    continue
                fixing = [g for g, image in zip(group, images, strict=True) if image == combo]
                level.append((parent + combo, fixing, 1.0 / len(fixing)))
            levels.append(level)
        return levels

    def tables(self, first: tuple[int, ...] | None) -> BoardTables:
        """The ``BoardTables`` of the work item dealing ``first`` (None: the pre-deal walk)."""
        betting, n = self.betting, self.betting.num_cards
        boards = self.level_boards(first)
        levels = betting.num_levels
        key_start = np.zeros(levels + 1, np.int64)
        for j in range(levels):
            key_start[j + 1] = key_start[j] + (len(boards[j]) if j < len(boards) else 0)
        sizes = [0, 0, *betting.deal_size[1:].tolist()]
        masks = [[card_mask(combo) for combo in combinations(range(n), size)] if size else []
                 for size in sizes]
        deal_start = offsets_of([len(m) for m in masks])
        deal_mask = np.array([m for level in masks for m in level], np.int64)
        hands = self.hand_cards.shape[0]
        buckets = np.full((int(key_start[levels]), hands), -1, np.int32)
        for j, level in enumerate(boards):
            for i, (cards, _, _) in enumerate(level):
                if cards is None:
                    continue
                board = np.array(cards, np.int64)
                values = self.layout.abstraction.buckets(betting.round_of_level[j], board, self.hand_cards)
                meets = (self.hand_mask & card_mask(board)) != 0
                buckets[key_start[j] + i] = np.where(meets, -1, values)
        final = [cards for cards, _, _ in boards[-1]] if len(boards) == levels else []
        width = sum(betting.deal_size.tolist())
        final_boards = np.zeros((len(final), width), np.int64)
        for i, board in enumerate(final):
            final_boards[i] = board if board is not None else 0
        alive = np.array([board is not None for board in final], np.bool_)
        count, sorted_hands, strength = showdown_tables(betting.game.card_structure, self.hand_cards,
                                                        self.hand_mask, final_boards, alive)
        first_mask = np.array([card_mask(first or ())], np.int64)
        keys = [entry for level in boards for entry in level]
        deal_weight = np.array([weight for _, _, weight in keys], np.float64)
        group_start = offsets_of([len(group) for _, group, _ in keys])
        group_perm = np.array([g for _, group, _ in keys for g in group], np.int64)
        return BoardTables(self.hand_cards, self.hand_mask, first_mask, deal_mask, deal_start, key_start,
                           buckets, count, sorted_hands, strength, deal_weight, group_start, group_perm,
                           self.hand_perms, self._multiplicity(boards))

    def _multiplicity(self, boards: list[list[tuple]]) -> np.ndarray:
        """``BoardTables.multiplicity`` of ``level_boards``' keys: a first deal stands for its
        suit class, a later deal for its class under the parent board's group (``_spread``'s
        images: the group's size times the deal's weight), times what the parent stands for."""
        levels = [np.ones(1)]
        if len(boards) > 1:
            perms = len(self.suit_perms) if self.symmetric else 1
            levels.append(np.array([perms / len(boards[1][0][1])]))
        for level in boards[2:]:
            parents = boards[len(levels) - 1]
            deals = len(level) // len(parents)
            levels.append(np.array([levels[-1][i // deals] * len(parents[i // deals][1]) * weight
                                    for i, (_, _, weight) in enumerate(level)]))
        return np.concatenate(levels)

    def workspace_bytes(self) -> int:
        """Bytes of the float64 blocks of one walk's ``workspace`` (its index arrays are small)."""
        hands, t = self.hand_cards.shape[0], self.templates
        widths = np.minimum(t.columns, self.block)
        return 8 * hands * int(2 * t.columns.sum() + 2 * (t.depth * widths).sum() + 2 * t.columns[1:].sum())

    def workspace(self, depth: np.ndarray | None = None, target: int = 0) -> WalkBuffers:
        """The buffers of one walk (``WalkBuffers``); for an ``ABSTRACT`` walk ``depth`` is the
        responder's ``responder_depth`` and ``target`` the depth whose action values it adds up
        (else its arrays are empty)."""
        hands, t = self.hand_cards.shape[0], self.templates
        levels = t.columns.shape[0]
        widths = np.minimum(t.columns, self.block)

        entry_start, level_start = offsets_of(hands * t.columns), offsets_of(t.depth * hands * widths)
        bridge_start = offsets_of(hands * t.columns[1:])
        index = [np.zeros((levels, int(t.depth.max())), np.int64) for _ in range(5)]
        index.append(np.zeros((levels, int(t.depth.max())), np.bool_))
        return WalkBuffers(entry_start, level_start, bridge_start,
                         *(aligned_zeros(int(size)) for size in (entry_start[-1], entry_start[-1],
                                                                  level_start[-1], level_start[-1],
                                                                  bridge_start[-1], bridge_start[-1])),
                         *index, *hand_lists(levels, hands), np.zeros(levels, np.int64),
                         np.zeros(int(t.columns.max()), np.int64),
                         aligned_zeros((self.betting.num_cards, self.block)),
                         *(aligned_zeros(self.block) for _ in range(3)),
                         np.zeros((int(t.depth.max()), hands), np.bool_),
                         np.zeros(0, np.int64) if depth is None else depth, np.array([target], np.int64),
                         np.zeros(0 if depth is None else self.layout.num_actions))

    def slab(self, strategy: np.ndarray) -> np.ndarray:
        """``strategy`` (as ``layout.checked`` returns it) rearranged as the walks read it
        (``_slab``). The methods below take it as ``slab`` when the caller has it: a walk over
        many first deals rearranges the strategy once, not once per deal (``strategy`` is then
        not read)."""
        out = aligned_zeros(self.slab_size)
        _slab(self.templates, self.view, strategy, out)
        return out

    # ------------------------------------------------------------------ evaluation
    def entry_reach(self, strategy: np.ndarray | None, player: int,
                    slab: np.ndarray | None = None) -> np.ndarray:
        """(entries, hands): the reach of ``player``'s opponent at every entry (the nodes
        where the first board is dealt), from ``strategy`` (as ``layout.checked`` returns it;
        or its ``slab``)."""
        slab = self.slab(strategy) if slab is None else slab
        return self._entry_reach(self.tables(None), self.workspace(), slab, player)

    def _entry_reach(self, pre: BoardTables, work: WalkBuffers, slab: np.ndarray, player: int) -> np.ndarray:
        _pre_deal(self.view, self.templates, pre, work, slab, player, BEST_RESPONSE, MODE_RECORD)
        return _bridge(self.templates, work, 0)[0].T.copy()

    def item_values(self, strategy: np.ndarray | None, player: int, objective: int, entry_reach: np.ndarray,
                    item: int, work: WalkBuffers | None = None, slab: np.ndarray | None = None) -> np.ndarray:
        """(entries, hands): the responder's values at every entry summed over the suit class
        of first deal ``item`` (weights included) against ``strategy`` (or its ``slab``);
        ``work`` a ``workspace`` (an ``ABSTRACT`` walk's, its action values added to)."""
        work = self.workspace() if work is None else work
        slab = self.slab(strategy) if slab is None else slab
        _bridge(self.templates, work, 0)[0][:] = entry_reach.T
        tables = self.tables(self.items[item])
        values = np.zeros(entry_reach.shape[::-1])
        _item(self.view, self.templates, tables, work, slab, player, objective, values)
        return self.class_sum(values.T, item)

    def class_sum(self, values: np.ndarray, item: int) -> np.ndarray:
        """``values`` (rows, hands) on the canonical first deal ``item``, summed over its suit
        class: every hand permutation's image, with the item's weight."""
        out = np.zeros(values.shape)
        for perm in self.hand_perms:
            out[:, perm] += values * self.item_weight[item]
        return out

    def value(self, strategy: np.ndarray, player: int, objective: int, runner: ChunkRunner,
              progress: Callable[[int], None] | None = None, shared=None,
              card_blind: bool | None = None) -> float:
        """Player ``player``'s best-response value (``BEST_RESPONSE``) or expected utility (``EXPECTED``)
        against ``strategy`` (as ``layout.checked`` returns it), first deals run by ``runner``
        (``shared``: this evaluator as ``runner.share`` returned it, to send it once for several
        values).

        Where the players the walk reads (the opponent; both for ``EXPECTED``) play card
        blind — every bucket row of their decisions equal — the walk without opponent reach
        vectors runs (``card_blind.py``; same values); ``card_blind`` False forces the
        general walk, True requires the card-blind one. ``paths`` notes which ran."""
        if self._card_blind(strategy, player, objective, card_blind):
            from efgkit.poker.streamed.card_blind import blind_values  # card_blind imports this module

            return blind_values(self, strategy, [(player, objective)], runner, progress, shared)[0]
        return self.walk(strategy, player, objective, runner, progress, shared)[0]

    def walk(self, strategy: np.ndarray, player: int, objective: int, runner: ChunkRunner,
             progress: Callable[[int], None] | None = None, shared=None, depth: np.ndarray | None = None,
             target: int = 0) -> tuple[float, np.ndarray]:
        """The general walk of ``value``: the responder's total (for ``ABSTRACT`` its expected
        utility, as ``EXPECTED``'s) and, for ``ABSTRACT`` (``depth`` and ``target`` as
        ``workspace`` takes them), the action values it added up over every board (float64
        (actions,); empty otherwise), first deals summed in order."""
        pre, work, slab = self.tables(None), self.workspace(depth, target), self.slab(strategy)
        if not self.items:
            total = _pre_deal(self.view, self.templates, pre, work, slab, player, objective, MODE_DESCEND)
            return float(total), work.action_values
        entry_reach = self._entry_reach(pre, work, slab, player)
        entries = self._action_entries(depth, target)
        summed, added = np.zeros_like(entry_reach), np.zeros(entries.shape[0])
        shared = runner.share(self) if shared is None else shared
        shared_slab = runner.share(slab)  # sent to each worker once, not with every item
        arguments = [(shared, shared_slab, player, objective, entry_reach, i, depth, target, entries)
                     for i in range(len(self.items))]
        for values, item_action_values in runner.imap(run_item, arguments):
            summed += values
            added += item_action_values
            if progress is not None:
                progress(1)
        total = self._replay(pre, work, slab, player, objective, summed)
        action_values = work.action_values.copy()
        action_values[entries] = added + work.action_values[entries]
        return float(total), action_values

    def _action_entries(self, depth: np.ndarray | None, target: int) -> np.ndarray:
        """int64: the strategy entries of the decisions ``target`` of the responder's decisions
        deep (``depth`` as ``workspace`` takes it), the only ones an ``ABSTRACT`` walk adds
        values to (work items return just these); none for other walks."""
        if depth is None:
            return np.zeros(0, np.int64)
        start = self.layout.action_start
        decisions = np.flatnonzero(depth[self.betting.decision_nodes] == target)
        return np.concatenate([np.zeros(0, np.int64),
                               *(np.arange(start[d], start[d + 1]) for d in decisions.tolist())])

    def pre_deal_value(self, strategy: np.ndarray | None, player: int, objective: int,
                       entry_values: np.ndarray, slab: np.ndarray | None = None) -> float:
        """The responder's total from its values at every entry (float64 (entries, hands), summed
        over every first deal) and ``strategy`` before the first deal: the pre-deal walk of
        ``walk`` for callers whose first deals play something other than ``strategy`` (the
        streamed re-solver's re-solved subgames; ``slab`` as in ``item_values``)."""
        slab = self.slab(strategy) if slab is None else slab
        pre, work = self.tables(None), self.workspace()
        self._entry_reach(pre, work, slab, player)
        return float(self._replay(pre, work, slab, player, objective, entry_values))

    def _replay(self, pre: BoardTables, work: WalkBuffers, slab: np.ndarray, player: int, objective: int,
                entry_values: np.ndarray) -> float:
        _bridge(self.templates, work, 0)[1][:] = entry_values.T
        return _pre_deal(self.view, self.templates, pre, work, slab, player, objective, MODE_REPLAY)

    def evaluate(self, strategy, runner: ChunkRunner | None = None, game_value: bool = True,
                 progress: Callable[[int], None] | None = None,
                 card_blind: bool | None = None) -> Evaluation:
        """Both players' best-response values, NashConv and (``game_value``) player 0's
        expected utility under ``strategy`` (NaN when not asked: one walk fewer); the walk of
        each value chosen as in ``value`` (``card_blind``), noted in ``paths``."""
        strategy = self.layout.checked(strategy)
        runner = runner or ChunkRunner()
        self.paths = []
        shared = runner.share(self)
        targets = [(0, BEST_RESPONSE), (1, BEST_RESPONSE), *([(0, EXPECTED)] if game_value else [])]
        blind = [t for t in targets if self._card_blind(strategy, *t, card_blind)]
        values = {}
        if blind:  # one pass over the first deals for all of them: their board tables built once
            from efgkit.poker.streamed.card_blind import blind_values  # card_blind imports this module

            found = blind_values(self, strategy, blind, runner, progress, shared)
            values = dict(zip(blind, found, strict=True))
        for target in targets:
            if target not in values:
                values[target] = self.value(strategy, *target, runner, progress, shared, card_blind=False)
        self.paths = ["card-blind" if t in blind else "general" for t in targets]
        responses = [values[(0, BEST_RESPONSE)], values[(1, BEST_RESPONSE)]]
        value = values[(0, EXPECTED)] if game_value else float("nan")
        return Evaluation.of(responses, value)

    def _card_blind(self, strategy: np.ndarray, player: int, objective: int, card_blind: bool | None) -> bool:
        """Whether the value of ``player`` (``objective``) takes the card-blind walk: the
        players it reads (the opponent; both for ``EXPECTED``) play card blind, or as
        ``card_blind`` says (True refused for a strategy that reads the cards). Noted in
        ``paths``."""
        from efgkit.poker.streamed.card_blind import is_card_blind  # card_blind imports this module

        blind = is_card_blind(self.layout, strategy, (1 - player,) if objective == BEST_RESPONSE else (0, 1))
        if card_blind and not blind:
            raise StrategyError("the strategy depends on the cards: the card-blind walk does not apply")
        blind = blind if card_blind is None else card_blind
        self.paths.append("card-blind" if blind else "general")
        return blind

    @property
    def work_items(self) -> int:
        """First deals walked per player (per value)."""
        return max(len(self.items), 1)


def run_item(evaluator: StreamedEvaluator, slab, player, objective, entry_reach, item, depth, target,
             entries):
    """One work item on a runner: first deal ``item``'s values at every entry (``item_values``
    against the strategy's ``slab``) and, for ``ABSTRACT`` walks (``depth``, ``target``), the
    action values it added up at the strategy ``entries`` (``_action_entries``)."""
    work = evaluator.workspace(depth, target)
    return (evaluator.item_values(None, player, objective, entry_reach, item, work, slab=slab),
            work.action_values[entries])


def _templates(betting: BettingTree, layout: BucketLayout) -> tuple[Templates, int]:
    """The ``Templates`` of ``betting`` and the length of its strategy slab: each level's
    betting walked breadth first below all of its entries at once, checking that every entry's
    subtree has the template's shape."""
    kind, first_child, num_children, leaf, node_base, node_of, slab_start = [], [], [], [], [], [], []
    start, columns, depth, slab_columns = [0], [], [], []
    entries = np.zeros(1, np.int64)  # level 0: the root
    slab = 0
    for _ in range(betting.num_levels):
        order, depths, deals = [entries], [1], []
        stride = -(-entries.shape[0] // FLOATS_PER_LINE) * FLOATS_PER_LINE
        q = 0
        while q < len(order):
            nodes = order[q]
            shape = betting.kind[nodes], betting.num_children[nodes], betting.folder[nodes]
            if any(np.any(x != x[0]) for x in shape):
                raise ParameterError(f"{betting.game}: the betting differs in shape between sequences of "
                                     "the same round; the streamed engine needs it the same")
            node_kind, count = int(shape[0][0]), int(shape[1][0])
            kind.append(node_kind)
            num_children.append(count)
            first_child.append(start[-1] + len(order))
            node_base.append(len(node_of))
            node_of.extend(nodes.tolist())
            leaf.append(len(deals) if node_kind == DEAL else -1)
            if node_kind == DEAL:
                deals.append(betting.first_child[nodes])
            if node_kind <= 1:
                rows = layout.action_start[betting.decision_index[nodes[0]] + 1] - \
                    layout.action_start[betting.decision_index[nodes[0]]]
                slab_start.append(slab)
                slab += int(rows) * stride
                order.extend(betting.first_child[nodes] + a for a in range(count))
                depths.extend([depths[q] + 1] * count)
            else:
                slab_start.append(-1)
            q += 1
        start.append(start[-1] + len(order))
        columns.append(entries.shape[0])
        depth.append(max(depths) + 1)
        slab_columns.append(stride)
        entries = np.concatenate(deals) if deals else np.zeros(0, np.int64)
    arrays = (start, columns, depth, kind, first_child, num_children, leaf, node_base, node_of, slab_start,
              slab_columns)
    return Templates(*(np.array(x, np.int64) for x in arrays)), slab
