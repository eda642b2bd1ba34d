"""The streamed re-solver (one flop at a time) equals the materialised ``VectorResolver``."""

from __future__ import annotations

import numpy as np
import pytest

from efgkit.errors import ParameterError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.resolve.streamed_resolver import FlopTree, StreamedResolver
from efgkit.resolve.vector_resolver import VectorResolver
from efgkit.specs import make_game

SPEC = "holdem(ranks=4,rounds=2,caps=1-1)"
TECHNIQUES = [  # Brown & Sandholm's Table 1 rows: (gadget, constraints, split gifts)
    ("unsafe", "br", True), ("resolve", "br", True), ("maxmargin", "br", True),
    ("reach-maxmargin", "br", True), ("reach-maxmargin", "br", False), ("resolve", "selfplay", True),
    ("distributional-hedge", "selfplay", True), ("reach-distributional-hedge", "selfplay", True),
    ("reach-distributional-hedge", "selfplay", False)]


@pytest.fixture(scope="module")
def blueprint():
    game = make_game(SPEC)
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (3, 4), 0))
    tree = PublicTree(game)
    return buckets, buckets.random(1), tree, StrategyLayout.from_bucket_layout(tree, buckets)


@pytest.mark.parametrize("gadget, constraints, split", TECHNIQUES)
def test_streamed_resolve_equals_vector_resolver(blueprint, gadget, constraints, split):
    """Every technique, 10 CFR+ iterations per gadget, one flop per suit class: both players'
    best-response values and the game value of the combined strategy equal the materialised
    resolver's (one board per class, then evaluated on the whole public tree) to 1e-9."""
    buckets, strategy, tree, layout = blueprint
    options = {"gadget": gadget, "constraints": constraints, "split_gifts": split, "iterations": 10,
               "isomorphic": True}
    streamed = StreamedResolver(buckets, strategy, **options).resolve()
    materialised = VectorResolver(tree, layout, strategy, **options).resolve()
    for ours, theirs in ((streamed.before, materialised.before), (streamed.after, materialised.after)):
        np.testing.assert_allclose(ours.best_response_values, theirs.best_response_values, rtol=0, atol=1e-9)
        assert ours.game_value == pytest.approx(theirs.game_value, abs=1e-9)
    assert streamed.flops == 48 and streamed.gadgets == (1 if gadget == "unsafe" else 2) * 48 * 3
    assert streamed.after.nash_conv != pytest.approx(streamed.before.nash_conv, abs=1e-6)


def test_every_flop_and_two_workers_give_the_classes_result():
    """holdem(ranks=2,rounds=2), reach-maxmargin not split: every flop (56) re-solved equals one per
    class (6) to 1e-9, and two Dask workers give this process's numbers bit for bit."""
    game = make_game("holdem(ranks=2,rounds=2)")
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (2, 3), 3))
    strategy = buckets.random(2)
    options = {"gadget": "reach-maxmargin", "split_gifts": False, "iterations": 8}
    classes = StreamedResolver(buckets, strategy, isomorphic=True, **options).resolve()
    every = StreamedResolver(buckets, strategy, isomorphic=False, **options).resolve()
    assert (classes.flops, every.flops) == (6, 56)
    assert every.after.nash_conv == pytest.approx(classes.after.nash_conv, abs=1e-9)
    with ChunkRunner(workers=2) as runner:
        remote = StreamedResolver(buckets, strategy, isomorphic=True, **options).resolve(runner)
    assert remote.after.best_response_values == classes.after.best_response_values
    assert len(remote.worker_peak_rss) == 2


@pytest.mark.parametrize("gadget, constraints, split", [
    ("reach-maxmargin", "br", False), ("reach-distributional-hedge", "selfplay", True)])
def test_turn_cut_equals_vector_resolver(gadget, constraints, split):
    """Re-solving after the turn (round 3) one flop at a time, one flop and one turn per suit
    class, gifts from pre-flop and flop decisions: equal to the materialised resolver's to 1e-9."""
    game = make_game("holdem(ranks=2,rounds=3,caps=1-1-1)")
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (2, 3, 4), 0))
    strategy = buckets.random(1)
    tree = PublicTree(game)
    options = {"gadget": gadget, "constraints": constraints, "split_gifts": split, "iterations": 4,
               "isomorphic": True, "round_number": 3}
    streamed = StreamedResolver(buckets, strategy, **options).resolve()
    materialised = VectorResolver(tree, StrategyLayout.from_bucket_layout(tree, buckets), strategy,
                                  **options).resolve()
    np.testing.assert_allclose(streamed.after.best_response_values, materialised.after.best_response_values,
                               rtol=0, atol=1e-9)
    assert streamed.after.game_value == pytest.approx(materialised.after.game_value, abs=1e-9)
    assert streamed.after.nash_conv < streamed.before.nash_conv - 1e-3


