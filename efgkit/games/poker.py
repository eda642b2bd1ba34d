"""Limit poker with one private card and at most one board card: Kuhn, Leduc, generic poker Pbrc.

One engine, ``LimitPoker``, plays every member of the family. Each player antes and gets
one private card; rounds of betting follow, a round may open with one public (board)
card, and a round ends on check-check or a call. In every round player 0 acts first.
A player facing no bet may check or bet one of the round's bet sizes; a player facing a
bet may fold, call, or raise by one of the round's raise sizes (the raiser first matches,
then adds the raise). A round allows ``max_bets_per_round`` aggressive actions (the bet
and the raises). At the showdown equal private ranks tie, else a player whose private
rank pairs the board wins, else the higher private rank wins; the winner gains the
loser's whole contribution (ante included), and a folder loses its own contribution.

The presets:

* ``kuhn_poker(cards)``: Kuhn poker with ``cards`` ranks of one suit, ante 1, bet 1, one
  round. With 3 cards it is OpenSpiel's ``kuhn_poker`` node for node: actions "pass"
  (check or fold, id 0) and "bet" (bet or call, id 1), chance deals player 0's card
  then player 1's, in ascending card order. 12 infosets with 3 cards, 20 with 5
  (Čermák et al., Sec. 5; seed_cermak.md §4.3.4).
* ``leduc_poker(suit_isomorphism)``: OpenSpiel's ``leduc_poker``: ranks J, Q, K in two
  suits, card id ``2 * rank + suit`` (OpenSpiel's numbering; named Js, Jh, ..., Kh), ante 1, bets and raises
  of 2 then 4, two aggressive actions per round, actions "fold" (only when facing a
  bet), "call" (also the check), "raise" (also the bet) in OpenSpiel's id order. 9,457
  nodes, 936 infosets, value -0.085606424078 for player 0. With suit isomorphism the
  deal is by rank, as OpenSpiel does it (outcome = rank, probability by remaining
  copies), and infosets see ranks only: 288 infosets.
* ``generic_poker(bets, raises, cap)``: Čermák et al.'s Pbrc (Sec. 5.3.1, rules from the
  authors' GTLibrary code, seed_cermak.md §4.3.1): 4 ranks (T, J, Q, K) of 3 cards
  dealt by rank, ante 1, bets {2, ..., 2b} and raises {2, ..., 2r} doubled in round 2, ``cap``
  consecutive raises after a bet; actions "bet2".."check" when facing nothing and
  "call", "raise2".., "fold" when facing a bet. P111 has 5,045 nodes and 504 infosets,
  P222 162,869 and 14,040, P224 3,006,005 and 252,504.

Infoset keys read like ``"P1 card=Ks board=Qh bets=rc/cr"`` (the board part is absent in
one-round games, ``bets=-`` before any action, rounds separated by ``/``); the public
state is the same text without the player and card. ``LimitPoker.card_structure``
describes the deck and the showdown for card abstraction.

``compile()`` builds the tree fast: the betting part of the public tree (the "betting
skeleton", card independent) is walked once through the protocol methods, and a numba
kernel expands it over every deal in depth-first preorder; ``tree_from_preorder`` does
the rest. The result is identical to ``build_tree(game)`` (same fingerprint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from tqdm import tqdm

from efgkit.errors import GameDefinitionError, GameSpecError
from efgkit.games.builder import (
    PREORDER_FIELDS,
    allocate_preorder,
    checked_node_limit,
    tree_from_preorder,
)
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.games.registry import GameEntry, Parameter
from efgkit.games.tree import GameTree

RANK_SYMBOLS = "23456789TJQKA"
SUIT_SYMBOLS = "shdc"

# Betting action kinds; an action is (kind, amount in chips).
FOLD, CHECK, CALL, BET, RAISE = range(5)
_AGGRESSIVE = (BET, RAISE)

# Where a state is in the betting: a player acts, the board card is due, or the game is over.
_ACTING, _BOARD_DUE, _FOLDED, _SHOWDOWN = range(4)


@dataclass(frozen=True)
class CardStructure:
    """The deck and the showdown of a poker game, for card abstraction.

    Cards are numbered ``rank * num_suits + suit`` (ranks ascending in strength). Every
    player holds ``private_cards_per_player`` cards and round ``r`` opens with
    ``public_cards_per_round[r]`` board cards. The showdown rule here is defined for one
    private card and at most one board card in all.
    """

    num_ranks: int
    num_suits: int
    private_cards_per_player: int
    public_cards_per_round: tuple[int, ...]

    def __post_init__(self) -> None:
        if not 2 <= self.num_ranks <= len(RANK_SYMBOLS) or not 1 <= self.num_suits <= len(SUIT_SYMBOLS):
            raise GameDefinitionError(
                f"a deck needs 2..{len(RANK_SYMBOLS)} ranks and 1..{len(SUIT_SYMBOLS)} suits, got "
                f"{self.num_ranks} ranks and {self.num_suits} suits"
            )
        if self.private_cards_per_player != 1 or sum(self.public_cards_per_round) > 1:
            raise GameDefinitionError(
                "the showdown is defined for one private card per player and at most one board card"
            )
        if not self.public_cards_per_round or self.public_cards_per_round[0] != 0:
            raise GameDefinitionError("the first betting round cannot open with a board card")
        if self.num_suits * self.num_ranks < 3:
            raise GameDefinitionError("the deck needs at least 3 cards")

    @property
    def num_cards(self) -> int:
        return self.num_ranks * self.num_suits

    @property
    def num_board_cards(self) -> int:
        return sum(self.public_cards_per_round)

    def rank_of(self, card: int) -> int:
        return card // self.num_suits

    def rank_name(self, rank: int) -> str:
        """Ranks count down from the king as usual (3 ranks: J, Q, K); 13 ranks add the ace."""
        return RANK_SYMBOLS[max(0, len(RANK_SYMBOLS) - 1 - self.num_ranks) + rank]

    def card_name(self, card: int) -> str:
        rank = self.rank_name(self.rank_of(card))
        return rank if self.num_suits == 1 else rank + SUIT_SYMBOLS[card % self.num_suits]

    def showdown(self, rank0: int, rank1: int, board_ranks: tuple[int, ...] = ()) -> int:
        """+1 if player 0 wins the showdown, -1 if player 1 wins, 0 for a tie."""
        if rank0 == rank1:
            return 0
        paired0, paired1 = rank0 in board_ranks, rank1 in board_ranks
        if paired0 != paired1:
            return 1 if paired0 else -1
        return 1 if rank0 > rank1 else -1


@dataclass(frozen=True)
class ActionStyle:
    """How a family names and orders betting actions.

    ``labels`` and ``tokens`` are format strings per action kind (FOLD, CHECK, CALL, BET,
    RAISE) with ``{amount}`` available; labels are the action labels, tokens spell the
    betting history in keys. ``order`` is "openspiel" (check, bets / fold, call, raises:
    OpenSpiel's action ids) or "gtlibrary" (bets, check / call, raises, fold: Čermák et
    al.'s reference code).
    """

    labels: tuple[str, str, str, str, str]
    tokens: tuple[str, str, str, str, str]
    order: str

    def __post_init__(self) -> None:
        if self.order not in ("openspiel", "gtlibrary"):
            raise GameDefinitionError(f"action order must be openspiel or gtlibrary, got {self.order!r}")


KUHN_STYLE = ActionStyle(("pass", "pass", "bet", "bet", "bet"), ("p", "p", "b", "b", "b"), "openspiel")
LEDUC_STYLE = ActionStyle(
    ("fold", "call", "call", "raise", "raise"), ("f", "c", "c", "r", "r"), "openspiel"
)
GENERIC_POKER_STYLE = ActionStyle(
    ("fold", "check", "call", "bet{amount}", "raise{amount}"),
    ("f", "k", "c", "b{amount}", "r{amount}"),
    "gtlibrary",
)


class Betting(NamedTuple):
    """The card-independent part of a state."""

    history: tuple[tuple[tuple[int, int], ...], ...]
    """Actions (kind, amount) of each round opened so far."""
    contribution: tuple[int, int]
    """Chips each player has put in, ante included."""
    status: int


def folder_of(betting: Betting) -> int:
    """The player who folded (the last to act), or -1 when nobody has."""
    return (len(betting.history[-1]) - 1) % 2 if betting.status == _FOLDED else -1


class PokerState(NamedTuple):
    cards: tuple[int, ...]
    """Dealt outcomes in deal order: player 0's card, player 1's card, the board card."""
    betting: Betting


class LimitPoker:
    """Rules of one limit-poker game (the Game protocol) plus its fast builder ``compile()``.

    ``bet_sizes[r]`` and ``raise_sizes[r]`` list round ``r``'s sizes in ascending order.
    With ``deal_by_rank`` a chance outcome is a rank, with probability proportional to
    its remaining copies (Pbrc, OpenSpiel's suit-isomorphic Leduc); otherwise it is a
    card, uniform over the remaining deck.
    """

    def __init__(
        self,
        spec: str,
        card_structure: CardStructure,
        *,
        deal_by_rank: bool,
        ante: int,
        bet_sizes: tuple[tuple[int, ...], ...],
        raise_sizes: tuple[tuple[int, ...], ...],
        max_bets_per_round: int,
        style: ActionStyle,
    ) -> None:
        rounds = len(card_structure.public_cards_per_round)
        if len(bet_sizes) != rounds or len(raise_sizes) != rounds:
            raise GameDefinitionError(f"{spec}: bet and raise sizes must be given for all {rounds} rounds")
        if any(not sizes for sizes in bet_sizes) or max_bets_per_round < 1 or ante < 0:
            raise GameDefinitionError(f"{spec}: every round needs a bet size, and a bet must be allowed")
        self.spec = spec
        self.card_structure = card_structure
        self.deal_by_rank = deal_by_rank
        self.ante = ante
        self.bet_sizes = bet_sizes
        self.raise_sizes = raise_sizes
        self.max_bets_per_round = max_bets_per_round
        self.style = style
        self.num_rounds = rounds
        cards = card_structure
        if deal_by_rank:
            self.outcome_copies = (cards.num_suits,) * cards.num_ranks
            self.outcome_rank = tuple(range(cards.num_ranks))
            self.outcome_names = tuple(cards.rank_name(r) for r in range(cards.num_ranks))
        else:
            self.outcome_copies = (1,) * cards.num_cards
            self.outcome_rank = tuple(cards.rank_of(c) for c in range(cards.num_cards))
            self.outcome_names = tuple(cards.card_name(c) for c in range(cards.num_cards))
        self._outcome_of_name = {name: i for i, name in enumerate(self.outcome_names)}
        self._betting_texts: dict[tuple, str] = {}

    # ------------------------------------------------------------------ betting rules
    def betting_actions(self, betting: Betting) -> list[tuple[int, int]]:
        """The legal (kind, amount) actions of the player to act, in the style's order."""
        round_index = len(betting.history) - 1
        actions = betting.history[-1]
        actor = len(actions) % 2
        can_raise = sum(kind in _AGGRESSIVE for kind, _ in actions) < self.max_bets_per_round
        gtlibrary = self.style.order == "gtlibrary"
        if betting.contribution[actor] == betting.contribution[1 - actor]:
            bets = [(BET, size) for size in self.bet_sizes[round_index]] if can_raise else []
            return [*bets, (CHECK, 0)] if gtlibrary else [(CHECK, 0), *bets]
        raises = [(RAISE, size) for size in self.raise_sizes[round_index]] if can_raise else []
        if gtlibrary:
            return [(CALL, 0), *raises, (FOLD, 0)]
        return [(FOLD, 0), (CALL, 0), *raises]

    def after_action(self, betting: Betting, action: tuple[int, int]) -> Betting:
        kind, amount = action
        actions = betting.history[-1]
        actor = len(actions) % 2
        contribution = list(betting.contribution)
        history = (*betting.history[:-1], (*actions, action))
        closes = kind == CALL or (kind == CHECK and bool(actions) and actions[-1][0] == CHECK)
        if kind == FOLD:
            return Betting(history, betting.contribution, _FOLDED)
        if kind == CALL:
            contribution[actor] = contribution[1 - actor]
        elif kind == BET:
            contribution[actor] += amount
        elif kind == RAISE:
            contribution[actor] = contribution[1 - actor] + amount
        contribution = (contribution[0], contribution[1])
        if not closes:
            return Betting(history, contribution, _ACTING)
        next_round = len(history)
        if next_round == self.num_rounds:
            return Betting(history, contribution, _SHOWDOWN)
        if self.card_structure.public_cards_per_round[next_round]:
            return Betting(history, contribution, _BOARD_DUE)
        return Betting((*history, ()), contribution, _ACTING)

    def action_label(self, action: tuple[int, int]) -> str:
        kind, amount = action
        return self.style.labels[kind].format(amount=amount)

    def betting_text(self, betting: Betting) -> str:
        """The history in tokens, rounds separated by "/" ("-" before any action); memoised."""
        text = self._betting_texts.get(betting.history)
        if text is None:
            tokens = self.style.tokens
            rounds = ["".join(tokens[k].format(amount=a) for k, a in actions) for actions in betting.history]
            text = self._betting_texts[betting.history] = "/".join(rounds) or "-"
        return text

    # ------------------------------------------------------------------ Game protocol
    def initial_state(self) -> PokerState:
        return PokerState((), Betting(((),), (self.ante, self.ante), _ACTING))

    def current_player(self, state: PokerState) -> int:
        status = state.betting.status
        if len(state.cards) < 2 or status == _BOARD_DUE:
            return CHANCE
        if status == _ACTING:
            return PLAYER1 if len(state.betting.history[-1]) % 2 else PLAYER0
        return TERMINAL

    def legal_actions(self, state: PokerState) -> list[str]:
        return [self.action_label(action) for action in self.betting_actions(state.betting)]

    def chance_outcomes(self, state: PokerState) -> list[tuple[str, float]]:
        left = self.card_structure.num_cards - len(state.cards)
        outcomes = []
        for outcome, copies in enumerate(self.outcome_copies):
            remaining = copies - state.cards.count(outcome)
            if remaining > 0:
                outcomes.append((self.outcome_names[outcome], remaining / left))
        return outcomes

    def apply(self, state: PokerState, action: str) -> PokerState:
        if self.current_player(state) == CHANCE:
            cards = (*state.cards, self._outcome_of_name[action])
            betting = state.betting
            if betting.status == _BOARD_DUE:
                betting = Betting((*betting.history, ()), betting.contribution, _ACTING)
            return PokerState(cards, betting)
        for candidate in self.betting_actions(state.betting):
            if self.action_label(candidate) == action:
                return PokerState(state.cards, self.after_action(state.betting, candidate))
        raise GameDefinitionError(f"{self.spec}: {action!r} is not a legal action here")

    def terminal_utility(self, state: PokerState) -> float:
        betting = state.betting
        contribution0, contribution1 = betting.contribution
        folder = folder_of(betting)
        if folder >= 0:
            return float(contribution1 if folder == PLAYER1 else -contribution0)
        ranks = [self.outcome_rank[outcome] for outcome in state.cards]
        winner = self.card_structure.showdown(ranks[0], ranks[1], tuple(ranks[2:]))
        return float(contribution1 if winner > 0 else -contribution0 if winner < 0 else 0)

    def infoset_key(self, state: PokerState) -> str:
        player = self.current_player(state)
        return f"P{player} card={self.outcome_names[state.cards[player]]} {self.public_state_key(state)}"

    def public_state_key(self, state: PokerState) -> str:
        if len(state.cards) < 2:
            return f"deal P{len(state.cards)} card"
        bets = f"bets={self.betting_text(state.betting)}"
        if not self.card_structure.num_board_cards:
            return bets
        board = self.outcome_names[state.cards[2]] if len(state.cards) > 2 else "-"
        return f"board={board} {bets}"

    # ------------------------------------------------------------------ fast builder
    def num_nodes(self) -> int:
        """All nodes of the tree, counted without building it.

        The subtree below a state has a shape fixed by the dealt cards (as a multiset),
        the round, the status, the aggressive actions so far in the round and the last
        action's kind, so one count per such shape suffices.
        """
        counts: dict[tuple, int] = {}

        def count(state: PokerState) -> int:
            actions = state.betting.history[-1]
            shape = (
                tuple(sorted(state.cards)), len(state.betting.history), state.betting.status,
                sum(kind in _AGGRESSIVE for kind, _ in actions), actions[-1][0] if actions else -1,
            )
            if shape not in counts:
                player = self.current_player(state)
                if player == TERMINAL:
                    labels = []
                elif player == CHANCE:
                    labels = [label for label, _ in self.chance_outcomes(state)]
                else:
                    labels = self.legal_actions(state)
                counts[shape] = 1 + sum(count(self.apply(state, label)) for label in labels)
            return counts[shape]

        return count(self.initial_state())

    def compile(self, node_limit: int | None = None, progress: bool = False) -> GameTree:
        """Build the GameTree with a numba kernel (identical to ``build_tree(self)``)."""
        total = self.num_nodes()
        limit = checked_node_limit(self.spec, total, node_limit)
        with tqdm(total=3, desc=f"building {self.spec}", disable=not progress) as bar:
            skeleton = _BettingSkeleton(self)
            bar.update(1)
            arrays = allocate_preorder(total)
            written = _expand_deals(
                skeleton.kind, skeleton.first_child, skeleton.num_children, skeleton.deal_slot,
                skeleton.board_dealt, skeleton.folder, skeleton.contribution,
                np.array(self.outcome_copies, np.int64), np.array(self.outcome_rank, np.int64),
                self._showdown_table(), self.card_structure.num_cards, skeleton.max_depth,
                *(arrays[name] for name, _ in PREORDER_FIELDS),
            )
            assert written == total, "poker kernel and num_nodes disagree"
            bar.update(1)
            tree = tree_from_preorder(
                self.spec,
                **arrays,
                describe_infoset=skeleton.describe_infoset,
                action_labels_of=skeleton.action_labels_of,
                describe_public=skeleton.describe_public,
                game=self,
                node_limit=limit,
            )
            bar.update(1)
        return tree

    def _showdown_table(self) -> np.ndarray:
        """int8 [rank0, rank1, board rank + 1 (0: no board)]: +1/-1/0 as ``showdown``."""
        ranks = self.card_structure.num_ranks
        table = np.zeros((ranks, ranks, ranks + 1), np.int8)
        for rank0 in range(ranks):
            for rank1 in range(ranks):
                table[rank0, rank1, 0] = self.card_structure.showdown(rank0, rank1)
                for board in range(ranks):
                    table[rank0, rank1, board + 1] = self.card_structure.showdown(rank0, rank1, (board,))
        return table


class _BettingSkeleton:
    """The public tree with every chance node collapsed to one child, as flat arrays.

    Betting never depends on the cards, so the full tree is this skeleton expanded over
    the deals. It is walked breadth-first through the game's protocol methods, following
    the first outcome at chance nodes, and keeps one representative state per node for
    the readable keys.
    """

    def __init__(self, game: LimitPoker) -> None:
        self.game = game
        self.num_outcomes = len(game.outcome_copies)
        states = [game.initial_state()]
        kinds, first_child, num_children, deal_slot = [], [], [], []
        for state in states:  # grows while it runs: breadth-first
            player = game.current_player(state)
            kinds.append(player)
            first_child.append(len(states))
            deal_slot.append(len(state.cards) if player == CHANCE else -1)
            if player == CHANCE:
                children = [game.apply(state, game.chance_outcomes(state)[0][0])]
            elif player == TERMINAL:
                children = []
            else:
                children = [game.apply(state, label) for label in game.legal_actions(state)]
            num_children.append(len(children))
            states.extend(children)
        self.states = states
        self.kind = np.array(kinds, np.int8)
        self.first_child = np.array(first_child, np.int64)
        self.num_children = np.array(num_children, np.int64)
        self.deal_slot = np.array(deal_slot, np.int64)
        self.board_dealt = np.array([len(s.cards) > 2 for s in states], np.bool_)
        self.folder = np.array([folder_of(s.betting) for s in states], np.int8)
        self.contribution = np.array([s.betting.contribution for s in states], np.float64)
        depth = np.zeros(len(states), np.int64)
        for node in range(len(states)):
            depth[first_child[node]:first_child[node] + num_children[node]] = depth[node] + 1
        self.max_depth = int(depth.max())
        self._labels: dict[int, list[str]] = {}

    def _state_with_cards(self, skeleton_node: int, own: int, board: int) -> PokerState:
        """The representative state of a skeleton node with the given cards filled in."""
        cards = [own, own]  # the opponent's card never shows in a key
        if board >= 0:
            cards.append(board)
        return PokerState(tuple(cards), self.states[skeleton_node].betting)

    def _decode(self, code: int) -> tuple[int, int, int]:
        base = self.num_outcomes + 1
        skeleton_node, rest = divmod(code, self.num_outcomes * base)
        own, board = divmod(rest, base)
        return skeleton_node, own, board - 1

    def describe_infoset(self, code: int) -> str:
        skeleton_node, own, board = self._decode(code)
        return self.game.infoset_key(self._state_with_cards(skeleton_node, own, board))

    def action_labels_of(self, code: int) -> list[str]:
        skeleton_node = self._decode(code)[0]
        labels = self._labels.get(skeleton_node)
        if labels is None:
            labels = self._labels[skeleton_node] = self.game.legal_actions(self.states[skeleton_node])
        return labels

    def describe_public(self, code: int) -> str:
        skeleton_node, board = divmod(code, self.num_outcomes + 1)
        state = self.states[skeleton_node]
        if len(state.cards) >= 2:
            state = self._state_with_cards(skeleton_node, 0, board - 1)
        return self.game.public_state_key(state)


@numba.njit(cache=True)
def _expand_deals(
    skeleton_kind, skeleton_first_child, skeleton_num_children, skeleton_deal_slot, skeleton_board_dealt,
    skeleton_folder, skeleton_contribution, outcome_copies, outcome_rank, showdown_table, num_cards,
    skeleton_depth, kind, depth, num_children, chance_prob, utility, infoset_code, public_code,
):
    """Expand the betting skeleton over every deal, writing nodes in depth-first preorder.

    ``dealt[slot]`` holds the outcome of each deal slot (0: player 0's card, 1: player
    1's, 2: the board) on the current path: a stack entry that deals a slot sets it when
    popped, and everything popped before its next sibling lies in its subtree. Infoset
    code = (skeleton node * outcomes + own card) * (outcomes + 1) + board + 1 (0 before
    the board); public code = skeleton node * (outcomes + 1) + board + 1. Returns the
    number of nodes written.
    """
    outcomes = outcome_copies.shape[0]
    capacity = (skeleton_depth + 1) * max(outcomes, skeleton_num_children.max()) + 1
    stack_node = np.empty(capacity, np.int64)
    stack_depth = np.empty(capacity, np.int64)
    stack_slot = np.empty(capacity, np.int64)
    stack_outcome = np.empty(capacity, np.int64)
    stack_prob = np.empty(capacity, np.float64)
    dealt = np.full(3, -1, np.int64)
    stack_node[0], stack_depth[0], stack_slot[0], stack_prob[0] = 0, 0, -1, 1.0
    top = 1
    count = 0
    while top > 0:
        top -= 1
        node = stack_node[top]
        node_depth = stack_depth[top]
        prob = stack_prob[top]
        if stack_slot[top] >= 0:
            dealt[stack_slot[top]] = stack_outcome[top]
        node_kind = skeleton_kind[node]
        board = dealt[2] + 1 if skeleton_board_dealt[node] else 0
        children = 0
        value = 0.0
        code = -1
        if node_kind == 2:
            slot = skeleton_deal_slot[node]
            left = num_cards - slot
            for outcome in range(outcomes - 1, -1, -1):
                remaining = outcome_copies[outcome]
                for earlier in range(slot):
                    if dealt[earlier] == outcome:
                        remaining -= 1
                if remaining > 0:
                    stack_node[top] = skeleton_first_child[node]
                    stack_depth[top] = node_depth + 1
                    stack_slot[top] = slot
                    stack_outcome[top] = outcome
                    stack_prob[top] = remaining / left
                    top += 1
                    children += 1
        elif node_kind == 3:
            folder = skeleton_folder[node]
            if folder == 0:
                value = -skeleton_contribution[node, 0]
            elif folder == 1:
                value = skeleton_contribution[node, 1]
            else:
                board_rank = outcome_rank[dealt[2]] + 1 if skeleton_board_dealt[node] else 0
                winner = showdown_table[outcome_rank[dealt[0]], outcome_rank[dealt[1]], board_rank]
                if winner > 0:
                    value = skeleton_contribution[node, 1]
                elif winner < 0:
                    value = -skeleton_contribution[node, 0]
        else:
            children = skeleton_num_children[node]
            first = skeleton_first_child[node]
            for k in range(children - 1, -1, -1):
                stack_node[top] = first + k
                stack_depth[top] = node_depth + 1
                stack_slot[top] = -1
                stack_prob[top] = 1.0
                top += 1
            code = (node * outcomes + dealt[node_kind]) * (outcomes + 1) + board
        kind[count] = node_kind
        depth[count] = node_depth
        num_children[count] = children
        chance_prob[count] = prob
        utility[count] = value
        infoset_code[count] = code
        public_code[count] = node * (outcomes + 1) + board
        count += 1
    return count


def _check_range(family: str, name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise GameSpecError(f"{family}: {name}={value} must be between {low} and {high}")


MAX_KUHN_CARDS = len(RANK_SYMBOLS)
MAX_BET_SIZES = 4
MAX_RAISE_SIZES = 4
MAX_CONSECUTIVE_RAISES = 6


def kuhn_poker(cards: int = 3) -> LimitPoker:
    """Kuhn poker with ``cards`` cards (OpenSpiel's ``kuhn_poker`` for 3)."""
    _check_range("kuhn", "cards", cards, 3, MAX_KUHN_CARDS)
    return LimitPoker(
        KUHN.canonical_spec({"cards": cards}),
        CardStructure(cards, 1, 1, (0,)),
        deal_by_rank=False,
        ante=1,
        bet_sizes=((1,),),
        raise_sizes=((),),
        max_bets_per_round=1,
        style=KUHN_STYLE,
    )


def leduc_poker(suit_isomorphism: bool = False) -> LimitPoker:
    """OpenSpiel's ``leduc_poker`` (``suit_isomorphism`` as OpenSpiel's parameter)."""
    return LimitPoker(
        LEDUC.canonical_spec({"suit_isomorphism": suit_isomorphism}),
        CardStructure(3, 2, 1, (0, 1)),
        deal_by_rank=suit_isomorphism,
        ante=1,
        bet_sizes=((2,), (4,)),
        raise_sizes=((2,), (4,)),
        max_bets_per_round=2,
        style=LEDUC_STYLE,
    )


def generic_poker(bets: int = 1, raises: int = 1, cap: int = 1) -> LimitPoker:
    """Čermák et al.'s generic poker Pbrc: ``bets`` bet sizes, ``raises`` raise sizes, ``cap`` raises."""
    _check_range("poker", "bets", bets, 1, MAX_BET_SIZES)
    _check_range("poker", "raises", raises, 1, MAX_RAISE_SIZES)
    _check_range("poker", "cap", cap, 1, MAX_CONSECUTIVE_RAISES)
    round1_bets = tuple(range(2, 2 * bets + 1, 2))
    round1_raises = tuple(range(2, 2 * raises + 1, 2))
    return LimitPoker(
        POKER.canonical_spec({"bets": bets, "raises": raises, "cap": cap}),
        CardStructure(4, 3, 1, (0, 1)),
        deal_by_rank=True,
        ante=1,
        bet_sizes=(round1_bets, tuple(2 * size for size in round1_bets)),
        raise_sizes=(round1_raises, tuple(2 * size for size in round1_raises)),
        max_bets_per_round=cap + 1,
        style=GENERIC_POKER_STYLE,
    )


KUHN = GameEntry(
    name="kuhn",
    summary="Kuhn poker: one card each from `cards` ranks, ante 1, bet 1 (OpenSpiel's kuhn_poker for 3)",
    parameters=(
        Parameter("cards", int, 3, "cards in the deck (one per rank)", minimum=3, maximum=MAX_KUHN_CARDS),
    ),
    factory=kuhn_poker,
)
LEDUC = GameEntry(
    name="leduc",
    summary="Leduc poker, identical to OpenSpiel's leduc_poker (936 infosets; 288 with suit isomorphism)",
    parameters=(
        Parameter(
            "suit_isomorphism", bool, False, "deal and observe ranks only, as OpenSpiel's parameter"
        ),
    ),
    factory=leduc_poker,
)
POKER = GameEntry(
    name="poker",
    summary=(
        "generic poker Pbrc of Čermák et al. (Sec. 5.3.1): 4 ranks x 3 cards, two rounds, "
        "b bet sizes, r raise sizes, c consecutive raises"
    ),
    parameters=(
        Parameter("bets", int, 1, "number of bet sizes (b)", minimum=1, maximum=MAX_BET_SIZES),
        Parameter("raises", int, 1, "number of raise sizes (r)", minimum=1, maximum=MAX_RAISE_SIZES),
        Parameter("cap", int, 1, "consecutive raises allowed (c)", minimum=1, maximum=MAX_CONSECUTIVE_RAISES),
    ),
    factory=generic_poker,
)

ENTRIES = (KUHN, LEDUC, POKER)
