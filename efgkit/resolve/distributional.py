"""Distributional alternative payoffs (Brown & Sandholm 2017 §6.1, Theorem 4, Appendix B).

The opponent's alternative payoff at each head infoset ``I`` becomes a random variable
``X(I) ~ Normal(alt(I), s(I))`` that the opponent observes and the re-solver does not.
The infinite game this defines is solved on the ordinary re-solve gadget (Burch's
terminate/follow tree): the opponent's terminate/follow choice at ``I`` is no longer free
but set on every iteration by a response rule, while CFR (any variant) updates everything
else, the opponent below ``follow`` included (``CFRSolver.hold_strategy`` dictates the head).

* ``rule="threshold"`` (Theorem 4): follow with probability ``P(X(I) < v^t(I))``, ``v^t(I)`` the
  opponent's normalised counterfactual value of following under the current profile (a best
  response for every draw, as in CFR-BR). ``s(I) = 0`` is a best response to the mean: the
  re-solve gadget solved by CFR-BR at the head.
* ``rule="hedge"`` (Appendix B, Eq. 3): Hedge over (terminate, follow) for every draw,
  integrated over ``X``.

The rules themselves are ``core.follow_rules``' kernels, shared with the vector engine, which
runs them inside its iteration loop (``resolve.vector_gadgets``).

Values are normalised per infoset as in ``RootConstraints.normalized``: ``alt(I) = c_I /
π_{-o}(I)``. The spread follows the paper's heuristic, ``s(I) = |blueprint cfv(I) - CBV(I)|``
(the blueprint's own counterfactual value against its counterfactual best-response value,
both computed exactly in the full game; ``distributional_spread``), times a ``spread``
factor. Nothing here is safe: as ``s -> 0`` the solution tends to the re-solve gadget's
(max-min margin while all margins are positive); as ``s`` grows it maximises the
(reach-weighted) sum of margins.
"""

from __future__ import annotations

import numpy as np

from efgkit.core.follow_rules import (
    HEDGE_NODES,
    RULES,
    follow_state,
    follow_update,
    hedge_follow,
    hermite,
    threshold_follow,
)
from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE
from efgkit.resolve.constraints import BlueprintValues, RootConstraints
from efgkit.resolve.engines import SolverFactory
from efgkit.resolve.gadgets import FOLLOW, TERMINATE, Gadget, coinflip_gadget
from efgkit.resolve.subgame import Subgame
from efgkit.solvers.cfr import CFRPlusSolver, CFRSolver
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import bottom_up_values


def follow_probability(follow_values: np.ndarray, means: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """Theorem 4's rule, per head infoset: ``P(X < v) = Φ((v - mean) / sd)`` for ``X ~
    Normal(mean, sd)``; ``sd = 0`` gives 1 where ``v > mean`` and 0 otherwise (float64 arrays
    of one shape; ``core.follow_rules.threshold_follow`` element by element)."""
    v, mean, sd = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (follow_values, means, sds)))
    return np.array([threshold_follow(*x) for x in zip(v.ravel(), mean.ravel(), sd.ravel(), strict=True)],
                    dtype=np.float64).reshape(v.shape)


def hedge_follow_probability(cumulative_follow: np.ndarray, observations: int, means: np.ndarray,
                             sds: np.ndarray, eta: np.ndarray, nodes: int = HEDGE_NODES) -> np.ndarray:
    """Eq. (3) per head infoset (``core.follow_rules.hedge_follow``): the follow probability
    after ``observations`` iterations with cumulative follow value ``cumulative_follow``,
    alternative payoff ``Normal(means, sds)`` and learning rate ``eta`` (float64 arrays of one
    shape); ``nodes`` Gauss-Hermite points."""
    hermite_x, hermite_w = hermite(nodes)
    arrays = [np.asarray(a, dtype=np.float64) for a in (cumulative_follow, means, sds, eta)]
    return np.array([hedge_follow(total, observations, mean, sd, rate, hermite_x, hermite_w)
                     for total, mean, sd, rate in zip(*(a.ravel() for a in arrays), strict=True)],
                    dtype=np.float64).reshape(arrays[0].shape)


