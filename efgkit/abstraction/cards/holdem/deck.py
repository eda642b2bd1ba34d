"""The hold'em deck, full or reduced, and cards as text ("AsKd", "7h8h9c").

A deck has ``num_ranks`` ranks (13 for the standard deck) and 4 suits. A reduced deck
keeps the TOP ``num_ranks`` ranks of the standard deck: with 8 ranks it is 7 8 9 T J Q K A,
named by ``efgkit.games.poker.rank_symbols`` as the game ``holdem(ranks=8)`` names them.
Card ids are ``4 * rank + suit`` with rank 0 the lowest rank of the deck and suits
c d h s in that order, so in the standard deck rank 0 is the deuce and id 51 is the
ace of spades (the evaluator's and the hand indexer's numbering; the game's card ids
number the suits s h d c, so one hand has one name in both and ids that differ by a suit
renaming, which changes no canonical index and no bucket). A reduced deck's card
``4 * r + s`` is the standard card ``4 * (r + 13 - num_ranks) + s``: hands are ranked as
in the standard game, so a straight is five consecutive standard ranks and the wheel
(A-2-3-4-5) exists only when the deck has the deuce through the five, i.e. in the full deck.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.poker import rank_symbols

SUIT_CHARS = "cdhs"
NUM_SUITS = 4
STANDARD_RANKS = 13
HOLE_CARDS = 2
BOARD_CARDS_BY_ROUND = (0, 3, 4, 5)
"""Board cards seen in each round: preflop, flop, turn, river."""
ROUND_NAMES = ("preflop", "flop", "turn", "river")


@dataclass(frozen=True)
class Deck:
    """A hold'em deck of the top ``num_ranks`` ranks (5..13) in 4 suits."""

    num_ranks: int = STANDARD_RANKS

    def __post_init__(self) -> None:
        if not isinstance(self.num_ranks, int | np.integer) or not 5 <= self.num_ranks <= STANDARD_RANKS:
            raise ParameterError(f"a hold'em deck needs 5 to 13 ranks (the top ones of the standard deck), "
                                 f"got {self.num_ranks!r}")

    @property
    def num_cards(self) -> int:
        return NUM_SUITS * self.num_ranks

    @property
    def standard_offset(self) -> int:
        """Add this to a card id to get the standard 52-card id the evaluator ranks."""
        return NUM_SUITS * (STANDARD_RANKS - self.num_ranks)

    @property
    def rank_chars(self) -> str:
        return rank_symbols(self.num_ranks, NUM_SUITS)

    def card_text(self, card: int) -> str:
        """'As' for the ace of spades."""
        if not 0 <= card < self.num_cards:
            raise ParameterError(f"card id {card} is not in a {self.num_cards}-card deck")
        return self.rank_chars[card // NUM_SUITS] + SUIT_CHARS[card % NUM_SUITS]

    def format(self, cards) -> str:
        """'AsKd' for the card ids of the ace of spades and the king of diamonds."""
        return "".join(self.card_text(int(card)) for card in cards)

    def parse(self, text: str) -> np.ndarray:
        """Card ids (int64) of text like 'AsKd' or '7h 8h 9c' (case of ranks/suits ignored)."""
        compact = "".join(str(text).split())
        if len(compact) % 2:
            raise ParameterError(f"{text!r} is not a list of cards: each card is a rank and a suit, "
                                 f"like 'As' or 'Td'")
        cards = []
        for k in range(0, len(compact), 2):
            rank, suit = compact[k].upper(), compact[k + 1].lower()
            if rank not in self.rank_chars:
                where = "" if self.num_ranks == STANDARD_RANKS else f" of this {self.num_ranks}-rank deck"
                raise ParameterError(f"{compact[k:k + 2]!r} in {text!r}: rank {compact[k]!r} is not one of "
                                     f"{self.rank_chars}{where}")
            if suit not in SUIT_CHARS:
                raise ParameterError(f"{compact[k:k + 2]!r} in {text!r}: suit {compact[k + 1]!r} is not one "
                                     f"of {SUIT_CHARS}")
            cards.append(NUM_SUITS * self.rank_chars.index(rank) + SUIT_CHARS.index(suit))
        if len(set(cards)) != len(cards):
            raise ParameterError(f"{text!r} names a card twice")
        return np.asarray(cards, dtype=np.int64)


def round_of_board(board_size: int) -> int:
    """The round (0 preflop .. 3 river) in which a player sees ``board_size`` board cards."""
    if board_size not in BOARD_CARDS_BY_ROUND:
        raise ParameterError(f"a hold'em board has 0, 3, 4 or 5 cards, got {board_size}")
    return BOARD_CARDS_BY_ROUND.index(board_size)
