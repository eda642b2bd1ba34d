"""`efgkit convert` between .efg, ACPC definitions and tree files; `efgkit info efg:PATH`;
one-line errors that name the place in the file and leave existing outputs alone."""

import pytest

from efgkit.cli import main

LEDUC_VALUE = -0.085606424078


def _assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("efgkit: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_convert_has_help_and_json(runner):
    result = runner.invoke(main, ["convert", "--help"])
    assert result.exit_code == 0 and "--json" in result.stdout and "--to" in result.stdout


def test_leduc_through_efg_tree_file_and_back_keeps_the_game(runner, json_output, tmp_path):
    efg, npz, again = tmp_path / "leduc.efg", tmp_path / "leduc.npz", tmp_path / "again.efg"
    data = json_output(runner.invoke(main, ["convert", "leduc", str(efg), "--json"]))
    assert data["input_format"] == "spec" and data["output_format"] == "efg"
    assert data["histories"] == 9457 and data["infosets"] == 936
    assert data["output_bytes"] == efg.stat().st_size > 0
    info = json_output(runner.invoke(main, ["info", f"efg:{efg}", "--json"]))
    assert info["game"] == f"efg:{efg}" and info["histories"] == 9457 and info["infosets"] == 936
    data = json_output(runner.invoke(main, ["convert", str(efg), str(npz), "--json"]))
    assert data["input_format"] == "efg" and data["output_format"] == "tree"
    data = json_output(runner.invoke(main, ["convert", str(npz), str(again), "--json"]))
    assert data["input_format"] == "tree" and data["histories"] == 9457
    solved = json_output(runner.invoke(main, ["solve", f"efg:{again}", "-a", "lp", "--json"]))
    assert solved["game_value"] == pytest.approx(LEDUC_VALUE, abs=1e-9)


def test_acpc_definitions_convert_both_ways(runner, json_output, tmp_path):
    definition = tmp_path / "leduc.game"
    result = runner.invoke(main, ["convert", "leduc", str(definition)])
    assert result.exit_code == 0, result.stderr
    assert "wrote" in result.stdout and "ACPC game definition" in result.stdout
    assert "numBoardCards = 0 1" in definition.read_text()
    data = json_output(runner.invoke(main, ["convert", str(definition), str(tmp_path / "l.efg"),
                                            "--json"]))
    assert data["input_format"] == "acpc" and data["game"] == f"acpc:{definition}"
    solved = json_output(runner.invoke(main, ["solve", f"acpc:{definition}", "-a", "lp", "--json"]))
    assert solved["game_value"] == pytest.approx(LEDUC_VALUE, abs=1e-9)


def test_output_format_can_be_forced(runner, json_output, tmp_path):
    out = tmp_path / "kuhn.txt"
    data = json_output(runner.invoke(main, ["convert", "kuhn", str(out), "--to", "efg", "--json"]))
    assert data["output_format"] == "efg" and out.read_text().startswith("EFG 2 R")


def test_bad_efg_names_the_line_and_leaves_the_output_alone(runner, tmp_path):
    bad, out = tmp_path / "bad.efg", tmp_path / "out.npz"
    bad.write_text('EFG 2 R "" { "a" "b" }\np "" 1 1 "i" { "x" "y" } 0\nt "" 1 "o" { 1 1 }\n')
    out.write_bytes(b"precious")
    result = runner.invoke(main, ["convert", str(bad), str(out)])
    _assert_one_line_error(result, f"{bad}:3:1:", "do not sum to 0")
    assert out.read_bytes() == b"precious"
    _assert_one_line_error(runner.invoke(main, ["info", f"efg:{bad}"]), f"{bad}:3:1:")


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        (["GS3", "{tmp}/g.game"], ["is not a poker game built by efgkit"]),
        (["P111", "{tmp}/p.game"], ["deals ranks"]),
        (["kuhn", "{tmp}/k.dat"], ["cannot tell the format of OUTPUT"]),
        (["{tmp}/missing.efg", "{tmp}/k.npz"], ["missing.efg: cannot read the .efg file"]),
        (["acpc:{tmp}/missing.game", "{tmp}/k.npz"], ["cannot read the ACPC game definition"]),
        (["kuhn", "{tmp}/no/such/dir/k.efg"], ["does not exist"]),
    ],
)
def test_convert_errors_are_one_line(runner, tmp_path, arguments, fragments):
    result = runner.invoke(main, ["convert", *(a.format(tmp=tmp_path) for a in arguments)])
    _assert_one_line_error(result, *fragments)


def test_a_tree_file_declaring_a_huge_array_is_refused_before_reading(runner, tmp_path):
    """A .npz member whose .npy header declares more bytes than the file stores is refused
    before numpy allocates them (here 100 GB from a file of a few KB)."""
    import io
    import zipfile

    import numpy as np

    good, forged = tmp_path / "kuhn.npz", tmp_path / "forged.npz"
    assert runner.invoke(main, ["convert", "kuhn", str(good)]).exit_code == 0
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(forged, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "node_kind.npy":
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": "|i1", "fortran_order": False,
                                                              "shape": (10**11,)})
                data = header.getvalue() + data[len(header.getvalue()):]
            target.writestr(info.filename, data)
    result = runner.invoke(main, ["convert", str(forged), str(tmp_path / "k.efg")])
    _assert_one_line_error(result, "node_kind.npy declares 100,000,000,000 bytes")
