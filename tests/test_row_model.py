"""Modelled rows (format 9, flag 32): a bucket strategy's rows on one grid, range-coded under
a context model. Both readers decode exactly the rows written (every grid, block
boundaries, nearly pure and mixed rows), the reach-weighted snapping follows its rule, the
command line writes them, and damaged, truncated or newer files are refused in one line
(the C tool under the address and undefined-behaviour sanitizers, efgs_acpc before it
connects)."""

import random
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_acpc_bot import _always, _c_bot, _match, _python_bot, _within_interval
from test_compact_holdem import (  # the bucket-strategy fixtures and helpers
    C_SOURCES,
    _crcs_resealed,
    _nearly_pure,
    _pipeline_bucket_file,
    _random_decisions,
    c_tools,  # noqa: F401 (a fixture)
    sanitized_query,  # noqa: F401 (a fixture)
)

from efgkit.cli import main
from efgkit.errors import ParameterError
from efgkit.interop.acpc import game_definition
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.streamed.match import HeadToHead
from efgkit.specs import make_game
from efgkit.storage import compact_reader
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy
from efgkit.storage.compact_reader import CompactFormatError, CompactStrategy
from efgkit.storage.compact_writer import largest_remainder
from efgkit.storage.row_model import model_rows
from efgkit.storage.snapped_rows import row_importance, snap_rows


@pytest.fixture(scope="module")
def holdem(tmp_path_factory):
    """holdem(ranks=5) on a pipeline-format bucket file, a nearly pure strategy (most rows
    pure, the others random) and its average-strategy accumulator."""
    folder = tmp_path_factory.mktemp("modelled")
    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(
        game, _pipeline_bucket_file(folder / "b.h5", 5, (7, 30, 40, 50))))
    strategy = _nearly_pure(layout, layout.random(3), share=0.6)
    accumulator = strategy * np.repeat(np.random.default_rng(1).exponential(size=layout.num_rows) ** 3,
                                       np.repeat(layout.width, layout.buckets))
    return folder, layout, strategy, accumulator


