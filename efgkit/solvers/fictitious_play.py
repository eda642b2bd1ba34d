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

from efgkit.abstraction.infoset_map import InfosetMap
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import own_infoset_reach


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
        pure = np.zeros(tree.num_infoset_actions)
        pure[tree.infoset_action_offset[infosets] + actions[infosets]] = 1.0
        reach_average = np.zeros(tree.num_infosets)
        reach_response = np.zeros(tree.num_infosets)
        own_infoset_reach(infosets, tree.infoset_parent_action, tree.action_infoset,
                          tree.infoset_action_offset, m.infoset_offset, self.average,
                          reach_average)
        own_infoset_reach(infosets, tree.infoset_parent_action, tree.action_infoset,
                          tree.infoset_action_offset, tree.infoset_action_offset, pure,
                          reach_response)
        abstract_reach_average = np.bincount(m.abstract_of[infosets],
                                             weights=reach_average[infosets],
                                             minlength=m.num_abstract)
        abstract_reach_response = np.bincount(m.abstract_of[infosets],
                                              weights=reach_response[infosets],
                                              minlength=m.num_abstract)
        # b'(J, a): members' best-response actions weighted by their reach under b'.
        response_mass = np.bincount(
            m.infoset_offset[infosets] + actions[infosets],
            weights=reach_response[infosets], minlength=m.num_abstract_actions,
        )
        denominator = (1.0 - mixing) * abstract_reach_average + mixing * abstract_reach_response
        with np.errstate(invalid="ignore", divide="ignore"):
            coefficient = np.where(denominator > 0, mixing * abstract_reach_response / denominator,
                                   0.0)
            response = np.where(
                np.repeat(abstract_reach_response, m.abstract_num_actions) > 0,
                response_mass / np.repeat(np.maximum(abstract_reach_response, 1e-300),
                                          m.abstract_num_actions),
                0.0,
            )
        owned = np.repeat(m.abstract_player == player, m.abstract_num_actions)
        step = np.repeat(coefficient, m.abstract_num_actions)
        self.average = np.where(owned, self.average + step * (response - self.average),
                                self.average)
        self.best_responses[owned[m.abstract_action_of]] = pure[owned[m.abstract_action_of]]

    def average_strategy(self) -> Strategy:
        return Strategy(self.infoset_map, self.average.copy())

    def current_strategy(self) -> Strategy:
        """The last iteration's pure best responses, on the original (identity) infosets."""
        return Strategy.from_behavior(self.infoset_map.tree, self.best_responses.copy())
