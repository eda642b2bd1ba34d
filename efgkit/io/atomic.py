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

from efgkit.errors import FileFormatError
from efgkit.io.budget import check_disk_space
from efgkit.io.error_text import one_line

HEADER_BYTES = 64 * 1024
"""Room asked for beside a write's ``expected_bytes``: headers, attributes, alignment (plus
1/64 of the data)."""


@contextmanager
def atomic_output_path(path: str | os.PathLike, expected_bytes: int = 0) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, else vanishes.

    The temporary file lives in the same directory so ``os.replace`` is atomic, and it is
    fsynced first, so a crash leaves either the old file or the complete new one. A
    process killed outright (SIGKILL) leaves its temporary behind, never in place of
    ``path``; the next write of the same ``path`` deletes such leftovers of dead writers.
    A target that is not a regular file (a symbolic link, device, FIFO or directory) or
    whose temporary name would be too long is refused (FileFormatError) before anything
    is written. A writer that knows about how many bytes it writes says so
    (``expected_bytes``): a disk without room for them, and for the format's headers, is a
    DiskSpaceError before the write (HDF5 that runs out of space mid-write can leave the
    process to die of a segmentation fault at exit).
    """
    path = Path(path)
    problem = output_problem(path)
    if problem is not None:
        raise FileFormatError(f"{path}: {problem}")
    if expected_bytes:
        check_disk_space(path, expected_bytes + HEADER_BYTES + expected_bytes // 64, "writing it")
    remove_stale_temporaries(path)
    temporary = _temporary_name(path)
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


def write_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` at ``path`` through ``atomic_output_path``; a failing write is a
    one-line FileFormatError."""
    try:
        with atomic_output_path(path) as temporary:
            temporary.write_bytes(data)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({one_line(exc)})") from exc


def _temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def output_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot be written atomically as a regular file, or None if it can.

    Checked before any work, so a long run never ends in a failed write: a symbolic link
    or an existing non-regular file (``/dev/null``, a FIFO, a directory) is never
    replaced, and the temporary name beside it must fit the file system's name limit.
    """
    path = Path(path)
    if path.is_symlink():
        return "is a symbolic link; efgkit writes regular files only (give the link's target)"
    if path.exists() and not path.is_file():
        return "exists and is not a regular file (a directory, device or FIFO); efgkit replaces regular files"
    try:
        limit = os.pathconf(path.parent if str(path.parent) else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    overhead = len(f"..{4 * 2**20}.{'0' * 8}.tmp")  # the temporary's prefix and suffix
    if len(path.name) + overhead > limit:
        return f"the file name is too long ({len(path.name)} characters; at most {limit - overhead})"
    return None


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Delete temporaries of ``path`` left by writers that were killed (their process is gone)."""
    path = Path(path)
    removed = []
    for candidate in path.parent.glob(f".{glob.escape(path.name)}.*.*.tmp"):
        pid = candidate.name[len(path.name) + 2:].split(".")[0]
        if pid.isdigit() and not process_alive(int(pid)):
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` (on this machine) exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
