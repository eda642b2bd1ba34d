"""Compact export of bucket strategies (hold'em and the limit-poker family): the standard-
library and C ports of Waugh's canonical index equal the numba indexer, both readers answer
"hole cards, board, betting" with the strategy's quantized rows on canonical, lossless,
card-independent and pipeline-bucket-file abstractions, and a missing, other or damaged
bucket-table file is one clear error."""

import ctypes
import random
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup, StreetBuckets, save_buckets
from efgkit.abstraction.cards.holdem.deck import Deck
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.cli import main
from efgkit.games.poker import Betting
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import (
    CardIndependent,
    IsomorphicCards,
    LosslessCards,
)
from efgkit.specs import load_game, make_game
from efgkit.storage import compact_reader
from efgkit.storage.bucket_strategy import load_bucket_strategy, save_bucket_strategy
from efgkit.storage.compact_holdem import (
    bucket_table_file_bytes,
    export_bucket_strategy,
    planned_bytes,
)
from efgkit.storage.compact_reader import CanonicalIndex, CompactFormatError, CompactStrategy
from efgkit.storage.compact_writer import row_codes

C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
STREETS = ("preflop", "flop", "turn", "river")


@pytest.fixture(scope="module")
def c_tools(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on this machine")
    folder = tmp_path_factory.mktemp("c")
    sources = [str(C_SOURCES / name) for name in ("efgs.c", "efgs_computed.c", "efgs_compressed.c")]
    subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2", *sources,
                    str(C_SOURCES / "efgs_query.c"), "-o", str(folder / "efgs_query")], check=True)
    subprocess.run([compiler, "-std=c99", "-O2", "-shared", "-fPIC", *sources, "-o",
                    str(folder / "libefgs.so")], check=True)
    return folder


def _random_hands(rng, ranks, cards, count=150):
    return [rng.sample(range(4 * ranks), cards) for _ in range(count)]


@pytest.mark.parametrize("ranks", range(5, 14))
def test_python_canonical_index_equals_the_numba_indexer_every_round(ranks):
    rng = random.Random(ranks)
    for board in (0, 3, 4, 5):
        numba_indexer = hand_indexer(board, ranks)
        ported = CanonicalIndex((2, board) if board else (2,), ranks)
        assert ported.size == numba_indexer.round_size(numba_indexer.num_rounds - 1)
        hands = _random_hands(rng, ranks, 2 + board)
        assert [ported.index(hand) for hand in hands] == numba_indexer.index(np.array(hands)).tolist()


def test_c_canonical_index_equals_the_numba_indexer_every_round_and_deck(c_tools):
    library = ctypes.CDLL(str(c_tools / "libefgs.so"))
    library.efgs_canonical_index.restype = ctypes.c_uint64
    indexer = ctypes.create_string_buffer(1 << 15)  # larger than efgs_canonical
    rng = random.Random(0)
    for ranks in range(5, 14):
        for board in (0, 3, 4, 5):
            assert library.efgs_canonical_init(indexer, 2, board, ranks) == 0
            hands = _random_hands(rng, ranks, 2 + board)
            ported = [library.efgs_canonical_index(indexer, (ctypes.c_uint * 7)(*hand)) for hand in hands]
            assert ported == hand_indexer(board, ranks).index(np.array(hands)).tolist(), (ranks, board)


# ------------------------------------------------------------------ exports and lookups
def _key(game, betting, node, hole, board, card_name=None):
    """The infoset key of a deal; cards named by ``card_name`` (default: the game's names)."""
    structure = game.card_structure
    names = [(card_name or structure.card_name)(card) for card in range(structure.num_cards)]
    sizes, parts, at = structure.public_cards_per_round[1:int(betting.round[node]) + 1], [], 0
    for size in sizes:
        parts.append("".join(names[c] for c in board[at:at + size]))
        at += size
    field = "card" if structure.private_cards_per_player == 1 else "cards"
    bets = game.betting_text(Betting(betting.histories[node], (0, 0), 0))
    return (f"P{betting.kind[node]} {field}={''.join(names[c] for c in hole)} "
            f"board={'/'.join(parts) or '-'} bets={bets}")


