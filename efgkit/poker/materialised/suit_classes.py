"""Subgame roots up to suit isomorphism: re-solve one board of each class, map the result.

Poker's rules ignore suits, so a permutation ``σ`` of the suits maps every card, hand and board
to another and leaves the game unchanged: the subgame at (betting ``x``, board ``B``) is the
subgame at (``x``, ``σ(B)``) with every hand ``h`` renamed ``σ(h)``. When the blueprint is
suit-symmetric too (every card abstraction built on canonical hands is; an unabstracted blueprint
is, up to rounding), the two subgames have the same ranges and constraint values up to that
renaming, hence the same gadget and the same re-solved strategy: Brown & Sandholm re-solve the
1,755 canonical flops, not the 22,100 (seed_brown.md §5). ``SuitClasses`` groups the roots
(``subgame_roots.deal_roots``) into classes, the first root of each its representative, and gives
the lossless actions of a representative's subtree with their images in another root's
(``image_actions``); ``symmetric`` checks a ``RootRanges`` really is symmetric before anything is
copied.

A card is ``rank * num_suits + suit`` (``games.poker.CardStructure``); a board is the cards of
each deal in turn, each deal's cards ascending (``PublicTree._deals``), so the image of a board
sorts each deal's mapped cards again.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from efgkit.games.betting_tree import HAND_DEALS
from efgkit.games.csr import positions_within
from efgkit.poker.codes import DEAL
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import RootRanges

SYMMETRY_TOLERANCE = 1e-9
"""Largest difference, relative to the largest magnitude, between a root's ranges and its
representative's renamed ones that still counts as rounding."""


class SuitClasses:
    """The suit-isomorphism classes of the public nodes ``nodes`` (int64, e.g. ``deal_roots``).

    ``representative`` int64 (roots,): the index (into ``nodes``) of each root's class
    representative, the class's first root (itself for a representative); ``permutation`` int64
    (roots,): the row of ``suit_permutations`` that maps the representative's board to the root's;
    ``hand_image`` int64 (permutations, hands): each hand's image under each permutation.
    """

    def __init__(self, tree: PublicTree, nodes: np.ndarray) -> None:
        self.tree, self.nodes = tree, np.asarray(nodes, np.int64)
        suits = tree.game.card_structure.num_suits
        self.suit_permutations = np.array(list(permutations(range(suits))), np.int64)
        cards = np.arange(tree.num_cards)
        self.card_image = (cards // suits) * suits + self.suit_permutations[:, cards % suits]
        masks = np.bitwise_or.reduce(np.left_shift(np.int64(1), self.card_image[:, tree.hand_cards]), axis=2)
        order = np.argsort(tree.hand_mask)
        self.hand_image = order[np.searchsorted(tree.hand_mask[order], masks)].astype(np.int64)
        self._board_index = {cards: b for b, cards in enumerate(tree.board_cards)}
        at = {(int(tree.betting[n]), int(tree.board[n])): i for i, n in enumerate(self.nodes.tolist())}
        self.representative = np.full(self.nodes.shape[0], -1, np.int64)
        self.permutation = np.zeros(self.nodes.shape[0], np.int64)
        for i, node in enumerate(self.nodes.tolist()):
            if self.representative[i] >= 0:
                continue
            for p in range(self.suit_permutations.shape[0]):  # the identity first
                j = at.get((int(tree.betting[node]), self.board_image(int(tree.board[node]), p)))
                if j is not None and self.representative[j] < 0:
                    self.representative[j], self.permutation[j] = i, p

    @property
    def representatives(self) -> np.ndarray:
        """Indices (into ``nodes``) of the class representatives, ascending."""
        return np.flatnonzero(self.representative == np.arange(self.nodes.shape[0]))

    def board_image(self, board: int, permutation: int) -> int:
        """The board id of board ``board``'s image under row ``permutation``, -1 if the tree does
        not hold it (a tree restricted to one flop holds only the permutations that keep it)."""
        tree = self.tree
        cards, image, start = tree.board_cards[board], [], 0
        for slot in range(len(tree.board_slots[board])):
            size = tree.game.deal_sizes[HAND_DEALS + slot]
            image += sorted(int(self.card_image[permutation, c]) for c in cards[start:start + size])
            start += size
        return self._board_index.get(tuple(image), -1)

    def node_pairs(self, root: int, image_root: int, permutation: int) -> tuple[np.ndarray, np.ndarray]:
        """The public nodes below ``root`` (int64, breadth first) and the corresponding nodes
        below ``image_root``, whose board is the image of the first's under ``permutation``."""
        tree = self.tree
        level_a, level_b = np.array([root], np.int64), np.array([image_root], np.int64)
        pairs_a, pairs_b = [], []
        while level_a.size:
            pairs_a.append(level_a)
            pairs_b.append(level_b)
            counts = tree.num_children[level_a].astype(np.int64)
            within = positions_within(counts)
            child_a = np.repeat(tree.first_child[level_a], counts) + within
            child_b = np.repeat(tree.first_child[level_b], counts) + within
            for x in np.flatnonzero(tree.kind[np.repeat(level_a, counts)] == DEAL).tolist():
                # a deal's children are in card order: find the child dealt the image board
                parent = level_b[np.searchsorted(np.cumsum(counts), x, side="right")]
                siblings = tree.first_child[parent] + np.arange(tree.num_children[parent])
                target = self.board_image(int(tree.board[child_a[x]]), permutation)
                child_b[x] = siblings[tree.board[siblings] == target][0]
            level_a, level_b = child_a, child_b
        return np.concatenate(pairs_a), np.concatenate(pairs_b)

    def image_actions(self, layout: StrategyLayout, index: int,
                      players: tuple[int, ...] = (0, 1)) -> tuple[np.ndarray, np.ndarray]:
        """The lossless ``layout``'s actions of ``players`` below root ``nodes[index]``'s
        representative and, position for position, their images below ``nodes[index]`` (int64
        twice): a re-solved representative's probabilities copied along them are its image's."""
        tree, rep, p = self.tree, int(self.representative[index]), int(self.permutation[index])
        below_a, below_b = self.node_pairs(int(self.nodes[rep]), int(self.nodes[index]), p)
        own = np.isin(tree.kind[below_a], players)
        a, b = below_a[own], below_b[own]
        offset_a = layout.slot_offset[tree.decision_index[a]]
        offset_b = layout.slot_offset[tree.decision_index[b]][:, self.hand_image[p]]
        valid = offset_a >= 0
        width = np.repeat(tree.num_children[a].astype(np.int64), valid.sum(axis=1))
        within = positions_within(width)
        return (np.repeat(offset_a[valid], width) + within, np.repeat(offset_b[valid], width) + within)

    def symmetric(self, ranges: RootRanges) -> np.ndarray:
        """bool (roots,): whether each root's ranges, element reach and constraint values equal
        its representative's with every hand renamed (to ``SYMMETRY_TOLERANCE``)."""
        rep, image = self.representative, self.hand_image[self.permutation]
        rows = np.arange(self.nodes.shape[0])[:, None]
        ok = np.ones(self.nodes.shape[0], bool)
        for array in (ranges.range, ranges.element_reach, ranges.values, ranges.opponent_reach):
            renamed = np.empty_like(array)
            renamed[rows, image] = array[rep]
            scale = np.maximum(np.abs(array).max(axis=1, initial=0.0), 1e-300)
            ok &= np.abs(renamed - array).max(axis=1, initial=0.0) <= SYMMETRY_TOLERANCE * scale
        return ok
