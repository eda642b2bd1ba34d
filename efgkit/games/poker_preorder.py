"""The numba kernel that expands a limit-poker betting skeleton over every deal, writing
the tree in depth-first preorder for ``LimitPoker.compile`` (the rules are in ``poker``)."""

from __future__ import annotations

import numba
import numpy as np

from efgkit.games.hand_ranking import hand_value


@numba.njit(cache=True)
def _hand_of(player_slot, dealt, boards, slot_start, slot_size, outcome_cards, hand):
    """Write a player's private cards and the dealt boards into ``hand``; returns the count."""
    count = 0
    row = slot_start[player_slot] + dealt[player_slot]
    for k in range(slot_size[player_slot]):
        hand[count] = outcome_cards[row, k]
        count += 1
    for slot in range(2, 2 + boards):
        row = slot_start[slot] + dealt[slot]
        for k in range(slot_size[slot]):
            hand[count] = outcome_cards[row, k]
            count += 1
    return count


@numba.njit(cache=True)
def expand_deals(
    skeleton_kind, skeleton_first_child, skeleton_num_children, skeleton_deal_slot, skeleton_boards_dealt,
    skeleton_folder, skeleton_contribution, slot_start, slot_count, slot_size, slot_probability,
    deal_by_rank, outcome_copies, outcome_cards, outcome_mask, board_radix, num_board_codes, num_ranks,
    num_suits, num_cards, skeleton_depth, kind, depth, num_children, chance_prob, utility, infoset_code,
    public_code,
):
    """Expand the betting skeleton over every deal, writing nodes in depth-first preorder.

    ``dealt[slot]`` holds the outcome of each deal slot (0: player 0's hand, 1: player
    1's, then the boards) on the current path: a stack entry that deals a slot sets it
    when popped, and everything popped before its next sibling lies in its subtree.
    Infoset code = (skeleton node * private outcomes + own hand) * board codes + board
    code; public code = skeleton node * board codes + board code. Returns the number of
    nodes written.
    """
    num_private = slot_count[0]
    capacity = (skeleton_depth + 1) * max(slot_count.max(), skeleton_num_children.max()) + 1
    stack_node = np.empty(capacity, np.int64)
    stack_depth = np.empty(capacity, np.int64)
    stack_slot = np.empty(capacity, np.int64)
    stack_outcome = np.empty(capacity, np.int64)
    stack_prob = np.empty(capacity, np.float64)
    dealt = np.full(slot_count.shape[0], -1, np.int64)
    hand0 = np.empty(outcome_cards.shape[1] * slot_count.shape[0], np.int64)
    hand1 = np.empty_like(hand0)
    stack_node[0], stack_depth[0], stack_slot[0], stack_prob[0] = 0, 0, -1, 1.0
    top = 1
    count = 0
    while top > 0:
        top -= 1
        node = stack_node[top]
        node_depth = stack_depth[top]
        prob = stack_prob[top]
        if stack_slot[top] >= 0:
            dealt[stack_slot[top]] = stack_outcome[top]
        node_kind = skeleton_kind[node]
        boards = skeleton_boards_dealt[node]
        board = 0
        for j in range(boards):
            board += (dealt[2 + j] + 1) * board_radix[j]
        children = 0
        value = 0.0
        code = -1
        if node_kind == 2:
            slot = skeleton_deal_slot[node]
            used = 0
            for earlier in range(slot):
                used |= outcome_mask[slot_start[earlier] + dealt[earlier]]
            for outcome in range(slot_count[slot] - 1, -1, -1):
                if deal_by_rank:
                    remaining = outcome_copies[slot_start[slot] + outcome]
                    for earlier in range(slot):
                        if dealt[earlier] == outcome:
                            remaining -= 1
                    probability = remaining / (num_cards - slot)
                elif outcome_mask[slot_start[slot] + outcome] & used:
                    remaining = 0
                else:
                    remaining = 1
                    probability = slot_probability[slot]
                if remaining > 0:
                    stack_node[top] = skeleton_first_child[node]
                    stack_depth[top] = node_depth + 1
                    stack_slot[top] = slot
                    stack_outcome[top] = outcome
                    stack_prob[top] = probability
                    top += 1
                    children += 1
        elif node_kind == 3:
            folder = skeleton_folder[node]
            if folder == 0:
                value = -skeleton_contribution[node, 0]
            elif folder == 1:
                value = skeleton_contribution[node, 1]
            else:
                size = _hand_of(0, dealt, boards, slot_start, slot_size, outcome_cards, hand0)
                _hand_of(1, dealt, boards, slot_start, slot_size, outcome_cards, hand1)
                value0 = hand_value(hand0, size, num_ranks, num_suits)
                value1 = hand_value(hand1, size, num_ranks, num_suits)
                if value0 > value1:
                    value = skeleton_contribution[node, 1]
                elif value0 < value1:
                    value = -skeleton_contribution[node, 0]
        else:
            children = skeleton_num_children[node]
            first = skeleton_first_child[node]
            for k in range(children - 1, -1, -1):
                stack_node[top] = first + k
                stack_depth[top] = node_depth + 1
                stack_slot[top] = -1
                stack_prob[top] = 1.0
                top += 1
            code = (node * num_private + dealt[node_kind]) * num_board_codes + board
        kind[count] = node_kind
        depth[count] = node_depth
        num_children[count] = children
        chance_prob[count] = prob
        utility[count] = value
        infoset_code[count] = code
        public_code[count] = node * num_board_codes + board
        count += 1
    return count
