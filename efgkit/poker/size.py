"""The size of a limit-poker game, counted from its betting rules without building anything.

Betting never depends on the cards, so each size is a sum over rounds of (betting nodes
of that round) x (card deals seen by then). Histories are counted as a GameTree would
hold them (``LimitPoker.num_nodes``: chance nodes for each player's hand and each
board); an information set is (own hand, boards so far, betting), so heads-up limit
hold'em has sum_r decisions_r x C(52,2) x boards_r = 3.19e14 of them (Burch's thesis
§2.1.1, "around 3.19 * 10^14"). The public tree has sum_r (betting nodes_r) x (public
boards_r) nodes, each holding one vector of ``C(n, k)`` hands.
"""

from __future__ import annotations

from itertools import product
from math import comb

from efgkit.games.poker import Betting, LimitPoker, PokerState
from efgkit.games.protocol import CHANCE, TERMINAL


def betting_nodes_per_round(game: LimitPoker) -> tuple[list[int], list[int]]:
    """(decision nodes, all betting nodes including terminals and round ends) per round."""
    rounds = game.num_rounds
    decisions, nodes = [0] * rounds, [0] * rounds
    stack = [(PokerState((0, 0), Betting(((),), game.blinds, 0)), 0)]
    while stack:
        state, round_index = stack.pop()
        nodes[round_index] += 1
        player = game.current_player(state)
        if player == TERMINAL:
            continue
        if player == CHANCE:
            slot = len(state.cards)
            stack.append((game.apply(state, game.slot_outcome_names[slot][0]), round_index + 1))
            continue
        decisions[round_index] += 1
        stack.extend((game.apply(state, label), round_index) for label in game.legal_actions(state))
    return decisions, nodes


def _board_deals(game: LimitPoker, dealt_before: int) -> list[int]:
    """Card-level deals of the boards up to each round, after ``dealt_before`` known cards."""
    deals, total, left = [], 1, game.card_structure.num_cards - dealt_before
    for cards in game.card_structure.public_cards_per_round:
        total *= comb(left, cards)
        left -= cards
        deals.append(total)
    return deals


def _rank_infoset_deals(game: LimitPoker) -> list[int]:
    """Distinct (own rank, board ranks) a player can see by each round, dealing by rank."""
    cards = game.card_structure
    counts = []
    for round_index in range(game.num_rounds):
        boards = sum(1 for n in cards.public_cards_per_round[1:round_index + 1] if n)
        seen = 0
        for ranks in product(range(cards.num_ranks), repeat=1 + boards):
            if all(ranks.count(r) <= cards.num_suits for r in set(ranks)):
                seen += 1
        counts.append(seen)
    return counts


def poker_game_size(game: LimitPoker) -> dict[str, int]:
    """Histories, information sets (per player and total) and public-tree size of ``game``."""
    cards = game.card_structure
    n, k = cards.num_cards, cards.private_cards_per_player
    decisions, nodes = betting_nodes_per_round(game)
    if game.deal_by_rank:
        own_views = _rank_infoset_deals(game)
    else:
        own_views = [comb(n, k) * deals for deals in _board_deals(game, k)]
    public = _board_deals(game, 0)
    infosets = sum(d * v for d, v in zip(decisions, own_views, strict=True))
    return {
        "histories": game.num_nodes(),
        "infosets": infosets,
        "betting_sequences": sum(nodes),
        "public_tree_nodes": sum(b * p for b, p in zip(nodes, public, strict=True)),
        "hands": comb(n, k),
    }
