"""CFR, CFR+ and DCFR with every array on disk, memory-mapped, under a resident-memory limit.

In efgkit's representation the arrays a CFR iteration touches are dominated by the
per-node ones (reach, values, chance probabilities, the compiled passes: about 40 bytes
per node), next to 16 bytes of regrets and average per infoset-action. A ``DiskSolver``
keeps all of them as contiguous datasets of a *working file* (``mapped_arrays``) and
runs the very kernels of ``efgkit.solvers.cfr`` on slices of them: the top-down and
bottom-up passes over consecutive windows of internal nodes (breadth-first order, so a
window touches a contiguous range of nodes), the regret and average updates over
consecutive windows of infosets. The order of every floating-point operation is the
in-memory solver's, so the results are bit-identical to ``CFRSolver``'s. After each
window the resident set (``/proc/self/statm``) is compared with the limit and, when
close, every mapped page is dropped (``MappedFile.release``): the data stays in the page
cache and the file, and the next window faults in what it needs. This is what lets a
solve whose arrays are several times the limit run with its peak RSS under it.

The game is compiled into the working file by a child process (``compile_working_file``),
so the solving process never holds the tree; the compile's own peak memory is reported
separately. Only the identity abstraction is supported. Checkpoints are ordinary
schema-2 strategy files (``strategy_file``), written and restored slice by slice.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

import h5py
import numpy as np

import efgkit
from efgkit.core.regret_rules import (
    PREDICTIVE,
    VariantSolver,
    check_iterations,
    clear_rows,
)
from efgkit.core.solver_state import SolverState, check_finite
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.checked_hdf5 import verify_dataset
from efgkit.io.mapped_arrays import MappedFile, create_file, slices, write_contiguous
from efgkit.solvers.cfr import (
    CFRBuffers,
    RegretState,
    accumulate_player_update,
    match_player,
    no_samples,
    values_and_regrets,
)
from efgkit.solvers.strategy import normalize_per_infoset
from efgkit.solvers.traversal import InfosetView, NodePasses, others_reach
from efgkit.storage.strategy_file import (
    HISTORY_DTYPE,
    dataset_checked,
    open_strategy_file,
    write_strategy_file,
)

WORKING_FORMAT = "efgkit-working-arrays"
WORKING_VERSION = 2
STRUCTURE = ("internal/nodes", "internal/kind", "internal/first_child", "internal/num_children",
             "internal/prob_offset", "internal/infoset", "action/infoset", "infoset/player0",
             "infoset/player1", "infoset/parent_action", "infoset/action_offset", "infoset/num_actions")
"""The working file's read-only datasets (the game), covered by its ``structure_sha256``; the
chance part of ``edge_prob`` (after the strategy entries) is covered too. Everything else
is solver state, restored from the checkpoint."""
TRANSIENT_BYTES = 64 << 20
"""Headroom for what is allocated outside the maps (checkpoint slices, numpy temporaries)."""
MAX_WINDOW_BYTES = 256 << 20
MIN_WINDOW_BYTES = 1 << 20
# Working-file arrays read window by window; every other one is read at random (through
# infoset or action ids), so any window may touch any of its pages.
_STREAMED = ("internal/nodes", "internal/kind", "internal/first_child", "internal/num_children",
             "internal/prob_offset", "internal/infoset", "node/values", "node/reach",
             "action/regrets", "action/average", "infoset/player0", "infoset/player1")


def current_rss() -> int:
    """Resident set size of this process now, in bytes (anonymous and mapped file pages)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    """Peak resident set size of this process in bytes (``VmHWM``).

    Not ``ru_maxrss``: Linux carries that across ``execve``, so a process started by a
    big parent reports the parent's size at the fork as its own peak.
    """
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("/proc/self/status has no VmHWM line")


def _build_and_measure(load_game: Callable[[str], GameTree], spec: str, path: str) -> dict:
    """``build_working_file`` plus the building process's own peak RSS (runs in the child)."""
    return {**build_working_file(load_game, spec, path), "compile_peak_rss_bytes": peak_rss()}


