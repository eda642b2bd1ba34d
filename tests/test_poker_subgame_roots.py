"""The poker engine's subgame-root ranges and constraints equal resolve/'s on the GameTree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.errors import ParameterError
from efgkit.games.poker import Betting, PokerState
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import BlueprintRoots, deal_roots
from efgkit.resolve import BlueprintValues, round_subgames
from efgkit.resolve.constraints import normalized_values
from efgkit.solvers import Strategy
from efgkit.specs import load_game, make_game


def _subgame_name(public: PublicTree, node: int) -> str:
    game = public.game
    betting = Betting(public.betting_histories[public.betting[node]],
                      tuple(public.contribution[node].astype(int).tolist()), 0)
    return game.public_state_key(PokerState((0, 0, *public.board_slots[public.board[node]]), betting))


@pytest.mark.parametrize("kind", ["br", "selfplay"])
@pytest.mark.parametrize("player", [0, 1])
def test_root_ranges_and_constraints_equal_blueprint_values_on_leduc(kind, player):
    """Same random blueprint on both engines: per subgame (betting x board) and opponent card,
    π_{-o}(I), c_I and q_I of the public tree are RootConstraints' to 1e-12, and the range is the
    re-solver's own reach."""
    tree = load_game("leduc")
    public = PublicTree(tree.game)
    infoset_map = InfosetMap.identity(tree)
    rng = np.random.default_rng(3)
    probabilities = rng.random(infoset_map.num_abstract_actions) + 0.05
    offsets = infoset_map.abstract_action_offset
    for i in range(infoset_map.num_abstract):
        probabilities[offsets[i]:offsets[i + 1]] /= probabilities[offsets[i]:offsets[i + 1]].sum()
    blueprint = Strategy(infoset_map, probabilities)
    reference = BlueprintValues(blueprint)
    roots = deal_roots(public, 2)
    ours = BlueprintRoots(StrategyLayout.from_infoset_map(public, infoset_map), probabilities).ranges(
        roots, player, kind)
    subgames = {s.name: s for s in round_subgames(tree, 2)}
    assert sorted(subgames) == sorted(_subgame_name(public, int(n)) for n in roots)
    names = [public.game.outcome_names[public.hand_outcome(h)] for h in range(public.num_hands)]
    for i, node in enumerate(roots.tolist()):
        constraints = reference.constraints(subgames[_subgame_name(public, node)], player, kind)
        hand_of_element = [next(h for h, name in enumerate(names) if f"card={name} " in key)
                           for key in constraints.elements.keys]
        np.testing.assert_allclose(ours.element_reach[i, hand_of_element], constraints.element_reach,
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours.values[i, hand_of_element], constraints.values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours.opponent_reach[i, hand_of_element], constraints.opponent_reach,
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(normalized_values(ours.values, ours.element_reach)[i, hand_of_element],
                                   constraints.normalized(),
                                   rtol=0, atol=1e-9)
        off_board = np.setdiff1d(np.arange(public.num_hands), public.valid_hands(node))
        assert not ours.range[i, off_board].any() and not ours.element_reach[i, off_board].any()


def test_two_card_hands_remove_the_opponents_cards_from_the_reach():
    """holdem(ranks=2,rounds=2): π_{-o}(I) is the chance weight times the re-solver's reach over
    the hands sharing no card with the opponent's hand or the board (direct sum)."""
    public = PublicTree(make_game("holdem(ranks=2,rounds=2)"))
    layout = StrategyLayout.lossless(public)
    strategy = np.random.default_rng(0).random(layout.num_actions)
    offsets = layout.action_offset
    for r in range(layout.num_rows):
        strategy[offsets[r]:offsets[r + 1]] /= strategy[offsets[r]:offsets[r + 1]].sum()
    roots = deal_roots(public, 2)
    ranges = BlueprintRoots(layout, strategy).ranges(roots, 0, "br")
    cards = public.hand_mask
    for i, node in enumerate(roots[:5].tolist()):
        board = public.board_mask[public.board[node]]
        for h in public.valid_hands(node).tolist():
            compatible = [g for g in range(public.num_hands) if not (cards[g] & (cards[h] | board))]
            expected = public.chance_weight[node] * ranges.range[i, compatible].sum()
            assert ranges.element_reach[i, h] == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_a_round_without_a_public_deal_is_refused():
    public = PublicTree(make_game("leduc"))
    for round_number in (1, 3):
        with pytest.raises(ParameterError, match=f"no public deal before round {round_number}"):
            deal_roots(public, round_number)
    with pytest.raises(ParameterError, match="constraints on the poker engine"):
        layout = StrategyLayout.lossless(public)
        BlueprintRoots(layout, np.full(layout.num_actions, 0.5)).ranges(deal_roots(public, 2), 0, "deepstack")


def _random_blueprint(infoset_map: InfosetMap, seed: int) -> np.ndarray:
    probabilities = np.random.default_rng(seed).random(infoset_map.num_abstract_actions) + 0.05
    offsets = infoset_map.abstract_action_offset
    for i in range(infoset_map.num_abstract):
        probabilities[offsets[i]:offsets[i + 1]] /= probabilities[offsets[i]:offsets[i + 1]].sum()
    return probabilities


@pytest.mark.parametrize("kind, player, subgame_index", [
    ("unsafe", 0, 0), ("unsafe", 0, 17), ("resolve", 0, 3), ("resolve", 1, 17), ("maxmargin", 0, 17),
    ("maxmargin", 1, 3), ("reach-maxmargin", 1, 17)])
def test_vector_gadgets_play_what_cfr_plays_on_the_gadget_gametree(kind, player, subgame_index):
    """Leduc, a random blueprint, one round-2 subgame: the gadget solved on the poker engine
    (hands as vectors, ``VectorGadget``) and CFR+ on resolve/'s gadget GameTree, 60 iterations
    each, give the re-solving player (both players for unsafe) the same average strategy to 1e-9;
    reach-maxmargin's constraints are raised by the same (split) gifts on both."""
    from efgkit.resolve import maxmargin_gadget, resolve_gadget, unsafe_gadget
    from efgkit.resolve.vector_gadgets import VectorGadget
    from efgkit.solvers.cfr import CFRPlusSolver

    tree = load_game("leduc")
    public = PublicTree(tree.game)
    infoset_map = InfosetMap.identity(tree)
    probabilities = _random_blueprint(infoset_map, 11)
    layout = StrategyLayout.from_infoset_map(public, infoset_map)
    nodes = deal_roots(public, 2)
    node = int(nodes[subgame_index])
    subgames = {s.name: s for s in round_subgames(tree, 2)}
    subgame = subgames[_subgame_name(public, node)]
    values = BlueprintValues(Strategy(infoset_map, probabilities))
    ranges = BlueprintRoots(layout, probabilities).ranges(nodes, player, "br")
    if kind == "unsafe":
        gadget = unsafe_gadget(subgame, values.reach[subgame.root_nodes], player)
    else:
        constraints = values.constraints(subgame, player, "br")
        if kind == "reach-maxmargin":
            ordered = [subgames[_subgame_name(public, int(n))] for n in nodes]
            every = [values.constraints(s, player, "br") for s in ordered]
            gift = values.gifts(every, split=True)[subgame_index]
            constraints = constraints.raised_by(gift, "br+gifts")
            names = [public.game.outcome_names[public.hand_outcome(h)] for h in range(public.num_hands)]
            hands = [next(h for h, name in enumerate(names) if f"card={name} " in key)
                     for key in constraints.elements.keys]
            raised = ranges.values.copy()
            raised[subgame_index, hands] += gift
            ranges = ranges._replace(values=raised)
        gadget = (resolve_gadget if kind == "resolve" else maxmargin_gadget)(constraints)
    reference = CFRPlusSolver(InfosetMap.identity(gadget.tree)).iterate(60).average_strategy()
    engine = VectorGadget(public, layout, ranges, node, "maxmargin" if kind == "reach-maxmargin" else kind)
    average = engine.iterate(60).average_strategy()
    for resolved in (0, 1) if kind == "unsafe" else (player,):
        actions, expected = gadget.resolved_behavior(reference, resolved)
        assert actions.size > 0
        np.testing.assert_allclose(average[actions], expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("gadget, constraints, split", [
    ("unsafe", "br", True), ("resolve", "br", True), ("resolve", "selfplay", True), ("maxmargin", "br", True),
    ("reach-maxmargin", "br", True), ("reach-maxmargin", "br", False), ("distributional", "selfplay", True),
    ("distributional-hedge", "selfplay", True), ("reach-distributional", "selfplay", False),
    ("reach-distributional-hedge", "selfplay", True), ("reach-distributional-hedge", "selfplay", False)])
def test_vector_resolver_nash_conv_equals_the_gametree_resolver_on_leduc(gadget, constraints, split):
    """Every round-2 subgame of Leduc re-solved for both players from one random blueprint, 40
    CFR+ iterations per gadget: NashConv before and after on the poker engine equal resolve/'s
    Resolver on the GameTree to 1e-9 (unsafe, Burch's re-solve, Estimated, maxmargin,
    reach-maxmargin with gifts split and not split, Estimated + Distributional by Theorem 4's
    threshold and by Hedge, Reach-Estimated + Distributional with gifts split and not split)."""
    from efgkit.resolve import Resolver
    from efgkit.resolve.vector_resolver import VectorResolver

    tree = load_game("leduc")
    public = PublicTree(tree.game)
    infoset_map = InfosetMap.identity(tree)
    probabilities = _random_blueprint(infoset_map, 5)
    reference = Resolver(Strategy(infoset_map, probabilities), gadget=gadget, constraints=constraints,
                         iterations=40, split_gifts=split).resolve(round_subgames(tree, 2))
    ours = VectorResolver(public, StrategyLayout.from_infoset_map(public, infoset_map), probabilities,
                          gadget=gadget, constraints=constraints, iterations=40, split_gifts=split).resolve()
    assert ours.before.nash_conv == pytest.approx(reference.before.nash_conv, abs=1e-9)
    assert ours.after.nash_conv == pytest.approx(reference.after.nash_conv, abs=1e-9)
    assert ours.after.nash_conv != pytest.approx(ours.before.nash_conv, abs=1e-6)


@settings(max_examples=6, deadline=None, derandomize=True)  # the same examples in every run: see below
@given(spec=st.sampled_from(["twocard(ranks=4,suits=2)", "leduc(ranks=4)", "leduc(ranks=3,suits=3)",
                             "twocard(ranks=3,suits=3)"]),
       gadget=st.sampled_from(["unsafe", "resolve", "maxmargin", "reach-maxmargin", "distributional-hedge"]),
       split=st.booleans(), seed=st.integers(0, 2**16))
def test_vector_resolver_equals_the_gametree_resolver_on_small_rule_sets(spec, gadget, split, seed):
    """Reduced games with one- and two-card hands (card removal in every range and value), random
    blueprints: NashConv after re-solving on the poker engine is the GameTree Resolver's to 1e-9,
    and with best-response constraints the safe gadgets (resolve, maxmargin, split gifts) never
    raise it by more than the 30-iteration gadgets' own error, bounded here by 5% of the
    blueprint's NashConv."""
    from efgkit.resolve import Resolver
    from efgkit.resolve.vector_resolver import VectorResolver

    tree = load_game(spec)
    public = PublicTree(tree.game)
    infoset_map = InfosetMap.identity(tree)
    probabilities = _random_blueprint(infoset_map, seed)
    constraints = "selfplay" if gadget.startswith("distributional") else "br"
    reference = Resolver(Strategy(infoset_map, probabilities), gadget=gadget, constraints=constraints,
                         iterations=30, split_gifts=split).resolve(round_subgames(tree, 2))
    ours = VectorResolver(public, StrategyLayout.from_infoset_map(public, infoset_map), probabilities,
                          gadget=gadget, constraints=constraints, iterations=30, split_gifts=split).resolve()
    assert ours.after.nash_conv == pytest.approx(reference.after.nash_conv, abs=1e-9)
    if gadget in ("resolve", "maxmargin") or (gadget == "reach-maxmargin" and split):
        assert ours.after.nash_conv <= ours.before.nash_conv * 1.05


def test_vector_resolve_gadget_on_twocard_seed_0_equals_the_gametree_resolver():
    """The example the randomized run of the test above once found: in one subgame the
    opponent always folds to a bet, so betting and checking down are worth exactly the same;
    the engine's fold and showdown sums (two inclusion-exclusion orders) differed in the last
    bit and CFR+ played the 1e-20 regret as a pure strategy from iteration 9 (7.3e-3 apart at
    30) until within-rounding regrets were dropped (``vector_cfr._add_regrets``)."""
    from efgkit.resolve import Resolver
    from efgkit.resolve.vector_resolver import VectorResolver

    tree = load_game("twocard(ranks=4,suits=2)")
    public = PublicTree(tree.game)
    infoset_map = InfosetMap.identity(tree)
    probabilities = _random_blueprint(infoset_map, 0)
    reference = Resolver(Strategy(infoset_map, probabilities), gadget="resolve", constraints="br",
                         iterations=30, split_gifts=False).resolve(round_subgames(tree, 2))
    ours = VectorResolver(public, StrategyLayout.from_infoset_map(public, infoset_map), probabilities,
                          gadget="resolve", constraints="br", iterations=30, split_gifts=False).resolve()
    assert ours.after.nash_conv == pytest.approx(reference.after.nash_conv, abs=1e-9)
