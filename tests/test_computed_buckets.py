"""Buckets computed on the device (compact format 8): the C reader and the Python reader
return the hold'em pipeline's bucket for every canonical hand of a reduced deck, stored
exceptions decide the hands the nearest centroid does not, the features equal the
pipeline's on random 52-card hands, and damaged descriptions are one-line refusals (under
the address and undefined-behaviour sanitizers too)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup, StreetBuckets, save_buckets
from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, build_abstraction
from efgkit.cli import main
from efgkit.games.hand_ranking import hand_value as reference_value
from efgkit.interop.acpc import game_definition
from efgkit.interop.acpc_protocol import AcpcDealer, serve_in_thread
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent, IsomorphicCards
from efgkit.specs import make_game
from efgkit.storage import compact_reader
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy
from efgkit.storage.compact_reader import CompactFormatError, CompactStrategy
from efgkit.storage.computed_buckets import (
    choose,
    describe_street,
    description_bytes,
    description_only_file,
    nearest_buckets,
)
from efgkit.storage.computed_reader import EHS, HISTOGRAM, OCHS, hand_value

C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
STREETS = ("preflop", "flop", "turn", "river")


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
    """holdem(ranks=5) buckets from the real pipeline (EMD flop and turn, OCHS river) and a
    strategy on them exported with every street computed."""
    folder = tmp_path_factory.mktemp("computed")
    options = AbstractionOptions(buckets=(25, 12, 12, 12), num_ranks=5, bins=10, seed=0)
    build_abstraction(options, folder / "b.h5")
    game = make_game("holdem(ranks=5)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.from_bucket_file(game, folder / "b.h5"))
    export = export_bucket_strategy(layout, layout.random(0), folder / "s.efgs", compute_budget=10**9)
    return folder, layout, export


def _c_match(bot: Path, files: tuple[Path, Path], game, hands: int):
    """Two C bots (seeds 1 and 2) through a duplicate dealer (seed 3): its MatchResult."""
    dealer = AcpcDealer(game_definition(game), hands, seed=3, duplicate=True, timeout=60)
    thread, outcome = serve_in_thread(dealer)
    processes = [subprocess.Popen([str(bot), str(path), "127.0.0.1", str(port), str(seed)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for seed, (path, port) in enumerate(zip(files, dealer.ports, strict=True), start=1)]
    thread.join()
    for process in processes:
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    assert "error" not in outcome, outcome.get("error")
    return outcome["result"]


def _every_hand(ranks: int, board: int) -> np.ndarray:
    indexer = F.hand_indexer(board, ranks)
    return indexer.unindex(1, np.arange(indexer.round_size(1))).astype(np.uint8)


def _c_buckets(tool: Path, path: Path, round_index: int, hands: np.ndarray) -> np.ndarray:
    result = subprocess.run([str(tool), str(path), str(round_index)], input=hands.tobytes(),
                            capture_output=True, check=True)
    return np.frombuffer(result.stdout, "<i4")


def test_the_hand_value_orders_hands_as_efgkit_does():
    """The readers' evaluator (only its order matters) against games.hand_ranking on random
    5- to 7-card hands of the standard deck: equal where efgkit's are equal, ordered alike."""
    rng = random.Random(0)
    hands = [rng.sample(range(52), rng.choice((5, 6, 7))) for _ in range(3000)]
    ours = [hand_value(h) for h in hands]
    theirs = [int(reference_value(np.array(h, np.int64), len(h), 13, 4)) for h in hands]
    for i in range(0, len(hands) - 1):
        assert (ours[i] > ours[i + 1]) == (theirs[i] > theirs[i + 1])
        assert (ours[i] == ours[i + 1]) == (theirs[i] == theirs[i + 1])


def test_the_rule_computes_every_street_within_the_budget(pipeline):
    _, _, export = pipeline
    assert [r["street"] for r in export.computed] == ["flop", "turn", "river"]
    assert all(r["computed"] for r in export.computed)
    assert all(r["description_bytes"] < r["table_bytes"] for r in export.computed)
    with CompactStrategy(export.path) as strategy:
        assert strategy.version == 8
        assert sorted(strategy.card_table.computed) == [1, 2, 3]


def test_a_budget_below_a_streets_cost_keeps_its_table(pipeline, tmp_path):
    folder, layout, export = pipeline
    river = next(r for r in export.computed if r["street"] == "river")
    partial = export_bucket_strategy(layout, layout.random(0), tmp_path / "p.efgs",
                                     compute_budget=river["evaluations"])
    assert [r["computed"] for r in partial.computed] == [False, False, True]
    with CompactStrategy(partial.path) as strategy:
        assert sorted(strategy.card_table.computed) == [3]


