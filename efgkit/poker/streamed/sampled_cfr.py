"""CFR with public chance sampling on a card abstraction (Johanson et al. 2012).

Each iteration samples one whole board (every public chance event), then walks the
betting tree with that board: hands stay full vectors (every private deal at once), so
only the public chance is sampled. The regrets and averages live per (betting decision,
bucket) as in ``BucketLayout`` — the abstract game's information sets — and are updated
by the same rules as every efgkit CFR variant (``vector_cfr.update_rows``: alternating
updates, player 0 first; CFR+, DCFR, the predictive and scheduled variants). Memory is the
strategy arrays plus O(depth x hands); nothing grows with the number of boards, so
heads-up limit hold'em runs as its abstraction allows.

Values at terminals carry the chance weight of the sampled board divided by the probability
of sampling it (every board sequence equally likely), so an iteration's counterfactual
values are unbiased estimates of the full ones; with no board (one-round games) the walk is
exactly vector CFR's (tests/test_sampled_cfr.py).

Boards are dealt inside the kernel: per iteration the sampler's numpy Generator draws one
uniform double per board card (``Generator.random``, drawn for many iterations at once; the
stream is the same whatever the chunking), a partial Fisher-Yates shuffle turns them into the
cards, and the abstraction's ``hand_buckets`` kernel buckets the hands, so an iteration runs
no Python. The solver's ``state()`` (its arrays, the iteration and the Generator's
``bit_generator.state``) resumes a run bit-identically.

``precision`` chooses how the regrets and averages are stored and updated:

* ``float64`` (default) and ``float32``: the variant's update rules in that type; the current
  strategy and the instantaneous regrets are kept in the same type (one board's sums over a
  bucket's hands run in float64 and round once as they are stored).
* ``int32``: CFR+ as the released HULHE code does it with INTEGER_REGRETS and INTEGER_AVERAGE
  (Burch's thesis, ../shared/research/seed_burch.md §3.2): a row's regret step is
  ``lrint((v(a) - v) * regret_scaling[round])`` with ``R = max(R + step, 0)``, a hand's average
  contribution ``lrint(sigma(a) * reach * (t - delay) * average_scaling[round])``, both int32
  (the current strategy and instantaneous regrets float32), one scaling per betting round.
  Values are in the released code's units, chips summed over the opponent's hands (without
  the private-deal probability), and its default scaling 16 per chip in every round (the
  HULHE run used regret scaling 0.5 and average scaling 1 on the turn and river). Long
  sampled runs outgrow int32, so when a regret or an accumulator of a round passes 2**30
  that round's entries of the array and its scale halve (a shared exponent per round, as a
  float's; a row lies in one round, so regret matching and the normalised average do not
  change) — the released code runs ~1,600 iterations and needs no such step. A single step
  beyond the int32 range saturates: a scaling that large is the caller's error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numba
import numpy as np

from efgkit.core.regret_rules import (
    PREDICTIVE,
    VARIANT_CFR,
    VARIANT_CFR_PLUS,
    VARIANT_CODES,
    VariantSolver,
    average_weight,
    check_iterations,
    clear_rows,
    discount_rule,
    match_row,
    match_rows,
    prediction_scale,
    regret_after,
)
from efgkit.core.solver_state import SolverState
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.csr import offsets_of
from efgkit.io.budget import zeros_within_budget
from efgkit.io.numba_private import WITHOUT_REFCOUNTS
from efgkit.poker.betting_tree import sorted_deals
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import hand_buckets
from efgkit.poker.codes import DEAL, FOLD, SHOWDOWN
from efgkit.poker.dealt_hands import hand_lists, keep_off_board
from efgkit.poker.depth_first import depth_first, push_child
from efgkit.poker.materialised.public_tree import showdown_orders
from efgkit.poker.materialised.vector_cfr import RowState, update_rows
from efgkit.poker.terminal_values import (
    compatible_reach,
    compatible_totals,
    fold_payoff,
    grouped_showdown_values,
    sorted_showdown_values,
    strength_groups,
)
from efgkit.solvers.strategy import normalize_per_infoset

PRECISIONS = ("float64", "float32", "int32")
"""How regrets and averages are stored (module docstring)."""
DEFAULT_SCALING = 16.0
"""The released HULHE code's default regret and average scaling per chip (seed_burch.md §3.2)."""
INT32_MAX = 2**31 - 1
HALVING_THRESHOLD = 2**30
"""An int32 regret or accumulator above this halves its array and scale."""
NORMALIZED_ROWS = 1 << 18
"""``average_strategy`` normalises at most this many rows of one decision at a time."""
SHORT_RUN = 8
"""A run of fewer hands sums in order, a longer one in four lanes (``_run_sums``)."""
HAND_WISE_MEAN_RUN = 3.0
"""A level whose runs are all short and average fewer hands than this is walked hand by hand."""
CHUNK_ITERATIONS = 4096
"""Iterations per kernel call (bounds the uniforms drawn ahead)."""


