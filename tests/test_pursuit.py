"""Graph Pursuit GPx (Čermák et al., Sec. 5.3.3): rules, sizes and the fast builder."""

import numpy as np
import pytest

from efgkit.errors import GameSpecError, TreeTooLargeError
from efgkit.games.builder import build_tree
from efgkit.games.protocol import PLAYER0, PLAYER1, TERMINAL
from efgkit.games.pursuit import (
    CAPTURE_UTILITY,
    GOAL_UTILITY,
    PURSUIT,
    GraphPursuit,
    _attacker_sees,
    node_counts,
    num_nodes,
)
from efgkit.games.pursuit_board import REFERENCE_TIMEOUT_UTILITY, TIMEOUT_UTILITY

# seed_cermak.md §4.3.4 [COMPUTED]: nodes, terminals, infosets of player 0 and player 1.
DIGEST_SIZES = {5: (101_989, 80_363, 3_698, 5_610), 6: (800_129, 580_377, 36_292, 67_706)}


def play(moves: int, actions: list[str]):
    game = GraphPursuit(moves)
    state = game.initial_state()
    for action in actions:
        state = game.apply(state, action)
    return game, state


@pytest.mark.parametrize("moves", [5, 6])
def test_sizes_match_the_cermak_digest_exactly(moves):
    tree = GraphPursuit(moves).compile()
    sizes = tree.sizes()
    nodes, terminals, infosets0, infosets1 = DIGEST_SIZES[moves]
    assert sizes["histories"] == nodes == num_nodes(moves)
    assert sizes["terminal_nodes"] == terminals == node_counts(moves)[2]
    assert sizes["infosets_player0"] == infosets0
    assert sizes["infosets_player1"] == infosets1
    assert sizes["chance_nodes"] == 0
    assert tree.has_perfect_recall


@pytest.mark.parametrize("moves, coarsest", [(5, 19), (6, 23)])
def test_coarsest_abstraction_has_the_digest_size(moves, coarsest):
    tree = GraphPursuit(moves).compile()
    classes = set(zip(tree.infoset_player.tolist(), tree.infoset_sequence_length.tolist(),
                      tree.infoset_num_actions.tolist(), strict=True))
    assert len(classes) == coarsest


@pytest.mark.parametrize("moves", [1, 2, 3, 5])
def test_fast_compile_equals_build_tree(moves):
    game = GraphPursuit(moves)
    fast = game.compile()
    reference = build_tree(game)
    assert fast.fingerprint == reference.fingerprint
    assert fast.public_state_keys == reference.public_state_keys


def test_one_round_game_is_all_ties():
    tree = GraphPursuit(1).compile()
    assert tree.num_nodes == 11
    assert tree.infoset_keys == ["P0 units{}", "P1 attacker{}"]
    assert tree.infoset_actions(0) == ["0->1", "0->4"]
    assert tree.infoset_actions(1) == ["7->3,13->9", "7->3,13->12", "7->6,13->9", "7->6,13->12"]
    assert np.all(tree.node_utility == 0.0)


def test_public_state_is_the_number_of_completed_rounds():
    tree = GraphPursuit(3).compile()
    assert tree.public_state_keys == ["0", "1", "2", "3"]
    # Round r's decisions sit at depths 2r and 2r + 1; its terminals at depth 2r + 2.
    completed = (tree.node_depth + (tree.node_kind == TERMINAL)) // 2
    assert np.array_equal(tree.node_public_state, completed)


def test_utilities_are_the_papers_goal_capture_and_timeout_values():
    tree = GraphPursuit(5).compile()
    values = set(tree.node_utility[tree.node_kind == TERMINAL].tolist())
    assert values == {GOAL_UTILITY, CAPTURE_UTILITY, TIMEOUT_UTILITY} == {2.0, -1.0, 0.0}


@pytest.mark.parametrize("moves, captures_on_goal", [(2, 0), (3, 0), (4, 180)])
def test_reference_payoffs_pay_one_on_timeout_two_for_a_capture_on_goal_and_keep_the_tree(
        moves, captures_on_goal):
    paper = GraphPursuit(moves).compile()
    reference = GraphPursuit(moves, "reference").compile()
    assert REFERENCE_TIMEOUT_UTILITY == 1.0
    timeout = (paper.node_kind == TERMINAL) & (paper.node_utility == TIMEOUT_UTILITY)
    assert timeout.any()
    assert np.array_equal(reference.node_kind, paper.node_kind)
    assert np.all(reference.node_utility[timeout] == 1.0)
    on_goal = (paper.node_utility == CAPTURE_UTILITY) & (reference.node_utility == GOAL_UTILITY)
    assert int(on_goal.sum()) == captures_on_goal
    same = ~timeout & ~on_goal
    assert np.array_equal(reference.node_utility[same], paper.node_utility[same])
    slow = build_tree(GraphPursuit(moves, "reference"))
    assert np.array_equal(slow.node_utility, reference.node_utility)


def test_a_capture_on_the_goal_pays_two_only_under_the_reference_payoffs():
    # Unit 2 steps onto the goal as the attacker does: the reference code tests the goal first.
    actions = ["0->1", "7->3,13->9", "1->2", "3->7,9->8", "2->6", "7->3,8->9", "6->10", "3->2,9->10"]
    game, state = play(4, actions)
    assert game.current_player(state) == TERMINAL and state.attacker == 10 == state.unit2
    assert game.terminal_utility(state) == CAPTURE_UTILITY
    reference = GraphPursuit(4, "reference")
    state = reference.initial_state()
    for action in actions:
        state = reference.apply(state, action)
    assert reference.terminal_utility(state) == GOAL_UTILITY


