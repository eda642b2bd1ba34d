"""Storage benchmark: memory-mapped files, readers, quantization, checkpoints, solves on disk.

Measures (issue 5 targets in brackets):
* opening a compact (.efgs) or HDF5 strategy file and reading one infoset, for files of
  ~10 MB to ~1 GB, with the file's pages evicted first and warm   [milliseconds, flat]
* Python reader and C reader, time per lookup        [<= 20 us and <= 1 us]
* NashConv before and after quantization at 16/8/4 bits, Leduc and P224  [8 bits: < 1%?]
* writing and resuming a checkpoint
* a CFR+ iteration with every array on disk against one in memory  [within 2x when cached]
* a solve whose arrays are several times --memory-limit: peak RSS against the limit

Run ``python benchmarks/bench_storage.py`` (writes docs/benchmarks-storage.md; about an
hour, most of it compiling and solving poker(bets=2,raises=2,cap=6)), ``--compact`` to
rerun only the compact-file sections (opening, reader speed, file sizes: a few minutes)
and replace them in the docs, or ``--quick`` for a smoke run on small games that writes
nothing. The process is pinned to one core.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

from efgkit.io.mapped_arrays import MappedFile
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import BestResponse, CFRPlusSolver, Strategy
from efgkit.specs import load_game
from efgkit.storage import compact_reader
from efgkit.storage.checkpoint import resume, write_checkpoint
from efgkit.storage.compact import export_compact
from efgkit.storage.compact_reader import (
    HEADER,
    MAGIC,
    PACKED_VERSION,
    VALUES_HEAD,
    CompactStrategy,
    fingerprint_of,
    header_crc,
    key_hash,
    slot_positions,
)
from efgkit.storage.compact_writer import SLOTS_PER_KEY, action_totals, assign_slots, peel_order, quantize
from efgkit.storage.disk_solve import DiskSolver, build_working_file, current_rss
from efgkit.storage.strategy_file import open_strategy_file, write_strategy_file

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks-storage.md"
C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
BIG_GAME = "poker(bets=2,raises=2,cap=6)"


def _evict(path: Path) -> None:
    """Drop this one file's pages from the page cache (no other file is affected)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


