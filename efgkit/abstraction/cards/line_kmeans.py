"""Exact 1-D EMD k-means at hold'em scale: millions of histograms, thousands of centres.

On a line the earth mover's distance between two histograms is the L1 distance between
their CDFs, each step weighted by the gap to the next support point (``emd.py``). This
module clusters in CDF space: every histogram becomes its CDF without the final 1
(float32, ``(n, support - 1)``; 13.96 M turn hands x 50 bins is 2.7 GB), a centre is the
mean CDF (the CDF of the mean histogram: Johanson et al. 2013's "k-means with EMD", also
fishbait's and GS14's; it is the L2 centroid in CDF space, not the L1-optimal coordinate-wise
median, which would make this exact EMD k-medians), and every assignment is exact.

``LineEMDKMeans`` runs in three phases, each optional and each reproducible under
``random_state``:

1. **Seeding**: k-means++ (Arthur & Vassilvitskii 2007: each new centre drawn with
   probability proportional to weight x squared EMD to the nearest chosen one) over a
   uniform sample of ``init_size`` points (all of them when there are fewer). Full
   k-means++ costs n x k distances (14 M x 1,000 x 49 terms for the turn); a sample of
   50 k-points keeps the seeds spread over the distribution at a thousandth of the cost
   (sklearn's MiniBatchKMeans seeds the same way). ``init`` may instead give the centres.
2. **Mini-batch** (``batch_size``): Sculley 2010's web-scale k-means on weighted data:
   ``n_batches`` batches drawn with probability proportional to the sample weights, each
   point assigned exactly, every centre the running mean of all points ever assigned to it
   (per-centre learning rate 1 / count).
3. **Lloyd** iterations over all points, up to ``max_iter`` exact assignments, each
   followed by moving the centres to the weighted means, until no label changes (or at
   most a fraction ``tol`` of the points change). ``algorithm`` picks how an assignment
   avoids distances it does not need; all three give bit-identical labels and centres:

   * ``"lloyd"``: every point against every centre;
   * ``"hamerly"`` (Hamerly 2010): per point an upper bound on the distance to its
     centre and one lower bound on the distance to every other centre, kept valid across
     centre moves by the triangle inequality; 16 bytes per point, the choice at scale;
   * ``"elkan"`` (Elkan 2003): one lower bound per point *and centre* (n x k float32:
     5 GB for the flop with 1,000 centres) and the centre-to-centre distances; fewer
     distances than Hamerly, refused above ``ELKAN_MAX_BYTES``.

   Bounds are widened by a relative margin (``BOUND_MARGIN``, far above float32 rounding of
   a 49-term sum) so a pruned centre is never the nearest by the computed distances, and
   ties go to the lowest centre index as in a plain argmin: the pruning is exact.

The labels returned are always the exact nearest centre of every point for the centres
returned; ``inertia_`` is the weighted sum of those EMDs. A centre left without points
stays where it was (as in mini-batch k-means).

Every pass over the points is a ``map_chunks(function, arguments)`` over chunks of
``chunk_size`` rows, ``function`` being one of the pure top-level functions below
(``assign_chunk``, ``accumulate_chunk``, ``hamerly_chunk``, ``elkan_chunk``); the default
runs them here one after another, a Dask client's ``map`` + ``gather`` can run them on a
cluster. Chunk results are reduced in chunk order, so the labels are the same bit for bit
either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numba
import numpy as np

from efgkit.abstraction.cards.emd import bin_centers
from efgkit.errors import AbstractionError
from efgkit.io.progress import progress_bar

ALGORITHMS = ("lloyd", "hamerly", "elkan")
BOUND_MARGIN = 1e-5
ELKAN_MAX_BYTES = 8 * 2**30

MapChunks = Callable[[Callable, Sequence[tuple]], list]


def run_locally(function: Callable, arguments: Sequence[tuple]) -> list:
    """The default ``map_chunks``: call ``function`` on every argument tuple, in order."""
    return [function(*chunk) for chunk in arguments]


# ---------------------------------------------------------------------------- kernels
@numba.njit(cache=True, no_cfunc_wrapper=True)
def _histogram_cdfs(histograms, cdfs):
    """Normalised CDFs without the final 1; returns the first bad row or -1."""
    for i in range(histograms.shape[0]):
        total = 0.0
        for t in range(histograms.shape[1]):
            value = float(histograms[i, t])
            if not (value >= 0.0 and value < np.inf):
                return i
            total += value
        if not total > 0.0:
            return i
        running = 0.0
        for t in range(cdfs.shape[1]):
            running += float(histograms[i, t])
            cdfs[i, t] = running / total
    return -1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _distance(cdfs, i, centers_t, k, gaps):
    """EMD from point ``i`` to centre ``k``; the same float32 operations, in the same order,
    as ``_distances_to_all``, so both give the same bits."""
    total = np.float32(0.0)
    for t in range(gaps.shape[0]):
        total += abs(cdfs[i, t] - centers_t[t, k]) * gaps[t]
    return total


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _distances_to_all(cdfs, i, centers_t, gaps, out):
    """EMD from point ``i`` to every centre into ``out`` (float32, k); vectorised over centres."""
    out[:] = 0.0
    for t in range(gaps.shape[0]):
        value = cdfs[i, t]
        gap = gaps[t]
        for k in range(out.shape[0]):
            out[k] += abs(value - centers_t[t, k]) * gap


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _two_nearest(distances):
    """(index of the smallest, lowest index on ties), its distance, the second smallest."""
    best, first, second = 0, distances[0], np.inf
    for k in range(1, distances.shape[0]):
        value = distances[k]
        if value < first:
            best, second, first = k, first, value
        elif value < second:
            second = value
    return best, first, second


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _assign(cdfs, centers_t, gaps, labels, distances):
    """Brute-force assignment: ``labels`` int32 and ``distances`` float32 (n,) get each
    point's nearest centre (lowest index on ties) and its EMD. ``cdfs`` float32 (n, bins -
    1), ``centers_t`` float32 (bins - 1, k) the centres' CDFs by column, ``gaps`` float32
    (bins - 1,) between bin positions."""
    scratch = np.empty(centers_t.shape[1], np.float32)
    for i in range(cdfs.shape[0]):
        _distances_to_all(cdfs, i, centers_t, gaps, scratch)
        best, first, _ = _two_nearest(scratch)
        labels[i] = best
        distances[i] = first


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _accumulate(cdfs, weights, labels, centers_t, gaps, sums, masses):
    """Add each point's weighted CDF to its label's row of ``sums`` float64 (k, bins - 1)
    and its weight to ``masses`` float64 (k,); returns the inertia, the weighted sum of
    EMDs to the (old) centres. ``weights`` float64 (n,), ``labels`` int32 (n,), the rest as
    in ``_assign``."""
    inertia = 0.0
    for i in range(cdfs.shape[0]):
        label = labels[i]
        weight = weights[i]
        masses[label] += weight
        for t in range(cdfs.shape[1]):
            sums[label, t] += weight * cdfs[i, t]
        inertia += weight * _distance(cdfs, i, centers_t, label, gaps)
    return inertia


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _hamerly(cdfs, centers_t, gaps, half_separation, drift, labels, upper, lower, margin):
    """Hamerly 2010, Algorithm 2, one assignment; bounds updated in place. Returns
    (points whose label changed, point-centre distances computed)."""
    k = centers_t.shape[1]
    first_drift, second_drift, fastest = 0.0, 0.0, -1
    for j in range(k):
        if drift[j] > first_drift:
            first_drift, second_drift, fastest = drift[j], first_drift, j
        elif drift[j] > second_drift:
            second_drift = drift[j]
    scratch = np.empty(k, np.float32)
    changed, computed = 0, 0
    for i in range(cdfs.shape[0]):
        label = labels[i]
        if label >= 0:
            upper[i] += drift[label]
            lower[i] -= second_drift if label == fastest else first_drift
            bound = max(half_separation[label], lower[i])
            if upper[i] < bound:
                continue
            upper[i] = _distance(cdfs, i, centers_t, label, gaps) * (1.0 + margin)
            computed += 1
            if upper[i] < bound:
                continue
        _distances_to_all(cdfs, i, centers_t, gaps, scratch)
        computed += k
        best, first, second = _two_nearest(scratch)
        if best != label:
            changed += 1
            labels[i] = best
        upper[i] = first * (1.0 + margin)
        lower[i] = second * (1.0 - margin)
    return changed, computed


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _elkan(cdfs, centers_t, gaps, half_center_distances, half_separation, drift, labels, upper, lower,
           margin):
    """Elkan 2003, one assignment; ``lower`` is (points, centres) float32, updated in place
    (rounded down so it stays a lower bound). Returns (changed, distances computed)."""
    k = centers_t.shape[1]
    shrink = np.float32(1.0 - 2.0**-22)
    scratch = np.empty(k, np.float32)
    changed, computed = 0, 0
    for i in range(cdfs.shape[0]):
        label = labels[i]
        if label < 0:
            _distances_to_all(cdfs, i, centers_t, gaps, scratch)
            computed += k
            best, first, _ = _two_nearest(scratch)
            labels[i] = best
            changed += 1
            upper[i] = first * (1.0 + margin)
            for j in range(k):
                lower[i, j] = np.float32(scratch[j] * (1.0 - margin)) * shrink
            continue
        for j in range(k):
            if drift[j] > 0.0:
                lower[i, j] = max(np.float32(lower[i, j] - drift[j]) * shrink, np.float32(0.0))
        upper[i] += drift[label]
        if upper[i] < half_separation[label]:
            continue
        current = np.float32(0.0)
        tight = False
        for j in range(k):
            if j == label or upper[i] < lower[i, j] or upper[i] < half_center_distances[label, j]:
                continue
            if not tight:
                current = _distance(cdfs, i, centers_t, label, gaps)
                computed += 1
                upper[i] = current * (1.0 + margin)
                lower[i, label] = np.float32(current * (1.0 - margin)) * shrink
                tight = True
                if upper[i] < lower[i, j] or upper[i] < half_center_distances[label, j]:
                    continue
            other = _distance(cdfs, i, centers_t, j, gaps)
            computed += 1
            lower[i, j] = np.float32(other * (1.0 - margin)) * shrink
            if other < current or (other == current and j < label):
                label, current = j, other
                upper[i] = current * (1.0 + margin)
        if label != labels[i]:
            changed += 1
            labels[i] = label
    return changed, computed


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _center_distances(centers_t, gaps):
    """EMD between every two centres, float32 (k, k)."""
    k = centers_t.shape[1]
    distances = np.zeros((k, k), np.float32)
    for a in range(k):
        for b in range(a + 1, k):
            total = np.float32(0.0)
            for t in range(gaps.shape[0]):
                total += abs(centers_t[t, a] - centers_t[t, b]) * gaps[t]
            distances[a, b] = distances[b, a] = total
    return distances


@numba.njit(cache=True, no_cfunc_wrapper=True)
def plus_plus_seeds(sample_t, weights, gaps, n_clusters, uniforms):
    """Weighted k-means++ (D = 1-D EMD) over a transposed float32 sample of CDFs (t, m);
    ``uniforms`` (k,) in [0, 1) drive the draws. Returns the chosen sample indices, or -1
    entries when the sample has fewer than ``n_clusters`` distinct positive-weight points."""
    m = sample_t.shape[1]
    chosen = np.full(n_clusters, -1, np.int64)
    nearest = np.full(m, np.inf)
    distance = np.empty(m, np.float32)
    mass = weights.copy()
    for c in range(n_clusters):
        total = 0.0
        for i in range(m):
            total += mass[i]
        if not total > 0.0:
            return chosen
        target = uniforms[c] * total
        pick, running = -1, 0.0
        for i in range(m):
            if mass[i] > 0.0:
                pick = i
                running += mass[i]
                if running > target:
                    break
        chosen[c] = pick
        distance[:] = 0.0
        for t in range(gaps.shape[0]):
            value = sample_t[t, pick]
            gap = gaps[t]
            for i in range(m):
                distance[i] += abs(sample_t[t, i] - value) * gap
        for i in range(m):
            if distance[i] < nearest[i]:
                nearest[i] = distance[i]
            mass[i] = weights[i] * nearest[i] * nearest[i]
    return chosen


# ---------------------------------------------------------------- pure chunk functions
def histogram_cdfs(histograms: np.ndarray) -> np.ndarray:
    """CDFs of the rows of ``histograms`` (n, support), any non-negative numbers (counts are
    fine; each row is normalised), without the final 1: float32 (n, support - 1)."""
    histograms = np.asarray(histograms)
    if histograms.ndim != 2 or histograms.shape[0] == 0 or histograms.shape[1] < 2:
        raise AbstractionError(
            f"histograms must be a non-empty 2-D array with at least 2 bins per row, got {histograms.shape}"
        )
    cdfs = np.empty((histograms.shape[0], histograms.shape[1] - 1), np.float32)
    bad = _histogram_cdfs(np.ascontiguousarray(histograms), cdfs)
    if bad >= 0:
        raise AbstractionError(
            f"row {bad} is not a histogram: entries must be finite and non-negative with a positive sum"
        )
    return cdfs


def assign_chunk(cdfs: np.ndarray, centers_t: np.ndarray, gaps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact nearest centre of every point: (labels int32, EMDs float32). ``cdfs`` float32
    (n, t), ``centers_t`` the centre CDFs transposed, float32 (t, k), ``gaps`` float32 (t,)."""
    labels = np.empty(cdfs.shape[0], np.int32)
    distances = np.empty(cdfs.shape[0], np.float32)
    _assign(cdfs, centers_t, gaps, labels, distances)
    return labels, distances


