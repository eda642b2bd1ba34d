"""GameTree structure, the generic builder's checks, persistence and the node limit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_games import RandomGame, random_tree, random_trees

from efgkit.errors import FileFormatError, GameDefinitionError, TreeTooLargeError
from efgkit.games.builder import build_tree
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_random_trees_are_breadth_first_with_contiguous_children(seed):
    tree = random_tree(seed)
    tree.validate()
    parent = tree.node_parent
    assert parent[0] == -1
    assert np.all(parent[1:] < np.arange(1, tree.num_nodes))
    assert np.all(np.diff(tree.node_depth) >= 0)
    assert tree.has_perfect_recall


@settings(max_examples=30, deadline=None)
@given(random_trees())
def test_max_depth_walks_up_from_the_last_node_to_the_deepest_depth(tree):
    assert tree.max_depth == int(tree.node_depth.max())
    assert tree.sizes()["max_depth"] == tree.max_depth


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_sizes_add_up(seed):
    tree = random_tree(seed)
    sizes = tree.sizes()
    assert sizes["histories"] == (sizes["decision_nodes"] + sizes["chance_nodes"]
                                  + sizes["terminal_nodes"])
    assert sizes["infosets"] == sizes["infosets_player0"] + sizes["infosets_player1"]
    assert sizes["bytes_per_node"] <= 32


def test_save_load_round_trip_keeps_fingerprint(tmp_path):
    tree = random_tree(7)
    path = tmp_path / "tree.npz"
    tree.save(path)
    loaded = GameTree.load(path, expected_spec=tree.spec)
    assert loaded.fingerprint == tree.fingerprint
    assert loaded.infoset_keys == tree.infoset_keys


def test_corrupted_tree_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "tree.npz"
    random_tree(3).save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(FileFormatError):
        GameTree.load(path)
    assert path.read_bytes() == before


def test_tree_file_for_another_game_is_refused(tmp_path):
    path = tmp_path / "tree.npz"
    random_tree(3).save(path)
    with pytest.raises(FileFormatError, match="is for game"):
        GameTree.load(path, expected_spec="leduc")


def test_garbage_tree_file_is_refused(tmp_path):
    path = tmp_path / "tree.npz"
    path.write_bytes(b"not a tree")
    with pytest.raises(FileFormatError):
        GameTree.load(path)


def test_node_limit_stops_the_build_early():
    with pytest.raises(TreeTooLargeError, match="node limit"):
        build_tree(RandomGame(1, max_depth=6), node_limit=20)


class _BadChance(RandomGame):
    def chance_outcomes(self, history):
        return [("x", 0.5), ("y", 0.6)]


def test_chance_probabilities_must_sum_to_one():
    game = _BadChance(11)
    seeds = [s for s in range(50) if RandomGame(s).current_player(()) == CHANCE]
    game.seed = seeds[0]
    with pytest.raises(GameDefinitionError, match="do not sum to 1"):
        build_tree(game)


class _InconsistentInfoset(RandomGame):
    def infoset_key(self, history):
        return f"P{self.current_player(history)}"  # one infoset per player: actions differ

    def legal_actions(self, history):
        return [f"a{k}" for k in range(1 + len(history) % 2)]


def test_infoset_with_different_actions_is_rejected():
    with pytest.raises(GameDefinitionError, match="different players or actions"):
        for seed in range(30):
            build_tree(_InconsistentInfoset(seed))


def test_terminal_nodes_have_no_children_and_utilities_only_there():
    tree = random_tree(5)
    terminal = tree.node_kind == TERMINAL
    assert np.all(tree.node_num_children[terminal] == 0)
    assert np.all(tree.node_utility[~terminal] == 0)


def test_the_node_limit_follows_the_memory_budget(monkeypatch):
    from efgkit.games.builder import BUILD_BYTES_PER_NODE, node_limit_from_env

    monkeypatch.delenv("EFGKIT_NODE_LIMIT", raising=False)
    monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", "1GiB")
    assert node_limit_from_env() == 2**30 // BUILD_BYTES_PER_NODE
    monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", "100KiB")
    from efgkit.specs import load_game

    with pytest.raises(TreeTooLargeError, match=r"memory budget of about 99.9 KiB, about 1.35 MiB to build"):
        load_game("leduc")
