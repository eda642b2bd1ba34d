"""FPIRA: fictitious play with imperfect-recall abstraction refinement (Čermák, Lisý &
Bošanský, "Automated construction of bounded-loss imperfect-recall abstractions", §4.2,
Algorithms 1-5).

Fictitious play whose average behaviour strategies live on an abstraction. Each player
update (players alternate; one iteration = player 0 then player 1):

1. a pure best response in the ORIGINAL game to the opponent's average (Alg. 2);
2. RefineForBR (Alg. 3, Case 1): an abstract set whose best-response-reachable members
   are prescribed different actions is split by action (unreachable members together);
3. b-hat = Lemma 1 in the abstraction (an abstract set's reach = the sum of its members'),
   b-tilde = Lemma 1 per original infoset, with weight 1/(t_i + 1);
4. ComputeDelta (Alg. 5): the largest change of any opponent pure strategy's value
   between b-tilde and b-hat, by two best-response passes on reach differences;
5. if Delta > ``delta_tolerance``, Refine (Alg. 4, Case 2) detaches every reachable member
   of the touched abstract sets and the average becomes b-tilde; else it becomes b-hat.

New sets inherit the pre-update average. ``conventions="reference"`` (the default: smaller
abstractions and NashConv 0.05 reached sooner on every game measured, docs/results-ira.md)
follows the authors' code (GTLibrary) where the paper's text leaves a choice open or says
otherwise; ``conventions="paper"`` is the text as above:

* best responses value an infoset the opponent never reaches from the opponent's strategy
  below it (``FPIRABestResponse``) instead of giving every action 0 and taking the first:
  ties are broken against an opponent trembling toward uniform (``solvers/trembling``);
* Delta is one-sided (``FPIRA.aboveDelta`` with ``CHECK_BOTH_SIDES = false``): only how
  much more an opponent pure strategy gains against b-hat than against b-tilde,
  max(u(b-hat) - u(b-tilde)), not the absolute difference of the paper's Alg. 5;
* an update walks only the histories the opponent's average reaches
  (``FPIRA.updateISStructure`` skips opponent actions of probability <= 1e-8) and adds
  each history's own reach: an infoset no reached history leads to is neither split nor
  mixed, and in Lemma 1 a member weighs its own reach times the number of its reached
  histories.

Theorem 1: with the same initial pure strategy and tie-breaking, FPIRA's exploitability
equals fictitious play's in the original game at every iteration. It holds for "paper"
(tested against ``FictitiousPlay(alternating=True)``), not for "reference", whose updates
skip the infosets the opponent's average never reaches.
"""

from __future__ import annotations

import numpy as np

from efgkit.abstraction.refinement import RefinementRecord, RefinementState, run_refinement
from efgkit.core.evaluation import Evaluation
from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.tree import GameTree
from efgkit.io.metadata import checked_fields
from efgkit.maps.infoset_map import InfosetMap
from efgkit.maps.refinable_map import RefinableMap
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.fictitious_play import mix_realization_weighted, own_reach, pure_response
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import infoset_view
from efgkit.solvers.trembling import trembling_best_response

CONVENTIONS = ("paper", "reference")
DEFAULT_CONVENTIONS = "reference"


