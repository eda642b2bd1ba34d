"""Compressed bucket tables (issue 31, part 1): per street the packed table, the compressed
table (a base bucket per rank pattern, Huffman-coded residuals in blocks) and the computed
description, in bytes and C lookup time, and the rule's choice.

* ``holdem(ranks=R)`` (default 8) on a pipeline bucket file (``--bucket-file``, default
  64-200-200-200 built here): per street the three sizes, the C time of one bucket by each
  (``efgs_buckets --time`` on the same random hands, the fastest of 3 runs, one file per
  method holding that street only), the C reader's compressed bucket against the
  pipeline's on **every** canonical hand, and the rule's choice at the default budgets.
* the standard deck: the flop and turn of a real 52-card pipeline abstraction
  (``--labels-52 DIR``: ``flop-K-labels.npy`` / ``turn-K-labels.npy``, the pipeline's
  streets built by ``--build-52 DIR`` without the river), their compressed tables (bytes,
  C time against the packed table's, the C bucket against the labels on ``--sample``
  random canonical hands), and heads-up limit hold'em's device total at 169-1000-1000-1000.

Run ``python benchmarks/bench_compressed_buckets.py [--labels-52 DIR]`` (writes the
"compressed-buckets" section of docs/compact-format.md; ``--no-write`` only prints).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_computed_buckets import build_tools, ns_per_bucket, random_hands, say
from markdown_sections import update_section

from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.deck import BOARD_CARDS_BY_ROUND, ROUND_NAMES
from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
from efgkit.specs import make_game
from efgkit.storage.compact_reader import (
    BY_CANONICAL,
    COMPRESSED,
    COMPUTED,
    CONSTANT,
    FLAG_COMPUTED,
    FLAG_RULE,
)
from efgkit.storage.compact_writer import (
    CardBlocks,
    CardSection,
    RoundBuckets,
    card_file,
    card_names,
    quantize,
)
from efgkit.storage.compressed_tables import DEFAULT_DECODE_BUDGET, choose_method, compress_table
from efgkit.storage.computed_buckets import DEFAULT_BUDGET, describe_street, planned_description_bytes

DOC = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
HULHE_STRATEGY_MB = {"8 bits, packed": 16.6, "4 bits, packed": 8.3, "rows on a 1/8 grid, 4 bits, coded": 3.8}
"""The strategy's bytes at 169-1000-1000-1000 (docs/compact-format.md, compact-holdem)."""
HULHE_TABLE_MB = {"flop": 1.61, "turn": 17.45, "river": 153.95}
"""Packed tables at 1,000 buckets (10 bits per canonical hand)."""
TARGET_MB, TODAY_MB = 24, 190


def street_file(path: Path, game, round_index: int, rounds_buckets: RoundBuckets,
                rule: tuple[int, int]) -> None:
    """A compact file of ``game`` whose round ``round_index`` is ``rounds_buckets`` (a packed,
    compressed or computed round) and whose other rounds have one bucket: a street's bucket
    alone, to time it."""
    structure = game.card_structure
    rounds = [rounds_buckets if r == round_index else RoundBuckets(dealt, CONSTANT, 1)
              for r, dealt in enumerate(structure.public_cards_per_round)]
    weights = quantize(np.array([0.5, 0.5]), np.array([0, 2]), 8)
    blocks = CardBlocks(["-"], np.array([1]), np.array([2]), np.array([0]))
    flags = FLAG_RULE | FLAG_COMPUTED * (rounds_buckets.method == COMPUTED)
    head = dict(spec=game.spec, fingerprint="00" * 32, bits=8, flags=flags, num_keys=0)
    section = CardSection(card_names(structure), 2, rounds, rule=rule)
    card_file(head, weights, np.array([0, 2]), blocks, section, 8).write(path)


