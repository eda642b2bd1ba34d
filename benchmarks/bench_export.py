"""The compact export against the abstraction it keeps, and what quantization costs.

1. Export bytes beside the abstract solver state: CFR+IRA (B10H90, seed 0) from the
   coarsest abstraction to NashConv 0.05 on liar's dice, GS5, P222 and GP5; the 8-bit
   .efgs (rows stored once, the class rule free, explicit map entries in the key index)
   against 4 bytes x the paper's 32-bit words, and against the format-1 file that
   expanded every original infoset (its size computed from its layout,
   docs/compact-format.md history).
2. Quantization: exact NashConv after 8- and 16-bit export of CFR+ strategies (full
   Leduc, P222, GS5, and hist buckets 3,3 on Leduc), largest remainder against the
   exact-evaluation rounding, with the file's bytes (format 6's row code stores the
   same bytes per action as format 5, on a finer grid, and its tiers give the rows
   reached most twice the bits).
3. Bit allocation at 8 bits per cell on average, largest remainder on every row: format
   5's grid (every weight stored, 2^8 - 1), allocation by reach on that grid (the rows
   reached most at 16 bits, twice as many cells of the least reached rows at 4 bits),
   format 6's row code in one tier (the A - 1 free weights of a row in its 8 A bits), and
   format 6's row code in tiers by reach as the export chooses them (tier_bits).
4. Card abstractions: CFR+ on card buckets of Leduc and leduc(ranks=13); the 8-bit .efgs
   with the bucket tables in the file (format 4 and later) against the same rows with a
   key per infoset (format 3's layout, its bytes computed from format 6's minus the 8
   header bytes format 4 added and the 16 bytes of format 6's tier bounds), beside the
   abstract solver state.
5. Hold'em bucket strategies (``export-holdem``): the .efgs of a bucket strategy (rows per
   betting decision and bucket, 8-bit) with its bucket tables inline and in a bucket-table
   file, and the lookup time of "hole cards, board, betting -> probabilities" in the
   standard-library Python reader and the C reader (random deals and decisions; the rows
   are a random strategy's: bytes and lookup time do not depend on the values). 52-card
   HULHE at 169-1000-1000-1000 is computed (``planned_bytes``, ``bucket_table_file_bytes``):
   its tables are not built here.

    python benchmarks/bench_export.py            # writes docs/compact-format.md sections
    python benchmarks/bench_export.py --quick    # small games, prints, writes nothing
    python benchmarks/bench_export.py --section export-card-tables   # one section only
    python benchmarks/bench_export.py --section export-allocation    # 3. (a minute)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown_sections import update_section  # noqa: E402

from efgkit.abstraction.cards.bucketing import poker_rules  # noqa: E402
from efgkit.abstraction.cards.clustering import cluster_cards  # noqa: E402
from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA  # noqa: E402
from efgkit.abstraction.refinement import run_refinement  # noqa: E402
from efgkit.exact_rounding import (  # noqa: E402
    TIER_FRACTIONS,
    reach_tiers,
    round_for_exploitability,
    row_reach,
    tier_bits,
)
from efgkit.maps.infoset_map import InfosetMap  # noqa: E402
from efgkit.solvers import BestResponse, CFRPlusSolver  # noqa: E402
from efgkit.specs import load_game  # noqa: E402
from efgkit.storage.compact import export_compact  # noqa: E402
from efgkit.storage.compact_reader import HEADER, VALUES_HEAD  # noqa: E402
from efgkit.storage.compact_writer import largest_remainder, row_codes  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
V1_HEADER = 114
V3_HEADER = 142
SECTIONS = ("export-sizes", "export-quantization", "export-allocation", "export-card-tables",
            "export-holdem")
LOOKUPS = 2000


def expanded_v1_bytes(tree, bits: int) -> int:
    """Size of the format-1 file: every original infoset's hash, row start and row."""
    aligned = lambda n: (n + 7) // 8 * 8  # noqa: E731
    start = aligned(V1_HEADER + len(tree.spec.encode()))
    hashes = aligned(start + 8 * tree.num_infosets)
    starts = aligned(hashes + 4 * (tree.num_infosets + 1))
    return starts + (tree.num_infoset_actions * bits + 7) // 8


