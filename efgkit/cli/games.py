"""`efgkit games` and `efgkit info`: what games exist and how big they are."""

from __future__ import annotations

import json

import click

from efgkit.cli.app import build_game, emit, json_option, main, size_lines
from efgkit.maps.infoset_map import InfosetMap
from efgkit.specs import ALIASES, registered_games


# --------------------------------------------------------------------------- games
@main.command()
@json_option
def games(as_json: bool) -> None:
    """List the built-in games, their parameters with defaults, and aliases."""
    entries = registered_games()
    listing = []
    lines = []
    for entry in entries.values():
        aliases = {alias: spec for alias, spec in ALIASES.items()
                   if spec.split("(")[0] == entry.name}
        parameters = [
            {"name": p.name, "type": p.kind.__name__, "default": p.default, "minimum": p.minimum,
             "maximum": p.maximum, "help": p.help}
            for p in entry.parameters
        ]
        listing.append({"name": entry.name, "summary": entry.summary, "parameters": parameters,
                        "aliases": aliases})
        lines.append(f"{entry.name}: {entry.summary}")
        for p in entry.parameters:
            bounds = "".join([f", min {p.minimum}" if p.minimum is not None else "",
                              f", max {p.maximum}" if p.maximum is not None else ""])
            default = json.dumps(p.default) if isinstance(p.default, bool) else p.default
            lines.append(f"    {p.name}={default} ({p.kind.__name__}{bounds}): {p.help}")
        if aliases:
            lines.append("    aliases: " + ", ".join(f"{a} = {s}" for a, s in aliases.items()))
    lines.append("openspiel:<name>(params): any two-player zero-sum OpenSpiel game "
                 "(needs open_spiel installed)")
    lines.append("efg:PATH: a two-player zero-sum game in Gambit's .efg format")
    lines.append("acpc:PATH: a limit poker game from an ACPC game definition (GAMEDEF ... END GAMEDEF)")
    emit(as_json, {"games": listing, "aliases": dict(ALIASES)}, lines)


# --------------------------------------------------------------------------- info
@main.command()
@click.argument("game")
@click.option("--node-limit", type=click.IntRange(min=1), default=None,
              help="Refuse to build trees with more nodes than this.")
@json_option
def info(game: str, node_limit: int | None, as_json: bool) -> None:
    """Sizes of GAME: histories, nodes by kind, infosets, and the coarsest abstraction."""
    tree, build_seconds = build_game(game, node_limit)
    sizes = tree.sizes()
    coarsest = InfosetMap.coarsest(tree).num_abstract
    data = {"game": tree.spec, **sizes, "build_seconds": build_seconds,
            "coarsest_abstract_infosets": coarsest}
    lines = size_lines(tree, build_seconds) + [
        f"infoset-actions {sizes['infoset_actions']:,}, max depth {sizes['max_depth']}, "
        f"{sizes['bytes_per_node']:.0f} bytes per node",
        f"coarsest abstraction (player, own-sequence length, #actions): "
        f"{coarsest:,} abstract infosets",
    ]
    emit(as_json, data, lines)
