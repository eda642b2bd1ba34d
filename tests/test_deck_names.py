"""One deck, one set of names: a reduced hold'em deck keeps the top ranks (T-A for 5 ranks)
in the game's card names, the bucket tool's deck and an ACPC definition of the game, and the
game and the bucket pipeline's evaluator rank its hands alike (issue 30: the game named
holdem(ranks=5)'s cards 9-K while the bucket tool named them T-A)."""

import numpy as np
import pytest

from efgkit.abstraction.cards.holdem.deck import Deck
from efgkit.abstraction.cards.holdem.evaluator import evaluate
from efgkit.games.hand_ranking import hand_value
from efgkit.games.poker import RANK_SYMBOLS, rank_symbols
from efgkit.interop.acpc import game_definition, limit_poker
from efgkit.specs import make_game

REDUCED_DECKS = range(5, 14)


def _names(structure) -> list[str]:
    return [structure.card_name(card) for card in range(structure.num_cards)]


@pytest.mark.parametrize("ranks", REDUCED_DECKS)
def test_a_holdem_deck_keeps_the_top_ranks_in_the_game_the_bucket_tool_and_acpc(ranks):
    game = make_game(f"holdem(ranks={ranks},rounds=2)")
    structure, deck = game.card_structure, Deck(ranks)
    top_ranks = RANK_SYMBOLS[len(RANK_SYMBOLS) - ranks:]
    assert "".join(structure.rank_name(r) for r in range(ranks)) == top_ranks == deck.rank_chars
    # Suits are numbered differently (game s h d c, bucket files c d h s): same names, as sets.
    assert sorted(_names(structure)) == sorted(deck.format([card]) for card in range(deck.num_cards))
    assert {deck.format(deck.parse(name)) for name in _names(structure)} == set(_names(structure))
    assert "AsAh" in game.slot_outcome_names[0]
    acpc = limit_poker(game_definition(game), "acpc:written.game")
    assert _names(acpc.card_structure) == _names(structure)


def test_decks_of_fewer_suits_keep_openspiels_names():
    assert rank_symbols(3, 1) == "JQK" == rank_symbols(3, 2)  # Kuhn, Leduc
    assert rank_symbols(4, 3) == "TJQK"  # Cermak et al.'s Pbrc
    assert rank_symbols(13, 2) == RANK_SYMBOLS == rank_symbols(13, 4)
    assert rank_symbols(3, 4) == "QKA"


@pytest.mark.parametrize("ranks", REDUCED_DECKS)
def test_the_game_and_the_bucket_evaluator_rank_a_reduced_decks_hands_alike(ranks):
    """The game's showdown (hand_value on the deck's own ids) and the bucket pipeline's
    evaluator (the top-ranks standard ids) order random 7-card hands identically."""
    rng = np.random.default_rng(ranks)
    deck = Deck(ranks)
    hands = np.argsort(rng.random((3000, deck.num_cards)), axis=1)[:, :7].astype(np.int64)
    ours = np.array([hand_value(hand, 7, ranks, 4) for hand in hands])
    standard = evaluate(hands + deck.standard_offset)
    assert np.array_equal(np.unique(ours, return_inverse=True)[1],
                          np.unique(standard, return_inverse=True)[1])
    # The game's "A" is the strongest rank: aces beat kings on a board of the lowest ranks.
    structure = make_game(f"holdem(ranks={ranks},rounds=2)").card_structure
    card = {name: card for card, name in enumerate(_names(structure))}
    low = rank_symbols(ranks, 4)[:3]
    board = (card[low[0] + "s"], card[low[1] + "h"], card[low[2] + "d"])
    assert structure.showdown((card["As"], card["Ah"]), (card["Ks"], card["Kh"]), board) == 1
