"""One writer per file: an advisory lock held for a whole run.

Two runs on one ``--state`` file (and its disk solver's working file) would interleave
their checkpoints and silently produce a wrong one; the second run is refused instead.
The lock is ``fcntl.flock`` on ``PATH.lock`` beside the file, released by the operating
system when the process ends however it ends, so a killed run never leaves it held. A run
that ends (normally, by an error or by Ctrl-C) removes the lock file while it still holds
it; a run that takes the lock checks that the file it locked is still the one at the path
(not one a finishing run just removed), else it takes the new one, so two runs never hold
locks on two different files of one path.
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
    while True:
        try:
            handle = open(lock_path, "a+")  # noqa: SIM115 (held open for the whole run)
        except OSError as exc:
            raise FileFormatError(f"{path}: cannot create its lock file {lock_path} "
                                  f"({exc.strerror})") from exc
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise FileFormatError(f"{path} is in use by another efgkit run; wait for it to finish or "
                                  f"choose another file") from None
        if _same_file(handle, lock_path):
            break
        handle.close()  # a finishing run removed the file after this one opened it
    try:
        yield
    finally:
        lock_path.unlink(missing_ok=True)
        handle.close()


def _same_file(handle, path: Path) -> bool:
    """Whether the open ``handle`` is the file at ``path`` now."""
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(handle.fileno())
    return (mine.st_dev, mine.st_ino) == (here.st_dev, here.st_ino)