def distributional_spread(values: BlueprintValues, subgame: Subgame, player: int) -> np.ndarray:
    """Brown & Sandholm's ``s(I)``: ``|blueprint cfv(I) - CBV(I)|``, normalised, per element of
    the opponent's augmented infosets (float64; 0 where the element is unreachable)."""
    selfplay = values.constraints(subgame, player, "selfplay").normalized()
    best_response = values.constraints(subgame, player, "br").normalized()
    return np.abs(selfplay - best_response)


def check_head_solver(solver: SolverFactory) -> None:
    """ParameterError unless ``solver`` is a CFR-family class: the distributional gadget sets
    the opponent's head play before every iteration (``CFRSolver.hold_strategy``, Theorem 4)."""
    if not (isinstance(solver, type) and issubclass(solver, CFRSolver)):
        raise ParameterError(f"the distributional gadget is solved by CFR iterations (Brown & Sandholm "
                             f"Theorem 4): the solver must be a CFR-family class, got {solver!r}")


def distributional_gadget(constraints: RootConstraints, kind: str = "distributional") -> Gadget:
    """The re-solve gadget (its terminate payoffs are the means ``alt(I)``); the distribution
    enters only through ``DistributionalSolver``'s follow probabilities."""
    return coinflip_gadget(constraints, 0.0, kind=kind)


class FollowRule:
    """The opponent's head play of a distributional gadget on the GameTree: before iteration
    ``t`` (``seen = t - 1`` iterations observed), the follow probability of every head infoset
    from its normalised follow values under the current profile (float64 per element), by
    ``core.follow_rules.follow_update`` on ``state`` (its running statistics ``cumulative``,
    ``mean_follow``, ``squares``, float64 per element)."""

    def __init__(self, means: np.ndarray, spread: np.ndarray, rule: str, nodes: int) -> None:
        self.state = follow_state(means, spread, rule, nodes)
        self.means, self.spread, self.rule, self.nodes = self.state.means, self.state.spread, rule, int(nodes)
        self.cumulative, self.mean_follow, self.squares = (self.state.cumulative, self.state.mean_follow,
                                                           self.state.squares)

    def __call__(self, values: np.ndarray, seen: int) -> np.ndarray:
        follow_update(self.state, np.ascontiguousarray(values, dtype=np.float64), seen)
        return self.state.follow.copy()


