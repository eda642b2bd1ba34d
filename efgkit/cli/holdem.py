"""`efgkit holdem-abstraction`: Texas hold'em card buckets (features, EMD clustering, Dask), and lookups."""

from __future__ import annotations

import click

from efgkit.cli.app import check_writable, emit, json_option, main, save_figure, show_progress
from efgkit.errors import ParameterError

DEFAULT_BUCKETS = (169, 1000, 1000, 1000)
STREETS = ("preflop", "flop", "turn", "river")


def bucket_counts(text: str | None, rounds: int = 4) -> tuple[int, ...]:
    """The ``--buckets`` counts, one per round (``DEFAULT_BUCKETS``' first ``rounds`` if None)."""
    if text is None:
        return DEFAULT_BUCKETS[:rounds]
    example = ",".join(map(str, DEFAULT_BUCKETS[:rounds]))
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ParameterError(f"--buckets {text!r}: give {rounds} positive integers, e.g. {example}") from None
    if len(counts) != rounds or min(counts) < 1:
        raise ParameterError(f"--buckets {text!r}: give {rounds} positive integers "
                             f"({','.join(STREETS[:rounds])}), e.g. {example}")
    return counts


@main.command("holdem-abstraction")
@click.argument("cards", nargs=-1)
@click.option("--rounds", type=click.IntRange(2, 4), default=4, show_default=True,
              help="Rounds of the game: 2 (flop hold'em), 3 (turn hold'em) or 4. The last round's "
                   "features are final-round ones (E[HS] / OCHS on its board, no cards to come).")
@click.option("--buckets", "-b", default=None,
              help="Buckets per street, one per round: preflop,flop,turn,river (preflop 169 keeps every "
                   "class) [default: 169,1000,1000,1000, its first ROUNDS counts].")
@click.option("--flop", type=click.Choice(["emd", "ehs", "ehs2", "pa"]), default="emd",
              show_default=True,
              help="emd: k-means of strength histograms with exact EMD; ehs / ehs2: 1-D k-means of E[HS] / "
                   "E[HS^2]; pa: potential-aware (histograms over turn buckets, GS14's greedy EMD).")
@click.option("--turn", type=click.Choice(["emd", "ehs", "ehs2"]), default="emd", show_default=True,
              help="emd: k-means of strength histograms with exact EMD; ehs / ehs2: 1-D k-means of E[HS] / "
                   "E[HS^2].")
@click.option("--river", type=click.Choice(["ochs", "ehs"]), default="ochs", show_default=True,
              help="The final street (the river; the flop or turn with --rounds 2 or 3): ochs: L2 k-means "
                   "of strength against 8 opponent clusters; ehs: 1-D k-means of E[HS].")
@click.option("--bins", type=click.IntRange(min=2), default=50, show_default=True,
              help="Bins of the hand-strength histograms.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every clustering.")
@click.option("--ranks", type=click.IntRange(5, 13), default=13, show_default=True,
              help="Ranks in the deck: 13 is the standard deck, fewer keep the top ranks (8: 7 to ace).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run on this dask.distributed scheduler (tcp://host:8786) instead of a LocalCluster.")
@click.option("--workers", type=click.IntRange(min=0), default=2, show_default=True,
              help="Worker processes of the LocalCluster started when no --scheduler is given; 0 runs "
                   "everything in this process without Dask.")
@click.option("--features", type=click.Path(dir_okay=False), default=None,
              help="Feature file (HDF5): streets already in it are reused, new ones are added as they "
                   "finish, so a stopped run resumes.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Bucket file to write (HDF5).")
@click.option("--plot", type=str, default=None, metavar="PNG-PREFIX",
              help="Write PREFIX-<street>.png: the bucket centroids of every street.")
@click.option("--time", "seconds_limit", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="Start no street's features after this many seconds (needs --features, which keeps the "
                   "finished streets; a run with the same file continues). If streets remain, no bucket "
                   "file is written and the exit code is 2.")
@click.option("--lookup", type=click.Path(dir_okay=False), default=None, metavar="BUCKETS.h5",
              help="Look up the bucket of CARDS (hole cards, then the board: AsKd 7h8h9c) in this file.")
