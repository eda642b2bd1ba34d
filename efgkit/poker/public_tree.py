"""The public tree of a limit-poker game: betting sequences x boards, hands as a vector.

Burch's thesis Algorithm 3 and Johanson et al. 2011 ("Accelerating best response
calculation in large extensive games"): a node of the public tree is what both players
see (the betting so far and the board cards); each player's private hand is not a tree
node but an index into vectors of length ``num_hands`` (every combination of
``hole_cards`` cards of the deck, in lexicographic order). A hand that shares a card with
the board has reach 0 below that board; card removal between the two players' hands is
handled at the terminals by inclusion-exclusion (``terminal_values.py``).

Nodes are stored breadth first (parents before children, children contiguous) as flat
arrays:

* ``kind`` int8: 0 / 1 the player to act, ``DEAL`` a board deal, ``FOLD`` or
  ``SHOWDOWN`` a terminal;
* ``first_child`` int64, ``num_children`` int32; ``betting`` int32, the node's betting
  sequence (card independent, numbered in order of first appearance); ``round`` int8;
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
from math import comb

import numba
import numpy as np

from efgkit.errors import GameDefinitionError
from efgkit.games.csr import offsets_of
from efgkit.games.hand_ranking import hand_value
from efgkit.games.poker import Betting, LimitPoker, PokerState
from efgkit.games.protocol import CHANCE as PROTOCOL_CHANCE
from efgkit.games.protocol import TERMINAL as PROTOCOL_TERMINAL
from efgkit.poker.betting_tree import card_mask, check_hole_cards, private_hands
from efgkit.poker.codes import DEAL, FOLD, SHOWDOWN

_ACTING = 0  # LimitPoker's status of a state whose player is to act


class PublicTree:
    """The whole public tree of ``game`` (every board), built by walking its betting rules.

    ``game`` is a ``LimitPoker`` (kuhn, leduc, twocard, the Pbrc games, holdem, ACPC limit
    definitions). Games dealt by rank are played card by card here (the same distribution);
    their information sets see ranks only, which ``StrategyLayout.from_infoset_map`` follows.
    """

    def __init__(self, game: LimitPoker, *, max_nodes: int = 5_000_000) -> None:
        check_hole_cards(game)
        cards = game.card_structure
        self.game = game
        self.num_cards = cards.num_cards
        self.hole_cards = cards.private_cards_per_player
        self.hand_cards, self.hand_mask = private_hands(self.num_cards, self.hole_cards)
        self.num_hands = self.hand_cards.shape[0]
        self._board_index: dict[tuple[int, ...], int] = {}
        self.board_cards: list[tuple[int, ...]] = []
        self.board_slots: list[tuple[int, ...]] = []  # the LimitPoker outcome of each board deal
        self._build(game, max_nodes)
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

    def _deals(self, game: LimitPoker, board: tuple[int, ...],
               slot: int) -> list[tuple[tuple[int, ...], int]]:
        """Every card-level deal of board slot ``slot`` after ``board``: (cards, outcome index)."""
        size = game.deal_sizes[slot]
        outcome_of = {combo: i for i, combo in enumerate(game.slot_outcome_cards[slot])}
        suits = game.card_structure.num_suits
        deals = []
        for combo in combinations([c for c in range(self.num_cards) if c not in board], size):
            outcome = combo[0] // suits if game.deal_by_rank else outcome_of[combo]
            deals.append((combo, outcome))
        return deals

    def _build(self, game: LimitPoker, max_nodes: int) -> None:
        n, k = self.num_cards, self.hole_cards
        hole_weight = 1.0 / (comb(n, k) * comb(n - k, k))
        betting_ids: dict[tuple, int] = {}
        root = PokerState((0, 0), Betting(((),), game.blinds, _ACTING))
        # queue entries: (state, board cards, board slot outcomes, chance weight)
        queue = [(root, (), (), hole_weight)]
        kind, first_child, num_children, betting, rounds, board = [], [], [], [], [], []
        contribution, folder, chance_weight, labels = [], [], [], []
        head = 0
        while head < len(queue):
            state, cards, slots, weight = queue[head]
            head += 1
            if len(queue) > max_nodes:
                raise GameDefinitionError(f"{game.spec}: the public tree has more than {max_nodes:,} "
                                          f"nodes; solve it with public chance sampling")
            player = game.current_player(state)
            history = state.betting.history
            betting.append(betting_ids.setdefault(history, len(betting_ids)))
            rounds.append(len(history) - 1)
            board.append(self._board_id(cards, slots))
            contribution.append(state.betting.contribution)
            first_child.append(len(queue))
            children: list = []
            if player == PROTOCOL_CHANCE:
                kind.append(DEAL)
                slot = 2 + len(slots)
                left = n - 2 * k - len(cards)
                deal_weight = weight / comb(left, game.deal_sizes[slot])
                for combo, outcome in self._deals(game, cards, slot):
                    child = game.apply(state, game.slot_outcome_names[slot][outcome])
                    children.append((child, cards + combo, slots + (outcome,), deal_weight))
                folder.append(-1)
                labels.append(())
            elif player == PROTOCOL_TERMINAL:
                fold = game.folder_of(state.betting)
                kind.append(FOLD if fold >= 0 else SHOWDOWN)
                folder.append(fold)
                labels.append(())
            else:
                kind.append(player)
                actions = game.legal_actions(state)
                children = [(game.apply(state, label), cards, slots, weight) for label in actions]
                folder.append(-1)
                labels.append(tuple(actions))
            num_children.append(len(children))
            chance_weight.append(weight)
            queue.extend(children)
        self.kind = np.array(kind, np.int8)
        self.first_child = np.array(first_child, np.int64)
        self.num_children = np.array(num_children, np.int32)
        self.betting = np.array(betting, np.int32)
        self.round = np.array(rounds, np.int8)
        self.board = np.array(board, np.int32)
        self.contribution = np.array(contribution, np.float64).reshape(-1, 2)
        self.folder = np.array(folder, np.int8)
        self.chance_weight = np.array(chance_weight, np.float64)
        self.action_labels = labels
        self.betting_histories = list(betting_ids)
        self.num_nodes = len(kind)
        self.num_bettings = len(betting_ids)
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
