"""The export benchmark runs end to end in its quick mode (it measures; this checks it works)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_export_benchmark_quick_mode_prints_its_tables():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_export.py"), "--quick"],
                            capture_output=True, text=True, timeout=300, check=True)
    assert "Export bytes beside the abstract solver state" in result.stdout
    assert "NashConv added by quantization" in result.stdout
    assert "| leduc, hist buckets 3,3 | 100 |" in result.stdout
    assert "Card abstractions: the bucket tables in the file" in result.stdout
    assert "| leduc | hist 3,3 (imperfect) | 936 | 108 | 100 |" in result.stdout
    assert "Hold'em bucket strategies: bytes and lookup time" in result.stdout
    assert "| holdem | pipeline 169-1000-1000-1000 (computed) | 6,371,352 | 6,378 |" in result.stdout
