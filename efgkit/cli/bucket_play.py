"""``efgkit evaluate --lbr`` and ``efgkit play`` for strategies on card abstractions (bucket
strategy files of ``efgkit solve --engine sampled``): local best response and duplicate
matches (docs/holdem.md)."""

from __future__ import annotations

import time
from pathlib import Path

import click

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


def _interval(estimate: Estimate, game) -> dict:
    low, high = estimate.confidence_interval
    return {"mbb_per_game": game.mbb(estimate.mean),
            "standard_error_mbb": game.mbb(estimate.standard_error),
            "ci95_low_mbb": game.mbb(low), "ci95_high_mbb": game.mbb(high)}


def _text(estimate: Estimate, game) -> str:
    mean = game.mbb(estimate.mean)
    if estimate.exact:
        return f"{mean:,.3f} mbb/g (every board)"
    half = game.mbb(estimate.confidence_interval[1]) - mean
    return f"{mean:,.3f} +- {half:,.3f} mbb/g (95% CI, {estimate.boards:,} boards)"


def lbr_fields(estimate: Estimate, game) -> tuple[dict, str]:
    """An LBR estimate as history fields (``lbr_mbb_per_game``, its interval, the boards) and text."""
    text = _text(estimate, game)
    return ({f"lbr_{key}": value for key, value in _interval(estimate, game).items()}
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
            **{f"lbr_{key}": value for key, value in _interval(estimate, game).items()},
            "lbr_seat_mbb_per_game": [game.mbb(s.mean) for s in seats], "big_blind": big_blind,
            "algorithm": provenance.get("algorithm"), "iterations": provenance.get("iterations"),
            "abstraction": layout.abstraction.description, "rows": layout.num_rows}
    lines = [f"{path}: {provenance.get('algorithm')} strategy for {game.spec} on "
             f"{layout.abstraction.description} ({layout.num_rows:,} rows)",
             f"local best response (Lisy & Bowling 2017; actions {actions}), a lower bound on exploitability "
             f"(NashConv/2): {_text(estimate, game)}",
             f"LBR in seat 0 {data['lbr_seat_mbb_per_game'][0]:,.3f}, in seat 1 "
             f"{data['lbr_seat_mbb_per_game'][1]:,.3f} mbb/g; every pair of hands on each board, "
             f"{seconds:.1f} s (big blind {big_blind:g})"]
    emit(as_json, data, lines)


def _strategy(path: str, game, option: str = "STRATEGY"):
    """The layout and strategy of a bucket-strategy file (.h5) or a compact bucket export (.efgs)."""
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file, load_bucket_strategy
    from efgkit.storage.compact_holdem import read_bucket_export

    if is_bucket_strategy_file(path):
        return load_bucket_strategy(path, game)[:2]
    _check_bucket_export(path, game, option)
    return read_bucket_export(path, game)


def _check_bucket_export(path: str, game, option: str) -> None:
    """Refuse ``path`` (given as ``option``), no bucket-strategy .h5, unless it is one's .efgs export."""
    from efgkit.storage.compact_holdem import is_bucket_export

    if not is_bucket_export(path, game):
        raise ParameterError(f"{option} {path}: not a bucket strategy of {game.spec} (a .h5 of efgkit "
                             f"solve --engine sampled or its .efgs export)")


def _opponent(against: str, game, betting):
    """The layout and strategy of ``--against``: a baseline name or a bucket-strategy file."""
    from efgkit.poker.streamed.match import BASELINES, baseline

    if against in BASELINES:
        return baseline(betting, against)
    if not Path(against).is_file():
        raise ParameterError(f"--against {against}: one of {', '.join(BASELINES)} or a bucket strategy file "
                             f"(.h5 of efgkit solve --engine sampled, or its .efgs export)")
    return _strategy(against, game, "--against")


def play_bucket_strategies(spec: str, path: str, against: str | None, hands: int | None, seat: int | None,
                           seed: int | None, as_json: bool, resolve: str | None = None,
                           resolve_iterations: int = 200) -> None:
    """A bucket strategy (.h5 or its .efgs export) against you at the terminal, or a duplicate
    match against a baseline or another file; with ``resolve`` a match of the strategy
    re-solving at decision time (``resolve.decision_time``) against ``against``."""
    game = poker_game(spec)
    if resolve is not None:
        if against is None:
            raise ParameterError("--resolve plays a match: give --against random|call|raise|fold|OTHER.h5")
        _resolving_match(game, path, against, hands, seed, resolve, resolve_iterations, as_json)
        return
    if against is None:
        _play_against_person(game, path, hands, seat, seed, as_json)
        return
    if seat is not None:
        raise ParameterError("--seat is for interactive play; a match plays both seats")
    _match(game, path, against, hands, seed, as_json)


