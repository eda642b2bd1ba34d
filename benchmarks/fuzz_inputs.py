"""Bounded fuzzing of efgkit's file inputs: damaged strategy files, .efgs files, .efg and ACPC
game files, each fed to the command that reads it; and edited metadata of strategy and
bucket-strategy files, re-sealed (the manifest digest recomputed, as someone editing the file
on purpose would), so that the reader's type checks are reached, not only its checksums.

A case is handled when the command either succeeds or prints exactly one line
``efgkit: error: ...`` with exit code 2 (never a traceback, never another exit code), and
the damaged input is unchanged afterwards. Writes the counts to docs/reliability.md's
"fuzzing" section, or with ``--quick`` runs a few cases and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from pathlib import Path

import h5py
import numpy as np
from click.testing import CliRunner
from markdown_sections import update_section

from efgkit.cli import main
from efgkit.io.checked_hdf5 import manifest_digest

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reliability.md"


def _damage_bytes(source: Path, target: Path, rng: random.Random) -> str:
    """A copy of ``source`` at ``target`` with bytes flipped, overwritten, truncated or spliced,
    as a bad disk or an adversary might; returns what was done."""
    data = bytearray(source.read_bytes())
    kind = rng.choice(("flip", "overwrite", "truncate", "splice"))
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "overwrite":
        start = rng.randrange(len(data))
        data[start:start + rng.randint(1, 64)] = bytes(rng.randrange(256) for _ in range(64))
    elif kind == "truncate":
        del data[rng.randrange(len(data)):]
    else:
        start = rng.randrange(len(data))
        data[start:start] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    target.write_bytes(bytes(data))
    return kind


OTHER_VALUES = (None, True, 0, -1, 2**63, 1.5, float("nan"), "", "x", "many", "/etc/passwd", [], [1, 2],
                {}, {"kind": "bucket-file"}, {"kind": "bucket-file", "path": 7}, {"kind": "perfect-recall"},
                {"kind": "card-abstraction-file", "path": "abs.h5"}, {"iteration": "x"})
"""What an edited metadata field becomes: every JSON type, and values that mean something to
some reader (abstraction kinds, a path, a history entry)."""


def _edit_json(value, rng: random.Random):
    """``value`` (parsed JSON) with one field, at any depth, replaced, removed or added."""
    if isinstance(value, dict) and value and rng.random() < 0.75:
        key = rng.choice(sorted(value))
        edited = dict(value)
        if rng.random() < 0.2:
            del edited[key]
        else:
            edited[key] = _edit_json(value[key], rng)
        return edited
    if isinstance(value, list) and value and rng.random() < 0.75:
        index = rng.randrange(len(value))
        return value[:index] + [_edit_json(value[index], rng)] + value[index + 1:]
    return rng.choice(OTHER_VALUES)


def _edit_attribute(value, rng: random.Random):
    """An HDF5 attribute's new value: a JSON text edited inside, or another type altogether."""
    if isinstance(value, bytes | str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict | list) and rng.random() < 0.8:
            return json.dumps(_edit_json(parsed, rng))
    other = rng.choice(OTHER_VALUES)
    if isinstance(other, list):
        return np.asarray(other, np.int64)
    return json.dumps(other) if other is None or isinstance(other, dict) else other  # as HDF5 holds them


def _edit_metadata(source: Path, target: Path, rng: random.Random) -> str:
    """A copy of ``source`` at ``target`` with one attribute (anywhere but the seals) edited and
    the manifest recomputed; returns the attribute and its new value."""
    shutil.copy(source, target)
    with h5py.File(target, "r+") as handle:
        places = [(handle, key) for key in handle.attrs if key != "content_sha256"]
        handle.visititems(lambda _, item: places.extend((item, key) for key in item.attrs if key != "sha256"))
        item, key = rng.choice(places)
        item.attrs[key] = _edit_attribute(item.attrs[key], rng)
        handle.attrs["content_sha256"] = manifest_digest(handle)
        return f"{item.name}@{key} = {item.attrs[key]!r}"[:160]