class FPIRA:
    """Fictitious play on a refined imperfect-recall abstraction (alternating updates)."""

    def __init__(self, tree: GameTree, *, initial: InfosetMap | None = None,
                 delta_tolerance: float = 1e-8,
                 conventions: str = DEFAULT_CONVENTIONS) -> None:
        if conventions not in CONVENTIONS:
            raise ParameterError(f"conventions must be one of {', '.join(CONVENTIONS)}, got {conventions!r}")
        self.conventions = conventions
        initial = initial or InfosetMap.coarsest(tree)
        initial.check_tree(tree)
        self.tree = tree
        self.delta_tolerance = float(delta_tolerance)
        self.map = RefinableMap(initial)
        self.average = np.zeros(self.map.capacity_actions)
        self.average[self.map.abstract_action_offset[: self.map.num_abstract]] = 1.0  # pure
        self._responder = BestResponse(InfosetMap.identity(tree))
        self._position = (np.arange(tree.num_infoset_actions)
                          - tree.infoset_action_offset[tree.action_infoset]).astype(np.int64)
        self._player_infosets = [tree.infosets_of(p) for p in (0, 1)]
        self._player_nodes = [np.flatnonzero(tree.node_kind == p) for p in (0, 1)]
        self._updates = [0, 0]
        self.iteration = 0
        self.last_delta = (0.0, 0.0)
        self.splits = {"best_response": 0, "delta": 0}

    # ------------------------------------------------------------------ public
    def iterate(self, iterations: int = 1) -> FPIRA:
        if iterations < 0:
            raise ParameterError(f"iterations must be >= 0, got {iterations}")
        for _ in range(iterations):
            deltas = [self._update(player) for player in (0, 1)]
            self.last_delta = (deltas[0], deltas[1])
            self.iteration += 1
        return self

    def behavior(self, average: np.ndarray | None = None) -> np.ndarray:
        """The average (or the given abstract array) as one probability per original action."""
        source = self.average if average is None else average
        return source[self.map.infoset_offset[self.tree.action_infoset] + self._position]

    def average_strategy(self) -> Strategy:
        frozen, index = self.map.snapshot()
        return Strategy(frozen, self.average[index])

    def evaluate(self) -> Evaluation:
        return self._responder.evaluate(self.behavior())

    def memory(self) -> dict[str, int]:
        """The paper's accounting: one float per abstract action (the average) plus map entries."""
        return self.map.memory(arrays_per_action=1)

    def refine(self, target: float, *, max_iterations: int, every: int = 10,
               callback=None) -> list[RefinementRecord]:
        return run_refinement(self, target, max_iterations=max_iterations, every=every,
                              callback=callback)

    def state(self) -> RefinementState:
        """The map, the average and the counters (a checkpoint; FPIRA draws no random numbers)."""
        arrays = {f"map/{name}": array for name, array in self.map.state_arrays().items()}
        arrays["average"] = self.average.copy()
        numbers = {"iteration": self.iteration, "updates_0": self._updates[0], "updates_1": self._updates[1],
                   "last_delta_0": self.last_delta[0], "last_delta_1": self.last_delta[1],
                   "splits_best_response": self.splits["best_response"], "splits_delta": self.splits["delta"]}
        return RefinementState(arrays, numbers)

    def restore(self, state: RefinementState) -> None:
        """Continue from ``state`` (taken by ``state()`` on the same game)."""
        arrays, numbers = state.arrays, state.numbers
        self.map = RefinableMap.restored(self.tree, {name[4:]: array for name, array in arrays.items()
                                                     if name.startswith("map/")})
        average = np.asarray(arrays["average"], np.float64)
        if average.shape != (self.map.capacity_actions,) or not np.all(np.isfinite(average)):
            raise ParameterError("the refinement state's average does not fit this game")
        self.average = average.copy()
        checked_fields(numbers, {}, "the refinement state's counters",
                       required=("iteration", "updates_0", "updates_1", "last_delta_0", "last_delta_1",
                                 "splits_best_response", "splits_delta"))
        self.iteration = int(numbers["iteration"])
        self._updates = [int(numbers["updates_0"]), int(numbers["updates_1"])]
        self.last_delta = (float(numbers["last_delta_0"]), float(numbers["last_delta_1"]))
        self.splits = {"best_response": int(numbers["splits_best_response"]),
                       "delta": int(numbers["splits_delta"])}

    # ---------------------------------------------------------------- one update
    def _update(self, player: int) -> float:
        tree, m = self.tree, self.map
        infosets = self._player_infosets[player]
        offsets = tree.infoset_action_offset
        if self.conventions == "reference":
            _, actions = trembling_best_response(self._responder, player, self.behavior())
        else:
            _, actions = self._responder.best_response(player, self.behavior())
        _, reach_response = pure_response(tree, infosets, actions)
        histories = self._reached_histories(player) if self.conventions == "reference" else 1.0
        reach_response = reach_response * histories
        reachable = infosets[reach_response[infosets] > 0]

        self._refine_for_best_response(reachable, actions, reach_response)

        # Lemma 1 twice: in the abstraction (b-hat) and per original infoset (b-tilde, on the
        # responder's identity map), with the same own reaches.
        mixing = 1.0 / (self._updates[player] + 2)
        reach_average = own_reach(infoset_view(tree, m), infosets, self.average) * histories
        hat = mix_realization_weighted(self.average, m, player, infosets, actions,
                                       reach_average, reach_response, mixing)
        tilde = mix_realization_weighted(self.behavior(), self._responder.infoset_map, player, infosets,
                                         actions, reach_average, reach_response, mixing)

        delta = self._delta(player, tilde, self.behavior(hat))
        if delta > self.delta_tolerance:
            self._refine_for_delta(reachable, reach_response)
            # Every reachable member now has its own abstract set: it takes its b-tilde.
            counts = offsets[reachable + 1] - offsets[reachable]
            within = positions_within(counts)
            self.average[np.repeat(m.infoset_offset[reachable], counts) + within] = (
                tilde[np.repeat(offsets[reachable], counts) + within])
        else:
            self.average = hat
        self._updates[player] += 1
        return delta

    def _reached_histories(self, player: int) -> np.ndarray:
        """float64 per original infoset: how many of its histories chance and the opponent's
        average (the strategy the best response was just computed against) reach."""
        nodes = self._player_nodes[player]
        reach = self._responder.layout.others_reach(player)[nodes]
        return np.bincount(self.tree.node_infoset[nodes][reach > 0],
                           minlength=self.tree.num_infosets).astype(np.float64)

    def _delta(self, player: int, tilde: np.ndarray, hat: np.ndarray) -> float:
        """Alg. 5: max over opponent pure strategies of |u(b-tilde) - u(b-hat)| (the
        opponent's utility); "reference": of u(b-hat) - u(b-tilde) only."""
        layout = self._responder.layout
        opponent = 1 - player
        layout.set_strategy(tilde)
        reach_tilde = layout.others_reach(opponent).copy()
        layout.set_strategy(hat)
        difference = reach_tilde - layout.others_reach(opponent)
        loss, _ = self._responder.best_response_to_weights(opponent, -difference)
        if self.conventions == "reference":
            return loss
        gain, _ = self._responder.best_response_to_weights(opponent, difference)
        return max(gain, loss)

    # -------------------------------------------------------------- refinements
    def _split_inheriting(self, abstract: int, groups: list[np.ndarray]) -> int:
        """Split keeping group 0 under the old id; new sets copy the pre-update average."""
        m = self.map
        lo, hi = m.abstract_action_offset[abstract], m.abstract_action_offset[abstract + 1]
        new_ids = m.split(abstract, groups, keep=0)[1:]
        for new in new_ids:
            start = m.abstract_action_offset[new]
            self.average[start:start + hi - lo] = self.average[lo:hi]
        return len(new_ids)

    def _touched_abstracted_sets(self, reachable: np.ndarray) -> list[int]:
        sets = np.unique(self.map.abstract_of[reachable])
        return [int(a) for a in sets if self.map.abstract_size[a] > 1]

    def _refine_for_best_response(self, reachable, actions, reach_response) -> None:
        """Alg. 3: split sets whose reachable members get different best-response actions."""
        for a in self._touched_abstracted_sets(reachable):
            members = self.map.members(a)
            reached = members[reach_response[members] > 0]
            prescribed = actions[reached]
            distinct = np.unique(prescribed)
            if distinct.size < 2:
                continue
            groups = [reached[prescribed == action] for action in distinct]
            unreached = members[reach_response[members] == 0]
            if unreached.size:
                groups.append(unreached)
            self.splits["best_response"] += self._split_inheriting(a, groups)

    def _refine_for_delta(self, reachable, reach_response) -> None:
        """Alg. 4: detach every best-response-reachable member of the touched sets."""
        for a in self._touched_abstracted_sets(reachable):
            members = self.map.members(a)
            reached = members[reach_response[members] > 0]
            unreached = members[reach_response[members] == 0]
            singles = [reached[k:k + 1] for k in range(reached.size)]
            groups = [unreached, *singles] if unreached.size else singles
            self.splits["delta"] += self._split_inheriting(a, groups)