def accumulate_chunk(cdfs: np.ndarray, weights: np.ndarray, labels: np.ndarray, centers_t: np.ndarray,
                     gaps: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Per centre the weighted sum of its points' CDFs (float64 (k, t)) and their weight
    (float64 (k,)), and the chunk's inertia: weighted EMD of every point to its centre."""
    sums = np.zeros((centers_t.shape[1], cdfs.shape[1]))
    masses = np.zeros(centers_t.shape[1])
    inertia = _accumulate(cdfs, weights, labels, centers_t, gaps, sums, masses)
    return sums, masses, float(inertia)


def hamerly_chunk(cdfs, centers_t, gaps, half_separation, drift, labels, upper, lower):
    """One Hamerly assignment of a chunk: new (labels int32, upper float64, lower float64)
    and the counts (labels changed, distances computed). ``labels`` -1 means unassigned;
    ``drift`` (k,) is how far each centre moved since the bounds were set; ``half_separation``
    (k,) is half the distance from each centre to its nearest other centre."""
    labels, upper, lower = labels.copy(), upper.copy(), lower.copy()
    changed, computed = _hamerly(cdfs, centers_t, gaps, half_separation, drift, labels, upper, lower,
                                 BOUND_MARGIN)
    return labels, upper, lower, int(changed), int(computed)


def elkan_chunk(cdfs, centers_t, gaps, half_center_distances, half_separation, drift, labels, upper, lower):
    """One Elkan assignment of a chunk: like ``hamerly_chunk`` with ``lower`` (n, k) float32
    and ``half_center_distances`` (k, k) half the EMD between every two centres."""
    labels, upper, lower = labels.copy(), upper.copy(), lower.copy()
    changed, computed = _elkan(cdfs, centers_t, gaps, half_center_distances, half_separation, drift,
                               labels, upper, lower, BOUND_MARGIN)
    return labels, upper, lower, int(changed), int(computed)


# ------------------------------------------------------------------------- estimator
class LineEMDKMeans:
    """Exact 1-D EMD k-means for millions of histograms (see the module docstring).

    Parameters follow scikit-learn's KMeans/MiniBatchKMeans; ``positions`` are the support
    points of the histograms (default: centres of equal-width bins of [0, 1]).
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        positions: np.ndarray | None = None,
        algorithm: str = "hamerly",
        init: str | np.ndarray = "k-means++",
        init_size: int | None = None,
        batch_size: int | None = None,
        n_batches: int = 100,
        max_iter: int = 300,
        tol: float = 0.0,
        n_init: int = 1,
        chunk_size: int = 65_536,
        map_chunks: MapChunks | None = None,
        random_state: int | np.random.Generator | None = None,
        progress: bool = False,
    ) -> None:
        self.n_clusters = n_clusters
        self.positions = positions
        self.algorithm = algorithm
        self.init = init
        self.init_size = init_size
        self.batch_size = batch_size
        self.n_batches = n_batches
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.chunk_size = chunk_size
        self.map_chunks = map_chunks
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ checks
    def _check_parameters(self, n_points: int, support: int) -> None:
        if not isinstance(self.n_clusters, int | np.integer) or not 1 <= self.n_clusters <= n_points:
            raise AbstractionError(
                f"n_clusters must be an integer from 1 to the {n_points} points, got {self.n_clusters!r}"
            )
        if self.algorithm not in ALGORITHMS:
            raise AbstractionError(
                f"algorithm must be one of {', '.join(ALGORITHMS)}, got {self.algorithm!r}")
        if self.max_iter < 1 or self.n_init < 1 or self.chunk_size < 1 or self.n_batches < 0:
            raise AbstractionError("max_iter, n_init and chunk_size must be at least 1, n_batches at least 0")
        if not 0.0 <= self.tol < 1.0:
            raise AbstractionError(f"tol is a fraction of the points, from 0 to below 1, got {self.tol}")
        if self.batch_size is not None and self.batch_size < 1:
            raise AbstractionError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.init_size is not None and self.init_size < self.n_clusters:
            raise AbstractionError(f"init_size must be at least n_clusters ({self.n_clusters})")
        if self.algorithm == "elkan" and n_points * self.n_clusters * 4 > ELKAN_MAX_BYTES:
            raise AbstractionError(
                f"elkan keeps {n_points} x {self.n_clusters} float32 bounds "
                f"({n_points * self.n_clusters * 4 / 2**30:.1f} GiB, limit {ELKAN_MAX_BYTES / 2**30:.0f}); "
                "use algorithm='hamerly'"
            )
        positions = bin_centers(support) if self.positions is None else np.asarray(self.positions, np.float64)
        if positions.shape != (support,) or np.any(np.diff(positions) < 0):
            raise AbstractionError(f"positions must be {support} increasing numbers, one per histogram entry")
        self._gaps = np.diff(positions).astype(np.float32)

    @staticmethod
    def _check_weights(sample_weight, n_points: int) -> np.ndarray:
        weights = np.ones(n_points) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if weights.shape != (n_points,) or not np.all(np.isfinite(weights)) or weights.min() < 0 \
                or weights.sum() <= 0:
            raise AbstractionError("sample_weight needs one finite non-negative weight per row, not all zero")
        return weights

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, sample_weight=None) -> LineEMDKMeans:
        """Cluster the histograms in X (n_samples, support); rows may be counts."""
        return self.fit_cdfs(histogram_cdfs(X), sample_weight)

    def fit_cdfs(self, cdfs: np.ndarray, sample_weight=None) -> LineEMDKMeans:
        """Cluster points given as CDFs without the final 1, float32 (n, support - 1), e.g.
        from ``histogram_cdfs`` or a memory-mapped file (used in place, never copied)."""
        if not isinstance(cdfs, np.ndarray) or cdfs.dtype != np.float32 or cdfs.ndim != 2 \
                or not cdfs.flags.c_contiguous:
            raise AbstractionError("cdfs must be a C-contiguous float32 (n, support - 1) array; "
                                   "use histogram_cdfs(histograms)")
        self._check_parameters(cdfs.shape[0], cdfs.shape[1] + 1)
        weights = self._check_weights(sample_weight, cdfs.shape[0])
        rng = np.random.default_rng(self.random_state)
        self._map = self.map_chunks or run_locally
        self._bounds = [(start, min(start + self.chunk_size, cdfs.shape[0]))
                        for start in range(0, cdfs.shape[0], self.chunk_size)]
        best = None
        for _ in range(self.n_init):
            centers = self._seed(cdfs, weights, rng)
            batches = self._mini_batches(cdfs, weights, centers, rng) if self.batch_size else 0
            result = self._lloyd(cdfs, weights, centers)
            if best is None or result["inertia"] < best["inertia"]:
                best = dict(result, n_batches=batches)
        self.labels_ = best["labels"]
        self.cluster_cdfs_ = best["centers"]
        self.cluster_centers_ = np.diff(best["centers"], axis=1, prepend=0.0, append=1.0)
        self.inertia_ = best["inertia"]
        self.mean_emd_ = best["inertia"] / float(weights.sum())
        self.n_iter_ = best["n_iter"]
        self.n_batches_ = best["n_batches"]
        self.history_ = best["history"]
        return self

    def _seed(self, cdfs, weights, rng) -> np.ndarray:
        """k-means++ on a uniform sample (module docstring), or the histograms given as
        ``init`` (k, support); float64 centre CDFs (k, t)."""
        if not isinstance(self.init, str):
            given = histogram_cdfs(self.init)
            if given.shape != (self.n_clusters, cdfs.shape[1]):
                raise AbstractionError(f"init must be {self.n_clusters} histograms of {cdfs.shape[1] + 1} "
                                       f"bins, got shape {np.shape(self.init)}")
            return given.astype(np.float64)
        if self.init != "k-means++":
            raise AbstractionError(f"init must be 'k-means++' or an array of histograms, got {self.init!r}")
        n = cdfs.shape[0]
        size = min(n, self.init_size or max(50_000, 20 * self.n_clusters))
        sample = np.arange(n) if size == n else np.sort(rng.choice(n, size, replace=False))
        chosen = plus_plus_seeds(np.ascontiguousarray(cdfs[sample].T), weights[sample], self._gaps,
                                 int(self.n_clusters), rng.random(self.n_clusters))
        if chosen[-1] < 0:
            raise AbstractionError(
                f"the seeding sample of {size} points has fewer than n_clusters={self.n_clusters} distinct "
                "histograms of positive weight; lower n_clusters or raise init_size"
            )
        return cdfs[sample[chosen]].astype(np.float64)

    def _mini_batches(self, cdfs, weights, centers, rng) -> int:
        """Sculley 2010 on weighted data, updating ``centers`` in place; returns the batches run."""
        cumulative = np.cumsum(weights)
        counts = np.zeros(self.n_clusters)
        for _ in progress_bar(range(self.n_batches), desc="mini-batch k-means", unit="batch",
                              enabled=self.progress):
            drawn = np.searchsorted(cumulative, rng.random(self.batch_size) * cumulative[-1], side="right")
            batch = cdfs[np.minimum(drawn, cdfs.shape[0] - 1)]
            labels, _ = assign_chunk(batch, _transposed(centers), self._gaps)
            members = np.bincount(labels, minlength=self.n_clusters).astype(np.float64)
            sums = np.zeros_like(centers)
            np.add.at(sums, labels, batch)
            counts += members
            moved = members > 0
            centers[moved] += (sums[moved] - members[moved, None] * centers[moved]) / counts[moved, None]
        return self.n_batches

    def _lloyd(self, cdfs, weights, centers) -> dict:
        n = cdfs.shape[0]
        labels = np.full(n, -1, np.int32)
        upper = np.zeros(n)
        lower = np.zeros((n, self.n_clusters), np.float32) if self.algorithm == "elkan" else np.zeros(n)
        drift = np.zeros(self.n_clusters)
        history = []
        bar = progress_bar(total=self.max_iter, desc=f"k-means ({self.algorithm})", unit="iter",
                           enabled=self.progress)
        for iteration in range(1, self.max_iter + 1):
            centers_t = _transposed(centers)
            changed, computed = self._assign(cdfs, centers_t, drift, labels, upper, lower)
            parts = self._map(accumulate_chunk, [(cdfs[s:e], weights[s:e], labels[s:e], centers_t, self._gaps)
                                                 for s, e in self._bounds])
            inertia = float(sum(part[2] for part in parts))
            history.append({"iteration": iteration, "changed": changed, "distances": computed,
                            "inertia": inertia})
            bar.update(1)
            bar.set_postfix(changed=changed, inertia=f"{inertia:.6g}")
            if (iteration > 1 and changed <= self.tol * n) or iteration == self.max_iter:
                break
            sums, masses = parts[0][0], parts[0][1]
            for part in parts[1:]:
                sums += part[0]
                masses += part[1]
            moved = masses > 0
            updated = centers.copy()
            updated[moved] = sums[moved] / masses[moved, None]
            drift = _distances_between(centers, updated, self._gaps) * (1.0 + BOUND_MARGIN)
            centers = updated
        bar.close()
        return {"labels": labels, "centers": centers, "inertia": inertia, "n_iter": iteration,
                "history": history}

    def _assign(self, cdfs, centers_t, drift, labels, upper, lower) -> tuple[int, int]:
        """One exact assignment of every point, updating labels and bounds in place."""
        chunks = self._bounds
        if self.algorithm == "lloyd":
            parts = self._map(assign_chunk, [(cdfs[s:e], centers_t, self._gaps) for s, e in chunks])
            changed = 0
            for (s, e), (chunk_labels, _) in zip(chunks, parts, strict=True):
                changed += int(np.count_nonzero(chunk_labels != labels[s:e]))
                labels[s:e] = chunk_labels
            return changed, len(labels) * centers_t.shape[1]
        center_distances = _center_distances(centers_t, self._gaps).astype(np.float64)
        np.fill_diagonal(center_distances, np.inf)
        half = 0.5 * center_distances * (1.0 - BOUND_MARGIN)
        half_separation = half.min(axis=1) if half.shape[0] > 1 else np.full(1, np.inf)
        if self.algorithm == "hamerly":
            parts = self._map(hamerly_chunk, [(cdfs[s:e], centers_t, self._gaps, half_separation, drift,
                                               labels[s:e], upper[s:e], lower[s:e]) for s, e in chunks])
        else:
            parts = self._map(elkan_chunk, [(cdfs[s:e], centers_t, self._gaps, half, half_separation, drift,
                                             labels[s:e], upper[s:e], lower[s:e]) for s, e in chunks])
        changed = computed = 0
        for (s, e), part in zip(chunks, parts, strict=True):
            labels[s:e], upper[s:e], lower[s:e] = part[0], part[1], part[2]
            changed += part[3]
            computed += part[4]
        return changed, computed

    # ------------------------------------------------------------------ using a fit
    def _fitted_centers_t(self) -> np.ndarray:
        if not hasattr(self, "cluster_cdfs_"):
            raise AbstractionError("this LineEMDKMeans is not fitted yet; call fit first")
        return _transposed(self.cluster_cdfs_)

    def predict(self, X) -> np.ndarray:
        """The nearest centre (exact EMD) of every row of X, int32."""
        centers_t = self._fitted_centers_t()
        cdfs = histogram_cdfs(X)
        if cdfs.shape[1] != centers_t.shape[0]:
            raise AbstractionError(
                f"X has {cdfs.shape[1] + 1} bins per row, the centres {centers_t.shape[0] + 1}")
        parts = (self.map_chunks or run_locally)(
            assign_chunk, [(cdfs[s:s + self.chunk_size], centers_t, self._gaps)
                           for s in range(0, cdfs.shape[0], self.chunk_size)])
        return np.concatenate([labels for labels, _ in parts])

    def fit_predict(self, X, y=None, sample_weight=None) -> np.ndarray:
        return self.fit(X, sample_weight=sample_weight).labels_


def small_line_kmeans(
    n_clusters: int, n_points: int, *, positions: np.ndarray | None = None, n_init: int = 10,
    random_state: int | np.random.Generator | None = None,
) -> LineEMDKMeans:
    """``LineEMDKMeans`` for a few thousand points at most (card games small enough to
    enumerate, hold'em's 169 preflop classes): k-means++ over all ``n_points``, plain Lloyd
    assignments, ``n_init`` restarts."""
    return LineEMDKMeans(n_clusters, positions=positions, algorithm="lloyd", init_size=n_points,
                         n_init=n_init, random_state=random_state)


def _transposed(centers: np.ndarray) -> np.ndarray:
    """Centre CDFs as the float32 (t, k) layout the kernels read."""
    return np.ascontiguousarray(centers.T, dtype=np.float32)


def _distances_between(old: np.ndarray, new: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """EMD from each old centre to its new position, float64 (k,), from the float32 centres
    the kernels see (the metric the bounds are about)."""
    old32, new32 = old.astype(np.float32), new.astype(np.float32)
    return (np.abs(old32 - new32) * gaps).sum(axis=1, dtype=np.float64)
