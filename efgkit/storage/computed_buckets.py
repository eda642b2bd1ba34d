"""Buckets without the big tables: describe a hold'em pipeline street so that a device
computes each hand's bucket (compact format 8, bucket method ``computed``;
``computed_reader`` and ``efgs_c/efgs_computed.c`` read it), and choose per round between
that description and the packed table by a rule the file records.

A description holds the street's centroids (the bucket file's), the opponent cluster of
every preflop class (OCHS; recomputed by the pipeline's own preflop pass from the bucket
file's parameters), and the *exceptions*: every canonical hand whose pipeline bucket is not
the nearest centroid of its features as the device computes them. The features of every
canonical hand come from the pipeline's kernels (``features.river_chunk`` /
``street_chunk``), which give the same float32 / integer values the device's enumeration
does; ``_nearest`` repeats the device's distance arithmetic (double sums in a fixed order,
lowest bucket on a tie). A hand near a boundary (a tie, or a distance that rounding
decides) thus returns the pipeline's bucket either way: if the device's arithmetic picks
another bucket, the hand is an exception. The tests check the C reader's bucket against the
pipeline's table on every canonical hand of reduced decks.

The rule (``choose``): a round is computed when one lookup costs at most ``budget`` hand
evaluations (``computed_reader.lookup_evaluations``: the river's ~991 at 52 cards, the
turn's 46 x 991, the flop's 1,081 x 991) and its description is smaller than the packed
table; the budget is stored in each computed round's description.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from efgkit.abstraction.cards.holdem import features as F
from efgkit.abstraction.cards.holdem.bucket_file import BucketLookup
from efgkit.abstraction.cards.holdem.deck import BOARD_CARDS_BY_ROUND, ROUND_NAMES, Deck
from efgkit.errors import ParameterError
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.io.progress import progress_bar
from efgkit.storage.computed_reader import DESCRIPTION_HEAD, EHS, HISTOGRAM, OCHS, lookup_evaluations

DEFAULT_BUDGET = 2000
"""Hand evaluations a computed lookup may cost by default: about 50 us in C on this machine
(the river at 52 cards costs 991; docs/compact-format.md measures them)."""
KINDS = {"ochs-l2-kmeans": OCHS, "ehs-kmeans": EHS, "emd-kmeans": HISTOGRAM}
"""The pipeline's street methods a device can compute (the final street's OCHS and E[HS]
k-means, the flop's and turn's EMD k-means of strength histograms)."""
BOARDS_PER_CHUNK = 256


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _nearest(points, kind, centroids, out):
    """The device's nearest centroid of every row of ``points`` float64 (n, dims): squared
    L2 over the features, or (``kind`` HISTOGRAM, rows of runout counts) L1 between the CDFs
    without their final 1; ``centroids`` float64 (buckets, width); int64 into ``out``. The
    sums run in the C reader's order, so the results are its results."""
    width = centroids.shape[1]
    point = np.empty(width)
    for i in range(points.shape[0]):
        if kind == HISTOGRAM:
            runouts = 0.0
            for k in range(points.shape[1]):
                runouts += points[i, k]
            running = 0.0
            for k in range(width):
                running += points[i, k]
                point[k] = running / runouts
        else:
            for k in range(width):
                point[k] = points[i, k]
        best, nearest = 0.0, 0
        for bucket in range(centroids.shape[0]):
            distance = 0.0
            for k in range(width):
                d = point[k] - centroids[bucket, k]
                distance += abs(d) if kind == HISTOGRAM else d * d
            if bucket == 0 or distance < best:
                best, nearest = distance, bucket
        out[i] = nearest


def nearest_buckets(points: np.ndarray, kind: int, centroids: np.ndarray) -> np.ndarray:
    """int64 (n,): the device's bucket of each row of ``points`` (features as float64)."""
    out = np.empty(points.shape[0], np.int64)
    _nearest(np.ascontiguousarray(points, np.float64), kind, np.ascontiguousarray(centroids, np.float64), out)
    return out


