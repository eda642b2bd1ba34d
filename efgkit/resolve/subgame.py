"""Imperfect-information subgames: root histories, closure, and the opponent's root partition.

A subgame is a set of histories closed under descendants and under information-set
membership (Burch's thesis §5.2.1; Brown & Sandholm §1). efgkit builds one from its root
histories (``S_top``): every descendant belongs to it, and no infoset of either player may
have histories both inside and outside (``Subgame`` checks and names the offending
infoset). A game's public states give the natural subgames: the histories of one public
state plus their descendants (``subgame_at``).

**Rounds.** ``round_subgames(tree, r)`` is game independent: a chance node is *public*
when its children lie in at least two different public states (a board card; a private
deal keeps the public state), and the subgames of round ``r`` are the public states whose
histories all follow a public chance node that is the ``(r-1)``-th public chance event on
their path. In Leduc (rounds 1 and 2, the board dealt between them) round 2 has 30
subgames: 6 board cards x 5 round-1 sequences that did not fold.

**The opponent's augmented infosets** (Burch's root partition 𝓘_R, Brown's S_top infosets
of P1). The re-solving player's opponent may not act at the root, so its "infosets" there
are derived: two root histories belong to one element when an opponent infoset inside the
subgame contains descendants of both (union-find over the opponent's infosets). Under
perfect recall such roots share the opponent's own action sequence, so this never merges
roots the opponent can tell apart by its own play. A root below which the opponent never
acts is an element of its own (finer than necessary, which only adds constraints and is
safe). In Leduc each element is one opponent card.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree


class SubgameError(ParameterError):
    """The requested histories do not form a subgame (or no such public state exists)."""


@dataclass(frozen=True)
class AugmentedInfosets:
    """A partition of a subgame's root histories by what one player knows there.

    ``element_of_root`` (int32, one per root, in ``Subgame.root_nodes`` order) numbers the
    elements ``0..num_elements-1`` by first appearance; ``keys`` describes each element by
    the key of the player's first infoset inside it (or the root history when it has none).
    """

    player: int
    element_of_root: np.ndarray
    keys: tuple[str, ...]

    @property
    def num_elements(self) -> int:
        return len(self.keys)

    def roots_of(self, element: int) -> np.ndarray:
        return np.flatnonzero(self.element_of_root == element).astype(np.int32)


class Subgame:
    """The histories below ``root_nodes`` (int node ids of one GameTree), validated.

    Attributes: ``root_nodes`` (int32, sorted), ``nodes`` (int32, every history of the
    subgame in breadth-first order, ascending), ``node_root`` (int32 per entry of ``nodes``:
    the index of the root above it; ``root_of`` looks histories up in it, so the many
    subgames of a round never each hold an array of the whole tree's size), ``name`` (e.g.
    the public-state key).
    """

    def __init__(self, tree: GameTree, root_nodes: np.ndarray, name: str = "") -> None:
        roots = np.unique(np.asarray(root_nodes, dtype=np.int64))
        if roots.size == 0:
            raise SubgameError("a subgame needs at least one root history")
        if roots[0] < 0 or roots[-1] >= tree.num_nodes:
            raise SubgameError(f"root histories must be node ids in 0..{tree.num_nodes - 1}")
        if np.any(tree.node_kind[roots] == TERMINAL):
            raise SubgameError("a subgame root must not be a terminal history")
        self.tree = tree
        self.root_nodes = roots.astype(np.int32)
        self.name = name or f"subgame@{int(roots[0])}"
        root_index, overlap = _root_index(tree.node_first_child, tree.node_num_children,
                                          self.root_nodes, tree.num_nodes)
        if overlap >= 0:
            raise SubgameError(f"subgame {self.name!r}: root history {overlap} lies below another root")
        straddling = _straddling_infoset(tree.node_kind, tree.node_infoset, root_index,
                                         tree.num_infosets)
        if straddling >= 0:
            raise SubgameError(
                f"subgame {self.name!r} is not closed under information sets: infoset "
                f"{tree.infoset_keys[straddling]!r} has histories inside and outside it; "
                f"choose roots that include every history such an infoset can come from"
            )
        self.nodes = np.flatnonzero(root_index >= 0).astype(np.int32)
        self.node_root = root_index[self.nodes]

    def __repr__(self) -> str:
        return f"Subgame({self.name!r}, roots={self.num_roots}, histories={self.nodes.size})"

    @property
    def num_roots(self) -> int:
        return int(self.root_nodes.shape[0])

    def root_of(self, histories: np.ndarray) -> np.ndarray:
        """int32: the index of the root above each of ``histories`` (node ids inside the subgame)."""
        return self.node_root[np.searchsorted(self.nodes, histories)]

    def _root_index(self) -> np.ndarray:
        """int32 per tree node: the index of the root above it, -1 outside the subgame (computed
        each time, not kept)."""
        index = np.full(self.tree.num_nodes, -1, np.int32)
        index[self.nodes] = self.node_root
        return index

    @cached_property
    def preorder(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nodes, depth below their root, segment offsets): each root's subtree in preorder.

        Root ``i``'s subtree is ``nodes[offsets[i]:offsets[i+1]]``; gadget builders copy
        these segments below their own head nodes.
        """
        tree = self.tree
        return _subtree_preorder(tree.node_first_child, tree.node_num_children, self.root_nodes,
                                 self.nodes.shape[0])

    def augmented_infosets(self, player: int) -> AugmentedInfosets:
        """Partition the roots by what ``player`` knows (union-find over its infosets inside)."""
        tree = self.tree
        element, first_infoset = _union_roots_by_infoset(
            tree.node_kind, tree.node_infoset, self.nodes, self._root_index(), player,
            self.num_roots, tree.num_infosets)
        keys = []
        for e in range(int(element.max()) + 1):
            root = int(np.flatnonzero(element == e)[0])
            keys.append(self._describe_root(root, int(first_infoset[root]), player))
        return AugmentedInfosets(player, element, tuple(keys))

    def _describe_root(self, root: int, first_infoset: int, player: int) -> str:
        tree = self.tree
        if first_infoset >= 0:
            return tree.infoset_keys[first_infoset]
        node = int(self.root_nodes[root])
        last = int(tree.node_last_action[player, node])
        if last < 0:
            return f"root history {node}"
        infoset = int(tree.action_infoset[last])
        return f"{tree.infoset_keys[infoset]} -> {tree.action_labels[last]} (history {node})"


