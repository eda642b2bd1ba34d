"""The card abstraction study runs end to end in its quick mode (it measures; this only checks it works)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_card_study_quick_mode_runs_every_part():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_cards.py"), "--quick"],
        capture_output=True, text=True, timeout=600, check=True,
    )
    assert "leduc: full game NashConv" in result.stdout
    assert "leduc from ehs [3, 3] seed 0" in result.stdout
    assert "greedy EMD vs exact" in result.stdout