def size_row(folder: Path, spec: str, target: float, max_iterations: int) -> tuple:
    tree = load_game(spec)
    refiner = CFRPlusIRA(tree, initial=InfosetMap.coarsest(tree), k_bound=10, k_heuristic=90,
                         delay=100, random_state=0)
    history = run_refinement(refiner, target, max_iterations=max_iterations, every=25)
    strategy, memory = refiner.average_strategy(), refiner.memory()
    evaluator = BestResponse(strategy.infoset_map)
    started = time.perf_counter()
    rows = round_for_exploitability(strategy, 8, tiers=True, evaluator=evaluator).rows
    export = export_compact(strategy, folder / "s.efgs", bits=8, quantized=rows)
    seconds = time.perf_counter() - started
    pruned = export_compact(strategy, folder / "p.efgs", bits=8, quantized=rows,
                            prune_unreachable=True)
    after = BestResponse(InfosetMap.identity(tree)).evaluate(export.dequantized).nash_conv
    state = 4 * memory["memory_words"]
    expanded = expanded_v1_bytes(tree, 8)
    row = (spec, f"{tree.num_infosets:,}", f"{memory['abstract_infosets']:,}",
           f"{history[-1].nash_conv:.4f}", f"{state:,}", f"{export.bytes:,}",
           f"{memory['map_entries']:,}", f"{export.explicit_entries:,}",
           f"{export.index_bytes:,}", f"{export.bytes / state:.2f}x", f"{pruned.bytes:,}",
           f"{expanded:,}", f"{after:.4f}", f"{seconds:.1f}")
    print(*row, flush=True)
    return row


def quantization_row(folder: Path, label: str, spec: str, iterations: int,
                     buckets: list[int] | None = None) -> tuple:
    tree = load_game(spec)
    infoset_map = InfosetMap.identity(tree)
    if buckets is not None:
        abstraction = cluster_cards(poker_rules(tree).card_structure, "hist", buckets,
                                    random_state=0)
        infoset_map = abstraction.infoset_map(tree, "imperfect")
    strategy = CFRPlusSolver(infoset_map).iterate(iterations).average_strategy()
    evaluator = BestResponse(infoset_map)
    identity = BestResponse(InfosetMap.identity(tree))
    before = evaluator.evaluate(strategy).nash_conv
    cells = []
    for bits in (8, 16):
        nearest = export_compact(strategy, folder / "n.efgs", bits=bits)
        started = time.perf_counter()
        exact = export_compact(strategy, folder / "e.efgs", bits=bits, quantized=round_for_exploitability(
            strategy, bits, tiers=True, evaluator=evaluator).rows)
        seconds = time.perf_counter() - started
        for result in (nearest, exact):
            added = identity.evaluate(result.dequantized).nash_conv - before
            cells.append(f"{added:+.2e}")
        cells.append(f"{exact.bytes:,}")
        if bits == 8:
            cells.append(f"{seconds:.1f}")
    row = (label, f"{iterations:,}", f"{before:.3e}", *cells)
    print(*row, flush=True)
    return row


