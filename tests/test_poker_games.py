"""Kuhn, Leduc and generic poker Pbrc: sizes (OpenSpiel, seed_cermak.md §4.3.4), rules, fast builder."""

import pytest

from efgkit.errors import GameSpecError, TreeTooLargeError
from efgkit.games import build_tree
from efgkit.games.poker import CardStructure, generic_poker, kuhn_poker, leduc_poker
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.solvers.sequence_form_lp import SequenceFormLP
from efgkit.specs import canonical_spec, load_game

LEDUC_VALUE = -0.085606424078


def _follow(tree, labels):
    """The node reached from the root by action labels; a chance node takes the labelled outcome
    by its index among the outcomes (``("deal", k)``)."""
    node = 0
    for label in labels:
        if isinstance(label, tuple):
            assert tree.node_kind[node] == CHANCE
            node = int(tree.node_first_child[node]) + label[1]
        else:
            actions = tree.infoset_actions(int(tree.node_infoset[node]))
            node = int(tree.node_first_child[node]) + actions.index(label)
    return node


def _play(game, labels):
    state = game.initial_state()
    for label in labels:
        state = game.apply(state, label)
    return state


@pytest.mark.parametrize(
    ("game", "nodes", "chance", "decision", "terminals", "infosets"),
    [
        (kuhn_poker(3), 58, 4, 24, 30, 12),
        (kuhn_poker(5), 186, 6, 80, 100, 20),
        (leduc_poker(), 9_457, 157, 3_780, 5_520, 936),
        (leduc_poker(suit_isomorphism=True), 1_939, 49, 774, 1_116, 288),
        (generic_poker(1, 1, 1), 5_045, 85, 2_016, 2_944, 504),
        (generic_poker(2, 2, 2), 162_869, 469, 56_160, 106_240, 14_040),
        (generic_poker(2, 2, 4), 3_006_005, 2_005, 1_010_016, 1_993_984, 252_504),
    ],
    ids=lambda value: getattr(value, "spec", None),
)
def test_sizes_match_openspiel_and_the_paper(game, nodes, chance, decision, terminals, infosets):
    sizes = game.compile().sizes()
    assert game.num_nodes() == nodes
    assert (sizes["histories"], sizes["chance_nodes"], sizes["decision_nodes"]) == (nodes, chance, decision)
    assert sizes["terminal_nodes"] == terminals
    assert sizes["infosets_player0"] == sizes["infosets_player1"] == infosets // 2


@pytest.mark.parametrize(
    "game",
    [kuhn_poker(3), kuhn_poker(5), leduc_poker(), leduc_poker(True), generic_poker(1, 1, 1),
     generic_poker(2, 2, 2)],
    ids=lambda game: game.spec,
)
def test_fast_compile_equals_generic_builder(game):
    fast, reference = game.compile(), build_tree(game)
    assert fast.fingerprint == reference.fingerprint
    assert fast.public_state_keys == reference.public_state_keys
    assert fast.has_perfect_recall


@pytest.mark.parametrize(
    ("game", "value"),
    [(kuhn_poker(), -1 / 18), (leduc_poker(), LEDUC_VALUE), (leduc_poker(True), LEDUC_VALUE)],
    ids=["kuhn", "leduc", "leduc-suit-isomorphic"],
)
def test_game_values_match_openspiel(game, value):
    assert SequenceFormLP(game.compile()).solve().game_value == pytest.approx(value, abs=1e-9)


