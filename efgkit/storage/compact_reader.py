"""Read a compact strategy (.efgs) with the Python standard library only (mmap, struct).

This module imports nothing outside the standard library, so it can be copied alone to
a device without numpy and play a strategy exported by ``efgkit export``. The format is
documented byte by byte in docs/compact-format.md; efgkit.storage.efgs_c holds the same
reader in C99.

    >>> strategy = CompactStrategy("leduc.efgs")
    >>> strategy.probabilities("P0 card=Ks board=- bets=-")    # {"call": 0.25, "raise": 0.75}
    >>> strategy.sample("P0 card=Ks board=- bets=-", random.Random(0))   # action index

A file stores each abstract infoset's row once. An original infoset reaches its row in
one of three ways:

* its key is an explicit entry of a static function (Graf & Lemire's xor construction,
  "Xor filters", 2020): three slots chosen by the key's 64-bit BLAKE2b hash XOR to the
  row number and a ``check_bits``-bit fingerprint of the key, about 1.23 (row bits +
  check bits) bits per entry and no key stored;
* or it follows its class rule (Čermák et al. §4.1.1): a small table gives the row of
  every class (player, own-sequence length, number of actions), and costs nothing per
  infoset. The caller passes the class, which a player knows: its seat, how many
  actions it has taken this hand and how many it may take now;
* or, in a file exported on a card abstraction, through its cards and betting: the key
  index takes the betting history (``bets=``) to a block of rows, the file's bucket
  tables (``CardTable``) take the cards to a bucket, which picks the row in the block.

A file whose abstraction is the coarsest one has no explicit entries; a refinement of
it stores only the infosets outside their class's largest abstract set (the paper's
explicit map entries). Opening maps the file and checks its header; a lookup hashes the
key, reads three slots, perhaps one class entry, and one row, and checks the
fingerprint and the row's code, so it takes the same time for a file of any size.

A row of ``A`` actions occupies ``A * b`` bits and stores only its first ``A - 1``
weights, in fields of ``floor(A b / (A - 1))`` bits; the last action's weight is the rest
of the row's total ``2**field_bits - 2`` (``row_code``). ``b`` is the row's tier: the
values section starts with two counts, and its first rows (the ones the strategy reaches
most) take ``2 bits`` per action, its last ones ``bits // 2``, the others ``bits`` (16, 8
or 4). A two-action row at 8 bits per action is thus one 16-bit weight out of 65,534.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct
import zlib
from bisect import bisect_left
from collections.abc import Iterator
from hashlib import blake2b, sha256
from itertools import combinations_with_replacement
from math import comb

from efgkit.storage.compressed_reader import CompressedRound, CompressedTableError
from efgkit.storage.computed_reader import ComputedRound, DescriptionError

MAGIC = b"EFGS\r\n\x1a\n"
VERSION = 7
"""The version this reader writes for coded rows; files of ``READ_VERSIONS`` are read."""
PACKED_VERSION = 6
"""The version of files whose rows are packed, not coded."""
COMPUTED_VERSION = 8
"""The version of a file with a computed round (``FLAG_COMPUTED``), rows packed or coded."""
MODELLED_VERSION = 9
"""The version of a file with modelled rows (``FLAG_MODELLED``; buckets computed or not) and
no recorded bucket rule."""
RULE_VERSION = 10
"""The version of a file whose card table records the rule that chose each round's bucket
method (``FLAG_RULE``) and may hold compressed tables (``compressed_reader``); its rows may
be packed, coded or modelled."""
READ_VERSIONS = (PACKED_VERSION, VERSION, COMPUTED_VERSION, MODELLED_VERSION, RULE_VERSION)
HEADER = struct.Struct("<8sHBBIIQQIBBHIIQQQQQQQII32sH")
"""magic, version, bits, flags, keys, rows, values, seed, segment length, slot bits, check
bits, reserved, explicit entries, classes, slots/starts/values/keys/classes/card table
offsets, file size, payload crc32, header crc32, tree fingerprint, spec length
(docs/compact-format.md)."""
CLASS_ENTRY = struct.Struct("<IIII")
"""player, own-sequence length, number of actions, row."""
CARD_HEAD = struct.Struct("<BBBBBBBx")
"""Card table: card name width, cards, private cards per player, rounds, recall, action
groups, bits of a block's number of actions in the key index's values."""
CARD_ROUND = struct.Struct("<BBBBI")
"""Per round: board cards dealt, bits per bucket, bucket method, table source, buckets."""
ACTION_GROUP = struct.Struct("<HxxIQ")
"""Blocks of one number of actions: actions, first row, first value."""
TABLES_HEAD = struct.Struct("<8sHBBI")
"""Bucket-table file: magic, version, rounds, ranks, zero."""
TABLES_ROUND = struct.Struct("<BBBxIQQ")
"""Bucket-table file, per round: hole cards, board cards, bits, buckets, entries, offset."""
TABLES_MAGIC = b"EFGB\r\n\x1a\n"
TABLES_VERSION = 1
METHODS = ("combination table", "canonical table", "canonical", "lossless", "constant", "computed",
           "compressed table")
"""How a round's bucket is found (docs/compact-format.md): a table over (hand rank, board
rank), a table over the canonical (suit-isomorphic) index of (hole cards, board), the
canonical index itself, the deal itself (lossless), 0 (card independent), computed from a
description (format 8, ``computed_reader``), or a compressed table over the canonical index
(format 10, ``compressed_reader``)."""
BY_COMBINATION, BY_CANONICAL, CANONICAL, LOSSLESS, CONSTANT, COMPUTED, COMPRESSED = range(len(METHODS))
TABLE_METHODS = (BY_COMBINATION, BY_CANONICAL)
INLINE, EXTERNAL = 0, 1
VALUES_HEAD = struct.Struct("<QQ")
"""Values section: end of the wide tier, start of the narrow tier (value indices)."""
CODED_HEAD = struct.Struct("<IIQQQQ")
"""Coded rows (format 7, flag ``FLAG_CODED``), after the tier bounds: rows per block,
contexts, blocks, block index offset, stream offset (both from the coded section's
start), stream bits."""
CODED_CONTEXT = struct.Struct("<HBBIQ")
"""Per context: actions, field width, longest code, symbols, its table's offset."""
MODEL_HEAD = struct.Struct("<IHBxQQQQ")
"""Modelled rows (format 9, flag ``FLAG_MODELLED``), after the tier bounds: rows per block,
grid (what a row's weights sum to), most actions of a row, blocks, block index offset and
stream offset (from the section's start), stream bytes; the contexts' first
probabilities (a byte each) follow."""
MAX_MODEL_ACTIONS = 4
MAX_MODEL_TOTAL = 256
MODEL_PROBABILITY_BITS, MODEL_ADAPT_SHIFT = 12, 5
MAX_CODE_LENGTH = 24
MAX_CODED_SYMBOLS = 1 << 14
CODED_ESCAPE, CODED_EMPTY, CODED_FIRST_ENTRY = 0, 1, 2
RECALL_PERFECT = 1
MAX_CARDS = 62
MAX_CARD_ROUNDS = 8
HEADER_CRC_OFFSET = 112
FLAG_PRUNED = 1
FLAG_KEYS = 2
FLAG_GAMEDEF = 4
"""The file ends with an ACPC game definition and its u32 length (``compact_gamedef``)."""
FLAG_CODED = 8
FLAG_COMPUTED = 16
"""A round's bucket is computed from a description in the card table (format 8)."""
FLAG_MODELLED = 32
"""Rows coded by the context model and range coder of format 9 (``row_model``)."""
FLAG_RULE = 64
"""The card table records the rule that chose each round's bucket method (``RULE``) and may
hold compressed tables (format 10)."""
RULE = struct.Struct("<II")
"""The rule's parameters: hand evaluations and decoded hands a lookup may cost."""
BITS = (4, 8, 16)
MAX_SLOT_BITS = 56
VERIFY_CHUNK = 1 << 24
SUITS = 4
SUIT_INDEX_MASK = (1 << 40) - 1
MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1


class CompactFormatError(ValueError):
    """The file is not a compact strategy, of another version, truncated or damaged."""


class KeyLookupError(CompactFormatError):
    """A key the file answers with no row; each cause is its own subclass, one line each."""


class CardError(KeyLookupError):
    """The key's cards: a name not in the deck, a card dealt twice, or the wrong number."""


class BettingError(KeyLookupError):
    """The key's betting (``bets=``) is no decision of the game: not spelled in its
    actions, a hand already over or a round already closed, or not in the file."""


class MissingCell(KeyLookupError):
    """A valid key whose cell (betting history, bucket of its cards) has no row: a bucket
    sequence never dealt, or left out by ``--prune-unreachable``."""


class UnknownKey(KeyLookupError):
    """A key that is not an infoset of the file (not in the game, pruned, or not of the
    class it was given)."""


class ClassNeeded(KeyLookupError):
    """A key that is not an explicit entry of a file with a class rule, asked without its
    class."""


ACPC_ACTIONS = {"f": "fold", "c": "call", "r": "raise"}
"""The ACPC action letters and the game's names for them ("call" also checks, "raise"
also bets)."""
ACPC_GAMES = ("leduc", "twocard", "holdem", "HULHE")
KUHN_DECISIONS = {"-": 0, "p": 1, "b": 1, "pb": 2}
"""Kuhn's betting histories before a decision, by the number of actions taken."""


