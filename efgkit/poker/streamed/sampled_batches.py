"""Sampled CFR with a batch of boards per iteration, the boards walked in parallel.

Johanson et al. 2012 ("Efficient Nash equilibrium approximation through Monte Carlo
counterfactual regret minimization", public chance sampling) sample one public chance
outcome per iteration; sampling several boards per iteration and averaging their
counterfactual values is the same estimator with less variance, and the boards of one
iteration are independent walks against the same current strategy — work that splits.

An iteration of ``BatchedSampledCFR(boards_per_iteration=B, board_groups=G)``: for player 0, then
player 1 (alternating, as every efgkit CFR variant), the B boards (B rows of uniforms drawn
from the solver's Generator, ``sampled_cfr``'s dealing) are cut into G groups of consecutive
boards; each group's walks add, board after board, into a zeroed accumulator of
instantaneous regrets and average-strategy contributions (``walk_boards``); the groups'
accumulators are added into the solver's arrays in group order; then every row of the
player is updated once (``sampled_cfr.update_batch``). The sums are fixed by B and G, so
the state after N iterations is bit-identical for a seed, B and G whether the groups run
in this process, on a LocalCluster of any size or on a scheduler's workers
(``io.chunk_runner.ChunkRunner``; results come back in group order). B = 1 is the plain
``SampledCFR`` (``sampled_solver`` picks it), whose walk updates each row as it closes it.

Every CFR variant and precision of ``SampledCFR`` runs batched. An int32 group accumulator
adds each hand's rounded contribution as ``_add_average`` does (saturating); the group sums
add into the averages saturating too.

What crosses to a worker per group is small: the uniforms of its boards, the player, the
iteration's average weight and the int32 scales. The layout is sent once per solver
(``ChunkRunner.share``); the current strategy lives in a file in shared memory
(``/dev/shm`` where it exists) that the driver updates after each player's update and every
worker maps (so Dask workers must run on this machine). A group returns the player's rows
of its accumulators only, concatenated in decision order.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid
import weakref
from typing import NamedTuple

import numba
import numpy as np

from efgkit.core.regret_rules import (
    VARIANT_CFR,
    VARIANT_CFR_PLUS,
    DiscountRule,
    average_weight,
    check_iterations,
    clear_rows,
)
from efgkit.errors import ParameterError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.materialised.vector_cfr import RowState
from efgkit.poker.streamed.sampled_cfr import (
    CHUNK_ITERATIONS,
    INT32_MAX,
    Fixed,
    SampledCFR,
    board_sampling,
    update_batch,
    walk_boards,
)

NO_UPDATE = DiscountRule(-1, 1.0, 1.0, 1.0, 1.0)
"""The rule a group's walk runs with: no variant's code, so no row is updated during it."""
_WALKERS: dict[tuple[str, int], GroupWalker] = {}
"""This process's group walkers, by (plan key, thread): a worker keeps its walker across groups."""
_MAPPED: dict[str, np.ndarray] = {}
"""Shared files mapped in this process, by path."""


class GroupPlan(NamedTuple):
    """What a worker needs to walk groups of one solver, sent once: a unique ``key``, the
    ``layout``, the ``precision`` and the ``directory`` of the shared files (``strategy``,
    and per group ``instant-G`` and ``average-G``, where the group's sums go; None when the
    groups run in this process, get the strategy array and return new arrays)."""

    key: str
    layout: BucketLayout
    precision: str
    directory: str | None


@numba.njit(cache=True, no_cfunc_wrapper=True)
def take_rows(rows, action_start, scratch, out):
    """Copy the actions of decisions ``rows`` (int64) of ``scratch`` into ``out``, concatenated
    in order, and zero them in ``scratch``."""
    i = 0
    for d in rows:
        for x in range(action_start[d], action_start[d + 1]):
            out[i] = scratch[x]
            scratch[x] = 0
            i += 1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def add_rows(rows, action_start, part, total, integer):
    """Add ``part`` (``take_rows``' layout) into the actions of decisions ``rows`` of ``total``;
    ``integer``: saturating at the int32 maximum."""
    i = 0
    for d in rows:
        for x in range(action_start[d], action_start[d + 1]):
            if integer:
                total[x] = min(np.int64(total[x]) + np.int64(part[i]), INT32_MAX)
            else:
                total[x] += part[i]
            i += 1


def player_actions(layout: BucketLayout, decisions: tuple[np.ndarray, np.ndarray]) -> list[int]:
    """Each player's number of actions (its ``decisions``' rows)."""
    widths = np.diff(layout.action_start)
    return [int(widths[d].sum()) for d in decisions]


