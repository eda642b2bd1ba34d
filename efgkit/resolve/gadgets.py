"""Re-solving gadgets: each is a new GameTree around a copy of the subgame, solved by the
ordinary solvers; only the re-solving player's strategy inside the copy is kept.

Notation: ``player`` re-solves, ``o`` is its opponent, ``r`` a root history, ``I`` an
augmented opponent infoset (RootConstraints.elements), ``π(r) = π_{-o}(r)``,
``k = Σ_r π(r)``, ``c_I`` unnormalised constraint values, ``alt(I) = c_I / π(I)``.
Utilities are stored for player 0 as always; "pays c to o" means player-0 utility ``c`` if
``o == 0`` and ``-c`` otherwise.

* ``unsafe_gadget`` (Billings; Ganzfried & Sandholm; Brown & Sandholm §4): a chance node
  picks ``r`` with the blueprint's full reach ``π^σ(r) / Σ π^σ``; both players are free.
* ``resolve_gadget`` (Burch, Johanson & Bowling 2014; thesis §5.2.4 / Fig. 5.7): chance picks
  ``r`` with ``π(r)/k``; at a copy ``r~`` the opponent chooses ``terminate`` (pays
  ``k·c_I/π(I)``, so its expected value at ``I`` is exactly ``c_I``) or ``follow`` (enters
  ``r``; every subgame leaf is multiplied by ``k``, so gadget values equal counterfactual
  values of the original game). The ``r~`` are grouped into one opponent infoset per ``I``.
  Game value for ``o`` = Σ_I c_I + U (Lemma 21; U = 0 for best-response constraints).
* ``maxmargin_gadget`` (Moravčík et al. 2016 as given in Brown & Sandholm Appendix A): the
  opponent first picks an element ``I`` (one decision, one action per element with
  π(I) > 0), chance then picks ``r ∈ I`` with ``π(r)/π(I)``, and every payoff below ``I``
  is shifted by ``-alt(I)`` for the opponent. The value of picking ``I`` is minus its margin
  (normalised), so the equilibrium maximises the minimum margin. Reach-maxmargin is the
  same gadget with ``alt`` raised by the gifts (constraints.py).
* ``coinflip_gadget`` (Burch thesis §5.4.3): the resolve gadget behind a coin the
  re-solver does not see: with probability ``p`` the opponent's terminate/follow choice
  is made by chance, following with its blueprint reach ``q_I`` (RootConstraints.opponent_reach)
  and terminating (paying the same) otherwise; with ``1-p`` the opponent chooses as in the
  resolve gadget. The re-solver's infosets span both branches; the opponent's infosets
  inside the forced branch are separate copies, which keeps perfect recall (it knows
  whether it chose). Burch notes separate infosets are not *needed*; they change nothing:
  the opponent's counterfactual values at the two copies of an infoset are proportional
  (p against 1-p, same re-solver strategy and chance below), so their best responses
  coincide. p = 0 is the resolve gadget; p = 1 is unsafe re-solving with the opponent's
  trunk range.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.builder import tree_from_preorder
from efgkit.games.csr import positions_within
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.maps.infoset_map import InfosetMap
from efgkit.resolve.constraints import RootConstraints, normalized_values
from efgkit.resolve.subgame import Subgame, SubgameError
from efgkit.solvers.strategy import Strategy

GADGETS = ("unsafe", "resolve", "maxmargin", "reach-maxmargin", "coinflip", "distributional",
           "distributional-hedge", "reach-distributional", "reach-distributional-hedge")
# distributional*: resolve/distributional.py
REACH_GADGETS = {"reach-maxmargin": "maxmargin", "reach-distributional": "distributional",
                 "reach-distributional-hedge": "distributional-hedge"}
"""Brown & Sandholm's Reach techniques (§5; "Reach-Estimated + Distributional" with selfplay
constraints, §8): the gadget named by the value, on constraint values raised by the opponent's
gifts (``constraints.BlueprintValues.gifts``, split or not) — on either engine."""
TERMINATE, FOLLOW = "terminate", "follow"


@dataclass(eq=False)
class Gadget:
    """A gadget game and its maps back to the original game.

    ``node_origin`` (int32 per gadget node): the original node a copied node stands for,
    -1 for gadget-only nodes; ``infoset_origin`` (int32 per gadget infoset): the original
    infoset, -1 for gadget-only infosets (several gadget infosets may share one original
    infoset, e.g. the opponent's copies in the coin-flip gadget; the re-solver's never do).
    """

    kind: str
    tree: GameTree
    subgame: Subgame
    player: int
    node_origin: np.ndarray
    infoset_origin: np.ndarray
    constraints: RootConstraints | None = None

    @cached_property
    def action_origin(self) -> np.ndarray:
        """int32 per gadget flat action: the original flat action, -1 for gadget actions."""
        original = self.subgame.tree
        counts = self.tree.infoset_num_actions
        position = positions_within(counts)
        origin = np.repeat(self.infoset_origin, counts)
        base = np.where(origin >= 0, original.infoset_action_offset[np.maximum(origin, 0)], 0)
        return np.where(origin >= 0, base + position, -1).astype(np.int32)

    def strategy_from(self, behavior: np.ndarray) -> Strategy:
        """A gadget strategy (identity map) playing ``behavior`` (one probability per original
        flat action) at copied infosets; gadget-only infosets play uniformly."""
        origin = self.action_origin
        counts = np.repeat(self.tree.infoset_num_actions, self.tree.infoset_num_actions)
        probabilities = np.where(origin >= 0, np.asarray(behavior)[np.maximum(origin, 0)],
                                 1.0 / counts)
        return Strategy(InfosetMap.identity(self.tree), probabilities)

    def resolved_behavior(self, strategy: Strategy,
                          player: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The re-solver's (or ``player``'s, for the unsafe gadget where both are free) part of
        a gadget strategy as (original flat actions, probabilities)."""
        player = self.player if player is None else player
        actions = np.flatnonzero(self.tree.infoset_player[self.tree.action_infoset] == player)
        return self.action_origin[actions], strategy.behavior()[actions]