def betting_style(spec: str) -> str | None:
    """How the game's keys spell their betting: "acpc" (the ACPC letters c, r, f, rounds
    separated by /: Leduc, two-card poker, hold'em), "kuhn" (p, b) or None (a game whose
    keys do not spell its actions: its actions are named by their index)."""
    name = spec.split("(", 1)[0]
    if name in ACPC_GAMES or spec.startswith("acpc:"):
        return "acpc"
    return "kuhn" if name == "kuhn" else None


def key_fields(key: str) -> dict[str, str]:
    """The ``name=value`` fields of an infoset key, and its player field as ``P``."""
    fields = dict(token.split("=", 1) for token in key.split(" ") if "=" in token)
    players = [token[1:] for token in key.split(" ") if token[:1] == "P" and token[1:].isdigit()]
    if players:
        fields["P"] = players[0]
    return fields


def betting_rounds(betting: str, style: str) -> list[str]:
    """The actions of each round of a betting history before a decision (``-`` or empty:
    none yet); a history that is no decision raises BettingError, saying why."""
    if style == "kuhn":
        if betting not in KUHN_DECISIONS:
            raise BettingError(f"bets={betting} is no decision of Kuhn poker (one of "
                               f"{', '.join(KUHN_DECISIONS)})")
        return [betting.strip("-")]
    unknown = sorted(set(betting) - set(ACPC_ACTIONS) - {"/"}) if betting != "-" else []
    if unknown:
        raise BettingError(f"bets={betting}: unknown action {unknown[0]!r} (c call or check, r "
                           f"raise or bet, f fold, / between rounds, - before any action)")
    if "f" in betting:
        raise BettingError(f"bets={betting}: the hand is over after a fold")
    rounds = ("" if betting == "-" else betting).split("/")
    for number, actions in enumerate(rounds, 1):
        closed = len(actions) >= 2 and actions[-1] == "c"
        if number < len(rounds) and not closed:
            raise BettingError(f"bets={betting}: round {number} ({actions or 'no action'}) has "
                               f"not closed where a / starts the next")
        if number == len(rounds) and closed:
            raise BettingError(f"bets={betting}: round {number} has closed (the next round "
                               f"starts after a /)")
    return rounds


def action_names(rounds: list[str], num_actions: int, style: str | None) -> tuple[str, ...] | None:
    """The names of the ``num_actions`` actions after the betting ``rounds``
    (``betting_rounds``), in the order of the row, or None if the betting allows no such
    number of actions. ACPC betting: facing a bet or raise (or a blind, before any action
    of the first round) fold, call, raise (fold, call once the round's raises are capped);
    facing none, call (the check) and raise (the bet). Kuhn: pass, bet. Other games: the
    action's index in the game's order."""
    if style == "kuhn":
        return ("pass", "bet") if num_actions == 2 else None
    if style is None:
        return tuple(str(action) for action in range(num_actions))
    current = rounds[-1]
    if num_actions == 3 and ("r" in current or rounds == [""]):
        return ("fold", "call", "raise")
    if num_actions == 2:
        return ("fold", "call") if "r" in current else ("call", "raise")
    return None


def map_regular_file(path: str, what: str) -> mmap.mmap:
    """The file at ``path`` mapped read-only. Anything but a non-empty regular file is a
    CompactFormatError naming ``what``: checked before opening (a device is never opened)
    and again on the open file, which is opened without blocking, so a FIFO put in its
    place meanwhile cannot hang the reader either. A missing file is an OSError."""
    not_regular = CompactFormatError(f"{path}: the {what} is not a regular file (a FIFO, device or "
                                     f"directory)")
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise not_regular
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):
            raise not_regular
        if opened.st_size == 0:  # mmap cannot map an empty file
            raise CompactFormatError(f"{path}: empty file, not a {what}")
        return mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(descriptor)


def key_hash(key: str | bytes, seed: int) -> int:
    """The key's 64-bit hash: BLAKE2b with an 8-byte digest of (seed as 8 little-endian
    bytes + the key's UTF-8 bytes), read as a little-endian integer."""
    data = key.encode() if isinstance(key, str) else key
    digest = blake2b(seed.to_bytes(8, "little") + data, digest_size=8).digest()
    return int.from_bytes(digest, "little")


def slot_positions(hashed: int, segment: int) -> tuple[int, int, int]:
    """The key's three slots, one per segment of ``segment`` slots: segment ``k`` takes
    32 bits of the hash rotated left by ``21 k``, scaled to the segment (multiply-shift)."""
    rotated1 = ((hashed << 21) | (hashed >> 43)) & MASK64
    rotated2 = ((hashed << 42) | (hashed >> 22)) & MASK64
    return ((hashed & MASK32) * segment >> 32,
            segment + ((rotated1 & MASK32) * segment >> 32),
            2 * segment + ((rotated2 & MASK32) * segment >> 32))


def fingerprint_of(hashed: int, check_bits: int) -> int:
    """The key's ``check_bits``-bit fingerprint: the hash's two halves XORed, masked."""
    return (hashed ^ (hashed >> 32)) & ((1 << check_bits) - 1)


def row_code(bits: int, actions: int) -> tuple[int, int]:
    """(field bits, total) of a row of ``actions`` actions at ``bits`` bits per action.

    The row's ``actions * bits`` bits hold the weights of its first ``actions - 1``
    actions, ``floor(actions bits / max(actions - 1, 1))`` bits each (least significant
    first), then zero bits; the weights sum to ``total = 2**field_bits - 2`` and the last
    action's weight is what the others leave. A row whose bits are all ones is an empty
    cell (of a card table's block: no infoset has it).
    """
    field_bits = actions * bits // max(actions - 1, 1)
    return field_bits, (1 << field_bits) - 2


