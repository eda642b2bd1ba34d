"""Card abstraction: hand ranking, exact features, EMD, clustering, buckets -> InfosetMap, Burch's Leduc."""

import itertools

import numba
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.abstraction.cards.bucketing import CardAbstraction
from efgkit.abstraction.cards.clustering import FEATURES, cluster_cards
from efgkit.abstraction.cards.emd import bin_centers, emd_exact, emd_greedy, line_distances
from efgkit.abstraction.cards.hand_strength import HandStrength
from efgkit.abstraction.cards.kmeans import EMDKMeans
from efgkit.abstraction.cards.percentile import PercentileBuckets
from efgkit.abstraction.cards.situations import CardSituations
from efgkit.errors import AbstractionError, FileFormatError
from efgkit.games.hand_ranking import hand_category, hand_value
from efgkit.games.poker import CardStructure, leduc_poker
from efgkit.solvers import BestResponse, CFRPlusSolver
from efgkit.specs import load_game
from efgkit.storage.abstraction_file import load_card_abstraction, save_card_abstraction


@numba.njit(cache=True)
def _five_card_categories():
    counts = np.zeros(9, np.int64)
    cards = np.zeros(5, np.int64)
    for a in range(52):
        for b in range(a + 1, 52):
            for c in range(b + 1, 52):
                for d in range(c + 1, 52):
                    for e in range(d + 1, 52):
                        cards[0], cards[1], cards[2], cards[3], cards[4] = a, b, c, d, e
                        counts[hand_value(cards, 5, 13, 4) >> 20] += 1
    return counts


def test_hand_ranking_counts_every_five_card_hand_like_the_textbook():
    # high card, pair, two pair, trips, straight, flush, full house, quads, straight flush
    assert _five_card_categories().tolist() == [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108,
                                                3_744, 624, 40]


def test_seven_card_value_is_the_best_five_card_value():
    rng = np.random.default_rng(1)
    for _ in range(300):
        cards = rng.choice(52, 7, replace=False)
        best = max(hand_value(np.array(five), 5, 13, 4) for five in itertools.combinations(cards, 5))
        assert hand_value(cards, 7, 13, 4) == best
    wheel = np.array([12 * 4, 0 * 4 + 1, 1 * 4, 2 * 4, 3 * 4 + 2])  # A 2 3 4 5
    assert hand_category(hand_value(wheel, 5, 13, 4)) == 4


def test_two_card_ranking_is_leducs_rule():
    """Pair beats no pair, else the higher private card wins, equal ranks tie."""
    for own, other, board in itertools.product(range(3), repeat=3):
        ours = hand_value(np.array([own * 2, board * 2 + 1]), 2, 3, 2)
        theirs = hand_value(np.array([other * 2 + (own == other), board * 2 + 1]), 2, 3, 2)
        expected = 0 if own == other else 1 if own == board else -1 if other == board else (
            1 if own > other else -1)
        assert np.sign(ours - theirs) == expected


def _features_by_rank(spec, round_index):
    game = leduc_poker() if spec == "leduc" else load_game(spec).game
    situations = CardSituations(game.card_structure)
    strength = HandStrength(situations)
    rs = situations.rounds[round_index]
    structure = game.card_structure
    names = ["".join(structure.rank_name(c // structure.num_suits)
                     for c in (*rs.hands[rs.hand_of[s]], *rs.boards[rs.board_of[s]]))
             for s in range(rs.num_situations)]
    return dict(zip(names, strength.expected(round_index), strict=False)), strength


def test_expected_hand_strength_matches_hand_computed_values():
    kuhn, _ = _features_by_rank("kuhn", 0)
    assert kuhn == {"J": 0.0, "Q": 0.5, "K": 1.0}
    first, _ = _features_by_rank("leduc", 0)
    assert first == pytest.approx({"J": 0.3, "Q": 0.5, "K": 0.7})
    second, strength = _features_by_rank("leduc", 1)
    # Burch §5.4: J on Q or K, and K on J or Q, have equal hand strength.
    assert second["JQ"] == second["JK"] == second["QJ"] == 0.125
    assert second["KJ"] == second["KQ"] == second["QK"] == 0.625
    assert second["JJ"] == 1.0
    squared = strength.expected_squared(0)
    assert squared[0] == pytest.approx(0.8 * 0.125 ** 2 + 0.2 * 1.0)
    histogram = strength.histogram(0, 4)
    assert histogram[0].tolist() == [0.8, 0.0, 0.0, 0.2]


def test_ochs_against_one_cluster_is_expected_hand_strength():
    situations = CardSituations(leduc_poker().card_structure)
    strength = HandStrength(situations)
    one = strength.against_clusters(1, np.zeros(6, np.int64))
    assert one[:, 0] == pytest.approx(strength.expected(1))
    by_rank = strength.against_clusters(1, np.array([0, 0, 1, 1, 2, 2]))
    # Js on board Qs: beats nothing of rank J? It ties the other jack, loses to queens and kings.
    js_qs = situations.situation(1, (0,), (2,))
    assert by_rank[js_qs].tolist() == [0.5, 0.0, 0.0]


_histogram = st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6).filter(lambda v: sum(v) > 1e-3)


