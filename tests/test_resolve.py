"""Safe re-solving: subgames, constraints, gadgets, splicing (Burch 2017 §5; Brown & Sandholm 2017)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from random_games import random_behavior
from random_public_games import first_public_subgames, random_public_tree

from efgkit.abstraction.cards.clustering import cluster_cards
from efgkit.errors import ParameterError, StrategyError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.resolve import (
    BlueprintValues,
    Resolver,
    Subgame,
    SubgameError,
    coinflip_gadget,
    extract_subgame,
    maxmargin_gadget,
    resolve_gadget,
    round_subgames,
    splice,
    subgame_at,
)
from efgkit.solvers import BestResponse, CFRPlusSolver, CFRSolver, SequenceFormLP, Strategy
from efgkit.specs import load_game
from efgkit.storage.strategy_file import load_strategy, save_strategy

# Brown & Sandholm's Coin Toss trunk (seed_brown.md §2): player 0 plays 80% with heads and
# 30% with tails; player 1 guesses heads 1/2, tails 1/4, forfeits 1/4.
COIN_TOSS_TRUNK = [0.2, 0.8, 0.7, 0.3, 0.5, 0.25, 0.25]


@pytest.fixture(scope="module")
def coin_toss():
    tree = load_game("coin_toss")
    return tree, Strategy.from_behavior(tree, np.array(COIN_TOSS_TRUNK))


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture(scope="module")
def burch_blueprint(leduc):
    """Burch's abstract Leduc equilibrium (J: Q/K, K: J/Q merged), 0.3823 chips/game."""
    abstraction = cluster_cards(leduc.game.card_structure, "ehs", [3, 3], random_state=0)
    infoset_map = abstraction.infoset_map(leduc, "perfect")
    return CFRPlusSolver(infoset_map).iterate(2000).average_strategy()


def _coin_toss_resolve(coin_toss, gadget):
    _, trunk = coin_toss
    result = Resolver(trunk, gadget=gadget, solver=CFRPlusSolver, iterations=4000, players=(1,)).resolve(
        [subgame_at(trunk.tree, "played")])
    return result.strategy.probabilities_of("P1 played"), result.after


def test_coin_toss_equilibrium_guesses_heads_a_quarter_with_value_zero(coin_toss):
    tree, _ = coin_toss
    solution = SequenceFormLP(tree).solve()
    assert solution.game_value == pytest.approx(0.0, abs=1e-9)
    guess = solution.strategy.probabilities_of("P1 played")
    assert (guess["heads"], guess["tails"], guess["forfeit"]) == pytest.approx((0.25, 0.75, 0.0), abs=1e-7)


def test_coin_toss_constraints_and_gifts_are_the_papers(coin_toss):
    tree, trunk = coin_toss
    values = BlueprintValues(trunk)
    constraints = values.constraints(subgame_at(tree, "played"), 1, "br")
    assert constraints.normalized() == pytest.approx([0.0, 0.5])  # CBV(Play|H), CBV(Play|T)
    assert constraints.opponent_reach == pytest.approx([0.8, 0.3])
    gifts = values.gifts([constraints])[0] / constraints.element_reach
    assert gifts == pytest.approx([0.5, 0.0])  # selling heads is worth 0.5 more than playing


def test_coin_toss_maxmargin_gives_five_eighths_and_br_value_three_eighths(coin_toss):
    guess, evaluation = _coin_toss_resolve(coin_toss, "maxmargin")
    assert (guess["heads"], guess["tails"], guess["forfeit"]) == pytest.approx((5 / 8, 3 / 8, 0), abs=2e-3)
    assert evaluation.best_response_values[0] == pytest.approx(3 / 8, abs=2e-3)


def test_coin_toss_reach_maxmargin_gives_one_half_and_br_value_one_quarter(coin_toss):
    guess, evaluation = _coin_toss_resolve(coin_toss, "reach-maxmargin")
    assert (guess["heads"], guess["tails"], guess["forfeit"]) == pytest.approx((0.5, 0.5, 0), abs=2e-3)
    assert evaluation.best_response_values[0] == pytest.approx(1 / 4, abs=2e-3)


