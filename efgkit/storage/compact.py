"""Export a GameTree strategy to the compact .efgs format: abstract rows once, a class rule
or a card table, a key index (the tree row source of ``compact_writer``).

The file keeps the abstraction: each abstract infoset's row of quantized probabilities
(largest remainder, or ``efgkit.exact_rounding``'s choice) is stored once, and every
original infoset reaches its row in one of three ways:

* the class rule (Čermák et al. §4.1.1): the coarsest abstraction is a function of
  (player, own-sequence length, number of actions), so a table of one row per class
  costs nothing per infoset; the row of a class is its largest abstract set;
* explicit entries, for the infosets outside their class's largest set (the paper's
  explicit map entries, what a refinement adds), in the xor key index
  (``compact_writer.key_index``). Keys that follow their class must miss the index, so
  the fingerprint has at least ``log2(those keys) + 1`` bits, and one whose fingerprint
  still matches by chance is added as an entry too: every infoset of the file reads its
  own row.
* a card table, for a strategy on a card abstraction (``card_abstraction``): the
  abstraction's bucket tables are stored (tiny for Leduc-like decks, and a reference to
  the HDF5 file would be neither smaller nor readable by the readers), and the key's
  betting and cards pick its row (``compact_writer.card_file``).

``key_map="auto"`` writes the smallest of these files: the class rule when it makes the
file smaller (the coarsest abstraction: no entry at all; a refinement: its explicit
entries), the card table when a card abstraction is given, else every key an explicit
entry (an unabstracted game: 16 bytes per class would buy back only ``1.23 slot_bits``
bits each), and readers then need only the key.

``prune_unreachable`` leaves out original infosets the (quantized) strategy itself never
reaches (its owner's own reach is 0), and rows none of whose members are left: what is
played there never matters to the strategy's payoff or exploitability, and a player
using the file never looks them up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from efgkit.abstraction.cards.bucketing import CardAbstraction
from efgkit.errors import ParameterError
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap, coarsest_classes
from efgkit.solvers.strategy import Strategy
from efgkit.solvers.traversal import infoset_view, own_infoset_reach
from efgkit.storage.compact_gamedef import with_game_definition
from efgkit.storage.compact_reader import (
    BY_COMBINATION,
    CLASS_ENTRY,
    FLAG_CODED,
    FLAG_KEYS,
    FLAG_PRUNED,
    MAX_SLOT_BITS,
    CardTable,
    KeyLookupError,
)
from efgkit.storage.compact_writer import (
    CardBlocks,
    CardSection,
    CardTableUnavailable,
    CompactFile,
    QuantizedRows,
    RoundBuckets,
    action_totals,
    card_file,
    card_names,
    card_table_bytes,
    check_check_bits,
    copied_rows,
    explicit_index,
    file_bytes,
    index_bytes,
    key_section,
    pack_bits,
    pack_rows,
    quantize,
)

KEY_MAPS = ("auto", "class", "explicit", "cards")


@dataclass(eq=False, kw_only=True)
class CompactExport(CompactFile):
    """What ``export_compact`` wrote: the file and the strategy it plays."""

    infosets: int
    infosets_pruned: int
    dequantized: Strategy
    """What the file plays, per original infoset (left-out infosets play uniformly)."""
    max_abs_error: float

    @property
    def bytes_per_infoset(self) -> float:
        return self.bytes / max(self.infosets, 1)


def reachable_infosets(tree: GameTree, behavior: np.ndarray) -> np.ndarray:
    """bool per infoset: its owner reaches it with positive probability playing ``behavior``."""
    own_reach = np.zeros(tree.num_infosets)
    view = infoset_view(tree)
    for player in (0, 1):
        own_infoset_reach(tree.infosets_of(player), view, behavior, own_reach)
    return own_reach > 0.0


def class_rule(tree: GameTree, infosets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int64 (classes, 4) table of player, own-sequence length, number of actions, row,
    sorted; bool per infoset: explicit). A class's row is the one most of its infosets
    use (the lowest on a tie): Čermák et al.'s largest abstract set of the class."""
    if not infosets.size:
        return np.zeros((0, 4), np.int64), np.zeros(0, bool)
    classes = coarsest_classes(tree)[infosets].astype(np.int64)
    pairs, counts = np.unique(np.stack([classes, rows], axis=1), axis=0, return_counts=True)
    order = np.lexsort((pairs[:, 1], -counts, pairs[:, 0]))  # per class: most members first
    largest = order[np.r_[True, pairs[order[1:], 0] != pairs[order[:-1], 0]]]
    class_row = np.full(int(classes.max()) + 1, -1, np.int64)
    class_row[pairs[largest, 0]] = pairs[largest, 1]
    member = np.zeros(class_row.shape[0], np.int64)
    member[classes] = infosets
    used = pairs[largest, 0]
    table = np.stack([tree.infoset_player[member[used]], tree.infoset_sequence_length[member[used]],
                      tree.infoset_num_actions[member[used]], class_row[used]], axis=1).astype(np.int64)
    return table[np.lexsort(table[:, ::-1].T)], rows != class_row[classes]


