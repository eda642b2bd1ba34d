"""CFR-D: solving a game by decomposition, storing only the trunk and the subgame root values
(Burch, Johanson & Bowling 2014; Burch's thesis §5.3, Algorithm 6).

The game is cut before the public chance event of round ``round_number``
(``round_subgames``): the subgames are the public states right after it, the *trunk* is
everything above them. Each trunk iteration:

1. the trunk's current strategy comes from its regrets (regret matching);
2. every subgame is solved afresh with the trunk's reach at its roots (Algorithm 6's
   ``MakeSubgameGame``: a chance node over the roots in proportion to π^σ(r), the
   ``extract_subgame`` tree) by ``subgame_iterations`` iterations of a CFR-family solver,
   whose state is dropped afterwards;
3. each player ``p`` takes a counterfactual best response inside the subgames against the
   solution (the bottom-up best response maximises counterfactual value at every infoset,
   unreached ones included: the thesis's CBR), and the value of each root history under
   (CBR_p, σ_S,-p) is the trunk's leaf value there;
4. the trunk's regrets are updated by the ordinary CFR kernels of ``solvers/cfr.py`` run
   over the trunk's nodes only, and the root values ``v_p(I)`` (counterfactual,
   unnormalised, per augmented infoset ``I`` of ``p``) enter their running average.

``variant="cfr"`` is the paper's algorithm: regret matching, simultaneous updates (both
players' values from one subgame solve), uniform average. ``variant="cfr+"``: regret-
matching+, alternating updates (the subgames are solved again after player 0's update, so
player 1 responds to player 0's new trunk strategy) and linear averaging; the root values
are averaged with the trunk average's weights. The thesis reports O(1/√T) for either
(§5.2.3).

Stored between iterations (``state_arrays``): the trunk's regrets and average accumulator
and the running sums of the root values, both players (Burch §5.3: what re-solving needs to
act as either player). Nothing of a subgame survives an iteration. ``resolve`` recovers a
complete strategy: every subgame re-solved for each player with Burch's gadget (or
maxmargin), the opponent's averaged root values as constraints and the trunk average's
reach as the gadget's chance weights, spliced under the trunk average.

``track_average`` also keeps, for checking Theorem 17 only, the sequence-form average of
the subgame solutions (the profile CFR-D's regret bound speaks of, never stored by CFR-D
itself) and the largest subgame-root regret ε_S met (``RegretBound``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from efgkit.core.regret_rules import VariantSolver, average_weight
from efgkit.core.run_loop import RunEnd, run_iterations
from efgkit.core.solver_state import StateFileCheckpoints
from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.resolve.constraints import RootConstraints
from efgkit.resolve.gadgets import Gadget, extract_subgame, maxmargin_gadget, resolve_gadget
from efgkit.resolve.splice import splice
from efgkit.resolve.subgame import Subgame, round_subgames
from efgkit.solvers.best_response import BestResponse, nash_conv
from efgkit.solvers.cfr import (
    SOLVER_CLASSES,
    CFRBuffers,
    RegretState,
    match_player,
    no_samples,
    update_player,
)
from efgkit.solvers.strategy import Strategy, normalize_per_infoset
from efgkit.solvers.traversal import infoset_view, node_passes, others_reach, own_infoset_reach

VARIANTS = ("cfr", "cfr+")
RESOLVE_GADGETS = ("resolve", "maxmargin")


@dataclass(frozen=True)
class StoredBytes:
    """What a solve keeps between iterations, in bytes (float64 entries): CFR-D's trunk
    regrets and average plus both players' root values, against plain CFR's regrets and
    average over every infoset-action of the game."""

    trunk: int
    root_values: int
    full_strategy: int

    @property
    def cfr_d(self) -> int:
        return self.trunk + self.root_values

    def to_dict(self) -> dict[str, int]:
        return {
            "trunk_bytes": self.trunk,
            "root_value_bytes": self.root_values,
            "cfr_d_bytes": self.cfr_d,
            "full_solver_bytes": self.full_strategy,
        }


@dataclass(frozen=True)
class RegretBound:
    """Theorem 17 (Burch's thesis, App. B.1) at ``iterations`` T: player p's regret is at
    most Δ|𝓘_TR,p|√(A T) + N_S T ε_S, so the average profile's NashConv is at most
    Σ_p (Δ|𝓘_TR,p|√(A/T) + N_S ε_S). ``delta``: the range of leaf utilities;
    ``trunk_infosets`` per player; ``actions`` A; ``root_infosets`` N_S (most augmented
    infosets at one subgame root); ``subgame_regret`` ε_S (the largest subgame-root regret
    max_σ' v_p(I) - v_p^{σ_S}(I) over every iteration, subgame, player and root infoset)."""

    iterations: int
    delta: float
    trunk_infosets: tuple[int, int]
    actions: int
    root_infosets: int
    subgame_regret: float

    @property
    def nash_conv(self) -> float:
        t = self.iterations
        return sum(
            self.delta * n * float(np.sqrt(self.actions / t)) + self.root_infosets * self.subgame_regret
            for n in self.trunk_infosets
        )


class CFRD(VariantSolver):
    """CFR-D on a GameTree cut before round ``round_number`` (module docstring).

    ``subgame_solver``: the name of the CFR-family solver (``SOLVER_CLASSES``) that solves
    each subgame for ``subgame_iterations`` iterations every trunk iteration.
    """

    def __init__(
        self,
        tree: GameTree,
        *,
        round_number: int = 2,
        variant: str = "cfr+",
        subgame_iterations: int = 100,
        subgame_solver: str = "cfr+",
        track_average: bool = False,
    ) -> None:
        if variant not in VARIANTS:
            raise ParameterError(
                f"CFR-D's trunk variant must be one of {', '.join(VARIANTS)}, got {variant!r}"
            )
        if subgame_solver not in SOLVER_CLASSES:
            raise ParameterError(
                f"subgame solver must be one of {', '.join(SOLVER_CLASSES)}, got {subgame_solver!r}"
            )
        if subgame_iterations < 1:
            raise ParameterError(f"subgame iterations must be >= 1, got {subgame_iterations}")
        self._configure(variant, {}, alternating=variant == "cfr+")
        self.alternating = variant == "cfr+"
        self.tree = tree
        self.round_number = int(round_number)
        self.subgame_iterations = int(subgame_iterations)
        self.subgame_solver = subgame_solver
        self.track_average = track_average
        self.subgames = round_subgames(tree, self.round_number)
        self.iteration = 0
        self._identity = InfosetMap.identity(tree)
        self._response = BestResponse(self._identity)  # the full-tree working layout
        self._trunk = _Trunk(tree, self.subgames)
        trunk = self._trunk
        size = trunk.num_actions
        self.regrets = np.zeros(size)
        self.average_accumulator = np.zeros(size)
        self._state = RegretState(self.regrets, self.average_accumulator, np.zeros(size), np.zeros(0))
        self._work = CFRBuffers(
            trunk.edge_prob, tree.node_utility.copy(), np.zeros(tree.num_nodes), np.zeros(tree.num_infosets)
        )
        self._roots = _RootValues(self.subgames)
        self.root_value_sums = np.zeros(self._roots.size)
        self.root_weight = np.zeros(1)
        self._behavior = Strategy.uniform(self._identity).behavior().copy()
        self._gadgets = [
            extract_subgame(s, np.ones(s.num_roots), kind="cfr-d subgame") for s in self.subgames
        ]
        self._subgame_actions = np.flatnonzero(~trunk.is_trunk_action)
        self._player_of_action = tree.infoset_player[tree.action_infoset]
        if track_average:
            self.subgame_average = np.zeros(tree.num_infoset_actions)
            self.subgame_regret = np.zeros(1)
        self._rematch()

    # ------------------------------------------------------------------ the solver protocol
    def state_arrays(self) -> dict[str, np.ndarray]:
        """Trunk ``regrets`` and ``average_accumulator`` (float64 per trunk action), the
        weighted sums of the root values ``root_value_sums`` (float64 per subgame, player and
        augmented infoset) and their total weight ``root_weight``; with ``track_average``
        the subgame solutions' average accumulator and the largest subgame regret too."""
        arrays = {
            "regrets": self.regrets,
            "average_accumulator": self.average_accumulator,
            "root_value_sums": self.root_value_sums,
            "root_weight": self.root_weight,
        }
        if self.track_average:
            arrays.update(subgame_average=self.subgame_average, subgame_regret=self.subgame_regret)
        return arrays

    def _match(self, player: int) -> None:
        match_player(
            self._settings,
            self.iteration,
            self._trunk.rows[player],
            self._trunk.view.action_offset,
            self._state,
            self._trunk.edge_prob,
        )

    def iterate(self, iterations: int = 1) -> CFRD:
        """Run ``iterations`` trunk iterations (each solving every subgame once per update)."""
        if iterations < 0:
            raise ParameterError(f"iterations must be >= 0, got {iterations}")
        for _ in range(iterations):
            t = self.iteration + 1
            weight = average_weight(self._settings.variant, t, self.delay, self.gamma, self.horizon)
            if not self.alternating:
                self._solve_subgames()
            for player in (0, 1):
                if self.alternating:
                    self._solve_subgames()
                self._root_values(player, weight)
                update_player(
                    t,
                    player,
                    self._settings,
                    self._trunk.passes,
                    self._trunk.view,
                    self._trunk.infosets[player],
                    self._trunk.rows[player],
                    self._state,
                    self._work,
                    no_samples(),
                )
                if self.alternating:
                    self._match(player)
            if not self.alternating:
                self._rematch()
            self.root_weight[0] += weight
            self.iteration = t
        return self

    def current_strategy(self) -> Strategy:
        """The trunk's current strategy (uniform in the subgames)."""
        return self._trunk_strategy(self._trunk.edge_prob[: self._trunk.num_actions])

    def average_strategy(self) -> Strategy:
        """The trunk's average strategy, uniform in the subgames (``resolve`` fills them)."""
        rows = normalize_per_infoset(self.average_accumulator, self._trunk.view.action_offset)
        return self._trunk_strategy(rows)

    # ------------------------------------------------------------------ results
    def root_values(self, subgame: int, player: int) -> np.ndarray:
        """``player``'s averaged counterfactual values at subgame ``subgame``'s root, one per
        augmented infoset (``Subgame.augmented_infosets(player)``), unnormalised."""
        weight = self.root_weight[0]
        values = self.root_value_sums[self._roots.slice(subgame, player)]
        return values / weight if weight > 0 else np.zeros_like(values)

    def stored_bytes(self) -> StoredBytes:
        """Bytes CFR-D keeps (trunk and root values) against a CFR solve of the whole game."""
        itemsize = self.regrets.itemsize
        return StoredBytes(
            2 * self.regrets.size * itemsize,
            self.root_value_sums.size * itemsize,
            2 * self.tree.num_infoset_actions * itemsize,
        )

    def resolve(
        self,
        iterations: int = 1000,
        *,
        gadget: str = "resolve",
        solver: str = "cfr+",
        progress: Callable[[int, int], None] | None = None,
    ) -> Strategy:
        """A complete strategy: the trunk average, and every subgame re-solved for each player
        with ``gadget`` (``RESOLVE_GADGETS``), the opponent's averaged root values as the
        constraints, ``iterations`` of ``solver`` per gadget; ``progress(done, total)`` after
        each subgame."""
        if gadget not in RESOLVE_GADGETS:
            raise ParameterError(
                f"the re-solving gadget must be one of {', '.join(RESOLVE_GADGETS)}, got {gadget!r}"
            )
        if solver not in SOLVER_CLASSES:
            raise ParameterError(
                f"re-solving solver must be one of {', '.join(SOLVER_CLASSES)}, got {solver!r}"
            )
        trunk = self.average_strategy()
        layout = self._response.layout
        layout.set_strategy(trunk.behavior())
        reach = [layout.others_reach(opponent).copy() for opponent in (0, 1)]
        parts = []
        for index, subgame in enumerate(self.subgames):
            for player in (0, 1):
                constraints = self.constraints(index, player, reach[1 - player][subgame.root_nodes])
                if constraints.total_reach <= 0:
                    continue  # the player's trunk never leads here: its play cannot matter
                built = (resolve_gadget if gadget == "resolve" else maxmargin_gadget)(constraints)
                average = SOLVER_CLASSES[solver](built.tree).iterate(iterations).average_strategy()
                parts.append(built.resolved_behavior(average))
            if progress is not None:
                progress(index + 1, len(self.subgames))
        return splice(trunk, parts)

    def constraints(self, subgame: int, player: int, root_reach: np.ndarray) -> RootConstraints:
        """Re-solving constraints for ``player`` in subgame ``subgame``: the opponent's
        averaged root values, with ``root_reach`` π_{-o}(r) (chance and the trunk average)."""
        opponent = 1 - player
        elements = self._roots.elements[subgame][opponent]
        return RootConstraints(
            self.subgames[subgame],
            player,
            elements,
            np.asarray(root_reach, np.float64),
            self.root_values(subgame, opponent),
            np.ones(elements.num_elements),
            "cfr-d",
        )

    def implicit_average(self) -> Strategy:
        """The profile Theorem 17 bounds (``track_average`` only): the trunk average with the
        subgame solutions' sequence-form average below it."""
        if not self.track_average:
            raise ParameterError("the subgame solutions' average is kept only with track_average=True")
        behavior = self.average_strategy().behavior().copy()
        subgame = self._subgame_actions
        average = normalize_per_infoset(self.subgame_average, self.tree.infoset_action_offset)
        behavior[subgame] = average[subgame]
        return Strategy.from_behavior(self.tree, behavior)

    def regret_bound(self) -> RegretBound:
        """Theorem 17's NashConv bound after the iterations so far (``track_average`` only)."""
        if not self.track_average:
            raise ParameterError("ε_S is measured only with track_average=True")
        tree = self.tree
        utility = tree.node_utility[tree.node_kind == TERMINAL]
        counts = tuple(int(rows.size) for rows in self._trunk.rows)
        elements = max(e.num_elements for pair in self._roots.elements for e in pair)
        return RegretBound(
            self.iteration,
            float(utility.max() - utility.min()),
            counts,
            int(tree.infoset_num_actions.max()),
            elements,
            float(self.subgame_regret[0]),
        )

    # ------------------------------------------------------------------ one iteration's parts
    def _trunk_strategy(self, rows: np.ndarray) -> Strategy:
        behavior = Strategy.uniform(self._identity).behavior().copy()
        behavior[self._trunk.flat_actions] = rows
        return Strategy.from_behavior(self.tree, behavior)

    def _solve_subgames(self) -> None:
        """Every subgame solved afresh under the trunk's current strategy (into ``_behavior``)."""
        trunk, work = self._trunk, self._work
        self._behavior[trunk.flat_actions] = trunk.edge_prob[: trunk.num_actions]
        others_reach(trunk.passes, trunk.edge_prob, -1, work.reach)
        solver_class = SOLVER_CLASSES[self.subgame_solver]
        for subgame, gadget in zip(self.subgames, self._gadgets, strict=True):
            weights = work.reach[subgame.root_nodes]
            total = weights.sum()
            if total <= 0:
                continue  # nobody reaches it: its play changes no counterfactual value
            solver = solver_class(gadget.tree)
            layout = solver.layout
            layout.edge_prob[layout.num_strategy_entries + _root_copies(gadget)] = weights / total
            average = solver.iterate(self.subgame_iterations).average_strategy()
            for player in (0, 1):
                actions, probabilities = gadget.resolved_behavior(average, player)
                self._behavior[actions] = probabilities

    def _root_values(self, player: int, weight: float) -> None:
        """``player``'s values under (its counterfactual best response, the subgame solution)
        at every subgame root, into the trunk's leaves and the running root-value sums."""
        tree, response = self.tree, self._response
        layout = response.layout
        layout.set_strategy(self._behavior)
        others = layout.others_reach(player).copy()
        if self.track_average:
            solution_values = layout.expected_values().copy()
            self._accumulate_subgame_average(player, weight)
        _, best = response.best_response_to_weights(player, others)
        responded = self._behavior.copy()
        mine = self._subgame_actions[self._player_of_action[self._subgame_actions] == player]
        responded[mine] = 0.0
        infosets = np.unique(tree.action_infoset[mine])
        responded[tree.infoset_action_offset[infosets] + best[infosets]] = 1.0
        layout.set_strategy(responded)
        values = layout.expected_values()
        sign = 1.0 if player == 0 else -1.0
        roots = self._roots.all_roots
        self._work.values[roots] = values[roots]
        for index, subgame in enumerate(self.subgames):
            element = self._roots.elements[index][player].element_of_root
            nodes = subgame.root_nodes
            counterfactual = np.bincount(
                element, weights=sign * others[nodes] * values[nodes], minlength=int(element.max()) + 1
            )
            self.root_value_sums[self._roots.slice(index, player)] += weight * counterfactual
            if self.track_average:
                played = np.bincount(
                    element,
                    weights=sign * others[nodes] * solution_values[nodes],
                    minlength=int(element.max()) + 1,
                )
                gap = float((counterfactual - played).max())
                self.subgame_regret[0] = max(self.subgame_regret[0], gap)

    def _accumulate_subgame_average(self, player: int, weight: float) -> None:
        """The sequence-form average of ``player``'s subgame solutions (Theorem 17's profile)."""
        tree = self.tree
        reach = np.zeros(tree.num_infosets)
        own_infoset_reach(tree.infosets_of(player), infoset_view(tree), self._behavior, reach)
        mine = self._subgame_actions[self._player_of_action[self._subgame_actions] == player]
        self.subgame_average[mine] += weight * reach[tree.action_infoset[mine]] * self._behavior[mine]


def _root_copies(gadget: Gadget) -> np.ndarray:
    """The gadget nodes below its chance root, one per subgame root in root order."""
    tree = gadget.tree
    children = tree.node_first_child[0] + np.arange(tree.node_num_children[0])
    if not np.array_equal(gadget.node_origin[children], gadget.subgame.root_nodes):
        raise AssertionError("extract_subgame's chance root lists the roots out of order")
    return children


class _RootValues:
    """Where each (subgame, player)'s augmented infosets sit in the flat root-value array."""

    def __init__(self, subgames: list[Subgame]) -> None:
        self.elements = [(s.augmented_infosets(0), s.augmented_infosets(1)) for s in subgames]
        sizes = [e.num_elements for pair in self.elements for e in pair]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.size = int(self.offsets[-1])
        self.all_roots = np.concatenate([s.root_nodes for s in subgames])

    def slice(self, subgame: int, player: int) -> slice:
        k = 2 * subgame + player
        return slice(int(self.offsets[k]), int(self.offsets[k + 1]))


class _Trunk:
    """The trunk as the CFR kernels see it: its internal nodes' ``passes`` (subgame roots
    are leaves whose values the driver sets), its infosets laid out compactly
    (``view``: trunk infoset I's actions at ``infoset_offset[I]`` in a trunk-sized array),
    per player the original trunk ``infosets`` and their compact ``rows``, and
    ``edge_prob``: the trunk strategy followed by the tree's chance probabilities."""

    def __init__(self, tree: GameTree, subgames: list[Subgame]) -> None:
        in_subgame = np.zeros(tree.num_nodes, dtype=bool)
        for subgame in subgames:
            in_subgame[subgame.nodes] = True
        decision = (tree.node_kind < CHANCE) & ~in_subgame
        trunk_infosets = np.unique(tree.node_infoset[decision]).astype(np.int32)
        counts = tree.infoset_num_actions[trunk_infosets].astype(np.int64)
        action_offset = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        self.num_actions = int(action_offset[-1])
        infoset_offset = np.zeros(tree.num_infosets, np.int32)
        infoset_offset[trunk_infosets] = action_offset[:-1]
        self.view = infoset_view(tree)._replace(infoset_offset=infoset_offset, action_offset=action_offset)
        owner = tree.infoset_player[trunk_infosets]
        self.infosets = tuple(trunk_infosets[owner == p] for p in (0, 1))
        self.rows = tuple(np.flatnonzero(owner == p).astype(np.int32) for p in (0, 1))
        self.is_trunk_action = np.isin(tree.action_infoset, trunk_infosets)
        self.flat_actions = np.flatnonzero(self.is_trunk_action)  # trunk infosets' actions, in order
        internal = tree.internal_nodes
        self.passes = node_passes(tree, internal[~in_subgame[internal]].astype(np.int32), infoset_offset,
                                  self.num_actions)
        self.edge_prob = np.concatenate([np.zeros(self.num_actions), tree.node_chance_prob])


@dataclass
class CFRDRun:
    """A CFR-D run and what it measured: the solver, the ``history`` of evaluations (one dict
    per evaluated trunk iteration: the re-solved strategy's NashConv, and the implicit
    average's with ``track_average``), how it ended."""

    solver: CFRD
    history: list[dict] = field(default_factory=list)
    end: RunEnd | None = None


def run_cfr_d(
    solver: CFRD,
    iterations: int,
    *,
    every: int | None = None,
    resolve_iterations: int = 1000,
    gadget: str = "resolve",
    state: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
    checkpoint_seconds: float | None = None,
    time_limit: float | None = None,
    progress: bool = False,
) -> CFRDRun:
    """Run ``solver`` to trunk iteration ``iterations`` by the core run loop, re-solving and
    evaluating every ``every`` iterations (and at the end). With ``state`` (a path) the run
    checkpoints there (every ``checkpoint_every`` iterations / ``checkpoint_seconds``, and at
    the end); run again with the same ``state`` it resumes and ends bit-identical to an
    uninterrupted run."""
    run = CFRDRun(solver)
    checkpoints = None
    if state is not None:
        checkpoints = cfr_d_checkpoints(state, solver, every=checkpoint_every, seconds=checkpoint_seconds)
        if Path(state).exists():
            run.history = checkpoints.resume(solver)

    def evaluate() -> None:
        strategy = solver.resolve(resolve_iterations, gadget=gadget)
        entry = {"iteration": solver.iteration, "nash_conv": nash_conv(strategy)}
        if solver.track_average:
            entry["implicit_nash_conv"] = nash_conv(solver.implicit_average())
        run.history.append(entry)

    run.end = run_iterations(
        solver,
        iterations,
        every=every,
        evaluate=evaluate if every else None,
        history=run.history,
        checkpoints=checkpoints,
        time_limit=time_limit,
        progress=progress,
        description="CFR-D trunk",
    )
    if checkpoints is not None:
        checkpoints.write(solver, run.history)
    return run


def cfr_d_checkpoints(path: str | os.PathLike, solver: CFRD, *, every: int | None = None,
                      seconds: float | None = None) -> StateFileCheckpoints:
    """A CFR-D run's checkpoints at ``path`` (trunk and root values, the run's settings and
    evaluation history)."""
    settings = {"variant": solver.variant, "round": solver.round_number,
                "subgame_iterations": solver.subgame_iterations, "subgame_solver": solver.subgame_solver,
                "track_average": solver.track_average}
    return StateFileCheckpoints(path, "efgkit-cfr-d-state", "CFR-D state", settings, every=every,
                                seconds=seconds)