class GroupWalker:
    """Walks groups of boards of one solver (``walk``): its own board buffers and zeroed
    accumulators (the solver's types: instantaneous regrets in the working type, averages in
    the stored one)."""

    def __init__(self, layout: BucketLayout, precision: str) -> None:
        betting = layout.betting
        self.view = layout.view()
        self.sampler, self.board, self.walk_stack, self.tables = board_sampling(layout)
        player = betting.kind[betting.decision_nodes]
        self.decisions = (np.flatnonzero(player == 0).astype(np.int64),
                          np.flatnonzero(player == 1).astype(np.int64))
        self.action_start = layout.action_start
        self.sizes = player_actions(layout, self.decisions)
        stored = {"float64": np.float64, "float32": np.float32, "int32": np.int32}[precision]
        working = np.float64 if precision == "float64" else np.float32
        self.integer = precision == "int32"
        self.instant = np.zeros(layout.num_actions, working)
        self.average = np.zeros(layout.num_actions, stored)
        self.no_regrets = np.zeros(0, stored)
        self.decision_round = betting.round[betting.decision_nodes].astype(np.int64)
        self.sums = (np.empty(max(self.sizes), working), np.empty(max(self.sizes), stored))

    def walk(self, strategy: np.ndarray, player: int, weight: float, scale: np.ndarray, uniforms: np.ndarray,
             out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``player``'s instantaneous regrets and average contributions (weight ``weight``, int32
        ``scale`` (2, rounds)) summed over the boards of ``uniforms`` against ``strategy``,
        as ``take_rows`` lays them out, in ``out`` (two arrays at least that long) or in ``sums``
        (the walker's own, overwritten by its next walk)."""
        state = RowState(self.no_regrets, self.average, strategy, self.instant, np.zeros(0))
        fixed = Fixed(self.integer, np.array(scale, np.float64), self.decision_round)
        walk_boards(self.view, self.tables, self.sampler, self.board, self.walk_stack, state, player,
                    float(weight), fixed, NO_UPDATE, uniforms)
        size = self.sizes[player]
        instant, average = out or self.sums
        take_rows(self.decisions[player], self.action_start, self.instant, instant)
        take_rows(self.decisions[player], self.action_start, self.average, average)
        return instant[:size], average[:size]


def shared_array(path: str, dtype, size: int, create: bool = False) -> np.ndarray:
    """The shared file at ``path`` as an array of ``size`` ``dtype`` (``create``: a new zeroed
    file), mapped once per process; ParameterError if a worker cannot see it."""
    mapped = _MAPPED.get(path)
    if mapped is None or create:
        try:
            mapped = np.memmap(path, dtype=dtype, mode="w+" if create else "r+", shape=(size,))
        except OSError as exc:
            raise ParameterError(f"a Dask worker cannot map the sampled solver's shared file {path} "
                                 f"({exc.strerror}): batched sampled CFR needs its workers on this "
                                 f"machine") from None
        directory = os.path.dirname(path)
        for stale in [other for other in _MAPPED if os.path.dirname(other) != directory]:
            del _MAPPED[stale]  # an earlier solver's
        _MAPPED[path] = mapped
    return mapped


def walk_group(plan: GroupPlan, strategy: np.ndarray | None, player: int, weight: float, scale: np.ndarray,
               uniforms: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Group ``group`` of the boards (``GroupWalker.walk``) on this process's walker for
    ``plan``: with shared files, against the shared strategy and into the group's files
    (None returned), else against ``strategy`` into the walker's ``sums`` (this process adds
    them before it walks the next group)."""
    key = (plan.key, threading.get_ident())
    walker = _WALKERS.get(key)
    if walker is None:
        for stale in [k for k in _WALKERS if k[0] != plan.key]:
            del _WALKERS[stale]
        walker = _WALKERS[key] = GroupWalker(plan.layout, plan.precision)
    if plan.directory is None:
        return walker.walk(strategy, player, weight, scale, uniforms)
    strategy = shared_array(os.path.join(plan.directory, "strategy"), walker.instant.dtype,
                            plan.layout.num_actions)
    out = tuple(shared_array(os.path.join(plan.directory, f"{name}-{group}"), array.dtype, max(walker.sizes))
                for name, array in (("instant", walker.instant), ("average", walker.average)))
    walker.walk(strategy, player, weight, scale, uniforms, out)
    return None


def _forget(key: str, directory: str | None) -> None:
    """Drop this process's walkers of plan ``key`` and the shared files in ``directory``."""
    for stale in [k for k in _WALKERS if k[0] == key]:
        del _WALKERS[stale]
    if directory is not None:
        for path in [path for path in _MAPPED if os.path.dirname(path) == directory]:
            del _MAPPED[path]
        shutil.rmtree(directory, ignore_errors=True)


def check_batches(boards_per_iteration: int, board_groups: int | None, distributed: bool) -> int:
    """The number of groups for ``boards_per_iteration`` and ``board_groups`` (None: one board
    a group) on Dask workers (``distributed``) or here; ParameterError for a combination that
    cannot run."""
    if isinstance(boards_per_iteration, bool) or not isinstance(boards_per_iteration, int | np.integer) \
            or boards_per_iteration < 1:
        raise ParameterError(f"--boards-per-iteration must be an integer >= 1, got {boards_per_iteration!r}")
    groups = boards_per_iteration if board_groups is None else board_groups
    if isinstance(groups, bool) or not isinstance(groups, int | np.integer) or not \
            1 <= groups <= boards_per_iteration or boards_per_iteration % groups:
        raise ParameterError(f"--board-groups must divide --boards-per-iteration {boards_per_iteration} "
                             f"(1 to {boards_per_iteration}), got {board_groups!r}")
    if boards_per_iteration == 1 and distributed:
        raise ParameterError("--workers and --scheduler walk the boards of an iteration in parallel: give "
                             "--boards-per-iteration 2 or more (one board an iteration runs here)")
    return int(groups)


def sampled_solver(layout: BucketLayout, *, boards_per_iteration: int = 1, board_groups: int | None = None,
                   runner: ChunkRunner | None = None, **options) -> SampledCFR:
    """A ``SampledCFR`` (one board an iteration) or a ``BatchedSampledCFR`` with ``options``
    (``SampledCFR``'s keywords), after ``check_batches``."""
    check_batches(boards_per_iteration, board_groups, runner is not None and runner.distributed)
    if boards_per_iteration == 1:
        return SampledCFR(layout, **options)
    return BatchedSampledCFR(layout, boards_per_iteration=boards_per_iteration, board_groups=board_groups,
                             runner=runner, **options)


class BatchedSampledCFR(SampledCFR):
    """``SampledCFR`` with ``boards_per_iteration`` boards an iteration in ``board_groups``
    groups (default one board a group; ``check_batches``) run by ``runner`` (default this
    process): the module docstring. Same state, checkpoints and resume as ``SampledCFR``."""

    def __init__(self, layout: BucketLayout, *, boards_per_iteration: int, board_groups: int | None = None,
                 runner: ChunkRunner | None = None, **options) -> None:
        self.board_groups = check_batches(boards_per_iteration, board_groups,
                                          runner is not None and runner.distributed)
        self.boards_per_iteration = int(boards_per_iteration)
        super().__init__(layout, **options)
        self.runner = runner or ChunkRunner()
        key, directory, self._slots = uuid.uuid4().hex, None, []
        self._sizes = player_actions(layout, self._decisions)
        if self.runner.distributed:  # the strategy and the groups' sums in shared memory
            directory = tempfile.mkdtemp(prefix="efgkit-sampled-",
                                         dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
            strategy = shared_array(os.path.join(directory, "strategy"), self._state.strategy.dtype,
                                    layout.num_actions, create=True)
            strategy[:] = self._state.strategy
            self._state = self._state._replace(strategy=strategy)
            self._slots = [tuple(shared_array(os.path.join(directory, f"{name}-{g}"), array.dtype,
                                              max(self._sizes), create=True)
                                 for name, array in (("instant", self._state.instant),
                                                     ("average", self.average_accumulator)))
                           for g in range(self.board_groups)]
        weakref.finalize(self, _forget, key, directory)
        self._plan = self.runner.share(GroupPlan(key, layout, self.precision, directory))

    def batch_provenance(self) -> dict[str, int]:
        """``boards_per_iteration`` and ``board_groups`` (a resumed run must use the same)."""
        return {"boards_per_iteration": self.boards_per_iteration, "board_groups": self.board_groups}

    def iterate(self, iterations: int = 1) -> BatchedSampledCFR:
        """Run ``iterations`` iterations of ``boards_per_iteration`` boards each (the Generator
        advances by that many rows of uniforms an iteration)."""
        check_iterations(self.variant, self._settings.horizon, self.iteration, iterations)
        boards, total = self.boards_per_iteration, self._sampler.cards.shape[0]
        left = iterations
        while left > 0:
            chunk = min(left, max(CHUNK_ITERATIONS // boards, 1))
            uniforms = self.rng.random((chunk * boards, total))
            for i in range(chunk):
                self._iteration(self.iteration + 1, uniforms[i * boards:(i + 1) * boards])
                self.iteration += 1
            left -= chunk
        return self

    def _iteration(self, t: int, uniforms: np.ndarray) -> None:
        """Iteration ``t`` on the boards of ``uniforms`` (boards, board cards)."""
        settings, state, fixed, decisions = self._settings, self._state, self._fixed, self._decisions
        start = self.layout.action_start
        weight = average_weight(settings.variant, t, settings.delay, settings.gamma, settings.horizon)
        size = self.boards_per_iteration // self.board_groups
        source = None if self._slots else state.strategy
        for player in range(2):
            if settings.variant not in (VARIANT_CFR, VARIANT_CFR_PLUS):
                clear_rows(decisions[player], start, state.instant)
            arguments = [(self._plan, source, player, weight, fixed.scale.copy(),
                          uniforms[g * size:(g + 1) * size], g) for g in range(self.board_groups)]
            for g, sums in enumerate(self.runner.imap(walk_group, arguments)):
                instant, average = sums or (slot[:self._sizes[player]] for slot in self._slots[g])
                add_rows(decisions[player], start, instant, state.instant, False)
                add_rows(decisions[player], start, average, state.average, fixed.integer)
            update_batch(self._view, self._walk, settings, decisions, self.layout.width, t, player, state,
                         fixed)