def time_methods(tool: Path, work: Path, game, round_index: int, methods: dict[str, RoundBuckets],
                 hands: np.ndarray) -> dict[str, float]:
    """ns per bucket of each method's street file over the same hands."""
    times = {}
    for name, round_buckets in methods.items():
        path = work / f"{name}-{round_index}.efgs"
        street_file(path, game, round_index, round_buckets, (DEFAULT_BUDGET, DEFAULT_DECODE_BUDGET))
        times[name] = ns_per_bucket(tool, path, round_index, hands)[0]
    return times


def every_hand_equal(tool: Path, path: Path, round_index: int, ranks: int, labels: np.ndarray) -> int:
    """Canonical hands whose C bucket differs from ``labels``: every one, in chunks."""
    indexer = F.hand_indexer(BOARD_CARDS_BY_ROUND[round_index], ranks)
    differ = 0
    for start in range(0, labels.shape[0], 1 << 20):
        stop = min(start + (1 << 20), labels.shape[0])
        hands = indexer.unindex(1, np.arange(start, stop)).astype(np.uint8)
        out = subprocess.run([str(tool), str(path), str(round_index)], input=hands.tobytes(),
                             capture_output=True, check=True).stdout
        differ += int(np.count_nonzero(np.frombuffer(out, "<i4") != labels[start:stop]))
    return differ


def reduced_deck(args, work: Path, tool: Path, lines: list[str]) -> None:
    ranks = args.ranks
    bucket_file = args.bucket_file or work / "buckets.h5"
    if not args.bucket_file:
        options = AbstractionOptions(buckets=tuple(int(b) for b in args.buckets.split(",")), num_ranks=ranks,
                                     seed=0)
        build_abstraction(options, bucket_file)
    game = make_game(f"holdem(ranks={ranks})")
    rows = []
    with BucketLookup(bucket_file) as lookup:
        tables = [np.asarray(table, np.int64) for table in lookup.tables()]
        for r in (1, 2, 3):
            street, board, buckets = ROUND_NAMES[r], BOARD_CARDS_BY_ROUND[r], int(tables[r].max()) + 1
            say(f"{street}: compressing")
            started = time.perf_counter()
            compressed = compress_table(tables[r], buckets, ranks, board)
            seconds = time.perf_counter() - started
            say(f"{street}: describing")
            description = describe_street(lookup, street)
            dealt = board - BOARD_CARDS_BY_ROUND[r - 1]
            methods = {"table": RoundBuckets(dealt, BY_CANONICAL, buckets, tables[r]),
                       "compressed": RoundBuckets(dealt, COMPRESSED, buckets, description=compressed.data)}
            if description is not None and description.evaluations <= args.max_timed_evaluations:
                methods["computed"] = RoundBuckets(dealt, COMPUTED, buckets, description=description.data)
            hands = random_hands(4 * ranks, board, args.timing_hands, r)
            times = time_methods(tool, work, game, r, methods, hands)
            differ = every_hand_equal(tool, work / f"compressed-{r}.efgs", r, ranks, tables[r])
            chosen = choose_method(compressed.packed_bytes, compressed, len(description.data),
                                   description.evaluations, budget=DEFAULT_BUDGET,
                                   decode_budget=DEFAULT_DECODE_BUDGET)
            computed_us = f"{times['computed'] / 1e3:.2f}" if "computed" in times else "not timed"
            rows.append(f"| {street} | {tables[r].shape[0]:,} | {buckets} | {compressed.packed_bytes:,} | "
                        f"{len(compressed.data):,} ({compressed.bits_per_entry:.2f} bits per hand, "
                        f"{'flush states' if compressed.flush_states else 'ranks only'}, "
                        f"{compressed.nonzero_residuals / compressed.entries:.1%} residuals not 0) | "
                        f"{len(description.data):,} ({description.evaluations:,} evaluations) | "
                        f"{times['table'] / 1e3:.2f} | {times['compressed'] / 1e3:.2f} | {computed_us} | "
                        f"{differ} of {tables[r].shape[0]:,} | {seconds:.1f} | {chosen} |")
    lines += [f"holdem(ranks={ranks}), pipeline buckets {args.buckets} ({bucket_file.name}); the rule "
              f"at {DEFAULT_BUDGET:,} hand evaluations and {DEFAULT_DECODE_BUDGET} decoded hands per lookup. "
              f"C bucket time: `efgs_buckets --time`, CPU, the fastest of 3 runs over the same "
              f"{args.timing_hands:,} random hands, one file per method holding that street only.", "",
              "| street | canonical hands | buckets | packed table bytes | compressed bytes | computed "
              "bytes | C packed (us) | C compressed (us) | C computed (us) | C compressed differs from "
              "the pipeline | compress seconds | rule chose |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|", *rows, ""]


