"""Hold'em feature pipeline, Dask execution, feature store, bucket files and the CLI.

Reduced decks keep it quick: every feature is checked against the exact enumeration of
``efgkit.abstraction.cards.hand_strength`` on the equivalent game (same top ranks, two hole
cards, boards of 3 + 1 + 1) and against a direct brute force, the preflop values against
the published AA / KK equities on the full deck.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from itertools import combinations
from math import comb
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.abstraction.cards.hand_strength import HandStrength
from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem import pipeline
from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.deck import ROUND_NAMES, Deck
from efgkit.abstraction.cards.holdem.feature_store import FeatureStore
from efgkit.abstraction.cards.holdem.pipeline import (
    AbstractionOptions,
    MemoryFeatures,
    build_abstraction,
    cluster_streets,
    compute_features,
)
from efgkit.abstraction.cards.situations import CardSituations
from efgkit.cli import main
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.hand_ranking import evaluate
from efgkit.games.poker import CardStructure
from efgkit.io import chunk_runner
from efgkit.io.chunk_runner import ChunkRunner

ROOT = Path(__file__).resolve().parent.parent
RANKS = 5
BINS = 8
OPTIONS = AbstractionOptions(buckets=(25, 30, 40, 50), bins=BINS, num_ranks=RANKS, opponent_clusters=4,
                             seed=3, sweeps_per_chunk=300)


@pytest.fixture(scope="module")
def features():
    """Every street's features of the 5-rank deck, computed in this process."""
    store = MemoryFeatures()
    with ChunkRunner() as runner:
        compute_features(OPTIONS, store, runner, progress=False)
    return {street: store.read(street) for street in store.streets}


@pytest.fixture(scope="module")
def bucket_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("holdem") / "buckets.h5"
    build_abstraction(OPTIONS, path)
    return path


# ----------------------------------------------------------------------------- deck
def test_deck_parses_and_formats_cards():
    deck = Deck()
    assert deck.parse("AsKd").tolist() == [51, 45]
    assert deck.format(deck.parse("7h 8h 9c")) == "7h8h9c"
    short = Deck(8)
    assert short.parse("7c").tolist() == [0] and short.standard_offset == 20
    for bad, words in [("Zs", "rank"), ("Ax", "suit"), ("AsA", "rank and a suit"), ("AsAs", "twice")]:
        with pytest.raises(ParameterError, match=words):
            deck.parse(bad)
    with pytest.raises(ParameterError, match="rank '2'"):
        short.parse("2c")
    with pytest.raises(ParameterError, match="5 to 13 ranks"):
        Deck(4)


# ----------------------------------------------------------------------------- features
def test_features_equal_exact_enumeration_of_equivalent_game(features):
    """Same deck (ranks shifted to the bottom order hands identically), 2 hole cards, 3+1+1 board;
    preflop and flop (HandStrength's enumeration of later rounds takes a minute; they are
    checked by brute force below)."""
    situations = CardSituations(CardStructure(RANKS, 4, 2, (0, 3, 1, 1)))
    strength = HandStrength(situations)
    for round_index, street in enumerate(("preflop", "flop")):
        rows = situations.rounds[round_index]
        hands = np.concatenate([rows.hands[rows.hand_of], rows.boards[rows.board_of]], axis=1)
        index = F.hand_indexer(hands.shape[1] - 2, RANKS).index(hands)
        stored = features[street]
        np.testing.assert_allclose(stored["ehs"][index], strength.expected(round_index), rtol=0, atol=1e-7)
        np.testing.assert_allclose(stored["ehs2"][index], strength.expected_squared(round_index),
                                   rtol=0, atol=1e-7)
        assert np.array_equal(np.bincount(index, minlength=stored["weight"].size), stored["weight"])
        counts = stored["histogram"][index].astype(np.float64)
        np.testing.assert_allclose(counts / counts.sum(axis=1, keepdims=True),
                                   strength.histogram(round_index, BINS), rtol=0, atol=1e-12)
    for street, board_cards in (("turn", 4), ("river", 5)):  # every deal counted once
        assert features[street]["weight"].sum() == comb(20, 2) * comb(18, board_cards)


def _brute_river_strength(deck: Deck, hole, board, cluster_of_pair=None, cluster=None) -> float:
    """Win + tie/2 against every opponent pair (of one cluster if given), by direct evaluation."""
    seen = set(hole) | set(board)
    mine = evaluate([c + deck.standard_offset for c in (*hole, *board)], 13, 4)
    score = total = 0
    for opponent in combinations([c for c in range(deck.num_cards) if c not in seen], 2):
        if cluster is not None and cluster_of_pair[opponent] != cluster:
            continue
        theirs = evaluate([c + deck.standard_offset for c in (*opponent, *board)], 13, 4)
        score += 2 * (mine > theirs) + (mine == theirs)
        total += 2
    return score / total