_HEAD_FIELDS = (("kind", np.int8), ("depth", np.int16), ("num_children", np.int16),
                ("chance_prob", np.float64), ("utility", np.float64), ("infoset_code", np.int64))


def _nodes(*columns: dict[str, object]) -> dict[str, np.ndarray]:
    """Gadget-only nodes: each column (one dict of per-slot values or scalars) is one node of
    every slot's head; the result interleaves them slot by slot (preorder within a slot)."""
    shape = np.broadcast_shapes(*(np.shape(v) for c in columns for v in c.values()))
    fields = {}
    for name, dtype in _HEAD_FIELDS:
        if not columns:
            fields[name] = np.zeros(0, dtype)
            continue
        default = {"chance_prob": 1.0, "infoset_code": -1}.get(name, 0)
        values = [np.broadcast_to(np.asarray(c.get(name, default), dtype=dtype), shape) for c in columns]
        fields[name] = np.stack(values, axis=-1).ravel()
    return fields


class _PreorderEmitter:
    """Assembles a gadget in depth-first preorder for ``tree_from_preorder``, vectorised.

    A gadget is a ``prefix`` (its first nodes) and then *slots*: each slot is a few head
    nodes followed by a copy of one root's subtree (a root may have several slots, as in
    the coin-flip gadget's two branches).
    """

    def __init__(self, subgame: Subgame) -> None:
        self.subgame = subgame
        self.tree = subgame.tree
        self.head_infosets: list[tuple[str, int, tuple[str, ...]]] = []
        self.arrays: dict[str, np.ndarray] = {}
        self.origin = np.zeros(0, np.int32)

    def head_infoset(self, key: str, player: int, labels: tuple[str, ...]) -> int:
        """A new gadget-only infoset; returns its infoset code."""
        self.head_infosets.append((key, player, labels))
        return 2 * self.tree.num_infosets + len(self.head_infosets) - 1

    def assemble(self, prefix: dict[str, np.ndarray], heads: dict[str, np.ndarray],
                 head_length: np.ndarray, roots: np.ndarray, root_depth: int,
                 root_prob: np.ndarray, scale: np.ndarray | float = 1.0,
                 shift: np.ndarray | float = 0.0, copied: np.ndarray | bool = False,
                 copy_player: int = -1) -> None:
        """Lay out the prefix and the slots. Per slot (arrays of one length): ``head_length``
        head nodes (taken in order from ``heads``), the copied ``roots`` at depth
        ``root_depth`` entered with probability ``root_prob``, leaves ``scale * u + shift``
        (player 0), and ``copy_player``'s infosets given separate copies where ``copied``."""
        tree = self.tree
        nodes, rel_depth, offsets = self.subgame.preorder
        slots = roots.shape[0]
        scale, shift, copied = (np.broadcast_to(np.asarray(x), (slots,)) for x in (scale, shift, copied))
        segment_start = offsets[roots]
        segment_length = offsets[roots + 1] - segment_start
        first = prefix["kind"].shape[0]
        block = head_length + segment_length
        slot_start = first + np.concatenate(([0], np.cumsum(block)[:-1])).astype(np.int64)
        total = first + int(block.sum())
        out = {name: np.zeros(total, dtype) for name, dtype in _HEAD_FIELDS}
        out["public_code"] = np.full(total, -1, np.int64)
        origin = np.full(total, -1, np.int32)
        for name, _ in _HEAD_FIELDS:
            out[name][:first] = prefix[name]
        within_head = positions_within(head_length)
        head_position = np.repeat(slot_start, head_length) + within_head
        for name, _ in _HEAD_FIELDS:
            out[name][head_position] = heads[name]
        within = positions_within(segment_length)
        position = np.repeat(slot_start + head_length, segment_length) + within
        source = np.repeat(segment_start, segment_length) + within
        slot_of = np.repeat(np.arange(slots), segment_length)
        original = nodes[source]
        kind = tree.node_kind[original]
        out["kind"][position] = kind
        out["depth"][position] = rel_depth[source] + root_depth
        out["num_children"][position] = tree.node_num_children[original]
        probability = tree.node_chance_prob[original].copy()
        probability[within == 0] = root_prob
        out["chance_prob"][position] = probability
        out["utility"][position] = np.where(
            kind == TERMINAL, scale[slot_of] * tree.node_utility[original] + shift[slot_of], 0.0)
        code = tree.node_infoset[original].astype(np.int64)
        out["infoset_code"][position] = np.where(copied[slot_of] & (kind == copy_player),
                                                 code + tree.num_infosets, code)
        out["public_code"][position] = tree.node_public_state[original]
        origin[position] = original
        self.arrays, self.origin = out, origin

    def finish(self, kind: str, player: int, constraints: RootConstraints | None) -> Gadget:
        arrays, origin = self.arrays, self.origin
        n = self.tree.num_infosets
        keys = self.tree.infoset_keys
        public_keys = self.tree.public_state_keys
        labels = self.tree.action_labels
        offsets = self.tree.infoset_action_offset

        def describe_infoset(code: int) -> str:
            if code >= 2 * n:
                return self.head_infosets[code - 2 * n][0]
            return keys[code] if code < n else f"{keys[code - n]} [forced]"

        def labels_of(code: int) -> list[str]:
            if code >= 2 * n:
                return list(self.head_infosets[code - 2 * n][2])
            original = code % n
            return labels[offsets[original]:offsets[original + 1]]

        def describe_public(code: int) -> str:
            return "gadget" if code < 0 else (public_keys[code] if code < len(public_keys) else str(code))

        gadget_tree = tree_from_preorder(
            f"{kind}-gadget({self.subgame.name}; player {player})",
            **arrays, describe_infoset=describe_infoset, action_labels_of=labels_of,
            describe_public=describe_public)
        order = np.argsort(arrays["depth"], kind="stable")
        node_origin = origin[order].astype(np.int32)
        # Infoset origins: any node of each gadget infoset names its original infoset.
        infoset_origin = np.full(gadget_tree.num_infosets, -1, dtype=np.int32)
        decision = np.flatnonzero(gadget_tree.node_kind < CHANCE)
        copied = decision[node_origin[decision] >= 0]
        infoset_origin[gadget_tree.node_infoset[copied]] = self.tree.node_infoset[node_origin[copied]]
        return Gadget(kind, gadget_tree, self.subgame, player, node_origin, infoset_origin,
                      constraints)


