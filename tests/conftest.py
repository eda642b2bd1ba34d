"""Fixtures shared by the command-line tests, and the suite's peak-memory report."""

import json
import os
import resource

import pytest
from click.testing import CliRunner


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def json_output():
    """Parse a successful command's one JSON object (failing with its stderr otherwise)."""

    def parse(result) -> dict:
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    return parse


_PEAKS = {"self": (0, ""), "children": (0, "")}
_RISES: list[tuple[int, str]] = []
"""The largest rises of this process's peak memory, each with the test during which it rose."""


def pytest_runtest_teardown(item):
    """Note the test after which this process's peak resident memory rose, and by how much
    (for the peak report of ``pytest_sessionfinish``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    if peak > _PEAKS["self"][0]:
        _RISES.append((peak - _PEAKS["self"][0], item.nodeid))
        _RISES.sort(reverse=True)
        del _RISES[5:]
        _PEAKS["self"] = (peak, item.nodeid)
    if children > _PEAKS["children"][0]:
        _PEAKS["children"] = (children, item.nodeid)


def pytest_sessionfinish(session):
    """With ``EFGKIT_TEST_PEAKS=FILE``, append this process's peak resident memory and that
    of its largest child (each with the test that reached it) and the five largest rises of
    its own peak (each with its test) to FILE, one JSON line per pytest process (each xdist
    worker and the controller)."""
    target = os.environ.get("EFGKIT_TEST_PEAKS")
    if target:
        line = {kind: {"bytes": peak, "test": test} for kind, (peak, test) in _PEAKS.items()}
        line["rises"] = [{"bytes": rise, "test": test} for rise, test in _RISES]
        with open(target, "a") as handle:
            handle.write(json.dumps(line) + "\n")
