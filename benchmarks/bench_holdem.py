"""Texas hold'em card abstraction benchmarks, one section per part, each written to its own marked
section of docs/benchmarks.md.

Parts:
* ``evaluator`` (``bench_evaluator``): the numba hand evaluator. Seven-card evaluations per second
  over the full enumeration of all 133,784,560 hands (incremental states, one rank lookup per
  hand, counted per rank and checked against the textbook category counts), over arrays of
  random hands (``evaluate``, which checks its input, and ``hand_rank`` called from a numba
  loop), and eval7's ``evaluate`` from Python on the same random hands (the peer, same run).
* ``pipeline`` (``bench_pipeline``): the whole card abstraction of the 52-card game, features of
  every street, 169-1000-1000-1000 buckets, the bucket file and lookups, on a Dask LocalCluster
  (``--workers``); per street the seconds of features and clustering and the within-cluster
  distance, against the issue's targets.

Run ``python benchmarks/bench_holdem.py --out docs/benchmarks.md`` for the evaluator, with
``--part pipeline`` for the pipeline (long: run it when the machine is free), ``--part all`` for
both. The evaluator runs on one core (the script pins itself to the first
core it may use; ``taskset -c 1`` picks it). ``--quick`` runs a seconds-long
version (a 36-card deck for the enumeration, fewer random hands). Rates are reported per
wall-clock second and per CPU second of this process: on a shared machine the second is what
one core delivers, the first what this run saw.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
from markdown_sections import update_section

from efgkit.abstraction.cards.holdem.evaluator import (
    CATEGORY_OF_RANK,
    build_tables,
    count_ranks,
    evaluate,
    hand_rank,
)

RESULTS = Path(__file__).resolve().parent / "results" / "holdem-pipeline.json"
SEVEN_CARD_CATEGORY_COUNTS = [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644,
                              3_473_184, 224_848, 41_584]  # high card .. straight flush
RANK_CHARS, SUIT_CHARS = "23456789TJQKA", "cdhs"


def _rates(work, hands: int, seconds: float) -> dict:
    """Hands per wall-clock second and per CPU second of this process, calling ``work`` (which
    evaluates ``hands`` hands) again and again for at least ``seconds`` of wall-clock time."""
    calls = 0
    started, started_cpu = time.perf_counter(), time.process_time()
    while calls == 0 or time.perf_counter() - started < seconds:
        work()
        calls += 1
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    return {"per_second": calls * hands / wall, "per_cpu_second": calls * hands / cpu}


def _random_hands(count: int, cards: int, seed: int) -> np.ndarray:
    """(count, cards) int64 random hands, each ``cards`` distinct ids, drawn in chunks to bound memory."""
    rng = np.random.default_rng(seed)
    chunks = [np.argsort(rng.random((min(200_000, count - start), 52)), axis=1)[:, :cards]
              for start in range(0, count, 200_000)]
    return np.ascontiguousarray(np.concatenate(chunks), dtype=np.int64)


@numba.njit(cache=True)
def _rank_sum(hands):
    """Sum of ``hand_rank`` over the rows: the evaluator called from another kernel, unchecked."""
    total = 0
    for row in range(hands.shape[0]):
        total += hand_rank(hands[row], hands.shape[1])
    return total


def _import_seconds() -> float:
    """Wall seconds to import the evaluator in a fresh process (numba cache warm)."""
    code = ("import time; t = time.perf_counter(); import efgkit.abstraction.cards.holdem.evaluator; "
            "print(time.perf_counter() - t)")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout)


def bench_evaluator(quick: bool) -> dict:
    """Measurements of the hold'em evaluator and of eval7 (the peer) in the same run."""
    import eval7

    seconds = 0.2 if quick else 3.0
    started = time.perf_counter()
    build_tables()
    build_seconds = time.perf_counter() - started
    import_seconds = _import_seconds()

    deck = np.arange(16, 52) if quick else np.arange(52)
    count_ranks(5, deck[:8])  # load the kernels before timing
    counts = count_ranks(7, deck)
    hands_enumerated = int(counts.sum())
    enumeration = _rates(lambda: count_ranks(7, deck), hands_enumerated, seconds)
    categories = np.bincount(CATEGORY_OF_RANK[1:], weights=counts[1:], minlength=9).astype(np.int64)
    counts_match = None if quick else categories.tolist() == SEVEN_CARD_CATEGORY_COUNTS

    random_hands = 200_000 if quick else 2_000_000
    hands = _random_hands(random_hands, 7, seed=0)
    ranks = evaluate(hands)
    kernel_sum = _rank_sum(hands)
    checked = _rates(lambda: evaluate(hands), random_hands, seconds)
    kernel = _rates(lambda: _rank_sum(hands), random_hands, seconds)

    peer_hands = 20_000 if quick else 200_000
    cards = [eval7.Card(rank + suit) for rank in RANK_CHARS for suit in SUIT_CHARS]
    peer_input = [[cards[c] for c in hand] for hand in hands[:peer_hands].tolist()]
    peer_values = np.array([eval7.evaluate(hand) for hand in peer_input])
    peer = _rates(lambda: [eval7.evaluate(hand) for hand in peer_input], peer_hands, seconds)
    agree = _same_order(ranks[:peer_hands], peer_values)

    return {
        "quick": quick,
        "table_build_seconds": build_seconds,
        "import_seconds": import_seconds,
        "seconds_per_measurement": seconds,
        "enumeration": {"deck_cards": int(deck.size), "hands": hands_enumerated,
                        "distinct_ranks": int(np.count_nonzero(counts)),
                        "category_counts": categories.tolist(), "category_counts_match": counts_match,
                        **enumeration},
        "random_evaluate": {"hands": random_hands, **checked},
        "random_kernel": {"hands": random_hands, "rank_sum": int(kernel_sum), **kernel},
        "eval7": {"hands": peer_hands, "same_order_as_efgkit": agree, **peer},
    }