def _player0(opponent: int, value: np.ndarray | float) -> np.ndarray | float:
    """A payoff to the opponent in player 0's utility."""
    return value if opponent == 0 else -value


def extract_subgame(subgame: Subgame, root_weights: np.ndarray, player: int = 0,
                    kind: str = "extracted") -> Gadget:
    """The subgame as a GameTree: a chance node over the roots, in proportion to
    ``root_weights`` (float, one per root: e.g. the blueprint's reach π^σ(r), or π_{-o}(r)
    for one player's perspective), above a copy of every root's subtree."""
    weights = np.asarray(root_weights, dtype=np.float64)
    if weights.shape != (subgame.num_roots,) or np.any(weights < 0):
        raise ParameterError(f"root weights must be {subgame.num_roots} non-negative numbers")
    total = float(weights.sum())
    if total <= 0:
        raise SubgameError(f"subgame {subgame.name!r} is never reached under the blueprint")
    emitter = _PreorderEmitter(subgame)
    roots = np.arange(subgame.num_roots)
    emitter.assemble(_nodes({"kind": CHANCE, "num_children": subgame.num_roots}), _nodes(),
                     np.zeros(subgame.num_roots, np.int64), roots, 1, weights / total)
    return emitter.finish(kind, player, None)


def unsafe_gadget(subgame: Subgame, root_reach: np.ndarray, player: int) -> Gadget:
    """Both players free below a chance node over the roots with ``root_reach`` (π^σ(r))."""
    return extract_subgame(subgame, root_reach, player, kind="unsafe")