def allocation_row(label: str, spec: str, iterations: int) -> tuple:
    """NashConv added at 8 bits per cell on average by four ways of spending the bits."""
    tree = load_game(spec)
    infoset_map = InfosetMap.identity(tree)
    strategy = CFRPlusSolver(infoset_map).iterate(iterations).average_strategy()
    evaluator = BestResponse(infoset_map)
    before = evaluator.evaluate(strategy).nash_conv
    offsets = infoset_map.abstract_action_offset
    actions = np.diff(offsets)
    reach = row_reach(evaluator, strategy.probabilities)

    def added(total: np.ndarray) -> float:
        weights = largest_remainder(strategy.probabilities, offsets, total)
        return evaluator.evaluate(weights / np.repeat(total, actions)).nash_conv - before

    def wide_share(row_bits: np.ndarray) -> str:
        return f"{actions[row_bits == 16].sum() / actions.sum():.0%} at 16 bits"

    by_reach = min((added((1 << row_bits) - 1), wide_share(row_bits))
                   for row_bits in (reach_tiers(reach, actions, 8, fraction)
                                    for fraction in TIER_FRACTIONS[1:]) if row_bits is not None)
    tiers = tier_bits(strategy, 8, evaluator)
    row = (label, f"{iterations:,}", f"{before:.3e}", f"{added(np.full(actions.shape[0], 255)):+.2e}",
           f"{by_reach[0]:+.2e} ({by_reach[1]})", f"{added(row_codes(offsets, 8)[1]):+.2e}",
           f"{added(row_codes(offsets, tiers)[1]):+.2e} ({wide_share(tiers)})")
    print(*row, flush=True)
    return row


def card_row(folder: Path, spec: str, feature: str, buckets: list[int | None], recall: str,
             iterations: int) -> tuple:
    """Export bytes of a CFR+ strategy on a card abstraction, with and without its tables."""
    tree = load_game(spec)
    abstraction = cluster_cards(poker_rules(tree).card_structure, feature, buckets, random_state=0)
    infoset_map = abstraction.infoset_map(tree, recall)
    strategy = CFRPlusSolver(infoset_map).iterate(iterations).average_strategy()
    nash_conv = BestResponse(infoset_map).evaluate(strategy).nash_conv
    keyed = export_compact(strategy, folder / "k.efgs", bits=8)
    cards = export_compact(strategy, folder / "c.efgs", bits=8,
                           card_abstraction=abstraction, recall=recall)
    assert cards.key_map == "cards"
    aligned = lambda n: (n + 7) // 8 * 8  # noqa: E731
    spec_bytes = len(tree.spec.encode())
    keyed_v3 = (keyed.bytes - (aligned(HEADER.size + spec_bytes) - aligned(V3_HEADER + spec_bytes))
                - VALUES_HEAD.size)
    state = 4 * 2 * infoset_map.num_abstract_actions
    tables = 4 * sum(r.num_situations for r in abstraction.situations.rounds)
    after = BestResponse(InfosetMap.identity(tree)).evaluate(cards.dequantized).nash_conv
    lossless = all(count is None for count in buckets)
    row = (spec, f"{'lossless' if lossless else feature} "
                 f"{','.join(map(str, abstraction.num_buckets))} ({recall})",
           f"{tree.num_infosets:,}", f"{infoset_map.num_abstract:,}", f"{iterations:,}",
           f"{nash_conv:.4f}", f"{state:,}", f"{tables:,}", f"{keyed_v3:,}", f"{cards.bytes:,}",
           f"{cards.card_table_bytes:,}", f"{cards.explicit_entries:,}",
           f"{cards.index_bytes:,}", f"{cards.rows:,}", f"{keyed_v3 / cards.bytes:.1f}x",
           f"{cards.bytes / (state + tables):.2f}x", f"{after:.4f}")
    print(*row, flush=True)
    return row


def holdem_layout(folder: Path, spec: str, kind: str, buckets: tuple[int, ...] | None = None):
    """The layout of a bucket strategy: ``pipeline`` (efgkit holdem-abstraction's k-means,
    real), ``random`` (a pipeline-format bucket file with random buckets: the same table
    sizes), ``canonical``."""
    import numpy as np

    from efgkit.abstraction.cards.holdem.bucket_file import StreetBuckets, save_buckets
    from efgkit.abstraction.cards.holdem.features import hand_indexer
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.specs import make_game

    game = make_game(spec)
    ranks = game.card_structure.num_ranks
    if kind == "canonical":
        return BucketLayout(BettingTree(game), IsomorphicCards.canonical(game)), "canonical"
    path = folder / f"{kind}-{ranks}.h5"
    if kind == "pipeline":
        build_abstraction(AbstractionOptions(buckets=buckets, bins=8, num_ranks=ranks,
                                             opponent_clusters=4, seed=3), path)
    else:
        rng, streets = np.random.default_rng(0), []
        for r, (street, count) in enumerate(zip(("preflop", "flop", "turn", "river"), buckets,
                                                strict=True)):
            indexer = hand_indexer((0, 3, 4, 5)[r], ranks)
            size = indexer.round_size(indexer.num_rounds - 1)
            labels = np.concatenate([np.arange(count), rng.integers(0, count, size - count)])
            streets.append(StreetBuckets(street, labels, np.zeros((count, 1)), "random", "none",
                                         0.0, 0))
        save_buckets(path, ranks, streets, {"random": True})
    label = f"{kind} {'-'.join(map(str, buckets))}"
    return BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, path)), label


