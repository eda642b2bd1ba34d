"""Head-to-head matches between limit-poker strategies on card abstractions, duplicate style.

A match estimates what strategy A wins from strategy B per game, averaged over the two
seats. Each board dealt is played twice with the seats swapped (duplicate poker) and, on
each, every pair of private hands with its chance weight and every mixed action with its
probability (``board_walk``'s ``STRATEGY`` walk): the only randomness left is the board,
far less variance than dealing hands one at a time. Both seatings are walked from seat 0
(A's winnings in seat 1 are minus seat 0's winnings with B in seat 0), so a strategy
against itself scores exactly 0. ``run()`` with no board count plays every board (small games): the exact
expected value, equal to ``full_game.StreamedEvaluator``'s ``EXPECTED`` walk.

Baselines (``baseline``): always call, always raise (calling when the cap is reached),
always fold (checking when not facing a bet) and uniform random, card-independent
strategies on the same betting tree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from efgkit.errors import ParameterError
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent
from efgkit.poker.streamed.board_walk import (
    STRATEGY,
    BoardDealer,
    Estimate,
    new_walk,
    no_local_tables,
    play_boards,
    responder_value,
    seat_sides,
)

BASELINES = ("call", "raise", "fold", "random")


def baseline(betting: BettingTree, name: str) -> tuple[BucketLayout, np.ndarray]:
    """The card-independent strategy ``name`` (one of ``BASELINES``) on ``betting``."""
    if name not in BASELINES:
        raise ParameterError(f"unknown baseline {name!r}: one of {', '.join(BASELINES)}")
    layout = BucketLayout(betting, CardIndependent())
    if name == "random":
        return layout, layout.uniform()
    return layout, layout.pure(lambda labels: labels.index(name) if name in labels else labels.index("call"))


class HeadToHead:
    """Duplicate match of ``strategy_a`` (on ``layout_a``) against ``strategy_b`` (on
    ``layout_b``), layouts of one betting tree; ``seed`` fixes the boards dealt.
    ``run(boards)`` / ``run()`` return A's winnings per game in chips."""

    def __init__(self, layout_a: BucketLayout, strategy_a, layout_b: BucketLayout, strategy_b, *,
                 seed: int = 0) -> None:
        betting = layout_a.betting
        if layout_b.betting is not betting and layout_b.betting.game.spec != betting.game.spec:
            raise ParameterError(f"a match needs strategies of one game: {betting.game.spec} and "
                                 f"{layout_b.betting.game.spec}")
        self.betting = betting
        self.big_blind = max(betting.game.blinds)
        self.rng = np.random.default_rng(seed)
        self.dealer = BoardDealer(betting, [layout_a.abstraction, layout_b.abstraction])
        self.view = layout_a.view()
        strategies = [layout_a.checked(strategy_a), layout_b.checked(strategy_b)]
        layouts = [layout_a, layout_b]
        self._seatings = [seat_sides(layouts, strategies, (0, 1)), seat_sides(layouts, strategies, (1, 0))]
        hands = self.dealer.hand_cards.shape[0]
        self._walk = new_walk(betting.max_depth + 2, hands, betting.num_cards)
        self._rollouts = no_local_tables(hands)

    def board_values(self, cards) -> tuple[float, float]:
        """A's expected winnings in seat 0 and in seat 1 on the board ``cards``, exact over
        every pair of hands."""
        board = self.dealer.deal(self.dealer.ordered(cards))
        seat0, swapped = (float(responder_value(self.view, board, sides, self._rollouts, self._walk, 0,
                                                STRATEGY)) for sides in self._seatings)
        return seat0, -swapped

    def run(self, boards: int | None = None, progress: Callable[[int], None] | None = None) -> Estimate:
        """A's winnings per game over ``boards`` sampled boards, each in both seatings, or
        (None) A's exact expected winnings over every board."""
        values, exact = play_boards(self.board_values, self.dealer, boards, self.rng, progress)
        return Estimate.of(values.mean(axis=1), exact)
