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

On Dask the groups are walked by persistent walkers (``run_walker``), one per worker up to
one per group, each started once for a chunk of iterations on a worker of its own
(``ChunkRunner.start_apart``) with the chunk's uniforms. A round (one player of one
iteration) costs no Dask round trip: the driver writes the player, the iteration's average
weight and the int32 scales into a small shared control file, every group's number into a
claims pipe (a FIFO) and a GO byte into each walker's pipe; the walkers claim groups one at
a time until none is left (a walker that is ahead takes the next group, so a slow or
descheduled walker delays the round by one group at most), walk each against the current
strategy into the group's shared files and answer DONE; the driver adds the groups in
order and updates the rows as above (``ChunkWalkers``). Whichever walker walks a group,
its sums are the same. A walker that fails, dies or never
starts ends the run with a ParameterError, never a wait; a walker whose driver is gone ends.
The layout is sent once per solver (``ChunkRunner.share``); the current strategy, the
groups' sums, the control file and the pipes live in a directory in shared memory
(``/dev/shm`` where it exists) that every worker maps (so Dask workers must run on this
machine). A group's sums are the player's rows of its accumulators only, concatenated in
decision order.
"""

from __future__ import annotations

import os
import select
import shutil
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from functools import partial
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
from efgkit.errors import EfgkitError, ParameterError
from efgkit.io.atomic import process_alive
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.io.error_text import one_line
from efgkit.io.mapped_arrays import Closing
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
WALKER_START_SECONDS = 60.0
"""Seconds the walkers of a chunk have to start, each on a Dask worker of its own, before the
run stops with a ParameterError (workers busy with other work, or gone)."""
POLL_SECONDS = 0.5
"""How often a waiting driver checks that its walkers live, and a waiting walker its driver."""
CLAIM_BYTES = 4
"""Bytes of a group's number on the claims pipe (little-endian)."""
MOST_GROUPS_ON_DASK = 65536 // CLAIM_BYTES
"""A pipe holds 64 KiB: every group's number fits in it before the walkers read."""
GO, STOP, READY, DONE, FAILED = b"g", b"s", b"r", b"d", b"f"
"""The bytes on the walkers' pipes: driver to walker GO (walk the round in the control file) or
STOP; walker to driver READY (started), DONE (the round's sums are in the groups' files) or
FAILED."""


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


def _receive(pipe: int, path: str, driver: int) -> bytes:
    """The driver's next byte on ``pipe`` (the FIFO at ``path``); STOP once the driver's process
    or the chunk's pipe is gone."""
    while not select.select([pipe], [], [], POLL_SECONDS)[0]:
        if not os.path.exists(path) or not process_alive(driver):
            return STOP
    return os.read(pipe, 1)


def run_walker(plan: GroupPlan, chunk: str, walker: int, walkers: int, uniforms: np.ndarray, rounds: int,
               driver: int) -> None:
    """Walker ``walker`` of ``walkers`` of chunk ``chunk`` (its files' prefix in the plan's
    directory), on a Dask worker until STOP: at every GO, the groups it claims (``_claimed``)
    of the iteration and player the control file names, walked (``walk_group``) against the
    shared strategy into the groups' files, then DONE.
    ``uniforms``: float64 (iterations, groups, boards a group, board cards); ``rounds``: the
    int32 scales' betting rounds; ``driver``: the solver's process id (gone: the walker ends)."""
    if not os.path.isdir(plan.directory):
        raise ParameterError(f"a Dask worker cannot see the sampled solver's shared directory "
                             f"{plan.directory}: batched sampled CFR needs its workers on this machine")
    path = os.path.join(plan.directory, chunk)
    pipes = []
    try:
        control = np.memmap(f"{path}-control", np.float64, "r+", shape=(3 + 2 * rounds + walkers,))
        for name, flags in ((f"go-{walker}", os.O_RDWR), (f"done-{walker}", os.O_RDWR),
                            ("claims", os.O_RDWR | os.O_NONBLOCK)):
            pipes.append(os.open(f"{path}-{name}", flags))
    except FileNotFoundError:  # the chunk ended before this walker started
        for pipe in pipes:
            os.close(pipe)
        return
    go, done, claims = pipes
    try:
        control[3 + 2 * rounds + walker] = os.getpid()
        os.write(done, READY)
        while _receive(go, f"{path}-go-{walker}", driver) == GO:
            iteration, player, weight = int(control[0]), int(control[1]), float(control[2])
            scale = np.array(control[3:3 + 2 * rounds]).reshape(2, rounds)
            for g in _claimed(claims):
                walk_group(plan, None, player, weight, scale, uniforms[iteration, g], g)
            os.write(done, DONE)
    except BaseException:
        os.write(done, FAILED)
        raise
    finally:
        for pipe in pipes:
            os.close(pipe)