def _reachable(constraints: RootConstraints) -> float:
    k = constraints.total_reach
    if k <= 0:
        raise SubgameError(f"subgame {constraints.subgame.name!r} is never reached by chance and "
                           f"player {constraints.player}'s blueprint; nothing to re-solve")
    return k


def terminate_payoffs(values: np.ndarray, element_reach: np.ndarray, k: float) -> np.ndarray:
    """The opponent's payoff for ``terminate`` at each element (float64, like ``values``):
    ``k·c_I/π(I)``, 0 where π(I) = 0; chance reaches the element with π(I)/k, so its expected
    value there is exactly c_I (Burch's gadget; the GameTree's and the poker engine's).
    ``(k·c_I)/π(I)`` in that order, as before the poker engine shared it: ``k·(c_I/π(I))``
    rounds differently and moved Leduc's re-solved NashConv by 1.8e-6 through regret ties."""
    return np.divide(k * values, element_reach, out=np.zeros_like(values), where=element_reach > 0)


def _terminate_payoffs(constraints: RootConstraints, k: float) -> np.ndarray:
    """Player-0 utility of ``terminate`` at each root: k·c_I/π(I) to the opponent."""
    per_element = terminate_payoffs(constraints.values, constraints.element_reach, k)
    return _player0(constraints.opponent, per_element[constraints.elements.element_of_root])


def resolve_gadget(constraints: RootConstraints) -> Gadget:
    """Burch's re-solving gadget (terminate/follow per augmented opponent infoset)."""
    return coinflip_gadget(constraints, 0.0, kind="resolve")