def _match(game, path: str, against: str, boards: int | None, seed: int | None, as_json: bool) -> None:
    from efgkit.poker.streamed.match import HeadToHead

    layout, strategy = _strategy(path, game)
    opponent_layout, opponent = _opponent(against, game, layout.betting)
    boards = boards or 1000
    started = time.perf_counter()
    match = HeadToHead(layout, strategy, opponent_layout, opponent, seed=0 if seed is None else seed)
    with _progress_bar(boards, "playing") as bar:
        estimate = match.run(boards, progress=bar.update)
    big_blind = max(game.blinds)
    data = {"game": game.spec, "strategy": path, "opponent": against, "boards": boards, "seed": seed,
            "chips_per_game": estimate.mean, "standard_error_chips": estimate.standard_error,
            **_interval(estimate, game), "big_blind": big_blind}
    lines = [f"{path} against {against}: {_text(estimate, game)}",
             "duplicate: each board played in both seats with every pair of hands"]
    if match.dealer.num_boards <= EXACT_BOARDS:
        exact = HeadToHead(layout, strategy, opponent_layout, opponent).run()
        data["expected_mbb_per_game"] = game.mbb(exact.mean)
        lines.append(f"exact expected value: {_text(exact, game)}")
    data["seconds"] = time.perf_counter() - started
    emit(as_json, data, lines)


def _bot(game, path: str):
    """The strategy as a seat: a .h5 by its layout, a .efgs through its reader (by key, as a
    device plays it: no bucket table is unpacked)."""
    from efgkit.play.poker_hands import KeySeat, LayoutSeat
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file, load_bucket_strategy
    from efgkit.storage.compact_holdem import open_bucket_export

    if is_bucket_strategy_file(path):
        return LayoutSeat(*load_bucket_strategy(path, game)[:2]), None
    _check_bucket_export(path, game, "STRATEGY")
    reader = open_bucket_export(path, game)
    return KeySeat(reader, path), reader


class _Quit(Exception):
    """The person at the keyboard ended the session (q, or the end of the input)."""


class _Person:
    """A player at the terminal: sees its cards, the board and the betting, names an action
    (its number, its name, or its first letter) on standard input."""

    def __init__(self, game, err: bool) -> None:
        self.game, self.err = game, err

    def _cards(self, cards) -> str:
        return " ".join(self.game.card_structure.card_name(card) for card in cards) or "-"

    def choose(self, decision, rng) -> int:
        labels = decision.labels
        click.echo(f"  your cards {self._cards(decision.hand)}, board {self._cards(decision.board)}, "
                   f"betting {decision.betting_text}; pot {sum(decision.state.betting.contribution):g}",
                   err=self.err)
        prompt = "  " + "  ".join(f"[{i}] {label}" for i, label in enumerate(labels))
        while True:
            try:
                answer = click.prompt(prompt, err=self.err, prompt_suffix="? ").strip().lower()
            except click.Abort:
                raise _Quit from None
            if answer in ("q", "quit"):
                raise _Quit
            chosen = [i for i, label in enumerate(labels)
                      if answer in (str(i), label, label[:1])]
            if len(chosen) == 1:
                return chosen[0]
            click.echo(f"  type 0-{len(labels) - 1}, an action's name or its first letter (q quits)",
                       err=self.err)


