"""Counterfactual regret minimisation: CFR, CFR+, DCFR and their successors on any InfosetMap.

* CFR — Zinkevich et al. 2007: regret matching, uniform averaging.
* CFR+ — Tammelin 2014 / Tammelin et al. 2015: regret-matching+ (cumulative regrets
  clipped at 0, Čermák et al. eq. 9-10), alternating updates, linear averaging with a
  delay ``d``: iteration ``t`` contributes to the average with weight ``max(t - d, 0)``
  (the reference code's reading of Čermák et al. eq. 11; Čermák et al. use d = 100).
* DCFR(alpha, beta, gamma) — Brown & Sandholm 2019: after iteration t's regrets are
  added, positive cumulative regrets are multiplied by t^a/(t^a+1), negative ones by
  t^b/(t^b+1), and the average accumulator by (t/(t+1))^g.
* Linear CFR — Brown & Sandholm 2019 §3: iteration t's regrets and average contribution
  weighted by t, which is DCFR(1, 1, 1) (their remark; the same kernel).
* DCFR+ — Xu, Li, Fu, Fu, Xing, Cheng 2024 (IJCAI, "Minimizing weighted counterfactual
  regret with optimistic online mirror descent", eq. for DCFR+):
  R^t = [R^{t-1} d(t-1) + r^t]^+ with d(s) = s^a/(s^a+1), strategy by regret matching of
  R^t, average weighted by t^g; defaults a = 1.5, g = 4 (the authors' published runs).
* PCFR+ — Farina, Kroer, Sandholm 2021 (AAAI, "Faster game solving via predictive
  Blackwell approachability"): R^t = [R^{t-1} + r^t]^+, and the next strategy matches the
  predicted [R^t + m^{t+1}]^+ with the prediction m^{t+1} = r^t (the last instantaneous
  regret); average weighted by t^g, g = 2 (quadratic averaging, their default).
* PDCFR+ — Xu et al. 2024: DCFR+'s regrets, and the next strategy matches the predicted
  [R^t d(t) + r^t]^+; defaults a = 2.3, g = 5 (the authors' published runs).
* HS-DCFR and HS-PCFR+ — Zhang, McAleer, Sandholm, "Faster game solving via hyperparameter
  schedules" (arXiv 2404.09097; AAAI 2026): DCFR's regrets (their eq. 2) and PCFR+'s with
  exponents on the schedules of their eq. 4 over a horizon of n iterations:
  a(t) = 1 + 3t/n, b(t) = -1 - 2t/n, g(t) = g0 - 5t/n, with g0 = 30 ("HS-DCFR(30)", their
  recommendation when one schedule is run) or 15. At iteration t the regret discounts take
  the exponents of the same t (t^a(t)/(t^a(t)+1): their slides write t^{HS_a}/(t^{HS_a}+1));
  iteration t's average contribution is weighted by t^g(t) (for a fixed g the same as
  eq. 3's multiplicative discount; with the schedule this reading, not eq. 3 applied
  literally, reproduces the paper's ordering of g0 = 30 before 15 — docs/conventions.md).
  The schedule needs n up front (``horizon``); the paper defines it for t <= n only, so
  iterating past the horizon is refused.

For the predictive variants the current strategy is the predicted one (the "last
iterate" their papers also report) and the last instantaneous regrets belong to the
solver's state (``state_arrays``), so a checkpoint resumes bit-identically.

Regrets and average accumulators live on the abstraction (one entry per abstract
infoset-action); the whole original tree is traversed every iteration and an abstract
infoset's regret is the sum of its members' counterfactual regrets (Čermák et al. §4.3).
One iteration updates both players; with alternating updates player 0 goes first and
player 1 responds to player 0's new strategy. ``hold_strategy`` lets a driver dictate the play
of chosen infosets (regret matching skips them), e.g. a response rule at a gadget's head.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.strategy import Strategy, normalize_per_infoset
from efgkit.solvers.traversal import ProfileLayout, infoset_view, others_reach, own_infoset_reach

VARIANT_CFR = 0
VARIANT_CFR_PLUS = 1
VARIANT_DCFR = 2
VARIANT_DCFR_PLUS = 3
VARIANT_PCFR_PLUS = 4
VARIANT_PDCFR_PLUS = 5
VARIANT_HS_DCFR = 6
VARIANT_HS_PCFR_PLUS = 7
VARIANT_CODES = {"cfr": VARIANT_CFR, "cfr+": VARIANT_CFR_PLUS, "dcfr": VARIANT_DCFR, "lcfr": VARIANT_DCFR,
                 "dcfr+": VARIANT_DCFR_PLUS, "pcfr+": VARIANT_PCFR_PLUS, "pdcfr+": VARIANT_PDCFR_PLUS,
                 "hs-dcfr": VARIANT_HS_DCFR, "hs-pcfr+": VARIANT_HS_PCFR_PLUS}
PREDICTIVE = ("pcfr+", "pdcfr+", "hs-pcfr+")
SCHEDULED = ("hs-dcfr", "hs-pcfr+")
"""The variants whose exponents follow a schedule over ``horizon`` iterations."""
VARIANT_PARAMETERS = {
    "cfr": {}, "cfr+": {"delay": 0}, "dcfr": {"alpha": 1.5, "beta": 0.0, "gamma": 2.0}, "lcfr": {},
    "dcfr+": {"alpha": 1.5, "gamma": 4.0}, "pcfr+": {"gamma": 2.0}, "pdcfr+": {"alpha": 2.3, "gamma": 5.0},
    "hs-dcfr": {"gamma_start": 30.0, "horizon": None}, "hs-pcfr+": {"gamma_start": 30.0, "horizon": None},
}
"""Each variant's parameters and their defaults (None: no default, the caller must give it);
a parameter a variant does not use is refused."""
MIN_GAMMA_START = 5.0
"""g(t) = gamma_start - 5t/n must stay >= 0 up to the horizon (Zhang et al. Theorems 3.1, 3.2)."""


class CFRSolver:
    """Vanilla CFR (``variant='cfr'``), CFR+ (``'cfr+'``) or DCFR (``'dcfr'``).

    Parameters follow scikit-learn's style: configuration in ``__init__``, work in
    ``iterate``; ``regrets`` and ``average_accumulator`` are the state to checkpoint.
    """

    variant = "cfr"

    def __init__(
        self,
        tree_or_map: GameTree | InfosetMap,
        *,
        alternating: bool = True,
        delay: int | None = None,
        alpha: float | None = None,
        beta: float | None = None,
        gamma: float | None = None,
        gamma_start: float | None = None,
        horizon: int | None = None,
    ) -> None:
        infoset_map = (
            tree_or_map if isinstance(tree_or_map, InfosetMap) else InfosetMap.identity(tree_or_map)
        )
        given = {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma,
                 "gamma_start": gamma_start, "horizon": horizon}
        parameters = checked_parameters(self.variant, given)
        if self.variant in PREDICTIVE and not alternating:
            raise ParameterError(f"{self.variant} predicts each player's next regrets from its last "
                                 f"update: alternating must be True")
        self.infoset_map = infoset_map
        self.alternating = alternating
        self.delay, self.alpha, self.beta, self.gamma, self.horizon = kernel_parameters(self.variant,
                                                                                      parameters)
        if self.variant in SCHEDULED:
            self.gamma_start = self.gamma
        tree = infoset_map.tree
        self.layout = ProfileLayout(infoset_map)
        self.iteration = 0
        self.regrets = np.zeros(infoset_map.num_abstract_actions)
        self.average_accumulator = np.zeros(infoset_map.num_abstract_actions)
        self._state = RegretState(self.regrets, self.average_accumulator,
                                  np.zeros(infoset_map.num_abstract_actions))
        self._work = Workspace(self.layout.edge_prob, self.layout.values, self.layout.reach,
                               np.zeros(tree.num_infosets))
        self._view = infoset_view(tree, infoset_map)  # raises unless perfect recall
        self._settings = Settings(VARIANT_CODES[self.variant], self.delay, self.alpha, self.beta, self.gamma,
                                  self.horizon)
        self._player_infosets = tuple(tree.infosets_of(p) for p in (0, 1))
        self._player_abstract = tuple(infoset_map.abstract_infosets_of(p) for p in (0, 1))
        self._matched_abstract = self._player_abstract  # all but the held infosets
        self._held = np.zeros(0, np.int32)
        self._held_actions = np.zeros(0, np.int64)
        for player in (0, 1):
            self._match(player)

    def _match(self, player: int) -> None:
        match_player(self._settings, self.iteration, self._matched_abstract[player],
                     self.infoset_map.abstract_action_offset, self._state, self.layout.edge_prob)

    def hold_strategy(self, abstract_infosets: np.ndarray, probabilities: np.ndarray) -> None:
        """Play ``probabilities`` (float64, the held infosets' actions one after another) at
        ``abstract_infosets`` in the following iterations instead of regret matching; their
        regrets and average strategy still accumulate. Each call replaces the held set (an
        empty call releases every infoset back to regret matching)."""
        infosets = np.asarray(abstract_infosets, dtype=np.int32)
        offsets = self.infoset_map.abstract_action_offset
        if infosets.size and (infosets.min() < 0 or infosets.max() >= self.infoset_map.num_abstract):
            raise ParameterError(f"held infosets must lie in 0..{self.infoset_map.num_abstract - 1}")
        counts = offsets[infosets + 1] - offsets[infosets]
        probabilities = np.asarray(probabilities, dtype=np.float64)
        if probabilities.shape != (int(counts.sum()),):
            raise ParameterError(f"held probabilities must be {int(counts.sum())} numbers (one per "
                                 f"action of the held infosets), got shape {probabilities.shape}")
        if not np.array_equal(infosets, self._held):
            held = np.zeros(self.infoset_map.num_abstract, dtype=bool)
            held[infosets] = True
            self._matched_abstract = tuple(a[~held[a]] for a in self._player_abstract)
            self._held = infosets
            self._held_actions = np.repeat(offsets[infosets], counts) + positions_within(counts)
            for player in (0, 1):
                self._match(player)
        self.layout.edge_prob[self._held_actions] = probabilities

    def iterate(self, iterations: int = 1) -> CFRSolver:
        """Run ``iterations`` full iterations (both players updated in each)."""
        check_iterations(self.variant, self.horizon, self.iteration, iterations)
        players = PlayerSets(self._player_infosets, self._player_abstract, self._matched_abstract)
        run_iterations(iterations, self.iteration, self.alternating, self._settings, self.layout.passes,
                       self._view, players, self._state, self._work, no_samples())
        self.iteration += iterations
        return self

    def current_strategy(self) -> Strategy:
        """The regret-matching strategy the next iteration will play."""
        return Strategy(self.infoset_map, self.layout.strategy.copy())

    def average_strategy(self) -> Strategy:
        """The (weighted) average strategy; infosets never reached are uniform."""
        return Strategy(
            self.infoset_map,
            normalize_per_infoset(self.average_accumulator, self.infoset_map.abstract_action_offset),
        )

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The arrays that, with ``iteration``, fully determine the solver's future (the
        predictive variants add their prediction, the last instantaneous regrets)."""
        arrays = {"regrets": self.regrets, "average_accumulator": self.average_accumulator}
        if self.variant in PREDICTIVE:
            arrays["prediction"] = self._state.instant
        return arrays

    def load_state(self, regrets: np.ndarray, average_accumulator: np.ndarray,
                   iteration: int, prediction: np.ndarray | None = None) -> None:
        """Restore a checkpoint taken with ``state_arrays`` at ``iteration``."""
        arrays = [("regrets", regrets), ("average_accumulator", average_accumulator)]
        if self.variant in PREDICTIVE:
            if prediction is None:
                raise ParameterError(f"{self.variant} needs its prediction (the last instantaneous "
                                     f"regrets) to resume")
            arrays.append(("prediction", prediction))
        elif prediction is not None:
            raise ParameterError(f"{self.variant} makes no prediction; got one to resume")
        for name, array in arrays:
            if np.shape(array) != self.regrets.shape:
                raise ParameterError(f"{name} has shape {np.shape(array)}, "
                                     f"expected {self.regrets.shape}")
            if not np.all(np.isfinite(array)):
                raise ParameterError(f"{name} holds values that are not finite")
        self.regrets[:] = regrets
        self.average_accumulator[:] = average_accumulator
        self._state.instant[:] = 0.0 if prediction is None else prediction
        self.iteration = int(iteration)
        for player in (0, 1):
            self._match(player)


class CFRPlusSolver(CFRSolver):
    """CFR+ (regret-matching+, alternating updates, linear averaging after ``delay``)."""

    variant = "cfr+"


class DCFRSolver(CFRSolver):
    """Discounted CFR with parameters (alpha, beta, gamma); defaults (1.5, 0, 2)."""

    variant = "dcfr"


class LinearCFRSolver(CFRSolver):
    """Linear CFR: iteration t weighted by t in regrets and average (DCFR(1, 1, 1))."""

    variant = "lcfr"


class DCFRPlusSolver(CFRSolver):
    """DCFR+ (Xu et al. 2024): discounted regret-matching+; defaults alpha 1.5, gamma 4."""

    variant = "dcfr+"


class PCFRPlusSolver(CFRSolver):
    """Predictive CFR+ (Farina et al. 2021): prediction = last instantaneous regrets; gamma 2."""

    variant = "pcfr+"


class PDCFRPlusSolver(CFRSolver):
    """Predictive discounted CFR+ (Xu et al. 2024); defaults alpha 2.3, gamma 5."""

    variant = "pdcfr+"


class HSDCFRSolver(CFRSolver):
    """HS-DCFR (Zhang et al. 2024, eq. 4): DCFR with scheduled exponents over ``horizon``
    iterations; ``gamma_start`` 30 (HS-DCFR(30)) or 15."""

    variant = "hs-dcfr"


class HSPCFRPlusSolver(CFRSolver):
    """HS-PCFR+ (Zhang et al. 2024, eq. 4): PCFR+ with the average exponent scheduled over
    ``horizon`` iterations; ``gamma_start`` 30 (HS-PCFR+(30)) or 15."""

    variant = "hs-pcfr+"


SOLVER_CLASSES = {"cfr": CFRSolver, "cfr+": CFRPlusSolver, "dcfr": DCFRSolver, "lcfr": LinearCFRSolver,
                  "dcfr+": DCFRPlusSolver, "pcfr+": PCFRPlusSolver, "pdcfr+": PDCFRPlusSolver,
                  "hs-dcfr": HSDCFRSolver, "hs-pcfr+": HSPCFRPlusSolver}
"""The one table of CFR-family solvers by name (CLI, re-solving, benchmarks)."""


def checked_parameters(variant: str, given: dict[str, float | None]) -> dict[str, float]:
    """``variant``'s parameters: defaults updated by the given ones (None = not given).

    Raises ParameterError naming the library parameter for one the variant does not use, a
    negative delay, a non-finite value, a negative discount exponent (DCFR's beta may be
    negative: Brown & Sandholm use beta = -inf to reset negative regrets), a schedule whose
    gamma would fall below 0 (``gamma_start`` < 5) or a missing or non-positive ``horizon``.
    """
    if variant not in VARIANT_PARAMETERS:
        raise ParameterError(f"variant must be one of {', '.join(VARIANT_PARAMETERS)}, got {variant!r}")
    parameters = dict(VARIANT_PARAMETERS[variant])
    for name, value in given.items():
        if value is None:
            continue
        if name not in parameters:
            users = [v for v, names in VARIANT_PARAMETERS.items() if name in names]
            raise ParameterError(f"{variant} takes no {name} (a parameter of {', '.join(users)})")
        if not np.isfinite(value):
            raise ParameterError(f"{name} must be a finite number, got {value}")
        if name == "delay" and (value < 0 or int(value) != value):
            raise ParameterError(f"delay must be an integer >= 0, got {value}")
        if name in ("alpha", "gamma") and value < 0:
            raise ParameterError(f"{name} must be >= 0 (a discount exponent), got {value}")
        if name == "gamma_start" and value < MIN_GAMMA_START:
            raise ParameterError(f"gamma_start must be >= {MIN_GAMMA_START:g}: the schedule's "
                                 f"gamma_start - 5t/n must stay >= 0 up to the horizon, got {value}")
        if name == "horizon" and (value < 1 or int(value) != value):
            raise ParameterError(f"horizon must be an integer >= 1 (the iterations n the schedule "
                                 f"spans), got {value}")
        parameters[name] = value
    missing = [name for name, value in parameters.items() if value is None]
    if missing:
        raise ParameterError(f"{variant} needs {missing[0]}: the total number of iterations n its "
                             f"schedule spans (Zhang et al. 2024, eq. 4)")
    return parameters


class KernelParameters(NamedTuple):
    """A variant's parameters as the kernels take them: CFR+'s ``delay``; the exponents
    ``alpha``, ``beta``, ``gamma`` (linear CFR's 1, 1, 1; for the schedule variants ``gamma``
    is the schedule's start g0); the schedule's ``horizon`` n (0 where there is none)."""

    delay: int
    alpha: float
    beta: float
    gamma: float
    horizon: int


def kernel_parameters(variant: str, parameters: dict[str, float]) -> KernelParameters:
    """``checked_parameters``' result as the kernels (GameTree, disk, poker engine) take it."""
    linear = 1.0 if variant == "lcfr" else 0.0  # linear CFR is DCFR(1, 1, 1)
    return KernelParameters(int(parameters.get("delay", 0)), float(parameters.get("alpha", linear)),
                            float(parameters.get("beta", linear)),
                            float(parameters.get("gamma", parameters.get("gamma_start", linear))),
                            int(parameters.get("horizon", 0)))


def check_iterations(variant: str, horizon: int, done: int, iterations: int) -> None:
    """Refuse a negative count, and iterations past a schedule's horizon (eq. 4 of Zhang et
    al. is defined for t <= n; extending it would be a schedule of efgkit's own)."""
    if iterations < 0:
        raise ParameterError(f"iterations must be >= 0, got {iterations}")
    if variant in SCHEDULED and done + iterations > horizon:
        raise ParameterError(f"{variant}'s schedule spans horizon={horizon} iterations; iterating to "
                             f"{done + iterations} would pass it (give a horizon of the total iterations)")


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def discount(s, alpha):
    """d(s) = s^alpha / (s^alpha + 1), DCFR+'s and PDCFR+'s regret discount (d(0) = 0)."""
    if s <= 0:
        return 0.0
    power = float(s) ** alpha
    return power / (power + 1.0)


class DiscountRule(NamedTuple):
    """Iteration t's regret update: the ``variant`` code; DCFR's (and HS-DCFR's) multipliers
    of positive and negative cumulative regrets, and the average's (also HS-PCFR+'s);
    DCFR+'s and PDCFR+'s multiplier d(t-1) of the previous cumulative regrets."""

    variant: int
    positive: float
    negative: float
    average: float
    previous: float


@numba.njit(cache=True, no_cfunc_wrapper=True)
def discount_rule(variant, t, alpha, beta, gamma, horizon):
    """The ``DiscountRule`` of iteration ``t`` (the GameTree kernels and the poker engine share it).

    For the schedule variants the exponents are those of Zhang et al.'s eq. 4 at ``t`` of
    ``horizon`` n, ``gamma`` being the schedule's start g0.
    """
    positive = negative = average = 1.0
    if variant == VARIANT_HS_DCFR or variant == VARIANT_HS_PCFR_PLUS:
        progress = float(t) / horizon
        alpha = 1.0 + 3.0 * progress
        beta = -1.0 - 2.0 * progress
        gamma = gamma - 5.0 * progress
    if variant == VARIANT_DCFR or variant == VARIANT_HS_DCFR:
        ta = float(t) ** alpha
        tb = float(t) ** beta
        positive = ta / (ta + 1.0)
        negative = tb / (tb + 1.0)
    if variant == VARIANT_DCFR:
        average = (float(t) / (t + 1.0)) ** gamma
    return DiscountRule(variant, positive, negative, average, discount(t - 1, alpha))


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def update_regret(rule, regrets, instant, average, x):
    """Action ``x``'s cumulative regret after adding ``instant[x]`` under ``rule``: plain (CFR),
    clipped (CFR+, PCFR+, HS-PCFR+ with its average discount), discounted (DCFR, HS-DCFR, with
    their average discount) or [R d(t-1) + r]^+ (DCFR+, PDCFR+). Arrays float64 (actions,)."""
    # ``if r < 0.0: r = 0.0`` is max(r, 0.0) (numba's max: the second if greater) without
    # compiling numba's max for a first run.
    variant = rule.variant
    if variant == VARIANT_DCFR_PLUS or variant == VARIANT_PDCFR_PLUS:
        r = regrets[x] * rule.previous + instant[x]
        if r < 0.0:
            r = 0.0
    else:
        r = regrets[x] + instant[x]
    if variant == VARIANT_CFR_PLUS or variant == VARIANT_PCFR_PLUS or variant == VARIANT_HS_PCFR_PLUS:
        if r < 0.0:
            r = 0.0
    elif variant == VARIANT_DCFR or variant == VARIANT_HS_DCFR:
        r *= rule.positive if r > 0.0 else rule.negative
    if variant == VARIANT_DCFR or variant == VARIANT_HS_DCFR or variant == VARIANT_HS_PCFR_PLUS:
        average[x] *= rule.average
    regrets[x] = r


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def average_weight(variant, t, delay, gamma, horizon):
    """Iteration ``t``'s weight in the average accumulator: CFR+'s max(t - delay, 0); t^gamma
    for DCFR+, PCFR+ and PDCFR+; t^g(t) with the schedule's g(t) = gamma - 5t/n for HS-DCFR
    and HS-PCFR+; 1 for the rest (DCFR's average is discounted instead)."""
    if variant == VARIANT_CFR_PLUS:
        return float(t - delay) if t > delay else 0.0
    if variant == VARIANT_DCFR_PLUS or variant == VARIANT_PCFR_PLUS or variant == VARIANT_PDCFR_PLUS:
        return float(t) ** gamma
    if variant == VARIANT_HS_DCFR or variant == VARIANT_HS_PCFR_PLUS:
        return float(t) ** (gamma - 5.0 * float(t) / horizon)
    return 1.0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def is_predictive(variant):
    """Whether the next strategy matches a prediction (PCFR+, PDCFR+, HS-PCFR+)."""
    return variant == VARIANT_PCFR_PLUS or variant == VARIANT_PDCFR_PLUS or variant == VARIANT_HS_PCFR_PLUS


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def prediction_scale(variant, t, alpha):
    """How much of the cumulative regret enters the prediction after iteration ``t``."""
    return discount(t, alpha) if variant == VARIANT_PDCFR_PLUS else 1.0


class Settings(NamedTuple):
    """``variant`` (``VARIANT_CODES``), CFR+'s averaging ``delay``, the discount exponents
    (DCFR's alpha, beta, gamma; DCFR+/PDCFR+'s alpha; gamma the average weight exponent of
    DCFR+, PCFR+ and PDCFR+, the schedule's start for HS-DCFR and HS-PCFR+) and the
    schedule's ``horizon`` (``KernelParameters``). The GameTree kernels and the poker engine
    share it."""

    variant: int
    delay: int
    alpha: float
    beta: float
    gamma: float
    horizon: int


class PlayerSets(NamedTuple):
    """Per player, a pair of int32 arrays each: the original ``infosets``, the ``abstract``
    infosets, and the abstract infosets regret matching sets (``matched``: all but the held)."""

    infosets: tuple
    abstract: tuple
    matched: tuple


class RegretState(NamedTuple):
    """float64 (abstract actions,) each: cumulative ``regrets``, the ``average`` accumulator and
    the ``instant`` regrets of each player's last update (the predictive variants' prediction)."""

    regrets: np.ndarray
    average: np.ndarray
    instant: np.ndarray


class Workspace(NamedTuple):
    """``edge_prob`` float64 (profile entries + nodes,): the current profile, then the chance
    probabilities (``ProfileLayout``); ``values`` and ``reach`` float64 (nodes,);
    ``own_reach`` float64 (infosets,)."""

    edge_prob: np.ndarray
    values: np.ndarray
    reach: np.ndarray
    own_reach: np.ndarray


class Samples(NamedTuple):
    """CFR+IRA's sampled original infosets (Čermák et al. Alg. 7): ``slots`` int32 (2,
    infosets), the row of each infoset in ``regrets`` float64 (2, rows, max actions) per
    sample kind, -1 when not sampled. Shapes (2, 0) and (2, 0, 0) sample nothing."""

    slots: np.ndarray
    regrets: np.ndarray


def no_samples() -> Samples:
    """Samples that track nothing (every solver but CFR+IRA)."""
    return Samples(np.zeros((2, 0), np.int32), np.zeros((2, 0, 0)))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def values_and_regrets(passes, edge_prob, values, reach, player, instant, samples):
    """Bottom-up values (player 0) and the player's counterfactual regrets, in one pass.

    ``passes`` a ``NodePasses``; ``edge_prob`` float64 (profile entries + nodes,);
    ``values``, ``reach`` (opponent and chance) float64 (nodes,); regrets are added to
    ``instant`` float64 (abstract actions,). An original infoset with ``samples.slots[s, I]
    >= 0`` also gets its own counterfactual regrets added to row ``samples.regrets[s,
    slot]`` (the sampled sets of CFR+IRA, Čermák et al. Alg. 7).
    """
    sign = 1.0 if player == 0 else -1.0
    track = samples.slots.shape[1] > 0
    for i in range(passes.nodes.shape[0] - 1, -1, -1):
        start = passes.first_child[i]
        offset = passes.prob_offset[i]
        m = passes.num_children[i]
        total = 0.0
        for k in range(m):
            total += edge_prob[offset + k] * values[start + k]
        node = passes.nodes[i]
        values[node] = total
        if passes.kind[i] == player:
            weight = sign * reach[node]
            if weight != 0.0:
                for k in range(m):
                    instant[offset + k] += weight * (values[start + k] - total)
                if track:
                    for s in range(2):
                        slot = samples.slots[s, passes.infoset[i]]
                        if slot >= 0:
                            for k in range(m):
                                samples.regrets[s, slot, k] += weight * (values[start + k] - total)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def update_player(t, player, settings, passes, view, infosets, abstract, state, work, samples):
    """One player's update at iteration ``t``: regrets, average and cumulative regrets, no
    regret matching. ``infosets`` / ``abstract`` int32: the player's original and abstract
    infosets; the bundles are ``Settings``, ``NodePasses``, ``InfosetView``, ``RegretState``,
    ``Workspace`` and ``Samples``."""
    clear_instant_regrets(abstract, view.action_offset, state.instant)
    others_reach(passes, work.edge_prob, player, work.reach)
    values_and_regrets(passes, work.edge_prob, work.values, work.reach, player, state.instant, samples)
    accumulate_player_update(t, settings, view, infosets, abstract, state, work)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def clear_instant_regrets(abstract, action_offset, instant):
    """Zero ``instant`` float64 (abstract actions,) on the actions of ``abstract`` (int32)
    by ``action_offset`` int32 (abstract infosets + 1,)."""
    for j in range(abstract.shape[0]):
        a = abstract[j]
        for x in range(action_offset[a], action_offset[a + 1]):
            instant[x] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def accumulate_player_update(t, settings, view, infosets, abstract, state, work):
    """Iteration ``t``'s average-strategy contribution and cumulative regret update.

    ``infosets`` / ``abstract`` int32: one player's original and abstract infosets. Works
    infoset by infoset, so a driver may call it on consecutive slices of both
    (efgkit.storage.disk_solve does, to bound its resident memory) with the same result as
    one call.
    """
    # Average strategy: weight * own reach of each original infoset * current strategy.
    weight = average_weight(settings.variant, t, settings.delay, settings.gamma, settings.horizon)
    if weight > 0.0:
        own_infoset_reach(infosets, view, work.edge_prob, work.own_reach)
        for j in range(infosets.shape[0]):
            infoset = infosets[j]
            w = weight * work.own_reach[infoset]
            if w != 0.0:
                lo = view.infoset_offset[infoset]
                for k in range(view.num_actions[infoset]):
                    state.average[lo + k] += w * work.edge_prob[lo + k]

    # Cumulative regret update.
    rule = discount_rule(settings.variant, t, settings.alpha, settings.beta, settings.gamma, settings.horizon)
    for j in range(abstract.shape[0]):
        a = abstract[j]
        for x in range(view.action_offset[a], view.action_offset[a + 1]):
            update_regret(rule, state.regrets, state.instant, state.average, x)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def match_player(settings, t, matched, action_offset, state, edge_prob):
    """Regret matching (Zinkevich et al. 2007) of ``matched`` (int32 abstract infosets) after
    iteration ``t``: each plays its positive regrets normalised, or uniformly when none is
    positive; the predictive variants match the prediction [scale * regrets + instant]^+
    instead (PCFR+, PDCFR+). ``action_offset`` int32 (abstract infosets + 1,); ``state`` a
    ``RegretState``; writes ``edge_prob[:abstract actions]``."""
    # One kernel for both, so a first run compiles one; ``predictive`` is loop-invariant
    # (LLVM unswitches the loops), so plain matching reads no prediction.
    predictive = is_predictive(settings.variant)
    scale = prediction_scale(settings.variant, t, settings.alpha)
    regrets = state.regrets
    instant = state.instant
    for j in range(matched.shape[0]):
        a = matched[j]
        lo = action_offset[a]
        hi = action_offset[a + 1]
        total = 0.0
        for x in range(lo, hi):
            r = scale * regrets[x] + instant[x] if predictive else regrets[x]
            if r > 0.0:
                total += r
        if total > 0.0:
            for x in range(lo, hi):
                r = scale * regrets[x] + instant[x] if predictive else regrets[x]
                edge_prob[x] = r / total if r > 0.0 else 0.0
        else:
            uniform = 1.0 / (hi - lo)
            for x in range(lo, hi):
                edge_prob[x] = uniform


@numba.njit(cache=True, no_cfunc_wrapper=True)
def run_iterations(iterations, done, alternating, settings, passes, view, players, state, work, samples):
    """Iterations ``done + 1 .. done + iterations``, player 0 then player 1 in each; with
    ``alternating`` player 1 responds to player 0's new strategy. Bundles as in
    ``update_player``; ``players`` a ``PlayerSets``."""
    for it in range(iterations):
        t = done + it + 1
        for player in range(2):
            update_player(t, player, settings, passes, view, players.infosets[player],
                          players.abstract[player], state, work, samples)
            if alternating:
                match_player(settings, t, players.matched[player], view.action_offset, state,
                             work.edge_prob)
        if not alternating:  # never a predictive variant: plain regret matching
            for player in range(2):
                match_player(settings, t, players.matched[player], view.action_offset, state,
                             work.edge_prob)
