"""One result type for every evaluation of a strategy, and the two protocols of the core.

Every evaluator of every engine (the GameTree's best response, the public tree's, the
streamed full-game walk, the abstract game's) returns one ``Evaluation``: both players'
best-response values, NashConv (their sum: what Čermák et al. plot), NashConv/2
(OpenSpiel's "exploitability"), player 0's game value, in which game the responder played
(``"full"`` or ``"abstract"``) and whether the numbers are exact or a lower bound (an
imperfect-recall abstract game). Local best response, a sampled estimate with a confidence
interval, keeps its own ``Estimate`` beside it (``poker.board_walk``).

``Solver`` and ``Evaluator`` are what a technique (a run loop, refinement, re-solving,
export) may rely on, whatever the engine under it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from efgkit.core.solver_state import SolverState


@dataclass(frozen=True)
class Evaluation:
    """An evaluation of a profile, in the game's utility units (chips for poker).

    ``best_response_values``: each player's best-response value against the other's
    strategy; ``nash_conv`` their sum, ``exploitability`` half of it; ``game_value`` player
    0's expected utility under the profile (NaN when it was not asked for); ``game``: the
    responder's game, ``"full"`` or ``"abstract"`` (it sees only the abstraction's rows);
    ``exact``: False when the values are lower bounds.
    """

    nash_conv: float
    exploitability: float
    game_value: float
    best_response_values: tuple[float, float]
    game: str = "full"
    exact: bool = True

    @classmethod
    def of(cls, best_response_values: tuple[float, float], game_value: float, *, game: str = "full",
           exact: bool = True) -> Evaluation:
        """The evaluation with these best-response values (NashConv their sum)."""
        first, second = (float(value) for value in best_response_values)
        nash_conv = first + second
        return cls(nash_conv, nash_conv / 2.0, float(game_value), (first, second), game, exact)

    def to_dict(self) -> dict[str, object]:
        """The numbers as JSON fields (``game_value`` NaN when it was not computed)."""
        return {"nash_conv": self.nash_conv, "exploitability": self.exploitability,
                "game_value": self.game_value, "best_response_values": list(self.best_response_values)}


@runtime_checkable
class Solver(Protocol):
    """An iterative solver of any engine: ``iterate(n)``, the ``iteration`` reached, the
    current and average strategy (a ``Strategy`` on an InfosetMap, or the engine's rows), and
    its ``state()`` / ``load_state`` for checkpoints that resume bit-identically."""

    iteration: int

    def iterate(self, iterations: int = 1) -> Solver: ...

    def current_strategy(self): ...

    def average_strategy(self): ...

    def state(self) -> SolverState: ...

    def load_state(self, state: SolverState) -> None: ...


@runtime_checkable
class Evaluator(Protocol):
    """Anything that evaluates a strategy of its engine into an ``Evaluation``."""

    def evaluate(self, strategy) -> Evaluation: ...
