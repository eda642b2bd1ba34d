"""Bounded fuzzing of efgkit's file inputs: damaged strategy files, .efgs files, .efg and ACPC
game files, each fed to the command that reads it.

A case is handled when the command either succeeds or prints exactly one line
``efgkit: error: ...`` with exit code 2 (never a traceback, never another exit code), and
the damaged input is unchanged afterwards. Writes the counts to docs/reliability.md's
"fuzzing" section, or with ``--quick`` runs a few cases and writes nothing.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from click.testing import CliRunner
from markdown_sections import update_section

from efgkit.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reliability.md"


def _damage(data: bytes, rng: random.Random) -> bytes:
    """Flip, overwrite, truncate or splice bytes, as a bad disk or an adversary might."""
    data = bytearray(data)
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
    return bytes(data)


def _make_inputs(folder: Path, runner: CliRunner) -> dict[str, tuple[Path, list[str]]]:
    """Valid inputs and the command reading each ({file} stands for the damaged copy)."""
    strategy, compact, efg, acpc = (folder / "kuhn.h5", folder / "kuhn.efgs", folder / "kuhn.efg",
                                    folder / "leduc.game")
    holdem, buckets = "holdem(ranks=3,rounds=2)", folder / "holdem.h5"
    for command in (["solve", "kuhn", "-n", "50", "--out", str(strategy)],
                    ["solve", holdem, "--engine", "sampled", "--buckets", "canonical", "-n", "20", "--out",
                     str(buckets)],
                    ["export", str(strategy), "-o", str(compact)],
                    ["convert", "kuhn", str(efg)], ["convert", "leduc", str(acpc)]):
        result = runner.invoke(main, command)
        assert result.exit_code == 0, result.output
    return {
        "strategy file (evaluate)": (strategy, ["evaluate", "kuhn", "{file}"]),
        "strategy file (export)": (strategy, ["export", "{file}", "-o", str(folder / "out.efgs")]),
        "bucket strategy file (evaluate, streamed)": (buckets, ["evaluate", holdem, "{file}"]),
        ".efgs file (play)": (compact, ["play", "{file}", "--game", "kuhn", "--against", "random",
                                        "--hands", "20"]),
        ".efg game (info)": (efg, ["info", "efg:{file}"]),
        "ACPC game definition (info)": (acpc, ["info", "acpc:{file}"]),
    }


def fuzz(cases_per_input: int, seed: int = 0) -> dict[str, tuple[int, int, list[str]]]:
    """Per input kind: (tried, handled, first few unhandled outputs)."""
    rng = random.Random(seed)
    runner = CliRunner()
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name, (path, command) in _make_inputs(folder, runner).items():
            original = path.read_bytes()
            handled, failures = 0, []
            for case in range(cases_per_input):
                damaged = folder / f"case{case}{path.suffix}"
                damaged.write_bytes(_damage(original, rng))
                before = damaged.read_bytes()
                result = runner.invoke(main, [part.replace("{file}", str(damaged)) for part in command])
                lines = result.stderr.strip().splitlines()
                one_line = (result.exit_code == 2 and len(lines) == 1
                            and lines[0].startswith("efgkit: error: "))
                if (result.exit_code == 0 or one_line) and damaged.read_bytes() == before:
                    handled += 1
                elif len(failures) < 3:
                    failures.append(f"exit {result.exit_code}: {result.stderr.strip()[:200]}")
                damaged.unlink()
            results[name] = (cases_per_input, handled, failures)
    return results


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 cases per input; writes nothing")
    parser.add_argument("--cases", type=int, default=200, help="damaged copies per input kind")
    args = parser.parse_args()
    results = fuzz(5 if args.quick else args.cases)
    lines = ["| input (command) | tried | handled |", "|---|---:|---:|"]
    for name, (tried, handled, _) in results.items():
        lines.append(f"| {name} | {tried} | {handled} |")
    table = "\n".join(lines)
    print(table)
    for name, (_, _, failures) in results.items():
        for failure in failures:
            print(f"unhandled ({name}): {failure}")
    if not args.quick:
        update_section(DOCS, "fuzzing", "## Bounded fuzzing (`python benchmarks/fuzz_inputs.py`)\n\n"
                       "Each damaged copy (bits flipped, bytes overwritten, truncated or spliced) is fed "
                       "to the command that reads it; handled = success, or one line `efgkit: error: ...` "
                       "with exit code 2, and the input unchanged.\n\n" + table + "\n")


if __name__ == "__main__":
    main_()
