"""The trembling-tie-broken best response (solvers/trembling, FPIRA's reference conventions)."""

import numpy as np
import pytest
from random_games import random_tree

from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.trembling import trembling_best_response
from efgkit.specs import load_game


def _sparse_strategy(tree, rng) -> np.ndarray:
    """A random behaviour strategy with many zero probabilities (and some pure infosets)."""
    behavior = rng.random(tree.num_infoset_actions)
    behavior[rng.random(behavior.size) < 0.5] = 0.0
    offsets = tree.infoset_action_offset
    for infoset in range(tree.num_infosets):
        block = behavior[offsets[infoset]:offsets[infoset + 1]]
        if block.sum() == 0.0:
            block[rng.integers(block.size)] = 1.0
        block /= block.sum()
    return behavior


def _mixed_with_uniform(tree, behavior, epsilon) -> np.ndarray:
    counts = tree.infoset_num_actions[tree.action_infoset]
    return (1 - epsilon) * behavior + epsilon / counts


@pytest.mark.parametrize("seed", range(12))
def test_it_is_the_best_response_to_a_slightly_trembling_opponent(seed):
    tree = random_tree(seed)
    responder = BestResponse(InfosetMap.identity(tree))
    rng = np.random.default_rng(seed)
    behavior = _sparse_strategy(tree, rng)
    for player in (0, 1):
        value, actions = trembling_best_response(responder, player, behavior)
        ordinary, _ = responder.best_response(player, behavior)
        assert value == pytest.approx(ordinary, abs=1e-12)
        _, trembling = responder.best_response(player, _mixed_with_uniform(tree, behavior, 1e-7))
        mine = tree.infosets_of(player)
        assert np.array_equal(actions[mine], trembling[mine])


def test_unreached_infosets_answer_the_opponent_instead_of_taking_the_first_action():
    # Kuhn: player 1 never bets after a pass, so player 0's "pass, bet" infosets are
    # unreached; the ordinary best response passes (folds, action 0) there with every card,
    # the trembling one calls (action 1) with the king and folds with the jack.
    tree = load_game("kuhn")
    responder = BestResponse(InfosetMap.identity(tree))
    keys = list(tree.infoset_keys)
    behavior = np.full(tree.num_infoset_actions, 0.5)
    offsets = tree.infoset_action_offset
    for infoset in tree.infosets_of(1):
        if keys[infoset].endswith("bets=p"):
            behavior[offsets[infoset]:offsets[infoset + 1]] = [1.0, 0.0]
    _, ordinary = responder.best_response(0, behavior)
    _, trembling = trembling_best_response(responder, 0, behavior)
    king, jack = keys.index("P0 card=K bets=pb"), keys.index("P0 card=J bets=pb")
    assert ordinary[king] == ordinary[jack] == 0
    assert trembling[king] == 1 and trembling[jack] == 0
