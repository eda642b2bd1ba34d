"""Decision-time re-solving on the public-tree engine: a player that re-solves the subgame it reaches.

Before the first board deal the player plays its blueprint (any ``StrategyLayout``: a card
abstraction's bucket strategy, an InfosetMap's). At a decision after a deal it re-solves the
subgame rooted at the last deal it has seen — the public node right after it: the betting that
entered the round x the board — with a gadget of ``vector_gadgets`` (Burch's safe ``resolve`` by
default, or ``maxmargin``; ``unsafe`` for comparison), the blueprint's ranges and the opponent's
counterfactual values at that root as the constraints (``BlueprintRoots``, the values of
``VectorResolver``), both players' hands unabstracted, and plays the re-solved strategy at its
node and hand (Brown & Sandholm 2017 §1, Burch §5.4: re-solving against the original blueprint,
not nested). A root's re-solve depends only on the public root and the player, so the first
decision there solves it and later ones reuse it (the last ``cache`` re-solves are kept); the
player's complete strategy is therefore ``VectorResolver``'s combined strategy for that player,
which ``resolved_strategy`` gives for exact evaluation. ``seconds`` records the time of every
decision (re-solve included).
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np

from efgkit.errors import ParameterError
from efgkit.poker.codes import DEAL
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_subtree import PublicSubtree
from efgkit.poker.materialised.public_tree import PublicTree
from efgkit.poker.materialised.subgame_roots import BlueprintRoots
from efgkit.resolve.vector_gadgets import VECTOR_GADGETS, VectorGadget
from efgkit.resolve.vector_resolver import VectorResolver

DECISION_TIME_GADGETS = ("resolve", "maxmargin", "unsafe")


class DecisionTimeResolver:
    """Re-solves, at decision time, the subgame after the last board deal (module docstring).

    ``layout`` and ``strategy`` (float64 per action of ``layout``) are the blueprint on ``tree``;
    ``gadget`` one of DECISION_TIME_GADGETS; ``iterations`` of CFR ``variant`` per re-solve.
    """

    def __init__(
        self,
        tree: PublicTree,
        layout: StrategyLayout,
        strategy: np.ndarray,
        *,
        gadget: str = "resolve",
        iterations: int = 200,
        variant: str = "cfr+",
        cache: int = 8,
    ) -> None:
        if gadget not in DECISION_TIME_GADGETS or gadget not in VECTOR_GADGETS:
            raise ParameterError(
                f"decision-time re-solving runs the gadgets {', '.join(DECISION_TIME_GADGETS)}, "
                f"not {gadget!r}"
            )
        if iterations < 1:
            raise ParameterError(f"iterations must be >= 1, got {iterations}")
        if cache < 1:
            raise ParameterError(f"the cache must hold at least one re-solve, got {cache}")
        self.tree, self.layout, self.strategy = tree, layout, np.ascontiguousarray(strategy, np.float64)
        self.gadget, self.iterations, self.variant, self.cache = gadget, int(iterations), variant, int(cache)
        self.values = BlueprintRoots(layout, self.strategy)
        self.lossless = StrategyLayout.lossless(tree)
        self.seconds: list[float] = []
        self.resolves = 0
        self._blueprint: np.ndarray | None = None
        self._solved: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._hand_index = {tuple(cards): h for h, cards in enumerate(tree.hand_cards.tolist())}
        self._board_index = {tuple(cards): b for b, cards in enumerate(tree.board_cards)}
        decisions = tree.decision_nodes
        self._node_of = {
            (int(b), int(d)): int(n)
            for n, b, d in zip(
                decisions.tolist(),
                tree.betting[decisions].tolist(),
                tree.board[decisions].tolist(),
                strict=True,
            )
        }
        self._parent = np.full(tree.num_nodes, -1, np.int64)
        for node in np.flatnonzero(tree.num_children > 0).tolist():
            first = int(tree.first_child[node])
            self._parent[first : first + int(tree.num_children[node])] = node

    def probabilities(self, hand: tuple[int, ...], board: tuple[int, ...], history: str) -> np.ndarray:
        """The action probabilities at the decision with hole cards ``hand`` (ascending card
        ids), ``board`` (the board cards so far, deal order) and betting ``history`` (the
        betting tree's history string): the blueprint's before the first deal, the re-solved
        subgame's after it."""
        began = time.perf_counter()
        node = self.public_node(board, history)
        hand_index = self._hand_index.get(tuple(sorted(hand)))
        if hand_index is None:
            raise ParameterError(f"{hand} is not a hand of {self.tree.game.spec}")
        root = self.subgame_root(node)
        player = int(self.tree.kind[node])
        if root < 0:
            layout, strategy = self.layout, self.strategy
        else:
            layout, strategy = self.lossless, self._resolved(root, player)
        offset = int(layout.slot_offset[self.tree.decision_index[node], hand_index])
        if offset < 0:
            raise ParameterError(f"hand {hand} meets the board {board}")
        row = strategy[offset : offset + int(self.tree.num_children[node])].copy()
        self.seconds.append(time.perf_counter() - began)
        return row

    def public_node(self, board: tuple[int, ...], history: str) -> int:
        """The public decision node of a betting history on a board."""
        betting = self.tree.betting_tree.node_of_history.get(history)
        board_id = self._board_index.get(tuple(board))
        node = None if betting is None or board_id is None else self._node_of.get((betting, board_id))
        if node is None:
            raise ParameterError(
                f"no decision of {self.tree.game.spec} has betting {history!r} on board {board}"
            )
        return node

    def subgame_root(self, node: int) -> int:
        """The public node right after the last board deal above ``node`` (-1: none yet)."""
        child = node
        while self._parent[child] >= 0:
            parent = int(self._parent[child])
            if self.tree.kind[parent] == DEAL:
                return child
            child = parent
        return -1

    def resolved_strategy(self, roots: np.ndarray, player: int) -> np.ndarray:
        """``player``'s complete strategy on the lossless layout: the blueprint, and the re-solve
        of every root in ``roots`` (the subgames of one round) where the player reaches it."""
        combined = self.lossless_blueprint().copy()
        for root in np.asarray(roots, np.int64).tolist():
            solved = self._resolved(root, player)
            actions = _subtree_actions(self.lossless, self.tree, root, player)
            combined[actions] = solved[actions]
        return combined

    def lossless_blueprint(self) -> np.ndarray:
        """The blueprint on the lossless layout (``VectorResolver.combined_blueprint``), once."""
        if self._blueprint is None:
            self._blueprint = VectorResolver(self.tree, self.layout, self.strategy).combined_blueprint()
        return self._blueprint

    def _resolved(self, root: int, player: int) -> np.ndarray:
        """The re-solved average strategy (lossless layout) of ``player`` below ``root``."""
        key = (root, player)
        if key in self._solved:
            self._solved.move_to_end(key)
            return self._solved[key]
        ranges = self.values.ranges(np.array([root], np.int64), player, "br")
        if not ranges.range[0].any():
            solved = self.lossless_blueprint()  # the player never gets here: its blueprint
        else:
            solver = VectorGadget(self.tree, self.lossless, ranges, root, self.gadget, variant=self.variant)
            solved = solver.iterate(self.iterations).average_strategy()
            self.resolves += 1
        self._solved[key] = solved
        if len(self._solved) > self.cache:
            self._solved.popitem(last=False)
        return solved


def _subtree_actions(layout: StrategyLayout, tree: PublicTree, root: int, player: int) -> np.ndarray:
    """The lossless layout's actions of ``player``'s rows at the decisions below ``root``."""
    nodes = PublicSubtree(tree, root, np.zeros((2, tree.num_hands))).origin
    decisions = nodes[(tree.kind[nodes] == player)]
    rows = layout.rows[tree.decision_index[decisions]]
    rows = rows[rows >= 0]
    offsets = layout.action_offset
    return np.concatenate(
        [np.arange(offsets[r], offsets[r + 1]) for r in rows.tolist()] or [np.zeros(0, np.int64)]
    ).astype(np.int64)