class SampledBoard(NamedTuple):
    """One sampled board. Per level: the ``valid`` hands (levels, hands) int64 (hand order) and
    their ``valid_count``, the same hands ordered by bucket (``by_bucket``, hand order within a
    bucket), each hand's ``bucket`` (levels, hands) int64 (-1 off the board) and the terminal
    ``weight`` (levels,). The walk's vectors hold a level's hands at their *positions* in
    ``by_bucket`` order, so each bucket's hands are one contiguous run: ``run_start`` int64
    (levels, hands + 1) and ``run_bucket`` int64 (levels, hands) the first position and bucket
    of each run, ``run_count`` (levels,); ``position_of`` int64 (levels, hands) each hand's
    position (scratch for the maps); ``valid_position`` uint64 (levels, hands) the positions in
    hand order (sums over the opponent's hands keep hand order); ``parent_position`` uint64
    (levels, hands) a position's position one level up (where a deal maps reach down and values up);
    ``position_cards`` uint64 (levels, hands, hole cards) each position's cards. The final
    board's hands sorted by strength (``final_hands``, ``final_strength`` (1, hands),
    ``final_count`` (1,)) with their ``strength_groups`` (``final_cards`` uint64 (hands, 2),
    ``final_groups`` uint64 (hands + 1,), ``final_group_count`` int64 (1,)) and their positions
    on the last level (``final_position`` uint64 (hands,)); ``hand_cards``; per level and
    position its run (``position_run``) and bucket (``position_bucket``) uint64 (levels,
    hands), and whether the level's runs are all short and few hands each (``hand_wise`` bool
    (levels,), SHORT_RUN and HAND_WISE_MEAN_RUN): then the walk loops over its hands instead of
    its runs. The tables the walk reads per hand as indices are unsigned: numba corrects a
    negative index read from a signed array (a shift and a mask on every access) and omits
    that for an unsigned one; the values stay bit-identical. Unsigned values must not meet
    signed ones in arithmetic (numba would make a float): a row from ``position_bucket`` is
    computed in uint64 throughout."""

    valid: np.ndarray
    valid_count: np.ndarray
    by_bucket: np.ndarray
    bucket: np.ndarray
    weight: np.ndarray
    final_hands: np.ndarray
    final_strength: np.ndarray
    final_count: np.ndarray
    hand_cards: np.ndarray
    final_cards: np.ndarray
    final_groups: np.ndarray
    final_group_count: np.ndarray
    run_start: np.ndarray
    run_bucket: np.ndarray
    run_count: np.ndarray
    position_of: np.ndarray
    valid_position: np.ndarray
    parent_position: np.ndarray
    position_cards: np.ndarray
    final_position: np.ndarray
    position_run: np.ndarray
    position_bucket: np.ndarray
    hand_wise: np.ndarray


class Sampler(NamedTuple):
    """Dealing boards in the kernel: ``deck`` int64 (cards,) scratch, ``cards`` int64 (board
    cards,) the board dealt (each deal sorted), ``deal_size`` and ``dealt`` (board cards before
    each level) int64, ``round_of_level`` int64 (levels,), ``hand_mask`` int64 (hands,), the
    deck's ``num_ranks`` and ``num_suits``."""

    deck: np.ndarray
    cards: np.ndarray
    deal_size: np.ndarray
    dealt: np.ndarray
    round_of_level: np.ndarray
    hand_mask: np.ndarray
    num_ranks: int
    num_suits: int


class Fixed(NamedTuple):
    """``integer``: regrets and averages are scaled int32; ``scale`` float64 (2, rounds) the
    current regret and average scale of each round (halved as the round's entries outgrow
    int32; part of the state); ``decision_round`` int64 (decisions,) each decision's round."""

    integer: bool
    scale: np.ndarray
    decision_round: np.ndarray


class UpdateWalkStack(NamedTuple):
    """The stack of the update walk (``_walk_player``; ``board_walk.BoardWalkStack`` is the evaluating
    walk's): per depth int64 ``node``, ``cursor``, ``action``, ``own_at`` / ``opponent_at``
    (the row of ``own`` / ``opponent`` holding the depth's reach: a row is written only where
    that player acts or a card is dealt, the others share their parent's) and bool ``live``
    (some opponent reach is not 0), ``own_live`` (averaging, and some own reach is not 0),
    ``started`` (``values`` holds the node's values so far; before its first child they are
    0); float64 (depth, hands) ``own`` and ``opponent`` reach and ``values`` of the updating
    player, by the node's level's positions (``SampledBoard``); float64 (hands,) ``terminal``
    (a terminal's values by position) scratch; ``card_sum`` (cards,) scratch; ``largest``
    int64 (2, rounds): per round the largest int32 regret and accumulator the walk updated;
    ``sorted_values`` and ``sorted_reach`` float64 (hands,) scratch in showdown order;
    ``row_instant`` float64 (depth, hands x widest decision) the instantaneous regrets of the
    updating player's node at each depth by (run, action), under CFR and CFR+ (``_local``),
    whose rows are updated as the walk closes them: the state's ``instant`` is not touched;
    float64 (hands,) ``run_sum`` scratch (each run's sum, ``_run_sums``). (The
    class keeps its name: numba's cache index of this module pickles it, and a stale index
    naming a class that is gone fails to load.)"""

    node: np.ndarray
    cursor: np.ndarray
    action: np.ndarray
    own_at: np.ndarray
    opponent_at: np.ndarray
    live: np.ndarray
    own_live: np.ndarray
    started: np.ndarray
    own: np.ndarray
    opponent: np.ndarray
    values: np.ndarray
    terminal: np.ndarray
    card_sum: np.ndarray
    largest: np.ndarray
    sorted_values: np.ndarray
    sorted_reach: np.ndarray
    row_instant: np.ndarray
    run_sum: np.ndarray


def new_update_walk(depth: int, hands: int, cards: int, rounds: int, width: int) -> UpdateWalkStack:
    """Zeroed update-walk arrays for a tree ``depth`` deep with ``hands`` hands of a
    ``cards``-card deck, ``rounds`` betting rounds and decisions of at most ``width`` actions."""
    index = [np.zeros(depth, np.int64) for _ in range(5)]
    flags = [np.zeros(depth, np.bool_) for _ in range(3)]
    vectors = [np.zeros((depth, hands)) for _ in range(3)]
    return UpdateWalkStack(*index, *flags, *vectors, np.zeros(hands), np.zeros(cards),
                           np.zeros((2, rounds), np.int64), np.zeros(hands), np.zeros(hands),
                           np.zeros((depth, hands * width)), np.zeros(hands))


