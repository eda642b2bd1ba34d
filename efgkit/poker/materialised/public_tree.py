"""The public tree of a limit-poker game: betting sequences x boards, hands as a vector.

Burch's thesis Algorithm 3 and Johanson et al. 2011 ("Accelerating best response
calculation in large extensive games"): a node of the public tree is what both players
see (the betting so far and the board cards); each player's private hand is not a tree
node but an index into vectors of length ``num_hands`` (every combination of
``hole_cards`` cards of the deck, in lexicographic order). A hand that shares a card with
the board has reach 0 below that board; card removal between the two players' hands is
handled at the terminals by inclusion-exclusion (``terminal_values.py``).

The public tree is the betting tree (``efgkit.games.betting_tree``: every betting sequence
once, no cards) expanded over the board deals: a ``DEAL`` node of the betting tree has one
child, its public nodes have one per deal of the next round's board cards.

Nodes are stored breadth first (parents before children, children contiguous) as flat
arrays:

* ``kind`` int8: 0 / 1 the player to act, ``DEAL`` a board deal, ``FOLD`` or
  ``SHOWDOWN`` a terminal (the betting tree's codes);
* ``first_child`` int64, ``num_children`` int32; ``betting`` int32, the node's betting
  sequence (card independent): its node in ``betting_tree``, which numbers the sequences in
  order of first appearance here too (both trees are breadth first); ``round`` int8;
* ``board`` int32: index into ``board_cards`` / ``board_mask`` of the cards on the table;
* ``contribution`` float64 (nodes, 2): chips each player has put in; ``folder`` int8;
* ``chance_weight`` float64: the probability of the deal of any one pair of compatible
  hands and of this node's board (1 / (C(n,k) C(n-k,k)) times 1 / C(left, b) per board deal),
  so vector values are counterfactual values with chance included, exactly as the
  GameTree solvers compute them.

Memory is proportional to the public nodes times the hands, never to the histories.
"""

from __future__ import annotations

from itertools import combinations

import numba
import numpy as np

from efgkit.errors import GameDefinitionError
from efgkit.games.betting_tree import HAND_DEALS
from efgkit.games.csr import offsets_of
from efgkit.games.hand_ranking import hand_value
from efgkit.games.poker import LimitPoker
from efgkit.poker.betting_tree import BettingTree, card_mask, private_hands
from efgkit.poker.codes import DEAL, SHOWDOWN


def public_node_count(betting: BettingTree) -> int:
    """The nodes of the public tree over ``betting`` (each betting node times the boards that can
    reach it), counted without building it."""
    per_level = np.bincount(betting.level, minlength=betting.num_levels).tolist()
    return int(sum(count * boards for count, boards in zip(per_level, betting.board_sequences, strict=True)))


