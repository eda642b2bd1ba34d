"""Limit poker: Kuhn, Leduc and its wider decks, generic poker Pbrc, and two-card games.

One engine, ``LimitPoker``, plays every member of the family. Each player antes and gets
``private_cards_per_player`` private cards; rounds of betting follow, a round may open
with public (board) cards, and a round ends on check-check or a call. Unless the game
names a first player per round, player 0 acts first in every round.
A player facing no bet may check or bet one of the round's bet sizes; a player facing a
bet may fold, call, or raise by one of the round's raise sizes (the raiser first matches,
then adds the raise). Round ``r`` allows ``max_bets_per_round[r]`` aggressive actions (the bet
and the raises). At the showdown the best five-card poker hand of private and board cards
wins (``hand_ranking.py``; with one private and one board card: a pair wins, else the
higher private card); the winner gains the loser's whole contribution (ante included),
and a folder loses its own contribution. Limit hold'em variants add blinds (unequal
starting contributions) and a first player per round; a round then ends on a call or a
check that is not its first action (the big blind keeps its option after a limp).

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
* ``leduc_poker(ranks=13, suits=4)`` and other decks: Leduc's rules with more cards.
* ``two_card_poker(ranks, suits, board)``: Leduc's betting with two private cards per
  player and ``board`` public cards in round 2 (``twocard`` in specs); hands of five or
  more cards rank as in hold'em.
* ``generic_poker(bets, raises, cap)``: Čermák et al.'s Pbrc (Sec. 5.3.1, rules from the
  authors' GTLibrary code, seed_cermak.md §4.3.1): 4 ranks (T, J, Q, K) of 3 cards
  dealt by rank, ante 1, bets {2, ..., 2b} and raises {2, ..., 2r} doubled in round 2, ``cap``
  consecutive raises after a bet; actions "bet2".."check" when facing nothing and
  "call", "raise2".., "fold" when facing a bet. P111 has 5,045 nodes and 504 infosets,
  P222 162,869 and 14,040, P224 3,006,005 and 252,504.

Infoset keys read like ``"P1 card=Ks board=Qh bets=rc/cr"`` (``cards=AsKh`` with two
private cards; the board part is absent in one-round games and lists each round's board
cards separated by ``/``; ``bets=-`` before any action, rounds separated by ``/``); the
public state is the same text without the player and card. Card names come from
``rank_symbols``: a deck of four suits keeps the top ranks (``holdem(ranks=5)`` is T to A),
a deck of fewer suits counts down from the king (Kuhn's and Leduc's J, Q, K). Each chance
node deals one player's whole hand, or one round's whole board, as a set of cards (outcomes
are card combinations in lexicographic order). ``LimitPoker.card_structure``
describes the deck and the showdown for card abstraction.

``compile()`` builds the tree fast: the card-independent betting tree
(``betting_tree.BettingTree``, one walk of the betting rules) behind the two hand deals is the
"betting skeleton", and a numba kernel (``poker_preorder``, imported only then) expands it
over every deal in depth-first preorder; ``tree_from_preorder`` does the rest. The result is
identical to ``build_tree(game)`` (same fingerprint).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np

from efgkit.errors import GameDefinitionError, GameSpecError
from efgkit.games.betting_tree import (
    HAND_DEALS,
    STATUS_ACTING,
    STATUS_BOARD_DUE,
    STATUS_FOLDED,
    STATUS_SHOWDOWN,
    Betting,
    BettingTree,
)
from efgkit.games.builder import compile_preorder
from efgkit.games.parameters import GameEntry, Parameter
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.games.tree import GameTree

RANK_SYMBOLS = "23456789TJQKA"
SUIT_SYMBOLS = "shdc"


def rank_symbols(num_ranks: int, num_suits: int) -> str:
    """The names of a deck's ``num_ranks`` ranks, weakest first: which ranks a deck keeps.

    A deck of four suits is the standard deck cut down to its top ranks (5 ranks: T J Q K A;
    8: 7 to A), as the ACPC server deals a reduced deck; the hold'em bucket files
    (``abstraction/cards/holdem/deck.py``) name their cards with it. A deck of fewer suits
    counts down from the king, as OpenSpiel names Kuhn and Leduc (3 ranks: J Q K); the ace
    joins only at 13 ranks. Only names differ: hands are ranked by rank index either way.
    """
    standard = len(RANK_SYMBOLS)
    top = standard if num_suits == len(SUIT_SYMBOLS) or num_ranks == standard else standard - 1
    return RANK_SYMBOLS[top - num_ranks:top]


# Betting action kinds; an action is (kind, amount in chips).
FOLD, CHECK, CALL, BET, RAISE = range(5)
_AGGRESSIVE = (BET, RAISE)

@dataclass(frozen=True)
class CardStructure:
    """The deck and the showdown of a poker game, for card abstraction.

    Cards are numbered ``rank * num_suits + suit`` (ranks ascending in strength). Every
    player holds ``private_cards_per_player`` cards and round ``r`` opens with
    ``public_cards_per_round[r]`` board cards. The showdown compares the best five-card
    hands (``hand_ranking.hand_value``).
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
        if self.private_cards_per_player < 1 or min(self.public_cards_per_round, default=0) < 0:
            raise GameDefinitionError("every player needs a private card, and board card counts are >= 0")
        if not self.public_cards_per_round or self.public_cards_per_round[0] != 0:
            raise GameDefinitionError("the first betting round cannot open with a board card")
        dealt = 2 * self.private_cards_per_player + self.num_board_cards
        if self.num_cards < dealt:
            raise GameDefinitionError(f"the deck has {self.num_cards} cards but a deal needs {dealt}")

    @property
    def num_cards(self) -> int:
        return self.num_ranks * self.num_suits

    @property
    def num_board_cards(self) -> int:
        return sum(self.public_cards_per_round)

    def rank_of(self, card: int) -> int:
        return card // self.num_suits

    def rank_name(self, rank: int) -> str:
        """The name of rank index ``rank`` (0 the weakest; ``rank_symbols`` says which ranks)."""
        return rank_symbols(self.num_ranks, self.num_suits)[rank]

    def card_name(self, card: int) -> str:
        rank = self.rank_name(self.rank_of(card))
        return rank if self.num_suits == 1 else rank + SUIT_SYMBOLS[card % self.num_suits]

    def showdown(self, hand0: tuple[int, ...], hand1: tuple[int, ...], board: tuple[int, ...] = ()) -> int:
        """+1 if player 0's cards win the showdown, -1 if player 1's do, 0 for a tie (card ids)."""
        from efgkit.games.hand_ranking import evaluate

        value0 = evaluate((*hand0, *board), self.num_ranks, self.num_suits)
        value1 = evaluate((*hand1, *board), self.num_ranks, self.num_suits)
        return (value0 > value1) - (value0 < value1)


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