# How the walk stays exact while doing less than a plain walk (every skip below leaves every
# regret, accumulator and strategy bit-identical to visiting):
# * where the opponent's reach is 0 on every hand (``live`` false) every terminal value is
#   +-0, so are the node's values and instantaneous regrets, and adding them changes nothing
#   (a sum started at +0.0 is never -0.0): such a subtree is walked only for the updating
#   player's average strategy (``own_live``), its terminals not at all;
# * a decision node's values start as 0.0 + its first child's (``started``), not as a row of
#   zeros to add into; a deal node, whose child has fewer hands, still clears them;
# * the vectors hold a level's hands at their positions in ``by_bucket`` order, each bucket's
#   hands one run (``SampledBoard``): the rows come in order (the cache lines of large
#   abstractions are read once), the loops over a run read no index array, and ``_close``
#   updates each row once (a plain walk updates it once per hand; the later passes add 0 and
#   match it to the same strategy); sums over the opponent's hands (terminal totals, the
#   showdown's sweeps) still run in hand or strength order.
# A row entry's updates (instantaneous regret, average) take each run's sum of its hands
# (``_run_sums``: in order for a short run, in four lanes for a long one, whose sum is then
# not a chain of dependent additions), so they are a function of the board alone, whatever
# the path: a level of short runs only is walked hand by hand (``SampledBoard.hand_wise``:
# probabilities gathered per hand, sums scattered per run, no loop per run of one or two
# hands), with the same sums in the same order as the loops per run.
# The walk's visitors are inlined into ``_walk_player`` (``depth_first``), which is compiled
# without numba's reference counting (``io.numba_private.WITHOUT_REFCOUNTS``): the walk
# allocates nothing and every array it sees is owned by the caller. A call per node would
# count references of and pass the ~30 arrays of its four NamedTuples, most of a node visit's
# cost on small games (docs/poker-engine.md, "The walk's helpers inlined").
@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _open(args, depth):
    """Start the decision or deal node at ``depth`` (a live deal node's values cleared) and,
    at the updating player's node, add its average-strategy contribution (``_average_rows``);
    True for a terminal, whose values ``_gather`` adds (``args`` as ``_walk_player`` packs
    them: ``depth_first``'s visitors)."""
    view, board, walk, state, player, weight, fixed, rule = args
    node = walk.node[depth]
    if view.kind[node] > DEAL:
        return True
    level = view.level[node]
    walk.cursor[depth] = 0
    walk.started[depth] = walk.live[depth] and view.kind[node] == DEAL
    if walk.started[depth]:
        values = walk.values[depth]
        for i in range(board.valid_count[level]):
            values[i] = 0.0
    if view.kind[node] == player and _local(rule):
        row_instant = walk.row_instant[depth]
        for i in range(board.run_count[level] * view.num_children[node]):
            row_instant[i] = 0.0
    if view.kind[node] == player and weight > 0.0:
        decision = view.decision_index[node]
        round_ = fixed.decision_round[decision] if fixed.integer else 0
        _average_rows(state, walk.own[walk.own_at[depth]], board, level, view.action_start[decision],
                      view.num_children[node], weight, fixed, round_, walk.run_sum)
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _average_rows(state, own, board, level, start, m, weight, fixed, round_, sums):
    """Add ``weight`` x own reach x strategy into the average accumulator of the rows from
    ``start`` (``m`` actions) the ``level``'s runs reach: float, the run's reach summed
    (``_run_sums``) times each probability; int32, each hand's contribution scaled by
    ``round_``'s scale and rounded to the nearest integer, in order (saturating at the int32
    maximum; hands of zero reach add nothing)."""
    runs, buckets, average = board.run_start[level], board.run_bucket[level], state.average
    if not fixed.integer:
        _run_sums(own, board, level, sums)
    for r in range(board.run_count[level]):
        row = start + buckets[r] * m
        if not fixed.integer:
            w = weight * sums[r]
            if w != 0.0:
                for x in range(row, row + m):
                    average[x] = np.float64(average[x]) + w * state.strategy[x]
            continue
        scale = fixed.scale[1, round_]
        for x in range(row, row + m):
            p = state.strategy[x]
            count = np.int64(average[x])
            for i in range(runs[r], runs[r + 1]):
                w = weight * own[i]
                if w != 0.0:
                    count = min(count + np.int64(np.rint(w * p * scale)), INT32_MAX)
            average[x] = count


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _run_sums(values, board, level, sums):
    """Each run's sum of ``values`` (the ``level``'s positions) into ``sums[run]``: a run of
    fewer than SHORT_RUN hands in order from 0.0, a longer one in four lanes (hand ``j`` of the
    run into lane ``j`` mod 4, the last ``len`` mod 4 hands into lane 0, then (lane 0 + lane 1) +
    (lane 2 + lane 3)). A level of short runs only (``board.hand_wise``) sums hand by hand,
    which is the same."""
    runs, count = board.run_start[level], board.run_count[level]
    if board.hand_wise[level]:
        run_of = board.position_run[level]
        for r in range(count):
            sums[r] = 0.0
        for i in range(board.valid_count[level]):
            sums[run_of[i]] += values[i]
        return
    for r in range(count):
        lo, hi = runs[r], runs[r + 1]
        run = values[lo:hi]  # indexed from 0: no wrap-around
        if hi - lo < SHORT_RUN:
            total = 0.0
            for i in range(hi - lo):
                total += run[i]
            sums[r] = total
            continue
        s0 = s1 = s2 = s3 = 0.0
        whole = (hi - lo) // 4 * 4
        for i in range(0, whole, 4):
            s0 += run[i]
            s1 += run[i + 1]
            s2 += run[i + 2]
            s3 += run[i + 3]
        for i in range(whole, hi - lo):
            s0 += run[i]
        sums[r] = (s0 + s1) + (s2 + s3)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _times_strategy(source, target, strategy, board, level, start, m, a):
    """``target`` = ``source`` x each position's row's probability of action ``a`` (rows from
    ``start``, ``m`` actions), over the ``level``'s positions, per run or, on a level of short
    runs (``board.hand_wise``), per hand; True if some product is not 0."""
    if board.hand_wise[level]:
        bucket, row, width = board.position_bucket[level], np.uint64(start + a), np.uint64(m)  # unsigned
        for i in range(board.valid_count[level]):
            target[i] = source[i] * strategy[row + bucket[i] * width]
    else:
        runs, buckets = board.run_start[level], board.run_bucket[level]
        for r in range(board.run_count[level]):
            p = strategy[start + buckets[r] * m + a]
            lo, hi = runs[r], runs[r + 1]
            run_target, run_source = target[lo:hi], source[lo:hi]  # indexed from 0: no wrap-around
            for i in range(hi - lo):
                run_target[i] = run_source[i] * p
    for i in range(board.valid_count[level]):  # a separate loop: the products above vectorise
        if target[i] != 0.0:
            return True
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _deal_reach(board, walk, depth, level, averaging):
    """Set up the reach of the deal node at ``depth``'s child (``level``) at ``depth + 1``,
    each position's from its parent position; (opponent live, own live)."""
    parent = board.parent_position[level]
    live = own_live = False
    if walk.live[depth]:
        source, target = walk.opponent[walk.opponent_at[depth]], walk.opponent[depth + 1]
        for i in range(board.valid_count[level]):
            target[i] = source[parent[i]]
            live |= target[i] != 0.0
        walk.opponent_at[depth + 1] = depth + 1
    if averaging:
        source, target = walk.own[walk.own_at[depth]], walk.own[depth + 1]
        for i in range(board.valid_count[level]):
            target[i] = source[parent[i]]
            own_live |= target[i] != 0.0
        walk.own_at[depth + 1] = depth + 1
    return live, own_live


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")  # inlined: see the note above _open
def _next_child(args, depth):
    """Set up the next child worth visiting at ``depth + 1`` — one the opponent reaches, or
    (averaging: ``weight`` > 0) a decision the updating player reaches, whose average strategy
    still counts — with its reach; False when none is left."""
    view, board, walk, state, player, weight, fixed, rule = args
    averaging = weight > 0.0
    node = walk.node[depth]
    kind = view.kind[node]
    a = walk.cursor[depth]
    m = view.num_children[node]
    child = view.first_child[node]
    walk.own_at[depth + 1] = walk.own_at[depth]
    walk.opponent_at[depth + 1] = walk.opponent_at[depth]
    if kind == DEAL:
        if a == 1:
            return False
        live, own_live = _deal_reach(board, walk, depth, view.level[child], averaging)
        push_child(walk, depth, 0, 1, child)
        walk.live[depth + 1], walk.own_live[depth + 1] = live, own_live
        return live or own_live
    level = view.level[node]
    start = view.action_start[view.decision_index[node]]
    live, own_live = walk.live[depth], walk.own_live[depth]
    while a < m:
        decision = view.kind[child + a] <= DEAL
        if kind == player:  # the opponent's reach is the parent's
            own_live = False
            if averaging and decision:
                own_live = _times_strategy(walk.own[walk.own_at[depth]], walk.own[depth + 1], state.strategy,
                                           board, level, start, m, a)
                walk.own_at[depth + 1] = depth + 1
        else:
            live = False
            if walk.live[depth]:
                live = _times_strategy(walk.opponent[walk.opponent_at[depth]], walk.opponent[depth + 1],
                                       state.strategy, board, level, start, m, a)
                walk.opponent_at[depth + 1] = depth + 1
            own_live = walk.own_live[depth] and decision
        if live or own_live:
            break
        a += 1
    if not push_child(walk, depth, a, m, child):
        return False
    walk.live[depth + 1], walk.own_live[depth + 1] = live, own_live
    return True


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")  # inlined: see the note above _open
def _terminal_values(view, board, walk, player, depth):
    """The values of the terminal set up at ``depth + 1`` (fold or showdown, its chance weight
    included, against the opponent reach there) into ``walk.terminal`` by position."""
    child = walk.node[depth + 1]
    level = view.level[child]
    count = board.valid_count[level]
    opponent = walk.opponent[walk.opponent_at[depth + 1]]
    scale = board.weight[level]
    cards, out = board.position_cards[level], walk.terminal
    if view.kind[child] == FOLD:
        payoff = fold_payoff(view.contribution, child, view.folder[child], player) * scale
        total = compatible_totals(opponent, cards, board.valid_position[level, :count], walk.card_sum)
        for i in range(count):
            out[i] = payoff * compatible_reach(opponent, cards, walk.card_sum, total, i)
        if cards.shape[1] == 2:
            walk.card_sum[:] = 0.0
        return
    final = board.final_count[0]
    positions = board.final_position[:final]
    win, lose = view.contribution[child, 1 - player] * scale, view.contribution[child, player] * scale
    if cards.shape[1] == 1:
        sorted_showdown_values(opponent, cards, positions, board.final_strength[0, :final], walk.card_sum,
                               win, lose, out)
        return
    grouped_showdown_values(opponent, positions, board.final_cards, board.final_groups,
                            board.final_group_count[0], walk.card_sum, win, lose, walk.sorted_reach,
                            walk.sorted_values)
    for x in range(final):
        out[positions[x]] = walk.sorted_values[x]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _add_own(state, values, child_values, board, level, start, m, a, first, local, row_instant, sums):
    """Add the values ``child_values`` of action ``a``'s child into the updating player's node
    (rows from ``start``, ``m`` actions): weighted by the strategy into ``values`` (``first``:
    into 0.0), per run or per hand as ``_times_strategy``, and each run's sum (``_run_sums``)
    into its row's instantaneous regret of ``a`` (in ``row_instant`` at run x m + a if
    ``local``, else in the state's)."""
    strategy, buckets = state.strategy, board.run_bucket[level]
    if board.hand_wise[level]:
        bucket, row, width = board.position_bucket[level], np.uint64(start + a), np.uint64(m)  # unsigned
        for i in range(board.valid_count[level]):
            _add_weighted(values, child_values, i, strategy[row + bucket[i] * width], first)
    else:
        runs = board.run_start[level]
        for r in range(board.run_count[level]):
            p = strategy[start + buckets[r] * m + a]
            lo, hi = runs[r], runs[r + 1]
            run_values, run_children = values[lo:hi], child_values[lo:hi]  # indexed from 0
            for i in range(hi - lo):
                _add_weighted(run_values, run_children, i, p, first)
    _run_sums(child_values, board, level, sums)
    instant = state.instant
    for r in range(board.run_count[level]):
        if local:
            row_instant[r * m + a] += sums[r]
        else:
            x = start + buckets[r] * m + a
            instant[x] = np.float64(instant[x]) + sums[r]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _add_weighted(values, child_values, i, p, first):
    """``values[i]`` (+)= ``p`` x ``child_values[i]`` (``first``: into 0.0)."""
    if first:
        values[i] = 0.0 + p * child_values[i]
    else:
        values[i] += p * child_values[i]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")  # inlined: see the note above _open
