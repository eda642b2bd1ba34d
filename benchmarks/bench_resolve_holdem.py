"""Brown & Sandholm's Tables 1-3 shape on reduced flop or turn hold'em, measured exactly on the poker engine.

For each bucket count of the game's last round: a ``--rounds R`` bucket file (R the game's
rounds), every earlier round unabstracted (one bucket per suit-isomorphic (hole, board) class:
the preflop classes, and in the turn game the canonical flop hands), a blueprint solved by
vector CFR+ on these buckets, then every technique re-solves every subgame right after the last
round's board card with both players' hands unabstracted (``resolve.vector_resolver``; one board
per suit-isomorphism class, the bucket blueprint being suit-symmetric) and the combined strategy
is evaluated exactly. Prints and writes JSON; CPU seconds per run and the process's peak RSS so
far (``ru_maxrss``: monotone, so a run's own peak is at most the value shown).

``--engine streamed`` takes games whose public tree does not fit: the blueprint by sampled CFR+
(public chance sampling, ``--blueprint-iterations``), evaluated by the streamed best response,
every technique by the streamed re-solver one flop at a time (``resolve.streamed_resolver``, the
cut after the last round's card; one flop and one later board per suit class).

    python benchmarks/bench_resolve_holdem.py --game 'holdem(ranks=5,rounds=2,caps=1-1)' \
        --buckets 10,100 --iterations 30 --out /tmp/resolve-holdem.json
    python benchmarks/bench_resolve_holdem.py --game 'holdem(ranks=3,rounds=3,caps=1-1-1)' \
        --buckets 5,25,125 --iterations 30 --out /tmp/resolve-turn.json
    python benchmarks/bench_resolve_holdem.py --game 'holdem(ranks=5,rounds=3,caps=1-1-1)' \
        --engine streamed --buckets 50,500 --blueprint-iterations 20000 --out /tmp/turn5.json
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

TECHNIQUES = (
    ("Unsafe", "unsafe", "br", True),
    ("Resolve", "resolve", "br", True),
    ("Maxmargin", "maxmargin", "br", True),
    ("Reach-Maxmargin", "reach-maxmargin", "br", True),
    ("Reach-Maxmargin (not split)", "reach-maxmargin", "br", False),
    ("Estimated", "resolve", "selfplay", True),
    ("Estimated + Distributional", "distributional-hedge", "selfplay", True),
    ("Reach-Estimated + Distributional", "reach-distributional-hedge", "selfplay", True),
    ("Reach-Estimated + Distributional (not split)", "reach-distributional-hedge", "selfplay", False),
)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def final_round_strength_buckets(game, count: int, seed: int):
    """``count`` buckets of the last round's canonical hands by 1-D k-means of E[HS] against a
    uniform opponent hand (the pipeline's ``ehs`` method for a final street: with no card to come
    E[HS] orders hands), weighted by the deals each class stands for, for decks the pipeline
    does not take (fewer than 5 ranks); identical strengths share a bucket, and no more distinct
    strengths than ``count`` is lossless. int64 (canonical hands,)."""
    import numpy as np
    from sklearn.cluster import KMeans

    from efgkit.abstraction.cards.holdem.features import hand_indexer
    from efgkit.games.hand_ranking import evaluate

    cards = game.card_structure
    board_cards = sum(cards.public_cards_per_round)
    indexer = hand_indexer(board_cards, cards.num_ranks)
    classes = np.arange(indexer.round_size(indexer.num_rounds - 1))
    hands = indexer.unindex(indexer.num_rounds - 1, classes).astype(np.int64)
    weight = indexer.multiplicity(indexer.num_rounds - 1, classes).astype(np.float64)
    strength = np.empty(classes.shape[0])
    for i, row in enumerate(hands.tolist()):
        hole, board = row[:2], row[2:]
        mine = evaluate((*hole, *board), cards.num_ranks, cards.num_suits)
        left = [c for c in range(cards.num_cards) if c not in row]
        score = [0.0, 0.0]
        for a in range(len(left)):
            for b in range(a + 1, len(left)):
                theirs = evaluate((left[a], left[b], *board), cards.num_ranks, cards.num_suits)
                score[0] += (mine > theirs) + 0.5 * (mine == theirs)
                score[1] += 1.0
        strength[i] = score[0] / score[1]
    distinct, inverse = np.unique(strength, return_inverse=True)
    if distinct.shape[0] <= count:
        return inverse.astype(np.int64)
    model = KMeans(count, n_init=3, random_state=seed).fit(strength[:, None], sample_weight=weight)
    return model.labels_.astype(np.int64)


def lossless_before_last_round(game, path: Path, count: int, seed: int):
    """The card abstraction of a blueprint: ``count`` buckets of the last round (a pipeline bucket
    file written to ``path``; decks under 5 ranks: ``final_round_strength_buckets``), every
    earlier round one bucket per canonical hand (suit isomorphism only: lossless)."""
    import numpy as np

    from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
    from efgkit.abstraction.cards.holdem.features import hand_indexer
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards

    ranks, rounds = game.card_structure.num_ranks, game.num_rounds
    board_cards = [sum(game.card_structure.public_cards_per_round[:r + 1]) for r in range(rounds)]
    classes = [hand_indexer(b, ranks).round_size(hand_indexer(b, ranks).num_rounds - 1) for b in board_cards]
    if ranks < 5:
        final = final_round_strength_buckets(game, count, seed)
    else:
        build_abstraction(AbstractionOptions(buckets=(*classes[:-1], count), rounds=rounds, bins=8,
                                             num_ranks=ranks, opponent_clusters=4, seed=seed), path)
        lookup = BucketLookup(path)
        final = np.array(lookup.tables()[-1], np.int64)
        lookup.close()
    tables = [np.arange(size, dtype=np.int64) for size in classes[:-1]] + [final]
    return IsomorphicCards(game, tables, f"lossless before round {rounds}, {count} buckets in it "
                                         f"(seed {seed})")


def _record(results: dict, column: dict, name: str, mbb: float, seconds: float, out: Path | None,
            label: str = "") -> None:
    """One row of ``column``: its mbb/g, CPU seconds and the peak RSS so far; printed, and
    ``results`` written to ``out`` if given."""
    column["rows"][name] = {"mbb": mbb, "cpu_seconds": seconds, "peak_mb": _peak_mb()}
    print(f"{label}{name:45s} {mbb:10.2f} mbb/g  {seconds:7.1f} s CPU  peak {_peak_mb():.0f} MB", flush=True)
    if out is not None:
        out.write_text(json.dumps(results, indent=1))


def _abstract_game(evaluator, strategy, big_blind: float) -> dict:
    """``strategy``'s exploitability in its own abstract game, mbb/g, and whether it is exact (a
    lower bound under imperfect recall): the Blueprint row's fields."""
    from efgkit.poker.streamed.abstract_best_response import abstract_evaluation

    abstract = abstract_evaluation(evaluator, strategy)
    return {"abstract_mbb": abstract.exploitability / big_blind * 1000, "abstract_exact": abstract.exact}


