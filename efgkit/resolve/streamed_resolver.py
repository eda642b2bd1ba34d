"""Re-solving after a board deal where the public tree does not fit: one flop at a time, streamed.

Brown & Sandholm 2017 (seed 004, §5, Tables 1-3) re-solve every subgame right after the flop (or
the turn) of a card-abstraction blueprint of flop (turn) hold'em with no card abstraction and
evaluate the combined strategy exactly. ``VectorResolver`` does that on a materialised public
tree; the 52-card game's (4.2 M public nodes x 1,326 hands) does not fit. Here every first deal
(flop) is a work item:

* ``FlopTree``: the public tree of the game with the first deal restricted to one board — the
  pre-deal betting once, that board's subtrees, the full game's chance weights — so the values
  and ranges at its nodes are the full tree's, and ``VectorResolver`` re-solves its subgames of
  the cut's round (every entering betting sequence x board below this flop) with the gadget
  kernels of ``vector_gadgets``;
* the combined strategy's values at the flop's entries (the nodes right after the flop deal:
  both players' best responses, player 0's expected value) are taken on the one-flop tree
  (``vector_cfr.value_pass`` on its lossless layout), summed over the flop's suit class, and
  discarded with the re-solved strategy: the full unabstracted strategy is never stored;
* the pre-flop part is the streamed evaluator's walk (``StreamedEvaluator.pre_deal_value``) from
  the summed entry values, so the result is the exact best response in the full game.

Gifts (the reach gadgets) need the opponent's best-response values at its pre-flop decisions,
which sum over every flop: a first pass over the flops gathers the blueprint's values at every
entry and the reach of the subgames below it (``PreDealGifts``), then the rule is
``VectorResolver.gifts``'s: at each opponent decision on the path to a root, the value lost by
the action taken, split by reach over every flop's roots below the action or given whole. Its
decisions after the flop (a turn cut) are in the one-flop tree, whose own ``gifts`` give them.
With ``gift_bound="min-payoff"`` the best alternative at a pre-flop decision is its lower bound
(``vector_resolver.min_payoff_alternatives``), computed once on any one-flop tree: the
re-solver's reach and the chance weight there are every flop's, and the least outcome of each pair
of hands runs over every completion of the empty board; the value of the action taken is still
the best response's, from the totals.

Flops run in this process or on Dask (``ChunkRunner``), summed in item order: the result does not
depend on where they ran. With a suit-symmetric blueprint one flop per suit class is re-solved
(HULHE: 1,755 of 22,100), its values spread over the class as the evaluator spreads its own.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Iterable
from itertools import combinations
from typing import NamedTuple

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import ParameterError
from efgkit.games.betting_tree import HAND_DEALS
from efgkit.games.poker import LimitPoker
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.codes import BEST_RESPONSE, DEAL, EXPECTED
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import BlueprintRoots, RootRanges, deal_roots
from efgkit.poker.materialised.vector_cfr import reach_pass, tree_view, value_pass, workspace
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.resolve.gadgets import REACH_GADGETS
from efgkit.resolve.vector_resolver import (
    VectorResolver,
    gifts_along,
    min_payoff_alternatives,
    opponent_path,
    public_parents,
)

FLOP_ROUND = 2
"""The round the streamed walk splits at: every flop is a work item (1-based, as ``--round``)."""


class FlopTree(PublicTree):
    """The public tree of ``game`` with its first board deal restricted to ``first`` (cards):
    every node keeps the full tree's chance weight, so values and reach at its nodes are the full
    game's contributions of this board."""

    def __init__(self, game: LimitPoker, first: tuple[int, ...]) -> None:
        self._first = tuple(sorted(int(c) for c in first))
        super().__init__(game, max_nodes=2**62)  # the limit counts every board; this tree has one

    def _deals(self, game: LimitPoker, board: int) -> np.ndarray:
        if self.board_cards[board]:
            return super()._deals(game, board)
        slot = HAND_DEALS
        if game.deal_by_rank:
            outcome = self._first[0] // game.card_structure.num_suits
        else:
            outcome = game.slot_outcome_cards[slot].index(self._first)
        return np.array([self._board_id(self._first, (outcome,))], np.int64)


