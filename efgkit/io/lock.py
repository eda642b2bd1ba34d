"""One writer per file: an advisory lock held for a whole run.

Two runs on one ``--state`` file (and its disk solver's working file) would interleave
their checkpoints and silently produce a wrong one; the second run is refused instead.
The lock is ``fcntl.flock`` on ``PATH.lock`` beside the file, released by the operating
system when the process ends however it ends, so a killed run never leaves it held.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from efgkit.errors import FileFormatError


@contextmanager
def exclusive_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold ``PATH.lock`` exclusively, or raise FileFormatError if another process holds it."""
    lock_path = Path(f"{path}.lock")
    try:
        handle = open(lock_path, "a+")  # noqa: SIM115 (held open for the whole run)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot create its lock file {lock_path} ({exc.strerror})") from exc
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FileFormatError(f"{path} is in use by another efgkit run; wait for it to finish or "
                                  f"choose another file") from None
        yield
    finally:
        handle.close()
