"""Atomic file writes: a new file replaces its destination only once complete and on disk.

Every writer in efgkit (strategy, abstraction, feature, bucket, tree, compact and text
files) goes through ``atomic_output_path``, so a failure or a kill never leaves a
half-written file in place of a good one.
"""

from __future__ import annotations

import glob
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_output_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, else vanishes.

    The temporary file lives in the same directory so ``os.replace`` is atomic, and it is
    fsynced first, so a crash leaves either the old file or the complete new one. A
    process killed outright (SIGKILL) leaves its temporary behind, never in place of
    ``path``; ``remove_stale_temporaries`` deletes such leftovers.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        yield temporary
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a power cut
        finally:
            os.close(directory)
    finally:
        if temporary.exists():
            temporary.unlink()


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Delete temporaries of ``path`` left by writers that were killed (their process is gone)."""
    path = Path(path)
    removed = []
    for candidate in path.parent.glob(f".{glob.escape(path.name)}.*.*.tmp"):
        pid = candidate.name[len(path.name) + 2:].split(".")[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
