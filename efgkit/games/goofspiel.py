"""II-Goofspiel GSx, the imperfect-information Goofspiel of Čermák et al. (Sec. 5.3.2).

Each player holds the cards 1..x. A middle pack with the same cards is turned up one
card per round, in the fixed descending order x, x-1, ..., 1 that both players know
(the reference code's ``useFixedNatureSequence``; the paper's GS3 is "(3,2,1)"). In
every round both players bid one of their remaining cards at once; the simultaneous
move is serialised (player 0 bids, then player 1 without seeing that bid). Bids are
discarded, the higher bid wins the middle card's points and a tie gives them to
nobody. Players never see the opponent's bid, only whether they won, lost or tied.
Player 0's utility is its points minus player 1's points.

The tree follows the reference code (GTLibrary) so that it reproduces the paper's sizes:
each round starts with a chance node of one outcome that turns up the middle card, and
the last round's forced card is still a decision (an infoset with one action). Own-card
actions are in ascending order and labelled by the card ("1".."x"). An infoset is
(player, own previous bids, W/L/T outcomes so far), written from the owner's point of
view, e.g. ``"P1 bids=3,1 outcomes=WL"``; the public state is (round, outcomes as
player 0 saw them). Sizes (all nodes / terminals / infosets): GS3 185 / 36 / 72,
GS5 74,157 / 14,400 / 9,948, GS6 2,669,660 / 518,400 / 166,002 (seed_cermak.md §4.3.4).

Relation to OpenSpiel: ``goofspiel(imp_info=true, points_order=descending,
returns_type=point_difference, num_cards=x)`` loaded turn-based is the same game with
two presentation differences. OpenSpiel plays the forced last round automatically
(no decision nodes, no one-action infosets there) and has no reveal chance nodes;
and its ``point_difference`` return is the point difference divided by two (each
player's points minus the mean). Its infostates (hand, own bids, point cards, win
sequence, points) carry the same information as ours, so the infosets with more than
one action correspond one to one: GS4 has 162 of them on 501 decision nodes in both.

``Goofspiel(cards).compile()`` builds the tree with a numba kernel that emits it in
preorder (``goofspiel_preorder``, imported only then); ``build_tree(Goofspiel(cards))``
walks the protocol methods and gives the identical tree (same fingerprint), only slower.
"""

from __future__ import annotations

from efgkit.errors import GameSpecError
from efgkit.games.builder import compile_preorder
from efgkit.games.goofspiel_codes import BID_BITS, MAX_CARDS, OUTCOME_BITS, OUTCOMES_SHIFT, ROUND_BITS
from efgkit.games.parameters import GameEntry, Parameter
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL
from efgkit.games.tree import GameTree

MIN_CARDS = 1
DEFAULT_CARDS = 4

# Round outcomes as player 0 sees them; codes are non-zero so a packed sequence
# carries its own length.
_P0_WINS, _P1_WINS, _TIE = 1, 2, 3
_OUTCOME_LETTER_FOR = {
    PLAYER0: {_P0_WINS: "W", _P1_WINS: "L", _TIE: "T"},
    PLAYER1: {_P0_WINS: "L", _P1_WINS: "W", _TIE: "T"},
}


def _round_outcome(bid0: int, bid1: int) -> int:
    if bid0 > bid1:
        return _P0_WINS
    if bid1 > bid0:
        return _P1_WINS
    return _TIE


def _infoset_key(player: int, own_bids: tuple[int, ...], outcomes: tuple[int, ...]) -> str:
    letters = _OUTCOME_LETTER_FOR[player]
    bids_text = ",".join(str(card) for card in own_bids) or "-"
    outcomes_text = "".join(letters[o] for o in outcomes) or "-"
    return f"P{player} bids={bids_text} outcomes={outcomes_text}"


def _public_key(round_index: int, outcomes: tuple[int, ...]) -> tuple[int, str]:
    return round_index, "".join(_OUTCOME_LETTER_FOR[PLAYER0][o] for o in outcomes)


def _unpack(code: int, bits: int) -> tuple[int, ...]:
    """The non-zero digits of a sequence packed ``bits`` bits per item, first item lowest."""
    items = []
    mask = (1 << bits) - 1
    while code:
        items.append(code & mask)
        code >>= bits
    return tuple(items)


def num_nodes(cards: int) -> int:
    """All nodes (chance, decision, terminal) of GS``cards``, counted without building it."""
    total = 0
    histories = 1  # histories at the start of the round: (cards!/(cards-round)!)^2
    for round_index in range(cards):
        remaining = cards - round_index
        total += histories * (2 + remaining)  # reveal, player 0, player 1 per own card
        histories *= remaining * remaining
    return total + histories


