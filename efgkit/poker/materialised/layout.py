"""Where a strategy lives on the public tree: one row (abstract infoset) per (decision node, hand).

A row's actions are the node's children in order, as in an InfosetMap (action ``k`` of an
original infoset is action ``k`` of its abstract set). Three layouts:

* ``lossless``: every (public decision node, valid hand) is its own row — the original
  game's information sets (perfect recall: the betting, the board and the hand);
* ``from_infoset_map``: the rows of any efgkit ``InfosetMap`` over the same game's
  GameTree (card abstractions, CFR+IRA's maps, the identity), matched through the
  GameTree's infoset keys; games dealt by rank see ranks only, so several card-level
  (node, hand) pairs are one original infoset;
* ``from_bucket_layout``: the rows of a ``BucketLayout`` — (betting decision, bucket of the
  hand on the node's board) for a card abstraction (imperfect recall when the buckets forget
  earlier boards) — so one strategy array serves this engine and the streamed one.

``slot_weight`` (decisions, hands) is 1 / (number of card-level pairs of the pair's
original infoset), so that the average strategy adds each original infoset's own reach
once, exactly as the GameTree solvers do.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from efgkit.errors import AbstractionError
from efgkit.games.csr import offsets_of
from efgkit.games.poker import Betting, PokerState
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.materialised.public_tree import PublicTree

_ACTING = 0


class LayoutView(NamedTuple):
    """The arrays kernels read: ``decision_index`` int64 (nodes,), -1 off decisions;
    ``slot_offset`` int64 (decisions, hands), the first action of the (decision, hand)
    pair's row, -1 for hands that meet the board; ``action_offset`` int64 (rows + 1,);
    ``slot_weight`` float64 (decisions, hands)."""

    decision_index: np.ndarray
    slot_offset: np.ndarray
    action_offset: np.ndarray
    slot_weight: np.ndarray


class StrategyLayout:
    """Rows of a strategy on a public tree; see the module docstring."""

    def __init__(self, tree: PublicTree, rows: np.ndarray, action_offset: np.ndarray,
                 slot_weight: np.ndarray, description: str) -> None:
        self.tree = tree
        self.rows = np.ascontiguousarray(rows, np.int64)
        self.action_offset = np.ascontiguousarray(action_offset, np.int64)
        self.slot_weight = np.ascontiguousarray(slot_weight, np.float64)
        self.description = description
        self.num_rows = self.action_offset.shape[0] - 1
        self.row_player = np.full(self.num_rows, -1, np.int8)
        for d, node in enumerate(tree.decision_nodes.tolist()):
            used = self.rows[d][self.rows[d] >= 0]
            width = self.action_offset[used + 1] - self.action_offset[used]
            wrong = width[width != tree.num_children[node]]
            if wrong.size:
                raise AbstractionError(f"{description}: a row at public node {node} has "
                                       f"{int(wrong[0])} actions, the node {tree.num_children[node]}")
            self.row_player[used] = tree.kind[node]
        self.rows_of_player = [np.flatnonzero(self.row_player == p).astype(np.int64) for p in (0, 1)]
        self.slot_offset = np.where(self.rows >= 0, self.action_offset[np.maximum(self.rows, 0)], -1)

    @property
    def num_actions(self) -> int:
        return int(self.action_offset[-1])

    def view(self) -> LayoutView:
        return LayoutView(self.tree.decision_index, self.slot_offset, self.action_offset, self.slot_weight)

    @classmethod
    def lossless(cls, tree: PublicTree) -> StrategyLayout:
        """One row per (decision node, valid hand): the unabstracted game."""
        rows = np.full((tree.decision_nodes.shape[0], tree.num_hands), -1, np.int64)
        widths = []
        for d, node in enumerate(tree.decision_nodes.tolist()):
            valid = tree.valid_hands(node)
            rows[d, valid] = np.arange(len(widths), len(widths) + valid.shape[0])
            widths += [int(tree.num_children[node])] * valid.shape[0]
        offset = np.concatenate([[0], np.cumsum(widths, dtype=np.int64)])
        return cls(tree, rows, offset, np.ones(rows.shape), "lossless")

    @classmethod
    def from_infoset_map(cls, tree: PublicTree, infoset_map: InfosetMap) -> StrategyLayout:
        """The rows of ``infoset_map`` (over ``load_game(tree.game.spec)``'s GameTree)."""
        game_tree = infoset_map.tree
        if game_tree.spec != tree.game.spec:
            raise AbstractionError(f"the InfosetMap is for {game_tree.spec!r}, the public tree for "
                                   f"{tree.game.spec!r}")
        index = game_tree.infoset_index
        original = np.full((tree.decision_nodes.shape[0], tree.num_hands), -1, np.int64)
        outcomes = [tree.hand_outcome(h) for h in range(tree.num_hands)]
        game = tree.game
        for d, node in enumerate(tree.decision_nodes.tolist()):
            betting = Betting(tree.betting_histories[tree.betting[node]],
                              tuple(tree.contribution[node].astype(int).tolist()), _ACTING)
            slots = tree.board_slots[tree.board[node]]
            for h in tree.valid_hands(node).tolist():
                key = game.infoset_key(PokerState((outcomes[h], outcomes[h], *slots), betting))
                infoset = index.get(key)
                if infoset is None:
                    raise AbstractionError(f"{game.spec}: the GameTree has no infoset {key!r}")
                original[d, h] = infoset
        valid = original >= 0
        counts = np.bincount(original[valid], minlength=game_tree.num_infosets)
        rows = np.full(original.shape, -1, np.int64)
        rows[valid] = infoset_map.abstract_of[original[valid]]
        weight = np.zeros(original.shape)
        weight[valid] = 1.0 / counts[original[valid]]
        return cls(tree, rows, infoset_map.abstract_action_offset.astype(np.int64), weight,
                   f"InfosetMap over {game_tree.spec}")

    def rows_from(self, source: StrategyLayout, strategy: np.ndarray,
                  into: np.ndarray | None = None) -> np.ndarray:
        """``strategy`` (float64 per action of ``source``, a layout on the same tree) on this
        layout's actions, written into ``into`` (default zeros: rows no slot of the tree holds
        stay 0): each (decision node, hand) both hold plays its row of ``source`` (rows several
        slots share get the last one's: equal when ``source`` is the coarser)."""
        out = np.zeros(self.num_actions) if into is None else into
        width = self.tree.num_children[self.tree.decision_nodes].astype(np.int64)
        for d in range(width.shape[0]):
            valid = (self.slot_offset[d] >= 0) & (source.slot_offset[d] >= 0)
            for k in range(int(width[d])):
                out[self.slot_offset[d, valid] + k] = strategy[source.slot_offset[d, valid] + k]
        return out

    @classmethod
    def from_bucket_layout(cls, tree: PublicTree, buckets: BucketLayout) -> StrategyLayout:
        """The rows of ``buckets`` (over ``tree.game``'s betting): a public decision node's hand
        plays row (its betting decision, the hand's bucket on the node's board)."""
        betting = buckets.betting
        if betting.game.spec != tree.game.spec:
            raise AbstractionError(f"the bucket layout is for {betting.game.spec!r}, the public tree for "
                                   f"{tree.game.spec!r}")
        row_start = offsets_of(buckets.buckets)
        offset = buckets.row_offsets()
        rows = np.full((tree.decision_nodes.shape[0], tree.num_hands), -1, np.int64)
        for d, node in enumerate(tree.decision_nodes.tolist()):
            decision = betting.decision_index[tree.betting[node]]  # one game, one betting tree numbering
            board = np.array(tree.board_cards[tree.board[node]], np.int64)
            valid = tree.valid_hands(node)
            bucket = buckets.abstraction.buckets(int(tree.round[node]), board, tree.hand_cards)
            rows[d, valid] = row_start[decision] + bucket[valid]
        return cls(tree, rows, offset, np.ones(rows.shape), buckets.abstraction.description)
