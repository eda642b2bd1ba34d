"""The storage benchmark runs end to end in its quick mode (it measures; this only checks it works)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_storage_benchmark_quick_mode_prints_every_table():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_storage.py"), "--quick"],
                            capture_output=True, text=True, timeout=600, check=True)
    for title in ("Opening a file and reading one infoset", "Reader speed", "Compact file sizes",
                  "NashConv before and after quantization", "Checkpoints",
                  "A CFR+ iteration with every array on disk", "peak RSS against the files"):
        assert title in result.stdout, title
