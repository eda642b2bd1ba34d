"""Compressed bucket tables (compact format 10): the C and Python readers return the hold'em
pipeline's bucket for every canonical hand of a reduced deck, the writer refuses a table
that does not decode, the rule picks the smallest affordable method and the file records
it, older readers refuse the format in one line, and damaged or truncated tables are
one-line refusals under the address and undefined-behaviour sanitizers."""

from __future__ import annotations

import random
import shutil
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
from efgkit.cli import main
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.specs import make_game
from efgkit.storage import compact_reader
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy, read_bucket_export
from efgkit.storage.compact_reader import COMPRESSED, CompactFormatError, CompactStrategy
from efgkit.storage.compressed_reader import CompressedRound, pattern_index
from efgkit.storage.compressed_tables import choose_method, compress_table, hand_patterns

C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
BOARDS = (0, 3, 4, 5)


@pytest.fixture(scope="module")
def c_tools(tmp_path_factory):
    if shutil.which("make") is None or (shutil.which("cc") or shutil.which("gcc")) is None:
        pytest.skip("no make or C compiler on this machine")
    folder = tmp_path_factory.mktemp("c")
    subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={folder}", f"{folder}/efgs_buckets"],
                   check=True)
    sanitized = subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={folder}",
                                f"{folder}/efgs_buckets_asan", f"{folder}/efgs_buckets_ubsan"],
                               capture_output=True)
    return folder, sanitized.returncode == 0


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    """holdem(ranks=5) buckets from the real pipeline, exported with compressed tables."""
    folder = tmp_path_factory.mktemp("compressed")
    options = AbstractionOptions(buckets=(25, 30, 40, 50), num_ranks=5, bins=10, seed=0)
    build_abstraction(options, folder / "b.h5")
    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, folder / "b.h5"))
    export = export_bucket_strategy(layout, layout.random(0), folder / "s.efgs", decode_budget=64)
    with BucketLookup(folder / "b.h5") as lookup:
        labels = [np.asarray(table, np.int64) for table in lookup.tables()]
    return folder, layout, export, labels


def _every_hand(board: int) -> np.ndarray:
    indexer = F.hand_indexer(board, 5)
    round_ = 1 if board else 0
    return indexer.unindex(round_, np.arange(indexer.round_size(round_))).astype(np.uint8)


def _c_buckets(tool: Path, path: Path, round_index: int, hands: np.ndarray) -> np.ndarray:
    result = subprocess.run([str(tool), str(path), str(round_index)], input=hands.tobytes(),
                            capture_output=True, check=True)
    return np.frombuffer(result.stdout, "<i4")


def test_the_rule_compresses_every_postflop_street_and_the_file_records_it(pipeline):
    _, _, export, _ = pipeline
    methods = {r["street"]: r["method"] for r in export.computed}
    assert methods == {"preflop": "table", "flop": "compressed", "turn": "compressed", "river": "compressed"}
    assert all(r["compressed_bytes"] < r["table_bytes"] for r in export.computed[1:])
    with CompactStrategy(export.path) as strategy:
        assert strategy.version == 10
        assert strategy.card_table.rule == (0, 64)
        assert strategy.card_table.methods[1:] == [COMPRESSED] * 3


@pytest.mark.parametrize("round_index", [0, 1, 2, 3])
def test_the_c_reader_returns_the_pipelines_bucket_for_every_canonical_hand(pipeline, c_tools, round_index):
    _, _, export, labels = pipeline
    hands = _every_hand(BOARDS[round_index])
    got = _c_buckets(c_tools[0] / "efgs_buckets", Path(export.path), round_index, hands)
    np.testing.assert_array_equal(got, labels[round_index])


@pytest.mark.parametrize("round_index", [1, 2, 3])
def test_the_python_reader_returns_the_pipelines_bucket(pipeline, round_index):
    _, _, export, labels = pipeline
    hands = _every_hand(BOARDS[round_index])
    step = (1, 3, 11)[round_index - 1]  # every flop hand, a third of the turn's, an eleventh of the river's
    with CompactStrategy(export.path) as strategy:
        for row in range(0, hands.shape[0], step):
            hand, board = sorted(hands[row, :2].tolist()), hands[row, 2:].tolist()
            assert strategy.card_table.bucket(round_index, hand, board) == labels[round_index][row]


def test_the_readers_pattern_is_the_writers():
    rng = np.random.default_rng(0)
    for board in BOARDS:
        hands = np.array([rng.choice(52, 2 + board, replace=False) for _ in range(300)], np.int8)
        for flush in (False, True):
            expected = [pattern_index(h[:2].tolist(), h[2:].tolist(), 13, flush) for h in hands]
            np.testing.assert_array_equal(hand_patterns(hands, 13, flush), expected)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), block=st.sampled_from([1, 7, 64, 300]), flush=st.booleans(),
       buckets=st.sampled_from([1, 2, 9, 200]), noise=st.floats(0, 1))
