"""Fixtures shared by the command-line tests."""

import json

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