def test_infoset_keys_hold_each_players_remembered_observations():
    game, state = play(5, ["0->1", "7->3,13->9", "1->2", "3->7,9->10"])
    assert game.current_player(state) == PLAYER0
    assert game.infoset_key(state) == "P0 units{} 0->1 units{3,9} 1->2 units{7,10}"
    state = game.apply(state, "2->1")
    assert game.current_player(state) == PLAYER1
    assert game.infoset_key(state) == "P1 attacker{} 7->3,13->9 attacker{1} 3->7,9->10 attacker{2}"
    assert game.public_state_key(state) == 2


def test_attacker_sees_unit_nodes_in_unit_order_without_their_names():
    assert _attacker_sees(1, 3, 13) == _attacker_sees(1, 13, 3) == (3,)
    assert _attacker_sees(2, 10, 7) == (10, 7)
    assert _attacker_sees(0, 7, 13) == ()  # both units 4 directed steps away


def test_capture_on_a_node_ends_the_game():
    game, state = play(5, ["0->4", "7->3,13->12", "4->8", "3->2,12->8"])
    assert game.current_player(state) == TERMINAL
    assert game.terminal_utility(state) == CAPTURE_UTILITY
    assert game.public_state_key(state) == 2


def test_capture_by_swapping_across_an_edge():
    actions = ["0->1", "7->3,13->9", "1->2", "3->7,9->10", "2->1", "7->3,10->7", "1->2",
               "3->7,7->3", "2->3", "7->6,3->2"]
    game, state = play(5, actions)
    assert game.current_player(state) == TERMINAL
    assert state.unit1 != 3 and state.unit2 != 3
    assert game.terminal_utility(state) == CAPTURE_UTILITY


def test_stepping_onto_the_goal_into_a_unit_is_a_capture():
    actions = ["0->1", "7->3,13->9", "1->2", "3->7,9->8", "2->6", "7->3,8->9", "6->10",
               "3->2,9->10"]
    game, state = play(5, actions)
    assert game.current_player(state) == TERMINAL
    assert game.terminal_utility(state) == CAPTURE_UTILITY


def test_the_goal_pays_only_if_the_attacker_is_on_it_at_the_end():
    caught_later = ["0->1", "7->3,13->9", "1->5", "3->2,9->8", "5->10", "2->3,8->4", "10->7",
                    "3->7,4->5"]
    game, state = play(5, caught_later)
    assert game.current_player(state) == TERMINAL and state.rounds_done == 4
    assert game.terminal_utility(state) == CAPTURE_UTILITY
    left_goal = ["0->1", "7->3,13->9", "1->2", "3->7,9->8", "2->6", "7->3,8->4", "6->10",
                 "3->2,4->5", "10->7", "2->1,5->1"]
    game, state = play(5, left_goal)
    assert game.current_player(state) == TERMINAL and state.attacker == 7
    assert game.terminal_utility(state) == TIMEOUT_UTILITY
    on_goal_at_the_end = ["0->1", "7->3,13->9", "1->5", "3->2,9->8", "5->10", "2->3,8->4"]
    game, state = play(3, on_goal_at_the_end)
    assert game.current_player(state) == TERMINAL and state.attacker == 10
    assert game.terminal_utility(state) == GOAL_UTILITY


def test_move_limit_without_goal_or_capture_is_a_tie():
    game, state = play(2, ["0->1", "7->3,13->9", "1->2", "3->7,9->8"])
    assert game.current_player(state) == TERMINAL
    assert game.terminal_utility(state) == TIMEOUT_UTILITY


def test_illegal_action_is_rejected():
    game = GraphPursuit(2)
    with pytest.raises(ValueError, match="not a legal attacker move"):
        game.apply(game.initial_state(), "0->2")
    state = game.apply(game.initial_state(), "0->1")
    assert game.current_player(state) == PLAYER1
    with pytest.raises(ValueError, match="not a legal defender move"):
        game.apply(state, "7->3")


def test_spec_and_parameter_checks():
    assert GraphPursuit(5).spec == "pursuit(moves=5)"
    assert GraphPursuit().spec == "pursuit"
    assert PURSUIT.canonical_spec({"moves": 6, "payoffs": "paper"}) == "pursuit(moves=6)"
    assert GraphPursuit(5, "reference").spec == "pursuit(moves=5,payoffs=reference)"
    with pytest.raises(GameSpecError):
        GraphPursuit(0)
    with pytest.raises(GameSpecError, match="payoffs"):
        GraphPursuit(5, "code")


def test_aliases_resolve_to_pursuit():
    pytest.importorskip("efgkit.games.poker", reason="the registry imports every game module")
    from efgkit.specs import make_game

    assert make_game("GP5").spec == "pursuit(moves=5)"
    assert make_game("GP6").spec == "pursuit(moves=6)"
    with pytest.raises(GameSpecError):
        make_game("pursuit(moves=0)")


def test_node_limit_is_checked_before_building():
    with pytest.raises(TreeTooLargeError):
        GraphPursuit(4).compile(node_limit=8_966)
    assert GraphPursuit(4).compile(node_limit=8_967).num_nodes == 8_967


def test_an_absurd_number_of_moves_is_refused_before_any_counting(runner):
    from efgkit.cli import main

    result = runner.invoke(main, ["info", "pursuit(moves=1000)"])
    assert result.exit_code == 2 and "must be at most 12" in result.stderr