def test_any_table_decodes_to_its_buckets(seed, block, flush, buckets, noise):
    """Tables of any structure (from a function of the rank pattern to noise) round-trip
    through the writer and the Python reader."""
    rng = np.random.default_rng(seed)
    hands = _every_hand(3)
    patterns = hand_patterns(hands.astype(np.int8), 5, False)
    labels = (patterns * 7919) % buckets
    noisy = rng.random(labels.shape[0]) < noise
    labels[noisy] = rng.integers(0, buckets, int(noisy.sum()))
    table = compress_table(labels, buckets, 5, 3, block_entries=block, flush_states=flush)
    reader = CompressedRound(table.data, 0, len(table.data), buckets=buckets, entries=labels.shape[0],
                             num_ranks=5, board=3)
    for row in rng.choice(labels.shape[0], 60, replace=False):
        hand, board = sorted(hands[row, :2].tolist()), hands[row, 2:].tolist()
        assert reader.bucket(hand, board, int(row)) == labels[row]


def test_the_rule_takes_the_smallest_affordable_method(pipeline):
    _, _, export, labels = pipeline
    table = compress_table(labels[3], 50, 5, 5)
    packed = (labels[3].shape[0] * 6 + 7) // 8
    assert choose_method(packed, table, None, None, budget=0, decode_budget=64) == "compressed"
    assert choose_method(packed, table, None, None, budget=0, decode_budget=63) == "table"
    assert choose_method(packed, table, 100, 79, budget=79, decode_budget=64) == "computed"
    assert choose_method(packed, table, 100, 79, budget=78, decode_budget=64) == "compressed"
    # a tie keeps the cheaper lookup
    assert choose_method(100, table, 100, 79, budget=79, decode_budget=64) == "table"


def test_with_computed_buckets_the_rule_weighs_all_three(pipeline, tmp_path):
    folder, layout, _, labels = pipeline
    export = export_bucket_strategy(layout, layout.random(0), tmp_path / "r.efgs", compute_budget=2000,
                                    decode_budget=64)
    by_street = {r["street"]: r for r in export.computed}
    assert by_street["river"]["method"] == "computed"  # 79 evaluations, a description of ~1 KB
    assert by_street["flop"]["method"] == "compressed"  # 8,295 evaluations: over the budget
    with CompactStrategy(export.path) as strategy:
        assert strategy.card_table.rule == (2000, 64)
        hands = _every_hand(5)
        for row in range(0, hands.shape[0], 997):
            hand, board = sorted(hands[row, :2].tolist()), hands[row, 2:].tolist()
            assert strategy.card_table.bucket(3, hand, board) == labels[3][row]


def test_older_readers_refuse_format_10_in_one_line(pipeline, monkeypatch, tmp_path):
    """The Python reader of versions 6 to 8 says "newer than this reader"; the C reader of
    the commit before format 10 returns its version error (one line, exit code 2); version 9
    (another helper's format) is refused by this reader."""
    _, _, export, _ = pipeline
    monkeypatch.setattr(compact_reader, "READ_VERSIONS", (6, 7, 8))
    with pytest.raises(CompactFormatError, match="newer than this reader"):
        CompactStrategy(export.path)
    monkeypatch.undo()
    compiler = shutil.which("cc") or shutil.which("gcc")
    git = shutil.which("git")
    root = C_SOURCES.parents[2]
    if compiler is None or git is None or not (root / ".git").exists():
        pytest.skip("no compiler or no git history")
    old = tmp_path / "old"
    old.mkdir()
    for name in ("efgs.c", "efgs.h", "efgs_computed.c", "efgs_buckets.c"):
        source = subprocess.run([git, "-C", str(root), "show", f"fad1028:efgkit/storage/efgs_c/{name}"],
                                capture_output=True)
        if source.returncode != 0:
            pytest.skip("the commit before format 10 is not in this history")
        (old / name).write_bytes(source.stdout)
    subprocess.run([compiler, "-std=c99", "-O1", *(str(old / n) for n in ("efgs.c", "efgs_computed.c",
                                                                           "efgs_buckets.c")),
                    "-o", str(old / "efgs_buckets")], check=True)
    result = subprocess.run([str(old / "efgs_buckets"), export.path, "1"], input=b"", capture_output=True)
    assert result.returncode == 2 and len(result.stderr.decode().splitlines()) == 1
    assert "version" in result.stderr.decode()