def model_contexts(max_actions: int, tree_bits: int) -> int:
    """Contexts of modelled rows (format 9): the empty-cell bit, then per (actions ``A`` from
    2, weight ``j < A - 1``) four *zero* and four *all* contexts and a tree of
    ``2**tree_bits`` nodes (node 0 unused)."""
    return 1 + (8 + (1 << tree_bits)) * (max_actions * (max_actions - 1) // 2)


def header_crc(header: bytes) -> int:
    """CRC-32 of the header with its own CRC field (4 bytes at offset 112) left out."""
    return zlib.crc32(header[HEADER_CRC_OFFSET + 4:], zlib.crc32(header[:HEADER_CRC_OFFSET]))


def combination_rank(cards: list[int], num_cards: int) -> int:
    """Position of the sorted card set ``cards`` among all sets of its size drawn from
    ``num_cards`` cards, in lexicographic order (0 for the first)."""
    rank, previous, size = 0, -1, len(cards)
    for i, card in enumerate(cards):
        for skipped in range(previous + 1, card):
            rank += comb(num_cards - 1 - skipped, size - 1 - i)
        previous = card
    return rank


class CanonicalIndex:
    """Waugh's canonical index of a hand modulo suit renaming (K. Waugh, "A Fast and Optimal
    Hand Isomorphism Algorithm", 2013), numbered exactly as efgkit's numba indexer
    (``abstraction.cards.holdem.isomorphism.HandIndexer(groups, num_ranks)``), in the
    standard library only.

    ``groups``: cards per group, e.g. (2, 3) for hole cards and a flop seen as one group;
    cards are ``4 * rank + suit``. Per suit: its *code* counts its cards per group (mixed
    radix), its *suit index* is the colexicographic rank of each group's rank set among the
    ranks the suit has not dealt before (mixed radix, first group least significant).
    Sorting the four (code, suit index) pairs removes the suit names; suits of equal codes
    form a multiset; a table of configurations (the sorted codes, in the order efgkit
    enumerates them) gives each its first index.
    """

    def __init__(self, groups: tuple[int, ...], num_ranks: int) -> None:
        self.groups, self.num_ranks = tuple(groups), num_ranks
        self.radix = [1]
        for count in groups[:-1]:
            self.radix.append(self.radix[-1] * (count + 1))
        num_codes = self.radix[-1] * (groups[-1] + 1)
        dealt = [[code // self.radix[g] % (groups[g] + 1) for g in range(len(groups))]
                 for code in range(num_codes)]
        self.suit_range = []
        for counts in dealt:
            left, choices = num_ranks, 1
            for count in counts:
                choices, left = choices * comb(left, count), left - count
            self.suit_range.append(choices if sum(counts) <= num_ranks else 0)
        self._colex = [_colex(ranks) for ranks in range(1 << num_ranks)]
        feasible = [code for code in range(num_codes) if self.suit_range[code]]
        self.configurations, self.size = {}, 0
        for ascending in combinations_with_replacement(feasible, SUITS):
            if all(sum(dealt[code][g] for code in ascending) == groups[g]
                   for g in range(len(groups))):
                descending = ascending[::-1]
                multipliers, group_ranks, size = self._terms(descending)
                self.configurations[descending] = (self.size, multipliers, group_ranks)
                self.size += size

    def _terms(self, descending: tuple[int, ...]) -> tuple[list[int], list[int], int]:
        """Per sorted position: multiplier and rank in its group of equal codes (folded from
        the last position up: a group of k equal codes of M suit indices each is a multiset
        of C(M + k - 1, k) values); and the number of classes of the configuration."""
        multipliers, group_ranks = [0] * SUITS, [0] * SUITS
        multiplier, rank, previous = 1, 0, None
        for position in reversed(range(SUITS)):
            if descending[position] == previous:
                rank += 1
            else:
                if previous is not None:
                    multiplier *= comb(self.suit_range[previous] + rank - 1, rank)
                previous, rank = descending[position], 1
            multipliers[position], group_ranks[position] = multiplier, rank
        return multipliers, group_ranks, multiplier * comb(
            self.suit_range[previous] + rank - 1, rank)

    def index(self, cards: list[int]) -> int:
        """The canonical index of ``cards`` (every group's cards, group after group)."""
        suit_range, colex = self.suit_range, self._colex
        used, codes, indices, position = [0] * SUITS, [0] * SUITS, [0] * SUITS, 0
        for group, count in enumerate(self.groups):
            ranks = [0] * SUITS
            for card in cards[position:position + count]:
                ranks[card & 3] |= 1 << (card >> 2)
            position += count
            radix = self.radix[group]
            for suit in range(SUITS):
                dealt, taken = ranks[suit], used[suit]
                # the ranks' positions among those this suit has not dealt before: squeeze
                # out the taken ranks, highest first
                while taken:
                    top = taken.bit_length() - 1
                    dealt = (dealt & ((1 << top) - 1)) | (dealt >> (top + 1) << top)
                    taken ^= 1 << top
                indices[suit] += suit_range[codes[suit]] * colex[dealt]
                codes[suit] += ranks[suit].bit_count() * radix
                used[suit] |= ranks[suit]
        keys = sorted((code << 40 | index for code, index in zip(codes, indices, strict=True)),
                      reverse=True)
        first, multipliers, group_ranks = self.configurations[
            (keys[0] >> 40, keys[1] >> 40, keys[2] >> 40, keys[3] >> 40)]
        for key, multiplier, rank in zip(keys, multipliers, group_ranks, strict=True):
            value = key & SUIT_INDEX_MASK
            first += multiplier * (value if rank == 1 else comb(value + rank - 1, rank))
        return first


def _colex(ranks: int) -> int:
    """Colexicographic rank of a rank set among the sets of its size."""
    rank, member = 0, 0
    while ranks:
        low = (ranks & -ranks).bit_length() - 1
        member += 1
        rank += comb(low, member)
        ranks &= ranks - 1
    return rank


def _preflop_classes(num_cards: int) -> list[list[int]]:
    """The canonical preflop class of every hole pair (cards x cards) of a deck of four suits
    (a computed round's opponent clusters are per class)."""
    indexer = CanonicalIndex((2,), num_cards // SUITS)
    table = [[0] * num_cards for _ in range(num_cards)]
    for a in range(num_cards):
        for b in range(a + 1, num_cards):
            table[a][b] = table[b][a] = indexer.index([a, b])
    return table


def lossless_buckets(num_cards: int, private: int, deals: list[int]) -> int:
    """Buckets of the lossless method: every deal of the board in order, then the hand."""
    count = comb(num_cards, private)
    for dealt in deals:
        count *= comb(num_cards, dealt)
    return count


class BucketTables:
    """A bucket-table file (.efgb): packed per-round tables over canonical hands, written
    once beside the compact files that reference it by its sha256 (too large to store in
    each: 52-card hold'em river tables are 10^8 entries). ``expected_sha256`` (raw bytes)
    is checked over the whole file when opening."""

    def __init__(self, path: str, expected_sha256: bytes | None = None) -> None:
        try:
            self._map = map_regular_file(path, "bucket-table file")
        except OSError as exc:
            raise CompactFormatError(f"{path}: cannot open the bucket-table file ({exc})") from exc
        self.path = path
        if expected_sha256 is not None and self.sha256() != expected_sha256:
            self._map.close()
            raise CompactFormatError(f"{path}: not the bucket-table file the strategy was "
                                     f"exported with (its sha256 differs)")
        data = self._map
        if len(data) < TABLES_HEAD.size or data[:8] != TABLES_MAGIC:
            self._map.close()
            raise CompactFormatError(f"{path}: not a bucket-table file (.efgb)")
        _, version, rounds, self.num_ranks, _ = TABLES_HEAD.unpack_from(data, 0)
        if version != TABLES_VERSION or len(data) < TABLES_HEAD.size + TABLES_ROUND.size * rounds:
            self._map.close()
            raise CompactFormatError(f"{path}: bucket-table file version {version} or layout "
                                     f"not read by this reader")
        self.rounds = [TABLES_ROUND.unpack_from(data, TABLES_HEAD.size + TABLES_ROUND.size * r)
                       for r in range(rounds)]

    def sha256(self) -> bytes:
        digest, view = sha256(), memoryview(self._map)
        try:
            for chunk_start in range(0, len(self._map), VERIFY_CHUNK):
                digest.update(view[chunk_start:chunk_start + VERIFY_CHUNK])
        finally:
            view.release()
        return digest.digest()

    def table(self, round_index: int, hole: int, board: int, bits: int, buckets: int,
              entries: int) -> tuple[object, int]:
        """(buffer, offset) of round ``round_index``'s table, checked against what the
        compact file expects of it."""
        if round_index >= len(self.rounds) or self.rounds[round_index][:5] != (
                hole, board, bits, buckets, entries):
            raise CompactFormatError(f"{self.path}: the bucket-table file does not hold the "
                                     f"tables the strategy needs (round {round_index})")
        offset = self.rounds[round_index][5]
        if offset + (entries * bits + 7) // 8 > len(self._map):
            raise CompactFormatError(f"{self.path}: bucket-table file is truncated")
        return self._map, offset

    def close(self) -> None:
        self._map.close()


class CardTable:
    """A card abstraction's buckets as a compact file stores them (docs/compact-format.md).

    A poker infoset key names its private cards (``card=``/``cards=``), its board
    (``board=``, rounds separated by ``/``) and its betting (``bets=``, the ACPC action
    string: rounds separated by ``/``, ``-`` or empty before any action). ``locate``
    splits a key into its betting history, which also tells whose turn it is, and its
    *cell*: the bucket of its cards in the current round (imperfect recall) or the buckets
    of every round so far in mixed radix (perfect recall). The file's key index gives a
    betting history its block; the infoset's row is the block's first row plus its cell.

    Per round the bucket is read from a packed table (over hand and board ranks, or over
    the canonical index of hole cards and board), inline or in a bucket-table file
    (``tables_path``; default: the name the file records, beside ``base``), or computed:
    the canonical index itself, the deal itself (lossless), or 0.

    ``data`` is the file (or any buffer), the table starts at ``offset`` and must end by
    ``limit``; a table that does not fit raises CompactFormatError.
    """

    def __init__(self, data, offset: int, limit: int, path: str = "card table",
                 tables_path: str | None = None, computed: bool = False, ruled: bool = False) -> None:
        self._data, self.path, self.external, self._computed_allowed = data, path, None, computed
        self.computed: dict[int, ComputedRound] = {}
        """The description of every round whose bucket is computed (``COMPUTED``)."""
        self.compressed: dict[int, CompressedRound] = {}
        """The compressed table of every round whose table is compressed (``COMPRESSED``)."""
        self.rule: tuple[int, int] | None = None
        """(hand evaluations, decoded hands) a lookup may cost: the rule that chose each round's
        method (format 10), or None."""
        if offset + CARD_HEAD.size > limit:
            raise CompactFormatError(f"{path}: card table is out of range")
        width, cards, private, rounds, recall, groups, action_bits = CARD_HEAD.unpack_from(
            data, offset)
        position = offset + CARD_HEAD.size
        if not (1 <= width <= 4 and 2 <= cards <= MAX_CARDS and 1 <= private <= cards
                and 1 <= rounds <= MAX_CARD_ROUNDS and recall <= RECALL_PERFECT
                and 1 <= groups <= 16 and 1 <= action_bits <= 16 and position
                + CARD_ROUND.size * rounds + ACTION_GROUP.size * groups + width * cards <= limit):
            raise CompactFormatError(f"{path}: card table is corrupted")
        self.width, self.num_cards, self.private, self.perfect = width, cards, private, bool(recall)
        self.action_bits = action_bits
        self.board_sizes, self.deals, self.bucket_bits, self.buckets = [], [], [], []
        self.methods, self.sources, self._tables, self._indexers = [], [], [], []
        board = 0
        for _ in range(rounds):
            dealt, bits, method, source, buckets = CARD_ROUND.unpack_from(data, position)
            position += CARD_ROUND.size
            board += dealt
            self.board_sizes.append(board)
            self.deals.append(dealt)
            self.bucket_bits.append(bits)
            self.methods.append(method)
            self.sources.append(source)
            self.buckets.append(buckets)
        self.groups = [ACTION_GROUP.unpack_from(data, position + ACTION_GROUP.size * g)
                       for g in range(groups)]
        position += ACTION_GROUP.size * groups
        names = bytes(data[position:position + width * cards])
        self.names = {names[width * card:width * (card + 1)]: card for card in range(cards)}
        self._text_names = {name.decode("ascii", "replace"): card for name, card in self.names.items()}
        position += width * cards
        if len(self.names) != cards or not names.isascii() or any(
                not 1 <= actions < 1 << action_bits for actions, _, _ in self.groups):
            raise CompactFormatError(f"{path}: card table is corrupted")
        if EXTERNAL in self.sources:
            if position + 34 > limit:
                raise CompactFormatError(f"{path}: card table is corrupted")
            self.tables_sha256 = bytes(data[position:position + 32])
            length = struct.unpack_from("<H", data, position + 32)[0]
            self.tables_name = bytes(data[position + 34:position + 34 + length]).decode(
                errors="replace")
            position += 34 + length
        if ruled:
            if position + RULE.size > limit:
                raise CompactFormatError(f"{path}: card table is corrupted")
            self.rule = RULE.unpack_from(data, position)
            position += RULE.size
        try:
            for round_index in range(rounds):
                position = self._open_round(round_index, position, limit, tables_path)
        except CompactFormatError:
            self.close()  # a bucket-table file opened for an earlier round
            raise
        self.size = position - offset

    def _open_round(self, round_index: int, position: int, limit: int,
                    tables_path: str | None) -> int:
        """Check round ``round_index``'s record, find its table (inline at ``position``, or
        in the bucket-table file) and return where the next inline table starts."""
        method, source = self.methods[round_index], self.sources[round_index]
        bits, buckets = self.bucket_bits[round_index], self.buckets[round_index]
        board = self.board_sizes[round_index]
        indexer = None
        if method in (BY_CANONICAL, CANONICAL, COMPUTED, COMPRESSED):
            if self.num_cards % SUITS or self.num_cards // SUITS > 13 or board + self.private > 7:
                raise CompactFormatError(f"{self.path}: card table is corrupted")
            indexer = CanonicalIndex((self.private, board) if board else (self.private,),
                                     self.num_cards // SUITS)
        entries = (comb(self.num_cards, self.private) * comb(self.num_cards, board)
                   if method == BY_COMBINATION else indexer.size if indexer else 0)
        computed = {CANONICAL: indexer.size if indexer else 0, CONSTANT: 1,
                    LOSSLESS: lossless_buckets(self.num_cards, self.private,
                                               [d for d in self.deals[:round_index + 1] if d])}
        if (method >= len(METHODS) or source > EXTERNAL or not 0 <= bits <= 32
                or not 1 <= buckets <= 1 << bits or self.private + board > self.num_cards
                or (method not in (*TABLE_METHODS, COMPUTED, COMPRESSED)
                    and (source or buckets != computed[method]))
                or (method == COMPRESSED and (source or self.rule is None or self.private != 2))
                or (source == EXTERNAL and method != BY_CANONICAL)
                or (method == COMPUTED and (source or not self._computed_allowed or self.private != 2))):
            raise CompactFormatError(f"{self.path}: card table is corrupted")
        self._indexers.append(indexer)
        if method == COMPUTED:  # its description, where a table would be
            try:
                description = ComputedRound(self._data, position, limit, buckets=buckets,
                                            entries=indexer.size, num_ranks=self.num_cards // SUITS,
                                            board=board, class_of_pair=_preflop_classes(self.num_cards))
            except (DescriptionError, struct.error) as exc:
                raise CompactFormatError(f"{self.path}: round {round_index}'s {exc}") from exc
            self.computed[round_index] = description
            self._tables.append(None)
            return position + description.size
        if method == COMPRESSED:  # inline, where a table would be
            try:
                compressed = CompressedRound(self._data, position, limit, buckets=buckets,
                                             entries=indexer.size, num_ranks=self.num_cards // SUITS,
                                             board=board)
            except (CompressedTableError, struct.error) as exc:
                raise CompactFormatError(f"{self.path}: round {round_index}'s {exc}") from exc
            self.compressed[round_index] = compressed
            self._tables.append(None)
            return position + compressed.size
        if method not in TABLE_METHODS:
            self._tables.append(None)
            return position
        if source == INLINE:
            self._tables.append((self._data, position))
            position += (entries * bits + 7) // 8
            if position > limit:
                raise CompactFormatError(f"{self.path}: card table is corrupted")
            return position
        if self.external is None:
            name = tables_path or self._recorded_tables_path()
            if not os.path.exists(name):
                raise CompactFormatError(f"{self.path}: needs its bucket-table file {name} "
                                         f"(sha256 {self.tables_sha256.hex()[:16]}...), which "
                                         f"is missing")
            self.external = BucketTables(name, self.tables_sha256)
        self._tables.append(self.external.table(round_index, self.private, board, bits, buckets,
                                                entries))
        return position

    def _recorded_tables_path(self) -> str:
        """The bucket-table file the file names, beside it: a plain name (no folder, as the C
        reader requires), so the file's content never picks a file elsewhere."""
        forbidden = {"/", "\0", os.sep, os.altsep} - {None}
        if self.tables_name in ("", ".", "..") or any(mark in self.tables_name for mark in forbidden):
            raise CompactFormatError(f"{self.path}: names its bucket-table file {self.tables_name!r}, not a "
                                     f"plain file name beside it")
        return os.path.join(os.path.dirname(self.path), self.tables_name)

    def table_bytes(self, round_index: int) -> int:
        """Bytes of round ``round_index``'s inline bucket table (0: none, or external)."""
        if self.methods[round_index] not in TABLE_METHODS or self.sources[round_index]:
            return 0
        entries = (comb(self.num_cards, self.private) * comb(self.num_cards,
                                                             self.board_sizes[round_index])
                   if self.methods[round_index] == BY_COMBINATION
                   else self._indexers[round_index].size)
        return (entries * self.bucket_bits[round_index] + 7) // 8

    def packed_table(self, round_index: int) -> tuple[object, int, int, int] | None:
        """(buffer, offset, entries, bits per entry) of round ``round_index``'s packed bucket
        table (entry ``j`` at bits ``[j bits, (j + 1) bits)`` from ``offset``, least
        significant first), or None for a round whose bucket is computed."""
        if self.methods[round_index] not in TABLE_METHODS:
            return None
        data, offset = self._tables[round_index]
        entries = (comb(self.num_cards, self.private) * comb(self.num_cards,
                                                             self.board_sizes[round_index])
                   if self.methods[round_index] == BY_COMBINATION
                   else self._indexers[round_index].size)
        return data, offset, entries, self.bucket_bits[round_index]

    def block_size(self, round_index: int) -> int:
        """Rows of one betting key of round ``round_index``: its possible cells."""
        if not self.perfect:
            return self.buckets[round_index]
        size = 1
        for buckets in self.buckets[:round_index + 1]:
            size *= buckets
        return size

    def block(self, value: int) -> tuple[int, int, int] | None:
        """(first row, first value, actions) of the block an index value names, or None
        (no group has its number of actions, or it starts before its group)."""
        actions = value & ((1 << self.action_bits) - 1)
        first_row = value >> self.action_bits
        for group_actions, group_row, group_value in self.groups:
            if group_actions == actions and first_row >= group_row:
                return first_row, group_value + (first_row - group_row) * actions, actions
        return None

    def bucket(self, round_index: int, hand: list[int], board: list[int]) -> int:
        """The bucket of private cards ``hand`` (sorted) with ``board`` (the first
        ``board_sizes[round_index]`` cards of the board, in the order dealt)."""
        method = self.methods[round_index]
        if method == CONSTANT:
            return 0
        if method == LOSSLESS:
            key, start = 0, 0
            for dealt in self.deals[:round_index + 1]:
                if dealt:
                    key = (key * comb(self.num_cards, dealt)
                           + combination_rank(sorted(board[start:start + dealt]), self.num_cards))
                    start += dealt
            return key * comb(self.num_cards, self.private) + combination_rank(hand,
                                                                                self.num_cards)
        if method == BY_COMBINATION:
            entry = (combination_rank(hand, self.num_cards)
                     * comb(self.num_cards, self.board_sizes[round_index])
                     + combination_rank(sorted(board), self.num_cards))
        else:
            entry = self._indexers[round_index].index(hand + board)
            if method == CANONICAL:
                return entry
            if method == COMPUTED:
                return self.computed[round_index].bucket(hand, board, entry)
            if method == COMPRESSED:
                try:
                    return self.compressed[round_index].bucket(hand, board, entry)
                except CompressedTableError as exc:
                    raise CompactFormatError(f"{self.path}: card table is corrupted ({exc})") from exc
        bits = self.bucket_bits[round_index]
        data, offset = self._tables[round_index]
        bit = entry * bits
        start = offset + (bit >> 3)
        word = int.from_bytes(data[start:start + (((bit & 7) + bits + 7) >> 3)], "little")
        bucket = (word >> (bit & 7)) & ((1 << bits) - 1)
        if bucket >= self.buckets[round_index]:
            raise CompactFormatError(f"{self.path}: card table is corrupted")
        return bucket

    def _card_ids(self, text: str, field: str) -> list[int]:
        """The card ids of the names in ``text``; a name not in the deck is a CardError."""
        width, names = self.width, self._text_names
        cards = [names.get(text[i:i + width]) for i in range(0, len(text), width)]
        if None in cards:
            name = text[width * cards.index(None):][:width]
            raise CardError(f"{field}={text}: unknown card {name!r} (the deck: "
                            f"{' '.join(names)})")
        return cards

    def locate(self, key: str) -> tuple[str, int, int]:
        """(betting history, round, cell) of an infoset key. Cards the deck does not name,
        a card dealt twice or the wrong number of cards raise CardError; a key without
        betting or whose betting has more rounds than the game, BettingError. An empty
        ``bets=`` is read as ``-`` (the ACPC string before any action)."""
        fields = key_fields(key)
        private = fields.get("card", fields.get("cards"))
        if "bets" not in fields:
            raise BettingError(f"{key!r} has no betting (bets=)")
        if private is None:
            raise CardError(f"{key!r} names no private cards (card= or cards=)")
        betting = fields["bets"] or "-"
        round_index = betting.count("/")
        if round_index >= len(self.board_sizes):
            raise BettingError(f"bets={betting} has {round_index + 1} rounds; the game has "
                               f"{len(self.board_sizes)}")
        board_text = fields.get("board", "-")
        hand = self._card_ids(private, "card" if "card" in fields else "cards")
        board = self._card_ids("" if board_text == "-" else board_text.replace("/", ""), "board")
        if len(hand) != self.private or len(board) != self.board_sizes[round_index]:
            raise CardError(f"{key!r}: {len(hand)} private and {len(board)} board cards; round "
                            f"{round_index + 1} has {self.private} and {self.board_sizes[round_index]}")
        if len(set(hand + board)) != len(hand) + len(board):
            twice = next(card for card in hand + board if (hand + board).count(card) > 1)
            name = next(text for text, card in self._text_names.items() if card == twice)
            raise CardError(f"{key!r}: card {name} is dealt twice")
        hand.sort()
        cell = 0
        for past in range(round_index + 1) if self.perfect else (round_index,):
            cell = cell * self.buckets[past] + self.bucket(past, hand,
                                                           board[:self.board_sizes[past]])
        return betting, round_index, cell

    def close(self) -> None:
        if self.external is not None:
            self.external.close()


class _RangeDecoder:
    """The binary range decoder of modelled rows (format 9; the LZMA decoder's arithmetic):
    ``code`` the block's bytes (zeros read past ``length``), ``probabilities`` of a zero
    per context, 12 bits, adapted by a shift of 5 as bits are decoded."""

    def __init__(self, code: bytes, length: int, probabilities: list[int]) -> None:
        self._code, self._length, self._probabilities = code, length, probabilities
        self.code, self.range, self._at = int.from_bytes(code[:4], "big"), MASK32, 4

    def bit(self, context: int) -> int:
        p = self._probabilities[context]
        bound = (self.range >> MODEL_PROBABILITY_BITS) * p
        if self.code < bound:
            self.range = bound
            self._probabilities[context] = p + (((1 << MODEL_PROBABILITY_BITS) - p) >> MODEL_ADAPT_SHIFT)
            bit = 0
        else:
            self.code -= bound
            self.range -= bound
            self._probabilities[context] = p - (p >> MODEL_ADAPT_SHIFT)
            bit = 1
        while self.range < 1 << 24:
            byte = self._code[self._at] if self._at < self._length else 0
            self.range = (self.range << 8) & MASK32
            self.code = ((self.code << 8) | byte) & MASK32
            self._at += 1
        return bit


class CompactStrategy:
    """A memory-mapped compact strategy: quantized probabilities by infoset key.

    Attributes: ``bits`` (16, 8 or 4 per action, twice that for the rows of the wide
    tier, half for the narrow tier; a row's weights sum to its total, ``row_code``),
    ``spec`` (the game), ``fingerprint`` (hex sha256 of the game tree), ``pruned``
    (infosets the strategy never reaches were left out), ``has_keys``, ``check_bits`` (a
    key not in the file is found anyway with probability 2**-check_bits unless keys are
    stored), ``num_rows`` (abstract infosets), ``num_explicit`` (keys in the key
    index), ``num_classes`` (classes in the class rule, 0 if none: then every key is
    explicit). With a class rule and no stored keys, a key not in the game but of a
    listed class reads that class's row. ``coded``: rows entropy-coded (format 7).
    """

    coded = modelled = False

    def __init__(self, path: str, bucket_tables: str | None = None) -> None:
        self._bucket_tables = bucket_tables
        self._map = map_regular_file(path, "compact strategy")
        self.path, self.card_table = path, None
        try:
            self._parse_header()
        except CompactFormatError:
            self.close()
            raise

    def _parse_header(self) -> None:
        data = self._map
        if len(data) < 10 or data[:8] != MAGIC:
            raise CompactFormatError(f"{self.path}: not a compact strategy (.efgs) file")
        version = struct.unpack_from("<H", data, 8)[0]
        self.version = version
        newest = max(READ_VERSIONS)
        if version > newest:
            raise CompactFormatError(f"{self.path}: compact format version {version} is newer "
                                     f"than this reader ({newest}); upgrade the reader")
        if version not in READ_VERSIONS:
            raise CompactFormatError(f"{self.path}: compact format version {version} (this "
                                     f"reader reads {', '.join(map(str, READ_VERSIONS))}) is "
                                     f"{'no longer' if version < READ_VERSIONS[0] else 'not'} read; "
                                     f"export the strategy again with efgkit export")
        if len(data) < HEADER.size:
            raise CompactFormatError(f"{self.path}: file is truncated ({len(data)} bytes)")
        (_, _, bits, flags, keys, rows, values, seed, segment, slot_bits, check_bits, _,
         explicit, classes, slots_at, starts_at, values_at, keys_at, classes_at, cards_at, size,
         payload_crc, stored_header_crc, fingerprint, spec_length) = HEADER.unpack_from(data, 0)
        header_end = HEADER.size + spec_length
        if size != len(data) or header_end > len(data):
            raise CompactFormatError(f"{self.path}: file is truncated ({len(data)} bytes, the "
                                     f"header says {size})")
        if header_crc(bytes(data[:header_end])) != stored_header_crc:
            raise CompactFormatError(f"{self.path}: header is corrupted (CRC mismatch)")
        self.game_definition = self._game_definition(flags, header_end, size)
        """The ACPC game definition text the file carries (``FLAG_GAMEDEF``), or None."""
        if self.game_definition is not None:  # the sections lie before it
            size -= 4 + len(self.game_definition.encode())
        if cards_at and (cards_at < header_end or classes or starts_at):
            raise CompactFormatError(f"{self.path}: section offsets are out of range")
        computed, ruled = bool(flags & FLAG_COMPUTED), bool(flags & FLAG_RULE)
        self.modelled = bool(flags & FLAG_MODELLED)
        older = version < MODELLED_VERSION
        if ruled != (version == RULE_VERSION) or (
                older and (computed != (version == COMPUTED_VERSION) or self.modelled)) or (
                version == MODELLED_VERSION and not self.modelled) or (self.modelled and (
                    flags & FLAG_CODED or not cards_at)):
            raise CompactFormatError(f"{self.path}: header is corrupted (version {version} with "
                                     f"flags {flags})")
        self.card_table = CardTable(data, cards_at, size, self.path, self._bucket_tables,
                                    computed=computed, ruled=ruled) if cards_at else None
        # With a card table an index value is (first row, actions) of a block.
        block_bits = self.card_table.action_bits if self.card_table else 0
        if bits not in BITS or not 0 < slot_bits <= MAX_SLOT_BITS or check_bits > slot_bits or (
                explicit and not segment) or (rows - 1).bit_length() > (
                slot_bits - check_bits - block_bits):
            raise CompactFormatError(f"{self.path}: unsupported layout ({bits} bits per "
                                     f"probability, {slot_bits}-bit slots)")
        sections = [(slots_at, (3 * segment * slot_bits + 7) // 8), (values_at, VALUES_HEAD.size)]
        if not cards_at:
            sections.append((starts_at, 4 * (rows + 1)))
        if flags & FLAG_KEYS:
            sections.append((keys_at, 4 * (rows + 1) + 4 * (keys + 1)))
        if classes:
            sections.append((classes_at, CLASS_ENTRY.size * classes))
        if any(start < header_end or start + length > size for start, length in sections):
            raise CompactFormatError(f"{self.path}: section offsets are out of range")
        self.bits, self.seed, self._values_at = bits, seed, values_at + VALUES_HEAD.size
        self._wide_end, self._narrow_start = VALUES_HEAD.unpack_from(data, values_at)
        self.coded = bool(flags & FLAG_CODED)
        if (version < COMPUTED_VERSION and self.coded != (version == VERSION)) or not (
                self._wide_end <= self._narrow_start <= values) or (bits == 16 and self._wide_end) or (
                self.modelled and (self._wide_end or self._narrow_start != values)) or (
                not self.coded and not self.modelled and self._values_at + (
                    self._value_bit(values) + 7) // 8 > size):
            raise CompactFormatError(f"{self.path}: values section is corrupted")
        self.pruned, self.has_keys = bool(flags & FLAG_PRUNED), bool(flags & FLAG_KEYS)
        self.check_bits, self.num_rows, self.num_values = check_bits, rows, values
        self.payload_crc, self.fingerprint = payload_crc, fingerprint.hex()
        self.spec = self._text(bytes(data[HEADER.size:header_end]), "game spec")
        self.betting_style = betting_style(self.spec)
        self.num_explicit, self.num_classes = explicit, classes
        self._count, self._segment, self._slot_bits = keys, segment, slot_bits
        self._slots_at, self._starts_at, self._keys_at, self._classes_at = (
            slots_at, starts_at, keys_at, classes_at)
        self._payload_start = header_end
        if not cards_at and self._start(rows) != values:
            raise CompactFormatError(f"{self.path}: row table does not end at the value count")
        if self.coded:
            self._open_coded(size)
        if self.modelled:
            self._open_modelled(size)

    def _open_coded(self, size: int) -> None:
        """Check the coded rows' head, contexts and block index (format 7)."""
        data, base = self._map, self._values_at
        if base + CODED_HEAD.size > size:
            raise CompactFormatError(f"{self.path}: coded rows are out of range")
        block_rows, contexts, blocks, index_at, stream_at, stream_bits = CODED_HEAD.unpack_from(
            data, base)
        if not block_rows or blocks != -(-self.num_rows // block_rows) or (
                base + index_at + 8 * blocks > size) or base + stream_at + (stream_bits + 7) // 8 > size:
            raise CompactFormatError(f"{self.path}: coded rows are out of range")
        self._contexts: dict[tuple[int, int], tuple[list[int], int, int, int]] = {}
        for c in range(contexts):
            position = base + CODED_HEAD.size + CODED_CONTEXT.size * c
            if position + CODED_CONTEXT.size > size:
                raise CompactFormatError(f"{self.path}: coded rows are out of range")
            actions, width, longest, symbols, table_at = CODED_CONTEXT.unpack_from(data, position)
            table = base + table_at
            if not (1 <= actions and width <= 32 and longest <= MAX_CODE_LENGTH
                    and CODED_FIRST_ENTRY <= symbols <= MAX_CODED_SYMBOLS) or table + 4 * longest > size:
                raise CompactFormatError(f"{self.path}: a code table is corrupted")
            counts = [0, *struct.unpack_from(f"<{longest}I", data, table)]
            used = sum(counts)
            entries_at = table + 4 * longest + 2 * used
            if used > symbols or sum(n << (longest - length) for length, n in enumerate(counts)) > (
                    1 << longest) or entries_at + 4 * (symbols - CODED_FIRST_ENTRY) * (actions - 1) > size:
                raise CompactFormatError(f"{self.path}: a code table is corrupted")
            self._contexts[actions, width] = (counts, table + 4 * longest, entries_at, symbols)
        self._coding = (block_rows, base + index_at, base + stream_at, stream_bits)

    def _open_modelled(self, size: int) -> None:
        """Check the modelled rows' head, first probabilities and block index (format 9)."""
        data, base = self._map, self._values_at
        if base + MODEL_HEAD.size > size:
            raise CompactFormatError(f"{self.path}: modelled rows are out of range")
        block_rows, total, max_actions, blocks, index_at, stream_at, stream_bytes = MODEL_HEAD.unpack_from(
            data, base)
        tree_bits = max((total - 2).bit_length(), 0)
        contexts = model_contexts(max_actions, tree_bits)
        if not block_rows or blocks != -(-self.num_rows // block_rows) or not (
                2 <= total <= MAX_MODEL_TOTAL and 1 <= max_actions <= MAX_MODEL_ACTIONS) or (
                index_at < MODEL_HEAD.size + contexts) or base + index_at + 4 * blocks > size or (
                stream_at < index_at + 4 * blocks) or base + stream_at + stream_bytes > size:
            raise CompactFormatError(f"{self.path}: modelled rows are out of range")
        first = bytes(data[base + MODEL_HEAD.size:base + MODEL_HEAD.size + contexts])
        if 0 in first:
            raise CompactFormatError(f"{self.path}: a modelled rows' probability is corrupted")
        self._model = (block_rows, total, max_actions, tree_bits, [b << 4 for b in first],
                       base + index_at, base + stream_at, stream_bytes)

    def _game_definition(self, flags: int, header_end: int, size: int) -> str | None:
        if not flags & FLAG_GAMEDEF:
            return None
        length = struct.unpack_from("<I", self._map, size - 4)[0] if size >= header_end + 4 else -1
        if not 0 < length <= size - 4 - header_end:
            raise CompactFormatError(f"{self.path}: game definition section is out of range")
        try:
            return bytes(self._map[size - 4 - length:size - 4]).decode("ascii")
        except UnicodeDecodeError:
            raise CompactFormatError(f"{self.path}: the game definition is not ASCII text") from None

    # ----------------------------------------------------------------- lookups
    def __len__(self) -> int:
        """Number of original infosets in the file."""
        return self._count

    def _slot(self, index: int) -> int:
        bit = index * self._slot_bits
        start = self._slots_at + (bit >> 3)
        width = ((bit & 7) + self._slot_bits + 7) >> 3
        word = int.from_bytes(self._map[start:start + width], "little")
        return (word >> (bit & 7)) & ((1 << self._slot_bits) - 1)

    def _start(self, row: int) -> int:
        return struct.unpack_from("<I", self._map, self._starts_at + 4 * row)[0]

    def _index_value(self, key: str) -> int:
        """The value the key index gives ``key``, or -1 if the fingerprint does not match."""
        hashed = key_hash(key, self.seed)
        value = 0
        for position in slot_positions(hashed, self._segment):
            value ^= self._slot(position)
        if value & ((1 << self.check_bits) - 1) != fingerprint_of(hashed, self.check_bits):
            return -1
        return value >> self.check_bits

    def _explicit_row(self, key: str) -> int:
        """The row the key index gives ``key``, or -1 (fingerprint or row out of range)."""
        row = self._index_value(key)
        return row if row < self.num_rows else -1  # else a foreign key's fingerprint matched

    def _class_row(self, infoset_class: tuple[int, int, int]) -> int:
        """The row of a class (player, own-sequence length, number of actions), or -1."""
        wanted = tuple(int(number) for number in infoset_class)
        lo, hi = 0, self.num_classes
        while lo < hi:  # the class table is sorted by (player, length, actions)
            middle = (lo + hi) // 2
            if CLASS_ENTRY.unpack_from(self._map, self._classes_at + CLASS_ENTRY.size * middle)[:3] < wanted:
                lo = middle + 1
            else:
                hi = middle
        if lo == self.num_classes:
            return -1
        *found, row = CLASS_ENTRY.unpack_from(self._map, self._classes_at + CLASS_ENTRY.size * lo)
        if tuple(found) != wanted:
            return -1
        if row >= self.num_rows or self._start(row + 1) - self._start(row) != wanted[2]:
            raise CompactFormatError(f"{self.path}: class table is corrupted")
        return row

    def row_of(self, key: str, infoset_class: tuple[int, int, int] | None = None) -> int:
        """The abstract row of infoset ``key``, or -1 if it is not in the file.

        ``infoset_class`` = (player, own-sequence length, number of actions) of the
        infoset; a file with a class rule (``num_classes > 0``) needs it for every key
        that is not an explicit entry, and raises ClassNeeded without it.
        """
        try:
            return self._located(key, infoset_class)[0]
        except ClassNeeded:
            raise
        except KeyLookupError:
            return -1

    def _rounds(self, key: str, fields: dict[str, str]) -> list[str] | None:
        """The rounds of the key's betting (``betting_rounds``), None for a game whose keys
        do not spell their actions; a poker key without betting is a BettingError."""
        if self.betting_style is None:
            return None
        if "bets" not in fields:
            raise BettingError(f"{key!r} has no betting (bets=)")
        return betting_rounds(fields["bets"] or "-", self.betting_style)

    def _located(self, key: str, infoset_class: tuple[int, int, int] | None
                 ) -> tuple[int, int, int, tuple[str, ...]]:
        """(row, first value, end value, action names) of infoset ``key``; a key the file
        does not answer raises the KeyLookupError of its cause. The key's betting is
        checked before it is looked up: a nonsense key never reads a class's row."""
        fields = key_fields(key)
        if self.card_table is not None:
            return self._card_cell(key, fields)
        rounds = self._rounds(key, fields)
        encoded = key.encode()
        row = self._explicit_row(key) if self.num_explicit else -1
        if row >= 0 and self.has_keys and not self._group_has(row, encoded):
            row = -1
        if row < 0:
            if not self.num_classes:
                raise UnknownKey(f"{key!r} is not an infoset of {self.path} (not in the game "
                                 f"{self.spec}, or pruned)")
            if infoset_class is None:
                raise ClassNeeded(f"{key!r} is not an explicit entry of {self.path}, whose other "
                                  f"infosets follow their class: pass infoset_class=(player, "
                                  f"own-sequence length, number of actions)")
            row = self._class_row(infoset_class)
            player = fields.get("P")
            if self.betting_style is not None and (player is None or int(player) != infoset_class[0]):
                raise UnknownKey(f"{key!r} is not an infoset of player {infoset_class[0]}")
            if row < 0 or (self.has_keys and not self._group_has(row, encoded)):
                raise UnknownKey(f"{key!r} with class {tuple(infoset_class)} is not an infoset "
                                 f"of {self.path}")
        lo, hi = struct.unpack_from("<II", self._map, self._starts_at + 4 * row)
        if not lo < hi <= self.num_values:
            raise CompactFormatError(f"{self.path}: row table is corrupted")
        names = action_names(rounds, hi - lo, self.betting_style)
        if names is None:
            raise UnknownKey(f"{key!r}: its betting allows no {hi - lo} actions (not an infoset "
                             f"of {self.spec})")
        return row, lo, hi, names

    def _card_cell(self, key: str, fields: dict[str, str]) -> tuple[int, int, int, tuple[str, ...]]:
        """(row, first value, end value, action names) of ``key`` in a file with a card
        table: its betting is checked, its cards located (``CardTable.locate``), then the
        key index gives the betting history its block of (first row, first value, number
        of actions) and the key's cell picks the row in the block. A row of all ones is a
        cell no infoset of the file has (never dealt, or pruned)."""
        rounds = self._rounds(key, fields)
        betting, _, cell = self.card_table.locate(key)
        located = self._block(betting, rounds)
        if located is None:
            raise BettingError(self._unknown_betting(betting))
        block, names = located
        row, lo, actions = block[0] + cell, block[1] + cell * block[2], block[2]
        if row >= self.num_rows or lo + actions > self.num_values:
            raise BettingError(self._unknown_betting(betting))  # a foreign fingerprint matched
        if self._weights(lo, lo + actions) is None or (
                self.has_keys and not self._group_has(row, key.encode())):
            raise MissingCell(f"{key!r}: no row for these cards after bets={betting} (cell "
                              f"{cell}: never dealt, or pruned)")
        return row, lo, lo + actions, names

    def _block(self, betting: str, rounds: list[str] | None
               ) -> tuple[tuple[int, int, int], tuple[str, ...]] | None:
        """The block the key index gives a betting history and its actions' names, or None
        (not in the index, or a foreign history whose fingerprint matched)."""
        value = self._index_value(betting) if self.num_explicit else -1
        block = None if value < 0 else self.card_table.block(value)
        if block is None:
            return None
        names = action_names(rounds, block[2], self.betting_style)
        return None if names is None else (block, names)

    def _unknown_betting(self, betting: str) -> str:
        """Why ``betting`` (legal in the letters of its game) has no block: the message
        names the longest decision before it that the file holds, and its legal actions."""
        for end in range(len(betting) - 1, -1, -1):
            prefix = betting[:end] or "-"
            try:
                rounds = None if self.betting_style is None else betting_rounds(
                    prefix, self.betting_style)
            except BettingError:
                continue
            located = self._block(prefix, rounds)
            if located is not None:
                return (f"bets={betting} is not a betting history of {self.spec}: after "
                        f"{prefix} the actions are {', '.join(located[1])}")
        return f"bets={betting} is not a betting history of {self.spec}"

    def block_rows(self, betting: str) -> tuple[tuple[str, ...], list[tuple[int, ...] | None]]:
        """A card-table file's rows at the betting history ``betting`` (ACPC letters, ``-``
        before any action): the actions' names and every cell's weights in cell order
        (None: an empty cell, never dealt or pruned). An unknown history is a BettingError."""
        if self.card_table is None:
            raise CompactFormatError(f"{self.path}: has no card table (rows by betting and cards)")
        rounds = None if self.betting_style is None else betting_rounds(betting, self.betting_style)
        located = self._block(betting, rounds)
        if located is None:
            raise BettingError(self._unknown_betting(betting))
        (first_row, first_value, actions), names = located
        cells = self.card_table.block_size(len(rounds) - 1 if rounds else 0)
        if first_row + cells > self.num_rows or first_value + cells * actions > self.num_values:
            raise CompactFormatError(f"{self.path}: key index is corrupted")
        return names, [self._weights(first_value + cell * actions, first_value + (cell + 1) * actions)
                       for cell in range(cells)]

    def __contains__(self, key: str) -> bool:
        """Is ``key`` in the file? For a file with a class rule, only explicit entries
        can be asked this way (``row_of(key, infoset_class) >= 0`` asks for any)."""
        try:
            return self.row_of(key) >= 0
        except ClassNeeded:
            return False

    def quantized(self, key: str, infoset_class: tuple[int, int, int] | None = None
                  ) -> tuple[int, ...]:
        """The integer weights of the key's actions (in the game's action order), summing to
        the row's total (``row_code`` at its tier's bits per action).

        A key the file does not answer raises the KeyLookupError of its cause: CardError,
        BettingError, MissingCell, UnknownKey or ClassNeeded. ``infoset_class`` as in
        ``row_of``.
        """
        _, lo, hi, _ = self._located(key, infoset_class)
        return self._checked(lo, hi)

    def probabilities(self, key: str, infoset_class: tuple[int, int, int] | None = None
                      ) -> dict[str, float]:
        """The key's row: action name -> probability (``quantized(key) / total``), in the
        row's order (``action_names``); errors as ``quantized``."""
        _, lo, hi, names = self._located(key, infoset_class)
        weights = self._checked(lo, hi)
        total = sum(weights)
        return {name: weight / total for name, weight in zip(names, weights, strict=True)}

    def sample(self, key: str, rng, infoset_class: tuple[int, int, int] | None = None) -> int:
        """An action index drawn with probability exactly ``quantized(key)[a] / total``.

        ``rng`` is anything with ``randrange`` (``random.Random``, ``random.SystemRandom``).
        """
        weights = self.quantized(key, infoset_class)
        draw = rng.randrange(sum(weights))
        for action, weight in enumerate(weights[:-1]):
            draw -= weight
            if draw < 0:
                return action
        return len(weights) - 1

    def _row(self, row: int) -> tuple[int, ...]:
        """Row ``row``'s weights (from the row-start table); a row that fails its own
        checks is never returned."""
        lo, hi = struct.unpack_from("<II", self._map, self._starts_at + 4 * row)
        if not lo < hi <= self.num_values:
            raise CompactFormatError(f"{self.path}: row table is corrupted")
        return self._checked(lo, hi)

    def _checked(self, lo: int, hi: int) -> tuple[int, ...]:
        """The weights of the row at values ``[lo, hi)``, which must not be an empty cell."""
        weights = self._weights(lo, hi)
        if weights is None:
            raise CompactFormatError(f"{self.path}: a row is empty (file is corrupted)")
        return weights

    def _value_bit(self, value: int) -> int:
        """Position of value ``value`` in the values' bit string: the wide tier's values
        take ``2 bits``, the narrow tier's ``bits // 2``."""
        wide, narrow = min(value, self._wide_end), min(value, self._narrow_start)
        return (2 * self.bits * wide + self.bits * (narrow - wide)
                + self.bits // 2 * (value - narrow))

    def _tier_bits(self, lo: int, hi: int) -> int:
        """Bits per action of the row at values ``[lo, hi)``, which lies in one tier."""
        if hi <= self._wide_end:
            return 2 * self.bits
        if self._wide_end <= lo and hi <= self._narrow_start:
            return self.bits
        if self._narrow_start <= lo:
            return self.bits // 2
        raise CompactFormatError(f"{self.path}: a row straddles two tiers (file is corrupted)")

    def _weights(self, lo: int, hi: int) -> tuple[int, ...] | None:
        """The weights of the row at values ``[lo, hi)`` (``row_code`` at its tier's bits),
        or None for an empty cell (all bits ones); a row whose weights pass its total or
        whose padding bits are not zero raises CompactFormatError."""
        if self.modelled:
            return self._modelled_row(self._row_at_value(lo), lo, hi)
        tier = self._tier_bits(lo, hi)
        actions, row_bits = hi - lo, (hi - lo) * tier
        field_bits, total = row_code(tier, actions)
        if self.coded:
            return self._coded_row(self._row_at_value(lo), lo, hi)
        bit = self._value_bit(lo)
        start = self._values_at + (bit >> 3)
        shift = bit & 7
        word = int.from_bytes(self._map[start:start + ((shift + row_bits + 7) >> 3)], "little")
        word = (word >> shift) & ((1 << row_bits) - 1)
        if word == (1 << row_bits) - 1:
            return None
        mask = (1 << field_bits) - 1
        fields = [(word >> (field_bits * j)) & mask for j in range(actions - 1)]
        rest = total - sum(fields)
        if rest < 0 or word >> (field_bits * (actions - 1)):
            raise CompactFormatError(f"{self.path}: a row's weights pass its total {total} "
                                     f"(file is corrupted)")
        return (*fields, rest)

    # ----------------------------------------------------------------- coded rows (format 7)
    def _row_values(self, row: int) -> tuple[int, int]:
        """Values ``[lo, hi)`` of row ``row``: from the row-start table, or with a card
        table from the action group it lies in."""
        if self.card_table is None:
            lo, hi = struct.unpack_from("<II", self._map, self._starts_at + 4 * row)
            if not lo < hi <= self.num_values:
                raise CompactFormatError(f"{self.path}: row table is corrupted")
            return lo, hi
        group = max((g for g in self.card_table.groups if g[1] <= row), key=lambda g: g[1],
                    default=None)
        if group is None:
            raise CompactFormatError(f"{self.path}: a row lies in no action group (corrupted)")
        lo = group[2] + (row - group[1]) * group[0]
        return lo, lo + group[0]

    def _row_at_value(self, lo: int) -> int:
        """The row whose values start at ``lo``."""
        if self.card_table is None:
            row = bisect_left(range(self.num_rows + 1), lo, key=self._start)
        else:
            group = max((g for g in self.card_table.groups if g[2] <= lo), key=lambda g: g[2],
                        default=None)
            row = -1 if group is None else group[1] + (lo - group[2]) // group[0]
        if not 0 <= row < self.num_rows or self._row_values(row)[0] != lo:
            raise CompactFormatError(f"{self.path}: a row's values do not start a row (corrupted)")
        return row

    def _stream_bits(self, bit: int, width: int) -> int:
        """``width`` bits of the coded stream from bit ``bit``, least significant first."""
        _, _, stream_at, stream_bits = self._coding
        if bit + width > stream_bits:
            raise CompactFormatError(f"{self.path}: coded rows end early (corrupted)")
        start = stream_at + (bit >> 3)
        word = int.from_bytes(self._map[start:start + (((bit & 7) + width + 7) >> 3)], "little")
        return (word >> (bit & 7)) & ((1 << width) - 1)

    def _decode_symbol(self, context, bit: int) -> tuple[int, int]:
        """(symbol, next bit) of the canonical code ``context`` at ``bit`` (RFC 1951's
        decoding by counts per length)."""
        counts, order_at, _, symbols = context
        code = first = index = 0
        for length in range(1, len(counts)):
            code |= self._stream_bits(bit, 1)
            bit += 1
            if code - first < counts[length]:
                symbol = struct.unpack_from("<H", self._map, order_at + 2 * (index + code - first))[0]
                if symbol >= symbols:
                    break
                return symbol, bit
            index += counts[length]
            first = (first + counts[length]) << 1
            code <<= 1
        raise CompactFormatError(f"{self.path}: a coded row is corrupted")

    def _decoded(self, row: int, bit: int) -> tuple[tuple[int, ...] | None, int]:
        """(row ``row``'s weights, or None for an empty cell; the next row's bit), the
        row starting at ``bit`` of the stream."""
        lo, hi = self._row_values(row)
        tier = self._tier_bits(lo, hi)
        actions = hi - lo
        width, total = row_code(tier, actions)
        context = self._contexts.get((actions, width))
        if context is None:
            raise CompactFormatError(f"{self.path}: a coded row has no code table (corrupted)")
        symbol, bit = self._decode_symbol(context, bit)
        if symbol == CODED_EMPTY:
            return None, bit
        if symbol == CODED_ESCAPE:
            fields = [self._stream_bits(bit + width * j, width) for j in range(actions - 1)]
            bit += width * (actions - 1)
        else:
            at = context[2] + 4 * (symbol - CODED_FIRST_ENTRY) * (actions - 1)
            fields = list(struct.unpack_from(f"<{actions - 1}I", self._map, at))
        rest = total - sum(fields)
        if rest < 0:
            raise CompactFormatError(f"{self.path}: a row's weights pass its total {total} "
                                     f"(file is corrupted)")
        return (*fields, rest), bit

    def _block_start(self, block: int) -> int:
        block_rows, index_at, _, stream_bits = self._coding
        bit = struct.unpack_from("<Q", self._map, index_at + 8 * block)[0]
        if bit > stream_bits:
            raise CompactFormatError(f"{self.path}: the coded rows' block index is corrupted")
        return bit

    def _coded_row(self, row: int, lo: int, hi: int) -> tuple[int, ...] | None:
        """Row ``row`` (values ``[lo, hi)``) decoded from the start of its block."""
        if self._row_values(row) != (lo, hi):
            raise CompactFormatError(f"{self.path}: row table is corrupted")
        block_rows = self._coding[0]
        bit = self._block_start(row // block_rows)
        for before in range(row - row % block_rows, row):
            bit = self._decoded(before, bit)[1]
        return self._decoded(row, bit)[0]

    def _verify_coded(self) -> None:
        """Decode every row, block by block; each block must end where the next starts."""
        block_rows, _, _, stream_bits = self._coding
        for block in range(-(-self.num_rows // block_rows)):
            bit = self._block_start(block)
            for row in range(block * block_rows, min(self.num_rows, (block + 1) * block_rows)):
                weights, bit = self._decoded(row, bit)
                if weights is None and self.card_table is None:
                    raise CompactFormatError(f"{self.path}: a row is empty (file is corrupted)")
            end = stream_bits if (block + 1) * block_rows >= self.num_rows else self._block_start(block + 1)
            if bit != end:
                raise CompactFormatError(f"{self.path}: the coded rows' block index is corrupted")

    # ----------------------------------------------------------------- modelled rows (format 9)
    def _model_block(self, block: int) -> tuple[int, int]:
        """Bytes ``[start, end)`` of block ``block``'s code in the stream."""
        block_rows, _, _, _, _, index_at, _, stream_bytes = self._model
        start = struct.unpack_from("<I", self._map, index_at + 4 * block)[0]
        last = block + 1 >= -(-self.num_rows // block_rows)
        end = stream_bytes if last else struct.unpack_from("<I", self._map, index_at + 4 * block + 4)[0]
        if not start <= end <= stream_bytes:
            raise CompactFormatError(f"{self.path}: the modelled rows' block index is corrupted")
        return start, end

    def _modelled_block(self, block: int, last_row: int) -> list[tuple[int, ...] | None]:
        """The rows of block ``block`` up to ``last_row`` (inclusive), decoded (None: an empty
        cell); a row that breaks the model raises CompactFormatError."""
        block_rows, total, max_actions, tree_bits, first, _, stream_at, _ = self._model
        start, end = self._model_block(block)
        code = bytes(self._map[stream_at + start:stream_at + end]) + bytes(4)
        decoder = _RangeDecoder(code, end - start, list(first))
        if decoder.code >= decoder.range:
            raise CompactFormatError(f"{self.path}: a modelled row is corrupted")
        per = 8 + (1 << tree_bits)
        previous: dict[int, tuple[int, ...]] = {}
        rows: list[tuple[int, ...] | None] = []
        for row in range(block * block_rows, last_row + 1):
            lo, hi = self._row_values(row)
            actions = hi - lo
            if not 1 <= actions <= max_actions:
                raise CompactFormatError(f"{self.path}: a modelled row has too many actions (corrupted)")
            if decoder.bit(0):
                rows.append(None)
                continue
            weights, rest, before = [], total, previous.get(actions)
            first_context = 1 + per * ((actions - 1) * (actions - 2) // 2)
            for j in range(actions - 1):
                weight = 0
                if rest:
                    base = first_context + per * j
                    kind = 0
                    if before is not None:
                        predicted = min(before[j], rest)
                        kind = 1 if predicted == 0 else 2 if predicted == rest else 3
                    if decoder.bit(base + kind):
                        weight = 0
                    elif rest == 1 or decoder.bit(base + 4 + kind):
                        weight = rest
                    else:
                        node = 1
                        for _ in range(tree_bits):
                            node = 2 * node + decoder.bit(base + 8 + node)
                        weight = node - (1 << tree_bits) + 1
                        if weight > rest - 1:
                            raise CompactFormatError(f"{self.path}: a row's weights pass its total {total} "
                                                     f"(file is corrupted)")
                weights.append(weight)
                rest -= weight
            row_weights = (*weights, rest)
            previous[actions] = row_weights
            rows.append(row_weights)
        return rows

    def _modelled_row(self, row: int, lo: int, hi: int) -> tuple[int, ...] | None:
        """Row ``row`` (values ``[lo, hi)``) decoded from the start of its block."""
        if self._row_values(row) != (lo, hi):
            raise CompactFormatError(f"{self.path}: row table is corrupted")
        return self._modelled_block(row // self._model[0], row)[-1]

    def _verify_modelled(self) -> None:
        """Decode every row, block by block."""
        block_rows = self._model[0]
        for block in range(-(-self.num_rows // block_rows)):
            self._modelled_block(block, min(self.num_rows, (block + 1) * block_rows) - 1)

    # ----------------------------------------------------------------- keys, integrity
    def _key_range(self, row: int) -> tuple[int, int]:
        lo, hi = struct.unpack_from("<II", self._map, self._keys_at + 4 * row)
        if not lo <= hi <= self._count:
            raise CompactFormatError(f"{self.path}: key table is corrupted")
        return lo, hi

    def _key_at(self, position: int) -> bytes:
        offsets_at = self._keys_at + 4 * (self.num_rows + 1)
        lo, hi = struct.unpack_from("<II", self._map, offsets_at + 4 * position)
        blob = offsets_at + 4 * (self._count + 1)
        if not lo <= hi <= len(self._map) - blob:
            raise CompactFormatError(f"{self.path}: key table is corrupted")
        return bytes(self._map[blob + lo:blob + hi])

    def _group_has(self, row: int, key: bytes) -> bool:
        """Is ``key`` among row ``row``'s stored keys (sorted by their UTF-8 bytes)?"""
        lo, hi = self._key_range(row)
        position = bisect_left(range(lo, hi), key, key=self._key_at) + lo
        return position < hi and self._key_at(position) == key

    def keys(self) -> Iterator[str]:
        """The stored infoset keys, row after row (only if exported with keys)."""
        if not self.has_keys:
            raise CompactFormatError(f"{self.path}: was exported without keys (hashes only)")
        return (self._text(self._key_at(position), "infoset key") for position in range(self._count))

    def _text(self, data: bytes, what: str) -> str:
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise CompactFormatError(f"{self.path}: a stored {what} is not UTF-8 text") from exc

    def verify(self) -> None:
        """Read the whole file: payload CRC and every row's code."""
        crc, view = 0, memoryview(self._map)
        try:
            for chunk_start in range(self._payload_start, len(self._map), VERIFY_CHUNK):
                crc = zlib.crc32(view[chunk_start:chunk_start + VERIFY_CHUNK], crc)
        finally:
            view.release()
        if crc != self.payload_crc:
            raise CompactFormatError(f"{self.path}: file is corrupted (payload CRC mismatch)")
        if self.coded:
            self._verify_coded()
        if self.modelled:
            self._verify_modelled()
        for row in range(0 if self.card_table is not None or self.coded else self.num_rows):
            self._row(row)  # with a card table rows are checked as they are read
        for position in range(self.num_classes):
            self._class_row(CLASS_ENTRY.unpack_from(
                self._map, self._classes_at + CLASS_ENTRY.size * position)[:3])
        if self.has_keys:
            for row in range(self.num_rows):
                self._key_range(row)

    def close(self) -> None:
        if self.card_table is not None:
            self.card_table.close()
        self._map.close()

    def __enter__(self) -> CompactStrategy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
