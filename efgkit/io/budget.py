"""One memory budget for every engine, and the disk space a file needs, checked before
anything is allocated.

The budget is EFGKIT_MEMORY_BUDGET (``8GiB``) if set, else half of this machine's memory.
Every engine asks ``check_memory`` before it allocates its large arrays (the GameTree
builder through its node limit, the sampled and public-tree solvers for their per-action
arrays, the streamed evaluator for its workspaces, card abstractions for their tables), so
a game or abstraction too large for the machine is one line naming the bytes and what to
change, never a traceback, a swap storm or the kernel's OOM killer. Files that are
memory-mapped for writing are checked against the free space of their folder and then
reserved (``mapped_arrays``): a full disk is an error before the run, never a SIGBUS in it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from efgkit.errors import DiskSpaceError, ParameterError
from efgkit.io.sizes import human_bytes, physical_memory, size_in_bytes

BUDGET_VARIABLE = "EFGKIT_MEMORY_BUDGET"


def memory_budget() -> int:
    """Bytes an engine may hold: EFGKIT_MEMORY_BUDGET if set, else half of this machine's memory."""
    raw = os.environ.get(BUDGET_VARIABLE)
    return physical_memory() // 2 if raw is None else size_in_bytes(raw, BUDGET_VARIABLE)


def check_memory(nbytes: int, what: str, advice: str) -> None:
    """ParameterError if ``what`` needs more than the memory budget: the bytes, the budget,
    and ``advice`` (what to change: coarser buckets, ``--mapped``, another machine)."""
    budget = memory_budget()
    if nbytes > budget:
        raise ParameterError(f"{what} needs {human_bytes(nbytes)} of memory, more than the budget of "
                             f"{human_bytes(budget)} ({BUDGET_VARIABLE}, default half of this machine's "
                             f"memory); {advice}")


def zeros_within_budget(arrays: dict[str, tuple[int, np.dtype]], what: str,
                        advice: str) -> dict[str, np.ndarray]:
    """Zeroed one-dimensional arrays ``{name: (length, dtype)}``, after ``check_memory`` of
    their total size."""
    check_memory(sum(int(length) * np.dtype(dtype).itemsize for length, dtype in arrays.values()),
                 what, advice)
    return {name: np.zeros(length, dtype) for name, (length, dtype) in arrays.items()}


def check_disk_space(path: str | os.PathLike, nbytes: int, what: str) -> None:
    """DiskSpaceError if the file system of ``path``'s folder has less than ``nbytes`` free."""
    folder = Path(path).resolve().parent
    free = shutil.disk_usage(folder).free
    if nbytes > free:
        raise DiskSpaceError(f"{path}: {what} needs {human_bytes(nbytes)} on disk, {folder} has "
                             f"{human_bytes(free)} free; free space or choose a folder on a larger disk")
