"""Exact best response in the full poker game, streamed board by board and split by first deal.

Johanson et al. 2011 ("Accelerating best response calculation in large extensive games"):
the responder's information sets in the unabstracted game are (public node, hand), so one
walk of the public tree with the opponent's reach vector over hands, maximising per hand at
the responder's nodes, gives the best-response values; terminals cost O(hands)
(``terminal_values.py``). Unlike ``best_response.py`` nothing here is materialised: the
walk is a depth-first recursion over the card-independent ``BettingTree``, dealing each
board at its deal node, with one vector per depth (``Stack``), so memory is
O(depth x hands) plus per-board tables of one work item, never the public tree.

Work is split at the first board deal (the flop in hold'em): a pre-deal walk records the
opponent's reach at every node where the first board is dealt (an *entry*); each work item
(one first deal) returns the responder's values at every entry; a second pre-deal walk
maximises over them. With a suit-symmetric card abstraction one first deal per suit
isomorphism class is evaluated and its values spread over the class (``suits.py``):
HULHE has 1,755 canonical flops of 22,100. Items run in this process or on Dask
(``ChunkRunner``) and are summed in item order, so the result is bit-identical wherever
they ran.

The strategy is a ``BucketLayout`` strategy (rows per betting decision and bucket).
Values include chance (``BettingTree.chance_weight``): the root total is the responder's
expected utility; NashConv is the sum of both players' best-response values and the game
value is player 0's expected utility under the strategy (a third walk, ``EXPECTED``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations, product
from typing import NamedTuple

import numba
import numpy as np

from efgkit.abstraction.cards.holdem.executor import ChunkRunner
from efgkit.poker.best_response import PokerEvaluation
from efgkit.poker.betting_tree import DEAL, FOLD, SHOWDOWN
from efgkit.poker.bucket_layout import BucketLayout
from efgkit.poker.public_tree import showdown_orders
from efgkit.poker.suits import canonical_deals, hand_permutations, suit_permutations
from efgkit.poker.terminal_values import fold_payoff, fold_values, showdown_values

MODE_RECORD, MODE_REPLAY, MODE_DESCEND = 0, 1, 2
BEST, EXPECTED = 0, 1


class BoardTables(NamedTuple):
    """The boards of one work item. Boards are numbered by *key*: level 0 (no board) is key
    0, level 1 (the item's first deal) key 1, level j >= 2 the keys ``key_start[j] +
    parent * deals[j] + i`` for the ``i``-th combination of that deal.

    ``hand_cards`` int64 (hands, k), ``hand_mask`` int64 (hands,); ``first_mask`` int64 (1,)
    the item's first deal; ``deal_mask`` int64 / ``deal_start`` int64 (levels + 1,): the card
    masks of every combination of level j's deal at ``deal_start[j]`` (levels >= 2);
    ``key_start`` int64 (levels + 1,); ``buckets`` int32 (keys, hands), -1 where the hand
    meets the board; ``showdown_count`` int64 (final keys,), ``showdown_hands`` /
    ``showdown_strength`` int64 (final keys, hands): the valid hands of each final board
    sorted by strength. Suit isomorphism of later deals: ``deal_weight`` float64 (keys,) is 0
    for a board not walked (overlapping, or not the canonical deal of its class under the
    parent board's group), else 1 / |permutations of the parent's group fixing the deal|;
    the group of key ``x``'s board is ``group_perm[group_start[x]:group_start[x + 1]]``,
    indices into ``hand_perm`` int64 (perms, hands): the hand each hand becomes."""

    hand_cards: np.ndarray
    hand_mask: np.ndarray
    first_mask: np.ndarray
    deal_mask: np.ndarray
    deal_start: np.ndarray
    key_start: np.ndarray
    buckets: np.ndarray
    showdown_count: np.ndarray
    showdown_hands: np.ndarray
    showdown_strength: np.ndarray
    deal_weight: np.ndarray
    group_start: np.ndarray
    group_perm: np.ndarray
    hand_perm: np.ndarray


class Stack(NamedTuple):
    """Per depth int64 (depth,): the ``node``, its board ``level`` and ``key``, the ``cursor``
    (next child to try) and the ``action`` being visited; float64 (depth, hands): ``reach``
    of the opponent, ``values`` of the responder (best response or expectation); per level
    ``valid`` int64 (levels, hands) / ``valid_count`` the hands off the board, ``board_mask``;
    ``card_sum`` float64 (cards,) scratch; per entry (entries, hands) ``entry_reach`` and
    ``entry_values``."""

    node: np.ndarray
    level: np.ndarray
    key: np.ndarray
    cursor: np.ndarray
    action: np.ndarray
    reach: np.ndarray
    values: np.ndarray
    valid: np.ndarray
    valid_count: np.ndarray
    board_mask: np.ndarray
    card_sum: np.ndarray
    entry_reach: np.ndarray
    entry_values: np.ndarray


@numba.njit(cache=True)
def _deal_level(tables, stack, level, mask, depth):
    """Board ``level`` = board ``level - 1`` plus the cards ``mask``: its valid hands, and the
    opponent's reach at ``depth`` copied from ``depth - 1`` without hands meeting the cards.
    Returns whether any reach is left."""
    stack.board_mask[level] = stack.board_mask[level - 1] | mask
    count = 0
    for x in range(stack.valid_count[level - 1]):
        h = stack.valid[level - 1, x]
        if tables.hand_mask[h] & mask == 0:
            stack.valid[level, count] = h
            count += 1
    stack.valid_count[level] = count
    alive = False
    for x in range(count):
        h = stack.valid[level, x]
        r = stack.reach[depth - 1, h]
        stack.reach[depth, h] = r
        alive = alive or r != 0.0
    return alive


@numba.njit(cache=True)
def _terminal(view, tables, stack, player, node, depth, level, key):
    """Fold or showdown values of the responder's hands at ``depth`` (with chance)."""
    weight = view.chance_weight[level]
    out = stack.values[depth]
    if view.kind[node] == FOLD:
        folder = view.folder[node]
        payoff = fold_payoff(view.contribution, node, folder, player)
        fold_values(stack.reach[depth], tables.hand_cards, stack.valid[level, :stack.valid_count[level]],
                    stack.card_sum, payoff * weight, out)
    else:
        row = key - tables.key_start[level]
        count = tables.showdown_count[row]
        showdown_values(stack.reach[depth], tables.hand_cards, tables.showdown_hands[row, :count],
                        tables.showdown_strength[row, :count], stack.card_sum,
                        view.contribution[node, 1 - player] * weight,
                        view.contribution[node, player] * weight, out)


@numba.njit(cache=True)
def _open(view, tables, stack, player, mode, depth):
    """Start the node at ``depth``: a leaf (terminal, or an entry in the pre-deal modes) gets
    its values and True is returned; an inner node gets zero sums and its first child next."""
    node = stack.node[depth]
    kind = view.kind[node]
    if kind == FOLD or kind == SHOWDOWN:
        _terminal(view, tables, stack, player, node, depth, stack.level[depth], stack.key[depth])
        return True
    if kind == DEAL and mode == MODE_RECORD:
        stack.entry_reach[view.entry_index[node], :] = stack.reach[depth]
        stack.values[depth, :] = 0.0
        return True
    if kind == DEAL and mode == MODE_REPLAY:
        stack.values[depth, :] = stack.entry_values[view.entry_index[node]]
        return True
    stack.values[depth, :] = 0.0
    stack.cursor[depth] = 0
    return False


@numba.njit(cache=True)
def _next_child(view, tables, stack, strategy, player, depth):
    """Set up the next child of the node at ``depth`` worth visiting at ``depth + 1`` (its
    node, level, board key and the opponent's reach); False when none is left."""
    node = stack.node[depth]
    kind = view.kind[node]
    level = stack.level[depth]
    key = stack.key[depth]
    child = view.first_child[node]
    if kind == DEAL:
        lo = tables.deal_start[level + 1]
        deals = tables.deal_start[level + 2] - lo
        for i in range(stack.cursor[depth], deals):
            mask = tables.deal_mask[lo + i]
            next_key = tables.key_start[level + 1] + (key - tables.key_start[level]) * deals + i
            if tables.deal_weight[next_key] != 0.0 and _deal_level(tables, stack, level + 1, mask, depth + 1):
                stack.cursor[depth] = i + 1
                stack.node[depth + 1] = child
                stack.level[depth + 1] = level + 1
                stack.key[depth + 1] = next_key
                return True
        return False
    m = view.num_children[node]
    a = stack.cursor[depth]
    if kind == player:
        if a == m:
            return False
        stack.reach[depth + 1, :] = stack.reach[depth]
    else:
        start = view.action_start[view.decision_index[node]]
        valid = stack.valid[level, :stack.valid_count[level]]
        while a < m:
            alive = False
            for h in valid:
                r = stack.reach[depth, h] * strategy[start + tables.buckets[key, h] * m + a]
                stack.reach[depth + 1, h] = r
                alive = alive or r != 0.0
            if alive:
                break
            a += 1
        if a == m:
            return False
    stack.action[depth] = a
    stack.cursor[depth] = a + 1
    stack.node[depth + 1] = child + a
    stack.level[depth + 1] = level
    stack.key[depth + 1] = key
    return True


@numba.njit(cache=True)
def _gather(view, tables, stack, strategy, player, objective, depth):
    """Add the finished child at ``depth + 1`` into the node at ``depth``: sums at deals (over
    the dealt board's suit class) and the opponent's nodes; at the responder's the maximum
    (``BEST``) or the strategy's expectation (``EXPECTED``). Loops run over the hands off the
    child's board."""
    node = stack.node[depth]
    level = stack.level[depth + 1]
    valid = stack.valid[level, :stack.valid_count[level]]
    if view.kind[node] == DEAL:  # the deal's class: its values under every permutation of the group
        key = stack.key[depth]
        weight = tables.deal_weight[stack.key[depth + 1]]
        for x in range(tables.group_start[key], tables.group_start[key + 1]):
            perm = tables.hand_perm[tables.group_perm[x]]
            for h in valid:
                stack.values[depth, perm[h]] += weight * stack.values[depth + 1, h]
        return
    if view.kind[node] != player:
        for h in valid:
            stack.values[depth, h] += stack.values[depth + 1, h]
        return
    a = stack.action[depth]
    if objective == BEST:
        for h in valid:
            v = stack.values[depth + 1, h]
            stack.values[depth, h] = v if a == 0 else max(stack.values[depth, h], v)
        return
    m = view.num_children[node]
    start = view.action_start[view.decision_index[node]] + a
    key = stack.key[depth]
    for h in valid:
        stack.values[depth, h] += strategy[start + tables.buckets[key, h] * m] * stack.values[depth + 1, h]


@numba.njit(cache=True)
def _walk(view, tables, stack, strategy, player, objective, mode, top):
    """Values (``objective`` BEST or EXPECTED) of the node set up at depth ``top`` (``stack.node``,
    ``level``, ``key``, ``reach``): a depth-first walk with an explicit stack, deals
    enumerated at deal nodes, subtrees the opponent never reaches skipped."""
    if _open(view, tables, stack, player, mode, top):
        return
    depth = top
    while True:
        if _next_child(view, tables, stack, strategy, player, depth):
            depth += 1
            if not _open(view, tables, stack, player, mode, depth):
                continue
        elif depth == top:
            return
        depth -= 1
        _gather(view, tables, stack, strategy, player, objective, depth)


@numba.njit(cache=True)
def _pre_deal(view, tables, stack, strategy, player, objective, mode):
    """The walk of the nodes before the first deal (``MODE_RECORD``: note the entries' reach;
    ``MODE_REPLAY``: use the entries' values). Returns the responder's total."""
    hands = tables.hand_mask.shape[0]
    stack.reach[0, :] = 1.0
    stack.board_mask[0] = 0
    for h in range(hands):
        stack.valid[0, h] = h
    stack.valid_count[0] = hands
    stack.node[0] = 0
    stack.level[0] = 0
    stack.key[0] = 0
    _walk(view, tables, stack, strategy, player, objective, mode, 0)
    return stack.values[0].sum()


@numba.njit(cache=True)
def _item(view, tables, stack, strategy, player, objective, entry_nodes, out):
    """Values at every entry of the item's first deal: ``out`` (entries, hands)."""
    hands = tables.hand_mask.shape[0]
    stack.board_mask[0] = 0
    for h in range(hands):
        stack.valid[0, h] = h
    stack.valid_count[0] = hands
    for e in range(entry_nodes.shape[0]):
        out[e, :] = 0.0
        stack.reach[0, :] = stack.entry_reach[e]
        if _deal_level(tables, stack, 1, tables.first_mask[0], 1):
            stack.node[1] = view.first_child[entry_nodes[e]]
            stack.level[1] = 1
            stack.key[1] = 1
            _walk(view, tables, stack, strategy, player, objective, MODE_DESCEND, 1)
            out[e, :] = stack.values[1]


class StreamedEvaluator:
    """Best response, NashConv and game value of ``layout`` strategies in the full game."""

    def __init__(self, layout: BucketLayout) -> None:
        self.layout = layout
        betting = layout.betting
        self.betting = betting
        game = betting.game
        cards = game.card_structure
        self.num_suits = cards.num_suits
        self.num_ranks = cards.num_ranks
        n = betting.num_cards
        self.hand_cards, self.hand_mask = betting.hands()
        self.entry_nodes = betting.entry_nodes
        self.view = layout.view()
        self.depth = betting.max_depth + 2
        self.symmetric = layout.abstraction.suit_symmetric and not game.deal_by_rank and self.num_suits > 1
        self.suit_perms = suit_permutations(self.num_suits).tolist()
        self.hand_perms = (hand_permutations(self.hand_cards, self.num_suits) if self.symmetric
                           else np.arange(self.hand_cards.shape[0], dtype=np.int64)[None, :])
        if betting.num_levels > 1:
            size = int(betting.deal_size[0])
            if self.symmetric:
                self.items, stabilisers = canonical_deals(n, self.num_suits, size)
                self.item_weight = [1.0 / s for s in stabilisers]
            else:
                self.items = list(combinations(range(n), size))
                self.item_weight = [1.0] * len(self.items)
        else:
            self.items, self.item_weight = [], []

    # ------------------------------------------------------------------ tables
    def _level_boards(self, first: tuple[int, ...] | None) -> list[list[tuple]]:
        """Per level, per key: (board or None where deals overlap or the deal is not the
        canonical one of its class, the suit permutations fixing the board, the key's weight:
        1 / the permutations of the parent's group fixing the new deal). Level 0 is the
        empty board; without suit symmetry every group is the identity."""
        identity = [0]
        levels: list[list[tuple]] = [[((), identity, 1.0)]]
        if first is None:
            return levels
        perms = self.suit_perms if self.symmetric else self.suit_perms[:1]
        fixing = [g for g, perm in enumerate(perms) if _image(first, perm) == set(first)]
        levels.append([(tuple(first), fixing, 1.0)])
        n = self.betting.num_cards
        for size in self.betting.deal_size[1:].tolist():
            level = []
            for (parent, group, _), combo in product(levels[-1], combinations(range(n), size)):
                if parent is None or set(parent) & set(combo):
                    level.append((None, identity, 0.0))
                    continue
                images = [tuple(sorted(_image(combo, self.suit_perms[g]))) for g in group]
                if min(images) != combo:
                    level.append((None, identity, 0.0))
                    continue
                fixing = [g for g, image in zip(group, images, strict=True) if image == combo]
                level.append((parent + combo, fixing, 1.0 / len(fixing)))
            levels.append(level)
        return levels

    def tables(self, first: tuple[int, ...] | None) -> BoardTables:
        """The ``BoardTables`` of the work item dealing ``first`` (None: the pre-deal walk)."""
        betting, n = self.betting, self.betting.num_cards
        boards = self._level_boards(first)
        levels = betting.num_levels
        key_start = np.zeros(levels + 1, np.int64)
        for j in range(levels):
            key_start[j + 1] = key_start[j] + (len(boards[j]) if j < len(boards) else 0)
        sizes = [0, 0, *betting.deal_size[1:].tolist()]
        masks = [[sum(1 << c for c in combo) for combo in combinations(range(n), size)] if size else []
                 for size in sizes]
        deal_start = np.concatenate([[0], np.cumsum([len(m) for m in masks])]).astype(np.int64)
        deal_mask = np.array([m for level in masks for m in level], np.int64)
        hands = self.hand_cards.shape[0]
        buckets = np.full((int(key_start[levels]), hands), -1, np.int32)
        for j, level in enumerate(boards):
            for i, (cards, _, _) in enumerate(level):
                if cards is None:
                    continue
                board = np.array(cards, np.int64)
                values = self.layout.abstraction.buckets(betting.round_of_level[j], board, self.hand_cards)
                meets = (self.hand_mask & int((np.int64(1) << board).sum())) != 0 if board.size else False
                buckets[key_start[j] + i] = np.where(meets, -1, values)
        final = [cards for cards, _, _ in boards[-1]] if len(boards) == levels else []
        width = sum(betting.deal_size.tolist())
        final_boards = np.zeros((len(final), width), np.int64)
        for i, board in enumerate(final):
            final_boards[i] = board if board is not None else 0
        count = np.zeros(len(final), np.int64)
        sorted_hands = np.zeros((len(final), hands), np.int64)
        strength = np.zeros((len(final), hands), np.int64)
        showdown_orders(self.hand_cards, self.hand_mask, final_boards,
                        np.array([board is not None for board in final], np.bool_), self.num_ranks,
                        self.num_suits, count, sorted_hands, strength)
        first_mask = np.array([sum(1 << c for c in first) if first else 0], np.int64)
        keys = [entry for level in boards for entry in level]
        deal_weight = np.array([weight for _, _, weight in keys], np.float64)
        group_start = np.concatenate([[0], np.cumsum([len(group) for _, group, _ in keys])]).astype(np.int64)
        group_perm = np.array([g for _, group, _ in keys for g in group], np.int64)
        return BoardTables(self.hand_cards, self.hand_mask, first_mask, deal_mask, deal_start, key_start,
                           buckets, count, sorted_hands, strength, deal_weight, group_start, group_perm,
                           self.hand_perms)

    def _stack(self) -> Stack:
        hands, levels, entries = self.hand_cards.shape[0], self.betting.num_levels, self.entry_nodes.shape[0]
        index = [np.zeros(self.depth, np.int64) for _ in range(5)]
        per_depth = [np.zeros((self.depth, hands)) for _ in range(2)]
        per_entry = [np.zeros((entries, hands)) for _ in range(2)]
        return Stack(*index, *per_depth, np.zeros((levels, hands), np.int64), np.zeros(levels, np.int64),
                     np.zeros(levels, np.int64), np.zeros(self.betting.num_cards), *per_entry)

    # ------------------------------------------------------------------ evaluation
    def item_values(self, strategy: np.ndarray, player: int, objective: int, entry_reach: np.ndarray,
                    item: int) -> np.ndarray:
        """(entries, hands): the responder's values at every entry summed over the suit class
        of first deal ``item`` (weights included)."""
        stack = self._stack()
        stack.entry_reach[:] = entry_reach
        tables = self.tables(self.items[item])
        values = np.zeros(entry_reach.shape)
        _item(self.view, tables, stack, strategy, player, objective, self.entry_nodes, values)
        out = np.zeros(entry_reach.shape)
        for perm in self.hand_perms:
            out[:, perm] += values * self.item_weight[item]
        return out

    def value(self, strategy: np.ndarray, player: int, objective: int, runner: ChunkRunner,
              progress: Callable[[int], None] | None = None, shared=None) -> float:
        """Player ``player``'s best-response value (``BEST``) or expected utility (``EXPECTED``)
        against ``strategy`` (checked), first deals run by ``runner`` (``shared``: this
        evaluator as ``runner.share`` returned it, to send it once for several values)."""
        pre = self.tables(None)
        stack = self._stack()
        total = _pre_deal(self.view, pre, stack, strategy, player, objective, MODE_RECORD)
        if not self.items:
            return float(total)
        summed = np.zeros_like(stack.entry_reach)
        shared = runner.share(self) if shared is None else shared
        arguments = [(shared, strategy, player, objective, stack.entry_reach, i)
                     for i in range(len(self.items))]
        for values in runner.imap(_run_item, arguments):
            summed += values
            if progress is not None:
                progress(1)
        stack.entry_values[:] = summed
        return float(_pre_deal(self.view, pre, stack, strategy, player, objective, MODE_REPLAY))

    def evaluate(self, strategy, runner: ChunkRunner | None = None, game_value: bool = True,
                 progress: Callable[[int], None] | None = None) -> PokerEvaluation:
        """Both players' best-response values, NashConv and (``game_value``) player 0's
        expected utility under ``strategy`` (NaN when not asked: one walk fewer)."""
        strategy = self.layout.checked(strategy)
        runner = runner or ChunkRunner()
        shared = runner.share(self)
        responses = [self.value(strategy, p, BEST, runner, progress, shared) for p in (0, 1)]
        value = self.value(strategy, 0, EXPECTED, runner, progress, shared) if game_value else float("nan")
        nash_conv = responses[0] + responses[1]
        return PokerEvaluation((responses[0], responses[1]), value, nash_conv, nash_conv / 2)

    @property
    def work_items(self) -> int:
        """First deals walked per player (per value)."""
        return max(len(self.items), 1)


def _run_item(evaluator: StreamedEvaluator, strategy, player, objective, entry_reach, item):
    return evaluator.item_values(strategy, player, objective, entry_reach, item)


def _image(cards, perm) -> set[int]:
    """The cards ``cards`` with their suits renamed by ``perm``."""
    suits = len(perm)
    return {c - c % suits + perm[c % suits] for c in cards}