def abstraction_rounds(abstraction: CardAbstraction) -> list[RoundBuckets]:
    """A card abstraction's bucket of every (private hand, board) pair per round,
    renumbered 0, 1, ... in the order of its labels."""
    structure = abstraction.card_structure
    rounds = []
    for situations, labels, dealt in zip(abstraction.situations.rounds, abstraction.labels,
                                         structure.public_cards_per_round, strict=True):
        buckets = np.unique(labels, return_inverse=True)[1].astype(np.uint64)
        entries = np.zeros(situations.hands.shape[0] * situations.boards.shape[0], np.uint64)
        entries[situations.hand_of * situations.boards.shape[0] + situations.board_of] = buckets
        rounds.append(RoundBuckets(dealt, BY_COMBINATION, int(buckets.max(initial=0)) + 1, entries))
    return rounds


def export_compact(strategy: Strategy, path: str | os.PathLike, *, bits: int = 8,
                   quantized: QuantizedRows | None = None, prune_unreachable: bool = False,
                   with_keys: bool = False, check_bits: int = 8, key_map: str = "auto",
                   card_abstraction: CardAbstraction | None = None,
                   recall: str = "imperfect", coded: bool = False) -> CompactExport:
    """Write ``strategy`` (on any InfosetMap) as a compact file at ``path`` (atomically).

    ``quantized``: its rows at ``bits`` bits per action on average (int64 weights per
    abstract infoset-action, bits per abstract row: ``efgkit.exact_rounding``), or None for
    largest remainder at ``bits``. ``check_bits``: bits of key fingerprint in the index; a
    key not in the file is still found, playing some row, with probability
    ``2**-check_bits`` (0: never detected). ``with_keys`` also stores the keys, and readers
    then compare them (and can list them). ``key_map``: ``class`` (the class rule and
    explicit entries), ``explicit`` (every key in the index), ``cards`` (the
    ``card_abstraction``'s bucket tables with ``recall`` and one index entry per betting
    history; the strategy must be on that abstraction, its rows in one tier) or ``auto``
    (the smallest of these files). ``coded``: the rows entropy-coded in blocks (format 7,
    ``row_coding``).
    """
    if key_map not in KEY_MAPS:
        raise ParameterError(f"key_map must be one of {', '.join(KEY_MAPS)}, got {key_map!r}")
    if key_map == "cards" and card_abstraction is None:
        raise ParameterError("key_map 'cards' needs the card abstraction the strategy was "
                             "solved on (efgkit export --card-abstraction ABS.h5)")
    infoset_map = strategy.infoset_map
    tree = infoset_map.tree
    check_check_bits(check_bits)
    offsets = infoset_map.abstract_action_offset
    rows = quantized or QuantizedRows(quantize(strategy.probabilities, offsets, bits),
                                      np.full(infoset_map.num_abstract, bits, np.int64))
    dequantized_rows = rows.weights / action_totals(offsets, rows.row_bits)
    behavior = dequantized_rows[infoset_map.abstract_action_of]
    kept = reachable_infosets(tree, behavior) if prune_unreachable else np.ones(tree.num_infosets,
                                                                                   bool)
    infosets = np.flatnonzero(kept)
    keys = [tree.infoset_keys[i] for i in infosets]
    flags = FLAG_PRUNED * prune_unreachable | FLAG_KEYS * with_keys | FLAG_CODED * coded
    head = dict(spec=tree.spec, fingerprint=tree.fingerprint, bits=bits, flags=flags,
                num_keys=len(keys))
    candidates = []
    if key_map != "cards":
        candidates.append(_keyed_file(head, rows, infoset_map, infosets, keys, key_map,
                                      check_bits, with_keys))
    if card_abstraction is not None and key_map in ("auto", "cards"):
        try:
            candidates.append(_card_file(head, rows, infoset_map, infosets, keys,
                                         card_abstraction, recall, check_bits, with_keys))
        except CardTableUnavailable:
            if key_map == "cards":
                raise  # with auto the keyed file stays, and the result's key_map says so
    chosen = min(candidates, key=lambda candidate: len(candidate.data))
    chosen.data = with_game_definition(chosen.data, tree.game)
    chosen.write(path)
    played = np.where(np.repeat(kept, tree.infoset_num_actions), behavior,
                      1.0 / np.repeat(tree.infoset_num_actions, tree.infoset_num_actions))
    return CompactExport(
        **vars(chosen), infosets=len(keys), infosets_pruned=int(tree.num_infosets - len(keys)),
        dequantized=Strategy(InfosetMap.identity(tree), played),
        max_abs_error=float(np.max(np.abs(dequantized_rows - strategy.probabilities), initial=0.0)))


