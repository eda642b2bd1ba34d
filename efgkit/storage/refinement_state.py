"""Refinement checkpoints: the whole state of a CFR+IRA or FPIRA run, to resume bit-identically.

A checked HDF5 file (``efgkit.io.checked_hdf5``: format and schema version, sha256 per
dataset, manifest digest; written atomically) holding the game's spec and fingerprint, the
algorithm and its parameters, every array of ``RefinementState`` (the refinable map, the
regrets or averages, the samples), its counters and random-generator state, and the
evaluation history so far.
"""

from __future__ import annotations

import json
import os

import h5py

from efgkit.abstraction.refinement import RefinementRecord, RefinementState
from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.tree import GameTree
from efgkit.io.checked_hdf5 import (
    attribute,
    checked_output,
    open_checked,
    read_dataset,
    write_dataset,
)
from efgkit.io.metadata import checked, checked_fields

FORMAT = "efgkit-refinement-state"
SCHEMA_VERSION = 1
RECORD_FIELDS = {"iteration": int, "nash_conv": float, "abstract_infosets": int, "memory_words": int,
                 "map_entries": int, "seconds": float}
"""A ``RefinementRecord``'s fields by type."""


def save_refinement_state(path: str | os.PathLike, tree: GameTree, algorithm: str, parameters: dict,
                          state: RefinementState) -> None:
    """Write ``state`` (with its history) for ``tree`` to ``path``, atomically."""
    with checked_output(path, FORMAT, SCHEMA_VERSION, "the refinement state") as handle:
        handle.attrs.update(
            game_spec=tree.spec, tree_fingerprint=tree.fingerprint, algorithm=algorithm,
            parameters=json.dumps(parameters, sort_keys=True), numbers=json.dumps(state.numbers),
            rng_state=json.dumps(state.rng_state),
            history=json.dumps([vars(record) for record in state.history]))
        arrays = handle.create_group("arrays")
        for name, array in state.arrays.items():
            write_dataset(arrays, name, array, compressed=False)


def recorded_conventions(path: str | os.PathLike) -> str:
    """The conventions the run checkpointed at ``path`` used: its recorded ``conventions``
    parameter, or "paper" when it records none (paper-convention runs record no key, and
    every checkpoint written before the option existed is one)."""
    with open_checked(path, FORMAT, SCHEMA_VERSION, "refinement state file") as handle:
        parameters = attribute(handle, "parameters", dict, json_text=True)
    conventions = parameters.get("conventions", "paper")
    if conventions not in ("paper", "reference"):
        raise FileFormatError(f"{path}: /@parameters records unknown conventions {conventions!r}")
    return conventions


def load_refinement_state(path: str | os.PathLike, tree: GameTree, algorithm: str,
                          parameters: dict) -> RefinementState:
    """The state saved at ``path``, checked: the same game, algorithm and parameters."""
    with open_checked(path, FORMAT, SCHEMA_VERSION, "refinement state file") as handle:
        attrs = handle.attrs
        if (str(attrs["game_spec"]), str(attrs["tree_fingerprint"])) != (tree.spec, tree.fingerprint):
            raise FileFormatError(f"{path}: the refinement state is for game {str(attrs['game_spec'])!r} "
                                  f"(or other rules), not {tree.spec!r}")
        stored = (str(attrs["algorithm"]), json.loads(str(attrs["parameters"])))
        if stored != (algorithm, json.loads(json.dumps(parameters, sort_keys=True))):
            raise ParameterError(f"{path}: the run was {stored[0]} with {stored[1]}; resume it with the "
                                 f"same algorithm and parameters")
        names: list[str] = []
        handle["arrays"].visititems(lambda name, item: names.append(name)
                                    if isinstance(item, h5py.Dataset) else None)
        arrays = {name: read_dataset(handle["arrays"], name) for name in names}
        numbers = attribute(handle, "numbers", dict, json_text=True)
        for name, value in numbers.items():
            checked(value, float, f"{path}: /@numbers field {name!r}")
        records = attribute(handle, "history", list, json_text=True)
        for index, record in enumerate(records):
            checked_fields(record, RECORD_FIELDS, f"{path}: /@history entry {index}",
                           required=tuple(RECORD_FIELDS))
        history = [RefinementRecord(**record) for record in records]
        return RefinementState(arrays, numbers, attribute(handle, "rng_state", (dict, None), json_text=True),
                               history)