def _gather(args, depth):
    """Add the finished child at ``depth + 1`` into the node at ``depth``: a terminal's values
    (``_terminal_values``), a decision or deal child's (nothing if it never ``started``: the
    opponent reaches none of its hands, its values are 0); a deal node's through the child's
    parent positions, the updating player's with ``_add_own``."""
    view, board, walk, state, player, weight, fixed, rule = args
    child = walk.node[depth + 1]
    if view.kind[child] > DEAL:
        _terminal_values(view, board, walk, player, depth)
        child_values = walk.terminal
    elif walk.started[depth + 1]:
        child_values = walk.values[depth + 1]
    else:
        return
    node = walk.node[depth]
    level, values = view.level[child], walk.values[depth]
    first = not walk.started[depth]
    walk.started[depth] = True
    if view.kind[node] == DEAL:  # started when opened: the values are cleared
        parent = board.parent_position[level]
        for i in range(board.valid_count[level]):
            values[parent[i]] += child_values[i]
    elif view.kind[node] == player:
        _add_own(state, values, child_values, board, level, view.action_start[view.decision_index[node]],
                 view.num_children[node], walk.action[depth], first, _local(rule), walk.row_instant[depth],
                 walk.run_sum)
    elif first:
        for i in range(board.valid_count[level]):
            values[i] = 0.0 + child_values[i]
    else:
        for i in range(board.valid_count[level]):
            values[i] += child_values[i]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")  # inlined: see the note above _open
