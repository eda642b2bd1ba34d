"""The hold'em benchmark runs end to end in its quick mode and updates only its own section of the
docs file (it measures; this only checks that it works)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_holdem_benchmark_quick_mode_writes_its_section_only(tmp_path):
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\nOther results stay as they are.\n")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_holdem.py"), "--quick", "--out", str(docs)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    assert "7-card enumeration, all 8,347,680 hands (36-card deck)" in result.stdout
    assert "eval7 orders the random hands exactly as efgkit does: yes" in result.stdout
    first = docs.read_text()
    assert first.startswith("# Benchmarks\n\nOther results stay as they are.\n")
    assert first.count("<!-- holdem-evaluator:start -->") == 1 and "eval7.evaluate from Python" in first
    docs.write_text(first + "\nA later section.\n")
    spec = importlib.util.spec_from_file_location("markdown_sections",
                                                  ROOT / "benchmarks" / "markdown_sections.py")
    sections = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sections)
    sections.update_section(docs, "holdem-evaluator", "new numbers")
    assert docs.read_text() == ("# Benchmarks\n\nOther results stay as they are.\n\n"
                                "<!-- holdem-evaluator:start -->\nnew numbers\n<!-- holdem-evaluator:end -->"
                                "\n\nA later section.\n")
