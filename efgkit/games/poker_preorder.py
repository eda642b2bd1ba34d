"""The numba kernel that expands a limit-poker betting skeleton over every deal, writing
the tree in depth-first preorder for ``LimitPoker.compile`` (the rules are in ``poker``).

Three bundles carry its input and output: ``SkeletonView`` (the card-independent betting
tree), ``DealTables`` (what each deal slot can deal, with which probability) and
``builder.Preorder`` (the per-node arrays ``tree_from_preorder`` takes, shared by every fast
builder).
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numba
import numpy as np

from efgkit.games.hand_ranking import hand_value
from efgkit.games.protocol import CHANCE, TERMINAL


class SkeletonView(NamedTuple):
    """The betting skeleton (``poker._BettingSkeleton``), breadth-first, per skeleton node:
    ``kind`` int8, ``first_child``, ``num_children``, ``deal_slot`` (-1 off chance nodes) and
    ``boards_dealt`` int64, ``folder`` int8 (-1: nobody folded), ``contribution`` float64
    (nodes, 2); ``board_radix`` int64 (board slots,) codes the dealt boards in mixed radix,
    ``num_board_codes`` of them; ``max_depth`` of the skeleton and the ``max_children`` of
    any of its nodes."""

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
    ``outcome_mask`` int64 (outcomes,) of card bits; ``max_outcomes`` of any slot. The deck:
    ``num_ranks``, ``num_suits``, ``num_cards``.
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
    num_ranks: int
    num_suits: int
    num_cards: int


def skeleton_view(skeleton) -> SkeletonView:
    """The kernel's view of a ``poker._BettingSkeleton``."""
    return SkeletonView(skeleton.kind, skeleton.first_child, skeleton.num_children, skeleton.deal_slot,
                        skeleton.boards_dealt, skeleton.folder, skeleton.contribution, skeleton.board_radix,
                        skeleton.num_board_codes, skeleton.max_depth, int(skeleton.num_children.max()))


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
    return DealTables(starts, counts, sizes, probability, game.deal_by_rank, copies, cards, masks,
                      int(counts.max()), deck.num_ranks, deck.num_suits, deck.num_cards)


class _Workspace(NamedTuple):
    """The kernel's scratch arrays, allocated in Python (each ``np.empty`` in a kernel is one
    more numba function a first run compiles). The depth-first stack, int64 (capacity,) each
    but ``prob`` float64: the skeleton ``node``, its ``depth``, the deal ``slot`` its entry
    deals (-1: none), that ``outcome``, and the chance probability ``prob`` of the edge into
    it; ``dealt`` int64 (slots,) the outcome of each deal slot on the current path (-1: not
    dealt); ``hands`` int64 (2, cards of a full deal) and ``hand_values`` int64 (2,) for the
    showdown."""

    node: np.ndarray
    depth: np.ndarray
    slot: np.ndarray
    outcome: np.ndarray
    prob: np.ndarray
    dealt: np.ndarray
    hands: np.ndarray
    hand_values: np.ndarray


def expand_deals(skeleton: SkeletonView, deals: DealTables, out) -> int:
    """Expand the betting ``skeleton`` over every deal of ``deals`` into ``out`` (a
    ``builder.Preorder``, depth-first preorder); returns the number of nodes written."""
    capacity = (skeleton.max_depth + 1) * max(deals.max_outcomes, skeleton.max_children) + 1
    slots = deals.slot_count.shape[0]
    hand_cards = deals.outcome_cards.shape[1] * slots
    work = _Workspace(*(np.empty(capacity, np.int64) for _ in range(4)), np.empty(capacity),
                      np.full(slots, -1, np.int64), np.empty((2, hand_cards), np.int64),
                      np.empty(2, np.int64))
    return _expand_deals(skeleton, deals, work, out)


@numba.njit(cache=True, inline="always")
def _hand_of(player, dealt, boards, deals, hand):
    """Write ``player``'s private cards and the ``boards`` dealt board outcomes into ``hand``
    (int64); returns the card count. ``dealt`` int64 (slots,): the outcome of each slot."""
    # Inlined, so the constant players 0 and 1 make no literal specialisations; the count
    # starts from an array entry, not the constant 0, so neither does hand_value's.
    count = deals.slot_size[player]
    row = deals.slot_start[player] + dealt[player]
    for k in range(count):
        hand[k] = deals.outcome_cards[row, k]
    for slot in range(2, 2 + boards):
        row = deals.slot_start[slot] + dealt[slot]
        for k in range(deals.slot_size[slot]):
            hand[count] = deals.outcome_cards[row, k]
            count += 1
    return count


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True)
def _expand_deals(skeleton, deals, work, out):
    """Expand the betting skeleton over every deal, writing nodes in depth-first preorder.

    ``skeleton`` a ``SkeletonView``, ``deals`` ``DealTables``, ``work`` a ``_Workspace``,
    ``out`` ``builder.Preorder``. ``work.dealt[slot]`` holds the outcome of each deal slot
    on the current path: a stack entry that deals a slot sets it when popped, and everything
    popped before its next sibling lies in its subtree. Infoset code = (skeleton node *
    private outcomes + own hand) * board codes + board code; public code = skeleton node *
    board codes + board code. Returns the number of nodes written.
    """
    stack, dealt, hands, hand_values = work, work.dealt, work.hands, work.hand_values
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
        boards = skeleton.boards_dealt[node]
        board = 0
        for j in range(boards):
            board += (dealt[2 + j] + 1) * skeleton.board_radix[j]
        children = 0
        value = 0.0
        code = -1
        if kind == CHANCE:
            children = _push_deals(deals, skeleton.deal_slot[node], dealt, skeleton.first_child[node],
                                   depth + 1, stack, top)
        elif kind == TERMINAL:
            # The showdown stays in this loop: moved into a helper, its two hand_value calls
            # made the whole build about five times slower.
            folder = skeleton.folder[node]
            if folder == 0:
                value = -skeleton.contribution[node, 0]
            elif folder == 1:
                value = skeleton.contribution[node, 1]
            else:
                for player in range(2):  # one inlined copy of _hand_of: quicker to compile
                    size = _hand_of(player, dealt, boards, deals, hands[player])
                    hand_values[player] = hand_value(hands[player], size, deals.num_ranks, deals.num_suits)
                if hand_values[0] > hand_values[1]:
                    value = skeleton.contribution[node, 1]
                elif hand_values[0] < hand_values[1]:
                    value = -skeleton.contribution[node, 0]
        else:
            children = skeleton.num_children[node]
            for k in range(children):
                at = top + children - 1 - k
                stack.node[at] = skeleton.first_child[node] + k
                stack.depth[at] = depth + 1
                stack.slot[at] = -1
                stack.prob[at] = 1.0
            code = (node * deals.slot_count[0] + dealt[kind]) * skeleton.num_board_codes + board
        out.kind[count] = kind
        out.depth[count] = depth
        out.num_children[count] = children
        out.chance_prob[count] = prob
        out.utility[count] = value
        out.infoset_code[count] = code
        out.public_code[count] = node * skeleton.num_board_codes + board
        top += children
        count += 1
    return count