def _keyed_file(head: dict, rows: QuantizedRows, infoset_map: InfosetMap, infosets: np.ndarray,
                keys: list[str], key_map: str, check_bits: int, with_keys: bool) -> CompactFile:
    """The file whose key index holds original infoset keys (with a class rule or not);
    its rows in tiers, widest first."""
    tree = infoset_map.tree
    action_bits = rows.row_bits
    used_rows = np.unique(infoset_map.abstract_of[infosets])
    used_rows = used_rows[np.argsort(-action_bits[used_rows], kind="stable")]
    row_bits = max(int(used_rows.shape[0] - 1).bit_length(), 0)
    slot_bits = max(row_bits + check_bits, 1)
    new_row = np.full(infoset_map.num_abstract, -1, np.int64)
    new_row[used_rows] = np.arange(used_rows.shape[0])
    rows_of_keys = new_row[infoset_map.abstract_of[infosets]]
    classes, explicit = class_rule(tree, infosets, rows_of_keys)
    # Keys that follow their class must miss the index: with (keys - entries) of them,
    # log2 of that many fingerprint bits leave about one to add as an entry.
    class_check_bits = min(max(check_bits, int(len(keys) - explicit.sum()).bit_length() + 1),
                           MAX_SLOT_BITS - row_bits)
    index = None
    class_bytes = index_bytes(int(explicit.sum()), row_bits + class_check_bits)
    if key_map == "class" or (key_map == "auto" and class_bytes + CLASS_ENTRY.size * classes.shape[0]
                              < index_bytes(len(keys), slot_bits)):
        index = explicit_index(keys, rows_of_keys, explicit, class_check_bits, used_rows.shape[0])
        if index is not None:
            check_bits, slot_bits = class_check_bits, max(row_bits + class_check_bits, 1)
    if index is None:  # every key explicit: asked for, smaller, or the class rule did not settle
        classes, explicit = classes[:0], np.ones(len(keys), bool)
        index = explicit_index(keys, rows_of_keys, explicit, check_bits, used_rows.shape[0])
    seed, segment, table = index
    slots = pack_bits(table, slot_bits)
    row_weights, row_offsets = copied_rows(rows.weights, infoset_map.abstract_action_offset,
                                           used_rows, infoset_map.abstract_num_actions[used_rows])
    data = file_bytes(**head, check_bits=check_bits, seed=seed, segment=segment,
                      slot_bits=slot_bits, slots=slots, num_explicit=int(explicit.sum()),
                      values=pack_rows(row_weights, row_offsets, head["bits"],
                                       row_bits=action_bits[used_rows],
                                       coded=bool(head["flags"] & FLAG_CODED)),
                      num_values=row_weights.shape[0], row_offsets=row_offsets,
                      keys=key_section(keys, rows_of_keys, used_rows.shape[0]) if with_keys else None,
                      classes=classes)
    bits = head["bits"]
    tiers = tuple(int(np.sum(action_bits[used_rows] == width)) for width in (2 * bits, bits, bits // 2))
    return CompactFile(data=data, bits=bits, key_map="class" if classes.shape[0] else "explicit",
                       rows=int(used_rows.shape[0]), explicit_entries=int(explicit.sum()),
                       classes=int(classes.shape[0]), index_bytes=len(slots), tier_rows=tiers)


def _card_file(head: dict, rows: QuantizedRows, infoset_map: InfosetMap, infosets: np.ndarray,
               keys: list[str], card_abstraction: CardAbstraction, recall: str, check_bits: int,
               with_keys: bool) -> CompactFile:
    """The file with a card table (``compact_writer.card_file``): one block per betting
    history, a row per cell (bucket, or bucket sequence with perfect recall), each cell
    the abstract row of the infosets its betting and cards name."""
    tree = infoset_map.tree
    if np.any(rows.row_bits != head["bits"]):
        raise CardTableUnavailable("a card table keeps one tier: round the rows without tiers")
    structure = card_abstraction.card_structure
    cards = CardSection(card_names(structure), structure.private_cards_per_player,
                        abstraction_rounds(card_abstraction), recall)
    readable = card_table_bytes(cards)
    table = CardTable(readable, 0, len(readable))
    blocks: dict[str, int] = {}
    block_cells, block_actions = [], []
    key_blocks, key_cells = np.empty(len(keys), np.int64), np.empty(len(keys), np.int64)
    for i, (infoset, key) in enumerate(zip(infosets, keys, strict=True)):
        try:
            betting, round_index, cell = table.locate(key)
        except KeyLookupError as exc:
            raise CardTableUnavailable(f"the card table cannot read the cards of infoset {key!r} "
                                       f"(keys of {tree.spec} name ranks only?): {exc}") from exc
        if betting not in blocks:
            blocks[betting] = len(block_cells)
            block_cells.append(table.block_size(round_index))
            block_actions.append(int(tree.infoset_num_actions[infoset]))
        key_blocks[i], key_cells[i] = blocks[betting], cell
    block_cells = np.array(block_cells, np.int64)
    key_cells += np.concatenate([[0], np.cumsum(block_cells)[:-1]])[key_blocks]
    sources = np.full(int(block_cells.sum()), -1, np.int64)
    sources[key_cells] = infoset_map.abstract_of[infosets]
    differing = np.flatnonzero(sources[key_cells] != infoset_map.abstract_of[infosets])
    if differing.size:
        raise ParameterError(f"the strategy is not on this card abstraction: infoset "
                             f"{keys[differing[0]]!r} has the betting and buckets of another "
                             f"infoset but not its abstract infoset")
    return card_file(head, rows.weights, infoset_map.abstract_action_offset,
                     CardBlocks(list(blocks), block_cells, np.array(block_actions, np.int64), sources),
                     cards, check_bits, (keys, key_cells) if with_keys else None)
