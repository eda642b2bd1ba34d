"""Counterfactual values at fold and showdown terminals in O(hands), with card removal.

Johanson et al. 2011 §4: at a terminal, the value of each of a player's hands is a sum
over the opponent's hands that share no card with it, weighted by the opponent's reach.
Summing per card (``card_sum[c]``: reach of the opponent hands holding card ``c``) and
correcting by inclusion-exclusion gives every hand's sum in O(hands): with ``k`` hole
cards, hands compatible with ``h`` = all - sum over h's cards of card_sum + (k - 1) * h's
own reach (the one hand sharing every card with ``h`` is ``h`` itself, counted ``k`` times).
At a showdown the same sums run over hands sorted by strength, strictly below (wins) and
strictly above (losses); ties pay nothing.

Arguments: ``opponent_reach`` float64 (hands,), 0 for hands that meet the board;
``hand_cards`` int64 (hands, k); ``card_sum`` float64 (cards,) scratch, all zero on entry
and on return; ``out`` float64 (hands,) receives the values of the player's hands (0 for
hands that meet the board).
"""

from __future__ import annotations

import numba

from efgkit.poker.codes import FOLD

WRITE, ADD, MAXIMISE = 0, 1, 2
"""How a terminal's value reaches its parent's row (``combined``): written into its own row,
added into the parent's (an opponent's node) or maximised into it (the responder's node in a
best response)."""
CANCELLATION = 1e-12
"""Relative size below which an inclusion-exclusion difference is rounding residue."""


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def fold_payoff(contribution, node, folder, player):
    """What ``player`` wins at fold terminal ``node`` (``contribution`` float64 (nodes, 2)):
    its own chips lost if it folded, the folder's chips otherwise."""
    return -contribution[node, player] if folder == player else contribution[node, folder]


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def fold_values(opponent_reach, hand_cards, valid_hands, card_sum, payoff, out):
    """``out[h] = payoff * (reach of the opponent's hands compatible with h)`` for the hands
    ``valid_hands`` (int64, those sharing no card with the board); 0 for the others."""
    out[:] = 0.0
    total = compatible_totals(opponent_reach, hand_cards, valid_hands, card_sum)
    for x in range(valid_hands.shape[0]):
        h = valid_hands[x]
        out[h] = payoff * compatible_reach(opponent_reach, hand_cards, card_sum, total, h)
    card_sum[:] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def compatible_totals(opponent_reach, hand_cards, valid_hands, card_sum):
    """The opponent's total reach over ``valid_hands`` (summed in their order) and, for
    two-card hands, each card's share of it added into ``card_sum`` (the caller clears it),
    each card's additions in hand order. Hands in card order share their first card in runs,
    whose sum stays in a local (a store-to-load chain through memory otherwise); a hand's
    second card is never the card held, so every card's sum sees the same additions in the
    same order as adding into ``card_sum`` directly."""
    total = 0.0
    if hand_cards.shape[1] == 1:  # a one-card hand meets only itself
        for x in range(valid_hands.shape[0]):
            total += opponent_reach[valid_hands[x]]
        return total
    if valid_hands.shape[0] == 0:
        return total
    held = hand_cards[valid_hands[0], 0]  # the first card's sum, in a local while consecutive hands share it
    held_sum = card_sum[held]
    for x in range(valid_hands.shape[0]):  # two hole cards: the engine plays at most two
        h = valid_hands[x]
        r = opponent_reach[h]
        total += r
        if hand_cards[h, 0] != held:
            card_sum[held] = held_sum
            held = hand_cards[h, 0]
            held_sum = card_sum[held]
        held_sum += r
        card_sum[hand_cards[h, 1]] += r  # never the held card: a hand's cards differ
    card_sum[held] = held_sum
    return total


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def compatible_reach(opponent_reach, hand_cards, card_sum, total, h):
    """The opponent's reach over the hands compatible with ``h``, from ``compatible_totals``."""
    if hand_cards.shape[1] == 1:
        return total - opponent_reach[h]
    compatible = total + opponent_reach[h] - card_sum[hand_cards[h, 0]] - card_sum[hand_cards[h, 1]]
    return _cancelled(compatible, total)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def showdown_values(opponent_reach, hand_cards, sorted_hands, strength, card_sum, win_payoff,
                    lose_payoff, out):
    """``out[h] = win_payoff * (compatible reach below h) - lose_payoff * (compatible reach above h)``.

    ``sorted_hands`` int64 (m,): the hands valid on this board, ascending ``strength``
    int64 (m,); every other hand gets 0.
    """
    out[:] = 0.0
    sorted_showdown_values(opponent_reach, hand_cards, sorted_hands, strength, card_sum, win_payoff,
                           lose_payoff, out)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def sorted_showdown_values(opponent_reach, hand_cards, sorted_hands, strength, card_sum, win_payoff,
                           lose_payoff, out):
    """``showdown_values`` writing only the rows ``sorted_hands`` of ``out``."""
    if hand_cards.shape[1] == 1:
        _one_card_showdown(opponent_reach, sorted_hands, strength, win_payoff, lose_payoff, out)
        return
    _two_card_showdown(opponent_reach, hand_cards, sorted_hands, strength, card_sum, win_payoff,
                       lose_payoff, out)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _cancelled(difference, total):
    """``difference`` of sums of ``total``'s parts, 0 when within their rounding error.

    Inclusion-exclusion leaves a residue of order 1e-16 x total where the true sum is 0
    (every compatible hand unreachable); direct sums give exactly 0 there, and CFR's
    regret matching is discontinuous at 0, so the residue is dropped.
    """
    return 0.0 if abs(difference) <= CANCELLATION * total else difference


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _two_card_showdown(opponent_reach, hand_cards, sorted_hands, strength, card_sum, win_payoff,
                       lose_payoff, out):
    """``showdown_values`` for two-card hands (the engine plays at most two)."""
    m = sorted_hands.shape[0]
    below = 0.0
    start = 0
    while start < m:
        end = start
        while end < m and strength[end] == strength[start]:
            end += 1
        for x in range(start, end):
            h = sorted_hands[x]
            wins = below - card_sum[hand_cards[h, 0]] - card_sum[hand_cards[h, 1]]
            out[h] = win_payoff * _cancelled(wins, below)
        for x in range(start, end):
            h = sorted_hands[x]
            r = opponent_reach[h]
            below += r
            card_sum[hand_cards[h, 0]] += r
            card_sum[hand_cards[h, 1]] += r
        start = end
    card_sum[:] = 0.0
    above = 0.0
    end = m
    while end > 0:
        start = end
        while start > 0 and strength[start - 1] == strength[end - 1]:
            start -= 1
        for x in range(start, end):
            h = sorted_hands[x]
            losses = above - card_sum[hand_cards[h, 0]] - card_sum[hand_cards[h, 1]]
            out[h] -= lose_payoff * _cancelled(losses, above)
        for x in range(start, end):
            h = sorted_hands[x]
            r = opponent_reach[h]
            above += r
            card_sum[hand_cards[h, 0]] += r
            card_sum[hand_cards[h, 1]] += r
        end = start
    card_sum[:] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def strength_groups(hand_cards, sorted_hands, strength, sorted_cards, group_start):
    """Per-board tables of ``grouped_showdown_values`` for two-card hands: ``sorted_cards``
    int64 (>= m, 2) the cards of ``sorted_hands`` (m,) in their order, ``group_start`` int64
    (>= m + 1,) the first position of each run of equal ``strength``, then m; returns the
    number of runs."""
    m = sorted_hands.shape[0]
    groups = 0
    for x in range(m):
        sorted_cards[x, 0] = hand_cards[sorted_hands[x], 0]
        sorted_cards[x, 1] = hand_cards[sorted_hands[x], 1]
        if x == 0 or strength[x] != strength[x - 1]:
            group_start[groups] = x
            groups += 1
    group_start[groups] = m
    return groups


