"""efgkit evaluate --lbr and efgkit play on bucket-strategy files: the bound against the exact
evaluation, matches in mbb/g, and one-line refusals."""

from __future__ import annotations

import pytest

from efgkit.cli import main

GAME = "holdem(ranks=3,rounds=2)"


@pytest.fixture(scope="module")
def strategy_file(tmp_path_factory):
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("bucket-play") / "strategy.h5"
    result = CliRunner().invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n",
                                       "200", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    return str(out)


def test_lbr_from_the_command_line_bounds_the_exact_exploitability(strategy_file, runner, json_output):
    exact = json_output(runner.invoke(main, ["evaluate", GAME, strategy_file, "--json"]))
    every = json_output(runner.invoke(main, ["evaluate", GAME, strategy_file, "--lbr", "all", "--json"]))
    assert every["engine"] == "lbr" and every["every_board"] and every["boards"] == 220
    assert 0 < every["lbr_mbb_per_game"] <= exact["exploitability_mbb_per_game"]
    sampled = json_output(runner.invoke(main, ["evaluate", GAME, strategy_file, "--lbr", "40", "--seed", "5",
                                               "--lbr-actions", "c/fcr", "--json"]))
    assert sampled["boards"] == 40 and sampled["lbr_ci95_low_mbb"] < sampled["lbr_ci95_high_mbb"]
    assert sampled["lbr_actions"] == "c/fcr"
    text = runner.invoke(main, ["evaluate", GAME, strategy_file, "--lbr", "all"])
    assert text.exit_code == 0 and "lower bound on exploitability" in text.stdout


def test_play_reports_matches_in_mbb_per_game(strategy_file, runner, json_output):
    called = json_output(runner.invoke(main, ["play", GAME, strategy_file, "--against", "call",
                                              "--hands", "30", "--seed", "1", "--json"]))
    assert called["boards"] == 30
    assert called["ci95_low_mbb"] <= called["mbb_per_game"] <= called["ci95_high_mbb"]
    assert "expected_mbb_per_game" in called  # a small game: the exact value too
    itself = json_output(runner.invoke(main, ["play", GAME, strategy_file, "--against", strategy_file,
                                              "--hands", "5", "--json"]))
    assert itself["mbb_per_game"] == 0.0 and itself["expected_mbb_per_game"] == 0.0
    text = runner.invoke(main, ["play", GAME, strategy_file, "--against", "random", "--hands", "5"])
    assert text.exit_code == 0 and "mbb/g" in text.stdout


@pytest.mark.parametrize("arguments, message", [
    (["evaluate", GAME, "{file}", "--lbr", "1"], "--lbr 1"),
    (["evaluate", GAME, "{file}", "--lbr", "many"], "--lbr many"),
    (["evaluate", GAME, "{file}", "--lbr", "5", "--lbr-actions", "c/c/c"], "LBR actions"),
    (["evaluate", GAME, "{file}", "--lbr", "5", "--engine", "streamed"], "--lbr goes with --engine lbr"),
    (["evaluate", "holdem(ranks=4,rounds=2)", "{file}", "--lbr", "5"], "is for"),
    (["play", GAME, "{file}", "--against", "bluff"], "--against bluff"),
    (["play", GAME, "{file}", "--against", "call", "--seat", "0"], "--seat"),
    (["play", "leduc", "{file}", "--against", "call"], "is for"),
])
def test_bad_lbr_and_play_requests_get_one_line(strategy_file, arguments, message, runner):
    result = runner.invoke(main, [a.format(file=strategy_file) for a in arguments])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_lbr_refuses_strategies_of_the_tree_engine(tmp_path, runner):
    out = tmp_path / "leduc.h5"
    assert runner.invoke(main, ["solve", "leduc", "-n", "5", "--out", str(out)]).exit_code == 0
    result = runner.invoke(main, ["evaluate", "leduc", str(out), "--lbr", "10"])
    assert result.exit_code == 2 and "bucket strategy files" in result.stderr
