"""Sizes in bytes as people write them (``1GiB``, ``512MiB``, ``2GB``), and this machine's memory."""

from __future__ import annotations

import os
import re

from efgkit.errors import ParameterError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def size_in_bytes(text: str, what: str) -> int:
    """Bytes in ``text``; ParameterError naming ``what`` (an option or variable) otherwise."""
    match = _SIZE.match(text)
    if match is None:
        raise ParameterError(f"{what} {text!r}: expected a size like 1GiB, 512MiB or 2GB")
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "").upper()])


def physical_memory() -> int:
    """Bytes of memory this machine has (8 GiB if the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def human_bytes(count: float) -> str:
    """``count`` bytes as a short text in binary units (``7.3 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(count) < 1024 or unit == "TiB":
            return f"{count:.3g} {unit}" if unit != "B" else f"{int(count)} B"
        count /= 1024
    return f"{count:.3g} TiB"