@pytest.mark.parametrize("round_index", [1, 2, 3])
def test_the_c_reader_returns_the_pipelines_bucket_for_every_canonical_hand(pipeline, c_tools, round_index):
    folder, _, export = pipeline
    hands = _every_hand(5, (0, 3, 4, 5)[round_index])
    with BucketLookup(folder / "b.h5") as lookup:
        labels = np.asarray(lookup.tables()[round_index])
    got = _c_buckets(c_tools[0] / "efgs_buckets", Path(export.path), round_index, hands)
    np.testing.assert_array_equal(got, labels)


@pytest.mark.parametrize("round_index", [1, 2, 3])
def test_the_python_reader_returns_the_pipelines_bucket(pipeline, round_index):
    folder, _, export = pipeline
    hands = _every_hand(5, (0, 3, 4, 5)[round_index])
    rows = np.random.default_rng(round_index).choice(hands.shape[0], 40, replace=False)
    with BucketLookup(folder / "b.h5") as lookup, CompactStrategy(export.path) as strategy:
        labels = np.asarray(lookup.tables()[round_index])
        for row in rows:
            hand, board = sorted(hands[row, :2].tolist()), hands[row, 2:].tolist()
            assert strategy.card_table.bucket(round_index, hand, board) == labels[row]


def test_hands_off_their_nearest_centroid_are_stored_exceptions(pipeline, c_tools, tmp_path):
    """A bucket file whose river labels are moved off the nearest centroid for some hands
    (as a k-means that stopped early, or a tie decided the other way, leaves them): those
    hands, and only those, become exceptions, and both readers return the moved labels."""
    folder, _, _ = pipeline
    with BucketLookup(folder / "b.h5") as lookup:
        import h5py

        with h5py.File(folder / "b.h5", "r") as handle:
            streets = [StreetBuckets(s, np.array(lookup.tables()[r], np.int64),
                                     np.asarray(handle[s]["centroids"]), str(handle[s].attrs["method"]),
                                     str(handle[s].attrs["distance"]), 0.0, int(handle[s].attrs["seed"]))
                       for r, s in enumerate(STREETS)]
        parameters = lookup.parameters
    moved = np.random.default_rng(1).choice(streets[3].labels.shape[0], 50, replace=False)
    streets[3].labels[moved] = (streets[3].labels[moved] + 1) % 12
    save_buckets(tmp_path / "moved.h5", 5, streets, parameters)
    with BucketLookup(tmp_path / "moved.h5") as lookup:
        description = describe_street(lookup, "river")
        labels = np.asarray(lookup.tables()[3])
    assert description.exceptions == 50
    game = make_game("holdem(ranks=5)")
    description_only_file(tmp_path / "moved.efgs", game, {3: (12, description.data)})
    hands = _every_hand(5, 5)
    got = _c_buckets(c_tools[0] / "efgs_buckets", tmp_path / "moved.efgs", 3, hands)
    np.testing.assert_array_equal(got, labels)
    with CompactStrategy(str(tmp_path / "moved.efgs")) as strategy:
        for row in moved[:10]:
            hand, board = sorted(hands[row, :2].tolist()), hands[row, 2:].tolist()
            assert strategy.card_table.bucket(3, hand, board) == labels[row]


