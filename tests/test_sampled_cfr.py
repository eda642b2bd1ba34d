"""CFR with public chance sampling on card abstractions: exact where nothing is sampled,
unbiased where boards are, converging in the full game (streamed best response)."""

from __future__ import annotations

from itertools import combinations, permutations
from math import comb

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.core.regret_rules import VARIANT_DCFR, discount_rule
from efgkit.core.solver_state import SolverState
from efgkit.errors import FileFormatError, ParameterError
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import IsomorphicCards, LosslessCards
from efgkit.poker.buckets.perfect_recall import PerfectRecallCards
from efgkit.poker.codes import REGRETS
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.vector_cfr import VectorCFR, reach_pass, value_pass
from efgkit.poker.streamed import sampled_cfr
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.poker.streamed.sampled_cfr import (
    SampledCFR,
    _run_sums,
    _sample_cards,
    _times_strategy,
    _walk_player,
    board_sampling,
)
from efgkit.solvers.strategy import normalize_per_infoset
from efgkit.specs import make_game


@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)"])
@pytest.mark.parametrize("variant", ["cfr", "cfr+", "dcfr", "pcfr+", "pdcfr+", "sapcfr+"])
def test_without_boards_it_is_vector_cfr(spec, variant):
    """One-round games have no public chance: every iterate equals the vector engine's."""
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    public = PublicTree(game)
    sampled = SampledCFR(layout, variant=variant).iterate(30)
    full = VectorCFR(public, StrategyLayout.from_bucket_layout(public, layout), variant=variant).iterate(30)
    np.testing.assert_allclose(sampled.regrets, full.regrets, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sampled.average_accumulator, full.average_accumulator, rtol=0, atol=1e-12)


@pytest.mark.parametrize("spec", ["leduc", "holdem(ranks=3,rounds=2,caps=2-1)"])
def test_sampled_regrets_average_to_the_full_ones(spec):
    """Over every board sequence (each equally likely to be sampled) the mean of one
    iteration's regrets equals the full vector CFR's: public chance sampling is unbiased."""
    game = make_game(spec)
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    solver = SampledCFR(layout, variant="cfr")
    solver._state.strategy[:] = np.random.default_rng(1).random(layout.num_actions) + 0.1
    offsets = layout.row_offsets()
    totals = np.add.reduceat(solver._state.strategy, offsets[:-1])
    solver._state.strategy[:] /= np.repeat(totals, np.diff(offsets))
    sizes = layout.betting.deal_size.tolist()
    deferred = discount_rule(VARIANT_DCFR, 1, 1.5, 0.0, 2.0, 0)  # a rule that leaves updates to the caller
    mean = np.zeros(layout.num_actions)
    sequences = 0
    for cards in permutations(range(layout.betting.num_cards), sum(sizes)):
        deals, start = [], 0
        for size in sizes:
            deals.append(cards[start:start + size])
            start += size
        if any(list(deal) != sorted(deal) for deal in deals):
            continue  # one order per deal: the sampler sorts each deal's cards
        solver._state.instant[:] = 0.0
        _walk_player(solver._view, solver.board_of(cards), solver._walk, solver._state, 0, 0.0, solver._fixed,
                     deferred)
        mean += solver._state.instant
        sequences += 1
    mean /= sequences
    public = PublicTree(game)
    full = VectorCFR(public, StrategyLayout.from_bucket_layout(public, layout), variant="cfr")
    full.strategy[:] = solver._state.strategy
    full._state.instant[:] = 0.0
    reach_pass(full._tree_view, full._layout_view, full.strategy, full._work.reach)
    value_pass(full._tree_view, full._layout_view, full.strategy, 0, REGRETS, full._work,
               full._state.instant)
    np.testing.assert_allclose(mean, full._state.instant, rtol=0, atol=1e-12)


