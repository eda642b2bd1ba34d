"""Playing a limit-poker betting tree on one dealt board against whole ranges of hands.

The walk behind local best response (``local_best_response.py``) and head-to-head matches
(``match.py``). The board is fixed; both players' private hands stay vectors, as in the
streamed best response (``full_game.py``): the *opponent* carries a reach vector over its
hands (its strategy's probabilities multiplied in along the path, card removal at the
terminals by inclusion-exclusion, ``terminal_values.py``) and the *responder* gets a value per
hand. What the responder plays at its nodes is the only difference between the two uses:

* ``STRATEGY``: its own rows of a ``BucketLayout`` strategy (a head-to-head match);
* ``LOCAL``: the local best response rule (Lisý & Bowling 2017, Algorithm 1), one action per
  hand chosen from the opponent's range at the node (``_choose``).

Every opponent action is followed with its probability and every pair of hands counted with
its chance weight, so the root's values summed over the responder's hands are the
responder's expected winnings given the board — exact over both hands and every mixed
action; only the board is sampled (``BoardDealer``, ``play_boards``). A terminal at board level ``j`` is
weighted by ``1 / (pairs of hands off the level-j board)``, the same
``BettingTree.chance_weight`` times boards that public chance sampling uses
(``sampled_cfr.py``): each level's terms are unbiased given that level's board.

Strategies of both sides are concatenated into one float64 array; ``Sides.start[s]`` is side
``s``'s ``BucketLayout.action_start`` shifted to its part, ``Sides.seat_side[q]`` the side
playing seat ``q``, and a hand's row is ``start[s, d] + bucket[s, level, h] * width``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from itertools import combinations
from typing import NamedTuple

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.poker.betting_tree import BettingTree, card_mask, sorted_deals
from efgkit.poker.buckets.card_abstraction import HandBuckets
from efgkit.poker.codes import DEAL, FOLD
from efgkit.poker.depth_first import depth_first, no_close, push_child
from efgkit.poker.materialised.public_tree import showdown_tables
from efgkit.poker.terminal_values import add_showdown_and_compatible, dealt_terminal_values, fold_values

STRATEGY, LOCAL = 0, 1
FOLD_ACTION, CALL_ACTION, RAISE_ACTION = 0, 1, 2
Z_95 = 1.959963984540054


class DealtBoard(NamedTuple):
    """One board: per level the ``valid`` hands (levels, hands) int64 and their
    ``valid_count`` (levels,); ``bucket`` int64 (sides, levels, hands), -1 off the board;
    terminal ``weight`` float64 (levels,); the final board's valid hands by ascending
    strength, ``final_hands`` / ``final_strength`` int64 (1, hands) and ``final_count`` (1,);
    ``hand_cards`` int64 (hands, k)."""

    valid: np.ndarray
    valid_count: np.ndarray
    bucket: np.ndarray
    weight: np.ndarray
    final_hands: np.ndarray
    final_strength: np.ndarray
    final_count: np.ndarray
    hand_cards: np.ndarray


class Sides(NamedTuple):
    """``strategy`` float64 (both sides' rows), ``start`` int64 (sides, decisions + 1),
    ``seat_side`` int64 (2,)."""

    strategy: np.ndarray
    start: np.ndarray
    seat_side: np.ndarray


class LocalTables(NamedTuple):
    """What the local best response rule reads besides the board.

    Final boards completing the board of each level before the last, for equities: level
    ``j``'s are rows ``level_start[j]:level_start[j + 1]`` of ``count`` int64 (rows,),
    ``hands`` / ``strength`` int64 (rows, hands) (each final board's valid hands by
    strength). Level 0's rows are drawn once per run, the others per board; the last level
    uses ``DealtBoard``'s final board. ``choice_cache`` int64 (decisions, hands) keeps the
    level-0 choices, which never depend on the board; ``cached`` bool (decisions,) says which
    are filled. ``allowed`` bool (rounds, 3): the kinds of action (``FOLD_ACTION``,
    ``CALL_ACTION``, ``RAISE_ACTION``) LBR considers in each round; ``round`` int64 (nodes,)
    each betting node's round."""

    level_start: np.ndarray
    count: np.ndarray
    hands: np.ndarray
    strength: np.ndarray
    choice_cache: np.ndarray
    cached: np.ndarray
    allowed: np.ndarray
    round: np.ndarray


class BoardWalkStack(NamedTuple):
    """Per depth int64 ``node``, ``cursor``, ``action``; float64 (depth, hands) ``own`` and
    ``opponent`` reach, ``values`` of the responder; int64 (depth, hands) ``choice`` (LOCAL);
    scratch float64 ``card_sum`` (cards,) and (6, hands) ``work``, uint64 (hands, 2)
    ``sorted_cards`` and (hands + 1,) ``group_start`` (``terminal_values.strength_groups``)."""

    node: np.ndarray
    cursor: np.ndarray
    action: np.ndarray
    own: np.ndarray
    opponent: np.ndarray
    values: np.ndarray
    choice: np.ndarray
    card_sum: np.ndarray
    work: np.ndarray
    sorted_cards: np.ndarray
    group_start: np.ndarray


def new_walk(depth: int, hands: int, cards: int) -> BoardWalkStack:
    """Zeroed walk arrays for a tree ``depth`` deep with ``hands`` hands of ``cards`` cards."""
    index = [np.zeros(depth, np.int64) for _ in range(3)]
    vectors = [np.zeros((depth, hands)) for _ in range(3)]
    return BoardWalkStack(*index, *vectors, np.zeros((depth, hands), np.int64), np.zeros(cards),
                          np.zeros((6, hands)), np.zeros((hands, 2), np.uint64),
                          np.zeros(hands + 1, np.uint64))


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _probability(view, board, sides, seat, node, level, h, a):
    """Seat ``seat``'s probability of action ``a`` at decision ``node`` with hand ``h``."""
    side = sides.seat_side[seat]
    m = view.num_children[node]
    return sides.strategy[sides.start[side, view.decision_index[node]] + board.bucket[side, level, h] * m + a]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _compatible(reach, board, valid, card_sum, out):
    """``out[h]``: the reach of the hands compatible with ``h`` among ``valid``."""
    fold_values(reach, board.hand_cards, valid, card_sum, 1.0, out)


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _equities(view, board, local, walk, level, depth, equity):
    """Each valid hand's equity (wins + ties / 2) against the opponent's range at ``depth``,
    averaged over the level's completions of the board; -1 where no opponent hand is left."""
    reach = walk.opponent[depth]
    wins, total, scratch = walk.work[2], walk.work[3], walk.work[4]
    wins[:] = 0.0
    total[:] = 0.0
    last = view.chance_weight.shape[0] - 1
    if level == last:
        count = board.final_count[0]
        add_showdown_and_compatible(reach, board.hand_cards, board.final_hands[0, :count],
                                    board.final_strength[0, :count], walk.card_sum, walk.sorted_cards,
                                    walk.group_start, walk.work[5], scratch, wins, total)
    else:
        for row in range(local.level_start[level], local.level_start[level + 1]):
            count = local.count[row]
            add_showdown_and_compatible(reach, board.hand_cards, local.hands[row, :count],
                                        local.strength[row, :count], walk.card_sum, walk.sorted_cards,
                                        walk.group_start, walk.work[5], scratch, wins, total)
    for h in board.valid[level, :board.valid_count[level]]:
        equity[h] = 0.5 + 0.5 * wins[h] / total[h] if total[h] > 0.0 else -1.0


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _action_value(wp, pot, asked, bet, fp):
    """LBR's value (float64) of an action for a hand of equity ``wp`` (-1: no opponent hand
    left, worth 0) with ``pot`` = both players' chips in and ``asked`` = the chips to call: a
    call or check (``bet`` = 0) is worth ``wp * pot - (1 - wp) * asked``; a raise putting
    ``bet`` chips beyond the call ``fp * pot + (1 - fp) * (wp * (pot + bet) - (1 - wp) *
    (asked + bet))``, ``fp`` the probability that the range folds to it at once. Fold is
    worth 0."""
    if wp < 0.0:
        return 0.0
    if bet > 0.0:
        return fp * pot + (1.0 - fp) * (wp * (pot + bet) - (1.0 - wp) * (asked + bet))
    return wp * pot - (1.0 - wp) * asked


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _choose(view, board, sides, local, walk, player, depth):
    """Lisý & Bowling's LBR-ACT at the responder's node at ``depth`` for every valid hand:
    ``walk.choice[depth, h]``.

    Each action is valued by ``_action_value`` against the opponent's current range (the
    board rolled out; ``walk.work`` rows 0-4 are scratch float64 (hands,)). The best action
    the round allows (``local.allowed``; check or call when it allows neither call nor raise)
    is played, the first in order on ties; it folds instead, if allowed, when facing a bet and
    nothing is worth more than 0. Level-0 choices are cached: they never depend on the board.
    """
    node = walk.node[depth]
    level = view.level[node]
    decision = view.decision_index[node]
    valid = board.valid[level, :board.valid_count[level]]
    if level == 0 and local.cached[decision]:
        for h in valid:
            walk.choice[depth, h] = local.choice_cache[decision, h]
        return
    equity, best, range_total, folding = walk.work[0], walk.work[1], walk.work[2], walk.work[3]
    _equities(view, board, local, walk, level, depth, equity)
    mine = view.contribution[node, player]
    theirs = view.contribution[node, 1 - player]
    pot = mine + theirs
    asked = theirs - mine
    allowed = local.allowed[local.round[node]]
    fold_action = -1
    for h in valid:
        best[h] = -np.inf
    first = view.first_child[node]
    considered = allowed[CALL_ACTION] or allowed[RAISE_ACTION]
    for a in range(view.num_children[node]):
        child = first + a
        if view.kind[child] == FOLD:
            fold_action = a
            continue
        bet = view.contribution[child, player] - theirs
        if not allowed[RAISE_ACTION if bet > 0.0 else CALL_ACTION] and (considered or bet > 0.0):
            continue
        if bet > 0.0:  # a raise: how often the range folds to it at once
            _fold_fractions(view, board, sides, walk, player, child, level, depth, range_total, folding)
        for h in valid:
            fp = folding[h] / range_total[h] if bet > 0.0 and range_total[h] > 0.0 else 0.0
            value = _action_value(equity[h], pot, asked, bet, fp)
            if value > best[h]:
                best[h] = value
                walk.choice[depth, h] = a
    if fold_action >= 0 and asked > 0.0 and allowed[FOLD_ACTION]:
        for h in valid:
            if best[h] <= 0.0:
                walk.choice[depth, h] = fold_action
    if level == 0:
        for h in valid:
            local.choice_cache[decision, h] = walk.choice[depth, h]
        local.cached[decision] = True


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _fold_fractions(view, board, sides, walk, player, child, level, depth, range_total, folding):
    """``range_total[h]``: the opponent's reach compatible with hand ``h``; ``folding[h]`` the
    part of it that folds at once at ``child`` (0 when the opponent cannot fold there)."""
    valid = board.valid[level, :board.valid_count[level]]
    reach = walk.opponent[depth]
    _compatible(reach, board, valid, walk.card_sum, range_total)
    fold = np.int64(-1)
    if view.kind[child] == 1 - player:
        for a in range(view.num_children[child]):
            if view.kind[view.first_child[child] + a] == FOLD:
                fold = a
    if fold < 0:
        folding[:] = 0.0
        return
    weighted = walk.work[4]
    for h in valid:
        weighted[h] = reach[h] * _probability(view, board, sides, 1 - player, child, level, h, fold)
    _compatible(weighted, board, valid, walk.card_sum, folding)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _open(args, depth):
    """Start the node at ``depth``; True for a terminal (its values filled). At the responder's
    node under ``LOCAL``, its hands choose their actions (``args`` as ``responder_value``
    packs them: ``depth_first``'s visitors)."""
    view, board, sides, local, walk, player, mode = args
    node = walk.node[depth]
    kind = view.kind[node]
    if kind > DEAL:
        dealt_terminal_values(view, board, node, player, walk.opponent[depth], walk.card_sum,
                              walk.values[depth])
        return True
    walk.values[depth, :] = 0.0
    walk.cursor[depth] = 0
    if kind == player and mode == LOCAL:
        _choose(view, board, sides, local, walk, player, depth)
    return False


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _own_probability(view, board, sides, walk, player, mode, node, level, depth, h, a):
    """The walking ``player``'s probability of action ``a`` with hand ``h`` at decision
    ``node``: its ``walk.choice[depth, h]`` (int64 (depth, hands)) under ``LOCAL``, else its
    strategy's (``_probability``); the bundles as in ``responder_value``."""
    if mode == LOCAL:
        return 1.0 if walk.choice[depth, h] == a else 0.0
    return _probability(view, board, sides, player, node, level, h, a)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _next_child(args, depth):
    """Set up the next child both players reach at ``depth + 1``; False when none is left."""
    view, board, sides, local, walk, player, mode = args
    node = walk.node[depth]
    kind = view.kind[node]
    a = walk.cursor[depth]
    m = view.num_children[node]
    child = view.first_child[node]
    if kind == DEAL:
        if a == 1:
            return False
        level = view.level[child]
        own, opponent = False, False
        for h in board.valid[level, :board.valid_count[level]]:
            walk.own[depth + 1, h] = walk.own[depth, h]
            walk.opponent[depth + 1, h] = walk.opponent[depth, h]
            own = own or walk.own[depth, h] != 0.0
            opponent = opponent or walk.opponent[depth, h] != 0.0
        push_child(walk, depth, 0, 1, child)
        return own and opponent
    level = view.level[node]
    valid = board.valid[level, :board.valid_count[level]]
    while a < m:
        own, opponent = False, False
        for h in valid:
            if kind == player:
                p = _own_probability(view, board, sides, walk, player, mode, node, level, depth, h, a)
                walk.own[depth + 1, h] = walk.own[depth, h] * p
                walk.opponent[depth + 1, h] = walk.opponent[depth, h]
            else:
                q = _probability(view, board, sides, 1 - player, node, level, h, a)
                walk.own[depth + 1, h] = walk.own[depth, h]
                walk.opponent[depth + 1, h] = walk.opponent[depth, h] * q
            own = own or walk.own[depth + 1, h] != 0.0
            opponent = opponent or walk.opponent[depth + 1, h] != 0.0
        if own and opponent:
            break
        a += 1
    return push_child(walk, depth, a, m, child)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _gather(args, depth):
    """Add the finished child into the node at ``depth``: weighted by the responder's own
    probability of the action at its nodes, summed elsewhere."""
    view, board, sides, local, walk, player, mode = args
    node = walk.node[depth]
    level = view.level[walk.node[depth + 1]]
    valid = board.valid[level, :board.valid_count[level]]
    if view.kind[node] != player:
        for h in valid:
            walk.values[depth, h] += walk.values[depth + 1, h]
        return
    a = walk.action[depth]
    for h in valid:
        p = _own_probability(view, board, sides, walk, player, mode, node, level, depth, h, a)
        if p != 0.0:
            walk.values[depth, h] += p * walk.values[depth + 1, h]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def responder_value(view, board, sides, local, walk, player, mode):
    """Seat ``player``'s expected winnings on ``board`` (summed over its hands, chance
    included) against the other seat's strategy, playing its own side's strategy
    (``STRATEGY``) or the local best response rule (``LOCAL``): ``depth_first`` with this
    module's visitors."""
    walk.node[0] = 0
    for h in board.valid[0, :board.valid_count[0]]:
        walk.own[0, h] = 1.0
        walk.opponent[0, h] = 1.0
    depth_first(_open, _next_child, no_close, _gather, (view, board, sides, local, walk, player, mode),
                np.int64(0))
    return walk.values[0, :].sum()


class Estimate(NamedTuple):
    """A mean over boards in chips per game: ``mean``, its ``standard_error`` (0 when every
    board was played), the ``boards`` played and whether they were ``exact`` (all of them)."""

    mean: float
    standard_error: float
    boards: int
    exact: bool

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """95% normal-approximation interval for the mean."""
        return (self.mean - Z_95 * self.standard_error, self.mean + Z_95 * self.standard_error)

    @classmethod
    def of(cls, values: np.ndarray, exact: bool) -> Estimate:
        """The mean of per-board ``values`` (equally likely boards, all of them if ``exact``)."""
        n = values.shape[0]
        error = 0.0 if exact else float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else float("inf")
        return cls(float(values.mean()), error, n, exact)


class BoardDealer:
    """Deals the boards of ``betting`` (every public card, deal by deal) and builds their
    ``DealtBoard`` for strategies on the card ``abstractions`` (one per side)."""

    def __init__(self, betting: BettingTree, abstractions: list[HandBuckets]) -> None:
        self.betting = betting
        self.abstractions = abstractions
        self.hand_cards, self.hand_mask = betting.hands()
        self.cards_dealt = int(betting.deal_size.sum())
        self.level_weight = betting.level_weight
        self.num_boards = betting.board_sequences[-1]
        """Every sequence of deals, each equally likely."""

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random board: int64 cards, every deal's cards in order."""
        return self.ordered(rng.choice(self.betting.num_cards, size=self.cards_dealt, replace=False))

    def ordered(self, cards) -> np.ndarray:
        """``cards`` with each deal's cards sorted (the deals themselves in order)."""
        return sorted_deals(cards, self.betting.deal_size)

    def every_board(self) -> Iterator[np.ndarray]:
        """Every board once (``num_boards`` of them)."""
        def deals(dealt: tuple[int, ...], sizes: list[int]) -> Iterator[tuple[int, ...]]:
            if not sizes:
                yield dealt
                return
            rest = [c for c in range(self.betting.num_cards) if c not in dealt]
            for combo in combinations(rest, sizes[0]):
                yield from deals(dealt + combo, sizes[1:])

        for board in deals((), self.betting.deal_size.tolist()):
            yield np.array(board, np.int64)

    def deal(self, cards: np.ndarray) -> DealtBoard:
        """The kernel's view of the board ``cards`` (as ``sample`` returns them)."""
        betting = self.betting
        levels, hands = betting.num_levels, self.hand_cards.shape[0]
        valid = np.zeros((levels, hands), np.int64)
        count = np.zeros(levels, np.int64)
        bucket = np.full((len(self.abstractions), levels, hands), -1, np.int64)
        dealt = 0
        for level in range(levels):
            if level:
                dealt += int(betting.deal_size[level - 1])
            board = cards[:dealt]
            alive = np.flatnonzero((self.hand_mask & card_mask(board)) == 0)
            valid[level, :alive.shape[0]] = alive
            count[level] = alive.shape[0]
            for side, abstraction in enumerate(self.abstractions):
                bucket[side, level, alive] = abstraction.buckets(betting.round_of_level[level], board,
                                                                 self.hand_cards)[alive]
        final_count, final_hands, final_strength = showdown_tables(
            betting.game.card_structure, self.hand_cards, self.hand_mask, cards[None, :dealt])
        return DealtBoard(valid, count, bucket, self.level_weight, final_hands, final_strength, final_count,
                          self.hand_cards)


def play_boards(board_values: Callable[[np.ndarray], tuple[float, float]], dealer: BoardDealer,
                boards: int | None, rng: np.random.Generator,
                progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, bool]:
    """``board_values`` (a board's two per-seat values) on ``boards`` boards sampled with
    ``rng`` or, with None, on every board: the values (boards, 2) and whether every board was
    played."""
    if boards is not None and boards < 2:
        raise ParameterError(f"at least 2 boards are needed for a confidence interval (got {boards})")
    count = dealer.num_boards if boards is None else boards
    deals = dealer.every_board() if boards is None else (dealer.sample(rng) for _ in range(boards))
    values = np.zeros((count, 2))
    for i, cards in enumerate(deals):
        values[i] = board_values(cards)
        if progress is not None:
            progress(1)
    return values, boards is None


def seat_sides(layouts: list, strategies: list[np.ndarray], seat_side: tuple[int, int]) -> Sides:
    """``Sides`` of strategies ``strategies[s]`` on ``layouts[s]`` (``BucketLayout``s of one
    betting tree), side ``seat_side[q]`` in seat ``q``."""
    offsets = np.cumsum([0] + [s.shape[0] for s in strategies])
    start = np.stack([layout.action_start + offsets[s] for s, layout in enumerate(layouts)]).astype(np.int64)
    return Sides(np.concatenate(strategies).astype(np.float64), start, np.array(seat_side, np.int64))


def no_local_tables(hands: int) -> LocalTables:
    """The empty ``LocalTables`` of walks that never choose locally (``STRATEGY``)."""
    return LocalTables(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros((0, hands), np.int64),
                       np.zeros((0, hands), np.int64), np.zeros((0, hands), np.int64), np.zeros(0, np.bool_),
                       np.zeros((0, 3), np.bool_), np.zeros(0, np.int64))
