"""HDF5 strategy files: a Strategy, the InfosetMap it lives on, and how it was computed.

The schema (version 1) is documented in docs/file-format.md. Files carry their own
format name and schema version (as h5py/xarray users expect) and the game's canonical
spec and tree fingerprint, so a reader refuses a file for another game, of a future
version, or damaged, with a one-line FileFormatError instead of returning garbage.
Writes go to a temporary file in the destination directory that replaces the
destination only once complete (``os.replace``), so a failure never damages an
existing file.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

import efgkit
from efgkit.abstraction.infoset_map import InfosetMap
from efgkit.errors import EfgkitError, FileFormatError, ParameterError
from efgkit.games.registry import load_game
from efgkit.games.tree import GameTree
from efgkit.solvers.strategy import Strategy

FORMAT = "efgkit-strategy"
SCHEMA_VERSION = 1
HISTORY_DTYPE = np.dtype([("iteration", "<i8"), ("nash_conv", "<f8")])
PROVENANCE_KEYS = ("algorithm", "parameters", "iterations", "nash_conv_history")


@contextmanager
def atomic_output_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, else vanishes.

    The temporary file lives in the same directory so ``os.replace`` is atomic, and it is
    fsynced first, so a crash leaves either the old file or the complete new one.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        yield temporary
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


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


def _content_digest(game_spec: str, tree_fingerprint: str, abstract_of: np.ndarray,
                    probabilities: np.ndarray, algorithm: str, parameters: str, iterations: int,
                    history: np.ndarray) -> str:
    """sha256 over everything a reader uses, so a flipped byte in the data cannot load silently.

    HDF5 checksums its own metadata (libver v108 object headers); this covers the data.
    """
    digest = hashlib.sha256()
    for text in (game_spec, tree_fingerprint, algorithm, parameters, str(iterations)):
        digest.update(text.encode())
        digest.update(b"\x1f")
    for array, dtype in ((abstract_of, "<i4"), (probabilities, "<f8"), (history, HISTORY_DTYPE)):
        digest.update(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return digest.hexdigest()


def save_strategy(path: str | os.PathLike, strategy: Strategy, *, provenance: dict) -> None:
    """Write ``strategy`` with its InfosetMap and provenance to an HDF5 file, atomically.

    ``provenance`` holds ``algorithm`` (str, required), ``parameters`` (a JSON-serialisable
    dict), ``iterations`` (int) and ``nash_conv_history`` ((iteration, nash_conv) pairs).
    Raises ParameterError for bad provenance and FileFormatError if the file cannot be
    written; an existing file at ``path`` is left untouched in both cases.
    """
    algorithm, parameters, iterations, history = _checked_provenance(provenance)
    tree = strategy.tree
    abstract_of = strategy.infoset_map.abstract_of.astype(np.int32)
    probabilities = strategy.probabilities.astype(np.float64)
    digest = _content_digest(tree.spec, tree.fingerprint, abstract_of, probabilities, algorithm,
                             parameters, iterations, history)
    try:
        with atomic_output_path(path) as temporary:
            # v108 object headers carry checksums, so damaged metadata is detected.
            with h5py.File(temporary, "w-", libver=("v108", "v108")) as handle:
                handle.attrs["format"] = FORMAT
                handle.attrs["schema_version"] = SCHEMA_VERSION
                handle.attrs["efgkit_version"] = efgkit.__version__
                handle.attrs["game_spec"] = tree.spec
                handle.attrs["tree_fingerprint"] = tree.fingerprint
                handle.attrs["content_sha256"] = digest
                handle.create_group("abstraction").create_dataset("abstract_of", data=abstract_of)
                handle.create_group("strategy").create_dataset("probabilities", data=probabilities)
                record = handle.create_group("provenance")
                record.attrs["algorithm"] = algorithm
                record.attrs["parameters"] = parameters
                record.attrs["iterations"] = iterations
                record.create_dataset("nash_conv", data=history)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write strategy file ({_one_line(exc)})") from exc


def _read_raw(path: str | os.PathLike) -> dict:
    """Everything the file holds, as plain Python / in-memory numpy objects."""
    with h5py.File(path, "r") as handle:
        attrs = handle.attrs
        if attrs.get("format") != FORMAT:
            raise FileFormatError(f"{path}: not an efgkit strategy file")
        version = attrs["schema_version"]
        if not isinstance(version, int | np.integer):
            raise FileFormatError(f"{path}: schema_version {version!r} is not an integer")
        if version > SCHEMA_VERSION:
            raise FileFormatError(
                f"{path}: strategy file schema version {int(version)} is newer than this efgkit "
                f"({efgkit.__version__}) reads ({SCHEMA_VERSION}); upgrade efgkit"
            )
        if version < 1:
            raise FileFormatError(f"{path}: invalid schema version {int(version)}")
        record = handle["provenance"]
        game_spec = str(attrs["game_spec"])
        tree_fingerprint = str(attrs["tree_fingerprint"])
        abstract_of = np.asarray(handle["abstraction/abstract_of"][()])
        probabilities = np.asarray(handle["strategy/probabilities"][()])
        history = np.asarray(record["nash_conv"][()])
        algorithm = str(record.attrs["algorithm"])
        parameters = str(record.attrs["parameters"])
        iterations = int(record.attrs["iterations"])
        if history.dtype != HISTORY_DTYPE:
            raise FileFormatError(f"{path}: /provenance/nash_conv has dtype {history.dtype}")
        if not np.issubdtype(abstract_of.dtype, np.integer):
            raise FileFormatError(f"{path}: /abstraction/abstract_of has dtype {abstract_of.dtype}")
        digest = _content_digest(game_spec, tree_fingerprint, abstract_of, probabilities,
                                 algorithm, parameters, iterations, history)
        if str(attrs["content_sha256"]) != digest:
            raise FileFormatError(f"{path}: strategy file is corrupted (content checksum mismatch)")
        return {
            "game_spec": game_spec,
            "tree_fingerprint": tree_fingerprint,
            "abstract_of": abstract_of,
            "probabilities": probabilities,
            "provenance": {
                "algorithm": algorithm,
                "parameters": json.loads(parameters),
                "iterations": iterations,
                "nash_conv_history": [(int(i), float(v)) for i, v in history.tolist()],
                "efgkit_version": str(attrs["efgkit_version"]),
            },
        }


def load_strategy(path: str | os.PathLike, tree: GameTree | None = None) -> tuple[Strategy, dict]:
    """Read a strategy file; returns the Strategy and its provenance dict.

    With ``tree`` the file must be for that tree (same canonical spec and fingerprint);
    without, the game is compiled from the stored spec. The provenance has the keys
    ``save_strategy`` takes plus ``efgkit_version`` (of the writer). Every problem with the
    file raises FileFormatError with a one-line message.
    """
    if not Path(path).is_file():
        raise FileFormatError(f"{path}: no such strategy file")
    try:
        raw = _read_raw(path)
    except FileFormatError:
        raise
    except (OSError, KeyError, ValueError, TypeError, AttributeError, RuntimeError) as exc:
        raise FileFormatError(f"{path}: cannot read strategy file ({_one_line(exc)})") from exc
    spec = raw["game_spec"]
    if tree is None:
        try:
            tree = load_game(spec)
        except EfgkitError as exc:
            raise FileFormatError(
                f"{path}: cannot build the file's game {spec!r} ({_one_line(exc)})"
            ) from exc
    if spec != tree.spec:
        raise FileFormatError(f"{path}: strategy is for game {spec!r}, not {tree.spec!r}")
    if raw["tree_fingerprint"] != tree.fingerprint:
        raise FileFormatError(
            f"{path}: strategy was computed on a different tree of {spec!r} (fingerprint "
            f"mismatch; the game's rules changed since the file was written)"
        )
    abstract_of = raw["abstract_of"]
    try:
        infoset_map = InfosetMap(tree, abstract_of)
        if not np.array_equal(infoset_map.abstract_of, abstract_of):
            raise FileFormatError(f"{path}: /abstraction/abstract_of is not numbered canonically")
        strategy = Strategy(infoset_map, raw["probabilities"])
    except FileFormatError:
        raise
    except EfgkitError as exc:
        raise FileFormatError(f"{path}: corrupted strategy file ({_one_line(exc)})") from exc
    return strategy, raw["provenance"]
