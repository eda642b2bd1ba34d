"""Linear CFR, DCFR+, PCFR+, PDCFR+, HS-DCFR, HS-PCFR+, SAPCFR+ and VAD-CFR: a plain reference implementation,
the LP value, parameter checks and bit-identical resume."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from random_games import random_trees

from efgkit.core.regret_rules import PREDICTIVE, SCHEDULED, VARIANT_PARAMETERS
from efgkit.errors import ParameterError
from efgkit.solvers import BestResponse, SequenceFormLP
from efgkit.solvers.cfr import SOLVER_CLASSES
from efgkit.specs import load_game
from efgkit.storage.checkpoint import resume, write_checkpoint

NEW_VARIANTS = ("lcfr", "dcfr+", "pcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+", "sapcfr+")
RUN_ON_TREES = (*NEW_VARIANTS, "vad-cfr")
"""The variants checked on random games and for resume (VAD-CFR has its own reference)."""


def horizon_for(variant: str, iterations: int) -> dict:
    """The schedule variants' horizon for a run of ``iterations`` (the others take none)."""
    return {"horizon": iterations} if variant in SCHEDULED else {}


class ReferenceCFR:
    """The variants written out plainly: recursive passes over the tree, one player at a time.

    Alternating updates, player 0 first; regrets per infoset action. Linear CFR weights
    iteration t by t (regrets discounted by t/(t+1) after each update, the average by
    t/(t+1)); DCFR+ / PDCFR+ clip R d(t-1) + r with d(s) = s^a/(s^a+1) and weight the
    average by t^g; PCFR+ clips R + r; the predictive ones play [R d + r]^+ (d = 1 for PCFR+
    and HS-PCFR+). HS-DCFR is DCFR's regrets and HS-PCFR+ PCFR+'s, both weighting iteration
    t's average contribution by t^g, the exponents of iteration t being Zhang et al.'s eq. 4
    over n iterations: a = 1 + 3t/n, b = -1 - 2t/n, g = g0 - 5t/n. SAPCFR+ (Meng et al.) is
    PCFR+ playing [R + r/(1 + a)]^+ with a = 2.
    """

    def __init__(self, tree, variant: str, **parameters) -> None:
        self.tree, self.variant = tree, variant
        self.parameters = {**VARIANT_PARAMETERS[variant], **parameters}
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
            step = 1.0 / (1.0 + 2.0) if self.variant == "sapcfr+" else 1.0
            target = np.maximum(scale * self.regrets[part] + step * self.last[part], 0.0)
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
                if self.variant in SCHEDULED:
                    n = self.parameters["horizon"]
                    alpha, beta = 1 + 3 * t / n, -1 - 2 * t / n
                    gamma = self.parameters["gamma_start"] - 5 * t / n
                weight = 1.0 if self.variant == "lcfr" else float(t) ** gamma
                for infoset in np.flatnonzero(tree.infoset_player == player):
                    part = self._slots(infoset)
                    self.average[part] += weight * own_reach[infoset] * self.strategy[part]
                    r = self.regrets[part]
                    if self.variant == "lcfr":
                        r = (r + instant[part]) * t / (t + 1)
                        self.average[part] *= t / (t + 1)
                    elif self.variant == "hs-dcfr":
                        r = r + instant[part]
                        r = np.where(r > 0, r * t**alpha / (t**alpha + 1), r * t**beta / (t**beta + 1))
                    elif self.variant == "hs-pcfr+":
                        r = np.maximum(r + instant[part], 0.0)
                    elif self.variant in ("pcfr+", "sapcfr+"):
                        r = np.maximum(r + instant[part], 0.0)
                    else:
                        r = np.maximum(r * self._d(t - 1) + instant[part], 0.0)
                    self.regrets[part] = r
                    self.last[part] = instant[part]
                    self._match(infoset)
        return self