@json_option
def holdem_abstraction(cards: tuple[str, ...], rounds: int, buckets: str | None, flop: str, turn: str,
                       river: str, bins: int, seed: int, ranks: int, scheduler: str | None, workers: int,
                       features: str | None, out: str | None, plot: str | None, seconds_limit: float | None,
                       lookup: str | None,
                       as_json: bool) -> None:
    """Build Texas hold'em card buckets, or look one up.

    Building: every street's features are computed exactly over canonical (suit-isomorphic)
    hands, chunked by canonical board on a Dask cluster (a LocalCluster by default), then
    clustered: preflop classes, flop and turn strength histograms with exact EMD k-means
    (or E[HS] / E[HS^2], or a potential-aware flop), river OCHS with L2 k-means (or E[HS]).
    The bucket file holds every canonical hand's bucket, the centroids and the parameters.

    Lookup: efgkit holdem-abstraction --lookup BUCKETS.h5 AsKd 7h8h9c
    """
    if lookup is not None:
        _lookup(lookup, cards, as_json)
        return
    if cards:
        raise ParameterError(f"cards {' '.join(cards)} are only for --lookup BUCKETS.h5")
    if out is None:
        raise ParameterError("give --out BUCKETS.h5 (or --lookup BUCKETS.h5 CARDS to look up a hand)")
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.io.chunk_runner import ChunkRunner

    check_writable(out, "--out")
    check_writable(features, "--features")
    plots = {} if plot is None else {street: f"{plot}-{street}.png" for street in STREETS[:rounds]}
    for path in plots.values():
        check_writable(path, "--plot")
    options = AbstractionOptions(buckets=bucket_counts(buckets, rounds), flop=flop, turn=turn, river=river,
                                 bins=bins, num_ranks=ranks, seed=seed, rounds=rounds)
    options.check()
    if seconds_limit is not None and features is None:
        raise ParameterError("--time needs --features FILE.h5: the streets finished in time are kept there "
                             "(a bucket file needs every street)")
    with ChunkRunner(scheduler=scheduler, workers=0 if scheduler else workers) as runner:
        summary = build_abstraction(options, out, features=features, runner=runner, progress=show_progress(),
                                    time_limit=seconds_limit)
    if plots:
        _write_plots(out, plots)
    summary["plots"] = list(plots.values())
    lines = [f"hold'em buckets ({ranks}-rank deck, {rounds} rounds) on {summary['runner']}, "
             f"{summary['seconds']:.1f} s:"]
    for street, facts in summary["streets"].items():
        lines.append(
            f"  {street:7s} {facts['canonical_hands']:>12,} canonical hands -> "
            f"{facts['buckets']:>6,} buckets "
            f"({facts['method']}), features {facts['feature_seconds']:.1f} s"
            f"{' (reused)' if facts['features_reused'] else ''}, "
            f"clustering {facts['cluster_seconds']:.1f} s, "
            f"within-cluster mean {facts['distance']} {facts['within_cluster_mean_distance']:.4f}")
    lines.append(f"bucket file written to {out}")
    lines += [f"features in {features}"] if features else []
    lines += [f"plots written to {', '.join(plots.values())}"] if plots else []
    emit(as_json, summary, lines)


def _lookup(path: str, cards: tuple[str, ...], as_json: bool) -> None:
    from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
    from efgkit.abstraction.cards.holdem.deck import ROUND_NAMES, round_of_board

    if not cards:
        raise ParameterError("--lookup needs the hole cards and the board, e.g. AsKd 7h8h9c")
    with BucketLookup(path) as table:
        hole, board = table.deck.parse(cards[0]), table.deck.parse("".join(cards[1:]))
        round_index = round_of_board(board.size)
        bucket = table.bucket(round_index, hole, board)
        street = ROUND_NAMES[round_index]
        hole_text, board_text = table.deck.format(hole), table.deck.format(board)
        data = {"file": path, "hole": hole_text, "board": board_text, "round": street, "bucket": bucket,
                "num_buckets": table.num_buckets(round_index), "num_ranks": table.deck.num_ranks}
    emit(as_json, data, [f"{hole_text} {board_text}".strip() + f": {street} bucket {bucket} of "
                         f"{data['num_buckets']} ({path})"])


def _write_plots(path: str, plots: dict[str, str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import h5py
    import matplotlib.pyplot as plt
    import numpy as np

    with h5py.File(path, "r") as handle:
        for street, png in plots.items():
            centroids = np.asarray(handle[street]["centroids"])
            method = str(handle[street].attrs["method"])
            shown = np.unique(np.linspace(0, centroids.shape[0] - 1, min(12, centroids.shape[0])).astype(int))
            figure, axis = plt.subplots(figsize=(7, 4))
            colours = plt.cm.viridis(np.linspace(0, 1, shown.size))
            river_ochs = street == "river" and centroids.shape[1] > 1 and method.startswith("ochs")
            for colour, bucket in zip(colours, shown, strict=True):
                if centroids.shape[1] == 1:
                    axis.axvline(centroids[bucket, 0], color=colour, label=f"bucket {bucket}")
                elif river_ochs:
                    axis.plot(np.arange(centroids.shape[1]), centroids[bucket], marker="o", color=colour,
                              label=f"bucket {bucket}")
                else:
                    bins = centroids.shape[1]
                    support = np.arange(bins) if method.startswith("potential") else (
                        (np.arange(bins) + 0.5) / bins)
                    axis.step(support, centroids[bucket], where="mid", color=colour, label=f"bucket {bucket}")
            if centroids.shape[1] == 1:
                axis.set_xlabel("E[HS]")
            elif river_ochs:
                axis.set_xlabel("opponent cluster (weakest to strongest)")
                axis.set_ylabel("strength against the cluster")
            elif method.startswith("potential"):
                axis.set_xlabel("turn bucket (by E[HS])")
                axis.set_ylabel("probability")
            else:
                axis.set_xlabel("final hand strength (river E[HS])")
                axis.set_ylabel("probability")
            axis.set_title(f"{street}: {shown.size} of {centroids.shape[0]} bucket centroids ({method})")
            axis.legend(fontsize=6, ncol=2)
            axis.grid(True, alpha=0.3)
            figure.tight_layout()
            save_figure(figure, png, "--plot")