@settings(max_examples=50, deadline=None)
@given(_histogram, _histogram)
def test_1d_emd_equals_scipy_wasserstein_and_the_exact_lp(p, q):
    p, q = np.array(p) / sum(p), np.array(q) / sum(q)
    centers = bin_centers(6)
    expected = scipy.stats.wasserstein_distance(centers, centers, p, q)
    line = line_distances(np.cumsum(p)[None, :], np.cumsum(q)[None, :], np.diff(centers))[0, 0]
    assert line == pytest.approx(expected, abs=1e-12)  # the kernel k-means uses
    ground = np.abs(centers[:, None] - centers[None, :])
    assert emd_exact(p, q, ground) == pytest.approx(expected, abs=1e-9)
    assert emd_greedy(p, q, ground) >= expected - 1e-12  # a feasible plan: an upper bound


def test_emd_kmeans_is_deterministic_under_a_seed_and_sklearn_shaped():
    rng = np.random.default_rng(0)
    points = rng.dirichlet(np.ones(8), size=200)
    ground = rng.random((8, 8))
    ground = ground + ground.T
    np.fill_diagonal(ground, 0.0)
    first = EMDKMeans(5, ground, n_init=3, random_state=7).fit(points)
    second = EMDKMeans(5, ground, n_init=3, random_state=7).fit(points)
    assert np.array_equal(first.labels_, second.labels_)
    assert np.array_equal(first.cluster_centers_, second.cluster_centers_)
    assert first.cluster_centers_.shape == (5, 8) and len(set(first.labels_)) == 5
    assert np.array_equal(first.predict(points), first.labels_)
    distances = first.transform(points)
    assert first.inertia_ == pytest.approx(distances[np.arange(200), first.labels_].sum())
    with pytest.raises(AbstractionError):
        EMDKMeans(5, ground).fit(np.tile(points[:2], (10, 1)))  # 2 distinct histograms, 5 clusters
    with pytest.raises(AbstractionError, match="LineEMDKMeans"):
        EMDKMeans(5).fit(points)  # histograms on a line: one 1-D EMD k-means, LineEMDKMeans


def test_percentile_buckets_split_mass_equally_and_keep_ties_together():
    buckets = PercentileBuckets(4).fit(np.repeat(np.arange(8.0), 10))
    assert np.bincount(buckets.labels_).tolist() == [20, 20, 20, 20]
    tied = PercentileBuckets(3).fit([0.5] * 5 + [1.0])
    assert tied.n_buckets_ == 2 and len(set(tied.labels_[:5])) == 1
    assert buckets.predict([0.0, 7.0]).tolist() == [0, 3]


@pytest.mark.parametrize("feature", FEATURES)
def test_buckets_respect_suit_isomorphism_and_are_reproducible(feature):
    structure = leduc_poker(ranks=4, suits=3).card_structure
    abstraction = cluster_cards(structure, feature, [3, 6], opponent_clusters=3, n_init=2, random_state=5)
    again = cluster_cards(structure, feature, [3, 6], opponent_clusters=3, n_init=2, random_state=5)
    situations = abstraction.situations
    for r, labels in enumerate(abstraction.labels):
        assert np.array_equal(labels, again.labels[r])
        assert 1 < abstraction.num_buckets[r] <= [3, 6][r]  # equal features share a bucket
        rs = situations.rounds[r]
        for permutation in itertools.permutations(range(3)):
            def renamed(cards, permutation=permutation):
                return tuple(c - c % 3 + permutation[c % 3] for c in cards)

            for s in range(rs.num_situations):
                hand, board = tuple(rs.hands[rs.hand_of[s]]), tuple(rs.boards[rs.board_of[s]])
                twin = situations.situation(r, renamed(hand), renamed(board))
                assert labels[twin] == labels[s]


