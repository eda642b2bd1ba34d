"""The Game protocol: the small interface any game implements to be compiled into a GameTree.

States are opaque immutable values owned by the game (tuples are a good choice). The
builder calls the methods below; nothing else about a game is assumed. Player 0 moves
first by convention only when the game says so. Utilities are player 0's; the game is
zero-sum, so player 1 receives the negation.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

PLAYER0 = 0
PLAYER1 = 1
CHANCE = 2
TERMINAL = 3

KIND_NAMES = ("player0", "player1", "chance", "terminal")


@runtime_checkable
class Game(Protocol):
    """Rules of a two-player zero-sum extensive-form game.

    ``current_player`` returns PLAYER0, PLAYER1, CHANCE or TERMINAL. At a player's state
    ``legal_actions`` gives the action labels in a fixed order (this order is the action
    index used everywhere else, and the order the coarsest abstraction maps by). At a
    chance state ``chance_outcomes`` gives (label, probability) pairs summing to 1.
    ``apply`` takes a label from either list. ``infoset_key`` must be equal for exactly
    the states the acting player cannot tell apart, and must differ between players.
    ``public_state_key`` identifies what both players observe (used for subgames).
    """

    spec: str

    def initial_state(self) -> Any: ...

    def current_player(self, state: Any) -> int: ...

    def legal_actions(self, state: Any) -> Sequence[str]: ...

    def chance_outcomes(self, state: Any) -> Sequence[tuple[str, float]]: ...

    def apply(self, state: Any, action: str) -> Any: ...

    def terminal_utility(self, state: Any) -> float: ...

    def infoset_key(self, state: Any) -> str: ...

    def public_state_key(self, state: Any) -> Hashable: ...