def _close(args, depth):
    """At the updating player's node: instantaneous regret = action value - node value. With
    a ``rule`` of CFR or CFR+ (``local``) the node's rows are final here: each row the board
    reaches has its regrets updated (float, or int32 scaled and rounded) from its
    instantaneous regrets (summed in ``walk.row_instant``, ``_add_own``) and its strategy
    matched once, after its last hand — rows the board does not reach keep their regrets
    under these two rules, so nothing else is touched."""
    view, board, walk, state, player, weight, fixed, rule = args
    node = walk.node[depth]
    if view.kind[node] != player:
        return
    local = _local(rule)
    started = walk.started[depth]
    if not (started or local):
        return
    m = view.num_children[node]
    level = view.level[node]
    start = view.action_start[view.decision_index[node]]
    round_ = fixed.decision_round[view.decision_index[node]] if fixed.integer else 0
    buckets, sums = board.run_bucket[level], walk.run_sum
    instant, values, row_instant = state.instant, walk.values[depth], walk.row_instant[depth]
    if started:
        _run_sums(values, board, level, sums)
    for r in range(board.run_count[level]):
        row = start + buckets[r] * m
        if local:
            if started:
                for j in range(m):
                    row_instant[r * m + j] -= sums[r]
            _update_row(state, row, m, walk, fixed, round_, rule, row_instant, r * m)
        else:
            for x in range(row, row + m):
                instant[x] = np.float64(instant[x]) - sums[r]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _update_row(state, row, m, walk, fixed, round_, rule, instant, at):
    """Row ``row``'s (``m`` actions) regrets from its instantaneous regrets ``instant[at:at +
    m]`` (the walk's ``row_instant``, or the state's own at ``row``, which are then zeroed),
    then its strategy by regret matching."""
    for j in range(m):
        x = row + j
        if fixed.integer:
            r = np.int64(state.regrets[x]) + np.int64(np.rint(instant[at + j] * fixed.scale[0, round_]))
            r = min(max(r, 0), INT32_MAX)
            state.regrets[x] = r
            walk.largest[0, round_] = max(walk.largest[0, round_], r)
            walk.largest[1, round_] = max(walk.largest[1, round_], np.int64(state.average[x]))
        else:
            # float32 regrets: the sum in float64 rounds to the float32 sum (double rounding of
            # one addition is innocuous, 53 >= 2 x 24 + 2)
            state.regrets[x] = regret_after(rule, state.regrets[x], instant[at + j])
        instant[at + j] = 0.0
    match_row(row, row + m, False, 1.0, state.regrets, state.instant, state.strategy)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _local(rule):
    """Whether iteration updates stay on the rows the board reaches (CFR, CFR+)."""
    return rule.variant == VARIANT_CFR or rule.variant == VARIANT_CFR_PLUS


@numba.njit(cache=True, no_cfunc_wrapper=True, **WITHOUT_REFCOUNTS)
def _walk_player(view, board, walk, state, player, weight, fixed, rule):
    """One player's update walk over the betting tree on the sampled board: ``depth_first``
    with this module's visitors."""
    walk.node[0] = 0
    walk.own_at[0] = 0
    walk.opponent_at[0] = 0
    for i in range(board.valid_count[0]):
        walk.own[0, i] = 1.0
        walk.opponent[0, i] = 1.0
    walk.live[0] = board.valid_count[0] > 0
    walk.own_live[0] = weight > 0.0 and board.valid_count[0] > 0
    depth_first(_open, _next_child, _close, _gather, (view, board, walk, state, player, weight, fixed, rule),
                np.int64(0))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _halve(array, action_start, decision_round, round_):
    """Every entry of round ``round_`` of a non-negative int32 array halved, rounding half up."""
    for d in range(decision_round.shape[0]):
        if decision_round[d] == round_:
            for x in range(action_start[d], action_start[d + 1]):
                array[x] = (np.int64(array[x]) + 1) // 2


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")  # into ``_run``: one LLVM pass less
def _iteration(view, board, walk, settings, decisions, width, t, state, fixed):
    """Iteration ``t`` on one sampled board: both players, alternating, player 0 first. CFR
    and CFR+ update the rows the board reaches as the walk closes them (``_close``); the
    other variants change every row (discounts, predictions) and update all of them after
    the walk."""
    weight = average_weight(settings.variant, t, settings.delay, settings.gamma, settings.horizon)
    rule = discount_rule(settings.variant, t, settings.alpha, settings.beta, settings.gamma, settings.horizon)
    start = view.action_start
    for player in range(2):
        if not _local(rule):
            clear_rows(decisions[player], start, state.instant)
        walk.largest[:, :] = 0
        _walk_player(view, board, walk, state, player, weight, fixed, rule)
        if not _local(rule):
            update_rows(decisions[player], start, settings, t, state, width)
        _halve_outgrown(view, walk, decisions, width, state, fixed)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _halve_outgrown(view, walk, decisions, width, state, fixed):
    """After a player's update: halve each round's int32 averages or regrets whose largest
    entry (``walk.largest``) passed HALVING_THRESHOLD, and their scale; True if regrets were
    halved (then every row is matched again)."""
    halved = False
    for round_ in range(walk.largest.shape[1]):
        if walk.largest[1, round_] > HALVING_THRESHOLD:
            _halve(state.average, view.action_start, fixed.decision_round, round_)
            fixed.scale[1, round_] *= 0.5
        if walk.largest[0, round_] > HALVING_THRESHOLD:
            _halve(state.regrets, view.action_start, fixed.decision_round, round_)
            fixed.scale[0, round_] *= 0.5
            halved = True
    if halved:  # every row is matched again from the halved regrets
        for p in range(2):
            match_rows(decisions[p], view.action_start, np.bool_(False), 1.0, state.regrets, state.instant,
                       state.strategy, width)  # np.bool_: not a literal
    return halved


