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
strategy*. ``ContinualResolver`` is a Solver whose iterations are that walk, run by the core
run loop (checkpoints of its ``SolverState``, a bit-identical resume); any Solver solves the
gadgets and any Evaluator evaluates the combined strategy (engines.py). Each public state
must root a subgame (closed under infosets), as in Leduc and Kuhn.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.core.run_loop import run_iterations
from efgkit.core.solver_state import SolverState, StateFileCheckpoints
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.resolve.constraints import BlueprintValues, RootConstraints
from efgkit.resolve.engines import EvaluatorFactory, SolverFactory, check_factories
from efgkit.resolve.gadgets import resolve_gadget
from efgkit.resolve.subgame import AugmentedInfosets, Subgame, subgame_at
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.cfr import CFRPlusSolver
from efgkit.solvers.strategy import Strategy

VALUE_KINDS = ("br", "selfplay")


@dataclass(frozen=True)
class PublicStateTree:
    """The public states of a GameTree as a tree. Per public state (int arrays): ``parent``
    (-1 for the root's), ``entered_by`` (who acts at the parent histories: 0, 1, CHANCE; -1
    at the root), ``actor`` (who acts at the state's histories; TERMINAL if none acts);
    ``order``: the states in topological order (by first history)."""

    parent: np.ndarray
    entered_by: np.ndarray
    actor: np.ndarray
    order: np.ndarray

    @classmethod
    def of(cls, tree: GameTree) -> PublicStateTree:
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
    """The combined strategy of both continual re-solving agents and its evaluation."""

    strategy: Strategy
    evaluation: Evaluation
    resolves: int
    iterations: int
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"iterations": self.iterations, "resolves": self.resolves, "seconds": self.seconds,
                **self.evaluation.to_dict()}


