"""Card abstractions by name: a word (``canonical``, ``none``, ``lossless``), a bucket file, or
the reference a strategy file records (``HandBuckets.reference``), rebuilt from it; and which
references a file may record. Every kind of ``card_abstraction`` and ``perfect_recall`` is
built here, so neither module needs the other's names."""

from __future__ import annotations

from efgkit.errors import AbstractionError
from efgkit.games.poker import LimitPoker
from efgkit.io.input_files import referenced_file
from efgkit.poker.buckets.card_abstraction import CardIndependent, HandBuckets, IsomorphicCards, LosslessCards
from efgkit.poker.buckets.perfect_recall import PerfectRecallCards

ABSTRACTION_KINDS = ("canonical", "none", "lossless")
"""The card abstractions named by a word; anything else is a bucket file's path."""


def abstraction_from_reference(game: LimitPoker, reference: dict, bucket_file=None,
                               referring=None) -> HandBuckets:
    """The abstraction ``reference`` describes, recorded in the file ``referring``; a bucket
    file is opened at ``bucket_file`` when the user names one, else under its recorded name
    beside ``referring`` (``input_files.referenced_file``), and must have the recorded digest."""
    if not isinstance(reference, dict):
        raise AbstractionError(f"unknown card abstraction {reference!r}")
    kind = reference.get("kind")
    if kind == "canonical":
        return IsomorphicCards.canonical(game)
    if kind == "none":
        return CardIndependent()
    if kind == "lossless":
        return LosslessCards(game)
    if kind == "bucket-file":
        path = referenced_file(referring, reference.get("path"), bucket_file, "bucket file", "--buckets")
        cards = IsomorphicCards.from_bucket_file(game, path)
        if cards.reference["sha256"] != reference.get("sha256"):
            raise AbstractionError(f"{path}: not the bucket file the strategy was computed on (its "
                                   f"content digest differs)")
        return cards
    if kind == "perfect-recall":
        base = abstraction_from_reference(game, reference.get("base") or {}, bucket_file, referring)
        if not isinstance(base, IsomorphicCards):
            raise AbstractionError(f"perfect recall of {base.description}: only of suit-symmetric buckets")
        return PerfectRecallCards(game, base)
    raise AbstractionError(f"unknown card abstraction {reference!r}")


def check_recorded(reference: dict) -> None:
    """Refuse (``AbstractionError``) a ``reference`` that ``abstraction_from_reference`` cannot
    rebuild: bucket tables made in memory (``IsomorphicCards.hashed``, tables passed in), not
    read from a bucket file."""
    if reference.get("kind") == "tables":
        raise AbstractionError("the card abstraction's bucket tables were made in memory, so a file "
                               "could not name them: save them as a bucket file and load it")
    if reference.get("kind") == "perfect-recall":
        check_recorded(reference.get("base") or {})


def abstraction_named(game: LimitPoker, name: str) -> HandBuckets:
    """``canonical``, ``none`` (one bucket per round), ``lossless`` or a bucket file's path."""
    if name in ABSTRACTION_KINDS:
        return abstraction_from_reference(game, {"kind": name})
    return IsomorphicCards.from_bucket_file(game, name)