def run(spec: str, last_round_buckets: list[int], iterations: int, blueprint_iterations: int, seed: int,
        out: Path | None = None, engine: str = "poker", gift_bounds: tuple[str, ...] = ("cbv",)) -> dict:
    """The table (JSON-ready), written to ``out`` after each row if given."""
    if engine == "streamed":
        return run_streamed(spec, last_round_buckets, iterations, blueprint_iterations, seed, out,
                            gift_bounds)
    if gift_bounds != ("cbv",):
        raise SystemExit("--gift-bound min-payoff: only with --engine streamed")
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.poker.materialised.vector_cfr import VectorCFR
    from efgkit.resolve.vector_resolver import VectorResolver
    from efgkit.specs import make_game

    game = make_game(spec)
    last_round = game.num_rounds
    big_blind = max(game.blinds)
    tree = PublicTree(game)
    results: dict = {"game": game.spec, "iterations": iterations, "round": last_round,
                     "blueprint_iterations": blueprint_iterations,
                     "public_nodes": tree.num_nodes, "hands": tree.num_hands, "columns": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for count in last_round_buckets:
            column = results["columns"].setdefault(str(count), {"rows": {}})
            cards = lossless_before_last_round(game, Path(scratch) / f"b{count}.h5", count, seed)
            buckets = BucketLayout(BettingTree(game), cards)
            layout = StrategyLayout.from_bucket_layout(tree, buckets)
            started = time.process_time()
            solver = VectorCFR(tree, layout, variant="cfr+").iterate(blueprint_iterations)
            blueprint = solver.average_strategy()
            column["blueprint_cpu_seconds"] = time.process_time() - started
            evaluation = evaluate_strategy(layout, blueprint)
            _record(results, column, "Blueprint", evaluation.exploitability / big_blind * 1000,
                    column["blueprint_cpu_seconds"], out, f"{count} buckets  ")
            for name, gadget, constraints, split in TECHNIQUES:
                started = time.process_time()
                result = VectorResolver(tree, layout, blueprint, gadget=gadget, constraints=constraints,
                                        iterations=iterations, split_gifts=split, isomorphic=True,
                                        round_number=last_round).resolve()
                _record(results, column, name, result.after.exploitability / big_blind * 1000,
                        time.process_time() - started, out, f"{count} buckets  ")
    return results


def run_streamed(spec: str, last_round_buckets: list[int], iterations: int, blueprint_iterations: int,
                 seed: int, out: Path | None = None, gift_bounds: tuple[str, ...] = ("cbv",)) -> dict:
    """``run`` on the streamed engines, in this process; the reach techniques once per gift bound
    of ``gift_bounds`` (rows named "... (min-payoff)" for Brown & Sandholm's lower bound)."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_cfr import SampledCFR
    from efgkit.resolve.gadgets import REACH_GADGETS
    from efgkit.resolve.streamed_resolver import StreamedResolver
    from efgkit.specs import make_game

    game = make_game(spec)
    last_round, big_blind = game.num_rounds, max(game.blinds)
    results: dict = {"game": game.spec, "iterations": iterations, "round": last_round, "engine": "streamed",
                     "blueprint_iterations": blueprint_iterations, "columns": {}}

    with tempfile.TemporaryDirectory() as scratch:
        for count in last_round_buckets:
            column = results["columns"].setdefault(str(count), {"rows": {}})
            cards = lossless_before_last_round(game, Path(scratch) / f"b{count}.h5", count, seed)
            buckets = BucketLayout(BettingTree(game), cards)
            started = time.process_time()
            solver = SampledCFR(buckets, variant="cfr+", seed=seed).iterate(blueprint_iterations)
            blueprint = solver.average_strategy()
            evaluator = StreamedEvaluator(buckets)
            before = evaluator.evaluate(blueprint)
            _record(results, column, "Blueprint", before.exploitability / big_blind * 1000,
                    time.process_time() - started, out)
            abstract = _abstract_game(evaluator, blueprint, big_blind)
            column["rows"]["Blueprint"].update(abstract)
            print(f"  abstract game: {abstract['abstract_mbb']:.2f} mbb/g"
                  f"{'' if abstract['abstract_exact'] else ' (imperfect recall: a lower bound)'}", flush=True)
            for bound in gift_bounds:
                for name, gadget, constraints, split in TECHNIQUES:
                    if bound != "cbv" and gadget not in REACH_GADGETS:
                        continue
                    started = time.process_time()
                    resolver = StreamedResolver(buckets, blueprint, gadget=gadget, constraints=constraints,
                                                iterations=iterations, split_gifts=split, isomorphic=True,
                                                round_number=last_round, gift_bound=bound)
                    result = resolver.resolve(before=before)
                    _record(results, column, name if bound == "cbv" else f"{name} ({bound})",
                            result.after.exploitability / big_blind * 1000, time.process_time() - started,
                            out)
    return results


def reference_blueprints(spec: str, blueprint_iterations: int, seed: int) -> dict:
    """mbb/g of two blueprints of the same CFR+ iterations, lossless before the last round: the
    last round lossless too (one bucket per canonical hand: what CFR+ alone leaves), and with as
    many last-round buckets as there are canonical hands (the pipeline's, or distinct E[HS] values
    under 5 ranks, merged)."""
    import numpy as np

    from efgkit.abstraction.cards.holdem.features import hand_indexer
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.poker.materialised.vector_cfr import VectorCFR
    from efgkit.specs import make_game

    game = make_game(spec)
    ranks = game.card_structure.num_ranks
    board_cards = [sum(game.card_structure.public_cards_per_round[:r + 1]) for r in range(game.num_rounds)]
    sizes = [hand_indexer(b, ranks).round_size(hand_indexer(b, ranks).num_rounds - 1) for b in board_cards]
    tree = PublicTree(game)
    lossless = IsomorphicCards(game, [np.arange(size, dtype=np.int64) for size in sizes], "lossless")
    with tempfile.TemporaryDirectory() as scratch:
        finest = lossless_before_last_round(game, Path(scratch) / "finest.h5", sizes[-1], seed)
    out = {}
    for name, cards in (("lossless", lossless), ("finest buckets", finest)):
        layout = StrategyLayout.from_bucket_layout(tree, BucketLayout(BettingTree(game), cards))
        strategy = VectorCFR(tree, layout, variant="cfr+").iterate(blueprint_iterations).average_strategy()
        out[name] = {"buckets": cards.num_buckets(game.num_rounds - 1),
                     "mbb": evaluate_strategy(layout, strategy).exploitability / max(game.blinds) * 1000}
        print(name, out[name], flush=True)
    return out


def blueprint_convergence(spec: str, last_round_buckets: list[int], checkpoints: list[int], seed: int,
                          out: Path | None = None) -> dict:
    """How far ``run_streamed``'s blueprints are from equilibrium: per last-round bucket count, the
    sampled CFR+ average after each of ``checkpoints`` iterations, its exploitability in the full
    game and in its own abstract game (a lower bound under imperfect recall), CPU seconds of each."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.streamed.full_game import StreamedEvaluator
    from efgkit.poker.streamed.sampled_cfr import SampledCFR
    from efgkit.specs import make_game

    game = make_game(spec)
    big_blind = max(game.blinds)
    results: dict = {"game": game.spec, "seed": seed, "columns": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for count in last_round_buckets:
            cards = lossless_before_last_round(game, Path(scratch) / f"b{count}.h5", count, seed)
            layout = BucketLayout(BettingTree(game), cards)
            evaluator, done = StreamedEvaluator(layout), 0
            solver = SampledCFR(layout, variant="cfr+", seed=seed)
            rows = results["columns"][str(count)] = []
            for target in checkpoints:
                started = time.process_time()
                solver.iterate(target - done)
                done, solved = target, time.process_time() - started
                strategy = solver.average_strategy()
                started = time.process_time()
                full = evaluator.evaluate(strategy)
                evaluated = time.process_time() - started
                abstract = _abstract_game(evaluator, strategy, big_blind)
                rows.append({"iterations": target, "full_mbb": full.exploitability / big_blind * 1000,
                             **abstract, "solve_cpu_seconds": solved,
                             "full_evaluation_cpu_seconds": evaluated,
                             "abstract_evaluation_cpu_seconds": time.process_time() - started - evaluated,
                             "peak_mb": _peak_mb()})
                print(count, rows[-1], flush=True)
                if out is not None:
                    out.write_text(json.dumps(results, indent=1))
    return results


PAPER = {2: ("Table 1 (small flop NLHE, 200 / 2,000 / 30,000)", {
    "Blueprint": "886.9 / 373.7 / 91.28", "Unsafe": "146.8 / 39.58 / 5.514",
    "Resolve": "601.6 / 177.9 / 54.07",
    "Maxmargin": "300.5 / 139.9 / 43.43", "Reach-Maxmargin": "298.8 / 139.0 / 41.47",
    "Reach-Maxmargin (not split)": "248.7 / 98.07 / 25.88", "Estimated": "116.6 / 62.61 / 24.23",
    "Estimated + Distributional": "104.4 / 62.45 / 34.30",
    "Reach-Estimated + Distributional": "102.1 / 57.98 / 22.58",
    "Reach-Estimated + Distributional (not split)": "95.60 / 49.24 / 17.33"}),
    3: ("Table 3 (turn NLHE, 200 / 2,000 / 20,000)", {
        "Blueprint": "684.6 / 465.1 / 345.5", "Unsafe": "130.4 / 85.95 / 79.34",
        "Resolve": "454.9 / 321.5 / 251.8",
        "Maxmargin": "427.6 / 299.6 / 234.4", "Reach-Maxmargin": "424.4 / 298.3 / 233.5",
        "Reach-Maxmargin (not split)": "333.4 / 229.4 / 175.5", "Estimated": "120.6 / 89.43 / 76.44",
        "Estimated + Distributional": "119.4 / 87.83 / 74.35",
        "Reach-Estimated + Distributional": "116.8 / 85.80 / 72.59",
        "Reach-Estimated + Distributional (not split)": "113.3 / 83.24 / 70.68"})}


def markdown(results: dict) -> str:
    """The table of a run's JSON: mbb/g (CPU seconds, peak MB) per bucket count, the paper's beside."""
    columns = list(results["columns"])
    title, paper = PAPER[results.get("round", 2)]
    lines = ["| Technique | " + " | ".join(f"{c} buckets: mbb/g (CPU s, peak MB)" for c in columns)
             + f" | paper {title} |", "|---|" + "---|" * (len(columns) + 1)]
    names = ["Blueprint", *(t[0] for t in TECHNIQUES)]
    names += [n for c in columns for n in results["columns"][c]["rows"] if n not in names]
    for name in dict.fromkeys(names):
        cells = []
        for c in columns:
            row = results["columns"][c]["rows"].get(name)
            cells.append("-" if row is None
                         else f"{row['mbb']:.2f} ({row['cpu_seconds']:.1f} s, {row['peak_mb']:.0f})")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {paper[name.removesuffix(' (min-payoff)')]} |")
    blueprints = [results["columns"][c]["rows"].get("Blueprint", {}) for c in columns]
    if any("abstract_mbb" in row for row in blueprints):
        cells = [f"{row['abstract_mbb']:.2f}" + ("" if row["abstract_exact"] else " (lower bound)")
                 if "abstract_mbb" in row else "-" for row in blueprints]
        lines.append("| Blueprint in its abstract game | " + " | ".join(cells) + " | not given |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="holdem(ranks=5,rounds=2,caps=1-1)")
    parser.add_argument("--buckets", default="10,100")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--blueprint-iterations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    parser.add_argument("--engine", choices=("poker", "streamed"), default="poker",
                        help="poker: the public tree materialised; streamed: one flop at a time")
    parser.add_argument("--gift-bound", action="append", choices=("cbv", "min-payoff"), default=None,
                        help="the reach techniques' gift bound; repeat for both (streamed only; default cbv)")
    parser.add_argument("--markdown", default=None, metavar="JSON", help="print the table of a run's JSON")
    parser.add_argument("--blueprint-checkpoints", default=None, metavar="N,N,...",
                        help="only the blueprints' convergence: full- and abstract-game exploitability after "
                             "each of these iterations, per bucket count (blueprint_convergence)")
    parser.add_argument("--references", action="store_true",
                        help="only the lossless and finest-bucket blueprints' mbb/g (reference_blueprints)")
    args = parser.parse_args()
    if args.references:
        print(json.dumps(reference_blueprints(args.game, args.blueprint_iterations, args.seed)))
        return
    if args.blueprint_checkpoints:
        blueprint_convergence(args.game, [int(b) for b in args.buckets.split(",")],
                              [int(n) for n in args.blueprint_checkpoints.split(",")], args.seed,
                              Path(args.out) if args.out else None)
        return
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text())))
        return
    results = run(args.game, [int(b) for b in args.buckets.split(",")], args.iterations,
                  args.blueprint_iterations, args.seed, Path(args.out) if args.out else None, args.engine,
                  tuple(args.gift_bound or ("cbv",)))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
