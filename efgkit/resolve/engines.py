"""What re-solving asks of an engine: a ``SolverFactory`` (a gadget GameTree -> a fresh core
Solver: a CFR variant's class, a configured ``functools.partial``, ``SequenceFormSolver``) and an
``EvaluatorFactory`` (an InfosetMap -> the Evaluator of strategies on it: ``BestResponse``,
``PublicTreeBestResponse``; every spliced strategy has a refined map of its own)."""

from __future__ import annotations

from collections.abc import Callable

from efgkit.core.evaluation import Evaluator, Solver
from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.sequence_form_lp import SequenceFormLP
from efgkit.solvers.strategy import Strategy

SolverFactory = Callable[[GameTree], Solver]
EvaluatorFactory = Callable[[InfosetMap], Evaluator]


def check_factories(solver: SolverFactory, evaluator: EvaluatorFactory) -> None:
    """ParameterError unless both are callables (classes or functions) that build engines."""
    if not (callable(solver) and callable(evaluator)):
        raise ParameterError(f"solver and evaluator must build one (classes such as CFRPlusSolver and "
                             f"BestResponse), got {solver!r} and {evaluator!r}")


class SequenceFormSolver:
    """The sequence-form LP as a Solver: an exact equilibrium of ``tree`` (identity map) that
    iterations do not change. For small gadgets: safety checks without solver error."""

    def __init__(self, tree: GameTree) -> None:
        self.iteration = 0
        self._equilibrium = SequenceFormLP(tree).solve().strategy

    def iterate(self, iterations: int = 1) -> SequenceFormSolver:
        self.iteration += iterations
        return self

    def current_strategy(self) -> Strategy:
        return self._equilibrium

    average_strategy = current_strategy

    def state(self) -> SolverState:
        """Only the iteration: the equilibrium is recomputed, identically."""
        return SolverState({}, self.iteration)

    def load_state(self, state: SolverState) -> None:
        state.check({})
        self.iteration = int(state.iteration)