def _same_order(ours: np.ndarray, reference: np.ndarray) -> bool:
    """Whether every pair of hands compares the same way under both rankings."""
    order = np.lexsort((ours, reference))
    our_steps = np.diff(ours[order].astype(np.int64))
    return bool((our_steps >= 0).all() and ((our_steps == 0) == (np.diff(reference[order]) == 0)).all())


def evaluator_section(result: dict) -> str:
    """Markdown for the evaluator measurements."""
    enumeration, checked, kernel, peer = (result["enumeration"], result["random_evaluate"],
                                          result["random_kernel"], result["eval7"])

    def millions(rates: dict) -> str:
        return f"{rates['per_second'] / 1e6:,.1f} ({rates['per_cpu_second'] / 1e6:,.1f})"

    def ratio(rates: dict) -> str:
        return (f"{rates['per_second'] / peer['per_second']:,.0f}x "
                f"({rates['per_cpu_second'] / peer['per_cpu_second']:,.0f}x)")

    deck = "" if enumeration["deck_cards"] == 52 else f" ({enumeration['deck_cards']}-card deck)"
    match = {True: "match the textbook counts", False: "DO NOT match the textbook counts",
             None: "not checked (quick run)"}[enumeration["category_counts_match"]]
    rows = [
        (f"7-card enumeration, all {enumeration['hands']:,} hands{deck}", millions(enumeration), ">= 100",
         ratio(enumeration)),
        (f"evaluate() on {checked['hands']:,} random 7-card hands (input checked)", millions(checked), "-",
         ratio(checked)),
        (f"hand_rank in a numba loop, same {kernel['hands']:,} hands", millions(kernel), "-", ratio(kernel)),
        (f"eval7.evaluate from Python (prebuilt Card lists), {peer['hands']:,} of those hands",
         millions(peer), "-", "1x"),
    ]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Hold'em hand evaluator",
        "",
        f"Generated by `python benchmarks/bench_holdem.py --out docs/benchmarks.md` on {stamp}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, pinned to one core; "
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}"
        f"{' (quick run)' if result['quick'] else ''}.",
        "",
        "Millions of evaluations per wall-clock second (per CPU second of the process in brackets: on "
        "this shared machine the CPU-second rate is what one core delivers), each measured over at "
        f"least {result['seconds_per_measurement']:g} s of repeated runs.",
        "",
        "| measurement | M evaluations/s | target | vs eval7 |",
        "|---|---|---|---|",
        *[f"| {name} | {value} | {target} | {versus} |" for name, value, target, versus in rows],
        "",
        f"The enumeration finds {enumeration['distinct_ranks']:,} distinct seven-card ranks; its category "
        f"counts {match}. eval7 orders the random hands exactly as efgkit does: "
        f"{'yes' if peer['same_order_as_efgkit'] else 'NO'}. Tables (rank-multiset perfect hash and flush "
        f"table, about 200 kB) build in {result['table_build_seconds']:.2f} s at import; importing the "
        f"evaluator in a fresh process takes {result['import_seconds']:.2f} s.",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- feature + bucket pipeline
