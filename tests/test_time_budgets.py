"""--time on `efgkit refine` (stop at the first evaluation after the budget, the result written
as at any stop) and on `efgkit holdem-abstraction` (no street's features started after the
budget; the finished ones kept in --features, no bucket file unless every street is done,
and a second run with the same features file finishes the job)."""

from __future__ import annotations

import itertools

import pytest

from efgkit.abstraction.cards.holdem import pipeline
from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, FeaturesUnfinished, build_abstraction
from efgkit.cli import main
from efgkit.errors import ParameterError


def test_refine_stops_at_an_evaluation_after_its_time_and_says_so(runner, json_output, tmp_path):
    out = tmp_path / "r.h5"
    data = json_output(runner.invoke(main, ["refine", "leduc", "--target", "0", "--max-iterations",
                                            "10000000", "--every", "5", "--time", "0.5", "--out", str(out),
                                            "--json"]))
    assert data["stopped_by_time"] and not data["reached"] and data["time_limit"] == 0.5
    assert 0 < data["iterations"] < 10_000_000 and data["iterations"] % 5 == 0
    assert data["history"][-1]["iteration"] == data["iterations"] and out.is_file()
    text = runner.invoke(main, ["refine", "leduc", "--target", "0", "--time", "0.2", "--max-iterations",
                                "10000000"])
    assert text.exit_code == 0 and "stopped by --time 0.2" in text.stdout
    reached = json_output(runner.invoke(main, ["refine", "kuhn", "--target", "10", "--time", "100",
                                               "--json"]))
    assert reached["reached"] and not reached["stopped_by_time"]


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_refine_refuses_a_time_that_is_no_budget(runner, value):
    result = runner.invoke(main, ["refine", "kuhn", "--time", value])
    assert result.exit_code == 2 and "--time" in result.stderr and len(result.stderr.splitlines()) == 1


OPTIONS = AbstractionOptions(buckets=(25, 5, 5, 5), bins=8, num_ranks=5, opponent_clusters=2, seed=0)


def test_holdem_abstraction_stops_between_streets_and_a_second_run_finishes(tmp_path, monkeypatch):
    features, out = tmp_path / "features.h5", tmp_path / "buckets.h5"
    clock = itertools.chain([0.0, 0.0], itertools.repeat(100.0))  # the deadline, preflop starts, then late
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: next(clock))
    with pytest.raises(FeaturesUnfinished) as stopped:
        build_abstraction(OPTIONS, out, features=features, time_limit=10.0)
    message = str(stopped.value)
    assert "features of preflop done" in message and "river, turn, flop not started" in message
    assert "\n" not in message and features.is_file() and not out.exists()
    monkeypatch.undo()
    summary = build_abstraction(OPTIONS, out, features=features, time_limit=1e6)
    assert out.is_file() and summary["streets"]["preflop"]["features_reused"]
    assert not summary["streets"]["river"]["features_reused"]


def test_holdem_abstraction_time_needs_a_features_file(tmp_path, runner):
    with pytest.raises(ParameterError, match="--time needs --features"):
        build_abstraction(OPTIONS, tmp_path / "b.h5", time_limit=5.0)
    result = runner.invoke(main, ["holdem-abstraction", "--ranks", "5", "--workers", "0", "--buckets",
                                  "25,5,5,5", "--time", "5", "--out", str(tmp_path / "b.h5")])
    assert result.exit_code == 2 and "--time needs --features" in result.stderr
    stopped = runner.invoke(main, ["holdem-abstraction", "--ranks", "5", "--workers", "0", "--buckets",
                                   "25,5,5,5", "--time", "1e-9", "--features", str(tmp_path / "f.h5"),
                                   "--out", str(tmp_path / "b.h5")])
    assert stopped.exit_code == 2 and "features of no street done" in stopped.stderr
    assert len(stopped.stderr.splitlines()) == 1 and not (tmp_path / "b.h5").exists()