def _walk_with_openspiel(openspiel_game, tree):
    """Walk both trees in parallel; check kinds, children, labels, probabilities, utilities, infosets."""
    our_infoset_of = {}
    their_key_of = {}
    visited = 0
    stack = [(openspiel_game.new_initial_state(), 0)]
    while stack:
        state, node = stack.pop()
        visited += 1
        kind = tree.node_kind[node]
        first = int(tree.node_first_child[node])
        if state.is_terminal():
            assert kind == TERMINAL
            assert tree.node_utility[node] == pytest.approx(state.returns()[0], abs=1e-12)
            continue
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            assert kind == CHANCE and tree.node_num_children[node] == len(outcomes)
            for k, (action, probability) in enumerate(outcomes):
                assert tree.node_chance_prob[first + k] == pytest.approx(probability, abs=1e-12)
                stack.append((state.child(action), first + k))
            continue
        assert kind == state.current_player()
        infoset = int(tree.node_infoset[node])
        key = state.information_state_string()
        assert our_infoset_of.setdefault(key, infoset) == infoset
        assert their_key_of.setdefault(infoset, key) == key
        legal = state.legal_actions()
        assert tree.infoset_actions(infoset) == [state.action_to_string(a).lower() for a in legal]
        stack.extend((state.child(action), first + k) for k, action in enumerate(legal))
    assert visited == tree.num_nodes
    assert len(their_key_of) == tree.num_infosets


