"""`efgkit build`: one folder with the tradeoff CSV/PNG, the strategy, its compact export and
a report; the numbers it reports are the ones its files give; bad input is one line, exit 2."""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.cli import main
from efgkit.cli.plots import pareto_front
from efgkit.maps.infoset_map import InfosetMap
from efgkit.play.playout import CompactPolicy
from efgkit.solvers import BestResponse, Strategy
from efgkit.specs import load_game
from efgkit.storage.compact_reader import CompactStrategy
from efgkit.storage.strategy_file import load_strategy

SMALL = ["--reference-iterations", "30", "--max-iterations", "400", "--every", "20",
         "--target", "0.5", "--buckets", "3,2"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("build") / "leduc"
    result = CliRunner().invoke(main, ["build", "leduc", "--out", str(folder), *SMALL, "--json"])
    assert result.exit_code == 0, result.stderr
    return folder, json.loads(result.stdout)


def test_build_writes_one_folder_with_every_file(built):
    folder, data = built
    assert sorted(p.name for p in folder.iterdir()) == sorted(data["files"]) == [
        "report.md", "strategy.efgs", "strategy.h5", "tradeoff.csv", "tradeoff.png"]
    with open(folder / "tradeoff.csv") as handle:
        settings_seen = {row["setting"] for row in csv.DictReader(handle)}
    assert settings_seen == {"hist buckets 3,2 + CFR+", "CFR+ (full game)", "CFR+IRA"}
    report = (folder / "report.md").read_text()
    assert "tradeoff.png" in report and "efgkit build leduc --out" in report


def test_build_reports_the_exact_nash_conv_of_the_file_it_exported(built):
    folder, data = built
    tree = load_game("leduc")
    strategy, _ = load_strategy(folder / "strategy.h5", tree)
    assert BestResponse(strategy.infoset_map).evaluate(strategy).nash_conv == pytest.approx(
        data["nash_conv"], rel=1e-9)
    assert data["reached"] and data["nash_conv"] <= 0.5
    with CompactStrategy(str(folder / "strategy.efgs")) as compact:
        compact.verify()
        behavior = CompactPolicy(compact, "export").behavior(tree)
        assert compact.num_rows == data["export_rows"] == strategy.infoset_map.num_abstract
    played = BestResponse(InfosetMap.identity(tree)).evaluate(Strategy.from_behavior(tree, behavior))
    assert played.nash_conv == pytest.approx(data["nash_conv_exported"], rel=1e-9)
    assert data["export_bytes"] == (folder / "strategy.efgs").stat().st_size
    assert data["solver_state_bytes"] == 4 * data["memory_words"]


def test_build_refuses_a_folder_that_is_not_empty_unless_forced(built):
    folder, _ = built
    result = CliRunner().invoke(main, ["build", "leduc", "--out", str(folder), *SMALL])
    assert result.exit_code == 2
    assert result.stderr.startswith("efgkit: error: --out") and "--force" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unreached_target_exports_the_best_strategy_and_exits_2(tmp_path):
    result = CliRunner().invoke(main, ["build", "kuhn", "--out", str(tmp_path / "k"),
                                       "--target", "0", "--max-iterations", "40", "--every", "10",
                                       "--reference-iterations", "10", "--buckets", "none",
                                       "--json"])
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert not data["reached"] and (tmp_path / "k" / "strategy.efgs").exists()
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "not reached within --max-iterations 40" in result.stderr


def test_a_game_that_cannot_be_built_is_one_line(tmp_path):
    result = CliRunner().invoke(main, ["build", "nosuchgame", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert result.stderr.startswith("efgkit: error: ") and len(result.stderr.strip().splitlines()) == 1


points = st.lists(st.tuples(st.floats(0, 10), st.integers(1, 10**6)), min_size=1, max_size=30)


@given(points)
@settings(max_examples=200, deadline=None)
def test_the_pareto_front_holds_exactly_the_undominated_points(raw):
    front = pareto_front(raw)
    assert [x for x, _ in front] == sorted(x for x, _ in front)
    assert all(a[1] > b[1] for a, b in zip(front, front[1:], strict=False))
    for nash_conv, memory in raw:  # every point is matched or beaten by a front point
        assert any(x <= nash_conv and m <= memory for x, m in front)
    for x, m in front:  # no point beats a front point
        assert not any(a <= x and b <= m and (a, b) != (x, m) for a, b in raw)
    assert np.isfinite([x for x, _ in front]).all()


def test_the_verdict_says_plainly_when_the_abstraction_did_not_pay_off():
    from efgkit.cli.build import verdict

    data = {"algorithm": "cfr+ira", "reached": True, "target": 0.05, "nash_conv": 0.04, "memory_words": 800,
            "full_game_words": 1000}
    full = {"nash_conv": 1e-3, "iteration": 1000}
    text = verdict(data, full)
    assert "saves 20% of the memory" in text and "full CFR+ reached 1.000e-03" in text
    assert "did not pay off here: it saved no memory" in verdict({**data, "memory_words": 1200}, full)
    assert "did NOT reach" in verdict({**data, "reached": False}, None)
    assert "missed the target" in verdict({**data, "reached": False}, None)


def test_an_fpira_build_runs_and_records_the_reference_conventions(tmp_path):
    folder = tmp_path / "gs3"
    result = CliRunner().invoke(main, ["build", "GS3", "--out", str(folder), "--algorithm", "fpira",
                                       "--reference-iterations", "10", "--max-iterations", "200",
                                       "--every", "20", "--target", "0.05", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["conventions"] == "reference"
    _, provenance = load_strategy(folder / "strategy.h5", load_game("GS3"))
    assert provenance["parameters"]["conventions"] == "reference"
