"""What every solver takes: a map from original to abstract information sets.

``InfosetMap`` (fixed) and ``RefinableMap`` (split in place by FPIRA / CFR+IRA) both
satisfy ``AbstractionMap``; solvers and best response type their argument with it
instead of meeting the two by duck typing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from efgkit.games.tree import GameTree


@runtime_checkable
class AbstractionMap(Protocol):
    """Original infoset -> abstract infoset; action k of an infoset is action k of its set.

    ``abstract_of``: int32 (num_infosets,). ``abstract_player`` int8,
    ``abstract_num_actions`` int32 and ``abstract_action_offset`` int32 are per abstract
    infoset (the offset array one longer). ``infoset_offset``: int32 (num_infosets,), the
    flat offset of each original infoset's abstract actions. ``capacity_actions``: the
    length of per-abstract-action arrays a solver allocates (larger than
    ``num_abstract_actions`` for a map that can still split).
    """

    tree: GameTree
    abstract_of: np.ndarray
    num_abstract: int
    abstract_player: np.ndarray
    abstract_num_actions: np.ndarray
    abstract_action_offset: np.ndarray

    @property
    def num_abstract_actions(self) -> int: ...

    @property
    def infoset_offset(self) -> np.ndarray: ...

    @property
    def capacity_actions(self) -> int: ...