@dataclass
class StreetDescription:
    """A street's description and what the rule weighs."""

    street: str
    kind: int
    data: bytes
    exceptions: int
    canonical_hands: int
    evaluations: int
    """Hand evaluations per lookup."""
    table_bytes: int
    """Bytes of the packed table it replaces."""


def _cluster_of_class(lookup: BucketLookup) -> np.ndarray:
    """The OCHS opponent cluster of every preflop class, by the pipeline's own preflop pass
    over the bucket file's parameters (deterministic in its seed)."""
    from efgkit.abstraction.cards.holdem.pipeline import AbstractionOptions, preflop_features

    names = AbstractionOptions.__dataclass_fields__
    parameters = {k: v for k, v in lookup.parameters.items() if k in names}
    options = AbstractionOptions(**dict(parameters, buckets=tuple(parameters["buckets"])))
    return preflop_features(options, ChunkRunner(), False)["opponent_cluster"].astype(np.int64)


def _centroids(lookup: BucketLookup, street: str, kind: int) -> np.ndarray:
    """The street's centroids as the device compares them (CDFs without the final 1 for
    histograms)."""
    import h5py

    with h5py.File(lookup.path, "r") as handle:
        centroids = np.asarray(handle[street]["centroids"], np.float64)
    if kind == HISTOGRAM:
        centroids = np.cumsum(centroids / centroids.sum(axis=1, keepdims=True), axis=1)[:, :-1]
    return np.ascontiguousarray(centroids)


