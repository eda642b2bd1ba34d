"""Exploitability in milli big blinds per game (mbb/g), the poker field's unit, for every
engine's output. Imports only the game rules, so a command that solves Leduc does not load
the hold'em modules."""

from __future__ import annotations

from efgkit.games.poker import LimitPoker


def big_blind_fields(game, exploitability: float) -> tuple[dict, list[str]]:
    """mbb/g (milli big blinds per game: exploitability per big blind x 1000) as a JSON field
    and a text line, for a limit poker game (its larger blind, or its ante); none otherwise."""
    big_blind = max(game.blinds) if isinstance(game, LimitPoker) else 0
    if big_blind <= 0:
        return {}, []
    mbb = exploitability / big_blind * 1000
    return ({"exploitability_mbb_per_game": mbb},
            [f"exploitability {mbb:.3f} mbb/g (big blind {big_blind})"])