def lookup_keys(layout, count: int, seed: int) -> list[str]:
    """Infoset keys of random deals at random decisions (hole cards, board, ACPC betting)."""
    import random

    from efgkit.games.poker import Betting

    betting, game = layout.betting, layout.betting.game
    structure = game.card_structure
    names = [structure.card_name(card) for card in range(structure.num_cards)]
    rng, keys = random.Random(seed), []
    for _ in range(count):
        node = int(rng.choice(betting.decision_nodes))
        sizes = structure.public_cards_per_round[1:int(betting.round[node]) + 1]
        cards = rng.sample(range(structure.num_cards), 2 + sum(sizes))
        board, parts = cards[2:], []
        for size in sizes:
            parts.append("".join(names[c] for c in board[:size]))
            board = board[size:]
        bets = game.betting_text(Betting(betting.histories[node], (0, 0), 0))
        keys.append(f"P{betting.kind[node]} cards={names[cards[0]]}{names[cards[1]]} "
                    f"board={'/'.join(parts) or '-'} bets={bets}")
    return keys


def c_query_tool(folder: Path) -> Path | None:
    import shutil
    import subprocess

    from efgkit.storage import compact_reader

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    sources = Path(compact_reader.__file__).parent / "efgs_c"
    subprocess.run([compiler, "-std=c99", "-O2", str(sources / "efgs.c"),
                    str(sources / "efgs_computed.c"), str(sources / "efgs_compressed.c"),
                    str(sources / "efgs_query.c"), "-o", str(folder / "efgs_query")], check=True)
    return folder / "efgs_query"


def lookup_microseconds(path: Path, keys: list[str], tool: Path | None) -> tuple[float, float]:
    """Best of 5 passes of the Python reader, and the C reader's efgs_query --bench (50
    passes), in microseconds of CPU time per lookup (process_time, as C's clock(): time
    spent waiting for a core of a loaded machine is not the reader's)."""
    import subprocess

    from efgkit.storage.compact_reader import CompactStrategy

    with CompactStrategy(str(path)) as strategy:
        best = float("inf")
        for _ in range(5):
            started = time.process_time()
            for key in keys:
                strategy.probabilities(key)
            best = min(best, (time.process_time() - started) / len(keys))
    c_time = float("nan")
    if tool is not None:
        result = subprocess.run([str(tool), "--bench", str(path), "50"], check=True, text=True,
                                input="\n".join(keys) + "\n", capture_output=True)
        c_time = float(result.stdout.split()[0]) / 1000
    return 1e6 * best, c_time


