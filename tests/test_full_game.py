"""The streamed full-game best response equals the public-tree engine (itself equal to the
GameTree solvers, tests/test_poker_engine.py) on every card abstraction, with and without
suit isomorphism, wherever the work runs."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.errors import AbstractionError, StrategyError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards, LosslessCards
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.streamed.abstract_best_response import abstract_evaluation
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.suits import canonical_deals
from efgkit.poker.terminal_values import (
    fold_values,
    fold_values_batch,
    showdown_values,
    showdown_values_batch,
)
from efgkit.specs import make_game


def _assert_equal_engines(game, abstraction, seed: int = 0) -> None:
    layout = BucketLayout(BettingTree(game), abstraction)
    strategy = layout.random(seed)
    public = PublicTree(game)
    reference = evaluate_strategy(StrategyLayout.from_bucket_layout(public, layout), strategy)
    for card_blind in (False, None):  # the general walk; the card-blind one where it applies
        streamed = StreamedEvaluator(layout).evaluate(strategy, card_blind=card_blind)
        assert streamed.best_response_values == pytest.approx(reference.best_response_values, abs=1e-9)
        assert streamed.game_value == pytest.approx(reference.game_value, abs=1e-9)
        assert streamed.nash_conv == pytest.approx(reference.nash_conv, abs=1e-9)


@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)", "leduc", "leduc(ranks=4)", "twocard", "P111"])
def test_lossless_and_card_independent_strategies_equal_the_public_tree(spec):
    game = make_game(spec)
    _assert_equal_engines(game, LosslessCards(game))
    _assert_equal_engines(game, CardIndependent())


@pytest.mark.parametrize("spec", ["holdem(ranks=3,rounds=2)", "holdem(ranks=3,rounds=3,caps=1-1-1)"])
def test_suit_symmetric_abstractions_with_isomorphic_deals_equal_the_public_tree(spec):
    """Canonical hands and random imperfect-recall buckets: one flop, turn and river per
    suit class is walked and spread over its class; the values are the full game's."""
    game = make_game(spec)
    _assert_equal_engines(game, IsomorphicCards.canonical(game), seed=1)
    _assert_equal_engines(game, IsomorphicCards.hashed(game, (3, 4, 5, 5), seed=2), seed=3)


@st.composite
def holdem_rules(draw):
    rounds = draw(st.integers(1, 2))  # three rounds: the parametrised test above
    caps = "-".join(str(draw(st.integers(1, 2))) for _ in range(rounds))
    bets = "-".join(str(draw(st.integers(1, 4))) for _ in range(rounds))
    big = draw(st.integers(1, 4))
    small = draw(st.integers(0, big))
    return make_game(f"holdem(ranks=3,rounds={rounds},caps={caps},bets={bets},blinds={big}-{small})")


@settings(max_examples=8, deadline=None)
@given(game=holdem_rules(), buckets=st.tuples(*[st.integers(1, 6)] * 3), seed=st.integers(0, 2**31 - 1))
def test_random_rule_sets_and_abstractions_agree(game, buckets, seed):
    _assert_equal_engines(game, IsomorphicCards.hashed(game, (*buckets, 1), seed), seed)


def test_canonical_flops_cover_every_flop_once():
    deals, stabilisers = canonical_deals(52, 4, 3)
    assert len(deals) == 1755
    assert sum(24 // s for s in stabilisers) == 22100


def test_always_fold_in_a_reduced_hold_em_is_exploitable_for_750_mbb_per_game():
    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), CardIndependent())
    strategy = layout.pure(lambda labels: labels.index("fold") if "fold" in labels else labels.index("call"))
    result = StreamedEvaluator(layout).evaluate(strategy)
    assert result.exploitability / 10 * 1000 == pytest.approx(750.0, abs=1e-9)