def coinflip_gadget(constraints: RootConstraints, p: float, *, kind: str = "coinflip") -> Gadget:
    """Burch's coin-flip gadget; ``p = 0`` emits exactly the resolve gadget."""
    if not 0.0 <= p <= 1.0:
        raise ParameterError(f"the coin-flip probability p must be in [0, 1], got {p}")
    subgame = constraints.subgame
    k = _reachable(constraints)
    opponent = constraints.opponent
    element = constraints.elements.element_of_root
    emitter = _PreorderEmitter(subgame)
    codes = np.array([emitter.head_infoset(f"P{opponent} gadget: {key}", opponent, (TERMINATE, FOLLOW))
                      for key in constraints.elements.keys], dtype=np.int64)
    terminate = _terminate_payoffs(constraints, k)
    reach = constraints.root_reach / k
    roots = np.arange(subgame.num_roots)
    # The free branch: the opponent decides terminate/follow at its gadget infoset.
    free = _nodes({"kind": opponent, "depth": 1, "num_children": 2, "chance_prob": (1.0 - p) * reach,
                   "infoset_code": codes[element]},
                  {"kind": TERMINAL, "depth": 2, "utility": terminate})
    if p == 0.0:
        emitter.assemble(_nodes({"kind": CHANCE, "num_children": subgame.num_roots}), free,
                         np.full(subgame.num_roots, 2), roots, 2, np.ones(subgame.num_roots), scale=k)
        return emitter.finish(kind, constraints.player, constraints)
    follow = constraints.opponent_reach[element]
    # The forced branch: chance follows with the opponent's blueprint reach q_I.
    forced = _nodes({"kind": CHANCE, "depth": 1, "num_children": 2, "chance_prob": p * reach},
                    {"kind": TERMINAL, "depth": 2, "chance_prob": 1.0 - follow, "utility": terminate})
    heads = {name: np.stack([free[name].reshape(-1, 2), forced[name].reshape(-1, 2)], axis=1).ravel()
             for name in free}
    emitter.assemble(_nodes({"kind": CHANCE, "num_children": 2 * subgame.num_roots}), heads,
                     np.full(2 * subgame.num_roots, 2), np.repeat(roots, 2), 2,
                     np.stack([np.ones(subgame.num_roots), follow], axis=1).ravel(), scale=k,
                     copied=np.tile([False, True], subgame.num_roots), copy_player=opponent)
    return emitter.finish(kind, constraints.player, constraints)


def maxmargin_gadget(constraints: RootConstraints, kind: str = "maxmargin") -> Gadget:
    """Brown & Sandholm's Appendix-A gadget maximising the minimum (normalised) margin
    against ``alt(I) = constraints.normalized()`` (raise the constraints by gifts first for
    reach-maxmargin)."""
    subgame = constraints.subgame
    _reachable(constraints)
    opponent = constraints.opponent
    elements = constraints.elements
    reach = constraints.element_reach
    live = np.flatnonzero(reach > 0)
    groups = [elements.roots_of(int(e)) for e in live]
    roots = np.concatenate(groups)
    element = elements.element_of_root[roots]
    group_size = np.array([g.shape[0] for g in groups])
    head_length = np.zeros(roots.shape[0], np.int64)
    head_length[np.concatenate(([0], np.cumsum(group_size)[:-1]))] = 1
    emitter = _PreorderEmitter(subgame)
    choice = emitter.head_infoset(f"P{opponent} gadget: choose an infoset", opponent,
                                  tuple(elements.keys[e] for e in live))
    emitter.assemble(_nodes({"kind": opponent, "num_children": live.shape[0], "infoset_code": choice}),
                     _nodes({"kind": CHANCE, "depth": 1, "num_children": group_size}), head_length,
                     roots, 2, constraints.root_reach[roots] / reach[element],
                     shift=_player0(opponent, -normalized_values(constraints.values, reach)[element]))
    return emitter.finish(kind, constraints.player, constraints)
