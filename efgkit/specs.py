"""Game specs in OpenSpiel's style (``goofspiel(cards=5)``), aliases, and the game registry.

Spec loading sits above the games, interop and storage floors: game modules declare
their ``GameEntry`` (``games/parameters.py``) and never import this module.

``load_game(spec)`` is the one entry point: it parses the spec, makes the rules object
and compiles it (with the game's fast builder when it has one, else the generic
breadth-first builder). ``openspiel:<name>(params)`` imports an OpenSpiel game,
``efg:PATH`` reads a Gambit .efg file and ``acpc:PATH`` an ACPC game definition.
"""

from __future__ import annotations

import os
import re

from efgkit.errors import EfgkitError, FileFormatError, GameSpecError
from efgkit.games.builder import build_tree
from efgkit.games.parameters import GameEntry, Parameter
from efgkit.games.protocol import Game
from efgkit.games.tree import GameTree
from efgkit.io.error_text import one_line

ALIASES = {
    "P111": "poker(bets=1,raises=1,cap=1)",
    "P222": "poker(bets=2,raises=2,cap=2)",
    "P224": "poker(bets=2,raises=2,cap=4)",
    "GS3": "goofspiel(cards=3)",
    "GS4": "goofspiel(cards=4)",
    "GS5": "goofspiel(cards=5)",
    "GS6": "goofspiel(cards=6)",
    "GP5": "pursuit(moves=5)",
    "GP6": "pursuit(moves=6)",
    "HULHE": "holdem",
}


def registered_games() -> dict[str, GameEntry]:
    """Every built-in game family by name."""
    from efgkit.games import coin_toss, goofspiel, poker, pursuit

    entries = [*poker.ENTRIES, *goofspiel.ENTRIES, *pursuit.ENTRIES, *coin_toss.ENTRIES]
    return {entry.name: entry for entry in entries}


_SPEC = re.compile(r"^\s*([A-Za-z_][\w]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name(k=v,...)`` into the name and raw parameter strings."""
    match = _SPEC.match(spec)
    if not match:
        raise GameSpecError(f"cannot parse game spec {spec!r}; expected name or name(key=value,...)")
    name, body = match.group(1), match.group(2)
    raw: dict[str, str] = {}
    if body and body.strip():
        for item in body.split(","):
            if "=" not in item:
                raise GameSpecError(f"game spec {spec!r}: parameter {item.strip()!r} is not key=value")
            key, value = (part.strip() for part in item.split("=", 1))
            if key in raw:
                raise GameSpecError(f"game spec {spec!r}: parameter {key!r} given twice")
            raw[key] = value
    return name, raw


def _convert(entry: GameEntry, parameter: Parameter, text: str) -> object:
    where = f"game {entry.name!r}: parameter {parameter.name}={text!r}"
    if parameter.kind is bool:
        lowered = text.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise GameSpecError(f"{where} must be true or false")
    if parameter.kind is int:
        try:
            value = int(text)
        except ValueError:
            raise GameSpecError(f"{where} must be an integer") from None
        if parameter.minimum is not None and value < parameter.minimum:
            raise GameSpecError(f"{where} must be at least {parameter.minimum}")
        if parameter.maximum is not None and value > parameter.maximum:
            raise GameSpecError(f"{where} must be at most {parameter.maximum}")
        return value
    if parameter.kind is float:
        try:
            return float(text)
        except ValueError:
            raise GameSpecError(f"{where} must be a number") from None
    return text


def resolve_spec(spec: str) -> tuple[GameEntry, dict[str, object]]:
    """Parse and validate a spec (aliases resolved) into its entry and typed parameters."""
    spec = ALIASES.get(spec.strip(), spec)
    name, raw = parse_spec(spec)
    games = registered_games()
    entry = games.get(name)
    if entry is None:
        known = ", ".join(sorted(games)) + "; aliases " + ", ".join(ALIASES)
        raise GameSpecError(f"unknown game {name!r}; known games: {known}; or openspiel:<name>, "
                            f"efg:PATH, acpc:PATH")
    by_name = {p.name: p for p in entry.parameters}
    unknown = sorted(set(raw) - set(by_name))
    if unknown:
        valid = ", ".join(by_name) or "none"
        raise GameSpecError(f"game {name!r} has no parameter {unknown[0]!r}; valid: {valid}")
    params = {p.name: p.default for p in entry.parameters}
    for key, text in raw.items():
        params[key] = _convert(entry, by_name[key], text)
    return entry, params


def make_game(spec: str) -> Game:
    """The rules object for a spec (not compiled): an ``acpc:`` file's LimitPoker too."""
    if spec.startswith("acpc:"):
        from efgkit.interop.acpc import acpc_rules

        return acpc_rules(spec[len("acpc:"):])
    entry, params = resolve_spec(spec)
    return entry.factory(**params)


def canonical_spec(spec: str) -> str:
    """The canonical spelling of a spec: aliases expanded, defaults dropped."""
    if spec.startswith(("openspiel:", "efg:", "acpc:")):
        return spec
    entry, params = resolve_spec(spec)
    return entry.canonical_spec(params)


def load_game(spec: str, *, node_limit: int | None = None, progress: bool = False) -> GameTree:
    """Compile the game a spec names into a GameTree."""
    if spec.startswith("openspiel:"):
        from efgkit.interop.openspiel import import_openspiel_game

        return import_openspiel_game(spec[len("openspiel:"):], node_limit=node_limit,
                                     progress=progress)
    if spec.startswith("efg:"):
        from efgkit.interop.gambit_efg import load_efg

        return load_efg(spec[len("efg:"):], node_limit=node_limit, progress=progress)
    if spec.startswith("acpc:"):
        from efgkit.interop.acpc import load_acpc

        return load_acpc(spec[len("acpc:"):], node_limit=node_limit, progress=progress)
    game = make_game(spec)
    compile_fast = getattr(game, "compile", None)
    if compile_fast is not None:
        return compile_fast(node_limit=node_limit, progress=progress)
    return build_tree(game, node_limit=node_limit, progress=progress)


BUILT_FROM_FILES = ("efg:", "acpc:")


def spec_a_file_names(path: str | os.PathLike, spec: str) -> str:
    """``spec``, recorded in the file ``path``, as the game of a command given only the file.

    The file is untrusted: a spec that reads a file (``efg:``, ``acpc:``) is never opened
    on its say-so, so the user names such games as the command's GAME argument.
    """
    if spec.startswith(BUILT_FROM_FILES):
        raise FileFormatError(f"{path}: the strategy is for {spec!r}, a game read from a file; "
                              f"name it yourself as GAME before the file")
    return spec


def game_of_strategy_file(path: str | os.PathLike, *, node_limit: int | None = None) -> GameTree:
    """Build the game a strategy file names (``spec_a_file_names``), for commands given only
    the file. The tree's fingerprint is checked when the strategy is loaded.
    """
    from efgkit.storage.strategy_file import stored_game

    game_spec = spec_a_file_names(path, stored_game(path)[0])
    try:
        return load_game(game_spec, node_limit=node_limit)
    except EfgkitError as exc:
        raise FileFormatError(
            f"{path}: cannot build the file's game {game_spec!r} ({one_line(exc)})"
        ) from exc
