"""Refactor proof (issue 28): fixed-seed result hashes and an interleaved speed A/B of source trees.

A refactor of the engine internals must leave every result bit-identical and must not be
slower; this script measures both for two or more source trees in one run.

``--fingerprints`` runs a fixed list of seeded ``efgkit`` commands (``RUNS``: the tree engine,
DCFR, the public-tree engine, the disk solver, CFR+IRA refinement, re-solving, the hold'em
bucket pipeline with the sampled solver, its streamed and LBR evaluations, the compact exports of
a tree strategy (exact rounding with tiers, nearest, a class rule, a card table) and of a bucket
strategy, a card-independent strategy's card-blind streamed evaluation, a duplicate match) in
each tree and hashes what they computed: every HDF5 dataset (name, dtype, shape, raw bytes),
the numeric attributes and the numbers inside JSON-text attributes, the numbers of the
command's ``--json`` output, and the bytes of any other file. Timings, memory and byte sizes,
versions, paths and digests of the files themselves are left out (``DROPPED``): they differ
between runs or trees without the results differing. A run whose hash differs between trees
makes the script exit 1; ``--json`` keeps one hash per dataset, attribute set and output, so a
difference can be traced to the array that changed.

``--speed`` times the hot loops through the library in child processes, the trees interleaved
(A, B, A, B, ...), after a warm-up that compiles or loads the numba kernels: Leduc CFR+ on the
tree and public-tree engines, sampled CFR+ on ``holdem(ranks=5)`` and HULHE, and both players'
best responses on one HULHE flop (``bench_full_game``'s walk, imported from the tree measured).
Rates are per CPU second of the child (the machine is shared; wall time moves with the load);
the child's whole CPU time, start-up included, is kept too.

Each command runs as ``python -c "from efgkit.cli import main; main()"`` with ``PYTHONPATH``
at the tree and the tree as working directory (``python -c`` puts the working directory first
on ``sys.path``), so each tree uses its own numba cache (``__pycache__`` in the tree).

    python benchmarks/refactor_ab.py --tree base=/work/wt-base --tree main=. --fingerprints --speed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import h5py
import numpy as np

LAUNCH = "from efgkit.cli import main; main()"
HOLDEM5 = "holdem(ranks=5)"
DROPPED = re.compile(r"seconds|per_second|rss|bytes|memory_limit|version")
"""Keys whose numbers are measurements or formats, not results: wall and CPU seconds, rates,
peak memory, file and array sizes, schema versions."""


CONTINUAL = """import json, sys
from efgkit.resolve import ContinualResolver
from efgkit.specs import load_game
from efgkit.storage.strategy_file import load_strategy
blueprint, _ = load_strategy(sys.argv[1], load_game("leduc"))
result = ContinualResolver(blueprint, iterations=int(sys.argv[3]), values=sys.argv[4]).run(
    state=sys.argv[2], checkpoint_seconds=0.5)
print(json.dumps({**result.to_dict(), "behavior": result.strategy.behavior().tolist()}))
"""
"""Continual re-solving has no command: this script runs it (defaults and names common to the
trees compared) and prints its result and combined strategy as the run's ``--json``."""


class Run(NamedTuple):
    """One fingerprinted command: ``arguments`` of ``efgkit`` (or of the Python ``code``) with
    ``{dir}`` the run's scratch directory (shared by the runs of one tree, so later runs read
    earlier runs' files), and the ``outputs`` it writes there that are hashed besides its
    ``--json`` output."""

    name: str
    arguments: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    code: str = LAUNCH


