"""The regret and averaging rules of every CFR variant, written once for every engine.

Each engine (the GameTree kernels in ``solvers/cfr.py``, the disk solver, the public-tree
vector engine, sampled CFR on buckets) walks its own game representation to get
instantaneous regrets; what it does with them is here: the variant codes and parameters,
iteration t's regret update and average weight, and regret matching of a row of actions.

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
* SAPCFR+ — Meng, Yang, Zhang, Ge, Gao, "Faster game solving via asymmetry of step sizes"
  (arXiv 2503.12770; AAAI 2026): PCFR+ whose explicit (predicted) accumulated regret takes
  the prediction with the step size 1/(1 + a) of the implicit one, a fixed at 2 ("Simple
  APCFR+"): R^t = [R^{t-1} + r^t]^+ and the next strategy matches [R^t + m^{t+1}/(1 + a)]^+,
  m^{t+1} = r^t. Regret matching is invariant to a positive factor, so the kernels match
  [(1 + a) R^t + r^t]^+ (``prediction_scale`` 3), the same strategy. Only the paper's
  abstract and opening were at hand, with restatements of the rule (a = 2, the prediction
  weighted 1/(1 + a), one a per infoset), not its numbered equations; it names no averaging
  for SAPCFR+, and PCFR+'s t^g, g = 2, is taken. APCFR+ (the adaptive a^t) is not
  implemented: its update of a^t was not found (docs/results-solvers.md lists the searches)
  and none is invented here.
* VAD-CFR — Li, Schultz, Hennes, Lanctot, "Discovering multiagent learning algorithms with
  large language models" (arXiv 2602.16928, 2026), the source of its Listing 5 (Appendix
  7.1; Listing 3 in §4.2.1 is an abstraction that differs in details, Listing 5 is taken).
  At iteration t (Listing 5's iteration_number is t - 1) and infoset I with instantaneous
  regrets r and m = max_a |r(a)|: the volatility EWMA e = m at t = 1, else
  0.1 m + 0.9 e_prev; v = min(1, e/2); a = max(0.1, 1.5 - 0.5 v); b = min(a, -0.1 - 0.5 v);
  d+ = t^a/(t^a+1), d- = t^b/(t^b+1); boosted r' = 1.1 r where r > 0; then
  R = max(-20, d R_prev + r') with d = d+ if R_prev >= 0 else d- (regrets stay signed). The
  next strategy is proportional to max(0, d R + o r')^1.5 (uniform if all are 0), R the
  regrets just updated, d and r' as above, the optimism o = max(0, 1 - 0.5 v)/(1 + (t-1)/100)
  (the "consistency-enforced optimism"). Iteration t's strategy enters the average from
  t = 501 on (iteration_number >= 500) with weight t^g (1 + m^1.5)^-1 max(0.1, (1 + m/2)^0.5)
  times the own reach, g = min(4, 2 + 1.5 min(1, m/2)). Readings taken where the listing
  leaves a choice: one EWMA per infoset (the listing keeps one number on each accumulator
  object and says nothing of one object per infoset or per solver; one per solver would
  make the rule depend on the order a traversal visits infosets), so the two objects' EWMAs
  agree and are one state array; m and the average weight of an abstract infoset are those
  of its summed regrets; alternating updates (CFR+, the search's seed); the average weight
  uses r of the iteration whose strategy it averages. These rules work on whole rows and
  keep per-infoset state: the GameTree solvers and the public-tree engine run VAD-CFR; the
  disk solver (no volatility in its working file) and sampled CFR (its average is added
  inside the sampled walk before a row's regret is complete, it keeps no per-row state, and
  on sampled regrets the nonlinear rules are not the listing's in expectation) refuse it.

For the predictive variants the current strategy is the predicted one (the "last
iterate" their papers also report), and the last instantaneous regrets are part of a
solver's state, so a checkpoint resumes bit-identically.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError
from efgkit.io.numba_private import WITHOUT_REFCOUNTS

VARIANT_CFR = 0
VARIANT_CFR_PLUS = 1
VARIANT_DCFR = 2
VARIANT_DCFR_PLUS = 3
VARIANT_PCFR_PLUS = 4
VARIANT_PDCFR_PLUS = 5
VARIANT_HS_DCFR = 6
VARIANT_HS_PCFR_PLUS = 7
VARIANT_SAPCFR_PLUS = 8
VARIANT_VAD_CFR = 9
VARIANT_CODES = {"cfr": VARIANT_CFR, "cfr+": VARIANT_CFR_PLUS, "dcfr": VARIANT_DCFR, "lcfr": VARIANT_DCFR,
                 "dcfr+": VARIANT_DCFR_PLUS, "pcfr+": VARIANT_PCFR_PLUS, "pdcfr+": VARIANT_PDCFR_PLUS,
                 "hs-dcfr": VARIANT_HS_DCFR, "hs-pcfr+": VARIANT_HS_PCFR_PLUS, "sapcfr+": VARIANT_SAPCFR_PLUS,
                 "vad-cfr": VARIANT_VAD_CFR}
PREDICTIVE = ("pcfr+", "pdcfr+", "hs-pcfr+", "sapcfr+", "vad-cfr")
"""The variants whose next strategy uses the last instantaneous regrets (kept in the state)."""
ROW_RULES = ("vad-cfr",)
"""The variants whose rules work on whole rows with per-infoset state (the GameTree solvers'
and the public-tree engine's kernels run them; an engine that does not passes ``rows=False``
to ``_configure``)."""
SCHEDULED = ("hs-dcfr", "hs-pcfr+")
"""The variants whose exponents follow a schedule over ``horizon`` iterations."""
VARIANT_PARAMETERS = {
    "cfr": {}, "cfr+": {"delay": 0}, "dcfr": {"alpha": 1.5, "beta": 0.0, "gamma": 2.0}, "lcfr": {},
    "dcfr+": {"alpha": 1.5, "gamma": 4.0}, "pcfr+": {"gamma": 2.0}, "pdcfr+": {"alpha": 2.3, "gamma": 5.0},
    "hs-dcfr": {"gamma_start": 30.0, "horizon": None}, "hs-pcfr+": {"gamma_start": 30.0, "horizon": None},
    "sapcfr+": {"gamma": 2.0}, "vad-cfr": {},
}
"""Each variant's parameters and their defaults (None: no default, the caller must give it);
a parameter a variant does not use is refused."""
SAPCFR_ASYMMETRY = 2.0
"""SAPCFR+'s fixed a: the prediction's step size is 1/(1 + a) of the regrets' (Meng et al.)."""
VAD_BOOST = 1.1
VAD_NEGATIVE_CAP = -20.0
VAD_WARMUP = 500
"""VAD-CFR's constants (Li et al. Listing 5): positive instantaneous regrets' boost, the floor
of cumulative regrets, the iterations before the average starts; the rest are inline."""
MIN_GAMMA_START = 5.0
"""g(t) = gamma_start - 5t/n must stay >= 0 up to the horizon (Zhang et al. Theorems 3.1, 3.2)."""


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
    clipped (CFR+, PCFR+, SAPCFR+, HS-PCFR+ with its average discount), discounted (DCFR, HS-DCFR, with
    their average discount) or [R d(t-1) + r]^+ (DCFR+, PDCFR+). Arrays float64 (actions,)."""
    variant = rule.variant
    if variant == VARIANT_DCFR or variant == VARIANT_HS_DCFR or variant == VARIANT_HS_PCFR_PLUS:
        average[x] *= rule.average
    regrets[x] = regret_after(rule, regrets[x], instant[x])


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def regret_after(rule, regret, instant):
    """A cumulative ``regret`` after adding the instantaneous regret ``instant`` under ``rule``
    (``update_regret``'s rule for one entry, its scalars in the arrays' types)."""
    # ``if r < 0.0: r = 0.0`` is max(r, 0.0) (numba's max: the second if greater) without
    # compiling numba's max for a first run.
    variant = rule.variant
    if variant == VARIANT_DCFR_PLUS or variant == VARIANT_PDCFR_PLUS:
        r = regret * rule.previous + instant
        if r < 0.0:
            r = 0.0
    else:
        r = regret + instant
    if (variant == VARIANT_CFR_PLUS or variant == VARIANT_PCFR_PLUS or variant == VARIANT_HS_PCFR_PLUS
            or variant == VARIANT_SAPCFR_PLUS):
        if r < 0.0:
            r = 0.0
    elif variant == VARIANT_DCFR or variant == VARIANT_HS_DCFR:
        r *= rule.positive if r > 0.0 else rule.negative
    return r


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def average_weight(variant, t, delay, gamma, horizon):
    """Iteration ``t``'s weight in the average accumulator: CFR+'s max(t - delay, 0); t^gamma
    for DCFR+, PCFR+, PDCFR+ and SAPCFR+; t^g(t) with the schedule's g(t) = gamma - 5t/n for HS-DCFR
    and HS-PCFR+; 1 for the rest (DCFR's average is discounted instead)."""
    if variant == VARIANT_CFR_PLUS:
        return float(t - delay) if t > delay else 0.0
    if (variant == VARIANT_DCFR_PLUS or variant == VARIANT_PCFR_PLUS or variant == VARIANT_PDCFR_PLUS
            or variant == VARIANT_SAPCFR_PLUS):
        return float(t) ** gamma
    if variant == VARIANT_HS_DCFR or variant == VARIANT_HS_PCFR_PLUS:
        return float(t) ** (gamma - 5.0 * float(t) / horizon)
    return 1.0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def is_predictive(variant):
    """Whether the next strategy matches a prediction (PCFR+, PDCFR+, HS-PCFR+, SAPCFR+)."""
    return (variant == VARIANT_PCFR_PLUS or variant == VARIANT_PDCFR_PLUS or variant == VARIANT_HS_PCFR_PLUS
            or variant == VARIANT_SAPCFR_PLUS)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def prediction_scale(variant, t, alpha):
    """How much of the cumulative regret enters the prediction after iteration ``t``: PDCFR+'s
    d(t); SAPCFR+'s 1 + a, its prediction's step 1/(1 + a) scaled out of the matching."""
    if variant == VARIANT_PDCFR_PLUS:
        return discount(t, alpha)
    return 1.0 + SAPCFR_ASYMMETRY if variant == VARIANT_SAPCFR_PLUS else 1.0


class Settings(NamedTuple):
    """A variant's parameters as the kernels (GameTree, disk, poker engines) take them:
    ``variant`` (``VARIANT_CODES``), CFR+'s averaging ``delay``, the exponents ``alpha``,
    ``beta``, ``gamma`` (DCFR's; linear CFR's 1, 1, 1; DCFR+/PDCFR+'s alpha; gamma the average
    weight exponent of DCFR+, PCFR+, PDCFR+ and SAPCFR+, the schedule's start g0 for HS-DCFR
    and HS-PCFR+) and the schedule's ``horizon`` n (0 where there is none)."""

    variant: int
    delay: int
    alpha: float
    beta: float
    gamma: float
    horizon: int


def kernel_settings(variant: str, parameters: dict[str, float]) -> Settings:
    """``checked_parameters``' result as the kernels take it."""
    linear = 1.0 if variant == "lcfr" else 0.0  # linear CFR is DCFR(1, 1, 1)
    return Settings(VARIANT_CODES[variant], int(parameters.get("delay", 0)),
                    float(parameters.get("alpha", linear)), float(parameters.get("beta", linear)),
                    float(parameters.get("gamma", parameters.get("gamma_start", linear))),
                    int(parameters.get("horizon", 0)))


class VariantSolver:
    """What every CFR-family solver of every engine shares: its ``variant``, the variant's
    parameters checked (``_configure``), the kernels' ``Settings`` and the parameters as
    attributes (``delay``, ``alpha``, ``beta``, ``gamma``, ``horizon``; ``gamma_start`` for the
    schedule variants), which provenance records; and its checkpoints, ``state`` /
    ``load_state`` over the subclass's ``state_arrays()`` (the arrays that, with ``iteration``,
    determine the solver's future), ``_rematch()`` deriving the current strategy from them."""

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The arrays that, with ``iteration``, fully determine the solver's future: regrets and
        the average's accumulator, the predictive variants' prediction (the last instantaneous
        regrets), VAD-CFR's per-row volatility EWMA (engines keeping them in ``_state``)."""
        arrays = {"regrets": self.regrets, "average_accumulator": self.average_accumulator}
        if self.variant in PREDICTIVE:
            arrays["prediction"] = self._state.instant
        if self.variant in ROW_RULES:
            arrays["volatility"] = self._state.volatility
        return arrays

    def state(self) -> SolverState:
        """The solver's state (its arrays, not copies) for a checkpoint."""
        return SolverState(self.state_arrays(), self.iteration)

    def load_state(self, state: SolverState) -> None:
        """Continue from a ``state()`` (checked: FileFormatError if it is another solver's)."""
        state.copy_into(self.state_arrays())
        self.iteration = int(state.iteration)
        self._rematch()

    def _rematch(self) -> None:
        """Each player's current strategy from the state (``_match(player)``), no update."""
        for player in (0, 1):
            self._match(player)

    def _configure(self, variant: str, given: dict[str, float | None], alternating: bool = True,
                   rows: bool = False) -> dict:
        """Check ``given`` (None: not given) for ``variant`` and keep the kernels' Settings;
        returns the checked parameters. A predictive variant needs alternating updates; a
        ``ROW_RULES`` variant an engine whose kernels run it (``rows``)."""
        if variant in ROW_RULES and not rows:
            raise ParameterError(f"{variant} keeps per-infoset state this engine's kernels do not: "
                                 f"run it with the GameTree solvers or the public-tree engine "
                                 f"(--engine tree or public-tree)")
        parameters = checked_parameters(variant, given)
        if variant in PREDICTIVE and not alternating:
            raise ParameterError(f"{variant} predicts each player's next regrets from its last "
                                 f"update: alternating must be True")
        self._settings = kernel_settings(variant, parameters)
        self.variant = variant
        _, self.delay, self.alpha, self.beta, self.gamma, self.horizon = self._settings
        if variant in SCHEDULED:
            self.gamma_start = self.gamma
        return parameters


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def match_row(lo, hi, predictive, scale, regrets, instant, strategy):
    """Regret matching (Zinkevich et al. 2007) of the actions ``lo:hi`` of one row into
    ``strategy``: positive regrets normalised, uniform when none is positive; the predictive
    variants match the prediction [scale * regrets + instant]^+ instead (PCFR+, PDCFR+).
    Arrays (actions,) of any float or int dtype; the arithmetic is float64."""
    positive = 0.0
    for x in range(lo, hi):
        positive += max(scale * regrets[x] + instant[x], 0.0) if predictive else max(regrets[x], 0.0)
    for x in range(lo, hi):
        target = max(scale * regrets[x] + instant[x], 0.0) if predictive else max(regrets[x], 0.0)
        strategy[x] = target / positive if positive > 0.0 else 1.0 / (hi - lo)


@numba.njit(cache=True, no_cfunc_wrapper=True, **WITHOUT_REFCOUNTS)
def match_rows(rows, action_offset, predictive, scale, regrets, instant, strategy, width=None):
    """Regret matching (``match_row``) of ``rows`` (int32 or int64 row ids, action range
    ``action_offset[r]:action_offset[r + 1]``) into ``strategy``; with ``width`` (int64, per row
    id) each id is a span of consecutive rows of ``width[r]`` actions (a bucket layout's
    decision). Compiled without reference counting (it allocates nothing): counting the
    arrays bound at each inlined ``match_row`` cost CFR+ on Leduc 4 % of a GameTree iteration."""
    for j in range(rows.shape[0]):
        lo, hi = action_offset[rows[j]], action_offset[rows[j] + 1]
        if width is None:
            match_row(lo, hi, predictive, scale, regrets, instant, strategy)
        else:
            w = width[rows[j]]
            for row in range(lo, hi, w):
                match_row(row, row + w, predictive, scale, regrets, instant, strategy)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def clear_rows(rows, action_offset, instant):
    """Zero ``instant`` on the actions of ``rows`` (int32 or int64 row ids)."""
    for j in range(rows.shape[0]):
        for x in range(action_offset[rows[j]], action_offset[rows[j] + 1]):
            instant[x] = 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def row_magnitude(lo, hi, instant):
    """max |instant[lo:hi]|, a row's instantaneous regret magnitude (VAD-CFR's m)."""
    magnitude = 0.0
    for x in range(lo, hi):
        if abs(instant[x]) > magnitude:
            magnitude = abs(instant[x])
    return magnitude


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def vad_discounts(t, ewma):
    """VAD-CFR's normalised volatility v and regret discounts (d+, d-) at iteration ``t``
    (0 before the first iteration, when there is nothing to discount)."""
    volatility = min(1.0, ewma / 2.0)
    if t <= 0:
        return volatility, 0.0, 0.0
    alpha = max(0.1, 1.5 - 0.5 * volatility)
    beta = min(alpha, -0.1 - 0.5 * volatility)
    ta = float(t) ** alpha
    tb = float(t) ** beta
    return volatility, ta / (ta + 1.0), tb / (tb + 1.0)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def vad_update_row(t, lo, hi, row, regrets, instant, ewma):
    """VAD-CFR's regret update of the actions ``lo:hi`` of row ``row`` at iteration ``t``:
    the row's EWMA ``ewma[row]`` takes ``instant``'s magnitude, then
    R = max(-20, d R + boosted r). float64 arrays (actions,), ``ewma`` (rows,)."""
    magnitude = row_magnitude(lo, hi, instant)
    ewma[row] = magnitude if t == 1 else 0.1 * magnitude + 0.9 * ewma[row]
    _, positive, negative = vad_discounts(t, ewma[row])
    for x in range(lo, hi):
        r = instant[x] * VAD_BOOST if instant[x] > 0.0 else instant[x]
        new = (positive if regrets[x] >= 0.0 else negative) * regrets[x] + r
        regrets[x] = new if new > VAD_NEGATIVE_CAP else VAD_NEGATIVE_CAP


@numba.njit(cache=True, no_cfunc_wrapper=True)
def vad_match_row(t, lo, hi, regrets, instant, ewma, strategy):
    """VAD-CFR's strategy after iteration ``t`` for the actions ``lo:hi`` with the row's EWMA
    ``ewma`` (float): proportional to max(0, d R + o boosted r)^1.5, uniform if none is
    positive (so at ``t`` = 0, before any iteration)."""
    volatility, positive, negative = vad_discounts(t, ewma)
    optimism = max(0.0, 1.0 - 0.5 * volatility) / (1.0 + (t - 1.0) / 100.0)
    total = 0.0
    for x in range(lo, hi):
        r = instant[x] * VAD_BOOST if instant[x] > 0.0 else instant[x]
        projected = (positive if regrets[x] >= 0.0 else negative) * regrets[x] + optimism * r
        strategy[x] = projected ** 1.5 if projected > 0.0 else 0.0
        total += strategy[x]
    for x in range(lo, hi):
        strategy[x] = strategy[x] / total if total > 0.0 else 1.0 / (hi - lo)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def vad_average_weight(t, magnitude):
    """VAD-CFR's weight of iteration ``t``'s strategy at a row with instantaneous regret
    magnitude ``magnitude``: 0 up to the warm-up, then t^g (1 + m^1.5)^-1 max(0.1, (1 + m/2)^0.5)."""
    if t <= VAD_WARMUP:
        return 0.0
    gamma = min(4.0, 2.0 + 1.5 * min(1.0, magnitude / 2.0))
    stability = 1.0 / (1.0 + magnitude ** 1.5)
    return float(t) ** gamma * stability * max(0.1, (1.0 + magnitude / 2.0) ** 0.5)
