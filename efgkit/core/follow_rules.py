"""The follow rules of a distributional gadget's head, written once for every engine.

Brown & Sandholm 2017 §6.1 (Theorem 4, Appendix B): the opponent's alternative payoff at each
head infoset ``I`` is a random variable ``X(I) ~ Normal(alt(I), s(I))`` that it observes; its
terminate/follow choice at ``I`` is not learned by regrets but set before every iteration from
``v^t(I)``, its normalised counterfactual value of following under the current profile:

* ``THRESHOLD`` (Theorem 4): follow with probability ``P(X(I) < v^t(I)) = Φ((v^t(I) - alt(I)) /
  s(I))`` (a best response for every draw, as in CFR-BR); ``s(I) = 0`` is the step ``v > alt``.
* ``HEDGE`` (Appendix B, Eq. 3): every draw ``x`` runs Hedge over (terminate, follow) on
  cumulative values, terminate earning ``x`` per iteration and follow ``v^τ(I)``; integrated over
  ``X`` the follow probability on iteration ``t`` is ``∫ f(x) e^{η V} / (e^{η (t-1) x} + e^{η V})
  dx`` with ``V = Σ_{τ<t} v^τ(I)``. ``η_t = sqrt(ln 2) / (3 sqrt(VAR_t · t))`` (Brown, Kroer &
  Sandholm 2017, as the paper cites), ``VAR_t`` the observed variance of ``v^τ(I)`` so far
  (Welford's running mean and squares; floored at ``VARIANCE_FLOOR``: a constant follow value
  makes Hedge a best response). The paper leaves open whether "observed value" is cumulative
  or averaged; cumulative is Hedge's own definition.

The kernels run inside the vector engine's iteration loop (``poker.materialised.vector_cfr``)
and under ``resolve.distributional``'s GameTree solver, on a ``FollowState``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import llvmlite.binding
import numba
import numpy as np
from numba.core import types
from numba.extending import get_cython_function_address
from scipy.special import expit

THRESHOLD, HEDGE = 0, 1
RULES = ("threshold", "hedge")
"""The rule names, by code."""
VARIANCE_FLOOR = 1e-12
HEDGE_NODES = 40
"""Gauss-Hermite points of the Hedge integral over ``X``."""
LOGISTIC_POINTS = np.linspace(-36.0, 36.0, 145)
"""The trapezoidal rule for an expectation over a standard logistic: step 1/2 on [-36, 36]. The
rule's error on a function analytic in the strip ``|Im L| < π`` (the logistic density's poles) falls
as ``e^{-2π² / step}``: 7e-18 at step 1/2, under the 2e-16 the cut at ±36 leaves
(tests/test_resolve_distributional.py checks it against adaptive quadrature)."""
LOGISTIC_WEIGHTS = 0.5 * expit(LOGISTIC_POINTS) * expit(-LOGISTIC_POINTS)


class FollowState(NamedTuple):
    """A head's follow rule and its running statistics, float64 (heads,) unless said:
    ``rule`` (``THRESHOLD`` / ``HEDGE``); ``means`` alt(I) and ``spread`` s(I), normalised;
    ``cumulative`` Σ v^τ(I), ``mean_follow`` and ``squares`` Welford's running mean and sum of
    squared deviations of v^τ(I); ``follow`` the last follow probabilities; ``hermite_x`` /
    ``hermite_w`` float64 (nodes,) the Gauss-Hermite points and weights (``hermite``)."""

    rule: int
    means: np.ndarray
    spread: np.ndarray
    cumulative: np.ndarray
    mean_follow: np.ndarray
    squares: np.ndarray
    follow: np.ndarray
    hermite_x: np.ndarray
    hermite_w: np.ndarray


def follow_state(means: np.ndarray, spread: np.ndarray, rule: str, nodes: int = HEDGE_NODES) -> FollowState:
    """A fresh ``FollowState`` (follow probabilities 1/2) for ``rule`` (a name of ``RULES``)."""
    means = np.ascontiguousarray(means, dtype=np.float64)
    heads = means.shape[0]
    hermite_x, hermite_w = hermite(int(nodes))
    return FollowState(RULES.index(rule), means, np.ascontiguousarray(spread, dtype=np.float64),
                       np.zeros(heads), np.zeros(heads), np.zeros(heads), np.full(heads, 0.5),
                       hermite_x, hermite_w)


@functools.cache
def hermite(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite points and weights for E over Normal(0, 1) of ``g(sqrt(2) x)``."""
    points, weights = np.polynomial.hermite.hermgauss(nodes)
    return points, weights / np.sqrt(np.pi)


