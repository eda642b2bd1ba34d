"""`efgkit build "holdem(...)"`: the hold'em main job in one command (a small version of the
run in benchmarks/bench_holdem_build.py)."""

from __future__ import annotations

import pytest

from efgkit.cli import main
from efgkit.jobs.holdem_build import default_buckets, is_holdem
from efgkit.specs import make_game

HOLDEM5 = "holdem(ranks=5)"


def test_default_buckets_keep_the_preflop_classes_and_scale_with_the_deck():
    assert default_buckets(13) == (169, 1000, 1000, 1000)
    small = default_buckets(5)
    assert small[0] == 25 and small[1] < small[2] < small[3] < 1000
    assert is_holdem(make_game(HOLDEM5)) and is_holdem(make_game("holdem"))
    assert not is_holdem(make_game("leduc")) and not is_holdem(make_game("holdem(ranks=5,rounds=3)"))


def test_build_holdem_runs_the_whole_job_into_one_folder(runner, json_output, tmp_path):
    folder = tmp_path / "b"
    data = json_output(runner.invoke(main, ["build", HOLDEM5, "--out", str(folder), "--time", "1",
                                            "--eval-time", "0.01", "--buckets", "25,3,3,3", "--boards", "20",
                                            "--json"]))
    assert data["buckets"] == [25, 3, 3, 3] and data["iterations"] >= 2
    evaluation = data["evaluation"]
    # an exact best response of holdem(ranks=5) costs about a minute: over 0.01 s, so LBR
    assert evaluation["kind"] == "lbr" and evaluation["estimated_exact_seconds"] > 0.01
    low, high = evaluation["lbr_ci95_mbb"]
    assert low <= evaluation["lbr_mbb_per_game"] <= high and evaluation["lbr_boards"] == 2
    assert set(data["matches"]) == {"call", "raise"}
    assert all(m["boards"] == 20 for m in data["matches"].values())
    assert {"buckets.h5", "strategy.h5", "strategy.efgs", "report.md"} <= set(data["files"])
    report = (folder / "report.md").read_text()
    assert report.startswith(f"# {HOLDEM5}") and "**Verdict.**" in report and "local best response" in report
    assert "--buckets 25,3,3,3 --boards 20" in report
    assert data["export"]["bytes"] == (folder / "strategy.efgs").stat().st_size
    # the strategy file is an ordinary bucket strategy: the streamed evaluator and export read it
    play = runner.invoke(main, ["evaluate", HOLDEM5, str(folder / "strategy.h5"), "--lbr", "2", "--json"])
    assert play.exit_code == 0, play.output


@pytest.mark.parametrize(("arguments", "message"), [
    (["leduc", "--time", "5"], "--time does not apply to leduc (a tree build)"),
    ([HOLDEM5, "--target", "0.1"], "--target does not apply to a hold'em build"),
    ([HOLDEM5, "--time", "0"], "--time and --eval-time must be > 0"),
    ([HOLDEM5, "--buckets", "1,2"], "--buckets '1,2': give four positive integers"),
])
def test_build_refuses_options_of_the_other_kind_of_build(runner, tmp_path, arguments, message):
    result = runner.invoke(main, ["build", *arguments, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "x").exists()
