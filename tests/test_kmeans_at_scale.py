"""Exact 1-D EMD k-means at scale (LineEMDKMeans): bounded assignments are exact, chunked maps
reproduce local runs bit for bit, weights and inertia mean what they say."""

import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from efgkit.abstraction.cards.emd import (
    bin_centers,
    emd_exact,
    emd_greedy,
    greedy_distances,
    line_distances,
    nearest_order,
)
from efgkit.abstraction.cards.line_kmeans import LineEMDKMeans, histogram_cdfs
from efgkit.abstraction.cards.potential_aware_kmeans import PotentialAwareKMeans
from efgkit.errors import AbstractionError

ROOT = Path(__file__).resolve().parent.parent


def _counts(points: int, bins: int, seed: int, runouts: int = 30) -> np.ndarray:
    """Integer count histograms around a few dozen shapes: many exact duplicates and ties."""
    rng = np.random.default_rng(seed)
    shapes = rng.dirichlet(np.full(bins, 0.4), size=40)
    return rng.multinomial(runouts, shapes[rng.integers(40, size=points)])


def _exact_emds(histograms: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """float64 EMD from every histogram to every centre, the existing exact 1-D kernel."""
    histograms = histograms / histograms.sum(axis=1, keepdims=True)
    gaps = np.diff(bin_centers(histograms.shape[1]))
    return line_distances(np.cumsum(histograms, axis=1), np.cumsum(centers, axis=1), gaps)


@pytest.mark.parametrize("batch_size", [None, 300])
def test_hamerly_and_elkan_reproduce_lloyd_bit_for_bit(batch_size):
    counts = _counts(2500, 16, seed=1)
    weights = np.random.default_rng(2).integers(1, 25, size=2500).astype(float)
    fits = {algorithm: LineEMDKMeans(30, algorithm=algorithm, batch_size=batch_size, n_batches=20,
                                     random_state=7, chunk_size=700).fit(counts, sample_weight=weights)
            for algorithm in ("lloyd", "hamerly", "elkan")}
    lloyd = fits["lloyd"]
    for algorithm in ("hamerly", "elkan"):
        assert np.array_equal(fits[algorithm].labels_, lloyd.labels_)
        assert np.array_equal(fits[algorithm].cluster_cdfs_, lloyd.cluster_cdfs_)
        assert fits[algorithm].inertia_ == lloyd.inertia_
        assert fits[algorithm].n_iter_ == lloyd.n_iter_
        pruned = sum(step["distances"] for step in fits[algorithm].history_)
        assert pruned < sum(step["distances"] for step in lloyd.history_)
    # Converged (no label changed in the last assignment): every centre is its members' mean.
    assert lloyd.history_[-1]["changed"] == 0
    cdfs = histogram_cdfs(counts).astype(np.float64)
    for cluster in np.unique(lloyd.labels_):
        members = lloyd.labels_ == cluster
        mean = np.average(cdfs[members], axis=0, weights=weights[members])
        assert np.allclose(lloyd.cluster_cdfs_[cluster], mean, atol=1e-6)


def test_mini_batch_then_full_assignment_gives_each_point_its_exact_nearest_centre():
    counts = _counts(3000, 20, seed=3, runouts=200)
    fit = LineEMDKMeans(40, batch_size=256, n_batches=15, max_iter=1, random_state=0).fit(counts)
    assert fit.n_iter_ == 1 and fit.n_batches_ == 15
    emds = _exact_emds(counts.astype(float), fit.cluster_centers_)
    chosen = emds[np.arange(3000), fit.labels_]
    assert np.all(chosen <= emds.min(axis=1) + 1e-6)
    assert np.array_equal(fit.predict(counts), fit.labels_)


def test_inertia_is_the_weighted_sum_of_exact_emds_to_the_assigned_centres():
    counts = _counts(1500, 12, seed=4)
    weights = np.random.default_rng(5).random(1500) * 10
    fit = LineEMDKMeans(17, algorithm="elkan", max_iter=4, random_state=1).fit(counts, sample_weight=weights)
    emds = _exact_emds(counts.astype(float), fit.cluster_centers_)
    brute = float(np.sum(weights * emds[np.arange(1500), fit.labels_]))
    assert fit.inertia_ == pytest.approx(brute, rel=1e-5)
    assert fit.mean_emd_ == pytest.approx(brute / weights.sum(), rel=1e-5)
    assert np.allclose(fit.cluster_centers_.sum(axis=1), 1.0) and fit.cluster_centers_.min() >= -1e-9


@pytest.mark.parametrize("algorithm", ["lloyd", "hamerly", "elkan"])
def test_a_chunked_map_reproduces_the_local_run_bit_for_bit(algorithm):
    counts = _counts(2000, 10, seed=6)
    weights = np.random.default_rng(8).integers(1, 25, size=2000).astype(float)

    def distributed(function, arguments):
        # Ship every chunk as a remote worker would get it (pickled), run them concurrently.
        shipped = [pickle.loads(pickle.dumps(chunk)) for chunk in arguments]
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda chunk: function(*chunk), shipped))
        return [pickle.loads(pickle.dumps(result)) for result in results]

    settings = dict(algorithm=algorithm, batch_size=200, n_batches=5, chunk_size=333, random_state=11)
    local = LineEMDKMeans(25, **settings).fit(counts, sample_weight=weights)
    remote = LineEMDKMeans(25, map_chunks=distributed, **settings).fit(counts, sample_weight=weights)
    assert np.array_equal(local.labels_, remote.labels_)
    assert np.array_equal(local.cluster_cdfs_, remote.cluster_cdfs_)
    assert local.inertia_ == remote.inertia_


