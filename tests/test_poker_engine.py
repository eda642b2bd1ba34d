"""The public-tree vector engine agrees with the GameTree solvers (the exact referee)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.abstraction.cards.clustering import cluster_cards
from efgkit.core.regret_rules import PREDICTIVE, ROW_RULES, SCHEDULED
from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError, StrategyError
from efgkit.games.poker import LEDUC_STYLE, CardStructure, LimitPoker
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import VectorCFR
from efgkit.poker.terminal_values import (
    CANCELLATION,
    add_showdown_and_compatible,
    fold_values,
    grouped_showdown_values,
    showdown_values,
    strength_groups,
)
from efgkit.solvers import BestResponse, Strategy
from efgkit.solvers.cfr import SOLVER_CLASSES
from efgkit.specs import load_game, make_game

SOLVERS = SOLVER_CLASSES


def _engine_and_tree(spec: str):
    tree = load_game(spec)
    return PublicTree(tree.game), tree


def _assert_same_run(public: PublicTree, infoset_map: InfosetMap, variant: str, iterations: int,
                     random_start: bool = False, start: int = 5) -> None:
    """Both solvers run ``iterations`` iterations, from zero or from one random state at
    iteration ``start``.

    Regret matching is discontinuous at zero regret, and games with symmetric suits have
    actions of exactly equal value, whose regrets the two summation orders round to
    different signs (+-1e-19), after which the runs part. A random start keeps the first
    iterations away from such ties; with two-card hands they come back within a few
    iterations, so those games are compared on fewer (docs/poker-engine.md)."""
    layout = StrategyLayout.from_infoset_map(public, infoset_map)
    options = {"horizon": 5 + iterations} if variant in SCHEDULED else {}
    engine = VectorCFR(public, layout, variant=variant, **options)
    reference = SOLVERS[variant](infoset_map, **options)
    if random_start:
        rng = np.random.default_rng(7)
        regrets = rng.normal(size=layout.num_actions)
        average = rng.random(layout.num_actions)
        prediction = rng.normal(size=layout.num_actions) if variant in PREDICTIVE else None
        arrays = {"regrets": regrets, "average_accumulator": average}
        if prediction is not None:
            arrays["prediction"] = prediction
        if variant in ROW_RULES:
            arrays["volatility"] = rng.random(infoset_map.num_abstract) * 3.0
        engine.load_state(SolverState(arrays, start))
        reference.load_state(SolverState(arrays, start))
    engine.iterate(iterations)
    reference.iterate(iterations)
    np.testing.assert_allclose(engine.regrets, reference.regrets, rtol=0, atol=1e-9)
    if variant in ROW_RULES:
        ours, theirs = engine.state_arrays()["volatility"], reference.state_arrays()["volatility"]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    scale = max(1.0, float(np.abs(reference.average_accumulator).max()))  # t^gamma weights grow large
    np.testing.assert_allclose(engine.average_accumulator / scale, reference.average_accumulator / scale,
                               rtol=0, atol=1e-9)
    ours = evaluate_strategy(layout, engine.average_strategy())
    theirs = BestResponse(infoset_map).evaluate(Strategy(infoset_map, engine.average_strategy()))
    assert ours.nash_conv == pytest.approx(theirs.nash_conv, abs=1e-9)
    assert ours.game_value == pytest.approx(theirs.game_value, abs=1e-9)
    assert ours.best_response_values == pytest.approx(theirs.best_response_values, abs=1e-9)


@pytest.mark.parametrize("variant", [variant for variant in SOLVER_CLASSES if variant not in ROW_RULES])
@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)", "leduc", "leduc(suit_isomorphism=true)"])
def test_vector_cfr_iterates_equal_the_gametree_solvers(spec, variant):
    public, tree = _engine_and_tree(spec)
    # HS-DCFR from zero on Kuhn meets, at iteration 3, a regret that is 0 in exact arithmetic
    # and that the two summation orders round to +2e-17 and 0: a tie, started away from
    tie = (spec, variant) == ("kuhn", "hs-dcfr")
    _assert_same_run(public, InfosetMap.identity(tree), variant, 30, random_start=tie)


@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)", "leduc", "leduc(suit_isomorphism=true)"])
def test_vad_cfr_on_the_engine_equals_the_gametree_solver(spec):
    """VAD-CFR (per-row volatility, the average from iteration 501 on): from zero, and from a
    random state at iteration 490 through the end of the warm-up."""
    public, tree = _engine_and_tree(spec)
    _assert_same_run(public, InfosetMap.identity(tree), "vad-cfr", 30)
    _assert_same_run(public, InfosetMap.identity(tree), "vad-cfr", 30, random_start=True, start=490)


def test_vad_cfr_on_a_card_abstraction_equals_the_gametree_solver():
    """Abstract rows: a row's magnitude, EWMA and average weight are those of its summed regrets."""
    public, tree = _engine_and_tree("leduc")
    buckets = cluster_cards(tree.game.card_structure, "ehs", [2, 3], random_state=0)
    for recall in ("imperfect", "perfect"):
        _assert_same_run(public, buckets.infoset_map(tree, recall), "vad-cfr", 20, random_start=True,
                         start=495)


