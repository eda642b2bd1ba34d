"""`efgkit solve/evaluate --engine public-tree` and `efgkit info` on hold'em."""

from __future__ import annotations

import pytest

from efgkit.cli import main


def test_solve_on_the_public_tree_reports_what_the_tree_engine_reports(runner, json_output, tmp_path):
    out = tmp_path / "kuhn.h5"
    engine = json_output(runner.invoke(main, ["solve", "kuhn", "--engine", "public-tree", "-n", "200",
                                              "-k", "100", "--out", str(out), "--json"]))
    tree = json_output(runner.invoke(main, ["solve", "kuhn", "-n", "200", "-k", "100", "--json"]))
    assert engine["engine"] == "public-tree" and tree["engine"] == "tree"
    assert engine["nash_conv"] == pytest.approx(tree["nash_conv"], abs=1e-9)
    evaluated = json_output(runner.invoke(main, ["evaluate", "kuhn", str(out), "--engine", "public-tree",
                                                 "--json"]))
    assert evaluated["nash_conv"] == pytest.approx(engine["nash_conv"], abs=1e-12)


def test_poker_exploitability_is_also_reported_per_big_blind(runner, json_output, tmp_path):
    out = tmp_path / "holdem.h5"
    spec = "holdem(ranks=2,rounds=2)"
    solved = runner.invoke(main, ["solve", spec, "--engine", "public-tree", "-n", "20", "--out", str(out)])
    assert "mbb/g (big blind 10)" in solved.output
    data = json_output(runner.invoke(main, ["evaluate", spec, str(out), "--json"]))
    assert data["exploitability_mbb_per_game"] == pytest.approx(data["exploitability"] / 10 * 1000)
    goofspiel = json_output(runner.invoke(main, ["solve", "GS3", "-n", "10", "--json"]))
    assert "exploitability_mbb_per_game" not in goofspiel


def test_public_tree_checkpoints_resume_bit_identically(runner, json_output, tmp_path):
    state = tmp_path / "state.h5"
    whole = json_output(runner.invoke(main, ["solve", "leduc", "--engine", "public-tree", "-n", "60",
                                             "-k", "60", "--json"]))
    first = ["solve", "leduc", "--engine", "public-tree", "-n", "30", "-k", "30", "--state", str(state)]
    assert runner.invoke(main, first).exit_code == 0
    resumed = json_output(runner.invoke(main, ["solve", "leduc", "--engine", "public-tree", "-n", "60",
                                               "-k", "60", "--state", str(state), "--resume", "--json"]))
    assert resumed["resumed_from_iteration"] == 30
    assert resumed["nash_conv"] == whole["nash_conv"]


def test_public_tree_refuses_what_it_cannot_run(runner):
    result = runner.invoke(main, ["solve", "kuhn", "--engine", "public-tree", "-a", "lp"])
    assert result.exit_code == 2 and "runs cfr, cfr+, dcfr, lcfr" in result.output
    result = runner.invoke(main, ["solve", "GS4", "--engine", "public-tree", "-n", "1"])
    assert result.exit_code == 2 and "not a limit-poker game" in result.output


def test_info_counts_heads_up_limit_holdem_without_building_it(runner, json_output):
    data = json_output(runner.invoke(main, ["info", "HULHE", "--json"]))
    assert data["built"] is False and data["game"] == "holdem"
    assert data["infosets"] == 319_365_922_522_608  # Burch: "around 3.19 * 10^14"
    assert data["hands"] == 1326 and data["betting_sequences"] == 17_221


def test_info_of_a_small_poker_game_has_the_built_and_counted_sizes(runner, json_output):
    data = json_output(runner.invoke(main, ["info", "leduc", "--json"]))
    assert (data["histories"], data["infosets"]) == (9457, 936)
    assert data["public_tree"] == {"betting_sequences": 90, "public_tree_nodes": 465, "hands": 6}