class PokerState(NamedTuple):
    cards: tuple[int, ...]
    """Dealt outcomes in deal order: player 0's card, player 1's card, the board card."""
    betting: Betting


class InfosetCards(NamedTuple):
    """What a player sees at an infoset: private and board cards (card ids) and the betting."""

    private: tuple[int, ...]
    board: tuple[int, ...]
    betting: str
    round: int


class LimitPoker:
    """Rules of one limit-poker game (the Game protocol) plus its fast builder ``compile()``.

    ``bet_sizes[r]`` and ``raise_sizes[r]`` list round ``r``'s sizes in ascending order;
    ``max_bets_per_round`` is one cap on aggressive actions for every round or one per round
    (stored per round). ``blinds`` are the players' starting contributions (default: the
    ante each); ``first_player[r]`` acts first in round ``r`` (default: player 0).
    With ``deal_by_rank`` a chance outcome is a rank, with probability proportional to
    its remaining copies (Pbrc, OpenSpiel's suit-isomorphic Leduc; only for one card per
    deal and hands of fewer than five cards, where suits never matter); otherwise it is
    a set of cards (a player's hand, a round's board), uniform over the remaining deck.
    Deal slots: 0 and 1 are the players' hands, then one per round that opens with board
    cards; ``state.cards`` holds each dealt slot's outcome index.
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
        max_bets_per_round: int | tuple[int, ...],
        style: ActionStyle,
        blinds: tuple[int, int] | None = None,
        first_player: tuple[int, ...] | None = None,
    ) -> None:
        rounds = len(card_structure.public_cards_per_round)
        if isinstance(max_bets_per_round, int):
            max_bets_per_round = (max_bets_per_round,) * rounds
        if len(bet_sizes) != rounds or len(raise_sizes) != rounds or len(max_bets_per_round) != rounds:
            raise GameDefinitionError(
                f"{spec}: bet and raise sizes and bet caps must be given for all {rounds} rounds"
            )
        if any(not sizes for sizes in bet_sizes) or min(max_bets_per_round) < 1 or ante < 0:
            raise GameDefinitionError(f"{spec}: every round needs a bet size, and a bet must be allowed")
        blinds = (ante, ante) if blinds is None else tuple(blinds)
        first_player = (0,) * rounds if first_player is None else tuple(first_player)
        if (len(blinds) != 2 or min(blinds) < 0 or len(first_player) != rounds
                or not set(first_player) <= {0, 1}):
            raise GameDefinitionError(f"{spec}: blinds are two chip counts >= 0 and the first player "
                                      f"(0 or 1) is given for all {rounds} rounds")
        self.spec = spec
        self.blinds = (int(blinds[0]), int(blinds[1]))
        self.first_player = first_player
        self.card_structure = card_structure
        self.deal_by_rank = deal_by_rank
        self.ante = ante
        self.bet_sizes = bet_sizes
        self.raise_sizes = raise_sizes
        self.max_bets_per_round = max_bets_per_round
        self.style = style
        self.num_rounds = rounds
        cards = card_structure
        self.deal_sizes = (cards.private_cards_per_player,) * 2 + tuple(
            n for n in cards.public_cards_per_round if n)
        """Cards dealt by each chance slot: the two hands, then each board that opens a round."""
        if deal_by_rank:
            if max(self.deal_sizes) > 1 or cards.private_cards_per_player + cards.num_board_cards >= 5:
                raise GameDefinitionError(f"{spec}: dealing by rank needs one card per deal and hands "
                                          f"under five cards (where suits cannot matter)")
            self.outcome_copies = (cards.num_suits,) * cards.num_ranks
            outcome_cards = {1: tuple((rank * cards.num_suits,) for rank in range(cards.num_ranks))}
            names = {1: tuple(cards.rank_name(r) for r in range(cards.num_ranks))}
        else:
            outcome_cards = {size: tuple(combinations(range(cards.num_cards), size))
                             for size in set(self.deal_sizes)}
            names = {size: tuple("".join(cards.card_name(c) for c in combo) for combo in combos)
                     for size, combos in outcome_cards.items()}
        self.slot_outcome_cards = tuple(outcome_cards[size] for size in self.deal_sizes)
        """Per deal slot, the cards of each outcome (a representative card per rank when by rank)."""
        self.slot_outcome_names = tuple(names[size] for size in self.deal_sizes)
        self.outcome_names = self.slot_outcome_names[0]
        self._outcome_of_name = [{name: i for i, name in enumerate(slot)} for slot in self.slot_outcome_names]
        self._betting_texts: dict[tuple, str] = {}

    # ------------------------------------------------------------------ betting rules
    def actor(self, betting: Betting) -> int:
        """The player to act in the current round (the last one to act once it has ended)."""
        return (self.first_player[len(betting.history) - 1] + len(betting.history[-1])) % 2

    def folder_of(self, betting: Betting) -> int:
        """The player who folded (the last to act), or -1 when nobody has."""
        if betting.status != STATUS_FOLDED:
            return -1
        return (self.first_player[len(betting.history) - 1] + len(betting.history[-1]) - 1) % 2

    def betting_actions(self, betting: Betting) -> list[tuple[int, int]]:
        """The legal (kind, amount) actions of the player to act, in the style's order."""
        round_index = len(betting.history) - 1
        actions = betting.history[-1]
        actor = self.actor(betting)
        can_raise = sum(kind in _AGGRESSIVE for kind, _ in actions) < self.max_bets_per_round[round_index]
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
        actor = self.actor(betting)
        contribution = list(betting.contribution)
        history = (*betting.history[:-1], (*actions, action))
        # A call or check closes the round unless it is the round's first action (a limp
        # in front of the big blind's option, or the first check).
        closes = kind in (CALL, CHECK) and bool(actions)
        if kind == FOLD:
            return Betting(history, betting.contribution, STATUS_FOLDED)
        if kind == CALL:
            contribution[actor] = contribution[1 - actor]
        elif kind == BET:
            contribution[actor] += amount
        elif kind == RAISE:
            contribution[actor] = contribution[1 - actor] + amount
        contribution = (contribution[0], contribution[1])
        if not closes:
            return Betting(history, contribution, STATUS_ACTING)
        next_round = len(history)
        if next_round == self.num_rounds:
            return Betting(history, contribution, STATUS_SHOWDOWN)
        if self.card_structure.public_cards_per_round[next_round]:
            return Betting(history, contribution, STATUS_BOARD_DUE)
        return Betting((*history, ()), contribution, STATUS_ACTING)

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
        return PokerState((), Betting(((),), self.blinds, STATUS_ACTING))

    def current_player(self, state: PokerState) -> int:
        status = state.betting.status
        if len(state.cards) < 2 or status == STATUS_BOARD_DUE:
            return CHANCE
        if status == STATUS_ACTING:
            return PLAYER1 if self.actor(state.betting) else PLAYER0
        return TERMINAL

    def legal_actions(self, state: PokerState) -> list[str]:
        return [self.action_label(action) for action in self.betting_actions(state.betting)]

    def _dealt_cards(self, cards: tuple[int, ...]) -> list[int]:
        return [card for slot, outcome in enumerate(cards) for card in self.slot_outcome_cards[slot][outcome]]

    def chance_outcomes(self, state: PokerState) -> list[tuple[str, float]]:
        slot = len(state.cards)
        names = self.slot_outcome_names[slot]
        if self.deal_by_rank:
            left = self.card_structure.num_cards - slot
            outcomes = []
            for outcome, copies in enumerate(self.outcome_copies):
                remaining = copies - state.cards.count(outcome)
                if remaining > 0:
                    outcomes.append((names[outcome], remaining / left))
            return outcomes
        used = set(self._dealt_cards(state.cards))
        probability = 1 / comb(self.card_structure.num_cards - len(used), self.deal_sizes[slot])
        return [(names[outcome], probability) for outcome, combo in enumerate(self.slot_outcome_cards[slot])
                if used.isdisjoint(combo)]

    def apply(self, state: PokerState, action: str) -> PokerState:
        if self.current_player(state) == CHANCE:
            cards = (*state.cards, self._outcome_of_name[len(state.cards)][action])
            betting = state.betting
            if betting.status == STATUS_BOARD_DUE:
                betting = Betting((*betting.history, ()), betting.contribution, STATUS_ACTING)
            return PokerState(cards, betting)
        for candidate in self.betting_actions(state.betting):
            if self.action_label(candidate) == action:
                return PokerState(state.cards, self.after_action(state.betting, candidate))
        raise GameDefinitionError(f"{self.spec}: {action!r} is not a legal action here")

    def terminal_utility(self, state: PokerState) -> float:
        betting = state.betting
        contribution0, contribution1 = betting.contribution
        folder = self.folder_of(betting)
        if folder >= 0:
            return float(contribution1 if folder == PLAYER1 else -contribution0)
        hands = self.slot_outcome_cards[0][state.cards[0]], self.slot_outcome_cards[1][state.cards[1]]
        board = tuple(self._dealt_cards(state.cards)[2 * self.deal_sizes[0]:])
        winner = self.card_structure.showdown(*hands, board)
        return float(contribution1 if winner > 0 else -contribution0 if winner < 0 else 0)

    def mbb(self, chips: float) -> float:
        """``chips`` in milli big blinds (thousandths of the larger blind), the poker field's unit."""
        return chips / max(self.blinds) * 1000

    def infoset_key(self, state: PokerState) -> str:
        player = self.current_player(state)
        field = "card" if self.deal_sizes[0] == 1 else "cards"
        return f"P{player} {field}={self.outcome_names[state.cards[player]]} {self.public_state_key(state)}"

    def public_state_key(self, state: PokerState) -> str:
        if len(state.cards) < 2:
            return f"deal P{len(state.cards)} card"
        bets = f"bets={self.betting_text(state.betting)}"
        if not self.card_structure.num_board_cards:
            return bets
        boards = [self.slot_outcome_names[slot][outcome] for slot, outcome in enumerate(state.cards)][2:]
        return f"board={'/'.join(boards) or '-'} {bets}"

    def infoset_cards(self, key: str) -> InfosetCards:
        """The cards and betting an infoset key shows (the inverse of ``infoset_key``).

        Card ids are ``rank * num_suits + suit``; when the deal is by rank the keys show
        ranks only, and each rank is given a card of a suit not used yet in the key.
        """
        fields = dict(field.split("=", 1) for field in key.split(" ")[1:])
        try:
            names = [fields.get("card") or fields["cards"]]
            if fields.get("board", "-") != "-":
                names += fields["board"].split("/")
            slots = [0, *range(2, len(names) + 1)]  # own hand, then the boards
            outcomes = [self._outcome_of_name[slot][name] for slot, name in zip(slots, names, strict=True)]
            betting = fields["bets"]
        except KeyError:
            raise GameDefinitionError(f"{self.spec}: {key!r} is not an infoset key of this game") from None
        cards: list[int] = []
        suits = self.card_structure.num_suits
        for slot, outcome in zip(slots, outcomes, strict=True):
            for card in self.slot_outcome_cards[slot][outcome]:
                # By rank an outcome stands for its rank's first card; later copies take the next suits.
                copies = sum(c // suits == card // suits for c in cards) if self.deal_by_rank else 0
                cards.append(card + copies)
        private = self.deal_sizes[0]
        round_index = 0 if betting == "-" else betting.count("/")
        return InfosetCards(tuple(cards[:private]), tuple(cards[private:]), betting, round_index)

    # ------------------------------------------------------------------ fast builder
    def num_nodes(self) -> int:
        """All nodes of the tree, counted without building it.

        The subtree below a state has a shape fixed by the dealt cards (as a multiset;
        only their number when every outcome is a single card), the round, the status, the
        aggressive actions so far in the round and the last action's kind, so one count per
        such shape suffices.
        """
        counts: dict[tuple, int] = {}

        def count(state: PokerState) -> int:
            actions = state.betting.history[-1]
            dealt = tuple(sorted(state.cards)) if self.deal_by_rank else len(state.cards)
            shape = (
                dealt, len(state.betting.history), state.betting.status,
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
        from efgkit.games.poker_preorder import deal_tables, expand_deals, skeleton_view

        def emit(preorder):
            skeleton = _BettingSkeleton(self)
            view = skeleton_view(skeleton.tree, skeleton.board_radix, skeleton.num_board_codes)
            return expand_deals(view, deal_tables(self), preorder), {
                "describe_infoset": skeleton.describe_infoset, "action_labels_of": skeleton.action_labels_of,
                "describe_public": skeleton.describe_public}

        return compile_preorder(self, self.num_nodes(), node_limit, progress, emit)


class _BettingSkeleton:
    """The readable keys of the codes ``poker_preorder``'s kernel gives the nodes it expands.

    The betting skeleton is the betting ``tree`` (a ``BettingTree``, built here) behind the
    ``HAND_DEALS``: skeleton node ``HAND_DEALS + n`` is betting node ``n``. Boards dealt so far
    are coded in mixed radix: board slot ``j`` contributes ``(outcome + 1) * board_radix[j]``,
    0 while it is not dealt.
    """

    def __init__(self, game: LimitPoker) -> None:
        self.game = game
        self.tree = BettingTree(game)
        self.num_private = len(game.slot_outcome_cards[0])
        board_counts = [len(outcomes) + 1 for outcomes in game.slot_outcome_cards[2:]]
        self.board_radix = np.array(np.cumprod([1, *board_counts])[:-1], np.int64)
        self.board_counts = board_counts
        self.num_board_codes = int(np.prod(board_counts)) if board_counts else 1

    def _boards(self, board_code: int) -> list[int]:
        boards = []
        for radix, count in zip(self.board_radix.tolist(), self.board_counts, strict=True):
            digit = board_code // radix % count
            if digit == 0:
                break
            boards.append(digit - 1)
        return boards

    def _state_with_cards(self, skeleton_node: int, own: int, board_code: int) -> PokerState:
        """A state of a betting node of the skeleton with the given cards filled in."""
        cards = [own, own, *self._boards(board_code)]  # the opponent's cards never show in a key
        return PokerState(tuple(cards), self.tree.bettings[skeleton_node - HAND_DEALS])

    def describe_infoset(self, code: int) -> str:
        skeleton_node, rest = divmod(code, self.num_private * self.num_board_codes)
        own, board_code = divmod(rest, self.num_board_codes)
        return self.game.infoset_key(self._state_with_cards(skeleton_node, own, board_code))

    def action_labels_of(self, code: int) -> list[str]:
        skeleton_node = code // (self.num_private * self.num_board_codes)
        return list(self.tree.action_labels[skeleton_node - HAND_DEALS])

    def describe_public(self, code: int) -> str:
        skeleton_node, board_code = divmod(code, self.num_board_codes)
        if skeleton_node < HAND_DEALS:  # a hand is being dealt: the key names the deal only
            return self.game.public_state_key(PokerState((0,) * skeleton_node, self.tree.bettings[0]))
        return self.game.public_state_key(self._state_with_cards(skeleton_node, 0, board_code))


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


def leduc_poker(suit_isomorphism: bool = False, ranks: int = 3, suits: int = 2) -> LimitPoker:
    """OpenSpiel's ``leduc_poker`` (``suit_isomorphism`` as OpenSpiel's parameter); ``ranks``
    and ``suits`` widen the deck (``leduc(ranks=13,suits=4)`` deals from 52 cards)."""
    _check_range("leduc", "ranks", ranks, 2, len(RANK_SYMBOLS))
    _check_range("leduc", "suits", suits, 1, len(SUIT_SYMBOLS))
    return LimitPoker(
        LEDUC.canonical_spec({"suit_isomorphism": suit_isomorphism, "ranks": ranks, "suits": suits}),
        CardStructure(ranks, suits, 1, (0, 1)),
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


def two_card_poker(ranks: int = 6, suits: int = 2, board: str = "1") -> LimitPoker:
    """Leduc's betting with two private cards each: ``board`` lists the board cards that
    open each round after the first ("1": one round-2 card; "3-1": a flop, then a turn).
    Bets and raises are 2 in round 1 and 4 afterwards, two aggressive actions per round."""
    _check_range("twocard", "ranks", ranks, 2, len(RANK_SYMBOLS))
    _check_range("twocard", "suits", suits, 1, len(SUIT_SYMBOLS))
    try:
        boards = tuple(int(part) for part in board.split("-"))
    except ValueError:
        message = f"twocard: board={board!r} must be board cards per round, like 1 or 3-1"
        raise GameSpecError(message) from None
    if not boards or min(boards) < 1 or len(boards) > 3:
        raise GameSpecError(f"twocard: board={board!r} needs 1 to 3 rounds of at least one card")
    if 4 + sum(boards) > ranks * suits:
        raise GameSpecError(
            f"twocard: a {ranks}x{suits} deck cannot deal two hands and {sum(boards)} board cards")
    sizes = ((2,), *(((4,),) * len(boards)))
    return LimitPoker(
        TWO_CARD.canonical_spec({"ranks": ranks, "suits": suits, "board": board}),
        CardStructure(ranks, suits, 2, (0, *boards)),
        deal_by_rank=False,
        ante=1,
        bet_sizes=sizes,
        raise_sizes=sizes,
        max_bets_per_round=2,
        style=LEDUC_STYLE,
    )


HOLDEM_BOARD_CARDS = (0, 3, 1, 1)


def _per_round(name: str, text: str, rounds: int, minimum: int) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split("-"))
    except ValueError:
        raise GameSpecError(f"holdem: {name}={text!r} must be numbers per round, like 10-10-20-20") from None
    if len(values) < rounds or min(values[:rounds]) < minimum:
        raise GameSpecError(f"holdem: {name}={text!r} needs {rounds} values of at least {minimum}")
    return values[:rounds]


def holdem(ranks: int = 13, rounds: int = 4, blinds: str = "10-5", bets: str = "10-10-20-20",
           caps: str = "3-4-4-4") -> LimitPoker:
    """Heads-up limit Texas hold'em as the ACPC plays it (``holdem.limit.2p.reverse_blinds``).

    Two hole cards, boards of 3, 1, 1 cards, ``ranks`` top ranks of four suits (5: T to A).
    Player 0 is the big blind (ACPC player 1, ``blinds`` big then small), the small blind acts
    first pre-flop and the big blind after; ``bets`` are each round's bet and raise size and
    ``caps`` its raises (ACPC ``maxRaises``; the blinds are not raises). ``rounds`` keeps the
    first rounds only (fewer rounds end in a showdown on the board dealt so far).
    """
    _check_range("holdem", "ranks", ranks, 2, len(RANK_SYMBOLS))
    _check_range("holdem", "rounds", rounds, 1, len(HOLDEM_BOARD_CARDS))
    big, small = _per_round("blinds", blinds, 2, 0)
    sizes = tuple((size,) for size in _per_round("bets", bets, rounds, 1))
    max_raises = _per_round("caps", caps, rounds, 1)
    if 4 + sum(HOLDEM_BOARD_CARDS[:rounds]) > 4 * ranks:
        raise GameSpecError(f"holdem: {ranks} ranks of 4 suits cannot deal two hands and a board")
    return LimitPoker(
        HOLDEM.canonical_spec({"ranks": ranks, "rounds": rounds, "blinds": blinds, "bets": bets,
                               "caps": caps}),
        CardStructure(ranks, 4, 2, HOLDEM_BOARD_CARDS[:rounds]),
        deal_by_rank=False,
        ante=min(big, small),
        bet_sizes=sizes,
        raise_sizes=sizes,
        max_bets_per_round=max_raises,
        style=LEDUC_STYLE,
        blinds=(big, small),
        first_player=(1, *(0,) * (rounds - 1)),
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
        Parameter("ranks", int, 3, "ranks in the deck (3: J, Q, K; 13: 2 to A; 4 suits: the top ranks)",
                  minimum=2, maximum=len(RANK_SYMBOLS)),
        Parameter("suits", int, 2, "cards of each rank", minimum=1, maximum=len(SUIT_SYMBOLS)),
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

TWO_CARD = GameEntry(
    name="twocard",
    summary="Leduc's betting with two private cards each and hold'em hand ranking (card abstraction studies)",
    parameters=(
        Parameter("ranks", int, 6, "ranks in the deck (6: 8 to K; 4 suits keep the top ranks)", minimum=2,
                  maximum=len(RANK_SYMBOLS)),
        Parameter("suits", int, 2, "cards of each rank", minimum=1, maximum=len(SUIT_SYMBOLS)),
        Parameter("board", str, "1", "board cards opening each later round, '-'-separated (1, 3-1)"),
    ),
    factory=two_card_poker,
)

HOLDEM = GameEntry(
    name="holdem",
    summary="heads-up limit Texas hold'em as the ACPC plays it (reverse blinds); reduced decks and rounds",
    parameters=(
        Parameter("ranks", int, 13, "top ranks of four suits in the deck (5: T to A)", minimum=2,
                  maximum=len(RANK_SYMBOLS)),
        Parameter("rounds", int, 4, "betting rounds (pre-flop, flop, turn, river)", minimum=1,
                  maximum=len(HOLDEM_BOARD_CARDS)),
        Parameter("blinds", str, "10-5", "big blind (player 0) and small blind (player 1)"),
        Parameter("bets", str, "10-10-20-20", "bet and raise size per round"),
        Parameter("caps", str, "3-4-4-4", "raises per round (the blinds are not raises)"),
    ),
    factory=holdem,
)

ENTRIES = (KUHN, LEDUC, POKER, TWO_CARD, HOLDEM)
