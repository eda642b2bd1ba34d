"""Reach-maxmargin gifts with Brown & Sandholm's minimum-reachable-payoff lower bound."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from random_games import random_behavior
from random_public_games import first_public_subgames, random_public_tree

from efgkit.errors import ParameterError
from efgkit.games.builder import build_tree
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
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


class FigureFive:
    """Brown & Sandholm's Figure 5: Coin Toss whose ``play`` is followed by a public fair chance
    node (left / right), each side the guess subgame of Coin Toss."""

    spec = "figure5"

    def initial_state(self):
        return ()

    def current_player(self, s):
        if len(s) in (0, 2) and (not s or s[1] == "play"):
            return CHANCE
        if len(s) == 1:
            return PLAYER0
        return TERMINAL if s[1] == "sell" or len(s) == 4 else PLAYER1

    def legal_actions(self, s):
        return ["sell", "play"] if len(s) == 1 else ["heads", "tails", "forfeit"]

    def chance_outcomes(self, s):
        return [("heads", 0.5), ("tails", 0.5)] if not s else [("left", 0.5), ("right", 0.5)]

    def apply(self, s, a):
        return (*s, a)

    def terminal_utility(self, s):
        if s[1] == "sell":
            return 0.5 if s[0] == "heads" else -0.5
        return 1.0 if s[3] == "forfeit" else (-1.0 if s[3] == s[0] else 1.0)

    def infoset_key(self, s):
        return f"P0 coin={s[0]}" if len(s) == 1 else f"P1 played {s[2]}"

    def public_state_key(self, s):
        if len(s) < 2:
            return ("toss", "coin")[len(s)]
        if s[1] == "sell":
            return "sold"
        return "played" if len(s) == 2 else f"played {s[2]}"


def test_figure_5_split_gifts_halve_heads_gift_and_not_split_gives_each_subgame_the_single_subgame_bound():
    """Figure 5 (two subgames below a public coin): selling Heads is worth 1/2 more than playing
    under the trunk. Solving one subgame alone, Heads' alternative payoff may reach 1 (the chance
    node halves its effect); split by reach, each subgame gets 1/2; not split (the paper's
    "given in full to each subgame"), each gets the single-subgame bound 1. Reach-maxmargin then
    guesses (1/2, 1/2) split and (3/8, 5/8) not split: NashConv 5/8 and 1/2."""
    tree = build_tree(FigureFive())
    behavior = {"P0 coin=heads": [0.2, 0.8], "P0 coin=tails": [0.7, 0.3],
                "P1 played left": [0.5, 0.25, 0.25], "P1 played right": [0.5, 0.25, 0.25]}
    trunk = Strategy.from_behavior(tree, np.concatenate([behavior[k] for k in tree.infoset_keys]))
    subgames = [subgame_at(tree, "played left"), subgame_at(tree, "played right")]
    values = BlueprintValues(trunk)
    constraints = values.constraints_for(subgames, 1)
    for split, heads in ((True, 0.5), (False, 1.0)):
        for c, gift in zip(constraints, values.gifts(constraints, split=split), strict=True):
            assert c.raised_by(gift, "gifts").normalized() == pytest.approx([heads, 0.5], abs=1e-12)
    for split, guess, nash_conv in ((True, [0.5, 0.5, 0.0], 0.625), (False, [0.375, 0.625, 0.0], 0.5)):
        result = Resolver(trunk, gadget="reach-maxmargin", solver=SequenceFormLP, iterations=1,
                          split_gifts=split, players=(1,)).resolve(subgames)
        for side in ("left", "right"):
            assert list(result.strategy.probabilities_of(f"P1 played {side}").values()) == pytest.approx(
                guess, abs=1e-9)
        assert result.after.nash_conv == pytest.approx(nash_conv, abs=1e-9)
