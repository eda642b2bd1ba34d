"""Compile games into GameTrees.

Two routes lead to the same flat arrays:

* ``build_tree(game)`` walks any object implementing the Game protocol breadth-first.
  It is the reference: every game can be built this way, and it checks the rules as it
  goes (probabilities, consistent infosets, finite utilities).
* ``tree_from_preorder(...)`` finishes arrays that a fast, game-specific generator
  emitted in depth-first preorder (a numba kernel, typically; ``compile_preorder`` runs
  one). A stable sort by depth turns preorder into breadth-first order with contiguous
  children; infoset and public codes (int64) become ids numbered by first appearance.

Both stop early with TreeTooLargeError when the node limit would be exceeded.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from efgkit.errors import GameDefinitionError, TreeTooLargeError
from efgkit.games.numbering import ids_by_first_appearance
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL, Game
from efgkit.games.tree import GameTree
from efgkit.io.budget import memory_budget
from efgkit.io.sizes import human_bytes

BUILD_BYTES_PER_NODE = 150
"""Peak bytes a build takes per node (poker(bets=2,raises=2,cap=6): 7.25 GB for 49.8M nodes)."""
PROBABILITY_TOLERANCE = 1e-9


def node_limit_from_env() -> int:
    """The node limit: EFGKIT_NODE_LIMIT if set, else the memory budget over the bytes a build
    takes per node (checked before anything is allocated)."""
    raw = os.environ.get("EFGKIT_NODE_LIMIT")
    if raw is None:
        return memory_budget() // BUILD_BYTES_PER_NODE
    try:
        return int(raw)
    except ValueError as exc:
        raise GameDefinitionError(f"EFGKIT_NODE_LIMIT must be an integer, got {raw!r}") from exc


def _too_large(spec: str, limit: int, count: int | None = None) -> TreeTooLargeError:
    size = f"{count:,} nodes, more than" if count is not None else "more than"
    needs = f", about {human_bytes(count * BUILD_BYTES_PER_NODE)} to build" if count is not None else ""
    return TreeTooLargeError(
        f"game {spec!r} has {size} {limit:,} nodes (the node limit: a memory budget of about "
        f"{human_bytes(limit * BUILD_BYTES_PER_NODE)}{needs}); raise it with --node-limit, "
        f"EFGKIT_NODE_LIMIT or EFGKIT_MEMORY_BUDGET if this machine has the memory"
    )


def checked_node_limit(spec: str, num_nodes: int, node_limit: int | None) -> int:
    """The node limit in force; raises TreeTooLargeError before anything is allocated if a
    fast builder's exact node count exceeds it."""
    limit = node_limit_from_env() if node_limit is None else node_limit
    if num_nodes > limit:
        raise _too_large(spec, limit, num_nodes)
    return limit


class Preorder(NamedTuple):
    """What a fast generator's kernel writes, one entry per node in depth-first preorder
    (nodes,): ``kind`` int8, ``depth`` int16, ``num_children`` int16, ``chance_prob`` float64
    (of the edge into the node), ``utility`` float64 (player 0, terminals), ``infoset_code``
    int64 (-1 off decision nodes) and ``public_code`` int64: ``tree_from_preorder``'s arrays
    (``**preorder._asdict()``)."""

    kind: np.ndarray
    depth: np.ndarray
    num_children: np.ndarray
    chance_prob: np.ndarray
    utility: np.ndarray
    infoset_code: np.ndarray
    public_code: np.ndarray


def allocate_preorder(num_nodes: int) -> Preorder:
    """Empty preorder arrays of ``num_nodes`` entries for a fast generator's kernel; chance
    probabilities start at 1 and utilities at 0."""
    dtypes = (np.int8, np.int16, np.int16, np.float64, np.float64, np.int64, np.int64)
    preorder = Preorder(*(np.empty(num_nodes, dtype) for dtype in dtypes))
    preorder.chance_prob[:] = 1.0
    preorder.utility[:] = 0.0
    return preorder