class ReferenceVADCFR(ReferenceCFR):
    """VAD-CFR as Li et al.'s Listing 5 writes it (iteration_number = t - 1), with one
    RegretAccumulator and one PolicyFromRegretAccumulator state per infoset, each its own EWMA;
    the policy accumulator weighs iteration t's strategy by that iteration's regrets. The first
    strategy is uniform (OpenSpiel's initial policy)."""

    def __init__(self, tree) -> None:
        self.regret_ewma, self.policy_ewma = {}, {}
        super().__init__(tree, "cfr")

    @staticmethod
    def _adaptive(iteration_number, regrets, ewma):
        """Listing 5's _calculate_adaptive_params with its defaults."""
        t_plus_one = float(iteration_number + 1)
        magnitude = float(np.abs(regrets).max())
        ewma = magnitude if iteration_number == 0 else 0.1 * magnitude + 0.9 * ewma
        volatility = min(1.0, ewma / 2.0)
        alpha = max(0.1, 1.5 - 0.5 * volatility)
        beta = min(alpha, -0.1 - 0.5 * volatility)
        return (ewma, volatility, t_plus_one**alpha / (t_plus_one**alpha + 1.0),
                t_plus_one**beta / (t_plus_one**beta + 1.0))

    def _match(self, infoset) -> None:
        part = self._slots(infoset)
        if self.t == 0:
            self.strategy[part] = 1.0 / self.strategy[part].size
            return
        iteration_number, cfr_regrets = self.t - 1, self.last[part]
        ewma, volatility, positive, negative = self._adaptive(iteration_number, cfr_regrets,
                                                              self.policy_ewma.get(infoset, 0.0))
        self.policy_ewma[infoset] = ewma
        optimism = 1.0 / (1.0 + iteration_number / 100.0) * max(0.0, 1.0 - 0.5 * volatility)
        old = self.regrets[part]
        boosted = np.where(cfr_regrets > 0, cfr_regrets * 1.1, cfr_regrets)
        projected = np.where(old >= 0, positive * old, negative * old) + optimism * boosted
        scaled = np.maximum(projected, 0.0) ** 1.5
        self.strategy[part] = scaled / scaled.sum() if scaled.sum() > 0 else 1.0 / scaled.size

    def iterate(self, iterations: int) -> ReferenceVADCFR:
        tree = self.tree
        for _ in range(iterations):
            self.t += 1
            iteration_number = self.t - 1
            for player in (0, 1):
                instant = np.zeros_like(self.regrets)
                own_reach = np.zeros(tree.num_infosets)
                self._walk(0, player, 1.0, 1.0, instant, own_reach)
                for infoset in np.flatnonzero(tree.infoset_player == player):
                    part = self._slots(infoset)
                    cfr_regrets = instant[part]
                    magnitude = float(np.abs(cfr_regrets).max())
                    if iteration_number >= 500:
                        gamma = min(4.0, 2.0 + 1.5 * min(1.0, magnitude / 2.0))
                        weight = ((iteration_number + 1.0) ** gamma / (1.0 + magnitude**1.5)
                                  * max(0.1, (1.0 + magnitude / 2.0) ** 0.5))
                        self.average[part] += weight * own_reach[infoset] * self.strategy[part]
                    ewma, _, positive, negative = self._adaptive(iteration_number, cfr_regrets,
                                                                 self.regret_ewma.get(infoset, 0.0))
                    self.regret_ewma[infoset] = ewma
                    old = self.regrets[part]
                    boosted = np.where(cfr_regrets > 0, cfr_regrets * 1.1, cfr_regrets)
                    self.regrets[part] = np.maximum(-20.0, np.where(old >= 0, positive * old, negative * old)
                                                    + boosted)
                    self.last[part] = cfr_regrets
                    self._match(infoset)
        return self


