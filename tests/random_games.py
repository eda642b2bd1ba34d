"""Random small perfect-recall games for property tests.

Every decision is a deterministic function of (seed, history), so a seed names a game.
A player's infoset key is its whole view of the history: its own actions, plus a
possibly coarsened signal of each chance outcome and opponent action, or nothing at all
for events it does not notice. Keys therefore give perfect recall by construction, and
infosets can span histories of different lengths.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import strategies as st

from efgkit.games.builder import build_tree
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap


class RandomGame:
    def __init__(self, seed: int, max_depth: int = 5) -> None:
        self.seed = seed
        self.max_depth = max_depth
        self.spec = f"random(seed={seed})"

    def _rng(self, *parts: object) -> random.Random:
        return random.Random(f"{self.seed}:" + ":".join(map(str, parts)))

    def initial_state(self) -> tuple:
        return ()

    def current_player(self, history: tuple) -> int:
        depth = len(history)
        rng = self._rng("kind", history)
        if depth >= self.max_depth or (depth >= 2 and rng.random() < 0.2):
            return TERMINAL
        return rng.choice((CHANCE, PLAYER0, PLAYER1, PLAYER0, PLAYER1))

    def _view(self, history: tuple, player: int) -> tuple:
        view = []
        for actor, action in history:
            if actor == player:
                view.append(("own", action))
                continue
            # Whether (and how finely) the player notices this event depends on the event's
            # position in its own view only, so the view determines the notice pattern.
            rng = self._rng("notice", player, tuple(view), actor)
            mode = rng.random()
            if mode < 0.25:
                continue
            view.append((actor, action if mode < 0.6 else str(action).startswith("a0")))
        return tuple(view)

    def infoset_key(self, history: tuple) -> str:
        player = self.current_player(history)
        return f"P{player}|{self._view(history, player)}"

    def legal_actions(self, history: tuple) -> list[str]:
        count = 1 + self._rng("actions", self.infoset_key(history)).randrange(3)
        return [f"a{k}" for k in range(count)]

    def chance_outcomes(self, history: tuple) -> list[tuple[str, float]]:
        rng = self._rng("chance", history)
        weights = [rng.randint(1, 4) for _ in range(rng.randint(2, 3))]
        return [(f"c{k}", w / sum(weights)) for k, w in enumerate(weights)]

    def apply(self, history: tuple, action: str) -> tuple:
        return history + ((self.current_player(history), action),)

    def terminal_utility(self, history: tuple) -> float:
        return float(self._rng("utility", history).randint(-4, 4))

    def public_state_key(self, history: tuple) -> int:
        return len(history)


def random_tree(seed: int, max_depth: int = 5) -> GameTree:
    return build_tree(RandomGame(seed, max_depth))


def random_trees(max_depth: int = 5) -> st.SearchStrategy[GameTree]:
    """Random games as a hypothesis strategy whose structure shrinks: a failing example
    shrinks to the shallowest game (``max_depth`` 1) that still fails, then to a small seed."""
    return st.builds(random_tree, st.integers(0, 100_000), st.integers(1, max_depth))


def random_behavior(tree: GameTree, rng: np.random.Generator, pure: bool = False) -> np.ndarray:
    """One probability per original infoset-action: random mixed or random pure."""
    behavior = np.zeros(tree.num_infoset_actions)
    for infoset in range(tree.num_infosets):
        lo, hi = tree.infoset_action_offset[infoset], tree.infoset_action_offset[infoset + 1]
        if pure:
            behavior[lo + rng.integers(hi - lo)] = 1.0
        else:
            weights = rng.random(hi - lo) + 1e-3
            behavior[lo:hi] = weights / weights.sum()
    return behavior


def random_partition(tree: GameTree, rng: np.random.Generator) -> InfosetMap:
    """A random abstraction: infosets of equal (player, #actions) merged at random."""
    labels = np.empty(tree.num_infosets, dtype=np.int64)
    for infoset in range(tree.num_infosets):
        group = rng.integers(3)
        labels[infoset] = (int(tree.infoset_player[infoset]) * 10
                           + int(tree.infoset_num_actions[infoset])) * 10 + group
    return InfosetMap(tree, labels)
