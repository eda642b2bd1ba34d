"""`efgkit warm-up`: compile the numba kernels before the first real run.

A fresh install has an empty numba cache, so the first run of each command compiles its
kernels (about 5 CPU-s for a tree-engine solve, 20-30 for the poker engines' first solves).
Warming up runs each common command once on a small game, in child processes up to
``--jobs`` at a time (numba compiles in one thread; its cache on disk is shared), so later
runs of those commands, on any game, load the kernels from the cache. The README's set-up
command runs it; so can a cluster's workers before a long job.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import click

from efgkit.cli.app import emit, json_option, main, show_progress
from efgkit.errors import EfgkitError
from efgkit.io.progress import progress_bar

SMALL_HOLDEM = "holdem(ranks=3,rounds=2)"
WARM_UPS = {
    "holdem": [["solve", SMALL_HOLDEM, "--engine", "sampled", "--buckets", "canonical", "-n", "2", "--out",
                "{scratch}/holdem.h5"],
               ["evaluate", SMALL_HOLDEM, "{scratch}/holdem.h5"],
               ["evaluate", SMALL_HOLDEM, "{scratch}/holdem.h5", "--lbr", "5"]],
    "public-tree": [["solve", "leduc", "--engine", "public-tree", "-n", "2"]],
    "build": [["build", "kuhn", "--out", "{scratch}/build"]],
    "solve": [["solve", "leduc", "-n", "2"]],
}
"""The commands run one after another under each name, the names slowest first (so parallel
jobs finish together); ``{scratch}`` is a temporary folder. ``holdem`` is the streamed
engine on card buckets (sampled CFR on a bucket table, the exact best response in the full
game, local best response), ``public-tree`` the public-tree engine, ``build`` the README's
main job (refinement, card buckets, export), ``solve`` the tree engine's solve and
evaluation."""


@main.command("warm-up")
@click.option("--only", multiple=True, type=click.Choice(list(WARM_UPS)),
              help="Warm up only these commands (repeatable). Default: all.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Child processes at a time.  [default: the number of CPUs]")
@json_option
def warm_up(only: tuple[str, ...], jobs: int | None, as_json: bool) -> None:
    """Compile and cache the numba kernels of the common commands, so their first run is fast.

    Runs `solve` (tree engine), `build`, `solve --engine public-tree`, and a hold'em solve
    on card buckets (`--engine sampled`) with its exact and local best responses, once each
    on a small game in child processes; the kernels land in numba's cache (`__pycache__`,
    or NUMBA_CACHE_DIR), which every later run reads.
    """
    names = [name for name in WARM_UPS if not only or name in only]
    jobs = min(jobs or os.cpu_count() or 1, len(names))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="efgkit-warm-up-") as scratch:
        seconds = _run_all(names, jobs, scratch)
    total = time.perf_counter() - start
    emit(as_json, {"warmed": [{"name": name, "seconds": round(seconds[name], 3),
                               "commands": [" ".join(c).replace("{scratch}/", "") for c in WARM_UPS[name]]}
                              for name in names],
                   "jobs": jobs, "seconds": round(total, 3)},
         [f"warmed up {name}: {seconds[name]:.1f} s" for name in names]
         + [f"kernels compiled and cached in {total:.1f} s ({jobs} at a time)"])


def _run_all(names: list[str], jobs: int, scratch: str) -> dict[str, float]:
    """Run the warm-ups, ``jobs`` child processes at a time (each name's commands in order);
    the wall seconds of each name. A failing command is an error naming it and its last
    line of output; the others are then stopped."""
    waiting = list(names)
    running: dict[str, tuple[subprocess.Popen, int, float]] = {}  # name: child, command, start
    seconds: dict[str, float] = {}

    def start(name: str, step: int, began: float) -> None:
        command = [part.replace("{scratch}", scratch) for part in WARM_UPS[name][step]]
        with open(os.path.join(scratch, f"{name}.err"), "w") as errors:
            child = subprocess.Popen([sys.executable, "-m", "efgkit", *command, "--json"], cwd=scratch,
                                     stdout=subprocess.DEVNULL, stderr=errors)
        running[name] = (child, step, began)

    try:
        with progress_bar(total=len(names), unit="command", desc="compiling kernels",
                          enabled=show_progress()) as bar:
            while waiting or running:
                while waiting and len(running) < jobs:
                    start(waiting.pop(0), 0, time.perf_counter())
                name = _first_done(running)
                child, step, began = running.pop(name)
                if child.returncode != 0:
                    with open(os.path.join(scratch, f"{name}.err")) as errors:
                        lines = errors.read().strip().splitlines()
                    raise EfgkitError(f"warm-up of {name} ({' '.join(WARM_UPS[name][step][:2])}) failed: "
                                      f"{lines[-1] if lines else f'exit code {child.returncode}'}")
                if step + 1 < len(WARM_UPS[name]):
                    start(name, step + 1, began)
                    continue
                seconds[name] = time.perf_counter() - began
                bar.update(1)
    finally:
        for child, _, _ in running.values():
            child.kill()
            child.wait()
    return seconds


def _first_done(running: dict[str, tuple[subprocess.Popen, int, float]]) -> str:
    while True:
        for name, (child, _, _) in running.items():
            if child.poll() is not None:
                return name
        time.sleep(0.05)
