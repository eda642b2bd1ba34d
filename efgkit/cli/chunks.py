"""The iteration loop of every ``efgkit solve``: chunks that double while they are quick, a
progress bar, an evaluation every K iterations and at the last one, checkpoints when due."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from tqdm import tqdm

from efgkit.cli.app import show_progress

SLOW_CHUNK_SECONDS = 0.25
"""Iterations run in chunks that grow while a chunk takes less than this (progress bar pace)."""


def iterate_in_chunks(solver, iterations: int, every: int | None, evaluate: Callable[[], None] | None,
                      history: list[dict], checkpoints=None, description: str = "solving",
                      after_chunk: Callable[[], None] | None = None) -> None:
    """Run ``solver.iterate`` up to iteration ``iterations``.

    ``evaluate()`` (which appends to ``history``) runs at every multiple of ``every`` and
    at ``iterations`` itself, so an evaluation history ends at the final iteration; the
    progress bar is cleared while it prints. ``checkpoints`` (``storage.checkpoint.
    Checkpoints``) end chunks at their every-K stops and write after any chunk when due,
    with ``history`` as it stands. Without ``every`` or ``evaluate`` nothing is evaluated.
    ``after_chunk()`` runs after every chunk (a memory-mapped state drops its resident pages).
    """
    evaluating = every is not None and evaluate is not None
    chunk = 1
    with tqdm(total=iterations, initial=solver.iteration, unit="it", desc=description, file=sys.stderr,
              disable=not show_progress(), leave=False) as bar:
        while solver.iteration < iterations:
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
            if evaluating and (solver.iteration % every == 0 or solver.iteration == iterations):
                bar.clear()
                evaluate()
                bar.refresh()
            if checkpoints is not None:
                checkpoints.after_chunk(solver, history)
