"""`efgkit warm-up` leaves every kernel a later command needs in numba's cache."""

import json
import os
import subprocess
import sys
from pathlib import Path

from efgkit.cli import main


def _efgkit(arguments, cache_dir, cwd):
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-m", "efgkit", *arguments], env=environment, cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def _cached(cache_dir: Path) -> set[str]:
    return {p.name for p in cache_dir.rglob("*") if p.suffix in (".nbi", ".nbc")}


def test_a_solve_after_warm_up_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    warmed = _efgkit(["warm-up", "--only", "solve", "--json"], cache, tmp_path)
    assert warmed.returncode == 0, warmed.stderr
    report = json.loads(warmed.stdout)
    assert [w["name"] for w in report["warmed"]] == ["solve"] and report["jobs"] == 1
    files = _cached(cache)
    assert any(name.endswith(".nbc") for name in files)
    solved = _efgkit(["solve", "leduc(ranks=4)", "-n", "20", "--json"], cache, tmp_path)
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["nash_conv"] > 0
    assert _cached(cache) == files  # another game, more iterations: every kernel was cached


def test_a_failing_warm_up_is_one_line_naming_it(runner, monkeypatch):
    from efgkit.cli import warm_up

    monkeypatch.setitem(warm_up.WARM_UPS, "solve", [["solve", "no_such_game"]])
    result = runner.invoke(main, ["warm-up", "--only", "solve"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("efgkit: error: warm-up of solve (solve no_such_game) failed: "
                               "efgkit: error: unknown game 'no_such_game'")
