"""The public-tree engine behind efgkit's solver interface, on any InfosetMap of a poker tree.

``PublicTreeCFR`` has ``CFRSolver``'s face (``iterate``, ``iteration``, ``average_strategy``
and ``current_strategy`` as ``Strategy`` objects on the InfosetMap, ``state`` /
``load_state`` in the same layout), so checkpoints, strategy files and every evaluation
work unchanged; ``PublicTreeBestResponse`` has ``BestResponse``'s. ``efgkit solve
--engine public-tree`` uses both.
"""

from __future__ import annotations

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.core.regret_rules import VariantSolver
from efgkit.core.solver_state import SolverState
from efgkit.errors import AbstractionError, ParameterError
from efgkit.games.poker import LimitPoker
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import VectorCFR
from efgkit.solvers.strategy import Strategy


def public_layout(infoset_map: InfosetMap) -> StrategyLayout:
    """The public tree of the map's poker game with the map's rows."""
    game = infoset_map.tree.game
    if not isinstance(game, LimitPoker):
        raise AbstractionError(f"game {infoset_map.tree.spec!r} is not a limit-poker game; the "
                               f"public-tree engine plays kuhn, leduc, twocard, poker(...), holdem "
                               f"and ACPC limit games")
    return StrategyLayout.from_infoset_map(PublicTree(game), infoset_map)


class PublicTreeCFR(VariantSolver):
    """Any CFR variant of ``efgkit.solvers.cfr`` through the engine; see the module docstring."""

    def __init__(self, infoset_map: InfosetMap, *, variant: str = "cfr+", alternating: bool = True,
                 delay: int | None = None, alpha: float | None = None, beta: float | None = None,
                 gamma: float | None = None, gamma_start: float | None = None, horizon: int | None = None,
                 layout: StrategyLayout | None = None) -> None:
        if not alternating:
            raise ParameterError("the public-tree engine updates the players alternately")
        self.infoset_map = infoset_map
        self.layout = public_layout(infoset_map) if layout is None else layout
        self.engine = VectorCFR(self.layout.tree, self.layout, variant=variant, delay=delay, alpha=alpha,
                                beta=beta, gamma=gamma, gamma_start=gamma_start, horizon=horizon)
        self._configure(variant, {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma,
                                  "gamma_start": gamma_start, "horizon": horizon}, rows=True)
        self.alternating = True

    @property
    def iteration(self) -> int:
        return self.engine.iteration

    def iterate(self, iterations: int = 1) -> PublicTreeCFR:
        self.engine.iterate(iterations)
        return self

    def average_strategy(self) -> Strategy:
        return Strategy(self.infoset_map, self.engine.average_strategy())

    def current_strategy(self) -> Strategy:
        return Strategy(self.infoset_map, self.engine.current_strategy())

    def state_arrays(self) -> dict[str, np.ndarray]:
        return self.engine.state_arrays()

    def state(self) -> SolverState:
        return self.engine.state()

    def load_state(self, state: SolverState) -> None:
        self.engine.load_state(state)


class PublicTreeBestResponse:
    """``BestResponse(infoset_map).evaluate`` computed on the public tree."""

    def __init__(self, infoset_map: InfosetMap, layout: StrategyLayout | None = None) -> None:
        self.infoset_map = infoset_map
        self.layout = public_layout(infoset_map) if layout is None else layout

    def evaluate(self, strategy: Strategy) -> Evaluation:
        return evaluate_strategy(self.layout, strategy.probabilities)