def standard_deck(args, work: Path, tool: Path, lines: list[str]) -> None:
    folder = Path(args.labels_52)
    game = make_game("holdem")
    report = json.loads((folder / f"report-{args.buckets_52}.json").read_text()) if (
        folder / f"report-{args.buckets_52}.json").exists() else {}
    rows, sizes = [], {}
    for r in (1, 2):
        street, board = ROUND_NAMES[r], BOARD_CARDS_BY_ROUND[r]
        path = folder / f"{street}-{args.buckets_52}-labels.npy"
        if not path.exists():
            continue
        labels = np.load(path).astype(np.int64)
        buckets = int(labels.max()) + 1
        say(f"52 cards {street}: compressing")
        started = time.perf_counter()
        compressed = compress_table(labels, buckets, 13, board)
        seconds = time.perf_counter() - started
        dealt = board - BOARD_CARDS_BY_ROUND[r - 1]
        methods = {"table": RoundBuckets(dealt, BY_CANONICAL, buckets, labels),
                   "compressed": RoundBuckets(dealt, COMPRESSED, buckets, description=compressed.data)}
        hands = random_hands(52, board, args.timing_hands, r)
        times = time_methods(tool, work, game, r, methods, hands)
        rng = np.random.default_rng(r)
        sample = np.sort(rng.choice(labels.shape[0], min(args.sample, labels.shape[0]), replace=False))
        sampled = F.hand_indexer(board, 13).unindex(1, sample).astype(np.uint8)
        out = subprocess.run([str(tool), str(work / f"compressed-{r}.efgs"), str(r)], input=sampled.tobytes(),
                             capture_output=True, check=True).stdout
        differ = int(np.count_nonzero(np.frombuffer(out, "<i4") != labels[sample]))
        sizes[street] = len(compressed.data) / 1e6
        built = report.get(street, {})
        rows.append(f"| {street} | {labels.shape[0]:,} | {buckets:,} | {compressed.packed_bytes:,} | "
                    f"{len(compressed.data):,} ({compressed.bits_per_entry:.2f} bits per hand, "
                    f"{'flush states' if compressed.flush_states else 'ranks only'}) | "
                    f"{compressed.packed_bytes / len(compressed.data):.2f}x | {times['table'] / 1e3:.2f} | "
                    f"{times['compressed'] / 1e3:.2f} | {differ} of {sample.shape[0]:,} | {seconds:.0f} | "
                    f"{built.get('features_s', 0) + built.get('cluster_s', 0):,.0f} |")
    if not rows:
        return
    river_mb = planned_description_bytes(13, "river", 1000)[0] / 1e6
    k = args.buckets_52
    lines += [f"Standard deck (52 cards), the pipeline's flop and turn streets at {k} buckets (EMD, "
              f"50 bins, seed 0: the streets `efgkit holdem-abstraction --buckets 169,{k},{k},{k}` "
              f"builds, its river left out), built on this machine:", "",
              "| street | canonical hands | buckets | packed table bytes | compressed bytes | packed / "
              "compressed | C packed (us) | C compressed (us) | C compressed differs from the pipeline "
              "(random canonical hands) | compress seconds | pipeline seconds (features + clustering) |",
              "|---|---|---|---|---|---|---|---|---|---|---|", *rows, ""]
    buckets_mb = sum(sizes.get(street, HULHE_TABLE_MB[street]) for street in ("flop", "turn")) + river_mb
    lines += [f"Heads-up limit hold'em at 169-1000-1000-1000, the device's total: the flop and turn "
              f"compressed tables measured above"
              f"{'' if len(sizes) == 2 else ' (a street not built: its packed table)'}, the river computed "
              f"({river_mb:.3f} MB description, no exceptions as on the reduced decks), the preflop table "
              f"(212 bytes):", "",
              "| strategy | strategy MB | buckets MB | total MB | target | today |",
              "|---|---|---|---|---|---|"]
    for name, strategy_mb in HULHE_STRATEGY_MB.items():
        lines.append(f"| {name} | {strategy_mb:.1f} | {buckets_mb:.2f} | {strategy_mb + buckets_mb:.1f} | "
                     f"{TARGET_MB} | {TODAY_MB} |")
    lines.append("")