RUNS = (
    Run("a leduc cfr+ tree", ("solve", "leduc", "-a", "cfr+", "-n", "1000", "-o", "{dir}/a.h5", "--json"),
        ("a.h5",)),
    Run("b leduc dcfr", ("solve", "leduc", "-a", "dcfr", "-n", "1000", "-o", "{dir}/b.h5", "--json"),
        ("b.h5",)),
    Run("c leduc cfr+ public-tree", ("solve", "leduc", "-a", "cfr+", "-n", "1000", "--engine", "public-tree",
                                     "-o", "{dir}/c.h5", "--json"), ("c.h5",)),
    Run("d P222 disk solve", ("solve", "P222", "-a", "cfr+", "-n", "1000", "--memory-limit", "1GiB",
                              "--state", "{dir}/d.h5", "--checkpoint-every", "250", "--json"), ("d.h5",)),
    Run("e GS5 cfr+ira", ("refine", "GS5", "--seed", "0", "--target", "0.01", "--max-iterations", "2000",
                          "-o", "{dir}/e.h5", "--state", "{dir}/e-state.h5", "--json"),
        ("e.h5", "e-state.h5")),
    Run("f leduc resolve of (a)", ("resolve", "leduc", "{dir}/a.h5", "-o", "{dir}/f.h5", "--json"),
        ("f.h5",)),
    Run("f2 leduc maxmargin dcfr resolve of (a)", ("resolve", "leduc", "{dir}/a.h5", "--gadget", "maxmargin",
                                                   "--solver", "dcfr", "-n", "300", "--player", "1",
                                                   "-o", "{dir}/f2.h5", "--json"), ("f2.h5",)),
    Run("f3 leduc distributional-hedge resolve of (a)",
        ("resolve", "leduc", "{dir}/a.h5", "--gadget", "distributional-hedge", "--constraints", "selfplay",
         "-n", "200", "-o", "{dir}/f3.h5", "--json"), ("f3.h5",)),
    Run("f4 leduc continual re-solve of (a)", ("{dir}/a.h5", "{dir}/f4-state.h5", "100", "br"),
        code=CONTINUAL),
    Run("g0 holdem5 bucket file", ("holdem-abstraction", "--ranks", "5", "-b", "20,50,50,50", "--seed", "0",
                                   "--workers", "0", "-o", "{dir}/buckets5.h5", "--json"), ("buckets5.h5",)),
    Run("g holdem5 sampled cfr+", ("solve", HOLDEM5, "--engine", "sampled", "--buckets", "{dir}/buckets5.h5",
                                   "--seed", "0", "-n", "300", "-o", "{dir}/g.h5", "--json"), ("g.h5",)),
    Run("g' holdem5 streamed eval", ("evaluate", HOLDEM5, "{dir}/g.h5", "--engine", "streamed",
                                     "--no-game-value", "--json")),
    Run("h export (a) to efgs", ("export", "{dir}/a.h5", "-o", "{dir}/h.efgs", "--json"), ("h.efgs",)),
    Run("i holdem5 LBR of (g)", ("evaluate", HOLDEM5, "{dir}/g.h5", "--lbr", "100", "--seed", "0", "--json")),
    Run("j export (g) bucket strategy", ("export", "{dir}/g.h5", "-o", "{dir}/j.efgs", "--json"),
        ("j.efgs",)),
    Run("j' export (g), tables in a file", ("export", "{dir}/g.h5", "-o", "{dir}/j2.efgs", "--bits", "4",
                                           "--bucket-tables", "{dir}/j2.efgb", "--json"),
        ("j2.efgs", "j2.efgb")),
    Run("k export (e) 4-bit tiers, class rule", ("export", "{dir}/e.h5", "-o", "{dir}/k.efgs", "--bits", "4",
                                                 "--json"), ("k.efgs",)),
    Run("l export (a) nearest, keys, pruned", ("export", "{dir}/a.h5", "-o", "{dir}/l.efgs", "--rounding",
                                               "nearest", "--bits", "16", "--with-keys",
                                               "--prune-unreachable", "--json"), ("l.efgs",)),
    Run("m0 leduc card abstraction", ("cards", "leduc", "-b", "3,5", "--restarts", "2", "-o",
                                      "{dir}/m-abs.h5", "--json"), ("m-abs.h5",)),
    Run("m leduc cfr+ on (m0)", ("solve", "leduc", "-a", "cfr+", "-n", "200", "--abstraction",
                                 "{dir}/m-abs.h5", "-o", "{dir}/m.h5", "--json"), ("m.h5",)),
    Run("m' export (m) card table", ("export", "{dir}/m.h5", "-o", "{dir}/m.efgs", "--with-keys", "--json"),
        ("m.efgs",)),
    Run("n holdem5 card-independent sampled cfr+", ("solve", HOLDEM5, "--engine", "sampled", "--buckets",
                                                    "none", "--seed", "0", "-n", "100", "-o", "{dir}/n.h5",
                                                    "--json"), ("n.h5",)),
    Run("n' holdem5 card-blind streamed eval", ("evaluate", HOLDEM5, "{dir}/n.h5", "--engine", "streamed",
                                                "--json")),
    Run("o holdem5 match of (g) against call", ("play", HOLDEM5, "{dir}/g.h5", "--against", "call",
                                                "--hands", "20", "--seed", "0", "--json")),
)