# Φ is scipy's own compiled ``ndtr`` (cephes' erf, not libm's, which differs in the last bit),
# called by symbol name so that the kernels calling it stay cacheable.
llvmlite.binding.add_symbol("efgkit_scipy_ndtr",
                            get_cython_function_address("scipy.special.cython_special", "__pyx_fuse_1ndtr"))
normal_cdf = types.ExternalFunction("efgkit_scipy_ndtr", types.float64(types.float64))
"""Φ(z) of a float64, inside kernels: ``scipy.special.ndtr``."""


@numba.njit(cache=True, no_cfunc_wrapper=True)
def logistic(x):
    """``1 / (1 + e^{-x})`` for a float64 ``x`` (scipy's ``expit``)."""
    return 1.0 / (1.0 + math.exp(-x))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def threshold_follow(value, mean, sd):
    """Theorem 4's ``P(X < value)`` for ``X ~ Normal(mean, sd)`` (floats); ``sd = 0``: the step."""
    if sd > 0.0:
        return normal_cdf((value - mean) / sd)
    return 1.0 if value > mean else 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hedge_learning_rate(iteration, variance):
    """Hedge's η on ``iteration`` (1-based) for two actions: ``sqrt(ln 2) / (3 sqrt(VAR t))``."""
    return math.sqrt(math.log(2.0)) / (3.0 * math.sqrt(max(variance, VARIANCE_FLOOR) * iteration))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def hedge_follow(total, observations, mean, sd, eta, hermite_x, hermite_w):
    """Eq. (3) for one head: ``∫ f(x) e^{η V} / (e^{η n x} + e^{η V}) dx``, ``f`` the Normal(mean,
    sd) density, ``V = total`` the cumulative follow value over ``n = observations`` iterations.

    With ``a = η n`` and ``b = V / n`` the integrand is ``expit(a (b - x))``, so the integral is
    ``P(X + L/a < b)`` for a standard logistic ``L`` independent of ``X``. It is computed over
    whichever variable the other smooths: Gauss-Hermite over ``X`` (``hermite_x``/``_w``) when
    ``sd · a <= 2`` (the sigmoid is not much steeper than the density is wide), otherwise
    ``E_L[Φ((b - mean - L/a) / sd)]`` by the trapezoidal rule over ``L`` (``LOGISTIC_POINTS``; a
    steep sigmoid under a wide density would fall between Hermite nodes)."""
    if observations == 0:
        return logistic(eta * total)
    slope = eta * observations
    threshold = total / observations
    integral = 0.0
    if sd * slope > 2.0:
        for k in range(LOGISTIC_POINTS.shape[0]):
            integral += normal_cdf((threshold - mean - LOGISTIC_POINTS[k] / slope) / sd) * LOGISTIC_WEIGHTS[k]
        return integral
    for k in range(hermite_x.shape[0]):
        integral += logistic(slope * (threshold - mean - math.sqrt(2.0) * sd * hermite_x[k])) * hermite_w[k]
    return integral


@numba.njit(cache=True, no_cfunc_wrapper=True)
def follow_update(state, values, seen):
    """The follow probabilities before iteration ``seen + 1`` into ``state.follow`` from the
    heads' normalised follow values under the current profile (``values`` float64 (heads,));
    the Hedge rule then adds ``values`` to its running statistics."""
    follow, means, spread = state.follow, state.means, state.spread
    if state.rule == THRESHOLD:
        for j in range(values.shape[0]):
            follow[j] = threshold_follow(values[j], means[j], spread[j])
        return
    cumulative, mean_follow, squares = state.cumulative, state.mean_follow, state.squares
    for j in range(values.shape[0]):
        variance = squares[j] / seen if seen > 1 else 0.0
        eta = hedge_learning_rate(seen + 1, variance)
        follow[j] = hedge_follow(cumulative[j], seen, means[j], spread[j], eta, state.hermite_x,
                                 state.hermite_w)
        cumulative[j] += values[j]
        delta = values[j] - mean_follow[j]
        mean_follow[j] += delta / (seen + 1)
        squares[j] += delta * (values[j] - mean_follow[j])
