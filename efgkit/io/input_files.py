"""Which files efgkit opens for reading: regular files only.

Opening a FIFO for reading blocks until a writer comes, a device such as ``/dev/zero``
never ends and a directory is no file, so every reader checks the kind of file before
it opens one (``check_input_file``), and a name that is not a regular file is one line.
"""

from __future__ import annotations

import os
import stat

from efgkit.errors import FileFormatError
from efgkit.io.error_text import one_line


def check_input_file(path: str | os.PathLike, what: str) -> None:
    """FileFormatError unless ``path`` names a regular file (a symbolic link to one is fine);
    ``what`` names the file in the message ("strategy file", "the .efg file")."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = getattr(exc, "strerror", None) or one_line(exc)
        raise FileFormatError(f"{path}: cannot read {what} ({reason})") from None
    if not stat.S_ISREG(mode):
        raise FileFormatError(f"{path}: cannot read {what}: not a regular file (a FIFO, device or "
                              f"directory); efgkit reads regular files only")
