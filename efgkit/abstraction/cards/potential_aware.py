"""Potential-aware features: where a situation's next chance move leads, in next-round buckets.

Ganzfried & Sandholm 2014 (Algorithm 1) describe a hand in round ``r`` by the histogram
of the round-``r+1`` buckets its next board cards lead to (every continuation equally
likely), and compare two such histograms with the EMD whose ground distance is the
distance between the next round's bucket centres. Clustering therefore runs from the
last round backwards; the last round is bucketed by any other feature.
"""

from __future__ import annotations

import numba
import numpy as np

from efgkit.abstraction.cards.situations import CardSituations
from efgkit.errors import AbstractionError


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _transitions(hand_of, board_of, board_masks, hand_masks, next_index, next_board_masks, next_labels,
                 num_next):
    """float64 (situations, ``num_next``): the distribution of the next round's bucket over
    the continuations of each situation (hand ``hand_of[s]``, board ``board_of[s]``, int64
    (situations,)). Card bit masks int64: ``board_masks`` (boards,), ``hand_masks`` (hands,),
    ``next_board_masks`` (next boards,); ``next_index`` int64 (hands, next boards) the next
    round's situation id (-1: cards shared) and ``next_labels`` int64 its bucket."""
    histogram = np.zeros((hand_of.shape[0], num_next))
    for s in range(hand_of.shape[0]):
        h = hand_of[s]
        board = board_masks[board_of[s]]
        continuations = 0
        for b in range(next_board_masks.shape[0]):
            if (next_board_masks[b] & board) != board or (next_board_masks[b] & hand_masks[h]):
                continue
            histogram[s, next_labels[next_index[h, b]]] += 1.0
            continuations += 1
        for k in range(num_next):
            histogram[s, k] /= continuations
    return histogram


def next_round_histograms(situations: CardSituations, round_index: int,
                          next_labels: np.ndarray) -> np.ndarray:
    """Per situation of ``round_index``: the distribution of the next round's bucket,
    float64 (situations, next-round buckets). ``next_labels`` buckets every situation of
    round ``round_index + 1`` (ints from 0)."""
    if not 0 <= round_index < situations.num_rounds - 1:
        raise AbstractionError(f"round {round_index} has no next round")
    current, following = situations.rounds[round_index], situations.rounds[round_index + 1]
    labels = np.asarray(next_labels, dtype=np.int64)
    if labels.shape != (following.num_situations,):
        raise AbstractionError(
            f"next_labels needs one bucket per round-{round_index + 1} situation ({following.num_situations})"
        )
    return _transitions(current.hand_of, current.board_of, current.board_masks, current.hand_masks,
                        following.index, following.board_masks, labels, int(labels.max()) + 1)