def test_vad_cfr_equals_listing_5_on_kuhn_through_the_warm_start():
    """50 iterations compared one by one, then on to 520 so the average (from 501 on) counts."""
    tree = load_game("kuhn")
    solver, reference = SOLVER_CLASSES["vad-cfr"](tree), ReferenceVADCFR(tree)
    for t in range(520):
        solver.iterate(1)
        reference.iterate(1)
        if t < 50:
            np.testing.assert_allclose(solver.regrets, reference.regrets, rtol=0, atol=1e-12)
            np.testing.assert_allclose(solver.current_strategy().probabilities, reference.strategy, rtol=0,
                                       atol=1e-10)
    np.testing.assert_allclose(solver.regrets, reference.regrets, rtol=0, atol=1e-12)
    volatility = solver.state_arrays()["volatility"]
    np.testing.assert_allclose(volatility, [reference.regret_ewma[i] for i in range(tree.num_infosets)],
                               rtol=0, atol=1e-12)
    scale = float(np.abs(reference.average).max())
    assert scale > 0
    np.testing.assert_allclose(solver.average_accumulator / scale, reference.average / scale, rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize(("variant", "parameters"), [
    *[(variant, horizon_for(variant, 50)) for variant in NEW_VARIANTS],
    ("hs-dcfr", {"horizon": 80, "gamma_start": 15.0}),
    ("hs-pcfr+", {"horizon": 50, "gamma_start": 15.0}),
])
def test_variant_equals_the_plain_reference_on_kuhn_for_50_iterations(variant, parameters):
    tree = load_game("kuhn")
    solver = SOLVER_CLASSES[variant](tree, **parameters)
    reference = ReferenceCFR(tree, variant, **parameters)
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
    for variant in RUN_ON_TREES:
        solver = SOLVER_CLASSES[variant](tree, **horizon_for(variant, 3000)).iterate(3000)
        evaluation = BestResponse(solver.infoset_map).evaluate(solver.average_strategy())
        scale = max(1.0, float(np.abs(tree.node_utility).max()))
        assert evaluation.nash_conv <= 2e-2 * scale, variant
        assert evaluation.game_value == pytest.approx(value, abs=2e-2 * scale), variant


@pytest.mark.parametrize("variant", RUN_ON_TREES)
def test_resume_from_a_checkpoint_is_bit_identical(variant, tmp_path):
    tree = load_game("leduc")
    total, stop = (510, 503) if variant == "vad-cfr" else (30, 17)  # VAD-CFR averages from 501 on
    options = horizon_for(variant, total)
    straight = SOLVER_CLASSES[variant](tree, **options).iterate(total)
    first = SOLVER_CLASSES[variant](tree, **options).iterate(stop)
    write_checkpoint(tmp_path / "c.h5", first, algorithm=variant, parameters={}, history=[])
    resumed = SOLVER_CLASSES[variant](tree, **options)
    resume(tmp_path / "c.h5", resumed, algorithm=variant, parameters={}, iterations=total)
    resumed.iterate(total - stop)
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
        ("hs-dcfr", {"horizon": 100, "alpha": 2.0}, "hs-dcfr takes no alpha"),
        ("hs-pcfr+", {"horizon": 100, "gamma": 2.0}, "hs-pcfr\\+ takes no gamma"),
        ("dcfr", {"gamma_start": 30.0}, "dcfr takes no gamma_start .a parameter of hs-dcfr, hs-pcfr\\+"),
        ("hs-dcfr", {}, "hs-dcfr needs horizon"),
        ("hs-pcfr+", {"horizon": 0}, "horizon must be an integer >= 1"),
        ("hs-dcfr", {"horizon": 10.5}, "horizon must be an integer >= 1"),
        ("hs-dcfr", {"horizon": 100, "gamma_start": 4.0}, "gamma_start must be >= 5"),
        ("hs-pcfr+", {"horizon": 100, "gamma_start": float("inf")}, "gamma_start must be a finite number"),
    ],
)
def test_bad_parameters_are_refused_by_the_library(variant, parameters, message):
    with pytest.raises(ParameterError, match=message):
        SOLVER_CLASSES[variant](load_game("kuhn"), **parameters)