def test_the_result_is_bit_identical_on_a_dask_cluster():
    game = make_game("holdem(ranks=3,rounds=3,caps=1-1-1)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (2, 3, 3), seed=5))
    strategy = layout.random(4)
    evaluator = StreamedEvaluator(layout)
    here = evaluator.evaluate(strategy), abstract_evaluation(evaluator, strategy)
    with ChunkRunner(workers=2) as runner:
        there = evaluator.evaluate(strategy, runner=runner), abstract_evaluation(evaluator, strategy, runner)
    assert there == here


def test_bad_strategies_and_abstractions_are_refused(tmp_path):
    game = make_game("holdem(ranks=3,rounds=2)")
    layout = BucketLayout(BettingTree(game), CardIndependent())
    evaluator = StreamedEvaluator(layout)
    with pytest.raises(StrategyError, match="shape"):
        evaluator.evaluate(np.zeros(3))
    with pytest.raises(StrategyError, match="sums to"):
        evaluator.evaluate(np.full(layout.num_actions, 0.9))
    with pytest.raises(AbstractionError, match="rounds of buckets"):
        IsomorphicCards(make_game("holdem(ranks=3,rounds=3)"), [np.zeros(1)], "one round")
    with pytest.raises(AbstractionError, match="hold'em cards"):
        IsomorphicCards.canonical(make_game("leduc"))


def test_any_block_of_betting_sequences_gives_the_same_values():
    """Each level's betting is walked with its entering sequences as matrix columns, a block
    of them at a time: narrow blocks (several per level, a short last one) agree with the
    public tree, also when a pure strategy leaves columns dead (blocks of scattered columns)."""
    game = make_game("holdem(ranks=3,rounds=3,caps=1-1-1)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (2, 3, 3), seed=7))
    public = StrategyLayout.from_bucket_layout(PublicTree(game), layout)
    evaluator = StreamedEvaluator(layout)
    assert evaluator.templates.columns.tolist() == [1, 3, 9]
    for strategy in (layout.random(8), layout.pure(lambda labels: labels.index("call"))):
        reference = evaluate_strategy(public, strategy)
        for block in (1, 2):
            evaluator.block = block
            result = evaluator.evaluate(strategy, card_blind=False)  # the pure strategy is card blind
            assert result.best_response_values == pytest.approx(reference.best_response_values, abs=1e-9)
            assert result.game_value == pytest.approx(reference.game_value, abs=1e-9)


@pytest.mark.parametrize("hole_cards", [1, 2])
def test_batched_terminal_values_equal_the_one_vector_kernels_column_by_column(hole_cards):
    rng = np.random.default_rng(hole_cards)
    cards = 7
    hand_cards = np.array(list(combinations(range(cards), hole_cards)), np.int64)
    hands = hand_cards.shape[0]
    valid = np.sort(rng.choice(hands, hands - 3, replace=False)).astype(np.int64)
    reach = np.zeros((hands, 5))
    reach[valid] = rng.random((valid.shape[0], 5)) * (rng.random((valid.shape[0], 5)) < 0.8)
    strength = np.sort(rng.integers(0, 6, valid.shape[0])).astype(np.int64)
    win, lose = rng.random(5), rng.random(5)
    card_sum, total = np.zeros((cards, 5)), np.zeros(5)
    folds, showdowns = np.zeros((hands, 5)), np.zeros((hands, 5))
    fold_values_batch(reach, hand_cards, valid, card_sum, total, win, folds)
    showdown_values_batch(reach, hand_cards, valid, strength, card_sum, total, win, lose, showdowns,
                          showdowns, 0)
    for c in range(5):
        fold, showdown = np.zeros(hands), np.zeros(hands)
        column = np.ascontiguousarray(reach[:, c])
        fold_values(column, hand_cards, valid, np.zeros(cards), win[c], fold)
        showdown_values(column, hand_cards, valid, strength, np.zeros(cards), win[c], lose[c], showdown)
        assert folds[valid, c] == pytest.approx(fold[valid], abs=1e-12)
        assert showdowns[valid, c] == pytest.approx(showdown[valid], abs=1e-12)
    assert not card_sum.any()
    parent = rng.random((hands, 5)) - 0.5  # combined straight into a parent's values: added, maximised
    for combine, expected in ((1, parent + showdowns), (2, np.maximum(parent, showdowns))):
        target, scratch = parent.copy(), np.zeros((hands, 5))
        showdown_values_batch(reach, hand_cards, valid, strength, card_sum, total, win, lose, scratch, target,
                              combine)
        assert np.array_equal(target[valid], expected[valid])


def test_pruning_the_opponents_zero_reach_hands_changes_no_value():
    """A strategy that never plays one action in about 60% of its rows leaves the opponent's
    reach zero for many (sequence, hand) pairs: the walk prunes those hands (no products, no
    terminal sums) and every value still equals the public tree's, the responder's own
    never-played actions included (its reach is not pruned), at any block width."""
    game = make_game("holdem(ranks=3,rounds=3,caps=1-1-1)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (3, 4, 5), seed=4))
    rng = np.random.default_rng(6)
    strategy = layout.random(5)
    for d in range(layout.width.shape[0]):
        rows = strategy[layout.action_start[d]:layout.action_start[d + 1]].reshape(-1, layout.width[d])
        hit = rng.random(rows.shape[0]) < 0.6
        rows[hit, rng.integers(0, layout.width[d], rows.shape[0])[hit]] = 0.0
        rows /= rows.sum(axis=1, keepdims=True)
    evaluator = StreamedEvaluator(layout)
    for player in (0, 1):  # some hands reach an entry, some do not: there is something to prune
        reach = evaluator.entry_reach(strategy, player)
        assert (reach == 0).any() and (reach > 0).any()
    reference = evaluate_strategy(StrategyLayout.from_bucket_layout(PublicTree(game), layout), strategy)
    for block in (2, 64):
        evaluator.block = block
        result = evaluator.evaluate(strategy, card_blind=False)
        assert result.best_response_values == pytest.approx(reference.best_response_values, abs=1e-9)
        assert result.game_value == pytest.approx(reference.game_value, abs=1e-9)