def test_it_converges_in_the_full_game_and_is_reproducible():
    game = make_game("holdem(ranks=3,rounds=2)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))
    evaluator = StreamedEvaluator(layout)
    uniform = evaluator.evaluate(layout.uniform(), game_value=False).nash_conv
    first = SampledCFR(layout, seed=4).iterate(300)
    early = evaluator.evaluate(first.average_strategy(), game_value=False).nash_conv
    first.iterate(1200)
    late = evaluator.evaluate(first.average_strategy(), game_value=False).nash_conv
    assert late < early < uniform / 4
    again = SampledCFR(layout, seed=4).iterate(1500)
    assert np.array_equal(again.average_accumulator, first.average_accumulator)


def test_bad_parameters_are_refused():
    layout = BucketLayout(BettingTree(make_game("kuhn")), LosslessCards(make_game("kuhn")))
    with pytest.raises(ParameterError, match="alpha"):
        SampledCFR(layout, variant="cfr+", alpha=2.0)
    with pytest.raises(ParameterError, match="no parameter"):
        SampledCFR(layout, variant="cfr+", speed=2.0)
    with pytest.raises(ParameterError, match="iterations"):
        SampledCFR(layout).iterate(-1)



# ------------------------------------------------------------------ boards and buckets in the kernel
def test_kernel_buckets_match_the_card_abstractions_definitions():
    """hand_buckets: lossless buckets are (each deal's rank among its combinations in
    lexicographic order, hand); isomorphic ones the table entry of the hand's canonical index."""
    game = make_game("holdem(ranks=3,rounds=3)")
    betting = BettingTree(game)
    hand_cards, hand_mask = betting.hands()
    lossless, hashed = LosslessCards(game), IsomorphicCards.hashed(game, (3, 5, 7), seed=2)
    n, sizes = betting.num_cards, betting.deal_size.tolist()
    rank = {size: {c: i for i, c in enumerate(combinations(range(n), size))} for size in set(sizes)}
    rng = np.random.default_rng(0)
    for _ in range(30):
        cards = rng.choice(n, sum(sizes), replace=False)
        for r in range(game.num_rounds):
            board = cards[:sum(sizes[:r])]
            valid = (hand_mask & int((np.int64(1) << board).sum())) == 0
            key, start = 0, 0
            for size in sizes[:r]:
                key = key * comb(n, size) + rank[size][tuple(sorted(board[start:start + size].tolist()))]
                start += size
            expected = key * hand_cards.shape[0] + np.arange(hand_cards.shape[0])
            assert np.array_equal(lossless.buckets(r, board, hand_cards)[valid], expected[valid])
            together = np.broadcast_to(board, (int(valid.sum()), board.size))
            rows = np.concatenate([hand_cards[valid], together], axis=1)
            table = hashed._tables[r][hashed._indexer(r).index(rows)]
            assert np.array_equal(hashed.buckets(r, board, hand_cards)[valid], table)


def test_every_holdem_abstraction_gives_the_kernels_one_table_type():
    """numba compiles the sampled walk once per type of ``kernel_tables()``: hashed, canonical
    and perfect-recall abstractions of hold'em games of two to four rounds share one, and a
    table of more than 65,536 buckets keeps its wider dtype."""
    specs = ("holdem(ranks=3,rounds=2)", "holdem(ranks=4,rounds=3)", "holdem(ranks=4)")
    games = [make_game(spec) for spec in specs]
    kinds = [IsomorphicCards.hashed(game, (3, 5, 7, 9), seed=2) for game in games]
    kinds += [IsomorphicCards.canonical(games[0]), PerfectRecallCards(games[1], kinds[1])]
    assert len({numba.typeof(cards.kernel_tables()) for cards in kinds}) == 1
    wide = IsomorphicCards(games[0], [np.arange(t.size) * 2 ** 14 for t in kinds[0].tables], "wide")
    assert wide.kernel_tables().buckets[1].dtype == np.int64
    board, hands = np.array([0, 1, 2], np.int64), np.array([[4, 5], [8, 11]], np.int64)
    rows = np.concatenate([hands, np.tile(board, (2, 1))], axis=1)
    assert np.array_equal(wide.buckets(1, board, hands), wide.row_buckets(1, rows))
    assert np.array_equal(kinds[0].buckets(1, board, hands), kinds[0].row_buckets(1, rows))


def test_sampled_boards_are_uniform_deals():
    """The kernel's Fisher-Yates deal from uniforms: every first card equally often."""
    game = make_game("leduc")
    solver = SampledCFR(BucketLayout(BettingTree(game), LosslessCards(game)), seed=3)
    counts = np.zeros(6)
    for u in np.random.default_rng(5).random((6000, 1)):
        _sample_cards(solver._sampler, u)
        counts[solver._sampler.cards[0]] += 1
    assert counts.min() > 900 and counts.max() < 1100


# ------------------------------------------------------------------ precision and resuming
GAME = "holdem(ranks=3,rounds=2)"


@pytest.fixture(scope="module")
def canonical_layout():
    game = make_game(GAME)
    return BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))