class PreDealGifts:
    """Brown & Sandholm's gifts at the roots of any one-flop tree, from totals over every flop.

    ``entry_values`` float64 (2, entries, hands): per opponent, its counterfactual best-response
    values against the blueprint at every entry (summed over all flops); ``entry_reach`` float64
    (2, entries, hands): per re-solver, π_{-o}(I) of every opponent hand at the re-solved roots
    below each entry, summed over the flops;
    ``entry_of``: betting node -> entry; ``tree``: any ``FlopTree`` of the game and ``values`` its
    ``BlueprintRoots`` (its pre-deal nodes are every flop's); ``gift_bound``: "cbv" or
    "min-payoff" (``VectorResolver``'s)."""

    def __init__(self, tree: PublicTree, values: BlueprintRoots, entry_values: np.ndarray,
                 entry_reach: np.ndarray, entry_of: dict[int, int], split: bool,
                 gift_bound: str = "cbv") -> None:
        self.split = split
        pre = np.flatnonzero(tree.round == 0)
        self.best: list[dict[int, np.ndarray]] = []  # per opponent: betting node -> CBV (hands,)
        for opponent in (0, 1):
            cbv = values.counterfactual_values(opponent, "br").copy()
            for node in pre[::-1].tolist():  # children before parents (breadth first)
                lo, count = int(tree.first_child[node]), int(tree.num_children[node])
                if tree.kind[node] == DEAL:
                    cbv[node] = entry_values[opponent, entry_of[int(tree.betting[lo])]]
                elif tree.kind[node] <= 1:
                    children = cbv[lo:lo + count]
                    cbv[node] = children.max(axis=0) if tree.kind[node] == opponent else children.sum(axis=0)
            self.best.append({int(tree.betting[n]): cbv[n] for n in pre.tolist()})
        self.alternatives = self.best  # per opponent: betting node -> its best alternative (hands,)
        if gift_bound == "min-payoff":
            self.alternatives, tables = [], {}  # the pre-flop board's table serves both opponents
            for opponent in (0, 1):
                own = pre[tree.kind[pre] == opponent]
                bound = min_payoff_alternatives(tree, values.reach[1 - opponent], opponent, own, tables)
                self.alternatives.append({int(tree.betting[n]): bound[n] for n in own.tolist()})
        self.shared: list[dict[tuple[int, int], np.ndarray]] = [{}, {}]  # per re-solver
        parent = public_parents(tree)
        for root in deal_roots(tree, FLOP_ROUND).tolist():
            entry = entry_of[int(tree.betting[root])]
            for player in (0, 1):
                for pair in _betting_path(tree, parent, root, 1 - player):
                    totals = self.shared[player]
                    totals[pair] = totals.get(pair, 0.0) + entry_reach[player, entry]

    def __call__(self, resolver: VectorResolver, ranges: RootRanges) -> np.ndarray:
        """The gifts per (root of ``ranges`` on ``resolver``'s one-flop tree, opponent hand),
        float64 (roots, hands): the pre-flop decisions' from the totals, the later ones' from
        the tree."""
        tree, opponent = resolver.tree, 1 - ranges.player
        parent = public_parents(tree)
        paths = [_betting_path(tree, parent, root, opponent) for root in ranges.nodes.tolist()]
        gifts = gifts_along(paths, self.best[opponent], self.shared[ranges.player], ranges, self.split,
                            self.alternatives[opponent])
        if np.any(tree.round[ranges.nodes] > FLOP_ROUND - 1):
            gifts += resolver.gifts(ranges, first_round=FLOP_ROUND - 1)
        return gifts


def _betting_path(tree: PublicTree, parent: np.ndarray, root: int, opponent: int) -> list[tuple[int, int]]:
    """``opponent_path``'s pre-flop part by betting node numbers, the same in every flop's tree."""
    return [(int(tree.betting[node]), int(tree.betting[child]))
            for node, child in opponent_path(tree, parent, root, opponent) if tree.round[node] == 0]


class StreamedResolveResult(NamedTuple):
    """NashConv before (the blueprint, ``StreamedEvaluator``) and after (the combined strategy)
    re-solving, the flops walked, the gadgets solved, seconds, this process's peak RSS and the
    workers' (bytes; empty without Dask), and the bytes of the unabstracted float64 strategy the
    combined strategy would take if stored (``unabstracted_bytes``)."""

    before: Evaluation
    after: Evaluation
    flops: int
    gadgets: int
    seconds: float
    peak_rss: int
    worker_peak_rss: list[int]
    unabstracted_bytes: int


