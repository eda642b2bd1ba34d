"""Exact best response against a card-blind strategy: no opponent reach vectors, only counts.

A strategy is *card blind* when its action probabilities never depend on the private cards
or the board: every bucket row of a betting decision is the same (always fold, call or
raise, uniform random, any betting-only profile on ``CardIndependent``). Against such an
opponent the reach of its hand ``o`` at a public node (betting ``b``, board ``B``) is
``pi(b) * [o shares no card with B]``: a scalar ``pi(b)`` (the product of its action
probabilities along ``b``) times card removal. So every terminal the general walk
(``full_game.py``) evaluates with an O(hands) pass over the opponent's reach vector is that
scalar times a vector that depends only on the board (Johanson et al. 2011 §4's sums with a
reach of 1 on every hand off the board):

* a fold pays ``payoff * N(h, B)``, ``N`` the opponent hands compatible with ``h`` and ``B``;
* a showdown pays ``win * W(h, B) - lose * L(h, B)``, ``W`` / ``L`` the compatible hands
  strictly weaker / stronger (one sorted sweep per final board, ``showdown_values_batch``).

The responder's value divided by ``pi(b)`` — its *relative* value ``u(b, B, h)`` — then obeys
the public tree's recursion without any opponent vector: at the opponent's nodes
``u = sum_a q_a u_a`` (children with ``q_a = 0`` are skipped), at the responder's
``u = max_a u_a`` (``BEST_RESPONSE``; the max commutes with the positive scalar, and where
``pi(b) = 0`` every value is 0 whatever ``u`` is) or ``sum_a p_a u_a`` (``EXPECTED``, the
responder card blind too), at a deal the sum over the next deals (suit classes spread as in
``full_game._spread``), at a terminal the board's count vector times the payoff and chance
weight. The walk stays exact: nothing is combined across boards before a maximum.

Betting sequences entering a level (the *columns* of ``full_game.Templates``) whose subtrees
have the same chips at every node, the same probabilities on every weighted edge and the same
classes below are one *class*: their relative values are equal, so each class is walked once
per board. Always raise / call / uniform leave a class per distinct pot and what follows
(HULHE: 16 classes of the 567 river columns); a random betting-only profile leaves every live column
its own class. Columns the opponent never reaches (``pi = 0``) are not walked.

Per board and class the walk is one pass over the level's template nodes (children before
parents), each an O(hands) loop of a multiply or a maximum over contiguous rows: no opponent
reach times strategy slab, no card sums, no sorting. The board tables (valid hands, the
final boards' strength orders, suit groups) are ``StreamedEvaluator.tables``'s.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from efgkit.games.csr import offsets_of
from efgkit.poker.codes import BEST_RESPONSE, DEAL, EXPECTED, FOLD, SHOWDOWN
from efgkit.poker.dealt_hands import child_key, hand_lists, keep_off_board
from efgkit.poker.depth_first import depth_first
from efgkit.poker.terminal_values import fold_payoff, fold_values, showdown_values_batch


class BlindClasses(NamedTuple):
    """The strategy's classes of entering betting sequences, per level ``j``.

    ``column_start`` int64 (levels + 1,): column ``c`` of level ``j`` is entry
    ``column_start[j] + c`` of ``column_class`` int64 (columns,), its global class id; the
    classes of level ``j`` are ``class_start[j]:class_start[j + 1]`` (int64 (levels + 1,));
    per class ``rep`` int64 (classes,) a column of the class (its betting nodes give the
    chips and probabilities) and ``live`` bool (classes,) whether the opponent reaches one
    of its columns; ``live_count`` int64 (levels,). ``weight`` float64 (betting nodes,): the
    probability of the action leading into a node where it multiplies the child's value
    (the opponent's actions; also the responder's under ``EXPECTED``), 1 elsewhere;
    ``weighted`` bool (betting nodes,) where it does."""

    column_start: np.ndarray
    column_class: np.ndarray
    class_start: np.ndarray
    rep: np.ndarray
    live: np.ndarray
    live_count: np.ndarray
    weight: np.ndarray
    weighted: np.ndarray


class BlindWork(NamedTuple):
    """Buffers of one walk. Per level int64 ``valid`` (levels, hands) / ``valid_count``
    (levels,) the hands off its board, ``key`` and ``cursor`` (next deal) (levels,);
    float64 ``fold_count`` (levels, hands) ``N`` of each valid hand (in ``valid`` order);
    ``wins`` / ``losses`` float64 (hands,) on the final board (in ``valid`` order);
    ``values`` float64 (template nodes of the widest level, hands) one class's relative
    values in ``valid`` order; per global class ``out`` (classes, hands) the level's values
    on its board and ``acc`` (classes, hands) the values of a class of level ``j + 1``
    summed over the deals below the board of level ``j`` (hands by number); ``needed`` bool
    (template nodes of the widest level,); scratch: ``ones`` float64 (hands,) and ``unit``
    (hands, 2) of ones, ``counts`` float64 (hands,), ``pair`` float64 (hands, 2),
    ``fold_sum`` float64 (cards,), ``card_sum`` float64 (cards, 2), ``total`` float64 (2,),
    ``win`` / ``lose`` float64 (2,) the payoffs (1, 0) and (0, 1)."""

    valid: np.ndarray
    valid_count: np.ndarray
    key: np.ndarray
    cursor: np.ndarray
    fold_count: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    values: np.ndarray
    out: np.ndarray
    acc: np.ndarray
    needed: np.ndarray
    ones: np.ndarray
    unit: np.ndarray
    counts: np.ndarray
    pair: np.ndarray
    fold_sum: np.ndarray
    card_sum: np.ndarray
    total: np.ndarray
    win: np.ndarray
    lose: np.ndarray


def is_card_blind(layout, strategy: np.ndarray, players: tuple[int, ...]) -> bool:
    """Whether every decision of ``players`` in ``layout`` (a ``BucketLayout``) has all its
    bucket rows equal (exactly) in ``strategy``: its probabilities ignore the cards."""
    betting = layout.betting
    kinds = betting.kind[betting.decision_nodes]
    for d in range(layout.width.shape[0]):
        if int(kinds[d]) not in players or layout.buckets[d] == 1:
            continue
        rows = strategy[layout.action_start[d]:layout.action_start[d + 1]].reshape(-1, layout.width[d])
        if not np.all(rows == rows[0]):
            return False
    return True


def blind_classes(templates, betting, layout, strategy: np.ndarray, player: int,
                  objective: int) -> BlindClasses:
    """The ``BlindClasses`` of card-blind ``strategy`` (its bucket-0 rows are read) for
    responder ``player``: a column's signature is its chips at every template node, the
    weights of its edges and the classes of the columns below its deal nodes; equal
    signatures are one class (computed from the last level up)."""
    nodes = betting.kind.shape[0]
    weight = np.ones(nodes)
    weighted = np.zeros(nodes, np.bool_)
    for d, node in enumerate(betting.decision_nodes.tolist()):
        if int(betting.kind[node]) != player or objective == EXPECTED:
            children = betting.first_child[node] + np.arange(int(betting.num_children[node]))
            weight[children] = strategy[layout.action_start[d]:layout.action_start[d] + children.shape[0]]
            weighted[children] = True
    reach = opponent_reach(betting, layout, strategy, player)
    levels = templates.columns.shape[0]
    column_start = offsets_of(templates.columns)
    column_class = np.zeros(int(column_start[-1]), np.int64)
    per_level: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [None] * levels  # type: ignore[list-item]
    for j in range(levels - 1, -1, -1):
        columns = int(templates.columns[j])
        template = np.arange(templates.start[j], templates.start[j + 1])
        node_of = templates.node_of[templates.node_base[template][:, None] + np.arange(columns)[None, :]]
        features = [betting.contribution[node_of, 0], betting.contribution[node_of, 1], weight[node_of]]
        leaves = template[templates.leaf[template] >= 0]
        if leaves.size:
            below = templates.leaf[leaves][:, None] * columns + np.arange(columns)[None, :]
            features.append(column_class[column_start[j + 1] + below].astype(np.float64))
        signature = np.concatenate(features, axis=0).T
        _, first, inverse = np.unique(signature, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        alive = np.zeros(first.shape[0], np.bool_)
        alive[inverse[reach[node_of[0]] > 0.0]] = True
        per_level[j] = (first.astype(np.int64), inverse.astype(np.int64), alive)
        column_class[column_start[j]:column_start[j + 1]] = inverse  # level-local, made global below
    class_start = offsets_of([p[0].shape[0] for p in per_level])
    for j in range(levels):
        column_class[column_start[j]:column_start[j + 1]] += class_start[j]
    rep = np.concatenate([p[0] for p in per_level]).astype(np.int64)
    live = np.concatenate([p[2] for p in per_level])
    live_count = np.array([int(p[2].sum()) for p in per_level], np.int64)
    return BlindClasses(column_start, column_class, class_start, rep, live, live_count, weight, weighted)


def blind_work(templates, tables, classes: BlindClasses) -> BlindWork:
    """Zeroed ``BlindWork`` for ``templates`` with the hands and cards of ``tables``."""
    levels = templates.columns.shape[0]
    hands = tables.hand_mask.shape[0]
    cards = int(tables.hand_cards.max()) + 1
    widest = int(np.diff(templates.start).max())
    total = int(classes.class_start[-1])
    return BlindWork(*hand_lists(levels, hands), np.zeros(levels, np.int64), np.zeros(levels, np.int64),
                     np.zeros((levels, hands)),
                     np.zeros(hands), np.zeros(hands), np.zeros((widest, hands)), np.zeros((total, hands)),
                     np.zeros((total, hands)),
                     np.zeros(widest, np.bool_), np.ones(hands), np.ones((hands, 2)), np.zeros(hands),
                     np.zeros((hands, 2)), np.zeros(cards), np.zeros((cards, 2)), np.zeros(2),
                     np.array([1.0, 0.0]), np.array([0.0, 1.0]))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _board_counts(templates, tables, work, j):
    """``work.fold_count[j]``: the opponent hands compatible with each valid hand of board
    ``j``; on the last level also ``wins`` / ``losses`` (a reach of 1 on every hand)."""
    count = work.valid_count[j]
    valid = work.valid[j, :count]
    fold_values(work.ones, tables.hand_cards, valid, work.fold_sum, 1.0, work.counts)
    for x in range(count):
        work.fold_count[j, x] = work.counts[valid[x]]
    if j + 1 < templates.columns.shape[0]:
        return
    row = work.key[j] - tables.key_start[j]
    m = tables.showdown_count[row]
    showdown_values_batch(work.unit, tables.hand_cards, tables.showdown_hands[row, :m],
                          tables.showdown_strength[row, :m], work.card_sum, work.total, work.win, work.lose,
                          work.pair, work.pair, np.int64(0))
    for x in range(count):
        h = valid[x]
        work.wins[x] = work.pair[h, 0]
        work.losses[x] = -work.pair[h, 1]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _mark_needed(templates, classes, needed, lo, hi, c):
    """``needed[p - lo]`` (bool, at least ``hi - lo``): whether template node ``p`` of
    ``lo..hi`` is reached, top down from ``lo``, by edges of class column ``c`` with a
    nonzero weight (unweighted edges always reach)."""
    needed[:hi - lo] = False
    needed[0] = True
    for p in range(lo, hi):
        if not needed[p - lo] or templates.kind[p] > 1:
            continue
        for a in range(templates.num_children[p]):
            child = templates.first_child[p] + a
            node = templates.node_of[templates.node_base[child] + c]
            needed[child - lo] = not classes.weighted[node] or classes.weight[node] != 0.0


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _scatter(values, valid, count, target):
    """``target`` float64 (hands,): ``values[x]`` at hand ``valid[x]`` (int64) for ``x <
    count``, 0 elsewhere."""
    target[:] = 0.0
    for x in range(count):
        target[valid[x]] = values[x]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _walk_class(view, templates, classes, work, player, objective, j, k):
    """Class ``k``'s relative values on the board of level ``j`` into ``work.out[k]`` (hands,):
    the template's nodes children first, each a loop over the valid hands (``view`` a
    ``BettingView``; the bundles as in ``blind_work``)."""
    lo, hi = templates.start[j], templates.start[j + 1]
    columns = templates.columns[j]
    c = classes.rep[k]
    count = work.valid_count[j]
    valid = work.valid[j, :count]
    needed = work.needed
    _mark_needed(templates, classes, needed, lo, hi, c)
    scale = view.chance_weight[j]
    values = work.values
    for p in range(hi - 1, lo - 1, -1):
        if not needed[p - lo]:
            continue
        node = templates.node_of[templates.node_base[p] + c]
        kind = templates.kind[p]
        row = values[p - lo]
        if kind == FOLD:
            payoff = fold_payoff(view.contribution, node, view.folder[node], player) * scale
            for x in range(count):
                row[x] = payoff * work.fold_count[j, x]
        elif kind == SHOWDOWN:
            win = view.contribution[node, 1 - player] * scale
            lose = view.contribution[node, player] * scale
            for x in range(count):
                row[x] = win * work.wins[x] - lose * work.losses[x]
        elif kind == DEAL:
            below = classes.column_class[classes.column_start[j + 1] + templates.leaf[p] * columns + c]
            source = work.acc[below]
            for x in range(count):
                row[x] = source[valid[x]]
        else:
            maximum = kind == player and objective == BEST_RESPONSE
            first = True
            for a in range(templates.num_children[p]):
                child = templates.first_child[p] + a
                if not needed[child - lo]:
                    continue
                source = values[child - lo]
                if maximum:
                    if first:
                        for x in range(count):
                            row[x] = source[x]
                    else:
                        for x in range(count):
                            row[x] = max(row[x], source[x])
                else:
                    q = classes.weight[templates.node_of[templates.node_base[child] + c]]
                    if first:
                        for x in range(count):
                            row[x] = q * source[x]
                    else:
                        for x in range(count):
                            row[x] += q * source[x]
                first = False
            if first:  # no child reached (cannot happen for a reached decision)
                row[:count] = 0.0
    _scatter(values[0], valid, count, work.out[k])


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _walk_level(args, j):
    """Every live class of level ``j`` on its board (``work.key[j]``, ``work.valid[j]``)
    (``args`` as ``blind_item`` packs them: ``depth_first``'s visitors)."""
    view, templates, tables, classes, work, player, objective = args
    _board_counts(templates, tables, work, j)
    for k in range(classes.class_start[j], classes.class_start[j + 1]):
        if classes.live[k]:
            _walk_class(view, templates, classes, work, player, objective, j, k)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _open_board(args, j):
    """Start board ``j``: the last level's is walked at once (True: a leaf), any other clears
    level ``j + 1``'s sums below it and starts at its first deal."""
    view, templates, tables, classes, work, player, objective = args
    if j + 1 == templates.columns.shape[0]:
        _walk_level(args, j)
        return True
    work.cursor[j] = 0
    for k in range(classes.class_start[j + 1], classes.class_start[j + 2]):
        work.acc[k] = 0.0
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _next_board(args, j):
    """Set up the next deal of level ``j + 1`` below board ``j`` that is walked (the canonical
    deal of its suit class, sharing no card with the board): its key and valid hands."""
    view, templates, tables, classes, work, player, objective = args
    if classes.live_count[j + 1] == 0:
        return False
    lo = tables.deal_start[j + 1]
    deals = tables.deal_start[j + 2] - lo
    for i in range(work.cursor[j], deals):
        key = child_key(tables, j, work.key[j], i)
        if tables.deal_weight[key] == 0.0:
            continue
        work.valid_count[j + 1] = keep_off_board(tables.hand_mask, work.valid[j, :work.valid_count[j]],
                                                 tables.deal_mask[lo + i], work.valid[j + 1])
        work.key[j + 1] = key
        work.cursor[j] = i + 1
        return True
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _spread(args, j):
    """Add the live classes' values of level ``j + 1`` on its board into ``acc`` over the
    deal's suit class (every permutation of board ``j``'s group), as ``full_game._spread``."""
    view, templates, tables, classes, work, player, objective = args
    key = work.key[j]
    weight = tables.deal_weight[work.key[j + 1]]
    count = work.valid_count[j + 1]
    valid = work.valid[j + 1, :count]
    for g in range(tables.group_start[key], tables.group_start[key + 1]):
        perm = tables.hand_perm[tables.group_perm[g]]
        for k in range(classes.class_start[j + 1], classes.class_start[j + 2]):
            if not classes.live[k]:
                continue
            target, source = work.acc[k], work.out[k]
            for x in range(count):
                h = valid[x]
                target[perm[h]] += weight * source[h]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def blind_item(view, templates, tables, classes, work, player, objective):
    """Relative values of every class of level 1 on the work item's first deal
    (``tables.first_mask``) into their rows of ``work.out`` (hands,): the levels below walked
    board by board, ``depth_first`` with this module's visitors (``work.cursor`` the next deal)."""
    for k in range(classes.class_start[1], classes.class_start[2]):
        work.out[k] = 0.0
    if classes.live_count[1] == 0:
        return
    work.valid_count[1] = keep_off_board(tables.hand_mask, work.valid[0], tables.first_mask[0], work.valid[1])
    work.key[1] = 1
    depth_first(_open_board, _next_board, _walk_level, _spread,
                (view, templates, tables, classes, work, player, objective), np.int64(1))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def blind_root(view, templates, tables, classes, work, player, objective):
    """The responder's total at the root (level 0: no board), level 1's class values summed
    over the first deals already in ``work.acc``; a game without boards is walked whole."""
    work.key[0] = 0
    _walk_level((view, templates, tables, classes, work, player, objective), np.int64(0))
    return work.out[0].sum()


def blind_values(evaluator, strategy: np.ndarray, targets: list[tuple[int, int]], runner, progress=None,
                 shared=None) -> list[float]:
    """``StreamedEvaluator.value`` of every (player, objective) in ``targets`` against a
    card-blind ``strategy`` (``is_card_blind`` holds for the players each reads), in one pass
    over the first deals (``evaluator.items``, through ``runner``): an item's board tables are
    built once for all targets; each returns its level-1 classes' relative values spread over
    its suit class, summed in item order, then the walk before the first deal."""
    classes = [blind_classes(evaluator.templates, evaluator.betting, evaluator.layout, strategy, *target)
               for target in targets]
    pre = evaluator.tables(None)
    works = [blind_work(evaluator.templates, pre, c) for c in classes]
    if evaluator.items:
        shared = runner.share(evaluator) if shared is None else shared
        shared_classes = runner.share(classes)
        arguments = [(shared, shared_classes, targets, i) for i in range(len(evaluator.items))]
        for values in runner.imap(blind_item_values, arguments):
            for c, work, value in zip(classes, works, values, strict=True):
                work.acc[c.class_start[1]:c.class_start[2]] += value
            if progress is not None:
                progress(len(targets))
    return [float(blind_root(evaluator.view, evaluator.templates, pre, c, work, player, objective))
            for c, work, (player, objective) in zip(classes, works, targets, strict=True)]


def blind_item_values(evaluator, classes: list[BlindClasses], targets: list[tuple[int, int]],
                      item: int) -> list[np.ndarray]:
    """Per target, (level-1 classes, hands): the relative values of first deal ``item``'s
    classes summed over its suit class (weights included)."""
    tables = evaluator.tables(evaluator.items[item])
    results = []
    for c, (player, objective) in zip(classes, targets, strict=True):
        work = blind_work(evaluator.templates, tables, c)
        blind_item(evaluator.view, evaluator.templates, tables, c, work, player, objective)
        results.append(evaluator.class_sum(work.out[c.class_start[1]:c.class_start[2]], item))
    return results


def opponent_reach(betting, layout, strategy: np.ndarray, player: int) -> np.ndarray:
    """float64 (betting nodes,): the reach of ``player``'s opponent, card blind in
    ``strategy`` (its bucket-0 rows), at every betting node: a scalar per node."""
    reach = np.ones(betting.kind.shape[0])
    for node in range(betting.kind.shape[0]):  # breadth first: parents before children
        m = int(betting.num_children[node])
        if not m:
            continue
        children = betting.first_child[node] + np.arange(m)
        if int(betting.kind[node]) == 1 - player:
            d = int(betting.decision_index[node])
            reach[children] = reach[node] * strategy[layout.action_start[d]:layout.action_start[d] + m]
        else:
            reach[children] = reach[node]
    return reach
