"""Playing compact strategies: sampled matches agree with the exact expected payoff, and
`efgkit play` works interactively and in matches."""

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli import main
from efgkit.play.playout import CompactPolicy, UniformPolicy, expected_payoff, play_hand, play_match
from efgkit.solvers import CFRPlusSolver, SequenceFormLP
from efgkit.specs import load_game
from efgkit.storage.compact import export_compact
from efgkit.storage.compact_reader import CompactStrategy


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn")


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture(scope="module")
def leduc_file(tmp_path_factory, leduc):
    path = tmp_path_factory.mktemp("play") / "leduc.efgs"
    export_compact(CFRPlusSolver(leduc).iterate(100).average_strategy(), path, bits=8)
    return path


def test_a_hand_ends_at_a_terminal_with_its_payoff(leduc, leduc_file):
    policy = CompactPolicy(CompactStrategy(str(leduc_file)), "leduc")
    utility, moves = play_hand(leduc, (policy, UniformPolicy()), random.Random(0))
    assert moves and {move.player for move in moves} <= {0, 1}
    assert utility in set(leduc.node_utility[leduc.node_kind == 3].tolist())


def test_match_mean_agrees_with_the_exact_expected_payoff(leduc, leduc_file):
    policy = CompactPolicy(CompactStrategy(str(leduc_file)), "leduc")
    result = play_match(leduc, policy, UniformPolicy(), 3000, seed=11)
    exact = expected_payoff(leduc, policy.behavior(leduc), UniformPolicy().behavior(leduc))
    assert exact > 0.5  # a CFR+ strategy beats random play
    assert abs(result.mean - exact) < 4 * result.standard_error


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_payoff_equals_the_poker_engines_values_over_both_seats(leduc, seed):
    """An independent computation: the public-tree engine's game values of the two seatings."""
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree

    rng = np.random.default_rng(seed)
    behaviors = []
    for _ in range(2):
        raw = rng.random(leduc.num_infoset_actions) + 0.05
        behaviors.append(raw / np.repeat(np.add.reduceat(raw, leduc.infoset_action_offset[:-1]),
                                         leduc.infoset_num_actions))
    layout = StrategyLayout.from_infoset_map(PublicTree(leduc.game), InfosetMap.identity(leduc))
    owner = np.repeat(leduc.infoset_player, leduc.infoset_num_actions)
    seated = [evaluate_strategy(layout, np.where(owner == 0, first, second)).game_value
              for first, second in (behaviors, behaviors[::-1])]
    ours = expected_payoff(leduc, behaviors[0], behaviors[1])
    assert ours == pytest.approx((seated[0] - seated[1]) / 2, abs=1e-12)
    assert abs(ours) > 1e-3  # two different strategies: the check has something to compare


def test_an_equilibrium_never_loses_against_any_pure_strategy(kuhn):
    equilibrium = SequenceFormLP(kuhn).solve().strategy.behavior()
    rng = np.random.default_rng(4)
    for _ in range(20):
        pure = np.zeros(kuhn.num_infoset_actions)
        choice = rng.integers(0, kuhn.infoset_num_actions)
        pure[kuhn.infoset_action_offset[:-1] + choice] = 1.0
        assert expected_payoff(kuhn, equilibrium, pure) >= -1e-12


def test_cli_match_reports_mean_interval_and_exact_value(leduc_file):
    result = CliRunner().invoke(main, ["play", "leduc", str(leduc_file), "--against",
                                       "random", "--hands", "2000", "--seed", "5", "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["hands"] == 2000 and data["ci95_low"] < data["mean_payoff"] < data["ci95_high"]
    assert abs(data["mean_payoff"] - data["expected_payoff"]) < 4 * data["standard_error"]


def test_cli_self_match_samples_around_zero(leduc_file):
    result = CliRunner().invoke(main, ["play", "leduc", str(leduc_file), "--against",
                                       str(leduc_file), "--hands", "2000", "--seed", "3", "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert abs(data["mean_payoff"]) < 4 * data["standard_error"] and data["standard_error"] > 0


def test_cli_interactive_play_reads_actions_until_the_hands_are_done(leduc_file):
    answers = "\n".join(["nonsense", "9"] + ["1"] * 40) + "\n"
    result = CliRunner().invoke(main, ["play", "leduc", str(leduc_file), "--hands", "3",
                                       "--seed", "2", "--json"], input=answers)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["hands"] == 3 and data["mode"] == "interactive"
    assert result.stderr.count("hand over") == 3 and "you know: P" in result.stderr
    assert "choose 0-1" in result.stderr


def test_cli_interactive_play_stops_on_quit(leduc_file):
    result = CliRunner().invoke(main, ["play", "leduc", str(leduc_file), "--seat", "0"],
                                input="q\n")
    assert result.exit_code == 0, result.stderr
    assert "0 hands" in result.stdout


def test_cli_refuses_a_strategy_for_another_game(leduc_file):
    result = CliRunner().invoke(main, ["play", "kuhn", str(leduc_file), "--hands", "1"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"efgkit: error: {leduc_file}: strategy is for game 'leduc', "
                                     f"not 'kuhn'")


def test_uniform_policy_behavior_sums_to_one(leduc):
    sums = np.add.reduceat(UniformPolicy().behavior(leduc), leduc.infoset_action_offset[:-1])
    assert np.allclose(sums, 1.0)


@pytest.mark.parametrize("command", ["export", "play"])
def test_new_commands_have_help_with_json(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0 and "--json" in result.stdout


def test_play_refuses_a_file_whose_payload_was_damaged(leduc_file, tmp_path):
    damaged = tmp_path / "damaged.efgs"
    data = bytearray(leduc_file.read_bytes())
    data[-5] ^= 0x01  # a bit of the payload, not the header
    damaged.write_bytes(bytes(data))
    result = CliRunner().invoke(main, ["play", "leduc", str(damaged), "--against", "random",
                                       "--hands", "10"])
    assert result.exit_code == 2
    assert result.stderr.startswith("efgkit: error: ") and len(result.stderr.strip().splitlines()) == 1
