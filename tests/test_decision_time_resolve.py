"""Decision-time re-solving (resolve/decision_time.py) and ``efgkit play --resolve``."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli import main
from efgkit.play.poker_hands import Deal, LayoutSeat, play_hand
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import deal_roots
from efgkit.resolve.decision_time import DecisionTimeResolver
from efgkit.resolve.vector_resolver import VectorResolver
from efgkit.specs import make_game
from efgkit.storage.bucket_strategy import save_bucket_strategy


@pytest.fixture(scope="module")
def leduc_blueprint():
    game = make_game("leduc")
    buckets = BucketLayout(BettingTree(game), CardIndependent())
    strategy = buckets.random(3)
    tree = PublicTree(game)
    return game, buckets, strategy, tree, StrategyLayout.from_bucket_layout(tree, buckets)


def _decisions(game, seats, hands=30):
    rng, seen = random.Random(5), []
    for _ in range(hands):
        play_hand(game, seats, Deal.shuffled(game, rng), rng, lambda decision, action: seen.append(decision))
    return seen


def test_decision_time_play_is_the_vector_resolver_strategy(leduc_blueprint):
    """Each decision after the deal plays the row of VectorResolver's combined strategy for that
    player (same gadget and iterations); before it, the blueprint's row (LayoutSeat's)."""
    game, buckets, strategy, tree, layout = leduc_blueprint
    resolver = DecisionTimeResolver(tree, layout, strategy, gadget="resolve", iterations=30, cache=4)
    blueprint_seat = LayoutSeat(buckets, strategy)
    combined = {
        p: VectorResolver(tree, layout, strategy, gadget="resolve", iterations=30, players=(p,))
        .resolve()
        .strategy
        for p in (0, 1)
    }
    hand_index = {tuple(c): h for h, c in enumerate(tree.hand_cards.tolist())}
    checked = 0
    for decision in _decisions(game, (blueprint_seat, blueprint_seat)):
        row = resolver.probabilities(decision.hand, decision.board, decision.state.betting.history)
        node = resolver.public_node(decision.board, decision.state.betting.history)
        if resolver.subgame_root(node) < 0:
            assert np.allclose(row, blueprint_seat.probabilities(decision), atol=1e-12)
            continue
        offset = resolver.lossless.slot_offset[tree.decision_index[node], hand_index[decision.hand]]
        expected = combined[decision.player][offset : offset + row.shape[0]]
        assert np.allclose(row, expected, atol=1e-12)
        checked += 1
    assert checked > 5 and len(resolver.seconds) > checked
    roots = deal_roots(tree, 2)
    assert np.allclose(resolver.resolved_strategy(roots, 1), combined[1], atol=1e-12)


def test_cli_play_resolve_reports_time_per_decision(leduc_blueprint, tmp_path):
    game, buckets, strategy, _, _ = leduc_blueprint
    path = tmp_path / "blind.h5"
    save_bucket_strategy(path, buckets, strategy, {"algorithm": "random", "iterations": 0})
    result = CliRunner().invoke(
        main,
        [
            "play",
            "leduc",
            str(path),
            "--against",
            "call",
            "--resolve",
            "resolve",
            "--resolve-iterations",
            "20",
            "--hands",
            "4",
            "--seed",
            "1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["deals"] == 4 and data["decisions"] > 0 and data["seconds_per_decision_p95"] > 0
    assert data["resolves"] <= data["decisions"]
    lonely = CliRunner().invoke(main, ["play", "leduc", str(path), "--resolve", "resolve"])
    assert lonely.exit_code == 2 and "--against" in lonely.stderr