class SpeedCase(NamedTuple):
    """A ``--speed`` measurement: ``seconds`` of CPU in the child's timed window (0: one step),
    ``unit`` what a step counts, and whether the reported number is a rate (units per CPU
    second, higher is faster) or CPU seconds per unit (lower is faster)."""

    name: str
    seconds: float
    unit: str
    rate: bool


SPEED_CASES = (
    SpeedCase("leduc cfr+ tree", 3.0, "it", True),
    SpeedCase("leduc cfr+ public-tree", 3.0, "it", True),
    SpeedCase("holdem5 sampled cfr+ (20-50-50-50 hashed)", 4.0, "it", True),
    SpeedCase("HULHE sampled cfr+ (buckets none)", 5.0, "it", True),
    SpeedCase("HULHE flop best response (both players)", 0.0, "flop", False),
)

SPEED_CHILD = '''
import json, sys, time

def poker(name, *modules):
    """``name`` from the first of ``modules`` (under efgkit.poker) the measured tree has: the
    engines were grouped into packages (materialised, streamed, buckets), and naming an
    abstraction left card_abstraction, after older trees were made."""
    import importlib
    for module in modules:
        try:
            return getattr(importlib.import_module("efgkit.poker." + module), name)
        except ModuleNotFoundError:
            continue
    raise ImportError(f"no efgkit.poker module of {modules} in this tree")

def leduc_tree():
    from efgkit.solvers import CFRPlusSolver
    from efgkit.specs import load_game
    solver = CFRPlusSolver(load_game("leduc"))
    return solver.iterate, 100, lambda: solver.iterate(100)

def leduc_public_tree():
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.specs import load_game
    PublicTreeCFR = poker("PublicTreeCFR", "materialised.solver", "solver")
    solver = PublicTreeCFR(InfosetMap.identity(load_game("leduc")), variant="cfr+")
    return solver.iterate, 200, lambda: solver.iterate(200)

def sampled(spec, cards):
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.specs import make_game
    BucketLayout = poker("BucketLayout", "buckets.bucket_layout", "bucket_layout")
    IsomorphicCards = poker("IsomorphicCards", "buckets.card_abstraction", "card_abstraction")
    abstraction_named = poker("abstraction_named", "buckets.named_abstractions", "named_abstractions",
                              "card_abstraction")
    SampledCFR = poker("SampledCFR", "streamed.sampled_cfr", "sampled_cfr")
    game = make_game(spec)
    abstraction = (abstraction_named(game, cards) if isinstance(cards, str)
                   else IsomorphicCards.hashed(game, cards, seed=0))
    solver = SampledCFR(BucketLayout(BettingTree(game), abstraction), seed=0)
    return solver.iterate, 1, lambda: solver.iterate(2)

def hulhe_flop():
    sys.path.insert(0, "benchmarks")  # the working directory is the tree measured
    import bench_full_game
    from bench_full_game import WARM_UP, setup
    # the best-response objective: BEST before the engine core named the codes, BEST_RESPONSE after
    best = getattr(bench_full_game, "BEST_RESPONSE", getattr(bench_full_game, "BEST", None))
    def walker(spec, buckets, item):  # as bench_full_game.per_flop: the entry reach is not timed
        evaluator, strategy = setup(spec, buckets)
        reach = [evaluator.entry_reach(strategy, player) for player in (0, 1)]
        item = item % len(evaluator.items)
        def walk():
            for player in (0, 1):
                evaluator.item_values(strategy, player, best, reach[player], item)
        return walk
    warm_up = walker(*WARM_UP, 0)
    walk = walker("holdem", (169, 1000, 1000, 1000), -1)  # the last canonical flop, 45 CPU s in the docs
    return lambda count: [walk() for _ in range(count)], 1, warm_up

CASES = {"leduc cfr+ tree": leduc_tree, "leduc cfr+ public-tree": leduc_public_tree,
         "holdem5 sampled cfr+ (20-50-50-50 hashed)": lambda: sampled("holdem(ranks=5)", (20, 50, 50, 50)),
         "HULHE sampled cfr+ (buckets none)": lambda: sampled("holdem", "none"),
         "HULHE flop best response (both players)": hulhe_flop}
step, batch, warm_up = CASES[sys.argv[1]]()
warm_up()
done, cpu, wall = 0, time.process_time(), time.perf_counter()
while True:
    step(batch)
    done += batch
    if time.process_time() - cpu >= float(sys.argv[2]):
        break
print(json.dumps({"units": done, "cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}))
'''
"""The child of one ``--speed`` sample: builds case ``argv[1]``, runs its warm-up (compiling
or loading the kernels, and for the flop the walk of ``bench_full_game.WARM_UP``), then steps
until ``argv[2]`` CPU seconds have passed (at least once) and prints units, CPU and wall
seconds of that window."""


