"""Decision-time re-solving against the plain blueprint: match result and time per decision.

Blueprint: the card-blind abstraction (one bucket per betting decision, ``CardIndependent``)
solved by ``--blueprint-iterations`` of CFR+ on the public-tree engine, saved as a bucket
strategy. The re-solver (``efgkit play --resolve``) re-solves the subgame after each board deal
it reaches with the safe ``resolve`` gadget and plays a duplicate match against the plain
blueprint (``--against BLUEPRINT.h5``): mbb/g with its 95% interval and the time per decision
(mean, p95). On games whose subgames are few (Leduc) the match's exact value is also computed:
half the sum over seats of the re-solver's gain against the blueprint, from the combined
strategies of ``VectorResolver`` (one player re-solved, the other on the blueprint).

Results go to ``benchmarks/results/decision-time.json`` and a section of docs/results-cfrd.md.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from click.testing import CliRunner
from markdown_sections import update_section

ROOT = Path(__file__).resolve().parent.parent


def blueprint(spec: str, iterations: int, path: Path):
    """The card-blind CFR+ blueprint of ``spec`` saved at ``path``; returns its pieces."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import CardIndependent
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.poker.materialised.vector_cfr import VectorCFR
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    game = make_game(spec)
    buckets = BucketLayout(BettingTree(game), CardIndependent())
    tree = PublicTree(game)
    layout = StrategyLayout.from_bucket_layout(tree, buckets)
    strategy = VectorCFR(tree, layout).iterate(iterations).average_strategy()
    save_bucket_strategy(path, buckets, strategy, {"algorithm": "cfr+", "iterations": iterations})
    return tree, layout, strategy


def exact_gain(tree, layout, strategy, iterations: int) -> dict:
    """The re-solver's exact expected gain against the blueprint (chips per game, both seats)."""
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.resolve.vector_resolver import VectorResolver

    values = {}
    for player in (0, 1):
        result = VectorResolver(
            tree, layout, strategy, gadget="resolve", iterations=iterations, players=(player,)
        ).resolve()
        values[player] = evaluate_strategy(result.layout, result.strategy).game_value
        base = result.before
    both = VectorResolver(tree, layout, strategy, gadget="resolve", iterations=iterations).resolve()
    gain = 0.5 * ((values[0] - base.game_value) - (values[1] - base.game_value))
    return {
        "blueprint_value": base.game_value,
        "resolver_seat0_value": values[0],
        "resolver_seat1_value": values[1],
        "exact_gain_chips": gain,
        "blueprint_nash_conv": base.nash_conv,
        "resolved_nash_conv": both.after.nash_conv,
    }


def run(spec: str, blueprint_iterations: int, resolve_iterations: int, deals: int, exact: bool) -> dict:
    from efgkit.cli import main
    from efgkit.specs import make_game

    work = Path(tempfile.mkdtemp())
    path = work / "blueprint.h5"
    tree, layout, strategy = blueprint(spec, blueprint_iterations, path)
    result = CliRunner().invoke(
        main,
        [
            "play",
            spec,
            str(path),
            "--against",
            str(path),
            "--resolve",
            "resolve",
            "--resolve-iterations",
            str(resolve_iterations),
            "--hands",
            str(deals),
            "--seed",
            "0",
            "--json",
        ],
    )
    if result.exit_code != 0:
        raise RuntimeError(result.output)
    row = {"game": spec, "blueprint_iterations": blueprint_iterations, **json.loads(result.stdout)}
    if exact:
        gain = exact_gain(tree, layout, strategy, resolve_iterations)
        big_blind = max(make_game(spec).blinds)
        row.update(gain, exact_gain_mbb=1000.0 * gain["exact_gain_chips"] / big_blind)
    print(row, flush=True)
    return row


def report(rows: list[dict]) -> str:
    lines = [
        "Written by `benchmarks/bench_decision_time.py` (results in "
        "`benchmarks/results/decision-time.json`). Blueprint: the card-blind abstraction solved by "
        "CFR+; the re-solver re-solves the subgame after each board deal with Burch's safe gadget "
        "(`efgkit play --resolve resolve`) and plays the plain blueprint, every deal in both seats.",
        "",
        "| game | re-solve iterations | deals | re-solver vs blueprint (mbb/g, 95%) | exact gain (mbb/g) | "
        "decisions | re-solves | time/decision mean | p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        exact = f"{r['exact_gain_mbb']:+,.0f}" if "exact_gain_mbb" in r else "-"
        lines.append(
            f"| {r['game']} | {r['resolve_iterations']} | {r['deals']} | {r['mbb_per_game']:+,.0f} +- "
            f"{r['ci95_mbb']:,.0f} | {exact} | {r['decisions']} | {r['resolves']} | "
            f"{r['seconds_per_decision_mean'] * 1e3:.0f} ms | {r['seconds_per_decision_p95'] * 1e3:.0f} ms |"
        )
    for r in rows:
        if "blueprint_nash_conv" in r:
            lines += [
                "",
                f"{r['game']}: blueprint NashConv {r['blueprint_nash_conv']:.4f}, both players "
                f"re-solved {r['resolved_nash_conv']:.4f} (chips).",
            ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--holdem-deals", type=int, default=60)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        rows = [run("leduc", 20, 20, 4, exact=True)]
        print(report(rows))
        return
    rows = [
        run("leduc", 1000, 500, args.deals, exact=True),
        run("holdem(ranks=3,rounds=2)", 200, 100, args.holdem_deals, exact=False),
    ]
    out = ROOT / "benchmarks" / "results" / "decision-time.json"
    out.write_text(json.dumps(rows, indent=1))
    update_section(
        ROOT / "docs" / "results-cfrd.md",
        "decision-time",
        "## Decision-time re-solving in play\n\n" + report(rows),
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
