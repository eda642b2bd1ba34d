"""Local best response benchmark: the bound it finds, how close to exact, and how long it takes.

Measures (issue 14: "a lower bound on exploitability in mbb/g with a confidence interval,
for any hold'em strategy including 52-card ones, in minutes"):
* reduced decks where the exact best response is affordable: LBR (every board, or sampled
  boards with a 95% interval) beside the streamed engine's exact exploitability, for a
  CFR+ strategy solved on canonical hands and for always call / always fold;
* ``holdem(ranks=8)`` and heads-up limit hold'em (52 cards): LBR's bound and seconds for
  always call (HULHE exact: 1,163.476 mbb/g), always fold (750 exactly) and a strategy
  solved by CFR+ with public chance sampling for ``--solve-seconds`` on random suit-symmetric
  buckets (``IsomorphicCards.hashed``; no real bucket file is assumed to exist).

Run ``python benchmarks/bench_lbr.py`` (writes the "lbr" section of docs/benchmarks.md) or
``--quick`` for a smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time
from pathlib import Path

from markdown_sections import update_section

from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.local_best_response import LocalBestResponse
from efgkit.poker.streamed.match import baseline
from efgkit.poker.streamed.sampled_cfr import SampledCFR
from efgkit.specs import make_game

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HULHE_ALWAYS_CALL_MBB = 1163.476
SMALL_ACTIONS = ("fcr", "c/fcr")
"""LBR action sets on the two-round game: every action, or no raise before the flop."""


def solved(spec: str, buckets, seconds: float, iterations: int | None = None):
    """A CFR+ (public chance sampling) strategy on ``buckets`` (a tuple: random buckets;
    None: canonical hands) after ``iterations`` or ``seconds``; (layout, strategy, label)."""
    game = make_game(spec)
    cards = IsomorphicCards.canonical(game) if buckets is None else IsomorphicCards.hashed(game, buckets, 1)
    layout = BucketLayout(BettingTree(game), cards)
    solver = SampledCFR(layout, seed=0)
    start = time.perf_counter()
    while (solver.iteration < iterations if iterations else time.perf_counter() - start < seconds):
        solver.iterate(100)
    kind = "canonical" if buckets is None else "-".join(map(str, buckets)) + " random buckets"
    return layout, solver.average_strategy(), f"CFR+ {solver.iteration:,} it. ({kind})"


def lbr_row(spec: str, name: str, layout, strategy, boards: int | None, exact_mbb: float | str | None,
            rollouts: int, actions: str = "fcr") -> str:
    big_blind = max(layout.betting.game.blinds)
    start = time.perf_counter()
    lbr = LocalBestResponse(layout, strategy, rollouts=rollouts, actions=actions, seed=1)
    estimate = lbr.run(boards)
    seconds = time.perf_counter() - start
    mean = estimate.mean / big_blind * 1000
    half = (estimate.confidence_interval[1] - estimate.mean) / big_blind * 1000
    bound = f"{mean:,.1f}" + (" (every board)" if estimate.exact else f" +- {half:,.1f}")
    seats = " / ".join(f"{s.mean / big_blind * 1000:,.0f}" for s in lbr.seat_values_)
    if isinstance(exact_mbb, float):
        exact_text, ratio = f"{exact_mbb:,.1f}", f"{mean / exact_mbb:.2f}" if exact_mbb else "-"
    else:
        exact_text, ratio = exact_mbb or "not computed", "-"
    row = (f"| {spec} | {name} | {actions} | {bound} | {seats} | {exact_text} | {ratio} | "
           f"{estimate.boards:,} | {seconds:,.1f} s |")
    print(row, flush=True)
    return row


def exact_mbb(layout, strategy) -> float:
    evaluation = StreamedEvaluator(layout).evaluate(strategy, game_value=False)
    return evaluation.exploitability / max(layout.betting.game.blinds) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small games only; writes nothing")
    parser.add_argument("--boards", type=int, default=300, help="boards per LBR run at scale (default 300)")
    parser.add_argument("--solve-seconds", type=float, default=240, help="CFR+ time per large game")
    parser.add_argument("--rollouts", type=int, default=100, help="LBR completions per equity (default 100)")
    parser.add_argument("--actions", default="fcr,c/c/fcr/fcr",
                        help="LBR action sets tried on the solved four-round strategies (default "
                             "fcr,c/c/fcr/fcr)")
    args = parser.parse_args()
    rows = []
    small = "holdem(ranks=4,rounds=2)" if args.quick else "holdem(ranks=5,rounds=2)"
    layout, strategy, label = solved(small, None, 0, 200 if args.quick else 3000)
    exact = exact_mbb(layout, strategy)
    for actions in SMALL_ACTIONS:
        rows.append(lbr_row(small, label, layout, strategy, None, exact, args.rollouts, actions))
    random_strategy = layout.random(2)
    rows.append(lbr_row(small, "random (canonical)", layout, random_strategy, None,
                        exact_mbb(layout, random_strategy), args.rollouts))
    reduced = "holdem(ranks=4)" if args.quick else "holdem(ranks=5)"
    betting = BettingTree(make_game(reduced))
    for name in ("call", "fold"):
        layout, strategy = baseline(betting, name)
        rows.append(lbr_row(reduced, f"always {name}", layout, strategy, 20 if args.quick else 200,
                            exact_mbb(layout, strategy), args.rollouts))
    if not args.quick:
        for spec, buckets in (("holdem(ranks=8)", (64, 300, 300, 300)), ("holdem", (169, 1000, 1000, 1000))):
            betting = BettingTree(make_game(spec))
            for name in ("fold", "call"):
                layout, strategy = baseline(betting, name)
                known = (750.0 if name == "fold" else HULHE_ALWAYS_CALL_MBB if spec == "holdem" else None)
                rows.append(lbr_row(spec, f"always {name}", layout, strategy, args.boards, known,
                                    args.rollouts))
            layout, strategy, label = solved(spec, buckets, args.solve_seconds)
            for actions in args.actions.split(","):
                rows.append(lbr_row(spec, label, layout, strategy, args.boards,
                                    "hours (docs: full-game section)", args.rollouts, actions))
    table = "\n".join(["| game | strategy | LBR actions | LBR mbb/g (95% CI) | LBR seat 0 / seat 1 | "
                       "exact mbb/g | LBR / exact | boards | LBR time |",
                       "|---|---|---|---:|---:|---:|---:|---:|---:|", *rows])
    print(table)
    if not args.quick:
        machine = platform.processor() or platform.machine()
        header = (f"## Local best response — {datetime.date.today()}, {machine}, one core (shared)\n\n"
                  f"`python benchmarks/bench_lbr.py --boards {args.boards} --solve-seconds "
                  f"{args.solve_seconds:g} --rollouts {args.rollouts} --actions {args.actions}`: "
                  f"LBR (Lisý & Bowling 2017) plays every hand of both seats against the strategy's "
                  f"whole range on each sampled board (`efgkit/poker/streamed/local_best_response.py`); "
                  f"exact = NashConv/2 of the streamed best response. Target: a bound with a "
                  f"confidence interval for 52-card strategies in minutes.\n\n")
        update_section(DOCS, "lbr", header + table + "\n")


if __name__ == "__main__":
    main()
