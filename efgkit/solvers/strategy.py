"""Strategy: a behaviour-strategy profile stored per abstract infoset-action.

An abstract (possibly imperfect-recall) strategy is still a behaviour strategy of the
original game: original infoset ``I`` plays the distribution of ``abstract_of[I]``
(Čermák et al. §2.1). ``behavior()`` expands it to one probability per original
infoset-action, the form every evaluation uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from efgkit.errors import StrategyError
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap

PROBABILITY_TOLERANCE = 1e-6


@dataclass(eq=False)
class Strategy:
    """Probabilities (float64, one per abstract infoset-action) on an InfosetMap."""

    infoset_map: InfosetMap
    probabilities: np.ndarray

    def __post_init__(self) -> None:
        probabilities = np.ascontiguousarray(self.probabilities, dtype=np.float64)
        expected = self.infoset_map.num_abstract_actions
        if probabilities.shape != (expected,):
            raise StrategyError(
                f"a strategy on this abstraction needs {expected} probabilities, "
                f"got shape {probabilities.shape}"
            )
        if not np.all(np.isfinite(probabilities)) or probabilities.min(initial=0.0) < 0:
            raise StrategyError("strategy probabilities must be finite and non-negative")
        sums = np.add.reduceat(probabilities, self.infoset_map.abstract_action_offset[:-1]) if (
            expected) else np.zeros(0)
        if np.any(np.abs(sums - 1.0) > PROBABILITY_TOLERANCE):
            bad = int(np.flatnonzero(np.abs(sums - 1.0) > PROBABILITY_TOLERANCE)[0])
            raise StrategyError(
                f"probabilities of abstract infoset {bad} sum to {sums[bad]:.9g}, not 1"
            )
        self.probabilities = probabilities

    @property
    def tree(self) -> GameTree:
        return self.infoset_map.tree

    @classmethod
    def uniform(cls, infoset_map: InfosetMap) -> Strategy:
        counts = np.repeat(infoset_map.abstract_num_actions, infoset_map.abstract_num_actions)
        return cls(infoset_map, 1.0 / counts.astype(np.float64))

    @classmethod
    def from_behavior(cls, tree: GameTree, behavior: np.ndarray) -> Strategy:
        """A strategy on the identity map from one probability per original infoset-action."""
        return cls(InfosetMap.identity(tree), behavior)

    def behavior(self) -> np.ndarray:
        """float64 per original infoset-action: what each original infoset plays."""
        return self.probabilities[self.infoset_map.abstract_action_of]

    def probabilities_of(self, infoset_key: str) -> dict[str, float]:
        """Action label -> probability at one original infoset, by its readable key."""
        tree = self.tree
        infoset = tree.infoset_index.get(infoset_key)
        if infoset is None:
            raise StrategyError(f"no infoset {infoset_key!r} in game {tree.spec!r}")
        lo = int(self.infoset_map.infoset_offset[infoset])
        labels = tree.infoset_actions(infoset)
        return {label: float(self.probabilities[lo + k]) for k, label in enumerate(labels)}


def normalize_per_infoset(weights: np.ndarray, action_offset: np.ndarray) -> np.ndarray:
    """Normalise non-negative weights within each infoset; all-zero infosets become uniform."""
    counts = np.diff(action_offset)
    totals = np.add.reduceat(weights, action_offset[:-1]) if weights.size else weights
    totals = np.repeat(totals, counts)
    uniform = 1.0 / np.repeat(counts, counts).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), uniform)
