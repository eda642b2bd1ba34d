"""Play hands of a limit-poker game (hold'em at any deck size) without building its tree.

A hand follows the game's rules (``LimitPoker``'s Game protocol: ``apply``, the infoset key,
``terminal_utility``) from a shuffled deck: the deals are the cards dealt, each decision asks
the acting seat for an action. Only the betting tree (17,221 nodes for heads-up limit
hold'em) is built, never the GameTree (3.19e14 infosets), so a strategy on a card
abstraction plays at any deck size. Seats:

* ``LayoutSeat``: a strategy on a card abstraction (``BucketLayout`` rows: a bucket-strategy
  file, a baseline of ``poker.match``, a compact export read back), its row the bucket of
  the seat's cards on the board dealt so far at the betting node;
* ``KeySeat``: a compact file's reader (``CompactStrategy``), asked by infoset key (hole
  cards, board, ACPC betting), as a device would;
* anything else with ``choose(decision, rng)``, such as a person at the terminal.

Payoffs are player 0's chips (``terminal_utility``); ``mbb`` converts them to milli big
blinds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from efgkit.errors import ParameterError, StrategyError
from efgkit.games.poker import LimitPoker, PokerState
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.play.playout import sample
from efgkit.poker.buckets.bucket_layout import BucketLayout


@dataclass(frozen=True)
class Deal:
    """The cards of one hand: each deal slot's cards (player 0's hand, player 1's, then each
    board that opens a round), each slot sorted."""

    slots: tuple[tuple[int, ...], ...]

    @classmethod
    def shuffled(cls, game: LimitPoker, rng: random.Random) -> Deal:
        if game.deal_by_rank:
            raise ParameterError(f"{game.spec} deals ranks, not cards; play its GameTree strategies")
        deck = list(range(game.card_structure.num_cards))
        rng.shuffle(deck)
        slots, start = [], 0
        for size in game.deal_sizes:
            slots.append(tuple(sorted(deck[start:start + size])))
            start += size
        return cls(tuple(slots))

    def board(self, slots_dealt: int) -> tuple[int, ...]:
        """The board cards of the first ``slots_dealt`` deal slots (hands included), in deal order."""
        return tuple(card for slot in self.slots[2:slots_dealt] for card in slot)


@dataclass(frozen=True)
class Decision:
    """What the seat to act knows: its player, hole cards, the board so far (card ids), the
    betting (the rules' state and the key's text), the infoset key and the action labels."""

    player: int
    hand: tuple[int, ...]
    board: tuple[int, ...]
    state: PokerState
    betting_text: str
    key: str
    labels: tuple[str, ...]


class Seat(Protocol):
    """Chooses an action index at a decision."""

    def choose(self, decision: Decision, rng: random.Random) -> int: ...


class LayoutSeat:
    """Plays ``strategy`` (float64 per row action of ``layout``)."""

    def __init__(self, layout: BucketLayout, strategy: np.ndarray) -> None:
        self.layout, self.strategy = layout, layout.checked(strategy)
        self._board_cards = np.cumsum(layout.betting.game.card_structure.public_cards_per_round)

    def probabilities(self, decision: Decision) -> np.ndarray:
        betting = self.layout.betting
        node = betting.node_of_history[decision.state.betting.history]
        round_index = int(betting.round[node])
        return self.layout.row(self.strategy, int(betting.decision_index[node]), round_index,
                               decision.board[:self._board_cards[round_index]], decision.hand)

    def choose(self, decision: Decision, rng: random.Random) -> int:
        return sample(self.probabilities(decision).tolist(), rng)


class KeySeat:
    """Plays a compact file through its reader (anything with ``probabilities(key)``, an
    action name -> probability dict in the game's action order)."""

    def __init__(self, reader, name: str) -> None:
        self.reader, self.name = reader, name

    def probabilities(self, decision: Decision) -> list[float]:
        row = self.reader.probabilities(decision.key)
        if len(row) != len(decision.labels):
            raise StrategyError(f"{self.name}: {len(row)} actions at {decision.key!r}, the game has "
                                f"{len(decision.labels)}")
        return list(row.values())

    def choose(self, decision: Decision, rng: random.Random) -> int:
        return sample(self.probabilities(decision), rng)


@dataclass(frozen=True)
class HandRecord:
    """A hand played: its cards, every decision with the action taken, player 0's payoff in
    chips, and whether it ended in a showdown."""

    deal: Deal
    moves: tuple[tuple[Decision, int], ...]
    payoff: float
    showdown: bool


def play_hand(game: LimitPoker, seats: tuple[Seat, Seat], deal: Deal, rng: random.Random,
              on_move=None) -> HandRecord:
    """Play one hand of ``deal``; ``seats[p]`` acts for player p, ``on_move(decision, action)``
    sees every decision as it is made."""
    names = game.card_structure.card_name
    state, moves = game.initial_state(), []
    while (player := game.current_player(state)) != TERMINAL:
        if player == CHANCE:
            state = game.apply(state, "".join(names(card) for card in deal.slots[len(state.cards)]))
            continue
        decision = Decision(player, deal.slots[player], deal.board(len(state.cards)), state,
                            game.betting_text(state.betting), game.infoset_key(state),
                            tuple(game.legal_actions(state)))
        action = seats[player].choose(decision, rng)
        if not 0 <= action < len(decision.labels):
            raise StrategyError(f"action {action} at {decision.key!r}: the game has "
                                f"{len(decision.labels)}")
        moves.append((decision, action))
        if on_move is not None:
            on_move(decision, action)
        state = game.apply(state, decision.labels[action])
    showdown = game.folder_of(state.betting) < 0
    return HandRecord(deal, tuple(moves), game.terminal_utility(state), showdown)