def _lookup_microseconds(path: Path, hands_per_street: int, seed: int) -> dict:
    """Microseconds per ``BucketLookup.bucket`` call, per street, with card ids and with text."""
    from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
    from efgkit.abstraction.cards.holdem.deck import BOARD_CARDS_BY_ROUND, ROUND_NAMES

    rng = np.random.default_rng(seed)
    timings = {}
    with BucketLookup(path) as table:
        deck = table.deck
        for round_index, street in enumerate(ROUND_NAMES):
            size = 2 + BOARD_CARDS_BY_ROUND[round_index]
            hands = np.argsort(rng.random((hands_per_street, deck.num_cards)), axis=1)[:, :size]
            texts = [(deck.format(hand[:2]), deck.format(hand[2:])) for hand in hands]
            table.bucket(round_index, hands[0, :2], hands[0, 2:])
            started = time.perf_counter()
            ids = [table.bucket(round_index, hand[:2], hand[2:]) for hand in hands]
            by_ids = (time.perf_counter() - started) / hands_per_street * 1e6
            started = time.perf_counter()
            by_text = [table.bucket(round_index, hole, board) for hole, board in texts]
            by_text_us = (time.perf_counter() - started) / hands_per_street * 1e6
            started = time.perf_counter()
            vectorised = table.buckets(round_index, hands)
            batch = (time.perf_counter() - started) / hands_per_street * 1e6
            if ids != by_text or ids != vectorised.tolist():
                raise AssertionError(f"{street}: lookups by ids, text and batch disagree")
            timings[street] = {"ids_us": by_ids, "text_us": by_text_us, "batch_us": batch}
    return timings


def bench_pipeline(quick: bool, workers: int = 2, num_ranks: int = 13,
                   work_dir: Path | None = None) -> dict:
    """The whole hold'em abstraction: features of every street, clustering, bucket file, lookups.

    Full run: the 52-card deck (or the top ``num_ranks`` ranks), 169-1000-1000-1000 buckets (as
    many preflop buckets as classes on a reduced deck), OCHS river, 50 bins, on a Dask
    LocalCluster of ``workers`` processes. Quick: a 5-rank deck in this process."""
    import tempfile

    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.io.chunk_runner import ChunkRunner

    options = (AbstractionOptions(buckets=(25, 30, 40, 50), bins=8, num_ranks=5, opponent_clusters=4)
               if quick else AbstractionOptions(buckets=(min(169, num_ranks**2), 1000, 1000, 1000),
                                                num_ranks=num_ranks))
    with tempfile.TemporaryDirectory(dir=work_dir) as scratch:
        with ChunkRunner(workers=0 if quick else workers) as runner:
            summary = build_abstraction(options, Path(scratch) / "buckets.h5",
                                        features=Path(scratch) / "features.h5", runner=runner,
                                        progress=sys.stderr.isatty())
        summary["feature_file_bytes"] = (Path(scratch) / "features.h5").stat().st_size
        summary["bucket_file_bytes"] = (Path(scratch) / "buckets.h5").stat().st_size
        summary["lookup"] = _lookup_microseconds(Path(scratch) / "buckets.h5", 2_000 if quick else 20_000, 0)
    summary["quick"] = quick
    return summary