@numba.njit(cache=True, no_cfunc_wrapper=True)
def update_batch(view, walk, settings, decisions, width, t, player, state, fixed):
    """Iteration ``t``'s update of ``player``'s rows once a batch of boards has been walked
    (``state.instant`` and ``state.average`` hold the batch's sums): every row of the player
    as ``_close`` updates a row (CFR, CFR+: a row no board reached keeps its regrets and
    strategy) or as ``_iteration`` after its walk (the other variants), then the int32
    halving; True if regrets were halved (every row matched again)."""
    rule = discount_rule(settings.variant, t, settings.alpha, settings.beta, settings.gamma, settings.horizon)
    walk.largest[:, :] = 0
    start = view.action_start
    if _local(rule):
        for d in decisions[player]:
            m = width[d]
            round_ = fixed.decision_round[d] if fixed.integer else 0
            for row in range(start[d], start[d + 1], m):
                _update_row(state, row, m, walk, fixed, round_, rule, state.instant, row)
    else:
        update_rows(decisions[player], start, settings, t, state, width)
    return _halve_outgrown(view, walk, decisions, width, state, fixed)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def walk_boards(view, tables, sampler, board, walk, state, player, weight, fixed, rule, uniforms):
    """``player``'s walks on the boards dealt from the rows of ``uniforms`` (float64 (boards,
    board cards)), one after another against ``state.strategy``, adding into
    ``state.instant`` and ``state.average`` (a ``rule`` of neither CFR nor CFR+: no row is
    updated during the walks)."""
    for i in range(uniforms.shape[0]):
        _sample_cards(sampler, uniforms[i])
        _deal(sampler, tables, board)
        _walk_player(view, board, walk, state, player, weight, fixed, rule)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _deal(sampler, tables, board):
    """Fill ``board`` (a ``SampledBoard``) for the cards ``sampler.cards`` (each deal sorted):
    per level the hands that share no card with the board so far, their buckets and positions
    (``_positions``); the final board's hands in showdown order."""
    hand_cards = board.hand_cards
    for level in range(board.valid.shape[0]):
        dealt = sampler.dealt[level]
        if level > 0:  # level 0, before any deal, holds every hand
            mask = np.int64(0)
            for c in range(sampler.dealt[level - 1], dealt):
                mask |= np.int64(1) << sampler.cards[c]
            board.valid_count[level] = keep_off_board(sampler.hand_mask,
                                                      board.valid[level - 1, :board.valid_count[level - 1]],
                                                      mask, board.valid[level])
        board.bucket[level] = -1
        count = board.valid_count[level]
        valid = board.valid[level, :count]
        hand_buckets(tables, sampler.round_of_level[level], sampler.cards[:dealt], hand_cards, valid,
                     board.bucket[level])
        board.by_bucket[level, :count] = valid[np.argsort(board.bucket[level][valid], kind="mergesort")]
        _positions(board, level)
    total = sampler.cards.shape[0]
    showdown_orders(hand_cards, sampler.hand_mask, sampler.cards.reshape(1, total), np.ones(1, np.bool_),
                    sampler.num_ranks, sampler.num_suits, board.final_count, board.final_hands,
                    board.final_strength)
    count = board.final_count[0]
    last = board.valid.shape[0] - 1
    for x in range(count):
        board.final_position[x] = board.position_of[last, board.final_hands[0, x]]
    if hand_cards.shape[1] == 2:
        board.final_group_count[0] = strength_groups(hand_cards, board.final_hands[0, :count],
                                                     board.final_strength[0, :count], board.final_cards,
                                                     board.final_groups)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _positions(board, level):
    """The ``level``'s runs of equal bucket in ``by_bucket`` order and its position tables
    (``SampledBoard``), the level above's already made."""
    count, runs, longest = board.valid_count[level], 0, 0
    for i in range(count):
        h = board.by_bucket[level, i]
        bucket = board.bucket[level, h]
        if runs == 0 or board.run_bucket[level, runs - 1] != bucket:
            board.run_bucket[level, runs] = bucket
            board.run_start[level, runs] = i
            runs += 1
        longest = max(longest, i + 1 - board.run_start[level, runs - 1])
        board.position_run[level, i] = runs - 1
        board.position_bucket[level, i] = bucket
        board.position_of[level, h] = i
        for k in range(board.hand_cards.shape[1]):
            board.position_cards[level, i, k] = board.hand_cards[h, k]
        if level > 0:
            board.parent_position[level, i] = board.position_of[level - 1, h]
    board.run_start[level, runs] = count
    board.run_count[level] = runs
    board.hand_wise[level] = longest < SHORT_RUN and count < HAND_WISE_MEAN_RUN * runs
    for k in range(count):
        board.valid_position[level, k] = board.position_of[level, board.valid[level, k]]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _sample_cards(sampler, uniforms):
    """Deal ``sampler.cards`` from one uniform double per card (a partial Fisher-Yates
    shuffle of the deck), then sort each deal's cards."""
    deck = sampler.deck
    n = deck.shape[0]
    for c in range(n):
        deck[c] = c
    for i in range(sampler.cards.shape[0]):
        j = min(i + np.int64(uniforms[i] * (n - i)), n - 1)
        deck[i], deck[j] = deck[j], deck[i]
        sampler.cards[i] = deck[i]
    start = 0
    for size in sampler.deal_size:
        sampler.cards[start:start + size] = np.sort(sampler.cards[start:start + size])
        start += size


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _run(view, tables, sampler, board, walk, settings, decisions, width, done, uniforms, state, fixed):
    """Iterations ``done + 1 ..``, one per row of ``uniforms`` (float64 (iterations, board cards))."""
    for i in range(uniforms.shape[0]):
        _sample_cards(sampler, uniforms[i])
        _deal(sampler, tables, board)
        _iteration(view, board, walk, settings, decisions, width, done + i + 1, state, fixed)


