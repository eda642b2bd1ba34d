"""HDF5 files of strategies on card abstractions (``BucketLayout`` rows), the streamed poker
engine's strategy files.

One file holds the average strategy (one float64 per row action), the solver state that
continues the run (``solver_state/``: regrets, average accumulator and the variant's other
arrays, each in the type the solver keeps it — float64, float32 or int32), the game's
canonical spec with a digest of its betting tree, a reference to the card abstraction
(``named_abstractions.abstraction_from_reference``: a word, or a bucket file's path and content
digest; a reader opens that file's name beside this one, or the file the user names, and
checks the digest) and the provenance (algorithm, parameters, precision,
iterations and, for a resumable solve, the sampler's RNG state and the evaluation history).
The conventions of every efgkit HDF5 file (``io.checked_hdf5``): format name and schema
version, a sha256 per dataset and over the metadata, written atomically — a checkpoint
replaces the previous one only once complete.

Schema 2 keeps the solver state in its own type (schema 1 stored it as float64 and had no
sampler state); schema 1 files still load, and a solve cannot resume from one.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from efgkit.errors import FileFormatError
from efgkit.games.poker import LimitPoker
from efgkit.io.checked_hdf5 import (
    attribute,
    checked_output,
    hdf5_format,
    open_checked,
    read_dataset,
    write_dataset,
)
from efgkit.io.metadata import checked, checked_fields
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.named_abstractions import abstraction_from_reference, check_recorded

FORMAT = "efgkit-bucket-strategy"
SCHEMA_VERSION = 2
WHAT = "bucket strategy file"
PROVENANCE_FIELDS = {"algorithm": str, "iterations": int, "parameters": dict, "precision": str,
                     "seed": (int, None), "engine": str, "rng_state": dict, "seconds": float, "history": list}
"""The provenance fields readers use, by type (``algorithm`` and ``iterations`` required); a
``history`` entry holds an integer ``iteration``, texts under ``*_text`` and numbers."""


def checked_provenance(provenance: object, where: str) -> dict:
    """``provenance`` after checking its fields by type (``PROVENANCE_FIELDS``); a mismatch is a
    FileFormatError naming ``where`` and the field."""
    checked_fields(provenance, PROVENANCE_FIELDS, where, required=("algorithm", "iterations"))
    if provenance["iterations"] < 0:
        raise FileFormatError(f"{where} field 'iterations' is {provenance['iterations']}, expected >= 0")
    for index, point in enumerate(provenance.get("history", [])):
        entry = f"{where} history entry {index}"
        checked_fields(point, {}, entry, required=("iteration",))
        for key, value in point.items():
            checked(value, int if key == "iteration" else str if key.endswith("_text") else float,
                    f"{entry} field {key!r}")
    return provenance


def betting_digest(betting: BettingTree) -> str:
    """sha256 of the betting tree's shape and chips: files for other betting rules differ."""
    digest = hashlib.sha256()
    for array in (betting.kind, betting.num_children, betting.contribution):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def is_bucket_strategy_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a file of this format (``checked_hdf5.hdf5_format``; a damaged
    file is not one, and its own reader reports the damage)."""
    return hdf5_format(path) == FORMAT


def save_bucket_strategy(path: str | os.PathLike, layout: BucketLayout, strategy: np.ndarray,
                         provenance: dict, state: dict[str, np.ndarray] | None = None) -> None:
    """Write ``strategy`` (and the solver ``state`` arrays, in their own dtypes) on ``layout``
    atomically; ``provenance`` must be JSON-serialisable, with the fields its readers expect
    (``checked_provenance``). A card abstraction the file could not name again
    (``check_recorded``) is refused before anything is written."""
    check_recorded(layout.abstraction.reference)
    checked_provenance(provenance, "the provenance to write")
    expected = 8 * int(np.size(strategy)) + sum(int(np.asarray(a).nbytes) for a in (state or {}).values())
    with checked_output(path, FORMAT, SCHEMA_VERSION, f"the {WHAT}", expected) as handle:
        handle.attrs["game"] = layout.betting.game.spec
        handle.attrs["betting_sha256"] = betting_digest(layout.betting)
        handle.attrs["abstraction"] = json.dumps(layout.abstraction.reference, sort_keys=True)
        handle.attrs["provenance"] = json.dumps(provenance, sort_keys=True)
        write_dataset(handle, "strategy", np.asarray(strategy, np.float64), compressed=False)
        group = handle.create_group("solver_state")
        for name, array in (state or {}).items():
            write_dataset(group, name, np.asarray(array), compressed=False)


def stored_game(path: str | os.PathLike) -> str:
    """The game spec a bucket-strategy file names, from its checked metadata (a caller builds
    the game itself: ``efgkit.specs.spec_a_file_names``)."""
    with open_checked(path, FORMAT, SCHEMA_VERSION, WHAT) as handle:
        return attribute(handle, "game", str)


def load_bucket_strategy(path: str | os.PathLike, game: LimitPoker,
                         bucket_file=None) -> tuple[BucketLayout, np.ndarray, dict, dict[str, np.ndarray]]:
    """(layout, strategy, provenance, solver state) of a file for ``game``. Its bucket file is
    ``bucket_file`` if given, else the recorded file's name beside ``path`` (never a folder the
    file names); it must have the recorded digest."""
    betting = BettingTree(game)
    with open_checked(path, FORMAT, SCHEMA_VERSION, WHAT) as handle:
        stored_game = attribute(handle, "game", str)
        if stored_game != game.spec:
            raise FileFormatError(f"{path}: the strategy is for {stored_game!r}, not {game.spec!r}")
        if attribute(handle, "betting_sha256", str) != betting_digest(betting):
            raise FileFormatError(f"{path}: the strategy's betting tree is not {game.spec}'s")
        reference = attribute(handle, "abstraction", dict, json_text=True)
        provenance = checked_provenance(attribute(handle, "provenance", dict, json_text=True),
                                        f"{path}: /@provenance")
        strategy = read_dataset(handle, "strategy")
        group = handle["solver_state"] if "solver_state" in handle else {}
        state = {name: read_dataset(group, name) for name in group}
    layout = BucketLayout(betting, abstraction_from_reference(game, reference, bucket_file, path))
    if strategy.shape != (layout.num_actions,):
        raise FileFormatError(f"{path}: {strategy.shape[0] if strategy.ndim else 0:,} strategy entries, the "
                              f"abstraction has {layout.num_actions:,}")
    return layout, layout.checked(strategy), provenance, state
