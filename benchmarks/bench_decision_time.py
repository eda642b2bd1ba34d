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

``--bot`` plays the same over the ACPC protocol: the Python dealer (``interop.acpc_protocol``,
duplicate deals) between ``efgkit bot BLUEPRINT.h5 --resolve resolve`` (its own process) and the
plain blueprint bot, on Leduc (card-blind blueprint) and holdem(ranks=5,rounds=2,caps=1-1)
(preflop lossless, 10 flop buckets of the pipeline): the match in mbb/g with its 95% interval,
the exact gain beside it, and the re-solving bot's time per decision (median, p95; the decisions
that re-solve their subgame against those that read a kept re-solve), wall and CPU seconds.
Results to ``benchmarks/results/decision-time-bot.json`` and a section of
docs/results-resolve-holdem.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
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


def bucket_blueprint(spec: str, flop_buckets: int, iterations: int, folder: Path):
    """A blueprint on the pipeline's buckets (preflop lossless, ``flop_buckets`` on the flop) by
    vector CFR+, saved with its bucket file in ``folder``; returns (path, tree, layout, strategy)."""
    from efgkit.abstraction.cards.holdem.features import hand_indexer
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.poker.materialised.vector_cfr import VectorCFR
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    game = make_game(spec)
    ranks = game.card_structure.num_ranks
    buckets_path = folder / "buckets.h5"
    classes = hand_indexer(0, ranks).round_size(0)
    build_abstraction(AbstractionOptions(buckets=(classes, flop_buckets), rounds=2, bins=8, num_ranks=ranks,
                                         opponent_clusters=4, seed=0), buckets_path)
    buckets = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, buckets_path))
    tree = PublicTree(game)
    layout = StrategyLayout.from_bucket_layout(tree, buckets)
    strategy = VectorCFR(tree, layout).iterate(iterations).average_strategy()
    path = folder / "blueprint.h5"
    save_bucket_strategy(path, buckets, strategy, {"algorithm": "cfr+", "iterations": iterations})
    return path, tree, layout, strategy


def exact_gain(tree, layout, strategy, iterations: int, isomorphic: bool = False) -> dict:
    """The re-solver's exact expected gain against the blueprint (chips per game, both seats)."""
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.resolve.vector_resolver import VectorResolver

    values = {}
    for player in (0, 1):
        result = VectorResolver(
            tree, layout, strategy, gadget="resolve", iterations=iterations, players=(player,),
            isomorphic=isomorphic,
        ).resolve()
        values[player] = evaluate_strategy(result.layout, result.strategy).game_value
        base = result.before
    both = VectorResolver(tree, layout, strategy, gadget="resolve", iterations=iterations,
                          isomorphic=isomorphic).resolve()
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


