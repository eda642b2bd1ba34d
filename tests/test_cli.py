"""The efgkit command: help, JSON output, one-line errors with exit code 2, files never damaged."""

import subprocess
import sys

import pytest

from efgkit.cli import main

COMMANDS = ("build", "games", "info", "solve", "evaluate", "refine", "tradeoff", "cards", "convert", "export",
            "play", "resolve", "holdem-abstraction", "warm-up", "bot", "cfr-d")
KUHN_VALUE = -1 / 18


def _assert_one_line_error(result) -> None:
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("efgkit: error: "), result.stderr
    assert "Traceback" not in result.stderr


def test_the_command_list_above_is_every_registered_command():
    import click

    from efgkit.cli.app import COMMANDS as LAZY

    context = click.Context(main)
    assert set(COMMANDS) == set(main.list_commands(context))
    for name in COMMANDS:  # importing each module registers exactly the commands it is listed for
        command = main.get_command(context, name)
        assert command is not None and command.callback.__module__ == LAZY[name][0]
        assert command.get_short_help_str(limit=300) == LAZY[name][1]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(runner, command):
    result = runner.invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "--json" in result.stdout


def test_main_help_lists_the_commands(runner):
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    assert all(command in result.stdout for command in COMMANDS)


def test_games_json_lists_games_parameters_and_aliases(runner, json_output):
    data = json_output(runner.invoke(main, ["games", "--json"]))
    by_name = {game["name"]: game for game in data["games"]}
    assert {"kuhn", "leduc"} <= set(by_name)
    assert by_name["kuhn"]["parameters"][0]["name"] == "cards"
    assert "default" in by_name["kuhn"]["parameters"][0]
    assert data["aliases"]["P224"] == "poker(bets=2,raises=2,cap=4)"


