"""Compact hold'em files with coded rows (issue 31): bits per action, bytes, decision time
in C and the exploitability each setting adds, and the bucket tables per street.

For a bucket strategy (``--strategy`` a .npy of the layout's rows, ``--bucket-file`` the
pipeline's bucket file it was solved on) the script exports the rows

* packed at 8 and 4 bits per action (format 6) and coded (format 7, lossless: the same
  rows, so the same exploitability);
* "compressed": every row rounded to multiples of ``1 / steps`` first (so rows repeat
  and the code's dictionary holds them), then 4 bits, coded;
* "modelled" (``--models GRID:SNAP,...``): the rows on a grid of ``1 / GRID``, small actions
  of rarely reached rows snapped to zero by ``SNAP`` (``snapped_rows``; the reach from the
  solver's average-strategy accumulator, so ``--strategy`` is then the bucket-strategy .h5),
  coded by the context model (format 9, ``row_model``);

and measures each file's bytes, the coded rows' bits per action (the values section with
its code tables and block index, over the layout's actions), the exact exploitability in
the full game (``StreamedEvaluator``) minus the strategy's own, and the time of one
``efgs_probabilities`` call in C (hole cards, board and betting -> row: the canonical index,
the bucket table and the row decoding), over random keys of every street and of the
river alone, interleaved in one C process. Per street it gives the bucket table's bytes
packed (what the file holds) and entropy-coded in blocks of 4,096 entries with an 8-byte
index each (computed, not written), and the sizes for heads-up limit hold'em at
169-1000-1000-1000 computed from the measured bits per action.

``--frontier`` instead measures bits per action and the exact added exploitability of the
modelled rows over grids x snaps (no files written but the values sections), the Pareto
frontier among them and the earlier settings, and plots it (docs/img/strategy-frontier.png,
with Cepheus's and slumbot's bits per value marked).

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
from efgkit.storage.bucket_strategy import load_bucket_strategy
from efgkit.storage.compact_holdem import (
    bucket_table_file_bytes,
    canonical_table_entries,
    export_bucket_strategy,
)
from efgkit.storage.compact_reader import MODEL_HEAD
from efgkit.storage.compact_writer import block_slot_bits, index_bytes, largest_remainder, pack_rows
from efgkit.storage.row_coding import huffman_lengths
from efgkit.storage.row_model import model_rows
from efgkit.storage.snapped_rows import row_importance, snap_rows

DOC = Path(__file__).resolve().parent.parent / "docs" / "compact-format.md"
C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
TABLE_BLOCK = 4096
HULHE_BUCKETS = (169, 1000, 1000, 1000)
TIMER = Path(__file__).resolve().parent / "efgs_time.c"
PLOT = DOC.parent / "img" / "strategy-frontier.png"
CEPHEUS_BITS, SLUMBOT_BITS = 32 / 28, (8, 16)
"""Bits per value of the anchors (Bowling et al. 2015: 28:1 against 4-byte floats; slumbot:
one or two bytes a value)."""
RIVER_CENTROIDS, RIVER_FEATURES = 1000, 8
"""HULHE's computed river: 1,000 OCHS centroids of 8 opponent clusters (docs, format 8)."""


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


def modelled_weights(layout: BucketLayout, strategy: np.ndarray, importance, grid: int,
                     snap: float) -> np.ndarray:
    """The weights a modelled export writes (``snap_rows`` then largest remainder on ``grid``)."""
    offsets = layout.row_offsets()
    snapped = snap_rows(strategy, offsets, importance, snap) if snap else strategy
    return largest_remainder(snapped, offsets, np.full(layout.num_rows, grid, np.int64))


