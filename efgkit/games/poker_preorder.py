"""The numba kernel that expands a limit-poker betting skeleton over every deal, writing
the tree in depth-first preorder for ``LimitPoker.compile`` (the rules are in ``poker``).

The betting skeleton is the card-independent betting tree (``betting_tree.BettingTree``, the
one the poker engines walk and the public tree expands) behind the two hand deals. Three
bundles carry the kernel's input and output: ``SkeletonView`` (the skeleton's arrays),
``DealTables`` (what each deal slot can deal, with which probability) and
``builder.Preorder`` (the per-node arrays ``tree_from_preorder`` takes, shared by every fast
builder).

The skeleton keeps the betting tree's node kinds (``DEAL``, ``FOLD``, ``SHOWDOWN``), which
overlap the Game protocol's codes as numbers but not in meaning; the kernel reads them and
writes the protocol's ``CHANCE`` and ``TERMINAL`` into the preorder.
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numba
import numpy as np

from efgkit.games.betting_tree import DEAL, FOLD, HAND_DEALS, SHOWDOWN, BettingTree
from efgkit.games.hand_ranking import showdown_values
from efgkit.games.protocol import CHANCE, TERMINAL


class SkeletonView(NamedTuple):
    """The betting skeleton, breadth-first: the two hand deals, then the betting tree's
    nodes. Per skeleton node: ``kind`` int8 (0 / 1 the player to act, ``DEAL``, ``FOLD`` or
    ``SHOWDOWN``: the betting tree's codes), ``first_child``, ``num_children``, ``deal_slot``
    (-1 off deal nodes) and ``boards_dealt`` int64, ``folder`` int8 (-1: nobody folded),
    ``contribution`` float64 (nodes, 2); ``board_radix`` int64 (board slots,) codes the dealt
    boards in mixed radix, ``num_board_codes`` of them; ``max_depth`` of the skeleton and the
    ``max_children`` of any of its nodes."""

    kind: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    deal_slot: np.ndarray
    boards_dealt: np.ndarray
    folder: np.ndarray
    contribution: np.ndarray
    board_radix: np.ndarray
    num_board_codes: int
    max_depth: int
    max_children: int


class DealTables(NamedTuple):
    """The deal slots (0: player 0's hand, 1: player 1's, then the boards) as flat arrays.

    Per slot, int64 (slots,): ``slot_start`` (its first outcome row), ``slot_count``
    (outcomes), ``slot_size`` (cards per outcome); ``slot_probability`` float64 (slots,), each
    outcome's probability when dealing cards. Per outcome row: ``outcome_copies`` int64
    (outcomes,) when ``deal_by_rank``, ``outcome_cards`` int64 (outcomes, max cards),
    ``outcome_mask`` int64 (outcomes,) of card bits; ``max_outcomes`` of any slot; the deck's
    ``num_cards``. The showdown: ``showdown`` int64 (private outcomes, complete boards) the
    ``hand_ranking.hand_value`` of each private outcome with each complete board (-1 where
    they share a card), the board numbered sum_j outcome of board slot j x
    ``board_stride[j]`` (int64 (board slots,)).
    """

    slot_start: np.ndarray
    slot_count: np.ndarray
    slot_size: np.ndarray
    slot_probability: np.ndarray
    deal_by_rank: bool
    outcome_copies: np.ndarray
    outcome_cards: np.ndarray
    outcome_mask: np.ndarray
    max_outcomes: int
    num_cards: int
    showdown: np.ndarray
    board_stride: np.ndarray


def skeleton_view(tree: BettingTree, board_radix: np.ndarray, num_board_codes: int) -> SkeletonView:
    """The kernel's view of the betting ``tree`` behind the ``HAND_DEALS`` (deal slots 0 and 1),
    boards coded by ``board_radix`` (``poker._BettingSkeleton``)."""
    hands = np.arange(HAND_DEALS)
    num_children = np.concatenate([np.ones(HAND_DEALS, np.int64), tree.num_children])
    deal_slot = np.where(tree.kind == DEAL, HAND_DEALS + tree.level, -1)
    return SkeletonView(
        kind=np.concatenate([np.full(HAND_DEALS, DEAL), tree.kind]).astype(np.int8),
        first_child=np.concatenate([hands + 1, tree.first_child + HAND_DEALS]).astype(np.int64),
        num_children=num_children,
        deal_slot=np.concatenate([hands, deal_slot]).astype(np.int64),
        boards_dealt=np.concatenate([np.zeros(HAND_DEALS), tree.level]).astype(np.int64),
        folder=np.concatenate([np.full(HAND_DEALS, -1), tree.folder]).astype(np.int8),
        contribution=np.concatenate([np.repeat(tree.contribution[:1], HAND_DEALS, axis=0),
                                     tree.contribution]),
        board_radix=board_radix,
        num_board_codes=num_board_codes,
        max_depth=tree.max_depth - 1 + HAND_DEALS,  # edges on the longest path
        max_children=int(num_children.max()),
    )


def deal_tables(game) -> DealTables:
    """The deal slots of a ``LimitPoker`` game as flat arrays for the kernel."""
    counts = np.array([len(outcomes) for outcomes in game.slot_outcome_cards], np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    sizes = np.array(game.deal_sizes, np.int64)
    cards = np.zeros((int(counts.sum()), int(sizes.max())), np.int64)
    rows = [combo for outcomes in game.slot_outcome_cards for combo in outcomes]
    for row, combo in enumerate(rows):
        cards[row, :len(combo)] = combo
    masks = np.array([sum(1 << card for card in combo) for combo in rows], np.int64)
    deck = game.card_structure
    left = deck.num_cards - np.concatenate([[0], np.cumsum(sizes)[:-1]])
    probability = np.array([1 / comb(int(n), int(k)) for n, k in zip(left, sizes, strict=True)])
    copies = np.array([copies for _ in sizes for copies in game.outcome_copies] if game.deal_by_rank
                      else np.ones(len(rows)), np.int64)
    # Every complete board: board slot j's outcome is (board // stride[j]) % count[j].
    board_counts = counts[2:]
    stride = (np.cumprod(board_counts[::-1])[::-1] // board_counts).astype(np.int64)
    board = np.arange(int(np.prod(board_counts)))
    outcome_rows = [starts[2 + j] + (board // stride[j]) % count for j, count in enumerate(board_counts)]
    boards = np.concatenate([np.zeros((board.shape[0], 0), np.int64)]
                            + [cards[rows_j, :sizes[2 + j]] for j, rows_j in enumerate(outcome_rows)], axis=1)
    hands = np.ascontiguousarray(cards[starts[0]:starts[0] + counts[0], :sizes[0]])
    if game.deal_by_rank:  # outcomes are ranks: their representative cards may repeat
        hand_masks, board_masks = np.zeros(hands.shape[0], np.int64), np.zeros(board.shape[0], np.int64)
    else:
        hand_masks = masks[starts[0]:starts[0] + counts[0]]
        board_masks = np.bitwise_or.reduce([masks[rows_j] for rows_j in outcome_rows], axis=0) \
            if outcome_rows else np.zeros(1, np.int64)
    showdown = showdown_values(hands, np.ascontiguousarray(boards), hand_masks, board_masks, deck.num_ranks,
                               deck.num_suits)
    return DealTables(starts, counts, sizes, probability, game.deal_by_rank, copies, cards, masks,
                      int(counts.max()), deck.num_cards, showdown, stride)


class _Workspace(NamedTuple):
    """The kernel's scratch arrays, allocated in Python (each ``np.empty`` in a kernel is one
    more numba function a first run compiles). The depth-first stack, int64 (capacity,) each
    but ``prob`` float64: the skeleton ``node``, its ``depth``, the deal ``slot`` its entry
    deals (-1: none), that ``outcome``, and the chance probability ``prob`` of the edge into
    it; ``dealt`` int64 (slots,) the outcome of each deal slot on the current path (-1: not
    dealt)."""

    node: np.ndarray
    depth: np.ndarray
    slot: np.ndarray
    outcome: np.ndarray
    prob: np.ndarray
    dealt: np.ndarray


def expand_deals(skeleton: SkeletonView, deals: DealTables, out) -> int:
    """Expand the betting ``skeleton`` over every deal of ``deals`` into ``out`` (a
    ``builder.Preorder``, depth-first preorder); returns the number of nodes written."""
    showdowns = skeleton.kind == SHOWDOWN
    if np.any(skeleton.boards_dealt[showdowns] != deals.board_stride.shape[0]):  # a bug, not bad input
        raise RuntimeError("a showdown before the last board: the showdown table has complete boards only")
    capacity = (skeleton.max_depth + 1) * max(deals.max_outcomes, skeleton.max_children) + 1
    work = _Workspace(*(np.empty(capacity, np.int64) for _ in range(4)), np.empty(capacity),
                      np.full(deals.slot_count.shape[0], -1, np.int64))
    return _expand_deals(skeleton, deals, work, out)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _push_deals(deals, slot, dealt, child, depth, stack, top):
    """Push the outcomes of deal ``slot`` (last first) as entries for skeleton node ``child``
    at ``depth`` onto ``stack`` from ``top``; returns how many. Cards already dealt on the
    path (``dealt``) cannot come again."""
    used = 0
    for earlier in range(slot):
        used |= deals.outcome_mask[deals.slot_start[earlier] + dealt[earlier]]
    pushed = 0
    for outcome in range(deals.slot_count[slot] - 1, -1, -1):
        if deals.deal_by_rank:
            remaining = deals.outcome_copies[deals.slot_start[slot] + outcome]
            for earlier in range(slot):
                if dealt[earlier] == outcome:
                    remaining -= 1
            probability = remaining / (deals.num_cards - slot)
        elif deals.outcome_mask[deals.slot_start[slot] + outcome] & used:
            remaining = 0
        else:
            remaining = 1
            probability = deals.slot_probability[slot]
        if remaining > 0:
            at = top + pushed
            stack.node[at] = child
            stack.depth[at] = depth
            stack.slot[at] = slot
            stack.outcome[at] = outcome
            stack.prob[at] = probability
            pushed += 1
    return pushed


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _protocol_kind(kind):
    """The Game protocol's code (PLAYER0, PLAYER1, CHANCE, TERMINAL) of a skeleton node kind."""
    if kind == DEAL:
        return CHANCE
    return TERMINAL if kind == FOLD or kind == SHOWDOWN else kind


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _expand_deals(skeleton, deals, work, out):
    """Expand the betting skeleton over every deal, writing nodes in depth-first preorder.

    ``skeleton`` a ``SkeletonView``, ``deals`` ``DealTables``, ``work`` a ``_Workspace``, ``out``
    ``builder.Preorder``. ``work.dealt[slot]`` holds each deal slot's outcome on the current path
    (set when its entry is popped). Infoset code = (skeleton node * private outcomes + own hand) *
    board codes + board code; public code = skeleton node * board codes + board code. Returns the
    number of nodes written."""
    stack, dealt = work, work.dealt
    stack.node[0], stack.depth[0], stack.slot[0], stack.prob[0] = 0, 0, -1, 1.0
    top = 1
    count = 0
    while top > 0:
        top -= 1
        node = stack.node[top]
        depth = stack.depth[top]
        prob = stack.prob[top]
        if stack.slot[top] >= 0:
            dealt[stack.slot[top]] = stack.outcome[top]
        kind = skeleton.kind[node]
        board = 0
        complete = 0  # the complete board's column of ``deals.showdown`` (at showdowns)
        for j in range(skeleton.boards_dealt[node]):
            board += (dealt[2 + j] + 1) * skeleton.board_radix[j]
            complete += dealt[2 + j] * deals.board_stride[j]
        children = 0
        value = 0.0
        code = -1
        if kind == DEAL:
            children = _push_deals(deals, skeleton.deal_slot[node], dealt, skeleton.first_child[node],
                                   depth + 1, stack, top)
        elif kind == FOLD or kind == SHOWDOWN:
            loser = skeleton.folder[node]
            if kind == SHOWDOWN:  # every board is dealt: the lower hand loses, a tie pays 0
                hand0, hand1 = deals.showdown[dealt[0], complete], deals.showdown[dealt[1], complete]
                loser = 1 if hand0 > hand1 else 0 if hand0 < hand1 else -1
            if loser == 0:
                value = -skeleton.contribution[node, 0]
            elif loser == 1:
                value = skeleton.contribution[node, 1]
        else:
            children = skeleton.num_children[node]
            for k in range(children):
                at = top + children - 1 - k
                stack.node[at] = skeleton.first_child[node] + k
                stack.depth[at] = depth + 1
                stack.slot[at] = -1
                stack.prob[at] = 1.0
            code = (node * deals.slot_count[0] + dealt[kind]) * skeleton.num_board_codes + board
        out.kind[count] = _protocol_kind(kind)
        out.depth[count] = depth
        out.num_children[count] = children
        out.chance_prob[count] = prob
        out.utility[count] = value
        out.infoset_code[count] = code
        out.public_code[count] = node * skeleton.num_board_codes + board
        top += children
        count += 1
    return count