def test_river_and_turn_features_equal_the_pipelines_on_random_52_card_hands(c_tools, tmp_path):
    """The C enumeration's OCHS and E[HS] (float32, bit for bit) on 2,000 river hands and its
    histograms on 100 turn hands of the standard deck equal the pipeline kernels' on their
    boards; the device's nearest centroid there equals the writer's (``nearest_buckets``)."""
    rng = np.random.default_rng(0)
    clusters = rng.integers(0, 8, 169)
    centroids = rng.random((30, 8))
    turn_centroids = np.sort(rng.random((30, 49)), axis=1)
    game = make_game("holdem")
    description_only_file(tmp_path / "d.efgs", game, {
        2: (30, description_bytes(HISTOGRAM, 50, 5, None, turn_centroids, [], [], 0)),
        3: (30, description_bytes(OCHS, 8, 5, clusters, centroids, [], [], 0))})
    for round_index, board_cards, boards_count, per_board in ((3, 5, 200, 10), (2, 4, 20, 5)):
        boards = np.array([rng.choice(52, board_cards, replace=False) for _ in range(boards_count)])
        if round_index == 3:
            part = F.river_chunk(13, boards, clusters)
            expected, kind, used = part.ochs.astype(np.float64), OCHS, centroids
        else:
            part = F.street_chunk(13, boards, 50)
            expected, kind, used = part.histogram.astype(np.float64), HISTOGRAM, turn_centroids
        pairs = expected.shape[0] // boards_count
        rows = np.concatenate([b * pairs + rng.choice(pairs, per_board, replace=False)
                               for b in range(boards_count)])
        hands = []
        for row in rows:
            board = boards[row // pairs]
            unseen = np.setdiff1d(np.arange(52), board)
            pair = list(F._combinations(unseen, 2)[row % pairs])
            hands.append(pair + list(board))
        hands = np.array(hands, np.uint8)
        result = subprocess.run([str(c_tools[0] / "efgs_buckets"), "--features", str(tmp_path / "d.efgs"),
                                 str(round_index)], input=hands.tobytes(), capture_output=True, check=True)
        got = np.frombuffer(result.stdout, "<f8").reshape(rows.shape[0], -1)
        np.testing.assert_array_equal(got, expected[rows])
        buckets = _c_buckets(c_tools[0] / "efgs_buckets", tmp_path / "d.efgs", round_index, hands)
        np.testing.assert_array_equal(buckets, nearest_buckets(expected[rows], kind, used))


def test_an_ehs_river_and_a_final_turn_are_computed_too(tmp_path, c_tools):
    """River E[HS] k-means and holdem(rounds=3)'s final turn (OCHS on four board cards)."""
    for name, options, round_index in (
            ("ehs", AbstractionOptions(buckets=(25, 6, 6, 6), num_ranks=5, bins=8, river="ehs", flop="ehs",
                                       turn="ehs"), 3),
            ("turn", AbstractionOptions(buckets=(25, 6, 9), num_ranks=5, bins=8, rounds=3), 2)):
        build_abstraction(options, tmp_path / f"{name}.h5")
        with BucketLookup(tmp_path / f"{name}.h5") as lookup:
            description = describe_street(lookup, ("preflop", "flop", "turn", "river")[round_index])
            labels = np.asarray(lookup.tables()[round_index])
            if name == "ehs":  # E[HS] k-means before the final street is not computed
                assert describe_street(lookup, "flop") is None
        assert description.kind == (EHS if name == "ehs" else OCHS)
        game = make_game("holdem(ranks=5)" if name == "ehs" else "holdem(ranks=5,rounds=3)")
        buckets = int(labels.max()) + 1
        description_only_file(tmp_path / f"{name}.efgs", game, {round_index: (buckets, description.data)})
        hands = _every_hand(5, (0, 3, 4, 5)[round_index])
        np.testing.assert_array_equal(
            _c_buckets(c_tools[0] / "efgs_buckets", tmp_path / f"{name}.efgs", round_index, hands), labels)


def test_the_rule_prefers_the_smaller_and_affordable(pipeline):
    folder, _, _ = pipeline
    with BucketLookup(folder / "b.h5") as lookup:
        river = describe_street(lookup, "river", budget=5)
    assert not choose(river, 5) and choose(river, river.evaluations)
    assert not choose(None, 10**9)


def test_an_older_reader_refuses_format_8_cleanly(pipeline, monkeypatch):
    _, _, export = pipeline
    monkeypatch.setattr(compact_reader, "COMPUTED_VERSION", 7)
    monkeypatch.setattr(compact_reader, "READ_VERSIONS", (6, 7))
    with pytest.raises(CompactFormatError, match="newer than this reader"):
        CompactStrategy(export.path)


def _resealed(data: bytearray) -> bytes:
    import zlib

    spec_end = compact_reader.HEADER.size + int.from_bytes(
        data[compact_reader.HEADER.size - 2:compact_reader.HEADER.size], "little")
    data[108:112] = zlib.crc32(bytes(data[spec_end:])).to_bytes(4, "little")
    data[112:116] = compact_reader.header_crc(bytes(data[:spec_end])).to_bytes(4, "little")
    return bytes(data)


def test_damaged_descriptions_are_one_line_refusals_under_sanitizers(pipeline, c_tools, tmp_path):
    """Bytes of the descriptions flipped (checksums resealed, so the damage reaches them) or
    the file cut: each sanitized C tool exits cleanly with at most one line on stderr and no
    sanitizer report; the Python reader answers a bucket in range or refuses in one error."""
    folder, tool_ok = c_tools
    if not tool_ok:
        pytest.skip("this compiler has no address/undefined sanitizers")
    _, _, export = pipeline
    original = Path(export.path).read_bytes()
    cards_at = compact_reader.HEADER.unpack_from(original, 0)[19]
    with CompactStrategy(export.path) as strategy:
        end = cards_at + strategy.card_table.size  # the descriptions end the card table
    first = end - sum(r["description_bytes"] for r in export.computed)
    rng = random.Random(0)
    hands = _every_hand(5, 5)[::997]
    damaged = [original[:cut] for cut in (len(original) - 3, first + 40)]
    for _ in range(30):
        data = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(first, end)] ^= 1 << rng.randrange(8)
        damaged.append(_resealed(data))
    for i, data in enumerate(damaged):
        path = tmp_path / f"damaged-{i}.efgs"
        path.write_bytes(data)
        for tool in ("efgs_buckets_asan", "efgs_buckets_ubsan"):
            result = subprocess.run([str(folder / tool), str(path), "3"], input=hands.tobytes(),
                                    capture_output=True)
            assert result.returncode in (0, 2), result.stderr
            lines = result.stderr.decode().splitlines()
            assert len(lines) <= 1 and all(line.startswith("efgs_buckets: ") for line in lines), lines
            if result.returncode == 0:
                got = np.frombuffer(result.stdout, "<i4")
                assert got.shape[0] == hands.shape[0] and got.max() < 12
        try:
            with CompactStrategy(str(path)) as strategy:
                for row in range(0, hands.shape[0], 50):
                    hand, board = sorted(hands[row, :2].tolist()), hands[row, 2:].tolist()
                    bucket = strategy.card_table.bucket(3, hand, board)
                    assert 0 <= bucket < 12
        except CompactFormatError as exc:
            assert "\n" not in str(exc)


