"""HDF5 card-abstraction files: per-round buckets and the InfosetMap they make for one game.

Same conventions as strategy files (``strategy_file.py``, docs/file-format.md): the file
names its format and schema version, the game's canonical spec and tree fingerprint,
and a sha256 of its content; it is written atomically and every problem on reading is
a one-line FileFormatError.

Layout (schema version 1):

* attributes of ``/``: ``format`` = "efgkit-card-abstraction", ``schema_version``,
  ``efgkit_version``, ``game_spec``, ``tree_fingerprint``, ``content_sha256``,
  ``feature`` (ehs, ehs2, hist, ochs, pa, custom), ``recall`` (imperfect, perfect),
  ``parameters`` (JSON: bucket counts asked for, method, bins, seed, ...);
* ``/buckets/round_<r>``: int32, the bucket of every round-``r`` card situation
  (situations in ``CardSituations`` order: private hands x boards, lexicographic);
* ``/abstraction/abstract_of``: int32 per infoset, the InfosetMap (as in strategy files).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple

import h5py
import numpy as np

import efgkit
from efgkit.abstraction.cards.bucketing import RECALLS, CardAbstraction, poker_rules
from efgkit.errors import EfgkitError, FileFormatError
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.checked_hdf5 import attribute, hdf5_format, open_checked
from efgkit.io.error_text import one_line
from efgkit.io.input_files import referenced_file
from efgkit.maps.infoset_map import InfosetMap

FORMAT = "efgkit-card-abstraction"
SCHEMA_VERSION = 1


class StoredAbstraction(NamedTuple):
    infoset_map: InfosetMap
    card_abstraction: CardAbstraction
    recall: str
    content_sha256: str
    """The file's content digest, what a reference to it records."""
    path: str

    @property
    def reference(self) -> dict:
        """What a strategy solved on this abstraction records of it
        (``load_referenced_card_abstraction`` opens it again and checks the digest)."""
        return {"kind": "card-abstraction-file", "path": str(Path(self.path).resolve()),
                "sha256": self.content_sha256}


def _digest(attributes: dict[str, str], buckets: list[np.ndarray], abstract_of: np.ndarray) -> str:
    digest = hashlib.sha256()
    for name in sorted(attributes):
        digest.update(f"{name}={attributes[name]}".encode())
        digest.update(b"\x1f")
    for array in [*buckets, abstract_of]:
        digest.update(np.ascontiguousarray(array, dtype="<i4").tobytes())
        digest.update(b"\x1e")
    return digest.hexdigest()


def save_card_abstraction(path: str | os.PathLike, abstraction: CardAbstraction, tree: GameTree,
                          recall: str = "imperfect") -> InfosetMap:
    """Write ``abstraction`` and its InfosetMap on ``tree`` atomically; returns the map."""
    infoset_map = abstraction.infoset_map(tree, recall)
    attributes = {
        "game_spec": tree.spec, "tree_fingerprint": tree.fingerprint, "feature": abstraction.feature,
        "recall": recall, "parameters": json.dumps(abstraction.parameters, sort_keys=True),
    }
    abstract_of = infoset_map.abstract_of.astype(np.int32)
    digest = _digest(attributes, abstraction.labels, abstract_of)
    try:
        with atomic_output_path(path) as temporary:
            with h5py.File(temporary, "w-", libver=("v108", "v108")) as handle:
                handle.attrs["format"] = FORMAT
                handle.attrs["schema_version"] = SCHEMA_VERSION
                handle.attrs["efgkit_version"] = efgkit.__version__
                for name, value in attributes.items():
                    handle.attrs[name] = value
                handle.attrs["content_sha256"] = digest
                group = handle.create_group("buckets")
                for round_index, labels in enumerate(abstraction.labels):
                    group.create_dataset(f"round_{round_index}", data=labels.astype(np.int32))
                handle.create_group("abstraction").create_dataset("abstract_of", data=abstract_of)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write card abstraction file ({one_line(exc)})") from exc
    return infoset_map


