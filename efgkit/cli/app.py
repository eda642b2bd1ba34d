"""The ``efgkit`` command group and what every command shares: one-line errors with exit
code 2, ``--json`` output, progress bars, safe output files.

Every command has ``--help`` and ``--json`` (one JSON object on stdout, snake_case keys).
Progress bars go to stderr and only when it is a terminal. Bad input of any kind (an
EfgkitError or a click usage error) prints one line ``efgkit: error: ...`` on stderr and
exits with code 2; output files are written atomically, so a failure never damages them.
Exploitability is reported as NashConv (sum of both best-response gains, what Čermák et
al. plot) and NashConv/2 (OpenSpiel's "exploitability"), each labelled.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from efgkit.errors import EfgkitError, ParameterError, TreeTooLargeError
from efgkit.io.atomic import atomic_output_path, output_problem

if TYPE_CHECKING:
    from efgkit.games.poker import LimitPoker
    from efgkit.games.tree import GameTree

COMMANDS = {
    "build": ("efgkit.cli.build", "Build a memory-efficient abstraction of GAME (default leduc), measure "
                                  "memory against exploitability, and export the refined strategy for "
                                  "a small device."),
    "games": ("efgkit.cli.games", "List the built-in games, their parameters with defaults, and aliases."),
    "info": ("efgkit.cli.games", "Sizes of GAME: histories, nodes by kind, infosets, and the coarsest "
                                 "abstraction."),
    "solve": ("efgkit.cli.solve", "Solve GAME (default: leduc with CFR+) and report NashConv over "
                                  "iterations."),
    "evaluate": ("efgkit.cli.solve", "Exact NashConv, best-response values and game value of a stored "
                                     "strategy (for GAME, by default the game the file records)."),
    "refine": ("efgkit.cli.refine", "Refine an imperfect-recall abstraction of GAME until NashConv <= "
                                    "TARGET."),
    "tradeoff": ("efgkit.cli.refine", "Memory against exploitability: run refinements of GAME and record "
                                      "both as they go."),
    "cards": ("efgkit.cli.cards", "Bucket the card situations of poker GAME and turn the buckets into an "
                                  "abstraction."),
    "holdem-abstraction": ("efgkit.cli.holdem", "Build Texas hold'em card buckets, or look one up."),
    "resolve": ("efgkit.cli.resolve", "Re-solve subgames of the strategy in BLUEPRINT.h5 for GAME and splice "
                                      "them back."),
    "export": ("efgkit.cli.deploy", "Export STRATEGY.h5 as a compact .efgs file (or JSON / an OpenSpiel "
                                    "policy table)."),
    "play": ("efgkit.cli.deploy", "Play STRATEGY.efgs: against you at the terminal, or N hands --against "
                                  "random|OTHER.efgs."),
    "bot": ("efgkit.cli.bot", "Play STRATEGY (.efgs or a bucket strategy .h5) against the ACPC dealer at "
                              "HOST PORT."),
    "convert": ("efgkit.cli.convert", "Convert the game INPUT into OUTPUT."),
    "cfr-d": ("efgkit.cli.cfr_d", "Solve GAME by decomposition (CFR-D) and recover a complete strategy by "
                                  "re-solving."),
    "warm-up": ("efgkit.cli.warm_up", "Compile and cache the numba kernels of the common commands, so their "
                                      "first run is fast."),
}
"""Each command's module (imported only when the command runs, so ``efgkit --help`` starts
fast) and the one-line summary ``efgkit --help`` lists (tests check it is the command's own)."""


class _EfgkitGroup(click.Group):
    """A click group whose every user error is one stderr line and exit code 2, and whose
    commands are imported lazily from ``COMMANDS``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            importlib.import_module(COMMANDS[name][0])  # registers its commands on ``main``
        return self.commands.get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1] if name in COMMANDS else self.commands[name].get_short_help_str())
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.format_message())
            sys.exit(0)
        except click.ClickException as exc:
            fail(_usage_message(exc))
        except EfgkitError as exc:
            fail(str(exc))
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            fail(f"the disk is full ({exc}); free space or write to another folder "
                 f"(files that existed before the run are unchanged)")
        except click.Abort as exc:
            click.echo(f"efgkit: {exc}" if str(exc) else "efgkit: interrupted", err=True)
            sys.exit(130)
        sys.exit(result if isinstance(result, int) else 0)


class Interrupted(click.Abort):
    """Ctrl-C, with the one line that says what was kept (``efgkit: MESSAGE``, exit 130)."""


def interruption_note(iteration: int, out: str | None, state: str | None) -> str:
    """What an interrupted solve kept: the average strategy at ``iteration`` in ``out`` (the
    caller wrote it), the last checkpoint in ``state``, or nothing."""
    kept = []
    if out is not None:
        kept.append(f"the average strategy so far is in {out}")
    if state is not None:
        kept.append(f"{state} holds the last checkpoint (--resume continues it)")
    if not kept:
        return f"interrupted at iteration {iteration}; nothing was kept (use --out or --state to keep a run)"
    return f"interrupted at iteration {iteration}; " + "; ".join(kept)


def _usage_message(exc: click.ClickException) -> str:
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def fail(message: str) -> None:
    click.echo(f"efgkit: error: {' '.join(message.split()) or 'failed'}", err=True)
    sys.exit(2)


JSON_REQUESTED = "efgkit.json"
"""``click.Context.meta`` key: the running command was given ``--json``."""


def show_progress() -> bool:
    """Whether to draw progress bars (tqdm, on stderr): only on a terminal, and never under
    ``--json``, whose caller reads the output rather than watching it."""
    context = click.get_current_context(silent=True)
    as_json = context is not None and context.meta.get(JSON_REQUESTED, False)
    return not as_json and sys.stderr.isatty()


def emit(as_json: bool, data: dict, lines: list[str]) -> None:
    if as_json:
        click.echo(json.dumps(data))
    else:
        for line in lines:
            click.echo(line)


def build_game(spec: str, node_limit: int | None = None) -> tuple[GameTree, float]:
    from efgkit.specs import load_game

    start = time.perf_counter()
    try:
        tree = load_game(spec, node_limit=node_limit, progress=show_progress())
    except TreeTooLargeError as exc:
        from efgkit.games.poker import LimitPoker
        from efgkit.specs import make_game

        context = click.get_current_context(silent=True)
        message = str(exc)
        if context is not None and "node_limit" not in context.params:
            message = message.replace("--node-limit, ", "")  # only commands with it may suggest it
        if not spec.startswith(("efg:", "openspiel:")) and isinstance(make_game(spec), LimitPoker):
            message += (f"; limit poker this large needs no tree: efgkit build {spec!r}, or efgkit "
                        f"solve {spec!r} --engine sampled")
        raise TreeTooLargeError(message) from exc
    return tree, time.perf_counter() - start


def poker_game(spec: str) -> LimitPoker:
    """The limit-poker rules of ``spec`` (the sampled and streamed engines play nothing else)."""
    from efgkit.games.poker import LimitPoker
    from efgkit.specs import make_game

    game = make_game(spec)
    if not isinstance(game, LimitPoker):
        raise ParameterError(f"{spec}: the sampled and streamed engines play limit poker games only")
    return game


def size_lines(tree: GameTree, build_seconds: float) -> list[str]:
    sizes = tree.sizes()
    return [
        f"game {tree.spec}: {sizes['histories']:,} histories ({sizes['decision_nodes']:,} decision, "
        f"{sizes['chance_nodes']:,} chance, {sizes['terminal_nodes']:,} terminal), "
        f"{sizes['infosets']:,} infosets ({sizes['infosets_player0']:,} + "
        f"{sizes['infosets_player1']:,}), built in {build_seconds:.2f} s",
    ]


def _remember_json(context: click.Context, parameter: click.Parameter, value: bool) -> bool:
    context.meta[JSON_REQUESTED] = value
    return value


json_option = click.option("--json", "as_json", is_flag=True, callback=_remember_json,
                           help="Print one JSON object on stdout instead of text.")


@click.group(cls=_EfgkitGroup, no_args_is_help=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="efgkit")
def main() -> None:
    """Small, provably good strategies for two-player zero-sum imperfect-information games.

    A GAME is a spec in OpenSpiel's style: leduc, kuhn(cards=4), poker(bets=2,raises=2,cap=4),
    goofspiel(cards=5), pursuit(moves=5), an alias (P224, GS6, GP5, ...),
    openspiel:<name>(params), a Gambit file efg:PATH or an ACPC game definition acpc:PATH.
    `efgkit games` lists them. GAME is a command's first argument; a command whose input file
    records its game (evaluate, export, play) reads it from there when GAME is left out.
    """


def given_options(ctx: click.Context) -> set[str]:
    """The names of the parameters given on the command line (not left at their defaults)."""
    return {name for name in ctx.params
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}


def check_state_file(ctx: click.Context, state: str | None, resume: bool) -> None:
    """Refuse checkpoint options without ``--state``, an unwritable ``--state`` and an existing
    one without ``--resume``, before any work is done."""
    if state is None:
        needing = [name for name in ("checkpoint_every", "checkpoint_seconds", "resume", "mapped")
                   if name in given_options(ctx)]
        if needing:
            raise ParameterError(f"--{needing[0].replace('_', '-')} needs --state FILE.h5 (where "
                                 f"checkpoints go)")
        return
    check_writable(state, "--state")
    if Path(state).exists() and not resume:
        raise ParameterError(f"--state {state} exists; pass --resume to continue it or remove it")


def checkpoints_line(state: str, checkpoints) -> str:
    """Where a run's solver state went: ``state`` and its ``checkpoints`` (a CheckpointSchedule)."""
    return (f"solver state written to {state} ({checkpoints.written} checkpoint"
            f"{'s' * (checkpoints.written != 1)} in {checkpoints.seconds_writing:.2f} s)")


def check_writable(path: str | None, option: str) -> None:
    """Fail before a long solve, not after, if an output file cannot be written."""
    if path is None:
        return
    parent = Path(path).parent
    if not parent.is_dir():
        raise ParameterError(f"{option} {path}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise ParameterError(f"{option} {path}: directory {str(parent)!r} is not writable")
    if Path(path).is_dir():
        raise ParameterError(f"{option} {path} is a directory")
    problem = output_problem(path)
    if problem is not None:
        raise ParameterError(f"{option} {path} {problem}")


def save_figure(figure, path: str, option: str) -> None:
    import matplotlib.pyplot as plt

    try:
        with atomic_output_path(path) as temporary:
            figure.savefig(temporary, format="png", dpi=120)
    except OSError as exc:
        raise ParameterError(f"{option} {path}: cannot write ({exc})") from exc
    finally:
        plt.close(figure)


def with_options(options):
    def decorate(function):
        for option in reversed(options):
            function = option(function)
        return function
    return decorate
