"""Hold'em hand evaluator: exhaustive class and category counts, order agreement with
hand_ranking.hand_value and with eval7 on random hands, the incremental state, bad input."""

import itertools

import numba
import numpy as np
import pytest

from efgkit.abstraction.cards.holdem.evaluator import (
    CATEGORY_NAMES,
    CATEGORY_OF_RANK,
    EMPTY_KEY,
    EMPTY_MASK,
    NUM_HAND_RANKS,
    add_card,
    count_ranks,
    evaluate,
    hand_category,
    hand_rank,
    state_rank,
)
from efgkit.errors import ParameterError
from efgkit.games.hand_ranking import (
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    HIGH_CARD,
    PAIR,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    TWO_PAIR,
    hand_value,
)

CATEGORIES = [HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND,
              STRAIGHT_FLUSH]
FIVE_CARD_HANDS = [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 40]
FIVE_CARD_CLASSES = [1277, 2860, 858, 858, 10, 1277, 156, 156, 10]
SEVEN_CARD_HANDS = [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644, 3_473_184,
                    224_848, 41_584]


def _random_hands(count, cards, seed):
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, 52)), axis=1)[:, :cards]


@numba.njit(cache=True)
def _hand_values(hands):
    values = np.empty(hands.shape[0], np.int64)
    for row in range(hands.shape[0]):
        values[row] = hand_value(hands[row], hands.shape[1], 13, 4)
    return values


def _assert_same_order(ours, reference):
    """Every pair of hands compares the same way (same sign of the difference) under both."""
    order = np.lexsort((ours, reference))
    reference_steps = np.diff(np.asarray(reference)[order])
    our_steps = np.diff(np.asarray(ours, dtype=np.int64)[order])
    assert (our_steps >= 0).all()
    assert ((our_steps == 0) == (reference_steps == 0)).all()


def _by_category(rank_counts):
    return np.bincount(CATEGORY_OF_RANK[1:], weights=rank_counts[1:], minlength=9).astype(np.int64)


def test_all_five_card_hands_give_7462_classes_and_textbook_counts():
    counts = count_ranks(5)
    assert counts.sum() == 2_598_960
    assert np.count_nonzero(counts[1:]) == NUM_HAND_RANKS == 7462
    assert _by_category(counts)[CATEGORIES].tolist() == FIVE_CARD_HANDS
    assert np.bincount(CATEGORY_OF_RANK[1:], minlength=9)[CATEGORIES].tolist() == FIVE_CARD_CLASSES


def test_all_seven_card_hands_give_textbook_category_counts():
    counts = count_ranks(7)
    assert counts.sum() == 133_784_560
    assert _by_category(counts)[CATEGORIES].tolist() == SEVEN_CARD_HANDS
    assert np.count_nonzero(counts) == 4824  # classes a best-of-seven hand can have


def test_ranks_are_dense_and_ordered_by_category():
    assert (np.diff(CATEGORY_OF_RANK[1:]) >= 0).all()
    assert hand_category(1) == HIGH_CARD and hand_category(NUM_HAND_RANKS) == STRAIGHT_FLUSH
    assert CATEGORY_NAMES[hand_category(7000)] == "flush"
    assert [CATEGORY_NAMES[c] for c in CATEGORIES][0] == "high card"
    royal = evaluate(np.array([[48, 44, 40, 36, 32]]))[0]
    worst = evaluate(np.array([[20, 12, 8, 4, 1]]))[0]  # 7 5 4 3 2, not all one suit
    wheel = evaluate(np.array([[48, 0, 5, 10, 15]]))[0]  # A 2 3 4 5, mixed suits
    six_high = evaluate(np.array([[0, 5, 10, 15, 16]]))[0]
    assert (royal, worst) == (NUM_HAND_RANKS, 1)
    assert hand_category(int(wheel)) == STRAIGHT and six_high == wheel + 1


@pytest.mark.parametrize("cards", [5, 6, 7])
def test_order_agrees_with_hand_ranking(cards):
    hands = _random_hands(50_000, cards, seed=cards)
    _assert_same_order(evaluate(hands), _hand_values(hands))