def is_card_abstraction_file(path: str | os.PathLike) -> bool:
    """True if ``path`` is an HDF5 file that says it is a card abstraction
    (``checked_hdf5.hdf5_format``)."""
    return hdf5_format(path) == FORMAT


def _read(path: str | os.PathLike) -> dict:
    # Schema 1 carries its own content checksum (``_digest``), not a manifest.
    with open_checked(path, FORMAT, SCHEMA_VERSION, "card abstraction file",
                      manifest_since=SCHEMA_VERSION + 1) as handle:
        attrs = handle.attrs
        attributes = {name: attribute(handle, name, str) for name in
                      ("game_spec", "tree_fingerprint", "feature", "recall", "parameters")}
        rounds = len(handle["buckets"])
        buckets = [np.asarray(handle[f"buckets/round_{r}"][()]) for r in range(rounds)]
        abstract_of = np.asarray(handle["abstraction/abstract_of"][()])
        if _digest(attributes, buckets, abstract_of) != str(attrs["content_sha256"]):
            raise FileFormatError(f"{path}: card abstraction file is corrupted (content checksum mismatch)")
        return {**attributes, "parameters": attribute(handle, "parameters", dict, json_text=True),
                "buckets": buckets, "abstract_of": abstract_of,
                "content_sha256": str(attrs["content_sha256"])}


def load_card_abstraction(path: str | os.PathLike, tree: GameTree) -> StoredAbstraction:
    """Read a card abstraction file made for ``tree`` (same spec and fingerprint)."""
    raw = _read(path)
    if raw["game_spec"] != tree.spec:
        raise FileFormatError(
            f"{path}: the card abstraction is for game {raw['game_spec']!r}, not {tree.spec!r}")
    if raw["tree_fingerprint"] != tree.fingerprint:
        raise FileFormatError(
            f"{path}: the card abstraction was made on a different tree of {tree.spec!r} (fingerprint "
            f"mismatch; the game's rules changed since the file was written)"
        )
    if raw["recall"] not in RECALLS:
        raise FileFormatError(f"{path}: unknown recall {raw['recall']!r}")
    try:
        abstraction = CardAbstraction(poker_rules(tree).card_structure, raw["buckets"], raw["feature"],
                                      raw["parameters"])
        infoset_map = InfosetMap(tree, raw["abstract_of"])
        if not np.array_equal(abstraction.infoset_map(tree, raw["recall"]).abstract_of, raw["abstract_of"]):
            raise FileFormatError(f"{path}: /abstraction/abstract_of does not match the stored buckets")
    except FileFormatError:
        raise
    except EfgkitError as exc:
        raise FileFormatError(f"{path}: corrupted card abstraction file ({one_line(exc)})") from exc
    return StoredAbstraction(infoset_map, abstraction, raw["recall"], raw["content_sha256"], str(path))


def load_referenced_card_abstraction(reference: dict, tree: GameTree, what: str,
                                     path: str | os.PathLike | None = None) -> StoredAbstraction:
    """The card abstraction file a ``reference`` (``StoredAbstraction.reference``) in the
    file ``what`` names: ``path`` if the user gives one, else the recorded file's name beside
    ``what`` (never a folder the file names); its content digest must be the recorded one."""
    if (not isinstance(reference, dict) or reference.get("kind") != "card-abstraction-file"
            or not isinstance(reference.get("sha256"), str)):
        raise FileFormatError(f"{what}: unknown card abstraction reference {reference!r}")
    location = referenced_file(what, reference.get("path"), path, "card abstraction", "--card-abstraction")
    stored = load_card_abstraction(location, tree)
    if stored.content_sha256 != reference["sha256"]:
        raise FileFormatError(f"{location}: not the card abstraction {what} was solved on (its "
                              f"content digest differs)")
    return stored