def _make_inputs(folder: Path, runner: CliRunner) -> dict[str, tuple[Path, list[str], object]]:
    """Valid inputs, the command reading each ({file} stands for the damaged copy) and how
    a copy is damaged: its bytes (``_damage_bytes``) or a metadata field (``_edit_metadata``)."""
    strategy, compact, efg, acpc = (folder / "kuhn.h5", folder / "kuhn.efgs", folder / "kuhn.efg",
                                    folder / "leduc.game")
    holdem, buckets, state = "holdem(ranks=3,rounds=2)", folder / "holdem.h5", folder / "state.h5"
    refinement = folder / "refinement.h5"
    sampled = ["solve", holdem, "--engine", "sampled", "--buckets", "canonical"]
    for command in (["solve", "kuhn", "-n", "50", "--out", str(strategy)],
                    [*sampled, "-n", "20", "--out", str(buckets)],
                    [*sampled, "-n", "20", "--every", "10", "--state", str(state)],
                    ["refine", "leduc", "--max-iterations", "20", "-k", "10", "--state", str(refinement)],
                    ["export", str(strategy), "-o", str(compact)],
                    ["convert", "kuhn", str(efg)], ["convert", "leduc", str(acpc)]):
        result = runner.invoke(main, command)
        assert result.exit_code == 0, result.output
    evaluate, export = ["evaluate", "kuhn", "{file}"], ["export", "{file}", "-o", str(folder / "out.efgs")]
    streamed, resume = ["evaluate", holdem, "{file}"], [*sampled, "-n", "30", "--state", "{file}", "--resume"]
    refine = ["refine", "leduc", "--max-iterations", "30", "-k", "10", "--state", "{file}", "--resume"]
    return {
        "strategy file (evaluate)": (strategy, evaluate, _damage_bytes),
        "strategy file (export)": (strategy, export, _damage_bytes),
        "bucket strategy file (evaluate, streamed)": (buckets, streamed, _damage_bytes),
        ".efgs file (play)": (compact, ["play", "kuhn", "{file}", "--against", "random",
                                        "--hands", "20"], _damage_bytes),
        ".efg game (info)": (efg, ["info", "efg:{file}"], _damage_bytes),
        "ACPC game definition (info)": (acpc, ["info", "acpc:{file}"], _damage_bytes),
        "strategy file metadata (evaluate)": (strategy, evaluate, _edit_metadata),
        "strategy file metadata (export)": (strategy, export, _edit_metadata),
        "bucket strategy file metadata (evaluate, streamed)": (state, streamed, _edit_metadata),
        "bucket strategy file metadata (export)": (state, export, _edit_metadata),
        "bucket strategy checkpoint metadata (solve --resume)": (state, resume, _edit_metadata),
        "refinement state metadata (refine --resume)": (refinement, refine, _edit_metadata),
    }


def fuzz(cases_per_input: int, seed: int = 0, only: str = "",
         shown: int = 3) -> dict[str, tuple[int, int, list[str]]]:
    """Per input kind (those whose name contains ``only``): (tried, handled, the first
    ``shown`` unhandled outputs)."""
    rng = random.Random(seed)
    runner = CliRunner()
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name, (path, command, damage) in _make_inputs(folder, runner).items():
            if only not in name:
                continue
            resumes = "--resume" in command  # a resumed solve rewrites its state file
            handled, failures = 0, []
            for case in range(cases_per_input):
                damaged = folder / f"case{case}{path.suffix}"
                done = damage(path, damaged, rng)
                before = damaged.read_bytes()
                result = runner.invoke(main, [part.replace("{file}", str(damaged)) for part in command])
                lines = result.stderr.strip().splitlines()
                one_line = (result.exit_code == 2 and len(lines) == 1
                            and lines[0].startswith("efgkit: error: "))
                unchanged = damaged.read_bytes() == before
                if (result.exit_code == 0 and (unchanged or resumes)) or (one_line and unchanged):
                    handled += 1
                elif len(failures) < shown:
                    what = repr(result.exception) if result.exit_code == 1 else result.stderr.strip()
                    failures.append(f"exit {result.exit_code} after {done}: {what[:300]}")
                damaged.unlink()
            results[name] = (cases_per_input, handled, failures)
    return results


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 cases per input; writes nothing")
    parser.add_argument("--cases", type=int, default=200, help="damaged copies per input kind")
    parser.add_argument("--only", default="", help="the input kinds whose name contains this; writes nothing")
    parser.add_argument("--shown", type=int, default=3, help="unhandled cases printed per input kind")
    args = parser.parse_args()
    results = fuzz(5 if args.quick else args.cases, only=args.only, shown=args.shown)
    lines = ["| input (command) | tried | handled |", "|---|---:|---:|"]
    for name, (tried, handled, _) in results.items():
        lines.append(f"| {name} | {tried} | {handled} |")
    table = "\n".join(lines)
    print(table)
    for name, (_, _, failures) in results.items():
        for failure in failures:
            print(f"unhandled ({name}): {failure}")
    if not (args.quick or args.only):
        update_section(DOCS, "fuzzing", "## Bounded fuzzing (`python benchmarks/fuzz_inputs.py`)\n\n"
                       "Each damaged copy (bits flipped, bytes overwritten, truncated or spliced; or, for "
                       "the *metadata* rows, one attribute or JSON field given another value or type and "
                       "the file re-sealed) is fed to the command that reads it; handled = success, or one "
                       "line `efgkit: error: ...` with exit code 2, and the input unchanged (a resumed "
                       "solve rewrites its state).\n\n" + table + "\n")


if __name__ == "__main__":
    main_()
