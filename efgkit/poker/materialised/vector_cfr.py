"""Vector CFR and every CFR variant over a poker public tree (Burch's thesis Algorithm 3).

Each pass carries one vector per player over all hands instead of one number per
history: a top-down pass computes a player's reach of every (public node, hand) (an
update recomputes only the reach of the player updated just before), a bottom-up pass
the updating player's counterfactual values (chance included), its instantaneous regrets
and, in the same sweep, its average-strategy contribution. The conventions are those
of ``efgkit.solvers.cfr.CFRSolver`` (alternating updates, player 0 first; CFR+ with
regret-matching+ and linear averaging after a delay; DCFR(alpha, beta, gamma); the rest of
``core.regret_rules``, VAD-CFR included), so on any game a GameTree can hold the regrets and
averages are the GameTree solver's, on the same InfosetMap (tests/test_poker_engine.py checks
it to 1e-9). VAD-CFR's average weight depends on a row's whole instantaneous regret, which
is complete only at the end of the sweep, so its average is added by a second sweep over
the player's decisions (``vad_average_pass``) instead of inside the value pass.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from efgkit.core.follow_rules import FollowState, follow_update
from efgkit.core.regret_rules import (
    ROW_RULES,
    VAD_WARMUP,
    VARIANT_VAD_CFR,
    VariantSolver,
    average_weight,
    check_iterations,
    clear_rows,
    discount_rule,
    is_predictive,
    match_rows,
    prediction_scale,
    row_magnitude,
    update_regret,
    vad_average_weight,
    vad_match_row,
    vad_update_row,
)
from efgkit.errors import ParameterError
from efgkit.io.budget import check_memory
from efgkit.io.numba_private import WITHOUT_REFCOUNTS
from efgkit.poker.codes import BEST_RESPONSE, DEAL, EXPECTED, FOLD, REGRETS, SHOWDOWN
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.terminal_values import CANCELLATION, fold_payoff, fold_values, showdown_values
from efgkit.solvers.cfr import match_player
from efgkit.solvers.strategy import normalize_per_infoset


class TreeView(NamedTuple):
    """The public tree's arrays (see ``PublicTree``): node arrays of shape (nodes,) or
    (nodes, 2); ``hand_cards`` int64 (hands, k); ``hand_mask`` / ``board_mask`` int64;
    ``showdown_*`` the per-board strength orders; ``root_reach`` float64 (2, hands), each
    player's reach of the root (ones for a whole game; a subtree's entering ranges)."""

    kind: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    board: np.ndarray
    contribution: np.ndarray
    folder: np.ndarray
    chance_weight: np.ndarray
    hand_cards: np.ndarray
    hand_mask: np.ndarray
    board_mask: np.ndarray
    valid_start: np.ndarray
    valid_list: np.ndarray
    showdown_start: np.ndarray
    showdown_hands: np.ndarray
    showdown_strength: np.ndarray
    root_reach: np.ndarray


class VectorBuffers(NamedTuple):
    """Buffers: ``reach`` float64 (2, nodes, hands), ``values`` float64 (nodes, hands),
    ``card_sum`` float64 (cards,), zero between uses."""

    reach: np.ndarray
    values: np.ndarray
    card_sum: np.ndarray


def tree_view(tree: PublicTree) -> TreeView:
    return TreeView(tree.kind, tree.first_child, tree.num_children, tree.board, tree.contribution,
                    tree.folder, tree.chance_weight, tree.hand_cards, tree.hand_mask, tree.board_mask,
                    tree.valid_start, tree.valid_list, tree.showdown_start, tree.showdown_hands,
                    tree.showdown_strength, tree.root_reach)


def workspace(tree: PublicTree) -> VectorBuffers:
    return VectorBuffers(np.zeros((2, tree.num_nodes, tree.num_hands)),
                     np.zeros((tree.num_nodes, tree.num_hands)), np.zeros(tree.num_cards))


# The kernels copy the bundles' arrays into locals before their loops and loop over elements
# instead of slicing: reading a NamedTuple's array or taking a slice inside a loop makes numba
# count a reference each time, which on Leduc's 6-hand rows cost more than the arithmetic
# (20x on the regret update, 2x on the reach pass).


@numba.njit(cache=True, no_cfunc_wrapper=True)
def player_reach_pass(tree, layout, strategy, player, reach):
    """Top-down: ``reach[player, node, h]``, the player's own reach of (node, hand) from its
    ``tree.root_reach``, zero for hands that meet the board. Only the player's strategy enters
    (alternating updates recompute the reach of the player that was just updated only)."""
    kind, first_child, num_children = tree.kind, tree.first_child, tree.num_children
    board, hand_mask, board_mask = tree.board, tree.hand_mask, tree.board_mask
    decision_index, slot_offset = layout.decision_index, layout.slot_offset
    own = reach[player]
    hands = own.shape[1]
    own[0, :] = tree.root_reach[player]
    for node in range(kind.shape[0]):
        node_kind = kind[node]
        first = first_child[node]
        if node_kind == player:
            d = decision_index[node]
            for k in range(num_children[node]):
                for h in range(hands):
                    offset = slot_offset[d, h]
                    own[first + k, h] = own[node, h] * strategy[offset + k] if offset >= 0 else 0.0
        elif node_kind == 1 - player:
            for k in range(num_children[node]):
                for h in range(hands):
                    own[first + k, h] = own[node, h]
        elif node_kind == DEAL:
            for k in range(num_children[node]):
                mask = board_mask[board[first + k]]
                for h in range(hands):
                    own[first + k, h] = own[node, h] if (hand_mask[h] & mask) == 0 else 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def reach_pass(tree, layout, strategy, reach):
    """Both players' reach (``player_reach_pass``); ``strategy`` float64 (actions,) by
    ``layout.action_offset``, ``reach`` float64 (2, nodes, hands)."""
    for player in range(2):
        player_reach_pass(tree, layout, strategy, player, reach)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def value_pass(tree, layout, strategy, player, mode, work, instant):
    """Bottom-up: ``work.values[node, h]``, player ``player``'s counterfactual values.

    ``mode``: REGRETS adds the player's instantaneous regrets to ``instant`` (float64
    (actions,)); BEST_RESPONSE maximises at the player's nodes (a best response in
    the unabstracted game: every (node, hand) is an information set); EXPECTED
    follows ``strategy``. Returns the root's total (the player's value).
    """
    return value_and_average_pass(tree, layout, strategy, player, mode, work, instant, 0.0, instant)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def terminal_pass(tree, player, opponent, card_sum, values):
    """``values[node, h]`` (float64 (nodes, hands)) at every fold and showdown ``node`` of
    ``tree`` (a ``TreeView``): player ``player``'s counterfactual values given the opponent's
    reach ``opponent`` (float64 (nodes, hands)); ``card_sum`` float64 (cards,) is scratch.
    Terminals depend on the reach only, so ``value_and_average_pass`` fills them first.

    The values are ``terminal_values``' on the node's rows and the board's ranges: its kernels
    are inlined and the pass that inlines this one counts no references (a one-card game's
    terminals hold a handful of hands, and counting a reference for every row and range taken
    cost more than their arithmetic: Leduc's iterations ran 35% slower)."""
    kind, board, contribution, folder = tree.kind, tree.board, tree.contribution, tree.folder
    chance_weight, hand_cards = tree.chance_weight, tree.hand_cards
    valid_start, valid_list = tree.valid_start, tree.valid_list
    showdown_start, showdown_hands, showdown_strength = (tree.showdown_start, tree.showdown_hands,
                                                         tree.showdown_strength)
    for node in range(kind.shape[0]):
        if kind[node] == FOLD:
            b = board[node]
            payoff = fold_payoff(contribution, node, folder[node], player) * chance_weight[node]
            fold_values(opponent[node], hand_cards, valid_list[valid_start[b]:valid_start[b + 1]], card_sum,
                        payoff, values[node])
        elif kind[node] == SHOWDOWN:
            b = board[node]
            lo = showdown_start[b]
            hi = showdown_start[b + 1]
            w = chance_weight[node]
            win, lose = contribution[node, 1 - player] * w, contribution[node, player] * w
            showdown_values(opponent[node], hand_cards, showdown_hands[lo:hi], showdown_strength[lo:hi],
                            card_sum, win, lose, values[node])


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _add_regrets(values, first, m, h, total, instant, offset, ties):
    """Add hand ``h``'s instantaneous regrets ``values[first + k, h] - total`` (k < m) to
    ``instant[offset + k]``; with ``ties`` (two-card hands), 0 where within rounding of a tie
    (``CANCELLATION`` x the largest action value). Two actions worth exactly the same in the
    game (a bet always folded to and a check to showdown against the same hands) reach their
    values by different inclusion-exclusion sums here and may differ in the last bit, where the
    GameTree's per-history sums tie exactly;
    CFR+'s regret matching is discontinuous at 0 (regrets (1e-20, 0) play the first action,
    (0, 0) both), so such a residue is dropped rather than amplified. One-card hands meet only
    themselves and keep every regret, as the sampled engine does."""
    if not ties:
        for k in range(m):
            instant[offset + k] += values[first + k, h] - total
        return
    scale = 0.0
    for k in range(m):
        scale = max(scale, abs(values[first + k, h]))
    for k in range(m):
        regret = values[first + k, h] - total
        if abs(regret) > CANCELLATION * scale:
            instant[offset + k] += regret


@numba.njit(cache=True, no_cfunc_wrapper=True, **WITHOUT_REFCOUNTS)
def value_and_average_pass(tree, layout, strategy, player, mode, work, instant, weight, average):
    """``value_pass`` that also adds, when ``weight`` > 0, ``weight`` x own reach x strategy of
    the player's (node, hand) pairs to ``average`` (float64 (actions,)), each original
    infoset once (``layout.slot_weight``): CFR's average-strategy step in the same sweep.
    The terminals first (``terminal_pass``), then the other nodes bottom-up. It allocates
    nothing and counts no references (``io.numba_private.WITHOUT_REFCOUNTS``)."""
    kind, first_child, num_children = tree.kind, tree.first_child, tree.num_children
    decision_index, slot_offset, slot_weight = layout.decision_index, layout.slot_offset, layout.slot_weight
    values = work.values
    own = work.reach[player]
    hands = values.shape[1]
    ties = tree.hand_cards.shape[1] > 1
    terminal_pass(tree, player, work.reach[1 - player], work.card_sum, values)
    for node in range(kind.shape[0] - 1, -1, -1):
        node_kind = kind[node]
        first = first_child[node]
        m = num_children[node]
        if node_kind == FOLD or node_kind == SHOWDOWN:
            continue
        if node_kind != player:
            for h in range(hands):
                total = 0.0
                for k in range(m):
                    total += values[first + k, h]
                values[node, h] = total
            continue
        d = decision_index[node]
        for h in range(hands):
            offset = slot_offset[d, h]
            if offset < 0:
                values[node, h] = 0.0
                continue
            if mode == BEST_RESPONSE:
                best = values[first, h]
                for k in range(1, m):
                    best = max(best, values[first + k, h])
                values[node, h] = best
                continue
            total = 0.0
            for k in range(m):
                total += strategy[offset + k] * values[first + k, h]
            values[node, h] = total
            if mode == REGRETS:
                _add_regrets(values, first, m, h, total, instant, offset, ties)
            if weight > 0.0:
                w = weight * own[node, h] * slot_weight[d, h]
                if w != 0.0:
                    for k in range(m):
                        average[offset + k] += w * strategy[offset + k]
    root = 0.0
    for h in range(hands):
        root += values[0, h]
    return root


class RowState(NamedTuple):
    """float64 (actions,) each: cumulative ``regrets``, ``average`` accumulator, current
    ``strategy`` (regret matching of the regrets, or of the prediction), ``instant`` regrets
    of each player's last update (the predictive variants' prediction); ``volatility``
    float64 (rows,), VAD-CFR's per-row EWMA (empty for the other variants)."""

    regrets: np.ndarray
    average: np.ndarray
    strategy: np.ndarray
    instant: np.ndarray
    volatility: np.ndarray


# The row kernels take ``rows`` (int64) indexing ``action_offset``: row r's actions are
# action_offset[r]:action_offset[r + 1]. With ``width`` (int64, one entry per index) an index
# is a span of consecutive rows of width[r] actions each: a ``BucketLayout`` decision, whose
# rows (one per bucket, 127 M of them in a 52-card layout with 20,000 buckets a round) are
# never listed one by one (``SampledCFR``).
@numba.njit(cache=True, no_cfunc_wrapper=True)
def update_rows(rows, action_offset, settings, t, state, width=None):
    """Iteration ``t``'s cumulative regrets of ``rows`` (int64; spans of rows with ``width``)
    from the instant regrets — CFR: + instant; CFR+, PCFR+ and HS-PCFR+: clipped; DCFR and
    HS-DCFR: discounted (and the average, also HS-PCFR+'s); DCFR+ and PDCFR+:
    [R d(t-1) + instant]^+ — then regret matching of the regrets, or of the prediction
    [R d + instant]^+ for PCFR+ and HS-PCFR+ (d = 1) and PDCFR+ (d = d(t))."""
    variant = settings.variant
    rule = discount_rule(variant, t, settings.alpha, settings.beta, settings.gamma, settings.horizon)
    regrets, instant, average = state.regrets, state.instant, state.average
    for j in range(rows.shape[0]):
        for x in range(action_offset[rows[j]], action_offset[rows[j] + 1]):
            update_regret(rule, regrets, instant, average, x)
    match_rows(rows, action_offset, is_predictive(variant), prediction_scale(variant, t, settings.alpha),
               regrets, instant, state.strategy, width)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def vad_average_pass(tree, layout, player, t, own, state):
    """VAD-CFR's average step of ``player`` at iteration ``t`` (after the value pass, whose
    ``state.instant`` it reads): each (decision, hand) pair's strategy weighted by
    ``vad_average_weight`` of its row's instantaneous regret magnitude, its own reach
    ``own`` (nodes, hands) and its ``slot_weight`` — the GameTree's
    ``accumulate_vad_update``, pair by pair."""
    if t <= VAD_WARMUP:
        return
    kind, num_children = tree.kind, tree.num_children
    decision_index, slot_offset, slot_weight = layout.decision_index, layout.slot_offset, layout.slot_weight
    strategy, instant, average = state.strategy, state.instant, state.average
    hands = own.shape[1]
    for node in range(kind.shape[0]):
        if kind[node] != player:
            continue
        d = decision_index[node]
        m = num_children[node]
        for h in range(hands):
            offset = slot_offset[d, h]
            if offset < 0:
                continue
            w = vad_average_weight(t, row_magnitude(offset, offset + m, instant)) * own[node, h]
            w *= slot_weight[d, h]
            if w != 0.0:
                for k in range(m):
                    average[offset + k] += w * strategy[offset + k]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def update_vad_rows(rows, action_offset, t, state):
    """VAD-CFR's regret update of ``rows`` (int64) at iteration ``t`` (each row's EWMA, then
    its regrets: ``regret_rules.vad_update_row``), then its strategy (``vad_match_row``)."""
    regrets, instant, volatility, strategy = state.regrets, state.instant, state.volatility, state.strategy
    for j in range(rows.shape[0]):
        row = rows[j]
        lo, hi = action_offset[row], action_offset[row + 1]
        vad_update_row(t, lo, hi, row, regrets, instant, volatility)
        vad_match_row(t, lo, hi, regrets, instant, volatility[row], strategy)


# A re-solving gadget's head (``resolve.vector_gadgets``), updated inside ``run_iterations``.
NO_HEAD, RESOLVE_HEAD, MAXMARGIN_HEAD = 0, 1, 2
"""The head's shape: none (unsafe), (terminate, follow) per opponent hand, one hand choice."""


class GadgetHead(NamedTuple):
    """The opponent's head rows. ``mode``: ``NO_HEAD`` / ``RESOLVE_HEAD`` / ``MAXMARGIN_HEAD``;
    ``free``: its regrets update it (False: ``follow``, a distributional rule's ``FollowState``
    over ``hands``, sets it before every iteration: ``follow_head``); ``opponent``;
    ``hands`` int64 (heads,) the opponent hand of each row (resolve) or action (maxmargin);
    ``offset`` int64 (rows + 1,); ``rows`` int64 (rows,); ``fixed`` float64 (head actions,) the
    actions' fixed values (terminate's c_I; ``-alt(I)``); ``reach`` float64 (hands,) π(I) of
    each entry of ``hands``; ``state`` its ``RowState``."""

    mode: int
    free: bool
    follow: FollowState
    opponent: int
    hands: np.ndarray
    offset: np.ndarray
    rows: np.ndarray
    fixed: np.ndarray
    reach: np.ndarray
    state: RowState


@numba.njit(cache=True, no_cfunc_wrapper=True)
def enter(head, root_reach):
    """The opponent's range at the subgame's root (``root_reach`` float64 (2, hands)) from its
    head strategy: its follow probability (resolve), or ``s(h) / π(I)`` (maxmargin)."""
    own = root_reach[head.opponent]
    own[:] = 0.0
    strategy, hands = head.state.strategy, head.hands
    for j in range(hands.shape[0]):
        if head.mode == RESOLVE_HEAD:
            own[hands[j]] = strategy[head.offset[j] + 1]
        else:
            own[hands[j]] = strategy[j] / head.reach[j]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _block_sum(a, lo, n):
    """numpy's sum of ``a[lo:lo + n]`` for ``n <= 128``: in order below 8, else 8 ways."""
    if n < 8:
        total = 0.0
        for i in range(n):
            total += a[lo + i]
        return total
    r = a[lo:lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for x in range(i, n):
        total += a[lo + x]
    return total


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _pairwise_sum(a, lo, n):
    """numpy's pairwise summation of ``a[lo:lo + n]``: a span over 128 is the sum of its halves
    (split at ``n // 2`` rounded down to a multiple of 8), walked with a stack, not recursion."""
    span_lo, span_n = np.zeros(128, np.int64), np.zeros(128, np.int64)
    split, sums = np.zeros(128, np.bool_), np.zeros(128)
    span_lo[0], span_n[0], spans, results = lo, n, 1, 0
    while spans:
        spans -= 1
        start, size = span_lo[spans], span_n[spans]
        if split[spans]:  # both halves done: combine the last two results
            split[spans] = False
            results -= 1
            sums[results - 1] += sums[results]
        elif size <= 128:
            sums[results] = _block_sum(a, start, size)
            results += 1
        else:
            half = size // 2 - (size // 2) % 8
            split[spans] = True
            span_lo[spans + 1], span_n[spans + 1] = start + half, size - half
            span_lo[spans + 2], span_n[spans + 2] = start, half
            spans += 3
    return sums[0]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _reduce_sum(a):
    """``np.add.reduceat(a, [0])[0]`` bit for bit (the first element, then numpy's pairwise sum
    of the rest), so the maxmargin head's expected value is the one numpy's head computed."""
    return a[0] + _pairwise_sum(a, 1, a.shape[0] - 1) if a.shape[0] else 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def head_update(head, root_values, root_reach, settings, t, weight):
    """Iteration ``t``'s instant regrets and average (``weight``) of the head rows from the
    opponent's counterfactual values at the root (``root_values`` float64 (hands,)); a free
    head then updates its regrets and the opponent's entering range (``enter``)."""
    state, hands, offset, fixed = head.state, head.hands, head.offset, head.fixed
    strategy, instant, average = state.strategy, state.instant, state.average
    if head.mode == RESOLVE_HEAD:
        for j in range(hands.shape[0]):
            lo = offset[j]
            follow = root_values[hands[j]]
            expected = strategy[lo] * fixed[lo] + strategy[lo + 1] * follow
            instant[lo] = fixed[lo] - expected
            instant[lo + 1] = follow - expected
    else:
        for j in range(hands.shape[0]):
            instant[j] = fixed[j] + root_values[hands[j]] / head.reach[j]
        expected = _reduce_sum(strategy * instant)
        for j in range(hands.shape[0]):
            instant[j] -= expected
    if weight > 0.0:
        for x in range(strategy.shape[0]):
            average[x] += weight * strategy[x]
    if head.free:
        update_rows(head.rows, offset, settings, t, state)
        enter(head, root_reach)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def follow_head(tree, layout, strategy, head, seen, work):
    """A distributional head's play before iteration ``seen + 1`` (Brown & Sandholm §6.1): the
    opponent's normalised counterfactual value of following at each head hand under the current
    profile (``strategy``; both reaches recomputed), the head's follow rule
    (``core.follow_rules.follow_update``) on it, and the opponent's entering range (``enter``)."""
    for p in range(2):
        player_reach_pass(tree, layout, strategy, np.int64(p), work.reach)
    value_pass(tree, layout, strategy, np.int64(head.opponent), np.int64(EXPECTED), work, np.zeros(0))
    hands, reach, means = head.hands, head.reach, head.follow.means
    values = np.empty(hands.shape[0])
    for j in range(hands.shape[0]):
        values[j] = work.values[0, hands[j]] / reach[j] if reach[j] > 0.0 else means[j]
    follow_update(head.follow, values, seen)
    follow, head_strategy = head.follow.follow, head.state.strategy
    for j in range(hands.shape[0]):
        head_strategy[2 * j] = 1.0 - follow[j]
        head_strategy[2 * j + 1] = follow[j]
    enter(head, tree.root_reach)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def run_iterations(tree, layout, settings, rows0, rows1, done, iterations, state, work, head=None):
    """Iterations ``done + 1 .. done + iterations``, alternating (player 0, then player 1); with
    a gadget's ``head`` (``GadgetHead``, on a subtree) the head updated from the opponent's root
    values after the opponent's value pass and before its regret update, or, not ``free``, set
    by its follow rule before each iteration (``follow_head``).

    A player's update needs the opponent's reach under the opponent's latest strategy and its
    own reach under its strategy before the update, so after the first pass each update
    recomputes only the reach of the player updated just before."""
    action_offset, strategy, instant, average = (layout.action_offset, state.strategy, state.instant,
                                                 state.average)
    # np.int64: a constant argument would compile a second, literal specialisation of a kernel.
    vad = settings.variant == VARIANT_VAD_CFR
    player_reach_pass(tree, layout, strategy, np.int64(0), work.reach)
    for it in range(iterations):
        t = done + it + 1
        weight = 0.0 if vad else average_weight(settings.variant, t, settings.delay, settings.gamma,
                                                settings.horizon)
        if head is not None:
            if not head.free:
                follow_head(tree, layout, strategy, head, t - 1, work)
                player_reach_pass(tree, layout, strategy, np.int64(0), work.reach)
        for player in range(2):
            rows = rows0 if player == 0 else rows1
            clear_rows(rows, action_offset, instant)
            player_reach_pass(tree, layout, strategy, 1 - player, work.reach)
            value_and_average_pass(tree, layout, strategy, player, np.int64(REGRETS), work, instant,
                                   weight, average)
            if head is not None:
                if player == head.opponent:  # nested: numba prunes a `head is not None` test alone
                    head_update(head, work.values[0], tree.root_reach, settings, t, weight)
            if vad:
                vad_average_pass(tree, layout, player, t, work.reach[player], state)
                update_vad_rows(rows, action_offset, t, state)
            else:
                update_rows(rows, action_offset, settings, t, state)


class VectorCFR(VariantSolver):
    """Any CFR variant of ``efgkit.solvers.cfr`` (cfr, cfr+, dcfr, lcfr, dcfr+, pcfr+, pdcfr+,
    hs-dcfr, hs-pcfr+, sapcfr+, vad-cfr) on a public tree.

    ``layout``: a ``StrategyLayout`` (default lossless). Same parameters, defaults and state
    as the GameTree solvers (``SOLVER_CLASSES[variant]``): ``regrets`` and
    ``average_accumulator`` per row action, ``iteration``, the predictive variants'
    prediction and VAD-CFR's per-row volatility.
    """

    def __init__(self, tree: PublicTree, layout: StrategyLayout | None = None, *, variant: str = "cfr+",
                 delay: int | None = None, alpha: float | None = None, beta: float | None = None,
                 gamma: float | None = None, gamma_start: float | None = None,
                 horizon: int | None = None) -> None:
        self._configure(variant, {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma,
                                  "gamma_start": gamma_start, "horizon": horizon}, rows=True)
        self.tree = tree
        self.layout = layout if layout is not None else StrategyLayout.lossless(tree)
        if self.layout.tree is not tree:
            raise ParameterError("the layout is for another public tree")
        actions = self.layout.num_actions
        check_memory(8 * (4 * actions + 3 * tree.num_nodes * tree.num_hands + tree.num_cards),
                     f"the public-tree engine on {tree.game.spec} ({tree.num_nodes:,} nodes x "
                     f"{tree.num_hands:,} hands)", "solve it with --engine sampled (public chance sampling)")
        self.regrets = np.zeros(actions)
        self.average_accumulator = np.zeros(actions)
        self.strategy = np.zeros(actions)
        self.iteration = 0
        self._state = RowState(self.regrets, self.average_accumulator, self.strategy, np.zeros(actions),
                               np.zeros(self.layout.num_rows if variant in ROW_RULES else 0))
        self._tree_view = tree_view(tree)
        self._layout_view = self.layout.view()
        self._work = workspace(tree)
        self._rematch()

    def _rematch(self) -> None:
        """Regret matching of every row from the state (regrets, prediction, volatility), no update."""
        for rows in self.layout.rows_of_player:
            match_player(self._settings, self.iteration, rows, self.layout.action_offset, self._state,
                         self.strategy)

    def iterate(self, iterations: int = 1) -> VectorCFR:
        """Run ``iterations`` iterations (both players, alternating, player 0 first)."""
        check_iterations(self.variant, self.horizon, self.iteration, iterations)
        rows0, rows1 = self.layout.rows_of_player
        run_iterations(self._tree_view, self._layout_view, self._settings, rows0, rows1, self.iteration,
                       iterations, self._state, self._work)
        self.iteration += iterations
        return self

    def average_strategy(self) -> np.ndarray:
        """Average strategy per row action (uniform where nothing accumulated)."""
        return normalize_per_infoset(self.average_accumulator, self.layout.action_offset)

    def current_strategy(self) -> np.ndarray:
        return self.strategy.copy()

