"""Continual re-solving (DeepStack's rules) on Kuhn, Leduc and random public games."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from random_games import random_behavior
from random_public_games import random_public_tree

from efgkit.abstraction.cards.clustering import cluster_cards
from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.maps.infoset_map import InfosetMap
from efgkit.resolve import ContinualResolver, PublicStateTree
from efgkit.solvers import CFRPlusSolver, SequenceFormLP, Strategy, evaluate
from efgkit.specs import load_game


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture(scope="module")
def leduc_equilibrium(leduc):
    return CFRPlusSolver(InfosetMap.identity(leduc)).iterate(1000).average_strategy()


def test_leduc_public_tree_has_the_betting_structure(leduc):
    public = PublicStateTree.of(leduc)
    start = int(leduc.node_public_state[np.flatnonzero(leduc.node_kind < CHANCE)[0]])
    assert leduc.public_state_keys[start] == "board=- bets=-"
    assert public.actor[start] == 0 and public.entered_by[start] == CHANCE
    boards = [s for s, key in enumerate(leduc.public_state_keys) if key.endswith("/")]
    assert len(boards) == 30 and all(public.entered_by[s] == CHANCE for s in boards)
    folds = [s for s, key in enumerate(leduc.public_state_keys) if key.endswith("f")]
    assert folds and all(public.actor[s] == TERMINAL for s in folds)
    rank = np.empty_like(public.order)
    rank[public.order] = np.arange(public.order.size)
    has_parent = public.parent >= 0
    assert np.all(rank[public.parent[has_parent]] < rank[has_parent])


def test_continual_resolving_with_exact_gadgets_keeps_kuhns_equilibrium_exact():
    tree = load_game("kuhn")
    result = ContinualResolver(SequenceFormLP(tree).solve().strategy, solver=SequenceFormLP).run()
    assert result.resolves == 4
    assert result.evaluation.nash_conv == pytest.approx(0.0, abs=1e-9)
    assert result.evaluation.game_value == pytest.approx(-1 / 18, abs=1e-9)


def test_continual_resolving_with_exact_gadgets_is_no_more_exploitable_than_its_blueprint(leduc):
    # Burch's abstract blueprint (0.382 chips/game) gives the initial values only.
    infoset_map = cluster_cards(leduc.game.card_structure, "ehs", [3, 3], random_state=0).infoset_map(
        leduc, "perfect")
    blueprint = CFRPlusSolver(infoset_map).iterate(500).average_strategy()
    before = evaluate(blueprint)
    after = ContinualResolver(blueprint, solver=SequenceFormLP).run().evaluation
    for player in (0, 1):
        assert after.best_response_values[player] <= before.best_response_values[player] + 1e-8


def test_continual_resolving_on_leduc_converges_with_the_gadget_iterations(leduc, leduc_equilibrium):
    results = {n: ContinualResolver(leduc_equilibrium, iterations=n).run() for n in (10, 300)}
    decision_states = int(np.sum(PublicStateTree.of(leduc).actor < CHANCE))
    assert results[10].resolves == results[300].resolves == decision_states
    assert results[300].evaluation.exploitability < 0.01 < results[10].evaluation.exploitability


def test_self_play_values_also_converge_on_leduc(leduc, leduc_equilibrium):
    result = ContinualResolver(leduc_equilibrium, iterations=300, values="selfplay").run()
    assert result.evaluation.exploitability < 0.02


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_exact_continual_resolving_never_raises_exploitability_on_random_games(seed):
    tree = random_public_tree(seed)
    assume(tree.num_infosets > 0)  # chance alone: refused (tested below)
    blueprint = Strategy.from_behavior(tree, random_behavior(tree, np.random.default_rng(seed)))
    before = evaluate(blueprint)
    after = ContinualResolver(blueprint, solver=SequenceFormLP).run().evaluation
    for player in (0, 1):
        assert after.best_response_values[player] <= before.best_response_values[player] + 1e-7


def test_continual_resolver_rejects_bad_parameters(leduc_equilibrium):
    for bad in ({"solver": "magic"}, {"iterations": 0}, {"values": "oracle"}):
        with pytest.raises(ParameterError):
            ContinualResolver(leduc_equilibrium, **bad)


def test_continual_resolver_refuses_a_game_without_decisions():
    tree = random_public_tree(160707)  # this seed draws a game of chance alone
    assert tree.num_infosets == 0
    with pytest.raises(ParameterError, match="no decisions"):
        ContinualResolver(Strategy.from_behavior(tree, np.zeros(0)))


@pytest.mark.parametrize("interrupt_after", [25, 120])  # in the first agent's re-solves, in the second's
def test_an_interrupted_continual_run_resumes_to_the_same_strategy(leduc, leduc_equilibrium, tmp_path,
                                                                   interrupt_after):
    state = tmp_path / "continual.h5"
    straight = ContinualResolver(leduc_equilibrium, iterations=20).run()
    interrupted = ContinualResolver(leduc_equilibrium, iterations=20)
    original, calls = interrupted._resolve, []

    def failing(*arguments):
        if len(calls) == interrupt_after:
            raise KeyboardInterrupt
        calls.append(1)
        return original(*arguments)

    interrupted._resolve = failing
    with pytest.raises(KeyboardInterrupt):
        interrupted.run(state=str(state), checkpoint_seconds=1e-9)
    resumed = ContinualResolver(leduc_equilibrium, iterations=20).run(state=str(state))
    assert np.array_equal(resumed.strategy.probabilities, straight.strategy.probabilities)
    assert resumed.resolves == straight.resolves and resumed.evaluation == straight.evaluation