@pytest.mark.parametrize("variant", ["cfr", "cfr+", "dcfr"])
def test_vector_cfr_on_a_game_dealt_by_rank_equals_the_gametree_solver(variant):
    """P111 deals ranks; the engine deals cards and reads ranks through the InfosetMap."""
    public, tree = _engine_and_tree("P111")
    _assert_same_run(public, InfosetMap.identity(tree), variant, 20, random_start=True)


def test_vector_cfr_on_a_card_abstraction_equals_the_gametree_solver():
    public, tree = _engine_and_tree("leduc")
    for recall in ("imperfect", "perfect"):
        buckets = cluster_cards(tree.game.card_structure, "ehs", [2, 3], random_state=0)
        _assert_same_run(public, buckets.infoset_map(tree, recall), "cfr+", 30)


def test_coarsest_imperfect_recall_map_runs_on_the_engine():
    public, tree = _engine_and_tree("kuhn")
    _assert_same_run(public, InfosetMap.coarsest(tree), "cfr+", 20)


def test_two_hole_cards_best_response_equals_the_gametree():
    """Two-card hands: card removal by inclusion-exclusion at folds and showdowns."""
    public, tree = _engine_and_tree("twocard(ranks=4,suits=2)")
    infoset_map = InfosetMap.identity(tree)
    _assert_same_run(public, infoset_map, "cfr+", 1, random_start=True)
    rng = np.random.default_rng(3)
    layout = StrategyLayout.from_infoset_map(public, infoset_map)
    strategy = rng.random(layout.num_actions)
    strategy /= np.repeat(np.add.reduceat(strategy, layout.action_offset[:-1]), np.diff(layout.action_offset))
    ours = evaluate_strategy(layout, strategy)
    theirs = BestResponse(infoset_map).evaluate(Strategy(infoset_map, strategy))
    assert ours.best_response_values == pytest.approx(theirs.best_response_values, abs=1e-12)
    assert ours.game_value == pytest.approx(theirs.game_value, abs=1e-12)


def test_lossless_layout_converges_to_leducs_value():
    public = PublicTree(make_game("leduc"))
    engine = VectorCFR(public, variant="cfr+").iterate(1000)
    result = evaluate_strategy(engine.layout, engine.average_strategy())
    assert result.game_value == pytest.approx(-0.0856, abs=2e-3)
    assert result.exploitability < 1e-3


