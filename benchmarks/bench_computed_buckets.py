"""Buckets without the big tables (issue 31, part 1): per street the packed table against
the description a device computes the bucket from, in bytes and C time, checked against
the pipeline.

* ``holdem(ranks=R)`` (default 8) on a pipeline abstraction (default 64-200-200-200, EMD flop
  and turn, OCHS river): per street the packed table's bytes and the description's (with
  its exceptions), hand evaluations per lookup, the C bucket time of both (the same random
  hands, interleaved in one process per street), which the rule (``--budget`` hand
  evaluations) chose; then the C reader's bucket against the pipeline's on **every**
  canonical hand of every street; the C decision time (key -> bucket -> row,
  ``efgs_time``) on the file the rule chose against all tables, every street and the river
  alone; the C reader's peak memory after loading.
* the standard deck: descriptions of 1,000 buckets per street (random centroids: what the
  device computes does not depend on their values) in a description-only file; the C time
  of a river, turn and flop bucket; on ``--sample`` random river hands and ``--turn-sample``
  random turn hands the C features equal the pipeline kernels' (float32 OCHS bit for bit,
  histograms exactly) and the C bucket equals the writer's nearest centroid.
* heads-up limit hold'em at 169-1000-1000-1000: the bytes the device needs, computed from
  the per-street sizes (the flop table, the turn and river descriptions with the exception
  share measured above) beside the 24 MB target and the 190 MB of today.

Run ``python benchmarks/bench_computed_buckets.py`` (writes the "computed-buckets" section
of docs/compact-format.md; ``--no-write`` only prints).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_compact_holdem import c_times, random_keys
from markdown_sections import update_section

from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.specs import make_game
from efgkit.storage import compact_reader
from efgkit.storage.compact_holdem import canonical_table_entries, export_bucket_strategy
from efgkit.storage.computed_buckets import (
    DEFAULT_BUDGET,
    description_bytes,
    description_only_file,
    nearest_buckets,
    planned_description_bytes,
)
from efgkit.storage.computed_reader import HISTOGRAM, OCHS

DOC = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
STREETS = ("preflop", "flop", "turn", "river")
HULHE_BUCKETS = (169, 1000, 1000, 1000)
HULHE_STRATEGY_MB = {"8 bits, packed": 16.6, "4 bits, packed": 8.3, "rows on a 1/8 grid, 4 bits, coded": 3.8}
"""The strategy's bytes at 169-1000-1000-1000 (docs/compact-format.md, compact-holdem)."""
TODAY_MB = 190


def build_tools(work: Path) -> Path:
    subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={work}", f"{work}/efgs_buckets",
                    f"{work}/efgs_query"], check=True)
    return work / "efgs_buckets"


def cpu_decision_ns(query: Path, path: Path, keys: list[str], runs: int = 3) -> float:
    """CPU nanoseconds of one efgs_probabilities call (``efgs_query --bench``, 5 rounds of
    the keys; the fastest of ``runs`` runs)."""
    text = "".join(f"{key}\n" for key in keys)
    return min(float(subprocess.run([str(query), "--bench", str(path), "5"], input=text, capture_output=True,
                                    text=True, check=True).stdout.split()[0]) for _ in range(runs))


def c_buckets(tool: Path, path: Path, round_index: int, hands: np.ndarray, mode: str | None = None):
    arguments = [str(tool), *([mode] if mode else []), str(path), str(round_index)]
    return subprocess.run(arguments, input=np.ascontiguousarray(hands, np.uint8).tobytes(),
                          capture_output=True, check=True).stdout


def ns_per_bucket(tool: Path, path: Path, round_index: int, hands: np.ndarray,
                  runs: int = 3) -> tuple[float, int]:
    """(ns per bucket, the tool's resident kB after it) from ``efgs_buckets --time``: the
    fastest of ``runs`` runs (the machine is shared; the fastest is the least disturbed)."""
    best, resident = float("inf"), 0
    for _ in range(runs):
        words = c_buckets(tool, path, round_index, hands, "--time").decode().split()
        best, resident = min(best, float(words[2])), int(words[words.index("RSS") + 1])
    return best, resident


def say(text: str) -> None:
    """Progress on stderr (the report goes to stdout and the doc at the end)."""
    print(text, file=sys.stderr, flush=True)