def compile_preorder(game: Game, num_nodes: int, node_limit: int | None, progress: bool,
                     emit: Callable[[Preorder], tuple[int, dict]]) -> GameTree:
    """``game``'s GameTree from a fast generator: ``emit(preorder)`` fills
    ``allocate_preorder(num_nodes)`` (after the node limit is checked) and returns the number
    of nodes it wrote and ``tree_from_preorder``'s describers (``describe_infoset``,
    ``action_labels_of``, optionally ``describe_public``)."""
    limit = checked_node_limit(game.spec, num_nodes, node_limit)
    from efgkit.io.progress import progress_bar  # lazily: `efgkit games` lists without tqdm
    with progress_bar(total=2, desc=f"building {game.spec}", enabled=progress) as bar:
        preorder = allocate_preorder(num_nodes)
        written, describers = emit(preorder)
        if written != num_nodes:  # a bug, not bad input: the two counts are one rule set
            raise RuntimeError(f"{game.spec}: the kernel wrote {written} nodes, the count is {num_nodes}")
        bar.update(1)
        tree = tree_from_preorder(game.spec, **preorder._asdict(), **describers, game=game, node_limit=limit)
        bar.update(1)
    return tree


def build_tree(game: Game, *, node_limit: int | None = None, progress: bool = False) -> GameTree:
    """Compile a protocol game breadth-first into a GameTree, validating its rules."""
    limit = node_limit_from_env() if node_limit is None else node_limit
    spec = getattr(game, "spec", type(game).__name__)
    kinds: list[int] = []
    depth: list[int] = [0]
    infoset_code: list[int] = []
    num_children: list[int] = []
    public_state: list[int] = []
    chance_prob: list[float] = [1.0]
    utility: list[float] = []
    infoset_ids: dict[str, int] = {}
    infoset_player: list[int] = []
    infoset_actions: list[tuple[str, ...]] = []
    public_ids: dict[object, int] = {}

    states: list[object] = [game.initial_state()]
    from efgkit.io.progress import progress_bar  # lazily: `efgkit games` lists without tqdm
    bar = progress_bar(desc=f"building {spec}", unit=" nodes", enabled=progress, mininterval=0.5)
    index = 0
    while index < len(states):
        state = states[index]
        states[index] = None  # free memory as the frontier advances
        player = game.current_player(state)
        public_state.append(public_ids.setdefault(game.public_state_key(state), len(public_ids)))
        if player == TERMINAL:
            value = float(game.terminal_utility(state))
            if not math.isfinite(value):
                raise GameDefinitionError(f"game {spec!r}: terminal utility {value} is not finite")
            kinds.append(TERMINAL)
            infoset_code.append(-1)
            num_children.append(0)
            utility.append(value)
        elif player == CHANCE:
            outcomes = list(game.chance_outcomes(state))
            probs = [float(p) for _, p in outcomes]
            if not outcomes or min(probs) < 0 or abs(sum(probs) - 1.0) > PROBABILITY_TOLERANCE:
                raise GameDefinitionError(
                    f"game {spec!r}: chance outcomes {outcomes!r} are empty, negative or do "
                    f"not sum to 1"
                )
            kinds.append(CHANCE)
            infoset_code.append(-1)
            num_children.append(len(outcomes))
            utility.append(0.0)
            for label, _ in outcomes:
                states.append(game.apply(state, label))
            chance_prob.extend(probs)
        elif player in (PLAYER0, PLAYER1):
            actions = tuple(game.legal_actions(state))
            if not actions:
                raise GameDefinitionError(f"game {spec!r}: a non-terminal state has no actions")
            key = game.infoset_key(state)
            infoset = infoset_ids.get(key)
            if infoset is None:
                infoset = infoset_ids[key] = len(infoset_player)
                infoset_player.append(player)
                infoset_actions.append(actions)
            elif infoset_player[infoset] != player or infoset_actions[infoset] != actions:
                raise GameDefinitionError(
                    f"game {spec!r}: infoset {key!r} has states with different players or "
                    f"actions ({infoset_actions[infoset]} vs {actions})"
                )
            kinds.append(player)
            infoset_code.append(infoset)
            num_children.append(len(actions))
            utility.append(0.0)
            for label in actions:
                states.append(game.apply(state, label))
            chance_prob.extend([1.0] * len(actions))
        else:
            raise GameDefinitionError(f"game {spec!r}: current_player returned {player!r}")
        depth.extend([depth[index] + 1] * num_children[-1])
        if len(states) > limit:
            bar.close()
            raise _too_large(spec, limit)
        index += 1
        if progress and index % 20_000 == 0:
            bar.update(20_000)
    bar.close()

    # tree_from_preorder sorts the nodes by depth, stably: breadth-first order stays as it is.
    keys, public_keys = list(infoset_ids), [str(key) for key in public_ids]
    return tree_from_preorder(
        spec, kind=np.array(kinds, np.int8), depth=np.array(depth), num_children=np.array(num_children),
        chance_prob=np.array(chance_prob, np.float64), utility=np.array(utility, np.float64),
        infoset_code=np.array(infoset_code, np.int64), public_code=np.array(public_state, np.int64),
        describe_infoset=keys.__getitem__, action_labels_of=infoset_actions.__getitem__,
        describe_public=public_keys.__getitem__, game=game, node_limit=limit)


