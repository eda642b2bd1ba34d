"""Games: rules (the Game protocol), compilation into GameTrees, and the spec registry."""

from efgkit.games.builder import build_tree, tree_from_preorder
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL, Game
from efgkit.games.registry import ALIASES, canonical_spec, load_game, make_game, registered_games
from efgkit.games.tree import GameTree

__all__ = [
    "ALIASES", "CHANCE", "PLAYER0", "PLAYER1", "TERMINAL", "Game", "GameTree", "build_tree",
    "canonical_spec", "load_game", "make_game", "registered_games", "tree_from_preorder",
]