def test_vad_cfr_runs_on_the_tree_and_public_tree_engines_only(runner, json_output, tmp_path):
    """The public-tree engine runs VAD-CFR (its iterates are the GameTree's:
    tests/test_poker_engine.py); the disk solver and sampled CFR refuse it with one line."""
    from efgkit.cli import main

    with pytest.raises(ParameterError, match="alternating must be True"):
        SOLVER_CLASSES["vad-cfr"](load_game("kuhn"), alternating=False)
    data = json_output(runner.invoke(main, ["solve", "kuhn", "--engine", "public-tree", "-a", "vad-cfr",
                                            "-n", "600", "--json"]))
    assert data["algorithm"] == "vad-cfr" and data["nash_conv"] < 1e-3
    for engine in (["--engine", "sampled", "--buckets", "lossless"],
                   ["--engine", "disk", "--memory-limit", "1GiB", "--state", str(tmp_path / "d.h5")]):
        result = runner.invoke(main, ["solve", "kuhn", *engine, "-a", "vad-cfr", "-n", "10"])
        assert result.exit_code == 2 and "vad-cfr keeps per-infoset state" in result.output, result.output


def test_cli_runs_vad_cfr_past_its_warm_start(runner, json_output):
    from efgkit.cli import main

    data = json_output(runner.invoke(main, ["solve", "kuhn", "-a", "vad-cfr", "-n", "600", "-k", "600",
                                            "--json"]))
    assert data["algorithm"] == "vad-cfr" and data["nash_conv"] < 1e-3


def test_predictive_variants_refuse_simultaneous_updates():
    with pytest.raises(ParameterError, match="alternating must be True"):
        SOLVER_CLASSES["pcfr+"](load_game("kuhn"), alternating=False)
    with pytest.raises(ParameterError, match="alternating must be True"):
        SOLVER_CLASSES["hs-pcfr+"](load_game("kuhn"), alternating=False, horizon=10)


@pytest.mark.parametrize("variant", SCHEDULED)
def test_schedule_variants_refuse_to_iterate_past_their_horizon(variant):
    solver = SOLVER_CLASSES[variant](load_game("kuhn"), horizon=20).iterate(15)
    with pytest.raises(ParameterError, match="schedule spans horizon=20 iterations; iterating to 21"):
        solver.iterate(6)
    assert solver.iteration == 15
    solver.iterate(5)
    assert solver.iteration == 20


def test_discount_rule_takes_the_exponents_of_the_papers_schedule():
    """The schedule's exponents are the paper's: at t = n, HS-DCFR(30) multiplies positive
    regrets by n^4/(n^4+1), negative ones by n^-3/(n^-3+1) and weights the average by n^25."""
    from efgkit.core.regret_rules import VARIANT_HS_DCFR, VARIANT_HS_PCFR_PLUS, average_weight, discount_rule

    n = 7
    rule = discount_rule(VARIANT_HS_DCFR, n, 0.0, 0.0, 30.0, n)
    assert rule.positive == pytest.approx(n**4 / (n**4 + 1), rel=1e-15)
    assert rule.negative == pytest.approx(n**-3 / (n**-3 + 1), rel=1e-15)
    assert rule.average == 1.0  # the schedule weights contributions instead
    assert average_weight(VARIANT_HS_DCFR, n, 0, 30.0, n) == pytest.approx(float(n) ** 25, rel=1e-15)
    first = discount_rule(VARIANT_HS_PCFR_PLUS, 2, 0.0, 0.0, 15.0, 1000)
    assert average_weight(VARIANT_HS_PCFR_PLUS, 2, 0, 15.0, 1000) == pytest.approx(2.0 ** (15 - 10 / 1000),
                                                                                   rel=1e-15)
    assert (first.positive, first.negative) == (1.0, 1.0)  # HS-PCFR+ schedules gamma only