def modelled_bits(layout: BucketLayout, weights: np.ndarray, grid: int) -> tuple[float, float]:
    """Bits per action of the modelled values section: all of it (tier bounds, head, first
    probabilities, block index, stream), and without the parts whose size does not grow with
    the strategy (bounds, head, probabilities: what a 52-card strategy's rows would cost)."""
    section = model_rows(weights, layout.row_offsets(), np.ones(layout.num_rows, bool), grid)
    fixed = MODEL_HEAD.unpack_from(section, 0)[4]  # the block index starts after them
    return (8 * (16 + len(section)) / layout.num_actions,
            8 * (len(section) - fixed) / layout.num_actions)


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
    """Bytes of heads-up limit hold'em at HULHE_BUCKETS computed from bits per action: the
    strategy, the key index, and the buckets with every table packed, or with the river
    computed (its description: RIVER_CENTROIDS float64 centroids, the preflop classes'
    clusters, the head) and the flop and turn tables packed (docs, "Computed buckets")."""
    game = make_game("HULHE")
    layout = BucketLayout(BettingTree(game), CardIndependent())
    rounds = layout.betting.round[layout.betting.decision_nodes]
    rows_ = int(np.sum(np.array(HULHE_BUCKETS)[rounds]))
    values = int(np.sum(layout.width * np.array(HULHE_BUCKETS)[rounds]))
    tables = bucket_table_file_bytes(game, HULHE_BUCKETS)
    index = index_bytes(layout.betting.decision_nodes.shape[0],
                        block_slot_bits(rows_, int(layout.width.max()), 8)[1])
    river = 16 + 176 + 8 * RIVER_CENTROIDS * RIVER_FEATURES
    kept = sum((canonical_table_entries(game, r) * int(HULHE_BUCKETS[r] - 1).bit_length() + 7) // 8
               for r in range(3))
    rows = []
    for name, bits in bits_per_action.items():
        strategy = values * bits / 8
        rows.append(f"| {name} | {values:,} | {bits:.2f} | {strategy / 1e6:.1f} | {tables / 1e6:.1f} | "
                    f"{(strategy + index + tables) / 1e6:.1f} | {(kept + river) / 1e6:.1f} | "
                    f"{(strategy + index + kept + river) / 1e6:.1f} |")
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
        "above (strategy; modelled rows: without the fixed head and first probabilities, which "
        "do not grow with the strategy), the key index, and the buckets: every table packed "
        "(`bucket_table_file_bytes`), or the river computed and the flop and turn tables packed:", "",
        "| setting | actions | bits per action | strategy MB | bucket tables MB | total MB | "
        "buckets, river computed MB | total, river computed MB |",
        "|---|---|---|---|---|---|---|---|", *hulhe_rows(bits_of)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="holdem(ranks=5)")
    parser.add_argument("--strategy", required=True, type=Path)
    parser.add_argument("--bucket-file", required=True, type=Path)
    parser.add_argument("--iterations", type=int, default=0,
                        help="CFR+ iterations the strategy ran (reported)")
    parser.add_argument("--grids", default="16,8,32")
    parser.add_argument("--models", default="64:0.01,48:0.01,64:0",
                        help="modelled settings GRID:SNAP (snaps need --strategy as the .h5)")
    parser.add_argument("--frontier", action="store_true",
                        help="measure the modelled rows over --frontier-grids x --frontier-snaps")
    parser.add_argument("--frontier-grids", default="8,12,16,20,24,28,32,40,48,64,96,128,256")
    parser.add_argument("--frontier-snaps", default="0,0.001,0.003,0.01,0.03")
    parser.add_argument("--anchors", default="",
                        help="earlier settings to plot, NAME:BITS:ADDED;... (format 7 rows of this strategy)")
    parser.add_argument("--keys", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--section", default="compact-holdem",
                        help="the section of docs/compact-format.md to write")
    args = parser.parse_args()
    game = make_game(args.spec)
    if args.strategy.suffix == ".h5":
        layout, strategy, _, state = load_bucket_strategy(args.strategy, game, args.bucket_file)
        importance = row_importance(state["average_accumulator"], layout.row_offsets())
    else:
        layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, args.bucket_file))
        strategy, importance = layout.checked(np.load(args.strategy)), None
    if args.frontier:
        frontier(args, layout, strategy, importance)
        return
    settings = [(f"compressed: rows on a grid of 1/{g}, 4 bits, coded", 4, int(g), True)
                for g in args.grids.split(",")]
    models = [(int(g), float(snap)) for g, snap in
              (item.split(":") for item in args.models.split(",") if item)]
    settings += [(f"modelled: grid 1/{g}, snap {snap:g} (format 9)", 4, ("model", g, snap), False)
                 for g, snap in models]
    settings += [("8 bits, packed (format 6)", 8, None, False), ("8 bits, coded", 8, None, True),
                 ("4 bits, packed (format 6)", 4, None, False), ("4 bits, coded", 4, None, True)]
    work = Path(tempfile.mkdtemp(prefix="bench-compact-"))
    lines, files, played, bits_of = [], [], {}, {}
    for i, (name, bits, steps, coded) in enumerate(settings):  # files first: sizes and times
        model = steps if isinstance(steps, tuple) else None
        rows = strategy if steps is None or model else on_grid(layout, strategy, steps)
        started = time.perf_counter()
        export = export_bucket_strategy(layout, rows, work / f"{i}.efgs", bits=bits, bucket_tables="inline",
                                        coded=coded, model_grid=model[1] if model else None,
                                        snap=model[2] if model else 0.0, row_importance=importance)
        seconds = time.perf_counter() - started
        played.setdefault((bits, steps), export.dequantized())
        if model:
            per_action, bits_of[name] = modelled_bits(layout, export.weights, model[1])
        else:
            per_action = bits_of[name] = coded_bits_per_action(layout, export) if coded else float(bits)
        files.append(work / f"{i}.efgs")
        lines.append([name, export.bytes, export.card_table_bytes, per_action, None, seconds])
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