# ------------------------------------------------------------------------ synthetic files
def synthetic_efgs(path: Path, infosets: int, seed: int = 0) -> list[str]:
    """A valid 8-bit compact file indexing ``infosets`` keys on as many two-action rows;
    returns the 1000 keys that are really in it (``key-0`` ... ``key-999``).

    The xor table is random bytes except where those keys' slots are set so that their
    three slots XOR to their row and fingerprint (what ``key_index`` would write).
    """
    rng = np.random.default_rng(seed)
    keys = [f"key-{i}" for i in range(1000)]
    count = max(infosets, len(keys))
    check_bits, row_bits = 8, (count - 1).bit_length()
    slot_bits = row_bits + check_bits
    segment = (int(SLOTS_PER_KEY * count) + 32) // 3
    spec = b"synthetic"
    slots_at = (HEADER.size + len(spec) + 7) // 8 * 8
    slot_bytes = (3 * segment * slot_bits + 7) // 8
    starts_at = (slots_at + slot_bytes + 7) // 8 * 8
    values_at = (starts_at + 4 * (count + 1) + 7) // 8 * 8
    size = values_at + VALUES_HEAD.size + 2 * count
    hashes = [key_hash(key, 0) for key in keys]
    positions = np.array([slot_positions(hashed, segment) for hashed in hashes], np.int64)
    used, local = np.unique(positions, return_inverse=True)
    local = local.reshape(-1, 3)
    order, own_slot = peel_order(local, used.shape[0])
    mask = (1 << slot_bits) - 1
    with open(path, "wb") as handle:
        handle.truncate(size)
        handle.seek(slots_at)
        for lo in range(0, slot_bytes, 1 << 26):
            handle.write(rng.integers(0, 256, min(1 << 26, slot_bytes - lo), dtype=np.uint8).tobytes())
        handle.seek(starts_at)
        for lo in range(0, count + 1, 1 << 24):
            handle.write((2 * np.arange(lo, min(lo + (1 << 24), count + 1))).astype("<u4").tobytes())
        handle.seek(values_at)
        handle.write(VALUES_HEAD.pack(0, 2 * count))  # no tiers: every row at 8 bits per action
        for lo in range(0, count, 1 << 24):  # a two-action row is one 16-bit weight of 2**16 - 2
            first = rng.integers(0, 2**16 - 1, min(1 << 24, count - lo)).astype("<u2")
            handle.write(first.tobytes())
    with open(path, "r+b") as handle:
        def slot(index: int, value: int | None = None) -> int:
            bit = index * slot_bits
            handle.seek(slots_at + (bit >> 3))
            width = ((bit & 7) + slot_bits + 7) >> 3
            word = int.from_bytes(handle.read(width), "little")
            if value is not None:
                word = word & ~(mask << (bit & 7)) | value << (bit & 7)
                handle.seek(slots_at + (bit >> 3))
                handle.write(word.to_bytes(width, "little"))
            return (word >> (bit & 7)) & mask

        table = np.array([slot(int(index)) for index in used], np.uint64)
        values = np.array([row << check_bits | fingerprint_of(hashed, check_bits)
                           for row, hashed in enumerate(hashes)], np.uint64)
        assign_slots(local, values, order, own_slot, table)
        for index, value in zip(used, table, strict=True):
            slot(int(index), int(value))
    crc = 0
    with open(path, "rb") as handle:
        handle.seek(HEADER.size + len(spec))
        while chunk := handle.read(1 << 24):
            crc = zlib.crc32(chunk, crc)
    fields = [MAGIC, PACKED_VERSION, 8, 0, count, count, 2 * count, 0, segment, slot_bits, check_bits, 0,
              count, 0, slots_at, starts_at, values_at, 0, 0, 0, size, crc, 0, bytes(32),
              len(spec)]
    fields[-3] = header_crc(HEADER.pack(*fields) + spec)
    with open(path, "r+b") as handle:
        handle.write(HEADER.pack(*fields) + spec)
    return keys


class _Uniform:
    """A lazily computed probability array (two actions each) for writing big HDF5 files."""

    def __init__(self, length: int) -> None:
        self.shape = (length,)

    def __getitem__(self, part: slice) -> np.ndarray:
        return np.full(part.stop - part.start, 0.5)


class _Arange:
    def __init__(self, length: int) -> None:
        self.shape = (length,)

    def __getitem__(self, part: slice) -> np.ndarray:
        return np.arange(part.start, part.stop, dtype=np.int32)


