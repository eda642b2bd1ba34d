"""Typed metadata: the attributes and JSON fields a reader relies on, checked by type.

A file's metadata is untrusted input like its data: an edited (and re-sealed) file may hold
a list where a reader expects an object, or ``"many"`` for a count. Readers check every
field they use with ``checked`` / ``checked_fields`` when they read it, so a mismatch is one
FileFormatError naming the field, never a traceback in the code that uses the value later.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from efgkit.errors import FileFormatError

Expected = type | None | tuple[type | None, ...]
"""One type or several; None stands for JSON's null."""

_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a text", list: "a list",
          dict: "a JSON object", type(None): "null"}


def plain(value: object) -> object:
    """``value`` as plain Python: numpy scalars as Python scalars, bytes as text (an HDF5
    attribute may be either); anything else as it is."""
    if isinstance(value, np.generic):
        value = value.item()
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _fits(value: object, kind: type) -> bool:
    if isinstance(value, bool):
        return kind is bool  # JSON's true is no number
    return isinstance(value, kind) or (kind is float and isinstance(value, int))


def checked(value: object, expected: Expected, where: str) -> object:
    """``value`` (``plain``) if it has one of the ``expected`` types, else FileFormatError
    "WHERE is VALUE, expected ...". An integer is a number; true and false are neither."""
    value = plain(value)
    kinds = tuple(type(None) if kind is None else kind
                  for kind in (expected if isinstance(expected, tuple) else (expected,)))
    if not any(_fits(value, kind) for kind in kinds):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise FileFormatError(f"{where} is {shown}, expected {' or '.join(_NAMES[kind] for kind in kinds)}")
    return value


def checked_fields(record: object, fields: Mapping[str, Expected], where: str,
                   required: tuple[str, ...] = ()) -> dict:
    """``record`` after checking that it is a JSON object holding ``required``, and that each
    of ``fields`` it holds has its type (``checked``); other keys are left as they are."""
    record = checked(record, dict, where)
    for name in required:
        if name not in record:
            raise FileFormatError(f"{where} has no {name!r}")
    for name, expected in fields.items():
        if name in record:
            checked(record[name], expected, f"{where} field {name!r}")
    return record