def build_52(folder: Path, buckets: int, turn_max_iter: int | None) -> None:
    """The pipeline's 52-card flop and turn streets (the options ``build_abstraction`` uses for
    169-K-K-K: EMD k-means, 50 bins, seed 0 + round), without the river; labels and seconds
    into ``folder``. ``turn_max_iter`` caps the turn's exact k-means iterations (this
    session's run: 1; the pipeline iterates until at most 0.5% of the hands change)."""
    from efgkit.abstraction.cards.holdem import pipeline as P
    from efgkit.io.chunk_runner import ChunkRunner

    options = AbstractionOptions(buckets=(169, buckets, buckets, buckets))
    runner, report = ChunkRunner(), {}
    for r, street in ((1, "flop"), (2, "turn")):
        started = time.perf_counter()
        if street == "turn" and turn_max_iter is not None:
            options = dataclasses.replace(options, max_iter=turn_max_iter)
        data = P.street_features(options, street, runner, True)
        features = time.perf_counter() - started
        labels, centroids, mean, _ = P._emd_street(street, data["histogram"], data["weight"], buckets,
                                                          options.seed + r, options, runner, True)
        labels, centroids = P._by_strength(np.asarray(labels, np.int64), data["weight"], data["ehs"],
                                           np.asarray(centroids, np.float64))
        np.save(folder / f"{street}-{buckets}-labels.npy", labels.astype(np.uint16))
        report[street] = {"features_s": features, "cluster_s": time.perf_counter() - started - features,
                          "mean": mean, "hands": int(labels.shape[0]), "max_iter": options.max_iter}
        del data
    (folder / f"report-{buckets}.json").write_text(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--buckets", default="64,200,200,200")
    parser.add_argument("--bucket-file", type=Path, default=None)
    parser.add_argument("--labels-52", default=None, help="a folder of 52-card labels (--build-52)")
    parser.add_argument("--buckets-52", type=int, default=1000)
    parser.add_argument("--build-52", type=Path, default=None, help="build the 52-card streets there")
    parser.add_argument("--turn-max-iter", type=int, default=None)
    parser.add_argument("--timing-hands", type=int, default=2000)
    parser.add_argument("--max-timed-evaluations", type=int, default=200_000)
    parser.add_argument("--sample", type=int, default=200_000)
    parser.add_argument("--only-52", action="store_true", help="the standard deck's part alone")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.build_52:
        build_52(args.build_52, args.buckets_52, args.turn_max_iter)
        return
    with tempfile.TemporaryDirectory(prefix="bench-compressed-") as folder:
        work = Path(folder)
        tool = build_tools(work)
        lines: list[str] = []
        if not args.only_52:
            reduced_deck(args, work, tool, lines)
        if args.labels_52:
            standard_deck(args, work, tool, lines)
    text = "\n".join(lines).rstrip()
    print(text)
    if not args.no_write:
        update_section(DOC, "compressed-buckets", text)


if __name__ == "__main__":
    sys.exit(main())
