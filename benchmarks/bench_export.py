"""The compact export against the abstraction it keeps, and what quantization costs.

1. Export bytes beside the abstract solver state: CFR+IRA (B10H90, seed 0) from the
   coarsest abstraction to NashConv 0.05 on liar's dice, GS5, P222 and GP5; the 8-bit
   .efgs (format 3: rows stored once, the class rule free, explicit map entries in the
   key index) against 4 bytes x the paper's 32-bit words, and
   against the format-1 file that expanded every original infoset (its size computed
   from its layout, docs/compact-format.md history).
2. Quantization: exact NashConv after 8- and 16-bit export of CFR+ strategies (full
   Leduc, P222, GS5, and hist buckets 3,3 on Leduc), largest remainder against the
   exact-evaluation rounding.

    python benchmarks/bench_export.py            # writes docs/compact-format.md sections
    python benchmarks/bench_export.py --quick    # small games, prints, writes nothing
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

DOCS = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
V1_HEADER = 114


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


def table(header: tuple, rows: list[tuple]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small games; write nothing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if args.quick:
            sizes = [size_row(folder, "kuhn(cards=5)", 0.05, 2000)]
            quantized = [quantization_row(folder, "kuhn(cards=5)", "kuhn(cards=5)", 200),
                         quantization_row(folder, "leduc, hist buckets 3,3", "leduc", 100, [3, 3])]
        else:
            sizes = [size_row(folder, spec, 0.05, 30_000)
                     for spec in ("openspiel:liars_dice", "GS5", "P222", "GP5")]
            quantized = [quantization_row(folder, "leduc", "leduc", 1000),
                         quantization_row(folder, "leduc", "leduc", 10_000),
                         quantization_row(folder, "P222", "P222", 1000),
                         quantization_row(folder, "GS5", "GS5", 1000),
                         quantization_row(folder, "leduc, hist buckets 3,3", "leduc", 1000, [3, 3])]
    size_table = table(("game", "infosets", "abstract infosets", "NashConv", "solver state bytes "
                        "(4 x words)", ".efgs bytes (8-bit)", "explicit map entries",
                        "keys in the index", "of which key index",
                        ".efgs / state", "pruned .efgs", "format-1 .efgs (expanded)",
                        "NashConv after export", "export seconds"), sizes)
    quantization_table = table(("strategy", "CFR+ iterations", "NashConv", "8-bit nearest",
                                "8-bit exact", "16-bit nearest", "16-bit exact"), quantized)
    print("Export bytes beside the abstract solver state")
    print(size_table)
    print("NashConv added by quantization")
    print(quantization_table)
    if not args.quick:
        update_section(DOCS, "export-sizes", size_table)
        update_section(DOCS, "export-quantization", quantization_table)
        print(f"written to {DOCS}")


if __name__ == "__main__":
    main()
