"""Constraint values at a subgame's root: what the opponent may get, per augmented infoset.

For a re-solving ``player`` and its ``opponent`` ``o``, every root history ``r`` of a
subgame has the reach ``π_{-o}(r)`` of chance and the re-solver's blueprint, and the roots
are partitioned into the opponent's augmented infosets ``I`` (``Subgame.augmented_infosets``).
Values here are **counterfactual and unnormalised** (Burch's thesis §5.2.4 convention):
``c_I = Σ_{r∈I} π_{-o}(r) · value_o(r)``; ``RootConstraints.normalized()`` divides by
``π_{-o}(I) = Σ_{r∈I} π_{-o}(r)`` (Brown & Sandholm's convention, used by maxmargin).

* ``"br"``: the opponent's counterfactual best-response value against the blueprint
  (Burch's c_I; Brown & Sandholm's CBV^{σ2}(I1)): inside the subgame the opponent
  maximises counterfactual value at every infoset (BestResponse's bottom-up pass: the
  best action values of the opponent's first infosets inside, plus terminals reached
  before it acts there).
* ``"selfplay"``: the opponent's counterfactual value under the blueprint itself (Burch
  §5.4.2's self-play values; Brown & Sandholm §6's "Estimated" alternative payoffs).
* ``"deepstack"``: DeepStack's values (Burch §6.1.2, option 3; Moravčík et al. 2017 rule
  (iii)): the opponent is credited with its best action at its last infoset ``I'`` before
  the subgame rather than the action ``a'`` it took, i.e. the ``"br"`` values plus the gift
  ``CBV(I') - CBV(I', a')`` of that last action only, shared by reach among the elements of
  the given subgames that follow ``I'·a'`` (in poker without a chance event in between,
  one element: exactly ``CBV(I')``). Needs every subgame that follows, so it is only
  available through ``constraints_for``.

**Gifts** (Brown & Sandholm §5): along the opponent's own path to ``I`` (every opponent
infoset-action ``(I', a')`` before the root, footnote 6), ``g(I', a') = CBV(I') -
CBV(I', a') >= 0`` in the full game against the blueprint, unnormalised. Adding ``g`` to an
unnormalised c_I raises CBV(I', a') by at most ``g``, so it stays <= CBV(I'): no division by
a reach is needed in this scale (the paper's division appears because its values are
normalised). *Split* (the safe version): each gift is shared among all augmented infosets
of the given subgames whose path contains ``(I', a')``, in proportion to their reach
``π_{-o}(I)`` ("splitting gifts by reach"; terminal-only continuations get no share).
*Not split*: every infoset gets the whole gift (the paper's heuristic). By default the gifts
are the trunk's CBV-based ones, so the guarantee is "no worse than the blueprint" when all
subgames that share a gift are re-solved with split gifts. With ``lower_bound`` the best
alternative's value is replaced by a lower bound that no re-solving can take away, the
paper's "minimum reachable payoff" (§5.2, second fix): ``Σ_{h∈I'} π_{-o}(h) · min_{z below
h·b} u_o(z)`` for each action ``b`` (exact when ``b`` ends the game, e.g. a fold), so
``g(I', a') = max(0, max_b LB(I', b) - CBV(I', a'))``.

The opponent's own blueprint reach of each element (``opponent_reach``, Burch's q_I of the
coin-flip gadget) is the product of its blueprint probabilities along that same path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from efgkit.errors import ParameterError
from efgkit.games.csr import positions_within
from efgkit.games.protocol import TERMINAL
from efgkit.games.tree_structure import subtree_utility_bounds
from efgkit.resolve.subgame import AugmentedInfosets, Subgame
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.strategy import Strategy

CONSTRAINT_KINDS = ("br", "selfplay", "deepstack")


@dataclass(frozen=True)
class RootConstraints:
    """Per-root reach and per-element constraint values of one subgame for one re-solver.

    ``root_reach`` (float64 per root): π_{-o}(r); ``values`` (float64 per element, the
    opponent's utility): unnormalised counterfactual values; ``opponent_reach`` (float64
    per element): the opponent's own blueprint probability of its path to the element.
    """

    subgame: Subgame
    player: int
    elements: AugmentedInfosets
    root_reach: np.ndarray
    values: np.ndarray
    opponent_reach: np.ndarray
    kind: str

    @property
    def opponent(self) -> int:
        return 1 - self.player

    @property
    def element_reach(self) -> np.ndarray:
        """π_{-o}(I) per element."""
        return np.bincount(self.elements.element_of_root, weights=self.root_reach,
                           minlength=self.elements.num_elements)

    @property
    def total_reach(self) -> float:
        """k = Σ_r π_{-o}(r), Burch's gadget scale."""
        return float(self.root_reach.sum())

    def normalized(self) -> np.ndarray:
        """values / π_{-o}(I) per element (0 where the element is unreachable)."""
        return normalized_values(self.values, self.element_reach)

    def raised_by(self, extra: np.ndarray, kind: str) -> RootConstraints:
        """The same constraints with ``extra`` (unnormalised, per element) added: gifts."""
        return replace(self, values=self.values + np.asarray(extra, dtype=np.float64), kind=kind)


