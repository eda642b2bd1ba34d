"""Coin Toss: Brown & Sandholm's running example for subgame solving (NIPS 2017 / arXiv
1705.02955, §2 and Figure 1).

A fair coin is flipped and only player 0 (their P1) sees it. Player 0 then chooses

* ``sell``: the game ends; player 0 gets +0.5 with Heads and -0.5 with Tails (the paper's
  separate "Sell" subgame, collapsed to its expected value), or
* ``play``: player 1 (their P2), without seeing the coin, guesses ``heads``, ``tails`` or
  ``forfeit``. A correct guess pays player 0 -1, a wrong guess +1, and ``forfeit`` pays
  player 0 +1 whatever the coin (a dominated action).

The equilibrium has player 1 guess heads 1/4, tails 3/4 after ``play``, player 0 indifferent
and value 0 (seed_brown.md, checkable claims 1-6). The public states are ``coin`` (player 0
to act; the coin itself is private), ``sold`` and ``played``: the Play subgame is the public
state ``played``.
"""

from __future__ import annotations

from efgkit.games.parameters import GameEntry
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL

SELL_VALUE = 0.5
GUESS_VALUE = 1.0
PLAYER0_ACTIONS = ("sell", "play")
PLAYER1_ACTIONS = ("heads", "tails", "forfeit")


class CoinToss:
    """Rules of Coin Toss; states are tuples of labels (coin, player 0's move, guess)."""

    spec = "coin_toss"

    def initial_state(self) -> tuple:
        return ()

    def current_player(self, state: tuple) -> int:
        if not state:
            return CHANCE
        if len(state) == 1:
            return PLAYER0
        if state[1] == "sell" or len(state) == 3:
            return TERMINAL
        return PLAYER1

    def legal_actions(self, state: tuple) -> list[str]:
        return list(PLAYER0_ACTIONS if len(state) == 1 else PLAYER1_ACTIONS)

    def chance_outcomes(self, state: tuple) -> list[tuple[str, float]]:
        return [("heads", 0.5), ("tails", 0.5)]

    def apply(self, state: tuple, action: str) -> tuple:
        return (*state, action)

    def terminal_utility(self, state: tuple) -> float:
        coin = state[0]
        if state[1] == "sell":
            return SELL_VALUE if coin == "heads" else -SELL_VALUE
        guess = state[2]
        if guess == "forfeit":
            return GUESS_VALUE
        return -GUESS_VALUE if guess == coin else GUESS_VALUE

    def infoset_key(self, state: tuple) -> str:
        if len(state) == 1:
            return f"P0 coin={state[0]}"
        return "P1 played"

    def public_state_key(self, state: tuple) -> str:
        if not state:
            return "toss"
        if len(state) == 1:
            return "coin"
        return "sold" if state[1] == "sell" else "played"


COIN_TOSS = GameEntry(
    name="coin_toss",
    summary=(
        "Brown & Sandholm's Coin Toss (safe subgame solving, §2): player 0 sees a coin and "
        "sells (+-0.5) or plays; player 1 guesses the coin blind"
    ),
    parameters=(),
    factory=CoinToss,
)

ENTRIES = (COIN_TOSS,)