@pytest.mark.parametrize(
    ("openspiel_spec", "game"),
    [
        ("kuhn_poker", kuhn_poker()),
        ("leduc_poker", leduc_poker()),
        ("leduc_poker(suit_isomorphism=true)", leduc_poker(suit_isomorphism=True)),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_tree_is_openspiels_node_for_node(openspiel_spec, game):
    pyspiel = pytest.importorskip("pyspiel")
    _walk_with_openspiel(pyspiel.load_game(openspiel_spec), game.compile())


def test_kuhn_structure_and_payoffs():
    tree = kuhn_poker().compile()
    assert tree.infoset_keys[:4] == ["P0 card=J bets=-", "P0 card=Q bets=-", "P0 card=K bets=-",
                                     "P1 card=Q bets=p"]
    assert tree.infoset_actions(0) == ["pass", "bet"]
    deal_k_then_j = [("deal", 2), ("deal", 0)]
    assert tree.node_utility[_follow(tree, [*deal_k_then_j, "pass", "pass"])] == 1
    assert tree.node_utility[_follow(tree, [*deal_k_then_j, "pass", "bet", "pass"])] == -1
    assert tree.node_utility[_follow(tree, [*deal_k_then_j, "bet", "bet"])] == 2
    assert [kuhn_poker(5).card_structure.rank_name(r) for r in range(5)] == list("9TJQK")
    assert kuhn_poker(13).card_structure.rank_name(12) == "A"


def test_leduc_keys_labels_and_showdown():
    game = leduc_poker()
    assert game.outcome_names == ("Js", "Jh", "Qs", "Qh", "Ks", "Kh")  # OpenSpiel's card ids 0..5
    state = _play(game, ["Kh", "Js", "raise", "call", "Qs", "call", "raise"])
    assert game.current_player(state) == PLAYER0
    assert game.infoset_key(state) == "P0 card=Kh board=Qs bets=rc/cr"
    assert game.public_state_key(state) == "board=Qs bets=rc/cr"
    assert game.legal_actions(state) == ["fold", "call", "raise"]
    # 1 ante + 2 in round 1 + 4 in round 2 each; player 0's king beats the jack.
    assert game.terminal_utility(game.apply(state, "call")) == 7
    paired = _play(game, ["Kh", "Js", "call", "call", "Jh", "call", "call"])
    assert game.terminal_utility(paired) == -1
    tie = _play(game, ["Kh", "Ks", "call", "call", "Js", "call", "call"])
    assert game.terminal_utility(tie) == 0
    capped = _play(game, ["Kh", "Js", "raise", "raise"])
    assert game.legal_actions(capped) == ["fold", "call"]
    iso = leduc_poker(suit_isomorphism=True)
    assert [label for label, _ in iso.chance_outcomes(_play(iso, ["K"]))] == ["J", "Q", "K"]
    assert [p for _, p in iso.chance_outcomes(_play(iso, ["K"]))] == pytest.approx([0.4, 0.4, 0.2])


def test_generic_poker_follows_the_reference_rules():
    game = generic_poker(2, 2, 2)
    dealt = _play(game, ["J", "Q"])
    assert game.legal_actions(dealt) == ["bet2", "bet4", "check"]
    assert game.legal_actions(game.apply(dealt, "bet4")) == ["call", "raise2", "raise4", "fold"]
    two_raises = _play(game, ["J", "Q", "bet2", "raise4", "raise2"])
    assert game.legal_actions(two_raises) == ["call", "fold"]  # cap = 2 consecutive raises
    round2 = game.apply(game.apply(two_raises, "call"), "J")
    assert game.legal_actions(round2) == ["bet4", "bet8", "check"]
    assert game.infoset_key(round2) == "P0 card=J board=J bets=b2r4r2c/"
    # Round 1: 1 + 2 + 4 + 2 = 9 each (raises are increments); round 2: 8 more.
    final = _play(game, ["J", "Q", "bet2", "raise4", "raise2", "call", "J", "check", "bet8", "call"])
    assert game.current_player(final) == TERMINAL
    assert game.terminal_utility(final) == 17  # player 0 pairs the board
    folded = _play(game, ["J", "Q", "check", "bet4", "fold"])
    assert game.terminal_utility(folded) == -1
    probabilities = dict(game.chance_outcomes(_play(game, ["J"])))
    assert probabilities == pytest.approx({"T": 3 / 11, "J": 2 / 11, "Q": 3 / 11, "K": 3 / 11})
    assert game.current_player(_play(game, ["J", "Q", "check"])) == PLAYER1


def test_card_structure_describes_deck_and_showdown():
    tree = leduc_poker().compile()
    cards = tree.game.card_structure
    assert (cards.num_ranks, cards.num_suits, cards.num_cards) == (3, 2, 6)
    assert cards.private_cards_per_player == 1 and cards.public_cards_per_round == (0, 1)
    assert [cards.rank_of(card) for card in range(6)] == [0, 0, 1, 1, 2, 2]
    # Cards Ks (4) and Js (0); a Qh (3) board pairs nobody, a Jh (1) board pairs the jack.
    assert cards.showdown((4,), (0,), (3,)) == 1
    assert cards.showdown((4,), (0,), (1,)) == -1
    assert cards.showdown((2,), (3,), (0,)) == 0
    assert generic_poker().card_structure == CardStructure(4, 3, 1, (0, 1))


def test_registry_specs_aliases_and_bounds():
    assert canonical_spec("P224") == "poker(bets=2,raises=2,cap=4)"
    assert canonical_spec("leduc(suit_isomorphism=true)") == "leduc(suit_isomorphism=true)"
    assert canonical_spec("kuhn(cards=3)") == "kuhn"
    assert load_game("P111").num_infosets == 504
    assert load_game("kuhn(cards=5)").num_infosets == 20
    for bad in ["kuhn(cards=2)", "poker(bets=0)", "poker(cap=0)", "poker(raises=9)"]:
        with pytest.raises(GameSpecError):
            load_game(bad)
    with pytest.raises(GameSpecError):
        generic_poker(cap=0)


def test_node_limit_is_checked_before_building():
    with pytest.raises(TreeTooLargeError):
        generic_poker(2, 2, 2).compile(node_limit=100_000)
    with pytest.raises(TreeTooLargeError):
        generic_poker(4, 4, 6).compile()
    with pytest.raises(TreeTooLargeError):
        build_tree(generic_poker(2, 2, 2), node_limit=100_000)


def test_player_order_each_round_starts_with_player_0():
    game = leduc_poker()
    round2 = _play(game, ["Ks", "Qs", "call", "raise", "call", "Js"])
    assert game.current_player(round2) == PLAYER0
    assert game.current_player(game.apply(round2, "call")) == PLAYER1