def test_river_and_turn_features_equal_brute_force_on_six_ranks():
    deck = Deck(6)
    rng = np.random.default_rng(7)
    boards, _ = F.canonical_boards(deck, 4)
    picked = boards[rng.choice(boards.shape[0], 3, replace=False)]
    chunk = F.street_chunk(6, picked, 5)
    per_board = F.pairs_per_board(deck, 4)
    for row in rng.choice(chunk.indices.size, 6, replace=False):
        board = picked[row // per_board].tolist()
        rest = [c for c in range(deck.num_cards) if c not in board]
        hole = list(combinations(rest, 2))[row % per_board]
        finals = [_brute_river_strength(deck, hole, [*board, river]) for river in rest if river not in hole]
        assert chunk.ehs[row] == pytest.approx(np.mean(finals), abs=1e-6)
        assert chunk.ehs2[row] == pytest.approx(np.mean(np.square(finals)), abs=1e-6)
        expected = np.bincount(np.minimum((np.array(finals) * 5 + 1e-12).astype(int), 4), minlength=5)
        assert chunk.histogram[row].tolist() == expected.tolist()
    river_boards = F.canonical_boards(deck, 5)[0][:2]
    cluster_of_class = np.arange(36) % 3
    classes = F.preflop_class_of_pair(6)
    cluster_of_pair = {(a, b): cluster_of_class[classes[a, b]] for a, b in combinations(range(24), 2)}
    river = F.river_chunk(6, river_boards, cluster_of_class)
    for row in rng.choice(river.indices.size, 5, replace=False):
        board = river_boards[row // F.pairs_per_board(deck, 5)].tolist()
        hole = list(combinations([c for c in range(deck.num_cards) if c not in board], 2))[
            row % F.pairs_per_board(deck, 5)]
        assert river.ehs[row] == pytest.approx(_brute_river_strength(deck, hole, board), abs=1e-6)
        for cluster in range(3):
            assert river.ochs[row, cluster] == pytest.approx(
                _brute_river_strength(deck, hole, board, cluster_of_pair, cluster), abs=1e-6)


def test_preflop_strength_of_aces_and_kings_on_the_full_deck():
    """Ganzfried & Sandholm 2014: AA has E[HS] 0.852, KK 0.824 against a random hand."""
    deck = Deck()
    boards, orbit = F.canonical_boards(deck, 5)
    sums = F.preflop_chunk(13, boards, orbit, 10)
    ehs = sums.sums / (2.0 * F.opponents_per_hand(deck) * sums.counts)
    index = F.hand_indexer(0, 13).index(np.stack([deck.parse("AsAh"), deck.parse("KsKh")]))
    assert ehs[index[0]] == pytest.approx(0.852, abs=1e-3)
    assert ehs[index[1]] == pytest.approx(0.824, abs=1e-3)
    assert sums.counts.sum() == 1326 * 2118760  # every (hole pair, board) deal once


# ----------------------------------------------------------------------------- pipeline, Dask
def test_dask_local_cluster_gives_the_single_process_result_bit_for_bit(tmp_path, monkeypatch):
    """Also on the paths of the 52-card scale: no de-duplication, mini-batch fits, point chunks
    sent to the workers once (thresholds lowered to this deck's size)."""
    monkeypatch.setattr(chunk_runner, "SCATTER_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "DEDUPLICATE_MAX_ROWS", 1000)
    monkeypatch.setattr(pipeline, "FULL_KMEANS_MAX_ROWS", 1000)
    monkeypatch.setattr(pipeline, "L2_FIT_SAMPLE_ROWS", 20_000)  # 1,000,000 took a minute per fit
    options = dataclasses.replace(OPTIONS, batch_size=256, sweeps_per_chunk=200)
    build_abstraction(options, tmp_path / "local.h5")
    with ChunkRunner(workers=2) as runner:
        summary = build_abstraction(options, tmp_path / "dask.h5", features=tmp_path / "f.h5", runner=runner)
        assert runner._scattered  # the last clustering pass reused point chunks sent before
        assert len(set(runner.on_workers(os.getpid)) - {os.getpid()}) == 2
    assert ChunkRunner().on_workers(os.getpid) == []
    assert "LocalCluster" in summary["runner"]
    assert summary["streets"]["turn"]["iterations"] > 1
    with h5py.File(tmp_path / "local.h5", "r") as local, h5py.File(tmp_path / "dask.h5", "r") as dask:
        for street in ("preflop", "flop", "turn", "river"):
            for name in ("buckets", "centroids"):
                assert np.array_equal(local[street][name][()], dask[street][name][()]), (street, name)


def test_bucket_file_lookup_is_suit_and_order_invariant(bucket_file):
    deck = Deck(RANKS)
    rng = np.random.default_rng(11)
    with BucketLookup(bucket_file) as table:
        assert [table.num_buckets(r) for r in range(4)] == [25, 30, 40, 50]
        for board_cards in (0, 3, 4, 5):
            for _ in range(10):
                cards = rng.choice(deck.num_cards, 2 + board_cards, replace=False)
                suits = rng.permutation(4)
                renamed = 4 * (cards // 4) + suits[cards % 4]
                hole, board = renamed[:2][::-1], rng.permutation(renamed[2:])
                expected = table.bucket(None, cards[:2], cards[2:])
                assert table.bucket(None, hole, board) == expected
                assert table.bucket(None, deck.format(hole), deck.format(board)) == expected
                round_index = (0, 3, 4, 5).index(board_cards)
                assert table.buckets(round_index, cards[None, :])[0] == expected
        with pytest.raises(ParameterError, match="share a card"):
            table.bucket("flop", "AsKs", "AsQdJh")
        with pytest.raises(ParameterError, match="board cards"):
            table.bucket("turn", "AsKs", "QdJhTc")



def test_potential_aware_transitions_are_the_turn_buckets_of_each_turn_card(bucket_file, tmp_path):
    deck = Deck(RANKS)
    with h5py.File(bucket_file, "r") as handle:
        turn_buckets = handle["turn"]["buckets"][()]
    boards = F.canonical_boards(deck, 3)[0][:4]
    chunk = F.transition_chunk(RANKS, boards, turn_buckets)
    per_board = F.pairs_per_board(deck, 3)
    with BucketLookup(bucket_file) as table:
        for row in np.random.default_rng(5).choice(chunk.indices.size, 10, replace=False):
            board = boards[row // per_board].tolist()
            unseen = [c for c in range(deck.num_cards) if c not in board]
            hole = list(combinations(unseen, 2))[row % per_board]
            expected = [table.bucket("turn", hole, [*board, t]) for t in unseen if t not in hole]
            assert chunk.next_buckets[row].tolist() == expected
    summary = build_abstraction(dataclasses.replace(OPTIONS, flop="pa"), tmp_path / "pa.h5")
    assert summary["streets"]["flop"]["method"] == "potential-aware-emd-kmeans"
    assert summary["buckets"] == [25, 30, 40, 50]

def test_bucket_numbers_follow_strength_and_every_bucket_is_used(bucket_file, features):
    with h5py.File(bucket_file, "r") as handle:
        for street in ("preflop", "flop", "turn", "river"):
            labels = handle[street]["buckets"][()]
            weight = features[street]["weight"].astype(np.float64)
            k = int(handle[street].attrs["num_buckets"])
            assert np.array_equal(np.unique(labels), np.arange(k))
            mean = np.bincount(labels, weight * features[street]["ehs"], k) / np.bincount(labels, weight, k)
            assert np.all(np.diff(mean) >= 0)


def test_feature_store_resumes_and_refuses_other_parameters(tmp_path, features):
    path = tmp_path / "features.h5"
    store = FeatureStore(path, num_ranks=RANKS, bins=BINS, opponent_clusters=4, opponent_seed=3)
    store.write("preflop", features["preflop"])
    reopened = FeatureStore(path, num_ranks=RANKS, bins=BINS, opponent_clusters=4, opponent_seed=3)
    assert reopened.streets == ("preflop",)
    for name, array in features["preflop"].items():
        assert np.array_equal(reopened.read("preflop")[name], array)
    with pytest.raises(FileFormatError, match="bins=8, not 10"):
        FeatureStore(path, num_ranks=RANKS, bins=10, opponent_clusters=4, opponent_seed=3)
    with h5py.File(path, "r+") as handle:  # flip data bytes, keep the metadata
        data = handle["preflop/ehs"][()]
        handle["preflop/ehs"][0] = data[0] + 0.5
    with pytest.raises(FileFormatError, match="corrupted"):
        reopened.read("preflop")


@pytest.mark.parametrize("rounds, board_cards", [(2, (0, 3)), (3, (0, 3, 1))])
def test_fewer_rounds_give_final_round_features_of_their_last_board(tmp_path, rounds, board_cards):
    """Flop (turn) hold'em: every street's E[HS] is HandStrength's exact enumeration of the game
    that ends there (the last round's features look at no card to come), and its bucket file
    serves ``holdem(rounds=R)`` and refuses rounds it does not have."""
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.specs import make_game

    options = dataclasses.replace(OPTIONS, rounds=rounds, buckets=OPTIONS.buckets[:rounds])
    store = MemoryFeatures()
    with ChunkRunner() as runner:
        compute_features(options, store, runner, progress=False)
    assert set(store.streets) == set(ROUND_NAMES[:rounds])
    assert set(store.read(options.final_street)) == {"ehs", "ochs", "weight"}
    situations = CardSituations(CardStructure(RANKS, 4, 2, board_cards))
    strength = HandStrength(situations)
    for round_index, street in enumerate(ROUND_NAMES[:rounds]):
        rows = situations.rounds[round_index]
        hands = np.concatenate([rows.hands[rows.hand_of], rows.boards[rows.board_of]], axis=1)
        index = F.hand_indexer(hands.shape[1] - 2, RANKS).index(hands)
        stored = store.read(street)
        np.testing.assert_allclose(stored["ehs"][index], strength.expected(round_index), rtol=0, atol=1e-7)
        assert np.array_equal(np.bincount(index, minlength=stored["weight"].size), stored["weight"])
    path = tmp_path / "b.h5"
    streets = cluster_streets(options, store, ChunkRunner(), progress=False)
    pipeline.save_buckets(path, RANKS, streets, {})
    with BucketLookup(path) as table:
        assert table.rounds == rounds and table.num_buckets(rounds - 1) <= options.buckets[-1]
        with pytest.raises(ParameterError, match=f"{rounds}-round game"):
            table.bucket(None, "AsKd", "QhJhTcTsTd"[:2 * (rounds + 2)])  # the next round's board
    game = make_game(f"holdem(ranks={RANKS},rounds={rounds})")
    cards = IsomorphicCards.from_bucket_file(game, path)
    assert [cards.num_buckets(r) for r in range(rounds)] == [s.num_buckets for s in streets]
    from efgkit.errors import AbstractionError
    with pytest.raises(AbstractionError, match=f"{rounds} rounds of buckets"):
        IsomorphicCards.from_bucket_file(make_game(f"holdem(ranks={RANKS})"), path)
    four_rounds = FeatureStore(tmp_path / "f.h5", num_ranks=RANKS, bins=BINS, opponent_clusters=4,
                               opponent_seed=3)
    four_rounds.write("preflop", store.read("preflop"))
    with pytest.raises(FileFormatError, match="rounds=4, not"):
        FeatureStore(tmp_path / "f.h5", num_ranks=RANKS, bins=BINS, opponent_clusters=4, opponent_seed=3,
                     rounds=rounds)


# ----------------------------------------------------------------------------- CLI
def test_cli_builds_and_looks_up_with_json(tmp_path):
    out, features_path = tmp_path / "b.h5", tmp_path / "f.h5"
    args = ["holdem-abstraction", "--ranks", "5", "--buckets", "25,30,40,50", "--bins", "8", "--workers", "0",
            "--features", str(features_path), "--out", str(out), "--plot", str(tmp_path / "p"), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"num_ranks", "buckets", "buckets_requested", "streets", "runner", "seconds", "out", "features",
            "plots", "flop", "river", "bins", "seed"} <= set(data)
    assert set(data["streets"]["turn"]) >= {"canonical_hands", "buckets", "feature_seconds",
                                             "cluster_seconds", "within_cluster_mean_distance", "distance",
                                             "method"}
    assert all((tmp_path / f"p-{s}.png").stat().st_size > 0 for s in ("preflop", "flop", "turn", "river"))
    again = json.loads(CliRunner().invoke(main, args).output)
    assert all(street["features_reused"] for street in again["streets"].values())
    result = CliRunner().invoke(main, ["holdem-abstraction", "--lookup", str(out), "AsKd", "QhJhTc",
                                       "--json"])
    assert result.exit_code == 0, result.output
    looked = json.loads(result.output)
    assert looked["round"] == "flop" and 0 <= looked["bucket"] < 30 and looked["hole"] == "AsKd"


def test_cli_builds_a_flop_holdem_file_with_rounds_2(tmp_path):
    out = tmp_path / "flop.h5"
    result = CliRunner().invoke(main, ["holdem-abstraction", "--ranks", "5", "--rounds", "2", "--buckets",
                                       "25,30", "--bins", "8", "--workers", "0", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["rounds"] == 2 and list(data["streets"]) == ["preflop", "flop"]
    assert data["streets"]["flop"]["method"] == "ochs-l2-kmeans"
    looked = CliRunner().invoke(main, ["holdem-abstraction", "--lookup", str(out), "AsKd", "QhJhTc",
                                       "--json"])
    assert looked.exit_code == 0 and json.loads(looked.output)["num_buckets"] <= 30
    turn = CliRunner().invoke(main, ["holdem-abstraction", "--lookup", str(out), "AsKd", "QhJhTcTs"])
    assert turn.exit_code == 2 and "2-round game" in turn.output


@pytest.mark.parametrize("args, words", [
    (["--buckets", "1,2,3"], "4 positive integers"),
    (["--rounds", "2", "--buckets", "25,30,40"], "2 positive integers (preflop,flop)"),
    (["--rounds", "3", "--buckets", "25,30,40", "--flop", "pa"], "four rounds only"),
    (["--buckets", "30,5,5,5"], "at most 25 buckets"),
    (["--ranks", "5", "--bins", "8", "AsKd"], "only for --lookup"),
    ([], "give --out"),
])
def test_cli_bad_build_input_is_one_line_exit_2(tmp_path, args, words):
    out = tmp_path / "b.h5"
    out.write_bytes(b"precious")
    extra = ["--out", str(out)] if args else []
    result = CliRunner().invoke(main, ["holdem-abstraction", "--ranks", "5", "--workers", "0", *args, *extra])
    assert result.exit_code == 2 and words in result.output and len(result.output.strip().splitlines()) == 1
    assert out.read_bytes() == b"precious"


def test_cli_bad_lookup_is_one_line_exit_2(tmp_path, bucket_file):
    other = tmp_path / "other.h5"
    other.write_bytes(b"not hdf5")
    for args, words in [([str(bucket_file), "AsKd", "QhJh"], "0, 3, 4 or 5"),
                        ([str(bucket_file), "AsZd"], "rank 'Z'"),
                        ([str(bucket_file), "2s3d"], "rank '2'"),
                        ([str(other), "AsKd"], "cannot read"),
                        ([str(tmp_path / "missing.h5"), "AsKd"], "no such")]:
        result = CliRunner().invoke(main, ["holdem-abstraction", "--lookup", *args])
        assert result.exit_code == 2 and words in result.output, (args, result.output)
    assert other.read_bytes() == b"not hdf5"


def test_bucket_lookup_refuses_a_tampered_file(tmp_path, bucket_file):
    copy = tmp_path / "copy.h5"
    copy.write_bytes(bucket_file.read_bytes())
    with h5py.File(copy, "r+") as handle:
        handle["flop"]["buckets"][0] = handle["flop"]["buckets"][0] + 1
    with pytest.raises(FileFormatError, match="corrupted"):
        BucketLookup(copy)
    with h5py.File(copy, "r+") as handle:
        handle.attrs["num_ranks"] = 6
    with pytest.raises(FileFormatError, match="corrupted"):
        BucketLookup(copy)



def test_pipeline_benchmark_quick_mode_reports_every_street(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_holdem", ROOT / "benchmarks" / "bench_holdem.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.bench_pipeline(quick=True, work_dir=tmp_path)
    assert result["buckets"] == [25, 30, 40, 50]
    assert set(result["lookup"]) == {"preflop", "flop", "turn", "river"}
    section = bench.pipeline_section(result)
    assert section.startswith("## Hold'em feature and bucket pipeline")
    assert all(f"| {street} | " in section for street in ("preflop", "flop", "turn", "river"))


def test_expectation_based_streets_are_intervals_of_their_feature(features):
    store = MemoryFeatures()
    for street, arrays in features.items():
        store.write(street, arrays)
    options = dataclasses.replace(OPTIONS, flop="ehs2", turn="ehs", river="ehs")
    with ChunkRunner() as runner:
        streets = {s.street: s for s in cluster_streets(options, store, runner, progress=False)}
    for street, feature in (("flop", "ehs2"), ("turn", "ehs"), ("river", "ehs")):
        assert streets[street].method == f"{feature}-kmeans"
        assert streets[street].num_buckets == options.buckets[ROUND_NAMES.index(street)]
        values, labels = features[street][feature], streets[street].labels
        ranges = sorted((values[labels == b].min(), values[labels == b].max()) for b in np.unique(labels))
        assert all(high < low for (_, high), (low, _) in zip(ranges, ranges[1:], strict=False))
