"""HDF5 strategy files: a Strategy, its InfosetMap, how it was computed, and how to continue.

Schema version 2 (docs/file-format.md) is the one schema of efgkit's strategy files: the
strategy with its InfosetMap and provenance, and optionally the solver state that
continues the run (a checkpoint: regrets, average accumulators, iteration counter, RNG
state). Every dataset is contiguous, so it can be memory-mapped (``mapped_arrays``), and
carries its own sha256; the root ``content_sha256`` covers every attribute and those
digests. Version 1 files (no solver state, one checksum over the data) are still read.

Files carry their own format name and schema version (as h5py/xarray users expect) and
the game's canonical spec and tree fingerprint, so a reader refuses a file for another
game, of a future version, or damaged, with a one-line FileFormatError instead of
returning garbage. Writes go to a temporary file in the destination directory that
replaces the destination only once complete and flushed (``os.replace``), so a failure
or a kill never damages an existing file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import h5py
import numpy as np

from efgkit.core.solver_state import SolverState
from efgkit.errors import EfgkitError, FileFormatError, ParameterError
from efgkit.games.tree import GameTree
from efgkit.io.checked_hdf5 import attribute, checked_output, open_checked, verify_dataset
from efgkit.io.error_text import one_line
from efgkit.io.mapped_arrays import write_contiguous
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.strategy import Strategy

FORMAT = "efgkit-strategy"
SCHEMA_VERSION = 2
HISTORY_DTYPE = np.dtype([("iteration", "<i8"), ("nash_conv", "<f8")])
PROVENANCE_KEYS = ("algorithm", "parameters", "iterations", "nash_conv_history")


STATE_ARRAYS = ("regrets", "average_accumulator", "prediction", "volatility")
"""The solver-state arrays a strategy file holds (float64, one per abstract infoset-action but
the volatility, one per abstract infoset), in this order; the prediction only for the
predictive CFR variants, the volatility only for VAD-CFR."""


def _checked_provenance(provenance: dict) -> tuple[str, str, int, np.ndarray]:
    unknown = sorted(set(provenance) - set(PROVENANCE_KEYS))
    if unknown:
        raise ParameterError(
            f"unknown provenance key {unknown[0]!r}; expected {', '.join(PROVENANCE_KEYS)}"
        )
    algorithm = provenance.get("algorithm")
    if not isinstance(algorithm, str) or not algorithm:
        raise ParameterError("provenance needs 'algorithm', a non-empty string")
    try:
        parameters = json.dumps(provenance.get("parameters", {}), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"provenance 'parameters' must be JSON-serialisable: {exc}") from exc
    iterations = provenance.get("iterations", 0)
    if isinstance(iterations, bool) or not isinstance(iterations, int | np.integer) or iterations < 0:
        raise ParameterError(f"provenance 'iterations' must be an integer >= 0, got {iterations!r}")
    history = _history_array(provenance.get("nash_conv_history", ()))
    return algorithm, parameters, int(iterations), history


def _history_array(history: Sequence) -> np.ndarray:
    """(iteration, nash_conv) pairs, or dicts with those keys, as a structured array."""
    rows = []
    for entry in history:
        if isinstance(entry, dict):
            entry = (entry.get("iteration"), entry.get("nash_conv"))
        try:
            iteration, value = entry
            rows.append((int(iteration), float(value)))
        except (TypeError, ValueError) as exc:
            raise ParameterError(
                f"provenance 'nash_conv_history' entries must be (iteration, nash_conv), "
                f"got {entry!r}"
            ) from exc
    return np.array(rows, dtype=HISTORY_DTYPE)


def _state_arrays(solver_state: SolverState) -> tuple[str, ...]:
    """The names of the state's arrays, checked against ``STATE_ARRAYS``."""
    names = tuple(solver_state.arrays)
    if names not in (STATE_ARRAYS[:2], STATE_ARRAYS[:3], STATE_ARRAYS):
        raise ParameterError(f"a strategy file holds the solver state {', '.join(STATE_ARRAYS[:2])} "
                             f"(and prediction, and volatility), not {', '.join(names)}")
    return names


def _checked_rng_state(solver_state: SolverState) -> str:
    try:
        return json.dumps(solver_state.rng_state, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"the solver's rng_state must be JSON-serialisable: {exc}") from exc