def _play_against_person(game, path: str, hands: int | None, seat: int | None, seed: int | None,
                         as_json: bool) -> None:
    """Hands against the strategy at the terminal, the running result in mbb/hand."""
    import random

    from efgkit.play.poker_hands import Deal, play_hand

    bot, reader = _bot(game, path)
    person, rng = _Person(game, err=as_json), random.Random(seed)
    names = person._cards
    total, played = 0.0, 0
    try:
        while hands is None or played < hands:
            yours = played % 2 if seat is None else seat
            click.echo(f"hand {played + 1}: you are player {yours} "
                       f"({'big' if game.blinds[yours] >= game.blinds[1 - yours] else 'small'} blind "
                       f"{game.blinds[yours]:g})", err=as_json)
            deal = Deal.shuffled(game, rng)

            def show(decision, action, yours=yours):
                if decision.player != yours:
                    click.echo(f"  the strategy: {decision.labels[action]}", err=as_json)

            try:
                record = play_hand(game, (person, bot) if yours == 0 else (bot, person), deal, rng, show)
            except _Quit:
                break
            payoff = record.payoff if yours == 0 else -record.payoff
            total, played = total + payoff, played + 1
            shown = (f"the strategy held {names(deal.slots[1 - yours])}, board "
                     f"{names(deal.board(len(deal.slots)))}" if record.showdown else "a fold")
            click.echo(f"  {shown}: you {'won' if payoff > 0 else 'lost' if payoff < 0 else 'tied'} "
                       f"{abs(payoff):g} chips; {game.mbb(total / played):+,.0f} mbb/hand over {played} "
                       f"hand{'s' * (played != 1)}", err=as_json)
    finally:
        if reader is not None:
            reader.close()
    data = {"game": game.spec, "strategy": path, "mode": "interactive", "hands": played,
            "total_chips": total, "mbb_per_hand": game.mbb(total / played) if played else None}
    emit(as_json, data, [f"{played} hand{'s' * (played != 1)}, {total:+g} chips for you"
                         + (f" ({data['mbb_per_hand']:+,.0f} mbb/hand)" if played else "")])


class _ResolvingSeat:
    """A seat that asks a ``DecisionTimeResolver`` for its probabilities at each decision."""

    def __init__(self, resolver) -> None:
        self.resolver = resolver

    def choose(self, decision, rng) -> int:
        from efgkit.play.playout import sample

        row = self.resolver.probabilities(decision.hand, decision.board, decision.state.betting.history)
        return sample(row.tolist(), rng)


def _resolving_match(game, path: str, against: str, hands: int | None, seed: int | None, gadget: str,
                     iterations: int, as_json: bool) -> None:
    """The blueprint re-solving at decision time against ``against``: ``hands`` deals, each played
    in both seats (the re-solver's payoff summed over the pair), mean mbb/g with its 95% interval,
    and the time of every re-solver decision (mean, p95)."""
    import random

    import numpy as np

    from efgkit.play.poker_hands import Deal, LayoutSeat, play_hand
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.resolve.decision_time import DecisionTimeResolver

    buckets, strategy = _strategy(path, game)
    opponent = LayoutSeat(*_opponent(against, game, buckets.betting))
    tree = PublicTree(game)
    resolver = DecisionTimeResolver(tree, StrategyLayout.from_bucket_layout(tree, buckets), strategy,
                                    gadget=gadget, iterations=iterations)
    seat, rng, deals = _ResolvingSeat(resolver), random.Random(seed), hands or 200
    pairs = []
    started = time.perf_counter()
    with _progress_bar(deals, "playing") as bar:
        for _ in range(deals):
            deal = Deal.shuffled(game, rng)
            first = play_hand(game, (seat, opponent), deal, rng).payoff
            second = -play_hand(game, (opponent, seat), deal, rng).payoff
            pairs.append((first + second) / 2.0)
            bar.update(1)
    mean = float(np.mean(pairs))
    error = float(np.std(pairs, ddof=1) / np.sqrt(len(pairs))) if len(pairs) > 1 else float("nan")
    seconds = np.array(resolver.seconds)
    data = {"game": game.spec, "strategy": path, "opponent": against, "resolve": gadget,
            "resolve_iterations": iterations, "deals": deals, "seed": seed, "chips_per_game": mean,
            "mbb_per_game": game.mbb(mean), "ci95_mbb": game.mbb(1.96 * error),
            "decisions": int(seconds.size),
            "resolves": resolver.resolves, "seconds_per_decision_mean": float(seconds.mean()),
            "seconds_per_decision_p95": float(np.percentile(seconds, 95)),
            "seconds": time.perf_counter() - started}
    lines = [f"{path} re-solving ({gadget}, {iterations} iterations) against {against}: "
             f"{data['mbb_per_game']:+,.0f} +- {data['ci95_mbb']:,.0f} mbb/g over {deals} deals in both "
             f"seats",
             f"{data['decisions']} decisions, {resolver.resolves} re-solves; time per decision "
             f"mean {data['seconds_per_decision_mean'] * 1e3:.1f} ms, p95 "
             f"{data['seconds_per_decision_p95'] * 1e3:.1f} ms"]
    emit(as_json, data, lines)
