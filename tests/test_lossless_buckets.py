"""LosslessCards numbers a hand by its cards, whichever hands are asked about together, so
``BucketLayout.row`` (one hand: interactive play, the ACPC bot) reads the hand's own row."""

import numpy as np
import pytest

from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import LosslessCards
from efgkit.specs import make_game


@pytest.mark.parametrize("spec", ["kuhn", "leduc", "holdem(ranks=2,rounds=2,caps=1-1)"])
def test_a_hands_lossless_bucket_does_not_depend_on_the_other_hands_passed(spec):
    game = make_game(spec)
    cards = LosslessCards(game)
    betting = BettingTree(game)
    hand_cards, _ = betting.hands()
    rng = np.random.default_rng(0)
    for round_index in range(game.num_rounds):
        dealt = int(sum(game.card_structure.public_cards_per_round[1:round_index + 1]))
        deck = rng.permutation(betting.num_cards)
        board = np.sort(deck[:dealt])
        every = cards.buckets(round_index, board, hand_cards)
        chosen = rng.permutation(hand_cards.shape[0])[:5]
        expected = every[chosen].tolist()
        assert cards.buckets(round_index, board, hand_cards[chosen]).tolist() == expected
        assert cards.buckets(round_index, board, hand_cards[chosen][:, ::-1]).tolist() == expected


def test_row_of_a_lossless_strategy_is_the_hands_own():
    game = make_game("leduc")
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    strategy = layout.random(3)
    decision, width = 0, int(layout.width[0])
    for hand in range(6):
        expected = strategy[layout.action_start[0] + hand * width:layout.action_start[0] + (hand + 1) * width]
        assert layout.row(strategy, decision, 0, [], [hand]).tolist() == expected.tolist()