class DistributionalSolver:
    """CFR on a re-solve-shaped gadget with the opponent's head choice set by ``rule``.

    ``spread`` (float64 per element of ``gadget.constraints``, >= 0): the standard deviation
    ``s(I)`` of each alternative payoff, normalised; the means are
    ``gadget.constraints.normalized()``. ``solver``: the CFR-family class that runs the
    iterations (``check_head_solver``); ``nodes``: the
    Gauss-Hermite points of the Hedge integral. ``iterate(n)``, ``average_strategy()`` as for
    the CFR solvers; ``follow_probabilities_`` is the head play of the last iteration.
    """

    def __init__(self, gadget: Gadget, spread: np.ndarray, *, rule: str = "threshold",
                 solver: type[CFRSolver] = CFRPlusSolver, nodes: int = HEDGE_NODES) -> None:
        constraints = gadget.constraints
        if constraints is None or gadget.tree.node_kind[0] != CHANCE or not _is_resolve_shaped(gadget):
            raise ParameterError(f"distributional payoffs need a re-solve gadget (terminate/follow at "
                                 f"every root), got a {gadget.kind!r} gadget")
        if rule not in RULES:
            raise ParameterError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
        check_head_solver(solver)
        spread = np.asarray(spread, dtype=np.float64)
        elements = constraints.elements
        if spread.shape != (elements.num_elements,) or not np.all(np.isfinite(spread)) or np.any(spread < 0):
            raise ParameterError(f"spread must be {elements.num_elements} non-negative numbers (one "
                                 f"per opponent head infoset), got {spread!r}")
        if nodes < 1:
            raise ParameterError(f"nodes must be >= 1, got {nodes}")
        tree = gadget.tree
        self.gadget, self.rule, self.nodes = gadget, rule, int(nodes)
        self.means = constraints.normalized()
        self.spread = spread
        self.head_rule = FollowRule(self.means, spread, rule, nodes)
        self.solver = solver(tree)
        heads = tree.node_first_child[0] + np.arange(constraints.subgame.num_roots)
        self._element = elements.element_of_root
        self._follow_child = tree.node_first_child[heads] + 1
        self._weight = tree.node_chance_prob[heads]
        element_weight = np.bincount(self._element, weights=self._weight, minlength=elements.num_elements)
        # Gadget leaves are scaled by k: dividing by (weight of I) * k gives normalised values.
        self._normaliser = element_weight * constraints.total_reach
        self._sign = 1.0 if constraints.opponent == 0 else -1.0
        self.head_infosets = np.zeros(elements.num_elements, dtype=np.int32)
        self.head_infosets[self._element] = tree.node_infoset[heads]
        self._values = tree.node_utility.copy()
        self.follow_probabilities_ = np.full(elements.num_elements, 0.5)

    @property
    def iteration(self) -> int:
        return self.solver.iteration

    def follow_values(self) -> np.ndarray:
        """The opponent's normalised counterfactual value of ``follow`` at every head infoset
        under the current profile (float64 per element; the mean where unreachable)."""
        layout = self.solver.layout
        bottom_up_values(layout.passes, layout.edge_prob, self._values)
        follow = self._sign * self._values[self._follow_child]
        total = np.bincount(self._element, weights=self._weight * follow, minlength=self.means.shape[0])
        return np.divide(total, self._normaliser, out=self.means.copy(), where=self._normaliser > 0)

    def iterate(self, iterations: int = 1) -> DistributionalSolver:
        """Run ``iterations`` CFR iterations, each with the head play set by the rule first."""
        if iterations < 0:
            raise ParameterError(f"iterations must be >= 0, got {iterations}")
        for _ in range(iterations):
            follow = self.head_rule(self.follow_values(), self.solver.iteration)
            self.follow_probabilities_ = follow
            self.solver.hold_strategy(self.head_infosets, np.column_stack([1.0 - follow, follow]).ravel())
            self.solver.iterate(1)
        return self

    def current_strategy(self) -> Strategy:
        return self.solver.current_strategy()

    def average_strategy(self) -> Strategy:
        return self.solver.average_strategy()

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The CFR solver's state arrays plus the head rule's running statistics."""
        rule = self.head_rule
        return {**self.solver.state_arrays(), "cumulative_follow": rule.cumulative,
                "mean_follow": rule.mean_follow, "follow_squares": rule.squares,
                "follow_probabilities": self.follow_probabilities_}

    def state(self) -> SolverState:
        """The solver's state (its arrays, not copies) for a checkpoint."""
        return SolverState(self.state_arrays(), self.solver.iteration)

    def load_state(self, state: SolverState) -> None:
        """Continue from a ``state()``, bit-identically (checked: FileFormatError if it is
        another solver's)."""
        state.copy_into(self.state_arrays())  # the CFR solver's own arrays and the head statistics
        self.solver.load_state(SolverState(self.solver.state_arrays(), state.iteration))
        follow = self.follow_probabilities_
        self.solver.hold_strategy(self.head_infosets, np.column_stack([1.0 - follow, follow]).ravel())


def _is_resolve_shaped(gadget: Gadget) -> bool:
    """Every child of the root is an opponent node whose actions are (terminate, follow)."""
    tree = gadget.tree
    heads = tree.node_first_child[0] + np.arange(tree.node_num_children[0])
    if heads.shape[0] != gadget.subgame.num_roots or np.any(tree.node_kind[heads] != 1 - gadget.player):
        return False
    labels = tree.action_labels
    offsets = tree.infoset_action_offset
    return all(labels[offsets[i]:offsets[i + 1]] == [TERMINATE, FOLLOW]
               for i in np.unique(tree.node_infoset[heads]))
