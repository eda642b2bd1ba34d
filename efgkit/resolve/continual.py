"""Continual re-solving (Moravčík et al. 2017, DeepStack §3; Burch's thesis Ch. 6).

An agent for ``player`` keeps no strategy, only two things per public state: its own
*range* (the reach ``π_{-o}`` of chance and its own play at every history of the state)
and the opponent's *values* (one unnormalised counterfactual value per opponent augmented
infoset, an upper bound on what the opponent may get there). Before each of its own
decisions it re-solves the whole remaining game from the current public state with Burch's
re-solving gadget (the values as constraints; no depth limit or value network: the games
here are small) and plays the re-solved strategy's first decision. The update rules:

* **own action** ``a``: range ← range · σ(a | hand) (Bayes); values ← the opponent's values
  at the public state after ``a``, computed against the re-solved strategy;
* **chance**: range restricted to the outcome (chance reach); values ← the values at the
  state after the outcome from the last re-solve;
* **opponent action**: nothing changes (the opponent keeps the value of its best action,
  an upper bound for the action it took: DeepStack's rule (iii), Burch's Lemma 27).

The opponent's values after a re-solve are its counterfactual **best-response** values
against the re-solved strategy (``values="br"``: sound, Burch's CFR-D/continual
re-solving) or its counterfactual values under the gadget's average profile
(``values="selfplay"``: DeepStack's practice, footnote 24). Initially the range is the
chance reach (uniform) and the values are those of the ``blueprint`` (an equilibrium of a
root solve, or any strategy) at the first public state where anyone acts.

The agent's choice at a public state depends only on the public path, so running the
re-solver down every public path gives one behaviour strategy per player, the *combined
strategy*; ``ContinualResolver.run()`` assembles both players' and evaluates it exactly
with BestResponse. Each public state must root a subgame (closed under infosets), as in
Leduc and Kuhn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.resolve.constraints import BlueprintValues, RootConstraints
from efgkit.resolve.gadgets import resolve_gadget
from efgkit.resolve.resolver import SOLVERS
from efgkit.resolve.subgame import AugmentedInfosets, Subgame, subgame_at
from efgkit.solvers.best_response import BestResponse, Evaluation
from efgkit.solvers.sequence_form_lp import SequenceFormLP
from efgkit.solvers.strategy import Strategy

VALUE_KINDS = ("br", "selfplay")


@dataclass(frozen=True)
class PublicTree:
    """The public states of a GameTree as a tree. Per public state (int arrays): ``parent``
    (-1 for the root's), ``entered_by`` (who acts at the parent histories: 0, 1, CHANCE; -1
    at the root), ``actor`` (who acts at the state's histories; TERMINAL if none acts);
    ``order``: the states in topological order (by first history)."""

    parent: np.ndarray
    entered_by: np.ndarray
    actor: np.ndarray
    order: np.ndarray

    @classmethod
    def of(cls, tree: GameTree) -> PublicTree:
        state = tree.node_public_state.astype(np.int64)
        count = int(state.max()) + 1
        parent = np.full(count, -1, np.int64)
        entered_by = np.full(count, -1, np.int64)
        node_parent = tree.node_parent
        has_parent = node_parent >= 0
        children = np.flatnonzero(has_parent)
        up = node_parent[children]
        crossing = state[children] != state[up]
        parent[state[children[crossing]]] = state[up[crossing]]
        entered_by[state[children[crossing]]] = tree.node_kind[up[crossing]]
        actor = np.full(count, TERMINAL, np.int64)
        decision = tree.node_kind != TERMINAL
        actor[state[decision]] = tree.node_kind[decision]
        first = np.full(count, tree.num_nodes, np.int64)
        np.minimum.at(first, state, np.arange(tree.num_nodes))
        return cls(parent, entered_by, actor, np.argsort(first, kind="stable"))


@dataclass(frozen=True)
class ContinualResult:
    """The combined strategy of both continual re-solving agents, evaluated exactly."""

    strategy: Strategy
    evaluation: Evaluation
    resolves: int
    iterations: int
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"iterations": self.iterations, "resolves": self.resolves, "seconds": self.seconds,
                **self.evaluation.to_dict()}


class ContinualResolver:
    """Both players' continual re-solving agents on ``blueprint``'s game.

    ``blueprint``: gives the initial opponent values (and play at public states an agent
    never reaches); ``solver`` in SOLVERS and ``iterations`` per re-solve; ``values`` in
    VALUE_KINDS; ``progress(done, total)`` after each re-solve.
    """

    def __init__(self, blueprint: Strategy, *, solver: str = "cfr+", iterations: int = 1000,
                 values: str = "br", progress: Callable[[int, int], None] | None = None) -> None:
        if solver not in SOLVERS:
            raise ParameterError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
        if iterations < 1:
            raise ParameterError(f"iterations must be >= 1, got {iterations}")
        if values not in VALUE_KINDS:
            raise ParameterError(f"values must be one of {', '.join(VALUE_KINDS)}, got {values!r}")
        self.blueprint = blueprint
        self.tree = blueprint.tree
        self.solver = solver
        self.iterations = int(iterations)
        self.values = values
        self.progress = progress
        self.public = PublicTree.of(self.tree)
        decisions = np.flatnonzero(self.tree.node_kind < CHANCE)
        if decisions.size == 0:
            raise ParameterError(f"game {self.tree.spec!r} has no decisions to re-solve")
        self.start = int(self.tree.node_public_state[decisions[0]])
        self._subgames: dict[int, Subgame] = {}
        self._total = int(np.sum(self.public.actor[self._states_below_start()] < CHANCE))
        self._done = 0

    def run(self) -> ContinualResult:
        """Run both agents down every public path; evaluate the combined strategy."""
        began = time.perf_counter()
        self._done = 0
        behavior = self.blueprint.behavior().copy()
        owner = self.tree.infoset_player[self.tree.action_infoset]
        resolves = 0
        for player in (0, 1):
            own, count = self.agent_behavior(player)
            behavior[owner == player] = own[owner == player]
            resolves += count
        strategy = Strategy.from_behavior(self.tree, behavior)
        evaluation = BestResponse(strategy.infoset_map).evaluate(strategy)
        return ContinualResult(strategy, evaluation, resolves, self.iterations,
                               time.perf_counter() - began)

    def agent_behavior(self, player: int) -> tuple[np.ndarray, int]:
        """``player``'s combined behaviour (float64 per flat action; other entries are the
        blueprint's) and how many re-solves it took."""
        tree, public = self.tree, self.public
        opponent = 1 - player
        behavior = self.blueprint.behavior().copy()
        carried = _CarriedValues(tree)
        initial = BlueprintValues(self.blueprint)
        sources = self._sources(player)
        before_first = sources.get(self.start, []) if public.actor[self.start] != player else []
        for state in [self.start, *before_first]:
            carried.assign(self._constraints(initial, state, player))
        reach = initial.others_reach[opponent].copy()
        resolves = 0
        for state in self._states_below_start():
            if public.actor[state] != player:
                continue
            subgame = self._subgame(state)
            root_reach = reach[subgame.root_nodes]
            if root_reach.sum() <= 0:
                continue  # the agent never gets here; it keeps the blueprint's play
            solved = self._resolve(subgame, player, root_reach, *carried.at(subgame, opponent),
                                   behavior)
            resolves += 1
            self._done += 1
            if self.progress is not None:
                self.progress(self._done, self._total)
            at_state = tree.node_infoset[subgame.root_nodes]
            own = np.isin(tree.action_infoset, at_state)
            behavior[own] = solved.blueprint.behavior()[own]
            reach[subgame.nodes] = solved.others_reach[opponent][subgame.nodes]
            for source in sources.get(state, []):
                carried.assign(self._constraints(solved, source, player))
        return behavior, resolves

    def _states_below_start(self) -> np.ndarray:
        public = self.public
        below = np.zeros(public.parent.shape[0], dtype=bool)
        below[self.start] = True
        for state in public.order:
            if public.parent[state] >= 0 and below[public.parent[state]]:
                below[state] = True
        return public.order[below[public.order]]

    def _sources(self, player: int) -> dict[int, list[int]]:
        """The states whose values each of ``player``'s decision states sets (the start state
        for those before its first decision): the states right after its own action and
        those after a chance event, up to its next decision."""
        public = self.public
        anchor = {self.start: self.start}
        sources: dict[int, list[int]] = {}
        for state in self._states_below_start()[1:]:
            parent = int(public.parent[state])
            anchor[state] = parent if public.actor[parent] == player else anchor[parent]
            if public.actor[state] == TERMINAL:
                continue
            after_own = parent == anchor[state] and public.actor[parent] == player
            if after_own or public.entered_by[state] == CHANCE:
                sources.setdefault(anchor[state], []).append(int(state))
        return sources

    def _subgame(self, state: int) -> Subgame:
        if state not in self._subgames:
            self._subgames[state] = subgame_at(self.tree, state)
        return self._subgames[state]

    def _constraints(self, values: BlueprintValues, state: int, player: int) -> RootConstraints:
        kind = "br" if self.values == "br" else "selfplay"
        return values.constraints(self._subgame(state), player, kind)

    def _resolve(self, subgame: Subgame, player: int, root_reach: np.ndarray,
                 elements: AugmentedInfosets, values: np.ndarray, behavior: np.ndarray) -> BlueprintValues:
        """Re-solve ``subgame``; the returned BlueprintValues are of ``behavior`` with the
        re-solved play below the state (and, for self-play values, the gadget's opponent)."""
        opponent = 1 - player
        constraints = RootConstraints(subgame, player, elements, root_reach, values,
                                      np.ones(elements.num_elements), "continual")
        gadget = resolve_gadget(constraints)
        if self.solver == "lp":
            average = SequenceFormLP(gadget.tree).solve().strategy
        else:
            average = SOLVERS[self.solver](InfosetMap.identity(gadget.tree)).iterate(
                self.iterations).average_strategy()
        trial = behavior.copy()
        for who in (player, opponent) if self.values == "selfplay" else (player,):
            actions, probabilities = gadget.resolved_behavior(average, who)
            copied = actions >= 0
            trial[actions[copied]] = probabilities[copied]
        return BlueprintValues(Strategy.from_behavior(self.tree, trial))


class _CarriedValues:
    """The opponent's values as they flow down the public tree: each source state's roots get
    a label per element; a later history finds its value through its nearest labelled
    ancestor (opponent actions in between change nothing)."""

    def __init__(self, tree: GameTree) -> None:
        self.tree = tree
        self.label = np.full(tree.num_nodes, -1, np.int64)
        self.values: list[float] = []

    def assign(self, constraints: RootConstraints) -> None:
        roots = constraints.subgame.root_nodes
        first = len(self.values)
        self.values.extend(constraints.values.tolist())
        self.label[roots] = first + constraints.elements.element_of_root

    def at(self, subgame: Subgame, opponent: int) -> tuple[AugmentedInfosets, np.ndarray]:
        """The opponent's elements at ``subgame``'s roots and their carried values.

        Roots that inherit one earlier element stay one element even where the opponent
        never acts again below them (where ``Subgame.augmented_infosets`` would split them):
        only public actions happened since, so the opponent still cannot tell them apart,
        and the value bounds them together.
        """
        parent = self.tree.node_parent
        labels = np.empty(subgame.num_roots, np.int64)
        for i, node in enumerate(subgame.root_nodes):
            node = int(node)
            while self.label[node] < 0:
                node = int(parent[node])
            labels[i] = self.label[node]
        inherited, first, element_of_root = np.unique(labels, return_index=True, return_inverse=True)
        described = subgame.augmented_infosets(opponent)
        keys = tuple(described.keys[described.element_of_root[r]] for r in first)
        elements = AugmentedInfosets(opponent, element_of_root.astype(np.int32), keys)
        return elements, np.array([self.values[int(label)] for label in inherited])