def bot_match(spec: str, flop_buckets: int | None, blueprint_iterations: int, resolve_iterations: int,
              hands: int) -> dict:
    """``efgkit bot --resolve resolve`` (a child process) against the plain blueprint bot through
    the Python dealer, duplicate deals; the match, the exact gain and the bot's decision times."""
    from efgkit.interop.acpc import game_definition
    from efgkit.interop.acpc_protocol import AcpcDealer, play_acpc, serve_in_thread
    from efgkit.specs import make_game
    from efgkit.storage.acpc_bot import open_policy

    game = make_game(spec)
    work = Path(tempfile.mkdtemp())
    started = time.process_time()
    if flop_buckets is None:
        path = work / "blueprint.h5"
        tree, layout, strategy = blueprint(spec, blueprint_iterations, path)
    else:
        path, tree, layout, strategy = bucket_blueprint(spec, flop_buckets, blueprint_iterations, work)
    blueprint_cpu = time.process_time() - started
    definition = game_definition(game)
    dealer = AcpcDealer(definition, hands, seed=7, duplicate=True, timeout=600)
    thread, outcome = serve_in_thread(dealer)
    bot = subprocess.Popen(
        [sys.executable, "-m", "efgkit", "bot", str(path), "127.0.0.1", str(dealer.ports[0]), "--resolve",
         "resolve", "--resolve-iterations", str(resolve_iterations), "--seed", "3", "--timeout", "600",
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    plain, _, close = open_policy(path, game)
    player = threading.Thread(target=play_acpc, args=("127.0.0.1", dealer.ports[1], definition, plain),
                              kwargs={"seed": 4, "timeout": 600}, daemon=True)
    player.start()
    out, err = bot.communicate()
    thread.join()
    player.join()
    close()
    if bot.returncode != 0 or "error" in outcome:
        raise RuntimeError(f"{err} {outcome.get('error')}")
    result = outcome["result"]
    mean, error, half = result.interval(0)
    to_mbb = 1000.0 / max(game.blinds)
    abstraction = "card-blind" if flop_buckets is None else f"{flop_buckets} flop buckets"
    row = {"game": spec, "blueprint": abstraction,
           "blueprint_iterations": blueprint_iterations, "blueprint_cpu_seconds": blueprint_cpu,
           "resolve_iterations": resolve_iterations, "hands": hands,
           "invalid_actions": list(result.invalid_actions), "mbb_per_game": mean * to_mbb,
           "ci95_mbb": half * to_mbb, **json.loads(out)}
    gain = exact_gain(tree, layout, strategy, resolve_iterations, isomorphic=flop_buckets is not None)
    row.update(gain, exact_gain_mbb=gain["exact_gain_chips"] * to_mbb)
    print(row, flush=True)
    return row


def bot_report(rows: list[dict]) -> str:
    def ms(value):
        return "-" if value is None else f"{value * 1e3:.2f}"

    lines = [
        "Written by `benchmarks/bench_decision_time.py --bot` (results in "
        "`benchmarks/results/decision-time-bot.json`). The Python ACPC dealer deals duplicate hands "
        "(each deal twice, the seats swapped) between `efgkit bot BLUEPRINT.h5 --resolve resolve` (its own "
        "process: the subgame after each board deal re-solved by Burch's safe gadget, blueprint "
        "best-response constraints) and the plain blueprint bot (`efgkit bot BLUEPRINT.h5`). The result "
        "is the re-solving bot's, with the 95% interval of the duplicate pairs, beside the exact gain "
        "(`VectorResolver`'s combined strategies, one player re-solved, against the blueprint). Time per "
        "decision in ms, wall (the machine shared by eight agents) and CPU; a decision that re-solves is "
        "the first of its player in a subgame (or after the kept re-solve was dropped), the others read a "
        "kept re-solve.",
        "",
        "| game | blueprint | re-solve iterations | hands | invalid actions | re-solving bot vs blueprint "
        "(mbb/g, 95%) | exact gain (mbb/g) | decisions | re-solves |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['game']} | {r['blueprint']}, {r['blueprint_iterations']} CFR+ iterations | "
            f"{r['resolve_iterations']} | {r['hands']:,} | {sum(r['invalid_actions'])} | "
            f"{r['mbb_per_game']:+,.1f} +- {r['ci95_mbb']:,.1f} | {r['exact_gain_mbb']:+,.1f} | "
            f"{r['decisions']:,} | {r['resolves']:,} |")
    lines += ["", "| game | decisions | all: median / p95 wall (CPU) | re-solving: median / p95 wall (CPU) | "
              "kept re-solve: median / p95 wall (CPU) | blueprint (before the deal): median wall (CPU) |",
              "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        cells = [f"{ms(r[f'{k}_seconds_median'])} / {ms(r[f'{k}_seconds_p95'])} "
                 f"({ms(r[f'{k}_cpu_seconds_median'])} / {ms(r[f'{k}_cpu_seconds_p95'])})"
                 for k in ("all", "resolved", "cached")]
        lines.append(f"| {r['game']} | {r['decisions']:,} | {' | '.join(cells)} | "
                     f"{ms(r['blueprint_seconds_median'])} ({ms(r['blueprint_cpu_seconds_median'])}) |")
    return "\n".join(lines)


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
    parser.add_argument("--bot", action="store_true", help="the re-solving bot over ACPC (module docstring)")
    parser.add_argument("--leduc-hands", type=int, default=20000)
    parser.add_argument("--holdem-hands", type=int, default=2000)
    args = parser.parse_args()
    if args.bot:
        if args.quick:
            print(bot_report([bot_match("leduc", None, 20, 20, 20)]))
            return
        rows = [bot_match("leduc", None, 1000, 200, args.leduc_hands),
                bot_match("holdem(ranks=5,rounds=2,caps=1-1)", 10, 300, 200, args.holdem_hands)]
        out = ROOT / "benchmarks" / "results" / "decision-time-bot.json"
        out.write_text(json.dumps(rows, indent=1))
        update_section(ROOT / "docs" / "results-resolve-holdem.md", "decision-time-bot",
                       "## The re-solving ACPC bot: time per decision and a match against its blueprint\n\n"
                       + bot_report(rows))
        print(f"wrote {out}")
        return
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
