"""An evaluation as every engine's output reports it, with exploitability in milli big
blinds per game (mbb/g), the poker field's unit, where the game has blinds. Imports only the
game rules, so a command that solves Leduc does not load the hold'em modules."""

from __future__ import annotations

from efgkit.core.evaluation import Evaluation
from efgkit.errors import EfgkitError
from efgkit.games.poker import LimitPoker
from efgkit.specs import make_game


def rules_of(spec: str):
    """The rules of the built-in game ``spec``; None for a game read from a file or OpenSpiel."""
    try:
        return make_game(spec)
    except EfgkitError:
        return None


def big_blind_fields(game, exploitability: float) -> tuple[dict, list[str]]:
    """mbb/g (milli big blinds per game: exploitability per big blind x 1000) as a JSON field
    and a text line, for a limit poker game (its larger blind, or its ante); none otherwise."""
    big_blind = max(game.blinds) if isinstance(game, LimitPoker) else 0
    if big_blind <= 0:
        return {}, []
    mbb = game.mbb(exploitability)
    return ({"exploitability_mbb_per_game": mbb},
            [f"exploitability {mbb:.3f} mbb/g (big blind {big_blind})"])


def evaluation_report(game, evaluation: Evaluation) -> tuple[dict, list[str]]:
    """JSON fields and text lines of ``evaluation`` of a strategy for ``game`` (its rules, or
    None): NashConv, each player's best-response value, mbb/g, the game value if computed."""
    data = evaluation.to_dict()
    lines = [f"NashConv {evaluation.nash_conv:.6e}  (NashConv/2, OpenSpiel's exploitability: "
             f"{evaluation.exploitability:.6e})",
             f"best-response values: player 0 {evaluation.best_response_values[0]:.9f}, "
             f"player 1 {evaluation.best_response_values[1]:.9f}"]
    fields, more = big_blind_fields(game, evaluation.exploitability)
    data.update(fields)
    lines += more
    if evaluation.game_value == evaluation.game_value:  # not NaN
        lines.append(f"game value (player 0): {evaluation.game_value:.9f}")
    return data, lines
