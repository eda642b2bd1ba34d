"""Hold'em bucket files and the microsecond lookup of any hand's bucket.

A bucket file (``checked_hdf5`` conventions: format, schema version, per-dataset sha256,
manifest checksum; written atomically) holds, per street, the bucket of every canonical
hand. Layout (schema version 1):

* root attributes: ``num_ranks`` (the deck, ``deck.Deck``), ``rounds`` (2, 3 or 4: the game's
  rounds, whose last street has final-round features; files without it have four),
  ``parameters`` (JSON: the bucket counts asked for, methods, bins, seed, opponent clusters, ...);
* ``/preflop``, ``/flop``, ``/turn``, ``/river`` (the first ``rounds`` of them): ``buckets``
  (uint16, or uint32 above 65,535 buckets; row ``i`` is the bucket of canonical index ``i`` of
  ``HandIndexer((2, k))`` with the board as one group, ``(2,)`` preflop; contiguous, so it is
  memory-mapped), ``centroids`` (float64, buckets x feature: histograms on the flop and turn,
  OCHS vectors or E[HS] on the final street, histograms preflop), attributes ``method``,
  ``num_buckets``, ``seed``, ``distance`` (emd or l2), ``within_cluster_mean_distance``
  (weighted over concrete hands).

Buckets are numbered by increasing mean E[HS] of their hands.

``BucketLookup(path).bucket(round, hole, board)`` checks the cards, indexes the hand with the
numba indexer and reads one array entry in one kernel call (microseconds; benchmarks/bench_holdem.py
measures it), ``buckets(round, hands)`` does the same for an array of hands.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

from efgkit.abstraction.cards.holdem.deck import BOARD_CARDS_BY_ROUND, HOLE_CARDS, ROUND_NAMES, Deck
from efgkit.abstraction.cards.holdem.features import hand_indexer
from efgkit.abstraction.cards.holdem.isomorphism import index_hand
from efgkit.errors import AbstractionError, FileFormatError, ParameterError
from efgkit.io.checked_hdf5 import (
    attribute,
    checked_output,
    open_checked,
    verify_dataset,
    write_dataset,
)
from efgkit.io.mapped_arrays import Closing, MappedFile

FORMAT = "efgkit-holdem-buckets"
SCHEMA_VERSION = 1
WHAT = "hold'em bucket file"


@dataclass
class StreetBuckets:
    """One street's clustering: ``labels`` (canonical hands,) and ``centroids`` (buckets, dims)."""

    street: str
    labels: np.ndarray
    centroids: np.ndarray
    method: str
    distance: str
    within_cluster_mean_distance: float
    seed: int
    details: dict = field(default_factory=dict)

    @property
    def num_buckets(self) -> int:
        return int(self.centroids.shape[0])


def save_buckets(path: str | os.PathLike, num_ranks: int, streets: list[StreetBuckets],
                 parameters: dict) -> None:
    """Write a bucket file atomically (FileFormatError if it cannot be written): ``streets`` are
    the first two to four of ``ROUND_NAMES``, in order."""
    rounds = len(streets)
    if not 2 <= rounds <= len(ROUND_NAMES) or [s.street for s in streets] != list(ROUND_NAMES[:rounds]):
        raise ParameterError(f"a bucket file needs the streets {ROUND_NAMES[:2]} to {ROUND_NAMES} in order")
    with checked_output(path, FORMAT, SCHEMA_VERSION, "the bucket file") as handle:
        handle.attrs["num_ranks"] = int(num_ranks)
        handle.attrs["rounds"] = rounds
        handle.attrs["parameters"] = json.dumps(parameters, sort_keys=True)
        for street in streets:
            group = handle.create_group(street.street)
            dtype = np.uint16 if street.num_buckets <= 1 << 16 else np.uint32
            write_dataset(group, "buckets", street.labels.astype(dtype), compressed=False)
            centroids = np.asarray(street.centroids, np.float64)
            write_dataset(group, "centroids", centroids, compressed=False)
            group.attrs["method"] = street.method
            group.attrs["num_buckets"] = street.num_buckets
            group.attrs["seed"] = int(street.seed)
            group.attrs["distance"] = street.distance
            group.attrs["within_cluster_mean_distance"] = float(street.within_cluster_mean_distance)


_BAD_CARD, _REPEATED_CARD = -1, -2


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _checked_bucket(tables, cards, buckets, num_cards):
    """The bucket of one hand (hole cards first), or _BAD_CARD / _REPEATED_CARD."""
    seen = 0
    for card in cards:
        if card < 0 or card >= num_cards:
            return _BAD_CARD
        if (seen >> card) & 1:
            return _REPEATED_CARD
        seen |= 1 << card
    return np.int64(buckets[index_hand(tables, cards, cards.shape[0])])