def _resealed(data: bytearray) -> bytes:
    spec_end = compact_reader.HEADER.size + int.from_bytes(
        data[compact_reader.HEADER.size - 2:compact_reader.HEADER.size], "little")
    data[108:112] = zlib.crc32(bytes(data[spec_end:])).to_bytes(4, "little")
    data[112:116] = compact_reader.header_crc(bytes(data[:spec_end])).to_bytes(4, "little")
    return bytes(data)


def test_damaged_tables_are_one_line_refusals_under_sanitizers(pipeline, c_tools, tmp_path):
    """Bytes of the compressed tables flipped (checksums resealed, so the damage reaches
    them), a version 9 header, or the file cut: each sanitized C tool exits cleanly with at
    most one line on stderr and no sanitizer report, and answers only buckets in range; the
    Python reader answers a bucket in range or refuses in one line."""
    folder, tool_ok = c_tools
    if not tool_ok:
        pytest.skip("this compiler has no address/undefined sanitizers")
    _, _, export, _ = pipeline
    original = Path(export.path).read_bytes()
    cards_at = compact_reader.HEADER.unpack_from(original, 0)[19]
    with CompactStrategy(export.path) as strategy:
        end = cards_at + strategy.card_table.size  # the compressed tables end the card table
    first = end - sum(r["compressed_bytes"] for r in export.computed[1:])
    rng = random.Random(0)
    hands = {r: _every_hand(BOARDS[r])[::97] for r in (1, 3)}
    versioned = bytearray(original)
    versioned[8:10] = (9).to_bytes(2, "little")
    damaged = [original[:cut] for cut in (len(original) - 3, first + 40)] + [_resealed(versioned)]
    for _ in range(30):
        data = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(first, end)] ^= 1 << rng.randrange(8)
        damaged.append(_resealed(data))
    for i, data in enumerate(damaged):
        path = tmp_path / f"damaged-{i}.efgs"
        path.write_bytes(data)
        for round_index, round_hands in hands.items():
            for tool in ("efgs_buckets_asan", "efgs_buckets_ubsan"):
                result = subprocess.run([str(folder / tool), str(path), str(round_index)],
                                        input=round_hands.tobytes(), capture_output=True)
                assert result.returncode in (0, 2), result.stderr
                lines = result.stderr.decode().splitlines()
                assert len(lines) <= 1 and all(line.startswith("efgs_buckets: ") for line in lines), lines
                if result.returncode == 0:
                    got = np.frombuffer(result.stdout, "<i4")
                    assert got.shape[0] == round_hands.shape[0]
                    assert got.max() < (30, 50)[round_index == 3]  # or a negative status
        try:
            with CompactStrategy(str(path)) as strategy:
                for row in range(0, hands[3].shape[0], 40):
                    hand, board = sorted(hands[3][row, :2].tolist()), hands[3][row, 2:].tolist()
                    assert 0 <= strategy.card_table.bucket(3, hand, board) < 50
        except CompactFormatError as exc:
            assert "\n" not in str(exc)


def test_export_compress_tables_reports_the_rule(pipeline, runner, json_output, tmp_path):
    """``efgkit export --compress-tables HANDS --json``: every street's method, its three
    sizes and the rule's parameters; a non-bucket strategy is refused in one line."""
    folder, layout, _, _ = pipeline
    save_bucket_strategy(folder / "strategy.h5", layout, layout.random(0),
                         {"algorithm": "random", "iterations": 0})
    data = json_output(runner.invoke(main, ["export", str(folder / "strategy.h5"), "--out",
                                            str(tmp_path / "s.efgs"), "--compress-tables", "64", "--json"]))
    assert data["bucket_rule"] == {"evaluations": 0, "decoded_hands": 64}
    assert [(r["street"], r["method"]) for r in data["computed_buckets"]] == [
        ("preflop", "table"), ("flop", "compressed"), ("turn", "compressed"), ("river", "compressed")]
    assert all(r["compressed_bytes"] > 0 and r["table_bytes"] > 0 for r in data["computed_buckets"])
    result = runner.invoke(main, ["export", str(folder / "strategy.h5"), "--out", str(tmp_path / "t.efgs"),
                                  "--compress-tables", "0"])
    assert result.exit_code == 2


def test_a_compressed_export_reads_back_as_its_tables(pipeline, tmp_path):
    """``read_bucket_export`` (what ``efgkit play --against`` plays) decodes the compressed
    tables whole: the same abstraction and rows as the packed export of the same strategy."""
    _, layout, export, labels = pipeline
    game = layout.betting.game
    packed = export_bucket_strategy(layout, layout.random(0), tmp_path / "packed.efgs")
    compressed_layout, compressed_rows = read_bucket_export(export.path, game)
    packed_layout, packed_rows = read_bucket_export(packed.path, game)
    for r in range(4):
        np.testing.assert_array_equal(compressed_layout.abstraction.tables[r], labels[r])
    np.testing.assert_array_equal(compressed_rows, packed_rows)
