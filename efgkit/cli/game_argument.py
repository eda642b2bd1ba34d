"""How every command is given its game.

A command that needs a game takes it as its first positional argument (``efgkit solve
leduc``, ``efgkit info GS4``). A command whose input file records the game (a strategy file,
a bucket strategy, a compact ``.efgs``) takes ``[GAME] FILE``: without GAME it reads the
game from the file (never a game read from a file the file names:
``specs.spec_a_file_names``); with GAME, the file's reader refuses a file made for another
game.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import click

from efgkit.io.error_text import one_line


class GameAndFile(NamedTuple):
    """The ``[GAME] FILE`` arguments: the game named (None: the one the file records) and the file."""

    game: str | None
    path: str


def game_then_file(metavar: str):
    """The ``[GAME] FILE`` arguments of a command, as one parameter ``game_and_file`` (a
    ``GameAndFile``); ``metavar`` names the file in ``--help``."""
    def split(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> GameAndFile:
        if len(values) > 2:
            raise click.UsageError(f"expected [GAME] {metavar}, got {len(values)} arguments", ctx)
        path = click.Path(exists=True, dir_okay=False).convert(values[-1], param, ctx)
        return GameAndFile(values[0] if len(values) == 2 else None, path)

    return click.argument("game_and_file", nargs=-1, required=True, metavar=f"[GAME] {metavar}",
                          callback=split)


def recorded_game(path: str) -> str:
    """The game spec the strategy file ``path`` records: a bucket strategy (efgkit solve
    --engine sampled), a strategy file (another HDF5 file) or a compact ``.efgs``."""
    import h5py

    from efgkit.errors import FileFormatError
    from efgkit.specs import spec_a_file_names
    from efgkit.storage import bucket_strategy, strategy_file
    from efgkit.storage.compact_reader import CompactFormatError, CompactStrategy

    if bucket_strategy.is_bucket_strategy_file(path):
        return spec_a_file_names(path, bucket_strategy.stored_game(path))
    if Path(path).is_file() and h5py.is_hdf5(path):
        return spec_a_file_names(path, strategy_file.stored_game(path)[0])
    try:
        compact = CompactStrategy(path)
    except (CompactFormatError, OSError) as exc:
        raise FileFormatError(one_line(exc)) from exc
    compact.close()
    return spec_a_file_names(path, compact.spec)