def _per_round(name: str, value, game) -> list[float]:
    """``value`` (None: the default; one number: every round) as one positive finite scaling
    per round of ``game``; ParameterError naming ``name`` otherwise."""
    rounds = game.num_rounds
    value = DEFAULT_SCALING if value is None else value
    try:
        values = np.broadcast_to(np.asarray(value, np.float64), (rounds,)) if np.ndim(value) == 0 else (
            np.asarray(value, np.float64))
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be numbers, one per round of {game.spec}, got {value!r}") from exc
    if values.shape != (rounds,):
        raise ParameterError(f"{name} needs one value per round of {game.spec} ({rounds}), got "
                             f"{values.size}: {values.tolist()}")
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ParameterError(f"{name} must be finite and > 0 in every round, got {values.tolist()}")
    return values.tolist()


def board_sampling(layout: BucketLayout) -> tuple[Sampler, SampledBoard, UpdateWalkStack, tuple]:
    """What dealing and walking boards of ``layout`` needs: a ``Sampler``, a ``SampledBoard``,
    an ``UpdateWalkStack`` and the abstraction's kernel tables (fresh buffers, one board at a
    time)."""
    betting = layout.betting
    n = betting.num_cards
    hand_cards, hand_mask = betting.hands()
    hands, levels = hand_cards.shape[0], betting.num_levels
    walk = new_update_walk(betting.max_depth + 2, hands, n, betting.game.num_rounds, int(layout.width.max()))
    deck = betting.game.card_structure
    sampler = Sampler(np.zeros(n, np.int64), np.zeros(int(betting.deal_size.sum()), np.int64),
                      betting.deal_size.astype(np.int64), offsets_of(betting.deal_size),
                      np.array(betting.round_of_level, np.int64), hand_mask, deck.num_ranks, deck.num_suits)
    showdowns = betting.level[betting.kind == SHOWDOWN]
    if np.any(showdowns != levels - 1):  # the showdown's hands are the last level's
        raise ParameterError(f"sampled CFR needs every showdown of {betting.game.spec} after the last deal")
    valid, valid_count = hand_lists(levels, hands)

    def per_level(dtype=np.int64, extra=0):
        return np.zeros((levels, hands + extra), dtype)

    board = SampledBoard(
        valid=valid, valid_count=valid_count, by_bucket=per_level(),
        bucket=np.full((levels, hands), -1, np.int64), weight=betting.level_weight,
        final_hands=np.zeros((1, hands), np.int64), final_strength=np.zeros((1, hands), np.int64),
        final_count=np.zeros(1, np.int64), hand_cards=hand_cards,
        final_cards=np.zeros((hands, 2), np.uint64), final_groups=np.zeros(hands + 1, np.uint64),
        final_group_count=np.zeros(1, np.int64), run_start=per_level(extra=1), run_bucket=per_level(),
        run_count=np.zeros(levels, np.int64), position_of=per_level(), valid_position=per_level(np.uint64),
        parent_position=per_level(np.uint64),
        position_cards=np.zeros((levels, hands, hand_cards.shape[1]), np.uint64),
        final_position=np.zeros(hands, np.uint64), position_run=per_level(np.uint64),
        position_bucket=per_level(np.uint64), hand_wise=np.zeros(levels, np.bool_))
    return sampler, board, walk, layout.abstraction.kernel_tables()