def holdem_row(folder: Path, spec: str, kind: str, buckets: tuple[int, ...] | None,
               tool: Path | None) -> tuple:
    """Bytes of a bucket strategy's .efgs with its tables inline and in a bucket-table
    file, and lookup time in both readers."""
    from efgkit.storage.compact_holdem import export_bucket_strategy

    layout, label = holdem_layout(folder, spec, kind, buckets)
    strategy = layout.random(0)
    started = time.perf_counter()
    inline = export_bucket_strategy(layout, strategy, folder / "inline.efgs", bucket_tables="inline")
    seconds = time.perf_counter() - started
    has_tables = kind != "canonical"
    external = export_bucket_strategy(layout, strategy, folder / "external.efgs",
                                      bucket_tables=str(folder / f"{kind}.efgb")) if has_tables else None
    keys = lookup_keys(layout, LOOKUPS, 0)
    python_inline, c_inline = lookup_microseconds(Path(inline.path), keys, tool)
    python_external, c_external = (lookup_microseconds(Path(external.path), keys, tool)
                                   if has_tables else (float("nan"), float("nan")))
    dash = "-"
    row = (spec, label, f"{inline.rows:,}", f"{inline.explicit_entries:,}", f"{inline.bytes:,}",
           f"{inline.card_table_bytes:,}", f"{external.bytes:,}" if has_tables else dash,
           f"{external.bucket_tables_bytes:,}" if has_tables else dash,
           f"{python_inline:.1f}", f"{python_external:.1f}" if has_tables else dash,
           f"{c_inline:.2f}", f"{c_external:.2f}" if has_tables else dash, f"{seconds:.1f}")
    print(*row, flush=True)
    return row