def describe_street(lookup: BucketLookup, street: str, budget: int = DEFAULT_BUDGET,
                    progress: bool = False) -> StreetDescription | None:
    """The description of ``street`` of the pipeline bucket file ``lookup`` (None if its
    method is not one a device computes), with its exceptions found over every canonical
    hand."""
    round_index = ROUND_NAMES.index(street)
    method = str(lookup.streets[street]["method"])
    kind = KINDS.get(method)
    if round_index == 0 or kind is None:
        return None
    deck = Deck(lookup.deck.num_ranks)
    board = BOARD_CARDS_BY_ROUND[round_index]
    final = BOARD_CARDS_BY_ROUND[lookup.rounds - 1]
    if (kind == HISTOGRAM) != (board < final):
        return None
    labels = np.asarray(lookup.tables()[round_index])
    centroids = _centroids(lookup, street, kind)
    classes = _cluster_of_class(lookup) if kind == OCHS else None
    dims = centroids.shape[1] + 1 if kind == HISTOGRAM else centroids.shape[1]
    wrong = np.zeros(labels.shape[0], np.bool_)
    boards, _ = F.canonical_boards(deck, board)
    starts = range(0, boards.shape[0], BOARDS_PER_CHUNK)
    for start in progress_bar(starts, desc=f"{street} exceptions", unit="chunk", enabled=progress):
        chunk = boards[start:start + BOARDS_PER_CHUNK]
        if kind == HISTOGRAM:
            part = F.street_chunk(deck.num_ranks, chunk, dims, final)
            points = part.histogram
        else:
            part = F.river_chunk(deck.num_ranks, chunk,  # E[HS] needs no clusters: one will do
                                 classes if classes is not None else np.zeros(deck.num_ranks ** 2, np.int64))
            points = part.ochs if kind == OCHS else part.ehs[:, None]
        predicted = nearest_buckets(points, kind, centroids)
        wrong[part.indices[predicted != labels[part.indices]]] = True
    exception_index = np.flatnonzero(wrong)
    data = description_bytes(kind, dims, final, classes, centroids, exception_index, labels[exception_index],
                             budget)
    buckets = int(lookup.streets[street]["num_buckets"])
    return StreetDescription(street, kind, data, int(exception_index.shape[0]), int(labels.shape[0]),
                             lookup_evaluations(kind, deck.num_cards, board, final),
                             (labels.shape[0] * int(buckets - 1).bit_length() + 7) // 8)


def description_bytes(kind: int, dims: int, final_board: int, cluster_of_class: np.ndarray | None,
                      centroids: np.ndarray, exception_index: np.ndarray, exception_bucket: np.ndarray,
                      budget: int) -> bytes:
    """A description's bytes (``computed_reader``'s layout): ``cluster_of_class`` int (classes,)
    for OCHS, else None; ``centroids`` float64 (buckets, width) as the device compares them;
    the exceptions' increasing canonical indices and their buckets (int arrays)."""
    classes = b"" if cluster_of_class is None else np.asarray(cluster_of_class).astype(np.uint8).tobytes()
    head = DESCRIPTION_HEAD.pack(kind, dims, final_board, len(classes), len(exception_index), budget)
    return (head + classes + bytes(-len(classes) % 8) + np.asarray(centroids, "<f8").tobytes()
            + np.asarray(exception_index, "<u4").tobytes() + np.asarray(exception_bucket, "<u4").tobytes())


def description_only_file(path, game, descriptions: dict[int, tuple[int, bytes]]) -> None:
    """A compact file of ``game`` (hold'em, any deck) whose rounds ``r`` in ``descriptions``
    are computed from (buckets, description bytes) and whose other rounds have one bucket,
    with a single betting key ("-", two actions, uniform): a 52-card description checked and
    timed on the device without building the abstraction it would come from."""
    from efgkit.storage.compact_reader import COMPUTED, CONSTANT, FLAG_COMPUTED
    from efgkit.storage.compact_writer import (
        CardBlocks,
        CardSection,
        RoundBuckets,
        card_file,
        card_names,
        quantize,
    )

    structure = game.card_structure
    rounds = [RoundBuckets(dealt, COMPUTED, descriptions[r][0], description=descriptions[r][1])
              if r in descriptions else RoundBuckets(dealt, CONSTANT, 1)
              for r, dealt in enumerate(structure.public_cards_per_round)]
    offsets = np.array([0, 2])
    weights = quantize(np.array([0.5, 0.5]), offsets, 8)
    blocks = CardBlocks(["-"], np.array([1]), np.array([2]), np.array([0]))
    head = dict(spec=game.spec, fingerprint="00" * 32, bits=8, flags=FLAG_COMPUTED, num_keys=0)
    card_file(head, weights, offsets, blocks, CardSection(card_names(structure), 2, rounds), 8).write(path)


def choose(description: StreetDescription | None, budget: int) -> bool:
    """The rule: compute the street iff it can be computed, one lookup costs at most
    ``budget`` hand evaluations and the description is smaller than the packed table."""
    return (description is not None and description.evaluations <= budget
            and len(description.data) < description.table_bytes)


def check_budget(budget: int) -> int:
    if not isinstance(budget, int) or not 0 <= budget < 1 << 32:
        raise ParameterError(f"the computed-bucket budget is hand evaluations per lookup, "
                             f"0 to 2**32 - 1, got {budget!r}")
    return budget


def planned_description_bytes(num_ranks: int, street: str, buckets: int, *, bins: int = 50,
                              opponent_clusters: int = 8, exceptions: int = 0,
                              rounds: int = 4) -> tuple[int, int]:
    """(bytes of a street's description with ``exceptions`` exceptions, hand evaluations per
    lookup), computed without building anything: what a 52-card abstraction's will take."""
    round_index = ROUND_NAMES.index(street)
    board, final = BOARD_CARDS_BY_ROUND[round_index], BOARD_CARDS_BY_ROUND[rounds - 1]
    kind = HISTOGRAM if board < final else OCHS
    width = bins - 1 if kind == HISTOGRAM else opponent_clusters
    classes = num_ranks * num_ranks if kind == OCHS else 0
    size = DESCRIPTION_HEAD.size + (classes + 7) // 8 * 8 + 8 * buckets * width + 8 * exceptions
    return size, lookup_evaluations(kind, 4 * num_ranks, board, final)


__all__ = ["DEFAULT_BUDGET", "StreetDescription", "check_budget", "choose", "describe_street",
           "nearest_buckets", "planned_description_bytes"]