def test_coin_toss_unsafe_always_guesses_heads_and_is_exploited(coin_toss):
    guess, evaluation = _coin_toss_resolve(coin_toss, "unsafe")
    assert guess["heads"] == pytest.approx(1.0, abs=1e-3)
    # Player 0 sells heads (0.5) and plays tails (+1): 0.75, worse than the trunk's 0.5.
    assert evaluation.best_response_values[0] == pytest.approx(0.75, abs=1e-3)


def test_coin_toss_coinflip_with_p_one_is_unsafe_resolving(coin_toss):
    _, trunk = coin_toss
    result = Resolver(trunk, gadget="coinflip", p=1.0, solver=SequenceFormLP, players=(1,)).resolve(
        [subgame_at(trunk.tree, "played")])
    assert result.strategy.probabilities_of("P1 played")["heads"] == pytest.approx(1.0)


def test_coin_toss_maxmargin_gadget_value_is_minus_the_max_min_margin(coin_toss):
    tree, trunk = coin_toss
    constraints = BlueprintValues(trunk).constraints(subgame_at(tree, "played"), 1, "br")
    assert SequenceFormLP(maxmargin_gadget(constraints).tree).solve().game_value == pytest.approx(-0.25)


def test_leduc_has_30_round_two_subgames_whose_opponent_infosets_are_its_cards(leduc):
    subgames = round_subgames(leduc, 2)
    assert len(subgames) == 30
    assert all(s.name.endswith("/") and not s.name.startswith("board=-") for s in subgames)
    for subgame in subgames[:6]:
        nodes, _, offsets = subgame.preorder
        for opponent in (0, 1):
            elements = subgame.augmented_infosets(opponent)
            assert elements.num_elements == 5  # the five cards the board leaves
            for element in range(elements.num_elements):
                cards = set()
                for root in elements.roots_of(element):
                    segment = nodes[offsets[root]:offsets[root + 1]]
                    first = segment[leduc.node_kind[segment] == opponent][0]
                    cards.add(leduc.infoset_keys[leduc.node_infoset[first]].split()[1])
                assert len(cards) == 1


def test_lemma_21_gadget_value_is_the_sum_of_best_response_constraints(leduc, burch_blueprint):
    values = BlueprintValues(burch_blueprint)
    for subgame in round_subgames(leduc, 2)[::7]:
        for player in (0, 1):
            constraints = values.constraints(subgame, player, "br")
            value0 = SequenceFormLP(resolve_gadget(constraints).tree).solve().game_value
            opponent_value = value0 if player == 1 else -value0
            assert opponent_value == pytest.approx(constraints.values.sum(), abs=1e-8)


def test_splicing_the_blueprint_back_reproduces_its_nash_conv_exactly(leduc, burch_blueprint, tmp_path):
    values = BlueprintValues(burch_blueprint)
    behavior = burch_blueprint.behavior()
    parts = []
    for subgame in round_subgames(leduc, 2):
        for player in (0, 1):
            gadget = resolve_gadget(values.constraints(subgame, player, "br"))
            parts.append(gadget.resolved_behavior(gadget.strategy_from(behavior)))
    spliced = splice(burch_blueprint, parts)
    assert spliced.infoset_map.num_abstract > burch_blueprint.infoset_map.num_abstract
    before = BestResponse(burch_blueprint.infoset_map).evaluate(burch_blueprint).nash_conv
    after = BestResponse(spliced.infoset_map).evaluate(spliced).nash_conv
    assert after == pytest.approx(before, abs=1e-12)
    save_strategy(tmp_path / "spliced.h5", spliced, provenance={"algorithm": "resolve"})
    loaded, _ = load_strategy(tmp_path / "spliced.h5", leduc)
    assert np.array_equal(loaded.behavior(), spliced.behavior())


@pytest.mark.parametrize("gadget", ["resolve", "maxmargin", "reach-maxmargin"])
def test_safe_gadgets_do_not_raise_burchs_leduc_exploitability(leduc, burch_blueprint, gadget):
    result = Resolver(burch_blueprint, gadget=gadget, solver=CFRPlusSolver, iterations=1000).resolve(
        round_subgames(leduc, 2))
    assert result.before.exploitability == pytest.approx(0.3823, abs=5e-4)
    assert result.after.nash_conv < result.before.nash_conv - 0.1


