"""Random small games with public-state structure, for re-solving property tests.

Chance deals each player a private type (2 or 3, random probabilities); then a random
public tree follows: at each public node player 0, player 1 or chance acts with 1-3
actions that both players observe, until a random terminal, whose payoff depends on both
types and the public history. A player's infoset is (own type, public history), so the
game has perfect recall and every public history after the deal roots a subgame.
"""

from __future__ import annotations

import random

from efgkit.games.builder import build_tree
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.games.tree import GameTree


class RandomPublicGame:
    def __init__(self, seed: int, max_depth: int = 3) -> None:
        self.seed = seed
        self.max_depth = max_depth
        self.spec = f"random_public(seed={seed})"

    def _rng(self, *parts: object) -> random.Random:
        return random.Random(f"{self.seed}:" + ":".join(map(str, parts)))

    def initial_state(self) -> tuple:
        return ((), ())

    def _num_types(self, player: int) -> int:
        return 2 + self._rng("types", player).randrange(2)

    def current_player(self, state: tuple) -> int:
        types, public = state
        if len(types) < 2:
            return CHANCE
        rng = self._rng("kind", public)
        if len(public) >= self.max_depth or (public and rng.random() < 0.25):
            return TERMINAL
        return rng.choice((PLAYER0, PLAYER1, PLAYER0, PLAYER1, CHANCE))

    def legal_actions(self, state: tuple) -> list[str]:
        count = 1 + self._rng("actions", state[1]).randrange(3)
        return [f"a{k}" for k in range(count)]

    def chance_outcomes(self, state: tuple) -> list[tuple[str, float]]:
        types, public = state
        if len(types) < 2:
            rng = self._rng("deal", len(types))
            weights = [rng.randint(1, 4) for _ in range(self._num_types(len(types)))]
        else:
            rng = self._rng("chance", public)
            weights = [rng.randint(1, 4) for _ in range(rng.randint(2, 3))]
        return [(f"c{k}", w / sum(weights)) for k, w in enumerate(weights)]

    def apply(self, state: tuple, action: str) -> tuple:
        types, public = state
        if len(types) < 2:
            return (types + (action,), public)
        return (types, public + (action,))

    def terminal_utility(self, state: tuple) -> float:
        return float(self._rng("utility", state).randint(-4, 4))

    def infoset_key(self, state: tuple) -> str:
        player = self.current_player(state)
        return f"P{player} type={state[0][player]} public={'.'.join(state[1])}"

    def public_state_key(self, state: tuple) -> str:
        types, public = state
        return f"deal {len(types)}" if len(types) < 2 else "public=" + ".".join(public)


def random_public_tree(seed: int, max_depth: int = 3) -> GameTree:
    return build_tree(RandomPublicGame(seed, max_depth))


def first_public_subgames(tree: GameTree) -> list:
    """The subgames at the public states right after the first public action (none terminal)."""
    from efgkit.resolve import SubgameError, subgame_at

    subgames = []
    for key in tree.public_state_keys:
        if key.startswith("public=") and key != "public=" and "." not in key:
            try:
                subgames.append(subgame_at(tree, key))
            except SubgameError:  # a terminal public state
                continue
    return subgames
