"""`efgkit cards`, `solve --abstraction` and `refine --initial ABS.h5`: JSON keys, files, bad input."""

import pytest

from efgkit.cli import main


def test_cards_reports_buckets_and_abstract_infosets(runner, json_output, tmp_path):
    out, picture = tmp_path / "burch.h5", tmp_path / "burch.png"
    data = json_output(runner.invoke(main, ["cards", "leduc", "--feature", "ehs", "--buckets", "3,3",
                                            "--recall", "perfect", "--out", str(out), "--plot",
                                            str(picture), "--json"]))
    assert data["buckets"] == [3, 3] and data["situations"] == [6, 30]
    assert data["abstract_infosets"] == 228 and data["original_infosets"] == 936
    assert picture.read_bytes()[:4] == b"\x89PNG"
    solved = json_output(runner.invoke(main, ["solve", "leduc", "--abstraction", str(out), "-n", "1000",
                                              "-k", "500", "--json"]))
    assert solved["abstract_infosets"] == 228
    assert solved["nash_conv"] == pytest.approx(2 * 0.3823, abs=2e-3)  # Burch's 0.382 chips/game
    refined = json_output(runner.invoke(main, ["refine", "leduc", "--initial", str(out), "--target", "0.5",
                                               "--json"]))
    assert refined["reached"] and refined["abstract_infosets"] >= 228


@pytest.mark.parametrize("feature", ["ehs2", "hist", "ochs", "pa"])
def test_cards_features_on_a_bigger_deck(runner, json_output, feature):
    data = json_output(runner.invoke(main, ["cards", "leduc(ranks=6,suits=2)", "-f", feature, "-b", "4,all",
                                            "--restarts", "2", "--json"]))
    assert data["buckets"][0] <= 4 and data["buckets"][1] == data["situations"][1]
    assert data["abstract_infosets"] < data["original_infosets"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["cards", "GS3", "-b", "3"], "not one"),
        (["cards", "leduc", "-b", "3,40"], "1 to 30 buckets"),
        (["cards", "leduc", "-b", "3,x"], "not a bucket count"),
        (["cards", "leduc", "-b", "3,3,3"], "one count per round"),
        (["cards", "leduc", "-f", "hist", "--method", "percentile", "-b", "3"], "scalar feature"),
    ],
)
def test_cards_rejects_bad_input_in_one_line(runner, arguments, message):
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("efgkit: error: ") and message in result.stderr


def test_solve_and_refine_refuse_an_abstraction_for_another_game(runner, json_output, tmp_path):
    out = tmp_path / "kuhn.h5"
    json_output(runner.invoke(main, ["cards", "kuhn", "-b", "2", "--out", str(out), "--json"]))
    for arguments in (["solve", "leduc", "--abstraction", str(out)],
                      ["refine", "leduc", "--initial", str(out)],
                      ["solve", "kuhn", "-a", "lp", "--abstraction", str(out)]):
        result = runner.invoke(main, arguments)
        assert result.exit_code == 2 and result.stderr.startswith("efgkit: error: ")
