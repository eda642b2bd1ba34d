"""Progress bars: drawn on a terminal, also on a pseudo-terminal that reports no size (where
tqdm alone drew nothing), and never under --json or into a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from efgkit.io.progress import progress_bar

COMMAND = ["solve", "holdem(ranks=5)", "--engine", "sampled", "--buckets", "none", "-n", "200"]


def _on_a_sizeless_terminal(arguments: list[str]) -> str:
    """What ``efgkit ARGUMENTS`` writes to a pseudo-terminal of 0x0 characters."""
    parent, child = pty.openpty()  # a new pty has no window size: 0 rows, 0 columns
    try:
        process = subprocess.Popen([sys.executable, "-m", "efgkit", *arguments], stdin=child, stdout=child,
                                   stderr=child, close_fds=True)
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(parent, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=600) == 0
    finally:
        os.close(parent)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminals as on Linux")
def test_a_sampled_solve_draws_its_bar_on_a_terminal_without_a_size():
    text = _on_a_sizeless_terminal(COMMAND)
    assert "public chance sampling" in text and "it/s" in text and "/200" in text


def test_bars_are_quiet_when_not_asked_for(capsys):
    for _ in progress_bar(range(3), enabled=False, desc="quiet"):
        pass
    assert capsys.readouterr().err == ""
