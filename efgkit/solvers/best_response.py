"""Best response and exploitability in the ORIGINAL game for a strategy on any InfosetMap.

An abstract strategy (even an imperfect-recall one) is a behaviour strategy of the
original perfect-recall game, so the best response is the ordinary one there
(Čermák et al. §1.3; DESIGN.md "Solvers"). The computation is sequence-form style and
needs no per-history memory beyond one reach array:

1. top-down: reach of every node due to chance and the opponent's strategy;
2. every terminal adds reach * utility to the responder's last own action before it;
3. the responder's infosets, longest own sequence first, take the best action value and
   pass it to their parent action.

NashConv = sum of both best-response values (the game is zero-sum); Čermák et al. plot
it as the "sum of exploitabilities". OpenSpiel's ``exploitability`` is NashConv / 2.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import StrategyError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import ProfileLayout


class BestResponse:
    """Best responses and exploitability for strategies on one InfosetMap.

    Construct once per abstraction and call ``evaluate`` as often as needed; the layout
    and buffers are reused, so an evaluation costs a few passes over the tree.
    """

    def __init__(self, infoset_map: InfosetMap) -> None:
        tree = infoset_map.tree
        self.infoset_map = infoset_map
        self.layout = ProfileLayout(infoset_map)
        parent_action = tree.infoset_parent_action  # raises unless perfect recall
        self._parent_action = parent_action
        self._order = []
        for player in (0, 1):
            infosets = tree.infosets_of(player)
            by_depth = np.argsort(-tree.infoset_sequence_length[infosets], kind="stable")
            self._order.append(np.ascontiguousarray(infosets[by_depth]))
        self._leaf = np.zeros(tree.num_infoset_actions + 1)
        self._child = np.zeros(tree.num_infoset_actions + 1)

    def _load(self, strategy: Strategy | np.ndarray) -> None:
        if isinstance(strategy, Strategy):
            if strategy.infoset_map is not self.infoset_map:
                self.infoset_map.check_tree(strategy.tree)
                if not np.array_equal(strategy.infoset_map.abstract_of, self.infoset_map.abstract_of):
                    raise StrategyError("the strategy is on a different abstraction")
            probabilities = strategy.probabilities
        else:
            probabilities = np.asarray(strategy, dtype=np.float64)
            if probabilities.shape != (self.infoset_map.num_abstract_actions,):
                raise StrategyError("probability array does not match the abstraction")
        self.layout.set_strategy(probabilities)

    def best_response(self, player: int, strategy: Strategy | np.ndarray) -> tuple[float, np.ndarray]:
        """Value of ``player``'s best response (in its own utility) and its action per infoset.

        The returned int32 array holds, for every original infoset of ``player``, the index
        of a best action (first maximum); other players' entries are -1.
        """
        self._load(strategy)
        return self._best_response_loaded(player)

    def _best_response_loaded(self, player: int) -> tuple[float, np.ndarray]:
        return self.best_response_to_weights(player, self.layout.others_reach(player))

    def best_response_to_weights(self, player: int, weights: np.ndarray) -> tuple[float, np.ndarray]:
        """Best response of ``player`` when terminal ``z`` is worth ``weights[z] * u(z)``.

        With ``weights`` = reach of chance and the opponent this is the ordinary best
        response; FPIRA's ComputeDelta (Čermák et al. Alg. 5) passes reach differences.
        """
        tree = self.infoset_map.tree
        reach = weights
        actions = np.full(tree.num_infosets, -1, dtype=np.int32)
        value = _best_response_kernel(
            player, reach, self.layout.terminal_nodes, tree.node_utility,
            tree.node_last_action[player], self._order[player], self._parent_action,
            tree.infoset_action_offset, tree.infoset_num_actions, self._leaf, self._child,
            actions,
        )
        return float(value), actions

    def action_values(self) -> np.ndarray:
        """float64 per original flat action: its counterfactual best-response value from the
        last best-response call (the responder's utility, terminals weighted as in that
        call; 0 for the other player's actions). Re-solving reads constraints from it."""
        return self._leaf[1:] + self._child[1:]

    def evaluate(self, strategy: Strategy | np.ndarray) -> Evaluation:
        """NashConv, NashConv/2, game value and both best-response values of a profile."""
        self._load(strategy)
        game_value = float(self.layout.expected_values()[0])
        br0, _ = self._best_response_loaded(0)
        br1, _ = self._best_response_loaded(1)
        return Evaluation.of((br0, br1), game_value)


def evaluate(strategy: Strategy) -> Evaluation:
    """Exact evaluation of ``strategy`` in its original game."""
    return BestResponse(strategy.infoset_map).evaluate(strategy)


def nash_conv(strategy: Strategy) -> float:
    """Sum of both players' best-response gains (what Čermák et al. plot)."""
    return evaluate(strategy).nash_conv


TIE_TOLERANCE = 1e-10


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _best_response_kernel(player, reach, terminal_nodes, utility, last_action, order,
                          parent_action, action_offset, num_actions, leaf, child, best_action):
    """Best-response value of ``player`` (own utility) by one bottom-up pass over its infosets.

    ``reach`` float64 (nodes,): terminal weights (chance and opponent reach); ``terminal_nodes``
    int32 (terminals,); ``utility`` float64 (nodes,), player 0's; ``last_action`` int32
    (nodes,): the player's last own flat action (-1: none); ``order`` int32: the player's
    infosets, deepest first; ``parent_action`` int32 (infosets,); ``action_offset`` int32
    (infosets + 1,); ``num_actions`` int32 (infosets,). ``leaf`` / ``child`` float64
    (flat actions + 1,), slot 0 the root: terminal and best-continuation value per action;
    writes ``best_action`` int32 (infosets,), the first best action of each infoset.
    """
    sign = 1.0 if player == 0 else -1.0
    for x in range(leaf.shape[0]):  # a loop, not leaf[:] = 0.0: numba's slice assignment is slow to compile
        leaf[x] = 0.0
        child[x] = 0.0
    for i in range(terminal_nodes.shape[0]):
        z = terminal_nodes[i]
        leaf[last_action[z] + 1] += reach[z] * sign * utility[z]
    for j in range(order.shape[0]):
        infoset = order[j]
        base = action_offset[infoset] + 1
        best = leaf[base] + child[base]
        for k in range(1, num_actions[infoset]):
            value = leaf[base + k] + child[base + k]
            if value > best:  # max(), without compiling numba's max for a first run
                best = value
        # Ties (up to rounding) go to the first action, so strategies with equal values
        # computed in different orders get the same best response.
        tolerance = TIE_TOLERANCE * (abs(best) if abs(best) > 1.0 else 1.0)
        arg = 0
        while leaf[base + arg] + child[base + arg] < best - tolerance:
            arg += 1
        best_action[infoset] = arg
        child[parent_action[infoset] + 1] += best
    return leaf[0] + child[0]