@numba.njit(cache=True, no_cfunc_wrapper=True)
def grouped_showdown_values(opponent_reach, sorted_hands, sorted_cards, group_start, groups, card_sum,
                            win_payoff, lose_payoff, sorted_reach, sorted_values, compatible=None):
    """``sorted_showdown_values`` for two-card hands from a board's ``strength_groups``, each
    hand's value in strength order into ``sorted_values`` float64 (>= m,): the same operations
    in the same order, bit-identical, without the per-hand strength comparisons and
    ``hand_cards`` lookups (the opponent's reach gathered into ``sorted_reach`` (>= m,) first).
    With ``compatible`` (float64, indexed like ``opponent_reach``) each hand's compatible reach
    is added into it, bit-identical to ``fold_values`` with payoff 1: once the ascending sweep
    is over, its total and card sums are ``compatible_totals``' (the same additions in the same
    order)."""
    m = sorted_hands.shape[0]
    reach = sorted_reach
    for x in range(m):
        reach[x] = opponent_reach[sorted_hands[x]]
    below = 0.0
    for g in range(groups):
        start, end = group_start[g], group_start[g + 1]
        for x in range(start, end):
            wins = below - card_sum[sorted_cards[x, 0]] - card_sum[sorted_cards[x, 1]]
            sorted_values[x] = win_payoff * _cancelled(wins, below)
        for x in range(start, end):
            below += reach[x]
            card_sum[sorted_cards[x, 0]] += reach[x]
            card_sum[sorted_cards[x, 1]] += reach[x]
    if compatible is not None:  # compatible_reach from the sweep's sums
        for x in range(m):
            total = below + reach[x] - card_sum[sorted_cards[x, 0]] - card_sum[sorted_cards[x, 1]]
            compatible[sorted_hands[x]] += _cancelled(total, below)
    card_sum[:] = 0.0
    above = 0.0
    for g in range(groups - 1, -1, -1):
        start, end = group_start[g], group_start[g + 1]
        for x in range(start, end):
            losses = above - card_sum[sorted_cards[x, 0]] - card_sum[sorted_cards[x, 1]]
            sorted_values[x] -= lose_payoff * _cancelled(losses, above)
        for x in range(start, end):
            above += reach[x]
            card_sum[sorted_cards[x, 0]] += reach[x]
            card_sum[sorted_cards[x, 1]] += reach[x]
    card_sum[:] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def add_showdown_and_compatible(opponent_reach, hand_cards, sorted_hands, strength, card_sum, sorted_cards,
                                group_start, sorted_reach, scratch, values, totals):
    """Add, for every hand ``h`` of ``sorted_hands`` (as ``showdown_values`` takes them), what
    ``showdown_values`` with payoffs 1 and 1 gives it to ``values[h]`` (the opponent's
    compatible reach below ``h`` less that above) and what ``fold_values`` with payoff 1 gives it
    to ``totals[h]`` (the compatible reach), bit-identical to running those kernels and adding.
    Two-card hands take ``strength_groups`` (into ``sorted_cards`` uint64 (>= m, 2) and
    ``group_start`` uint64 (>= m + 1,)) and one ``grouped_showdown_values`` sweep that also
    gives the compatible reach; ``sorted_reach`` float64 (>= m,) and ``scratch`` float64
    (>= hands,) are scratch."""
    if hand_cards.shape[1] == 1:
        showdown_values(opponent_reach, hand_cards, sorted_hands, strength, card_sum, 1.0, 1.0, scratch)
        for h in sorted_hands:
            values[h] += scratch[h]
        fold_values(opponent_reach, hand_cards, sorted_hands, card_sum, 1.0, scratch)
        for h in sorted_hands:
            totals[h] += scratch[h]
        return
    groups = strength_groups(hand_cards, sorted_hands, strength, sorted_cards, group_start)
    grouped_showdown_values(opponent_reach, sorted_hands, sorted_cards, group_start, groups, card_sum, 1.0,
                            1.0, sorted_reach, scratch, totals)
    for x in range(sorted_hands.shape[0]):
        values[sorted_hands[x]] += scratch[x]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _one_card_showdown(opponent_reach, sorted_hands, strength, win_payoff, lose_payoff, out):
    """``showdown_values`` for one-card hands: no other hand shares a hand's card."""
    m = sorted_hands.shape[0]
    below = 0.0
    start = 0
    while start < m:
        end = start
        group = 0.0
        while end < m and strength[end] == strength[start]:
            group += opponent_reach[sorted_hands[end]]
            out[sorted_hands[end]] = win_payoff * below
            end += 1
        below += group
        start = end
    above = 0.0
    end = m
    while end > 0:
        start = end
        group = 0.0
        while start > 0 and strength[start - 1] == strength[end - 1]:
            start -= 1
            group += opponent_reach[sorted_hands[start]]
            out[sorted_hands[start]] -= lose_payoff * above
        above += group
        end = start


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def combined(old, value, combine):
    """``value`` (``combine`` WRITE), ``old + value`` (ADD) or ``max(old, value)`` (MAXIMISE): a
    terminal's value written, or added or maximised straight into its parent's."""
    if combine == WRITE:
        return value
    return old + value if combine == ADD else max(old, value)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fold_values_batch(opponent_reach, hand_cards, valid_hands, card_sum, total, payoff, out, live=None):
    """``fold_values`` for many reach vectors at once: column ``c`` of ``opponent_reach``
    float64 (hands, columns) is one vector, paid ``payoff[c]``; ``card_sum`` float64 (cards,
    columns) and ``total`` float64 (columns,) are scratch (``card_sum`` zero on entry and on
    return). Only the rows ``valid_hands`` of ``out`` are written. The columns run innermost
    over contiguous memory, so the per-hand card lookups are shared by every column.
    ``live`` (hands,), optional: the rows of ``opponent_reach`` that may be nonzero; the others
    are zero and left out of the sums (a strategy's zero-reach hands: no work adding zeros)."""
    columns = opponent_reach.shape[1]
    total[:columns] = 0.0
    one_card = hand_cards.shape[1] == 1
    for x in range(valid_hands.shape[0]):
        h = valid_hands[x]
        if live is not None:  # (the branch is compiled only with ``live``)
            if live[h] == 0:
                continue
        r = opponent_reach[h]
        for c in range(columns):
            total[c] += r[c]
        if not one_card:
            first, second = card_sum[hand_cards[h, 0]], card_sum[hand_cards[h, 1]]
            for c in range(columns):
                first[c] += r[c]
                second[c] += r[c]
    for x in range(valid_hands.shape[0]):
        h = valid_hands[x]
        r, row = opponent_reach[h], out[h]
        if one_card:  # a one-card hand meets only itself
            for c in range(columns):
                row[c] = payoff[c] * (total[c] - r[c])
            continue
        first, second = card_sum[hand_cards[h, 0]], card_sum[hand_cards[h, 1]]
        for c in range(columns):
            row[c] = payoff[c] * _cancelled(total[c] + r[c] - first[c] - second[c], total[c])
    if not one_card:
        card_sum[:, :columns] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def showdown_values_batch(opponent_reach, hand_cards, sorted_hands, strength, card_sum, total, win_payoff,
                          lose_payoff, out, target, combine, live=None):
    """``showdown_values`` for many reach vectors at once (the columns of ``opponent_reach`` float64
    (hands, columns), paid ``win_payoff[c]`` / ``lose_payoff[c]``); scratch and written rows as in
    ``fold_values_batch``: the wins in ``out`` and the values ``combined`` (int64 ``combine``) into
    ``target`` (``out`` itself when writing). ``total`` holds the running compatible sum; ``live`` as
    in ``fold_values_batch`` (pruned rows add nothing). Two-dimensional indexing and one loop adding a
    hand's reach to the total and both its cards' sums (row views and a loop per sum cost 20% more,
    the adding loop as an inline helper 8%); a one-card hand's card is counted twice, harmlessly: no
    other hand holds it, so its sum is 0 whenever it is read."""
    columns = opponent_reach.shape[1]
    m = sorted_hands.shape[0]
    last = hand_cards.shape[1] - 1
    total[:columns] = 0.0
    end = 0
    while end < m:  # wins: the hands strictly below, ascending
        start = end
        while end < m and strength[end] == strength[start]:
            end += 1
        for x in range(start, end):
            h = sorted_hands[x]
            a, b = hand_cards[h, 0], hand_cards[h, last]
            for c in range(columns):
                out[h, c] = win_payoff[c] * _cancelled(total[c] - card_sum[a, c] - card_sum[b, c], total[c])
        for x in range(start, end):
            h = sorted_hands[x]
            if live is not None:
                if live[h] == 0:
                    continue
            a, b = hand_cards[h, 0], hand_cards[h, last]
            for c in range(columns):
                r = opponent_reach[h, c]
                total[c] += r
                card_sum[a, c] += r
                card_sum[b, c] += r
    card_sum[:, :columns] = 0.0
    total[:columns] = 0.0
    start = m
    while start > 0:  # losses: the hands strictly above, descending
        end = start
        while start > 0 and strength[start - 1] == strength[end - 1]:
            start -= 1
        for x in range(start, end):
            h = sorted_hands[x]
            a, b = hand_cards[h, 0], hand_cards[h, last]
            for c in range(columns):
                loss = lose_payoff[c] * _cancelled(total[c] - card_sum[a, c] - card_sum[b, c], total[c])
                target[h, c] = combined(target[h, c], out[h, c] - loss, combine)
        for x in range(start, end):
            h = sorted_hands[x]
            if live is not None:
                if live[h] == 0:
                    continue
            a, b = hand_cards[h, 0], hand_cards[h, last]
            for c in range(columns):
                r = opponent_reach[h, c]
                total[c] += r
                card_sum[a, c] += r
                card_sum[b, c] += r
    card_sum[:, :columns] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def dealt_terminal_values(view, board, node, player, opponent_reach, card_sum, out):
    """``player``'s values at the fold or showdown terminal ``node`` of a walk over one dealt
    board, chance weight included: ``view`` a ``BettingView``; ``board`` any board bundle
    with ``valid`` / ``valid_count`` (per level), ``weight`` (levels,), ``final_hands`` /
    ``final_strength`` / ``final_count`` (the final board's hands by strength) and
    ``hand_cards`` (the sampled solver's and the board walk's)."""
    level = view.level[node]
    scale = board.weight[level]
    if view.kind[node] == FOLD:
        payoff = fold_payoff(view.contribution, node, view.folder[node], player)
        fold_values(opponent_reach, board.hand_cards, board.valid[level, :board.valid_count[level]], card_sum,
                    payoff * scale, out)
        return
    count = board.final_count[0]
    showdown_values(opponent_reach, board.hand_cards, board.final_hands[0, :count],
                    board.final_strength[0, :count], card_sum, view.contribution[node, 1 - player] * scale,
                    view.contribution[node, player] * scale, out)