class StreamedResolver:
    """Re-solve every subgame right after the board deal of round ``round_number`` (1-based: 2
    the flop, 3 the turn) of the bucket strategy ``strategy`` (float64 per action of ``buckets``,
    as ``BucketLayout.checked`` returns it) one flop at a time, with ``VectorResolver``'s options
    (``gadget``, ``constraints``, ``iterations``, ``split_gifts``, ``variant``, ``players``,
    ``spread``, ``gift_bound``), and evaluate the combined strategy exactly in the full game.
    ``isomorphic``: one flop per suit class (the blueprint's abstraction must be suit-symmetric),
    and below a flop one later board per class of the suit permutations that keep the flop; else
    every board."""

    def __init__(self, buckets: BucketLayout, strategy: np.ndarray, *, gadget: str = "resolve",
                 constraints: str = "br", iterations: int = 1000, split_gifts: bool = True,
                 variant: str = "cfr+", players: tuple[int, ...] = (0, 1), spread: float = 1.0,
                 isomorphic: bool = True, round_number: int = FLOP_ROUND, gift_bound: str = "cbv") -> None:
        self.buckets, self.game = buckets, buckets.betting.game
        if buckets.betting.num_levels < 2:
            raise ParameterError(f"{self.game.spec} has no board deal: nothing to re-solve after it")
        self.strategy = buckets.checked(strategy)
        self.evaluator = StreamedEvaluator(buckets)
        if isomorphic and not self.evaluator.symmetric:
            raise ParameterError(f"the abstraction {buckets.abstraction.description!r} is not "
                                 f"suit-symmetric: re-solve every flop (without --isomorphic)")
        self.isomorphic = isomorphic
        if isomorphic:
            self.items = list(self.evaluator.items)
        else:
            size = int(buckets.betting.deal_size[0])
            self.items = list(combinations(range(buckets.betting.num_cards), size))
        if round_number < FLOP_ROUND:
            raise ParameterError(f"round {round_number}: re-solving starts after a board deal (round >= 2)")
        self.options = {"gadget": gadget, "constraints": constraints, "iterations": iterations,
                        "split_gifts": split_gifts, "variant": variant, "players": tuple(players),
                        "spread": spread, "round_number": round_number, "gift_bound": gift_bound,
                        "isomorphic": isomorphic and round_number > FLOP_ROUND}
        templates = self.evaluator.templates
        entries = templates.node_of[templates.node_base[templates.start[1]] + np.arange(templates.columns[1])]
        self.entry_of = {int(b): e for e, b in enumerate(entries.tolist())}
        self.gifts: PreDealGifts | None = None
        # Checks the options once, here, on the first flop (ParameterError before any work).
        self.resolver(self.flop_tree(0))

    # ------------------------------------------------------------------ one flop
    def flop_tree(self, item: int) -> FlopTree:
        return FlopTree(self.game, self.items[item])

    def resolver(self, tree: FlopTree) -> VectorResolver:
        """``VectorResolver`` on one flop's tree, the gifts from every flop's totals."""
        layout = StrategyLayout.from_bucket_layout(tree, self.buckets)
        return VectorResolver(tree, layout, self.strategy, gift_source=self.gifts, **self.options)

    def spread_class(self, values: np.ndarray, item: int) -> np.ndarray:
        """``values`` (rows, hands) on flop ``item`` summed over its suit class (``isomorphic``: the
        items are the evaluator's, in its order), or as they are."""
        return self.evaluator.class_sum(values, item) if self.isomorphic else values

    def entry_index(self, tree: PublicTree, nodes: np.ndarray) -> np.ndarray:
        """The evaluator's entry (row) of each of the public ``nodes``: the node right after the
        flop deal above it (a flop entry is its own), int64."""
        parent = public_parents(tree)
        entries = np.asarray(nodes, np.int64).copy()
        while True:  # climb to the node right after the flop deal
            above = parent[entries]
            climb = tree.round[above] >= FLOP_ROUND - 1
            if not climb.any():
                break
            entries[climb] = above[climb]
        return np.array([self.entry_of[int(b)] for b in tree.betting[entries].tolist()], np.int64)

    def entry_rows(self, index: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``values`` (nodes, hands) summed into (entries, hands) in the evaluator's order, each
        node into its entry ``index`` (``entry_index``)."""
        out = np.zeros((len(self.entry_of), values.shape[1]))
        np.add.at(out, index, values)
        return out

    def flop_gift_totals(self, item: int) -> tuple[np.ndarray, np.ndarray]:
        """Flop ``item``'s part of ``PreDealGifts``' totals: (2, entries, hands) twice, the
        opponent's values at the entries and the reach of the re-solved roots below them."""
        tree = self.flop_tree(item)
        resolver = self.resolver(tree)
        values, roots, entries = resolver.values, resolver.roots, deal_roots(tree, FLOP_ROUND)
        at_entries, above_roots = self.entry_index(tree, entries), self.entry_index(tree, roots)
        best = np.zeros((2, len(self.entry_of), tree.num_hands))
        reach = np.zeros_like(best)
        for player in (0, 1):
            values_there = values.ranges(entries, player, "br").values
            best[1 - player] = self.spread_class(self.entry_rows(at_entries, values_there), item)
            below = values.ranges(roots, player, "br").element_reach
            reach[player] = self.spread_class(self.entry_rows(above_roots, below), item)
        return best, reach

    def flop_values(self, item: int) -> tuple[np.ndarray, int]:
        """Flop ``item`` re-solved: the combined strategy's values at its entries (3, entries,
        hands: player 0's and 1's best response, player 0's expected value), summed over its
        suit class, and the gadgets solved. The reach gadgets need ``resolve``'s gift totals first."""
        if self.options["gadget"] in REACH_GADGETS and self.gifts is None:
            raise ParameterError("the reach gadgets' gifts sum over every flop: run resolve(), not one flop")
        tree = self.flop_tree(item)
        resolver = self.resolver(tree)
        combined = resolver.combined_strategy()
        view, rows, work = tree_view(tree), resolver.lossless.view(), workspace(tree)
        reach_pass(view, rows, combined, work.reach)
        out = np.zeros((3, len(self.entry_of), tree.num_hands))
        entries = deal_roots(tree, FLOP_ROUND)
        index, unused = self.entry_index(tree, entries), np.zeros(0)
        for k, (player, mode) in enumerate(((0, BEST_RESPONSE), (1, BEST_RESPONSE), (0, EXPECTED))):
            value_pass(view, rows, combined, player, mode, work, unused)
            out[k] = self.spread_class(self.entry_rows(index, work.values[entries]), item)
        groups = 1 if self.options["gadget"] == "unsafe" else len(self.options["players"])
        solved = resolver.roots if resolver.classes is None else resolver.classes.representatives
        return out, groups * int(solved.shape[0])

    # ------------------------------------------------------------------ every flop
    def gather_gifts(self, totals: Iterable[tuple[np.ndarray, np.ndarray]],
                     progress: Callable[[int], None] | None = None) -> None:
        """``gifts`` (the reach gadgets' ``PreDealGifts``) from flops' ``flop_gift_totals``, summed in
        the order given; ``progress(1)`` after each."""
        best, reach = np.zeros((2, len(self.entry_of), self.evaluator.hand_cards.shape[0])), None
        for item_best, item_reach in totals:
            best += item_best
            reach = item_reach if reach is None else reach + item_reach
            if progress is not None:
                progress(1)
        tree = self.flop_tree(0)
        values = BlueprintRoots(StrategyLayout.from_bucket_layout(tree, self.buckets), self.strategy)
        self.gifts = PreDealGifts(tree, values, best, reach, self.entry_of, self.options["split_gifts"],
                                  self.options["gift_bound"])

    def unabstracted_bytes(self) -> int:
        """Bytes of the combined strategy stored unabstracted as float64: the pre-flop rows once,
        every flop's rows after the deal (lossless layout) for every flop of the game."""
        tree = self.flop_tree(0)
        lossless = StrategyLayout.lossless(tree)
        decisions = tree.decision_nodes
        width = tree.num_children[decisions].astype(np.int64)
        hands = (lossless.rows >= 0).sum(axis=1)
        actions = width * hands
        pre = int(actions[tree.round[decisions] == 0].sum())
        betting = self.buckets.betting
        flops = len(list(combinations(range(betting.num_cards), int(betting.deal_size[0]))))
        return 8 * (pre + flops * (int(actions.sum()) - pre))

    def resolve(self, runner: ChunkRunner | None = None, progress: Callable[[int], None] | None = None,
                before: Evaluation | None = None) -> StreamedResolveResult:
        """Evaluate the blueprint (or take ``before``), gather the gift totals (reach gadgets), re-solve
        every flop and evaluate the combined strategy; ``progress(1)`` after each flop of each pass."""
        started = time.perf_counter()
        runner = runner or ChunkRunner()
        if before is None:
            before = self.evaluator.evaluate(self.strategy, runner=runner, progress=progress)
        shared = runner.share(self)
        items = [(shared, i) for i in range(len(self.items))]
        if self.options["gadget"] in REACH_GADGETS:
            self.gather_gifts(runner.imap(_gift_totals, items), progress)
            shared = runner.share(self)
            items = [(shared, i) for i in range(len(self.items))]
        entry_values, gadgets = None, 0
        for values, count in runner.imap(_flop_values, items):
            entry_values = values if entry_values is None else entry_values + values
            gadgets += count
            if progress is not None:
                progress(1)
        responses = [self.evaluator.pre_deal_value(self.strategy, p, BEST_RESPONSE, entry_values[p])
                     for p in (0, 1)]
        game_value = self.evaluator.pre_deal_value(self.strategy, 0, EXPECTED, entry_values[2])
        workers = runner.on_workers(_peak_rss)
        return StreamedResolveResult(before, Evaluation.of(responses, game_value), len(self.items), gadgets,
                                     time.perf_counter() - started, _peak_rss(), workers,
                                     self.unabstracted_bytes())


def _gift_totals(resolver: StreamedResolver, item: int):
    return resolver.flop_gift_totals(item)


def _flop_values(resolver: StreamedResolver, item: int):
    return resolver.flop_values(item)


def _peak_rss() -> int:
    """This process's peak resident set size, bytes (Linux reports KiB)."""
    return 1024 * resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