def test_integer_weights_act_like_repeated_points():
    counts = _counts(600, 12, seed=9)
    multiplicity = np.random.default_rng(10).integers(1, 5, size=600)
    init = counts[:: 600 // 12][:12] + 1
    weighted = LineEMDKMeans(12, init=init, random_state=0).fit(counts, sample_weight=multiplicity)
    repeated = LineEMDKMeans(12, init=init, random_state=0).fit(np.repeat(counts, multiplicity, axis=0))
    assert np.array_equal(np.repeat(weighted.labels_, multiplicity), repeated.labels_)
    assert np.allclose(weighted.cluster_cdfs_, repeated.cluster_cdfs_, atol=1e-9)
    assert weighted.inertia_ == pytest.approx(repeated.inertia_, rel=1e-9)
    # A point of weight zero pulls no centre.
    silent = multiplicity.copy()
    silent[0] = 0
    without = LineEMDKMeans(12, init=init).fit(counts, sample_weight=silent)
    alone = LineEMDKMeans(12, init=init).fit(counts[1:], sample_weight=silent[1:])
    assert np.allclose(without.cluster_cdfs_, alone.cluster_cdfs_, atol=1e-9)


def test_deterministic_under_random_state():
    counts = _counts(1200, 10, seed=12)
    settings = dict(batch_size=100, n_batches=10, init_size=400, n_init=2)
    first = LineEMDKMeans(20, random_state=5, **settings).fit(counts)
    again = LineEMDKMeans(20, random_state=5, **settings).fit(counts)
    other = LineEMDKMeans(20, random_state=6, **settings).fit(counts)
    assert np.array_equal(first.labels_, again.labels_)
    assert np.array_equal(first.cluster_cdfs_, again.cluster_cdfs_)
    assert not np.array_equal(first.cluster_cdfs_, other.cluster_cdfs_)
    assert first.labels_.shape == (1200,) and first.cluster_centers_.shape == (20, 10)


def test_line_kmeans_rejects_bad_input_with_a_clear_message():
    counts = _counts(50, 6, seed=13)
    with pytest.raises(AbstractionError, match="not a histogram"):
        LineEMDKMeans(3).fit(np.vstack([counts, -np.ones(6)]))
    with pytest.raises(AbstractionError, match="algorithm"):
        LineEMDKMeans(3, algorithm="fast").fit(counts)
    with pytest.raises(AbstractionError, match="n_clusters"):
        LineEMDKMeans(51).fit(counts)
    with pytest.raises(AbstractionError, match="distinct"):
        LineEMDKMeans(3).fit(np.tile(counts[:2], (10, 1)))
    with pytest.raises(AbstractionError, match="hamerly"):
        LineEMDKMeans(10_000, algorithm="elkan").fit_cdfs(np.zeros((300_000, 2), np.float32))
    with pytest.raises(AbstractionError, match="not fitted"):
        LineEMDKMeans(3).predict(counts)


def test_benchmark_quick_mode_runs():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_kmeans.py"), "--quick"],
                            capture_output=True, text=True, timeout=300, check=True)
    assert result.stdout.count('"algorithm"') == 3


def _potential_aware_data(points: int, next_clusters: int, seed: int):
    """Turn-like centres (1-D histograms) and flop-like sparse histograms over them."""
    rng = np.random.default_rng(seed)
    next_centers = rng.dirichlet(np.full(12, 0.5), size=next_clusters)
    ranked = np.argsort(next_centers @ bin_centers(12))
    histograms = np.zeros((points, next_clusters))
    for i in range(points):
        around = rng.integers(next_clusters)
        spread = rng.integers(1, 6)
        for _ in range(rng.integers(3, 12)):
            step = around + rng.integers(-spread, spread + 1)
            histograms[i, ranked[min(max(step, 0), next_clusters - 1)]] += 1
    return next_centers, histograms


def test_potential_aware_bound_never_exceeds_the_exact_emd():
    next_centers, histograms = _potential_aware_data(12, 9, seed=14)
    ground = _exact_emds(next_centers, next_centers)
    cdfs = np.cumsum(next_centers, axis=1)[:, :-1]
    p = histograms / histograms.sum(axis=1, keepdims=True)
    gaps = np.diff(bin_centers(12))
    for a in range(6):
        for b in range(6, 12):
            bound = float(np.abs((p[a] - p[b]) @ cdfs) @ gaps)
            assert bound <= emd_exact(p[a], p[b], ground) + 1e-9 <= emd_greedy(p[a], p[b], ground) + 2e-9


@pytest.mark.parametrize("fit_size", [None, 300])
def test_potential_aware_pruned_assignment_equals_brute_force_greedy(fit_size):
    next_centers, histograms = _potential_aware_data(800, 30, seed=15)
    weights = np.random.default_rng(16).integers(1, 5, size=800).astype(float)
    fit = PotentialAwareKMeans(12, next_centers, fit_size=fit_size, max_iter=4, random_state=0).fit(
        scipy.sparse.csr_matrix(histograms), sample_weight=weights)
    ground = _exact_emds(next_centers, next_centers)
    order, sorted_distances = nearest_order(ground)
    p = histograms / histograms.sum(axis=1, keepdims=True)
    brute = greedy_distances(p, fit.cluster_centers_, order, sorted_distances)
    assert np.allclose(brute[np.arange(800), fit.labels_], brute.min(axis=1), rtol=1e-9, atol=1e-12)
    assert fit.inertia_ == pytest.approx(float(weights @ brute.min(axis=1)), rel=1e-6)
    assert sum(step["greedy_distances"] for step in fit.history_) < 800 * 12 * len(fit.history_)
