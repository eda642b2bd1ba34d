"""Waugh's hand isomorphism: published class counts, bijection, canonical forms, bad input."""

import subprocess
import sys
from math import comb
from pathlib import Path

import numba
import numpy as np
import pytest

from efgkit.abstraction.cards.holdem.isomorphism import HandIndexer, index_hand
from efgkit.errors import AbstractionError

ROOT = Path(__file__).resolve().parent.parent
WAUGH_COUNTS = {
    (2,): [169],
    (2, 3): [169, 1_286_792],
    (2, 3, 1): [169, 1_286_792, 55_190_538],
    (2, 3, 1, 1): [169, 1_286_792, 55_190_538, 2_428_287_420],
    (2, 4): [169, 13_960_050],
    (2, 5): [169, 123_156_254],
}
BOARD_COUNTS = {(3,): [1_755], (4,): [16_432], (5,): [134_459]}
SUIT_PERMUTATIONS = np.array([[a, b, c, d] for a in range(4) for b in range(4) for c in range(4)
                              for d in range(4) if len({a, b, c, d}) == 4], np.int64)


@numba.njit(cache=True)
def _all_deals(num_cards, round_start, count):
    """Every deal of the rounds (ordered by round, ascending within a round), by backtracking."""
    total = round_start[-1]
    deals = np.empty((count, total), np.int8)
    cards = np.full(total, -1, np.int64)
    used = np.zeros(num_cards, np.bool_)
    round_of = np.empty(total, np.int64)
    for r in range(round_start.shape[0] - 1):
        round_of[round_start[r]:round_start[r + 1]] = r
    row = 0
    position = 0
    while position >= 0:
        if cards[position] >= 0:
            used[cards[position]] = False
        card = cards[position] + 1
        if cards[position] < 0 and position > 0 and round_of[position - 1] == round_of[position]:
            card = cards[position - 1] + 1
        while card < num_cards and used[card]:
            card += 1
        if card >= num_cards:
            cards[position] = -1
            position -= 1
            continue
        cards[position] = card
        used[card] = True
        if position == total - 1:
            deals[row] = cards
            row += 1
        else:
            position += 1
    return deals


@numba.njit(cache=True)
def _canonical_forms(deals, round_start, permutations):
    """Brute force: per deal, the smallest tuple of per-round card masks over all 24 suit renamings."""
    rounds = round_start.shape[0] - 1
    forms = np.empty((deals.shape[0], rounds), np.uint64)
    candidate = np.empty(rounds, np.uint64)
    for row in range(deals.shape[0]):
        for p in range(permutations.shape[0]):
            for r in range(rounds):
                mask = np.uint64(0)
                for k in range(round_start[r], round_start[r + 1]):
                    card = np.int64(deals[row, k])
                    mask |= np.uint64(1) << np.uint64(4 * (card >> 2) + permutations[p, card & 3])
                candidate[r] = mask
            smaller = p == 0
            for r in range(rounds):
                if candidate[r] != forms[row, r]:
                    smaller = smaller or candidate[r] < forms[row, r]
                    break
            if smaller:
                forms[row] = candidate
    return forms


@numba.njit(cache=True)
def _count_indices_of_all_flops(tables, size):
    """Index every (hole, flop) deal of the 52-card deck; how often each index is hit."""
    hits = np.zeros(size, np.int64)
    cards = np.empty(5, np.int8)
    for a in range(52):
        for b in range(a + 1, 52):
            for c in range(52):
                for d in range(c + 1, 52):
                    for e in range(d + 1, 52):
                        if c == a or c == b or d == a or d == b or e == a or e == b:
                            continue
                        cards[0], cards[1], cards[2], cards[3], cards[4] = a, b, c, d, e
                        hits[index_hand(tables, cards, 5)] += 1
    return hits


def _packed(forms, num_cards):
    """One uint64 key per canonical form (its per-round masks side by side; rounds x cards <= 64)."""
    return sum(forms[:, r] << np.uint64(num_cards * r) for r in range(forms.shape[1]))


def _random_deals(rng, n, width, num_cards=52):
    return np.argsort(rng.random((n, num_cards)), axis=1)[:, :width].astype(np.int8)


