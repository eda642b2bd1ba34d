"""efgkit play on hold'em bucket strategies without a game tree: a person at the terminal
(moves piped on standard input), the compact export read back by key and as a layout,
duplicate matches of files against baselines and each other, and one-line refusals that
suggest only play's own options."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from efgkit.cli import main
from efgkit.play.poker_hands import Deal, KeySeat, LayoutSeat, play_hand
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.specs import make_game
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy, open_bucket_export, read_bucket_export

GAME = "holdem(ranks=3,rounds=2)"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A random strategy on canonical buckets, as a bucket-strategy file and its export."""
    folder = tmp_path_factory.mktemp("play-holdem")
    game = make_game(GAME)
    layout = BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))
    strategy = layout.random(7)
    save_bucket_strategy(folder / "s.h5", layout, strategy, {"algorithm": "random", "iterations": 0})
    export = export_bucket_strategy(layout, strategy, folder / "s.efgs")
    return {"game": game, "layout": layout, "strategy": strategy, "export": export,
            "h5": str(folder / "s.h5"), "efgs": str(folder / "s.efgs"), "folder": folder}


def test_export_read_back_is_the_dequantized_strategy(files):
    layout, strategy = read_bucket_export(files["efgs"], files["game"])
    assert layout.num_actions == files["layout"].num_actions
    np.testing.assert_allclose(strategy, files["export"].dequantized(), atol=1e-12)


def test_key_lookups_equal_layout_rows_in_played_hands(files):
    game = files["game"]
    by_layout = LayoutSeat(files["layout"], files["export"].dequantized())
    with open_bucket_export(files["efgs"], game) as reader:
        by_key = KeySeat(reader, "s.efgs")
        rng, decisions = random.Random(3), 0
        for _ in range(40):
            def check(decision, action):
                nonlocal decisions
                decisions += 1
                np.testing.assert_allclose(by_key.probabilities(decision), by_layout.probabilities(decision),
                                           atol=1e-12)
            record = play_hand(game, (by_key, by_layout), Deal.shuffled(game, rng), rng, check)
            assert abs(record.payoff) <= max(sum(game.blinds), 1) * 100
    assert decisions >= 40


@pytest.mark.parametrize("kind", ["h5", "efgs"])
def test_a_person_plays_with_piped_moves(files, kind, runner):
    moves = "c\nraise\n1\nc\nc\nc\nc\nc\nc\nc\nc\nc\nc\n"
    result = runner.invoke(main, ["play", files[kind], "--hands", "3", "--seed", "2"], input=moves)
    assert result.exit_code == 0, result.output
    assert result.output.count("your cards") >= 3 and "mbb/hand over 3 hands" in result.output
    assert re.search(r"3 hands, [+-]\d+ chips for you \([+-][\d,]+ mbb/hand\)", result.output)
    assert "board" in result.output and "[0] fold" in result.output or "[0] call" in result.output


def test_a_person_can_quit_and_the_json_counts_hands(files, runner, json_output):
    data = json_output(runner.invoke(main, ["play", files["efgs"], "--seed", "1", "--json"], input="q\n"))
    assert data["hands"] == 0 and data["mbb_per_hand"] is None
    data = json_output(runner.invoke(main, ["play", files["h5"], "--seat", "1", "-n", "2", "--json"],
                                     input="c\n" * 20))
    assert data["hands"] == 2 and data["mode"] == "interactive"


def test_export_plays_a_duplicate_match_against_baselines_and_its_source(files, runner, json_output):
    called = json_output(runner.invoke(main, ["play", files["efgs"], "--against", "call", "-n", "20",
                                              "--seed", "1", "--json"]))
    assert called["ci95_low_mbb"] <= called["mbb_per_game"] <= called["ci95_high_mbb"]
    source = json_output(runner.invoke(main, ["play", files["efgs"], "--against", files["h5"], "-n", "5",
                                              "--json"]))
    assert abs(source["expected_mbb_per_game"]) < 20  # only the 8-bit rounding differs
    itself = json_output(runner.invoke(main, ["play", files["h5"], "--against", files["efgs"], "-n", "5",
                                              "--json"]))
    assert itself["expected_mbb_per_game"] == pytest.approx(-source["expected_mbb_per_game"], abs=1e-9)


def _damaged(files, name: str, change) -> str:
    data = bytearray(open(files["efgs"], "rb").read())
    path = files["folder"] / name
    path.write_bytes(bytes(change(data)))
    return str(path)


def test_bad_inputs_get_one_line_naming_only_plays_options(files, runner):
    flipped = _damaged(files, "flipped.efgs", lambda d: d[:len(d) // 2] + bytes(
        b ^ 0xFF for b in d[len(d) // 2:len(d) // 2 + 40]) + d[len(d) // 2 + 40:])
    truncated = _damaged(files, "truncated.efgs", lambda d: d[:len(d) // 2])
    cases = [
        (["play", "holdem(ranks=4,rounds=2)", files["efgs"]], "is for"),
        (["play", "holdem(ranks=5)", files["efgs"], "--against", "call"], "is for"),
        (["play", "holdem(ranks=4,rounds=2)", files["h5"], "--against", "call"], "is for"),
        (["play", flipped, "--against", "call"], "corrupted"),
        (["play", truncated], "truncated"),
        (["play", files["efgs"], "--against", "bluff"], "--against bluff"),
        (["play", files["efgs"], "--against", "call", "--seat", "0"], "--seat"),
    ]
    options = {option for parameter in main.get_command(None, "play").params for option in parameter.opts}
    for arguments, expected in cases:
        result = runner.invoke(main, arguments, input="c\n")
        assert result.exit_code == 2 and expected in result.stderr, (arguments, result.output)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
        own = re.sub(r"efgkit [a-z-]+[^,;()]*", "", result.stderr)  # other commands' options
        assert set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", own)) <= options, result.stderr


def test_a_tree_too_large_names_the_engine_and_no_option_the_command_lacks(runner):
    result = runner.invoke(main, ["solve", "holdem(ranks=5)"])  # solve has no --node-limit
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "--node-limit" not in result.stderr and "EFGKIT_NODE_LIMIT" in result.stderr
    assert "--engine sampled" in result.stderr
