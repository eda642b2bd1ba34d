"""What re-solving asks of an engine: a ``SolverFactory`` (a gadget GameTree -> a fresh core
Solver: a CFR variant's class, a configured ``functools.partial``, ``SequenceFormLP``) and an
``EvaluatorFactory`` (an InfosetMap -> the Evaluator of strategies on it: ``BestResponse``,
``PublicTreeBestResponse``; every spliced strategy has a refined map of its own)."""

from __future__ import annotations

from collections.abc import Callable

from efgkit.core.evaluation import Evaluator, Solver
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap

SolverFactory = Callable[[GameTree], Solver]
EvaluatorFactory = Callable[[InfosetMap], Evaluator]


def check_factories(solver: SolverFactory, evaluator: EvaluatorFactory) -> None:
    """ParameterError unless both are callables (classes or functions) that build engines."""
    if not (callable(solver) and callable(evaluator)):
        raise ParameterError(f"solver and evaluator must build one (classes such as CFRPlusSolver and "
                             f"BestResponse), got {solver!r} and {evaluator!r}")

