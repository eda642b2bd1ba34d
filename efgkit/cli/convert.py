"""`efgkit convert`: move a game between Gambit .efg, ACPC game definitions and efgkit's
tree file (.npz, ``GameTree.save``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from efgkit.cli.app import build_game, check_writable, emit, json_option, main, size_lines
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.interop.acpc import write_acpc
from efgkit.interop.gambit_efg import write_efg

FORMAT_SUFFIXES = {"efg": (".efg",), "acpc": (".game", ".acpc", ".gamedef"), "tree": (".npz",)}
FORMAT_NAMES = {"efg": "Gambit .efg", "acpc": "ACPC game definition", "tree": "efgkit tree file"}
SPEC_PREFIXES = ("efg:", "acpc:", "openspiel:")


def _format_of_path(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    return next((name for name, suffixes in FORMAT_SUFFIXES.items() if suffix in suffixes), None)


def _read_input(source: str, node_limit: int | None) -> tuple[GameTree, str, float]:
    """The tree INPUT names (a file by its extension, else a game spec), its format, seconds."""
    kind = None if source.startswith(SPEC_PREFIXES) else _format_of_path(source)
    if kind == "tree":
        start = time.perf_counter()
        return GameTree.load(source), kind, time.perf_counter() - start
    spec = f"{kind}:{source}" if kind else source
    tree, seconds = build_game(spec, node_limit)
    return tree, kind or "spec", seconds


def _write_output(tree: GameTree, path: str, kind: str) -> None:
    if kind == "efg":
        write_efg(tree, path)
    elif kind == "acpc":
        write_acpc(tree, path)
    else:
        tree.save(path)


@main.command()
@click.argument("source", metavar="INPUT")
@click.argument("output", metavar="OUTPUT")
@click.option("--to", "to_format", type=click.Choice(sorted(FORMAT_SUFFIXES)), default=None,
              help="Output format; by default from OUTPUT's extension (.efg, .game/.acpc, .npz).")
@click.option("--node-limit", type=click.IntRange(min=1), default=None,
              help="Refuse to build trees with more nodes than this.")
@json_option
def convert(source: str, output: str, to_format: str | None, node_limit: int | None,
            as_json: bool) -> None:
    """Convert the game INPUT into OUTPUT.

    INPUT is a .efg file, an ACPC game definition (.game, .acpc, .gamedef), an efgkit tree
    file (.npz) or any game spec (leduc, P111, efg:PATH, acpc:PATH, openspiel:NAME).
    OUTPUT's format comes from its extension or --to: efg (any game), acpc (limit poker
    games that deal cards and have one bet size per round, e.g. kuhn, leduc) or tree
    (any game). OUTPUT is written atomically: a failure never damages an existing file.
    """
    output_format = to_format or _format_of_path(output)
    if output_format is None:
        raise ParameterError(f"cannot tell the format of OUTPUT {output!r} from its extension; "
                             f"use .efg, .game, .acpc, .gamedef or .npz, or --to")
    check_writable(output, "OUTPUT")
    tree, input_format, build_seconds = _read_input(source, node_limit)
    start = time.perf_counter()
    _write_output(tree, output, output_format)
    write_seconds = time.perf_counter() - start
    size = os.path.getsize(output)
    data = {"input": source, "input_format": input_format, "output": output,
            "output_format": output_format, "game": tree.spec, **tree.sizes(),
            "output_bytes": size, "build_seconds": build_seconds, "write_seconds": write_seconds}
    lines = size_lines(tree, build_seconds) + [
        f"wrote {output} ({FORMAT_NAMES[output_format]}, {size:,} bytes) in {write_seconds:.2f} s",
    ]
    emit(as_json, data, lines)
