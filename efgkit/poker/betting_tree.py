"""The betting tree of a limit-poker game: every betting sequence once, no cards.

Betting never depends on the cards, so the public tree of a limit-poker game is this tree
with the boards multiplied in at its deal nodes. The streamed engine
(``full_game.py``) walks it once per board instead of materialising the public tree: heads-up
limit hold'em has 17,221 betting nodes here against 7.98e11 public nodes.

Nodes are stored breadth first (children contiguous) as flat arrays:

* ``kind`` int8: 0 / 1 the player to act, ``DEAL`` the round is over and board cards are
  dealt (one child, the next round's first node), ``FOLD`` or ``SHOWDOWN`` a terminal;
* ``first_child`` int64, ``num_children`` int32, ``round`` int8, ``level`` int8 (board deals
  made before the node), ``contribution`` float64 (nodes, 2) chips put in, ``folder`` int8;
* ``decision_nodes`` int64 and ``decision_index`` int64 (nodes,), -1 off decisions.

``deal_size[j]`` is the number of cards the ``j``-th deal puts on the board (level ``j + 1``);
``chance_weight[level]`` the probability of one compatible pair of hands and of one board of
that level, ``1 / (C(n, k) C(n - k, k))`` times ``1 / C(left, size)`` per deal — the
public tree's ``chance_weight`` — so terminal values are counterfactual values with chance.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from efgkit.errors import GameDefinitionError
from efgkit.games.poker import Betting, LimitPoker
from efgkit.poker.codes import DEAL, FOLD, SHOWDOWN

_ACTING, _BOARD_DUE, _FOLDED = 0, 1, 2  # LimitPoker's betting statuses
MAX_HOLE_CARDS = 2
"""Hole cards per player the poker engines play (their terminal kernels remove one or two
cards per hand; ACPC definitions may deal three)."""


def private_hands(num_cards: int, hole_cards: int) -> tuple[np.ndarray, np.ndarray]:
    """Every private hand of ``hole_cards`` from ``num_cards``: its cards int64 (hands, k) in
    lexicographic order and their card masks int64 (hands,)."""
    cards = np.array(list(combinations(range(num_cards), hole_cards)), np.int64).reshape(-1, hole_cards)
    return cards, (np.int64(1) << cards).sum(axis=1).astype(np.int64)


def card_mask(cards) -> int:
    """The bit set of ``cards`` (ints): bit ``c`` for card ``c``."""
    return sum(1 << int(c) for c in cards)


def sorted_deals(cards, deal_sizes) -> np.ndarray:
    """A copy of ``cards`` (int, the board's deals in order) with each deal's cards sorted
    (a deal's order does not matter; the deals' order does)."""
    cards = np.array(cards, np.int64)
    start = 0
    for size in np.asarray(deal_sizes).tolist():
        cards[start:start + size].sort()
        start += size
    return cards


def check_hole_cards(game: LimitPoker) -> None:
    """Refuse ``game`` (``GameDefinitionError``) if its hands hold more than ``MAX_HOLE_CARDS``."""
    if game.card_structure.private_cards_per_player > MAX_HOLE_CARDS:
        raise GameDefinitionError(f"{game.spec}: the poker engines play hands of at most "
                                  f"{MAX_HOLE_CARDS} hole cards")


class BettingTree:
    """The card-independent betting tree of ``game`` (a ``LimitPoker``)."""

    def __init__(self, game: LimitPoker) -> None:
        check_hole_cards(game)
        self.game = game
        cards = game.card_structure
        self.num_cards = cards.num_cards
        self.hole_cards = cards.private_cards_per_player
        self.deal_size = np.array(game.deal_sizes[2:], np.int64)
        self.num_levels = self.deal_size.shape[0] + 1
        weight = 1.0 / (comb(self.num_cards, self.hole_cards) * comb(self.num_cards - self.hole_cards,
                                                                      self.hole_cards))
        weights, left = [weight], self.num_cards - 2 * self.hole_cards
        for size in self.deal_size.tolist():
            weight /= comb(left, size)
            left -= size
            weights.append(weight)
        self.chance_weight = np.array(weights, np.float64)
        boards, left = [1], self.num_cards
        for size in self.deal_size.tolist():
            boards.append(boards[-1] * comb(left, size))
            left -= size
        self.board_sequences = boards
        """Per level, the sequences of deals made before it (from the whole deck)."""
        self.level_weight = self.chance_weight * np.array(boards, np.float64)
        """Per level, ``chance_weight`` times ``board_sequences``: the weight of a terminal
        value when one board sequence is sampled uniformly."""
        self._build(game)

    def _build(self, game: LimitPoker) -> None:
        queue = [(Betting(((),), game.blinds, _ACTING), 0)]
        kind, first_child, num_children, rounds, levels, contribution, folder = [], [], [], [], [], [], []
        histories, labels = [], []
        head = 0
        while head < len(queue):
            betting, level = queue[head]
            head += 1
            histories.append(betting.history)
            rounds.append(len(betting.history) - 1)
            levels.append(level)
            contribution.append(betting.contribution)
            first_child.append(len(queue))
            fold = game.folder_of(betting)
            folder.append(fold)
            children: list = []
            actions: tuple = ()
            if betting.status == _ACTING:
                kind.append(game.actor(betting))
                moves = game.betting_actions(betting)
                actions = tuple(game.action_label(move) for move in moves)
                children = [(game.after_action(betting, move), level) for move in moves]
            elif betting.status == _BOARD_DUE:
                kind.append(DEAL)
                children = [(Betting((*betting.history, ()), betting.contribution, _ACTING), level + 1)]
            else:
                kind.append(FOLD if betting.status == _FOLDED else SHOWDOWN)
            num_children.append(len(children))
            labels.append(actions)
            queue.extend(children)
        self.kind = np.array(kind, np.int8)
        self.first_child = np.array(first_child, np.int64)
        self.num_children = np.array(num_children, np.int32)
        self.round = np.array(rounds, np.int8)
        self.level = np.array(levels, np.int8)
        self.contribution = np.array(contribution, np.float64).reshape(-1, 2)
        self.folder = np.array(folder, np.int8)
        self.histories = histories
        self.action_labels = labels
        self.num_nodes = len(kind)
        self.decision_nodes = np.flatnonzero(self.kind <= 1).astype(np.int64)
        self.decision_index = np.full(self.num_nodes, -1, np.int64)
        self.decision_index[self.decision_nodes] = np.arange(self.decision_nodes.shape[0])
        self.node_of_history = {history: node for node, history in enumerate(histories)}
        self.round_of_level = [int(self.round[self.level == j].min()) for j in range(self.num_levels)]
        """The round in which the board of each level is first seen (its card abstraction's round)."""
        depth = np.zeros(self.num_nodes, np.int64)
        for node in range(self.num_nodes):  # breadth first: parents before children
            depth[first_child[node]:first_child[node] + num_children[node]] = depth[node] + 1
        self.max_depth = int(depth.max()) + 1
        """Nodes on the longest path from the root."""

    def hands(self) -> tuple[np.ndarray, np.ndarray]:
        """``private_hands`` of this game's deck."""
        return private_hands(self.num_cards, self.hole_cards)

    @property
    def nbytes(self) -> int:
        arrays = (self.kind, self.first_child, self.num_children, self.round, self.level, self.contribution,
                  self.folder, self.decision_nodes, self.decision_index)
        return int(sum(a.nbytes for a in arrays))
