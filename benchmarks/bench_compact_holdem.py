"""Compact hold'em files with coded rows (issue 31): bits per action, bytes, decision time
in C and the exploitability each setting adds, and the bucket tables per street.

For a bucket strategy (``--strategy`` a .npy of the layout's rows, ``--bucket-file`` the
pipeline's bucket file it was solved on) the script exports the rows

* packed at 8 and 4 bits per action (format 6) and coded (format 7, lossless: the same
  rows, so the same exploitability);
* "compressed": every row rounded to multiples of ``1 / steps`` first (so rows repeat
  and the code's dictionary holds them), then 4 bits, coded;

and measures each file's bytes, the coded rows' bits per action (the values section with
its code tables and block index, over the layout's actions), the exact exploitability in
the full game (``StreamedEvaluator``) minus the strategy's own, and the time of one
``efgs_probabilities`` call in C (hole cards, board and betting -> row: the canonical index,
the bucket table and the row decoding), over random keys of every street and of the
river alone, interleaved in one C process. Per street it gives the bucket table's bytes
packed (what the file holds) and entropy-coded in blocks of 4,096 entries with an 8-byte
index each (computed, not written), and the sizes for heads-up limit hold'em at
169-1000-1000-1000 computed from the measured bits per action.

Run ``python benchmarks/bench_compact_holdem.py --strategy S.npy --bucket-file B.h5`` (writes
the "compact-holdem" section of docs/compact-format.md).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from markdown_sections import update_section

from efgkit.games.poker import Betting
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.specs import make_game
from efgkit.storage import compact_reader
from efgkit.storage.compact_holdem import bucket_table_file_bytes, export_bucket_strategy
from efgkit.storage.compact_writer import largest_remainder, pack_rows
from efgkit.storage.row_coding import huffman_lengths

DOC = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
TABLE_BLOCK = 4096
HULHE_BUCKETS = (169, 1000, 1000, 1000)
TIMER = Path(__file__).resolve().parent / "efgs_time.c"


def on_grid(layout: BucketLayout, strategy: np.ndarray, steps: int) -> np.ndarray:
    """``strategy`` with every row rounded to multiples of ``1 / steps`` (largest remainder):
    rows then repeat, and the code's dictionary holds them."""
    offsets = np.concatenate([[0], np.cumsum(np.repeat(layout.width, layout.buckets))])
    totals = np.full(offsets.shape[0] - 1, steps, np.int64)
    return largest_remainder(strategy, offsets, totals) / steps


def coded_bits_per_action(layout: BucketLayout, export) -> float:
    """Bits of the coded values section (code tables, block index, stream) per action."""
    offsets = np.concatenate([[0], np.cumsum(np.repeat(layout.width, layout.buckets))])
    section = pack_rows(export.weights, offsets, export.bits, coded=True)
    return 8 * len(section) / layout.num_actions


def random_keys(layout: BucketLayout, count: int, rounds: tuple[int, ...], seed: int) -> list[str]:
    """``count`` random (hole cards, board, betting) keys at decisions of ``rounds``."""
    betting, game = layout.betting, layout.betting.game
    structure = game.card_structure
    names = [structure.card_name(card) for card in range(structure.num_cards)]
    decisions = [node for node in betting.decision_nodes.tolist() if int(betting.round[node]) in rounds]
    rng = random.Random(seed)
    keys = []
    for _ in range(count):
        node = rng.choice(decisions)
        sizes = structure.public_cards_per_round[1:int(betting.round[node]) + 1]
        cards = rng.sample(range(structure.num_cards), structure.private_cards_per_player + sum(sizes))
        hole, board = cards[:structure.private_cards_per_player], cards[structure.private_cards_per_player:]
        parts, at = [], 0
        for size in sizes:
            parts.append("".join(names[c] for c in board[at:at + size]))
            at += size
        bets = game.betting_text(Betting(betting.histories[node], (0, 0), 0))
        keys.append(f"P{betting.kind[node]} cards={''.join(names[c] for c in hole)} "
                    f"board={'/'.join(parts) or '-'} bets={bets}")
    return keys


def c_times(files: list[Path], groups: dict[str, list[str]], work: Path) -> dict[tuple[int, str], float]:
    """Nanoseconds per efgs_probabilities call, per (file, group of keys)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([compiler, "-std=c99", "-O2", f"-I{C_SOURCES}", str(C_SOURCES / "efgs.c"),
                    str(C_SOURCES / "efgs_computed.c"), str(C_SOURCES / "efgs_compressed.c"),
                    str(TIMER), "-o", str(work / "efgs_time")], check=True)
    text = "".join(f"# {name}\n" + "".join(f"{key}\n" for key in keys) for name, keys in groups.items())
    result = subprocess.run([str(work / "efgs_time"), *map(str, files)], input=text, capture_output=True,
                            text=True, check=True)
    names = list(groups)
    fields = (line.split() for line in result.stdout.splitlines())
    return {(int(f), names[int(g)]): float(ns) for f, g, ns in fields}


def table_rows(layout: BucketLayout) -> list[str]:
    """Per street: canonical hands, bucket bits, the table packed and entropy-coded (order-0
    Huffman per street in blocks of TABLE_BLOCK entries, an 8-byte index each)."""
    rows = []
    for r, table in enumerate(layout.abstraction.tables):
        table = np.asarray(table, np.int64)
        buckets = layout.abstraction.num_buckets(r)
        bits = int(buckets - 1).bit_length()
        packed = (table.shape[0] * bits + 7) // 8
        counts = np.bincount(table, minlength=buckets)
        lengths = huffman_lengths(counts)
        coded = (int(np.sum(counts * lengths)) + 7) // 8 + 8 * -(-table.shape[0] // TABLE_BLOCK) + buckets
        rows.append(f"| {r} | {table.shape[0]:,} | {buckets} | {bits} | {packed:,} | {coded:,} | "
                    f"{'coded' if coded < packed else 'packed'} |")
    return rows


def hulhe_rows(bits_per_action: dict[str, float]) -> list[str]:
    """Bytes of heads-up limit hold'em at HULHE_BUCKETS computed from bits per action."""
    game = make_game("HULHE")
    layout = BucketLayout(BettingTree(game), CardIndependent())
    rounds = layout.betting.round[layout.betting.decision_nodes]
    values = int(np.sum(layout.width * np.array(HULHE_BUCKETS)[rounds]))
    tables = bucket_table_file_bytes(game, HULHE_BUCKETS)
    rows = []
    for name, bits in bits_per_action.items():
        strategy = values * bits / 8
        rows.append(f"| {name} | {values:,} | {bits:.2f} | {strategy / 1e6:.1f} | {tables / 1e6:.1f} | "
                    f"{(strategy + tables) / 1e6:.1f} |")
    return rows


