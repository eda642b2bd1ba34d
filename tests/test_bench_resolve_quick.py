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
