"""The ``efgkit`` command. Each module registers its commands on the group in ``app``; the
group imports a module only when one of its commands runs (``app.COMMANDS``)."""

from efgkit.cli.app import main

__all__ = ["main"]
