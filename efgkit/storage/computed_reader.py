"""A hold'em round's bucket computed from a small description instead of read from a table
(bucket method ``computed``, compact format 8; docs/compact-format.md "Computed buckets"),
with the Python standard library only, as ``compact_reader`` (which uses it) and the C
reader (``efgs_c/efgs_computed.c``) do.

The features are the hold'em pipeline's (``abstraction.cards.holdem.features``) by
enumeration of the unseen cards: on the final street ``2 x wins + ties`` against every
opponent pair, per opponent cluster of preflop classes (OCHS, Johanson et al. 2013) or in
all (E[HS]), each divided in double precision and rounded to float32 as the pipeline
stores them; before it the histogram (runouts per bin, bin ``min(d x bins // (2 x
opponents), bins - 1)``) of the final strength over every runout. The bucket is the
nearest centroid (squared L2 over the features, or L1 between the CDFs without their
final 1, summed in double in a fixed order; the lowest bucket on a tie) unless the hand's
canonical index is a stored exception: a hand whose pipeline bucket differs from that
(k-means stopped before its assignment settled, the pipeline's float32 distances, ties).

Description layout (little-endian; ``DESCRIPTION_HEAD``): kind (1 OCHS, 2 E[HS], 3
histogram), dims (clusters, 1 or bins), final board cards, zero, preflop classes (OCHS:
ranks^2, else 0), exceptions, evaluation budget of the rule that chose it; then the
cluster of every preflop class (a byte each, padded to 8 bytes), the centroids (float64,
``dims`` each, or ``bins - 1`` CDF values), the exceptions' canonical indices (u32,
increasing) and their buckets (u32).
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from math import comb

DESCRIPTION_HEAD = struct.Struct("<BBBxIII")
"""kind, dims, final board cards, preflop classes, exceptions, evaluation budget."""
OCHS, EHS, HISTOGRAM = 1, 2, 3
KIND_NAMES = {OCHS: "ochs", EHS: "ehs", HISTOGRAM: "histogram"}
STANDARD_RANKS = 13
(HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS,
 STRAIGHT_FLUSH) = range(9)


class DescriptionError(ValueError):
    """A damaged description (the compact reader reports it as a corrupted card table)."""


def _float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _top_straight(ranks: int) -> int:
    """The top rank of the best straight in a rank mask (the wheel tops at the five), -1."""
    low = (ranks << 1 | (ranks >> 12 & 1)) & 0x3FFF
    runs = low & low >> 1 & low >> 2 & low >> 3 & low >> 4
    return runs.bit_length() + 2 if runs else -1


def _ranked(category: int, first: int, second: int, mask: int, wanted: int) -> int:
    value, fields = category, 0
    for rank in (first, second):
        if rank >= 0:
            value, fields, mask = value << 4 | (rank + 1), fields + 1, mask & ~(1 << rank)
    for rank in range(12, -1, -1):
        if wanted and mask >> rank & 1:
            value, fields, wanted = value << 4 | (rank + 1), fields + 1, wanted - 1
    return value << 4 * (5 - fields)


def hand_value(cards: list[int]) -> int:
    """The value of the best five of up to seven standard cards (``4 rank + suit``, rank 0
    the deuce): higher wins, equal ties, in the order of ``games.hand_ranking.hand_value``."""
    suits, counts = [0, 0, 0, 0], [0] * 13
    for card in cards:
        suits[card & 3] |= 1 << (card >> 2)
        counts[card >> 2] += 1
    for mask in suits:
        if mask.bit_count() >= 5:  # seven cards: no full house or quads beside a flush
            top = _top_straight(mask)
            return _ranked(STRAIGHT_FLUSH, top, -1, 0, 0) if top >= 0 else _ranked(FLUSH, -1, -1, mask, 5)
    every = suits[0] | suits[1] | suits[2] | suits[3]
    quad = trips = pair_high = pair_low = -1
    for rank in range(12, -1, -1):
        count = counts[rank]
        if count == 4 and quad < 0:
            quad = rank
        elif count >= 3 and trips < 0:
            trips = rank
        elif count >= 2 and pair_high < 0:
            pair_high = rank
        elif count >= 2 and pair_low < 0:
            pair_low = rank
    top = _top_straight(every)
    if quad >= 0:
        return _ranked(QUADS, quad, -1, every, 1)
    if trips >= 0 and pair_high >= 0:
        return _ranked(FULL_HOUSE, trips, pair_high, 0, 0)
    if top >= 0:
        return _ranked(STRAIGHT, top, -1, 0, 0)
    if trips >= 0:
        return _ranked(TRIPS, trips, -1, every, 2)
    if pair_low >= 0:
        return _ranked(TWO_PAIR, pair_high, pair_low, every, 1)
    if pair_high >= 0:
        return _ranked(PAIR, pair_high, -1, every, 3)
    return _ranked(HIGH_CARD, -1, -1, every, 5)


def lookup_evaluations(kind: int, num_cards: int, board: int, final_board: int) -> int:
    """Hand evaluations one computed lookup costs: (ours + every opponent pair) per runout."""
    per_board = comb(num_cards - 2 - final_board, 2) + 1
    return per_board * (comb(num_cards - 2 - board, final_board - board) if kind == HISTOGRAM else 1)


class ComputedRound:
    """One round's description, read from ``data`` at ``offset`` (at most ``limit``),
    checked against the round: its ``buckets``, its canonical hands ``entries``, the deck's
    ``num_ranks`` and the ``board`` cards seen; ``class_of_pair`` gives the canonical preflop
    class of every hole pair (cards x cards, the reader's indexer: OCHS needs it). ``size`` is
    its length in bytes."""

    def __init__(self, data, offset: int, limit: int, *, buckets: int, entries: int, num_ranks: int,
                 board: int, class_of_pair) -> None:
        if offset + DESCRIPTION_HEAD.size > limit:
            raise DescriptionError("computed-bucket description is out of range")
        (self.kind, self.dims, self.final_board, self.num_classes, self.num_exceptions,
         self.budget) = DESCRIPTION_HEAD.unpack_from(data, offset)
        ochs = self.kind == OCHS
        if (self.kind not in KIND_NAMES or self.dims < 1 or not board <= self.final_board <= 5
                or self.final_board - board > 2 or self.final_board + 4 > 4 * num_ranks
                or (self.kind == HISTOGRAM) != (self.final_board > board)
                or (self.kind == HISTOGRAM and self.dims < 2) or (self.kind == EHS and self.dims != 1)
                or self.num_classes != (num_ranks * num_ranks if ochs else 0)
                or self.num_exceptions > entries):
            raise DescriptionError("computed-bucket description is corrupted")
        self.width = self.dims - 1 if self.kind == HISTOGRAM else self.dims
        position = offset + DESCRIPTION_HEAD.size
        self.cluster_of_class = bytes(data[position:position + self.num_classes])
        position += (self.num_classes + 7) & ~7
        count = buckets * self.width
        self.size = position + 8 * count + 8 * self.num_exceptions - offset
        if offset + self.size > limit:
            raise DescriptionError("computed-bucket description is truncated")
        values = struct.unpack_from(f"<{count}d", data, position)
        self.centroids = [values[b * self.width:(b + 1) * self.width] for b in range(buckets)]
        position += 8 * count
        self.exception_index = list(struct.unpack_from(f"<{self.num_exceptions}I", data, position))
        self.exception_bucket = list(struct.unpack_from(f"<{self.num_exceptions}I", data,
                                                        position + 4 * self.num_exceptions))
        if (any(c >= self.dims for c in self.cluster_of_class)
                or any(not -1e300 <= v <= 1e300 for v in values)
                or any(b >= buckets for b in self.exception_bucket)
                or any(i >= entries for i in self.exception_index)
                or any(a >= b for a, b in zip(self.exception_index, self.exception_index[1:], strict=False))):
            raise DescriptionError("computed-bucket description is corrupted")
        self.num_cards, self.board = 4 * num_ranks, board
        self.offset = 4 * (STANDARD_RANKS - num_ranks)
        self._class_of_pair = class_of_pair if ochs else None

    def _doubled(self, hand: list[int], board: list[int]) -> tuple[list[int], list[int]]:
        """2 x wins + ties and opponents per cluster (OCHS) or in cluster 0, on a full board."""
        offset, used = self.offset, set(hand) | set(board)
        standard_board = [card + offset for card in board]
        ours = hand_value([hand[0] + offset, hand[1] + offset, *standard_board])
        doubled, opponents = [0] * self.dims, [0] * self.dims
        unseen = [card for card in range(self.num_cards) if card not in used]
        for i, a in enumerate(unseen):
            for b in unseen[i + 1:]:
                theirs = hand_value([a + offset, b + offset, *standard_board])
                k = self.cluster_of_class[self._class_of_pair[a][b]] if self._class_of_pair else 0
                doubled[k] += 2 if ours > theirs else 1 if ours == theirs else 0
                opponents[k] += 1
        return doubled, opponents

    def features(self, hand: list[int], board: list[int]) -> list[float]:
        """The pipeline's features of ``hand`` with ``board``: OCHS or E[HS] (float32 values),
        or the final-strength histogram (runout counts)."""
        if self.kind != HISTOGRAM:
            doubled, opponents = self._doubled(hand, board)
            ehs = _float32(sum(doubled) / (2.0 * sum(opponents)))
            if self.kind == EHS:
                return [ehs]
            return [_float32(d / (2.0 * n)) if n else ehs for d, n in zip(doubled, opponents, strict=True)]
        histogram = [0.0] * self.dims
        seen = set(hand) | set(board)
        unseen = [card for card in range(self.num_cards) if card not in seen]
        pairs = comb(self.num_cards - 2 - self.final_board, 2)
        runout_cards = self.final_board - len(board)
        runouts = ([[a] for a in unseen] if runout_cards == 1
                   else [[a, b] for i, a in enumerate(unseen) for b in unseen[i + 1:]])
        for runout in runouts:
            doubled, _ = self._doubled(hand, board + runout)
            histogram[min(doubled[0] * self.dims // (2 * pairs), self.dims - 1)] += 1.0
        return histogram

    def bucket(self, hand: list[int], board: list[int], index: int) -> int:
        """The bucket of ``hand`` (sorted hole cards) with ``board``, whose canonical index
        is ``index``: its stored exception, else the nearest centroid."""
        at = bisect_left(self.exception_index, index)
        if at < len(self.exception_index) and self.exception_index[at] == index:
            return self.exception_bucket[at]
        features = self.features(hand, board)
        if self.kind == HISTOGRAM:
            runouts, running, point = sum(features), 0.0, []
            for count in features[:-1]:
                running += count
                point.append(running / runouts)
        else:
            point = features
        best, nearest = 0.0, 0
        for bucket, centroid in enumerate(self.centroids):
            distance = 0.0
            for x, c in zip(point, centroid, strict=True):
                distance += abs(x - c) if self.kind == HISTOGRAM else (x - c) * (x - c)
            if bucket == 0 or distance < best:
                best, nearest = distance, bucket
        return nearest
