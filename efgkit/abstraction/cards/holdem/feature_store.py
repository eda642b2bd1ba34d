"""The hold'em feature file: every street's features by canonical index, resumable per street.

One HDF5 file (``checked_hdf5`` conventions: format, schema version, per-dataset sha256,
manifest checksum). Root attributes fix what the features mean: ``num_ranks`` (the deck),
``bins`` (histogram bins), ``opponent_clusters`` and ``opponent_seed`` (how the preflop
classes were grouped for OCHS), ``rounds`` (the game's rounds: the last street's features are
final-round ones, and every earlier one looks ahead to that board only; files without it
have four). A reader refuses a file made with other values, so a
file can never silently serve features of another deck or binning.

Layout (schema version 1), datasets chunked and LZF-compressed, row ``i`` = canonical
index ``i`` of ``HandIndexer((2, k))`` (the board as one group; ``(2,)`` preflop):

* ``/preflop``: ``ehs``, ``ehs2`` (float64), ``histogram`` (float64, classes x bins),
  ``weight`` (uint32, hole pairs per class), ``opponent_cluster`` (int32, the OCHS
  cluster of every class);
* ``/flop``, ``/turn``: ``histogram`` (runout counts per bin: uint16 on the flop, uint8 on
  the turn), ``ehs``, ``ehs2`` (float32), ``weight`` (uint32: concrete (hole, board) pairs
  the canonical hand stands for);
* ``/river`` (the final street: ``/flop`` or ``/turn`` with fewer rounds): ``ehs`` (float32),
  ``ochs`` (float32, hands x opponent clusters), ``weight``.

A street is written only when complete, into a new file that replaces the old one
atomically (the finished streets are copied over), so a crash loses at most the street
being computed and a rerun with the same file skips what is done.
"""

from __future__ import annotations

import os
from pathlib import Path

import h5py
import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.io.checked_hdf5 import checked_output, open_checked, read_dataset, write_dataset

FORMAT = "efgkit-holdem-features"
SCHEMA_VERSION = 1
STREETS = ("preflop", "flop", "turn", "river")
PREFLOP_DATASETS = ("ehs", "ehs2", "histogram", "weight", "opponent_cluster")
STREET_DATASETS = ("histogram", "ehs", "ehs2", "weight")
FINAL_DATASETS = ("ehs", "ochs", "weight")


class FeatureStore:
    """The features file at ``path`` for one deck, binning and opponent clustering.

    A missing file is an empty store; an existing one must have been made with the same
    parameters (else FileFormatError, naming the difference).
    """

    def __init__(self, path: str | os.PathLike, *, num_ranks: int, bins: int, opponent_clusters: int,
                 opponent_seed: int, rounds: int = 4) -> None:
        self.path = Path(path)
        self.parameters = {"num_ranks": int(num_ranks), "bins": int(bins),
                           "opponent_clusters": int(opponent_clusters), "opponent_seed": int(opponent_seed),
                           "rounds": int(rounds)}
        self.datasets = {street: STREET_DATASETS for street in STREETS[1:rounds - 1]}
        self.datasets.update({"preflop": PREFLOP_DATASETS, STREETS[rounds - 1]: FINAL_DATASETS})
        self._complete: tuple[str, ...] = ()
        if self.path.exists():
            with self._open() as handle:
                for name, value in self.parameters.items():
                    stored = handle.attrs.get(name, len(STREETS) if name == "rounds" else None)
                    if stored is None or int(stored) != value:
                        raise FileFormatError(
                            f"{self.path}: features were computed with {name}={stored}, not {value}; "
                            f"use another features file or the same options")
                self._complete = tuple(street for street in STREETS
                                       if street in self.datasets and street in handle)

    def _open(self):
        return open_checked(self.path, FORMAT, SCHEMA_VERSION, "hold'em feature file")

    @property
    def streets(self) -> tuple[str, ...]:
        """The streets already stored."""
        return self._complete

    def read(self, street: str) -> dict[str, np.ndarray]:
        """Every dataset of ``street``, each checked against its sha256."""
        if street not in self._complete:
            raise FileFormatError(f"{self.path}: has no {street} features")
        with self._open() as handle:
            group = handle[street]
            return {name: read_dataset(group, name) for name in self.datasets[street]}

    def write(self, street: str, arrays: dict[str, np.ndarray]) -> None:
        """Add ``street`` (replacing it if present): a new file with the stored streets copied,
        atomically replacing the old one."""
        if street not in self.datasets or set(arrays) != set(self.datasets[street]):
            raise ParameterError(f"{street} needs exactly the datasets {self.datasets.get(street)}")
        with checked_output(self.path, FORMAT, SCHEMA_VERSION, "the feature file") as handle:
            for name, value in self.parameters.items():
                handle.attrs[name] = value
            if self._complete:
                with h5py.File(self.path, "r") as old:
                    for kept in self._complete:
                        if kept != street:
                            old.copy(old[kept], handle, name=kept)
            group = handle.create_group(street)
            for name in self.datasets[street]:
                write_dataset(group, name, arrays[name], compressed=True)
        self._complete = tuple(s for s in STREETS if s in self._complete or s == street)
