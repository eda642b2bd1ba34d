"""Linear CFR, DCFR+, PCFR+ and PDCFR+: a plain reference implementation, the LP value,
parameter checks and bit-identical resume."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from random_games import random_trees

from efgkit.errors import ParameterError
from efgkit.solvers import BestResponse, SequenceFormLP
from efgkit.solvers.cfr import PREDICTIVE, SOLVER_CLASSES, VARIANT_PARAMETERS
from efgkit.specs import load_game
from efgkit.storage.checkpoint import resume, write_checkpoint

NEW_VARIANTS = ("lcfr", "dcfr+", "pcfr+", "pdcfr+")


class ReferenceCFR:
    """The variants written out plainly: recursive passes over the tree, one player at a time.

    Alternating updates, player 0 first; regrets per infoset action. Linear CFR weights
    iteration t by t (regrets discounted by t/(t+1) after each update, the average by
    t/(t+1)); DCFR+ / PDCFR+ clip R d(t-1) + r with d(s) = s^a/(s^a+1) and weight the
    average by t^g; PCFR+ clips R + r; the predictive ones play [R d + r]^+ (d = 1 for PCFR+).
    """

    def __init__(self, tree, variant: str) -> None:
        self.tree, self.variant = tree, variant
        self.parameters = VARIANT_PARAMETERS[variant]
        actions = tree.num_infoset_actions
        self.regrets, self.average, self.last = np.zeros(actions), np.zeros(actions), np.zeros(actions)
        self.strategy = np.zeros(actions)
        self.t = 0
        for infoset in range(tree.num_infosets):
            self._match(infoset)

    def _slots(self, infoset):
        lo = self.tree.infoset_action_offset[infoset]
        return slice(lo, lo + self.tree.infoset_num_actions[infoset])

    def _d(self, s: int) -> float:
        alpha = self.parameters.get("alpha", 0.0)
        return 0.0 if s <= 0 else s**alpha / (s**alpha + 1)

    def _match(self, infoset) -> None:
        part = self._slots(infoset)
        if self.variant in PREDICTIVE:
            scale = self._d(self.t) if self.variant == "pdcfr+" else 1.0
            target = np.maximum(scale * self.regrets[part] + self.last[part], 0.0)
        else:
            target = np.maximum(self.regrets[part], 0.0)
        total = target.sum()
        self.strategy[part] = target / total if total > 0 else 1.0 / target.size

    def _walk(self, node, player, reach_own, reach_other, instant, own_reach):
        tree = self.tree
        kind = tree.node_kind[node]
        sign = 1.0 if player == 0 else -1.0
        if kind == 3:
            return sign * tree.node_utility[node]
        first, count = tree.node_first_child[node], tree.node_num_children[node]
        children = range(first, first + count)
        if kind == 2:
            return sum(tree.node_chance_prob[c] * self._walk(c, player, reach_own,
                                                             reach_other * tree.node_chance_prob[c], instant,
                                                             own_reach) for c in children)
        infoset = tree.node_infoset[node]
        sigma = self.strategy[self._slots(infoset)]
        if kind != player:
            return sum(sigma[k] * self._walk(c, player, reach_own, reach_other * sigma[k], instant, own_reach)
                       for k, c in enumerate(children))
        own_reach[infoset] = reach_own
        values = np.array([self._walk(c, player, reach_own * sigma[k], reach_other, instant, own_reach)
                           for k, c in enumerate(children)])
        value = float(sigma @ values)
        instant[self._slots(infoset)] += reach_other * (values - value)
        return value

    def iterate(self, iterations: int) -> ReferenceCFR:
        tree = self.tree
        for _ in range(iterations):
            self.t += 1
            t = self.t
            for player in (0, 1):
                instant = np.zeros_like(self.regrets)
                own_reach = np.zeros(tree.num_infosets)
                self._walk(0, player, 1.0, 1.0, instant, own_reach)
                gamma = self.parameters.get("gamma", 1.0)
                weight = 1.0 if self.variant == "lcfr" else float(t) ** gamma
                for infoset in np.flatnonzero(tree.infoset_player == player):
                    part = self._slots(infoset)
                    self.average[part] += weight * own_reach[infoset] * self.strategy[part]
                    r = self.regrets[part]
                    if self.variant == "lcfr":
                        r = (r + instant[part]) * t / (t + 1)
                        self.average[part] *= t / (t + 1)
                    elif self.variant == "pcfr+":
                        r = np.maximum(r + instant[part], 0.0)
                    else:
                        r = np.maximum(r * self._d(t - 1) + instant[part], 0.0)
                    self.regrets[part] = r
                    self.last[part] = instant[part]
                    self._match(infoset)
        return self


@pytest.mark.parametrize("variant", NEW_VARIANTS)
def test_variant_equals_the_plain_reference_on_kuhn_for_50_iterations(variant):
    tree = load_game("kuhn")
    solver = SOLVER_CLASSES[variant](tree)
    reference = ReferenceCFR(tree, variant)
    for _ in range(50):
        solver.iterate(1)
        reference.iterate(1)
        # linear CFR's regrets are never clipped: sums of 50 iterations' signed terms keep 1e-11
        np.testing.assert_allclose(solver.regrets, reference.regrets, rtol=0,
                                   atol=1e-11 if variant == "lcfr" else 1e-12)
        # regret matching divides by small regret sums, so the strategies keep 1e-10
        np.testing.assert_allclose(solver.current_strategy().probabilities, reference.strategy, rtol=0,
                                   atol=1e-10)
    scale = max(1.0, float(np.abs(reference.average).max()))
    np.testing.assert_allclose(solver.average_accumulator / scale, reference.average / scale, rtol=0,
                               atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(tree=random_trees())
def test_every_variant_reaches_the_lp_value_on_random_games(tree):
    value = SequenceFormLP(tree).solve().game_value
    for variant in NEW_VARIANTS:
        solver = SOLVER_CLASSES[variant](tree).iterate(3000)
        evaluation = BestResponse(solver.infoset_map).evaluate(solver.average_strategy())
        scale = max(1.0, float(np.abs(tree.node_utility).max()))
        assert evaluation.nash_conv <= 2e-2 * scale, variant
        assert evaluation.game_value == pytest.approx(value, abs=2e-2 * scale), variant


@pytest.mark.parametrize("variant", NEW_VARIANTS)
def test_resume_from_a_checkpoint_is_bit_identical(variant, tmp_path):
    tree = load_game("leduc")
    straight = SOLVER_CLASSES[variant](tree).iterate(30)
    first = SOLVER_CLASSES[variant](tree).iterate(17)
    write_checkpoint(tmp_path / "c.h5", first, algorithm=variant, parameters={}, history=[])
    resumed = SOLVER_CLASSES[variant](tree)
    resume(tmp_path / "c.h5", resumed, algorithm=variant, parameters={}, iterations=30)
    resumed.iterate(13)
    assert np.array_equal(resumed.regrets, straight.regrets)
    assert np.array_equal(resumed.average_accumulator, straight.average_accumulator)
    assert np.array_equal(resumed.current_strategy().probabilities, straight.current_strategy().probabilities)


@pytest.mark.parametrize(
    ("variant", "parameters", "message"),
    [
        ("cfr+", {"alpha": 2.0}, "cfr\\+ takes no alpha"),
        ("pcfr+", {"alpha": 2.0}, "pcfr\\+ takes no alpha"),
        ("lcfr", {"gamma": 2.0}, "lcfr takes no gamma"),
        ("dcfr+", {"alpha": -1.0}, "alpha must be >= 0"),
        ("pdcfr+", {"gamma": float("nan")}, "gamma must be a finite number"),
        ("cfr+", {"delay": -3}, "delay must be an integer >= 0"),
    ],
)
def test_bad_parameters_are_refused_by_the_library(variant, parameters, message):
    with pytest.raises(ParameterError, match=message):
        SOLVER_CLASSES[variant](load_game("kuhn"), **parameters)


def test_predictive_variants_refuse_simultaneous_updates():
    with pytest.raises(ParameterError, match="alternating must be True"):
        SOLVER_CLASSES["pcfr+"](load_game("kuhn"), alternating=False)


@pytest.mark.parametrize("algorithm", ["pdcfr+", "lcfr"])
def test_cli_runs_the_new_variants_and_refuses_foreign_options(algorithm, runner, json_output):
    from efgkit.cli import main

    data = json_output(runner.invoke(main, ["solve", "kuhn", "-a", algorithm, "-n", "100", "-k", "100",
                                            "--json"]))
    assert data["algorithm"] == algorithm and data["nash_conv"] < 0.05
    result = runner.invoke(main, ["solve", "kuhn", "-a", algorithm, "--beta", "0.5"])
    assert result.exit_code == 2 and "--beta applies to --algorithm dcfr only" in result.output
