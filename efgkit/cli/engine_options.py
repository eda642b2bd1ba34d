"""The engines of a command (``efgkit solve``, ``efgkit evaluate``) and the options each takes.

A command with several engines declares each as an ``Engine``: the options only it takes,
those it cannot run without, the algorithms it runs. One check refuses an option given to
an engine that does not take it, naming the engines that do, instead of a hand-written
"X only with --engine Y" per pair; ``describe_engines`` marks every such option in the
command's ``--help`` with its engines, so the help and the check cannot disagree.
"""

from __future__ import annotations

from typing import NamedTuple

import click

from efgkit.cli.app import given_options
from efgkit.errors import ParameterError


def flag_of(ctx: click.Context, name: str) -> str:
    """How ``--help`` spells the parameter ``name`` (``abstraction_file``: ``--abstraction``)."""
    return next(param.opts[0] for param in ctx.command.params if param.name == name)


def given_flags(ctx: click.Context, *names: str) -> list[str]:
    """The flags of the parameters ``names`` given on the command line, in that order."""
    return [flag_of(ctx, name) for name in names if name in given_options(ctx)]


class Engine(NamedTuple):
    """One engine of a command: ``takes`` the engine-specific options it accepts (parameter
    names; an option no engine takes is common to all), ``needs`` those it cannot run
    without, ``algorithms`` the ``--algorithm`` choices it runs (None: every one), and a
    ``refusal_note`` that says why it refuses the others."""

    name: str
    summary: str
    takes: frozenset[str] = frozenset()
    needs: tuple[str, ...] = ()
    algorithms: tuple[str, ...] | None = None
    refusal_note: str = ""

    def check(self, ctx: click.Context, engines: dict[str, Engine], algorithm: str | None = None) -> None:
        """Refuse, in one line, an option of another engine, a missing needed option or an
        algorithm this engine does not run."""
        given = given_options(ctx)
        for param in ctx.command.params:
            owners = [engine.name for engine in engines.values() if param.name in engine.takes]
            if param.name in given and owners and self.name not in owners:
                raise ParameterError(f"{param.opts[0]} goes with --engine {'|'.join(owners)}, not "
                                     f"--engine {self.name}{self.refusal_note}")
        for param in ctx.command.params:
            if param.name in self.needs and param.name not in given:
                raise ParameterError(f"--engine {self.name} needs {param.opts[0]} {param.metavar or ''}")
        if self.algorithms is not None and algorithm not in self.algorithms:
            raise ParameterError(f"--engine {self.name} runs {', '.join(self.algorithms)}, not "
                                 f"--algorithm {algorithm}")


def describe_engines(command: click.Command, engines: dict[str, Engine]) -> None:
    """Write the engines into ``command``'s ``--help``: ``--engine`` lists them with their
    summaries, every option only some engines take starts with their names."""
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        owners = [engine.name for engine in engines.values() if param.name in engine.takes]
        if param.name == "engine":
            param.help = "; ".join(f"{engine.name}: {engine.summary}" for engine in engines.values()) + \
                f" {param.help or ''}"
        elif owners:
            param.help = f"[{', '.join(owners)}] {param.help}"
