"""The card-blind walk (efgkit/poker/streamed/card_blind.py) gives the general streamed walk's values
(itself equal to the public-tree engine and the GameTree solvers, tests/test_full_game.py)
for every strategy whose probabilities ignore the cards, and is chosen automatically."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.errors import StrategyError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards, LosslessCards
from efgkit.poker.codes import BEST_RESPONSE, EXPECTED
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.streamed.card_blind import (
    blind_classes,
    blind_item_values,
    is_card_blind,
    opponent_reach,
)
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.specs import make_game


def _first(labels, prefixes) -> int:
    """The first action whose label starts with one of ``prefixes`` (in their order), else 0."""
    return next((i for p in prefixes for i, label in enumerate(labels) if label.startswith(p)), 0)


PURE = {
    "always fold": lambda labels: _first(labels, ("fold", "check", "call", "pass")),
    "always call": lambda labels: _first(labels, ("call", "check", "pass")),
    "always raise": lambda labels: _first(labels, ("raise", "bet", "call")),
}


def _strategies(layout: BucketLayout, seed: int = 0) -> dict[str, np.ndarray]:
    """The baselines and a random betting-only profile, every bucket row of a decision equal."""
    profile = BucketLayout(layout.betting, CardIndependent()).random(seed)
    start = np.concatenate([[0], np.cumsum(layout.width)])
    strategies = {name: layout.pure(choose) for name, choose in PURE.items()}
    strategies["uniform random"] = layout.uniform()
    strategies["random betting-only"] = np.concatenate([np.tile(profile[start[d]:start[d + 1]], buckets)
                                                        for d, buckets in enumerate(layout.buckets)])
    return strategies


def _assert_same(evaluator: StreamedEvaluator, strategy: np.ndarray) -> None:
    general = evaluator.evaluate(strategy, card_blind=False)
    assert evaluator.paths == ["general"] * 3
    blind = evaluator.evaluate(strategy)
    assert evaluator.paths == ["card-blind"] * 3
    assert blind.best_response_values == pytest.approx(general.best_response_values, abs=1e-9)
    assert blind.game_value == pytest.approx(general.game_value, abs=1e-9)
    assert blind.nash_conv == pytest.approx(general.nash_conv, abs=1e-9)


@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)", "leduc", "leduc(ranks=13)", "twocard", "P111",
                                  "holdem(ranks=3,rounds=2)", "holdem(ranks=5,rounds=2)",
                                  "holdem(ranks=3,rounds=3,caps=1-1-1)", "holdem(ranks=4,caps=1-1-1-1)"])
def test_card_blind_walk_equals_the_general_walk(spec):
    """Always fold / call / raise, uniform random and a random betting-only profile: both
    best responses and the game value, with and without suit isomorphism of the deals."""
    layout = BucketLayout(BettingTree(make_game(spec)), CardIndependent())
    evaluator = StreamedEvaluator(layout)
    for strategy in _strategies(layout, seed=len(spec)).values():
        _assert_same(evaluator, strategy)


def test_card_blind_walk_equals_the_public_tree_and_the_game_tree():
    """Against the public-tree engine, itself equal to the GameTree solvers' ``BestResponse``
    to 1e-9 (tests/test_poker_engine.py)."""
    for spec in ("leduc", "holdem(ranks=3,rounds=2)"):
        game = make_game(spec)
        layout = BucketLayout(BettingTree(game), CardIndependent())
        public = StrategyLayout.from_bucket_layout(PublicTree(game), layout)
        evaluator = StreamedEvaluator(layout)
        for strategy in _strategies(layout).values():
            reference = evaluate_strategy(public, strategy)
            result = evaluator.evaluate(strategy)
            assert evaluator.paths == ["card-blind"] * 3
            assert result.best_response_values == pytest.approx(reference.best_response_values, abs=1e-9)
            assert result.game_value == pytest.approx(reference.game_value, abs=1e-9)


def _blind_entry_values(evaluator, strategy: np.ndarray, player: int, objective: int, item: int):
    """(entries, hands): what ``StreamedEvaluator.item_values`` returns (the values at every
    entry, the opponent's reach included), computed by the card-blind walk."""
    templates = evaluator.templates
    classes = blind_classes(templates, evaluator.betting, evaluator.layout, strategy, player, objective)
    relative = blind_item_values(evaluator, [classes], [(player, objective)], item)[0]
    columns = int(templates.columns[1])
    column_class = classes.column_class[classes.column_start[1]:classes.column_start[1] + columns]
    entries = templates.node_of[templates.node_base[templates.start[1]] + np.arange(columns)]
    reach = opponent_reach(evaluator.betting, evaluator.layout, strategy, player)[entries]
    return reach[:, None] * relative[column_class - classes.class_start[1]]


def test_each_first_deal_gives_the_general_walks_entry_values():
    """Per work item (one canonical flop): the values at every entry, opponent reach included."""
    game = make_game("holdem(ranks=4,caps=1-1-1-1)")
    layout = BucketLayout(BettingTree(game), CardIndependent())
    evaluator = StreamedEvaluator(layout)
    strategy = _strategies(layout, seed=3)["random betting-only"]
    for player in (0, 1):
        reach = evaluator.entry_reach(strategy, player)
        for item in range(0, len(evaluator.items), 5):
            for objective in (BEST_RESPONSE, EXPECTED):
                general = evaluator.item_values(strategy, player, objective, reach, item)
                blind = _blind_entry_values(evaluator, strategy, player, objective, item)
                np.testing.assert_allclose(blind, general, rtol=0, atol=1e-12)


@st.composite
def holdem_rules(draw):
    rounds = draw(st.integers(1, 3))
    caps = "-".join(str(draw(st.integers(1, 2))) for _ in range(rounds))
    bets = "-".join(str(draw(st.integers(1, 4))) for _ in range(rounds))
    big = draw(st.integers(1, 4))
    small = draw(st.integers(0, big))
    ranks = draw(st.integers(3, 4)) if rounds < 3 else 3
    return make_game(f"holdem(ranks={ranks},rounds={rounds},caps={caps},bets={bets},blinds={big}-{small})")


@settings(max_examples=12, deadline=None)
@given(game=st.one_of(holdem_rules(), st.sampled_from([make_game("leduc"), make_game("kuhn(cards=5)")])),
       seed=st.integers(0, 2**31 - 1), zeros=st.floats(0.0, 0.6))
def test_random_betting_only_profiles_agree(game, seed, zeros):
    """Random betting-only profiles on random rule sets, some probabilities set to 0 (pruned
    subtrees, dead betting sequences, classes of equal pots)."""
    layout = BucketLayout(BettingTree(game), CardIndependent())
    rng = np.random.default_rng(seed)
    strategy = layout.random(seed)
    strategy[rng.random(strategy.shape[0]) < zeros] = 0.0
    for d in range(layout.width.shape[0]):
        row = strategy[layout.action_start[d]:layout.action_start[d + 1]]
        if row.sum() == 0.0:
            row[rng.integers(row.shape[0])] = 1.0
        row /= row.sum()
    _assert_same(StreamedEvaluator(layout), strategy)


def test_card_blind_strategies_on_card_abstractions_are_detected():
    """Equal rows on every bucket of a decision take the card-blind walk whatever the
    abstraction; one row that differs sends the values that read it to the general walk."""
    holdem, leduc = make_game("holdem(ranks=3,rounds=2)"), make_game("leduc")
    for game, abstraction in ((holdem, IsomorphicCards.hashed(holdem, (3, 4, 1, 1), seed=1)),
                              (leduc, LosslessCards(leduc))):
        layout = BucketLayout(BettingTree(game), abstraction)
        evaluator = StreamedEvaluator(layout)
        for strategy in _strategies(layout, seed=2).values():
            assert is_card_blind(layout, strategy, (0, 1))
            _assert_same(evaluator, strategy)
        strategy = _strategies(layout, seed=2)["uniform random"]
        betting = layout.betting
        d = next(d for d, node in enumerate(betting.decision_nodes.tolist())
                 if betting.kind[node] == 1 and layout.buckets[d] > 1)
        width = int(layout.width[d])
        strategy[layout.action_start[d]:layout.action_start[d] + width] = np.eye(width)[0]  # bucket 0 differs
        general = evaluator.evaluate(strategy, card_blind=False)
        mixed = evaluator.evaluate(strategy)
        # player 1 reads the cards: only its own best response ignores them
        assert evaluator.paths == ["general", "card-blind", "general"]
        assert mixed.best_response_values == pytest.approx(general.best_response_values, abs=1e-9)
        assert mixed.game_value == pytest.approx(general.game_value, abs=1e-9)
        with pytest.raises(StrategyError, match="depends on the cards"):
            evaluator.evaluate(strategy, card_blind=True)


def test_sequences_with_equal_subtrees_are_walked_once():
    """Always raise in HULHE: the 567 river sequences fall into 16 classes (one per pot and
    what follows), the opponent reaching 12 of them; a random profile leaves 567."""
    layout = BucketLayout(BettingTree(make_game("holdem")), CardIndependent())
    evaluator = StreamedEvaluator(layout)
    raise_ = layout.pure(PURE["always raise"])
    classes = blind_classes(evaluator.templates, layout.betting, layout, raise_, 0, BEST_RESPONSE)
    assert np.diff(classes.class_start).tolist() == [1, 4, 8, 16]
    assert classes.live_count.tolist() == [1, 2, 6, 12]
    classes = blind_classes(evaluator.templates, layout.betting, layout, layout.random(1), 0, BEST_RESPONSE)
    assert np.diff(classes.class_start).tolist() == [1, 7, 63, 567]


def test_the_card_blind_result_is_bit_identical_on_a_dask_cluster():
    game = make_game("holdem(ranks=3,rounds=3,caps=1-1-1)")
    layout = BucketLayout(BettingTree(game), CardIndependent())
    strategy = layout.random(4)
    evaluator = StreamedEvaluator(layout)
    here = evaluator.evaluate(strategy)
    with ChunkRunner(workers=2) as runner:
        there = evaluator.evaluate(strategy, runner=runner)
    assert evaluator.paths == ["card-blind"] * 3
    assert there == here
