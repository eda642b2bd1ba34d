"""Crash-safe checkpoints of a CFR-family solve, and resuming them bit for bit: strategy files
for the GameTree, public-tree and disk solvers, bucket-strategy files for sampled CFR.

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
import time
from collections.abc import Callable

import numpy as np

from efgkit.core.run_loop import CheckpointSchedule
from efgkit.core.solver_state import SolverState
from efgkit.errors import FileFormatError, ParameterError
from efgkit.io.atomic import remove_stale_temporaries
from efgkit.storage.bucket_strategy import load_bucket_strategy, save_bucket_strategy
from efgkit.storage.strategy_file import load_checkpoint, save_strategy


class Checkpoints(CheckpointSchedule):
    """A CFR-family solve's checkpoints: strategy files with the solver state at ``path``,
    on ``CheckpointSchedule``'s schedule (every ``every`` iterations and/or ``seconds``),
    and resuming from them."""

    def __init__(self, path: str | os.PathLike, *, algorithm: str, parameters: dict,
                 every: int | None = None, seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(every=every, seconds=seconds, clock=clock)
        self.path = path
        self.algorithm = algorithm
        self.parameters = parameters

    def save(self, solver, history: list[dict]) -> None:
        write_checkpoint(self.path, solver, algorithm=self.algorithm, parameters=self.parameters,
                         history=history)

    def resume(self, solver, iterations: int) -> list[dict]:
        return resume(self.path, solver, algorithm=self.algorithm, parameters=self.parameters,
                      iterations=iterations)


def write_checkpoint(path: str | os.PathLike, solver, *, algorithm: str, parameters: dict,
                     history: list[dict]) -> None:
    """Write ``solver``'s average strategy and full state to ``path``, atomically.

    ``solver`` holds its state in memory (``state()``: CFRSolver, the poker engine's
    PublicTreeCFR) or on disk (``DiskSolver``, which saves itself).
    """
    provenance = {"algorithm": algorithm, "parameters": parameters,
                  "iterations": solver.iteration, "nash_conv_history": history}
    if not _in_memory(solver):
        solver.save(path, provenance)
        return
    save_strategy(path, solver.average_strategy(), solver_state=solver.state(), provenance=provenance)


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
        try:
            solver.load_state(state)
        except FileFormatError as exc:
            raise FileFormatError(f"{path}: {exc}") from exc
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
    """Whether a checkpoint holds ``solver``'s ``state()``; the disk solver, whose state is
    read and written slice by slice, saves and restores itself."""
    return not callable(getattr(solver, "restore", None))


# ----------------------------------------------------------------------------- sampled solves
class SampledCheckpoints(CheckpointSchedule):
    """Checkpoints of a sampled solve: bucket-strategy files (``write_sampled``) on
    ``CheckpointSchedule``'s schedule; ``solve_seconds()`` is the solve's time so far."""

    def __init__(self, path: str, provenance: dict, solve_seconds: Callable[[], float], **schedule) -> None:
        super().__init__(**schedule)
        self.path = path
        self.provenance = provenance
        self._solve_seconds = solve_seconds

    def save(self, solver, history: list[dict]) -> None:
        write_sampled(self.path, solver, self.provenance, history, self._solve_seconds())


def write_sampled(path: str, solver, provenance: dict, history: list[dict], seconds: float) -> None:
    """The solver's average strategy and everything that resumes it (state arrays, iteration,
    the sampler's RNG state), atomically, as a bucket-strategy file."""
    save_bucket_strategy(path, solver.layout, solver.average_strategy(),
                         {**provenance, "iterations": solver.iteration, "rng_state": solver.rng_state,
                          "seconds": seconds, "history": history}, solver.state().arrays)


def resume_sampled(path: str, solver, provenance: dict, iterations: int) -> tuple[list[dict], float]:
    """Load the checkpoint at ``path`` into ``solver`` (refusing a checkpoint of another game,
    abstraction, variant, parameters, precision or seed, or beyond ``iterations``); its history
    and solve seconds so far."""
    remove_stale_temporaries(path)
    reference = solver.layout.abstraction.reference
    bucket_file = reference.get("path") if reference.get("kind") == "bucket-file" else None
    layout, _, recorded, arrays = load_bucket_strategy(path, solver.layout.betting.game, bucket_file)
    if layout.abstraction.reference != reference:
        raise ParameterError(f"{path}: checkpoint is on the card abstraction "
                             f"{layout.abstraction.description}, not {solver.layout.abstraction.description}")
    if "rng_state" not in recorded:
        raise ParameterError(f"{path}: holds no sampler state (a final strategy or an older file); "
                             f"it cannot be resumed")
    made, wanted = recorded.get("parameters") or {}, provenance["parameters"]
    for name, flag in (("engine", "--engine"), ("algorithm", "--algorithm"), ("precision", "--precision"),
                       ("seed", "--seed"), ("regret_scaling", "--regret-scaling"),
                       ("average_scaling", "--average-scaling"), ("parameters", "variant parameters"),
                       ("boards_per_iteration", "--boards-per-iteration"),
                       ("board_groups", "--board-groups")):
        was, now = (made.get(name), wanted.get(name)) if name.endswith("_scaling") else (recorded.get(name),
                                                                                         provenance.get(name))
        if was != now:
            raise ParameterError(f"{path}: checkpoint was made with {name} {was!r}, not {now!r}; resume "
                                 f"with the same {flag}")
    if recorded["iterations"] > iterations:
        raise ParameterError(f"{path}: checkpoint is at iteration {recorded['iterations']}, beyond "
                             f"--iterations {iterations}")
    try:
        solver.load_state(SolverState(arrays, recorded["iterations"], recorded["rng_state"]))
    except FileFormatError as exc:
        raise FileFormatError(f"{path}: {exc}") from exc
    return list(recorded.get("history", [])), float(recorded.get("seconds", 0.0))
