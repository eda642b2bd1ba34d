"""One solver state for every solver of every engine: the arrays, the iteration, the RNG.

A solver's future is a function of a few named arrays (cumulative regrets, the average
accumulator, and per solver the predictive variants' prediction, int32 precision's scales,
a re-solving head's statistics), the iterations done and, for solvers that sample, their
random generator's state. ``SolverState`` holds exactly that; a solver hands one out
(``state()``) and resumes from one (``load_state``) after ``check`` has compared it with the
arrays the solver holds: the same names, shapes and dtypes, finite values, an iteration
>= 0. Checkpoint files of every kind (strategy files, bucket-strategy files, the disk
solver's) read into and write from it, so a stale or forged state is refused with the same
one-line ``FileFormatError`` wherever it comes from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from efgkit.core.run_loop import CheckpointSchedule
from efgkit.errors import FileFormatError
from efgkit.io.checked_hdf5 import attribute, checked_output, open_checked, read_dataset, write_dataset


@dataclass(eq=False)
class SolverState:
    """``arrays``: name -> array (numpy arrays, memory maps or, before reading, HDF5
    datasets), in the solver's order; ``iteration``: iterations done; ``rng_state``: the
    random generator's ``bit_generator.state`` (JSON-serialisable), None for solvers that
    draw no random numbers."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    iteration: int = 0
    rng_state: dict | None = None

    def check(self, expected: Mapping[str, object], *, finite: bool = True) -> None:
        """FileFormatError unless the arrays are ``expected``'s (name -> anything with
        ``shape`` and ``dtype``: the solver's own arrays) by name, shape and dtype, finite
        (unless ``finite`` is False: the caller checks values as it copies them), and the
        iteration an integer >= 0."""
        if set(self.arrays) != set(expected):
            raise FileFormatError(f"the solver state holds {sorted(self.arrays)}; this solver needs "
                                  f"{sorted(expected)}")
        for name, target in expected.items():
            array = self.arrays[name]
            if tuple(array.shape) != tuple(target.shape) or np.dtype(array.dtype) != np.dtype(target.dtype):
                raise FileFormatError(f"solver state {name} is {np.dtype(array.dtype)} {tuple(array.shape)}, "
                                      f"expected {np.dtype(target.dtype)} {tuple(target.shape)}")
            if finite:
                check_finite(name, array)
        if isinstance(self.iteration, bool) or not isinstance(self.iteration, int | np.integer) \
                or self.iteration < 0:
            raise FileFormatError(f"invalid iteration {self.iteration!r} in the solver state")

    def copy_into(self, targets: Mapping[str, np.ndarray]) -> None:
        """``check`` against ``targets``, then copy every array into its target."""
        self.check(targets)
        for name, target in targets.items():
            target[...] = self.arrays[name]


def check_finite(name: str, array: np.ndarray) -> None:
    """FileFormatError if ``array`` (a state array or a slice of one) holds NaN or infinity."""
    if not np.all(np.isfinite(array)):
        raise FileFormatError(f"solver state {name} holds values that are not finite (NaN or infinity)")


class StateFileCheckpoints(CheckpointSchedule):
    """A GameTree run's checkpoints at ``path``: its ``SolverState`` in checked HDF5 (format
    ``file_format``, version 1; ``what`` names it in messages) with the game, the run's
    ``settings`` (JSON; a resume needs the same) and the evaluation history, written atomically
    on ``CheckpointSchedule``'s schedule (``every`` iterations / ``seconds``)."""

    def __init__(self, path: str | os.PathLike, file_format: str, what: str, settings: dict, *,
                 every: int | None = None, seconds: float | None = None) -> None:
        super().__init__(every=every, seconds=seconds)
        self.path, self.file_format, self.what = path, file_format, what
        self.settings = json.dumps(settings, sort_keys=True)

    def save(self, solver, history: list[dict]) -> None:
        with checked_output(self.path, self.file_format, 1, self.what) as handle:
            handle.attrs.update(game_spec=solver.tree.spec, tree_fingerprint=solver.tree.fingerprint,
                                settings=self.settings, iteration=solver.iteration,
                                history=json.dumps(history))
            for name, array in solver.state_arrays().items():
                write_dataset(handle, name, array, compressed=False)

    def resume(self, solver) -> list[dict]:
        """Load the checkpoint into ``solver`` and return its history (FileFormatError if it
        is another game's or another run's)."""
        with open_checked(self.path, self.file_format, 1, self.what) as handle:
            attrs = handle.attrs
            tree = solver.tree
            if (str(attrs["game_spec"]), str(attrs["tree_fingerprint"])) != (tree.spec, tree.fingerprint):
                raise FileFormatError(f"{self.path}: the {self.what} is for another game")
            if str(attrs["settings"]) != self.settings:
                raise FileFormatError(f"{self.path}: the {self.what} was made with {attrs['settings']}")
            state = SolverState({name: read_dataset(handle, name) for name in handle},
                                attribute(handle, "iteration", int))
            history = json.loads(str(attrs["history"]))
        solver.load_state(state)
        return history