def _claimed(claims: int) -> Iterator[int]:
    """The groups this walker takes from the ``claims`` pipe (non-blocking; 4-byte group
    numbers, each read by one walker), one at a time until the pipe is empty."""
    while True:
        try:
            number = os.read(claims, CLAIM_BYTES)
        except BlockingIOError:
            return
        if len(number) < CLAIM_BYTES:
            return
        yield int.from_bytes(number, "little")


class ChunkWalkers(Closing):
    """The walkers (``run_walker``) of one chunk of iterations on ``runner``'s workers, one per
    worker up to one per group, started once for the chunk (``plan``: the shared ``GroupPlan``,
    its files in ``directory``; ``uniforms``: float64 (iterations, groups, boards a group, board
    cards)); ``round`` walks the groups of one player of one iteration. ParameterError, not a
    wait, if a walker fails, its process dies, or it has not started within
    WALKER_START_SECONDS."""

    def __init__(self, runner: ChunkRunner, plan, directory: str, uniforms: np.ndarray, rounds: int) -> None:
        count = min(uniforms.shape[1], runner.worker_count)
        if count == 0:
            raise ParameterError(f"{runner.description} has no workers to walk the boards")
        self._path = os.path.join(directory, uuid.uuid4().hex[:12])
        self._rounds, self._groups = rounds, uniforms.shape[1]
        self._pipes: list[tuple[int, int]] = []
        self._futures: list = []
        self._files = [f"{self._path}-{name}-{w}" for w in range(count) for name in ("go", "done")]
        self._files.append(f"{self._path}-claims")
        self._numbers = np.arange(self._groups, dtype="<i4").tobytes()
        self._claims = None
        try:
            os.mkfifo(f"{self._path}-claims")
            self._claims = os.open(f"{self._path}-claims", os.O_RDWR)
            self._control = np.memmap(f"{self._path}-control", np.float64, "w+",
                                      shape=(3 + 2 * rounds + count,))
            self._files.append(f"{self._path}-control")
            for w in range(count):
                pipes = []
                for name in ("go", "done"):
                    os.mkfifo(f"{self._path}-{name}-{w}")
                    pipes.append(os.open(f"{self._path}-{name}-{w}", os.O_RDWR))
                self._pipes.append((pipes[0], pipes[1]))
            chunk, driver = os.path.basename(self._path), os.getpid()
            self._futures = runner.start_apart(run_walker, [(plan, chunk, w, count, uniforms, rounds, driver)
                                                            for w in range(count)])
            self._wait(READY, WALKER_START_SECONDS)
        except BaseException:
            self.close()
            raise

    def round(self, iteration: int, player: int, weight: float, scale: np.ndarray) -> list[None]:
        """Walk ``player``'s groups of iteration ``iteration`` of the chunk (average weight
        ``weight``, int32 ``scale`` (2, rounds)) into the groups' files: a None per group once
        all are there."""
        control = self._control
        control[0], control[1], control[2] = iteration, player, weight
        control[3:3 + scale.size] = scale.ravel()
        os.write(self._claims, self._numbers)
        for go, _ in self._pipes:
            os.write(go, GO)
        self._wait(DONE, None)
        return [None] * self._groups

    def _wait(self, signal: bytes, seconds: float | None) -> None:
        """Until every walker has sent ``signal`` (within ``seconds``; None: as long as they live)."""
        deadline = None if seconds is None else time.monotonic() + seconds
        waiting = {done: w for w, (_, done) in enumerate(self._pipes)}
        while waiting:
            ready = select.select(list(waiting), [], [], POLL_SECONDS)[0]
            for pipe in ready:
                if os.read(pipe, 1) != signal:
                    self._stopped(waiting[pipe])
                del waiting[pipe]
            if ready:
                continue
            for w in waiting.values():
                pid = int(self._control[3 + 2 * self._rounds + w])
                if self._futures[w].done() or (pid and not process_alive(pid)):
                    self._stopped(w, pid)
            if deadline is not None and time.monotonic() > deadline:
                raise ParameterError(f"{len(waiting)} of the {len(self._pipes)} walkers of batched sampled "
                                     f"CFR did not start within {seconds:g} s, each on a Dask worker of its "
                                     f"own (workers busy with other work?)")

    def _stopped(self, walker: int, pid: int = 0) -> None:
        """Raise what ended walker ``walker`` (its error, or a ParameterError that names it)."""
        if pid and not process_alive(pid):
            raise ParameterError(f"the Dask worker process {pid} running walker {walker} of batched sampled "
                                 f"CFR died")
        try:
            error = self._futures[walker].exception(timeout=20 * POLL_SECONDS)
        except Exception as exc:  # a timeout, a lost or cancelled task: reported below
            error = exc
        if isinstance(error, EfgkitError):
            raise error
        raise ParameterError(f"walker {walker} of batched sampled CFR stopped on its Dask worker: "
                             f"{one_line(error) if error else 'it ended early'}") from error

    def close(self) -> None:
        """Stop the walkers (a walker that has not started finds no pipe and ends) and remove the
        chunk's files; the pipes are unlinked before they are closed, so a walker that opened
        one still reads STOP."""
        for go, _ in self._pipes:
            os.write(go, STOP)
        for path in self._files:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        for pipe in [pipe for pipes in self._pipes for pipe in pipes]:
            os.close(pipe)
        if self._claims is not None:
            os.close(self._claims)
        self._pipes, self._futures, self._claims = [], [], None


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
    if distributed and groups > MOST_GROUPS_ON_DASK:
        raise ParameterError(f"--board-groups {groups}: at most {MOST_GROUPS_ON_DASK} groups run on Dask "
                             f"workers")
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
        self._directory = directory
        weakref.finalize(self, _forget, key, directory)
        self._plan = self.runner.share(GroupPlan(key, layout, self.precision, directory))

    def batch_provenance(self) -> dict[str, int]:
        """``boards_per_iteration`` and ``board_groups`` (a resumed run must use the same)."""
        return {"boards_per_iteration": self.boards_per_iteration, "board_groups": self.board_groups}

    def iterate(self, iterations: int = 1) -> BatchedSampledCFR:
        """Run ``iterations`` iterations of ``boards_per_iteration`` boards each (the Generator
        advances by that many rows of uniforms an iteration); on Dask, one ``ChunkWalkers``
        a chunk."""
        check_iterations(self.variant, self._settings.horizon, self.iteration, iterations)
        boards, total = self.boards_per_iteration, self._sampler.cards.shape[0]
        size = boards // self.board_groups
        left = iterations
        while left > 0:
            chunk = min(left, max(CHUNK_ITERATIONS // boards, 1))
            uniforms = self.rng.random((chunk * boards, total)).reshape(chunk, self.board_groups, size, total)
            if self.runner.distributed:
                with ChunkWalkers(self.runner, self._plan, self._directory, uniforms,
                                  self._fixed.scale.shape[1]) as walkers:
                    for i in range(chunk):
                        self._iteration(self.iteration + 1, partial(walkers.round, i))
                        self.iteration += 1
            else:
                for i in range(chunk):
                    self._iteration(self.iteration + 1, partial(self._walk_here, uniforms[i]))
                    self.iteration += 1
            left -= chunk
        return self

    def _walk_here(self, uniforms: np.ndarray, player: int, weight: float, scale: np.ndarray) -> Iterator:
        """Each group's sums (``walk_group`` in this process; ``uniforms`` (groups, boards a
        group, board cards)), a group walked when the one before is used."""
        for g in range(self.board_groups):
            yield walk_group(self._plan, self._state.strategy, player, weight, scale, uniforms[g], g)

    def _iteration(self, t: int, walk) -> None:
        """Iteration ``t``: ``walk(player, weight, scale)`` walks the player's groups and yields
        each group's sums in group order (None: in the group's shared files)."""
        settings, state, fixed, decisions = self._settings, self._state, self._fixed, self._decisions
        start = self.layout.action_start
        weight = average_weight(settings.variant, t, settings.delay, settings.gamma, settings.horizon)
        for player in range(2):
            if settings.variant not in (VARIANT_CFR, VARIANT_CFR_PLUS):
                clear_rows(decisions[player], start, state.instant)
            for g, sums in enumerate(walk(player, weight, fixed.scale)):
                instant, average = sums or (slot[:self._sizes[player]] for slot in self._slots[g])
                add_rows(decisions[player], start, instant, state.instant, False)
                add_rows(decisions[player], start, average, state.average, fixed.integer)
            update_batch(self._view, self._walk, settings, decisions, self.layout.width, t, player, state,
                         fixed)
