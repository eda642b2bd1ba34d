"""The compact export against the abstraction it keeps, and what quantization costs.

1. Export bytes beside the abstract solver state: CFR+IRA (B10H90, seed 0) from the
   coarsest abstraction to NashConv 0.05 on liar's dice, GS5, P222 and GP5; the 8-bit
   .efgs (rows stored once, the class rule free, explicit map entries in the key index)
   against 4 bytes x the paper's 32-bit words, and against the format-1 file that
   expanded every original infoset (its size computed from its layout,
   docs/compact-format.md history).
2. Quantization: exact NashConv after 8- and 16-bit export of CFR+ strategies (full
   Leduc, P222, GS5, and hist buckets 3,3 on Leduc), largest remainder against the
   exact-evaluation rounding.
3. Card abstractions: CFR+ on card buckets of Leduc and leduc(ranks=13); the 8-bit .efgs
   with the bucket tables in the file (format 4) against the same rows with a key per
   infoset (format 3's layout, its bytes computed from format 4's minus the 8 header
   bytes format 4 added), beside the abstract solver state.

    python benchmarks/bench_export.py            # writes docs/compact-format.md sections
    python benchmarks/bench_export.py --quick    # small games, prints, writes nothing
    python benchmarks/bench_export.py --section export-card-tables   # one section only
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown_sections import update_section  # noqa: E402

from efgkit.abstraction.cards.bucketing import poker_rules  # noqa: E402
from efgkit.abstraction.cards.clustering import cluster_cards  # noqa: E402
from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA  # noqa: E402
from efgkit.abstraction.refinement import run_refinement  # noqa: E402
from efgkit.maps.infoset_map import InfosetMap  # noqa: E402
from efgkit.solvers import BestResponse, CFRPlusSolver  # noqa: E402
from efgkit.specs import load_game  # noqa: E402
from efgkit.storage.compact import export_compact  # noqa: E402
from efgkit.storage.compact_reader import HEADER  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
V1_HEADER = 114
V3_HEADER = 142
SECTIONS = ("export-sizes", "export-quantization", "export-card-tables")


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
    export = export_compact(strategy, folder / "s.efgs", bits=8, evaluator=evaluator)
    seconds = time.perf_counter() - started
    pruned = export_compact(strategy, folder / "p.efgs", bits=8, prune_unreachable=True,
                            evaluator=evaluator)
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
        nearest = export_compact(strategy, folder / "n.efgs", bits=bits, rounding="nearest")
        exact = export_compact(strategy, folder / "e.efgs", bits=bits, evaluator=evaluator)
        for result in (nearest, exact):
            added = identity.evaluate(result.dequantized).nash_conv - before
            cells.append(f"{added:+.2e}")
    row = (label, f"{iterations:,}", f"{before:.3e}", *cells)
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
    keyed = export_compact(strategy, folder / "k.efgs", bits=8, rounding="nearest")
    cards = export_compact(strategy, folder / "c.efgs", bits=8, rounding="nearest",
                           card_abstraction=abstraction, recall=recall)
    assert cards.key_map == "cards"
    aligned = lambda n: (n + 7) // 8 * 8  # noqa: E731
    spec_bytes = len(tree.spec.encode())
    keyed_v3 = keyed.bytes - (aligned(HEADER.size + spec_bytes) - aligned(V3_HEADER + spec_bytes))
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
        sizes = quantized = cards = []
        if args.quick:
            if "export-sizes" in run:
                sizes = [size_row(folder, "kuhn(cards=5)", 0.05, 2000)]
            if "export-quantization" in run:
                quantized = [quantization_row(folder, "kuhn(cards=5)", "kuhn(cards=5)", 200),
                             quantization_row(folder, "leduc, hist buckets 3,3", "leduc", 100,
                                              [3, 3])]
            if "export-card-tables" in run:
                cards = [card_row(folder, "leduc", "hist", [3, 3], "imperfect", 100)]
        else:
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
                                "8-bit exact", "16-bit nearest", "16-bit exact"), quantized)
    card_table = table(("game", "buckets per round (recall)", "infosets", "abstract infosets",
                        "CFR+ iterations", "NashConv", "solver state bytes (4 x 2 words per "
                        "abstract action)", "bucket tables in the solver (4 x situations)",
                        ".efgs with a key per infoset (format 3)", ".efgs with the bucket "
                        "tables (format 4)", "of which bucket tables", "betting histories "
                        "indexed", "of which key index", "rows (cells)",
                        "format 3 / format 4", "format 4 / (state + tables)",
                        "NashConv after export"), cards)
    tables = {"export-sizes": ("Export bytes beside the abstract solver state", size_table),
              "export-quantization": ("NashConv added by quantization", quantization_table),
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