def test_self_play_constraints_beat_best_response_constraints_on_leduc(leduc, burch_blueprint):
    """Burch §5.4.2: 0.143 chips/game with self-play values instead of 0.288 with BR values."""
    subgames = round_subgames(leduc, 2)
    results = {kind: Resolver(burch_blueprint, constraints=kind, solver=CFRSolver, iterations=2000,
                              checkpoints=[200]).resolve(subgames) for kind in ("br", "selfplay")}
    br = [e.exploitability for _, e in results["br"].history]
    selfplay = [e.exploitability for _, e in results["selfplay"].history]
    assert all(0.2 < x < 0.34 for x in br)  # thesis: 0.33 at 200, 0.23-0.29 at 2,000
    assert all(0.1 < x < 0.17 for x in selfplay)  # thesis: 0.143
    assert [n for n, _ in results["br"].history] == [200, 2000]


def test_resolving_a_near_nash_leduc_profile_keeps_it_near_nash(leduc):
    blueprint = CFRPlusSolver(leduc).iterate(1000).average_strategy()
    result = Resolver(blueprint, gadget="resolve", solver=CFRPlusSolver, iterations=1000).resolve(
        round_subgames(leduc, 2))
    assert result.before.nash_conv < 1e-3
    assert result.after.nash_conv < result.before.nash_conv + 5e-3


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_safe_gadgets_never_raise_exploitability_on_random_games(seed):
    tree = random_public_tree(seed)
    subgames = first_public_subgames(tree)
    assume(subgames)
    blueprint = Strategy.from_behavior(tree, random_behavior(tree, np.random.default_rng(seed)))
    for gadget, constraints in (("resolve", "br"), ("maxmargin", "br"), ("reach-maxmargin", "br"),
                                ("resolve", "deepstack")):
        result = Resolver(blueprint, gadget=gadget, constraints=constraints,
                          solver=SequenceFormLP).resolve(subgames)
        for player in (0, 1):
            # Each re-solver's own exploitability (its opponent's best response) cannot grow.
            assert (result.after.best_response_values[1 - player]
                    <= result.before.best_response_values[1 - player] + 1e-7)
        for report in (r for r in result.subgames if not r.skipped):
            if gadget == "resolve" and constraints == "br":  # Lemma 21
                assert report.opponent_value == pytest.approx(report.constraint_sum, abs=1e-7)
            elif gadget != "resolve":  # the max-min margin is never negative
                assert report.opponent_value <= 1e-7


def test_unsafe_resolving_can_raise_exploitability_on_random_games():
    raised = 0
    for seed in range(16):  # seed 12: unsafe raises NashConv from 2.06 to 2.63
        tree = random_public_tree(seed)
        subgames = first_public_subgames(tree)
        if not subgames:
            continue
        blueprint = Strategy.from_behavior(tree, random_behavior(tree, np.random.default_rng(seed)))
        result = Resolver(blueprint, gadget="unsafe", solver=SequenceFormLP).resolve(subgames)
        raised += result.after.nash_conv > result.before.nash_conv + 1e-6
    assert raised > 0


def test_coinflip_with_p_zero_is_the_resolve_gadget(leduc, burch_blueprint):
    constraints = BlueprintValues(burch_blueprint).constraints(round_subgames(leduc, 2)[4], 0, "br")
    plain, coin = resolve_gadget(constraints).tree, coinflip_gadget(constraints, 0.0).tree
    for name in ("node_kind", "node_infoset", "node_chance_prob", "node_utility"):
        assert np.array_equal(getattr(plain, name), getattr(coin, name))
    assert coinflip_gadget(constraints, 0.5).tree.num_nodes > plain.num_nodes


def test_gifts_are_non_negative_and_splitting_only_shrinks_them(leduc, burch_blueprint):
    values = BlueprintValues(burch_blueprint)
    subgames = round_subgames(leduc, 2)
    for player in (0, 1):
        constraints = [values.constraints(s, player, "br") for s in subgames]
        split = values.gifts(constraints, split=True)
        whole = values.gifts(constraints, split=False)
        assert all(np.all(s >= 0) and np.all(s <= w + 1e-12) for s, w in zip(split, whole, strict=True))
        assert sum(w.sum() for w in whole) > sum(s.sum() for s in split) > 0
        deepstack = values.constraints_for(subgames, player, "deepstack")
        assert all(np.all(d.values >= c.values) for d, c in zip(deepstack, constraints, strict=True))


