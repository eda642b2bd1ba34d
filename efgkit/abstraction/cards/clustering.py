"""From a hand feature to a card abstraction: cluster every round's situations into buckets.

``cluster_cards(card_structure, feature, buckets)`` computes the feature of every
situation exactly, clusters each round and returns a ``CardAbstraction``:

* ``ehs``, ``ehs2``: E[HS] / E[HS^2], k-means in L2 (scikit-learn's KMeans), or equal-mass
  percentile buckets with ``method="percentile"`` (the PHS baseline);
* ``hist``: hand-strength histograms (``bins`` equal-width bins), k-means with exact 1-D
  EMD (Johanson et al. 2013's KE);
* ``ochs``: hand strength against ``opponent_clusters`` clusters of opponent hands (the
  round-0 histograms clustered with EMD), k-means in L2 (Johanson et al. 2013's KO);
* ``pa``: potential-aware (Ganzfried & Sandholm 2014): the last round by E[HS] k-means,
  every earlier round by EMD k-means of its histogram over the next round's buckets,
  the ground distance being the distance between next-round centres (exact on a line
  when those are numbers; GS14's greedy EMD when they are histograms).

``buckets[r]`` is round ``r``'s bucket count, or ``None`` for lossless (every situation
its own bucket). Situations with identical features are clustered once, weighted by
their number, so suit-isomorphic situations (whose exact features are bit-identical)
always share a bucket; asking for at least as many buckets as distinct feature values
keeps every distinct value apart. Buckets are numbered by increasing mean E[HS].
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans

from efgkit.abstraction.cards.bucketing import CardAbstraction
from efgkit.abstraction.cards.emd import bin_centers, emd_exact, line_distances
from efgkit.abstraction.cards.hand_strength import HandStrength
from efgkit.abstraction.cards.kmeans import EMDKMeans
from efgkit.abstraction.cards.line_kmeans import LineEMDKMeans, small_line_kmeans
from efgkit.abstraction.cards.percentile import PercentileBuckets
from efgkit.abstraction.cards.potential_aware import next_round_histograms
from efgkit.abstraction.cards.situations import CardSituations
from efgkit.errors import AbstractionError
from efgkit.games.poker import CardStructure
from efgkit.io.progress import progress_bar

FEATURES = ("ehs", "ehs2", "hist", "ochs", "pa")
METHODS = ("kmeans", "percentile")


class _Ground:
    """How EMD between histograms over one round's buckets is measured: on a line at
    ``positions``, or by a distance ``matrix``."""

    def __init__(self, positions: np.ndarray | None = None, matrix: np.ndarray | None = None) -> None:
        self.positions, self.matrix = positions, matrix

    def estimator(self, k: int, n_init: int, seed: int, points: int) -> LineEMDKMeans | EMDKMeans:
        """The EMD k-means of ``points`` histograms: exact 1-D ``LineEMDKMeans`` on a line,
        ``EMDKMeans`` (GS14's greedy EMD) with a matrix."""
        if self.positions is not None:
            return small_line_kmeans(k, points, positions=self.positions, n_init=n_init, random_state=seed)
        return EMDKMeans(k, self.matrix, n_init=n_init, random_state=seed)

    def pairwise(self, centers: np.ndarray) -> np.ndarray:
        """EMD between every two histograms over this support (the next ground distance)."""
        if self.positions is not None:
            cdfs = np.cumsum(centers, axis=1)
            return line_distances(cdfs, cdfs, np.ascontiguousarray(np.diff(self.positions)))
        n = centers.shape[0]
        distances = np.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                distances[i, j] = distances[j, i] = emd_exact(centers[i], centers[j], self.matrix)
        return distances


def cluster_cards(
    card_structure: CardStructure,
    feature: str,
    buckets: list[int | None],
    *,
    method: str = "kmeans",
    bins: int = 10,
    opponent_clusters: int = 8,
    n_init: int = 10,
    random_state: int | None = None,
    progress: bool = False,
) -> CardAbstraction:
    """Bucket every round's situations by ``feature`` (see the module docstring); ``progress``
    shows a bar over the rounds on stderr."""
    if feature not in FEATURES:
        raise AbstractionError(f"feature must be one of {', '.join(FEATURES)}, got {feature!r}")
    if method not in METHODS:
        raise AbstractionError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "percentile" and feature not in ("ehs", "ehs2"):
        raise AbstractionError("percentile bucketing needs a scalar feature: ehs or ehs2")
    if bins < 1 or opponent_clusters < 1 or n_init < 1:
        raise AbstractionError("bins, opponent_clusters and n_init must be at least 1")
    situations = CardSituations(card_structure)
    counts = _checked_buckets(situations, buckets)
    strength = HandStrength(situations)
    seeds = np.random.default_rng(random_state).integers(2**31, size=situations.num_rounds + 1)
    clusterer = _Clusterer(method, n_init)
    labels: list[np.ndarray] = [np.empty(0, np.int64)] * situations.num_rounds
    bar = progress_bar(total=situations.num_rounds, desc=f"{feature} buckets", unit="round", enabled=progress)
    if feature == "pa":
        last = situations.num_rounds - 1
        ehs = strength.expected(last)
        labels[last], centers = clusterer.l2(ehs[:, None], counts[last], int(seeds[last]), order=ehs)
        bar.update(1)
        ground = _Ground(positions=centers[:, 0])
        for r in range(last - 1, -1, -1):
            histograms = next_round_histograms(situations, r, labels[r + 1])
            labels[r], centers = clusterer.emd(histograms, counts[r], int(seeds[r]), ground,
                                               order=strength.expected(r))
            ground = _Ground(matrix=ground.pairwise(centers))
            bar.update(1)
    else:
        hand_clusters = None
        if feature == "ochs":
            hand_clusters = _opponent_clusters(clusterer, strength, bins, opponent_clusters, int(seeds[-1]))
        for r in range(situations.num_rounds):
            ehs = strength.expected(r)
            if feature in ("ehs", "ehs2"):
                values = ehs if feature == "ehs" else strength.expected_squared(r)
                labels[r], _ = clusterer.l2(values[:, None], counts[r], int(seeds[r]), order=ehs)
            elif feature == "hist":
                labels[r], _ = clusterer.emd(strength.histogram(r, bins), counts[r], int(seeds[r]),
                                             _Ground(positions=bin_centers(bins)), order=ehs)
            else:
                labels[r], _ = clusterer.l2(strength.against_clusters(r, hand_clusters), counts[r],
                                            int(seeds[r]), order=ehs)
            bar.update(1)
    bar.close()
    parameters = {"buckets": [("all" if k is None else k) for k in buckets], "method": method,
                  "bins": bins, "opponent_clusters": opponent_clusters, "n_init": n_init,
                  "random_state": random_state}
    return CardAbstraction(card_structure, labels, feature, parameters)


def _checked_buckets(situations: CardSituations, buckets: list[int | None]) -> list[int | None]:
    if len(buckets) != situations.num_rounds:
        raise AbstractionError(
            f"give one bucket count per round: the game has {situations.num_rounds} rounds, "
            f"got {len(buckets)} counts"
        )
    for r, k in enumerate(buckets):
        available = situations.rounds[r].num_situations
        if k is not None and not 1 <= k <= available:
            raise AbstractionError(
                f"round {r} has {available} card situations (private hand x board), so it can have "
                f"1 to {available} buckets, not {k}"
            )
    return list(buckets)


def _opponent_clusters(clusterer, strength: HandStrength, bins: int, clusters: int, seed: int) -> np.ndarray:
    """Clusters of private hands for OCHS: round-0 histograms with EMD k-means (J13)."""
    situations = strength.situations.rounds[0]
    if situations.boards.shape[0] != 1:
        raise AbstractionError("OCHS needs a first round without board cards")
    labels, _ = clusterer.emd(strength.histogram(0, bins), clusters, seed,
                              _Ground(positions=bin_centers(bins)),
                              order=strength.expected(0), cap=True)
    hand_clusters = np.empty(situations.hands.shape[0], np.int64)
    hand_clusters[situations.hand_of] = labels
    return hand_clusters


class _Clusterer:
    """Clusters distinct feature rows (weighted by multiplicity) and numbers the buckets
    by increasing mean E[HS]. Returns (labels per situation, centres per bucket)."""

    def __init__(self, method: str, n_init: int) -> None:
        self.method, self.n_init = method, n_init

    def l2(self, features: np.ndarray, k: int | None, seed: int, *, order: np.ndarray):
        def fit(distinct, weights, k):
            if self.method == "percentile":
                return PercentileBuckets(k).fit(distinct[:, 0], sample_weight=weights).labels_
            return KMeans(k, n_init=self.n_init, random_state=seed).fit(
                distinct, sample_weight=weights).labels_

        return self._cluster(features, k, fit, order)

    def emd(self, histograms: np.ndarray, k: int | None, seed: int, ground: _Ground, *,
            order: np.ndarray, cap: bool = False):
        def fit(distinct, weights, k):
            return ground.estimator(k, self.n_init, seed, distinct.shape[0]).fit(
                distinct, sample_weight=weights).labels_

        return self._cluster(histograms, k, fit, order, cap)

    @staticmethod
    def _cluster(features, k, fit, order, cap=False):
        if k is None:
            labels = np.arange(features.shape[0])
        else:
            distinct, inverse, weights = np.unique(features, axis=0, return_inverse=True, return_counts=True)
            inverse = inverse.reshape(-1)
            if cap:
                k = min(k, distinct.shape[0])
            cluster = np.arange(distinct.shape[0]) if k >= distinct.shape[0] else fit(
                distinct, weights.astype(np.float64), k)
            labels = np.asarray(cluster)[inverse]
        _, labels = np.unique(labels, return_inverse=True)
        labels = labels.reshape(-1)
        count = int(labels.max()) + 1
        mass = np.bincount(labels, minlength=count)
        mean_strength = np.bincount(labels, weights=order, minlength=count) / mass
        rank = np.empty(count, np.int64)
        rank[np.lexsort((np.arange(count), mean_strength))] = np.arange(count)
        labels = rank[labels]
        centers = np.zeros((count, features.shape[1]))
        np.add.at(centers, labels, features)
        return labels, centers / np.bincount(labels, minlength=count)[:, None]
