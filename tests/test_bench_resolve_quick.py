"""The re-solving reproductions run end to end in their quick mode (they measure; this checks they work)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_resolve_benchmark_quick_mode_runs_every_part_and_writes_its_report():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_resolve.py"), "--quick"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert "coin toss maxmargin (lp): P2" in result.stdout
    assert "burch cfr resolve, BR constraints" in result.stdout
    assert "burch cfr distributional (Hedge), self-play" in result.stdout
    assert "Estimated + Distributional (threshold)" in result.stdout
    assert "continual kuhn" in result.stdout and "speed: 30 subgames" in result.stdout
    report = Path(result.stdout.strip().splitlines()[-1].removeprefix("report written to "))
    text = report.read_text()
    assert "## Coin Toss" in text and "## Continual re-solving on kuhn" in text
    assert (report.parent / "img" / "resolve-burch-cfr.png").read_bytes()[:4] == b"\x89PNG"
    assert "<!-- resolve:start -->" in (report.parent / "benchmarks.md").read_text()


def test_gifts_benchmark_gametree_study_runs_on_leduc(tmp_path):
    """bench_resolve_gifts.py on Leduc, 5 and 10 gadget iterations: every technique x bound x split
    row and the gift sizes, written to --out; Maxmargin has no gifts to split."""
    import json

    out = tmp_path / "gifts.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_resolve_gifts.py"), "--study",
                    "gametree", "--game", "leduc", "--checkpoints", "5,10", "--out", str(out)],
                   capture_output=True, text=True, timeout=300, check=True, cwd=ROOT / "benchmarks")
    rows = json.loads(out.read_text())
    runs = [r for r in rows if "gadget" in r]
    assert len(runs) == 9 and all(set(r["after"]) == {"5", "10"} for r in runs)
    assert sum("gift_over_margin_median" in r for r in rows) == 8


def test_holdem_table_benchmark_on_a_tiny_deck_reports_every_row_and_the_abstract_game(tmp_path):
    """bench_resolve_holdem.py --engine streamed on holdem(ranks=3,rounds=2,caps=1-1): every
    technique's row, both gift bounds, and the blueprint's exploitability in its own abstract game
    (imperfect-recall buckets: a lower bound, flagged so) beside the full game's, never above it
    (the abstract responder's strategy is one the full game's best response can play); the
    convergence mode's checkpoint at the same iterations gives the blueprint row's two numbers."""
    import json

    bench, out = str(ROOT / "benchmarks" / "bench_resolve_holdem.py"), tmp_path / "table.json"
    subprocess.run([sys.executable, bench, "--game",
                    "holdem(ranks=3,rounds=2,caps=1-1)", "--engine", "streamed", "--buckets", "5",
                    "--blueprint-iterations", "200", "--iterations", "3", "--gift-bound", "cbv",
                    "--gift-bound", "min-payoff", "--out", str(out)],
                   capture_output=True, text=True, timeout=300, check=True, cwd=ROOT / "benchmarks")
    results = json.loads(out.read_text())
    rows = results["columns"]["5"]["rows"]
    assert len(rows) == 1 + 9 + 4
    blueprint = rows["Blueprint"]
    assert blueprint["abstract_exact"] is False and 0 < blueprint["abstract_mbb"] <= blueprint["mbb"] + 1e-9
    table = subprocess.run([sys.executable, bench, "--markdown", str(out)], capture_output=True, text=True,
                           timeout=120, check=True, cwd=ROOT / "benchmarks").stdout
    assert f"| Blueprint in its abstract game | {blueprint['abstract_mbb']:.2f} (lower bound) |" in table
    curve = tmp_path / "curve.json"
    subprocess.run([sys.executable, bench, "--game", "holdem(ranks=3,rounds=2,caps=1-1)", "--buckets", "5",
                    "--blueprint-checkpoints", "100,200", "--out", str(curve)],
                   capture_output=True, text=True, timeout=300, check=True, cwd=ROOT / "benchmarks")
    last = json.loads(curve.read_text())["columns"]["5"][-1]
    assert last["iterations"] == 200
    assert (last["full_mbb"], last["abstract_mbb"]) == (blueprint["mbb"], blueprint["abstract_mbb"])