def _rename_and_shuffle(rng, indexer, deals):
    """Apply a random suit permutation per deal and shuffle the cards within each round."""
    permutation = SUIT_PERMUTATIONS[rng.integers(0, 24, len(deals))]
    renamed = 4 * (deals // 4) + np.take_along_axis(permutation, deals.astype(np.int64) % 4, axis=1)
    starts = np.concatenate([[0], np.cumsum(indexer.cards_per_round)])
    for lo, hi in zip(starts[:-1], starts[1:], strict=False):
        if hi > deals.shape[1]:
            break
        order = np.argsort(rng.random((len(deals), hi - lo)), axis=1)
        renamed[:, lo:hi] = np.take_along_axis(renamed[:, lo:hi], order, axis=1)
    return renamed.astype(np.int8)


@pytest.mark.parametrize("cards_per_round, sizes", list(WAUGH_COUNTS.items()) + list(BOARD_COUNTS.items()))
def test_round_sizes_match_waugh_counts(cards_per_round, sizes):
    indexer = HandIndexer(cards_per_round)
    assert [indexer.round_size(r) for r in range(indexer.num_rounds)] == sizes


@pytest.mark.parametrize("board", [3, 4, 5])
def test_board_counts_equal_brute_force_canonical_forms(board):
    indexer = HandIndexer((board,))
    deals = _all_deals(52, np.array([0, board]), comb(52, board))
    forms = _canonical_forms(deals, np.array([0, board]), SUIT_PERMUTATIONS)
    assert len(np.unique(forms[:, 0])) == indexer.round_size(0)
    indices = indexer.index(deals)
    assert len(np.unique(indices)) == indexer.round_size(0)
    form_of_index = np.zeros(indexer.round_size(0), np.uint64)
    form_of_index[indices] = forms[:, 0]
    assert np.array_equal(form_of_index[indices], forms[:, 0])


def test_preflop_exhaustive_bijection():
    indexer = HandIndexer((2, 3, 1, 1))
    deals = _all_deals(52, np.array([0, 2]), 1326)
    indices = indexer.index(deals)
    hits = np.bincount(indices, minlength=169)
    assert np.array_equal(hits, indexer.multiplicity(0, np.arange(169)))
    back = indexer.unindex(0, indices)
    start = np.array([0, 2])
    assert np.array_equal(_canonical_forms(back, start, SUIT_PERMUTATIONS),
                          _canonical_forms(deals, start, SUIT_PERMUTATIONS))
    assert np.array_equal(indexer.index(indexer.unindex(0, np.arange(169))), np.arange(169))


def test_flop_exhaustive_every_index_hit_as_often_as_its_multiplicity():
    indexer = HandIndexer((2, 3))
    size = indexer.round_size(1)
    hits = _count_indices_of_all_flops(indexer.tables, size)
    multiplicity = indexer.multiplicity(1, np.arange(size))
    assert hits.sum() == multiplicity.sum() == 25_989_600 == indexer.deal_count(1)
    assert np.array_equal(hits, multiplicity)
    assert np.array_equal(indexer.index(indexer.unindex(1, np.arange(size))), np.arange(size))


@pytest.mark.parametrize("cards_per_round, num_ranks",
                         [((2, 3, 1, 1), 4), ((2, 4), 5), ((2, 5), 5), ((2, 3), 6), ((3, 1, 1), 5)])
def test_reduced_deck_exhaustive_index_is_the_canonical_form(cards_per_round, num_ranks):
    indexer = HandIndexer(cards_per_round, num_ranks=num_ranks)
    for r in range(indexer.num_rounds):
        start = np.concatenate([[0], np.cumsum(cards_per_round[:r + 1])])
        deals = _all_deals(4 * num_ranks, start, indexer.deal_count(r))
        indices = indexer.index(deals)
        size = indexer.round_size(r)
        assert indices.min() >= 0 and indices.max() < size
        assert np.array_equal(np.bincount(indices, minlength=size), indexer.multiplicity(r, np.arange(size)))
        forms = _canonical_forms(deals, start, SUIT_PERMUTATIONS)
        packed = _packed(forms, 4 * num_ranks)
        # Same index <=> same canonical form: each index has one form, and there are `size` forms.
        form_of_index = np.zeros(size, np.uint64)
        form_of_index[indices] = packed
        assert np.array_equal(form_of_index[indices], packed)
        assert len(np.unique(packed)) == size
        # unindex(i) is a hand of class i (so unindex(index(x)) is x up to suit names and order).
        representatives = _canonical_forms(indexer.unindex(r, np.arange(size)), start, SUIT_PERMUTATIONS)
        assert np.array_equal(_packed(representatives, 4 * num_ranks), form_of_index)


@pytest.mark.parametrize("cards_per_round", [(2, 3, 1, 1), (2, 4), (2, 5), (5,)])
def test_sampled_52_card_hands_round_trip_and_ignore_suit_names(cards_per_round):
    rng = np.random.default_rng(7)
    indexer = HandIndexer(cards_per_round)
    for r in range(indexer.num_rounds):
        width = indexer.cards_through(r)
        start = np.concatenate([[0], np.cumsum(cards_per_round[:r + 1])])
        deals = _random_deals(rng, 20_000, width)
        indices = indexer.index(deals)
        assert indices.min() >= 0 and indices.max() < indexer.round_size(r)
        assert np.array_equal(indexer.index(_rename_and_shuffle(rng, indexer, deals)), indices)
        representatives = indexer.unindex(r, indices)
        assert np.array_equal(_canonical_forms(representatives, start, SUIT_PERMUTATIONS),
                              _canonical_forms(deals, start, SUIT_PERMUTATIONS))
        assert np.array_equal(indexer.index(representatives), indices)
        random_indices = rng.integers(0, indexer.round_size(r), 20_000)
        assert np.array_equal(indexer.index(indexer.unindex(r, random_indices)), random_indices)


@pytest.mark.parametrize("cards_per_round", [(2, 3, 1, 1), (2, 5)])
def test_multiplicities_are_consistent_with_class_counts_on_the_river(cards_per_round):
    # For uniformly random deals E[1 / multiplicity(index)] = classes / deals; a merged or split
    # class would bias it. 200k samples: standard error ~0.02 %, the test allows 5 of them.
    rng = np.random.default_rng(11)
    indexer = HandIndexer(cards_per_round)
    last = indexer.num_rounds - 1
    inverse = 1.0 / indexer.multiplicity(last, indexer.index(_random_deals(rng, 200_000, 7)))
    expected = indexer.round_size(last) / indexer.deal_count(last)
    assert abs(inverse.mean() - expected) < 5 * inverse.std() / np.sqrt(len(inverse))


def test_flop_indices_of_both_turn_variants_agree_with_the_flop_indexer():
    rng = np.random.default_rng(3)
    flops = _random_deals(rng, 10_000, 5)
    reference = HandIndexer((2, 3)).index(flops)
    assert np.array_equal(HandIndexer((2, 3, 1, 1)).index(flops), reference)


@numba.njit(cache=True)
def _index_in_kernel(tables, deals, count):
    out = np.empty(deals.shape[0], np.int64)
    cards = np.empty(deals.shape[1], np.int8)
    for row in range(deals.shape[0]):
        cards[:] = deals[row]
        out[row] = index_hand(tables, cards, count)
    return out


def test_index_hand_from_an_njit_kernel_matches_and_flags_a_count_that_ends_no_round():
    indexer = HandIndexer((2, 3, 1, 1))
    deals = _random_deals(np.random.default_rng(5), 1_000, 7)
    assert np.array_equal(_index_in_kernel(indexer.tables, deals, 7), indexer.index(deals))
    assert np.array_equal(_index_in_kernel(indexer.tables, deals, 5), indexer.index(deals[:, :5]))
    assert (_index_in_kernel(indexer.tables, deals, 4) == -1).all()


@pytest.mark.parametrize("cards, message", [
    ([[0, 0]], "names a card twice"),
    ([[3, 52]], r"card ids must be 0\.\.51"),
    ([[-1, 5]], r"card ids must be 0\.\.51"),
    ([[0, 1, 2]], "ends no round"),
    ([0, 1], "2-D integer array"),
    ([[0.0, 1.0]], "2-D integer array"),
])
def test_bad_hands_are_refused_with_a_clear_message(cards, message):
    with pytest.raises(AbstractionError, match=message):
        HandIndexer((2, 3)).index(np.array(cards))


def test_bad_indexers_rounds_and_indices_are_refused():
    with pytest.raises(AbstractionError, match="num_ranks must be 2..13"):
        HandIndexer((2, 3), num_ranks=14)
    with pytest.raises(AbstractionError, match="positive card counts"):
        HandIndexer((2, 0))
    with pytest.raises(AbstractionError, match="do not fit"):
        HandIndexer((5, 4), num_ranks=2)
    indexer = HandIndexer((2, 3), num_ranks=6)
    with pytest.raises(AbstractionError, match="card ids must be 0..23"):
        indexer.index(np.array([[0, 24]]))
    with pytest.raises(AbstractionError, match="round must be 0..1"):
        indexer.unindex(2, [0])
    with pytest.raises(AbstractionError, match="outside 0..168"):
        HandIndexer((2,)).unindex(0, [169])
    with pytest.raises(AbstractionError, match="outside"):
        HandIndexer((2,)).multiplicity(0, [-1])


def test_benchmark_quick_mode_runs():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_isomorphism.py"), "--quick"],
                            capture_output=True, text=True, timeout=300, check=True)
    assert "index_hand" in result.stdout and "2428287420" in result.stdout