def tree_from_preorder(
    spec: str,
    *,
    kind: np.ndarray,
    depth: np.ndarray,
    num_children: np.ndarray,
    chance_prob: np.ndarray,
    utility: np.ndarray,
    infoset_code: np.ndarray,
    public_code: np.ndarray,
    describe_infoset: Callable[[int], str],
    action_labels_of: Callable[[int], Sequence[str]],
    describe_public: Callable[[int], str] = str,
    game: object | None = None,
    node_limit: int | None = None,
) -> GameTree:
    """Finish a tree whose nodes a fast generator emitted in depth-first preorder.

    All arrays have one entry per node in preorder: ``kind`` (0/1/2/3), ``depth``,
    ``num_children``, ``chance_prob`` (of the edge into the node), ``utility`` (player 0,
    terminals), ``infoset_code`` (int64, equal within an infoset, -1 off decision nodes)
    and ``public_code`` (int64). ``describe_infoset(code)`` and ``action_labels_of(code)``
    give the readable key and action labels of one infoset; they are called once per
    infoset, never per node.
    """
    limit = node_limit_from_env() if node_limit is None else node_limit
    if kind.shape[0] > limit:
        raise _too_large(spec, limit)
    order = np.argsort(depth, kind="stable")
    kind = np.ascontiguousarray(kind[order], dtype=np.int8)
    children = np.ascontiguousarray(num_children[order])
    first_child = np.empty(kind.shape[0], dtype=np.int32)
    first_child[0] = 1
    np.cumsum(children[:-1], out=first_child[1:])
    first_child[1:] += 1
    first_child[kind == TERMINAL] = -1

    codes = np.asarray(infoset_code)[order]
    decision = np.flatnonzero(kind < 2)
    decision_infoset, first_index = ids_by_first_appearance(codes[decision])
    node_infoset = np.full(kind.shape[0], -1, dtype=np.int32)
    node_infoset[decision] = decision_infoset
    ordered_codes = codes[decision][first_index]
    representative = decision[first_index]
    infoset_player = kind[representative].astype(np.int8)
    num_actions = children[representative].astype(np.int32)
    if np.any(num_actions[node_infoset[decision]] != children[decision]) or np.any(
        infoset_player[node_infoset[decision]] != kind[decision]
    ):
        raise GameDefinitionError(f"game {spec!r}: an infoset has nodes with different actions")

    public_codes = np.asarray(public_code)[order]
    node_public_state, public_first = ids_by_first_appearance(public_codes)
    public_ordered = public_codes[public_first]

    labels: list[str] = []
    for code, count in zip(ordered_codes.tolist(), num_actions.tolist(), strict=True):
        actions = list(action_labels_of(code))
        if len(actions) != count:
            raise GameDefinitionError(f"game {spec!r}: action labels do not match infoset {code}")
        labels.extend(actions)
    tree = GameTree(
        spec=spec,
        node_kind=kind,
        node_infoset=node_infoset,
        node_first_child=first_child,
        node_num_children=_children_array(children, spec),
        node_public_state=node_public_state,
        node_chance_prob=np.ascontiguousarray(chance_prob[order], dtype=np.float64),
        node_utility=np.ascontiguousarray(utility[order], dtype=np.float64),
        infoset_player=infoset_player,
        infoset_num_actions=num_actions,
        infoset_action_offset=_offsets(num_actions),
        infoset_keys=[describe_infoset(code) for code in ordered_codes.tolist()],
        action_labels=labels,
        public_state_keys=[describe_public(code) for code in public_ordered.tolist()],
        game=game,
    )
    tree.validate()
    return tree


def _offsets(num_actions: np.ndarray) -> np.ndarray:
    offsets = np.zeros(num_actions.shape[0] + 1, dtype=np.int32)
    np.cumsum(num_actions, out=offsets[1:])
    return offsets


def _children_array(num_children, spec: str) -> np.ndarray:
    children = np.asarray(num_children)
    if children.size and children.max() > np.iinfo(np.int16).max:
        raise GameDefinitionError(f"game {spec!r}: a node has more than 32,767 children")
    return children.astype(np.int16)
