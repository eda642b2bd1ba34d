"""The abstract game's best response (``abstract_best_response.py``) against the materialised
public tree's walk, the full game's best response and every pure strategy of a small game."""

from itertools import product

import numpy as np
import pytest

from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards, LosslessCards
from efgkit.poker.buckets.perfect_recall import PerfectRecallCards
from efgkit.poker.codes import ABSTRACT, EXPECTED
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import reach_pass, tree_view, value_pass, workspace
from efgkit.poker.streamed.abstract_best_response import (
    abstract_evaluation,
    abstract_response,
    responder_depths,
)
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.specs import make_game

THREE_ROUNDS = "holdem(ranks=3,rounds=3,caps=1-1-1)"


@pytest.fixture(scope="module")
def three_round_tree() -> PublicTree:
    return PublicTree(make_game(THREE_ROUNDS))


def _layout(spec: str, abstraction) -> BucketLayout:
    game = make_game(spec)
    return BucketLayout(BettingTree(game), abstraction(game))


def _public_action_values(public: PublicTree, layout: BucketLayout, strategy: np.ndarray,
                          player: int) -> list[np.ndarray]:
    """Per depth, the action values an ``ABSTRACT`` walk adds up, from the materialised public
    tree (every board, no suit isomorphism): each child's counterfactual values at
    ``player``'s decision nodes that deep in its decisions, added into the rows of the hands'
    buckets."""
    rows = StrategyLayout.from_bucket_layout(public, layout)
    view, work = tree_view(public), workspace(public)
    reach_pass(view, rows.view(), strategy, work.reach)
    value_pass(view, rows.view(), strategy, player, EXPECTED, work, np.zeros(0))
    depth = np.zeros(public.num_nodes, np.int64)
    for node in range(public.num_nodes):
        lo = public.first_child[node]
        depth[lo:lo + public.num_children[node]] = depth[node] + (public.kind[node] == player)
    out = [np.zeros(layout.num_actions) for _ in range(int(depth.max()) + 1)]
    for d, node in enumerate(public.decision_nodes.tolist()):
        if public.kind[node] != player:
            continue
        valid = public.valid_hands(node)
        for a in range(public.num_children[node]):
            np.add.at(out[depth[node]], rows.slot_offset[d, valid] + a,
                      work.values[public.first_child[node] + a, valid])
    return out


@pytest.mark.parametrize("abstraction", [
    lambda game: IsomorphicCards.hashed(game, (3, 4, 4), seed=1),
    lambda game: PerfectRecallCards(game, IsomorphicCards.hashed(game, (3, 4, 4), seed=1)),
], ids=["imperfect-recall", "perfect-recall"])
def test_the_streamed_action_values_equal_the_public_trees(abstraction, three_round_tree):
    """Suit isomorphism (each walked board times the boards it stands for), blocks and the
    first-deal split add up to the sums over every board of the materialised tree."""
    layout = _layout(THREE_ROUNDS, abstraction)
    evaluator = StreamedEvaluator(layout)
    evaluator.block = 3  # several blocks per level
    strategy = layout.random(5)
    for player in (0, 1):
        depth = responder_depths(layout.betting, player)
        for target, reference in enumerate(_public_action_values(three_round_tree, layout, strategy, player)):
            ours = evaluator.walk(strategy, player, ABSTRACT, ChunkRunner(), depth=depth, target=target)[1]
            scale = max(1.0, float(np.abs(reference).max()))
            np.testing.assert_allclose(ours / scale, reference / scale, rtol=0, atol=1e-12)


@pytest.mark.parametrize("spec", ["leduc", "holdem(ranks=3,rounds=2,caps=1-1)"])
def test_with_lossless_cards_the_abstract_game_is_the_full_game(spec):
    layout = _layout(spec, LosslessCards)
    evaluator = StreamedEvaluator(layout)
    strategy = layout.random(2)
    full = evaluator.evaluate(strategy, game_value=False)
    abstract = abstract_evaluation(evaluator, strategy)
    assert abstract.best_response_values == pytest.approx(full.best_response_values, abs=1e-12)


@pytest.mark.parametrize("abstraction", [CardIndependent, LosslessCards])
def test_the_response_is_the_best_pure_strategy_on_the_buckets(abstraction):
    """Kuhn(cards=4), every pure strategy on the responder's rows tried (perfect recall: one
    round)."""
    layout = _layout("kuhn(cards=4)", lambda game: abstraction() if abstraction is CardIndependent
                     else abstraction(game))
    evaluator = StreamedEvaluator(layout)
    strategy = layout.random(4)
    runner = ChunkRunner()
    for player in (0, 1):
        response = abstract_response(evaluator, strategy, player, runner)
        value, profile = response.value, response.profile
        own = [d for d, node in enumerate(layout.betting.decision_nodes.tolist())
               if layout.betting.kind[node] == player]
        rows = [(d, b) for d in own for b in range(int(layout.buckets[d]))]
        best = -np.inf
        for choice in product(*(range(int(layout.width[d])) for d, _ in rows)):
            pure = strategy.copy()
            for (d, b), a in zip(rows, choice, strict=True):
                lo = layout.action_start[d] + b * layout.width[d]
                pure[lo:lo + layout.width[d]] = np.eye(layout.width[d])[a]
            best = max(best, evaluator.value(pure, player, EXPECTED, runner))
        assert value == pytest.approx(best, abs=1e-12)
        assert evaluator.value(profile, player, EXPECTED, runner) == value


@pytest.mark.parametrize("recall", ["imperfect", "perfect"])
def test_the_abstract_response_lies_between_the_strategy_and_the_full_response(recall):
    game = make_game(THREE_ROUNDS)
    base = IsomorphicCards.hashed(game, (3, 4, 4), seed=2)
    abstraction = base if recall == "imperfect" else PerfectRecallCards(game, base)
    layout = BucketLayout(BettingTree(game), abstraction)
    evaluator = StreamedEvaluator(layout)
    strategy = layout.random(6)
    runner = ChunkRunner()
    full = evaluator.evaluate(strategy, runner, game_value=False)
    abstract = abstract_evaluation(evaluator, strategy, runner)
    for player in (0, 1):
        own = evaluator.value(strategy, player, EXPECTED, runner)
        if player == 0:
            assert abstract.game_value == pytest.approx(own, abs=1e-12)
        assert own <= abstract.best_response_values[player] + 1e-12
        assert abstract.best_response_values[player] <= full.best_response_values[player] + 1e-12
