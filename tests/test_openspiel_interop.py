"""OpenSpiel interop: imported trees have OpenSpiel's sizes, and OpenSpiel's NashConv of an
exported strategy equals ours (anchors_solvers.md §1.7)."""

import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import cfr as openspiel_cfr  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402

from efgkit.errors import (  # noqa: E402
    GameDefinitionError,
    GameSpecError,
    OptionalDependencyError,
    StrategyError,
    TreeTooLargeError,
)
from efgkit.interop.openspiel import (  # noqa: E402
    compile_openspiel_game,
    from_tabular_policy,
    import_openspiel_game,
    openspiel_game_of,
    openspiel_infoset_correspondence,
    to_tabular_policy,
)
from efgkit.maps.infoset_map import InfosetMap  # noqa: E402
from efgkit.solvers.best_response import evaluate  # noqa: E402
from efgkit.solvers.cfr import CFRPlusSolver  # noqa: E402
from efgkit.solvers.strategy import Strategy, normalize_per_infoset  # noqa: E402
from efgkit.specs import load_game  # noqa: E402

GOOFSPIEL_4 = "goofspiel(imp_info=True,num_cards=4,points_order=descending)"
GOOFSPIEL_3_RANDOM = "goofspiel(imp_info=True,num_cards=3)"
IMPORTED = ("kuhn_poker", "leduc_poker", GOOFSPIEL_4, GOOFSPIEL_3_RANDOM)
NATIVE = ("kuhn", "leduc", "leduc(suit_isomorphism=true)")

_trees = {}


def tree_of(spec):
    """Each tree is built once per test session."""
    if spec not in _trees:
        _trees[spec] = load_game(spec)
    return _trees[spec]


def uniform(tree):
    return Strategy.uniform(InfosetMap.identity(tree))


def cfr_plus_50(tree):
    return CFRPlusSolver(tree).iterate(50).average_strategy()


def random_strategy(tree):
    weights = np.random.default_rng(7).random(tree.num_infoset_actions)
    return Strategy.from_behavior(tree, normalize_per_infoset(weights, tree.infoset_action_offset))


def openspiel_nash_conv(policy):
    return exploitability.nash_conv(policy.game, policy, use_cpp_br=True)


@pytest.mark.parametrize(
    ("name", "infosets", "chance", "decision", "terminal"),
    [
        ("kuhn_poker", 12, 4, 24, 30),
        ("leduc_poker", 936, 157, 3_780, 5_520),
        (GOOFSPIEL_4, 162, 0, 501, 576),
        ("liars_dice", 24_576, 7, 147_456, 147_420),
    ],
)
def test_imported_sizes_match_openspiel(name, infosets, chance, decision, terminal):
    sizes = import_openspiel_game(name).sizes()
    assert sizes["infosets"] == infosets
    assert sizes["chance_nodes"] == chance
    assert sizes["decision_nodes"] == decision
    assert sizes["terminal_nodes"] == terminal
    assert sizes["histories"] == chance + decision + terminal


def test_imported_tree_uses_openspiel_strings_and_spec():
    tree = tree_of("openspiel:kuhn_poker")
    assert tree.spec == "openspiel:kuhn_poker"
    assert tree.infoset_keys[:2] == ["0", "1"]
    assert tree.infoset_actions(0) == ["Pass", "Bet"]
    assert tree.action_labels.count("Pass") == 12
    assert openspiel_game_of(tree) is tree.game.openspiel_game
    tree.validate()


@pytest.mark.parametrize("spec", ["openspiel:kuhn_poker", "openspiel:leduc_poker"])
def test_each_infoset_lies_in_one_public_state(spec):
    tree = tree_of(spec)
    decision = tree.node_kind < 2
    pairs = np.unique(np.stack([tree.node_infoset[decision], tree.node_public_state[decision]]),
                      axis=1)
    assert pairs.shape[1] == tree.num_infosets
    assert len(tree.public_state_keys) > 1


def test_imported_kuhn_equilibrium_value_is_minus_one_eighteenth():
    strategy = CFRPlusSolver(tree_of("openspiel:kuhn_poker")).iterate(2_000).average_strategy()
    assert evaluate(strategy).game_value == pytest.approx(-1 / 18, abs=1e-3)


@pytest.mark.parametrize("make_strategy", [uniform, cfr_plus_50, random_strategy])
@pytest.mark.parametrize("name", IMPORTED)
def test_nash_conv_of_imported_game_equals_openspiel(name, make_strategy):
    strategy = make_strategy(tree_of("openspiel:" + name))
    ours = evaluate(strategy).nash_conv
    assert openspiel_nash_conv(to_tabular_policy(strategy)) == pytest.approx(ours, abs=1e-9)


@pytest.mark.parametrize("make_strategy", [uniform, cfr_plus_50, random_strategy])
@pytest.mark.parametrize("spec", NATIVE)
def test_nash_conv_of_native_poker_equals_openspiel(spec, make_strategy):
    pytest.importorskip("efgkit.games.poker")
    strategy = make_strategy(tree_of(spec))
    ours = evaluate(strategy).nash_conv
    assert openspiel_nash_conv(to_tabular_policy(strategy)) == pytest.approx(ours, abs=1e-9)


def test_abstract_strategy_exports_its_behaviour():
    tree = tree_of("openspiel:leduc_poker")
    coarsest = InfosetMap.coarsest(tree)
    weights = np.random.default_rng(3).random(coarsest.num_abstract_actions)
    strategy = Strategy(coarsest, normalize_per_infoset(weights, coarsest.abstract_action_offset))
    policy = to_tabular_policy(strategy)
    assert openspiel_nash_conv(policy) == pytest.approx(evaluate(strategy).nash_conv, abs=1e-9)
    assert np.allclose(from_tabular_policy(policy, tree).behavior(), strategy.behavior())