def normalized_values(values: np.ndarray, element_reach: np.ndarray) -> np.ndarray:
    """``alt(I) = c_I / π_{-o}(I)`` per element (0 where π_{-o}(I) = 0): Brown & Sandholm's
    normalised alternative payoff, on either engine (``RootConstraints``, ``RootRanges``)."""
    return np.divide(values, element_reach, out=np.zeros_like(values), where=element_reach > 0)


class BlueprintValues:
    """Reach, values and counterfactual best responses of one blueprint, computed once.

    ``constraints(subgame, player, kind)`` gives a subgame's RootConstraints for the
    re-solving ``player`` (``constraints_for(subgames, ...)`` for several, any kind);
    ``gifts(constraints_list, split)`` the reach-maxmargin gifts. Per node (float64):
    ``node_values`` (player 0's expected utility below the node under the blueprint),
    ``reach`` (π^σ), ``others_reach[p]`` (π_{-p}: chance and p's opponent); per flat action
    ``full_action_values(p)`` (p's counterfactual best-response values, full game).
    """

    def __init__(self, blueprint: Strategy) -> None:
        self.blueprint = blueprint
        self.tree = tree = blueprint.tree
        self.best_response = BestResponse(blueprint.infoset_map)
        layout = self.best_response.layout
        layout.set_strategy(blueprint.probabilities)
        self.node_values = layout.expected_values().copy()
        self.reach = layout.others_reach(-1).copy()
        self.others_reach = [layout.others_reach(p).copy() for p in (0, 1)]
        self.behavior = blueprint.behavior()
        self._full_action_values: list[np.ndarray | None] = [None, None]
        self._min_payoff_action_values: list[np.ndarray | None] = [None, None]
        self._is_terminal = tree.node_kind == TERMINAL

    def full_action_values(self, player: int) -> np.ndarray:
        """Counterfactual best-response value of each of ``player``'s flat actions (full game)."""
        if self._full_action_values[player] is None:
            self.best_response.best_response_to_weights(player, self.others_reach[player])
            self._full_action_values[player] = self.best_response.action_values().copy()
        return self._full_action_values[player]

    def min_payoff_action_values(self, player: int) -> np.ndarray:
        """Per flat action of ``player``: Σ_{h∈I} π_{-p}(h) · (the least utility for ``player``
        of any terminal below h·a), a lower bound on the action's counterfactual value whatever
        anyone plays below it."""
        if self._min_payoff_action_values[player] is None:
            tree = self.tree
            low, high = subtree_utility_bounds(tree.internal_nodes, tree.node_first_child,
                                               tree.node_num_children, tree.node_utility)
            least = low if player == 0 else -high
            own = np.flatnonzero(tree.node_kind == player)
            counts = tree.node_num_children[own].astype(np.int64)
            k = positions_within(counts)
            children = np.repeat(tree.node_first_child[own], counts) + k
            actions = np.repeat(tree.infoset_action_offset[tree.node_infoset[own]], counts) + k
            values = np.zeros(tree.num_infoset_actions)
            np.add.at(values, actions, np.repeat(self.others_reach[player][own], counts) * least[children])
            self._min_payoff_action_values[player] = values
        return self._min_payoff_action_values[player]

    def opponent_path(self, subgame: Subgame, opponent: int, root: int) -> list[int]:
        """The opponent's flat actions before a root, latest first."""
        tree = self.tree
        path = []
        action = int(tree.node_last_action[opponent, subgame.root_nodes[root]])
        while action >= 0:
            path.append(action)
            action = int(tree.infoset_parent_action[tree.action_infoset[action]])
        return path

    def constraints_for(self, subgames: list[Subgame], player: int,
                        kind: str = "br") -> list[RootConstraints]:
        """The constraints of several (disjoint) subgames; every kind, "deepstack" included."""
        if kind not in CONSTRAINT_KINDS:
            raise ParameterError(f"constraints must be one of {', '.join(CONSTRAINT_KINDS)}, "
                                 f"got {kind!r}")
        if kind != "deepstack":
            return [self.constraints(s, player, kind) for s in subgames]
        constraints = [self.constraints(s, player, "br") for s in subgames]
        gifts = self.gifts(constraints, split=True, last_action_only=True)
        return [c.raised_by(g, "deepstack") for c, g in zip(constraints, gifts, strict=True)]

    def constraints(self, subgame: Subgame, player: int, kind: str = "br") -> RootConstraints:
        """One subgame's constraints of kind "br" or "selfplay" for re-solving ``player``."""
        if kind not in ("br", "selfplay"):
            raise ParameterError(f"constraints of one subgame must be 'br' or 'selfplay', got "
                                 f"{kind!r} (use constraints_for for 'deepstack')")
        if player not in (0, 1):
            raise ParameterError(f"the re-solving player must be 0 or 1, got {player!r}")
        if subgame.tree is not self.tree:
            self.blueprint.infoset_map.check_tree(subgame.tree)
        opponent = 1 - player
        elements = subgame.augmented_infosets(opponent)
        reach = self.others_reach[opponent][subgame.root_nodes]
        sign = 1.0 if opponent == 0 else -1.0
        if kind == "selfplay":
            values = np.bincount(elements.element_of_root,
                                 weights=reach * sign * self.node_values[subgame.root_nodes],
                                 minlength=elements.num_elements)
        else:
            values = self._best_response_values(subgame, opponent, elements)
        opponent_reach = np.array([
            np.prod(self.behavior[self.opponent_path(subgame, opponent, int(roots[0]))])
            for roots in (elements.roots_of(e) for e in range(elements.num_elements))
        ])
        return RootConstraints(subgame, player, elements, reach, values, opponent_reach, kind)

    def _best_response_values(self, subgame: Subgame, opponent: int,
                              elements: AugmentedInfosets) -> np.ndarray:
        tree = self.tree
        # Everything below an infoset inside the subgame is inside it, so the full game's
        # counterfactual best-response action values serve every subgame.
        action_values = self.full_action_values(opponent)
        weights = self.others_reach[opponent]
        values = np.zeros(elements.num_elements)
        # The opponent's first infosets inside the subgame: each adds its best action value.
        nodes = subgame.nodes
        own = nodes[tree.node_kind[nodes] == opponent]
        infosets, first = np.unique(tree.node_infoset[own], return_index=True)
        parent = tree.infoset_parent_action[infosets]
        parent_inside = np.zeros(infosets.shape[0], dtype=bool)
        has_parent = parent >= 0
        parent_infoset = tree.action_infoset[parent[has_parent]]
        parent_inside[has_parent] = np.isin(parent_infoset, infosets)
        for infoset, node in zip(infosets[~parent_inside], own[first][~parent_inside], strict=True):
            lo, hi = tree.infoset_action_offset[infoset], tree.infoset_action_offset[infoset + 1]
            element = elements.element_of_root[subgame.root_of(node)]
            values[element] += action_values[lo:hi].max()
        # Terminals reached without any opponent action inside the subgame.
        terminals = nodes[self._is_terminal[nodes]]
        roots = subgame.root_of(terminals)
        last = tree.node_last_action[opponent]
        direct = last[terminals] == last[subgame.root_nodes[roots]]
        sign = 1.0 if opponent == 0 else -1.0
        np.add.at(values, elements.element_of_root[roots[direct]],
                  weights[terminals[direct]] * sign * tree.node_utility[terminals[direct]])
        return values

    def gifts(self, constraints: list[RootConstraints], split: bool = True,
              last_action_only: bool = False, lower_bound: bool = False) -> list[np.ndarray]:
        """Brown & Sandholm's gifts per element of each subgame (unnormalised, >= 0).

        All ``constraints`` must be for the same re-solving player; with ``split`` every
        gift is shared by reach among the elements of these subgames below its action;
        ``last_action_only`` takes only the opponent's last action before the root;
        ``lower_bound`` values the best alternative by its minimum reachable payoff.
        """
        players = {c.player for c in constraints}
        if len(players) > 1:
            raise ParameterError("gifts are computed for one re-solving player at a time")
        if not constraints:
            return []
        opponent = constraints[0].opponent
        action_values = self.full_action_values(opponent)
        alternatives = self.min_payoff_action_values(opponent) if lower_bound else action_values
        tree = self.tree
        offsets = tree.infoset_action_offset
        paths = []
        shared_reach: dict[int, float] = {}
        for c in constraints:
            reach = c.element_reach
            element_paths = []
            for e in range(c.elements.num_elements):
                path = self.opponent_path(c.subgame, opponent, int(c.elements.roots_of(e)[0]))
                if last_action_only:
                    path = path[:1]
                element_paths.append(path)
                for action in path:
                    shared_reach[action] = shared_reach.get(action, 0.0) + reach[e]
            paths.append(element_paths)
        result = []
        for c, element_paths in zip(constraints, paths, strict=True):
            reach = c.element_reach
            gift = np.zeros(c.elements.num_elements)
            for e, path in enumerate(element_paths):
                for action in path:
                    infoset = tree.action_infoset[action]
                    lost = alternatives[offsets[infoset]:offsets[infoset + 1]].max() - action_values[action]
                    if lost <= 0.0:
                        continue
                    if split:
                        total = shared_reach[action]
                        gift[e] += lost * reach[e] / total if total > 0 else 0.0
                    else:
                        gift[e] += lost
            result.append(gift)
        return result
