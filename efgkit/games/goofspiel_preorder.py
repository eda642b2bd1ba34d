"""The numba kernel that writes II-Goofspiel's tree in depth-first preorder for
``Goofspiel.compile`` (the rules and the meaning of the codes are in ``goofspiel``)."""

from __future__ import annotations

import numba
import numpy as np

from efgkit.games.goofspiel import BID_BITS, OUTCOME_BITS, OUTCOMES_SHIFT, ROUND_BITS


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
    kind, depth, num_children = out.kind, out.depth, out.num_children
    utility, infoset_code, public_code = out.utility, out.infoset_code, out.public_code
    levels = 2 * cards
    chosen = np.zeros(levels, np.int64)
    position = np.zeros(levels, np.int64)
    used = np.zeros(2, np.int64)
    bids_prefix = np.zeros((2, cards + 1), np.int64)
    outcome_prefix = np.zeros(cards + 1, np.int64)
    score_prefix = np.zeros(cards + 1, np.int64)

    # Round 0 starts: reveal the top middle card, then player 0 bids.
    kind[0] = 2
    depth[0] = 0
    num_children[0] = 1
    infoset_code[0] = -1
    public_code[0] = 0
    kind[1] = 0
    depth[1] = 1
    num_children[1] = cards
    infoset_code[1] = 0
    public_code[1] = 0
    node = 2

    level = 0
    while level >= 0:
        player = level & 1
        round_index = level >> 1
        remaining = cards - round_index
        if position[level] == remaining:
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
        round_public = _public_code(round_index, outcome_prefix[round_index])
        if player == 0:
            kind[node] = 1
            depth[node] = 3 * round_index + 2
            num_children[node] = remaining
            infoset_code[node] = _infoset_code(
                1, bids_prefix[1, round_index], outcome_prefix[round_index]
            )
            public_code[node] = round_public
            node += 1
            level += 1
            position[level] = 0
            continue

        bid0 = chosen[level - 1]
        point = cards - round_index
        next_round = round_index + 1
        if bid0 > card:
            outcome = 1
            score_prefix[next_round] = score_prefix[round_index] + point
        elif bid0 < card:
            outcome = 2
            score_prefix[next_round] = score_prefix[round_index] - point
        else:
            outcome = 3
            score_prefix[next_round] = score_prefix[round_index]
        outcome_prefix[next_round] = (
            outcome_prefix[round_index] | outcome << (OUTCOME_BITS * round_index)
        )
        next_public = _public_code(next_round, outcome_prefix[next_round])
        if next_round == cards:
            kind[node] = 3
            depth[node] = 3 * cards
            num_children[node] = 0
            utility[node] = score_prefix[next_round]
            infoset_code[node] = -1
            public_code[node] = next_public
            node += 1
            used[1] ^= 1 << card
            position[level] += 1
            continue
        kind[node] = 2
        depth[node] = 3 * next_round
        num_children[node] = 1
        infoset_code[node] = -1
        public_code[node] = next_public
        kind[node + 1] = 0
        depth[node + 1] = 3 * next_round + 1
        num_children[node + 1] = cards - next_round
        infoset_code[node + 1] = _infoset_code(
            0, bids_prefix[0, next_round], outcome_prefix[next_round]
        )
        public_code[node + 1] = next_public
        node += 2
        level += 1
        position[level] = 0
    return node
