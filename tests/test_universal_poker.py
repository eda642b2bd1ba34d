"""OpenSpiel's universal_poker policies as efgkit bucket strategies: efgkit's exact full-game
best response of a converted policy equals OpenSpiel's own NashConv of it (to 1e-9), and the
information state strings the conversion builds are OpenSpiel's."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from efgkit.errors import StrategyError  # noqa: E402
from efgkit.interop.universal_poker import (  # noqa: E402
    bucket_strategy_from_policy,
    lossless_layout,
    universal_poker_game,
)
from efgkit.poker.betting_tree import BettingTree  # noqa: E402
from efgkit.poker.buckets.bucket_layout import BucketLayout  # noqa: E402
from efgkit.poker.buckets.card_abstraction import CardIndependent  # noqa: E402
from efgkit.poker.streamed.full_game import StreamedEvaluator  # noqa: E402
from efgkit.specs import make_game  # noqa: E402


def _information_states(openspiel_game) -> dict[str, list[int]]:
    """Every information state string of a small game and its legal actions."""
    found, stack = {}, [openspiel_game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(action) for action, _ in state.chance_outcomes())
            continue
        found[state.information_state_string()] = state.legal_actions()
        stack.extend(state.child(action) for action in state.legal_actions())
    return found


def _uniform_policy(openspiel_game):
    states = _information_states(openspiel_game)
    return pyspiel.TabularPolicy({key: [(a, 1.0 / len(actions)) for a in actions]
                                  for key, actions in states.items()})


def _random_policy(openspiel_game, seed: int):
    rng = np.random.default_rng(seed)
    table = {}
    for key, actions in _information_states(openspiel_game).items():
        weights = rng.random(len(actions)) + 0.01
        table[key] = list(zip(actions, (weights / weights.sum()).tolist(), strict=True))
    return pyspiel.TabularPolicy(table)


_SOLVERS = []
"""OpenSpiel's average policies read their solver's table: the solvers must outlive them."""


def _cfr_policy(openspiel_game, iterations: int):
    solver = pyspiel.CFRSolver(openspiel_game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    _SOLVERS.append(solver)
    return solver.average_policy()


def _mccfr_policy(openspiel_game, iterations: int):
    solver = pyspiel.ExternalSamplingMCCFRSolver(openspiel_game, seed=3)
    for _ in range(iterations):
        solver.run_iteration()
    _SOLVERS.append(solver)
    return solver.average_policy()


POLICIES = {"uniform": _uniform_policy, "random": lambda g: _random_policy(g, 5),
            "cfr": lambda g: _cfr_policy(g, 30),
            "external-sampling mccfr": lambda g: _mccfr_policy(g, 20_000)}


@pytest.mark.parametrize("spec", ["kuhn", "leduc"])
@pytest.mark.parametrize("name", list(POLICIES))
def test_converted_policy_has_openspiels_nash_conv(spec, name):
    rules = make_game(spec)
    layout = lossless_layout(rules)
    game = universal_poker_game(rules)
    policy = POLICIES[name](game)
    strategy = bucket_strategy_from_policy(policy, layout, game)
    ours = StreamedEvaluator(layout).evaluate(strategy, game_value=False).nash_conv
    assert abs(ours - pyspiel.nash_conv(game, policy)) <= 1e-9


def test_built_strings_are_openspiels_on_a_two_card_holdem():
    """Every state of random plays of a hold'em with two hole cards and a three-card flop is
    found, and a random tabular policy over those states converts to exactly its rows."""
    rules = make_game("holdem(ranks=2,rounds=2,caps=1-1)")
    layout = lossless_layout(rules)
    game = universal_poker_game(rules)
    rng = np.random.default_rng(0)
    seen = {}
    for _ in range(300):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions = [a for a, _ in state.chance_outcomes()]
            else:
                actions = state.legal_actions()
                weights = rng.random(len(actions)) + 0.01
                seen[state.information_state_string()] = list(zip(actions, (weights / weights.sum()).tolist(),
                                                                  strict=True))
            state.apply_action(int(rng.choice(actions)))
    policy = pyspiel.TabularPolicy(seen)
    strategy = bucket_strategy_from_policy(policy, layout, game)
    changed = np.flatnonzero(strategy != layout.uniform())
    rows = np.searchsorted(layout.row_offsets(), changed, side="right") - 1
    # each state seen moved exactly its own row away from uniform (random weights never are)
    assert len(np.unique(rows)) == len(seen)


def test_a_card_abstraction_is_refused():
    rules = make_game("leduc")
    layout = BucketLayout(BettingTree(rules), CardIndependent())
    with pytest.raises(StrategyError, match="lossless"):
        bucket_strategy_from_policy(_uniform_policy(universal_poker_game(rules)), layout)
