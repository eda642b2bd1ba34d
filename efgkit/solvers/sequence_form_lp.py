"""Exact equilibria of small games with the sequence-form LP (Koller, Megiddo & von Stengel 1996).

Player 0 maximises over realization plans x (E x = e, x >= 0) the value of the inner
minimisation over y (F y = f, y >= 0), replaced by its dual:

    max_{x, q}  f^T q   s.t.  F^T q <= A^T x,  E x = e,  x >= 0,

where A[s0, s1] sums chance reach * player 0 utility over the terminals whose last
sequences are (s0, s1). The symmetric LP gives player 1's plan. Both are solved with
scipy's HiGHS; equilibrium behaviour strategies come from x(I, a) / x(parent(I)).
Sequence 0 of each player is the empty sequence; sequence j + 1 is the player's j-th
original infoset-action. Only the original (perfect-recall) game can be solved this way.
scipy is imported when an LP is built, not with the module: importing the solvers stays
fast for commands that never solve one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.strategy import Strategy, normalize_per_infoset
from efgkit.solvers.traversal import ProfileLayout

if TYPE_CHECKING:
    import scipy.sparse as sp

HIGHS_OPTIONS = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
}


@dataclass(frozen=True)
class SequenceFormSolution:
    game_value: float
    """Player 0's equilibrium value."""
    strategy: Strategy
    """An equilibrium profile on the identity map."""


class SequenceFormLP:
    """Builds the sequence-form matrices of ``tree`` once; ``solve()`` returns an equilibrium.

    Also a core Solver whose iterations change nothing (its strategies are the equilibrium,
    solved once): re-solving uses it for exact gadget solutions without solver error."""

    def __init__(self, tree: GameTree) -> None:
        self.tree = tree
        self.iteration = 0
        parent_action = tree.infoset_parent_action  # raises unless perfect recall
        action_player = tree.infoset_player[tree.action_infoset]
        self._column = np.zeros(tree.num_infoset_actions + 1, dtype=np.int64)
        self._num_sequences = []
        for player in (0, 1):
            actions = np.flatnonzero(action_player == player)
            self._column[actions + 1] = np.arange(1, actions.size + 1)
            self._num_sequences.append(actions.size + 1)
        self._constraints = [self._plan_constraints(player, parent_action) for player in (0, 1)]
        self.payoff = self._payoff_matrix()

    def _plan_constraints(self, player: int, parent_action: np.ndarray) -> sp.csr_matrix:
        """E with E x = e: x(empty) = 1 and, per infoset, sum_a x(I, a) = x(parent(I))."""
        import scipy.sparse as sp

        tree = self.tree
        infosets = tree.infosets_of(player)
        rows, cols, vals = [0], [0], [1.0]
        for row, infoset in enumerate(infosets.tolist(), start=1):
            lo, hi = tree.infoset_action_offset[infoset], tree.infoset_action_offset[infoset + 1]
            for action in range(lo, hi):
                rows.append(row)
                cols.append(int(self._column[action + 1]))
                vals.append(1.0)
            rows.append(row)
            cols.append(int(self._column[parent_action[infoset] + 1]))
            vals.append(-1.0)
        shape = (infosets.size + 1, self._num_sequences[player])
        return sp.csr_matrix((vals, (rows, cols)), shape=shape)

    def _payoff_matrix(self) -> sp.csr_matrix:
        import scipy.sparse as sp

        tree = self.tree
        layout = ProfileLayout(InfosetMap.identity(tree))
        layout.set_strategy(np.ones(tree.num_infoset_actions))
        reach = layout.others_reach(-1)  # all strategy entries are 1: chance reach only
        terminals = layout.terminal_nodes
        last = tree.node_last_action
        rows = self._column[last[0, terminals] + 1]
        cols = self._column[last[1, terminals] + 1]
        values = reach[terminals] * tree.node_utility[terminals]
        return sp.csr_matrix((values, (rows, cols)), shape=tuple(self._num_sequences))

    def _solve_player(self, player: int) -> tuple[float, np.ndarray]:
        import scipy.optimize
        import scipy.sparse as sp

        own, other = self._constraints[player], self._constraints[1 - player]
        payoff = self.payoff if player == 0 else -self.payoff.T
        n_plan, n_dual = own.shape[1], other.shape[0]
        # Variables [plan (>= 0), dual (free)]; maximise dual[0] s.t. other^T dual <= payoff^T plan.
        inequality = sp.hstack([-payoff.T, other.T]).tocsr()
        equality = sp.hstack([own, sp.csr_matrix((own.shape[0], n_dual))]).tocsr()
        objective = np.zeros(n_plan + n_dual)
        objective[n_plan] = -1.0
        rhs_eq = np.zeros(own.shape[0])
        rhs_eq[0] = 1.0
        bounds = [(0, None)] * n_plan + [(None, None)] * n_dual
        result = scipy.optimize.linprog(
            objective, A_ub=inequality, b_ub=np.zeros(inequality.shape[0]), A_eq=equality,
            b_eq=rhs_eq, bounds=bounds, method="highs", options=HIGHS_OPTIONS,
        )
        if result.status != 0:
            raise ParameterError(f"the sequence-form LP failed: {result.message}")
        return -float(result.fun), np.maximum(result.x[:n_plan], 0.0)

    def solve(self) -> SequenceFormSolution:
        tree = self.tree
        value0, plan0 = self._solve_player(0)
        _, plan1 = self._solve_player(1)
        plans = (plan0, plan1)
        realization = np.zeros(tree.num_infoset_actions)
        parent_weight = np.zeros(tree.num_infoset_actions)
        owner = tree.infoset_player[tree.action_infoset]
        parent = tree.infoset_parent_action[tree.action_infoset]
        for player in (0, 1):
            mine = owner == player
            realization[mine] = plans[player][self._column[np.flatnonzero(mine) + 1]]
            parent_weight[mine] = plans[player][self._column[parent[mine] + 1]]
        # Behaviour = x(I, a) / x(parent(I)), normalised per infoset (unreached -> uniform).
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(parent_weight > 1e-12, realization / parent_weight, 0.0)
        behavior = normalize_per_infoset(ratio, tree.infoset_action_offset)
        return SequenceFormSolution(value0, Strategy.from_behavior(tree, behavior))

    @cached_property
    def _equilibrium(self) -> Strategy:
        return self.solve().strategy

    def iterate(self, iterations: int = 1) -> SequenceFormLP:
        self.iteration += iterations
        return self

    def current_strategy(self) -> Strategy:
        return self._equilibrium

    average_strategy = current_strategy

    def state(self) -> SolverState:
        """Only the iteration: the equilibrium is recomputed, identically."""
        return SolverState({}, self.iteration)

    def load_state(self, state: SolverState) -> None:
        state.check({})
        self.iteration = int(state.iteration)
