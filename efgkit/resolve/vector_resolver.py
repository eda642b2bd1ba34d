"""``Resolver`` on the poker engine: every subgame after a public deal re-solved with hands as vectors.

The same procedure as ``resolver.Resolver`` (Burch §5.4: each subgame re-solved once per player
against the original blueprint, the unsafe gadget once for both), with the gadgets of
``vector_gadgets.py`` and the constraints of ``poker.subgame_roots``: unabstracted re-solving of
a blueprint on any ``StrategyLayout`` (a card abstraction's, an InfosetMap's). The combined
strategy — the blueprint before the deal, the re-solved subgames after — lives on the lossless
layout and is evaluated exactly (``poker.best_response.evaluate_strategy``), so this serves games
whose public tree fits; on Leduc every technique's NashConv is ``Resolver``'s on the GameTree
(tests/test_poker_subgame_roots.py).

Gifts (the reach gadgets, ``gadgets.REACH_GADGETS``) follow ``BlueprintValues.gifts``: along the
opponent's own path to a root, at each of its public decision nodes ``m`` (per hand ``h``) the
counterfactual best-response value lost by the action taken, ``CBV(m, h) - CBV(child, h) >= 0``,
unnormalised; split by reach among the subgames' elements ``(root, h)`` below that action, or
given whole (not split). With ``gift_bound="min-payoff"`` the best alternative ``CBV(m, h)`` is
replaced by Brown & Sandholm's lower bound (§5.2, "the minimum reachable payoff"),
``max_b LB(m, b, h)`` (``min_payoff_alternatives``): per re-solver hand ``y`` the least utility
for the opponent of any terminal below ``b`` — folds by the betting, showdowns by the least
outcome of ``h`` against ``y`` over every completion of the board (``poker.least_outcomes``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import ParameterError
from efgkit.games.tree_structure import subtree_utility_bounds
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.codes import FOLD, SHOWDOWN
from efgkit.poker.least_outcomes import least_outcomes, outcome_reach
from efgkit.poker.materialised.best_response import evaluate_strategy
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import CONSTRAINT_KINDS, BlueprintRoots, RootRanges, deal_roots
from efgkit.poker.materialised.suit_classes import SuitClasses
from efgkit.resolve.constraints import normalized_values
from efgkit.resolve.gadgets import REACH_GADGETS
from efgkit.resolve.resolver import GIFT_BOUNDS
from efgkit.resolve.vector_gadgets import VECTOR_GADGETS, VectorGadget


@dataclass(frozen=True)
class VectorResolveResult:
    """The combined strategy (float64 per action of ``layout``, the lossless layout), NashConv
    before and after, and the seconds of the whole run."""

    layout: StrategyLayout
    strategy: np.ndarray
    before: Evaluation
    after: Evaluation
    seconds: float


class VectorResolver:
    """Re-solve every subgame of round ``round_number`` of the blueprint ``strategy`` (float64 per
    action of ``layout`` over ``tree``) with ``gadget`` (``VECTOR_GADGETS``; the reach gadgets take
    ``split_gifts``), ``constraints`` ("br" or "selfplay": Brown & Sandholm's "Estimated" with the
    resolve gadget; with a distributional gadget "Estimated + Distributional") and ``iterations`` of
    CFR ``variant`` per gadget, for ``players``; ``spread``: distributional gadgets' factor on
    ``s(I) = |blueprint cfv(I) - CBV(I)|`` (``distributional.distributional_spread``);
    ``isomorphic``: re-solve one board per suit-isomorphism class and copy its strategy to the
    others (``suit_classes``; ParameterError from ``resolve`` if the blueprint is not
    suit-symmetric); ``gift_source``: a callable of (this resolver, ``RootRanges``) giving the
    gifts (float64 (roots, hands)) where the tree does not hold the whole game above the roots
    (the streamed re-solver's one-flop trees, ``streamed_resolver.PreDealGifts``); default: this
    tree's own best-response values (``gifts``)."""

    def __init__(self, tree: PublicTree, layout: StrategyLayout, strategy: np.ndarray, *,
                 gadget: str = "resolve", constraints: str = "br", iterations: int = 1000,
                 split_gifts: bool = True, variant: str = "cfr+", players: tuple[int, ...] = (0, 1),
                 round_number: int = 2, spread: float = 1.0, isomorphic: bool = False,
                 gift_bound: str = "cbv",
                 gift_source: Callable[[VectorResolver, RootRanges], np.ndarray] | None = None) -> None:
        if gadget not in VECTOR_GADGETS:
            raise ParameterError(f"the poker engine runs the gadgets {', '.join(VECTOR_GADGETS)}, "
                                 f"not {gadget!r}")
        if constraints not in CONSTRAINT_KINDS:
            raise ParameterError(f"constraints on the poker engine must be one of "
                                 f"{', '.join(CONSTRAINT_KINDS)}, got {constraints!r}")
        if iterations < 1:
            raise ParameterError(f"iterations must be >= 1, got {iterations}")
        if not players or any(p not in (0, 1) for p in players):
            raise ParameterError(f"players must be a non-empty subset of (0, 1), got {players!r}")
        self.tree, self.layout, self.strategy = tree, layout, np.ascontiguousarray(strategy, np.float64)
        self.gadget, self.constraints, self.iterations = gadget, constraints, int(iterations)
        self.split_gifts, self.variant, self.players = split_gifts, variant, tuple(dict.fromkeys(players))
        if not 0.0 <= spread < float("inf"):
            raise ParameterError(f"spread must be a finite number >= 0, got {spread}")
        self.spread = float(spread)
        if gift_bound not in GIFT_BOUNDS:
            raise ParameterError(f"gift_bound must be one of {', '.join(GIFT_BOUNDS)}, got {gift_bound!r}")
        self.gift_bound = gift_bound
        self.roots = deal_roots(tree, round_number)
        self.classes = SuitClasses(tree, self.roots) if isomorphic else None
        self.values = BlueprintRoots(layout, self.strategy)
        self.lossless = StrategyLayout.lossless(tree)
        self.gift_source = gift_source

    def combined_blueprint(self) -> np.ndarray:
        """The blueprint on the lossless layout: every (decision, hand) row plays its row of
        ``layout``."""
        return self.lossless.rows_from(self.layout, self.strategy)

    def ranges(self, player: int) -> RootRanges:
        """The roots' ``RootRanges`` for ``player``, raised by the gifts for the reach gadgets."""
        ranges = self.values.ranges(self.roots, player, self.constraints)
        if self.gadget not in REACH_GADGETS:
            return ranges
        gifts = self.gifts(ranges) if self.gift_source is None else self.gift_source(self, ranges)
        return ranges._replace(values=ranges.values + gifts)

    def spreads(self, player: int) -> np.ndarray:
        """Brown & Sandholm's ``s(I)`` times ``spread`` per (root, opponent hand), float64."""
        selfplay, best = (self.values.ranges(self.roots, player, kind) for kind in ("selfplay", "br"))
        return self.spread * np.abs(normalized_values(selfplay.values, selfplay.element_reach)
                                    - normalized_values(best.values, best.element_reach))

    def _check_symmetric(self, ranges: RootRanges) -> None:
        """ParameterError unless every root's ranges are its class representative's renamed."""
        broken = np.flatnonzero(~self.classes.symmetric(ranges))
        if broken.size:
            node = int(ranges.nodes[broken[0]])
            raise ParameterError(f"the blueprint is not suit-symmetric (public node {node} "
                                 f"and its representative differ beyond rounding): re-solve every board, "
                                 f"without suit isomorphism")

    def gifts(self, ranges: RootRanges, first_round: int = 0) -> np.ndarray:
        """Brown & Sandholm's gifts per (root, opponent hand), float64 (roots, hands), from the
        opponent's decisions of betting rounds ``first_round`` (0-based) and later."""
        tree, opponent = self.tree, 1 - ranges.player
        parent = public_parents(tree)
        paths = [[(node, child) for node, child in opponent_path(tree, parent, root, opponent)
                  if tree.round[node] >= first_round] for root in ranges.nodes.tolist()]
        shared: dict[tuple[int, int], np.ndarray] = {}  # the entering reach through each pair
        for i, path in enumerate(paths):
            for pair in path:
                shared[pair] = shared.get(pair, 0.0) + ranges.element_reach[i]
        best = self.values.counterfactual_values(opponent, "br")
        alternatives = best
        if self.gift_bound == "min-payoff":
            nodes = sorted({node for path in paths for node, _ in path})
            alternatives = min_payoff_alternatives(tree, self.values.reach[ranges.player], opponent, nodes)
        return gifts_along(paths, best, shared, ranges, self.split_gifts, alternatives)

    def resolve(self, progress: Callable[[int, int], None] | None = None) -> VectorResolveResult:
        """Re-solve every root for every player, combine on the lossless layout and evaluate;
        ``progress(done, total)`` after each gadget."""
        started = time.perf_counter()
        blueprint = self.combined_blueprint()
        before = evaluate_strategy(self.lossless, blueprint)
        combined = self.combined_strategy(progress, blueprint)
        after = evaluate_strategy(self.lossless, combined)
        return VectorResolveResult(self.lossless, combined, before, after, time.perf_counter() - started)

    def combined_strategy(self, progress: Callable[[int, int], None] | None = None,
                          blueprint: np.ndarray | None = None) -> np.ndarray:
        """The blueprint (``combined_blueprint``, or ``blueprint``) with every root re-solved for
        every player, float64 (lossless actions,), not evaluated."""
        combined = (self.combined_blueprint() if blueprint is None else blueprint).copy()
        groups = [self.players] if self.gadget == "unsafe" else [(p,) for p in self.players]
        kind = REACH_GADGETS.get(self.gadget, self.gadget)
        solved = np.arange(self.roots.shape[0]) if self.classes is None else self.classes.representatives
        done, total = 0, len(groups) * solved.shape[0]
        for players in groups:
            ranges = self.ranges(players[0])
            if self.classes is not None:
                self._check_symmetric(ranges)
            spreads = self.spreads(players[0]) if kind.startswith("distributional") else None
            for i in solved.tolist():
                node = int(ranges.nodes[i])
                done += 1
                if progress is not None:
                    progress(done, total)
                if not ranges.range[i].any():
                    continue  # the re-solver never reaches it: it keeps the blueprint
                solver = VectorGadget(self.tree, self.lossless, ranges, node, kind, variant=self.variant,
                                      spread=None if spreads is None else spreads[i])
                solver.iterate(self.iterations)
                for player in players:
                    actions, probabilities = solver.resolved_behavior(player)
                    combined[actions] = probabilities
            if self.classes is not None:
                images = self.classes.representative != np.arange(self.roots.shape[0])
                for j in np.flatnonzero(images).tolist():
                    if ranges.range[self.classes.representative[j]].any():
                        source, image = self.classes.image_actions(self.lossless, j, players)
                        combined[image] = combined[source]
        return combined


def public_parents(tree: PublicTree) -> np.ndarray:
    """Each public node's parent (-1 at the root), int64."""
    parent = np.full(tree.num_nodes, -1, np.int64)
    for node in np.flatnonzero(tree.num_children > 0).tolist():
        parent[tree.first_child[node]:tree.first_child[node] + tree.num_children[node]] = node
    return parent


def opponent_path(tree: PublicTree, parent: np.ndarray, root: int, opponent: int) -> list[tuple[int, int]]:
    """The (decision node, child on the path) pairs of ``opponent``'s decisions above ``root``,
    nearest first."""
    path, child = [], root
    while parent[child] >= 0:
        node = int(parent[child])
        if tree.kind[node] == opponent:
            path.append((node, child))
        child = node
    return path


def gifts_along(paths: list[list[tuple[int, int]]], best, shared, ranges: RootRanges,
                split: bool, alternatives=None) -> np.ndarray:
    """Brown & Sandholm's gifts per (root of ``ranges``, opponent hand): along each root's
    ``paths`` of (node, child) pairs, what the opponent loses by taking ``child`` (its best
    response ``best[child]``) against its best alternative ``alternatives[node]`` (default its
    best response ``best[node]``; ``min_payoff_alternatives`` for the lower bound), split among
    the roots below by their entering reach (``shared[node, child]`` is its total) when ``split``."""
    alternatives = best if alternatives is None else alternatives
    gifts = np.zeros_like(ranges.values)
    for i, path in enumerate(paths):
        for node, child in path:
            lost = np.maximum(alternatives[node] - best[child], 0.0)
            if split:
                total = shared[node, child]
                lost = np.divide(lost * ranges.element_reach[i], total, out=np.zeros_like(lost),
                                 where=total > 0)
            gifts[i] += lost
    return gifts


def least_payoffs(betting: BettingTree, player: int) -> np.ndarray:
    """float64 (3, betting nodes): the least utility for ``player`` of any terminal below each
    betting node (itself included) when its showdowns are lost, tied or won (rows ``s + 1`` for
    ``least_outcomes``' ``s``); a fold pays by the betting alone."""
    kind, contribution = betting.kind, betting.contribution
    folder = np.maximum(betting.folder, 0).astype(np.int64)
    folded = contribution[np.arange(betting.num_nodes), folder]
    fold = np.where(folder == player, -contribution[:, player], folded)
    showdown = (-contribution[:, player], np.zeros(betting.num_nodes), contribution[:, 1 - player])
    internal = np.flatnonzero(betting.num_children > 0).astype(np.int32)
    least = np.empty((3, betting.num_nodes))
    for s, paid in enumerate(showdown):
        utility = np.where(kind == FOLD, fold, np.where(kind == SHOWDOWN, paid, np.inf))
        least[s] = subtree_utility_bounds(internal, betting.first_child, betting.num_children, utility)[0]
    return least


def min_payoff_alternatives(tree: PublicTree, reach: np.ndarray, opponent: int, nodes,
                            tables: dict[int, np.ndarray] | None = None) -> dict[int, np.ndarray]:
    """The lower bound on the opponent's best alternative at each of its decision ``nodes``
    (public nodes): per opponent hand x, float64 (hands,), ``max_b LB(node, b, x)`` with ``LB =
    chance weight · Σ_y reach[node, y] · (the least utility for the opponent of any terminal
    below b, hands x and y, any completion of the board)`` — ``BlueprintValues.
    min_payoff_action_values`` on the public tree. ``reach`` float64 (nodes, hands): the
    re-solver's own blueprint reach. One least-outcome table per board, held one at a time, or
    kept in ``tables`` (board -> table) when the caller passes a dict to share them between calls."""
    betting = tree.betting_tree
    least = least_payoffs(betting, opponent)
    deck = tree.game.card_structure
    final_size = int(betting.deal_size.sum())
    nodes = np.asarray(nodes, np.int64)
    out, per_outcome = {}, np.zeros((3, tree.num_hands))
    for board in np.unique(tree.board[nodes]).tolist():
        outcome = None if tables is None else tables.get(board)
        if outcome is None:
            cards = np.array(tree.board_cards[board], np.int64)
            outcome = least_outcomes(tree.hand_cards, tree.hand_mask, cards, final_size, tree.num_cards,
                                     deck.num_ranks, deck.num_suits)
            if tables is not None:
                tables[board] = outcome
        for node in nodes[tree.board[nodes] == board].tolist():
            outcome_reach(outcome, reach[node], tree.valid_hands(node), per_outcome)
            children = tree.betting[tree.first_child[node] + np.arange(tree.num_children[node])]
            values = least[:, children].T @ per_outcome  # (children, hands)
            out[node] = float(tree.chance_weight[node]) * values.max(axis=0)
    return out