@pytest.mark.parametrize("grid", [2, 20, 64, 256])
def test_both_readers_decode_exactly_the_rows_written(holdem, c_tools, grid):  # noqa: F811
    folder, layout, strategy, _ = holdem
    export = export_bucket_strategy(layout, strategy, folder / f"m{grid}.efgs", bits=4, model_grid=grid)
    offsets = layout.row_offsets()
    grid_rows = largest_remainder(strategy, offsets, np.full(layout.num_rows, grid))
    assert np.array_equal(export.weights, grid_rows)
    cases = _random_decisions(layout, export, 400, seed=grid)
    with CompactStrategy(export.path) as reader:
        reader.verify()
        assert reader.version == 9 and reader.modelled and not reader.coded
        assert [reader.quantized(key) for key, _ in cases] == [row for _, row in cases]
    keys = "".join(f"{key}\n" for key, _ in cases)
    result = subprocess.run([str(c_tools / "efgs_query"), "--weights", export.path], input=keys,
                            capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [f"{key}\t{' '.join(map(str, row))}" for key, row in cases]
    verified = subprocess.run([str(c_tools / "efgs_query"), "--verify", export.path], capture_output=True,
                              text=True)
    assert verified.returncode == 0 and verified.stdout.strip() == "ok"


def test_modelled_rows_with_compressed_tables_are_format_10(holdem, c_tools):  # noqa: F811
    """Modelled rows (flag 32) and a recorded bucket rule (flag 64) in one file: format 10,
    both readers decode exactly the rows written."""
    folder, layout, strategy, _ = holdem
    export = export_bucket_strategy(layout, strategy, folder / "m10.efgs", model_grid=32, decode_budget=64)
    cases = _random_decisions(layout, export, 300, seed=10)
    with CompactStrategy(export.path) as reader:
        reader.verify()
        assert reader.version == 10 and reader.modelled
        assert [reader.quantized(key) for key, _ in cases] == [row for _, row in cases]
    keys = "".join(f"{key}\n" for key, _ in cases)
    result = subprocess.run([str(c_tools / "efgs_query"), "--weights", export.path], input=keys,
                            capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [f"{key}\t{' '.join(map(str, row))}" for key, row in cases]


@settings(max_examples=15, deadline=None)
@given(grid=st.integers(2, 256), seed=st.integers(0, 2**31), pure=st.floats(0.0, 1.0))
def test_every_leduc_row_reads_back_on_any_grid(tmp_path_factory, grid, seed, pure):
    """Leduc's lossless buckets (every row of every block read back through the reader's
    block rows, across block boundaries), rows from mixed to pure."""
    game = make_game("leduc")
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    strategy = _nearly_pure(layout, layout.random(seed % 1000), share=pure, seed=seed)
    path = tmp_path_factory.mktemp("leduc") / "m.efgs"
    export = export_bucket_strategy(layout, strategy, path, model_grid=grid)
    with CompactStrategy(str(path)) as reader:
        reader.verify()
        block_rows = reader._model[0]
        read = [row for block in range(-(-reader.num_rows // block_rows)) for row in
                reader._modelled_block(block, min(reader.num_rows, (block + 1) * block_rows) - 1)]
    written = []  # the file's order: betting decisions grouped by their number of actions
    for d in np.argsort(layout.width, kind="stable").tolist():
        block = export.weights[layout.action_start[d]:layout.action_start[d + 1]].reshape(-1, layout.width[d])
        written.extend(tuple(map(int, row)) for row in block)
    assert read == written


def test_the_model_refuses_rows_it_cannot_code():
    offsets = np.array([0, 2, 4])
    with pytest.raises(ParameterError, match="sum to 8"):
        model_rows(np.array([3, 4, 8, 0]), offsets, np.ones(2, bool), 8)
    with pytest.raises(ParameterError, match="2 to 256"):
        model_rows(np.array([1, 0, 1, 0]), offsets, np.ones(2, bool), 1)
    with pytest.raises(ParameterError, match="1 to 4 actions"):
        model_rows(np.full(5, 2), np.array([0, 5]), np.ones(1, bool), 10)


def test_snapping_zeroes_small_actions_of_rarely_reached_rows_only():
    offsets = np.array([0, 3, 6, 8])
    strategy = np.array([0.05, 0.15, 0.8, 0.05, 0.15, 0.8, 0.5, 0.5])
    importance = row_importance(np.array([1.0, 1, 1, 100, 100, 100, 0, 0]), offsets)
    assert np.allclose(importance, [3 / 101, 300 / 101, 0.0])
    snapped = snap_rows(strategy, offsets, importance, 0.004)
    assert np.allclose(snapped[:3], [0, 0.15 / 0.95, 0.8 / 0.95])  # 0.05 < 0.004 / 0.0297 < 0.15
    assert np.allclose(snapped[3:6], strategy[3:6])  # reached: 0.004 / 2.97 is below every action
    assert np.allclose(snapped[6:], [1.0, 0.0])  # never reached: pure, on its first largest action
    assert np.array_equal(snap_rows(strategy, offsets, importance, 0.0), strategy)
    with pytest.raises(ParameterError):
        snap_rows(strategy, offsets, importance, -1.0)
    with pytest.raises(ParameterError):
        row_importance(np.array([1.0, np.nan, 1, 1, 1, 1, 1, 1]), offsets)


def test_snapped_export_plays_the_snapped_rows_on_the_grid(holdem):
    folder, layout, strategy, accumulator = holdem
    offsets = layout.row_offsets()
    importance = row_importance(accumulator, offsets)
    export = export_bucket_strategy(layout, strategy, folder / "snapped.efgs", model_grid=32, snap=0.01,
                                    row_importance=importance)
    expected = largest_remainder(snap_rows(strategy, offsets, importance, 0.01), offsets,
                                 np.full(layout.num_rows, 32))
    assert np.array_equal(export.weights, expected)
    plain = export_bucket_strategy(layout, strategy, folder / "plain.efgs", model_grid=32)
    assert export.bytes < plain.bytes
    with pytest.raises(ParameterError, match="importance"):
        export_bucket_strategy(layout, strategy, folder / "x.efgs", model_grid=32, snap=0.01)
    with pytest.raises(ParameterError, match="not both"):
        export_bucket_strategy(layout, strategy, folder / "x.efgs", model_grid=32, coded=True)


def test_export_model_grid_and_snap_from_the_command_line(holdem, tmp_path, runner, json_output):
    folder, layout, strategy, accumulator = holdem
    path = folder / "strategy.h5"
    save_bucket_strategy(path, layout, strategy, {"algorithm": "random", "iterations": 0},
                         state={"average_accumulator": accumulator})
    out = tmp_path / "m.efgs"
    data = json_output(runner.invoke(main, ["export", str(path), "--out", str(out), "--model-grid", "24",
                                            "--snap", "0.01", "--bucket-tables", "inline", "--json"]))
    assert data["model_grid"] == 24 and data["snap"] == 0.01 and data["bytes"] == out.stat().st_size
    expected = largest_remainder(snap_rows(strategy, layout.row_offsets(), row_importance(
        accumulator, layout.row_offsets()), 0.01), layout.row_offsets(), np.full(layout.num_rows, 24))
    with CompactStrategy(str(out)) as reader:
        reader.verify()
        assert reader.version == 9
        for key, row in _random_decisions(layout, SimpleNamespace(weights=expected), 50, seed=2):
            assert reader.quantized(key) == row
    bare = folder / "bare.h5"
    save_bucket_strategy(bare, layout, strategy, {"algorithm": "random", "iterations": 0})
    for extra, words in ((["--snap", "0.01"], "--snap goes with --model-grid"),
                         (["--model-grid", "24", "--snap", "0.01"], "accumulator"),
                         (["--model-grid", "24", "--coded"], "not both"),
                         (["--model-grid", "1"], "--model-grid")):
        result = runner.invoke(main, ["export", str(bare), "--out", str(tmp_path / "x.efgs"), *extra])
        assert result.exit_code == 2 and words in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_a_reader_of_formats_6_to_8_refuses_format_9_in_one_line(holdem, monkeypatch):
    folder, layout, strategy, _ = holdem
    export = export_bucket_strategy(layout, strategy, folder / "newer.efgs", model_grid=16)
    monkeypatch.setattr(compact_reader, "READ_VERSIONS", (6, 7, 8))
    with pytest.raises(CompactFormatError, match="version 9 is newer than this reader .8.; upgrade"):
        CompactStrategy(export.path)


@pytest.fixture(scope="module")
def sanitized_acpc(tmp_path_factory):
    """efgs_acpc built by ``make sanitize`` (address and undefined-behaviour sanitizers)."""
    if shutil.which("make") is None or (shutil.which("cc") or shutil.which("gcc")) is None:
        pytest.skip("no make or C compiler on this machine")
    folder = tmp_path_factory.mktemp("acpc")
    built = subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={folder}", f"{folder}/efgs_acpc_asan",
                            f"{folder}/efgs_acpc_ubsan"], capture_output=True)
    if built.returncode:
        pytest.skip("this compiler has no address/undefined sanitizers")
    return folder


def test_damaged_modelled_rows_are_one_line_errors_under_sanitizers(holdem, sanitized_query,  # noqa: F811
                                                                     sanitized_acpc, tmp_path):
    """Bytes of the modelled rows flipped (CRCs resealed, so the damage reaches the decoder),
    truncated, or the version raised past the readers': the C tool answers a row summing to the
    grid or refuses in one line under the sanitizers, the Python reader likewise; with the
    CRCs not resealed both refuse the file (verify), and efgs_acpc refuses it before it
    connects."""
    folder, layout, strategy, _ = holdem
    export = export_bucket_strategy(layout, strategy, folder / "damaged-source.efgs", model_grid=48)
    original = Path(export.path).read_bytes()
    keys = [key for key, _ in _random_decisions(layout, export, 60, seed=9)]
    with CompactStrategy(export.path) as reader:
        values_at = reader._values_at
    rng = random.Random(0)
    damaged = [original[:cut] for cut in (len(original) - 1, values_at + 20, values_at + 3)]
    newer = bytearray(original)
    newer[8:10] = (max(compact_reader.READ_VERSIONS) + 1).to_bytes(2, "little")
    damaged.append(_crcs_resealed(newer))
    unsealed = []
    for _ in range(40):
        data = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(values_at, values_at + (len(data) - values_at) // 2)] ^= 1 << rng.randrange(8)
        unsealed.append(bytes(data))
        damaged.append(_crcs_resealed(data))
    for i, data in enumerate(damaged):
        path = tmp_path / f"damaged-{i}.efgs"
        path.write_bytes(data)
        result = subprocess.run([str(sanitized_query), "--weights", str(path)], capture_output=True,
                                text=True, input="".join(f"{key}\n" for key in keys))
        assert result.returncode in (0, 1, 2), result.stderr
        assert "runtime error" not in result.stderr and "Sanitizer" not in result.stderr
        assert all(line.startswith("efgs_query: ") for line in result.stderr.splitlines())
        assert all(sum(map(int, line.split("\t")[1].split())) == 48 for line in result.stdout.splitlines())
        try:
            with CompactStrategy(str(path)) as reader:
                for key in keys:
                    try:
                        assert sum(reader.quantized(key)) == 48
                    except CompactFormatError:
                        continue
        except CompactFormatError as exc:
            assert "\n" not in str(exc)
            if i == 3:
                assert "newer than this reader" in str(exc)
    for i, data in enumerate(unsealed[:10]):
        path = tmp_path / f"unsealed-{i}.efgs"
        path.write_bytes(data)
        if data == original:
            continue
        with pytest.raises(CompactFormatError), CompactStrategy(str(path)) as reader:
            reader.verify()
        result = subprocess.run([str(sanitized_query), "--verify", str(path)], capture_output=True, text=True)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
        for tool in ("efgs_acpc_asan", "efgs_acpc_ubsan"):
            played = subprocess.run([str(sanitized_acpc / tool), str(path), "127.0.0.1", "9"],
                                    capture_output=True, text=True, timeout=60)
            assert played.returncode == 2 and len(played.stderr.strip().splitlines()) == 1, played.stderr


def test_efgs_acpc_plays_a_modelled_file_at_its_exact_duplicate_value(sanitized_acpc, tmp_path):
    """Leduc (lossless buckets): A random, modelled on a grid of 1/64, played by efgs_acpc
    through the dealer against B always raising (the Python bot): 2,000 duplicate hands end
    within the 95% interval of the exact duplicate value of what A's file plays."""
    game = make_game("leduc")
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    a, b = layout.random(0), _always(layout, "raise")
    export = export_bucket_strategy(layout, a, tmp_path / "a.efgs", model_grid=64)
    save_bucket_strategy(tmp_path / "b.h5", layout, b, {"algorithm": "always raise", "iterations": 0})
    exact = HeadToHead(layout, export.dequantized(), layout, b).run().mean
    subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={tmp_path}", f"{tmp_path}/efgs_acpc"],
                   check=True)
    result, _ = _match(game_definition(game), 2000, [_c_bot(tmp_path / "efgs_acpc", export.path, 1),
                                                     _python_bot(tmp_path / "b.h5", game, seed=2)])
    _within_interval(result, exact)
