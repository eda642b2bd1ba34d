"""II-Goofspiel GSx: sizes from Čermák et al. (seed_cermak.md §4.3.4), rules, fast builder."""

import pytest

from efgkit.errors import GameSpecError, TreeTooLargeError
from efgkit.games import build_tree
from efgkit.games.goofspiel import Goofspiel, num_nodes
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.specs import canonical_spec, load_game


def _follow(tree, labels):
    """The node reached from the root by the given action labels (chance nodes are skipped)."""
    node = 0
    labels = list(labels)
    while True:
        if tree.node_kind[node] == CHANCE:
            node = int(tree.node_first_child[node])
            continue
        if not labels or tree.node_kind[node] == TERMINAL:
            return node
        actions = tree.infoset_actions(int(tree.node_infoset[node]))
        node = int(tree.node_first_child[node]) + actions.index(labels.pop(0))


@pytest.mark.parametrize(
    ("cards", "nodes", "terminals", "infosets_per_player"),
    [
        (3, 185, 36, 36),
        (4, 2_966, 576, 369),
        (5, 74_157, 14_400, 4_974),
        (6, 2_669_660, 518_400, 83_001),
    ],
)
def test_sizes_match_the_paper_domains(cards, nodes, terminals, infosets_per_player):
    sizes = Goofspiel(cards).compile().sizes()
    assert sizes["histories"] == nodes == num_nodes(cards)
    assert sizes["terminal_nodes"] == terminals
    assert sizes["infosets_player0"] == sizes["infosets_player1"] == infosets_per_player


def test_gs3_infosets_per_level_match_section_5_7():
    # Sec. 5.7: 2 infosets at the first level, 14 at the second, 56 at the last (72 in all).
    tree = Goofspiel(3).compile()
    bids = [key.split()[1].removeprefix("bids=") for key in tree.infoset_keys]
    rounds = [0 if text == "-" else len(text.split(",")) for text in bids]
    assert [rounds.count(r) for r in range(3)] == [2, 14, 56]


@pytest.mark.parametrize("cards", [1, 2, 3, 4, 5])
def test_fast_compile_equals_generic_builder(cards):
    game = Goofspiel(cards)
    fast, reference = game.compile(), build_tree(game)
    assert fast.fingerprint == reference.fingerprint
    assert fast.public_state_keys == reference.public_state_keys


def test_round_structure_reveal_then_bids_then_forced_last_card():
    tree = Goofspiel(3).compile()
    assert tree.node_kind[0] == CHANCE and tree.node_num_children[0] == 1
    assert tree.infoset_keys[:2] == ["P0 bids=- outcomes=-", "P1 bids=- outcomes=-"]
    assert tree.infoset_actions(0) == ["1", "2", "3"]
    last_p1 = _follow(tree, ["3", "1", "1", "3", "2"])
    assert tree.node_kind[last_p1] == PLAYER1
    assert tree.infoset_keys[tree.node_infoset[last_p1]] == "P1 bids=1,3 outcomes=LW"
    assert tree.infoset_actions(int(tree.node_infoset[last_p1])) == ["2"]
    assert tree.has_perfect_recall


def test_utility_is_point_difference_with_ties_to_nobody():
    # Middle cards 3, 2, 1. Player 0 wins 3, the 2 is tied, player 1 wins 1: 3 - 1 = 2.
    game = Goofspiel(3)
    tree = game.compile()
    history = ["3", "1", "2", "2", "1", "3"]
    terminal = _follow(tree, history)
    assert tree.node_kind[terminal] == TERMINAL
    assert tree.node_utility[terminal] == 2.0
    state = game.initial_state()
    for label in ["3", *history[:2], "2", *history[2:4], "1", *history[4:]]:
        state = game.apply(state, label)
    assert game.current_player(state) == TERMINAL
    assert game.terminal_utility(state) == 2.0
    assert game.public_state_key(state) == (3, "WTL")