def public_state_id(tree: GameTree, public_state: str | int) -> int:
    """The id of a public state given by key or id; SubgameError if there is none."""
    if isinstance(public_state, str):
        try:
            return tree.public_state_keys.index(public_state)
        except ValueError:
            raise SubgameError(f"game {tree.spec!r} has no public state {public_state!r}") from None
    state = int(public_state)
    if not 0 <= state < max(len(tree.public_state_keys), int(tree.node_public_state.max()) + 1):
        raise SubgameError(f"game {tree.spec!r} has no public state {state}")
    return state


def subgame_at(tree: GameTree, public_state: str | int) -> Subgame:
    """The subgame rooted at one public state (by key or id): its histories whose parent lies
    in another public state, plus all descendants."""
    state = public_state_id(tree, public_state)
    members = np.flatnonzero(tree.node_public_state == state)
    parents = tree.node_parent[members]
    roots = members[(parents < 0) | (tree.node_public_state[np.maximum(parents, 0)] != state)]
    name = tree.public_state_keys[state] if state < len(tree.public_state_keys) else str(state)
    return Subgame(tree, roots, name)


def round_subgames(tree: GameTree, round_number: int) -> list[Subgame]:
    """Every subgame starting right after the ``(round_number-1)``-th public chance event.

    See the module docstring for the rule. Round 1 has no such event; ask for round >= 2.
    Public states whose histories are all terminal are not subgames and are skipped.
    """
    if round_number < 2:
        raise SubgameError(f"round subgames start after a public chance event: round must be "
                           f">= 2, got {round_number}")
    events = _public_chance_events(tree.node_kind, tree.node_first_child, tree.node_num_children,
                                   tree.node_public_state)
    parents = tree.node_parent
    candidates = np.flatnonzero(
        (parents >= 0) & (tree.node_kind != TERMINAL)
        & (events == round_number - 1)
        & (tree.node_kind[np.maximum(parents, 0)] == CHANCE)
        & (events[np.maximum(parents, 0)] == round_number - 2)
    )
    states = np.unique(tree.node_public_state[candidates])
    subgames = [subgame_at(tree, int(state)) for state in states]
    if not subgames:
        raise SubgameError(f"game {tree.spec!r} has no public chance event before round "
                           f"{round_number}")
    return subgames