class SampledCFR(VariantSolver):
    """Any efgkit CFR variant with public chance sampling on a ``BucketLayout``.

    ``seed`` fixes the boards sampled; ``precision`` (``PRECISIONS``) the type of the regrets
    and averages, ``int32`` with ``regret_scaling`` and ``average_scaling`` (per chip, one
    positive value per betting round or one for all; default 16) for CFR+ only.
    ``state()`` resumes a run bit-identically (``load_state``). ``allocate`` makes the
    per-action arrays (``{name: (length, dtype)}`` to zeroed arrays; default in memory), e.g.
    memory-mapped from a working file (``storage.sampled_working``).
    (``sampled_batches.BatchedSampledCFR`` walks several boards an iteration, in parallel.)
    """

    def __init__(self, layout: BucketLayout, *, variant: str = "cfr+", seed: int = 0,
                 precision: str = "float64", regret_scaling: float | Sequence[float] | None = None,
                 average_scaling: float | Sequence[float] | None = None,
                 allocate: Callable[[dict[str, tuple[int, np.dtype]]], dict[str, np.ndarray]] | None = None,
                 **parameters) -> None:
        given = {name: parameters.get(name) for name in ("delay", "alpha", "beta", "gamma", "gamma_start",
                                                          "horizon")}
        unknown = set(parameters) - set(given)
        if unknown:
            raise ParameterError(f"SampledCFR takes no parameter {sorted(unknown)[0]!r}")
        self.parameters = self._configure(variant, given)
        if precision not in PRECISIONS:
            raise ParameterError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if precision == "int32" and variant != "cfr+":
            raise ParameterError(f"precision int32 runs cfr+ (the released HULHE code's integer "
                                 f"regret-matching+), not {variant}")
        scaling = {"regret_scaling": regret_scaling, "average_scaling": average_scaling}
        if precision != "int32" and any(v is not None for v in scaling.values()):
            raise ParameterError("regret_scaling and average_scaling apply to precision int32 only")
        if precision == "int32":
            scaling = {name: _per_round(name, v, layout.betting.game) for name, v in scaling.items()}
            self.parameters.update(scaling)
        self.layout, self.precision, self.seed = layout, precision, seed
        betting = layout.betting
        self.betting = betting
        self._view = layout.view()
        player = betting.kind[betting.decision_nodes]
        self._decisions = (np.flatnonzero(player == 0).astype(np.int64),
                           np.flatnonzero(player == 1).astype(np.int64))
        actions = layout.num_actions
        stored = {"float64": np.float64, "float32": np.float32, "int32": np.int32}[precision]
        working = np.float64 if precision == "float64" else np.float32
        shapes = {"regrets": (actions, stored), "average_accumulator": (actions, stored),
                  "strategy": (actions, working), "instant": (actions, working)}
        if allocate is None:
            arrays = zeros_within_budget(
                shapes, f"sampled CFR on {betting.game.spec} with {layout.abstraction.description} "
                f"({actions:,} actions)", "choose coarser buckets, keep the arrays on disk with --mapped, "
                "or run on a machine with more memory")
        else:
            arrays = allocate(shapes)
        self.regrets, self.average_accumulator = arrays["regrets"], arrays["average_accumulator"]
        self._state = RowState(self.regrets, self.average_accumulator, arrays["strategy"],
                               arrays["instant"], np.zeros(0))
        self.iteration = 0
        self.rng = np.random.default_rng(seed)
        level_weight = betting.level_weight
        # int32 regrets count chips summed over the opponent's hands, as the released code's:
        # the kernel's values carry the probability of the private deal, level_weight.
        self._fixed = Fixed(precision == "int32", np.array(
            [np.array(scaling["regret_scaling"]) / level_weight[0], scaling["average_scaling"]])
            if precision == "int32" else np.ones((2, betting.game.num_rounds)),
            betting.round[betting.decision_nodes].astype(np.int64))
        self._sampler, self._board, self._walk, self._tables = board_sampling(layout)
        self.hand_cards, self.hand_mask = self._board.hand_cards, self._sampler.hand_mask
        self._rematch()

    def _rematch(self) -> None:
        scale = prediction_scale(VARIANT_CODES[self.variant], self.iteration, self._settings.alpha)
        predictive = self.variant in PREDICTIVE
        for decisions in self._decisions:
            match_rows(decisions, self.layout.action_start, predictive, scale, self.regrets,
                       self._state.instant, self._state.strategy, self.layout.width)

    def board_of(self, cards) -> SampledBoard:
        """The kernel's view of the board dealing ``cards`` (int, every deal's cards in order);
        the solver's own buffers, overwritten by the next board."""
        self._sampler.cards[:] = sorted_deals(cards, self.betting.deal_size)
        _deal(self._sampler, self._tables, self._board)
        return self._board

    def iterate(self, iterations: int = 1) -> SampledCFR:
        """Run ``iterations`` iterations, each on a newly sampled board."""
        check_iterations(self.variant, self._settings.horizon, self.iteration, iterations)
        total = self._sampler.cards.shape[0]
        left = iterations
        while left > 0:
            chunk = min(left, CHUNK_ITERATIONS)
            uniforms = self.rng.random((chunk, total))
            _run(self._view, self._tables, self._sampler, self._board, self._walk, self._settings,
                 self._decisions, self.layout.width, self.iteration, uniforms, self._state, self._fixed)
            self.iteration += chunk
            left -= chunk
        return self

    boards_per_iteration = board_groups = 1
    """One board an iteration (``sampled_batches.BatchedSampledCFR`` walks more)."""

    def batch_provenance(self) -> dict[str, int]:
        """What a checkpoint records of the boards an iteration: nothing for one board (as
        files written before batches were)."""
        return {}

    @property
    def rng_state(self) -> dict:
        """The sampler's ``bit_generator.state`` (JSON-serialisable)."""
        return self.rng.bit_generator.state

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The arrays that, with ``iteration`` and ``rng_state``, determine the run's future:
        regrets, average accumulator, the predictive variants' prediction, int32's scales."""
        arrays = {"regrets": self.regrets, "average_accumulator": self.average_accumulator}
        if self.variant in PREDICTIVE:
            arrays["prediction"] = self._state.instant
        if self._fixed.integer:
            arrays["scaling"] = self._fixed.scale
        return arrays

    def state(self) -> SolverState:
        """The solver's state (its arrays, not copies, and the sampler's) for a checkpoint."""
        return SolverState(self.state_arrays(), self.iteration, self.rng_state)

    def load_state(self, state: SolverState) -> None:
        """Continue from a ``state()``; FileFormatError if it does not fit this solver."""
        mine = self.state_arrays()
        state.check(mine)
        if "scaling" in mine and not np.all(np.asarray(state.arrays["scaling"]) > 0):
            raise FileFormatError("solver state scaling holds scales that are not > 0")
        try:
            self.rng.bit_generator.state = state.rng_state
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            raise FileFormatError(f"unusable sampler state ({exc})") from exc
        for name, array in state.arrays.items():
            mine[name][:] = array
        self.iteration = int(state.iteration)
        self._rematch()

    def memory(self) -> dict[str, int]:
        """Bytes of the solver ``state`` (what a checkpoint stores: regrets, averages, the
        prediction) and of the ``working`` arrays beside it (current strategy, instantaneous
        regrets unless they are the prediction)."""
        state = sum(a.nbytes for a in self.state_arrays().values())
        instant = 0 if self.variant in PREDICTIVE else self._state.instant.nbytes
        working = self._state.strategy.nbytes + instant
        return {"state": state, "working": working}

    def average_strategy(self) -> np.ndarray:
        """The average strategy per layout action (uniform where nothing accumulated),
        normalised NORMALIZED_ROWS rows of a decision at a time: a checkpoint of a large (or
        mapped) state needs the 8 bytes per action of the result, not normalize_per_infoset's
        temporaries."""
        layout = self.layout
        strategy = np.empty(layout.num_actions)
        for d in range(layout.width.shape[0]):
            width, rows = int(layout.width[d]), int(layout.buckets[d])
            for first in range(0, rows, NORMALIZED_ROWS):
                count = min(NORMALIZED_ROWS, rows - first)
                lo = int(layout.action_start[d]) + first * width
                hi = lo + count * width
                strategy[lo:hi] = normalize_per_infoset(self.average_accumulator[lo:hi].astype(np.float64),
                                                        np.arange(0, count * width + 1, width))
        return strategy

    def current_strategy(self) -> np.ndarray:
        return self._state.strategy.astype(np.float64)
