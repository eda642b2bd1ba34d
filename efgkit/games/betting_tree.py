"""The betting tree of a limit-poker game: every betting sequence once, no cards.

Betting never depends on the cards, so every other tree of a ``LimitPoker`` game is this tree
with the deals multiplied in, and all of them are derived from it (one walk of the betting
rules, here):

* ``LimitPoker.compile`` (the GameTree): the betting skeleton is this tree behind the
  ``HAND_DEALS``, and ``poker_preorder``'s kernel expands every deal node over its outcomes;
* ``efgkit.poker.materialised.public_tree.PublicTree``: the betting expanded over the board deals;
* the streamed poker engines (``efgkit.poker``: sampled CFR, full-game and local best
  response, the board walk, layouts) walk it as it is, one board at a time: heads-up limit
  hold'em has 17,221 betting nodes here against 7.98e11 public nodes.

Nodes are stored breadth first (children contiguous) as flat arrays:

* ``kind`` int8: 0 / 1 the player to act, ``DEAL`` the round is over and board cards are
  dealt (one child, the next round's first node), ``FOLD`` or ``SHOWDOWN`` a terminal;
* ``first_child`` int64, ``num_children`` int32, ``round`` int8, ``level`` int8 (board deals
  made before the node), ``contribution`` float64 (nodes, 2) chips put in, ``folder`` int8
  (-1: nobody folded);
* ``decision_nodes`` int64 and ``decision_index`` int64 (nodes,), -1 off decisions;
* ``bettings`` (the rules' ``Betting`` of each node), ``histories`` and ``action_labels``.

Node kinds are this tree's own codes, not the Game protocol's: a protocol TERMINAL is a
``FOLD`` or a ``SHOWDOWN`` here, and the values of ``DEAL``, ``FOLD`` and ``SHOWDOWN`` (2, 3, 4)
are part of a bucket-strategy file's betting digest, so they are never renumbered. They
overlap the protocol's CHANCE (2) and TERMINAL (3) as numbers, so the two sets never share
an array: the GameTree kernel reads these codes and writes the protocol's
(``poker_preorder._protocol_kind``); the poker engines use these throughout
(``efgkit.poker.codes`` names them beside its own codes). The rules' action kinds
(``poker.FOLD`` .. ``RAISE``) are a third set: ``poker.py`` imports the ``Betting`` and its
statuses from here, never the node kinds.

The tree lives here, below the poker engines and beside the rules, because the GameTree
builder needs it too; this module imports nothing of ``poker.py`` (the game is passed in),
so the rules, their kernel and the engines all import it without a cycle.

``deal_size[j]`` is the number of cards the ``j``-th deal puts on the board (level ``j + 1``);
``chance_weight[level]`` the probability of one compatible pair of hands and of one board of
that level, ``1 / (C(n, k) C(n - k, k))`` times ``1 / C(left, size)`` per deal — the
public tree's ``chance_weight`` — so terminal values are counterfactual values with chance.
"""

from __future__ import annotations

from math import comb
from typing import NamedTuple

import numpy as np

STATUS_ACTING, STATUS_BOARD_DUE, STATUS_FOLDED, STATUS_SHOWDOWN = range(4)
"""Where a ``Betting`` is: a player acts, the next board is due, or the game is over (a player
folded, or the last round's betting closed: the hands are compared)."""


class Betting(NamedTuple):
    """The card-independent part of a ``LimitPoker`` state."""

    history: tuple[tuple[tuple[int, int], ...], ...]
    """Actions (kind, amount) of each round opened so far."""
    contribution: tuple[int, int]
    """Chips each player has put in, ante included."""
    status: int


HAND_DEALS = 2
"""Deals before the betting starts (deal slots 0 and 1: player 0's hand, then player 1's);
the GameTree's betting skeleton puts them in front of this tree (``poker_preorder``)."""

DEAL = 2
"""A betting node whose round is over: the next round's board cards are dealt."""
FOLD = 3
"""A terminal where a player folded (``folder``)."""
SHOWDOWN = 4
"""A terminal where the hands are compared."""


class BettingTree:
    """The card-independent betting tree of ``game`` (a ``LimitPoker``), built by one
    breadth-first walk of its betting rules."""

    def __init__(self, game) -> None:
        self.game = game
        cards = game.card_structure
        self.num_cards = cards.num_cards
        self.hole_cards = cards.private_cards_per_player
        self.deal_size = np.array(game.deal_sizes[HAND_DEALS:], np.int64)
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

    def _build(self, game) -> None:
        queue = [(game.initial_state().betting, 0)]
        kind, first_child, num_children, levels, labels = [], [], [], [], []
        head = 0
        while head < len(queue):
            betting, level = queue[head]
            head += 1
            levels.append(level)
            first_child.append(len(queue))
            children: list = []
            actions: tuple = ()
            if betting.status == STATUS_ACTING:
                kind.append(game.actor(betting))
                moves = game.betting_actions(betting)
                actions = tuple(game.action_label(move) for move in moves)
                children = [(game.after_action(betting, move), level) for move in moves]
            elif betting.status == STATUS_BOARD_DUE:
                kind.append(DEAL)
                children = [(Betting((*betting.history, ()), betting.contribution, STATUS_ACTING), level + 1)]
            else:
                kind.append(FOLD if betting.status == STATUS_FOLDED else SHOWDOWN)
            num_children.append(len(children))
            labels.append(actions)
            queue.extend(children)
        self.bettings = [betting for betting, _ in queue]
        """The rules' ``Betting`` of each node (history, contributions, status)."""
        self.histories = [betting.history for betting in self.bettings]
        self.action_labels = labels
        self.kind = np.array(kind, np.int8)
        self.first_child = np.array(first_child, np.int64)
        self.num_children = np.array(num_children, np.int32)
        self.round = np.array([len(history) - 1 for history in self.histories], np.int8)
        self.level = np.array(levels, np.int8)
        self.contribution = np.array([betting.contribution for betting in self.bettings],
                                     np.float64).reshape(-1, 2)
        self.folder = np.array([game.folder_of(betting) for betting in self.bettings], np.int8)
        self.num_nodes = len(kind)
        self.decision_nodes = np.flatnonzero(self.kind <= 1).astype(np.int64)
        self.decision_index = np.full(self.num_nodes, -1, np.int64)
        self.decision_index[self.decision_nodes] = np.arange(self.decision_nodes.shape[0])
        self.node_of_history = {history: node for node, history in enumerate(self.histories)}
        """The node of each betting history (play follows a hand's betting through it)."""
        self.round_of_level = [int(self.round[self.level == j].min()) for j in range(self.num_levels)]
        """The round in which the board of each level is first seen (its card abstraction's round)."""
        depth = np.zeros(self.num_nodes, np.int64)
        for node in range(self.num_nodes):  # breadth first: parents before children
            depth[first_child[node]:first_child[node] + num_children[node]] = depth[node] + 1
        self.max_depth = int(depth.max()) + 1
        """Nodes on the longest path from the root."""

    @property
    def nbytes(self) -> int:
        arrays = (self.kind, self.first_child, self.num_children, self.round, self.level, self.contribution,
                  self.folder, self.decision_nodes, self.decision_index)
        return int(sum(a.nbytes for a in arrays))