# ----------------------------------------------------------------------------- writing
def _write_array(group: h5py.Group, name: str, array: np.ndarray, dtype: np.dtype | str,
                 after_slice: Callable[[], None] | None = None) -> None:
    """A contiguous dataset holding ``array`` (copied in slices) with its sha256 as attribute.

    ``after_slice`` runs after each slice, e.g. to drop the pages of a memory-mapped source.
    """
    digest = hashlib.sha256()

    def written(block: np.ndarray) -> None:
        digest.update(memoryview(block).cast("B"))
        if after_slice is not None:
            after_slice()

    dataset = write_contiguous(group, name, array, dtype, written)
    dataset.attrs["sha256"] = digest.hexdigest()


def write_strategy_file(path: str | os.PathLike, *, game_spec: str, tree_fingerprint: str,
                        abstract_of: np.ndarray, probabilities: np.ndarray, provenance: dict,
                        solver_state: SolverState | None = None,
                        after_slice: Callable[[], None] | None = None) -> None:
    """Write a schema-2 file from plain arrays (which may be memory maps), atomically.

    ``save_strategy`` is the usual entry point; this one serves solves whose arrays live
    on disk and never become a Strategy in memory (``probabilities`` then only needs
    ``shape`` and slicing). Arrays are copied in slices, calling ``after_slice`` after
    each. Raises ParameterError for bad provenance and FileFormatError if the file cannot
    be written; an existing file at ``path`` is left untouched in both cases.
    """
    algorithm, parameters, iterations, history = _checked_provenance(provenance)
    rng_state = _checked_rng_state(solver_state) if solver_state is not None else None
    state_items = 0 if solver_state is None else sum(np.size(solver_state.arrays[name])
                                                       for name in _state_arrays(solver_state))
    expected = 4 * int(np.size(abstract_of)) + 8 * (int(np.size(probabilities)) + state_items)
    with checked_output(path, FORMAT, SCHEMA_VERSION, "strategy file", expected) as handle:
        handle.attrs["game_spec"] = game_spec
        handle.attrs["tree_fingerprint"] = tree_fingerprint
        _write_array(handle.create_group("abstraction"), "abstract_of", abstract_of, "<i4")
        _write_array(handle.create_group("strategy"), "probabilities", probabilities,
                     "<f8", after_slice)
        record = handle.create_group("provenance")
        record.attrs["algorithm"] = algorithm
        record.attrs["parameters"] = parameters
        record.attrs["iterations"] = iterations
        _write_array(record, "nash_conv", history, HISTORY_DTYPE)
        if solver_state is not None:
            state = handle.create_group("solver_state")
            state.attrs["iteration"] = int(solver_state.iteration)
            state.attrs["rng_state"] = rng_state
            for name in _state_arrays(solver_state):
                _write_array(state, name, solver_state.arrays[name], "<f8", after_slice)


def save_strategy(path: str | os.PathLike, strategy: Strategy, *, provenance: dict,
                  solver_state: SolverState | None = None) -> None:
    """Write ``strategy`` with its InfosetMap and provenance to an HDF5 file, atomically.

    ``provenance`` holds ``algorithm`` (str, required), ``parameters`` (a JSON-serialisable
    dict), ``iterations`` (int) and ``nash_conv_history`` ((iteration, nash_conv) pairs).
    With ``solver_state`` the file is also a checkpoint that ``load_checkpoint`` resumes.
    Raises ParameterError for bad provenance or state and FileFormatError if the file
    cannot be written; an existing file at ``path`` is left untouched in both cases.
    """
    tree = strategy.tree
    if solver_state is not None:
        infoset_map = strategy.infoset_map
        for name in _state_arrays(solver_state):
            rows = infoset_map.num_abstract if name == "volatility" else infoset_map.num_abstract_actions
            expected = (rows,)
            if np.shape(solver_state.arrays[name]) != expected:
                raise ParameterError(f"solver state {name} has shape "
                                     f"{np.shape(solver_state.arrays[name])}, expected {expected}")
    write_strategy_file(path, game_spec=tree.spec, tree_fingerprint=tree.fingerprint,
                        abstract_of=strategy.infoset_map.abstract_of,
                        probabilities=strategy.probabilities, provenance=provenance,
                        solver_state=solver_state)


