"""Marked sections of a shared markdown results page (docs/benchmarks.md).

Each benchmark owns the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` and
rewrites only that, so re-running one benchmark never erases another's results.
"""

from __future__ import annotations

from pathlib import Path


def update_section(path: Path, name: str, text: str) -> None:
    """Replace section ``name`` of ``path`` with ``text`` (appended when absent), atomically."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{text.strip()}\n{end}"
    current = path.read_text() if path.exists() else ""
    if start in current and end in current:
        before, rest = current.split(start, 1)
        updated = before + block + rest.split(end, 1)[1]
    else:
        updated = current.rstrip("\n") + ("\n\n" if current else "") + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(updated)
    temporary.replace(path)