def synthetic_hdf5(path: Path, actions: int) -> None:
    """A schema-2 strategy file of ``actions`` float64 probabilities, written slice by slice."""
    write_strategy_file(path, game_spec="synthetic", tree_fingerprint="0" * 64,
                        abstract_of=_Arange(actions // 2), probabilities=_Uniform(actions),
                        provenance={"algorithm": "synthetic"})


def open_and_read_hdf5_ms(path: Path, offset: int, clock=time.perf_counter) -> float:
    started = clock()
    with open_strategy_file(path) as handle:
        dataset = handle["strategy/probabilities"]
        with MappedFile(path, writable=False) as mapped:
            row = np.array(mapped.map(dataset)[offset:offset + 2])
    elapsed = clock() - started
    assert row.sum() == 1.0
    return 1e3 * elapsed


def open_and_read_efgs_ms(path: Path, key: str, clock=time.perf_counter) -> float:
    started = clock()
    with CompactStrategy(str(path)) as strategy:
        row = strategy.probabilities(key)
    elapsed = clock() - started
    assert abs(sum(row.values()) - 1.0) < 1e-9
    return 1e3 * elapsed


def file_size_rows(folder: Path, sizes_mb: list[int]) -> list[tuple]:
    rows = []
    for megabytes in sizes_mb:
        efgs = folder / f"synthetic-{megabytes}.efgs"
        keys = synthetic_efgs(efgs, megabytes * 10**6 // 6)
        hdf5 = folder / f"synthetic-{megabytes}.h5"
        synthetic_hdf5(hdf5, megabytes * 10**6 // 8 // 2 * 2)
        for path, read in (
                (efgs, lambda p, i, c, keys=keys: open_and_read_efgs_ms(p, keys[i], c)),
                (hdf5, lambda p, i, c: open_and_read_hdf5_ms(p, 2 * (i * 7919 % 1000), c))):
            _evict(path)
            cold = read(path, 0, time.perf_counter)  # waits for the disk: wall time
            warm = min(read(path, i, time.process_time) for i in range(1, 20))
            rows.append((path.suffix, f"{path.stat().st_size / 1e6:,.0f}", f"{cold:.2f}",
                         f"{warm:.3f}"))
        efgs.unlink()
        hdf5.unlink()
    return rows


# ------------------------------------------------------------------------ reader speed
def python_lookup_us(path: Path, keys: list[str], rounds: int) -> float:
    with CompactStrategy(str(path)) as strategy:
        order = random.Random(0).sample(keys, len(keys))
        started = time.process_time()
        for _ in range(rounds):
            for key in order:
                strategy.probabilities(key)
        return 1e6 * (time.process_time() - started) / (rounds * len(order))


def c_lookup_ns(tool: Path, path: Path, keys: list[str], rounds: int) -> float:
    order = random.Random(0).sample(keys, len(keys))
    result = subprocess.run([str(tool), "--bench", str(path), str(rounds)],
                            input="\n".join(order) + "\n", capture_output=True, text=True, check=True)
    return float(result.stdout.split()[0])


def compile_query_tool(folder: Path) -> Path | None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    tool = folder / "efgs_query"
    subprocess.run([compiler, "-std=c99", "-O2", str(C_SOURCES / "efgs.c"),
                    str(C_SOURCES / "efgs_computed.c"), str(C_SOURCES / "efgs_compressed.c"),
                    str(C_SOURCES / "efgs_query.c"), "-o", str(tool)], check=True)
    return tool


# ------------------------------------------------------------------------ quantization
def quantization_rows(spec: str, iteration_counts: list[int]) -> list[tuple]:
    tree = load_game(spec)
    identity = InfosetMap.identity(tree)
    evaluator = BestResponse(identity)
    rows = []
    for label, infoset_map in (("full game", identity), ("coarsest abstraction",
                                                         InfosetMap.coarsest(tree))):
        solver, done = CFRPlusSolver(infoset_map), 0
        for count in iteration_counts:
            solver.iterate(count - done)
            done = count
            behavior = solver.average_strategy().behavior()
            before = evaluator.evaluate(Strategy(identity, behavior)).nash_conv
            cells = []
            for bits in (16, 8, 4):
                weights = quantize(behavior, tree.infoset_action_offset, bits)
                total = action_totals(tree.infoset_action_offset, bits)
                after = evaluator.evaluate(Strategy(identity, weights / total)).nash_conv
                cells.append(f"{after:.3e} ({100 * (after - before) / before:+.2f}%)")
            rows.append((tree.spec, label, f"{count:,}", f"{before:.3e}", *cells))
            print(*rows[-1], flush=True)
    return rows


def export_size_rows(folder: Path, spec: str, iterations: int) -> tuple[list[tuple], Path, list]:
    tree = load_game(spec)
    strategy = CFRPlusSolver(tree).iterate(iterations).average_strategy()
    rows, path8 = [], None
    for bits in (16, 8, 4):
        for prune in (False, True):
            path = folder / f"{tree.spec}-{bits}-{prune}.efgs"
            result = export_compact(strategy, path, bits=bits, prune_unreachable=prune)
            rows.append((tree.spec, bits, "yes" if prune else "no", f"{result.infosets:,}",
                         f"{result.bytes:,}", f"{result.bytes_per_infoset:.2f}"))
            if bits == 8 and not prune:
                path8 = path
    return rows, path8, tree.infoset_keys


# ------------------------------------------------------------------------ checkpoints, disk
def checkpoint_row(folder: Path, spec: str, iterations: int) -> tuple:
    tree = load_game(spec)
    solver = CFRPlusSolver(tree).iterate(iterations)
    started = time.process_time()
    solver.iterate(3)
    iteration = (time.process_time() - started) / 3
    path = folder / "checkpoint.h5"
    started = time.perf_counter()
    write_checkpoint(path, solver, algorithm="cfr+", parameters={}, history=[])
    written = time.perf_counter() - started
    fresh = CFRPlusSolver(tree)
    started = time.perf_counter()
    resume(path, fresh, algorithm="cfr+", parameters={}, iterations=10**9)
    loaded = time.perf_counter() - started
    assert np.array_equal(fresh.regrets, solver.regrets)
    return (tree.spec, f"{path.stat().st_size / 1e6:.1f}", f"{written:.3f}", f"{loaded:.3f}",
            f"{iteration:.3f}")


def disk_speed_rows(folder: Path, spec: str, iterations: int) -> list[tuple]:
    """CFR+ iterations in memory, on disk with room to spare, and on disk with 100 MiB
    above this process's current resident set (pages dropped every few windows)."""
    tree = load_game(spec)
    memory = CFRPlusSolver(tree).iterate(1)
    started = time.process_time()
    memory.iterate(iterations)
    in_memory = (time.process_time() - started) / iterations
    work = folder / "speed.work"
    build_working_file(load_game, spec, str(work))
    del tree, memory
    rows = [(spec, "in memory (CFRPlusSolver)", "-", f"{in_memory:.4f}", "1.00")]
    for label, headroom in (("room to spare (8 GiB above)", 8 << 30),
                            ("tight (100 MiB above)", 100 << 20)):
        disk = DiskSolver(work, variant="cfr+", memory_limit=current_rss() + headroom).iterate(1)
        started = time.process_time()  # includes the kernel's time serving page faults
        disk.iterate(iterations)
        per_iteration = (time.process_time() - started) / iterations
        rows.append((spec, f"on disk, limit {label} the process's RSS",
                     f"{disk.window_bytes / 2**20:.1f} MiB", f"{per_iteration:.4f}",
                     f"{per_iteration / in_memory:.2f}"))
        disk.close()
    work.unlink()
    return rows


def memory_limit_row(folder: Path, spec: str, iterations: int, limit: str) -> tuple:
    """``efgkit solve --memory-limit`` in a fresh process: its peak RSS against its files.

    The working file is kept for the next call (a later run of the same game reuses it).
    """
    state = folder / "limited.h5"
    state.unlink(missing_ok=True)
    command = [sys.executable, "-c", "from efgkit.cli import main; main()", "solve", spec, "-n",
               str(iterations), "--state", str(state), "--memory-limit", limit,
               "--checkpoint-every", str(iterations // 2), "--json"]
    data = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    compiled = data["compile_peak_rss_bytes"]
    row = (data["game"], f"{data['histories']:,}", limit,
           f"{data['working_file_bytes'] / 2**20:,.0f}", f"{data['state_bytes'] / 2**20:,.0f}",
           f"{data['peak_rss_bytes'] / 2**20:,.0f}",
           f"{data['working_file_bytes'] / data['memory_limit_bytes']:.1f}x",
           f"{data['seconds'] / iterations:.2f}",
           f"{compiled / 2**20:,.0f}" if compiled else "reused")
    print(*row, flush=True)
    return row


# ------------------------------------------------------------------------ report
def _table(header: tuple, rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


class Sections(list):
    """(title, table) pairs, each printed as soon as it is added."""

    def append(self, section: tuple[str, str]) -> None:
        super().append(section)
        print(f"## {section[0]}\n\n{section[1]}\n", flush=True)

    def text(self) -> str:
        return "\n\n".join(f"## {title}\n\n{table}" for title, table in self)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run on small games, no docs")
    parser.add_argument("--compact", action="store_true",
                        help="rerun only the compact-file sections and replace them in the docs")
    parser.add_argument("--scratch", default=None, help="folder for the large temporary files")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    quick = args.quick
    with tempfile.TemporaryDirectory(dir=args.scratch) as scratch:
        folder = Path(scratch)
        sections = Sections()

        rows = file_size_rows(folder, [1, 4] if quick else [10, 100, 1000])
        sections.append(("Opening a file and reading one infoset", _table(
            ("file", "MB", "open + one lookup, evicted, ms", "open + one lookup, cached, ms"),
            rows)))

        tool = compile_query_tool(folder)
        speed = []
        for spec in ("leduc",) if quick else ("leduc", "P224"):
            _, path, keys = export_size_rows(folder, spec, 10 if quick else 200)
            speed.append((load_game(spec).spec, f"{len(keys):,}",
                          f"{python_lookup_us(path, keys, 2 if quick else 20):.1f}",
                          f"{c_lookup_ns(tool, path, keys, 20 if quick else 2000):.0f}"
                          if tool else "no C compiler"))
        big = folder / "synthetic-lookups.efgs"
        synthetic_count = 10**5 if quick else 7 * 10**7
        synthetic_keys = synthetic_efgs(big, synthetic_count)
        speed.append((f"synthetic, {big.stat().st_size / 1e6:,.0f} MB",
                      f"1,000 of {synthetic_count:,}",
                      f"{python_lookup_us(big, synthetic_keys, 5 if quick else 100):.1f}",
                      f"{c_lookup_ns(tool, big, synthetic_keys, 100 if quick else 20000):.0f}"
                      if tool else "no C compiler"))
        big.unlink()
        sections.append(("Reader speed (random order, warm cache)", _table(
            ("file", "keys looked up", "Python reader, us/lookup (target <= 20)",
             "C reader, ns/lookup (target <= 1000)"), speed)))

        sizes, _, _ = export_size_rows(folder, "leduc", 200)
        if not quick:
            sizes += export_size_rows(folder, "P224", 200)[0]
        sections.append((SIZES_TITLE, _table(
            ("game", "bits", "pruned", "infosets stored", "bytes", "bytes/infoset"), sizes)))
        if args.compact:
            _replace_sections(sections)
            return

        quantized = quantization_rows("leduc", [100] if quick else [100, 1000, 10000])
        if not quick:
            quantized += quantization_rows("P224", [100, 1000])
        sections.append(("NashConv before and after quantization (CFR+ average strategy)", _table(
            ("game", "strategy on", "iterations", "NashConv", "16 bits", "8 bits", "4 bits"),
            quantized)))

        checkpoint = [checkpoint_row(folder, spec, 5) for spec in
                      (("leduc",) if quick else ("leduc", "P224"))]
        sections.append(("Checkpoints (CFR+, identity abstraction)", _table(
            ("game", "file MB", "write s", "resume s", "one iteration s"), checkpoint)))

        disk = disk_speed_rows(folder, "leduc" if quick else "P224", 3 if quick else 20)
        sections.append(("A CFR+ iteration with every array on disk", _table(
            ("game", "run", "window", "s/iteration", "ratio to in memory"), disk)))

        limited = [memory_limit_row(folder, "leduc" if quick else BIG_GAME, 2 if quick else 6,
                                    "400MiB" if quick else "1GiB")]
        if not quick:
            limited.append(memory_limit_row(folder, BIG_GAME, 6, "700MiB"))
        sections.append(("`efgkit solve --state --memory-limit`: peak RSS against the files", _table(
            ("game", "histories", "--memory-limit", "working file MiB", "checkpoint MiB",
             "peak RSS MiB", "working file / limit", "s/iteration", "compile child peak RSS MiB"),
            limited)))

    if not quick:
        _write_docs(sections.text())


SIZES_TITLE = "Compact file sizes (CFR+ after 200 iterations, largest-remainder rounding)"


def _replace_sections(sections: Sections) -> None:
    """Put the rerun compact-file sections and the current notes in the docs, keeping the
    other sections, and say when they were rerun."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = DOCS.read_text()
    head, *blocks = text.split("\n## ")
    kept = [block for block in blocks if not block.startswith("Notes")]
    for title, table in sections:
        matching = [i for i, block in enumerate(kept) if block.split("\n")[0].split(" (")[0]
                    == title.split(" (")[0]]
        kept[matching[0]] = f"{title}\n\n{table}\n"
    head = head.split("\nCompact-file sections rerun")[0].rstrip("\n")
    head += (f"\nCompact-file sections rerun {stamp} (`--compact`, format "
             f"{compact_reader.VERSION}).\n")
    DOCS.write_text("\n## ".join([head, *kept]).rstrip("\n") + f"\n\n{NOTES}\n")


def _write_docs(body: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    DOCS.write_text(
        "# Benchmarks: storage\n\n"
        "Generated by `python benchmarks/bench_storage.py` (do not edit by hand; the notes "
        "below the tables are in the script).\n\n"
        f"Run {stamp} on {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"pinned to one core; Python {platform.python_version()}, numpy {np.__version__}.\n\n"
        f"{body}\n\n{NOTES}\n")


NOTES = """## Notes

* The machine was shared (other jobs on the same core), so CPU-bound timings are
  process CPU time (`time.process_time`, which includes the kernel's time serving page
  faults), except where waiting is the point: the evicted opens, checkpoint writes
  (fsync) and the `--memory-limit` runs are wall time.
* *Evicted* means the file's pages were dropped from the page cache first
  (`posix_fadvise(DONTNEED)` on that file only), so the lookup reads from disk; *cached*
  is the best of 19 further opens. Neither reader loads the file: opening reads the
  header and a compact lookup reads three slots of the mapped xor table and one row, so
  a cached open and lookup stays well under a millisecond (compact) or about 2 ms (HDF5,
  mostly h5py opening the file) at every size, and an evicted one costs the disk reads
  of the few pages it touches. The
  HDF5 row is `open_strategy_file` (format, version and manifest checksum) plus mapping
  `/strategy/probabilities` and reading one row at a known offset (finding the offset
  of an infoset needs the game tree, which the compact file does not).
* A Python lookup is the key's BLAKE2b hash (hashlib), three slots of the mapped xor
  table and one row through `struct`. The C reader is timed by
  `efgs_query --bench` (`clock()` over all keys, many rounds).
* Largest-remainder quantization (the table above, measured on compact format 4's grid of
  `2**bits - 1` per action; format 6 stores a row's `A - 1` free weights on a finer grid
  in the same bytes, and docs/compact-format.md has its numbers: 3.2e-4 at 8 bits on the
  1,000-iteration Leduc strategy) adds NashConv of its own, roughly
  independent of how converged the strategy is (about 6-9e-3 at 8 bits on Leduc and
  P224 on format 4's grid; the export's default exact rounding adds less), so the relative increase is
  small only for strategies whose NashConv is much larger than that — such as strategies
  on an abstraction, whose NashConv in the full game is dominated by the abstraction
  (slumbot's 1% came from strategies at 189 mbb/g). 16 bits cost < 1% down to NashConv
  about 5e-4 on Leduc. docs/compact-format.md explains the trade-off.
* *On disk* runs `DiskSolver` on the working file: the same kernels as `CFRSolver` over
  windows of the memory-mapped arrays (bit-identical results). With a limit above what
  the arrays need, no page is ever dropped and the file stays in the page cache; with a
  tight limit, mapped pages are dropped whenever the resident set nears it and fault back
  in from the page cache.
* The `--memory-limit` rows run `efgkit solve GAME --state FILE.h5 --memory-limit SIZE` in
  a fresh process; the peak RSS is that process's `VmHWM` over the whole run, including
  writing the checkpoints (not `ru_maxrss`, which Linux carries over from the parent
  that started the process). The game is compiled into the working file by a
  child process, whose own peak is the last column: the compiled tree does not fit the
  limit, which is why it is built apart.
"""


if __name__ == "__main__":
    main()
