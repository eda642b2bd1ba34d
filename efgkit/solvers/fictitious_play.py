"""Extensive-form fictitious play (XFP; Heinrich, Lanctot & Silver 2015), on any InfosetMap.

Each iteration every player best-responds in the ORIGINAL game to the opponent's average
strategy, and the average behaviour strategy is mixed with the best response so that it
stays realization-equivalent to the average mixed strategy (Čermák et al. §1.4, Lemma 1):

    b''(I) = b(I) + l2 * pi'(I) / (l1 * pi(I) + l2 * pi'(I)) * (b'(I) - b(I)),

with ``l2 = 1 / (t + 1)`` at iteration ``t`` (the initial strategy counts as the first
element of the average). On an abstraction the average lives on abstract infosets, the
reach of an abstract infoset is the sum of its members' own reach (Čermák et al.,
Appendix A.1 of our digest), and b'(J) is the members' best-response actions weighted
by their reach under the best response. On the identity map this is exactly XFP; FPIRA
refines the abstraction so that every best response is representable.
"""

from __future__ import annotations

import numpy as np

from efgkit.core.solver_state import SolverState
from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import InfosetView, infoset_view, own_infoset_reach


class FictitiousPlay:
    """XFP with averages on ``infoset_map``; ``alternating`` lets player 1 answer player 0's
    updated average within the same iteration (the paper's "players take turns")."""

    def __init__(
        self,
        tree_or_map: GameTree | InfosetMap,
        *,
        alternating: bool = False,
        initial_strategy: Strategy | None = None,
    ) -> None:
        infoset_map = (
            tree_or_map if isinstance(tree_or_map, InfosetMap) else InfosetMap.identity(tree_or_map)
        )
        self.infoset_map = infoset_map
        self.alternating = alternating
        tree = infoset_map.tree
        self._best_response = BestResponse(infoset_map)
        start = initial_strategy or Strategy.uniform(infoset_map)
        if start.infoset_map.num_abstract_actions != infoset_map.num_abstract_actions:
            raise ParameterError("the initial strategy is on a different abstraction")
        self.average = start.probabilities.copy()
        self.iteration = 0
        self.best_responses = Strategy.uniform(InfosetMap.identity(tree)).probabilities
        self.best_response_values = (np.nan, np.nan)
        self._player_infosets = [tree.infosets_of(p) for p in (0, 1)]

    @property
    def nash_conv(self) -> float:
        """Sum of the last iteration's best-response values: the NashConv of the average
        before that iteration with simultaneous updates (with alternating updates the two
        responses face different averages, so use ``evaluate`` instead)."""
        return float(sum(self.best_response_values))

    def iterate(self, iterations: int = 1) -> FictitiousPlay:
        if iterations < 0:
            raise ParameterError(f"iterations must be >= 0, got {iterations}")
        for _ in range(iterations):
            self.iteration += 1
            mixing = 1.0 / (self.iteration + 1)
            snapshot = self.average.copy()
            values = []
            for player in (0, 1):
                against = self.average if self.alternating else snapshot
                value, actions = self._best_response.best_response(player, against)
                values.append(value)
                self._mix(player, actions, mixing)
            self.best_response_values = (values[0], values[1])
        return self

    def _mix(self, player: int, actions: np.ndarray, mixing: float) -> None:
        tree = self.infoset_map.tree
        m = self.infoset_map
        infosets = self._player_infosets[player]
        pure, reach_response = pure_response(tree, infosets, actions)
        reach_average = own_reach(infoset_view(tree, m), infosets, self.average)
        self.average = mix_realization_weighted(self.average, m, player, infosets, actions,
                                                reach_average, reach_response, mixing)
        owned = np.repeat(m.abstract_player == player, m.abstract_num_actions)
        self.best_responses[owned[m.abstract_action_of]] = pure[owned[m.abstract_action_of]]

    def average_strategy(self) -> Strategy:
        return Strategy(self.infoset_map, self.average.copy())

    def _state_arrays(self) -> dict[str, np.ndarray]:
        return {"average": self.average, "best_responses": self.best_responses}

    def state(self) -> SolverState:
        """The average and the last pure responses: with ``iteration`` the run's future
        (``best_response_values`` stays NaN after a resume until the next iteration)."""
        return SolverState(self._state_arrays(), self.iteration)

    def load_state(self, state: SolverState) -> None:
        state.copy_into(self._state_arrays())
        self.iteration = int(state.iteration)

    def current_strategy(self) -> Strategy:
        """The last iteration's pure best responses, on the original (identity) infosets."""
        return Strategy.from_behavior(self.infoset_map.tree, self.best_responses.copy())


def pure_response(tree: GameTree, infosets: np.ndarray,
                  actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pure best response as behaviour (float64 per original infoset-action: 1 on
    ``actions[I]`` at each of ``infosets``) and the own reach of each infoset under it."""
    pure = np.zeros(tree.num_infoset_actions)
    pure[tree.infoset_action_offset[infosets] + actions[infosets]] = 1.0
    return pure, own_reach(infoset_view(tree), infosets, pure)


def own_reach(view: InfosetView, infosets: np.ndarray, behavior: np.ndarray) -> np.ndarray:
    """float64 per original infoset: the player's own reach of ``infosets`` under ``behavior``
    (laid out as ``view`` says: ``infoset_view(tree)`` for original actions, ``infoset_view(tree,
    infoset_map)`` for abstract ones)."""
    reach = np.zeros(view.parent_action.shape[0])
    own_infoset_reach(infosets, view, behavior, reach)
    return reach


def mix_realization_weighted(average: np.ndarray, infoset_map, player: int, infosets: np.ndarray,
                             actions: np.ndarray, reach_average: np.ndarray,
                             reach_response: np.ndarray, mixing: float) -> np.ndarray:
    """Lemma 1 on ``player``'s abstract infosets: the average after mixing in a pure best
    response with weight ``mixing``.

    ``infosets`` are the player's original infosets, ``actions`` the best response's action
    at each, ``reach_*`` each original infoset's own reach under the average and under the
    best response. An abstract infoset's reach is the sum of its members'; its best-response
    distribution is its members' actions weighted by their reach under the best response
    (a single action when the best response is representable, as FPIRA ensures). Works on
    an InfosetMap or a RefinableMap (only the map's used abstract infosets are read).
    """
    m = infoset_map
    owner = m.abstract_of[infosets]
    set_average = np.bincount(owner, weights=reach_average[infosets], minlength=m.num_abstract)
    set_response = np.bincount(owner, weights=reach_response[infosets], minlength=m.num_abstract)
    response_mass = np.bincount(m.infoset_offset[infosets] + actions[infosets],
                                weights=reach_response[infosets], minlength=average.shape[0])
    sets = m.abstract_infosets_of(player)
    counts = m.abstract_num_actions[sets]
    flat = np.repeat(m.abstract_action_offset[sets], counts) + positions_within(counts)
    denominator = (1.0 - mixing) * set_average[sets] + mixing * set_response[sets]
    reached = np.repeat(set_response[sets] > 0, counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.repeat(np.where(denominator > 0, mixing * set_response[sets] / denominator, 0.0),
                         counts)
        response = np.where(reached, response_mass[flat] / np.repeat(set_response[sets], counts),
                            0.0)
    mixed = average.copy()
    mixed[flat] += step * (response - average[flat])
    return mixed