def test_always_fold_in_holdem_is_exploitable_for_750_mbb_per_game():
    """Folding always loses the small blind (5) as small blind and the big blind (10) against
    a raise as big blind: 7.5 chips a game, 750 mbb/g with a big blind of 10."""
    public = PublicTree(make_game("holdem(ranks=2,rounds=1)"))
    layout = StrategyLayout.lossless(public)
    strategy = np.zeros(layout.num_actions)
    for d, node in enumerate(public.decision_nodes.tolist()):
        labels = public.action_labels[node]
        target = labels.index("fold") if "fold" in labels else labels.index("call")  # check when free
        rows = layout.rows[d][layout.rows[d] >= 0]
        strategy[layout.action_offset[rows] + target] = 1.0
    result = evaluate_strategy(layout, strategy)
    assert result.exploitability / 10 * 1000 == pytest.approx(750.0, abs=1e-9)


def test_holdem_variant_with_blinds_matches_the_gametree():
    public, tree = _engine_and_tree("holdem(ranks=2,rounds=2,caps=2-1)")
    _assert_same_run(public, InfosetMap.identity(tree), "cfr+", 1, random_start=True)


@st.composite
def limit_poker_rules(draw):
    rounds = draw(st.integers(1, 2))
    ranks = draw(st.integers(2, 4))
    suits = draw(st.integers(1, 2))
    board = (0, *([1] * (rounds - 1)))
    if 2 + sum(board) > ranks * suits:
        ranks = 3
        suits = 2
    sizes = tuple((draw(st.integers(1, 4)),) for _ in range(rounds))
    caps = tuple(draw(st.integers(1, 3)) for _ in range(rounds))
    big = draw(st.integers(1, 3))
    small = draw(st.integers(1, big))
    first = tuple(draw(st.integers(0, 1)) for _ in range(rounds))
    return LimitPoker("random-poker", CardStructure(ranks, suits, 1, board), deal_by_rank=False, ante=small,
                      bet_sizes=sizes, raise_sizes=sizes, max_bets_per_round=caps, style=LEDUC_STYLE,
                      blinds=(big, small), first_player=first)


@settings(max_examples=25, deadline=None)
@given(game=limit_poker_rules(), seed=st.integers(0, 2**31 - 1))
def test_random_limit_poker_rules_agree_with_the_gametree(game, seed):
    tree = game.compile()
    public = PublicTree(game)
    infoset_map = InfosetMap.identity(tree)
    layout = StrategyLayout.from_infoset_map(public, infoset_map)
    strategy = np.random.default_rng(seed).random(layout.num_actions) + 1e-3
    strategy /= np.repeat(np.add.reduceat(strategy, layout.action_offset[:-1]), np.diff(layout.action_offset))
    ours = evaluate_strategy(layout, strategy)
    theirs = BestResponse(infoset_map).evaluate(Strategy(infoset_map, strategy))
    assert ours.best_response_values == pytest.approx(theirs.best_response_values, abs=1e-9)
    assert ours.game_value == pytest.approx(theirs.game_value, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), hole=st.integers(1, 2), cards=st.integers(5, 9))