class PublicTree:
    """The whole public tree of ``game`` (every board): its betting tree expanded over the deals.

    ``game`` is a ``LimitPoker`` (kuhn, leduc, twocard, the Pbrc games, holdem, ACPC limit
    definitions). Games dealt by rank are played card by card here (the same distribution);
    their information sets see ranks only, which ``StrategyLayout.from_infoset_map`` follows.
    """

    def __init__(self, game: LimitPoker, *, max_nodes: int = 5_000_000) -> None:
        self.betting_tree = BettingTree(game)  # refuses hands of more than two cards
        cards = game.card_structure
        self.game = game
        self.num_cards = cards.num_cards
        self.hole_cards = cards.private_cards_per_player
        self.hand_cards, self.hand_mask = private_hands(self.num_cards, self.hole_cards)
        self.num_hands = self.hand_cards.shape[0]
        self._board_index: dict[tuple[int, ...], int] = {}
        self.board_cards: list[tuple[int, ...]] = []
        self.board_slots: list[tuple[int, ...]] = []  # the LimitPoker outcome of each board deal
        self._build(game, self.betting_tree, max_nodes)
        self.root_reach = np.ones((2, self.num_hands))
        self.board_mask = np.array([card_mask(board) for board in self.board_cards], np.int64)
        self._valid_hands()
        self._showdown_order()

    def _valid_hands(self) -> None:
        """``valid_start[b]`` .. ``valid_start[b + 1]`` index ``valid_list`` (int64): the hands
        sharing no card with board ``b``."""
        parts = [np.flatnonzero((self.hand_mask & mask) == 0) for mask in self.board_mask.tolist()]
        self.valid_start = offsets_of([len(p) for p in parts])
        self.valid_list = np.concatenate(parts).astype(np.int64)

    # ------------------------------------------------------------------ building
    def _board_id(self, board: tuple[int, ...], slots: tuple[int, ...]) -> int:
        index = self._board_index.get(board)
        if index is None:
            index = self._board_index[board] = len(self.board_cards)
            self.board_cards.append(board)
            self.board_slots.append(slots)
        return index

    def _deals(self, game: LimitPoker, board: int) -> np.ndarray:
        """The boards (ids, int64) of every card-level deal of the next board slot after board
        ``board``, in lexicographic order of the cards dealt; registers the new ones."""
        cards, slots = self.board_cards[board], self.board_slots[board]
        slot = HAND_DEALS + len(slots)
        outcome_of = {combo: i for i, combo in enumerate(game.slot_outcome_cards[slot])}
        suits = game.card_structure.num_suits
        left = [c for c in range(self.num_cards) if c not in cards]
        children = []
        for combo in combinations(left, game.deal_sizes[slot]):
            outcome = combo[0] // suits if game.deal_by_rank else outcome_of[combo]
            children.append(self._board_id(cards + combo, slots + (outcome,)))
        return np.array(children, np.int64)

    def _build(self, game: LimitPoker, betting: BettingTree, max_nodes: int) -> None:
        """The public nodes, one depth at a time: a depth's nodes in order, each one's children
        in order, are the next depth's (breadth first). A node is a (betting node, board) pair;
        the boards are numbered in order of first appearance."""
        total = public_node_count(betting)
        if total > max_nodes:
            raise GameDefinitionError(f"{game.spec}: the public tree has more than {max_nodes:,} "
                                      f"nodes; solve it with public chance sampling")
        deals: dict[int, np.ndarray] = {}  # per board, the boards its deal node's children hold
        node, board = np.zeros(1, np.int64), np.array([self._board_id((), ())], np.int64)
        nodes, boards, child_counts = [], [], []
        while node.shape[0]:
            kind = betting.kind[node]
            count = np.where(kind <= 1, betting.num_children[node], 0).astype(np.int64)
            dealing = np.flatnonzero(kind == DEAL)
            for b in dict.fromkeys(board[dealing].tolist()):  # in order of first appearance
                if b not in deals:
                    deals[b] = self._deals(game, b)
            dealt = [deals[b] for b in board[dealing].tolist()]
            count[dealing] = [len(d) for d in dealt]
            nodes.append(node)
            boards.append(board)
            child_counts.append(count)
            parent = np.repeat(np.arange(node.shape[0]), count)  # the next depth's, in order
            index = np.arange(parent.shape[0]) - np.repeat(np.cumsum(count) - count, count)  # among siblings
            deal_child = kind[parent] == DEAL
            node = betting.first_child[node[parent]] + np.where(deal_child, 0, index)
            board = board[parent]
            if dealt:
                board[deal_child] = np.concatenate(dealt)
        node, board = np.concatenate(nodes), np.concatenate(boards)
        num_children = np.concatenate(child_counts)
        self.kind = betting.kind[node]
        self.first_child = (1 + np.cumsum(num_children) - num_children).astype(np.int64)
        self.num_children = num_children.astype(np.int32)
        self.betting = node.astype(np.int32)
        self.round = betting.round[node]
        self.board = board.astype(np.int32)
        self.contribution = betting.contribution[node]
        self.folder = betting.folder[node]
        self.chance_weight = betting.chance_weight[betting.level[node]]
        self.action_labels = [betting.action_labels[n] for n in node.tolist()]
        self.betting_histories = betting.histories
        self.num_nodes = node.shape[0]
        self.num_bettings = betting.num_nodes
        self.decision_nodes = np.flatnonzero(self.kind <= 1).astype(np.int64)
        self.decision_index = np.full(self.num_nodes, -1, np.int64)
        self.decision_index[self.decision_nodes] = np.arange(self.decision_nodes.shape[0])

    def _showdown_order(self) -> None:
        """Per board seen at a showdown: its valid hands sorted by strength, and the strengths.

        ``showdown_start[b]`` .. ``showdown_start[b + 1]`` index ``showdown_hands`` (int64) and
        ``showdown_strength`` (int64, ascending) for board ``b``; boards without a showdown
        have an empty range.
        """
        boards = np.unique(self.board[self.kind == SHOWDOWN])  # every showdown board is a final one
        width = len(self.board_cards[boards[0]]) if boards.size else 0
        board_cards = np.array([self.board_cards[b] for b in boards.tolist()], np.int64)
        board_cards = board_cards.reshape(boards.shape[0], width)
        count, hands, strength = showdown_tables(self.game.card_structure, self.hand_cards, self.hand_mask,
                                                 board_cards)
        counts = np.zeros(len(self.board_cards), np.int64)
        counts[boards] = count
        self.showdown_start = offsets_of(counts)
        self.showdown_hands = np.concatenate([hands[i, :c] for i, c in enumerate(count.tolist())]
                                             or [np.zeros(0, np.int64)]).astype(np.int64)
        self.showdown_strength = np.concatenate([strength[i, :c] for i, c in enumerate(count.tolist())]
                                                or [np.zeros(0, np.int64)]).astype(np.int64)

    # ------------------------------------------------------------------ queries
    def valid_hands(self, node: int) -> np.ndarray:
        """Hands (indices) that do not share a card with the board at ``node``."""
        board = self.board[node]
        return self.valid_list[self.valid_start[board]:self.valid_start[board + 1]]

    def hand_outcome(self, hand: int) -> int:
        """The LimitPoker deal outcome (slot 0) of a hand: its rank when dealt by rank."""
        combo = tuple(self.hand_cards[hand].tolist())
        if self.game.deal_by_rank:
            return combo[0] // self.game.card_structure.num_suits
        return self.game.slot_outcome_cards[0].index(combo)

    def sizes(self) -> dict[str, int]:
        return {"public_nodes": self.num_nodes, "decision_nodes": int(self.decision_nodes.shape[0]),
                "betting_sequences": self.num_bettings, "boards": len(self.board_cards),
                "hands": self.num_hands, "bytes": self.nbytes}

    @property
    def nbytes(self) -> int:
        arrays = (self.kind, self.first_child, self.num_children, self.betting, self.round, self.board,
                  self.contribution, self.folder, self.chance_weight, self.hand_cards, self.hand_mask,
                  self.board_mask, self.valid_start, self.valid_list, self.showdown_start,
                  self.showdown_hands, self.showdown_strength)
        return int(sum(a.nbytes for a in arrays))


