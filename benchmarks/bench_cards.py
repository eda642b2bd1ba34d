"""Card abstraction study: Burch's Leduc example, memory against exploitability, CFR+IRA seeding, speed.

Parts (``--part``, default all):
* ``burch``  Burch's Leduc abstraction (J: Q~K board, K: J~Q board; perfect-recall E[HS] with
  3 + 3 buckets): CFR+ on it, full-game exploitability after 500..10,000 iterations.
* ``sweep``  for each game, feature (E[HS], E[HS^2], percentile E[HS], EMD histograms, OCHS,
  potential-aware), bucket schedule (tiny to lossless) and recall: abstract infosets and the
  full-game NashConv of the CFR+ average strategy after a fixed number of iterations.
* ``ira``    CFR+IRA to a target NashConv started from the coarsest abstraction and from card
  abstractions: final abstract infosets, solver memory (32-bit words), iterations, time.
* ``speed``  features and clustering of every round of the largest games, and GS14's greedy EMD
  against the exact transportation LP on potential-aware histograms of a three-round game.

Results are written as JSON lines to ``benchmarks/results/cards-<part>.jsonl``; ``--report``
turns them into docs/results-cards.md and its PNG plots. ``--quick`` runs a seconds-long
version of every part on Leduc and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"

FEATURES = [
    ("ehs", "kmeans"),
    ("ehs2", "kmeans"),
    ("ehs", "percentile"),
    ("hist", "kmeans"),
    ("ochs", "kmeans"),
    ("pa", "kmeans"),
]
PERFECT_RECALL_FEATURES = {("ehs", "kmeans"), ("hist", "kmeans"), ("pa", "kmeans")}
SWEEP = {
    "leduc": [(1, 1), (2, 2), (2, 3), (3, 3), (3, 5), (3, 10), (3, 20), (None, None)],
    "leduc(ranks=13)": [(2, 2), (3, 5), (5, 10), (8, 20), (13, 40), (13, 100), (13, 250), (None, None)],
    "twocard": [(2, 2), (3, 5), (5, 10), (8, 20), (12, 40), (20, 100), (30, 250), (None, None)],
}
SWEEP_ITERATIONS = {"leduc": 2000, "leduc(ranks=13)": 400, "twocard": 400}
IRA_RUNS = {"leduc": (0.05, 3, 20_000), "leduc(ranks=13)": (0.2, 1, 3_000)}
IRA_INITIAL = [("coarsest", None), ("ehs", (3, 3)), ("hist", (3, 10)), ("pa", (3, 10))]
SPEED_GAMES = [
    "leduc(ranks=13,suits=4)",
    "twocard(ranks=8)",
    "twocard(ranks=5,board=3)",
    "twocard(ranks=4,board=1-1)",
]


def _label(feature: str, method: str) -> str:
    return {"percentile": "PHS (percentile E[HS])"}.get(
        method,
        {
            "ehs": "E[HS]",
            "ehs2": "E[HS^2]",
            "hist": "EMD histograms",
            "ochs": "OCHS",
            "pa": "potential-aware",
        }[feature],
    )


def _buckets(schedule, rounds):
    return list(schedule)[:rounds] if len(schedule) >= rounds else list(schedule) * rounds


def run_burch(quick: bool) -> list[dict]:
    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.solvers import BestResponse, CFRPlusSolver
    from efgkit.specs import load_game

    tree = load_game("leduc")
    abstraction = cluster_cards(tree.game.card_structure, "ehs", [3, 3], random_state=0)
    rows = []
    for recall in ("perfect", "imperfect"):
        infoset_map = abstraction.infoset_map(tree, recall)
        solver, evaluator = CFRPlusSolver(infoset_map), BestResponse(infoset_map)
        for iterations in [100, 500] if quick else [500, 1000, 2000, 5000, 10_000]:
            solver.iterate(iterations - solver.iteration)
            evaluation = evaluator.evaluate(solver.average_strategy())
            rows.append(
                {
                    "recall": recall,
                    "iterations": iterations,
                    "abstract_infosets": infoset_map.num_abstract,
                    "nash_conv": evaluation.nash_conv,
                    "exploitability": evaluation.exploitability,
                    "game_value": evaluation.game_value,
                }
            )
    return rows


def run_sweep(quick: bool) -> list[dict]:
    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.solvers import BestResponse, CFRPlusSolver
    from efgkit.specs import load_game

    rows = []
    games = {"leduc": SWEEP["leduc"][:3]} if quick else SWEEP
    for spec, schedules in games.items():
        tree = load_game(spec)
        structure = tree.game.card_structure
        iterations = 100 if quick else SWEEP_ITERATIONS[spec]

        def solve(infoset_map, iterations=iterations):
            started = time.perf_counter()
            strategy = CFRPlusSolver(infoset_map).iterate(iterations).average_strategy()
            nash_conv = BestResponse(infoset_map).evaluate(strategy).nash_conv
            return nash_conv, time.perf_counter() - started

        nash_conv, seconds = solve(InfosetMap.identity(tree))
        rows.append(
            {
                "game": spec,
                "feature": "none (full game)",
                "recall": "perfect",
                "buckets": None,
                "abstract_infosets": tree.num_infosets,
                "original_infosets": tree.num_infosets,
                "nash_conv": nash_conv,
                "iterations": iterations,
                "solve_seconds": seconds,
            }
        )
        print(f"{spec}: full game NashConv {nash_conv:.4g} after {iterations} CFR+ iterations", flush=True)
        for feature, method in FEATURES[:2] if quick else FEATURES:
            for schedule in schedules:
                buckets = list(schedule)
                started = time.perf_counter()
                abstraction = cluster_cards(structure, feature, buckets, method=method, random_state=0)
                cluster_seconds = time.perf_counter() - started
                recalls = (
                    ["imperfect", "perfect"]
                    if (feature, method) in PERFECT_RECALL_FEATURES
                    else ["imperfect"]
                )
                for recall in recalls:
                    infoset_map = abstraction.infoset_map(tree, recall)
                    nash_conv, seconds = solve(infoset_map)
                    row = {
                        "game": spec,
                        "feature": _label(feature, method),
                        "recall": recall,
                        "buckets": ["all" if k is None else k for k in buckets],
                        "buckets_used": abstraction.num_buckets,
                        "abstract_infosets": infoset_map.num_abstract,
                        "original_infosets": tree.num_infosets,
                        "nash_conv": nash_conv,
                        "iterations": iterations,
                        "cluster_seconds": cluster_seconds,
                        "solve_seconds": seconds,
                    }
                    rows.append(row)
                    print(
                        f"{spec} {row['feature']} {recall} {row['buckets']}: {row['abstract_infosets']} "
                        f"infosets, NashConv {nash_conv:.4g}",
                        flush=True,
                    )
    return rows


def run_ira(quick: bool) -> list[dict]:
    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
    from efgkit.abstraction.refinement import run_refinement
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.specs import load_game

    rows = []
    runs = {"leduc": (0.5, 1, 500)} if quick else IRA_RUNS
    for spec, (target, seeds, max_iterations) in runs.items():
        tree = load_game(spec)
        for name, schedule in IRA_INITIAL:
            if name == "coarsest":
                initial = InfosetMap.coarsest(tree)
            else:
                abstraction = cluster_cards(tree.game.card_structure, name, list(schedule), random_state=0)
                initial = abstraction.infoset_map(tree, "perfect" if name == "ehs" else "imperfect")
            for seed in range(seeds):
                refiner = CFRPlusIRA(tree, initial=initial, k_bound=10, k_heuristic=90, random_state=seed)
                started = time.perf_counter()
                history = run_refinement(refiner, target, max_iterations=max_iterations, every=25)
                final = history[-1]
                row = {
                    "game": spec,
                    "initial": name if schedule is None else f"{name} {list(schedule)}",
                    "initial_infosets": initial.num_abstract,
                    "seed": seed,
                    "target": target,
                    "reached": final.nash_conv <= target,
                    "nash_conv": final.nash_conv,
                    "iterations": final.iteration,
                    "abstract_infosets": final.abstract_infosets,
                    "memory_words": final.memory_words,
                    "original_infosets": tree.num_infosets,
                    "iterating_seconds": final.seconds,
                    "seconds": time.perf_counter() - started,
                }
                rows.append(row)
                print(
                    f"{spec} from {row['initial']} seed {seed}: {row['abstract_infosets']} infosets, "
                    f"{row['iterations']} iterations, NashConv {row['nash_conv']:.4g}",
                    flush=True,
                )
    return rows


def run_speed(quick: bool) -> list[dict]:
    from sklearn.cluster import KMeans

    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.abstraction.cards.emd import emd_exact, greedy_distances, line_distances, nearest_order
    from efgkit.abstraction.cards.hand_strength import HandStrength
    from efgkit.abstraction.cards.kmeans import EMDKMeans
    from efgkit.abstraction.cards.line_kmeans import small_line_kmeans
    from efgkit.abstraction.cards.potential_aware import next_round_histograms
    from efgkit.abstraction.cards.situations import CardSituations
    from efgkit.specs import make_game

    rows = []
    for spec in ["leduc"] if quick else SPEED_GAMES:
        structure = make_game(spec).card_structure
        rounds = len(structure.public_cards_per_round)
        for feature in ("ehs", "ehs2", "hist", "ochs", "pa"):
            started = time.perf_counter()
            abstraction = cluster_cards(
                structure, feature, [10] * rounds if not quick else [3] * rounds, random_state=0
            )
            rows.append(
                {
                    "part": "clustering",
                    "game": spec,
                    "feature": feature,
                    "situations": [r.num_situations for r in abstraction.situations.rounds],
                    "buckets": abstraction.num_buckets,
                    "seconds": time.perf_counter() - started,
                }
            )
            print(f"{spec} {feature}: {rows[-1]['seconds']:.2f} s", flush=True)
    # GS14's greedy EMD against exact on round-0 potential-aware histograms of a three-round game.
    spec = "twocard(ranks=4,board=1-1)"
    situations = CardSituations(make_game(spec).card_structure)
    strength = HandStrength(situations)
    ehs = strength.expected(2)
    last = KMeans(10, n_init=10, random_state=0).fit(ehs[:, None])
    order = np.argsort(last.cluster_centers_[:, 0])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    positions = last.cluster_centers_[order, 0]
    histograms = next_round_histograms(situations, 1, rank[last.labels_])
    middle = small_line_kmeans(8, histograms.shape[0], positions=positions, random_state=0).fit(histograms)
    cdfs = np.cumsum(middle.cluster_centers_, axis=1)
    ground = line_distances(cdfs, cdfs, np.diff(positions))
    points = np.unique(next_round_histograms(situations, 0, middle.labels_), axis=0)
    centers = EMDKMeans(6, ground_distance=ground, random_state=0).fit(points).cluster_centers_
    started = time.perf_counter()
    greedy = greedy_distances(points, centers, *nearest_order(ground))
    greedy_seconds = (time.perf_counter() - started) / greedy.size
    started = time.perf_counter()
    exact = np.array([[emd_exact(p, c, ground) for c in centers] for p in points])
    exact_seconds = (time.perf_counter() - started) / exact.size
    relative = (greedy - exact)[exact > 1e-12] / exact[exact > 1e-12]
    same_nearest = float(np.mean(np.argmin(greedy, axis=1) == np.argmin(exact, axis=1)))
    rows.append(
        {
            "part": "emd",
            "game": spec,
            "pairs": int(exact.size),
            "mean_relative_error": float(relative.mean()),
            "max_relative_error": float(relative.max()),
            "same_nearest_center": same_nearest,
            "greedy_microseconds": 1e6 * greedy_seconds,
            "exact_microseconds": 1e6 * exact_seconds,
        }
    )
    print(
        f"greedy EMD vs exact on {spec}: mean relative error {relative.mean():.4f}, "
        f"same nearest centre {same_nearest:.3f}",
        flush=True,
    )
    return rows


PARTS = {"burch": run_burch, "sweep": run_sweep, "ira": run_ira, "speed": run_speed}


# --------------------------------------------------------------------------- report
def _read(part: str) -> list[dict]:
    path = RESULTS / f"cards-{part}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _frontier(points: list[tuple[float, float]], size: float) -> float | None:
    """The lowest NashConv of any abstraction on a curve with at most ``size`` abstract infosets."""
    values = [value for infosets, value in points if infosets <= size]
    return min(values) if values else None


def _plot_sweep(spec: str, rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.5, 5))
    full = [r for r in rows if r["buckets"] is None]
    features = list(dict.fromkeys(r["feature"] for r in rows if r["buckets"] is not None))
    for number, feature in enumerate(features):
        for recall, style in (("imperfect", "-"), ("perfect", "--")):
            curve = sorted(
                (r["abstract_infosets"], r["nash_conv"])
                for r in rows
                if r["feature"] == feature and r["recall"] == recall and "all" not in r["buckets"]
            )
            if curve:
                axes.loglog(
                    [c[0] for c in curve],
                    [max(c[1], 1e-6) for c in curve],
                    style,
                    marker="o",
                    markersize=3,
                    color=f"C{number}",
                    label=f"{feature}, {recall} recall",
                )
    if full:
        axes.scatter(
            [full[0]["abstract_infosets"]],
            [max(full[0]["nash_conv"], 1e-6)],
            color="black",
            marker="*",
            s=120,
            zorder=5,
            label="full game (same CFR+ iterations)",
        )
    axes.set_xlabel("abstract infosets")
    axes.set_ylabel("NashConv in the full game")
    axes.set_title(f"{spec}: abstraction size against exploitability")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_report() -> Path:
    lines = [
        "# Card abstraction: results",
        "",
        "Generated by `python benchmarks/bench_cards.py --report` from `benchmarks/results/cards-*.jsonl` "
        "(do not edit by hand; the discussion is in the lead's summary below the tables when present).",
        "",
        "NashConv is the sum of both players' best-response gains in the full game (raw chips); "
        "exploitability is NashConv / 2 (OpenSpiel's unit, and the thesis's 'chips/game').",
        "",
    ]
    burch = _read("burch")
    if burch:
        lines += [
            "## Burch's Leduc example",
            "",
            "Abstraction (Burch's thesis §5.4): in round 2 a jack holder cannot tell a queen from a king "
            "board and a king holder cannot tell a jack from a queen. It is exactly perfect-recall E[HS] "
            "bucketing with 3 buckets per round (`efgkit cards leduc -f ehs -b 3,3 --recall perfect`): "
            "228 abstract infosets (18 + 7 x 30). CFR+ (alternating, linear averaging) on the "
            "abstraction; best response in the full 936-infoset game.",
            "",
            "| recall | iterations | abstract infosets | NashConv | exploitability (NashConv/2) |",
            "|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['recall']} | {r['iterations']:,} | {r['abstract_infosets']} | {r['nash_conv']:.4f} | "
            f"{r['exploitability']:.4f} |"
            for r in burch
        ]
        lines += [""]
    sweep = _read("sweep")
    if sweep:
        lines += ["## Memory against exploitability", ""]
        for spec in dict.fromkeys(r["game"] for r in sweep):
            rows = [r for r in sweep if r["game"] == spec]
            slug = spec.replace("(", "-").replace(")", "").replace("=", "").replace(",", "-")
            picture = DOCS / f"results-cards-{slug}.png"
            _plot_sweep(spec, rows, picture)
            full = [r for r in rows if r["buckets"] is None][0]
            lines += [
                f"### {spec}",
                "",
                f"{full['original_infosets']:,} infosets; CFR+ runs {full['iterations']} iterations on "
                f"every abstraction; the full game reaches NashConv {full['nash_conv']:.4g} in as many.",
                "",
                f"![{spec}]({picture.name})",
                "",
                "| feature | recall | buckets asked | buckets used | abstract infosets | NashConv |",
                "|---|---|---|---|---:|---:|",
            ]
            seen = set()
            unique = []
            for r in rows:
                key = (r["feature"], r["recall"], r["abstract_infosets"], str(r.get("buckets_used")))
                if r["buckets"] is not None and key not in seen:
                    seen.add(key)
                    unique.append(r)
            lines += [
                f"| {r['feature']} | {r['recall']} | {r['buckets']} | {r['buckets_used']} | "
                f"{r['abstract_infosets']:,} | {r['nash_conv']:.4g} |"
                for r in unique
            ]
            lines += ["", "Rows that repeat an abstraction already listed (more buckets asked than there "
                      "are distinct feature values) are left out.", "", *_comparisons(rows), ""]
    ira = _read("ira")
    if ira:
        lines += [
            "## CFR+IRA from a card abstraction",
            "",
            "CFR+IRA (B10H90, delay 100) until the target NashConv, from the coarsest abstraction "
            "(Čermák et al.) and from card abstractions (the paper's future-work item 4). Memory is "
            "the paper's count of 32-bit words of solver state: regrets and averages per abstract "
            "infoset-action plus one explicit map entry per original infoset that is not where the "
            "coarsest abstraction would put it. A card abstraction therefore pays a map entry for "
            "almost every infoset, although it is really stored as its bucket tables (one entry per "
            "card situation) and the betting history.",
            "",
            "| game | initial | initial infosets | seed | reached | iterations | final abstract infosets | "
            "memory words | seconds (iterating) |",
            "|---|---|---:|---:|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['game']} | {r['initial']} | {r['initial_infosets']:,} | {r['seed']} | "
            f"{'yes' if r['reached'] else 'no'} (NashConv {r['nash_conv']:.3g}, target {r['target']}) | "
            f"{r['iterations']:,} | {r['abstract_infosets']:,} | {r['memory_words']:,} | "
            f"{r['iterating_seconds']:.1f} |"
            for r in ira
        ]
        lines += [""]
    speed = _read("speed")
    if speed:
        lines += [
            "## Speed",
            "",
            "Exact features and clustering of every round (10 buckets per round, "
            "10 k-means restarts), one core:",
            "",
            "| game | feature | situations per round | buckets | seconds |",
            "|---|---|---|---|---:|",
        ]
        lines += [
            f"| {r['game']} | {r['feature']} | {r['situations']} | {r['buckets']} | {r['seconds']:.2f} |"
            for r in speed
            if r["part"] == "clustering"
        ]
        for r in (r for r in speed if r["part"] == "emd"):
            lines += [
                "",
                f"GS14's greedy EMD against the exact transportation LP (HiGHS) on {r['pairs']} "
                f"(point, centre) pairs of round-0 potential-aware histograms of {r['game']} (ground "
                f"distance: exact EMD between the next round's centres): mean relative error "
                f"{r['mean_relative_error']:.4f}, max {r['max_relative_error']:.4f}; the nearest centre "
                f"agrees for {100 * r['same_nearest_center']:.1f}% of points; "
                f"{r['greedy_microseconds']:.2f} µs against {r['exact_microseconds']:.0f} µs per pair.",
            ]
        lines += [""]
    path = DOCS / "results-cards.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _comparisons(rows: list[dict]) -> list[str]:
    """The literature's two claims, checked on the frontiers: at every abstraction size that occurs,
    the lowest NashConv either kind reaches with at most that many abstract infosets (NashConv is
    not monotone in size, so a point is compared with the best of the other kind up to its size,
    and with the best of its own). The lossless point (the full game) is left out."""

    def curve(feature, recall):
        return [(r["abstract_infosets"], r["nash_conv"]) for r in rows
                if r["feature"] == feature and r["recall"] == recall and r["buckets"] is not None
                and "all" not in r["buckets"]]

    def count(mine, theirs):
        lower = higher = equal = 0
        for size in sorted({size for size, _ in mine + theirs}):
            a, b = _frontier(mine, size), _frontier(theirs, size)
            if a is None or b is None:
                continue
            lower += a < b - 1e-9
            higher += a > b + 1e-9
            equal += abs(a - b) <= 1e-9
        return f"lower at {lower}, higher at {higher}, equal at {equal} sizes"

    out = []
    histogram = curve("EMD histograms", "imperfect")
    for other in ("E[HS]", "E[HS^2]", "PHS (percentile E[HS])", "OCHS", "potential-aware"):
        theirs = curve(other, "imperfect")
        if histogram and theirs:
            out.append(f"* EMD histograms against {other} (imperfect recall): histograms "
                       f"{count(histogram, theirs)}.")
    for feature in ("E[HS]", "EMD histograms", "potential-aware"):
        imperfect, perfect = curve(feature, "imperfect"), curve(feature, "perfect")
        if imperfect and perfect:
            out.append(f"* {feature}: imperfect recall against perfect recall: imperfect "
                       f"{count(imperfect, perfect)}.")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all")
    parser.add_argument("--quick", action="store_true", help="seconds-long run on Leduc; writes nothing")
    parser.add_argument("--report", action="store_true", help="only write docs/results-cards.md from results")
    arguments = parser.parse_args()
    if not arguments.report:
        for part in PARTS if arguments.part == "all" else [arguments.part]:
            rows = PARTS[part](arguments.quick)
            if not arguments.quick:
                RESULTS.mkdir(parents=True, exist_ok=True)
                with (RESULTS / f"cards-{part}.jsonl").open("w") as handle:
                    handle.writelines(json.dumps(row) + "\n" for row in rows)
    if not arguments.quick:
        print(f"report written to {write_report()}")


if __name__ == "__main__":
    main()
