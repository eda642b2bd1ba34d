"""The peer benchmark (efgkit's sampled CFR+ beside OpenSpiel's ES-MCCFR) runs end to end in its
quick mode on Leduc (it measures; this only checks that it works)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

ROOT = Path(__file__).resolve().parent.parent


def test_peer_benchmark_quick_mode_prints_both_curves_and_a_ratio():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_peer_mccfr.py"), "--quick"],
                            capture_output=True, text=True, timeout=600, check=True, cwd=ROOT / "benchmarks")
    assert "| efgkit sampled CFR+ |" in result.stdout and "| OpenSpiel ES-MCCFR |" in result.stdout
    assert re.search(r"\| [0-9.e+-]+ chips \| [0-9.e+-]+ \| [0-9.e+-]+ \| \d+x \|", result.stdout)
    assert "LiteEFG: LiteEFG CFR, 100 iterations" in result.stdout
