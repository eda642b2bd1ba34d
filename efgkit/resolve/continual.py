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

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.checked_hdf5 import attribute, open_checked, read_dataset, seal, stamp, write_dataset
from efgkit.io.metadata import checked_fields
from efgkit.maps.infoset_map import InfosetMap
from efgkit.resolve.constraints import BlueprintValues, RootConstraints
from efgkit.resolve.gadgets import resolve_gadget
from efgkit.resolve.resolver import SOLVERS
from efgkit.resolve.subgame import AugmentedInfosets, Subgame, subgame_at
from efgkit.solvers.best_response import BestResponse
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

    def run(self, state: str | None = None, checkpoint_seconds: float = 60.0) -> ContinualResult:
        """Run both agents down every public path; evaluate the combined strategy.

        With ``state`` (a file path) the run checkpoints there after a re-solve once
        ``checkpoint_seconds`` have passed since the last checkpoint, and after each agent;
        a run started again with the same ``state`` continues from the last checkpoint and
        ends exactly as an uninterrupted run would.
        """
        began = time.perf_counter()
        settings = {"solver": self.solver, "iterations": self.iterations, "values": self.values}
        progress = load_progress(state, self.tree, settings) if state and Path(state).exists() else None
        self._done = 0 if progress is None else progress.done
        behavior = self.blueprint.behavior().copy()
        owner = self.tree.infoset_player[self.tree.action_infoset]
        finished: dict[int, np.ndarray] = {} if progress is None else dict(progress.finished)
        counts = [0, 0] if progress is None else list(progress.resolves)
        saver = None
        if state is not None:
            last = [time.monotonic()]

            def saver(current: ContinualProgress, force: bool = False) -> None:
                if force or time.monotonic() - last[0] >= checkpoint_seconds:
                    save_progress(state, self.tree, settings, current)
                    last[0] = time.monotonic()
        for player in (0, 1):
            if player not in finished:
                resume = progress if progress is not None and progress.player == player else None
                finished[player], counts[player] = self.agent_behavior(
                    player, resume=resume, checkpoint=saver, finished=finished, counts=counts)
            behavior[owner == player] = finished[player][owner == player]
        strategy = Strategy.from_behavior(self.tree, behavior)
        evaluation = BestResponse(strategy.infoset_map).evaluate(strategy)
        return ContinualResult(strategy, evaluation, sum(counts), self.iterations,
                               time.perf_counter() - began)

    def agent_behavior(self, player: int, *, resume: ContinualProgress | None = None, checkpoint=None,
                       finished: dict[int, np.ndarray] | None = None,
                       counts: list[int] | None = None) -> tuple[np.ndarray, int]:
        """``player``'s combined behaviour (float64 per flat action; other entries are the
        blueprint's) and how many re-solves it took. ``resume`` continues a checkpointed
        agent; ``checkpoint(progress, force)`` is called after each re-solve and at the end."""
        tree, public = self.tree, self.public
        opponent = 1 - player
        carried = _CarriedValues(tree)
        initial = BlueprintValues(self.blueprint)
        sources = self._sources(player)
        if resume is None:
            behavior = self.blueprint.behavior().copy()
            before_first = sources.get(self.start, []) if public.actor[self.start] != player else []
            for state in [self.start, *before_first]:
                carried.assign(self._constraints(initial, state, player))
            reach = initial.others_reach[opponent].copy()
            resolves, position = 0, 0
        else:
            behavior, reach = resume.behavior.copy(), resume.reach.copy()
            carried.label[:], carried.values = resume.label, resume.values.tolist()
            resolves, position = resume.resolves[player], resume.position
        states = self._states_below_start()

        def progress_at(index: int, final: bool = False) -> ContinualProgress:
            done = dict(finished or {})
            if final:
                done[player] = behavior
            total = list(counts or [0, 0])
            total[player] = resolves
            return ContinualProgress(player + 1 if final else player, index, total, self._done, done,
                                     behavior, reach, carried.label, np.array(carried.values))

        for index in range(position, states.shape[0]):
            state = states[index]
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
            if checkpoint is not None:
                checkpoint(progress_at(index + 1))
        if checkpoint is not None:
            checkpoint(progress_at(states.shape[0], final=True), True)
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