@pytest.mark.parametrize("algorithm", ["pdcfr+", "lcfr", "hs-dcfr", "hs-pcfr+", "sapcfr+"])
def test_cli_runs_the_new_variants_and_refuses_foreign_options(algorithm, runner, json_output):
    from efgkit.cli import main

    data = json_output(runner.invoke(main, ["solve", "kuhn", "-a", algorithm, "-n", "100", "-k", "100",
                                            "--json"]))
    assert data["algorithm"] == algorithm and data["nash_conv"] < 0.05
    result = runner.invoke(main, ["solve", "kuhn", "-a", algorithm, "--beta", "0.5"])
    assert result.exit_code == 2 and "--beta applies to --algorithm dcfr only" in result.output


def test_cli_schedule_spans_the_iterations_and_checks_its_parameters(runner, json_output):
    from efgkit.cli import main

    data = json_output(runner.invoke(main, ["solve", "kuhn", "-a", "hs-pcfr+", "-n", "200", "-k", "200",
                                            "--gamma-start", "15", "--json"]))
    assert data["parameters"] == {"alternating": True, "gamma_start": 15.0, "horizon": 200}
    direct = SOLVER_CLASSES["hs-pcfr+"](load_game("kuhn"), gamma_start=15.0, horizon=200).iterate(200)
    assert data["nash_conv"] == BestResponse(direct.infoset_map).evaluate(direct.average_strategy()).nash_conv
    for arguments, message in [
        (["-a", "hs-dcfr", "-n", "100", "--horizon", "50"], "--horizon 50 is shorter than --iterations 100"),
        (["-a", "hs-dcfr", "--gamma-start", "2"], "gamma_start must be >= 5"),
        (["-a", "dcfr", "--horizon", "100"], "--horizon applies to --algorithm hs-dcfr, hs-pcfr+ only"),
        (["-a", "pcfr+", "--gamma-start", "30"],
         "--gamma-start applies to --algorithm hs-dcfr, hs-pcfr+ only"),
    ]:
        result = runner.invoke(main, ["solve", "kuhn", *arguments])
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()[-1]) < 200


def test_cli_resumes_a_schedule_run_bit_identically_and_refuses_another_horizon(runner, json_output,
                                                                                tmp_path):
    from efgkit.cli import main

    state = tmp_path / "state.h5"
    whole = json_output(runner.invoke(main, ["solve", "leduc", "-a", "hs-dcfr", "-n", "40", "-k", "40",
                                             "--json"]))
    first = ["solve", "leduc", "-a", "hs-dcfr", "-n", "20", "-k", "20", "--horizon", "40",
             "--state", str(state)]
    assert runner.invoke(main, first).exit_code == 0
    result = runner.invoke(main, ["solve", "leduc", "-a", "hs-dcfr", "-n", "60", "--state", str(state),
                                  "--resume"])
    assert result.exit_code == 2 and "'horizon': 40" in result.output
    resumed = json_output(runner.invoke(main, ["solve", "leduc", "-a", "hs-dcfr", "-n", "40", "-k", "40",
                                               "--state", str(state), "--resume", "--json"]))
    assert resumed["resumed_from_iteration"] == 20
    assert resumed["nash_conv"] == whole["nash_conv"]


def test_public_tree_engine_resumes_hs_pcfr_plus_with_its_prediction(runner, json_output, tmp_path):
    from efgkit.cli import main

    state = tmp_path / "state.h5"
    common = ["solve", "leduc", "--engine", "public-tree", "-a", "hs-pcfr+", "--horizon", "40"]
    whole = json_output(runner.invoke(main, [*common, "-n", "40", "-k", "40", "--json"]))
    assert runner.invoke(main, [*common, "-n", "20", "-k", "20", "--state", str(state)]).exit_code == 0
    resumed = json_output(runner.invoke(main, [*common, "-n", "40", "-k", "40", "--state", str(state),
                                               "--resume", "--json"]))
    assert resumed["resumed_from_iteration"] == 20
    assert resumed["nash_conv"] == whole["nash_conv"]