def test_the_c_bot_plays_a_computed_file_hand_for_hand_as_the_table_file(pipeline, c_tools, tmp_path):
    """efgs_acpc through the ACPC protocol: the same strategy exported with tables and with
    every street computed draws the same actions (same buckets, rows and random bits), so
    two matches with the same seeds end chip for chip alike, without an invalid action."""
    folder, layout, export = pipeline
    subprocess.run(["make", "-s", "-C", str(C_SOURCES), f"OUT={c_tools[0]}", f"{c_tools[0]}/efgs_acpc"],
                   check=True)
    tables = export_bucket_strategy(layout, layout.random(0), tmp_path / "tables.efgs")
    other = export_bucket_strategy(layout, layout.random(1), tmp_path / "other.efgs")
    game = layout.betting.game
    computed = _c_match(c_tools[0] / "efgs_acpc", (Path(export.path), Path(other.path)), game, 300)
    tabled = _c_match(c_tools[0] / "efgs_acpc", (Path(tables.path), Path(other.path)), game, 300)
    assert computed.invalid_actions == (0, 0)
    np.testing.assert_array_equal(computed.values, tabled.values)


def test_export_compute_buckets_writes_format_8_and_reports_the_rule(pipeline, runner, json_output, tmp_path):
    """``efgkit export --compute-buckets EVALS``: the river within the budget is computed,
    the dearer streets keep their tables; the report gives the rule's inputs per street;
    a strategy on no pipeline bucket file is one line and exit code 2."""
    folder, layout, export = pipeline
    save_bucket_strategy(folder / "strategy.h5", layout, layout.random(0),
                         {"algorithm": "random", "iterations": 0})
    river = next(r for r in export.computed if r["street"] == "river")
    data = json_output(runner.invoke(main, ["export", str(folder / "strategy.h5"), "--out",
                                            str(tmp_path / "s.efgs"), "--compute-buckets",
                                            str(river["evaluations"]), "--json"]))
    assert [(r["street"], r["computed"]) for r in data["computed_buckets"]] == [
        ("flop", False), ("turn", False), ("river", True)]
    with CompactStrategy(str(tmp_path / "s.efgs")) as strategy:
        assert strategy.version == 8 and sorted(strategy.card_table.computed) == [3]
    game = make_game("holdem(ranks=5)")
    independent = BucketLayout(BettingTree(game), CardIndependent())
    save_bucket_strategy(tmp_path / "none.h5", independent, independent.random(0),
                         {"algorithm": "random", "iterations": 0})
    result = runner.invoke(main, ["export", str(tmp_path / "none.h5"), "--out", str(tmp_path / "n.efgs"),
                                  "--compute-buckets", "2000"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "bucket file" in result.stderr
