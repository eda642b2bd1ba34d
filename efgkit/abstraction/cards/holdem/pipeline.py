"""The hold'em card abstraction pipeline: features, then buckets, street by street.

``build_abstraction(options, out, features=None, runner=None)`` computes (or reuses from the
feature file) every street's features over canonical hands, clusters each street and
writes the bucket file. Streets, in the order they run:

Games of fewer than four rounds (``rounds`` 2 or 3: flop or turn hold'em) stop at their
last round: its street is the *final* one, and every feature looks no further than its board.

* preflop: E[HS], E[HS^2] and strength histograms of the preflop classes (by-products of
  one sweep over the canonical final boards); the classes are clustered into
  ``opponent_clusters`` groups (EMD k-means of their histograms, weighted by hole pairs,
  Johanson et al. 2013) for OCHS; its buckets are the classes themselves when as many are
  asked for as there are classes (169: lossless), else EMD k-means of the histograms;
* the final street (the river; the flop or turn with fewer rounds): ``ochs`` (L2 k-means of
  the OCHS vectors, J13's KO) or ``ehs`` (1-D k-means of E[HS]; with no cards to come
  E[HS^2] = E[HS]^2 orders hands the same way), chosen by ``river``;
* turn: ``emd``, exact 1-D EMD k-means of the ``bins``-bin strength histograms (J13's KE), or
  the expectation-based ``ehs`` / ``ehs2`` (1-D k-means of E[HS] / E[HS^2], the features
  distribution-aware abstraction replaced);
* flop: as the turn, or ``pa`` (potential-aware, Ganzfried & Sandholm 2014: the
  histogram of the turn buckets the 47 turn cards lead to, GS14's greedy EMD with the
  distance between turn centroids as ground distance; four rounds only).

Every clustering is weighted by the concrete (hole, board) pairs a canonical hand stands
for; identical features share a bucket (rows are de-duplicated first where that is cheap,
and if no more distinct rows exist than buckets asked for, each gets its own: lossless).
Feature chunks (a block of canonical boards each) and the clustering passes run on a
``ChunkRunner`` (this process or Dask); the driver reduces results in chunk order and
writes all files, so the output is the same bit for bit wherever chunks ran.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from math import comb
from pathlib import Path

import numpy as np
import scipy.sparse

from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem.bucket_file import StreetBuckets, save_buckets
from efgkit.abstraction.cards.holdem.deck import BOARD_CARDS_BY_ROUND, HOLE_CARDS, ROUND_NAMES, Deck
from efgkit.abstraction.cards.holdem.feature_store import FeatureStore
from efgkit.abstraction.cards.line_kmeans import LineEMDKMeans, histogram_cdfs, small_line_kmeans
from efgkit.abstraction.cards.potential_aware_kmeans import PotentialAwareKMeans
from efgkit.errors import AbstractionError, EfgkitError, ParameterError
from efgkit.io.budget import check_memory
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.io.progress import progress_bar

TURN_METHODS = ("emd", "ehs", "ehs2")
FLOP_METHODS = (*TURN_METHODS, "pa")
RIVER_METHODS = ("ochs", "ehs")
DEDUPLICATE_MAX_ROWS = 4_000_000
"""Feature rows are de-duplicated before clustering up to this many (a sort of the rows)."""
FULL_KMEANS_MAX_ROWS = 200_000
"""L2 k-means runs full Lloyd on every row up to this many rows; above, it fits a weighted sample."""
L2_FIT_SAMPLE_ROWS = 1_000_000
"""Rows drawn (with probability proportional to weight) to fit L2 k-means on a large street:
mini-batch k-means, then Lloyd iterations on the sample; every row is then assigned exactly.
(scikit-learn's mini-batch k-means over all 123M river rows takes over a second per batch.)"""


@dataclass(frozen=True)
class AbstractionOptions:
    """What to build: the game's ``rounds`` (2-4), bucket counts per street (one per round:
    preflop, flop, turn, river), methods (``river``: the final street's), binning, deck, seed;
    plus how the work is cut (boards per chunk) and k-means limits."""

    buckets: tuple[int, ...] = (169, 1000, 1000, 1000)
    flop: str = "emd"
    turn: str = "emd"
    river: str = "ochs"
    bins: int = 50
    num_ranks: int = 13
    opponent_clusters: int = 8
    seed: int = 0
    sweeps_per_chunk: int = 4096
    max_iter: int = 100
    tol: float = 5e-3
    """EMD k-means stops when at most this fraction of the hands change bucket: the mean EMD
    flattens long before (after 10-15 iterations on turn-shaped data, docs/kmeans-at-scale.md)
    while an iteration over the turn's 14M hands costs about a minute here."""
    batch_size: int = 8192
    rounds: int = 4

    @property
    def streets(self) -> tuple[str, ...]:
        """The streets of the game, preflop first."""
        return ROUND_NAMES[:self.rounds]

    @property
    def final_street(self) -> str:
        return ROUND_NAMES[self.rounds - 1]

    @property
    def final_cards(self) -> int:
        """Board cards at the showdown."""
        return BOARD_CARDS_BY_ROUND[self.rounds - 1]

    def check(self) -> Deck:
        deck = Deck(self.num_ranks)
        if self.rounds not in (2, 3, 4):
            raise ParameterError(f"--rounds must be 2, 3 or 4 (flop, turn or full hold'em), "
                                 f"got {self.rounds}")
        if len(self.buckets) != self.rounds or any(not isinstance(k, int) or k < 1 for k in self.buckets):
            raise ParameterError(f"--buckets needs {self.rounds} positive counts "
                                 f"({','.join(self.streets)}), got {self.buckets}")
        classes = F.hand_indexer(0, deck.num_ranks).round_size(0)
        if self.buckets[0] > classes:
            raise ParameterError(f"the preflop has {classes} classes, so at most {classes} buckets, "
                                 f"not {self.buckets[0]}")
        if self.flop not in FLOP_METHODS:
            raise ParameterError(f"--flop must be one of {', '.join(FLOP_METHODS)}, got {self.flop!r}")
        if self.flop == "pa" and self.rounds != 4:
            raise ParameterError("--flop pa clusters over the turn's histogram buckets: four rounds only")
        if self.turn not in TURN_METHODS:
            raise ParameterError(f"--turn must be one of {', '.join(TURN_METHODS)}, got {self.turn!r}")
        if self.river not in RIVER_METHODS:
            raise ParameterError(f"--river must be one of {', '.join(RIVER_METHODS)}, got {self.river!r}")
        if self.bins < 2:
            raise ParameterError(f"--bins must be at least 2, got {self.bins}")
        if not 1 <= self.opponent_clusters <= classes:
            raise ParameterError(f"opponent clusters must be 1..{classes}, got {self.opponent_clusters}")
        if self.sweeps_per_chunk < 1 or self.max_iter < 1 or self.batch_size < 1:
            raise ParameterError("sweeps_per_chunk, max_iter and batch_size must be at least 1")
        return deck


class MemoryFeatures:
    """Features kept in memory when no feature file is asked for (FeatureStore's interface)."""

    def __init__(self) -> None:
        self._streets: dict[str, dict[str, np.ndarray]] = {}

    @property
    def streets(self) -> tuple[str, ...]:
        return tuple(self._streets)

    def read(self, street: str) -> dict[str, np.ndarray]:
        return self._streets[street]

    def write(self, street: str, arrays: dict[str, np.ndarray]) -> None:
        self._streets[street] = arrays


# ---------------------------------------------------------------------------- features
def _board_chunks(boards: np.ndarray, sweeps_per_board: int, sweeps_per_chunk: int) -> list[slice]:
    step = max(1, sweeps_per_chunk // sweeps_per_board)
    return [slice(start, min(start + step, boards.shape[0])) for start in range(0, boards.shape[0], step)]


def _bar(total: int, description: str, progress: bool):
    return progress_bar(total=total, desc=description, unit="chunk", enabled=progress)


def _check_coverage(street: str, weight: np.ndarray, deck: Deck) -> None:
    """Every canonical hand was reached, and the weights add up to every (hole, board) deal."""
    board_cards = BOARD_CARDS_BY_ROUND[ROUND_NAMES.index(street)]
    deals = comb(deck.num_cards, HOLE_CARDS) * comb(deck.num_cards - HOLE_CARDS, board_cards)
    if weight.min() <= 0 or int(weight.sum(dtype=np.int64)) != deals:
        raise AbstractionError(f"{street} features do not cover every canonical hand exactly once "
                               f"(the hand indexer and the board enumeration disagree)")


def preflop_features(options: AbstractionOptions, runner: ChunkRunner,
                     progress: bool) -> dict[str, np.ndarray]:
    """Preflop E[HS], E[HS^2], histogram and weight per class, and the OCHS opponent clusters."""
    deck = Deck(options.num_ranks)
    boards, orbit = F.canonical_boards(deck, options.final_cards)
    chunks = _board_chunks(boards, 1, options.sweeps_per_chunk)
    total = None
    with _bar(len(chunks), "preflop features", progress) as bar:
        for part in runner.imap(F.preflop_chunk, [(deck.num_ranks, boards[c], orbit[c], options.bins)
                                                  for c in chunks]):
            total = part if total is None else total + part
            bar.update(1)
    opponents = F.opponents_per_hand(deck, options.final_cards)
    ehs = total.sums / (2.0 * opponents * total.counts)
    histogram = total.histogram / total.counts[:, None]
    weight = (total.counts // comb(deck.num_cards - HOLE_CARDS, options.final_cards)).astype(np.uint32)
    clusters = _small_emd_kmeans(options.opponent_clusters, histogram, weight, options.seed).labels_
    return {"ehs": ehs, "ehs2": total.squares / (4.0 * opponents**2 * total.counts), "histogram": histogram,
            "weight": weight, "opponent_cluster": _by_strength(clusters, weight, ehs)[0].astype(np.int32)}


def _small_emd_kmeans(k: int, histogram: np.ndarray, weight: np.ndarray, seed: int) -> LineEMDKMeans:
    """The 169 preflop classes' EMD k-means: the streets' ``LineEMDKMeans`` set up for small
    inputs (``small_line_kmeans``: k-means++ over every point, Lloyd iterations, 10 restarts)."""
    return small_line_kmeans(k, histogram.shape[0], n_init=10, random_state=seed).fit(
        histogram, sample_weight=weight.astype(np.float64))


def _rows_by_index(street: str, deck: Deck, orbit: np.ndarray, chunks: list[slice], results, names: list[str],
             dtypes: dict[str, type], progress: bool) -> dict[str, np.ndarray]:
    """Write chunk results into arrays indexed by canonical hand; weights add the boards' orbits."""
    board_cards = BOARD_CARDS_BY_ROUND[ROUND_NAMES.index(street)]
    size = F.hand_indexer(board_cards, deck.num_ranks).round_size(1)
    per_board = F.pairs_per_board(deck, board_cards)
    arrays: dict[str, np.ndarray] = {}
    weight = np.zeros(size, np.int64)
    with _bar(len(chunks), f"{street} features", progress) as bar:
        for chunk, part in zip(chunks, results, strict=True):
            for name in names:
                values = getattr(part, name)
                if name not in arrays:
                    arrays[name] = np.zeros((size, *values.shape[1:]), dtypes[name])
                arrays[name][part.indices] = values
            np.add.at(weight, part.indices, np.repeat(orbit[chunk], per_board))
            bar.update(1)
    _check_coverage(street, weight, deck)
    arrays["weight"] = weight.astype(np.uint32)
    return arrays


def final_features(options: AbstractionOptions, cluster_of_class: np.ndarray, runner: ChunkRunner,
                   progress: bool) -> dict[str, np.ndarray]:
    """The final street's E[HS] and OCHS (against the opponent cluster of every preflop class) per
    canonical hand: the river's, or the flop's / turn's in games of two / three rounds."""
    deck = Deck(options.num_ranks)
    boards, orbit = F.canonical_boards(deck, options.final_cards)
    chunks = _board_chunks(boards, 1, options.sweeps_per_chunk)
    results = runner.imap(F.river_chunk, [(deck.num_ranks, boards[c], cluster_of_class) for c in chunks])
    return _rows_by_index(options.final_street, deck, orbit, chunks, results, ["ehs", "ochs"],
                    {"ehs": np.float32, "ochs": np.float32}, progress)


def street_features(options: AbstractionOptions, street: str, runner: ChunkRunner,
                    progress: bool) -> dict[str, np.ndarray]:
    """Flop or turn histograms (runout counts to the final board), E[HS] and E[HS^2] per
    canonical hand."""
    deck = Deck(options.num_ranks)
    board_cards = BOARD_CARDS_BY_ROUND[ROUND_NAMES.index(street)]
    final = options.final_cards
    boards, orbit = F.canonical_boards(deck, board_cards)
    runouts = comb(deck.num_cards - board_cards, final - board_cards)
    chunks = _board_chunks(boards, runouts, options.sweeps_per_chunk)
    results = runner.imap(F.street_chunk, [(deck.num_ranks, boards[c], options.bins, final) for c in chunks])
    counts = comb(deck.num_cards - board_cards - HOLE_CARDS, final - board_cards)
    histogram_dtype = np.uint8 if counts < 1 << 8 else np.uint16
    return _rows_by_index(street, deck, orbit, chunks, results, ["histogram", "ehs", "ehs2"],
                    {"histogram": histogram_dtype, "ehs": np.float32, "ehs2": np.float32}, progress)


def feature_bytes(options: AbstractionOptions) -> int:
    """Bytes the largest street's feature arrays hold while they are gathered (the pipeline's
    peak: 5.9 GB estimated for the 13-rank river, 6.2 GB measured): per canonical hand its
    features (``street_features``, ``river_features``), an int64 weight and its uint32 copy."""
    deck = Deck(options.num_ranks)
    largest = 0
    for street in options.streets[1:]:
        board_cards = BOARD_CARDS_BY_ROUND[ROUND_NAMES.index(street)]
        if street == options.final_street:
            row = 4 + 4 * options.opponent_clusters
        else:
            runouts = comb(deck.num_cards - board_cards - HOLE_CARDS, options.final_cards - board_cards)
            row = options.bins * (1 if runouts < 1 << 8 else 2) + 8
        rows = F.hand_indexer(board_cards, deck.num_ranks).round_size(1)
        largest = max(largest, rows * (row + 8 + 4))
    return largest


def compute_features(options: AbstractionOptions, store, runner: ChunkRunner,
                     progress: bool, deadline: float | None = None) -> dict[str, float]:
    """Compute every street missing from ``store`` (preflop, the final street, then the turn and
    flop before it), writing each as it completes; returns the seconds spent per street (0 for
    streets already stored). A street is not started once ``time.monotonic()`` has passed
    ``deadline``: those are left out."""
    seconds = {}
    for street in _street_order(options):
        if street in store.streets:
            seconds[street] = 0.0
            continue
        if deadline is not None and time.monotonic() >= deadline:
            break
        started = time.perf_counter()
        if street == "preflop":
            arrays = preflop_features(options, runner, progress)
        elif street == options.final_street:
            arrays = final_features(options, store.read("preflop")["opponent_cluster"], runner, progress)
        else:
            arrays = street_features(options, street, runner, progress)
        store.write(street, arrays)
        seconds[street] = time.perf_counter() - started
    return seconds


def _street_order(options: AbstractionOptions) -> tuple[str, ...]:
    """Preflop (the opponent clusters), the final street (needs them), then the others from the
    last back (the potential-aware flop needs the turn's buckets)."""
    return ("preflop", options.final_street, *reversed(options.streets[1:-1]))


# ---------------------------------------------------------------------------- clustering
def _by_strength(labels: np.ndarray, weight: np.ndarray, ehs: np.ndarray,
                 centroids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Renumber buckets 0.. by increasing weighted mean E[HS] (ties by old number)."""
    count = int(labels.max()) + 1
    weight = weight.astype(np.float64)
    mass = np.bincount(labels, weights=weight, minlength=count)
    mean = np.bincount(labels, weights=weight * ehs, minlength=count) / np.maximum(mass, 1e-300)
    rank = np.empty(count, np.int64)
    rank[np.lexsort((np.arange(count), mean))] = np.arange(count)
    reordered = None if centroids is None else centroids[np.argsort(rank)]
    return rank[labels], reordered


def _distinct_rows(rows: np.ndarray, weight: np.ndarray):
    """(distinct rows, inverse, summed weight): always for one column (a sort of numbers), up to
    DEDUPLICATE_MAX_ROWS rows otherwise, else None."""
    if rows.ndim == 2 and rows.shape[1] == 1:
        values, inverse = np.unique(rows[:, 0], return_inverse=True)
        return values[:, None], inverse, np.bincount(inverse, weights=weight.astype(np.float64))
    if rows.shape[0] > DEDUPLICATE_MAX_ROWS:
        return None
    flat = np.ascontiguousarray(rows.reshape(rows.shape[0], -1))
    keys = flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    return rows[first], inverse, np.bincount(inverse, weights=weight.astype(np.float64))


def _emd_street(street: str, histograms: np.ndarray, weight: np.ndarray, k: int, seed: int,
                options: AbstractionOptions, runner: ChunkRunner, progress: bool):
    """Exact 1-D EMD k-means of histograms (counts) -> labels, centroid histograms, mean EMD."""
    distinct = _distinct_rows(histograms, weight)
    if distinct is not None and distinct[0].shape[0] <= k:
        rows, inverse, _ = distinct
        return inverse, rows / rows.sum(axis=1, keepdims=True), 0.0, {"lossless": True}
    points, weights = (distinct[0], distinct[2]) if distinct is not None else (histograms, weight)
    cdfs = histogram_cdfs(points)
    weights = np.array(weights, np.float64)
    cdfs.flags.writeable = weights.flags.writeable = False  # lets a Dask runner send them only once
    big = points.shape[0] > 20 * options.batch_size
    model = LineEMDKMeans(k, batch_size=options.batch_size if big else None, max_iter=options.max_iter,
                          tol=options.tol, random_state=seed, map_chunks=runner.map_chunks,
                          progress=progress).fit_cdfs(cdfs, sample_weight=weights)
    labels = model.labels_ if distinct is None else model.labels_[distinct[1]]
    return (labels.astype(np.int64), model.cluster_centers_, float(model.mean_emd_),
            {"iterations": int(model.n_iter_), "mini_batches": int(model.n_batches_)})


def nearest_l2(points: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centre (L2) of every point and the distance to it (a clustering chunk function)."""
    from sklearn.metrics import pairwise_distances_argmin_min

    labels, distances = pairwise_distances_argmin_min(points, centers.astype(points.dtype))
    return labels.astype(np.int64), distances


def _l2_street(points: np.ndarray, weight: np.ndarray, k: int, seed: int, options: AbstractionOptions,
               runner: ChunkRunner):
    """L2 k-means of feature vectors -> labels, centroids, weighted mean L2 distance."""
    from sklearn.cluster import KMeans, MiniBatchKMeans

    distinct = _distinct_rows(points, weight)
    if distinct is not None and distinct[0].shape[0] <= k:
        return distinct[1], distinct[0].astype(np.float64), 0.0, {"lossless": True}
    rows, weights = (distinct[0], distinct[2]) if distinct is not None else (points, weight)
    weights = np.asarray(weights, np.float64)
    if rows.shape[0] <= FULL_KMEANS_MAX_ROWS:
        model = KMeans(k, n_init=3, random_state=seed).fit(rows, sample_weight=weights)
    else:
        rng = np.random.default_rng(seed)
        sample = rows[rng.choice(rows.shape[0], size=L2_FIT_SAMPLE_ROWS, p=weights / weights.sum())]
        warm = MiniBatchKMeans(k, batch_size=options.batch_size, n_init=3, random_state=seed,
                               compute_labels=False).fit(sample)
        model = KMeans(k, init=warm.cluster_centers_, n_init=1, max_iter=options.max_iter,
                       random_state=seed).fit(sample)
    centers = model.cluster_centers_
    step = 1 << 18
    parts = runner.map_chunks(nearest_l2, [(points[s:s + step], centers)
                                           for s in range(0, points.shape[0], step)])
    labels = np.concatenate([part[0] for part in parts])
    distances = np.concatenate([part[1] for part in parts])
    used = np.unique(labels)
    if used.size < k:  # drop centres no point is nearest to
        labels = np.searchsorted(used, labels)
        centers = centers[used]
    mean = float(np.dot(weight.astype(np.float64), distances) / weight.sum(dtype=np.float64))
    return labels, centers, mean, {"iterations": int(model.n_iter_)}


def _potential_aware_flop(flop: dict, turn_buckets: StreetBuckets, k: int, seed: int,
                          options: AbstractionOptions, runner: ChunkRunner, progress: bool):
    """GS14: each flop hand's histogram over the turn buckets its turn cards lead to."""
    deck = Deck(options.num_ranks)
    boards, _ = F.canonical_boards(deck, 3)
    chunks = _board_chunks(boards, deck.num_cards - 3, options.sweeps_per_chunk)
    shared = runner.share(turn_buckets.labels.astype(np.int32))
    size = flop["weight"].shape[0]
    next_buckets = np.full((size, deck.num_cards - 3 - HOLE_CARDS), -1, np.int32)
    with _bar(len(chunks), "flop transitions", progress) as bar:
        for part in runner.imap(F.transition_chunk, [(deck.num_ranks, boards[c], shared) for c in chunks]):
            next_buckets[part.indices] = part.next_buckets
            bar.update(1)
    rows = np.repeat(np.arange(size), next_buckets.shape[1])
    histograms = scipy.sparse.csr_matrix((np.ones(rows.size), (rows, next_buckets.ravel())),
                                         shape=(size, turn_buckets.num_buckets))
    model = PotentialAwareKMeans(k, turn_buckets.centroids, random_state=seed, max_iter=options.max_iter,
                                 tol=options.tol, progress=progress).fit(
        histograms, sample_weight=flop["weight"].astype(np.float64))
    return (model.labels_.astype(np.int64), model.cluster_centers_, float(model.mean_emd_),
            {"iterations": int(model.n_iter_)})


def cluster_streets(options: AbstractionOptions, store, runner: ChunkRunner,
                    progress: bool) -> list[StreetBuckets]:
    """Bucket every street from stored features: preflop, the final street, the turn, then the
    flop (its potential-aware variant needs the turn buckets). Returns them in street order."""
    seeds = {street: options.seed + r for r, street in enumerate(ROUND_NAMES)}
    done: dict[str, StreetBuckets] = {}
    # One step per street, so a long clustering without its own bar (scikit-learn's river
    # k-means) still shows which street runs and for how long.
    streets = progress_bar(_street_order(options), desc="clustering", unit="street", enabled=progress)
    for street in streets:
        streets.set_postfix(street=street)
        started = time.perf_counter()
        k = options.buckets[ROUND_NAMES.index(street)]
        data = store.read(street)
        if street == "preflop" and k == data["ehs"].shape[0]:
            labels, centroids, mean, method, distance, details = (
                np.arange(k), data["histogram"], 0.0, "lossless", "emd", {"lossless": True})
        elif street == "preflop":
            model = _small_emd_kmeans(k, data["histogram"], data["weight"], seeds[street])
            labels, centroids, method, distance = model.labels_, model.cluster_centers_, "emd-kmeans", "emd"
            mean, details = model.inertia_ / float(data["weight"].sum()), {"iterations": int(model.n_iter_)}
        elif street == options.final_street and options.river == "ochs":
            labels, centroids, mean, details = _l2_street(data["ochs"], data["weight"], k, seeds[street],
                                                          options, runner)
            method, distance = "ochs-l2-kmeans", "l2"
        elif street == options.final_street:
            labels, centroids, mean, details = _l2_street(data["ehs"][:, None], data["weight"], k,
                                                          seeds[street], options, runner)
            method, distance = "ehs-kmeans", "emd"  # between point masses EMD is |x - y|, the L2 in 1-D
        elif street in ("flop", "turn") and getattr(options, street) in ("ehs", "ehs2"):
            feature = getattr(options, street)
            labels, centroids, mean, details = _l2_street(data[feature][:, None], data["weight"], k,
                                                          seeds[street], options, runner)
            method, distance = f"{feature}-kmeans", "emd"
        elif street == "flop" and options.flop == "pa":
            labels, centroids, mean, details = _potential_aware_flop(data, done["turn"], k, seeds[street],
                                                                     options, runner, progress)
            method, distance = "potential-aware-emd-kmeans", "emd-greedy"
        else:
            labels, centroids, mean, details = _emd_street(street, data["histogram"], data["weight"], k,
                                                           seeds[street], options, runner, progress)
            method, distance = "emd-kmeans", "emd"
        labels, centroids = _by_strength(np.asarray(labels, np.int64), data["weight"], data["ehs"],
                                         np.asarray(centroids, np.float64))
        done[street] = StreetBuckets(street, labels, centroids, method, distance, mean, seeds[street],
                                     dict(details, seconds=time.perf_counter() - started))
    return [done[street] for street in options.streets]


# ---------------------------------------------------------------------------- the whole run
class FeaturesUnfinished(EfgkitError):
    """A time budget ran out between streets: the finished streets' features are in the
    feature file, and no bucket file was written (it needs every street)."""


def build_abstraction(options: AbstractionOptions, out: str | Path, *, features: str | Path | None = None,
                      runner: ChunkRunner | None = None, progress: bool = False,
                      time_limit: float | None = None) -> dict:
    """Features (reused from / stored in ``features`` if given), clustering, the bucket file
    ``out``; returns a summary (sizes, seconds per stage, within-cluster mean distances).

    ``time_limit`` (seconds, needs ``features``): no street's features are started after it;
    if streets remain, FeaturesUnfinished says which are done (kept in ``features``, so a run
    with the same file continues) and nothing else is written. The clustering, once every
    street's features exist, runs to the end."""
    if time_limit is not None and features is None:
        raise ParameterError("--time needs --features FILE.h5: the streets finished in time are kept "
                             "there (a bucket file needs every street)")
    deadline = None if time_limit is None else time.monotonic() + time_limit
    deck = options.check()
    check_memory(feature_bytes(options), f"the features of a {deck.num_ranks}-rank bucket file",
                 "use fewer ranks (--ranks) or a machine with more memory")
    runner = runner or ChunkRunner()
    store = MemoryFeatures() if features is None else FeatureStore(
        features, num_ranks=deck.num_ranks, bins=options.bins, opponent_clusters=options.opponent_clusters,
        opponent_seed=options.seed, rounds=options.rounds)
    reused = list(store.streets)
    started = time.perf_counter()
    feature_seconds = compute_features(options, store, runner, progress, deadline)
    remaining = [street for street in _street_order(options) if street not in feature_seconds]
    if remaining:
        done = [street for street in _street_order(options) if street in feature_seconds]
        raise FeaturesUnfinished(
            f"--time {time_limit:g}: features of {', '.join(done) or 'no street'} done and kept in "
            f"{features}; {', '.join(remaining)} not started; no bucket file written (it needs every "
            f"street): run again with --features {features} to continue")
    streets = cluster_streets(options, store, runner, progress)
    parameters = dict(asdict(options), buckets=list(options.buckets))
    save_buckets(out, deck.num_ranks, streets, parameters)
    summary_streets = {}
    for street in streets:
        summary_streets[street.street] = {
            "canonical_hands": int(street.labels.shape[0]), "buckets": street.num_buckets,
            "method": street.method, "distance": street.distance,
            "within_cluster_mean_distance": street.within_cluster_mean_distance, "seed": street.seed,
            "feature_seconds": feature_seconds[street.street], "features_reused": street.street in reused,
            "cluster_seconds": street.details["seconds"],
            "iterations": street.details.get("iterations"), "lossless": bool(street.details.get("lossless")),
        }
    return {"num_ranks": deck.num_ranks, "rounds": options.rounds, "buckets_requested": list(options.buckets),
            "buckets": [s.num_buckets for s in streets], "flop": options.flop, "turn": options.turn,
            "river": options.river,
            "bins": options.bins, "seed": options.seed, "opponent_clusters": options.opponent_clusters,
            "runner": runner.description, "streets": summary_streets,
            "features": None if features is None else str(features), "out": str(out),
            "seconds": time.perf_counter() - started}
