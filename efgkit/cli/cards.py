"""`efgkit cards`: card abstraction (hand-strength features, EMD clustering) of a poker game."""

from __future__ import annotations

import time

import click

from efgkit.cli.app import build_game, check_writable, emit, json_option, main, save_figure, show_progress
from efgkit.cli.plots import new_figure
from efgkit.errors import ParameterError

FEATURE_HELP = ("ehs: E[HS]; ehs2: E[HS^2]; hist: hand-strength histograms with EMD; ochs: strength "
                "against opponent clusters; pa: potential-aware (histograms over next-round buckets)")


def parse_buckets(text: str, rounds: int) -> list[int | None]:
    """'3,10' -> [3, 10]; 'all' keeps a round lossless; one value applies to every round."""
    counts: list[int | None] = []
    for item in (part.strip() for part in text.split(",")):
        if item.lower() == "all":
            counts.append(None)
            continue
        try:
            counts.append(int(item))
        except ValueError:
            raise ParameterError(
                f"--buckets: {item!r} is not a bucket count (a positive integer or all)") from None
    if len(counts) == 1:
        counts *= rounds
    if len(counts) != rounds:
        raise ParameterError(f"--buckets needs one count per round ({rounds} rounds) or one for all, got "
                             f"{len(counts)}")
    return counts


@main.command()
@click.argument("game")
@click.option("--feature", "-f", type=click.Choice(["ehs", "ehs2", "hist", "ochs", "pa"]), default="hist",
              show_default=True, help=FEATURE_HELP)
@click.option("--buckets", "-b", required=True,
              help="Buckets per round, comma-separated (e.g. 3,10); 'all' keeps a round lossless; "
                   "one value applies to every round.")
@click.option("--recall", type=click.Choice(["imperfect", "perfect"]), default="imperfect", show_default=True,
              help="imperfect: infosets keep the betting and the current round's bucket; perfect: the "
                   "bucket of every round so far.")
@click.option("--method", type=click.Choice(["kmeans", "percentile"]), default="kmeans", show_default=True,
              help="kmeans (EMD for hist/pa, L2 otherwise) or percentile (equal-mass buckets of ehs/ehs2).")
@click.option("--bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Bins of the hand-strength histograms (hist, and the opponent clusters of ochs).")
@click.option("--opponent-clusters", type=click.IntRange(min=1), default=8, show_default=True,
              help="ochs: clusters of opponent hands.")
@click.option("--restarts", type=click.IntRange(min=1), default=10, show_default=True,
              help="k-means restarts (k-means++ seeding each); the lowest inertia wins.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the clustering.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the buckets and the InfosetMap to this HDF5 card abstraction file.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of every round's buckets against E[HS].")
@json_option
def cards(game: str, feature: str, buckets: str, recall: str, method: str, bins: int,
          opponent_clusters: int, restarts: int, seed: int, out: str | None, plot: str | None,
          as_json: bool) -> None:
    """Bucket the card situations of poker GAME and turn the buckets into an abstraction.

    Every round's (private cards, board) situations get an exact feature, are clustered
    into the given number of buckets, and together with the betting history become an
    InfosetMap. `efgkit solve GAME --abstraction ABS.h5` solves it (exploitability is
    measured in the full game) and `efgkit refine GAME --initial ABS.h5` refines it.
    """
    from efgkit.abstraction.cards.bucketing import poker_rules
    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.storage.abstraction_file import save_card_abstraction

    check_writable(out, "--out")
    check_writable(plot, "--plot")
    tree, build_seconds = build_game(game)
    rules = poker_rules(tree)
    counts = parse_buckets(buckets, len(rules.card_structure.public_cards_per_round))
    started = time.perf_counter()
    abstraction = cluster_cards(rules.card_structure, feature, counts, method=method, bins=bins,
                                opponent_clusters=opponent_clusters, n_init=restarts, random_state=seed,
                                progress=show_progress())
    seconds = time.perf_counter() - started
    if out is not None:
        infoset_map = save_card_abstraction(out, abstraction, tree, recall)
    else:
        infoset_map = abstraction.infoset_map(tree, recall)
    if plot is not None:
        _write_plot(plot, tree.spec, abstraction)
    situations = [r.num_situations for r in abstraction.situations.rounds]
    data = {
        "game": tree.spec, "feature": feature, "method": method, "recall": recall, "seed": seed,
        "requested_buckets": [("all" if k is None else k) for k in counts],
        "buckets": abstraction.num_buckets, "situations": situations,
        "abstract_infosets": infoset_map.num_abstract, "original_infosets": tree.num_infosets,
        "abstract_percent": 100.0 * infoset_map.num_abstract / tree.num_infosets,
        "seconds": seconds, "build_seconds": build_seconds, "out": out,
    }
    lines = [
        f"{tree.spec}: {feature} buckets per round {abstraction.num_buckets} of {situations} card "
        f"situations ({method}, {seconds:.2f} s)",
        f"{recall}-recall abstraction: {infoset_map.num_abstract:,} of {tree.num_infosets:,} infosets "
        f"({data['abstract_percent']:.1f}%)",
    ]
    lines += [f"card abstraction written to {out}"] if out else []
    lines += [f"plot written to {plot}"] if plot else []
    emit(as_json, data, lines)


def _write_plot(path: str, spec: str, abstraction) -> None:
    from efgkit.abstraction.cards.hand_strength import HandStrength

    strength = HandStrength(abstraction.situations)
    rounds = len(abstraction.labels)
    figure, axes = new_figure(1, rounds, figsize=(4.5 * rounds, 3.8), squeeze=False)
    for r, labels in enumerate(abstraction.labels):
        axis = axes[0, r]
        axis.scatter(strength.expected(r), labels, s=8, alpha=0.5)
        axis.set_xlabel("E[HS] of the card situation")
        axis.set_ylabel("bucket")
        axis.set_title(f"round {r}: {abstraction.num_buckets[r]} buckets")
        axis.grid(True, alpha=0.3)
    figure.suptitle(f"{abstraction.feature} buckets of {spec}")
    figure.tight_layout()
    save_figure(figure, path, "--plot")
