"""The ``efgkit`` command. Each module registers its commands on the group in ``app``."""

from efgkit.cli import cards, convert, deploy, games, holdem, refine, resolve, solve  # noqa: F401  (registers the commands)
from efgkit.cli.app import main

__all__ = ["main"]