def timing_count(args, evaluations: int) -> int:
    """Hands to time a street on: ``--timing-hands``, fewer for streets whose lookups cost
    many evaluations (at most ``--timing-evaluations`` in all, at least 20)."""
    return max(20, min(args.timing_hands, args.timing_evaluations // evaluations))


def random_hands(num_cards: int, board: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(num_cards, 2 + board, replace=False) for _ in range(count)], np.uint8)


def reduced_deck(args, work: Path, tool: Path, lines: list[str]) -> dict:
    """The reduced deck: sizes, times, the exhaustive check; returns the exception shares."""
    ranks = args.ranks
    buckets = tuple(int(b) for b in args.buckets.split(","))
    bucket_file = args.bucket_file or work / "buckets.h5"
    started = time.perf_counter()
    if args.bucket_file is None:
        options = AbstractionOptions(buckets=buckets, num_ranks=ranks, bins=args.bins, seed=0)
        build_abstraction(options, bucket_file)
    built = time.perf_counter() - started
    say(f"bucket file ready ({built:.0f} s)")
    game = make_game(f"holdem(ranks={ranks})")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, bucket_file))
    strategy = layout.random(0)
    started = time.perf_counter()
    every = export_bucket_strategy(layout, strategy, work / "computed.efgs", compute_budget=2**32 - 1)
    describe_seconds = time.perf_counter() - started
    say(f"descriptions written ({describe_seconds:.0f} s)")
    tables = export_bucket_strategy(layout, strategy, work / "tables.efgs", bucket_tables="inline")
    ruled = export_bucket_strategy(layout, strategy, work / "ruled.efgs", compute_budget=args.budget,
                                   bucket_tables="inline")
    shares, rows, checks = {}, [], []
    with BucketLookup(bucket_file) as lookup:
        for info in every.computed:
            r = STREETS.index(info["street"])
            board = (0, 3, 4, 5)[r]
            hands = random_hands(4 * ranks, board, timing_count(args, info["evaluations"]), r)
            computed_ns, _ = ns_per_bucket(tool, work / "computed.efgs", r, hands)
            table_ns, _ = ns_per_bucket(tool, work / "tables.efgs", r, hands)
            chosen = next(x for x in ruled.computed if x["street"] == info["street"])["computed"]
            shares[info["street"]] = info["exceptions"] / info["canonical_hands"]
            rows.append(f"| {info['street']} | {info['canonical_hands']:,} | {info['table_bytes']:,} | "
                        f"{info['description_bytes']:,} | {info['exceptions']:,} | {info['evaluations']:,} | "
                        f"{table_ns / 1000:.2f} | {computed_ns / 1000:.2f} | "
                        f"{'computed' if chosen else 'table'} |")
            indexer = F.hand_indexer(board, ranks)
            size = indexer.round_size(1)
            count = min(size, max(1000, args.check_evaluations // info["evaluations"]))
            chosen_rows = (np.arange(size) if count == size
                           else np.sort(np.random.default_rng(r).choice(size, count, replace=False)))
            started = time.perf_counter()
            hands = indexer.unindex(1, chosen_rows)
            got = np.frombuffer(c_buckets(tool, work / "computed.efgs", r, hands), "<i4")
            labels = np.asarray(lookup.tables()[r])[chosen_rows]
            scope = "every one" if count == size else f"a random {count:,} of {size:,}"
            checks.append(f"{info['street']}: {int(np.sum(got != labels))} differ ({scope}; "
                          f"{time.perf_counter() - started:.0f} s)")
            say(checks[-1])
    keys = {"every street": random_keys(layout, args.keys, (0, 1, 2, 3), 1),
            "river": random_keys(layout, args.keys, (3,), 2)}
    files = [work / "tables.efgs", work / "ruled.efgs", work / "computed.efgs"]
    times = c_times(files, keys, work)
    cpu = {(f, group): cpu_decision_ns(work / "efgs_query", path, keys[group])
           for f, path in enumerate(files) for group in keys}
    _, rss = ns_per_bucket(tool, work / "ruled.efgs", 3, random_hands(4 * ranks, 5, 10, 0))
    lines += [f"holdem(ranks={ranks}), pipeline buckets {args.buckets} (EMD flop and turn, {args.bins} bins, "
              f"OCHS river; built in {built:.0f} s), random rows; descriptions and their exceptions "
              f"found in {describe_seconds:.0f} s; rule budget {args.budget:,} hand evaluations.", "",
              "| street | canonical hands | table bytes | description bytes | exceptions "
              "| evaluations per lookup | C table lookup (us, CPU) | C computed (us, CPU) | rule chose |",
              "|---|---|---|---|---|---|---|---|---|",
              *rows, "",
              "The C reader's bucket against the pipeline's on canonical hands: "
              + "; ".join(checks) + ".",
              "", "C decision (key -> canonical index -> bucket -> row), CPU time (`efgs_query --bench`, "
              "`clock()`) and wall time (`efgs_time`, the files interleaved; inflated by the machine's "
              "load, which CPU time is not):", "",
              "| file | bytes | every street, CPU (us) | river, CPU (us) | every street, wall (us) "
              "| river, wall (us) |", "|---|---|---|---|---|---|"]
    for f, (name, export) in enumerate((("all tables", tables), ("the rule's choice", ruled),
                                        ("every street computed", every))):
        lines.append(f"| {name} | {export.bytes:,} | {cpu[(f, 'every street')] / 1000:.2f} | "
                     f"{cpu[(f, 'river')] / 1000:.2f} | {times[(f, 'every street')] / 1000:.2f} | "
                     f"{times[(f, 'river')] / 1000:.2f} |")
    lines += ["", f"Resident memory of the C tool after loading the rule's file and bucketing: {rss:,} kB "
              f"(the file is {ruled.bytes:,} bytes, mapped).", ""]
    return shares


def standard_deck(args, work: Path, tool: Path, lines: list[str]) -> dict[str, float]:
    """52 cards: C time per street and the features / buckets against the pipeline's."""
    rng = np.random.default_rng(0)
    clusters = rng.integers(0, 8, 169)
    river_centroids = rng.random((1000, 8))
    histogram_centroids = np.sort(rng.random((1000, 49)), axis=1)
    game = make_game("holdem")
    path = work / "standard.efgs"
    description_only_file(path, game, {
        1: (1000, description_bytes(HISTOGRAM, 50, 5, None, histogram_centroids, [], [], 0)),
        2: (1000, description_bytes(HISTOGRAM, 50, 5, None, histogram_centroids, [], [], 0)),
        3: (1000, description_bytes(OCHS, 8, 5, clusters, river_centroids, [], [], 0))})
    times, rss = {}, 0
    for street, r in (("river", 3), ("turn", 2), ("flop", 1)):
        count = timing_count(args, planned_description_bytes(13, street, 1000)[1])
        times[street], rss = ns_per_bucket(tool, path, r, random_hands(52, (0, 3, 4, 5)[r], count, r))
        say(f"52 cards, {street}: {times[street] / 1000:.1f} us")
    checks = []
    for street, r, board_cards, boards_count, per_board in (
            ("river", 3, 5, max(1, args.sample // 100), 100),
            ("turn", 2, 4, max(1, args.turn_sample // 50), 50)):
        started = time.perf_counter()
        boards = np.array([rng.choice(52, board_cards, replace=False) for _ in range(boards_count)])
        if r == 3:
            part = F.river_chunk(13, boards, clusters)
            expected, kind, centroids = part.ochs.astype(np.float64), OCHS, river_centroids
        else:
            part = F.street_chunk(13, boards, 50)
            expected, kind, centroids = part.histogram.astype(np.float64), HISTOGRAM, histogram_centroids
        pairs = expected.shape[0] // boards_count
        rows = np.concatenate([b * pairs + rng.choice(pairs, per_board, replace=False)
                               for b in range(boards_count)])
        hands = np.empty((rows.shape[0], 2 + board_cards), np.uint8)
        for i, row in enumerate(rows):
            board = boards[row // pairs]
            hands[i, :2] = F._combinations(np.setdiff1d(np.arange(52), board), 2)[row % pairs]
            hands[i, 2:] = board
        got = np.frombuffer(c_buckets(tool, path, r, hands, "--features"), "<f8").reshape(rows.shape[0], -1)
        buckets = np.frombuffer(c_buckets(tool, path, r, hands), "<i4")
        features_equal = int(np.sum(np.all(got == expected[rows], axis=1)))
        buckets_equal = int(np.sum(buckets == nearest_buckets(expected[rows], kind, centroids)))
        checks.append(f"{street}: {rows.shape[0]:,} random hands on {boards_count:,} boards, features equal "
                      f"on "
                      f"{features_equal:,}, buckets equal on {buckets_equal:,} "
                      f"({time.perf_counter() - started:.0f} s)")
        say(checks[-1])
    lines += ["Standard deck (52 cards), 1,000 buckets per street, a description-only file (C bucket: CPU "
              "time, `efgs_buckets --time`, the fastest of 3 runs):", "",
              "| street | evaluations per lookup | C bucket (us) |", "|---|---|---|"]
    for street in ("flop", "turn", "river"):
        _, evaluations = planned_description_bytes(13, street, 1000)
        lines.append(f"| {street} | {evaluations:,} | {times[street] / 1000:,.1f} |")
    lines += ["", "Against the pipeline's kernels (float32 OCHS bit for bit; histograms exactly): "
              + "; ".join(checks) + f". Resident memory of the C tool after timing: {rss:,} kB.", ""]
    return times


def hulhe(shares: dict[str, float], lines: list[str]) -> None:
    """The device's bytes at 169-1000-1000-1000, computed from the per-street sizes."""
    game = make_game("HULHE")
    flop_table = (canonical_table_entries(game, 1) * 10 + 7) // 8
    flop_evaluations = planned_description_bytes(13, "flop", 1000)[1]
    sizes = {}
    for street in ("turn", "river"):
        hands = canonical_table_entries(game, STREETS.index(street))
        exceptions = int(round(shares.get(street, 0.0) * hands))
        sizes[street] = (planned_description_bytes(13, street, 1000, exceptions=exceptions)[0],
                         (hands * 10 + 7) // 8, exceptions)
    lines += ["Heads-up limit hold'em at 169-1000-1000-1000, computed from these sizes (exceptions at the "
              "share measured on the reduced deck; the flop table packed):", "",
              "| street | table MB | description MB (exceptions) |", "|---|---|---|",
              f"| flop | {flop_table / 1e6:.2f} | (not computed: {flop_evaluations:,} evaluations per "
              f"lookup) |"]
    for street, (description, table, exceptions) in sizes.items():
        lines.append(f"| {street} | {table / 1e6:.2f} | {description / 1e6:.3f} ({exceptions:,}) |")
    lines += ["", "| strategy | strategy MB | buckets: river computed (MB) | total (MB) | buckets: turn and "
              "river "
              "computed (MB) | total (MB) | target | today |", "|---|---|---|---|---|---|---|---|"]
    river_only = flop_table + sizes["turn"][1] + sizes["river"][0]
    both = flop_table + sizes["turn"][0] + sizes["river"][0]
    for name, strategy in HULHE_STRATEGY_MB.items():
        lines.append(f"| {name} | {strategy:.1f} | {river_only / 1e6:.1f} | "
                     f"{strategy + river_only / 1e6:.1f} | "
                     f"{both / 1e6:.1f} | {strategy + both / 1e6:.1f} | 24 | {TODAY_MB} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--buckets", default="64,200,200,200")
    parser.add_argument("--bins", type=int, default=50)
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--bucket-file", type=Path, default=None,
                        help="a pipeline bucket file of --ranks ranks and --buckets to use instead of "
                             "building one")
    parser.add_argument("--timing-hands", type=int, default=20000)
    parser.add_argument("--timing-evaluations", type=int, default=20_000_000)
    parser.add_argument("--check-evaluations", type=int, default=2_000_000_000,
                        help="hand evaluations the check of a street against the pipeline may cost: every "
                             "canonical hand if they fit, else a random sample that does")
    parser.add_argument("--sample", type=int, default=100000)
    parser.add_argument("--turn-sample", type=int, default=10000)
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if shutil.which("make") is None:
        raise SystemExit("needs make and a C compiler")
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        tool = build_tools(work)
        shares = reduced_deck(args, work, tool, lines)
        standard_deck(args, work, tool, lines)
    hulhe(shares, lines)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    lines.append(f"\n(peak memory of this script: {peak} MB)")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        update_section(DOC, "computed-buckets", text)


if __name__ == "__main__":
    main()