def tree_environment(tree: Path) -> dict[str, str]:
    """The environment of a child process on ``tree``: efgkit from ``tree``, numba's default
    cache (``__pycache__`` beside the sources of ``tree``)."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    environment.pop("NUMBA_CACHE_DIR", None)
    return environment


def run_child(tree: Path, arguments: list[str]) -> tuple[str, float, float]:
    """Standard output, wall and CPU seconds (user + system) of ``python ARGUMENTS`` on ``tree``;
    raises ``RuntimeError`` with the end of its standard error if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.run([sys.executable, *arguments], env=tree_environment(tree), cwd=tree,
                             capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        raise RuntimeError(f"exit {process.returncode} on {tree}: {process.stderr.strip()[-2000:]}")
    return process.stdout, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def numeric_leaves(value):
    """``value`` (parsed JSON) with only its numbers and booleans: dict entries under a
    ``DROPPED`` key or without numbers go; other leaves of a list become ``None`` (the
    positions stay)."""
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        kept = {key: numeric_leaves(item) for key, item in value.items() if not DROPPED.search(key)}
        return {key: item for key, item in kept.items() if item not in (None, {}, [])}
    if isinstance(value, list):
        return [numeric_leaves(item) for item in value]
    return None


def digest(*parts: bytes | str) -> str:
    """SHA-256 (hex) of ``parts``, each length-prefixed so that no two part lists collide."""
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little") + data)
    return hasher.hexdigest()


def json_digest(value) -> str | None:
    """The digest of ``value``'s numeric leaves in canonical JSON (``repr`` of each float,
    exact), or None if it has none."""
    leaves = numeric_leaves(value)
    if leaves in (None, {}, []):
        return None
    return digest(json.dumps(leaves, sort_keys=True))


def array_digest(name: str, array: np.ndarray) -> str:
    """The digest of a named array: name, dtype, shape and raw bytes (C order; the values of
    an object array, e.g. variable-length strings, whose bytes would be pointers)."""
    array = np.asarray(array)
    data = repr(array.tolist()) if array.dtype.hasobject else np.ascontiguousarray(array).tobytes()
    return digest(name, str(array.dtype.descr), repr(array.shape), data)


def attribute_digest(name: str, attributes: h5py.AttributeManager) -> str | None:
    """The digest of the result-bearing attributes of one HDF5 object: numeric ones, and the
    numbers of those holding JSON text (provenance, counters, random state; timings dropped).
    Other text (versions, paths, digests, names) is left out; so is any ``DROPPED`` name."""
    parts = []
    for key in sorted(attributes):
        if DROPPED.search(key):
            continue
        value = attributes[key]
        if isinstance(value, bytes | str):
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            leaves = json_digest(parsed) if isinstance(parsed, dict | list) else None
            if leaves is not None:
                parts.append(f"{key}:{leaves}")
        elif np.asarray(value).dtype.kind in "biuf":
            parts.append(f"{key}:{array_digest(key, np.asarray(value))}")
    return digest(name, *parts) if parts else None


def hdf5_components(path: Path) -> dict[str, str]:
    """Digest per dataset (``file:name``) and per object's attribute set (``file:name@``) of
    the HDF5 file at ``path``, objects in name order."""
    components = {}
    with h5py.File(path, "r") as file:
        names = [""]
        file.visit(names.append)
        for name in sorted(names):
            node = file[name] if name else file
            if isinstance(node, h5py.Dataset):
                components[f"{path.name}:{name}"] = array_digest(name, node[()])
            attributes = attribute_digest(name, node.attrs)
            if attributes is not None:
                components[f"{path.name}:{name}@"] = attributes
    return components


def file_components(path: Path) -> dict[str, str]:
    """``hdf5_components`` of an HDF5 file, the digest of the bytes of any other file."""
    if h5py.is_hdf5(path):
        return hdf5_components(path)
    return {path.name: digest(path.read_bytes())}


def fingerprint_run(tree: Path, run: Run, directory: Path) -> dict:
    """Run ``run`` on ``tree`` in ``directory``: its component digests, their combined SHA-256,
    and wall and CPU seconds."""
    arguments = [argument.format(dir=directory) for argument in run.arguments]
    stdout, wall, cpu = run_child(tree, ["-c", run.code, *arguments])
    components = {"--json": json_digest(json.loads(stdout))}
    for output in run.outputs:
        components.update(file_components(directory / output))
    combined = digest(*(f"{name}={value}" for name, value in sorted(components.items())))
    return {"sha256": combined, "components": components, "wall_seconds": wall, "cpu_seconds": cpu}


def fingerprints(trees: dict[str, Path], runs: tuple[Run, ...] = RUNS) -> dict:
    """``fingerprint_run`` of every run of ``runs`` on every tree (each tree in its own
    scratch directory; the trees alternate run by run), by run name then tree label."""
    results = {run.name: {"command": ["efgkit" if run.code == LAUNCH else "python -c CODE", *run.arguments]}
               for run in runs}
    with tempfile.TemporaryDirectory(prefix="refactor-ab-") as scratch:
        directories = {label: Path(scratch, f"tree-{index}") for index, label in enumerate(trees)}
        for directory in directories.values():
            directory.mkdir()
        for run in runs:
            for label, tree in trees.items():
                try:
                    results[run.name][label] = fingerprint_run(tree, run, directories[label])
                except (RuntimeError, OSError, ValueError) as error:
                    results[run.name][label] = {"sha256": None, "error": str(error)}
                outcome = results[run.name][label]
                print(f"{run.name} on {label}: {(outcome['sha256'] or 'FAILED')[:16]} "
                      f"{outcome.get('wall_seconds', 0):.1f} s", file=sys.stderr, flush=True)
    return results


def fingerprints_equal(result: dict, labels: list[str]) -> bool:
    """Whether every tree ran the run and all got the same hash."""
    hashes = {result[label]["sha256"] for label in labels}
    return None not in hashes and len(hashes) == 1


def fingerprint_table(results: dict, labels: list[str]) -> str:
    header = "| run | " + " | ".join(f"{label} SHA-256" for label in labels) + " | equal? |"
    lines = [header, "|---|" + "---|" * len(labels) + "---|"]
    for name, result in results.items():
        cells = [(result[label]["sha256"] or "FAILED")[:16] for label in labels]
        equal = "yes" if fingerprints_equal(result, labels) else "**NO**"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {equal} |")
    return "\n".join(lines)


def differing_components(results: dict, labels: list[str]) -> list[str]:
    """Lines naming, for every run that differs, the components whose digests differ."""
    lines = []
    for name, result in results.items():
        if fingerprints_equal(result, labels):
            continue
        failed = [label for label in labels if result[label]["sha256"] is None]
        if failed:
            lines += [f"{name} failed on {label}: {result[label]['error']}" for label in failed]
            continue
        keys = sorted(set().union(*(result[label]["components"] for label in labels)))
        lines += [f"{name}: {key} differs" for key in keys
                  if len({result[label]["components"].get(key) for label in labels}) > 1]
    return lines


def speed_sample(tree: Path, case: SpeedCase) -> dict:
    """One child process of ``SPEED_CHILD`` on ``tree``: its window (units, CPU and wall
    seconds) and the whole process's wall and CPU seconds."""
    stdout, wall, cpu = run_child(tree, ["-c", SPEED_CHILD, case.name, str(case.seconds)])
    window = json.loads(stdout.strip().splitlines()[-1])
    metric = window["units"] / window["cpu"] if case.rate else window["cpu"] / window["units"]
    return {**window, "metric": metric, "process_wall": wall, "process_cpu": cpu}


def speed(trees: dict[str, Path], rounds: int) -> dict:
    """``rounds`` samples of every case per tree, the trees interleaved within each case and
    round (A, B, A, B, ...): by case name then tree label, the list of samples."""
    samples = {case.name: {label: [] for label in trees} for case in SPEED_CASES}
    for round_ in range(rounds):
        for case in SPEED_CASES:
            for label, tree in trees.items():
                sample = speed_sample(tree, case)
                samples[case.name][label].append(sample)
                print(f"speed round {round_ + 1}/{rounds} {case.name} on {label}: {sample['metric']:,.3f} "
                      f"({sample['process_cpu']:.1f} CPU s)", file=sys.stderr, flush=True)
    return samples


def speed_summary(case: SpeedCase, samples: list[dict]) -> dict:
    """Best and median of ``samples``' metric, median of their processes' CPU seconds."""
    metrics = [sample["metric"] for sample in samples]
    return {"best": max(metrics) if case.rate else min(metrics), "median": statistics.median(metrics),
            "process_cpu_median": statistics.median(sample["process_cpu"] for sample in samples)}


def speed_table(samples: dict, labels: list[str]) -> str:
    first = labels[0]
    header = ("| case | metric | " + " | ".join(f"{label}: best / median (process CPU s)" for label in labels)
              + " | " + " | ".join(f"{label}/{first} (median)" for label in labels[1:]) + " |")
    lines = [header, "|---|---|" + "---:|" * (2 * len(labels) - 1)]
    for case in SPEED_CASES:
        summaries = {label: speed_summary(case, samples[case.name][label]) for label in labels}
        metric = (f"{case.unit}/CPU s (higher is faster)" if case.rate
                  else f"CPU s/{case.unit} (lower is faster)")
        cells = [f"{s['best']:,.2f} / {s['median']:,.2f} ({s['process_cpu_median']:.1f})"
                 for s in summaries.values()]
        ratios = [f"{summaries[label]['median'] / summaries[first]['median']:.3f}" for label in labels[1:]]
        lines.append(f"| {case.name} | {metric} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(lines)


def tree_description(tree: Path) -> dict:
    """The commit checked out at ``tree`` and whether tracked files differ from it."""
    def git(*arguments: str) -> str:
        process = subprocess.run(["git", "-C", str(tree), *arguments], capture_output=True, text=True)
        return process.stdout.strip()
    return {"path": str(tree), "commit": git("rev-parse", "HEAD"),
            "modified": bool(git("status", "--porcelain", "--untracked-files=no"))}


def parse_trees(values: list[str]) -> dict[str, Path]:
    trees = {}
    for value in values:
        label, separator, path = value.partition("=")
        if not separator or not label or label in trees:
            raise SystemExit(f"--tree takes LABEL=PATH with distinct labels, got {value!r}")
        tree = Path(path).resolve()
        if not (tree / "efgkit" / "cli").is_dir():
            raise SystemExit(f"--tree {value}: {tree} is not an efgkit source tree (no efgkit/cli)")
        trees[label] = tree
    return trees


def json_safe(value):
    """``value`` with non-finite floats as strings (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    return value


def save(report: dict, path: Path | None) -> None:
    """Write ``report`` to ``path`` as strict JSON, if given; called after each part, so that a
    ``--speed`` child that fails (an API the refactor renamed) leaves the fingerprints."""
    if path is not None:
        path.write_text(json.dumps(json_safe(report), indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, metavar="LABEL=PATH",
                        help="a source tree to measure (twice or more; the first is A of the ratios)")
    parser.add_argument("--fingerprints", action="store_true", help="hash the results of the fixed-seed runs")
    parser.add_argument("--speed", action="store_true", help="interleaved timings of the hot loops")
    parser.add_argument("--rounds", type=int, default=3,
                        help="--speed: samples per case and tree (default 3)")
    parser.add_argument("--runs", metavar="LABELS", default=None,
                        help="--fingerprints: only these runs, by the label their name starts with, "
                             "comma-separated (e.g. d,e; include the runs whose files a chosen run reads)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every result here")
    args = parser.parse_args()
    trees = parse_trees(args.tree)
    runs = RUNS
    if args.runs is not None:
        chosen = set(args.runs.split(","))
        runs = tuple(run for run in RUNS if run.name.split()[0] in chosen)
        unknown = chosen - {run.name.split()[0] for run in runs}
        if unknown:
            parser.error(f"--runs: no run labelled {', '.join(sorted(unknown))}")
    if len(trees) < 2 or not (args.fingerprints or args.speed):
        parser.error("give two or more --tree and --fingerprints and/or --speed")
    labels = list(trees)
    start = time.perf_counter()
    report = {"trees": {label: tree_description(tree) for label, tree in trees.items()},
              "machine": f"{platform.machine()}, {os.cpu_count()} cores",
              "load_average_start": os.getloadavg()}
    differ = False
    if args.fingerprints:
        report["fingerprints"] = fingerprints(trees, runs)
        differ = not all(fingerprints_equal(result, labels) for result in report["fingerprints"].values())
        print(fingerprint_table(report["fingerprints"], labels))
        print("\n".join(differing_components(report["fingerprints"], labels)))
        save(report, args.json)
    if args.speed:
        report["speed"] = speed(trees, args.rounds)
        print(speed_table(report["speed"], labels))
    report["load_average_end"] = os.getloadavg()
    report["total_seconds"] = time.perf_counter() - start
    print(f"total {report['total_seconds'] / 60:.1f} min, load average {report['load_average_start'][0]:.1f} "
          f"at the start, {report['load_average_end'][0]:.1f} at the end")
    save(report, args.json)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