def _random_decisions(layout, export, count, seed):
    """(key, the quantized row of its (decision, bucket)) for random deals and decisions,
    the bucket from the abstraction itself."""
    betting, game = layout.betting, layout.betting.game
    structure = game.card_structure
    hands = betting.hands()[0]
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        decision = rng.randrange(betting.decision_nodes.shape[0])
        node = int(betting.decision_nodes[decision])
        dealt = sum(structure.public_cards_per_round[:int(betting.round[node]) + 1])
        cards = rng.sample(range(structure.num_cards), structure.private_cards_per_player + dealt)
        private = structure.private_cards_per_player
        hole, board = sorted(cards[:private]), cards[private:]
        hand = int(np.flatnonzero((hands == hole).all(axis=1))[0])
        round_index = int(betting.round[node])
        bucket = int(layout.abstraction.buckets(round_index, np.array(board, np.int64), hands)[hand])
        start = layout.action_start[decision] + bucket * layout.width[decision]
        row = tuple(int(w) for w in export.weights[start:start + layout.width[decision]])
        cases.append((_key(game, betting, node, rng.sample(hole, len(hole)), board), row))
    return cases


def _pipeline_bucket_file(path, ranks, buckets, seed=0):
    """A hold'em pipeline bucket file (the format efgkit holdem-abstraction writes) with
    random buckets: built in milliseconds instead of clustered."""
    rng = np.random.default_rng(seed)
    streets = []
    for r, (street, count) in enumerate(zip(STREETS, buckets, strict=True)):
        indexer = hand_indexer(sum((0, 3, 1, 1)[:r + 1]), ranks)
        size = indexer.round_size(indexer.num_rounds - 1)
        labels = np.concatenate([np.arange(count), rng.integers(0, count, size - count)])
        streets.append(StreetBuckets(street, labels, np.zeros((count, 1)), "random", "none", 0.0, seed))
    save_buckets(path, ranks, streets, {"test": True})
    return path


def _nearly_pure(layout, strategy, share=0.8, seed=0):
    """``strategy`` with a random ``share`` of its rows made pure (a converged strategy's
    shape), so coded rows hold dictionary rows, escapes and pure rows alike."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(np.repeat(layout.width, layout.buckets))])
    result = strategy.copy()
    for row in np.flatnonzero(rng.random(offsets.shape[0] - 1) < share):
        result[offsets[row]:offsets[row + 1]] = 0.0
        result[offsets[row] + rng.integers(offsets[row + 1] - offsets[row])] = 1.0
    return result


@pytest.fixture(scope="module")
def holdem_exports(tmp_path_factory):
    """Exports on holdem(ranks=5) (a pipeline bucket file: tables inline and in a bucket-
    table file) and holdem(ranks=5,rounds=2) (canonical: the index itself)."""
    folder = tmp_path_factory.mktemp("holdem")
    game = make_game("holdem(ranks=5)")
    bucket_file = _pipeline_bucket_file(folder / "b.h5", 5, (7, 30, 40, 50))
    buckets = IsomorphicCards.from_bucket_file(game, bucket_file)
    layout = BucketLayout(BettingTree(game), buckets)
    strategy = layout.random(0)
    small = make_game("holdem(ranks=5,rounds=2)")
    canonical = BucketLayout(BettingTree(small), IsomorphicCards.canonical(small))
    return {
        "inline": (layout, export_bucket_strategy(layout, strategy, folder / "inline.efgs", bits=8)),
        "external": (layout, export_bucket_strategy(layout, strategy, folder / "external.efgs", bits=16,
                                                    bucket_tables=str(folder / "tables.efgb"))),
        "canonical": (canonical, export_bucket_strategy(canonical, canonical.random(1),
                                                        folder / "canonical.efgs", bits=4)),
        "coded": (layout, export_bucket_strategy(layout, _nearly_pure(layout, strategy),
                                                 folder / "coded.efgs", bits=8, coded=True)),
        "strategy": strategy,
    }


@pytest.fixture(scope="module")
def leduc_exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("leduc")
    game = make_game("leduc")
    betting = BettingTree(game)
    exports = {}
    for name, abstraction in (("lossless", LosslessCards(game)), ("none", CardIndependent())):
        layout = BucketLayout(betting, abstraction)
        exports[name] = (layout, export_bucket_strategy(layout, layout.random(2), folder / f"{name}.efgs"))
    return exports


def _check_both_readers(path, cases, c_tools):
    with CompactStrategy(str(path)) as strategy:
        assert [strategy.quantized(key) for key, _ in cases] == [row for _, row in cases]
    if c_tools is None:
        return
    result = subprocess.run([str(c_tools / "efgs_query"), "--weights", str(path)], capture_output=True,
                            text=True, check=True, input="".join(f"{key}\n" for key, _ in cases))
    assert result.stdout.splitlines() == [f"{key}\t{' '.join(map(str, row))}" for key, row in cases]


@pytest.mark.parametrize("name", ["inline", "external", "canonical", "coded"])
def test_both_readers_give_the_quantized_rows_of_random_holdem_deals(holdem_exports, c_tools, name):
    layout, export = holdem_exports[name]
    _check_both_readers(export.path, _random_decisions(layout, export, 300, seed=len(name)), c_tools)


@pytest.mark.parametrize("name", ["lossless", "none"])
def test_both_readers_answer_every_leduc_infoset_of_a_bucket_strategy(leduc_exports, c_tools, name):
    layout, export = leduc_exports[name]
    _check_both_readers(export.path, _random_decisions(layout, export, 200, seed=3), c_tools)
    tree = load_game("leduc")  # every infoset of the game has its row
    with CompactStrategy(export.path) as strategy:
        assert all(strategy.row_of(key) >= 0 for key in tree.infoset_keys)


def _row(layout, export, decision, bucket):
    start = layout.action_start[decision] + bucket * layout.width[decision]
    return tuple(int(w) for w in export.weights[start:start + layout.width[decision]])


def test_a_hand_named_by_the_bucket_file_reads_its_bucket_in_both_readers(holdem_exports, c_tools):
    """holdem(ranks=5) is the deck T-A wherever it is named: a key spelling a deal as the
    bucket file names it ("AsAh", issue 30) reads the row of the bucket file's bucket."""
    layout, export = holdem_exports["inline"]
    betting, game = layout.betting, layout.betting.game
    rng = random.Random(30)
    cases = []
    with BucketLookup(layout.abstraction.reference["path"]) as lookup:
        deck = lookup.deck
        for case in range(300):
            decision = 0 if case == 0 else rng.randrange(betting.decision_nodes.shape[0])
            node = int(betting.decision_nodes[decision])
            round_index = int(betting.round[node])
            cards = rng.sample(range(deck.num_cards), 2 + (0, 3, 4, 5)[round_index])
            hole, board = (deck.parse("AsAh").tolist(), []) if case == 0 else (cards[:2], cards[2:])
            bucket = lookup.bucket(round_index, deck.format(hole), deck.format(board))
            key = _key(game, betting, node, hole, board, deck.card_text)
            cases.append((key, _row(layout, export, decision, bucket)))
    assert cases[0][0].startswith(f"P{int(betting.kind[betting.decision_nodes[0]])} cards=AsAh ")
    _check_both_readers(export.path, cases, c_tools)