@pytest.mark.parametrize("arguments", [["--help"], ["games"]])
def test_help_and_games_start_without_numba_scipy_or_h5py(arguments):
    """What makes them start in a fraction of a second (docs/benchmarks.md, start-up)."""
    probe = ("import sys\nfrom efgkit.cli import main\n"
             f"main({arguments!r}, standalone_mode=False)\n"
             "print(' '.join(m for m in ('numba', 'scipy', 'h5py') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == ""


def test_info_json_has_the_sizes(runner, json_output):
    data = json_output(runner.invoke(main, ["info", "kuhn", "--json"]))
    expected = {"game", "infosets", "infosets_player0", "infosets_player1", "histories",
                "decision_nodes", "chance_nodes", "terminal_nodes", "bytes_per_node",
                "build_seconds", "coarsest_abstract_infosets"}
    assert expected <= set(data)
    assert (data["game"], data["histories"], data["infosets"]) == ("kuhn", 58, 12)


def test_info_node_limit_is_a_clear_error(runner):
    _assert_one_line_error(runner.invoke(main, ["info", "GS4", "--node-limit", "10"]))


def test_info_of_a_poker_game_over_the_node_limit_is_counted_not_built(runner, json_output):
    data = json_output(runner.invoke(main, ["info", "leduc", "--node-limit", "10", "--json"]))
    assert (data["built"], data["histories"], data["infosets"]) == (False, 9457, 936)


@pytest.mark.parametrize("algorithm", ["cfr", "cfr+", "dcfr", "fp"])
def test_solve_json_has_the_keys(runner, json_output, algorithm):
    data = json_output(runner.invoke(main, ["solve", "kuhn", "-a", algorithm, "-n", "30", "-k", "10",
                                      "--json"]))
    expected = {"game", "algorithm", "iterations", "seconds", "nash_conv", "exploitability",
                "game_value", "best_response_values", "history", "infosets", "histories"}
    assert expected <= set(data)
    assert data["iterations"] == 30
    assert [h["iteration"] for h in data["history"]] == [10, 20, 30]
    assert data["history"][-1]["nash_conv"] == data["nash_conv"]
    assert data["exploitability"] == pytest.approx(data["nash_conv"] / 2)


def test_solve_evaluates_the_last_iteration_once(runner, json_output, monkeypatch):
    from efgkit.solvers.best_response import BestResponse

    calls = []
    evaluate = BestResponse.evaluate
    monkeypatch.setattr(BestResponse, "evaluate",
                        lambda self, strategy: calls.append(1) or evaluate(self, strategy))
    data = json_output(runner.invoke(main, ["solve", "kuhn", "-n", "25", "-k", "10", "--json"]))
    assert [h["iteration"] for h in data["history"]] == [10, 20, 25]
    assert len(calls) == 3 and data["history"][-1]["nash_conv"] == data["nash_conv"]


def test_solve_lp_gives_the_kuhn_value(runner, json_output):
    data = json_output(runner.invoke(main, ["solve", "kuhn", "-a", "lp", "--json"]))
    assert data["iterations"] == 0
    assert data["game_value"] == pytest.approx(KUHN_VALUE, abs=1e-8)
    assert data["lp_value"] == pytest.approx(KUHN_VALUE, abs=1e-8)
    assert data["nash_conv"] == pytest.approx(0.0, abs=1e-8)


def test_solve_human_output_reports_nash_conv_and_value(runner):
    result = runner.invoke(main, ["solve", "kuhn", "-n", "20", "-k", "10"])
    assert result.exit_code == 0
    assert result.stdout.count("NashConv/2") >= 2
    assert "game value" in result.stdout and "58 histories" in result.stdout


def test_solve_out_then_evaluate_gives_the_same_nash_conv(runner, json_output, tmp_path):
    path = tmp_path / "kuhn.h5"
    solved = json_output(runner.invoke(main, ["solve", "kuhn", "-n", "40", "--out", str(path), "--json"]))
    evaluated = json_output(runner.invoke(main, ["evaluate", "kuhn", str(path), "--json"]))
    for key in ("nash_conv", "exploitability", "game_value", "best_response_values"):
        assert evaluated[key] == pytest.approx(solved[key], abs=1e-12)
    assert "seconds" in evaluated


def test_solve_plot_writes_a_png(runner, tmp_path):
    path = tmp_path / "curve.png"
    result = runner.invoke(main, ["solve", "kuhn", "-n", "20", "-k", "5", "--plot", str(path)])
    assert result.exit_code == 0, result.stderr
    assert path.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("spec", ["bogus", "kuhn(cards=2)", "kuhn(", "kuhn(decks=3)"])
def test_bad_game_spec_is_one_line_and_exit_2(runner, spec):
    _assert_one_line_error(runner.invoke(main, ["info", spec]))


@pytest.mark.parametrize("arguments", [
    ["--iterations", "-1"],
    ["--every", "0"],
    ["--delay", "-1"],
    ["--algorithm", "nope"],
    ["--delay", "5", "--algorithm", "cfr"],
    ["--alpha", "2", "--algorithm", "cfr+"],
    ["--alpha", "nan", "--algorithm", "dcfr"],
    ["--algorithm", "lp", "--iterations", "5"],
    ["--delay", "10", "--iterations", "10"],
    ["--no-such-option"],
])
def test_bad_parameter_is_one_line_and_exit_2(runner, arguments):
    _assert_one_line_error(runner.invoke(main, ["solve", "kuhn", *arguments]))


def test_unwritable_output_fails_before_solving(runner, tmp_path):
    missing = tmp_path / "missing" / "out.h5"
    _assert_one_line_error(runner.invoke(main, ["solve", "kuhn", "--out", str(missing)]))


def test_corrupted_strategy_file_is_one_line_and_left_unchanged(runner, tmp_path):
    path = tmp_path / "kuhn.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(path)]).exit_code == 0
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 2:] = bytes(len(damaged) - len(damaged) // 2)
    path.write_bytes(bytes(damaged))
    _assert_one_line_error(runner.invoke(main, ["evaluate", "kuhn", str(path)]))
    assert path.read_bytes() == bytes(damaged)


def test_evaluate_refuses_a_strategy_for_another_game(runner, tmp_path):
    path = tmp_path / "kuhn.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(path)]).exit_code == 0
    before = path.read_bytes()
    _assert_one_line_error(runner.invoke(main, ["evaluate", "kuhn(cards=4)", str(path)]))
    assert path.read_bytes() == before


def test_failed_solve_does_not_damage_an_existing_output(runner, tmp_path):
    path = tmp_path / "kuhn.h5"
    path.write_bytes(b"precious")
    _assert_one_line_error(runner.invoke(main, ["solve", "bogus", "--out", str(path)]))
    assert path.read_bytes() == b"precious"


def test_solve_without_arguments_is_leduc_with_cfr_plus(runner, json_output):
    data = json_output(runner.invoke(main, ["solve", "--iterations", "20", "--every", "10", "--json"]))
    assert (data["game"], data["algorithm"], data["infosets"]) == ("leduc", "cfr+", 936)
    assert data["nash_conv"] < data["history"][0]["nash_conv"]


def test_a_file_that_records_its_game_needs_no_game_argument_and_refuses_another(runner, tmp_path,
                                                                                 json_output):
    """GAME comes first where a command takes it; evaluate, export and play read it from the file."""
    strategy, compact = tmp_path / "kuhn.h5", tmp_path / "kuhn.efgs"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(strategy)]).exit_code == 0
    named = json_output(runner.invoke(main, ["evaluate", "kuhn", str(strategy), "--json"]))
    read = json_output(runner.invoke(main, ["evaluate", str(strategy), "--json"]))
    assert (read["game"], read["nash_conv"]) == ("kuhn", named["nash_conv"])
    assert runner.invoke(main, ["export", str(strategy), "-o", str(compact)]).exit_code == 0
    played = json_output(runner.invoke(main, ["play", str(compact), "--against", "random", "-n", "10",
                                              "--seed", "1", "--json"]))
    assert played["game"] == "kuhn"
    for command in (["evaluate", "leduc", str(strategy)],
                    ["export", "leduc", str(strategy), "-o", str(compact)],
                    ["play", "leduc", str(compact), "--against", "random"]):
        _assert_one_line_error(runner.invoke(main, command))
    _assert_one_line_error(runner.invoke(main, ["play", "kuhn", str(compact), "extra"]))


def test_an_option_of_another_engine_is_refused_and_marked_in_help(runner, tmp_path):
    result = runner.invoke(main, ["solve", "kuhn", "--engine", "public-tree", "--buckets", "none"])
    _assert_one_line_error(result)
    assert "--buckets goes with --engine sampled, not --engine public-tree" in result.stderr
    strategy = tmp_path / "kuhn.h5"
    assert runner.invoke(main, ["solve", "kuhn", "-n", "10", "--out", str(strategy)]).exit_code == 0
    result = runner.invoke(main, ["evaluate", str(strategy), "--rollouts", "5"])
    _assert_one_line_error(result)
    assert "--rollouts goes with --engine lbr, not --engine tree" in result.stderr
    help_text = " ".join(runner.invoke(main, ["solve", "--help"]).stdout.split())
    assert "[sampled] A hold'em bucket file" in help_text
