"""Every reduced hold'em deck (5 to 13 ranks) names a hand one way and gives it one bucket on
every path: the game's card names and infoset keys, the bucket file's deck and lookups, the
card abstraction the engines use, the compact export read by the Python and the C reader,
and the game read back from its ACPC game definition.

A hand is dealt as the game's card ids; its name is the game's. Each path is given only what
it takes (the bucket lookup the name, the engines the game's ids, the readers the infoset
key), and each must answer the reference bucket: the canonical index of the hand as the
bucket file's deck parses the name, looked up in the bucket table. Kept fast: two betting
rounds (preflop and flop), three buckets a street, a few hands per deck; a bucket file on
disk for the decks whose river table is small (5 to 8 ranks), the same tables in memory
above (their turn and river tables run to 1.2e8 entries).
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup, StreetBuckets, save_buckets
from efgkit.abstraction.cards.holdem.deck import ROUND_NAMES, Deck
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.games.poker import rank_symbols
from efgkit.interop.acpc import acpc_rules, game_definition
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.specs import make_game
from efgkit.storage import compact_reader
from efgkit.storage.bucket_strategy import betting_digest
from efgkit.storage.compact_holdem import export_bucket_strategy
from efgkit.storage.compact_reader import CompactStrategy

BUCKETS = 3
HANDS = 4
FILE_RANKS = range(5, 9)
STANDARD = "23456789TJQKA"


@pytest.fixture(scope="module")
def efgs_query(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on this machine")
    sources = Path(compact_reader.__file__).parent / "efgs_c"
    tool = tmp_path_factory.mktemp("c") / "efgs_query"
    subprocess.run([compiler, "-std=c99", "-O2", str(sources / "efgs.c"), str(sources / "efgs_computed.c"),
                    str(sources / "efgs_compressed.c"),
                    str(sources / "efgs_query.c"),
                    "-o", str(tool)], check=True)
    return tool


def _tables(ranks: int, rounds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random buckets of every canonical hand of the first ``rounds`` streets (each bucket used)."""
    tables = []
    for board in (0, 3, 4, 5)[:rounds]:
        indexer = hand_indexer(board, ranks)
        table = rng.integers(0, BUCKETS, indexer.round_size(indexer.num_rounds - 1))
        table[:BUCKETS] = np.arange(BUCKETS)
        tables.append(table)
    return tables


def _buckets(ranks: int, game, folder: Path, rng) -> tuple[IsomorphicCards, BucketLookup | None]:
    """The card abstraction of the game, from a bucket file written here (FILE_RANKS) or from
    the same kind of tables in memory."""
    if ranks not in FILE_RANKS:
        return IsomorphicCards(game, _tables(ranks, 2, rng), f"random {ranks}-rank tables"), None
    streets = [StreetBuckets(name, table, np.zeros((BUCKETS, 1)), "random", "none", 0.0, 0)
               for name, table in zip(ROUND_NAMES, _tables(ranks, 4, rng), strict=True)]
    path = folder / f"buckets-{ranks}.h5"
    save_buckets(path, ranks, streets, {})
    return IsomorphicCards.from_bucket_file(game, path), BucketLookup(path)


def _strategy(layout: BucketLayout) -> np.ndarray:
    """Rows that tell their bucket apart after 8-bit rounding: bucket b calls with (b + 1) / 5."""
    strategy = np.empty(layout.num_actions)
    for d, width in enumerate(layout.width.tolist()):
        rows = strategy[layout.action_start[d]:layout.action_start[d + 1]].reshape(-1, width)
        for bucket in range(rows.shape[0]):
            rows[bucket] = (1 - (bucket + 1) / 5) / (width - 1)
            rows[bucket, 1] = (bucket + 1) / 5
    return strategy


@pytest.mark.parametrize("ranks", range(5, 14))
def test_a_hand_has_one_name_and_one_bucket_on_every_path(ranks, tmp_path, efgs_query):
    game = make_game(f"holdem(ranks={ranks},rounds=2)")
    names = game.card_structure.card_name
    deck = Deck(ranks)
    # the names: the top ranks of the standard deck, the same cards in the game and the bucket file
    assert rank_symbols(ranks, 4) == STANDARD[13 - ranks:] == deck.rank_chars
    assert sorted(map(names, range(4 * ranks))) == sorted(map(deck.card_text, range(4 * ranks)))
    acpc_file = tmp_path / "game.acpc"
    acpc_file.write_text(game_definition(game).text())
    acpc_game = acpc_rules(acpc_file)
    deck_ids = range(4 * ranks)
    assert list(map(acpc_game.card_structure.card_name, deck_ids)) == list(map(names, deck_ids))
    betting = BettingTree(game)
    assert betting_digest(BettingTree(acpc_game)) == betting_digest(betting)

    rng = np.random.default_rng(ranks)
    abstraction, lookup = _buckets(ranks, game, tmp_path, rng)
    layout = BucketLayout(betting, abstraction)
    export = export_bucket_strategy(layout, _strategy(layout), tmp_path / "s.efgs")
    deals, keys, expected = random.Random(ranks), [], []
    for _ in range(HANDS):
        cards = deals.sample(range(4 * ranks), 7)
        hands = [sorted(cards[:2]), sorted(cards[2:4])]
        flop = sorted(cards[4:7])
        hand_name, flop_name = "".join(map(names, hands[0])), "".join(map(names, flop))
        # the game's keys, dealt by name, read the same in the game and its ACPC definition
        states = []
        for rules in (game, acpc_game):
            state = rules.initial_state()
            for action in (hand_name, "".join(map(names, hands[1])), "call", "call", flop_name):
                state = rules.apply(state, action)
            states.append(state)
        key = game.infoset_key(states[0])
        assert key == acpc_game.infoset_key(states[1]) == f"P0 cards={hand_name} board={flop_name} bets=cc/"
        # the reference: the bucket file's deck parses the names; its canonical index picks the bucket
        for round_index, board_name, board in ((0, "", []), (1, flop_name, flop)):
            parsed = np.concatenate([deck.parse(hand_name), deck.parse(board_name)])
            assert deck.format(parsed[:2]) == hand_name and deck.format(parsed[2:]) == board_name
            index = int(hand_indexer(len(board), ranks).index(parsed[None, :])[0])
            reference = int(abstraction.tables[round_index][index])
            if lookup is not None:
                assert lookup.bucket(ROUND_NAMES[round_index], hand_name, board_name) == reference
            engine = abstraction.buckets(round_index, np.array(board, np.int64),
                                         np.array([hands[0]], np.int64))
            assert int(engine[0]) == reference
        node = betting.node_of_history[states[0].betting.history]
        d = int(betting.decision_index[node])
        start = int(layout.action_start[d]) + reference * int(layout.width[d])
        row = export.weights[start:start + int(layout.width[d])].tolist()
        keys.append(key)
        expected.append(row)
    with CompactStrategy(str(tmp_path / "s.efgs")) as reader:
        assert [list(reader.quantized(key)) for key in keys] == expected
    result = subprocess.run([str(efgs_query), "--weights", str(tmp_path / "s.efgs")], capture_output=True,
                            text=True, check=True, input="".join(f"{key}\n" for key in keys))
    assert result.stdout.splitlines() == [f"{key}\t{' '.join(map(str, row))}"
                                          for key, row in zip(keys, expected, strict=True)]
    if lookup is not None:
        lookup.close()
