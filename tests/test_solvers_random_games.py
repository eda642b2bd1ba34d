"""Invariants of best response, NashConv, the LP and the CFR family on random small games."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from random_games import random_behavior, random_partition, random_trees

from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import (
    BestResponse,
    CFRPlusSolver,
    CFRSolver,
    DCFRSolver,
    FictitiousPlay,
    SequenceFormLP,
    Strategy,
    evaluate,
)
from efgkit.solvers.strategy import normalize_per_infoset
from efgkit.solvers.traversal import ProfileLayout


def _profile_value(tree, behavior):
    layout = ProfileLayout(InfosetMap.identity(tree))
    layout.set_strategy(behavior)
    return float(layout.expected_values()[0])


@settings(max_examples=40, deadline=None)
@given(random_trees(), st.integers(0, 2**32 - 1))
def test_nash_conv_is_non_negative(tree, strategy_seed):
    behavior = random_behavior(tree, np.random.default_rng(strategy_seed))
    result = evaluate(Strategy.from_behavior(tree, behavior))
    assert result.nash_conv >= -1e-12
    assert result.best_response_values[0] >= result.game_value - 1e-12  # a best response is no worse
    assert result.best_response_values[1] >= -result.game_value - 1e-12  # than the strategy it replaces


@settings(max_examples=40, deadline=None)
@given(random_trees(), st.integers(0, 2**32 - 1))
def test_best_response_beats_every_pure_strategy_tried_and_is_attained(tree, strategy_seed):
    rng = np.random.default_rng(strategy_seed)
    behavior = random_behavior(tree, rng)
    responder = BestResponse(InfosetMap.identity(tree))
    for player in (0, 1):
        value, actions = responder.best_response(player, behavior)
        sign = 1.0 if player == 0 else -1.0
        mine = tree.infoset_player[tree.action_infoset] == player
        for _ in range(10):
            pure = random_behavior(tree, rng, pure=True)
            profile = np.where(mine, pure, behavior)
            assert sign * _profile_value(tree, profile) <= value + 1e-9
        chosen = np.zeros(tree.num_infoset_actions)
        infosets = tree.infosets_of(player)
        chosen[tree.infoset_action_offset[infosets] + actions[infosets]] = 1.0
        attained = sign * _profile_value(tree, np.where(mine, chosen, behavior))
        assert np.isclose(attained, value, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(random_trees())
def test_lp_equilibrium_has_zero_nash_conv_and_its_value(tree):
    solution = SequenceFormLP(tree).solve()
    result = evaluate(solution.strategy)
    assert abs(result.nash_conv) < 1e-7
    assert np.isclose(result.game_value, solution.game_value, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(random_trees(), st.integers(0, 2**32 - 1))
def test_abstract_strategy_evaluates_like_its_per_infoset_copy(tree, strategy_seed):
    rng = np.random.default_rng(strategy_seed)
    abstraction = random_partition(tree, rng)
    weights = rng.random(abstraction.num_abstract_actions) + 1e-3
    abstract = Strategy(abstraction,
                        normalize_per_infoset(weights, abstraction.abstract_action_offset))
    copy = Strategy.from_behavior(tree, abstract.behavior())
    a, b = evaluate(abstract), evaluate(copy)
    assert np.isclose(a.nash_conv, b.nash_conv, atol=1e-12)
    assert np.isclose(a.game_value, b.game_value, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(random_trees())
def test_cfr_family_and_fictitious_play_approach_the_lp_value(tree):
    value = SequenceFormLP(tree).solve().game_value
    for solver, iterations, tolerance in ((CFRPlusSolver(tree), 2000, 0.05),
                                          (DCFRSolver(tree), 2000, 0.05),
                                          (CFRSolver(tree), 4000, 0.15),
                                          (FictitiousPlay(tree), 2000, 0.2)):
        solver.iterate(iterations)
        result = evaluate(solver.average_strategy())
        assert result.nash_conv < tolerance, type(solver).__name__
        assert abs(result.game_value - value) <= result.nash_conv + 1e-9


@settings(max_examples=15, deadline=None)
@given(random_trees(), st.integers(0, 2**32 - 1))
def test_cfr_on_the_identity_map_equals_cfr_on_an_explicit_relabelling(tree, order_seed):
    """Abstract ids are only labels: a permuted identity map gives the same strategy."""
    permutation = np.random.default_rng(order_seed).permutation(tree.num_infosets)
    relabelled = InfosetMap(tree, permutation)
    plain = CFRPlusSolver(tree).iterate(50).average_strategy()
    other = CFRPlusSolver(relabelled).iterate(50).average_strategy()
    assert np.allclose(plain.behavior(), other.behavior(), atol=1e-12)
