"""Every progress bar efgkit draws: tqdm on stderr, quiet unless asked (a command draws
bars only on a terminal and never under ``--json``: ``cli.app.show_progress``).

A pseudo-terminal without a window size (``script``, some CI runners and remote shells)
reports zero columns and zero rows, and tqdm then draws nothing at all (a bar of zero
characters, on a row past the screen's last). Such a terminal gets 80 columns and 24 rows
instead, so a long run is never silent where bars were asked for.
"""

from __future__ import annotations

import os
import sys

from tqdm import tqdm

FALLBACK_SIZE = {"ncols": 80, "nrows": 24}


def _size() -> dict[str, int]:
    """tqdm's size arguments: none (it asks the terminal) unless stderr is a terminal that
    reports no size."""
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return {}
    return FALLBACK_SIZE if columns == 0 else {}


def progress_bar(*args, enabled: bool, **kwargs) -> tqdm:
    """``tqdm(*args, **kwargs)`` on stderr, drawn only if ``enabled``, cleared when it ends
    unless ``leave=True``."""
    kwargs.setdefault("leave", False)
    return tqdm(*args, file=sys.stderr, disable=not enabled, **(_size() if enabled else {}), **kwargs)