@pytest.mark.parametrize("split", [True, False])
def test_turn_cut_gifts_on_a_cfr_plus_blueprint_equal_the_materialised_ones(split):
    """A 20-iteration CFR+ bucket blueprint, the turn cut, every flop: each flop tree's
    gift-raised constraint values, π(I) and ranges at its roots (pre-flop gifts shared over every
    flop's roots, the flop decisions' from the one-flop tree) equal the materialised resolver's at
    the same (betting, board) to 1e-14 relative, gifts split or whole. (They differ from them in
    the last bits, summed in another order, which is why Reach-Maxmargin split's combined strategies
    can differ at exact ties: docs/resolve.md.)"""
    from efgkit.poker.materialised.vector_cfr import VectorCFR

    game = make_game("holdem(ranks=2,rounds=3,caps=1-1-1)")
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.hashed(game, (2, 3, 4), 0))
    tree = PublicTree(game)
    layout = StrategyLayout.from_bucket_layout(tree, buckets)
    strategy = np.asarray(VectorCFR(tree, layout, variant="cfr+").iterate(20).average_strategy())
    options = {"gadget": "reach-maxmargin", "split_gifts": split, "iterations": 1, "isomorphic": False,
               "round_number": 3}
    streamed = StreamedResolver(buckets, strategy, **options)
    streamed.resolve()
    materialised = VectorResolver(tree, layout, strategy, **options)

    def key(public, node):
        return int(public.betting[node]), public.board_cards[public.board[node]]

    raised = 0
    for player in (0, 1):
        expected = materialised.ranges(player)
        row = {key(tree, int(n)): i for i, n in enumerate(expected.nodes.tolist())}
        plain = materialised.values.ranges(materialised.roots, player, "br").values
        raised += int((expected.values > plain + 1e-12).sum())
        for item in range(len(streamed.items)):
            flop = streamed.flop_tree(item)
            ours = streamed.resolver(flop).ranges(player)
            rows = [row[key(flop, n)] for n in ours.nodes.tolist()]
            for name in ("values", "element_reach", "range"):
                theirs = getattr(expected, name)[rows]
                np.testing.assert_allclose(getattr(ours, name), theirs, rtol=1e-14,
                                           atol=1e-14 * np.abs(theirs).max())
    assert raised > 0


def test_flop_tree_holds_one_board_with_the_full_trees_chance_weights():
    """The one-flop tree's nodes are the pre-flop betting and one board's subtrees, with the
    whole tree's chance weights (so its values are that board's share of the game's)."""
    game = make_game("holdem(ranks=2,rounds=2)")
    whole, flop = PublicTree(game), FlopTree(game, (5, 0, 3))
    assert flop.board_cards == [(), (0, 3, 5)]
    assert set(flop.chance_weight.tolist()) <= set(whole.chance_weight.tolist())
    assert flop.num_nodes < whole.num_nodes


def test_bad_blueprints_are_refused_in_one_line():
    """No board deal, or an abstraction that is not suit-symmetric with isomorphic=True: ParameterError."""
    game = make_game("holdem(ranks=2,rounds=1)")
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))
    with pytest.raises(ParameterError, match="no board deal"):
        StreamedResolver(buckets, buckets.uniform())
    game = make_game("holdem(ranks=2,rounds=2)")
    buckets = BucketLayout(BettingTree(game), LosslessCards(game))
    with pytest.raises(ParameterError, match="not suit-symmetric"):
        StreamedResolver(buckets, buckets.uniform(), isomorphic=True)
    with pytest.raises(ParameterError, match="gadgets"):
        StreamedResolver(buckets, buckets.uniform(), gadget="coinflip", isomorphic=False)
    with pytest.raises(ParameterError, match="no public deal before round 3"):
        StreamedResolver(buckets, buckets.uniform(), isomorphic=False, round_number=3)
