"""The driver shared by FPIRA and CFR+IRA: iterate until a target NashConv, recording
NashConv, abstraction size and memory (in the paper's 32-bit words) along the way."""

from __future__ import annotations

import time
from dataclasses import dataclass

from efgkit.errors import ParameterError


@dataclass(frozen=True)
class RefinementRecord:
    """One evaluation point of a refinement run."""

    iteration: int
    nash_conv: float
    abstract_infosets: int
    memory_words: int
    map_entries: int
    seconds: float
    """Time spent iterating so far (the exact evaluations are not counted)."""


def run_refinement(solver, target: float, *, max_iterations: int, every: int,
                   callback=None) -> list[RefinementRecord]:
    """Shared driver of FPIRA and CFR+IRA: iterate, evaluate every ``every`` iterations."""
    if every < 1:
        raise ParameterError(f"every must be >= 1, got {every}")
    if max_iterations < 0:
        raise ParameterError(f"max_iterations must be >= 0, got {max_iterations}")
    history: list[RefinementRecord] = []
    iterating = 0.0
    while True:
        result = solver.evaluate()
        memory = solver.memory()
        record = RefinementRecord(solver.iteration, result.nash_conv,
                                  memory["abstract_infosets"], memory["memory_words"],
                                  memory["map_entries"], iterating)
        history.append(record)
        if callback is not None:
            callback(record)
        if result.nash_conv <= target or solver.iteration >= max_iterations:
            return history
        start = time.perf_counter()
        solver.iterate(min(every, max_iterations - solver.iteration))
        iterating += time.perf_counter() - start