@pytest.mark.parametrize("spec", ["openspiel:leduc_poker", "openspiel:" + GOOFSPIEL_3_RANDOM,
                                  *NATIVE])
def test_round_trip_keeps_behaviour(spec):
    if not spec.startswith("openspiel:"):
        pytest.importorskip("efgkit.games.poker")
    tree = tree_of(spec)
    strategy = random_strategy(tree)
    back = from_tabular_policy(to_tabular_policy(strategy), tree)
    assert back.infoset_map.is_identity
    assert np.array_equal(back.behavior(), strategy.behavior())


def test_openspiel_cfr_policy_imports_with_the_same_nash_conv():
    tree = tree_of("openspiel:kuhn_poker")
    solver = openspiel_cfr.CFRPlusSolver(tree.game.openspiel_game)
    for _ in range(20):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    strategy = from_tabular_policy(policy, tree)
    assert evaluate(strategy).nash_conv == pytest.approx(openspiel_nash_conv(policy), abs=1e-9)


def test_native_kuhn_maps_to_openspiel_information_states():
    pytest.importorskip("efgkit.games.poker")
    imported = tree_of("openspiel:kuhn_poker")
    correspondence = openspiel_infoset_correspondence(tree_of("kuhn"))
    assert sorted(correspondence.information_states) == sorted(imported.infoset_keys)
    assert correspondence.action_ids.tolist() == [0, 1] * 12


def test_mismatched_game_names_the_first_differing_node():
    tree = tree_of("openspiel:kuhn_poker")
    with pytest.raises(GameDefinitionError, match="at node 0 .*3 outcomes.*6 outcomes"):
        openspiel_infoset_correspondence(tree, "leduc_poker")


def test_native_game_without_counterpart_is_refused():
    pytest.importorskip("efgkit.games.poker")
    tree = load_game("kuhn(cards=4)")
    with pytest.raises(GameSpecError, match="no OpenSpiel counterpart"):
        to_tabular_policy(uniform(tree))


def test_policy_of_another_game_is_refused():
    policy = to_tabular_policy(uniform(tree_of("openspiel:kuhn_poker")))
    with pytest.raises(GameDefinitionError, match="differs from OpenSpiel game"):
        from_tabular_policy(policy, tree_of("openspiel:leduc_poker"))
    with pytest.raises(StrategyError, match="TabularPolicy"):
        from_tabular_policy({"0": [0.5, 0.5]}, tree_of("openspiel:kuhn_poker"))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no_such_game", "OpenSpiel has no game 'no_such_game'"),
        ("kuhn_poker(foo=3)", "Unknown parameter 'foo'"),
        ("kuhn_poker(players=3)", "has 3 players; efgkit needs 2"),
        ("matrix_pd", "general-sum; efgkit needs a zero-sum"),
    ],
)
def test_unusable_games_raise_game_spec_error(name, message):
    with pytest.raises(GameSpecError, match=message):
        load_game("openspiel:" + name)


def test_node_limit_stops_the_import():
    with pytest.raises(TreeTooLargeError):
        import_openspiel_game("leduc_poker", node_limit=1_000)


def test_missing_openspiel_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(OptionalDependencyError, match=r"pip install efgkit\[peers\]"):
        import_openspiel_game("kuhn_poker")


class _WrappedKuhn:
    """OpenSpiel's Kuhn poker with states seen through ``state_class`` and no observer."""

    def __init__(self, state_class, utility_sum=0.0):
        self._game = pyspiel.load_game("kuhn_poker")
        self._state_class = state_class
        self._utility_sum = utility_sum

    def __getattr__(self, name):
        return getattr(self._game, name)

    def new_initial_state(self):
        return self._state_class(self._game.new_initial_state())

    def utility_sum(self):
        return self._utility_sum

    def make_observer(self, *args):
        return None


class _WrappedState:
    def __init__(self, state):
        self._state = state

    def __getattr__(self, name):
        return getattr(self._state, name)

    def child(self, action):
        return type(self)(self._state.child(action))


class _CardOnlyState(_WrappedState):
    """The information state string is the private card alone, so both players (and
    several histories of one player) share strings."""

    def information_state_string(self):
        return self._state.information_state_string()[0]


class _ReturnsPlusOneState(_WrappedState):
    def returns(self):
        return [value + 1.0 for value in self._state.returns()]


def test_information_states_shared_by_both_players_get_a_player_prefix():
    tree = compile_openspiel_game(_WrappedKuhn(_CardOnlyState), "openspiel:card_only_kuhn")
    assert sorted(tree.infoset_keys) == [f"P{p}:{c}" for p in (0, 1) for c in "012"]
    assert tree.public_state_keys == [""]


def test_constant_sum_game_is_shifted_to_zero_sum():
    game = _WrappedKuhn(_ReturnsPlusOneState, utility_sum=2.0)
    tree = compile_openspiel_game(game, "openspiel:kuhn_plus_one")
    assert np.array_equal(tree.node_utility, tree_of("openspiel:kuhn_poker").node_utility)
    assert len(openspiel_infoset_correspondence(tree, game).information_states) == 12


def test_a_game_far_too_large_is_refused_at_once_from_knuths_estimate():
    from efgkit.interop.openspiel import estimated_nodes

    with pytest.raises(TreeTooLargeError, match="Knuth's estimate"):
        import_openspiel_game("chess")
    leduc = pyspiel.load_game("leduc_poker")
    assert 0.3 * 9457 < estimated_nodes(leduc, paths=2000) < 3 * 9457  # unbiased: near the true count