class ContinualResolver:
    """Both players' continual re-solving agents on ``blueprint``'s game, as a Solver.

    ``blueprint``: gives the initial opponent values (and play at public states an agent
    never reaches); ``solver`` builds the Solver of each re-solve gadget, run for
    ``iterations``; ``values`` in VALUE_KINDS; ``evaluator`` builds the Evaluator of the
    combined strategy. One iteration walks one public state below the first decision
    (``states``) for one agent: agent 0 all, then agent 1 (``num_steps`` in all).
    """

    def __init__(self, blueprint: Strategy, *, solver: SolverFactory = CFRPlusSolver, iterations: int = 1000,
                 values: str = "br", evaluator: EvaluatorFactory = BestResponse) -> None:
        check_factories(solver, evaluator)
        if iterations < 1:
            raise ParameterError(f"iterations must be >= 1, got {iterations}")
        if values not in VALUE_KINDS:
            raise ParameterError(f"values must be one of {', '.join(VALUE_KINDS)}, got {values!r}")
        self.blueprint = blueprint
        self.tree = tree = blueprint.tree
        self.solver = solver
        self.evaluator = evaluator
        self.iterations = int(iterations)
        self.values = values
        self.public = PublicStateTree.of(tree)
        decisions = np.flatnonzero(tree.node_kind < CHANCE)
        if decisions.size == 0:
            raise ParameterError(f"game {tree.spec!r} has no decisions to re-solve")
        self.start = int(tree.node_public_state[decisions[0]])
        self.states = self._states_below_start()
        self.num_steps = 2 * self.states.shape[0]
        self.iteration = 0
        self._sources = (self._sources_of(0), self._sources_of(1))
        self._subgames: dict[int, Subgame] = {}
        self._owner = tree.infoset_player[tree.action_infoset]
        self._combined = blueprint.behavior().copy()
        self._behavior = self._combined.copy()
        self._reach = np.zeros(tree.num_nodes)
        self._carried = _CarriedValues(tree)
        self._resolves = np.zeros(2, np.int64)

    def run(self, state: str | os.PathLike | None = None, checkpoint_seconds: float = 60.0,
            progress: bool = False) -> ContinualResult:
        """Run both agents down every public path (``run_iterations``; a progress bar with
        ``progress``) and evaluate the combined strategy. With ``state`` (a path) the run
        checkpoints there after each agent and every ``checkpoint_seconds``; run again with
        the same ``state`` it continues from there and ends as an uninterrupted run would."""
        began = time.perf_counter()
        checkpoints = None if state is None else continual_checkpoints(state, self,
                                                                       seconds=checkpoint_seconds)
        if checkpoints is not None and Path(state).exists():
            checkpoints.resume(self)
        run_iterations(self, self.num_steps, checkpoints=checkpoints, progress=progress,
                       description="continual re-solving")
        strategy = self.average_strategy()
        evaluation = self.evaluator(strategy.infoset_map).evaluate(strategy)
        return ContinualResult(strategy, evaluation, int(self._resolves.sum()), self.iterations,
                               time.perf_counter() - began)

    def iterate(self, iterations: int = 1) -> ContinualResolver:
        """Walk ``iterations`` more public states (re-solving at the agent's decisions)."""
        if iterations < 0 or self.iteration + iterations > self.num_steps:
            raise ParameterError(f"{iterations} more steps for a run at {self.iteration} of {self.num_steps}")
        per_agent = self.states.shape[0]
        for _ in range(iterations):
            player, position = divmod(self.iteration, per_agent)
            if position == 0:
                self._start_agent(player)
            self._walk(player, int(self.states[position]))
            if position == per_agent - 1:
                mine = self._owner == player
                self._combined[mine] = self._behavior[mine]
            self.iteration += 1
        return self

    def average_strategy(self) -> Strategy:
        """The combined strategy so far: each agent's re-solved play at the states it has
        walked, the blueprint's elsewhere."""
        mine = self._owner == min(self.iteration // self.states.shape[0], 1)
        combined = self._combined.copy()
        combined[mine] = self._behavior[mine]
        return Strategy.from_behavior(self.tree, combined)

    def current_strategy(self) -> Strategy:
        """The combined strategy (a re-solving walk has no separate current iterate)."""
        return self.average_strategy()

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The walk: ``combined`` (float64 per flat action: finished agents' play, the
        blueprint's elsewhere), the agent in progress's ``behavior`` and opponent ``reach``
        (float64 per node), its carried values (``label`` int64 and ``carried`` float64 per
        node, ``_CarriedValues``) and ``resolves`` (int64 per agent)."""
        return {"combined": self._combined, "behavior": self._behavior, "reach": self._reach,
                "label": self._carried.label, "carried": self._carried.value, "resolves": self._resolves}

    def state(self) -> SolverState:
        return SolverState(self.state_arrays(), self.iteration)

    def load_state(self, state: SolverState) -> None:
        """Continue from a ``state()`` (checked: FileFormatError if it is another run's)."""
        if not 0 <= state.iteration <= self.num_steps:
            raise FileFormatError(f"the continual re-solving state is at step {state.iteration}; "
                                  f"this run has {self.num_steps}")
        state.copy_into(self.state_arrays())
        self.iteration = int(state.iteration)

    def _start_agent(self, player: int) -> None:
        """The agent's initial range (chance reach) and the blueprint's values at the start
        state (and the states before its first decision)."""
        initial = BlueprintValues(self.blueprint)
        self._behavior[:] = self.blueprint.behavior()
        self._reach[:] = initial.others_reach[1 - player]
        self._carried.label[:] = -1
        acts_first = self.public.actor[self.start] == player
        for state in [self.start, *([] if acts_first else self._sources[player].get(self.start, []))]:
            self._carried.assign(self._constraints(initial, state, player))

    def _walk(self, player: int, state: int) -> None:
        """At ``player``'s decision states it reaches: re-solve, play the re-solved decision,
        and carry the range and the opponent's values on."""
        if self.public.actor[state] != player:
            return
        tree, opponent = self.tree, 1 - player
        subgame = self._subgame(state)
        root_reach = self._reach[subgame.root_nodes]
        if root_reach.sum() <= 0:
            return  # the agent never gets here; it keeps the blueprint's play
        solved = self._resolve(subgame, player, root_reach, *self._carried.at(subgame, opponent))
        self._resolves[player] += 1
        own = np.isin(tree.action_infoset, tree.node_infoset[subgame.root_nodes])
        self._behavior[own] = solved.blueprint.behavior()[own]
        self._reach[subgame.nodes] = solved.others_reach[opponent][subgame.nodes]
        for source in self._sources[player].get(state, []):
            self._carried.assign(self._constraints(solved, source, player))

    def _states_below_start(self) -> np.ndarray:
        public = self.public
        below = np.zeros(public.parent.shape[0], dtype=bool)
        below[self.start] = True
        for state in public.order:
            if public.parent[state] >= 0 and below[public.parent[state]]:
                below[state] = True
        return public.order[below[public.order]]

    def _sources_of(self, player: int) -> dict[int, list[int]]:
        """The states whose values each of ``player``'s decision states sets (the start state
        for those before its first decision): the states right after its own action and
        those after a chance event, up to its next decision."""
        public = self.public
        anchor = {self.start: self.start}
        sources: dict[int, list[int]] = {}
        for state in self.states[1:]:
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
                 elements: AugmentedInfosets, values: np.ndarray) -> BlueprintValues:
        """Re-solve ``subgame``; the returned BlueprintValues are of the agent's behaviour with
        the re-solved play below the state (and, for self-play values, the gadget's opponent)."""
        opponent = 1 - player
        constraints = RootConstraints(subgame, player, elements, root_reach, values,
                                      np.ones(elements.num_elements), "continual")
        gadget = resolve_gadget(constraints)
        average = self.solver(gadget.tree).iterate(self.iterations).average_strategy()
        trial = self._behavior.copy()
        for who in (player, opponent) if self.values == "selfplay" else (player,):
            actions, probabilities = gadget.resolved_behavior(average, who)
            copied = actions >= 0
            trial[actions[copied]] = probabilities[copied]
        return BlueprintValues(Strategy.from_behavior(self.tree, trial))


class _CarriedValues:
    """The opponent's values as they flow down the public tree: each source state's roots get
    a label per element (numbered in the order assigned, -1: none) and its value; a later
    history finds both at its nearest labelled ancestor (opponent actions in between change
    nothing)."""

    def __init__(self, tree: GameTree) -> None:
        self.tree = tree
        self.label = np.full(tree.num_nodes, -1, np.int64)
        self.value = np.zeros(tree.num_nodes)

    def assign(self, constraints: RootConstraints) -> None:
        roots = constraints.subgame.root_nodes
        element_of_root = constraints.elements.element_of_root
        self.label[roots] = int(self.label.max()) + 1 + element_of_root
        self.value[roots] = constraints.values[element_of_root]

    def at(self, subgame: Subgame, opponent: int) -> tuple[AugmentedInfosets, np.ndarray]:
        """The opponent's elements at ``subgame``'s roots and their carried values.

        Roots that inherit one earlier element stay one element even where the opponent
        never acts again below them (where ``Subgame.augmented_infosets`` would split them):
        only public actions happened since, so the opponent still cannot tell them apart,
        and the value bounds them together.
        """
        parent = self.tree.node_parent
        labelled = np.empty(subgame.num_roots, np.int64)
        for i, node in enumerate(subgame.root_nodes):
            node = int(node)
            while self.label[node] < 0:
                node = int(parent[node])
            labelled[i] = node
        _, first, element_of_root = np.unique(self.label[labelled], return_index=True, return_inverse=True)
        described = subgame.augmented_infosets(opponent)
        keys = tuple(described.keys[described.element_of_root[r]] for r in first)
        elements = AugmentedInfosets(opponent, element_of_root.astype(np.int32), keys)
        return elements, self.value[labelled[first]]


def continual_checkpoints(path: str | os.PathLike, resolver: ContinualResolver, *,
                          seconds: float) -> StateFileCheckpoints:
    """A continual run's checkpoints at ``path``: after each agent and every ``seconds``."""
    solver = getattr(resolver.solver, "__qualname__", repr(resolver.solver))
    return StateFileCheckpoints(path, "efgkit-continual-state", "continual re-solving state",
                                {"solver": solver, "iterations": resolver.iterations,
                                 "values": resolver.values},
                                every=resolver.states.shape[0], seconds=seconds)
