"""Games: rules (the Game protocol), compilation into GameTrees, and the game families.

Loading a game by spec (``load_game("leduc")``) is ``efgkit.specs``, one floor above.
"""

from efgkit.games.builder import build_tree, tree_from_preorder
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL, Game
from efgkit.games.tree import GameTree

__all__ = [
    "CHANCE", "PLAYER0", "PLAYER1", "TERMINAL", "Game", "GameTree", "build_tree", "tree_from_preorder",
]