@dataclass
class ContinualProgress:
    """Where a continual re-solving run stands: the agent in progress (``player``; 2 when both
    are done), the next index into the public states, re-solves per agent, re-solves done,
    the finished agents' behaviours, and the current agent's behaviour, opponent reach and
    carried values (``label`` per node, ``values`` per label)."""

    player: int
    position: int
    resolves: list[int]
    done: int
    finished: dict[int, np.ndarray]
    behavior: np.ndarray
    reach: np.ndarray
    label: np.ndarray
    values: np.ndarray


PROGRESS_FORMAT = "efgkit-continual-progress"
PROGRESS_VERSION = 1
PROGRESS_NUMBERS = {"player": int, "position": int, "resolves": list, "done": int}
"""The progress counters a state file records, by type."""


def save_progress(path: str, tree: GameTree, settings: dict, progress: ContinualProgress) -> None:
    """Write ``progress`` to ``path`` (checked HDF5, atomically)."""
    with atomic_output_path(path) as temporary, h5py.File(temporary, "w") as handle:
        stamp(handle, PROGRESS_FORMAT, PROGRESS_VERSION)
        handle.attrs.update(game_spec=tree.spec, tree_fingerprint=tree.fingerprint,
                            settings=json.dumps(settings, sort_keys=True),
                            numbers=json.dumps({"player": progress.player, "position": progress.position,
                                                "resolves": progress.resolves, "done": progress.done}))
        for name in ("behavior", "reach", "label", "values"):
            write_dataset(handle, name, getattr(progress, name), compressed=False)
        for player, behavior in progress.finished.items():
            write_dataset(handle, f"finished_{player}", behavior, compressed=False)
        seal(handle)


def load_progress(path: str, tree: GameTree, settings: dict) -> ContinualProgress:
    """The progress saved at ``path``, checked against the game and the run's settings."""
    with open_checked(path, PROGRESS_FORMAT, PROGRESS_VERSION, "continual re-solving state") as handle:
        attrs = handle.attrs
        if (str(attrs["game_spec"]), str(attrs["tree_fingerprint"])) != (tree.spec, tree.fingerprint):
            raise FileFormatError(f"{path}: the re-solving state is for another game")
        if json.loads(str(attrs["settings"])) != json.loads(json.dumps(settings, sort_keys=True)):
            raise FileFormatError(f"{path}: the re-solving state was made with {str(attrs['settings'])}")
        numbers = checked_fields(attribute(handle, "numbers", dict, json_text=True), PROGRESS_NUMBERS,
                                 f"{path}: /@numbers", required=tuple(PROGRESS_NUMBERS))
        arrays = {name: read_dataset(handle, name) for name in ("behavior", "reach", "label", "values")}
        finished = {player: read_dataset(handle, f"finished_{player}") for player in (0, 1)
                    if f"finished_{player}" in handle}
    expected = {"behavior": (tree.num_infoset_actions,), "reach": (tree.num_nodes,),
                "label": (tree.num_nodes,)}
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise FileFormatError(f"{path}: /{name} has shape {arrays[name].shape}, expected {shape}")
    if np.any(arrays["label"] >= arrays["values"].shape[0]) or not np.all(np.isfinite(arrays["values"])):
        raise FileFormatError(f"{path}: the carried values are damaged")
    return ContinualProgress(int(numbers["player"]), int(numbers["position"]), list(numbers["resolves"]),
                             int(numbers["done"]), finished, arrays["behavior"], arrays["reach"],
                             arrays["label"].astype(np.int64), arrays["values"])
