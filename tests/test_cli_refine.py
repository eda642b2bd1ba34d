"""`efgkit refine` and `efgkit tradeoff`: JSON keys, result files, bad input."""

import csv

import pytest

from efgkit.cli import main


@pytest.mark.parametrize("algorithm", ["cfr+ira", "fpira"])
def test_refine_reports_the_papers_quantities_and_writes_an_evaluable_file(runner, json_output, tmp_path,
                                                                          algorithm):
    out = tmp_path / "refined.h5"
    extra = ["--kb", "10", "--kh", "90", "--seed", "3"] if algorithm == "cfr+ira" else []
    data = json_output(runner.invoke(main, ["refine", "kuhn", "-a", algorithm, "--target", "0.01",
                                      "--every", "20", "--out", str(out), "--json", *extra]))
    for key in ("nash_conv", "abstract_infosets", "original_infosets", "memory_words",
                "map_entries", "iterations", "seconds"):
        assert key in data
    assert data["reached"] and data["nash_conv"] <= 0.01
    assert data["original_infosets"] == 12
    evaluated = json_output(runner.invoke(main, ["evaluate", "kuhn", str(out), "--json"]))
    assert evaluated["nash_conv"] == pytest.approx(data["nash_conv"], abs=1e-12)
    assert evaluated["abstract_infosets"] == data["abstract_infosets"]


def test_refine_can_start_from_a_stored_abstraction(runner, json_output, tmp_path):
    first = tmp_path / "first.h5"
    json_output(runner.invoke(main, ["refine", "GS3", "--target", "0.5", "--out", str(first),
                               "--json"]))
    data = json_output(runner.invoke(main, ["refine", "GS3", "--initial", str(first), "--target",
                                      "0.01", "--json"]))
    assert data["reached"]


def test_refine_rejects_cfr_ira_options_for_fpira(runner):
    result = runner.invoke(main, ["refine", "kuhn", "-a", "fpira", "--kb", "5"])
    assert result.exit_code == 2
    assert result.stderr.startswith("efgkit: error: ") and "cfr+ira only" in result.stderr


def test_refine_rejects_an_abstraction_file_for_another_game(runner, json_output, tmp_path):
    other = tmp_path / "other.h5"
    json_output(runner.invoke(main, ["refine", "kuhn", "--target", "0.5", "--out", str(other),
                               "--json"]))
    before = other.read_bytes()
    result = runner.invoke(main, ["refine", "GS3", "--initial", str(other)])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert other.read_bytes() == before


def test_tradeoff_writes_csv_and_plot(runner, json_output, tmp_path):
    table, picture = tmp_path / "sweep.csv", tmp_path / "sweep.png"
    data = json_output(runner.invoke(main, ["tradeoff", "GS3", "--settings", "B5H20,fpira",
                                      "--seeds", "2", "--target", "0.05", "--csv", str(table),
                                      "--plot", str(picture), "--json"]))
    assert len(data["runs"]) == 3
    with table.open() as handle:
        rows = list(csv.DictReader(handle))
    assert {row["setting"] for row in rows} == {"B5H20 CFR+IRA", "FPIRA"}
    assert picture.read_bytes().startswith(b"\x89PNG")


def test_tradeoff_rejects_a_malformed_setting(runner, tmp_path):
    result = runner.invoke(main, ["tradeoff", "GS3", "--settings", "B10X", "--csv",
                                  str(tmp_path / "x.csv")])
    assert result.exit_code == 2 and "BxHy" in result.stderr


@pytest.mark.parametrize("algorithm", ["cfr+ira", "fpira"])
def test_refine_runs_the_reference_conventions_and_records_them(runner, json_output, algorithm):
    data = json_output(runner.invoke(main, ["refine", "kuhn", "-a", algorithm, "--target", "0.05",
                                      "--conventions", "reference", "--json"]))
    assert data["parameters"]["conventions"] == "reference"
    assert data["reached"]
    result = runner.invoke(main, ["refine", "kuhn", "--conventions", "code"])
    assert result.exit_code == 2 and "code" in result.stderr


def test_fpira_defaults_to_the_reference_conventions_and_cfr_plus_ira_to_the_papers(runner, json_output):
    runs = {algorithm: json_output(runner.invoke(main, ["refine", "GS3", "-a", algorithm, "--target",
                                                        "0.05", "--json"]))
            for algorithm in ("fpira", "cfr+ira")}
    assert runs["fpira"]["conventions"] == runs["fpira"]["parameters"]["conventions"] == "reference"
    assert runs["cfr+ira"]["conventions"] == "paper" and "conventions" not in runs["cfr+ira"]["parameters"]
    paper = json_output(runner.invoke(main, ["refine", "GS3", "-a", "fpira", "--target", "0.05",
                                             "--conventions", "paper", "--json"]))
    assert [h["abstract_infosets"] for h in paper["history"]] != [
        h["abstract_infosets"] for h in runs["fpira"]["history"]]
