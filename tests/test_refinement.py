"""FPIRA and CFR+IRA (Čermák, Lisý & Bošanský): abstraction operations, Theorem 1, the
Table 1 counterexample, reproducibility and agreement with plain solvers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_games import random_tree

from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA, exceeds_regret_bound, near_best_action_sets
from efgkit.abstraction.fpira import FPIRA
from efgkit.maps.infoset_map import InfosetMap
from efgkit.maps.refinable_map import RefinableMap
from efgkit.solvers import CFRPlusSolver, FictitiousPlay, Strategy, evaluate
from efgkit.solvers.trembling import trembling_best_response
from efgkit.specs import load_game


@pytest.mark.parametrize("spec, expected", [("GS3", 6), ("GS5", 10), ("P222", 22),
                                            ("P224", 30), ("GP5", 19)])
def test_coarsest_abstraction_sizes_match_the_paper(spec, expected):
    assert InfosetMap.coarsest(load_game(spec)).num_abstract == expected


def _first_action_strategy(tree):
    first = np.zeros(tree.num_infoset_actions)
    first[tree.infoset_action_offset[:-1]] = 1.0
    return Strategy(InfosetMap.identity(tree), first)


def _assert_theorem_1(tree, iterations):
    plain = FictitiousPlay(tree, alternating=True, initial_strategy=_first_action_strategy(tree))
    refined = FPIRA(tree, conventions="paper")  # Theorem 1 is the paper's FPIRA, not the code's
    for _ in range(iterations):
        expected = evaluate(plain.average_strategy()).nash_conv
        assert refined.evaluate().nash_conv == pytest.approx(expected, abs=1e-9)
        plain.iterate(1)
        refined.iterate(1)


@pytest.mark.parametrize("spec", ["kuhn", "kuhn(cards=5)", "GS3", "leduc"])
def test_fpira_exploitability_equals_fictitious_play_at_every_iteration(spec):
    _assert_theorem_1(load_game(spec), 40)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 100_000))
def test_theorem_1_on_random_games(seed):
    _assert_theorem_1(random_tree(seed), 15)


def test_fpira_runs_the_reference_conventions_by_default():
    tree = load_game("GS3")
    assert FPIRA(tree).conventions == "reference"
    assert CFRPlusIRA(tree).conventions == "paper"
    default, reference = FPIRA(tree).iterate(60), FPIRA(tree, conventions="reference").iterate(60)
    assert np.array_equal(default.behavior(), reference.behavior())
    assert not np.array_equal(default.behavior(), FPIRA(tree, conventions="paper").iterate(60).behavior())


@pytest.mark.parametrize("conventions", ["paper", "reference"])
def test_fpira_final_abstraction_sizes_near_the_papers(conventions):
    # Paper §5.7: FPIRA ends with 12 (Kuhn) and 17 (5-card Kuhn) abstract infosets.
    sizes = {}
    for spec in ("kuhn", "kuhn(cards=5)"):
        solver = FPIRA(load_game(spec), conventions=conventions)
        solver.refine(0.01, max_iterations=3000, every=50)
        sizes[spec] = solver.map.num_abstract
    assert sizes["kuhn"] == {"paper": 12, "reference": 11}[conventions]
    assert 15 <= sizes["kuhn(cards=5)"] <= 20


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 100_000), st.integers(0, 1000))
def test_refinement_only_ever_refines_and_counts_memory(seed, split_seed):
    tree = random_tree(seed)
    refinable = RefinableMap(InfosetMap.coarsest(tree))
    rng = np.random.default_rng(split_seed)
    before = refinable.abstract_of.copy()
    for _ in range(5):
        sets = refinable.abstracted_sets()
        if not sets.size:
            break
        a = int(rng.choice(sets))
        members = refinable.members(a)
        cut = int(rng.integers(1, members.size))
        shuffled = rng.permutation(members)
        refinable.split(a, [shuffled[:cut], shuffled[cut:]], keep=int(rng.integers(2)))
        after = refinable.abstract_of.copy()
        # Refinement: infosets apart before stay apart.
        for i in range(tree.num_infosets):
            together_after = after == after[i]
            assert np.all(before[together_after] == before[i])
        before = after
    frozen, index = refinable.snapshot()
    assert frozen.num_abstract == refinable.num_abstract
    assert refinable.map_entries() <= tree.num_infosets
    assert index.shape == (frozen.num_abstract_actions,)


def test_map_entries_count_infosets_outside_each_class_largest_set():
    tree = load_game("kuhn")
    refinable = RefinableMap(InfosetMap.coarsest(tree))
    assert refinable.map_entries() == 0
    largest = int(np.argmax(refinable.abstract_size[: refinable.num_abstract]))
    refinable.detach(int(refinable.members(largest)[0]))
    assert refinable.map_entries() == 1


def test_cfr_plus_ira_without_samples_is_cfr_plus_on_the_fixed_abstraction():
    tree = load_game("leduc")
    coarse = InfosetMap.coarsest(tree)
    ira = CFRPlusIRA(tree, initial=coarse, k_bound=0, k_heuristic=0, delay=10).iterate(60)
    plain = CFRPlusSolver(coarse, delay=10).iterate(60)
    assert ira.map.num_abstract == coarse.num_abstract
    assert np.allclose(ira.average_strategy().behavior(), plain.average_strategy().behavior(),
                       atol=1e-12)


def test_cfr_plus_ira_on_the_identity_is_cfr_plus():
    tree = load_game("kuhn")
    ira = CFRPlusIRA(tree, initial=InfosetMap.identity(tree), delay=0).iterate(100)
    plain = CFRPlusSolver(tree).iterate(100)
    assert np.allclose(ira.average_strategy().behavior(), plain.average_strategy().behavior())


def test_cfr_plus_ira_is_reproducible_under_a_seed():
    tree = load_game("GS4")
    runs = [CFRPlusIRA(tree, k_bound=5, k_heuristic=20, random_state=7).iterate(150)
            for _ in range(2)]
    assert np.array_equal(runs[0].map.abstract_of, runs[1].map.abstract_of)
    assert np.array_equal(runs[0].regrets, runs[1].regrets)


def test_cfr_plus_ira_converges_and_keeps_the_abstraction_small():
    tree = load_game("GS4")
    solver = CFRPlusIRA(tree, random_state=0)
    history = solver.refine(0.01, max_iterations=3000, every=25)
    assert history[-1].nash_conv <= 0.01
    assert solver.map.num_abstract < tree.num_infosets
    memory = solver.memory()
    assert memory["memory_words"] >= 2 * memory["abstract_actions"]


def _table_1(left: bool) -> np.ndarray:
    """Action values (rows I', I''; columns c, d) of the paper's counterexample."""
    return np.array([[0.0, 1.0], [0.0, 10.0]]) if left else np.array([[10.0, 0.0], [1.0, 0.0]])


def test_table_1_counterexample_heuristic_never_splits_but_the_bound_does():
    regrets = np.zeros(2)  # RM+ regrets of the abstract set I = {I', I''}
    average = np.zeros(2)
    valid = np.ones((2, 2), bool)
    window = np.zeros((2, 2))
    bound_fired = None
    for t in range(1, 4001):
        strategy = regrets / regrets.sum() if regrets.sum() > 0 else np.full(2, 0.5)
        values = _table_1(left=t % 2 == 1)
        member_regrets = values - (values @ strategy)[:, None]
        gamma = near_best_action_sets(member_regrets, valid, t)
        assert gamma[0] == gamma[1], f"the heuristic would split at iteration {t}"
        regrets = np.maximum(regrets + member_regrets.sum(axis=0), 0.0)
        average += strategy
        window += member_regrets
        if bound_fired is None and t > 1 and exceeds_regret_bound(
                window, valid, np.array([10.0, 10.0]), np.array([2, 2]), t, t, 100.0).any():
            bound_fired = t
    uniform = average / average.sum()
    assert np.allclose(uniform, [0.5, 0.5], atol=0.01)
    mean_values = (_table_1(True) + _table_1(False)) / 2
    assert np.allclose(mean_values @ uniform, [2.75, 2.75], atol=0.05)
    assert mean_values[0, 0] == 5.0 and mean_values[1, 1] == 5.0  # the game's own values
    assert bound_fired is not None


def test_reference_fpira_takes_delta_one_sided():
    tree = load_game("kuhn(cards=5)")
    paper, reference = FPIRA(tree, conventions="paper"), FPIRA(tree, conventions="reference")
    rng = np.random.default_rng(0)
    one_sided_differs = False
    for _ in range(20):
        tilde = paper.behavior()
        hat = np.clip(tilde + rng.normal(0, 0.2, tilde.shape), 0.01, None)
        both, one = paper._delta(0, tilde, hat), reference._delta(0, tilde, hat)
        swapped = reference._delta(0, hat, tilde)
        assert both == pytest.approx(max(one, swapped))
        one_sided_differs |= one < both - 1e-9
    assert one_sided_differs
    with pytest.raises(ValueError, match="conventions"):
        FPIRA(tree, conventions="code")


def test_reference_cfr_plus_ira_checks_no_bound_before_the_delay():
    tree = load_game("GS3")
    runs = {c: CFRPlusIRA(tree, k_bound=10, k_heuristic=0, delay=50, random_state=0,
                          conventions=c).iterate(49) for c in ("paper", "reference")}
    assert runs["paper"].splits["bound"] > 0
    assert runs["reference"].splits["bound"] == 0
    runs["reference"].iterate(30)
    assert runs["reference"].splits["bound"] > 0


def test_reference_cfr_plus_ira_updates_player_1_first():
    tree = load_game("kuhn")
    identity = InfosetMap.identity(tree)
    runs = {c: CFRPlusIRA(tree, initial=identity, k_bound=0, k_heuristic=0, delay=0,
                          conventions=c).iterate(1) for c in ("paper", "reference")}
    plain = CFRPlusSolver(tree, delay=0).iterate(1)
    assert np.allclose(runs["paper"].average_strategy().behavior(), plain.average_strategy().behavior())
    # Player 1's first update answers player 0's uniform start, not its updated strategy.
    player1 = np.concatenate([np.arange(tree.infoset_action_offset[i], tree.infoset_action_offset[i + 1])
                              for i in tree.infosets_of(1)])
    assert not np.allclose(runs["reference"].regrets[player1], runs["paper"].regrets[player1])


def test_reference_fpira_breaks_best_response_ties_against_a_trembling_opponent():
    tree = load_game("GS3")
    runs = {c: FPIRA(tree, conventions=c).iterate(200) for c in ("paper", "reference")}
    assert runs["paper"].splits != runs["reference"].splits


def test_reference_fpira_leaves_infosets_the_opponent_never_reaches_alone():
    # Kuhn from "pass" everywhere: player 1 never bets after a pass, so player 0's "pass,
    # bet" infoset with the king is unreached; its (trembling) best response calls, but
    # "reference" does not mix the call in there.
    tree = load_game("kuhn")
    king = list(tree.infoset_keys).index("P0 card=K bets=pb")
    solver = FPIRA(tree, initial=InfosetMap.identity(tree), conventions="reference")
    start = tree.infoset_action_offset[king]
    before = solver.behavior()
    _, actions = trembling_best_response(solver._responder, 0, before)
    assert actions[king] == 1 and np.array_equal(before[start:start + 2], [1.0, 0.0])
    assert solver._reached_histories(0)[king] == 0
    solver.iterate(1)
    assert np.array_equal(solver.behavior()[start:start + 2], [1.0, 0.0])