class BucketLookup(Closing):
    """The buckets of a bucket file, memory-mapped, for fast lookups (module docstring).

    ``verify`` (default) checks every street's buckets against their sha256 on opening.
    """

    def __init__(self, path: str | os.PathLike, verify: bool = True) -> None:
        self.path = Path(path)
        self._mapped = None
        with open_checked(self.path, FORMAT, SCHEMA_VERSION, WHAT) as handle:
            self.deck = Deck(attribute(handle, "num_ranks", int))
            self.content_sha256 = str(handle.attrs["content_sha256"])
            self.parameters = attribute(handle, "parameters", dict, json_text=True)
            self.rounds = attribute(handle, "rounds", int) if "rounds" in handle.attrs else len(ROUND_NAMES)
            if not 2 <= self.rounds <= len(ROUND_NAMES):
                raise FileFormatError(f"{self.path}: {WHAT} has {self.rounds} rounds, not 2 to 4")
            self.streets = {}
            for r, street in enumerate(ROUND_NAMES[:self.rounds]):
                if street not in handle or "buckets" not in handle[street]:
                    raise FileFormatError(f"{self.path}: {WHAT} has no /{street}/buckets")
                dataset = handle[street]["buckets"]
                indexer = hand_indexer(BOARD_CARDS_BY_ROUND[r], self.deck.num_ranks)
                expected = indexer.round_size(indexer.num_rounds - 1)
                if dataset.shape != (expected,):
                    raise FileFormatError(
                        f"{self.path}: /{street}/buckets has {dataset.shape} entries, the "
                        f"{self.deck.num_ranks}-rank deck has {expected} canonical {street} hands")
                if verify:
                    verify_dataset(dataset)
                attribute(handle[street], "num_buckets", int)
                self.streets[street] = {key: handle[street].attrs[key] for key in handle[street].attrs}
            self._mapped = MappedFile(self.path, writable=False)
            try:
                self._buckets = [self._mapped.map(handle[street]["buckets"]) for street in self.streets]
            except FileFormatError:
                self.close()
                raise
        self._tables = [hand_indexer(k, self.deck.num_ranks).tables
                        for k in BOARD_CARDS_BY_ROUND[:self.rounds]]

    def num_buckets(self, round: int) -> int:
        return int(self.streets[ROUND_NAMES[self._played(round)]]["num_buckets"])

    def _played(self, round: int) -> int:
        """``round`` if the file's game has it, else ParameterError."""
        if round >= self.rounds:
            raise ParameterError(f"{self.path} is for a {self.rounds}-round game: it has no "
                                 f"{ROUND_NAMES[round]} buckets")
        return round

    def tables(self) -> list[np.ndarray]:
        """Each street's bucket of every canonical hand (memory-mapped, read-only)."""
        return list(self._buckets)

    def _cards(self, hole, board) -> np.ndarray:
        hole_cards = self.deck.parse(hole) if isinstance(hole, str) else np.asarray(hole, np.int64).ravel()
        board_cards = (self.deck.parse(board) if isinstance(board, str)
                       else np.asarray(board, np.int64).ravel())
        if hole_cards.size != HOLE_CARDS:
            raise ParameterError(f"a hold'em hand has 2 hole cards, got {hole_cards.size}: {hole!r}")
        if board_cards.size not in BOARD_CARDS_BY_ROUND:
            raise ParameterError(f"a hold'em board has 0, 3, 4 or 5 cards, got {board_cards.size}: {board!r}")
        return np.concatenate((hole_cards, board_cards))

    def bucket(self, round: int | str | None, hole, board=()) -> int:
        """The bucket of hole cards ``hole`` with ``board`` (text like 'AsKd' / '7h8h9c', or card
        ids); ``round`` (0-3 or preflop/flop/turn/river, or None) must match the board size."""
        cards = self._cards(hole, board)
        board_round = self._played(BOARD_CARDS_BY_ROUND.index(cards.size - HOLE_CARDS))
        if round is not None and _round_number(round) != board_round:
            asked = _round_number(round)
            raise ParameterError(f"the {ROUND_NAMES[asked]} has {BOARD_CARDS_BY_ROUND[asked]} board cards, "
                                 f"got {cards.size - HOLE_CARDS}")
        bucket = _checked_bucket(self._tables[board_round], cards, self._buckets[board_round],
                                 self.deck.num_cards)
        if bucket == _BAD_CARD:
            raise ParameterError(f"card ids must be 0..{self.deck.num_cards - 1} in a "
                                 f"{self.deck.num_cards}-card deck, got {cards.tolist()}")
        if bucket == _REPEATED_CARD:
            raise ParameterError(f"hole {self.deck.format(cards[:2])} and board "
                                 f"{self.deck.format(cards[2:])} share a card")
        return bucket

    def buckets(self, round: int | str, hands: np.ndarray) -> np.ndarray:
        """Buckets of many hands of one round: ``hands`` int (n, 2 + board cards), hole cards first,
        each a valid deal (checked by the indexer)."""
        round = self._played(_round_number(round))
        hands = np.asarray(hands)
        width = HOLE_CARDS + BOARD_CARDS_BY_ROUND[round]
        if hands.ndim != 2 or hands.shape[1] != width:
            raise ParameterError(f"{ROUND_NAMES[round]} hands are (n, {width}) card ids, "
                                 f"got shape {hands.shape}")
        try:
            indices = hand_indexer(BOARD_CARDS_BY_ROUND[round], self.deck.num_ranks).index(hands)
        except AbstractionError as exc:
            raise ParameterError(str(exc)) from exc
        return self._buckets[round][indices].astype(np.int64)

    def close(self) -> None:
        self._buckets = []
        if self._mapped is not None:
            self._mapped.close()
            self._mapped = None



def _round_number(round: int | str) -> int:
    if isinstance(round, str) and round in ROUND_NAMES:
        return ROUND_NAMES.index(round)
    if isinstance(round, int | np.integer) and 0 <= round < len(ROUND_NAMES):
        return int(round)
    raise ParameterError(f"round must be 0-3 or one of {', '.join(ROUND_NAMES)}, got {round!r}")
