"""Hand isomorphism (Waugh 2013): class counts, table build time and memory, index/unindex speed.

For each indexer: the classes per round (checked against Waugh's published counts), the time
to build the tables and their memory; then indexings per second of ``index_hand`` called from
an njit loop (one hand at a time, as a feature kernel calls it) on uniformly random hands of
the last round, ``unindex`` and ``multiplicity`` per second, and the exhaustive flop check:
all 25,989,600 (hole, flop) deals indexed, every class hit exactly multiplicity times.

Speeds are process CPU time (the machine is shared). ``--quick`` uses 200k hands and skips the
exhaustive flop; it writes nothing. Otherwise one JSON line per run goes to
``benchmarks/results/isomorphism.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numba
import numpy as np

from efgkit.abstraction.cards.holdem.isomorphism import HandIndexer, index_hand

RESULTS = Path(__file__).resolve().parent / "results" / "isomorphism.jsonl"
INDEXERS = [(2,), (2, 3), (2, 3, 1), (2, 3, 1, 1), (2, 4), (2, 5), (3,), (4,), (5,)]
WAUGH = {
    (2, 3, 1, 1): [169, 1_286_792, 55_190_538, 2_428_287_420],
    (2, 4): [169, 13_960_050],
    (2, 5): [169, 123_156_254],
}
SPEED = [(2, 3), (2, 4), (2, 5), (2, 3, 1, 1)]


@numba.njit(cache=True)
def _index_loop(tables, deals):
    """Sum of indices of every row, one ``index_hand`` call per hand (the sum keeps the work)."""
    total = np.int64(0)
    cards = np.empty(deals.shape[1], np.int8)
    for row in range(deals.shape[0]):
        for k in range(deals.shape[1]):
            cards[k] = deals[row, k]
        total += index_hand(tables, cards, deals.shape[1])
    return total


@numba.njit(cache=True)
def _flop_hits(tables, size):
    hits = np.zeros(size, np.int64)
    cards = np.empty(5, np.int8)
    for a in range(52):
        for b in range(a + 1, 52):
            for c in range(52):
                for d in range(c + 1, 52):
                    for e in range(d + 1, 52):
                        if c == a or c == b or d == a or d == b or e == a or e == b:
                            continue
                        cards[0], cards[1], cards[2], cards[3], cards[4] = a, b, c, d, e
                        hits[index_hand(tables, cards, 5)] += 1
    return hits


def _cpu_seconds(function, *args):
    start = time.process_time()
    result = function(*args)
    return time.process_time() - start, result


def run(quick: bool) -> dict:
    rng = np.random.default_rng(0)
    record: dict = {"quick": quick, "indexers": []}
    for cards_per_round in INDEXERS:
        start = time.perf_counter()
        indexer = HandIndexer(cards_per_round)
        build = time.perf_counter() - start
        sizes = [indexer.round_size(r) for r in range(indexer.num_rounds)]
        if cards_per_round in WAUGH and sizes != WAUGH[cards_per_round]:
            raise SystemExit(f"{cards_per_round}: {sizes} differs from Waugh's {WAUGH[cards_per_round]}")
        entry = {"cards_per_round": list(cards_per_round), "round_sizes": sizes,
                 "build_seconds": round(build, 4), "table_bytes": indexer.table_bytes}
        print(f"{str(cards_per_round):14} classes {sizes}  build {build * 1e3:.0f} ms  "
              f"tables {indexer.table_bytes / 1e6:.2f} MB")
        if cards_per_round in SPEED:
            hands = 200_000 if quick else 5_000_000
            last = indexer.num_rounds - 1
            width = indexer.cards_through(last)
            deals = np.argsort(rng.random((hands, 52)), axis=1)[:, :width].astype(np.int8)
            _index_loop(indexer.tables, deals[:10])
            seconds = min(_cpu_seconds(_index_loop, indexer.tables, deals)[0] for _ in range(3))
            indices = rng.integers(0, sizes[-1], hands)
            indexer.unindex(last, indices[:10])
            indexer.multiplicity(last, indices[:10])
            unindex_seconds, _ = _cpu_seconds(indexer.unindex, last, indices)
            multiplicity_seconds, _ = _cpu_seconds(indexer.multiplicity, last, indices)
            entry.update(index_per_second=hands / seconds, unindex_per_second=hands / unindex_seconds,
                         multiplicity_per_second=hands / multiplicity_seconds)
            print(f"{'':14} index_hand {hands / seconds / 1e6:.1f} M/s (njit, random hands of round "
                  f"{last}), unindex {hands / unindex_seconds / 1e6:.2f} M/s, multiplicity "
                  f"{hands / multiplicity_seconds / 1e6:.1f} M/s")
        record["indexers"].append(entry)
    if not quick:
        indexer = HandIndexer((2, 3))
        size = indexer.round_size(1)
        _flop_hits(indexer.tables, size)  # compile outside the timing
        seconds, hits = _cpu_seconds(_flop_hits, indexer.tables, size)
        exact = bool(np.array_equal(hits, indexer.multiplicity(1, np.arange(size))))
        record["flop_exhaustive"] = {"deals": int(hits.sum()), "seconds": seconds, "exact": exact,
                                     "deals_per_second": hits.sum() / seconds}
        print(f"exhaustive flop: {hits.sum():,} deals in {seconds:.2f} s "
              f"({hits.sum() / seconds / 1e6:.1f} M/s), every class hit multiplicity times: {exact}")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long run, writes nothing")
    args = parser.parse_args()
    record = run(args.quick)
    if not args.quick:
        record["date"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        RESULTS.parent.mkdir(exist_ok=True)
        with RESULTS.open("a") as handle:
            handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
