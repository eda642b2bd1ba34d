"""Brown & Sandholm's min-payoff gift bound on the poker engines equals resolve/'s on the GameTree.

The bound ``max_b LB(I', b)`` needs, per pair of hands, the least showdown outcome over every
completion of the board (``poker.least_outcomes``); these tests check that table by brute force,
the gifts element by element against ``BlueprintValues.gifts(lower_bound=True)``, the combined
strategy's NashConv against ``Resolver(gift_bound="min-payoff")``, and the streamed re-solver
against the materialised one, on blueprints whose min-payoff gifts are not all zero.
"""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_poker_subgame_roots import _subgame_name

from efgkit.games.hand_ranking import hand_value
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.betting_tree import BettingTree, private_hands
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.poker.least_outcomes import LOSE, NO_PAIR, TIE, WIN, least_outcomes
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import VectorCFR
from efgkit.resolve import BlueprintValues, Resolver, round_subgames
from efgkit.resolve.streamed_resolver import StreamedResolver
from efgkit.resolve.vector_resolver import VectorResolver
from efgkit.solvers import Strategy
from efgkit.solvers.cfr import CFRPlusSolver
from efgkit.specs import load_game, make_game


def _brute_force(hand_cards, hand_mask, board, final_size, num_cards, num_ranks, num_suits):
    """The least outcome of every ordered pair, by enumerating every completion in Python."""
    hands = hand_cards.shape[0]
    board_mask = sum(1 << int(c) for c in board)
    table = np.full((hands, hands), NO_PAIR, np.int8)
    left = [c for c in range(num_cards) if not board_mask >> c & 1]
    for x in range(hands):
        for y in range(hands):
            if (hand_mask[x] | hand_mask[y]) & board_mask or hand_mask[x] & hand_mask[y] or x == y:
                continue
            worst = WIN
            for extra in combinations(left, final_size - len(board)):
                if sum(1 << c for c in extra) & (hand_mask[x] | hand_mask[y]):
                    continue
                full = [*board, *extra]
                vx = hand_value(np.array([*hand_cards[x], *full], np.int64), len(full) + hand_cards.shape[1],
                                num_ranks, num_suits)
                vy = hand_value(np.array([*hand_cards[y], *full], np.int64), len(full) + hand_cards.shape[1],
                                num_ranks, num_suits)
                worst = min(worst, LOSE if vx < vy else TIE if vx == vy else WIN)
            table[x, y] = worst
    return table


