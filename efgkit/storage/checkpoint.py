"""Crash-safe checkpoints of a CFR-family solve, and resuming them bit for bit.

A checkpoint is a schema-2 strategy file (docs/file-format.md) that also holds the solver
state: regrets, average accumulators, the iteration counter and the RNG state, plus the
NashConv history so far. It is written like every efgkit file: to a temporary file beside
the destination, flushed, then renamed over it, so a process killed at any instant —
also in the middle of writing — leaves the previous good checkpoint in place (and at
worst a stale temporary, which the next run removes). This is the scheme of the HULHE
solve (Burch's thesis, as digested in ../shared/research/seed_burch.md §3.2): the last
good checkpoint stays until a complete new one replaces it.

CFR, CFR+ and DCFR are deterministic functions of (regrets, average accumulator,
iteration): the regret-matching strategy is recomputed from the regrets on loading, as
it was after the last iteration. A resumed run therefore reaches bit-identical regrets
and strategies to an uninterrupted one.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.io.atomic import remove_stale_temporaries
from efgkit.solvers.cfr import CFRSolver
from efgkit.storage.strategy_file import SolverState, load_checkpoint, save_strategy


class Checkpoints:
    """Where and when a solve checkpoints (every ``every`` iterations and/or every
    ``seconds`` of wall time), and how it resumes.

    A driver ends its chunks of iterations at ``next_stop`` so no every-K checkpoint is
    skipped, and calls ``after_chunk``, which writes one when due.
    """

    def __init__(self, path: str | os.PathLike, *, algorithm: str, parameters: dict,
                 every: int | None = None, seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if every is not None and every < 1:
            raise ParameterError(f"checkpoint every must be >= 1 iterations, got {every}")
        if seconds is not None and not seconds > 0:
            raise ParameterError(f"checkpoint seconds must be > 0, got {seconds}")
        self.path = path
        self.algorithm = algorithm
        self.parameters = parameters
        self.every = every
        self.seconds = seconds
        self.written = 0
        self.seconds_writing = 0.0
        self._clock = clock
        self._last_time = clock()

    def next_stop(self, iteration: int) -> int:
        """The next iteration after ``iteration`` at which an every-K checkpoint falls."""
        return sys.maxsize if self.every is None else (iteration // self.every + 1) * self.every

    def after_chunk(self, solver: CFRSolver, history: list[dict]) -> None:
        on_count = self.every is not None and solver.iteration % self.every == 0
        on_time = self.seconds is not None and self._clock() - self._last_time >= self.seconds
        if on_count or on_time:
            self.write(solver, history)

    def write(self, solver: CFRSolver, history: list[dict]) -> None:
        started = time.perf_counter()
        write_checkpoint(self.path, solver, algorithm=self.algorithm, parameters=self.parameters,
                         history=history)
        self.seconds_writing += time.perf_counter() - started
        self.written += 1
        self._last_time = self._clock()

    def resume(self, solver: CFRSolver, iterations: int) -> list[dict]:
        return resume(self.path, solver, algorithm=self.algorithm, parameters=self.parameters,
                      iterations=iterations)


def write_checkpoint(path: str | os.PathLike, solver, *, algorithm: str, parameters: dict,
                     history: list[dict]) -> None:
    """Write ``solver``'s average strategy and full state to ``path``, atomically.

    ``solver`` holds its state in memory (``state_arrays()``: CFRSolver, the poker engine's
    PublicTreeCFR) or on disk (``DiskSolver``, which saves itself).
    """
    provenance = {"algorithm": algorithm, "parameters": parameters,
                  "iterations": solver.iteration, "nash_conv_history": history}
    if not _in_memory(solver):
        solver.save(path, provenance)
        return
    arrays = solver.state_arrays()
    state = SolverState(regrets=arrays["regrets"], average_accumulator=arrays["average_accumulator"],
                        iteration=solver.iteration, prediction=arrays.get("prediction"))
    save_strategy(path, solver.average_strategy(), solver_state=state, provenance=provenance)


def resume(path: str | os.PathLike, solver, *, algorithm: str, parameters: dict,
           iterations: int) -> list[dict]:
    """Load the checkpoint at ``path`` into ``solver``; returns its NashConv history.

    The checkpoint must be for the solver's game and abstraction, by the same algorithm
    with the same parameters, and not beyond ``iterations``; otherwise FileFormatError
    or ParameterError says which. Stale temporaries of killed writers are removed.
    """
    remove_stale_temporaries(path)
    if _in_memory(solver):
        strategy, provenance, state = load_checkpoint(path, solver.infoset_map.tree)
        if not np.array_equal(strategy.infoset_map.abstract_of, solver.infoset_map.abstract_of):
            raise FileFormatError(f"{path}: checkpoint is on another abstraction of the game")
        _check_resumable(path, provenance, state.iteration, algorithm, parameters, iterations)
        if state.prediction is None:
            solver.load_state(state.regrets, state.average_accumulator, state.iteration)
        else:
            solver.load_state(state.regrets, state.average_accumulator, state.iteration,
                              prediction=state.prediction)
    else:
        provenance = solver.restore(path)
        _check_resumable(path, provenance, solver.iteration, algorithm, parameters, iterations)
    return [{"iteration": i, "nash_conv": v} for i, v in provenance["nash_conv_history"]]


def _check_resumable(path: str | os.PathLike, provenance: dict, iteration: int, algorithm: str,
                     parameters: dict, iterations: int) -> None:
    if provenance["algorithm"] != algorithm:
        raise ParameterError(f"{path}: checkpoint was made by {provenance['algorithm']}, "
                             f"not {algorithm}; resume with the same --algorithm")
    if provenance["parameters"] != parameters:
        raise ParameterError(f"{path}: checkpoint was made with parameters "
                             f"{provenance['parameters']}, not {parameters}")
    if iteration > iterations:
        raise ParameterError(f"{path}: checkpoint is at iteration {iteration}, beyond "
                             f"--iterations {iterations}")


def _in_memory(solver) -> bool:
    """Whether ``solver`` hands out its state arrays (else it saves and restores itself)."""
    return callable(getattr(solver, "state_arrays", None))