def test_terminal_kernels_equal_the_quadratic_sums(data, hole, cards):
    hands = np.array(list(combinations(range(cards), hole)), np.int64)
    reach = np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(hands), max_size=len(hands))))
    strength = np.array(data.draw(st.lists(st.integers(0, 3), min_size=len(hands), max_size=len(hands))))
    disjoint = np.array([[not set(a) & set(b) for b in hands.tolist()] for a in hands.tolist()])
    scratch = np.zeros(cards)
    out = np.zeros(len(hands))
    # the kernels drop inclusion-exclusion residues below CANCELLATION x the summed reach
    tolerance = 3.0 * CANCELLATION * max(reach.sum(), 1.0) + 1e-15
    fold_values(reach, hands, np.arange(len(hands), dtype=np.int64), scratch, 2.0, out)
    np.testing.assert_allclose(out, 2.0 * disjoint @ reach, rtol=0, atol=tolerance)
    order = np.argsort(strength, kind="stable")
    showdown_values(reach, hands, order.astype(np.int64), strength[order].astype(np.int64), scratch, 3.0, 2.0,
                    out)
    wins = disjoint & (strength[:, None] > strength[None, :])
    losses = disjoint & (strength[:, None] < strength[None, :])
    np.testing.assert_allclose(out, 3.0 * wins @ reach - 2.0 * losses @ reach, rtol=0, atol=2 * tolerance)
    assert not scratch.any()
    if hole == 2:  # the sampled walk's showdown from per-board tables: the same bits
        sorted_hands, sorted_strength = order.astype(np.int64), strength[order].astype(np.int64)
        cards_of, starts = np.zeros((len(hands), 2), np.int64), np.zeros(len(hands) + 1, np.int64)
        groups = strength_groups(hands, sorted_hands, sorted_strength, cards_of, starts)
        assert groups == len(np.unique(strength))
        grouped, sorted_reach = np.zeros(len(hands)), np.zeros(len(hands))
        grouped_showdown_values(reach, sorted_hands, cards_of, starts, groups, scratch, 3.0, 2.0,
                                sorted_reach, grouped)
        assert np.array_equal(grouped, out[sorted_hands]) and not scratch.any()
    # LBR's equities: showdown and compatible reach in one kernel, added; the same bits
    valid = order[(hands[order] != 0).all(axis=1)].astype(np.int64)  # the hands off a board card 0
    start = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=2 * len(hands), max_size=2 * len(hands))))
    values, totals = start[:len(hands)].copy(), start[len(hands):].copy()
    sorted_cards, sorted_reach = np.zeros((len(hands), 2), np.uint64), np.zeros(len(hands))
    group_start = np.zeros(len(hands) + 1, np.uint64)
    add_showdown_and_compatible(reach, hands, valid, strength[valid], scratch, sorted_cards, group_start,
                                sorted_reach, np.zeros(len(hands)), values, totals)
    showdown_values(reach, hands, valid, strength[valid], scratch, 1.0, 1.0, out)
    expected = start[:len(hands)].copy()
    expected[valid] += out[valid]
    assert np.array_equal(values, expected)
    fold_values(reach, hands, valid, scratch, 1.0, out)
    expected = start[len(hands):].copy()
    expected[valid] += out[valid]
    assert np.array_equal(totals, expected) and not scratch.any()


def test_bad_parameters_are_refused_by_the_library():
    public = PublicTree(make_game("kuhn"))
    with pytest.raises(ParameterError, match="cfr\\+ takes no alpha"):
        VectorCFR(public, variant="cfr+", alpha=2.0)
    with pytest.raises(ParameterError, match="variant must be one of"):
        VectorCFR(public, variant="pcfr")
    with pytest.raises(ParameterError, match="iterations must be >= 0"):
        VectorCFR(public).iterate(-1)
    with pytest.raises(StrategyError, match="the strategy has shape"):
        evaluate_strategy(StrategyLayout.lossless(public), np.zeros(3))


@pytest.mark.parametrize(("variant", "spec", "total", "split"),
                         [("dcfr", "leduc", 40, 25), ("pdcfr+", "leduc", 40, 25),
                          ("vad-cfr", "kuhn", 510, 503)])
def test_resume_from_state_arrays_is_bit_identical(variant, spec, total, split):
    """VAD-CFR resumes across the end of its warm-up (iteration 500), volatility included."""
    public = PublicTree(make_game(spec))
    straight = VectorCFR(public, variant=variant).iterate(total)
    first = VectorCFR(public, variant=variant).iterate(split)
    resumed = VectorCFR(public, variant=variant)
    resumed.load_state(SolverState({k: v.copy() for k, v in first.state_arrays().items()}, first.iteration))
    resumed.iterate(total - split)
    assert straight.average_accumulator.any()
    assert np.array_equal(resumed.regrets, straight.regrets)
    assert np.array_equal(resumed.average_accumulator, straight.average_accumulator)
