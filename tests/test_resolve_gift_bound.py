"""Reach-maxmargin gifts with Brown & Sandholm's minimum-reachable-payoff lower bound."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from random_games import random_behavior
from random_public_games import first_public_subgames, random_public_tree

from efgkit.errors import ParameterError
from efgkit.resolve import BlueprintValues, Resolver, round_subgames, subgame_at
from efgkit.solvers import SequenceFormLP, Strategy, evaluate
from efgkit.specs import load_game


def test_coin_toss_heads_gift_is_exact_because_selling_ends_the_game():
    tree = load_game("coin_toss")
    trunk = Strategy.from_behavior(tree, np.array([0.2, 0.8, 0.7, 0.3, 0.5, 0.25, 0.25]))
    values = BlueprintValues(trunk)
    constraints = values.constraints(subgame_at(tree, "played"), 1, "br")
    gifts = values.gifts([constraints], lower_bound=True)[0] / constraints.element_reach
    assert gifts == pytest.approx([0.5, 0.0])


def test_minimum_payoff_bounds_every_actions_best_response_value_from_below():
    tree = load_game("leduc")
    blueprint = Strategy.from_behavior(tree, random_behavior(tree, np.random.default_rng(3)))
    values = BlueprintValues(blueprint)
    for player in (0, 1):
        assert np.all(values.min_payoff_action_values(player) <= values.full_action_values(player) + 1e-12)
        constraints = values.constraints_for(round_subgames(tree, 2), player)
        for split in (True, False):
            bounded = values.gifts(constraints, split=split, lower_bound=True)
            full = values.gifts(constraints, split=split)
            assert all(np.all((0 <= b) & (b <= f + 1e-12)) for b, f in zip(bounded, full, strict=True))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_split_lower_bound_gifts_never_raise_exploitability_on_random_games(seed):
    tree = random_public_tree(seed)
    subgames = first_public_subgames(tree)
    assume(subgames)
    blueprint = Strategy.from_behavior(tree, random_behavior(tree, np.random.default_rng(seed)))
    before = evaluate(blueprint)
    after = Resolver(blueprint, gadget="reach-maxmargin", gift_bound="min-payoff",
                     solver=SequenceFormLP).resolve(subgames).after
    for player in (0, 1):
        assert after.best_response_values[player] <= before.best_response_values[player] + 1e-7


def test_resolver_rejects_an_unknown_gift_bound():
    tree = load_game("kuhn")
    with pytest.raises(ParameterError, match="gift_bound"):
        Resolver(Strategy.from_behavior(tree, np.full(tree.num_infoset_actions, 0.5)), gift_bound="guess")