# ----------------------------------------------------------------------------- working file
def build_working_file(load_game: Callable[[str], GameTree], spec: str, path: str) -> dict:
    """Compile ``spec`` with ``load_game`` and write every array a CFR solve touches to ``path``.

    Written atomically. Runs in a child process (``compile_working_file``): it holds the
    whole tree. ``load_game`` is ``efgkit.specs.load_game`` (passed in: spec loading is a
    floor above storage).
    """
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.solvers.traversal import ProfileLayout

    tree = load_game(spec)
    infoset_map = InfosetMap.identity(tree)
    layout = ProfileLayout(infoset_map)
    actions = infoset_map.num_abstract_actions
    arrays = {
        **{f"internal/{name}": array for name, array in layout.passes._asdict().items()},
        "node/values": layout.values, "node/reach": layout.reach, "edge_prob": layout.edge_prob,
        "action/infoset": tree.action_infoset, "action/regrets": np.zeros(actions),
        "action/average": np.zeros(actions), "action/instant": np.zeros(actions),
        "infoset/player0": tree.infosets_of(0), "infoset/player1": tree.infosets_of(1),
        "infoset/parent_action": tree.infoset_parent_action,
        "infoset/action_offset": tree.infoset_action_offset,
        "infoset/num_actions": tree.infoset_num_actions,
        "infoset/own_reach": np.zeros(tree.num_infosets),
    }
    sizes = {"histories": tree.num_nodes, "infosets": tree.num_infosets,
             "infoset_actions": actions, "internal_nodes": int(layout.passes.nodes.shape[0])}
    with atomic_output_path(path) as temporary:
        with create_file(temporary) as handle:
            handle.attrs.update(format=WORKING_FORMAT, version=WORKING_VERSION, game_spec=tree.spec,
                                tree_fingerprint=tree.fingerprint, sizes=json.dumps(sizes),
                                efgkit_version=efgkit.__version__)
            for name, array in arrays.items():
                write_contiguous(handle, name, array, array.dtype.newbyteorder("<"))
            handle.attrs["structure_sha256"] = structure_digest(handle, actions)
    return {"game": tree.spec, **sizes, "bytes": os.path.getsize(path)}


def compile_working_file(load_game: Callable[[str], GameTree], spec: str, path: str | os.PathLike) -> dict:
    """``build_working_file`` in a fresh child process; adds the child's peak RSS (bytes).

    The child's errors (a bad spec, a game too large) come back as themselves; a child
    that dies (killed for lack of memory, say) is a FileFormatError.
    """
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
            return pool.submit(_build_and_measure, load_game, spec, str(path)).result()
    except BrokenProcessPool as exc:
        raise FileFormatError(f"{path}: compiling {spec} failed: the child process died "
                              f"(out of memory?)") from exc


def working_file_matches(path: str | os.PathLike, spec: str | None) -> bool:
    """Whether ``path`` is a complete working file of this efgkit (for ``spec``, if given).

    Working files are caches: one written by another efgkit version is rebuilt, since the
    rules of its game may have changed. Anything but a regular file is not one (h5py would
    block on a FIFO).
    """
    if not Path(path).is_file():
        return False
    try:
        with h5py.File(path, "r") as handle:
            attrs = handle.attrs
            if not (attrs.get("format") == WORKING_FORMAT and attrs.get("version") == WORKING_VERSION
                    and attrs.get("efgkit_version") == efgkit.__version__
                    and (spec is None or attrs.get("game_spec") == spec)):
                return False
            actions = int(json.loads(str(attrs["sizes"]))["infoset_actions"])
            return str(attrs.get("structure_sha256")) == structure_digest(handle, actions)
    except (OSError, KeyError, ValueError, TypeError):
        return False


def structure_digest(handle: h5py.File, actions: int) -> str:
    """sha256 of the game part of a working file, read in slices (a damaged cache is rebuilt,
    never trusted: a corrupted index would make the kernels read out of bounds)."""
    digest = hashlib.sha256()
    parts = [(handle[name], 0) for name in STRUCTURE] + [(handle["edge_prob"], actions)]
    for dataset, start in parts:
        digest.update(f"{dataset.name}:{dataset.dtype.str}:{dataset.shape}".encode())
        for part in slices(dataset.shape[0] - start, dataset.dtype.itemsize):
            block = dataset[start + part.start:start + part.stop]
            digest.update(memoryview(np.ascontiguousarray(block)).cast("B"))
    return digest.hexdigest()


