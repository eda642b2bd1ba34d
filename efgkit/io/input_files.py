"""Which files efgkit opens for reading: regular files only, and never one because a file
says where it is.

Opening a FIFO for reading blocks until a writer comes, a device such as ``/dev/zero``
never ends and a directory is no file, so every reader checks the kind of file before
it opens one (``check_input_file``). A file's content is untrusted input: a file it
refers to (the bucket file a strategy was computed on, say) is looked for by its name
beside the referring file, never in a folder the content names, unless the user names
the file; either way the reader checks its digest (``referenced_file``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath

from efgkit.errors import FileFormatError
from efgkit.io.error_text import one_line


def check_input_file(path: str | os.PathLike, what: str) -> None:
    """FileFormatError unless ``path`` names a regular file (a symbolic link to one is fine);
    ``what`` names the file in the message ("strategy file", "the .efg file")."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = ("no such file" if isinstance(exc, FileNotFoundError)
                  else getattr(exc, "strerror", None) or one_line(exc))
        raise FileFormatError(f"{path}: cannot read {what} ({reason})") from None
    if not stat.S_ISREG(mode):
        raise FileFormatError(f"{path}: cannot read {what}: not a regular file (a FIFO, device or "
                              f"directory); efgkit reads regular files only")


def referenced_file(referring: str | os.PathLike, recorded: object, given: str | os.PathLike | None,
                    what: str, option: str) -> Path:
    """Where to open the ``what`` that the file ``referring`` recorded as ``recorded`` (a path
    or a name): ``given``, a file the user named with ``option``, or else the recorded
    file's name beside ``referring`` (the folder recorded is never followed). FileFormatError
    if the record is no file name or no regular file is there; the caller checks the digest.
    """
    if given is not None:
        location = Path(given)
    else:
        name = PurePath(recorded).name if isinstance(recorded, str) and "\0" not in recorded else ""
        if name in ("", ".", ".."):
            raise FileFormatError(f"{referring}: names its {what} as {recorded!r}, not a file name")
        location = Path(referring).parent / name
    if not location.is_file():
        raise FileFormatError(f"{referring} was computed on the {what} {location}, which is missing; "
                              f"pass the file with {option}")
    return location