def test_players_see_only_win_lose_tie():
    tree = Goofspiel(4).compile()

    def infoset(labels):
        return tree.infoset_keys[tree.node_infoset[_follow(tree, labels)]]

    # Player 0 bid 3 and won either way: player 1's bid (1 or 2) is hidden.
    assert infoset(["3", "1"]) == infoset(["3", "2"]) == "P0 bids=3 outcomes=W"
    # Player 1 does not see player 0's current bid.
    assert infoset(["1"]) == infoset(["4"]) == "P1 bids=- outcomes=-"
    # Outcomes are written from the owner's point of view.
    assert infoset(["3", "2", "1"]) == "P1 bids=2 outcomes=L"
    assert infoset(["3", "3"]) != infoset(["3", "4"])


def test_public_state_is_round_and_outcomes():
    tree = Goofspiel(3).compile()
    node = _follow(tree, ["2", "3"])
    reveal = int(tree.node_parent[node])
    after_bid = _follow(tree, ["2", "3", "1"])
    for same_round in (reveal, node, after_bid):
        assert tree.public_state_keys[tree.node_public_state[same_round]] == "(1, 'L')"
    assert tree.node_kind[reveal] == CHANCE and tree.node_kind[node] == PLAYER0


@pytest.mark.parametrize("cards", [0, 9])
def test_cards_out_of_range_is_a_spec_error(cards):
    with pytest.raises(GameSpecError, match="cards"):
        Goofspiel(cards)
    with pytest.raises(GameSpecError, match="cards"):
        load_game(f"goofspiel(cards={cards})")


def test_registry_aliases_and_canonical_specs():
    assert canonical_spec("GS5") == "goofspiel(cards=5)"
    assert canonical_spec("goofspiel(cards=4)") == "goofspiel"
    assert load_game("GS3").sizes()["infosets"] == 72
    assert load_game("GS6", node_limit=3_000_000).spec == "goofspiel(cards=6)"


def test_node_limit_stops_large_instances_before_building():
    with pytest.raises(TreeTooLargeError, match="130,813,349"):
        Goofspiel(7).compile()
    with pytest.raises(TreeTooLargeError):
        Goofspiel(4).compile(node_limit=2_965)
    with pytest.raises(TreeTooLargeError):
        build_tree(Goofspiel(4), node_limit=2_965)
    assert Goofspiel(4).compile(node_limit=2_966).num_nodes == 2_966


@pytest.mark.parametrize("cards", [3, 4])
def test_same_game_as_openspiel_imp_info_goofspiel(cards):
    """OpenSpiel's turn-based II-Goofspiel (descending) is our game minus the forced last round.

    Every OpenSpiel decision state maps to our node with the same bids; the infosets must
    correspond one to one, and terminal returns are our point difference halved.
    GS4 anchors: 162 infosets, 501 decision and 576 terminal states (OpenSpiel api_test).
    """
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = pyspiel.load_game_as_turn_based(
        "goofspiel",
        {"imp_info": True, "points_order": "descending", "num_cards": cards,
         "returns_type": "point_difference"},
    )
    tree = Goofspiel(cards).compile()
    ours_of_theirs: dict[tuple[int, str], int] = {}
    theirs_of_ours: dict[int, tuple[int, str]] = {}
    decisions = terminals = 0
    stack = [spiel_game.new_initial_state()]
    while stack:
        state = stack.pop()
        node = _follow(tree, [str(action + 1) for action in state.history()])
        if state.is_terminal():
            terminals += 1
            while tree.node_kind[node] != TERMINAL:  # play our forced last round
                node = int(tree.node_first_child[node])
            assert tree.node_utility[node] == pytest.approx(2 * state.returns()[0])
            continue
        decisions += 1
        player = state.current_player()
        assert tree.node_kind[node] == (PLAYER0 if player == 0 else PLAYER1)
        theirs = (player, state.information_state_string())
        ours = int(tree.node_infoset[node])
        assert ours_of_theirs.setdefault(theirs, ours) == ours
        assert theirs_of_ours.setdefault(ours, theirs) == theirs
        stack.extend(state.child(action) for action in state.legal_actions())

    multi_action = tree.infoset_num_actions > 1
    decision_nodes = tree.node_kind < 2
    assert len(ours_of_theirs) == int(multi_action.sum())
    assert decisions == int((tree.node_num_children[decision_nodes] > 1).sum())
    assert terminals == tree.sizes()["terminal_nodes"]
    if cards == 4:
        assert (len(ours_of_theirs), decisions, terminals) == (162, 501, 576)
