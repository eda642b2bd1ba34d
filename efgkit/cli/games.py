"""`efgkit games` and `efgkit info`: what games exist and how big they are."""

from __future__ import annotations

import json

import click

from efgkit.cli.app import build_game, emit, json_option, main, size_lines
from efgkit.errors import GameSpecError
from efgkit.specs import ALIASES, make_game, registered_games


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
    """Sizes of GAME: histories, nodes by kind, infosets, and the coarsest abstraction.

    Limit-poker games are counted from their rules first; one too large to build (heads-up
    limit hold'em) is reported from the count alone, with its public tree's size.
    """
    from efgkit.games.builder import node_limit_from_env
    from efgkit.maps.infoset_map import InfosetMap

    counted = counted_poker_size(game)
    limit = node_limit_from_env() if node_limit is None else node_limit
    if counted is not None and counted["histories"] > limit:
        emit(as_json, {**counted, "built": False}, [
            f"game {counted['game']}: {counted['histories']:.4g} histories, {counted['infosets']:.4g} "
            f"infosets (counted from the rules; over the node limit of {limit:,}, so not built)",
            *_public_tree_lines(counted),
        ])
        return
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
    if counted is not None:
        data["public_tree"] = {key: counted[key]
                               for key in ("betting_sequences", "public_tree_nodes", "hands")}
        lines += _public_tree_lines(counted)
    emit(as_json, data, lines)


def counted_poker_size(spec: str) -> dict | None:
    """``poker_game_size`` of a built-in limit-poker spec (with its canonical name), else None."""
    from efgkit.games.poker import LimitPoker
    from efgkit.poker.size import poker_game_size

    try:
        rules = make_game(spec)
    except GameSpecError:
        return None
    if not isinstance(rules, LimitPoker):
        return None
    return {"game": rules.spec, **poker_game_size(rules)}


def _public_tree_lines(counted: dict) -> list[str]:
    vector_bytes = counted["public_tree_nodes"] * counted["hands"] * 8
    return [f"public tree (poker engine): {counted['betting_sequences']:,} betting sequences, "
            f"{counted['public_tree_nodes']:.4g} nodes x {counted['hands']:,} hands "
            f"({vector_bytes:.3g} bytes per float64 vector over the whole tree)"]