@settings(max_examples=25, deadline=None, derandomize=True)
@given(ranks=st.integers(2, 4), suits=st.integers(1, 3), hole=st.integers(1, 2), dealt=st.integers(0, 2),
       extra=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_least_outcomes_equal_brute_force(ranks, suits, hole, dealt, extra, seed):
    """Small decks, one- and two-card hands, boards of 0-2 cards completed by 0-2 more: the
    kernel's table is the brute-force enumeration's, entry for entry."""
    num_cards = ranks * suits
    if 2 * hole + dealt + extra > num_cards or dealt + extra == 0:
        return
    hand_cards, hand_mask = private_hands(num_cards, hole)
    board = sorted(np.random.default_rng(seed).choice(num_cards, dealt, replace=False).tolist())
    final = dealt + extra
    ours = least_outcomes(hand_cards, hand_mask, np.array(board, np.int64), final, num_cards, ranks, suits)
    np.testing.assert_array_equal(ours, _brute_force(hand_cards, hand_mask, board, final, num_cards, ranks,
                                                     suits))


def test_a_hand_that_cannot_lose_is_not_counted_as_losing():
    """Leduc from the empty board: a card against the other card of its rank always ties, and
    (one-card hands, one board card) every other pair can lose; holdem(ranks=2): K♠K♥ against
    A♠A♥ on a board with no king can never win."""
    hand_cards, hand_mask = private_hands(6, 1)
    table = least_outcomes(hand_cards, hand_mask, np.zeros(0, np.int64), 1, 6, 3, 2)
    same_rank = (hand_cards[:, None, 0] // 2) == (hand_cards[None, :, 0] // 2)
    np.fill_diagonal(same_rank, False)
    assert (table[same_rank] == TIE).all() and (table[~same_rank & (table != NO_PAIR)] == LOSE).all()
    hand_cards, hand_mask = private_hands(8, 2)
    table = least_outcomes(hand_cards, hand_mask, np.array([4, 5, 6], np.int64), 3, 8, 2, 4)
    assert (table == WIN).any() and (table == TIE).any()


def _identity_blueprint(spec: str, iterations: int):
    tree = load_game(spec)
    infoset_map = InfosetMap.identity(tree)
    solver = CFRPlusSolver(infoset_map).iterate(iterations)
    probabilities = np.asarray(solver.average_strategy().probabilities)
    return tree, PublicTree(tree.game), infoset_map, probabilities


def _hand_of_elements(public: PublicTree, keys) -> list[int]:
    """The public tree's hand index of each augmented infoset's private cards (its key's
    ``card=`` or ``cards=`` field; games dealt by rank: the first hand of that rank)."""
    names = [public.game.outcome_names[public.hand_outcome(h)] for h in range(public.num_hands)]
    first = {name: names.index(name) for name in names}
    return [first[re.search(r"cards?=(\S+) ", key).group(1)] for key in keys]


@pytest.mark.parametrize("spec, iterations", [
    ("leduc", 20), ("leduc(ranks=4)", 30), ("twocard(ranks=4,suits=2)", 30),
    ("holdem(ranks=2,rounds=2,caps=1-1)", 10)])
@pytest.mark.parametrize("split", [True, False])
def test_min_payoff_gifts_equal_blueprint_values(spec, iterations, split):
    """CFR+ blueprints (a few iterations: some actions lose more than folding), both players:
    every subgame's min-payoff gifts on the poker engine equal ``BlueprintValues.gifts(...,
    lower_bound=True)`` element by element to 1e-12, and some are positive."""
    tree, public, infoset_map, probabilities = _identity_blueprint(spec, iterations)
    values = BlueprintValues(Strategy(infoset_map, probabilities))
    subgames = {s.name: s for s in round_subgames(tree, 2)}
    positive = 0
    for player in (0, 1):
        resolver = VectorResolver(public, StrategyLayout.from_infoset_map(public, infoset_map), probabilities,
                                  gadget="reach-maxmargin", split_gifts=split, gift_bound="min-payoff")
        ours = resolver.gifts(resolver.values.ranges(resolver.roots, player, "br"))
        constraints = [values.constraints(subgames[_subgame_name(public, int(n))], player, "br")
                       for n in resolver.roots]
        reference = values.gifts(constraints, split=split, lower_bound=True)
        for i, c in enumerate(constraints):
            hands = _hand_of_elements(public, c.elements.keys)
            np.testing.assert_allclose(ours[i, hands], reference[i], rtol=0, atol=1e-12)
            positive += int((reference[i] > 0).sum())
    assert positive > 0


# Reach-Estimated + Distributional by the rule whose gift-free gadget agrees on the two engines
# for that blueprint (see the test's docstring).
GAMES = [("leduc", 20, "reach-distributional-hedge"), ("leduc(ranks=4)", 30, "reach-distributional"),
         ("twocard(ranks=4,suits=2)", 30, "reach-distributional-hedge"),
         ("holdem(ranks=2,rounds=2,caps=1-1)", 10, "reach-distributional")]
CASES = [(spec, iterations, 2, gadget, constraints, split) for spec, iterations, distributional in GAMES
         for gadget, constraints in (("reach-maxmargin", "br"), (distributional, "selfplay"))
         for split in (True, False)]
CASES += [("twocard(ranks=7,suits=1,board=1-1)", 10, 3, "reach-maxmargin", "br", split)
          for split in (True, False)]


@pytest.mark.parametrize("spec, iterations, round_number, gadget, constraints, split", CASES)
def test_vector_resolver_min_payoff_equals_the_gametree_resolver(spec, iterations, round_number, gadget,
                                                                 constraints, split):
    """Every subgame of the round re-solved for both players with min-payoff gifts, 20 CFR+
    iterations per gadget: the combined strategy's NashConv on the poker engine equals the
    GameTree ``Resolver(gift_bound="min-payoff")``'s to 1e-9 (a rounds=3 game among them: the
    gifts of flop decisions, whose showdowns still wait for the turn card). Reach-Estimated +
    Distributional by Hedge or by Theorem 4's threshold rule, whichever agrees without gifts:
    on these CFR+ blueprints the distributional gadgets themselves, gifts or none, differ between
    the engines by 1e-4 to 1e-3 in some games (docs/resolve.md), which this test does not cover."""
    tree, public, infoset_map, probabilities = _identity_blueprint(spec, iterations)
    options = {"gadget": gadget, "constraints": constraints, "iterations": 20, "split_gifts": split,
               "gift_bound": "min-payoff"}
    subgames = round_subgames(tree, round_number)
    reference = Resolver(Strategy(infoset_map, probabilities), **options).resolve(subgames)
    ours = VectorResolver(public, StrategyLayout.from_infoset_map(public, infoset_map), probabilities,
                          round_number=round_number, **options).resolve()
    assert ours.after.nash_conv == pytest.approx(reference.after.nash_conv, abs=1e-9)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(spec=st.sampled_from(["leduc(ranks=3,suits=3)", "leduc(ranks=4)", "twocard(ranks=3,suits=3)",
                             "twocard(ranks=4,suits=2)", "holdem(ranks=2,rounds=2,caps=1-1)"]),
       iterations=st.integers(3, 40), split=st.booleans())
def test_min_payoff_on_rule_sets_where_a_pair_cannot_lose(spec, iterations, split):
    """Reduced rule sets in which some pair of hands can never lose against each other from the
    empty board (ties on every completion, or wins): Reach-Maxmargin with min-payoff gifts on the
    poker engine equals the GameTree's to 1e-9. (The table changes the bound's values there; on
    these games it was not found to change a gift: docs/resolve.md.) Blueprints on which plain
    Maxmargin, with no gifts, already differs between the engines are skipped (holdem(ranks=2)
    after 3 CFR+ iterations: 4.5643 against 4.5883; docs/resolve.md)."""
    tree, public, infoset_map, probabilities = _identity_blueprint(spec, iterations)
    deck = public.game.card_structure
    table = least_outcomes(public.hand_cards, public.hand_mask, np.zeros(0, np.int64),
                           int(public.betting_tree.deal_size.sum()), public.num_cards, deck.num_ranks,
                           deck.num_suits)
    assert ((table == TIE) | (table == WIN)).any()
    layout = StrategyLayout.from_infoset_map(public, infoset_map)
    subgames = round_subgames(tree, 2)
    base = {"gadget": "maxmargin", "iterations": 15}
    assume(VectorResolver(public, layout, probabilities, **base).resolve().after.nash_conv == pytest.approx(
        Resolver(Strategy(infoset_map, probabilities), **base).resolve(subgames).after.nash_conv, abs=1e-9))
    options = {"gadget": "reach-maxmargin", "iterations": 15, "split_gifts": split,
               "gift_bound": "min-payoff"}
    reference = Resolver(Strategy(infoset_map, probabilities), **options).resolve(subgames)
    ours = VectorResolver(public, layout, probabilities, **options).resolve()
    assert ours.after.nash_conv == pytest.approx(reference.after.nash_conv, abs=1e-9)


FLOP = ("holdem(ranks=3,rounds=2,caps=1-1)", (3, 4), 2)
TURN = ("holdem(ranks=2,rounds=3,caps=1-1-1)", (2, 3, 4), 3)


@pytest.mark.parametrize("spec, sizes, round_number, gadget, constraints, split", [
    (*FLOP, "reach-maxmargin", "br", True), (*FLOP, "reach-maxmargin", "br", False),
    (*FLOP, "reach-distributional-hedge", "selfplay", False), (*TURN, "reach-maxmargin", "br", False),
    (*TURN, "reach-distributional-hedge", "selfplay", True)])
def test_streamed_min_payoff_equals_vector_resolver(spec, sizes, round_number, gadget, constraints, split):
    """A 20-iteration CFR+ bucket blueprint, one flop (and turn) per suit class: the streamed
    re-solver with min-payoff gifts (pre-flop bound via ``PreDealGifts``, flop decisions' from the
    one-flop tree at the turn cut) equals the materialised one to 1e-9, and its gifts are not
    all zero. (Reach-Maxmargin split at the turn cut is left out: there the two engines' game
    values differ with cbv gifts too, their best responses agree; docs/resolve.md.)"""
    game = make_game(spec)
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, sizes, 0))
    tree = PublicTree(game)
    layout = StrategyLayout.from_bucket_layout(tree, buckets)
    strategy = np.asarray(VectorCFR(tree, layout, variant="cfr+").iterate(20).average_strategy())
    options = {"gadget": gadget, "constraints": constraints, "split_gifts": split, "iterations": 6,
               "isomorphic": True, "round_number": round_number, "gift_bound": "min-payoff"}
    materialised = VectorResolver(tree, layout, strategy, **options)
    assert materialised.gifts(materialised.values.ranges(materialised.roots, 0, "br")).max() > 0
    streamed = StreamedResolver(buckets, strategy, **options).resolve()
    expected = materialised.resolve()
    np.testing.assert_allclose(streamed.after.best_response_values, expected.after.best_response_values,
                               rtol=0, atol=1e-9)
    assert streamed.after.game_value == pytest.approx(expected.after.game_value, abs=1e-9)