# ---------------------------------------------------------------------- kernels
@numba.njit(cache=True, no_cfunc_wrapper=True)
def _root_index(first_child, num_children, roots, num_nodes):
    """Index of the root above every node: int32 (nodes,), -1 outside every subtree, and
    the first node found below two roots (-1: none). ``first_child`` int32 and
    ``num_children`` int16 (nodes,) as in GameTree; ``roots`` int32 (roots,), sorted."""
    index = np.full(num_nodes, -1, np.int32)
    for i in range(roots.shape[0]):
        index[roots[i]] = i
    for node in range(num_nodes):
        r = index[node]
        if r < 0:
            continue
        start = first_child[node]
        for k in range(num_children[node]):
            if index[start + k] >= 0:
                return index, start + k
            index[start + k] = r
    return index, -1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _straddling_infoset(kind, infoset, root_index, num_infosets):
    """First infoset with histories both inside and outside the subgame (-1: none).
    ``kind`` int8 and ``infoset`` int32 (nodes,) as in GameTree; ``root_index`` int32
    (nodes,) from ``_root_index``."""
    inside = np.zeros(num_infosets, np.int64)
    outside = np.zeros(num_infosets, np.int64)
    for node in range(kind.shape[0]):
        if kind[node] < 2:
            if root_index[node] >= 0:
                inside[infoset[node]] += 1
            else:
                outside[infoset[node]] += 1
    for i in range(num_infosets):
        if inside[i] > 0 and outside[i] > 0:
            return i
    return -1


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _subtree_preorder(first_child, num_children, roots, total):
    """Each root's subtree in depth-first preorder: ``nodes`` int32 (total,), their
    ``depth`` int16 below the root, and int64 (roots + 1,) segment offsets. ``first_child``
    int32 and ``num_children`` int16 (nodes,); ``roots`` int32 (roots,); ``total`` the
    number of histories below all roots."""
    nodes = np.empty(total, np.int32)
    depth = np.empty(total, np.int16)
    offsets = np.zeros(roots.shape[0] + 1, np.int64)
    stack = np.empty(total + 1, np.int32)
    stack_depth = np.empty(total + 1, np.int16)
    count = 0
    for i in range(roots.shape[0]):
        stack[0] = roots[i]
        stack_depth[0] = 0
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            d = stack_depth[top]
            nodes[count] = node
            depth[count] = d
            count += 1
            start = first_child[node]
            for k in range(num_children[node] - 1, -1, -1):  # first child on top of the stack
                stack[top] = start + k
                stack_depth[top] = d + 1
                top += 1
        offsets[i + 1] = count
    return nodes, depth, offsets


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _find(parent, x):
    """Union-find root of ``x`` in ``parent`` int64 (elements,), halving paths on the way."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _union_roots_by_infoset(kind, infoset, nodes, root_index, player, num_roots, num_infosets):
    """Join roots whose subtrees share an infoset of ``player``: the augmented-infoset
    element int32 (roots,) of each root (numbered by first root) and the first infoset of
    ``player`` met below each root, int64 (roots,) (-1: none). ``kind`` int8 and
    ``infoset`` int32 (tree nodes,); ``nodes`` int32: the subgame's histories;
    ``root_index`` int32 (tree nodes,) from ``_root_index``."""
    parent = np.arange(num_roots)
    first_root = np.full(num_infosets, -1, np.int64)
    first_infoset = np.full(num_roots, -1, np.int64)
    for j in range(nodes.shape[0]):
        node = nodes[j]
        if kind[node] != player:
            continue
        r = root_index[node]
        i = infoset[node]
        if first_infoset[r] < 0:
            first_infoset[r] = i
        if first_root[i] < 0:
            first_root[i] = r
        else:
            a = _find(parent, r)
            b = _find(parent, first_root[i])
            if a != b:
                parent[max(a, b)] = min(a, b)
    element = np.full(num_roots, -1, np.int32)
    label = np.full(num_roots, -1, np.int32)
    count = 0
    for r in range(num_roots):
        top = _find(parent, r)
        if label[top] < 0:
            label[top] = count
            count += 1
        element[r] = label[top]
    return element, first_infoset


@numba.njit(cache=True, no_cfunc_wrapper=True)
def _public_chance_events(kind, first_child, num_children, public_state):
    """int32 (nodes,): the number of public chance events (chance nodes whose outcomes
    lead to different public states) on the path to each node. Node arrays as in GameTree:
    ``kind`` int8, ``first_child`` int32, ``num_children`` int16, ``public_state`` int32."""
    events = np.zeros(kind.shape[0], np.int32)
    for node in range(kind.shape[0]):
        start = first_child[node]
        m = num_children[node]
        step = 0
        if kind[node] == 2:
            for k in range(1, m):
                if public_state[start + k] != public_state[start]:
                    step = 1
                    break
        for k in range(m):
            events[start + k] = events[node] + step
    return events
