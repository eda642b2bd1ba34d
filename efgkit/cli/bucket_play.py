"""``efgkit evaluate --lbr`` and ``efgkit play`` for strategies on card abstractions (bucket
strategy files of ``efgkit solve --engine sampled``): local best response and duplicate
matches (docs/holdem.md)."""

from __future__ import annotations

import time

from efgkit.cli.app import emit, poker_game, show_progress
from efgkit.errors import ParameterError
from efgkit.io.progress import progress_bar
from efgkit.poker.streamed.board_walk import Estimate

EXACT_BOARDS = 5000
"""Games with at most this many boards also get a match's exact expected value."""


def board_count(text: str) -> int | None:
    """``--lbr``'s argument: a number of boards (>= 2), or ``all`` (None: every board)."""
    if text == "all":
        return None
    if not text.isdigit() or int(text) < 2:
        raise ParameterError(f"--lbr {text}: a number of boards >= 2, or all")
    return int(text)


def _mbb(chips: float, big_blind: float) -> float:
    return chips / big_blind * 1000


def _interval(estimate: Estimate, big_blind: float) -> dict:
    low, high = estimate.confidence_interval
    return {"mbb_per_game": _mbb(estimate.mean, big_blind),
            "standard_error_mbb": _mbb(estimate.standard_error, big_blind),
            "ci95_low_mbb": _mbb(low, big_blind), "ci95_high_mbb": _mbb(high, big_blind)}


def _text(estimate: Estimate, big_blind: float) -> str:
    mean = _mbb(estimate.mean, big_blind)
    if estimate.exact:
        return f"{mean:,.3f} mbb/g (every board)"
    half = _mbb(estimate.confidence_interval[1], big_blind) - mean
    return f"{mean:,.3f} +- {half:,.3f} mbb/g (95% CI, {estimate.boards:,} boards)"


def lbr_fields(estimate: Estimate, big_blind: float) -> tuple[dict, str]:
    """An LBR estimate as history fields (``lbr_mbb_per_game``, its interval, the boards) and text."""
    text = _text(estimate, big_blind)
    return ({f"lbr_{key}": value for key, value in _interval(estimate, big_blind).items()}
            | {"lbr_boards": estimate.boards, "lbr_text": text}), text


def _progress_bar(total: int, description: str):
    return progress_bar(total=total, unit="board", desc=description, enabled=show_progress())


def evaluate_lbr(spec: str, path: str, bucket_file: str | None, boards: int | None, rollouts: int,
                 preflop_rollouts: int, actions: str, seed: int, as_json: bool) -> None:
    """Local best response against a bucket-strategy file: a lower bound on exploitability."""
    from efgkit.poker.streamed.local_best_response import LocalBestResponse
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    game = poker_game(spec)
    layout, strategy, provenance, _ = load_bucket_strategy(path, game, bucket_file)
    started = time.perf_counter()
    lbr = LocalBestResponse(layout, strategy, rollouts=rollouts, preflop_rollouts=preflop_rollouts,
                            actions=actions, seed=seed)
    with _progress_bar(lbr.dealer.num_boards if boards is None else boards, "local best response") as bar:
        estimate = lbr.run(boards, progress=bar.update)
    seconds = time.perf_counter() - started
    big_blind = max(game.blinds)
    seats = lbr.seat_values_
    data = {"game": game.spec, "engine": "lbr", "boards": estimate.boards, "every_board": estimate.exact,
            "rollouts": rollouts, "preflop_rollouts": preflop_rollouts, "lbr_actions": actions, "seed": seed,
            "seconds": seconds,
            "lbr_chips_per_game": estimate.mean, "lbr_standard_error_chips": estimate.standard_error,
            **{f"lbr_{key}": value for key, value in _interval(estimate, big_blind).items()},
            "lbr_seat_mbb_per_game": [_mbb(s.mean, big_blind) for s in seats], "big_blind": big_blind,
            "algorithm": provenance.get("algorithm"), "iterations": provenance.get("iterations"),
            "abstraction": layout.abstraction.description, "rows": layout.num_rows}
    lines = [f"{path}: {provenance.get('algorithm')} strategy for {game.spec} on "
             f"{layout.abstraction.description} ({layout.num_rows:,} rows)",
             f"local best response (Lisy & Bowling 2017; actions {actions}), a lower bound on exploitability "
             f"(NashConv/2): {_text(estimate, big_blind)}",
             f"LBR in seat 0 {data['lbr_seat_mbb_per_game'][0]:,.3f}, in seat 1 "
             f"{data['lbr_seat_mbb_per_game'][1]:,.3f} mbb/g; every pair of hands on each board, "
             f"{seconds:.1f} s (big blind {big_blind:g})"]
    emit(as_json, data, lines)


def _opponent(against: str, game, betting):
    """The layout and strategy of ``--against``: a baseline name or a bucket-strategy file."""
    from efgkit.poker.streamed.match import BASELINES, baseline
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file, load_bucket_strategy

    if against in BASELINES:
        return baseline(betting, against)
    if not is_bucket_strategy_file(against):
        raise ParameterError(f"--against {against}: one of {', '.join(BASELINES)} or a bucket strategy file "
                             f"(efgkit solve --engine sampled --out)")
    layout, strategy, _, _ = load_bucket_strategy(against, game)
    return layout, strategy


def play_bucket_strategies(spec: str, path: str, against: str | None, boards: int | None, seed: int | None,
                           as_json: bool) -> None:
    """A duplicate match of a bucket-strategy file against a baseline or another file."""
    from efgkit.poker.streamed.match import BASELINES, HeadToHead
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    if against is None:
        raise ParameterError(f"{path}: a bucket strategy plays matches: pass --against "
                             f"{'|'.join(BASELINES)}|OTHER.h5")
    game = poker_game(spec)
    layout, strategy, _, _ = load_bucket_strategy(path, game)
    opponent_layout, opponent = _opponent(against, game, layout.betting)
    boards = boards or 1000
    started = time.perf_counter()
    match = HeadToHead(layout, strategy, opponent_layout, opponent, seed=0 if seed is None else seed)
    with _progress_bar(boards, "playing") as bar:
        estimate = match.run(boards, progress=bar.update)
    big_blind = max(game.blinds)
    data = {"game": game.spec, "strategy": path, "opponent": against, "boards": boards, "seed": seed,
            "chips_per_game": estimate.mean, "standard_error_chips": estimate.standard_error,
            **_interval(estimate, big_blind), "big_blind": big_blind}
    lines = [f"{path} against {against}: {_text(estimate, big_blind)}",
             "duplicate: each board played in both seats with every pair of hands"]
    if match.dealer.num_boards <= EXACT_BOARDS:
        exact = HeadToHead(layout, strategy, opponent_layout, opponent).run()
        data["expected_mbb_per_game"] = _mbb(exact.mean, big_blind)
        lines.append(f"exact expected value: {_text(exact, big_blind)}")
    data["seconds"] = time.perf_counter() - started
    emit(as_json, data, lines)
