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
                                            "--sizes", "2", "--json"]))
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
    # --sizes: one more bucket count, fewer rows and words, in the report's Pareto plot and table
    [point] = data["sizes"]
    assert point["buckets"] == [25, 2, 2, 2] and point["rows"] < data["rows"]
    assert point["memory_words"] == point["solver_bytes"] // 4 < data["solver_bytes"] // 4
    assert point["evaluation"]["kind"] == "lbr" and (folder / "tradeoff.png").stat().st_size > 0
    assert "## Memory against exploitability across bucket counts" in report and "| 25-2-2-2 |" in report
    assert "--sizes 2" in report
    # the strategy file is an ordinary bucket strategy: the streamed evaluator and export read it
    play = runner.invoke(main, ["evaluate", HOLDEM5, str(folder / "strategy.h5"), "--lbr", "2", "--json"])
    assert play.exit_code == 0, play.output


@pytest.mark.parametrize(("arguments", "message"), [
    (["leduc", "--time", "5"], "--time does not apply to leduc (a tree build)"),
    ([HOLDEM5, "--algorithm", "fpira"], "--algorithm does not apply to a hold'em build"),
    ([HOLDEM5, "--target", "0"], "--target 0: an exploitability in mbb/g > 0"),
    ([HOLDEM5, "--target", "50", "--eval-time", "0.01"], "raise --eval-time to"),
    ([HOLDEM5, "--sizes", "3,x"], "--sizes '3,x': positive bucket counts"),
    ([HOLDEM5, "--sizes", "8000"], "the flop of holdem(ranks=5) has 7,760 canonical hands"),
    ([HOLDEM5, "--buckets", "25,3,3,99999"], "the river of holdem(ranks=5) has 73,550"),
    (["leduc", "--sizes", "3"], "--sizes does not apply to leduc"),
    ([HOLDEM5, "--time", "0"], "--time and --eval-time must be > 0"),
    ([HOLDEM5, "--buckets", "1,2"], "--buckets '1,2': give 4 positive integers"),
])
def test_build_refuses_options_of_the_other_kind_of_build(runner, tmp_path, arguments, message):
    result = runner.invoke(main, ["build", *arguments, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "x").exists()


class _Evaluation:
    def __init__(self, nash_conv: float) -> None:
        self.nash_conv, self.exploitability = nash_conv, nash_conv / 2


class _FallingEvaluator:
    """An evaluator whose exploitability halves at each evaluation (cheap, for the target's logic)."""

    work_items = 1

    def __init__(self) -> None:
        self.calls = 0

    def entry_reach(self, strategy, player):
        return None

    def item_values(self, *arguments):
        return None

    def evaluate(self, strategy, game_value=False):
        self.calls += 1
        return _Evaluation(40.0 / 2 ** self.calls)  # chips: 2,000 mbb/g, then 1,000, ...


def test_target_stops_the_solve_at_the_first_curve_point_that_reaches_it(tmp_path):
    from efgkit.jobs.holdem_build import HoldemBuild, _solve
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import CardIndependent
    from efgkit.poker.streamed.sampled_cfr import SampledCFR

    game = make_game(HOLDEM5)
    layout = BucketLayout(BettingTree(game), CardIndependent())
    for target, points in ((1500.0, 1), (700.0, 2), (1.0, 6)):  # 1,000, 500, 250 .. mbb/g
        evaluator = _FallingEvaluator()
        build = HoldemBuild(game, tmp_path, solve_seconds=0.2, eval_seconds=100.0, target_mbb=target)
        history, _, _ = _solve(SampledCFR(layout), evaluator, build, progress=False)
        assert len(history) == points == evaluator.calls
        assert [h["exploitability_mbb_per_game"] for h in history] == [1000 / 2 ** k for k in range(points)]
        assert all(a["iteration"] <= b["iteration"] for a, b in zip(history, history[1:], strict=False))