PIPELINE_TARGETS = {"features_all_minutes": 30, "river_features_minutes": 10, "flop_cluster_minutes": 10,
                    "turn_cluster_minutes": 30}


def pipeline_section(result: dict) -> str:
    """Markdown for the pipeline measurements."""
    streets = result["streets"]
    feature_total = sum(s["feature_seconds"] for s in streets.values())
    deck = f"{result['num_ranks']}-rank deck" + (" (quick run)" if result["quick"] else "")
    rows = []
    for name in ("preflop", "flop", "turn", "river"):
        s = streets[name]
        target = {"flop": "clustering <= 10 min", "turn": "clustering <= 30 min",
                  "river": "features <= 10 min"}.get(name, "-")
        rows.append(f"| {name} | {s['canonical_hands']:,} | {s['feature_seconds']:.1f} | {s['buckets']:,} "
                    f"({s['method']}) | {s['cluster_seconds']:.1f} | {s['distance']} "
                    f"{s['within_cluster_mean_distance']:.4f} | {target} |")
    lookups = [f"| {name} | {t['ids_us']:.1f} | {t['text_us']:.1f} | {t['batch_us']:.2f} |"
               for name, t in result["lookup"].items()]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        "## Hold'em feature and bucket pipeline",
        "",
        f"Generated by `python benchmarks/bench_holdem.py --part pipeline --out docs/benchmarks.md` on "
        f"{stamp}, {os.cpu_count()} cores, {deck}, "
        f"buckets {'-'.join(map(str, result['buckets_requested']))}, "
        f"flop {result['flop']}, river {result['river']}, {result['bins']} bins, seed {result['seed']}, "
        f"on {result['runner']}.",
        "",
        "| street | canonical hands | features (s) | buckets (method) | clustering (s) | within-cluster mean "
        "distance | target |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"All features: {feature_total:.1f} s (target <= 30 min); whole run {result['seconds']:.1f} s. "
        f"Feature file {result['feature_file_bytes'] / 2**20:,.1f} MiB, bucket file "
        f"{result['bucket_file_bytes'] / 2**20:,.1f} MiB.",
        "",
        "Bucket lookup, microseconds per hand (`BucketLookup.bucket` with card ids / with text such as "
        "'AsKd', '7h8h9c'; `BucketLookup.buckets` on an array of hands):",
        "",
        "| street | ids (us) | text (us) | batch (us per hand) |",
        "|---|---|---|---|",
        *lookups,
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--out", type=Path, help="markdown file whose hold'em sections to write or update")
    parser.add_argument("--part", choices=["evaluator", "pipeline", "all"], default="evaluator",
                        help="evaluator (one core) and/or pipeline (features + clustering of the 52-card "
                             "deck on a LocalCluster: an estimated 30-60 min on 2 cores, ~7 GB of RAM, "
                             "a few GB of disk)")
    parser.add_argument("--workers", type=int, default=2, help="pipeline: LocalCluster worker processes")
    parser.add_argument("--ranks", type=int, default=13,
                        help="pipeline: ranks of the deck (13: the full game)")
    args = parser.parse_args()
    if args.part in ("evaluator", "all"):
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_setaffinity") else None
        if cores is not None:
            os.sched_setaffinity(0, {sorted(cores)[0]})
        section = evaluator_section(bench_evaluator(args.quick))
        if cores is not None:
            os.sched_setaffinity(0, cores)
        print(section)
        if args.out:
            update_section(args.out, "holdem-evaluator", section)
    if args.part in ("pipeline", "all"):
        result = bench_pipeline(args.quick, args.workers, args.ranks)
        if not args.quick:
            RESULTS.parent.mkdir(exist_ok=True)
            RESULTS.write_text(json.dumps(result, indent=1, default=str) + "\n")
        section = pipeline_section(result)
        print(section)
        if args.out:
            update_section(args.out, "holdem-pipeline", section)


if __name__ == "__main__":
    main()
