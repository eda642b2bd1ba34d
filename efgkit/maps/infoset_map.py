"""InfosetMap: an information abstraction as an int array from original to abstract infosets.

``abstract_of[I]`` is the abstract infoset of original infoset ``I``; action ``k`` of ``I``
is action ``k`` of its abstract infoset (positional action mapping, as in Čermák, Lisý and
Bošanský, "Automated construction of bounded-loss imperfect-recall abstractions", §2.1).
Members of one abstract infoset share the owning player and the number of actions.
Solvers store regrets and strategies per abstract infoset-action; the tree is never
copied. The identity map is the unabstracted game.

Abstract infosets are numbered densely ``0..num_abstract-1``; flat per-action arrays use
``abstract_action_offset`` (CSR, length ``num_abstract + 1``).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from efgkit.errors import AbstractionError
from efgkit.games.csr import positions_within
from efgkit.games.numbering import ids_by_first_appearance
from efgkit.games.tree import GameTree


class InfosetMap:
    """Original infoset -> abstract infoset, validated against a tree."""

    def __init__(self, tree: GameTree, abstract_of: np.ndarray) -> None:
        abstract_of = np.asarray(abstract_of)
        if abstract_of.shape != (tree.num_infosets,):
            raise AbstractionError(
                f"an InfosetMap for {tree.spec!r} needs {tree.num_infosets} entries, "
                f"got shape {abstract_of.shape}"
            )
        if tree.num_infosets and (abstract_of.min() < 0 or not np.issubdtype(abstract_of.dtype,
                                                                              np.integer)):
            raise AbstractionError("abstract infoset ids must be non-negative integers")
        # Renumber densely by first appearance so ids are canonical for a given partition.
        self.abstract_of, representative = ids_by_first_appearance(abstract_of)
        self.tree = tree
        self.num_abstract = int(representative.shape[0])
        self.abstract_player = tree.infoset_player[representative].astype(np.int8)
        self.abstract_num_actions = tree.infoset_num_actions[representative].astype(np.int32)
        mismatch = (self.abstract_player[self.abstract_of] != tree.infoset_player) | (
            self.abstract_num_actions[self.abstract_of] != tree.infoset_num_actions
        )
        if mismatch.any():
            bad = int(np.flatnonzero(mismatch)[0])
            raise AbstractionError(
                f"infoset {tree.infoset_keys[bad]!r} is grouped with infosets of another player "
                f"or another number of actions"
            )
        self.abstract_action_offset = np.zeros(self.num_abstract + 1, dtype=np.int32)
        np.cumsum(self.abstract_num_actions, out=self.abstract_action_offset[1:])

    # ----------------------------------------------------------- constructors
    @classmethod
    def identity(cls, tree: GameTree) -> InfosetMap:
        """The unabstracted game: every infoset is its own abstract infoset."""
        return cls(tree, np.arange(tree.num_infosets, dtype=np.int32))

    @classmethod
    def coarsest(cls, tree: GameTree) -> InfosetMap:
        """Čermák et al. §4.1.1: one abstract infoset per (player, own-sequence length, #actions)."""
        return cls(tree, coarsest_classes(tree))

    # -------------------------------------------------------------- queries
    @property
    def num_abstract_actions(self) -> int:
        return int(self.abstract_action_offset[-1])

    @property
    def capacity_actions(self) -> int:
        """Length of per-abstract-action solver arrays: a fixed map needs no spare room."""
        return self.num_abstract_actions

    @cached_property
    def is_identity(self) -> bool:
        return self.num_abstract == self.tree.num_infosets

    @cached_property
    def infoset_offset(self) -> np.ndarray:
        """int32 per original infoset: offset of its abstract infoset's actions."""
        return self.abstract_action_offset[self.abstract_of].astype(np.int32)

    @cached_property
    def abstract_action_of(self) -> np.ndarray:
        """int32 per original flat action: the flat abstract action it maps to."""
        tree = self.tree
        position = positions_within(tree.infoset_num_actions)
        return (self.infoset_offset[tree.action_infoset] + position).astype(np.int32)

    def members(self, abstract_infoset: int) -> np.ndarray:
        return np.flatnonzero(self.abstract_of == abstract_infoset).astype(np.int32)

    def abstract_infosets_of(self, player: int) -> np.ndarray:
        return np.flatnonzero(self.abstract_player == player).astype(np.int32)

    def sizes(self) -> dict[str, int]:
        per_player = np.bincount(self.abstract_player, minlength=2)
        return {
            "abstract_infosets": self.num_abstract,
            "abstract_infosets_player0": int(per_player[0]),
            "abstract_infosets_player1": int(per_player[1]),
            "original_infosets": self.tree.num_infosets,
            "abstract_actions": self.num_abstract_actions,
        }

    def check_tree(self, tree: GameTree) -> None:
        """Raise AbstractionError unless this map was made for ``tree``."""
        if tree is not self.tree and tree.fingerprint != self.tree.fingerprint:
            raise AbstractionError(
                f"the abstraction was made for {self.tree.spec!r}, not for {tree.spec!r}"
            )


def coarsest_classes(tree: GameTree) -> np.ndarray:
    """int32 per infoset: its class under Čermák et al.'s coarsest rule (§4.1.1), the classes
    numbered in the order of their (player, own-sequence length, #actions) keys."""
    keys = np.stack([tree.infoset_player.astype(np.int64), tree.infoset_sequence_length.astype(np.int64),
                     tree.infoset_num_actions.astype(np.int64)], axis=1)
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int32)


def class_of(tree: GameTree, infoset: int) -> tuple[int, int, int]:
    """(player, own-sequence length, number of actions) of an infoset: its coarsest class,
    what a player knows of its infoset without the key (a compact file's class rule)."""
    return (int(tree.infoset_player[infoset]), int(tree.infoset_sequence_length[infoset]),
            int(tree.infoset_num_actions[infoset]))