def showdown_tables(deck, hand_cards: np.ndarray, hand_mask: np.ndarray, boards: np.ndarray,
                    alive: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per final board (rows of int64 ``boards``, those with ``alive`` False skipped: count
    0): the number of hands off it, and those hands with their strengths in ascending order
    (``showdown_orders`` on ``deck``, a ``CardStructure``): int64 (rows,), (rows, hands) twice."""
    rows, hands = boards.shape[0], hand_cards.shape[0]
    count = np.zeros(rows, np.int64)
    ordered = np.zeros((rows, hands), np.int64)
    strength = np.zeros((rows, hands), np.int64)
    showdown_orders(hand_cards, hand_mask, np.ascontiguousarray(boards, np.int64),
                    np.ones(rows, np.bool_) if alive is None else alive, deck.num_ranks, deck.num_suits,
                    count, ordered, strength)
    return count, ordered, strength


@numba.njit(cache=True, no_cfunc_wrapper=True)
def showdown_orders(hand_cards, hand_mask, boards, alive, num_ranks, num_suits, count, hands, strength):
    """Per final board ``boards[i]`` (int64 cards) with ``alive[i]``: its valid hands sorted
    by showdown strength (``hand_ranking.hand_value``) into ``hands[i]`` / ``strength[i]``."""
    k = hand_cards.shape[1]
    cards = np.zeros(k + boards.shape[1], np.int64)
    values = np.zeros(hand_cards.shape[0], np.int64)
    valid = np.zeros(hand_cards.shape[0], np.int64)
    for i in range(boards.shape[0]):
        if not alive[i]:
            continue
        mask = 0
        for c in range(boards.shape[1]):
            mask |= np.int64(1) << boards[i, c]
            cards[k + c] = boards[i, c]
        n = 0
        for h in range(hand_cards.shape[0]):
            if hand_mask[h] & mask == 0:
                cards[:k] = hand_cards[h]
                valid[n] = h
                values[n] = hand_value(cards, cards.shape[0], num_ranks, num_suits)
                n += 1
        order = np.argsort(values[:n], kind="mergesort")
        count[i] = n
        for x in range(n):
            hands[i, x] = valid[order[x]]
            strength[i, x] = values[order[x]]