def test_lossless_buckets_give_the_unabstracted_game():
    tree = load_game("leduc")
    abstraction = cluster_cards(tree.game.card_structure, "ehs", [None, None])
    for recall in ("imperfect", "perfect"):
        assert abstraction.infoset_map(tree, recall).num_abstract == tree.num_infosets


def test_imperfect_recall_forgets_earlier_buckets_and_perfect_recall_keeps_them():
    tree = load_game("leduc(ranks=5,suits=2)")
    abstraction = cluster_cards(tree.game.card_structure, "hist", [5, 4], n_init=2, random_state=0)
    imperfect = abstraction.infoset_map(tree, "imperfect")
    perfect = abstraction.infoset_map(tree, "perfect")
    assert imperfect.num_abstract < perfect.num_abstract < tree.num_infosets
    # Perfect recall refines imperfect recall: members of a perfect-recall set share an imperfect one.
    assert all(len(set(imperfect.abstract_of[perfect.members(a)])) == 1 for a in range(perfect.num_abstract))
    behavior = CFRPlusSolver(imperfect).iterate(5).average_strategy().behavior()
    for a in range(0, imperfect.num_abstract, 7):  # every member of an abstract set plays alike
        rows = [behavior[tree.infoset_action_offset[i]:tree.infoset_action_offset[i + 1]]
                for i in imperfect.members(a)]
        assert all(np.array_equal(rows[0], row) for row in rows)


def test_burch_leduc_abstraction_is_exploitable_for_0_382_chips():
    """Burch's thesis §5.4: J cannot tell a Q from a K board, K cannot tell J from Q. That is
    perfect-recall E[HS] bucketing with 3 buckets per round; its CFR+ equilibrium loses
    0.382 chips/game to a best response (NashConv / 2; NashConv 0.765)."""
    tree = load_game("leduc")
    abstraction = cluster_cards(tree.game.card_structure, "ehs", [3, 3], random_state=0)
    infoset_map = abstraction.infoset_map(tree, "perfect")
    assert infoset_map.num_abstract == 3 * 6 + 7 * 30
    strategy = CFRPlusSolver(infoset_map).iterate(2000).average_strategy()
    evaluation = BestResponse(infoset_map).evaluate(strategy)
    assert evaluation.exploitability == pytest.approx(0.3823, abs=5e-4)


def test_card_abstraction_rejects_bad_input():
    structure = leduc_poker().card_structure
    with pytest.raises(AbstractionError, match="1 to 6 buckets"):
        cluster_cards(structure, "ehs", [7, 3])
    with pytest.raises(AbstractionError, match="one bucket count per round"):
        cluster_cards(structure, "ehs", [3])
    with pytest.raises(AbstractionError, match="scalar feature"):
        cluster_cards(structure, "hist", [3, 3], method="percentile")
    with pytest.raises(AbstractionError, match="not one"):
        CardAbstraction(structure, [np.zeros(6, int), np.zeros(30, int)]).infoset_map(load_game("GS3"))
    with pytest.raises(AbstractionError, match="another deck"):
        CardAbstraction(CardStructure(4, 2, 1, (0, 1)), [np.zeros(8, int), np.zeros(56, int)]).infoset_map(
            load_game("leduc"))


def test_abstraction_file_round_trip_and_checks(tmp_path):
    tree = load_game("leduc")
    abstraction = cluster_cards(tree.game.card_structure, "pa", [2, 3], n_init=2, random_state=1)
    path = tmp_path / "abs.h5"
    written = save_card_abstraction(path, abstraction, tree, "perfect")
    stored = load_card_abstraction(path, tree)
    assert stored.recall == "perfect" and stored.card_abstraction.feature == "pa"
    assert np.array_equal(stored.infoset_map.abstract_of, written.abstract_of)
    for stored_labels, labels in zip(stored.card_abstraction.labels, abstraction.labels, strict=True):
        assert np.array_equal(stored_labels, labels)
    with pytest.raises(FileFormatError, match="not 'kuhn'"):
        load_card_abstraction(path, load_game("kuhn"))
    import h5py

    with h5py.File(path, "r+") as handle:
        handle["buckets/round_1"][0] += 1
    with pytest.raises(FileFormatError, match="corrupted"):
        load_card_abstraction(path, tree)