@pytest.mark.parametrize("precision, variant, scaling", [
    ("float64", "pcfr+", {}), ("float32", "cfr+", {}), ("int32", "cfr+", {}),
    ("int32", "cfr+", {"regret_scaling": (2.0**14, 0.5), "average_scaling": (2.0**21, 1.0)}),
])
def test_a_stopped_run_resumes_bit_identically(canonical_layout, precision, variant, scaling):
    """Also with per-round int32 scales, the second round's halving on the way."""
    uninterrupted = SampledCFR(canonical_layout, variant=variant, precision=precision, seed=9,
                               **scaling).iterate(60)
    first = SampledCFR(canonical_layout, variant=variant, precision=precision, seed=9, **scaling).iterate(23)
    arrays = {name: array.copy() for name, array in first.state_arrays().items()}
    second = SampledCFR(canonical_layout, variant=variant, precision=precision, seed=1, **scaling)
    second.load_state(SolverState(arrays, first.iteration, first.rng_state))
    second.iterate(37)
    for name, array in uninterrupted.state_arrays().items():
        assert array.dtype == np.dtype(precision if name != "scaling" else "float64")
        assert np.array_equal(second.state_arrays()[name], array), name
    assert np.array_equal(second.current_strategy(), uninterrupted.current_strategy())


@numba.njit
def _sums_and_probabilities(values, board, strategy, m, a, sums, probability):
    _run_sums(values, board, 0, sums)
    _times_strategy(np.ones(values.shape[0]), probability, strategy, board, 0, 0, m, a)


def _lane_sum(run):
    """The sum ``_run_sums`` promises for one run, in Python floats."""
    if len(run) < sampled_cfr.SHORT_RUN:
        return sum(run, 0.0)  # in order from 0.0
    lanes, whole = [0.0] * 4, len(run) // 4 * 4
    for j, v in enumerate(run[:whole]):
        lanes[j % 4] += v
    for v in run[whole:]:
        lanes[0] += v
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=5), st.integers(2, 3), st.integers(0, 2**32 - 1))
def test_run_sums_are_in_order_or_in_four_lanes_whatever_the_path(canonical_layout, lengths, m, seed):
    """A run's sum is its hands in order (fewer than SHORT_RUN) or in four lanes, bit for bit;
    a level of short runs walked hand by hand gets the same sums and products as its loops
    per run."""
    rng = np.random.default_rng(seed)
    _, board, _, _ = board_sampling(canonical_layout)
    count, runs = sum(lengths), len(lengths)
    start = np.concatenate([[0], np.cumsum(lengths)])
    buckets = np.sort(rng.choice(20, runs, replace=False))
    board.valid_count[0], board.run_count[0] = count, runs
    board.run_start[0, :runs + 1], board.run_bucket[0, :runs] = start, buckets
    board.position_run[0, :count] = np.repeat(np.arange(runs), lengths)
    board.position_bucket[0, :count] = np.repeat(buckets, lengths)
    values = rng.normal(size=count) * 10.0 ** rng.integers(-8, 8, count)
    strategy = rng.random(20 * m)
    a = int(rng.integers(m))
    results = {}
    for hand_wise in (False, True) if max(lengths) < sampled_cfr.SHORT_RUN else (False,):
        board.hand_wise[0] = hand_wise
        sums, probability = np.full(count, np.nan), np.full(count, np.nan)
        _sums_and_probabilities(values, board, strategy, m, a, sums, probability)
        results[hand_wise] = sums[:runs], probability
    expected = [_lane_sum(values[start[r]:start[r + 1]].tolist()) for r in range(runs)]
    for sums, probability in results.values():
        assert np.array_equal(sums, expected)
        assert np.array_equal(probability, strategy[np.repeat(buckets, lengths) * m + a])