class Goofspiel:
    """Rules of II-Goofspiel with ``cards`` cards per pack (the Game protocol).

    A state is ``(bids of player 0, bids of player 1, middle card revealed)``.
    """

    def __init__(self, cards: int = DEFAULT_CARDS) -> None:
        if not MIN_CARDS <= cards <= MAX_CARDS:
            raise GameSpecError(
                f"goofspiel: cards={cards} must be between {MIN_CARDS} and {MAX_CARDS}"
            )
        self.cards = cards
        self.spec = GOOFSPIEL.canonical_spec({"cards": cards})

    def point_card(self, round_index: int) -> int:
        """The middle card turned up in a round (0-based): descending order."""
        return self.cards - round_index

    # ----------------------------------------------------------- Game protocol
    def initial_state(self) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
        return (), (), False

    def current_player(self, state) -> int:
        bids0, bids1, revealed = state
        if len(bids0) > len(bids1):
            return PLAYER1
        if len(bids1) == self.cards:
            return TERMINAL
        return PLAYER0 if revealed else CHANCE

    def legal_actions(self, state) -> list[str]:
        player = self.current_player(state)
        used = set(state[player])
        return [str(card) for card in range(1, self.cards + 1) if card not in used]

    def chance_outcomes(self, state) -> list[tuple[str, float]]:
        return [(str(self.point_card(len(state[1]))), 1.0)]

    def apply(self, state, action: str):
        bids0, bids1, revealed = state
        player = self.current_player(state)
        if player == CHANCE:
            return bids0, bids1, True
        if player == PLAYER0:
            return (*bids0, int(action)), bids1, revealed
        return bids0, (*bids1, int(action)), False

    def terminal_utility(self, state) -> float:
        bids0, bids1, _ = state
        points = 0
        for round_index, (bid0, bid1) in enumerate(zip(bids0, bids1, strict=True)):
            outcome = _round_outcome(bid0, bid1)
            if outcome != _TIE:
                sign = 1 if outcome == _P0_WINS else -1
                points += sign * self.point_card(round_index)
        return float(points)

    def _outcomes(self, state) -> tuple[int, ...]:
        bids0, bids1, _ = state
        return tuple(_round_outcome(b0, b1) for b0, b1 in zip(bids0, bids1, strict=False))

    def infoset_key(self, state) -> str:
        player = self.current_player(state)
        own_bids = state[1] if player == PLAYER1 else state[0]
        return _infoset_key(player, own_bids, self._outcomes(state))

    def public_state_key(self, state) -> tuple[int, str]:
        return _public_key(len(state[1]), self._outcomes(state))

    # ------------------------------------------------------------ fast builder
    def compile(self, node_limit: int | None = None, progress: bool = False) -> GameTree:
        """Build the GameTree with a numba kernel (identical to ``build_tree(self)``)."""
        from efgkit.games.goofspiel_preorder import emit_preorder

        describers = {"describe_infoset": self._describe_infoset, "action_labels_of": self._action_labels_of,
                      "describe_public": self._describe_public}
        return compile_preorder(self, num_nodes(self.cards), node_limit, progress,
                                lambda preorder: (emit_preorder(self.cards, preorder), describers))

    def _decode_infoset(self, code: int) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        player = code & 1
        own_bids = _unpack((code >> 1) & ((1 << BID_BITS * MAX_CARDS) - 1), BID_BITS)
        outcomes = _unpack(code >> OUTCOMES_SHIFT, OUTCOME_BITS)
        return player, own_bids, outcomes

    def _describe_infoset(self, code: int) -> str:
        return _infoset_key(*self._decode_infoset(code))

    def _action_labels_of(self, code: int) -> list[str]:
        _, own_bids, _ = self._decode_infoset(code)
        return [str(card) for card in range(1, self.cards + 1) if card not in own_bids]

    def _describe_public(self, code: int) -> str:
        round_index = code & ((1 << ROUND_BITS) - 1)
        return str(_public_key(round_index, _unpack(code >> ROUND_BITS, OUTCOME_BITS)))


GOOFSPIEL = GameEntry(
    name="goofspiel",
    summary=(
        "II-Goofspiel GSx (Čermák et al., Sec. 5.3.2): cards 1..x, middle pack in known "
        "descending order, players see only win/lose/tie of each round"
    ),
    parameters=(
        Parameter(
            "cards", int, DEFAULT_CARDS, "cards per pack (x of GSx)",
            minimum=MIN_CARDS, maximum=MAX_CARDS,
        ),
    ),
    factory=Goofspiel,
)

ENTRIES = (GOOFSPIEL,)