@pytest.mark.parametrize("ranks", range(5, 14))
def test_every_reduced_deck_names_its_hands_alike_in_the_bucket_tool_and_both_readers(ranks, c_tools,
                                                                                      tmp_path):
    """Every hole pair of holdem(ranks=N), named as the bucket tool names it, reads in both
    readers the row of the canonical hand the bucket tool's indexer gives it."""
    game = make_game(f"holdem(ranks={ranks},rounds=1)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))
    export = export_bucket_strategy(layout, layout.random(ranks), tmp_path / "s.efgs", bits=8)
    deck, betting = Deck(ranks), layout.betting
    holes = np.array([[a, b] for a in range(deck.num_cards) for b in range(a + 1, deck.num_cards)])
    buckets = layout.abstraction.tables[0][hand_indexer(0, ranks).index(holes)]
    node = int(betting.decision_nodes[0])
    cases = [(_key(game, betting, node, hole.tolist(), [], deck.card_text), _row(layout, export, 0, int(b)))
             for hole, b in zip(holes, buckets, strict=True)]
    _check_both_readers(export.path, cases, c_tools)


def test_quantized_rows_sum_to_the_total_and_move_less_than_a_step(holdem_exports):
    layout, export = holdem_exports["inline"]
    row_starts = np.concatenate([[0], np.cumsum(np.repeat(layout.width, layout.buckets))])[:-1]
    sums = np.add.reduceat(export.weights, row_starts)
    totals = row_codes(np.append(row_starts, export.weights.shape[0]), 8)[1]
    assert np.all(sums == totals) and np.all(export.totals == np.repeat(totals, np.diff(
        np.append(row_starts, export.weights.shape[0]))))
    assert export.max_abs_error < 1 / totals.min()
    assert np.abs(export.dequantized() - holdem_exports["strategy"]).max() == export.max_abs_error


def test_tables_go_inline_or_once_into_a_bucket_table_file(holdem_exports, tmp_path):
    layout, inline = holdem_exports["inline"]
    _, external = holdem_exports["external"]
    assert inline.bucket_tables_path is None and external.bucket_tables_written
    table_bytes = inline.card_table_bytes - external.card_table_bytes
    assert table_bytes > 0 and external.bucket_tables_bytes >= table_bytes
    # the same tables again: the file is not rewritten; other tables: refused
    again = export_bucket_strategy(layout, holdem_exports["strategy"],
                                   Path(external.path).with_name("again.efgs"),
                                   bucket_tables=external.bucket_tables_path)
    assert not again.bucket_tables_written
    other = BucketLayout(layout.betting, IsomorphicCards.hashed(layout.betting.game, (3, 4, 5, 6), 1))
    with pytest.raises(Exception, match="holds other bucket tables"):
        export_bucket_strategy(other, other.random(0), Path(external.path).with_name("other.efgs"),
                               bucket_tables=external.bucket_tables_path)


@pytest.mark.parametrize("name", ["external", "canonical"])
def test_planned_bytes_are_the_bytes_written(holdem_exports, name):
    layout, export = holdem_exports[name]
    tables = Path(export.bucket_tables_path).name if export.bucket_tables_path else None
    assert planned_bytes(layout, bits=export.bits, tables_name=tables) == export.bytes


def test_a_52_card_bucket_table_file_size_is_computed_not_built():
    game = make_game("holdem")
    size = bucket_table_file_bytes(game, (169, 1000, 1000, 1000))
    entries = (169, 1_286_792, 13_960_050, 123_156_254)
    packed = sum(e * b for e, b in zip(entries, (8, 10, 10, 10), strict=True)) / 8
    assert size == pytest.approx(packed, abs=200)


def test_the_python_reader_needs_no_numpy_for_a_holdem_file(holdem_exports):
    layout, export = holdem_exports["external"]
    key, row = _random_decisions(layout, export, 1, seed=9)[0]
    script = (
        "import importlib.util, sys; sys.modules['numpy'] = None\n"
        f"spec = importlib.util.spec_from_file_location('reader', {compact_reader.__file__!r})\n"
        "reader = importlib.util.module_from_spec(spec); spec.loader.exec_module(reader)\n"
        f"print(reader.CompactStrategy({export.path!r}).quantized({key!r}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == str(row)


# ------------------------------------------------------------------ bad bucket-table files
def _copy_with_tables(tmp_path, export, change):
    """The external export and its bucket-table file copied to tmp_path, the table file changed."""
    shutil.copy(export.path, tmp_path / "s.efgs")
    tables = tmp_path / Path(export.bucket_tables_path).name
    data = bytearray(Path(export.bucket_tables_path).read_bytes())
    change(data, tables)
    return tmp_path / "s.efgs"


@pytest.mark.parametrize("change, message", [
    (lambda data, path: None, "missing"),
    (lambda data, path: path.write_bytes(bytes(data[:-1])), "sha256 differs"),
    (lambda data, path: path.write_bytes(bytes(data[:-1]) + bytes([data[-1] ^ 1])), "sha256 differs"),
])
def test_a_missing_or_other_bucket_table_file_is_one_clear_error(tmp_path, holdem_exports, c_tools, change,
                                                                 message):
    path = _copy_with_tables(tmp_path, holdem_exports["external"][1], change)
    with pytest.raises(CompactFormatError, match=message) as raised:
        CompactStrategy(str(path))
    assert "\n" not in str(raised.value)
    result = subprocess.run([str(c_tools / "efgs_query"), str(path)], input="", capture_output=True,
                            text=True)
    assert result.returncode == 2 and "bucket-table file" in result.stderr
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("fifo", ["strategy", "bucket tables"])
def test_a_fifo_is_refused_by_both_readers_before_it_is_opened(tmp_path, holdem_exports, c_tools, fifo):
    """A FIFO named like the strategy or its bucket-table file: opening it would block until a
    writer comes (run in children, so a hang fails the test instead of stopping it)."""
    import os

    _, export = holdem_exports["external"]
    path, tables = tmp_path / "s.efgs", tmp_path / Path(export.bucket_tables_path).name
    if fifo == "strategy":
        os.mkfifo(path)
    else:
        shutil.copy(export.path, path)
        os.mkfifo(tables)
    script = f"from efgkit.storage.compact_reader import CompactStrategy; CompactStrategy({str(path)!r})"
    python = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert python.returncode == 1 and "not a regular file" in python.stderr.splitlines()[-1]
    for arguments in (["--verify", str(path)], [str(path)]):
        result = subprocess.run([str(c_tools / "efgs_query"), *arguments], input="", capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 2 and "regular file" in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_the_readers_take_a_moved_bucket_table_file(tmp_path, holdem_exports):
    _, export = holdem_exports["external"]
    moved = tmp_path / "elsewhere.efgb"
    shutil.copy(export.bucket_tables_path, moved)
    shutil.copy(export.path, tmp_path / "s.efgs")
    with CompactStrategy(str(tmp_path / "s.efgs"), bucket_tables=str(moved)) as strategy:
        assert strategy.card_table.external is not None


def _resealed_efgs(data: bytearray) -> bytes:
    """The .efgs bytes with their payload and header CRCs recomputed, as a forger would."""
    header_end = compact_reader.HEADER.size + int.from_bytes(data[compact_reader.HEADER.size - 2:
                                                                   compact_reader.HEADER.size], "little")
    payload_crc_at = compact_reader.HEADER_CRC_OFFSET - 4
    data[payload_crc_at:payload_crc_at + 4] = zlib.crc32(bytes(data[header_end:])).to_bytes(4, "little")
    data[compact_reader.HEADER_CRC_OFFSET:compact_reader.HEADER_CRC_OFFSET + 4] = compact_reader.header_crc(
        bytes(data[:header_end])).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_a_bucket_table_file_named_with_a_folder_is_never_followed(tmp_path, holdem_exports, c_tools, where):
    """A .efgs names its bucket-table file; both readers look for that name beside it and
    refuse a name with a folder (here leading to the right tables elsewhere) in one line."""
    layout, _ = holdem_exports["external"]
    folder = tmp_path / "run"
    folder.mkdir()
    name = "t" * 200 + ".efgb"
    export_bucket_strategy(layout, holdem_exports["strategy"], folder / "s.efgs", bits=16,
                           bucket_tables=str(folder / name))
    elsewhere = tmp_path / "elsewhere" / "tables.efgb"
    elsewhere.parent.mkdir()
    (folder / name).rename(elsewhere)
    head, tail = ("", str(elsewhere)) if where == "absolute" else ("..", "elsewhere/tables.efgb")
    forged = head + "/" * (len(name) - len(head) - len(tail)) + tail  # as long as the name: "//" is "/"
    data = bytearray((folder / "s.efgs").read_bytes())
    at = data.index(name.encode())
    data[at:at + len(name)] = forged.encode()
    (folder / "s.efgs").write_bytes(_resealed_efgs(data))
    with pytest.raises(CompactFormatError, match="not a plain file name") as raised:
        CompactStrategy(str(folder / "s.efgs"))
    assert "\n" not in str(raised.value)
    result = subprocess.run([str(c_tools / "efgs_query"), "--verify", str(folder / "s.efgs")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "bucket-table file" in result.stderr
    with CompactStrategy(str(folder / "s.efgs"), bucket_tables=str(elsewhere)) as strategy:
        strategy.verify()  # a file elsewhere is named by the user


# ------------------------------------------------------------------ command line
@pytest.fixture(scope="module")
def strategy_file(holdem_exports):
    """A bucket strategy beside its bucket file (where readers look for it)."""
    layout, _ = holdem_exports["inline"]
    path = Path(layout.abstraction.reference["path"]).parent / "strategy.h5"
    save_bucket_strategy(path, layout, holdem_exports["strategy"], {"algorithm": "random", "iterations": 0})
    return path


def test_export_writes_a_bucket_strategy_and_its_tables(tmp_path, runner, json_output, strategy_file,
                                                        holdem_exports):
    out = tmp_path / "s.efgs"
    data = json_output(runner.invoke(main, ["export", str(strategy_file), "--out", str(out),
                                            "--bucket-tables", str(tmp_path / "t.efgb"), "--json"]))
    assert data["bytes"] == out.stat().st_size and data["bucket_tables_written"]
    assert data["rows"] == holdem_exports["inline"][1].rows and data["betting_histories"] == 6378
    with CompactStrategy(str(out)) as strategy, CompactStrategy(holdem_exports["inline"][1].path) as inline:
        key = _random_decisions(*holdem_exports["inline"], 1, seed=4)[0][0]
        assert strategy.quantized(key) == inline.quantized(key)


def test_export_coded_writes_format_7_with_the_same_rows(tmp_path, runner, json_output, strategy_file,
                                                        holdem_exports):
    out = tmp_path / "coded.efgs"
    data = json_output(runner.invoke(main, ["export", str(strategy_file), "--out", str(out), "--coded",
                                            "--bucket-tables", "inline", "--json"]))
    assert data["coded"] and data["bytes"] == out.stat().st_size
    cases = _random_decisions(*holdem_exports["inline"], 50, seed=6)
    with CompactStrategy(str(out)) as strategy:
        strategy.verify()
        assert strategy.version == 7
        assert [strategy.quantized(key) for key, _ in cases] == [row for _, row in cases]


@pytest.mark.parametrize("extra, words", [
    (["--rounding", "exact"], "--rounding"),
    (["--bucket-tables", "tables.bin"], "auto, inline or a FILE.efgb"),
    (["--format", "json"], "--format json"),
])
def test_bad_bucket_strategy_exports_are_one_line_exit_2(tmp_path, runner, strategy_file, extra, words):
    out = "s.json" if "json" in extra else str(tmp_path / "s.efgs")
    result = runner.invoke(main, ["export", str(strategy_file), "--out", out, *extra])
    assert result.exit_code == 2 and words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_export_never_reads_a_game_file_the_strategy_file_names(tmp_path, runner, strategy_file):
    """The strategy file is untrusted: a game read from a file (acpc:, efg:) is named as GAME."""
    import h5py

    copy = tmp_path / "strategy.h5"
    shutil.copy(strategy_file, copy)
    with h5py.File(copy, "r+") as handle:
        handle.attrs["game"] = f"acpc:{tmp_path / 'elsewhere.game'}"
    result = runner.invoke(main, ["export", str(copy), "--out", str(tmp_path / "s.efgs")])
    assert result.exit_code == 2 and "name it yourself as GAME" in result.stderr
    assert not (tmp_path / "s.efgs").exists()


def _resealed(source, target, **attributes):
    """A copy of the HDF5 file ``source`` at ``target`` with root ``attributes`` changed and its
    manifest recomputed, as a forger would."""
    import h5py

    from efgkit.io.checked_hdf5 import manifest_digest

    shutil.copy(source, target)
    with h5py.File(target, "r+") as handle:
        handle.attrs.update(attributes)
        handle.attrs["content_sha256"] = manifest_digest(handle)
    return target


def test_a_bucket_file_is_opened_beside_the_strategy_or_where_the_user_names_it(tmp_path, runner, json_output,
                                                                               strategy_file, holdem_exports):
    """The bucket file's path a strategy records is its content: only the name is used,
    beside the strategy, whatever folder it says; a file elsewhere is named with --buckets
    (its digest checked). The error does not tell whether the recorded path exists."""
    import json

    from efgkit.errors import FileFormatError

    game = make_game("holdem(ranks=5)")
    layout, _ = holdem_exports["inline"]
    bucket_file = Path(layout.abstraction.reference["path"])
    folder, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    shutil.copy(bucket_file, elsewhere / "secret.h5")
    forged = folder / "s.h5"
    messages = []
    for recorded in (elsewhere / "secret.h5", elsewhere / "missing.h5"):
        reference = {**layout.abstraction.reference, "path": str(recorded)}
        _resealed(strategy_file, forged, abstraction=json.dumps(reference, sort_keys=True))
        with pytest.raises(FileFormatError, match="which is missing; pass the file with --buckets") as raised:
            load_bucket_strategy(forged, game)
        messages.append(str(raised.value).replace(recorded.name, "NAME"))
        for command in (["export", str(forged), "--out", str(tmp_path / "s.efgs")],
                        ["evaluate", "holdem(ranks=5)", str(forged)],
                        # --buckets none: a small solver (canonical buckets of 4 rounds take GBs)
                        ["solve", "holdem(ranks=5)", "--engine", "sampled", "--buckets", "none",
                         "-n", "1", "--state", str(forged), "--resume"]):
            result = runner.invoke(main, command)
            assert result.exit_code == 2 and "--buckets" in result.stderr, result.stderr
            assert str(elsewhere) not in result.stderr
    assert messages[0] == messages[1] and str(elsewhere) not in messages[0]
    named = json_output(runner.invoke(main, ["export", str(forged), "--out", str(tmp_path / "named.efgs"),
                                             "--buckets", str(elsewhere / "secret.h5"), "--json"]))
    shutil.copy(bucket_file, folder / "missing.h5")  # the recorded name, beside the strategy
    beside = json_output(runner.invoke(main, ["export", str(forged), "--out", str(tmp_path / "beside.efgs"),
                                              "--json"]))
    assert named["bytes"] == beside["bytes"] > 0
    other = _pipeline_bucket_file(tmp_path / "other.h5", 5, (7, 30, 40, 50), seed=1)
    result = runner.invoke(main, ["export", str(forged), "--out", str(tmp_path / "x.efgs"),
                                  "--buckets", str(other)])
    assert result.exit_code == 2 and "content digest differs" in result.stderr


def test_export_refuses_to_replace_another_bucket_table_file(tmp_path, runner, strategy_file):
    (tmp_path / "t.efgb").write_bytes(b"something else")
    result = runner.invoke(main, ["export", str(strategy_file), "--out", str(tmp_path / "s.efgs"),
                                  "--bucket-tables", str(tmp_path / "t.efgb")])
    assert result.exit_code == 2 and "holds other bucket tables" in result.stderr
    assert (tmp_path / "t.efgb").read_bytes() == b"something else" and not (tmp_path / "s.efgs").exists()


def test_export_reports_the_exact_nash_conv_of_what_the_file_plays(tmp_path, runner, json_output):
    game = "holdem(ranks=3,rounds=2)"
    strategy = tmp_path / "s.h5"
    json_output(runner.invoke(main, ["solve", game, "--engine", "sampled", "--buckets", "canonical",
                                     "-n", "100", "--out", str(strategy), "--json"]))
    evaluated = json_output(runner.invoke(main, ["evaluate", game, str(strategy), "--json"]))
    exported = json_output(runner.invoke(main, ["export", str(strategy), "--out", str(tmp_path / "s.efgs"),
                                                "--bits", "16", "--nash-conv", "--json"]))
    assert exported["nash_conv_before"] == pytest.approx(evaluated["nash_conv"], abs=1e-12)
    assert abs(exported["nash_conv_after"] - exported["nash_conv_before"]) < 1e-3
    assert exported["bucket_tables"] is None and exported["card_table_bytes"] < 100


# ------------------------------------------------------------------ named rows and lookup errors
def _named_rows(c_tools, path, keys):
    """efgs_query's normalised rows: key -> {action: probability}; its stderr lines; exit code."""
    result = subprocess.run([str(c_tools / "efgs_query"), str(path)], capture_output=True, text=True,
                            input="".join(f"{key}\n" for key in keys))
    rows = {}
    for line in result.stdout.splitlines():
        key, row = line.split("\t")
        rows[key] = {name: float(p) for name, p in (item.split("=") for item in row.split(" "))}
    return rows, result.stderr.splitlines(), result.returncode


def test_both_readers_name_every_leduc_infoset_action_as_the_game_does(leduc_exports, c_tools):
    """Every row comes back as the game's action labels, in its order, with probabilities
    summing to 1, the same floats in both readers."""
    _, export = leduc_exports["lossless"]
    tree = load_game("leduc")
    with CompactStrategy(export.path) as strategy:
        python = {key: strategy.probabilities(key) for key in tree.infoset_keys}
    assert all(list(python[key]) == tree.infoset_actions(i) for i, key in enumerate(tree.infoset_keys))
    assert all(sum(row.values()) == pytest.approx(1.0, abs=1e-12) for row in python.values())
    c_rows, errors, code = _named_rows(c_tools, export.path, tree.infoset_keys)
    assert (c_rows, errors, code) == (python, [], 0)


def test_holdem_rows_are_named_fold_call_raise_and_agree_in_both_readers(holdem_exports, c_tools):
    layout, export = holdem_exports["inline"]
    keys = [key for key, _ in _random_decisions(layout, export, 200, seed=5)]
    with CompactStrategy(export.path) as strategy:
        python = {key: strategy.probabilities(key) for key in keys}
        opening = strategy.probabilities("P1 cards=AsKh board=- bets=-")
        after_limp = strategy.probabilities("P0 cards=AsKh board=- bets=c")
        capped = strategy.probabilities("P0 cards=AsKh board=- bets=rrr")
    assert (list(opening), list(after_limp), list(capped)) == (
        ["fold", "call", "raise"], ["call", "raise"], ["fold", "call"])
    assert all(sum(row.values()) == pytest.approx(1.0, abs=1e-12) for row in python.values())
    assert _named_rows(c_tools, export.path, keys) == (python, [], 0)


BAD_KEYS = [  # (key, Python error, words of its message, C reason)
    ("P1 cards=AsXx board=- bets=-", "CardError", "unknown card 'Xx' (the deck: Ts Th", "not in the deck"),
    ("P1 cards=AsAs board=- bets=-", "CardError", "card As is dealt twice", "dealt twice"),
    ("P1 cards=As board=- bets=-", "CardError", "1 private and 0 board cards", "wrong number of cards"),
    ("P0 cards=AsKh board=- bets=rf", "BettingError", "the hand is over after a fold", "no decision"),
    ("P0 cards=AsKh board=- bets=rx", "BettingError", "unknown action 'x'", "no decision"),
    ("P0 cards=AsKh board=- bets=rc", "BettingError", "round 1 has closed", "no decision"),
    ("P0 cards=AsKh board=- bets=c/", "BettingError", "round 1 (c) has not closed", "no decision"),
    ("P0 cards=AsKh board=- bets=rrrr", "BettingError",
     "not a betting history of holdem(ranks=5): after rrr the actions are fold, call", "no decision"),
    ("P0 cards=AsKh board=-", "BettingError", "has no betting", "no decision"),
]


@pytest.mark.parametrize("key, error, message, reason", BAD_KEYS)
def test_each_bad_holdem_key_is_its_own_one_line_error_in_both_readers(holdem_exports, c_tools, key, error,
                                                                       message, reason):
    _, export = holdem_exports["inline"]
    with CompactStrategy(export.path) as strategy:
        with pytest.raises(getattr(compact_reader, error)) as raised:
            strategy.probabilities(key)
        assert key not in strategy
    assert isinstance(raised.value, compact_reader.KeyLookupError) and not isinstance(raised.value, KeyError)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    rows, errors, code = _named_rows(c_tools, export.path, [key])
    assert rows == {} and code == 1 and len(errors) == 1
    assert errors[0].startswith(f"efgs_query: line 1: {key}: ") and reason in errors[0]


def test_the_c_tool_reports_a_bad_line_and_reads_on(holdem_exports, c_tools):
    _, export = holdem_exports["inline"]
    good = "P1 cards=AsKh board=- bets=-"
    rows, errors, code = _named_rows(c_tools, export.path, [good, "P1 cards=AsZz board=- bets=-",
                                                            "P1 cards=AsKh\t1 0", good.replace("Kh", "Qh")])
    assert list(rows) == [good, good.replace("Kh", "Qh")] and code == 1
    assert [line.split(": ")[1] for line in errors] == ["line 2", "line 3"]


# ---------------------------------------------------------------------- coded rows (format 7)
def test_coded_rows_read_as_the_packed_rows_and_take_fewer_bytes(holdem_exports, tmp_path):
    """The same nearly pure strategy exported packed and coded: every row reads the same in
    the Python reader, and the coded file is the smaller."""
    layout, coded = holdem_exports["coded"]
    packed = export_bucket_strategy(layout, coded.weights / coded.totals, tmp_path / "packed.efgs", bits=8)
    assert np.array_equal(packed.weights, coded.weights) and coded.bytes < packed.bytes
    cases = _random_decisions(layout, coded, 300, seed=5)
    with CompactStrategy(str(packed.path)) as by_packing, CompactStrategy(str(coded.path)) as by_code:
        by_code.verify()
        assert by_code.coded and by_code.version == 7 and not by_packing.coded
        assert [by_code.quantized(key) for key, _ in cases] == [by_packing.quantized(key) for key, _ in cases]


def _crcs_resealed(data: bytearray) -> bytes:
    """``data`` with both CRCs recomputed, so damage inside reaches the row decoding."""
    spec_end = compact_reader.HEADER.size + int.from_bytes(data[compact_reader.HEADER.size - 2:
                                                                compact_reader.HEADER.size], "little")
    data[108:112] = zlib.crc32(bytes(data[spec_end:])).to_bytes(4, "little")
    data[112:116] = compact_reader.header_crc(bytes(data[:spec_end])).to_bytes(4, "little")
    return bytes(data)


@pytest.fixture(scope="module")
def sanitized_query(tmp_path_factory):
    """efgs_query built with the address and undefined-behaviour sanitizers (abort on any report)."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler on this machine")
    tool = tmp_path_factory.mktemp("sanitized") / "efgs_query"
    built = subprocess.run([compiler, "-std=c99", "-g", "-O1", "-fsanitize=address,undefined",
                            "-fno-sanitize-recover=all", str(C_SOURCES / "efgs.c"),
                            str(C_SOURCES / "efgs_computed.c"), str(C_SOURCES / "efgs_compressed.c"),
                            str(C_SOURCES / "efgs_query.c"), "-o", str(tool)], capture_output=True)
    if built.returncode:
        pytest.skip("this compiler has no address/undefined sanitizers")
    return tool


def test_damaged_coded_rows_are_one_line_errors_under_sanitizers(holdem_exports, sanitized_query, tmp_path):
    """Coded rows damaged byte by byte (CRCs resealed, so the damage reaches the decoder)
    or truncated: the C tool answers or refuses each line in one line under the sanitizers,
    and the Python reader answers a row summing to its total or raises CompactFormatError."""
    layout, export = holdem_exports["coded"]
    original = Path(export.path).read_bytes()
    keys = [key for key, _ in _random_decisions(layout, export, 60, seed=9)]
    with CompactStrategy(str(export.path)) as strategy:
        values_at = strategy._values_at
    rng = random.Random(0)
    damaged = [original[:cut] for cut in (len(original) - 1, values_at + 20, values_at + 3)]
    for _ in range(40):
        data = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(values_at, len(data))] ^= 1 << rng.randrange(8)
        damaged.append(_crcs_resealed(data))
    for i, data in enumerate(damaged):
        path = tmp_path / f"damaged-{i}.efgs"
        path.write_bytes(data)
        result = subprocess.run([str(sanitized_query), "--weights", str(path)], capture_output=True,
                                text=True, input="".join(f"{key}\n" for key in keys))
        assert result.returncode in (0, 1, 2), result.stderr
        assert "runtime error" not in result.stderr and "Sanitizer" not in result.stderr
        assert all(line.startswith("efgs_query: ") for line in result.stderr.splitlines())
        try:
            with CompactStrategy(str(path)) as strategy:
                for key in keys:
                    try:
                        weights = strategy.quantized(key)
                    except CompactFormatError:
                        continue
                    assert min(weights) >= 0
        except CompactFormatError:
            pass
