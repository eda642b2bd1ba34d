"""Perfect-recall card abstractions: a bucket is exactly the history of the base buckets, the
abstraction is suit symmetric, and the streamed engine sees a lifted base strategy as the same
strategy (same exact best responses)."""

import numpy as np
import pytest

from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards
from efgkit.poker.buckets.perfect_recall import PerfectRecallCards
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.specs import make_game


@pytest.fixture(scope="module")
def three_rounds():
    game = make_game("holdem(ranks=5,rounds=3)")
    base = IsomorphicCards.hashed(game, (6, 5, 4), seed=3)
    return game, base, PerfectRecallCards(game, base)


def _base_history(base, deal, round):
    boards = [deal[2:2 + n] for n in (0, 3, 4)]
    return tuple(int(base.buckets(r, np.array(boards[r], np.int64), np.array([deal[:2]], np.int64))[0])
                 for r in range(round + 1))


def test_perfect_recall_bucket_is_exactly_the_history_of_base_buckets(three_rounds):
    game, base, recall = three_rounds
    rng = np.random.default_rng(0)
    seen = [{} for _ in range(3)]
    for _ in range(400):
        deal = rng.permutation(20)[:6].tolist()
        for r, board_cards in enumerate((0, 3, 4)):
            bucket = int(recall.buckets(r, np.array(deal[2:2 + board_cards], np.int64),
                                        np.array([deal[:2]], np.int64))[0])
            history = _base_history(base, deal, r)
            assert seen[r].setdefault(history, bucket) == bucket
            assert recall.base_buckets[r][bucket] == history[-1]
    for r in range(3):
        assert len(set(seen[r].values())) == len(seen[r])  # different histories, different buckets
        assert recall.num_buckets(r) <= np.prod([base.num_buckets(k) for k in range(r + 1)])
    assert recall.num_buckets(0) == base.num_buckets(0)
    assert recall.num_buckets(2) > base.num_buckets(2)


def test_perfect_recall_buckets_ignore_suit_names(three_rounds):
    game, _, recall = three_rounds
    betting = BettingTree(game)
    hands = betting.hands()[0]
    rng = np.random.default_rng(1)
    for _ in range(20):
        board = rng.permutation(20)[:4]
        perm = rng.permutation(4)
        ours = recall.buckets(2, board, hands)
        theirs = recall.buckets(2, board - board % 4 + perm[board % 4], hands - hands % 4 + perm[hands % 4])
        assert np.array_equal(ours, theirs)


def test_lifted_base_strategy_has_the_same_exact_exploitability():
    game = make_game("holdem(ranks=5,rounds=2)")
    base = IsomorphicCards.hashed(game, (5, 7), seed=0)
    recall = PerfectRecallCards(game, base)
    betting = BettingTree(game)
    base_layout, recall_layout = BucketLayout(betting, base), BucketLayout(betting, recall)
    strategy = base_layout.random(seed=2)
    lifted = np.empty(recall_layout.num_actions)
    rounds = betting.round[betting.decision_nodes]
    for d, width in enumerate(base_layout.width.tolist()):
        rows = strategy[base_layout.action_start[d]:base_layout.action_start[d + 1]].reshape(-1, width)
        lifted[recall_layout.action_start[d]:recall_layout.action_start[d + 1]] = (
            rows[recall.base_buckets[rounds[d]]].ravel())
    ours = StreamedEvaluator(recall_layout).evaluate(lifted, game_value=False)
    theirs = StreamedEvaluator(base_layout).evaluate(strategy, game_value=False)
    assert recall.num_buckets(1) > base.num_buckets(1)
    assert ours.nash_conv == pytest.approx(theirs.nash_conv, rel=1e-12)


def test_a_perfect_recall_strategy_file_loads_its_abstraction_again(tmp_path, three_rounds):
    """A file records the abstraction as a reference that rebuilds it (perfect recall of
    canonical buckets here); one made from in-memory tables is refused before writing."""
    from efgkit.errors import AbstractionError
    from efgkit.storage.bucket_strategy import load_bucket_strategy, save_bucket_strategy

    game, hashed_base, hashed_recall = three_rounds
    two_rounds = make_game("holdem(ranks=5,rounds=2)")  # three rounds of canonical buckets: 3.1 GB
    recall = PerfectRecallCards(two_rounds, IsomorphicCards.canonical(two_rounds))
    layout = BucketLayout(BettingTree(two_rounds), recall)
    strategy = layout.random(1)
    save_bucket_strategy(tmp_path / "recall.h5", layout, strategy, {"algorithm": "random", "iterations": 0})
    loaded, again, _, _ = load_bucket_strategy(tmp_path / "recall.h5", two_rounds)
    assert isinstance(loaded.abstraction, PerfectRecallCards) and np.array_equal(again, strategy)
    for r in range(2):
        assert loaded.abstraction.num_buckets(r) == recall.num_buckets(r)
        assert np.array_equal(loaded.abstraction.base_buckets[r], recall.base_buckets[r])
    for abstraction in (hashed_base, hashed_recall):
        with pytest.raises(AbstractionError, match="made in memory"):
            save_bucket_strategy(tmp_path / "hashed.h5", BucketLayout(BettingTree(game), abstraction),
                                 BucketLayout(BettingTree(game), abstraction).random(1), {})
        assert not (tmp_path / "hashed.h5").exists()