class _AverageStrategy:
    """The normalised average strategy, computed for whatever slice a writer asks for."""

    def __init__(self, average: np.ndarray, action_offset: np.ndarray) -> None:
        self.average, self.action_offset = average, action_offset
        self.shape = average.shape

    def __getitem__(self, part: slice) -> np.ndarray:
        first = int(np.searchsorted(self.action_offset, part.start, side="right")) - 1
        last = int(np.searchsorted(self.action_offset, part.stop, side="left"))
        lo, hi = int(self.action_offset[first]), int(self.action_offset[last])
        block = normalize_per_infoset(np.asarray(self.average[lo:hi]),
                                      np.asarray(self.action_offset[first:last + 1]) - lo)
        return block[part.start - lo:part.stop - lo]


# ----------------------------------------------------------------------------- solver
class DiskSolver(VariantSolver):
    """Any CFR variant of ``solvers.cfr`` over a working file, under ``memory_limit`` bytes.

    Same parameters and results as ``CFRSolver`` on the identity map. ``regrets`` and
    ``average_accumulator`` are memory maps into the working file; ``save`` writes a
    checkpoint and ``restore`` continues from one. Raises ParameterError if the limit
    leaves no room for a window next to the arrays read at random. ``window_bytes``
    overrides the window size chosen from the limit.
    """

    def __init__(self, working_path: str | os.PathLike, *, variant: str = "cfr+",
                 memory_limit: int, alternating: bool = True, delay: int | None = None,
                 alpha: float | None = None, beta: float | None = None, gamma: float | None = None,
                 gamma_start: float | None = None, horizon: int | None = None,
                 window_bytes: int | None = None) -> None:
        self._configure(variant, {"delay": delay, "alpha": alpha, "beta": beta, "gamma": gamma,
                                  "gamma_start": gamma_start, "horizon": horizon}, alternating)
        self.alternating = alternating
        self.memory_limit = int(memory_limit)
        self.iteration = 0
        self.working_path = Path(working_path)
        if not working_file_matches(working_path, None):
            raise FileFormatError(f"{working_path}: not a complete efgkit working file")
        baseline = current_rss()
        self._mapped = MappedFile(working_path, writable=True)
        self._arrays: dict[str, np.ndarray] = {}

        def map_dataset(name: str, item: h5py.Group | h5py.Dataset) -> None:
            if isinstance(item, h5py.Dataset):
                self._arrays[name] = self._mapped.map(item)

        with h5py.File(working_path, "r") as handle:
            self.game_spec = str(handle.attrs["game_spec"])
            self.tree_fingerprint = str(handle.attrs["tree_fingerprint"])
            self.sizes = json.loads(str(handle.attrs["sizes"]))
            handle.visititems(map_dataset)
        a = self._arrays
        self.regrets, self.average_accumulator = a["action/regrets"], a["action/average"]
        self._players = (a["infoset/player0"], a["infoset/player1"])
        self._action_offset = a["infoset/action_offset"]
        self._infoset_offset = self._action_offset[:-1]
        self._no_samples = no_samples()
        self._plan_windows(baseline, window_bytes)
        for array in (self.regrets, self.average_accumulator, self._arrays["action/instant"]):
            for part in slices(array.shape[0], 8):
                array[part] = 0.0
                self._relieve()
        self._rematch()

    # ------------------------------------------------------------------ memory plan
    def _plan_windows(self, baseline: int, window_bytes: int | None) -> None:
        """Window sizes from the limit: what is left after the process, the arrays read at
        random (which every window may touch) and some headroom, in four windows' worth."""
        chance_part = 8 * self._arrays["node/values"].shape[0]  # edge_prob past the strategy
        self.random_access_bytes = sum(array.nbytes for name, array in self._arrays.items()
                                       if name not in _STREAMED) - chance_part
        room = self.memory_limit - baseline - self.random_access_bytes - TRANSIENT_BYTES
        if window_bytes is None and room < 4 * MIN_WINDOW_BYTES:
            needed = baseline + self.random_access_bytes + TRANSIENT_BYTES + 4 * MIN_WINDOW_BYTES
            raise ParameterError(
                f"--memory-limit {self.memory_limit / 2**20:.0f} MiB is too small for "
                f"{self.game_spec}: the process holds {baseline / 2**20:.0f} MiB and the arrays "
                f"read at random need {self.random_access_bytes / 2**20:.0f} MiB; give at least "
                f"{needed / 2**20:.0f} MiB")
        self.window_bytes = int(window_bytes or min(MAX_WINDOW_BYTES, room // 4))
        self._threshold = (self.memory_limit - TRANSIENT_BYTES - self.random_access_bytes
                           - self.window_bytes)
        self._node_windows = self._windows(self._node_cost, self._arrays["internal/nodes"].shape[0])
        self._infoset_windows = [
            self._windows(lambda part, infosets=infosets: 24 + 32 * self._arrays[
                "infoset/num_actions"][infosets[part]].astype(np.int64), infosets.shape[0])
            for infosets in self._players]

    def _node_cost(self, part: slice) -> np.ndarray:
        """Bytes a pass touches per internal node: its own entries, its children's and the
        nodes between it and the previous internal node (8 each of reach, values, edge_prob)."""
        nodes = self._arrays["internal/nodes"]
        previous = int(nodes[part.start - 1]) if part.start else 0
        span = np.diff(nodes[part].astype(np.int64), prepend=previous)
        return 19 + 24 * (self._arrays["internal/num_children"][part].astype(np.int64) + span)

    def _windows(self, cost, length: int) -> list[tuple[int, int]]:
        """Consecutive ranges of [0, length) of summed ``cost(slice)`` about window_bytes each."""
        bounds, total = [0], 0
        for part in slices(length, 8):
            cumulative = total + np.cumsum(cost(part))
            window = cumulative // self.window_bytes
            previous = np.concatenate(([total // self.window_bytes], window[:-1]))
            bounds += (np.flatnonzero(window != previous) + part.start).tolist()
            total = int(cumulative[-1])
            self._relieve()
        bounds.append(length)
        return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]

    def _relieve(self) -> None:
        """Drop every mapped page once the resident set nears the limit."""
        if current_rss() > self._threshold:
            self._mapped.release()

    # ------------------------------------------------------------------ iterations
    def _match(self, player: int, t: int) -> None:
        """Regret matching after iteration ``t`` (of the prediction, for the predictive variants)."""
        infosets = self._players[player]
        state = RegretState(self.regrets, self.average_accumulator, self._arrays["action/instant"],
                            np.zeros(0))
        for lo, hi in self._infoset_windows[player]:
            match_player(self._settings, t, infosets[lo:hi], self._action_offset, state,
                         self._arrays["edge_prob"])
            self._relieve()

    def _update_player(self, t: int, player: int) -> None:
        a = self._arrays
        passes = NodePasses(*(a[f"internal/{name}"] for name in NodePasses._fields))
        state = RegretState(self.regrets, self.average_accumulator, a["action/instant"], np.zeros(0))
        work = CFRBuffers(a["edge_prob"], a["node/values"], a["node/reach"], a["infoset/own_reach"])
        # The working file's game is unabstracted: abstract infosets and actions are the tree's.
        view = InfosetView(a["infoset/parent_action"], a["action/infoset"], self._action_offset,
                           a["infoset/num_actions"], self._infoset_offset, self._action_offset)
        clear_rows(self._players[player], self._action_offset, state.instant)
        for lo, hi in self._node_windows:
            others_reach(NodePasses(*(array[lo:hi] for array in passes)), work.edge_prob, player, work.reach)
            self._relieve()
        for lo, hi in reversed(self._node_windows):
            values_and_regrets(NodePasses(*(array[lo:hi] for array in passes)), work.edge_prob, work.values,
                               work.reach, player, state.instant, self._no_samples)
            self._relieve()
        infosets = self._players[player]
        for lo, hi in self._infoset_windows[player]:
            accumulate_player_update(t, self._settings, view, infosets[lo:hi], infosets[lo:hi], state, work)
            self._relieve()

    def iterate(self, iterations: int = 1) -> DiskSolver:
        """Run ``iterations`` full iterations, exactly as ``CFRSolver.iterate`` does."""
        check_iterations(self.variant, self.horizon, self.iteration, iterations)
        for _ in range(iterations):
            t = self.iteration + 1
            for player in (0, 1):
                self._update_player(t, player)
                if self.alternating:
                    self._match(player, t)
            if not self.alternating:
                self._match(0, t)
                self._match(1, t)
            self.iteration = t
        return self

    # ------------------------------------------------------------------ checkpoints
    def save(self, path: str | os.PathLike, provenance: dict) -> None:
        """Write the average strategy and the state to a checkpoint, slice by slice."""
        self._mapped.flush()
        num_infosets = self._action_offset.shape[0] - 1
        write_strategy_file(
            path, game_spec=self.game_spec, tree_fingerprint=self.tree_fingerprint,
            abstract_of=np.arange(num_infosets, dtype=np.int32),
            probabilities=_AverageStrategy(self.average_accumulator, self._action_offset),
            provenance=provenance, after_slice=self._relieve,
            solver_state=self.state())

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The mapped arrays of the solver state (the prediction for the predictive variants)."""
        arrays = {"regrets": self.regrets, "average_accumulator": self.average_accumulator}
        if self.variant in PREDICTIVE:
            arrays["prediction"] = self._arrays["action/instant"]
        return arrays

    def restore(self, path: str | os.PathLike) -> dict:
        """Continue from the checkpoint at ``path`` (checked); returns its provenance."""
        with open_strategy_file(path) as handle:
            attrs = handle.attrs
            version = int(attrs["schema_version"])
            if (attrs["game_spec"], attrs["tree_fingerprint"]) != (self.game_spec,
                                                                   self.tree_fingerprint):
                raise FileFormatError(f"{path}: checkpoint is for game {attrs['game_spec']!r} "
                                      f"(fingerprint {str(attrs['tree_fingerprint'])[:12]}), not "
                                      f"{self.game_spec!r} ({self.tree_fingerprint[:12]})")
            if version < 2 or "solver_state" not in handle:
                raise FileFormatError(f"{path}: holds no solver state to resume from (a strategy "
                                      f"written without --state)")
            abstract_of = dataset_checked(handle, "abstraction/abstract_of", "<i4")
            verify_dataset(abstract_of)
            for part in slices(abstract_of.shape[0], 4):
                if not np.array_equal(abstract_of[part], np.arange(part.start, part.stop)):
                    raise FileFormatError(f"{path}: checkpoint is on an abstraction; a solve on "
                                          f"disk runs on the unabstracted game")
            targets = self.state_arrays()
            group = handle["solver_state"]
            state = SolverState({name: dataset_checked(handle, f"solver_state/{name}", "<f8")
                                 for name in targets if name in group},
                                int(group.attrs["iteration"]))
            try:  # names, shapes and dtypes here; values slice by slice as they are copied
                state.check(targets, finite=False)
            except FileFormatError as exc:
                raise FileFormatError(f"{path}: {exc}") from exc
            for name, target in targets.items():
                self._copy_verified(name, state.arrays[name], target)
            history = dataset_checked(handle, "provenance/nash_conv", HISTORY_DTYPE)
            verify_dataset(history)
            record = handle["provenance"]
            self.iteration = state.iteration
            provenance = {
                "algorithm": str(record.attrs["algorithm"]),
                "parameters": json.loads(str(record.attrs["parameters"])),
                "iterations": int(record.attrs["iterations"]),
                "nash_conv_history": [(int(i), float(v)) for i, v in history[()].tolist()],
            }
        self._rematch()
        return provenance

    def _rematch(self) -> None:
        for player in (0, 1):
            self._match(player, self.iteration)

    def _copy_verified(self, name: str, dataset: h5py.Dataset, target: np.ndarray) -> None:
        """Copy state array ``name`` from ``dataset`` (shape checked) into ``target`` slice by
        slice, checking its values and its checksum."""
        digest = hashlib.sha256()
        for part in slices(dataset.shape[0], 8):
            block = np.ascontiguousarray(dataset[part])
            check_finite(name, block)
            digest.update(memoryview(block).cast("B"))
            target[part] = block
            self._relieve()
        if digest.hexdigest() != str(dataset.attrs.get("sha256")):
            raise FileFormatError(f"{dataset.file.filename}: strategy file is corrupted "
                                  f"(checksum of {dataset.name})")

    def close(self) -> None:
        self.regrets = self.average_accumulator = None
        self._arrays.clear()
        self._players = self._action_offset = self._infoset_offset = None
        self._mapped.close()

