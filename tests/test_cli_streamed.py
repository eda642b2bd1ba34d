"""efgkit solve --engine sampled and efgkit evaluate --engine streamed: the command line of the
streamed poker engine, its strategy files and its refusals."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from efgkit.cli import main
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.bucket_layout import BucketLayout
from efgkit.poker.card_abstraction import CardIndependent
from efgkit.poker.full_game import StreamedEvaluator
from efgkit.specs import make_game
from efgkit.storage.bucket_strategy import load_bucket_strategy, save_bucket_strategy

GAME = "holdem(ranks=3,rounds=2)"


def test_solve_then_evaluate_in_the_full_game(tmp_path, runner, json_output):
    out = tmp_path / "strategy.h5"
    solved = json_output(runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical",
                                              "-n", "300", "--out", str(out), "--nash-conv", "--json"]))
    assert solved["engine"] == "sampled" and solved["iterations"] == 300
    evaluated = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--json"]))
    assert evaluated["engine"] == "streamed"  # chosen from the file
    assert evaluated["nash_conv"] == pytest.approx(solved["nash_conv"], abs=1e-12)
    assert evaluated["exploitability_mbb_per_game"] == pytest.approx(evaluated["exploitability"] / 10 * 1000)
    layout, strategy, provenance, state = load_bucket_strategy(out, make_game(GAME))
    assert provenance["iterations"] == 300 and set(state) == {"regrets", "average_accumulator"}
    direct = StreamedEvaluator(layout).evaluate(strategy)
    assert direct.nash_conv == pytest.approx(evaluated["nash_conv"], abs=1e-12)


def test_a_card_independent_strategy_file_round_trips(tmp_path):
    game = make_game(GAME)
    layout = BucketLayout(BettingTree(game), CardIndependent())
    strategy = layout.uniform()
    save_bucket_strategy(tmp_path / "uniform.h5", layout, strategy, {"algorithm": "uniform", "iterations": 0})
    loaded, read, _, _ = load_bucket_strategy(tmp_path / "uniform.h5", game)
    assert np.array_equal(read, strategy) and loaded.abstraction.reference == {"kind": "none"}


@pytest.mark.parametrize("arguments, message", [
    (["solve", GAME, "--engine", "sampled"], "needs --buckets"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "-a", "fp"], "runs cfr"),
    (["solve", GAME, "--buckets", "none"], "--buckets goes with --engine sampled"),
    (["solve", "goofspiel", "--engine", "sampled", "--buckets", "none"], "limit poker games only"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "/no/such/buckets.h5"], "no such"),
])
def test_bad_sampled_solves_get_one_line(arguments, message, runner):
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_mismatched_strategy_files_are_refused(tmp_path, runner):
    out = tmp_path / "strategy.h5"
    assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "none", "-n", "5", "--out",
                                str(out)]).exit_code == 0
    other = runner.invoke(main, ["evaluate", "holdem(ranks=4,rounds=2)", str(out)])
    assert other.exit_code == 2 and "is for" in other.stderr
    tree_engine = runner.invoke(main, ["evaluate", GAME, str(out), "--engine", "tree"])
    assert tree_engine.exit_code == 2 and "--engine streamed" in tree_engine.stderr
    with h5py.File(out, "r") as handle:
        offset = handle["strategy"].id.get_offset()  # contiguous: the probabilities' first byte
    damaged = tmp_path / "damaged.h5"
    data = bytearray(out.read_bytes())
    data[offset + 3] ^= 0xFF
    damaged.write_bytes(bytes(data))
    broken = runner.invoke(main, ["evaluate", GAME, str(damaged)])
    assert broken.exit_code == 2 and "corrupted" in broken.stderr and "Traceback" not in broken.output