def test_bad_subgames_and_parameters_give_clear_errors(leduc, burch_blueprint):
    subgame = round_subgames(leduc, 2)[0]
    with pytest.raises(SubgameError, match="not closed under information sets"):
        Subgame(leduc, subgame.root_nodes[:3])
    with pytest.raises(SubgameError, match="no public state"):
        subgame_at(leduc, "board=Xx bets=cc/")
    with pytest.raises(SubgameError, match="round must be >= 2"):
        round_subgames(leduc, 1)
    with pytest.raises(SubgameError, match="below another root"):
        Subgame(leduc, [subgame.root_nodes[0], leduc.node_first_child[subgame.root_nodes[0]]])
    with pytest.raises(SubgameError, match="terminal"):
        Subgame(leduc, [int(np.flatnonzero(leduc.node_kind == 3)[0])])
    for bad in ({"gadget": "magic"}, {"constraints": "oracle"}, {"solver": "qp"},
                {"iterations": 0}, {"p": 1.5}, {"checkpoints": [5000]}, {"players": (2,)}):
        with pytest.raises(ParameterError):
            Resolver(burch_blueprint, **bad)
    with pytest.raises(ParameterError, match="constraints_for"):
        BlueprintValues(burch_blueprint).constraints(subgame, 0, "deepstack")
    with pytest.raises(SubgameError, match="overlaps"):
        Resolver(burch_blueprint, iterations=1).resolve([subgame, subgame])
    with pytest.raises(StrategyError, match="same infoset"):
        part = (np.array([0, 1, 2]), np.array([0.2, 0.3, 0.5]))
        splice(burch_blueprint, [part, part])


def test_best_response_constraints_match_a_best_response_in_the_gadget(leduc, burch_blueprint):
    """Cross-check: the opponent's action values at the root of a zero-shift maxmargin gadget
    (its choice of augmented infoset) are the normalised counterfactual best-response values."""
    values = BlueprintValues(burch_blueprint)
    for subgame in round_subgames(leduc, 2)[::5]:
        for player in (0, 1):
            constraints = values.constraints(subgame, player, "br")
            gadget = maxmargin_gadget(constraints.raised_by(-constraints.values, "zero"))
            response = BestResponse(InfosetMap.identity(gadget.tree))
            response.best_response(1 - player, gadget.strategy_from(burch_blueprint.behavior()))
            choice = int(np.flatnonzero(gadget.infoset_origin < 0)[0])
            lo, hi = gadget.tree.infoset_action_offset[choice:choice + 2]
            live = constraints.element_reach > 0
            assert response.action_values()[lo:hi] == pytest.approx(constraints.normalized()[live], abs=1e-12)


def test_extracted_subgame_keeps_the_blueprints_values(leduc, burch_blueprint):
    values = BlueprintValues(burch_blueprint)
    subgame = round_subgames(leduc, 2)[3]
    reach = values.reach[subgame.root_nodes]
    gadget = extract_subgame(subgame, reach)
    value0 = BestResponse(InfosetMap.identity(gadget.tree)).evaluate(
        gadget.strategy_from(burch_blueprint.behavior())).game_value
    assert value0 * reach.sum() == pytest.approx(np.dot(reach, values.node_values[subgame.root_nodes]))
    assert np.array_equal(gadget.node_origin[1:gadget.tree.node_num_children[0] + 1], subgame.root_nodes)


def test_coin_toss_is_a_registered_game_and_resolver_reports_progress(coin_toss):
    from click.testing import CliRunner

    from efgkit.cli import main

    result = CliRunner().invoke(main, ["info", "coin_toss", "--json"])
    assert result.exit_code == 0 and '"histories": 13' in result.stdout
    _, trunk = coin_toss
    calls = []
    outcome = Resolver(trunk, iterations=10, checkpoints=[5], progress=lambda done, total: calls.append(
        (done, total))).resolve([subgame_at(trunk.tree, "played")])
    assert calls == [(1, 2), (2, 2)]
    assert [n for n, _ in outcome.history] == [5, 10]
    assert set(outcome.to_dict()) >= {"nash_conv_before", "nash_conv_after", "subgames", "seconds"}