# ----------------------------------------------------------------------------- reading
def _content_digest_v1(game_spec: str, tree_fingerprint: str, abstract_of: np.ndarray,
                       probabilities: np.ndarray, algorithm: str, parameters: str,
                       iterations: int, history: np.ndarray) -> str:
    """Schema 1's single sha256 over the metadata fields and then the data."""
    digest = hashlib.sha256()
    for text in (game_spec, tree_fingerprint, algorithm, parameters, str(iterations)):
        digest.update(text.encode())
        digest.update(b"\x1f")
    for array, dtype in ((abstract_of, "<i4"), (probabilities, "<f8"), (history, HISTORY_DTYPE)):
        digest.update(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return digest.hexdigest()


def open_strategy_file(path: str | os.PathLike) -> AbstractContextManager[h5py.File]:
    """``checked_hdf5.open_checked`` for strategy files: a context manager yielding the h5py
    file once format, version and (schema 2) the manifest are checked; schema 1 files carry
    their own content checksum instead, which ``_read_v1`` checks."""
    return open_checked(path, FORMAT, SCHEMA_VERSION, "strategy file", manifest_since=2)


def dataset_checked(handle: h5py.File, name: str, dtype: np.dtype | str) -> h5py.Dataset:
    """The dataset ``name`` after checking it exists, is one-dimensional and has ``dtype``
    (``open_strategy_file`` has checked its declared size)."""
    if name not in handle:
        raise FileFormatError(f"{handle.filename}: /{name} is missing")
    dataset = handle[name]
    if not isinstance(dataset, h5py.Dataset) or dataset.ndim != 1:
        raise FileFormatError(f"{handle.filename}: /{name} is not a one-dimensional dataset")
    if dataset.dtype != np.dtype(dtype):
        raise FileFormatError(f"{handle.filename}: /{name} has dtype {dataset.dtype}, "
                              f"expected {np.dtype(dtype)}")
    return dataset


def _read_verified(handle: h5py.File, name: str, dtype: np.dtype | str) -> np.ndarray:
    dataset = dataset_checked(handle, name, dtype)
    data = np.asarray(dataset[()])
    verify_dataset(dataset, data)
    return data


def _provenance(handle: h5py.File, history: np.ndarray) -> dict:
    """The provenance attributes, each checked by type (``checked_hdf5.attribute``)."""
    record = handle["provenance"]
    return {
        "algorithm": attribute(record, "algorithm", str),
        "parameters": attribute(record, "parameters", dict, json_text=True),
        "iterations": attribute(record, "iterations", int),
        "nash_conv_history": [(int(i), float(v)) for i, v in history.tolist()],
        "efgkit_version": attribute(handle, "efgkit_version", str),
    }


def _game(handle: h5py.File) -> tuple[str, str]:
    return attribute(handle, "game_spec", str), attribute(handle, "tree_fingerprint", str)


def _read_v1(path: str | os.PathLike, handle: h5py.File) -> dict:
    game_spec, tree_fingerprint = _game(handle)
    abstract_of = np.asarray(dataset_checked(handle, "abstraction/abstract_of", "<i4")[()])
    probabilities = np.asarray(dataset_checked(handle, "strategy/probabilities", "<f8")[()])
    history = np.asarray(dataset_checked(handle, "provenance/nash_conv", HISTORY_DTYPE)[()])
    provenance = _provenance(handle, history)
    digest = _content_digest_v1(game_spec, tree_fingerprint, abstract_of, probabilities,
                                provenance["algorithm"], attribute(handle["provenance"], "parameters", str),
                                provenance["iterations"], history)
    if str(handle.attrs["content_sha256"]) != digest:
        raise FileFormatError(f"{path}: strategy file is corrupted (content checksum mismatch)")
    return {"game_spec": game_spec, "tree_fingerprint": tree_fingerprint,
            "abstract_of": abstract_of, "probabilities": probabilities,
            "provenance": provenance, "solver_state": None}


def _read_v2(handle: h5py.File, with_state: bool) -> dict:
    history = _read_verified(handle, "provenance/nash_conv", HISTORY_DTYPE)
    game_spec, tree_fingerprint = _game(handle)
    raw = {
        "game_spec": game_spec,
        "tree_fingerprint": tree_fingerprint,
        "abstract_of": _read_verified(handle, "abstraction/abstract_of", "<i4"),
        "probabilities": _read_verified(handle, "strategy/probabilities", "<f8"),
        "provenance": _provenance(handle, history),
        "solver_state": None,
    }
    if with_state and "solver_state" in handle:
        state = handle["solver_state"]
        raw["solver_state"] = SolverState(
            {name: _read_verified(handle, f"solver_state/{name}", "<f8")
             for name in STATE_ARRAYS if name in state},
            iteration=attribute(state, "iteration", int),
            rng_state=attribute(state, "rng_state", (dict, None), json_text=True),
        )
    return raw


def _read_raw(path: str | os.PathLike, with_state: bool) -> dict:
    """Everything the file holds, as plain Python / in-memory numpy objects, checked (an error
    reading it is a FileFormatError of ``open_checked``)."""
    with open_strategy_file(path) as handle:
        version = int(handle.attrs["schema_version"])
        return _read_v1(path, handle) if version == 1 else _read_v2(handle, with_state)


def stored_game(path: str | os.PathLike) -> tuple[str, str]:
    """The (canonical game spec, tree fingerprint) a strategy file names, from checked metadata.

    A caller builds the game itself (``efgkit.specs.game_of_strategy_file`` decides which
    stored specs are safe to build) and passes the tree to ``load_strategy``.
    """
    with open_strategy_file(path) as handle:
        return _game(handle)


def check_game(path: str | os.PathLike, game_spec: str, tree_fingerprint: str, tree: GameTree) -> GameTree:
    """``tree`` after checking that the file's spec and fingerprint are its own.

    A game read from a file (``efg:``, ``acpc:``) is identified by its content (the tree
    fingerprint), not by the path it was read from: the same game under another path is
    the same game, and a different file under the same name is still refused.
    """
    kind = game_spec.split(":", 1)[0]
    read_from_file = kind in ("efg", "acpc") and tree.spec.split(":", 1)[0] == kind
    if game_spec != tree.spec and not read_from_file:
        raise FileFormatError(f"{path}: strategy is for game {game_spec!r}, not {tree.spec!r}")
    if tree_fingerprint != (tree.fingerprint_as(game_spec) if read_from_file else tree.fingerprint):
        raise FileFormatError(
            f"{path}: strategy was computed on a different tree of {game_spec!r} (fingerprint "
            f"mismatch; the game's rules changed since the file was written)"
        )
    return tree


def _load(path: str | os.PathLike, tree: GameTree,
          with_state: bool) -> tuple[Strategy, dict, SolverState | None]:
    raw = _read_raw(path, with_state)
    tree = check_game(path, raw["game_spec"], raw["tree_fingerprint"], tree)
    abstract_of = raw["abstract_of"]
    try:
        infoset_map = InfosetMap(tree, abstract_of)
        if not np.array_equal(infoset_map.abstract_of, abstract_of):
            raise FileFormatError(f"{path}: /abstraction/abstract_of is not numbered canonically")
        strategy = Strategy(infoset_map, raw["probabilities"])
    except FileFormatError:
        raise
    except EfgkitError as exc:
        raise FileFormatError(f"{path}: corrupted strategy file ({one_line(exc)})") from exc
    state = raw["solver_state"]
    if state is not None:
        per_action = np.broadcast_to(np.float64(0.0), (infoset_map.num_abstract_actions,))
        per_infoset = np.broadcast_to(np.float64(0.0), (infoset_map.num_abstract,))
        try:
            state.check({name: per_infoset if name == "volatility" else per_action for name in state.arrays})
        except FileFormatError as exc:
            raise FileFormatError(f"{path}: {exc}; the checkpoint cannot be resumed") from exc
    return strategy, raw["provenance"], state


def load_strategy(path: str | os.PathLike, tree: GameTree) -> tuple[Strategy, dict]:
    """Read a strategy file (schema 1 or 2); returns the Strategy and its provenance dict.

    The file must be for ``tree`` (same canonical spec and fingerprint). The provenance has the keys
    ``save_strategy`` takes plus ``efgkit_version`` (of the writer). Every problem with the
    file raises FileFormatError with a one-line message.
    """
    strategy, provenance, _ = _load(path, tree, with_state=False)
    return strategy, provenance


def load_checkpoint(path: str | os.PathLike, tree: GameTree) -> tuple[Strategy, dict, SolverState]:
    """Read a checkpoint: the strategy, its provenance and the SolverState to resume from.

    Checks everything ``load_strategy`` checks, plus the state arrays' checksums and
    shapes; a file without solver state (written by ``--out``, or schema 1) is refused.
    """
    strategy, provenance, state = _load(path, tree, with_state=True)
    if state is None:
        raise FileFormatError(f"{path}: holds no solver state to resume from (a strategy "
                              f"written without --state)")
    return strategy, provenance, state