@pytest.mark.parametrize("precision, variant", [("float64", "cfr+"), ("float32", "cfr"), ("int32", "cfr+")])
def test_cfr_and_cfr_plus_keep_instantaneous_regrets_in_the_walk(canonical_layout, precision, variant):
    """One-board CFR and CFR+ sum a node's instantaneous regrets in the walk's ``row_instant``:
    the state's ``instant`` array stays zero (and DCFR, which updates every row after the walk,
    still uses it)."""
    solver = SampledCFR(canonical_layout, variant=variant, precision=precision, seed=4).iterate(15)
    assert not solver._state.instant.any() and solver.regrets.any()
    assert SampledCFR(canonical_layout, variant="dcfr", seed=4).iterate(15)._state.instant.any()


def test_narrow_precisions_follow_the_float64_run(canonical_layout):
    """float32 and int32 (scaled as the released HULHE code) store their own types and stay
    close to the float64 run on the same boards: float32 row by row, int32 in NashConv (its
    rounded average contributions move rows that are rarely reached)."""
    runs = {p: SampledCFR(canonical_layout, precision=p, seed=2).iterate(200) for p in ("float64", "float32",
                                                                                       "int32")}
    assert runs["int32"].regrets.dtype == np.int32 and runs["float32"].average_accumulator.dtype == np.float32
    assert runs["int32"].memory()["state"] == runs["float64"].memory()["state"] // 2 + 32  # 2 scales a round
    assert runs["float32"].memory()["state"] == runs["float64"].memory()["state"] // 2
    assert np.max(np.abs(runs["float32"].average_strategy() - runs["float64"].average_strategy())) < 1e-4
    evaluator = StreamedEvaluator(canonical_layout)
    nash_conv = {p: evaluator.evaluate(runs[p].average_strategy(), game_value=False).nash_conv for p in runs}
    assert abs(nash_conv["int32"] - nash_conv["float64"]) < 0.05 * nash_conv["float64"]


def test_int32_steps_are_the_rounded_scaled_regrets(canonical_layout):
    """One CFR+ iteration from zero: R = max(lrint(r x 16 x hand pairs), 0), r the float64
    instantaneous regret (float32 accumulation can move a rounding by one)."""
    exact = SampledCFR(canonical_layout, seed=4).iterate(1)
    fixed = SampledCFR(canonical_layout, precision="int32", seed=4).iterate(1)
    pairs = 1 / fixed._board.weight[0]
    start = canonical_layout.action_start
    first = np.concatenate([np.arange(start[d], start[d + 1]) for d in exact._decisions[0]])
    expected = np.maximum(np.rint(exact.regrets[first] * 16 * pairs), 0)
    assert np.max(np.abs(fixed.regrets[first] - expected)) <= 1 and expected.max() > 100


def test_int32_halves_its_scale_instead_of_overflowing(canonical_layout):
    """Scaled 4,096 times finer than the default, the regrets and accumulators outgrow 2**30
    within 100 iterations: each array and its scale halve, and regret matching still follows
    the float64 run (what the scale keeps is precision the default scaling lacks)."""
    fine = SampledCFR(canonical_layout, precision="int32", regret_scaling=2.0**16, average_scaling=2.0**22,
                      seed=6).iterate(100)
    scale = fine._fixed.scale
    assert scale[0].min() < 2.0**16 / fine._board.weight[0] and scale[1].min() < 2.0**22
    assert fine.regrets.max() <= 2**30 and fine.average_accumulator.max() <= 2**30
    exact = SampledCFR(canonical_layout, seed=6).iterate(100)
    assert np.max(np.abs(fine.current_strategy() - exact.current_strategy())) < 1e-3


