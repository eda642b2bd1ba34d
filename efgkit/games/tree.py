"""GameTree: a two-player zero-sum extensive-form game compiled into flat numpy arrays.

Nodes are in breadth-first order: every parent precedes its children and the children
of a node are contiguous, so a forward loop is a top-down pass and a backward loop a
bottom-up pass. Every kernel in efgkit works on these arrays; nothing in a hot path
walks Python objects (see DESIGN.md, "GameTree").

Stored per node (31 bytes): ``node_kind`` (int8: 0/1 player, 2 chance, 3 terminal),
``node_infoset`` (int32, -1 off decision nodes), ``node_first_child`` (int32),
``node_num_children`` (int16), ``node_public_state`` (int32), ``node_chance_prob``
(float64, probability of the chance edge into the node, 1 otherwise) and
``node_utility`` (float64, player 0's payoff at terminals, 0 elsewhere).
Derived on first use and cached: ``node_parent``, ``node_depth``, each player's last
own action on the path (``node_last_action``), perfect-recall data per infoset.

Per infoset: ``infoset_player``, ``infoset_num_actions`` and CSR ``infoset_action_offset``
(length infosets + 1) into flat per-action arrays, plus human-readable ``infoset_keys``
and ``action_labels`` (kept outside the kernels).

The kernels deriving data from these arrays live in ``tree_structure`` and are imported on
first use, so reading the game list never imports numba.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from efgkit.errors import FileFormatError, GameDefinitionError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.io.atomic import atomic_output_path
from efgkit.io.input_files import check_input_file

TREE_FILE_VERSION = 1

_NODE_ARRAYS = (
    "node_kind",
    "node_infoset",
    "node_first_child",
    "node_num_children",
    "node_public_state",
    "node_chance_prob",
    "node_utility",
)
_INFOSET_ARRAYS = ("infoset_player", "infoset_num_actions", "infoset_action_offset")


@dataclass(eq=False)
class GameTree:
    """A compiled game. Build one with ``efgkit.games.load_game(spec)``."""

    spec: str
    node_kind: np.ndarray
    node_infoset: np.ndarray
    node_first_child: np.ndarray
    node_num_children: np.ndarray
    node_public_state: np.ndarray
    node_chance_prob: np.ndarray
    node_utility: np.ndarray
    infoset_player: np.ndarray
    infoset_num_actions: np.ndarray
    infoset_action_offset: np.ndarray
    infoset_keys: list[str]
    action_labels: list[str]
    public_state_keys: list[str] = field(default_factory=list)
    game: object | None = field(default=None, repr=False)
    """The rules object the tree was built from, when there is one (card structure etc.)."""

    # ------------------------------------------------------------------ sizes
    @property
    def num_nodes(self) -> int:
        return int(self.node_kind.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_player.shape[0])

    @property
    def num_infoset_actions(self) -> int:
        return int(self.infoset_action_offset[-1])

    @cached_property
    def _kind_counts(self) -> np.ndarray:
        return np.bincount(self.node_kind, minlength=4)

    def sizes(self) -> dict[str, int | float]:
        """Histories, decision/chance/terminal nodes, infosets per player, bytes per node."""
        counts = self._kind_counts
        per_player = np.bincount(self.infoset_player, minlength=2)
        return {
            "histories": self.num_nodes,
            "decision_nodes": int(counts[0] + counts[1]),
            "chance_nodes": int(counts[CHANCE]),
            "terminal_nodes": int(counts[TERMINAL]),
            "infosets": self.num_infosets,
            "infosets_player0": int(per_player[0]),
            "infosets_player1": int(per_player[1]),
            "infoset_actions": self.num_infoset_actions,
            "max_depth": self.max_depth,
            "bytes_per_node": self.bytes_per_node(),
        }

    def bytes_per_node(self) -> float:
        """Bytes of the stored per-node arrays divided by the number of nodes."""
        stored = sum(getattr(self, name).itemsize for name in _NODE_ARRAYS)
        return float(stored)

    # ------------------------------------------------------------- derived data
    @cached_property
    def node_parent(self) -> np.ndarray:
        """int32 parent of each node (-1 at the root)."""
        from efgkit.games.tree_structure import parents_and_depths

        parent, _ = parents_and_depths(self.node_first_child, self.node_num_children)
        return parent

    @cached_property
    def node_depth(self) -> np.ndarray:
        """int16 depth of each node (root 0)."""
        from efgkit.games.tree_structure import parents_and_depths

        _, depth = parents_and_depths(self.node_first_child, self.node_num_children)
        return depth

    @cached_property
    def max_depth(self) -> int:
        """Depth of the deepest node (0 for a lone root), without deriving ``node_depth``.

        Breadth-first order puts a deepest node last; its depth is the length of its chain
        of parents, each found by binary search among the internal nodes' first children
        (increasing in breadth-first order).
        """
        internal = self.internal_nodes
        first_child = self.node_first_child[internal]
        node, depth = self.num_nodes - 1, 0
        while node > 0:
            node = int(internal[np.searchsorted(first_child, node, side="right") - 1])
            depth += 1
        return depth

    @cached_property
    def internal_nodes(self) -> np.ndarray:
        """int32 indices of the non-terminal nodes, in breadth-first order."""
        return np.flatnonzero(self.node_kind != TERMINAL).astype(np.int32)

    @cached_property
    def action_infoset(self) -> np.ndarray:
        """int32 infoset of each flat infoset-action index."""
        return np.repeat(
            np.arange(self.num_infosets, dtype=np.int32), self.infoset_num_actions
        ).astype(np.int32)

    @cached_property
    def _own_actions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """``tree_structure.own_action_structure``: last own actions, infoset parent actions
        and sequence lengths, and the first infoset that breaks perfect recall (-1: none)."""
        from efgkit.games.tree_structure import own_action_structure

        last, parent_action, length, bad_infoset = own_action_structure(
            self.node_kind, self.node_infoset, self.node_first_child, self.node_num_children,
            self.infoset_action_offset, self.action_infoset,
        )
        return last, parent_action, length, int(bad_infoset)

    @property
    def node_last_action(self) -> np.ndarray:
        """int32 array (2, nodes): each player's last own flat action on the path (-1: none)."""
        return self._own_actions[0]

    @property
    def infoset_parent_action(self) -> np.ndarray:
        """int32 per infoset: the owner's last flat action before reaching it (-1: none).

        Raises GameDefinitionError when the game does not have perfect recall (two nodes
        of one infoset reached through different own action sequences).
        """
        bad_infoset = self._own_actions[3]
        if bad_infoset >= 0:
            raise GameDefinitionError(
                f"game {self.spec!r} does not have perfect recall: infoset "
                f"{self.infoset_keys[bad_infoset]!r} is reached by different own action sequences"
            )
        return self._own_actions[1]

    @property
    def has_perfect_recall(self) -> bool:
        return self._own_actions[3] < 0

    @property
    def infoset_sequence_length(self) -> np.ndarray:
        """int32 per infoset: length of the owner's own action sequence leading to it (raises
        as ``infoset_parent_action`` without perfect recall)."""
        self.infoset_parent_action  # noqa: B018 - the perfect-recall check
        return self._own_actions[2]

    def node_lists(self) -> tuple[list, list, list, list, list, list]:
        """(kind, infoset, first child, children, chance probability, utility) of every node as
        Python lists, for walks in Python (indexing a list is faster than a numpy array)."""
        return tuple(getattr(self, name).tolist() for name in _NODE_ARRAYS if name != "node_public_state")

    def infosets_of(self, player: int) -> np.ndarray:
        return np.flatnonzero(self.infoset_player == player).astype(np.int32)

    def infoset_actions(self, infoset: int) -> list[str]:
        lo, hi = self.infoset_action_offset[infoset], self.infoset_action_offset[infoset + 1]
        return self.action_labels[lo:hi]

    @cached_property
    def infoset_index(self) -> dict[str, int]:
        """Human-readable key -> infoset id."""
        return {key: i for i, key in enumerate(self.infoset_keys)}

    # ------------------------------------------------------------ integrity
    def validate(self) -> None:
        """Check the structural invariants; raise GameDefinitionError on the first violation."""
        from efgkit.games.tree_structure import structure_problem

        problem = structure_problem(
            self.node_kind, self.node_infoset, self.node_first_child, self.node_num_children,
            self.node_chance_prob, self.infoset_player, self.infoset_num_actions,
        )
        if problem:
            raise GameDefinitionError(f"game {self.spec!r}: {problem}")
        if len(self.infoset_keys) != self.num_infosets:
            raise GameDefinitionError(f"game {self.spec!r}: infoset key count mismatch")
        if len(self.action_labels) != self.num_infoset_actions:
            raise GameDefinitionError(f"game {self.spec!r}: action label count mismatch")

    @cached_property
    def fingerprint(self) -> str:
        """sha256 over the spec and every stored array: equal trees, equal fingerprints."""
        return self.fingerprint_as(self.spec)

    def fingerprint_as(self, spec: str) -> str:
        """The fingerprint this tree would have under ``spec``: a game read from a file
        (``efg:``, ``acpc:``) is the same game whatever path it was read from."""
        digest = hashlib.sha256(spec.encode())
        for name in _NODE_ARRAYS + _INFOSET_ARRAYS:
            array = np.ascontiguousarray(getattr(self, name))
            digest.update(name.encode())
            digest.update(str(array.dtype).encode())
            digest.update(array.tobytes())
        digest.update("\x1f".join(self.infoset_keys).encode())
        digest.update("\x1f".join(self.action_labels).encode())
        return digest.hexdigest()

    # ------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> None:
        """Write the tree as .npz (atomically: a crash never leaves a half-written file)."""
        path = Path(path)
        arrays = {name: getattr(self, name) for name in _NODE_ARRAYS + _INFOSET_ARRAYS}
        meta = {
            "format": np.array("efgkit-tree"),
            "version": np.array(TREE_FILE_VERSION),
            "spec": np.array(self.spec),
            "fingerprint": np.array(self.fingerprint),
            "infoset_keys": np.array(self.infoset_keys, dtype=str),
            "action_labels": np.array(self.action_labels, dtype=str),
            "public_state_keys": np.array(self.public_state_keys, dtype=str),
        }
        with atomic_output_path(path) as temporary, open(temporary, "wb") as handle:
            np.savez(handle, **arrays, **meta)

    @classmethod
    def load(cls, path: str | os.PathLike, expected_spec: str | None = None) -> GameTree:
        """Read a tree written by ``save``; checks format, version and fingerprint, and every
        array's declared size before reading it."""
        check_input_file(path, "tree file")
        try:
            with np.load(path, allow_pickle=False) as data:
                problem = _declared_size_problem(data.zip, os.path.getsize(path))
                if problem is not None:
                    raise FileFormatError(f"{path}: {problem}")
                if str(data["format"]) != "efgkit-tree":
                    raise FileFormatError(f"{path}: not an efgkit tree file")
                version = int(data["version"])
                if version > TREE_FILE_VERSION:
                    raise FileFormatError(
                        f"{path}: tree file version {version} is newer than this efgkit "
                        f"supports ({TREE_FILE_VERSION}); upgrade efgkit"
                    )
                tree = cls(
                    spec=str(data["spec"]),
                    **{name: data[name] for name in _NODE_ARRAYS + _INFOSET_ARRAYS},
                    infoset_keys=[str(k) for k in data["infoset_keys"]],
                    action_labels=[str(a) for a in data["action_labels"]],
                    public_state_keys=[str(k) for k in data["public_state_keys"]],
                )
                stored_fingerprint = str(data["fingerprint"])
        except FileFormatError:
            raise
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise FileFormatError(f"{path}: cannot read tree file ({exc})") from exc
        if tree.fingerprint != stored_fingerprint:
            raise FileFormatError(f"{path}: tree file is corrupted (fingerprint mismatch)")
        if expected_spec is not None and tree.spec != expected_spec:
            raise FileFormatError(
                f"{path}: tree file is for game {tree.spec!r}, not {expected_spec!r}"
            )
        return tree


_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _declared_size_problem(archive: zipfile.ZipFile, file_bytes: int) -> str | None:
    """Why reading a member of a tree file could allocate memory the file does not hold, or
    None: every member is stored uncompressed (as ``np.savez`` writes it) inside the file,
    and its .npy header declares no more bytes than the member holds. A tiny file could
    otherwise declare an array of terabytes."""
    for info in archive.infolist():
        if (info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size
                or info.header_offset + info.compress_size > file_bytes):
            return f"{info.filename} is compressed or runs past the end of the file"
        with archive.open(info) as member:
            read_header = _NPY_HEADERS.get(np.lib.format.read_magic(member))
            if read_header is None:
                return f"{info.filename} is not a .npy array of format 1.0 or 2.0"
            shape, _, dtype = read_header(member)
            declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if declared > info.file_size - member.tell():
                return (f"{info.filename} declares {declared:,} bytes but the file stores "
                        f"{info.file_size - member.tell():,}")
    return None
