"""Exact hand-strength features per situation: E[HS], E[HS^2], histograms, OCHS.

The hand strength of a hand on a complete board is its probability of winning plus
half its probability of tying against a uniformly random opponent hand (from the cards
it cannot see). In round ``r`` the rest of the board is still to come: with every
completion of the board equally likely,

* ``expected`` (E[HS]) is the mean final hand strength,
* ``expected_squared`` (E[HS^2]) its second moment (it rewards volatile hands: draws),
* ``histogram(bins)`` the distribution of the final hand strength over equal-width bins
  of [0, 1] (the distribution-aware feature of Johanson et al. 2013 and Ganzfried &
  Sandholm 2014, who call it the equity histogram),
* ``against_clusters(labels)`` (OCHS, opponent cluster hand strength, Johanson et al.
  2013): the hand strength against an opponent whose private hand lies in each cluster
  of ``labels``.

Everything is enumerated exactly (every board completion, every opponent hand) with
numba kernels, and accumulated in integers (2 x wins + ties), so situations that are
equal up to suit renaming get bit-identical features. For a cluster that no opponent
hand can belong to (card removal), OCHS uses the situation's E[HS].
"""

from __future__ import annotations

from functools import cached_property
from math import comb

import numba
import numpy as np

from efgkit.abstraction.cards.situations import CardSituations, RoundSituations
from efgkit.errors import AbstractionError
from efgkit.games.hand_ranking import showdown_values


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _showdown_counts(values, hand_masks, board_masks, opponent_cluster, num_clusters):
    """Per (hand, final board, opponent cluster): 2 x wins + ties, and opponent hands."""
    hands, boards = values.shape
    doubled_wins = np.zeros((hands, boards, num_clusters), np.int64)
    opponents = np.zeros((hands, boards, num_clusters), np.int64)
    for b in range(boards):
        for h in range(hands):
            if values[h, b] < 0:
                continue
            seen = hand_masks[h] | board_masks[b]
            for o in range(hands):
                if hand_masks[o] & seen:
                    continue
                j = opponent_cluster[o]
                opponents[h, b, j] += 1
                if values[h, b] > values[o, b]:
                    doubled_wins[h, b, j] += 2
                elif values[h, b] == values[o, b]:
                    doubled_wins[h, b, j] += 1
    return doubled_wins, opponents


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _rollouts(hand_of, board_of, board_masks, hand_masks, final_masks, doubled_wins, opponents, bins):
    """Sum each situation's statistics over the final boards that complete it.

    Returns per situation: completions, sum and sum of squares of 2 x wins + ties (all
    opponents), histogram counts of the final strength over ``bins`` bins, and per
    opponent cluster the summed 2 x wins + ties and opponent hands.
    """
    situations = hand_of.shape[0]
    clusters = doubled_wins.shape[2]
    completions = np.zeros(situations, np.int64)
    total = np.zeros(situations, np.int64)
    total_squares = np.zeros(situations, np.int64)
    histogram = np.zeros((situations, max(bins, 1)), np.int64)
    cluster_wins = np.zeros((situations, clusters), np.int64)
    cluster_opponents = np.zeros((situations, clusters), np.int64)
    for s in range(situations):
        h = hand_of[s]
        board = board_masks[board_of[s]]
        for f in range(final_masks.shape[0]):
            if (final_masks[f] & board) != board or (final_masks[f] & hand_masks[h]):
                continue
            wins = 0
            count = 0
            for j in range(clusters):
                wins += doubled_wins[h, f, j]
                count += opponents[h, f, j]
                cluster_wins[s, j] += doubled_wins[h, f, j]
                cluster_opponents[s, j] += opponents[h, f, j]
            completions[s] += 1
            total[s] += wins
            total_squares[s] += wins * wins
            if bins > 0:
                histogram[s, min(wins * bins // (2 * count), bins - 1)] += 1
    return completions, total, total_squares, histogram, cluster_wins, cluster_opponents


class HandStrength:
    """Exact hand-strength features of every situation of a game's card structure."""

    def __init__(self, situations: CardSituations) -> None:
        self.situations = situations
        cards = situations.card_structure
        final = situations.rounds[-1]
        self._final = final
        self._values = showdown_values(final.hands, final.boards, final.hand_masks, final.board_masks,
                                       cards.num_ranks, cards.num_suits)
        remaining = cards.num_cards - cards.private_cards_per_player - final.boards.shape[1]
        if remaining < cards.private_cards_per_player:
            raise AbstractionError("the deck is too small to deal the opponent a hand at the showdown")
        self._opponents_per_board = comb(remaining, cards.private_cards_per_player)
        """Opponent hands left on any complete board (the same for every hand and board)."""

    def _round(self, round_index: int) -> RoundSituations:
        if not 0 <= round_index < self.situations.num_rounds:
            raise AbstractionError(
                f"round {round_index} does not exist; the game has {self.situations.num_rounds} rounds"
            )
        return self.situations.rounds[round_index]

    def _counts(self, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        final = self._final
        return _showdown_counts(self._values, final.hand_masks, final.board_masks, labels,
                                int(labels.max()) + 1)

    @cached_property
    def _uniform_counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self._counts(np.zeros(self._final.hands.shape[0], np.int64))

    def _statistics(self, round_index: int, counts: tuple[np.ndarray, np.ndarray], bins: int):
        situations = self._round(round_index)
        return _rollouts(situations.hand_of, situations.board_of, situations.board_masks,
                         situations.hand_masks, self._final.board_masks, *counts, bins)

    def expected(self, round_index: int) -> np.ndarray:
        """E[HS] of every situation of the round, float64 (situations,)."""
        completions, total, _, _, _, _ = self._statistics(round_index, self._uniform_counts, 0)
        return total / (2.0 * self._opponents_per_board * completions)

    def expected_squared(self, round_index: int) -> np.ndarray:
        """E[HS^2] of every situation of the round, float64 (situations,)."""
        completions, _, squares, _, _, _ = self._statistics(round_index, self._uniform_counts, 0)
        return squares / (4.0 * self._opponents_per_board ** 2 * completions)

    def histogram(self, round_index: int, bins: int) -> np.ndarray:
        """Distribution of the final hand strength over ``bins`` equal-width bins of [0, 1],
        float64 (situations, bins), rows summing to 1."""
        if bins < 1:
            raise AbstractionError(f"a histogram needs at least one bin, got {bins}")
        completions, _, _, counts, _, _ = self._statistics(round_index, self._uniform_counts, bins)
        return counts / completions[:, None]

    def against_clusters(self, round_index: int, hand_clusters: np.ndarray) -> np.ndarray:
        """OCHS: hand strength against each cluster of opponent hands, float64 (situations,
        clusters). ``hand_clusters`` gives the cluster of every private hand (int, (hands,))."""
        labels = np.asarray(hand_clusters, dtype=np.int64)
        if labels.shape != (self._final.hands.shape[0],) or labels.min(initial=0) < 0:
            raise AbstractionError(
                f"hand_clusters needs one non-negative cluster per private hand "
                f"({self._final.hands.shape[0]}), got shape {labels.shape}"
            )
        completions, total, _, _, wins, opponents = self._statistics(round_index, self._counts(labels), 0)
        expected = total / (2.0 * self._opponents_per_board * completions)
        with np.errstate(invalid="ignore", divide="ignore"):
            strength = wins / (2.0 * opponents)
        return np.where(opponents > 0, strength, expected[:, None])
