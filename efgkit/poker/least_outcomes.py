"""The least showdown outcome of each pair of hands over every completion of a board.

Brown & Sandholm's lower bound on a gift (seed 004, §5.2: "we use the minimum reachable
payoff") needs, below a history ``h`` = (betting, both hands, board so far), the least
utility of any terminal. Fold payoffs depend on the betting only; a showdown's sign depends
on the board cards still to come. So per ordered pair of hands (x, y), compatible with each
other and with the board, this module finds the least outcome for x over every completion
of the board to its final size: -1 if x loses on some completion, else 0 if it ties on
some, else +1 (x wins on every one). With few ranks a hand can always win or tie; in
52-card flop hold'em A♥A♠ against A♣A♦ ties on every flop, so nothing is assumed.

The kernel enumerates completions in lexicographic order and compares only the pairs still
open (neither side has lost yet), each hand's strength computed once per completion when a
pair first needs it; it stops when every pair has seen both sides lose. Memory: the
(hands, hands) int8 table and the open pairs, never a table per completion.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.games.hand_ranking import hand_value

LOSE, TIE, WIN, NO_PAIR = -1, 0, 1, 2
"""Outcomes for the row hand in ``least_outcomes``' table; ``NO_PAIR`` where the two hands
share a card or meet the board."""


def least_outcomes(hand_cards: np.ndarray, hand_mask: np.ndarray, board: np.ndarray, final_size: int,
                   num_cards: int, num_ranks: int, num_suits: int) -> np.ndarray:
    """int8 (hands, hands): the least showdown outcome (``LOSE``, ``TIE``, ``WIN``) of hand x
    (row) against hand y (column) over every completion of ``board`` (int64 cards) to
    ``final_size`` cards from the ``num_cards`` deck (ranks ``card // num_suits``);
    ``NO_PAIR`` where x and y share a card or either meets the board. ``hand_cards`` int64
    (hands, k) and ``hand_mask`` int64 (hands,) as ``betting_tree.private_hands`` gives."""
    board = np.asarray(board, np.int64)
    board_mask = int(sum(1 << int(c) for c in board.tolist()))
    valid = np.flatnonzero((hand_mask & board_mask) == 0)
    x, y = np.triu_indices(valid.shape[0], 1)
    x, y = valid[x], valid[y]
    disjoint = (hand_mask[x] & hand_mask[y]) == 0
    pairs = np.ascontiguousarray(np.stack([x[disjoint], y[disjoint]], axis=1).astype(np.int64))
    outcome = np.full((hand_cards.shape[0],) * 2, NO_PAIR, np.int8)
    outcome[pairs[:, 0], pairs[:, 1]] = WIN
    outcome[pairs[:, 1], pairs[:, 0]] = WIN
    left = np.array([c for c in range(num_cards) if not board_mask >> c & 1], np.int64)
    extra = final_size - board.shape[0]
    _least_outcomes(hand_cards, board, left, extra, num_ranks, num_suits, pairs, outcome)
    return outcome


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _least_outcomes(hand_cards, board, left, extra, num_ranks, num_suits, pairs, outcome):
    """Every completion of ``board`` by ``extra`` cards of ``left`` (int64, ascending), in
    lexicographic order, recorded into ``outcome`` for the open ``pairs`` until none is open."""
    k, size = hand_cards.shape[1], board.shape[0] + extra
    cards = np.zeros(k + size, np.int64)
    cards[k:k + board.shape[0]] = board
    index = np.arange(extra)
    values = np.zeros(hand_cards.shape[0], np.int64)
    stamp = np.full(hand_cards.shape[0], -1, np.int64)  # the completion each value is for
    open_pairs, completion = pairs.shape[0], 0
    while open_pairs > 0:
        mask = np.int64(0)
        for j in range(extra):
            cards[k + board.shape[0] + j] = left[index[j]]
            mask |= np.int64(1) << left[index[j]]
        open_pairs = _record(hand_cards, cards, mask, num_ranks, num_suits, pairs, open_pairs, outcome,
                             values, stamp, completion)
        completion += 1
        j = extra - 1  # the next combination of ``extra`` positions in ``left``
        while j >= 0 and index[j] == left.shape[0] - extra + j:
            j -= 1
        if j < 0:
            break
        index[j] += 1
        for m in range(j + 1, extra):
            index[m] = index[m - 1] + 1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _record(hand_cards, cards, mask, num_ranks, num_suits, pairs, open_pairs, outcome, values, stamp,
            completion):
    """One completion (``cards[k:]`` the final board, ``mask`` its new cards): every open pair
    whose hands miss those cards records its outcome; a pair where both sides have lost is
    closed (swapped past the open ones). Returns the open pairs left."""
    k = hand_cards.shape[1]
    for i in range(open_pairs - 1, -1, -1):  # backwards, so a swap brings a visited pair
        x, y = pairs[i, 0], pairs[i, 1]
        vx = _strength(hand_cards, cards, mask, num_ranks, num_suits, values, stamp, completion, x, k)
        vy = _strength(hand_cards, cards, mask, num_ranks, num_suits, values, stamp, completion, y, k)
        if vx < 0 or vy < 0:
            continue
        if vx < vy:
            outcome[x, y] = LOSE
        elif vx > vy:
            outcome[y, x] = LOSE
        else:
            outcome[x, y] = min(outcome[x, y], TIE)
            outcome[y, x] = min(outcome[y, x], TIE)
        if outcome[x, y] == LOSE and outcome[y, x] == LOSE:
            open_pairs -= 1
            pairs[i, 0], pairs[i, 1] = pairs[open_pairs, 0], pairs[open_pairs, 1]
            pairs[open_pairs, 0], pairs[open_pairs, 1] = x, y
    return open_pairs


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _strength(hand_cards, cards, mask, num_ranks, num_suits, values, stamp, completion, h, k):
    """Hand ``h``'s showdown strength on this completion (-1 if it holds one of its cards),
    computed once per completion."""
    if stamp[h] != completion:
        stamp[h] = completion
        held = np.int64(0)
        for c in range(k):
            held |= np.int64(1) << hand_cards[h, c]
            cards[c] = hand_cards[h, c]
        values[h] = -1 if held & mask else hand_value(cards, cards.shape[0], num_ranks, num_suits)
    return values[h]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def outcome_reach(outcome, reach, valid, out):
    """``out[s + 1, x] = Σ_y reach[y]`` over the hands y against which hand x's least outcome
    (``outcome`` int8 (hands, hands), ``least_outcomes``) is ``s``, for the hands ``valid``
    (int64, those off the board; ``reach`` float64 (hands,)); ``out`` float64 (3, hands), zeroed
    here, 0 for the other hands."""
    out[:] = 0.0
    for i in range(valid.shape[0]):
        x = valid[i]
        for j in range(valid.shape[0]):
            y = valid[j]
            s = outcome[x, y]
            if s != NO_PAIR:
                out[s + 1, x] += reach[y]
