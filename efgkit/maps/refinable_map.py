"""RefinableMap: an InfosetMap that refinement algorithms (FPIRA, CFR+IRA) split in place.

Splits only ever refine the partition. When an abstract infoset splits, one group keeps
its id (and its slots in every per-action array); every other group gets a new id whose
action slots are appended after the last used one. Per-action arrays sized for the
worst case (every original infoset on its own) are allocated with ``np.zeros``, whose
untouched pages cost no memory, so resident memory follows the abstraction's size.

Memory accounting follows Čermák et al. (§4.2.4, §4.3.4): the coarsest abstraction is a
function of (player, own-sequence length, number of actions) and costs nothing; every
original infoset outside the largest abstract set of its class needs one explicit map
entry (the reference code also stores entries for detached singletons).
"""

from __future__ import annotations

import numpy as np

from efgkit.errors import AbstractionError
from efgkit.games.csr import positions_within
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap, coarsest_classes


class RefinableMap:
    """Mutable original -> abstract infoset map with split, detach and memory accounting."""

    def __init__(self, initial: InfosetMap) -> None:
        self._adopt(initial.tree, initial.abstract_of, initial.abstract_player,
                    initial.abstract_num_actions, initial.abstract_action_offset)

    @classmethod
    def restored(cls, tree: GameTree, state: dict[str, np.ndarray]) -> RefinableMap:
        """The map ``state_arrays`` described (ids and action slots exactly as they were)."""
        refinable = cls.__new__(cls)
        try:
            abstract_of = np.asarray(state["abstract_of"], np.int32)
            offsets = np.asarray(state["abstract_action_offset"], np.int64)
            num_actions = np.asarray(state["abstract_num_actions"], np.int64)
            player = np.asarray(state["abstract_player"], np.int64)
        except KeyError as exc:
            raise AbstractionError(f"a refinable map's state lacks {exc}") from None
        problem = _state_problem(tree, abstract_of, player, num_actions, offsets)
        if problem is not None:
            raise AbstractionError(f"a refinable map's state does not fit the game: {problem}")
        refinable._adopt(tree, abstract_of, player, num_actions, offsets)
        return refinable

    def state_arrays(self) -> dict[str, np.ndarray]:
        """What ``restored`` needs: the map and the per-abstract-infoset arrays in use."""
        n = self.num_abstract
        return {"abstract_of": self.abstract_of.copy(), "abstract_player": self.abstract_player[:n].copy(),
                "abstract_num_actions": self.abstract_num_actions[:n].copy(),
                "abstract_action_offset": self.abstract_action_offset[: n + 1].copy()}

    def _adopt(self, tree: GameTree, abstract_of: np.ndarray, player: np.ndarray,
               num_actions: np.ndarray, offsets: np.ndarray) -> None:
        self.tree = tree
        capacity_sets = tree.num_infosets
        self.abstract_of = np.asarray(abstract_of, np.int32).copy()
        self.num_abstract = int(num_actions.shape[0])
        self.abstract_player = np.zeros(capacity_sets, np.int8)
        self.abstract_num_actions = np.zeros(capacity_sets, np.int32)
        self.abstract_action_offset = np.zeros(capacity_sets + 1, np.int32)
        self.abstract_player[: self.num_abstract] = player
        self.abstract_num_actions[: self.num_abstract] = num_actions
        self.abstract_action_offset[: self.num_abstract + 1] = offsets
        self.capacity_actions = tree.num_infoset_actions
        order = np.argsort(self.abstract_of, kind="stable").astype(np.int32)
        bounds = np.searchsorted(self.abstract_of[order], np.arange(self.num_abstract + 1))
        self._members = [order[bounds[a]:bounds[a + 1]] for a in range(self.num_abstract)]
        self.abstract_size = np.zeros(capacity_sets, np.int32)
        self.abstract_size[: self.num_abstract] = np.diff(bounds)
        self.infoset_offset = self.abstract_action_offset[self.abstract_of].astype(np.int32)
        self._infoset_class = coarsest_classes(tree)

    # ---------------------------------------------------------------- queries
    @property
    def num_abstract_actions(self) -> int:
        return int(self.abstract_action_offset[self.num_abstract])

    def members(self, abstract_infoset: int) -> np.ndarray:
        """Original infosets in ``abstract_infoset`` (int32, increasing)."""
        return self._members[abstract_infoset]

    def abstracted_sets(self, player: int | None = None) -> np.ndarray:
        """Abstract infosets with more than one member (optionally of one player)."""
        chosen = self.abstract_size[: self.num_abstract] > 1
        if player is not None:
            chosen &= self.abstract_player[: self.num_abstract] == player
        return np.flatnonzero(chosen).astype(np.int32)

    def abstract_infosets_of(self, player: int) -> np.ndarray:
        return np.flatnonzero(self.abstract_player[: self.num_abstract] == player).astype(np.int32)

    def snapshot(self) -> tuple[InfosetMap, np.ndarray]:
        """An immutable InfosetMap of the current partition, and for each of its flat
        abstract actions the flat index it has here (to gather per-action arrays)."""
        frozen = InfosetMap(self.tree, self.abstract_of.copy())
        representative = np.zeros(frozen.num_abstract, np.int64)
        representative[frozen.abstract_of] = np.arange(self.tree.num_infosets)  # any member
        start = np.repeat(self.infoset_offset[representative], frozen.abstract_num_actions)
        return frozen, (start + positions_within(frozen.abstract_num_actions)).astype(np.int64)

    def memory(self, *, arrays_per_action: int, sampled_entries: int = 0) -> dict[str, int]:
        """The paper's memory accounting in 32-bit words.

        ``arrays_per_action`` is how many floats the algorithm keeps per abstract
        infoset-action (FPIRA: 1, the average strategy; CFR+IRA: 2, regrets and average).
        ``sampled_entries`` adds per-original-infoset regrets kept for sampled infosets.
        """
        entries = self.map_entries()
        actions = self.num_abstract_actions
        return {
            "abstract_infosets": self.num_abstract,
            "original_infosets": self.tree.num_infosets,
            "map_entries": entries,
            "abstract_actions": actions,
            "memory_words": arrays_per_action * actions + entries + sampled_entries,
        }

    def map_entries(self) -> int:
        """Original infosets not in the largest abstract set of their (player, length,
        actions) class: the explicit entries an implementation must store."""
        first = np.array([m[0] for m in self._members], dtype=np.int64)
        sizes = self.abstract_size[: self.num_abstract].astype(np.int64)
        classes = self._infoset_class[first]
        largest = np.zeros(int(self._infoset_class.max()) + 1, np.int64)
        np.maximum.at(largest, classes, sizes)
        return int(self.tree.num_infosets - largest.sum())

    # ----------------------------------------------------------------- splits
    def split(self, abstract_infoset: int, groups: list[np.ndarray], keep: int) -> list[int]:
        """Partition ``abstract_infoset`` into ``groups`` (original infosets).

        ``groups[keep]`` stays under the old id; every other group gets a new id, in the
        order given. Returns the ids of all groups (``keep``'s is the old id). Groups must
        be non-empty and partition the current members exactly.
        """
        members = self._members[abstract_infoset]
        joined = np.sort(np.concatenate(groups)) if groups else np.zeros(0, np.int32)
        if (len(groups) == 0 or any(g.shape[0] == 0 for g in groups)
                or not np.array_equal(joined, members)):
            raise AbstractionError("a split must partition the abstract infoset's members")
        ids = []
        for index, group in enumerate(groups):
            group = np.sort(group).astype(np.int32)
            if index == keep:
                self._members[abstract_infoset] = group
                self.abstract_size[abstract_infoset] = group.shape[0]
                ids.append(abstract_infoset)
            else:
                ids.append(self._append(abstract_infoset, group))
        return ids

    def detach(self, infoset: int) -> int | None:
        """Move one original infoset into its own abstract infoset; returns the new id, or
        None if it is already alone."""
        current = int(self.abstract_of[infoset])
        members = self._members[current]
        if members.shape[0] == 1:
            return None
        rest = members[members != infoset]
        return self.split(current, [rest, np.array([infoset], np.int32)], keep=0)[1]

    def _append(self, parent: int, group: np.ndarray) -> int:
        new = self.num_abstract
        start = int(self.abstract_action_offset[new])
        actions = int(self.abstract_num_actions[parent])
        self.abstract_player[new] = self.abstract_player[parent]
        self.abstract_num_actions[new] = actions
        self.abstract_action_offset[new + 1] = start + actions
        self.num_abstract += 1
        self._members.append(group)
        self.abstract_size[new] = group.shape[0]
        self.abstract_of[group] = new
        self.infoset_offset[group] = start
        return new


def _state_problem(tree: GameTree, abstract_of: np.ndarray, player: np.ndarray, num_actions: np.ndarray,
                   offsets: np.ndarray) -> str | None:
    """Why these arrays are not a refinable map of ``tree``, or None."""
    count = num_actions.shape[0]
    if abstract_of.shape != (tree.num_infosets,) or player.shape != (count,) or offsets.shape != (count + 1,):
        return "array shapes"
    if count == 0 or abstract_of.min() < 0 or abstract_of.max() >= count:
        return "abstract ids out of range"
    if np.unique(abstract_of).shape[0] != count:
        return "an abstract infoset without members"
    if offsets[0] != 0 or np.any(np.diff(offsets) != num_actions) or offsets[-1] > tree.num_infoset_actions:
        return "action offsets"
    if np.any(num_actions[abstract_of] != tree.infoset_num_actions) or np.any(
            player[abstract_of] != tree.infoset_player):
        return "players or action counts of the members"
    return None
