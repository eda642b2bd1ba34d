"""Re-solving one board per suit-isomorphism class gives what re-solving every board gives."""

from __future__ import annotations

import numpy as np
import pytest

from efgkit.errors import ParameterError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import deal_roots
from efgkit.poker.materialised.suit_classes import SuitClasses
from efgkit.poker.materialised.vector_cfr import VectorCFR
from efgkit.resolve.vector_resolver import VectorResolver
from efgkit.specs import load_game, make_game


def test_leduc_boards_form_three_classes_per_betting_and_hands_map_one_to_one():
    """Leduc's six one-card boards after each betting sequence are three ranks: three classes of
    two; every permutation renames hands bijectively and keeps each hand's rank."""
    public = PublicTree(make_game("leduc"))
    roots = deal_roots(public, 2)
    classes = SuitClasses(public, roots)
    assert classes.representatives.shape[0] * 2 == roots.shape[0]
    suits = public.game.card_structure.num_suits
    for image in classes.hand_image:
        assert sorted(image.tolist()) == list(range(public.num_hands))
        assert np.array_equal(public.hand_cards[image] // suits, public.hand_cards // suits)
    for j, i in enumerate(classes.representative.tolist()):
        assert public.betting[roots[j]] == public.betting[roots[i]]
        rank = [c // suits for c in public.board_cards[public.board[roots[j]]]]
        assert rank == [c // suits for c in public.board_cards[public.board[roots[i]]]]


def test_image_actions_carry_a_symmetric_strategy_onto_itself():
    """holdem(ranks=2,rounds=2): a vector CFR+ strategy (suit-symmetric up to rounding) read along
    every root's image actions is itself, to rounding; flops form fewer classes than boards."""
    public = PublicTree(make_game("holdem(ranks=2,rounds=2)"))
    layout = StrategyLayout.lossless(public)
    strategy = VectorCFR(public, layout).iterate(20).current_strategy()
    roots = deal_roots(public, 2)
    classes = SuitClasses(public, roots)
    assert classes.representatives.shape[0] < roots.shape[0] / 4
    for j in range(roots.shape[0]):
        source, image = classes.image_actions(layout, j)
        assert source.shape[0] > 0 and np.unique(image).shape[0] == image.shape[0]
        np.testing.assert_allclose(strategy[image], strategy[source], rtol=0, atol=1e-12)


LEDUC_BY_RANK = "leduc(suit_isomorphism=true)"


@pytest.mark.parametrize("spec, gadget, split", [
    (LEDUC_BY_RANK, "resolve", True), (LEDUC_BY_RANK, "reach-maxmargin", False),
    (LEDUC_BY_RANK, "unsafe", True),
    ("holdem(ranks=2,rounds=2)", "maxmargin", True),
    ("holdem(ranks=2,rounds=2)", "distributional-hedge", True)])
def test_isomorphic_resolve_equals_resolving_every_board(spec, gadget, split):
    """A suit-symmetric blueprint (random on Leduc's ranks-only infosets; CFR+ on hold'em) re-solved
    board by board and one board per class, 20 CFR+ iterations per gadget: the same NashConv after
    (1e-9) and the same combined strategy (1e-9)."""
    if spec.startswith("leduc"):
        tree = load_game(spec)
        public = PublicTree(tree.game)
        infoset_map = InfosetMap.identity(tree)
        layout = StrategyLayout.from_infoset_map(public, infoset_map)
        blueprint = np.random.default_rng(4).random(layout.num_actions) + 0.05
    else:
        public = PublicTree(make_game(spec))
        layout = StrategyLayout.lossless(public)
        blueprint = VectorCFR(public, layout).iterate(8).average_strategy()
    offsets = layout.action_offset
    for r in range(layout.num_rows):
        blueprint[offsets[r]:offsets[r + 1]] /= blueprint[offsets[r]:offsets[r + 1]].sum()
    constraints = "selfplay" if gadget.startswith("distributional") else "br"
    every, classes = (VectorResolver(public, layout, blueprint, gadget=gadget, constraints=constraints,
                                     iterations=20, split_gifts=split, isomorphic=iso).resolve()
                      for iso in (False, True))
    assert classes.after.nash_conv == pytest.approx(every.after.nash_conv, abs=1e-9)
    np.testing.assert_allclose(classes.strategy, every.strategy, rtol=0, atol=1e-9)


def test_an_asymmetric_blueprint_is_refused():
    """A random strategy of card-level Leduc differs between boards of one class: refused."""
    public = PublicTree(make_game("leduc"))
    layout = StrategyLayout.lossless(public)
    blueprint = np.random.default_rng(1).random(layout.num_actions) + 0.05
    offsets = layout.action_offset
    for r in range(layout.num_rows):
        blueprint[offsets[r]:offsets[r + 1]] /= blueprint[offsets[r]:offsets[r + 1]].sum()
    with pytest.raises(ParameterError, match="not suit-symmetric"):
        VectorResolver(public, layout, blueprint, iterations=2, isomorphic=True).resolve()