def hulhe_row() -> tuple:
    """52-card HULHE at 169-1000-1000-1000: bytes computed from the layout, nothing built."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.specs import make_game
    from efgkit.storage.compact_holdem import bucket_table_file_bytes, planned_bytes

    class Counts:  # what BucketLayout reads of an abstraction: its bucket counts
        def num_buckets(self, round_index: int) -> int:
            return (169, 1000, 1000, 1000)[round_index]

    game = make_game("holdem")
    layout = BucketLayout(BettingTree(game), Counts())
    dash = "-"
    return ("holdem", "pipeline 169-1000-1000-1000 (computed)", f"{layout.num_rows:,}",
            f"{layout.width.shape[0]:,}", dash, dash, f"{planned_bytes(layout):,}",
            f"{bucket_table_file_bytes(game, (169, 1000, 1000, 1000)):,}", dash, dash, dash, dash,
            dash)


def table(header: tuple, rows: list[tuple]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small games; write nothing")
    parser.add_argument("--section", choices=("all", *SECTIONS), default="all",
                        help="measure and write only this section")
    args = parser.parse_args()
    run = SECTIONS if args.section == "all" else (args.section,)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        sizes = quantized = allocation = cards = holdem = []
        tool = c_query_tool(folder) if "export-holdem" in run else None
        if args.quick:
            if "export-holdem" in run:
                holdem = [holdem_row(folder, "holdem(ranks=5)", "random", (7, 30, 40, 50), tool),
                          hulhe_row()]
            if "export-sizes" in run:
                sizes = [size_row(folder, "kuhn(cards=5)", 0.05, 2000)]
            if "export-quantization" in run:
                quantized = [quantization_row(folder, "kuhn(cards=5)", "kuhn(cards=5)", 200),
                             quantization_row(folder, "leduc, hist buckets 3,3", "leduc", 100,
                                              [3, 3])]
            if "export-allocation" in run:
                allocation = [allocation_row("kuhn(cards=5)", "kuhn(cards=5)", 200)]
            if "export-card-tables" in run:
                cards = [card_row(folder, "leduc", "hist", [3, 3], "imperfect", 100)]
        else:
            if "export-holdem" in run:
                holdem = [holdem_row(folder, "holdem(ranks=5)", "pipeline", (25, 30, 40, 50), tool),
                          holdem_row(folder, "holdem(ranks=5,rounds=2)", "canonical", None, tool),
                          holdem_row(folder, "holdem(ranks=10)", "random", (100, 1000, 1000, 1000),
                                     tool),
                          hulhe_row()]
            if "export-sizes" in run:
                sizes = [size_row(folder, spec, 0.05, 30_000)
                         for spec in ("openspiel:liars_dice", "GS5", "P222", "GP5")]
            if "export-quantization" in run:
                quantized = [quantization_row(folder, "leduc", "leduc", 1000),
                             quantization_row(folder, "leduc", "leduc", 10_000),
                             quantization_row(folder, "P222", "P222", 1000),
                             quantization_row(folder, "GS5", "GS5", 1000),
                             quantization_row(folder, "leduc, hist buckets 3,3", "leduc", 1000,
                                              [3, 3])]
            if "export-allocation" in run:
                allocation = [allocation_row("leduc", "leduc", 1000),
                              allocation_row("leduc", "leduc", 10_000),
                              allocation_row("P222", "P222", 1000),
                              allocation_row("GS5", "GS5", 1000)]
            if "export-card-tables" in run:
                cards = [card_row(folder, *case)
                         for case in (("leduc", "hist", [3, 3], "imperfect", 1000),
                                      ("leduc", "hist", [3, 3], "perfect", 1000),
                                      ("leduc", "hist", [None, None], "imperfect", 1000),
                                      ("leduc(ranks=13)", "hist", [3, 5], "imperfect", 500),
                                      ("leduc(ranks=13)", "ehs", [8, 20], "imperfect", 500),
                                      ("leduc(ranks=13)", "ehs", [13, 20], "perfect", 500),
                                      ("leduc(ranks=13)", "hist", [None, None], "imperfect",
                                       200))]
    size_table = table(("game", "infosets", "abstract infosets", "NashConv", "solver state bytes "
                        "(4 x words)", ".efgs bytes (8-bit)", "explicit map entries",
                        "keys in the index", "of which key index",
                        ".efgs / state", "pruned .efgs", "format-1 .efgs (expanded)",
                        "NashConv after export", "export seconds"), sizes)
    quantization_table = table(("strategy", "CFR+ iterations", "NashConv", "8-bit nearest",
                                "8-bit exact", "8-bit .efgs bytes", "8-bit exact seconds",
                                "16-bit nearest", "16-bit exact", "16-bit .efgs bytes"),
                               quantized)
    allocation_table = table(("strategy", "CFR+ iterations", "NashConv",
                              "format 5's grid: every weight at 8 bits (2^8 - 1)",
                              "by reach on format 5's grids, mean 8 bits per cell (best of "
                              f"{', '.join(f'{f:.0%}' for f in TIER_FRACTIONS[1:])} of the "
                              "cells at 16 bits, twice as many at 4)",
                              "format 6's row code, one tier: A - 1 weights in 8 A bits",
                              "format 6: the row code in tiers by reach (tier_bits, what "
                              "--rounding exact uses)"), allocation)
    card_table = table(("game", "buckets per round (recall)", "infosets", "abstract infosets",
                        "CFR+ iterations", "NashConv", "solver state bytes (4 x 2 words per "
                        "abstract action)", "bucket tables in the solver (4 x situations)",
                        ".efgs with a key per infoset (format 3)", ".efgs with the bucket "
                        "tables (format 5)", "of which bucket tables", "betting histories "
                        "indexed", "of which key index", "rows (cells)",
                        "format 3 / format 5", "format 5 / (state + tables)",
                        "NashConv after export"), cards)
    holdem_table = table(("game", "buckets", "rows", "betting histories indexed",
                          ".efgs bytes, tables inline", "of which card table",
                          ".efgs bytes, tables in a bucket-table file", ".efgb bytes",
                          "Python CPU us per lookup (inline)", "Python (.efgb)",
                          "C CPU us per lookup (inline)", "C (.efgb)", "export seconds"), holdem)
    tables = {"export-holdem": ("Hold'em bucket strategies: bytes and lookup time",
                                holdem_table),
              "export-sizes": ("Export bytes beside the abstract solver state", size_table),
              "export-quantization": ("NashConv added by quantization", quantization_table),
              "export-allocation": ("Spending 8 bits per cell", allocation_table),
              "export-card-tables": ("Card abstractions: the bucket tables in the file",
                                     card_table)}
    for name in run:
        title, text = tables[name]
        print(title)
        print(text)
        if not args.quick:
            update_section(DOCS, name, text)
    if not args.quick:
        print(f"written to {DOCS}")


if __name__ == "__main__":
    main()