def report(args, layout: BucketLayout, own: float | None, lines: list, times: dict, bits_of: dict) -> str:
    """The section's text; an exploitability not measured yet reads "pending"."""
    table = ["| setting | file bytes | of which bucket tables | bits per action (rows) | vs 4-byte floats | "
             "added exploitability (mbb/g, exact) | C decision, every street (us) | "
             "C decision, last street (us) | export seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for f, (name, size, tables, per_action, added, seconds) in enumerate(lines):
        shown = "pending" if added is None else f"{added:+.3f}"
        table.append(f"| {name} | {size:,} | {tables:,} | {per_action:.2f} | {32 / per_action:.1f}:1 | "
                     f"{shown} | {times[f, 'every street'] / 1000:.2f} | "
                     f"{times[f, 'last street'] / 1000:.2f} | {seconds:.1f} |")
    return "\n".join([
        f"{args.spec}, buckets {args.bucket_file.name}, {layout.num_rows:,} rows, "
        f"{layout.num_actions:,} actions; the strategy: CFR+ (public chance sampling), "
        f"{args.iterations:,} iterations, exploitability "
        f"{'pending' if own is None else f'{own:.2f}'} mbb/g (exact).", "", *table, "",
        "Bucket tables per street (the file holds them packed; coded: computed):", "",
        "| round | canonical hands | buckets | bits | packed bytes | coded bytes (order-0, blocks) "
        "| smaller |",
        "|---|---|---|---|---|---|---|", *table_rows(layout), "",
        f"Heads-up limit hold'em at {'-'.join(map(str, HULHE_BUCKETS))}, computed from the bits per action "
        "above (strategy) and the packed tables (`bucket_table_file_bytes`):", "",
        "| setting | actions | bits per action | strategy MB | bucket tables MB | total MB |",
        "|---|---|---|---|---|---|", *hulhe_rows(bits_of)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="holdem(ranks=5)")
    parser.add_argument("--strategy", required=True, type=Path)
    parser.add_argument("--bucket-file", required=True, type=Path)
    parser.add_argument("--iterations", type=int, default=0,
                        help="CFR+ iterations the strategy ran (reported)")
    parser.add_argument("--grids", default="16,8,32")
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--section", default="compact-holdem",
                        help="the section of docs/compact-format.md to write")
    args = parser.parse_args()
    game = make_game(args.spec)
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, args.bucket_file))
    strategy = layout.checked(np.load(args.strategy))
    settings = [(f"compressed: rows on a grid of 1/{g}, 4 bits, coded", 4, int(g), True)
                for g in args.grids.split(",")]
    settings += [("8 bits, packed (format 6)", 8, None, False), ("8 bits, coded", 8, None, True),
                 ("4 bits, packed (format 6)", 4, None, False), ("4 bits, coded", 4, None, True)]
    work = Path(tempfile.mkdtemp(prefix="bench-compact-"))
    lines, files, played, bits_of = [], [], {}, {}
    for i, (name, bits, steps, coded) in enumerate(settings):  # files first: sizes and times
        rows = strategy if steps is None else on_grid(layout, strategy, steps)
        started = time.perf_counter()
        export = export_bucket_strategy(layout, rows, work / f"{i}.efgs", bits=bits, bucket_tables="inline",
                                        coded=coded)
        seconds = time.perf_counter() - started
        played.setdefault((bits, steps), export.dequantized())
        bits_of[name] = coded_bits_per_action(layout, export) if coded else float(bits)
        files.append(work / f"{i}.efgs")
        lines.append([name, export.bytes, export.card_table_bytes, bits_of[name], None, seconds])
    last = game.num_rounds - 1
    groups = {"every street": random_keys(layout, args.keys, tuple(range(last + 1)), 1),
              "last street": random_keys(layout, args.keys, (last,), 2)}
    times = c_times(files, groups, work)
    def publish(text: str) -> None:
        if not args.no_write:
            update_section(DOC, args.section, text)

    publish(report(args, layout, None, lines, times, bits_of))
    evaluator = StreamedEvaluator(layout)  # exact evaluations last, most wanted first: minutes each
    mbb = 1000 / max(game.blinds)
    own = evaluator.evaluate(strategy, game_value=False).exploitability * mbb
    added_of = {}
    for line, (_, bits, steps, _) in zip(lines, settings, strict=True):
        if (bits, steps) not in added_of:
            added_of[bits, steps] = evaluator.evaluate(played[bits, steps], game_value=False
                                                       ).exploitability * mbb - own
        line[4] = added_of[bits, steps]
        publish(report(args, layout, own, lines, times, bits_of))
        print(line, flush=True)
    print(report(args, layout, own, lines, times, bits_of))


if __name__ == "__main__":
    main()