@pytest.mark.parametrize("cards, count", [(5, 30_000), (6, 30_000), (7, 100_000)])
def test_order_agrees_with_eval7(cards, count):
    eval7 = pytest.importorskip("eval7")  # the test extra's independent evaluator
    deck = [eval7.Card(rank + suit) for rank in "23456789TJQKA" for suit in "cdhs"]
    hands = _random_hands(count, cards, seed=10 + cards)
    reference = np.array([eval7.evaluate([deck[c] for c in hand]) for hand in hands.tolist()])
    _assert_same_order(evaluate(hands), reference)


@numba.njit(cache=True)
def _ranks_on_board(board, holes):
    """The incremental state as a caller's kernel uses it: the board once, then each hole pair."""
    key, mask = EMPTY_KEY, EMPTY_MASK
    for card in board:
        key, mask = add_card(key, mask, card)
    ranks = np.empty(holes.shape[0], np.int32)
    for row in range(holes.shape[0]):
        first_key, first_mask = add_card(key, mask, holes[row, 0])
        ranks[row] = state_rank(*add_card(first_key, first_mask, holes[row, 1]))
    return ranks


def test_kernel_state_and_array_paths_agree():
    hands = _random_hands(2_000, 7, seed=3)
    ranks = evaluate(hands)
    for hand, rank in zip(hands[:200], ranks[:200], strict=True):
        key, mask = EMPTY_KEY, EMPTY_MASK
        for card in hand:
            key, mask = add_card(key, mask, card)
        assert state_rank(key, mask) == hand_rank(hand, 7) == rank
    assert _ranks_on_board(hands[0, 2:], hands[:, :2]).tolist()[:1] == ranks.tolist()[:1]
    valid = ~np.isin(hands[:, :2], hands[0, 2:]).any(axis=1)
    on_board = np.concatenate([hands[valid, :2], np.tile(hands[0, 2:], (valid.sum(), 1))], axis=1)
    assert _ranks_on_board(hands[0, 2:], hands[valid, :2]).tolist() == evaluate(on_board).tolist()
    assert evaluate(hands[:, ::-1].astype(np.int8)).tolist() == ranks.tolist()  # order, dtype free
    assert evaluate(hands[:, :6]).tolist() == [hand_rank(h, 6) for h in hands[:, :6]]


def test_rank_counts_over_a_partial_deck_match_brute_force():
    deck = np.array([51, 50, 47, 46, 43, 39, 38, 35, 31, 30, 27, 2, 0])
    for cards in (5, 7):
        hands = np.array(list(itertools.combinations(deck.tolist(), cards)))
        expected = np.bincount(evaluate(hands), minlength=NUM_HAND_RANKS + 1)
        assert count_ranks(cards, deck).tolist() == expected.tolist()
    assert count_ranks(7, deck[:6]).sum() == 0


@pytest.mark.parametrize(
    "cards, message",
    [
        (np.zeros((3, 4), np.int64), "5 <= k <= 7"),
        (np.zeros((3, 8), np.int64), "5 <= k <= 7"),
        (np.arange(7), "5 <= k <= 7"),
        (np.array([[0.0, 1, 2, 3, 4]]), "integers"),
        (np.array([[0, 1, 2, 3, 52]]), "hand 0"),
        (np.array([[0, 1, 2, 3, 4], [0, 1, 2, 3, -1]]), "hand 1"),
        (np.array([[0, 1, 2, 3, 4, 5], [7, 8, 9, 10, 9, 11]]), "holds a card twice"),
    ],
)
def test_bad_hands_are_refused(cards, message):
    with pytest.raises(ParameterError, match=message):
        evaluate(cards)


def test_bad_parameters_are_refused():
    with pytest.raises(ParameterError, match="5 to 7 cards"):
        count_ranks(4)
    with pytest.raises(ParameterError, match="twice"):
        count_ranks(5, [0, 1, 2, 3, 4, 4])
    with pytest.raises(ParameterError, match="0..51"):
        count_ranks(5, [0, 1, 2, 3, 60])
    for rank in (0, NUM_HAND_RANKS + 1, 1.5):
        with pytest.raises(ParameterError, match="1..7462"):
            hand_category(rank)