def test_int32_scales_and_halves_each_round_on_its_own(canonical_layout):
    """Fine scales on the first round only: its entries and scales halve as they outgrow
    int32, the second round keeps the default scale and small entries."""
    per_round = SampledCFR(canonical_layout, precision="int32", regret_scaling=(2.0**16, 16),
                           average_scaling=(2.0**22, 16), seed=6).iterate(100)
    pairs = 1 / per_round._board.weight[0]
    assert per_round._fixed.scale[0, 0] < 2.0**16 * pairs and per_round._fixed.scale[1, 0] < 2.0**22
    assert per_round._fixed.scale[0, 1] == 16 * pairs and per_round._fixed.scale[1, 1] == 16
    betting = canonical_layout.betting
    start, first = canonical_layout.action_start, np.zeros(canonical_layout.num_actions, bool)
    for d, node in enumerate(betting.decision_nodes):
        first[start[d]:start[d + 1]] = betting.round[node] == 0
    assert per_round.regrets[first].max() > 2**29 and per_round.average_accumulator[first].max() > 2**29
    assert 0 < per_round.regrets[~first].max() < 2**20 and per_round.average_accumulator[~first].max() < 2**24



def test_coarse_late_round_scales_follow_the_float64_run(canonical_layout):
    """The HULHE run's shape of scaling, coarser on the last round, still solves: NashConv
    within 10% of the float64 run's on the same boards."""
    coarse = SampledCFR(canonical_layout, precision="int32", regret_scaling=(16, 2), average_scaling=(16, 4),
                        seed=2).iterate(200)
    exact = SampledCFR(canonical_layout, seed=2).iterate(200)
    evaluator = StreamedEvaluator(canonical_layout)
    nash_conv = [evaluator.evaluate(run.average_strategy(), game_value=False).nash_conv
                 for run in (coarse, exact)]
    assert abs(nash_conv[0] - nash_conv[1]) < 0.1 * nash_conv[1]


def test_bad_precisions_are_refused(canonical_layout):
    with pytest.raises(ParameterError, match="int32 runs cfr\\+"):
        SampledCFR(canonical_layout, variant="dcfr", precision="int32")
    with pytest.raises(ParameterError, match="precision must be"):
        SampledCFR(canonical_layout, precision="float16")
    with pytest.raises(ParameterError, match="int32 only"):
        SampledCFR(canonical_layout, regret_scaling=4.0)
    for scaling, message in (((16, 16, 16), "regret_scaling needs one value per round .* \\(2\\), got 3"),
                             ((16, 0), "regret_scaling must be finite and > 0"),
                             ((float("nan"), 1), "regret_scaling must be finite"),
                             ((float("inf"), 1), "regret_scaling must be finite"),
                             ("sixteen", "regret_scaling must be numbers")):
        with pytest.raises(ParameterError, match=message):
            SampledCFR(canonical_layout, precision="int32", regret_scaling=scaling)
    with pytest.raises(ParameterError, match="average_scaling must be finite and > 0"):
        SampledCFR(canonical_layout, precision="int32", average_scaling=-1.0)
    solver = SampledCFR(canonical_layout, precision="float32")
    wrong = {name: array.astype(np.float64) for name, array in solver.state_arrays().items()}
    with pytest.raises(FileFormatError, match="expected float32"):
        solver.load_state(SolverState(wrong, 5, solver.rng_state))


def test_the_average_strategy_is_normalised_in_slices_of_rows(canonical_layout, monkeypatch):
    """Slices of a decision's rows (few here) give exactly the whole normalisation, uniform
    where nothing accumulated."""
    solver = SampledCFR(canonical_layout, precision="int32", seed=3).iterate(30)
    accumulator = solver.average_accumulator.astype(np.float64)
    whole = normalize_per_infoset(accumulator, canonical_layout.row_offsets())
    monkeypatch.setattr(sampled_cfr, "NORMALIZED_ROWS", 7)
    assert np.array_equal(solver.average_strategy(), whole) and np.any(accumulator == 0)
