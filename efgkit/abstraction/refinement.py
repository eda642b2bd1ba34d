"""The driver shared by FPIRA and CFR+IRA: iterate until a target NashConv, recording
NashConv, abstraction size and memory (in the paper's 32-bit words) along the way."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

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


@dataclass
class RefinementState:
    """Everything a refiner needs to continue exactly where it stopped (a checkpoint):
    ``arrays`` (the map's, the regrets or averages, the samples), ``numbers`` (iteration
    counters, split counts) and the random generator's ``rng_state`` (JSON-able)."""

    arrays: dict[str, np.ndarray]
    numbers: dict[str, float]
    rng_state: dict | None = None
    history: list[RefinementRecord] = field(default_factory=list)


def run_refinement(solver, target: float, *, max_iterations: int, every: int,
                   callback=None, history: list[RefinementRecord] | None = None,
                   time_limit: float | None = None) -> list[RefinementRecord]:
    """Shared driver of FPIRA and CFR+IRA: iterate, evaluate every ``every`` iterations.

    ``history`` continues a resumed run: its last record is the solver's current point, so
    it is not evaluated again and the run goes on exactly as an uninterrupted one.
    ``time_limit`` (seconds of this call, wall clock) ends the run at the first evaluation
    point after it has passed, so the last record is always the final strategy's.
    """
    if every < 1:
        raise ParameterError(f"every must be >= 1, got {every}")
    if max_iterations < 0:
        raise ParameterError(f"max_iterations must be >= 0, got {max_iterations}")
    history = list(history or [])
    resumed = bool(history) and history[-1].iteration == solver.iteration
    iterating = history[-1].seconds if history else 0.0
    deadline = None if time_limit is None else time.monotonic() + time_limit
    while True:
        if resumed:
            record, resumed = history[-1], False
        else:
            result = solver.evaluate()
            memory = solver.memory()
            record = RefinementRecord(solver.iteration, result.nash_conv,
                                      memory["abstract_infosets"], memory["memory_words"],
                                      memory["map_entries"], iterating)
            history.append(record)
            if callback is not None:
                callback(record)
        if record.nash_conv <= target or solver.iteration >= max_iterations or (
                deadline is not None and time.monotonic() >= deadline):
            return history
        start = time.perf_counter()
        solver.iterate(min(every, max_iterations - solver.iteration))
        iterating += time.perf_counter() - start
