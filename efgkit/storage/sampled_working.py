"""The working file of a memory-mapped sampled solve (``efgkit solve --engine sampled --mapped``).

The solver's per-action arrays (regrets, average accumulator, current strategy,
instantaneous regrets) live in ``STATE.h5.work`` beside the state file, as contiguous
datasets mapped into the process (``mapped_arrays``), so an abstraction whose arrays are
larger than RAM comfortably holds runs: the kernels work on the maps in place, the
resident pages are dropped after every chunk of iterations (``release``) and the page
cache writes the dirty ones back.

Crash safety keeps the scheme of every efgkit checkpoint: the state file is only ever
replaced whole (written beside it, fsynced, renamed) from the working file's arrays, and
the working file is scratch. A run killed at any moment leaves the last checkpoint
intact; the working file then holds iterations past it (and possibly half an iteration),
so it is never trusted: every run, resumed or not, builds a new one and a resumed run
fills it from the checkpoint. A copy and a rename rather than two alternating slots in one
file: a slot scheme needs no copy at a checkpoint but needs a checksummed header and its
own reader, while the copy-and-rename keeps the state file an ordinary bucket-strategy
file (its sha256 per dataset, readable by ``efgkit evaluate`` and ``export``) and costs
one sequential write of the state per checkpoint, which checkpoints already paid.

A file at ``STATE.h5.work`` that is not such a working file (another file, or one damaged
at its header) is refused, never overwritten.
"""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

from efgkit.errors import FileFormatError
from efgkit.io.atomic import atomic_output_path
from efgkit.io.budget import check_disk_space
from efgkit.io.mapped_arrays import MappedFile, create_contiguous, create_file, slices

FORMAT = "efgkit-sampled-working"
VERSION = 1


def working_path(state: str | os.PathLike) -> Path:
    """Where the working file of the state file ``state`` lies."""
    return Path(f"{state}.work")


def is_working_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a working file of this format (a look at its root attributes; a
    regular file: h5py would block on a FIFO)."""
    if not Path(path).is_file():
        return False
    try:
        with h5py.File(path, "r") as handle:  # bool(): an edited attribute may be an array
            return bool(handle.attrs.get("format") == FORMAT and handle.attrs.get("version") == VERSION)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return False


class WorkingFile:
    """A new working file beside ``state``, its arrays mapped writable; ``allocate`` is
    ``SampledCFR``'s ``allocate``. A leftover working file of an earlier run is replaced;
    anything else at its path is a FileFormatError."""

    def __init__(self, state: str | os.PathLike) -> None:
        self.path = working_path(state)
        if self.path.exists() and not is_working_file(self.path):
            raise FileFormatError(f"{self.path}: exists and is not the working file of a mapped solve "
                                  f"(another file, or a damaged one); remove it or choose another --state")
        self.path.unlink(missing_ok=True)
        self._mapped: MappedFile | None = None

    def allocate(self, arrays: dict[str, tuple[int, np.dtype]]) -> dict[str, np.ndarray]:
        """Zeroed one-dimensional arrays ``{name: (length, dtype)}``, mapped from the file
        (checked against the disk's free space first; the file is removed if it fails)."""
        nbytes = sum(length * np.dtype(dtype).itemsize for length, dtype in arrays.values())
        check_disk_space(self.path, nbytes, "the working file of a --mapped solve")
        try:
            return self._allocate(arrays)
        except BaseException:
            self.remove()
            raise

    def _allocate(self, arrays: dict[str, tuple[int, np.dtype]]) -> dict[str, np.ndarray]:
        with atomic_output_path(self.path) as temporary:
            with create_file(temporary) as handle:
                handle.attrs.update(format=FORMAT, version=VERSION)
                for name, (length, dtype) in arrays.items():
                    create_contiguous(handle, name, (length,), np.dtype(dtype).newbyteorder("<"))
        self._mapped = MappedFile(self.path, writable=True)
        mapped = {}
        with h5py.File(self.path, "r") as handle:
            for name in arrays:
                mapped[name] = self._mapped.map(handle[name])
        for array in mapped.values():
            for part in slices(array.shape[0], array.dtype.itemsize):
                array[part] = 0
            self.release()
        return mapped

    def release(self) -> None:
        """Drop the maps' resident pages (the page cache keeps and writes back dirty ones)."""
        if self._mapped is not None:
            self._mapped.release()

    def remove(self) -> None:
        """Unmap and delete the file (after the final checkpoint holds everything)."""
        if self._mapped is not None:
            self._mapped.close()
            self._mapped = None
        self.path.unlink(missing_ok=True)
