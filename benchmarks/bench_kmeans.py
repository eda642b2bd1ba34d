"""EMD k-means at hold'em scale: time, iterations and within-cluster EMD on one core.

Clusters hand-strength-like histograms with ``LineEMDKMeans`` (seeding on a sample,
Sculley mini-batches, then exact Hamerly-bounded Lloyd iterations; the final assignment is
exact EMD). Without real feature files the data is synthetic with the real shapes: the flop
has 1,286,792 canonical hands, each a 50-bin histogram of the hand strength after each of
the 1,081 turn+river runouts; the turn 13,960,050 hands over 46 rivers; weights 1..24
(multiplicities of canonical hands). A hand's runout strengths are drawn from a mixture
of two logit-normal distributions (its current strength, and where it lands when a draw
comes in or a made hand is outdrawn), so histograms are skewed, bimodal or spiky like real ones.

    taskset -c 1 python benchmarks/bench_kmeans.py --street flop          # full, minutes
    taskset -c 1 python benchmarks/bench_kmeans.py --street turn          # full, ~30 min
    python benchmarks/bench_kmeans.py --features FILE.h5 --dataset flop   # real histograms
    python benchmarks/bench_kmeans.py --quick                             # seconds, writes nothing

Results are appended as JSON lines to benchmarks/results/kmeans.jsonl; ``--report`` writes
them into docs/benchmarks.md between the holdem-kmeans markers.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numba
import numpy as np

from efgkit.abstraction.cards.line_kmeans import LineEMDKMeans, histogram_cdfs

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "kmeans.jsonl"
DOCS = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- holdem-kmeans:start -->", "<!-- holdem-kmeans:end -->"
STREETS = {"flop": (1_286_792, 1_081), "turn": (13_960_050, 46)}
BINS = 50


@numba.njit(cache=True)
def _synthetic_cdfs(seed, runouts, bins, cdfs):
    """Fill ``cdfs`` (n, bins - 1) with CDFs of ``runouts`` strengths binned into ``bins``."""
    np.random.seed(seed)
    counts = np.zeros(bins)
    for i in range(cdfs.shape[0]):
        now = np.random.random()
        later = 0.75 + 0.25 * np.random.random() if np.random.random() < 0.5 else 0.25 * np.random.random()
        switch = 0.5 * np.random.random() ** 2
        spread = 0.1 + 0.9 * np.random.random()
        counts[:] = 0.0
        now, later = min(max(now, 0.01), 0.99), min(max(later, 0.01), 0.99)
        logit_now, logit_later = np.log(now / (1.0 - now)), np.log(later / (1.0 - later))
        for _ in range(runouts):
            logit = logit_later if np.random.random() < switch else logit_now
            strength = 1.0 / (1.0 + np.exp(-logit - spread * np.random.standard_normal()))
            counts[min(int(strength * bins), bins - 1)] += 1.0
        running = 0.0
        for t in range(bins - 1):
            running += counts[t]
            cdfs[i, t] = running / runouts


def synthetic(points: int, runouts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    cdfs = np.empty((points, BINS - 1), np.float32)
    _synthetic_cdfs(seed, runouts, BINS, cdfs)
    weights = np.random.default_rng(seed).integers(1, 25, size=points).astype(np.float64)
    return cdfs, weights


def real(path: str, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    import h5py

    with h5py.File(path, "r") as handle:
        group = handle[dataset]
        histograms = group["histograms"]
        cdfs = np.empty((histograms.shape[0], histograms.shape[1] - 1), np.float32)
        for start in range(0, histograms.shape[0], 1 << 20):
            cdfs[start:start + (1 << 20)] = histogram_cdfs(histograms[start:start + (1 << 20)])
        weights = group["weights"][:].astype(np.float64) if "weights" in group else None
    return cdfs, weights


def run(name: str, cdfs, weights, clusters: int, algorithm: str, batch_size: int, n_batches: int,
        max_iter: int, tol: float, seed: int, progress: bool) -> dict:
    estimator = LineEMDKMeans(clusters, algorithm=algorithm, batch_size=batch_size or None,
                              n_batches=n_batches, max_iter=max_iter, tol=tol, random_state=seed,
                              progress=progress)
    started, cpu_started = time.perf_counter(), time.process_time()
    estimator.fit_cdfs(cdfs, weights)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    history = estimator.history_
    full_pairs = cdfs.shape[0] * clusters
    return {
        "data": name, "points": int(cdfs.shape[0]), "clusters": clusters, "algorithm": algorithm,
        "batch_size": batch_size, "n_batches": estimator.n_batches_, "max_iter": max_iter, "tol": tol,
        "seed": seed, "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
        "iterations": estimator.n_iter_,
        "mean_emd": estimator.mean_emd_, "first_iteration_mean_emd": history[0]["inertia"] / weights.sum(),
        "changed_last": history[-1]["changed"],
        "distance_fraction": round(sum(h["distances"] for h in history) / (full_pairs * len(history)), 4),
        "nonempty_clusters": int(np.unique(estimator.labels_).shape[0]),
    }


def potential_aware(points: int, turn_clusters: int, clusters: int, max_iter: int, seed: int,
                    progress: bool) -> dict:
    """GS14 flop clustering on synthetic data: ``turn_clusters`` turn centres (synthetic turn
    histograms), each flop hand 47 turn cards spread around two places in the turn clusters'
    strength order (now, and where it lands if the draw comes in)."""
    import scipy.sparse

    from efgkit.abstraction.cards.potential_aware_kmeans import PotentialAwareKMeans

    centre_cdfs, _ = synthetic(turn_clusters, 46, seed + 1)
    next_centers = np.diff(centre_cdfs, axis=1, prepend=0.0, append=1.0)
    ranked = np.argsort(centre_cdfs.sum(axis=1))[::-1]  # by increasing mean strength
    rng = np.random.default_rng(seed)
    now, later = rng.random((2, points, 1)) * turn_clusters
    switch = rng.random((points, 1)) * 0.5
    spread = 2.0 + rng.random((points, 1)) * turn_clusters / 10
    where = np.where(rng.random((points, 47)) < switch, later, now)
    where = where + spread * rng.standard_normal((points, 47))
    columns = ranked[np.clip(where.astype(np.int64), 0, turn_clusters - 1)]
    histograms = scipy.sparse.csr_matrix(
        (np.ones(points * 47), columns.ravel(), np.arange(0, points * 47 + 1, 47)),
        shape=(points, turn_clusters))
    histograms.sum_duplicates()
    estimator = PotentialAwareKMeans(clusters, next_centers, max_iter=max_iter, random_state=seed,
                                     progress=progress)
    started, cpu_started = time.perf_counter(), time.process_time()
    estimator.fit(histograms)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    greedy = [step["greedy_distances"] for step in estimator.history_]
    return {"data": "synthetic potential-aware flop", "points": points, "turn_clusters": turn_clusters,
            "clusters": clusters, "nonzeros_per_point": histograms.nnz / points, "seed": seed,
            "iterations": estimator.n_iter_, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu_seconds, 2),
            "greedy_per_point_per_iteration": round(float(np.mean(greedy)) / points, 2),
            "mean_emd": estimator.mean_emd_}


def report() -> None:
    rows = [json.loads(line) for line in RESULTS.read_text().splitlines() if line.strip()]
    lines = [START, "", "## EMD k-means at hold'em scale (`benchmarks/bench_kmeans.py`)", "",
             "`LineEMDKMeans` on one core (`taskset -c 1`): k-means++ on a 50,000-point sample, Sculley "
             "mini-batches, then exact Lloyd iterations (pruned by `algorithm`); the final assignment is "
             "exact 1-D EMD. CPU seconds are the process's own; wall seconds include sharing the core with "
             "other jobs (this machine's two cores were shared by five sessions). Mean EMD: weighted "
             "within-cluster mean in [0, 1] strength units (× 50 for bin widths). Distances: point-centre "
             "EMDs computed per Lloyd iteration / n × k. Data are synthetic histograms with the real "
             "shapes until real feature files are run (`--features`).", "",
             "| data | points | clusters | algorithm | mini-batches | Lloyd iterations | CPU s | wall s | "
             "mean EMD, first full assignment | final mean EMD | distances / Lloyd |",
             "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        batches = f"{row['n_batches']} x {row['batch_size']:,}" if row["batch_size"] else "none"
        lines.append(
            f"| {row['data']} | {row['points']:,} | {row['clusters']:,} | {row['algorithm']} | {batches} | "
            f"{row['iterations']} | {row['cpu_seconds']:.0f} | {row['seconds']:.0f} | "
            f"{row['first_iteration_mean_emd']:.5f} | {row['mean_emd']:.5f} | "
            f"{row['distance_fraction']:.3f} |")
    lines += ["", "Published reference points (different methods, not re-run here): robopoker's flop "
              "clustering (Sinkhorn-approximated potential-aware EMD, Elkan k-means, 256 clusters) takes "
              "about 4 days on 176 cores (issue krukah/robopoker#35); GS14 ran potential-aware flop "
              "k-means with 25 restarts on 64 cores without a published time; fishbait (Elkan, 10 restarts, "
              "200 clusters) publishes no time. Ours is distribution-aware exact 1-D EMD with one seeding "
              "and mini-batch fitting, a cheaper method; the potential-aware option's cost is in "
              "docs/kmeans-at-scale.md.", "", END]
    text = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n"
    block = "\n".join(lines)
    if START in text and END in text:
        text = text[:text.index(START)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOCS.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a seconds-long run that writes nothing")
    parser.add_argument("--street", choices=sorted(STREETS), default="flop")
    parser.add_argument("--features", help="an HDF5 file with <dataset>/histograms (and weights)")
    parser.add_argument("--dataset", default="flop")
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--algorithms", default="hamerly",
                        help="comma-separated, each run on the same data (lloyd, hamerly, elkan)")
    parser.add_argument("--batch-size", type=int, default=20_000)
    parser.add_argument("--n-batches", type=int, default=100)
    parser.add_argument("--max-iter", type=int, default=30)
    parser.add_argument("--tol", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--potential-aware", type=int, metavar="POINTS",
                        help="instead: GS14 potential-aware flop clustering of POINTS synthetic hands")
    parser.add_argument("--report", action="store_true", help="only rewrite docs/benchmarks.md from results")
    arguments = parser.parse_args()
    if arguments.report:
        report()
        return
    if arguments.quick:
        cdfs, weights = synthetic(20_000, 100, arguments.seed)
        for algorithm in ("lloyd", "hamerly", "elkan"):
            row = run("synthetic quick", cdfs, weights, 50, algorithm, 2_000, 10, 5, 0.0, arguments.seed,
                      False)
            print(json.dumps(row))
        print(json.dumps(potential_aware(2_000, 100, 20, 3, arguments.seed, False)))
        return
    if arguments.potential_aware:
        row = potential_aware(arguments.potential_aware, 1000, arguments.clusters, arguments.max_iter,
                              arguments.seed, True)
        print(json.dumps(row))
        with RESULTS.with_name("kmeans-potential-aware.jsonl").open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        return
    started = time.perf_counter()
    if arguments.features:
        cdfs, weights = real(arguments.features, arguments.dataset)
        name = f"{arguments.dataset} ({Path(arguments.features).name})"
    else:
        points, runouts = STREETS[arguments.street]
        cdfs, weights = synthetic(points, runouts, arguments.seed)
        name = f"synthetic {arguments.street}"
    weights = np.ones(cdfs.shape[0]) if weights is None else weights
    print(f"data ready in {time.perf_counter() - started:.0f} s: {cdfs.shape}", flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    for algorithm in arguments.algorithms.split(","):
        row = run(name, cdfs, weights, arguments.clusters, algorithm, arguments.batch_size,
                  arguments.n_batches, arguments.max_iter, arguments.tol, arguments.seed, True)
        print(json.dumps(row), flush=True)
        with RESULTS.open("a") as handle:
            handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
