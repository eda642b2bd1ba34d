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
decision there solves it and later ones reuse it (the last ``cache`` re-solves are kept, each
as the player's subgame rows only); the player's complete strategy is therefore
``VectorResolver``'s combined strategy for that player, which ``resolved_strategy`` gives for
exact evaluation. ``seconds`` records the time of every decision (re-solve included) and
``decision_kinds`` whether it played the blueprint, re-solved, or read a cached re-solve.
``check_game_fits`` refuses, before anything is built, a game whose public tree the player
could not hold.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np

from efgkit.errors import GameDefinitionError, ParameterError
from efgkit.games.poker import LimitPoker
from efgkit.io.budget import check_memory
from efgkit.poker.betting_tree import BettingTree, private_hands
from efgkit.poker.codes import DEAL
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.public_subtree import PublicSubtree
from efgkit.poker.materialised.public_tree import PublicTree, public_node_count
from efgkit.poker.materialised.subgame_roots import BlueprintRoots
from efgkit.resolve.vector_gadgets import VECTOR_GADGETS, VectorGadget
from efgkit.resolve.vector_resolver import VectorResolver, public_parents

DECISION_TIME_GADGETS = ("resolve", "maxmargin", "unsafe")
MAX_PUBLIC_NODES = 5_000_000
"""``PublicTree``'s default limit."""
PUBLIC_BLOCKS = 9
"""(public nodes x hands) float64 blocks the player holds: both players' blueprint reach in the
pass's buffer and in the kept copy (four), the value buffer, both players' best-response values
(two), and the lossless layout and blueprint (about one each)."""


def check_game_fits(game: LimitPoker) -> None:
    """GameDefinitionError or ParameterError (one line) unless the decision-time player of
    ``game`` fits: a public tree of at most MAX_PUBLIC_NODES nodes whose PUBLIC_BLOCKS (nodes x
    hands) blocks fit the memory budget; counted without building the tree."""
    nodes = public_node_count(BettingTree(game))
    if nodes > MAX_PUBLIC_NODES:
        raise GameDefinitionError(f"{game.spec}: the public tree has {nodes:,} nodes, more than the "
                                  f"{MAX_PUBLIC_NODES:,} decision-time re-solving holds")
    cards = game.card_structure
    hands = private_hands(cards.num_cards, cards.private_cards_per_player)[0].shape[0]
    check_memory(8 * PUBLIC_BLOCKS * nodes * hands,
                 f"decision-time re-solving of {game.spec} ({nodes:,} public nodes x {hands:,} hands)",
                 "re-solve a smaller game (fewer ranks or raises)")


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
        for opponent in (0, 1):  # the constraints' whole-tree passes, once, before play
            self.values.counterfactual_values(opponent, "br")
        self.lossless = StrategyLayout.lossless(tree)
        self.seconds: list[float] = []
        self.cpu_seconds: list[float] = []
        """Per decision, the process's CPU seconds (on a loaded machine ``seconds`` include waits)."""
        self.decision_kinds: list[str] = []
        """Per decision: "blueprint" (before the first deal), "resolved" (re-solved its subgame
        now) or "cached" (a kept re-solve)."""
        self.resolves = 0
        self._blueprint: np.ndarray | None = None
        self._solved: OrderedDict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
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
        self._parent = public_parents(tree)

    def probabilities(self, hand: tuple[int, ...], board: tuple[int, ...], history: str) -> np.ndarray:
        """The action probabilities at the decision with hole cards ``hand`` (ascending card
        ids), ``board`` (the board cards so far, in deal order) and betting ``history`` (the
        betting tree's history string): the blueprint's before the first deal, the re-solved
        subgame's after it."""
        began, began_cpu = time.perf_counter(), time.process_time()
        node = self.public_node(board, history)
        hand_index = self._hand_index.get(tuple(sorted(hand)))
        if hand_index is None:
            raise ParameterError(f"{hand} is not a hand of {self.tree.game.spec}")
        root = self.subgame_root(node)
        player = int(self.tree.kind[node])
        width = int(self.tree.num_children[node])
        layout = self.layout if root < 0 else self.lossless
        offset = int(layout.slot_offset[self.tree.decision_index[node], hand_index])
        if offset < 0:
            raise ParameterError(f"hand {hand} meets the board {board}")
        if root < 0:
            kind, row = "blueprint", self.strategy[offset : offset + width].copy()
        else:
            kind = "cached" if (root, player) in self._solved else "resolved"
            actions, probabilities = self._resolved(root, player)
            at = int(np.searchsorted(actions, offset))
            row = probabilities[at : at + width].copy()
        self.seconds.append(time.perf_counter() - began)
        self.cpu_seconds.append(time.process_time() - began_cpu)
        self.decision_kinds.append(kind)
        return row

    def timing(self) -> dict:
        """Time per decision so far: the count, and the median and p95 of wall and CPU seconds,
        of all decisions (``all_``) and of each kind (``decision_kinds``); the re-solves."""
        kinds = np.array(self.decision_kinds)
        out: dict = {"decisions": len(self.seconds), "resolves": self.resolves}
        for name in ("all", "blueprint", "resolved", "cached"):
            chosen = np.ones(kinds.shape, bool) if name == "all" else kinds == name
            out[f"{name}_decisions"] = int(chosen.sum())
            for clock, values in (("seconds", self.seconds), ("cpu_seconds", self.cpu_seconds)):
                picked = np.array(values)[chosen]
                out[f"{name}_{clock}_median"] = float(np.median(picked)) if picked.size else None
                out[f"{name}_{clock}_p95"] = float(np.percentile(picked, 95)) if picked.size else None
        return out

    def public_node(self, board: tuple[int, ...], history: str) -> int:
        """The public decision node of a betting history on a board (its cards in deal order; any
        order within one deal)."""
        betting = self.tree.betting_tree.node_of_history.get(history)
        cards, at = [], 0
        for size in self.tree.game.card_structure.public_cards_per_round[1:]:  # each deal sorted
            cards += sorted(board[at:at + size])
            at += size
        board_id = self._board_index.get(tuple(cards)) if at >= len(board) else None
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
            actions, probabilities = self._resolved(root, player)
            combined[actions] = probabilities
        return combined

    def lossless_blueprint(self) -> np.ndarray:
        """The blueprint on the lossless layout (``VectorResolver.combined_blueprint``), once."""
        if self._blueprint is None:
            self._blueprint = VectorResolver(self.tree, self.layout, self.strategy).combined_blueprint()
        return self._blueprint

    def _resolved(self, root: int, player: int) -> tuple[np.ndarray, np.ndarray]:
        """``player``'s re-solved average strategy below ``root``: (int64 lossless-layout actions,
        ascending; float64 probabilities)."""
        key = (root, player)
        if key in self._solved:
            self._solved.move_to_end(key)
            return self._solved[key]
        ranges = self.values.ranges(np.array([root], np.int64), player, "br")
        if not ranges.range[0].any():  # the player never gets here: its blueprint
            actions = _subtree_actions(self.lossless, self.tree, root, player)
            probabilities = self.lossless_blueprint()[actions]
        else:
            solver = VectorGadget(self.tree, self.lossless, ranges, root, self.gadget, variant=self.variant)
            actions, probabilities = solver.iterate(self.iterations).resolved_behavior(player)
            self.resolves += 1
        order = np.argsort(actions, kind="stable")
        solved = (actions[order], probabilities[order])
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
