"""A match over the ACPC protocol: efgs_acpc against a second bot through efgkit's dealer,
beside efgkit's duplicate match of the same two strategies.

holdem(ranks=8) on pipeline-format bucket tables with seeded random labels (64 preflop
classes, 200 buckets on flop, turn and river: the tables' size and lookup path are those of
a clustered abstraction, the labels are not clustered) and two seeded random strategies on
it (no strategy solved on this abstraction would mean more: the labels are random), each
exported to an 8-bit .efgs (bucket tables inline) and B also kept as a bucket .h5.
The dealer (``benchmarks/acpc_dealer.AcpcDealer``, duplicate deals, seats swapping) plays
HANDS hands between efgs_acpc (A) and a second bot (B): another efgs_acpc on B's .efgs, and
``efgkit bot``'s Python bucket policy on B's .h5. The protocol result (A's chips per hand,
95% interval over duplicate pairs) is compared with ``poker.match.HeadToHead`` of A's
dequantized strategy against B on BOARDS boards (every pair of hands on each): the two
agree when their difference lies within 1.96 times its standard error. efgs_acpc reports
its decision time: from the parsed dealer line to the action (the infoset key, the card
table's lookup: the canonical index of hole cards and board, the bucket read from the
packed table, the xor-indexed betting history, the row decoded, the draw).

    python benchmarks/bench_acpc.py                 # 10,000 hands, writes benchmarks/results/acpc-match.json
    python benchmarks/bench_acpc.py --hands 2000 --boards 500
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from acpc_dealer import AcpcDealer, serve_in_thread

from efgkit.abstraction.cards.holdem.bucket_file import StreetBuckets, save_buckets
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.interop.acpc import game_definition
from efgkit.interop.acpc_protocol import play_acpc
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.poker.streamed.match import HeadToHead
from efgkit.specs import make_game
from efgkit.storage.acpc_bot import open_policy
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy

ROOT = Path(__file__).resolve().parent.parent
C_SOURCES = ROOT / "efgkit" / "storage" / "efgs_c"
RESULTS = ROOT / "benchmarks" / "results" / "acpc-match.json"
BUCKETS = (64, 200, 200, 200)


def random_bucket_file(path: Path, ranks: int, buckets, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    streets = []
    for r, street in enumerate(("preflop", "flop", "turn", "river")):
        indexer = hand_indexer((0, 3, 4, 5)[r], ranks)
        size = indexer.round_size(indexer.num_rounds - 1)
        count = min(buckets[r], size)
        labels = np.concatenate([np.arange(count), rng.integers(0, count, size - count)])
        streets.append(StreetBuckets(street, labels, np.zeros((count, 1)), "random", "none", 0.0, seed))
    save_buckets(path, ranks, streets, {"benchmark": "acpc"})
    return path


def c_bot(binary: Path, strategy: Path, seed: int):
    def start(port: int):
        return subprocess.Popen([str(binary), str(strategy), "127.0.0.1", str(port), str(seed)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return start


def python_bot(strategy: Path, game, seed: int):
    policy, definition, close = open_policy(strategy, game)

    def start(port: int):
        def run():
            try:
                play_acpc("127.0.0.1", port, definition, policy, seed=seed, timeout=120)
            finally:
                close()
        threading.Thread(target=run, daemon=True).start()
    return start


def match(definition, hands: int, seats, seed: int) -> dict:
    dealer = AcpcDealer(definition, hands, seed=seed, duplicate=True, timeout=120)
    thread, outcome = serve_in_thread(dealer)
    started = time.perf_counter()
    processes = [seat(port) for seat, port in zip(seats, dealer.ports, strict=True)]
    thread.join()
    seconds = time.perf_counter() - started
    timings = []
    for process in processes:
        if process is not None:
            out, err = process.communicate(timeout=120)
            if process.returncode != 0:
                raise RuntimeError(err)
            fields = out.split()
            timings.append({"decisions": int(fields[1]), "mean_us": float(fields[3]),
                            "max_us": float(fields[5])})
    if "error" in outcome:
        raise outcome["error"]
    result = outcome["result"]
    mean, error, half = result.interval(0)
    return {"hands": hands, "seconds": seconds, "chips_per_hand": mean, "standard_error": error,
            "ci95_half_width": half, "invalid_actions": list(result.invalid_actions),
            "totals": list(result.totals), "c_bot_timing": timings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--boards", type=int, default=1000)
    parser.add_argument("--ranks", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={folder}", "all"], check=True)
        game = make_game(f"holdem(ranks={args.ranks})")
        bucket_file = random_bucket_file(folder / "buckets.h5", args.ranks, BUCKETS)
        layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, bucket_file))
        a = layout.random(0)
        b = layout.random(1)
        export_a = export_bucket_strategy(layout, a, folder / "a.efgs", bits=8)
        export_bucket_strategy(layout, b, folder / "b.efgs", bits=8)
        save_bucket_strategy(folder / "b.h5", layout, b, {"algorithm": "random", "iterations": 0})
        definition = game_definition(game)
        matches = {}
        binary = folder / "efgs_acpc"
        runs = {"efgs_acpc vs efgs_acpc": [c_bot(binary, folder / "a.efgs", 1),
                                           c_bot(binary, folder / "b.efgs", 2)],
                "efgs_acpc vs efgkit bot (.h5)": [c_bot(binary, folder / "a.efgs", 1),
                                                  python_bot(folder / "b.h5", game, 2)]}
        for name, seats in runs.items():
            matches[name] = match(definition, args.hands, seats, seed=7)
            print(name, json.dumps(matches[name]), flush=True)
        started = time.perf_counter()
        reference = HeadToHead(layout, export_a.dequantized(), layout, b, seed=0).run(args.boards)
        reference_seconds = time.perf_counter() - started
        report = {"game": game.spec, "buckets": BUCKETS, "strategy_bytes": export_a.bytes,
                  "big_blind": max(game.blinds), "matches": matches,
                  "duplicate_match": {"boards": args.boards, "chips_per_hand": reference.mean,
                                      "standard_error": reference.standard_error,
                                      "ci95": list(reference.confidence_interval),
                                      "seconds": reference_seconds}}
        for name, run in matches.items():
            difference = run["chips_per_hand"] - reference.mean
            combined = float(np.hypot(run["standard_error"], reference.standard_error))
            run["within_95"] = abs(difference) <= 1.96 * combined
            run["z"] = difference / combined
            run["protocol_ci_contains_duplicate_mean"] = abs(difference) <= run["ci95_half_width"]
            print(name, json.dumps(run))
        print(json.dumps(report["duplicate_match"]))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
