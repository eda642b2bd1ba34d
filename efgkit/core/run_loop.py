"""The one run loop of every long solve: chunks, evaluations, checkpoints, a time budget.

Every iterative solver (the GameTree CFR family, the public-tree engine, sampled CFR, the
disk solver) is run by ``run_iterations``: iterations in chunks that double while a chunk
is quick (so a progress bar with rate and ETA moves, and Python's share stays small), an
evaluation at every multiple of ``every`` and at the last iteration, checkpoints when a
``CheckpointSchedule`` says they are due (every K iterations and/or S seconds), and a stop
when a time budget is spent. Resuming is the solver's (``load_state``): a chunking never
changes the iterates, so a resumed run is bit-identical to an uninterrupted one. The loop
lets Ctrl-C (KeyboardInterrupt) through after the chunk in flight; the caller keeps what
it reached (``storage.checkpoint``, the CLI).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import NamedTuple

from efgkit.errors import ParameterError
from efgkit.io.progress import progress_bar

SLOW_CHUNK_SECONDS = 0.25
"""Iterations run in chunks that grow while a chunk takes less than this (progress bar pace)."""


class CheckpointSchedule:
    """When a run checkpoints: every ``every`` iterations and/or every ``seconds`` of wall
    time. ``write(solver, history)`` (a subclass's) writes one; ``after_chunk`` writes one
    when due. A run ends its chunks at ``next_stop`` so no every-K checkpoint is skipped."""

    def __init__(self, *, every: int | None = None, seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if every is not None and every < 1:
            raise ParameterError(f"checkpoint every must be >= 1 iterations, got {every}")
        if seconds is not None and not seconds > 0:
            raise ParameterError(f"checkpoint seconds must be > 0, got {seconds}")
        self.every = every
        self.seconds = seconds
        self.written = 0
        self.seconds_writing = 0.0
        self._clock = clock
        self._last_time = clock()

    def next_stop(self, iteration: int) -> int:
        """The next iteration after ``iteration`` at which an every-K checkpoint falls."""
        return sys.maxsize if self.every is None else (iteration // self.every + 1) * self.every

    def after_chunk(self, solver, history: list[dict]) -> None:
        """Write a checkpoint if one is due at ``solver.iteration``."""
        on_count = self.every is not None and solver.iteration % self.every == 0
        on_time = self.seconds is not None and self._clock() - self._last_time >= self.seconds
        if on_count or on_time:
            self.write(solver, history)

    def write(self, solver, history: list[dict]) -> None:
        """Write a checkpoint now (timed and counted)."""
        started = time.perf_counter()
        self.save(solver, history)
        self.seconds_writing += time.perf_counter() - started
        self.written += 1
        self._last_time = self._clock()

    def save(self, solver, history: list[dict]) -> None:
        """Write the file of one checkpoint (the subclass's format)."""
        raise NotImplementedError


class RunEnd(NamedTuple):
    """How ``run_iterations`` ended: at ``iteration``, ``out_of_time`` if the time budget
    stopped it before the iterations asked for."""

    iteration: int
    out_of_time: bool


def run_iterations(solver, iterations: int, *, every: int | None = None,
                   evaluate: Callable[[], None] | None = None, history: list[dict] | None = None,
                   checkpoints: CheckpointSchedule | None = None, time_limit: float | None = None,
                   progress: bool = False, description: str = "solving",
                   after_chunk: Callable[[], None] | None = None,
                   clock: Callable[[], float] = time.monotonic) -> RunEnd:
    """Run ``solver.iterate`` up to iteration ``iterations``, or until ``time_limit`` seconds
    have passed after the first chunk (checked after each chunk; the first chunk, one
    iteration, compiles the kernels on a first run and is not counted).

    ``evaluate()`` (which appends to ``history``) runs at every multiple of ``every``, at
    ``iterations`` itself and where the time budget stops the run, so an evaluation history
    ends at the last iteration run; the progress bar (stderr, when ``progress``) is cleared
    while it prints. ``checkpoints`` end chunks at their every-K stops and write after any
    chunk when due, with ``history`` as it stands. ``after_chunk()`` runs after every chunk
    (a memory-mapped state drops its resident pages).
    """
    if time_limit is not None and not time_limit > 0:
        raise ParameterError(f"the time budget must be > 0 seconds, got {time_limit}")
    history = [] if history is None else history
    evaluating = every is not None and evaluate is not None
    deadline = None
    out_of_time = False
    chunk = 1
    with progress_bar(total=iterations, initial=solver.iteration, unit="it", desc=description,
                      enabled=progress) as bar:
        while solver.iteration < iterations and not out_of_time:
            stop = iterations
            if evaluating:
                stop = min(stop, (solver.iteration // every + 1) * every)
            if checkpoints is not None:
                stop = min(stop, checkpoints.next_stop(solver.iteration))
            step = min(chunk, stop - solver.iteration)
            started = time.perf_counter()
            solver.iterate(step)
            if after_chunk is not None:
                after_chunk()
            if time.perf_counter() - started < SLOW_CHUNK_SECONDS:
                chunk *= 2
            bar.update(step)
            if deadline is None and time_limit is not None:
                deadline = clock() + time_limit
            out_of_time = deadline is not None and clock() >= deadline and solver.iteration < iterations
            last = solver.iteration == iterations or out_of_time
            if evaluating and (solver.iteration % every == 0 or last):
                bar.clear()
                evaluate()
                bar.refresh()
            if checkpoints is not None:
                checkpoints.after_chunk(solver, history)
    return RunEnd(solver.iteration, out_of_time)
