"""The numba kernel that writes II-Goofspiel's tree in depth-first preorder for
``Goofspiel.compile`` (the rules are in ``goofspiel``, the codes in ``goofspiel_codes``)."""

from __future__ import annotations

import numba
import numpy as np

from efgkit.games.goofspiel_codes import BID_BITS, OUTCOME_BITS, OUTCOMES_SHIFT, ROUND_BITS
from efgkit.games.preorder_nodes import write_node


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _infoset_code(player, packed_bids, packed_outcomes):
    """int64 code of an infoset: player | own bids << 1 | outcomes (player 0's view) << 33."""
    return player | packed_bids << 1 | packed_outcomes << OUTCOMES_SHIFT


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _public_code(round_index, packed_outcomes):
    """int64 code of a public state: outcomes (player 0's view) << 4 | round."""
    return packed_outcomes << ROUND_BITS | round_index


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _nth_unused_card(used_mask, n):
    """The n-th (0-based) card c >= 1 whose bit is clear in ``used_mask``."""
    card = 0
    while True:
        card += 1
        if not (used_mask >> card) & 1:
            if n == 0:
                return card
            n -= 1


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _round_result(bid0, bid1, point):
    """The outcome code of a round (1: player 0's bid ``bid0`` wins the ``point`` card, 2:
    player 1's ``bid1`` wins it, 3: a tie) and player 0's point difference it adds."""
    if bid0 > bid1:
        return 1, point
    if bid0 < bid1:
        return 2, -point
    return 3, 0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _write_round_start(out, node, cards, round_index, packed_outcomes, packed_bids0):
    """Write round ``round_index``'s start at ``node`` of ``out`` (a ``builder.Preorder``):
    the chance node revealing its point card, then player 0's bid, whose infoset holds its
    own ``packed_bids0`` and the ``packed_outcomes`` so far. Returns the next free node."""
    public = _public_code(round_index, packed_outcomes)
    write_node(out, node, 2, 3 * round_index, 1, -1, public)
    write_node(out, node + 1, 0, 3 * round_index + 1, cards - round_index,
               _infoset_code(0, packed_bids0, packed_outcomes), public)
    return node + 2


@numba.njit(cache=True, no_cfunc_wrapper=True)
def emit_preorder(cards, out):
    """Write GS``cards`` in depth-first preorder into ``out``, a ``builder.Preorder``
    (its ``chance_prob`` stays 1: every chance node has one outcome).

    Decision level ``2 * round + player`` is a bid; ``position[level]`` is the index of
    the bid among the bidder's remaining cards (ascending, the action order). Prefix
    arrays per round hold each player's packed bids, the packed outcomes (player 0's
    view) and player 0's point difference, so backtracking only has to clear a card from
    the bidder's used-card mask. Returns the number of nodes written.
    """
    chosen = np.zeros(2 * cards, np.int64)
    position = np.zeros(2 * cards, np.int64)
    used = np.zeros(2, np.int64)
    bids_prefix = np.zeros((2, cards + 1), np.int64)
    outcome_prefix = np.zeros(cards + 1, np.int64)
    score_prefix = np.zeros(cards + 1, np.int64)
    node = _write_round_start(out, 0, cards, 0, 0, 0)
    level = 0
    while level >= 0:
        player = level & 1
        round_index = level >> 1
        if position[level] == cards - round_index:
            level -= 1
            if level >= 0:
                used[level & 1] ^= 1 << chosen[level]
                position[level] += 1
            continue
        card = _nth_unused_card(used[player], position[level])
        chosen[level] = card
        used[player] |= 1 << card
        bids_prefix[player, round_index + 1] = (
            bids_prefix[player, round_index] | card << (BID_BITS * round_index)
        )
        if player == 0:  # player 1 bids next, in the same round
            write_node(out, node, 1, 3 * round_index + 2, cards - round_index,
                       _infoset_code(1, bids_prefix[1, round_index], outcome_prefix[round_index]),
                       _public_code(round_index, outcome_prefix[round_index]))
            node += 1
            level += 1
            position[level] = 0
            continue
        next_round = round_index + 1
        outcome, gain = _round_result(chosen[level - 1], card, cards - round_index)
        score_prefix[next_round] = score_prefix[round_index] + gain
        outcome_prefix[next_round] = (
            outcome_prefix[round_index] | outcome << (OUTCOME_BITS * round_index)
        )
        if next_round == cards:  # the last round's bids end the game
            write_node(out, node, 3, 3 * cards, 0, -1, _public_code(next_round, outcome_prefix[next_round]))
            out.utility[node] = score_prefix[next_round]
            node += 1
            used[1] ^= 1 << card
            position[level] += 1
            continue
        node = _write_round_start(out, node, cards, next_round, outcome_prefix[next_round],
                                  bids_prefix[0, next_round])
        level += 1
        position[level] = 0
    return node
