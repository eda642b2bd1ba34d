"""Play hands of a compiled game between policies: a compact strategy, uniform random, a person.

A hand walks the GameTree from the root: a chance node draws a child with its
probability, a decision node asks its player's policy for an action given the infoset
key (what that player knows) and the action labels, a terminal node pays. ``play_match``
plays many hands with the seats alternating and reports the mean payoff with its
confidence interval; ``expected_payoff`` gives the exact value the mean estimates, from
one bottom-up pass per seating.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from efgkit.errors import StrategyError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import class_of
from efgkit.solvers.traversal import ProfileLayout

Z_95 = 1.959963984540054


class Policy(Protocol):
    """Chooses an action index at an infoset, given its key and action labels."""

    def action(self, key: str, labels: list[str], rng: random.Random) -> int: ...

    def behavior(self, tree: GameTree) -> np.ndarray:
        """float64 probability per original infoset-action of ``tree``."""


class UniformPolicy:
    """Every legal action with equal probability."""

    name = "random"

    def action(self, key: str, labels: list[str], rng: random.Random) -> int:
        return rng.randrange(len(labels))

    def behavior(self, tree: GameTree) -> np.ndarray:
        return 1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions).astype(float)


class CompactPolicy:
    """Plays a compact strategy (``efgkit.storage.compact_reader.CompactStrategy``).

    A file with a class rule needs each infoset's class (player, own-sequence length,
    number of actions): ``tree`` gives it to ``action``; ``behavior`` takes its own tree.
    """

    def __init__(self, strategy, name: str, tree: GameTree | None = None) -> None:
        self.strategy = strategy
        self.name = name
        self._tree = tree
        self._infoset_of = {key: i for i, key in enumerate(tree.infoset_keys)} if tree else {}

    def action(self, key: str, labels: list[str], rng: random.Random) -> int:
        infoset = self._infoset_of.get(key)
        infoset_class = None if infoset is None else class_of(self._tree, infoset)
        if self.strategy.row_of(key, infoset_class) < 0:
            raise StrategyError(f"{self.name} has no row for infoset {key!r} (pruned, or made "
                                f"for another game)")
        action = self.strategy.sample(key, rng, infoset_class)
        if action >= len(labels):
            raise StrategyError(f"{self.name} has more actions at {key!r} than the game")
        return action

    def behavior(self, tree: GameTree) -> np.ndarray:
        """The file's probabilities; infosets it leaves out (never reached) play uniformly."""
        behavior = UniformPolicy().behavior(tree)
        offsets = tree.infoset_action_offset
        for infoset, key in enumerate(tree.infoset_keys):
            if self.strategy.row_of(key, class_of(tree, infoset)) >= 0:
                row = list(self.strategy.probabilities(key, class_of(tree, infoset)).values())
                if len(row) != offsets[infoset + 1] - offsets[infoset]:
                    raise StrategyError(f"{self.name}: infoset {key!r} has {len(row)} actions "
                                        f"in the file, {offsets[infoset + 1] - offsets[infoset]} "
                                        f"in the game")
                behavior[offsets[infoset]:offsets[infoset + 1]] = row
        return behavior


def sample(probabilities, rng: random.Random) -> int:
    """An index drawn with the given probabilities (the last one takes rounding leftovers)."""
    draw = rng.random()
    for action, probability in enumerate(probabilities[:-1]):
        draw -= probability
        if draw < 0.0:
            return action
    return len(probabilities) - 1


@dataclass(frozen=True)
class Move:
    """One decision of a hand: who acted, what they knew (infoset key) and what they chose."""

    player: int
    key: str
    label: str


def play_hand(tree: GameTree, policies: tuple[Policy, Policy],
              rng: random.Random) -> tuple[float, list[Move]]:
    """Play one hand; returns player 0's payoff and the decisions made."""
    node, moves = 0, []
    while tree.node_kind[node] != TERMINAL:
        first = int(tree.node_first_child[node])
        count = int(tree.node_num_children[node])
        if tree.node_kind[node] == CHANCE:
            node = first + sample(tree.node_chance_prob[first:first + count].tolist(), rng)
            continue
        player = int(tree.node_kind[node])
        infoset = int(tree.node_infoset[node])
        labels = tree.infoset_actions(infoset)
        action = policies[player].action(tree.infoset_keys[infoset], labels, rng)
        moves.append(Move(player, tree.infoset_keys[infoset], labels[action]))
        node = first + action
    return float(tree.node_utility[node]), moves


@dataclass(frozen=True)
class MatchResult:
    """Payoffs of ``policy`` per hand (its own utility), seats alternating from seat 0."""

    hands: int
    mean: float
    standard_error: float

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """95% normal-approximation interval for the mean payoff."""
        return (self.mean - Z_95 * self.standard_error, self.mean + Z_95 * self.standard_error)


def play_match(tree: GameTree, policy: Policy, opponent: Policy, hands: int,
               seed: int | None = None, progress: Callable[[int], None] | None = None) -> MatchResult:
    """``hands`` hands of ``policy`` against ``opponent``; ``policy`` sits in seat ``h % 2``."""
    rng = random.Random(seed)
    payoffs = np.empty(hands)
    for hand in range(hands):
        seat = hand % 2
        seated = (policy, opponent) if seat == 0 else (opponent, policy)
        utility, _ = play_hand(tree, seated, rng)
        payoffs[hand] = utility if seat == 0 else -utility
        if progress is not None:
            progress(hand + 1)
    error = float(payoffs.std(ddof=1) / math.sqrt(hands)) if hands > 1 else float("inf")
    return MatchResult(hands, float(payoffs.mean()) if hands else float("nan"), error)


def expected_payoff(tree: GameTree, behavior: np.ndarray, opponent_behavior: np.ndarray) -> float:
    """Exact mean payoff of ``behavior`` against ``opponent_behavior`` over both seats.

    Each argument is a float64 probability per original infoset-action of ``tree``.
    """
    from efgkit.maps.infoset_map import InfosetMap

    layout = ProfileLayout(InfosetMap.identity(tree))
    owner = np.repeat(tree.infoset_player, tree.infoset_num_actions)
    values = []
    for seat0, seat1 in ((behavior, opponent_behavior), (opponent_behavior, behavior)):
        layout.set_strategy(np.where(owner == 0, seat0, seat1))
        values.append(float(layout.expected_values()[0]))
    return (values[0] - values[1]) / 2.0
