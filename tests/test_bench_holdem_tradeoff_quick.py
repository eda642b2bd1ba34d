"""The hold'em memory-vs-exploitability study runs end to end in its quick mode and writes its
section and plots (it measures; this only checks that it works and that its numbers are sane)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_holdem_tradeoff_quick_mode_writes_its_section_and_plots(tmp_path):
    docs = tmp_path / "results.md"
    docs.write_text("# Results\n\nProse stays.\n")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_holdem_tradeoff.py"), "--quick",
               "--out", str(docs)]
    subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    text = docs.read_text()
    assert text.startswith("# Results\n\nProse stays.\n")
    assert text.count("<!-- holdem-tradeoff:start -->") == 1
    families = r"E\[HS\]|E\[HS\^2\]|EMD, E\[HS\] river|EMD, OCHS river|perfect recall EMD, OCHS"
    rows = re.findall(rf"^\| ({families}) \| ([\d-]+) \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \| "
                      r"([\d.]+) - ([\d.]+) \| (?:yes)? \| ([\d.]+) \| ([\d.]+) \| [\d.]+ \| "
                      r"(>= )?([\d.]+) \|", text, re.MULTILINE)
    assert len(rows) == 5 and "| lossless (suit isomorphism) | 25-7760 | " in text
    for row in rows:
        mean, lowest, highest, lbr, seed_0 = map(float, row[4:9])
        bound, abstract = row[9], float(row[10])
        assert (bound == "") == row[0].startswith("perfect")  # exact with perfect recall only
        assert 0 < abstract <= seed_0 + 0.1  # the abstract game's responder sees less than the full game's
        assert 0 < mean < 750  # below always-fold; the abstraction is not lossless
        assert lowest <= mean <= highest and lowest <= seed_0 <= highest
        # LBR over every board of the two-round game is the exact value of a legitimate
        # strategy: at most the best response's (both printed to 0.1 mbb/g).
        assert 0 < lbr <= seed_0 + 0.1
    recall = next(row for row in rows if row[0].startswith("perfect"))
    assert recall[1] == "25-50"  # 25 preflop classes x 2 flop buckets
    curve = re.search(r"^\| EMD, OCHS river 25-8 \| ([\d.]+) \| [\d.]+ \| [\d.]+ \| ([\d.]+) \|", text,
                      re.MULTILINE)
    assert float(curve.group(2)) < float(curve.group(1))  # 60 iterations beat 2
    assert (tmp_path / "holdem-tradeoff-quick-pareto.png").stat().st_size > 10_000
    assert (tmp_path / "holdem-tradeoff-quick-convergence.png").stat().st_size > 10_000
