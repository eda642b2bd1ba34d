"""The benchmark scripts run end to end in their quick mode (they measure; this only checks they work)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_foundation_benchmark_quick_mode_prints_its_table():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_foundation.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True,
    )
    assert "CFR+ on Leduc, full iterations/s" in result.stdout
    assert "Exact NashConv of a Leduc strategy" in result.stdout
    assert "bytes/node | 31 |" in result.stdout


def test_refinement_reproduction_quick_mode_runs_both_algorithms():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_ira.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True,
    )
    assert "B10H90 seed 0" in result.stdout and "FPIRA seed 0" in result.stdout


def test_poker_engine_benchmark_quick_mode_prints_its_tables():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_poker_engine.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True, cwd=ROOT / "benchmarks",
    )
    assert "| efgkit public-tree engine |" in result.stdout
    assert "| leduc | 465 x 6 |" in result.stdout


def test_solver_frontier_benchmark_quick_mode_runs_every_variant():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_solvers.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True,
    )
    for variant in ("cfr+", "lcfr", "dcfr+", "pcfr+", "pdcfr+", "hs-dcfr(30)", "hs-pcfr+(15)", "sapcfr+",
                    "vad-cfr"):
        assert f"| Leduc | {variant} |" in result.stdout


def test_fuzzing_quick_mode_handles_every_damaged_input():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fuzz_inputs.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True,
    )
    assert "unhandled" not in result.stdout
    assert "| strategy file (evaluate) | 5 | 5 |" in result.stdout


def test_startup_benchmark_quick_mode_prints_its_table():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_startup.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True, cwd=ROOT / "benchmarks",
    )
    assert "| efgkit games |" in result.stdout
    assert "| efgkit solve kuhn -n 10 (empty cache) |" in result.stdout
    assert "| kernels compiled by `efgkit solve kuhn -n 10` |" in result.stdout


def test_full_game_benchmark_quick_mode_cross_checks_the_streamed_walk():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_full_game.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True, cwd=ROOT / "benchmarks",
    )
    assert "| holdem(ranks=5,rounds=3) (10-20-20 random buckets) | 95 | 190 |" in result.stdout
    check = next(line for line in result.stdout.splitlines()
                 if line.startswith("| holdem(ranks=3,rounds=3,caps=1-1-1) |"))
    assert float(check.rstrip(" |").split("|")[-1]) <= 1e-9  # streamed = materialised best response


def test_solver_frontier_time_to_target_and_table(tmp_path, monkeypatch):
    """The time-to-target run stops at the first checkpoint at or below the target (both
    engines alike); the frontier table says which baseline beats VAD-CFR at 1,000."""
    import json

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench_solvers

    for engine in ("tree", "public-tree"):
        run = bench_solvers.time_to_target("kuhn", "vad-cfr", engine, 1e-3, 100, 1000)
        assert run["reached"] and run["iterations"] == 600 and run["cpu"] > 0  # averages from 501 on
    curves = tmp_path / "curves.jsonl"
    records = [{"game": "Kuhn", "method": "vad-cfr", "curve": [[1000, 1.0, 2e-5, 0.0]], "at": {}},
               {"game": "Kuhn", "method": "cfr+", "curve": [[1000, 1.0, 1e-6, 0.0]], "at": {}},
               {"game": "Kuhn", "method": "dcfr", "curve": [[1000, 1.0, 3e-5, 0.0]], "at": {}}]
    curves.write_text("".join(json.dumps(record) + "\n" for record in records))
    table = bench_solvers.frontier_section(curves)
    assert "| Kuhn | 1.00e-06 | 3.00e-05 | — | — | — | — | 2.00e-05 | cfr+ 1.00e-06 | DDCFR 4.02e-05 | " \
           "no: cfr+ 1e-06 |" in table


def test_resolve_cost_extrapolates_the_sample_by_boards(tmp_path, monkeypatch):
    """The re-solving cost estimate times each technique on the sampled flops (a reach technique
    with its gift pass) and scales the sample's CPU per board to every flop's boards."""
    import json

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import bench_resolve_cost

    game = "holdem(ranks=5,rounds=3,caps=1-1-1)"
    out = tmp_path / "cost.json"
    results = bench_resolve_cost.run(game, (5, 10, 10), 3, 2, 2, game, ["Unsafe", "Reach-Maxmargin"], out)
    assert json.loads(out.read_text()) == results
    assert list(results["rows"]) == ["Blueprint evaluation", "Unsafe", "Reach-Maxmargin"]
    assert results["flops"] == 95 and len(results["sample"]) == 2
    for row in results["rows"].values():
        per_board = sum(row["seconds"]) / sum(results["boards_per_flop_sample"])
        assert row["cpu_hours"] * 3600 == pytest.approx(per_board * results["boards_all_flops"])
        assert all(s > 0 for s in row["seconds"])
    assert "| Reach-Maxmargin | " in bench_resolve_cost.markdown(results)