def frontier(args, layout: BucketLayout, strategy: np.ndarray, importance) -> None:
    """Bits per action and exact added exploitability of the modelled rows over grids x
    snaps: the table, the Pareto frontier, the plot."""
    game = layout.betting.game
    evaluator = StreamedEvaluator(layout)
    mbb = 1000 / max(game.blinds)
    own = evaluator.evaluate(strategy, game_value=False).exploitability * mbb
    points = []
    for grid in map(int, args.frontier_grids.split(",")):
        for snap in map(float, args.frontier_snaps.split(",")):
            if snap and importance is None:
                continue
            weights = modelled_weights(layout, strategy, importance, grid, snap)
            bits, at_scale = modelled_bits(layout, weights, grid)
            added = evaluator.evaluate(weights / grid, game_value=False).exploitability * mbb - own
            points.append((grid, snap, bits, at_scale, added))
            print(grid, snap, f"{bits:.3f} {at_scale:.3f} {added:+.3f}", flush=True)
    anchors = [(name, float(bits), float(added)) for name, bits, added in
               (item.rsplit(":", 2) for item in args.anchors.split(";") if item)]
    pareto = [p for p in points if not any(q[2] <= p[2] and q[4] <= p[4] and q != p for q in points)]
    best = min((p for p in points if p[4] <= 1.0), key=lambda p: p[2], default=None)
    table = ["| grid | snap | bits per action (file) | bits per action (rows, at scale) | "
             "added exploitability (mbb/g, exact) | Pareto |", "|---|---|---|---|---|---|"]
    for grid, snap, bits, at_scale, added in points:
        mark = "yes" if (grid, snap, bits, at_scale, added) in pareto else ""
        table.append(f"| 1/{grid} | {snap:g} | {bits:.3f} | {at_scale:.3f} | {added:+.3f} | {mark} |")
    text = "\n".join([
        f"{args.spec}, buckets {args.bucket_file.name}, {layout.num_rows:,} rows, {layout.num_actions:,} "
        f"actions; the strategy: CFR+ (public chance sampling), {args.iterations:,} iterations, "
        f"exploitability {own:.2f} mbb/g (exact). Modelled rows (format 9, blocks of 128 rows): "
        "bits per action of the whole values section, and without its fixed head and first "
        "probabilities; the exploitability added by what the file plays, exact.", "",
        *table, "", "Fewest bits at most 1 mbb/g added: " + (
            f"grid 1/{best[0]}, snap {best[1]:g}: {best[2]:.3f} bits per action ({32 / best[2]:.1f}:1 "
            f"against 4-byte floats), {best[4]:+.3f} mbb/g." if best else "none."),
        "", f"![bits per action against added exploitability](img/{PLOT.name})"])
    if not args.no_write:
        update_section(DOC, "compact-frontier", text)
        plot_frontier(points, pareto, anchors, own)
    print(text)


def plot_frontier(points, pareto, anchors, own: float) -> None:
    """Bits per action against added exploitability, with the anchors' bits per value."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.5, 4.8))
    axes.set_xlim(-1.5, 12)
    snaps = sorted({p[1] for p in points})
    for snap in snaps:
        chosen = [p for p in points if p[1] == snap]
        axes.plot([p[4] for p in chosen], [p[2] for p in chosen], "o", ms=4, alpha=0.6,
                  label=f"modelled rows, snap {snap:g}")
    front = sorted(pareto, key=lambda p: p[4])
    axes.step([p[4] for p in front], [p[2] for p in front], where="post", color="black", lw=1.2,
              label="Pareto frontier (modelled)")
    for name, bits, added in anchors:
        axes.plot([added], [bits], "s", color="gray", ms=5)
        axes.annotate(name, (added, bits), textcoords="offset points", xytext=(5, 3), fontsize=7)
    left = axes.get_xlim()[0]
    axes.axhline(CEPHEUS_BITS, color="tab:red", ls="--", lw=1)
    axes.text(3.2, CEPHEUS_BITS, " Cepheus: 1.14 bits per value (28:1)", color="tab:red",
              fontsize=7, va="bottom", ha="left")
    axes.axhspan(*SLUMBOT_BITS, color="tab:purple", alpha=0.08)
    axes.text(left, SLUMBOT_BITS[1], " slumbot: 8-16 bits per value", color="tab:purple",
              fontsize=7, va="top", ha="left")
    axes.axvline(1.0, color="tab:green", ls=":", lw=1)
    axes.axhline(2.0, color="tab:green", ls=":", lw=1)
    axes.text(1.0, 2.0, " target: at most 2 bits at at most 1 mbb/g", color="tab:green", fontsize=7,
              va="bottom")
    axes.set_yscale("log", base=2)
    axes.set_ylim(0.5, 20)
    axes.set_yticks([0.5, 1, 2, 4, 8, 16], ["0.5", "1", "2", "4", "8", "16"])
    axes.set_xlabel(f"added exploitability, mbb/g (exact; the strategy's own: {own:.1f})")
    axes.set_ylabel("bits per action (values section / actions)")
    axes.set_title("holdem(ranks=5,rounds=2), converged CFR+: strategy bits vs added exploitability",
                   fontsize=9)
    axes.legend(fontsize=7, loc="center right")
    figure.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(PLOT, dpi=130)


if __name__ == "__main__":
    main()
