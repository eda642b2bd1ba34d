"""The CFR family on a GameTree and any InfosetMap: CFR, CFR+, DCFR, linear CFR, DCFR+,
PCFR+, PDCFR+, HS-DCFR, HS-PCFR+, SAPCFR+ and VAD-CFR.

The variants' regret and averaging rules, their parameters and papers are in
``efgkit.core.regret_rules`` (shared with every other engine); this module walks the
GameTree for the instantaneous regrets and the average strategy's reach weights.

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

from efgkit.core.regret_rules import (
    ROW_RULES,
    VAD_WARMUP,
    VARIANT_VAD_CFR,
    VariantSolver,
    average_weight,
    check_iterations,
    clear_rows,
    discount_rule,
    is_predictive,
    match_rows,
    prediction_scale,
    row_magnitude,
    update_regret,
    vad_average_weight,
    vad_match_row,
    vad_update_row,
)
from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.strategy import Strategy, normalize_per_infoset
from efgkit.solvers.traversal import ProfileLayout, infoset_view, others_reach, own_infoset_reach


class CFRSolver(VariantSolver):
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
        self._configure(self.variant, {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma,
                                       "gamma_start": gamma_start, "horizon": horizon}, alternating,
                        rows=True)
        self.infoset_map = infoset_map
        self.alternating = alternating
        tree = infoset_map.tree
        self.layout = ProfileLayout(infoset_map)
        self.iteration = 0
        self.regrets = np.zeros(infoset_map.num_abstract_actions)
        self.average_accumulator = np.zeros(infoset_map.num_abstract_actions)
        self._state = RegretState(self.regrets, self.average_accumulator,
                                  np.zeros(infoset_map.num_abstract_actions),
                                  np.zeros(infoset_map.num_abstract if self.variant in ROW_RULES else 0))
        self._work = CFRBuffers(self.layout.edge_prob, self.layout.values, self.layout.reach,
                               np.zeros(tree.num_infosets))
        self._view = infoset_view(tree, infoset_map)  # raises unless perfect recall
        self._player_infosets = tuple(tree.infosets_of(p) for p in (0, 1))
        self._player_abstract = tuple(infoset_map.abstract_infosets_of(p) for p in (0, 1))
        self._matched_abstract = self._player_abstract  # all but the held infosets
        self._held = np.zeros(0, np.int32)
        self._held_actions = np.zeros(0, np.int64)
        self._rematch()

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
            self._rematch()
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


class SAPCFRPlusSolver(CFRSolver):
    """Simple asymmetric PCFR+ (Meng et al. 2025): PCFR+ with the prediction's step size 1/3
    of the regrets'; gamma 2."""

    variant = "sapcfr+"


class VADCFRSolver(CFRSolver):
    """VAD-CFR (Li et al. 2026, Listing 5): volatility-adaptive discounts, boosted and
    optimistic projected regrets, the average from iteration 501 on (``regret_rules``)."""

    variant = "vad-cfr"


SOLVER_CLASSES = {"cfr": CFRSolver, "cfr+": CFRPlusSolver, "dcfr": DCFRSolver, "lcfr": LinearCFRSolver,
                  "dcfr+": DCFRPlusSolver, "pcfr+": PCFRPlusSolver, "pdcfr+": PDCFRPlusSolver,
                  "hs-dcfr": HSDCFRSolver, "hs-pcfr+": HSPCFRPlusSolver, "sapcfr+": SAPCFRPlusSolver,
                  "vad-cfr": VADCFRSolver}
"""The one table of CFR-family solvers by name (CLI, re-solving, benchmarks)."""


class PlayerSets(NamedTuple):
    """Per player, a pair of int32 arrays each: the original ``infosets``, the ``abstract``
    infosets, and the abstract infosets regret matching sets (``matched``: all but the held)."""

    infosets: tuple
    abstract: tuple
    matched: tuple


class RegretState(NamedTuple):
    """float64 (abstract actions,) each: cumulative ``regrets``, the ``average`` accumulator and
    the ``instant`` regrets of each player's last update (the predictive variants' prediction);
    ``volatility`` float64 (abstract infosets,) VAD-CFR's EWMA, (0,) for the other variants."""

    regrets: np.ndarray
    average: np.ndarray
    instant: np.ndarray
    volatility: np.ndarray


class CFRBuffers(NamedTuple):
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
    ``CFRBuffers`` and ``Samples``."""
    clear_rows(abstract, view.action_offset, state.instant)
    others_reach(passes, work.edge_prob, player, work.reach)
    values_and_regrets(passes, work.edge_prob, work.values, work.reach, player, state.instant, samples)
    accumulate_player_update(t, settings, view, infosets, abstract, state, work)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def accumulate_player_update(t, settings, view, infosets, abstract, state, work):
    """Iteration ``t``'s average-strategy contribution and cumulative regret update.

    ``infosets`` / ``abstract`` int32: one player's original and abstract infosets. Works
    infoset by infoset, so a driver may call it on consecutive slices of both
    (efgkit.storage.disk_solve does, to bound its resident memory) with the same result as
    one call.
    """
    if settings.variant == VARIANT_VAD_CFR:
        accumulate_vad_update(t, view, infosets, abstract, state, work)
        return
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
def accumulate_vad_update(t, view, infosets, abstract, state, work):
    """``accumulate_player_update`` for VAD-CFR (``regret_rules``): each original infoset's
    strategy weighted by its own reach and by its abstract row's magnitude, from the end of the
    warm-up on; then each abstract row's EWMA and regrets."""
    if t > VAD_WARMUP:
        own_infoset_reach(infosets, view, work.edge_prob, work.own_reach)
        for j in range(infosets.shape[0]):
            infoset = infosets[j]
            lo = view.infoset_offset[infoset]
            n = view.num_actions[infoset]
            w = vad_average_weight(t, row_magnitude(lo, lo + n, state.instant)) * work.own_reach[infoset]
            if w != 0.0:
                for k in range(n):
                    state.average[lo + k] += w * work.edge_prob[lo + k]
    for j in range(abstract.shape[0]):
        a = abstract[j]
        vad_update_row(t, view.action_offset[a], view.action_offset[a + 1], a, state.regrets, state.instant,
                       state.volatility)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def match_player(settings, t, matched, action_offset, state, edge_prob):
    """Regret matching (``regret_rules.match_row``) of ``matched`` (int32 abstract infosets)
    after iteration ``t``, plain or of the predictive variants' prediction. ``action_offset``
    int32 (abstract infosets + 1,); ``state`` a ``RegretState``; writes
    ``edge_prob[:abstract actions]``; VAD-CFR's rows by ``regret_rules.vad_match_row``."""
    if settings.variant == VARIANT_VAD_CFR:
        for j in range(matched.shape[0]):
            a = matched[j]
            vad_match_row(t, action_offset[a], action_offset[a + 1], state.regrets, state.instant,
                          state.volatility[a], edge_prob)
    else:
        match_rows(matched, action_offset, is_predictive(settings.variant),
                   prediction_scale(settings.variant, t, settings.alpha), state.regrets, state.instant,
                   edge_prob)


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
