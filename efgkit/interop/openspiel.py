"""OpenSpiel interop: import any two-player zero-sum OpenSpiel game, exchange policies with it.

OpenSpiel (Lanctot et al., "OpenSpiel: A Framework for Reinforcement Learning in Games",
2019) is the reference implementation our numbers are checked against
(anchors_solvers.md §1.7). Three pieces:

* ``import_openspiel_game("leduc_poker")`` adapts pyspiel states to the Game protocol
  (``OpenSpielGame``) and compiles them with the generic ``build_tree``. Infoset keys are
  OpenSpiel's ``information_state_string``; action and chance labels are
  ``action_to_string``, made unique within a node when OpenSpiel repeats one. Simultaneous
  games are played turn-based (``pyspiel.convert_to_turn_based``), as OpenSpiel's own
  tabular algorithms do. Constant-sum games are shifted to zero-sum: player 0's utility
  is ``returns[0] - utility_sum / 2``, which changes no best response and no NashConv.
* ``openspiel_infoset_correspondence(tree, game)`` walks a GameTree and an OpenSpiel game
  breadth-first in parallel (children in legal-action / chance-outcome order), checks that
  they are the same tree node by node, and maps every efgkit infoset-action to an
  OpenSpiel (information state, action id). It works for imported trees and for
  efgkit's native Kuhn and Leduc poker, which are built node for node like OpenSpiel's.
* ``to_tabular_policy(strategy)`` and ``from_tabular_policy(policy, tree)`` use that map to
  move a behaviour strategy to and from OpenSpiel's Python ``TabularPolicy``, so OpenSpiel's
  ``exploitability.nash_conv`` can check ours.

pyspiel is an optional dependency (``pip install efgkit[peers]``); it is imported on use.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from efgkit.errors import (
    GameDefinitionError,
    GameSpecError,
    OptionalDependencyError,
    StrategyError,
    TreeTooLargeError,
)
from efgkit.games.builder import build_tree, node_limit_from_env
from efgkit.games.protocol import CHANCE, KIND_NAMES, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.solvers.strategy import Strategy

SPEC_PREFIX = "openspiel:"

NATIVE_COUNTERPARTS = {
    "kuhn": "kuhn_poker",
    "leduc": "leduc_poker",
    "leduc(suit_isomorphism=true)": "leduc_poker(suit_isomorphism=True)",
}
"""Canonical efgkit spec -> OpenSpiel load string of the node-for-node identical game."""

MATCH_TOLERANCE = 1e-9
"""Largest difference in a chance probability or utility the correspondence accepts."""


def _pyspiel() -> Any:
    try:
        import pyspiel
    except ImportError as exc:
        raise OptionalDependencyError(
            "OpenSpiel is not installed; install it with `pip install efgkit[peers]`"
        ) from exc
    return pyspiel


def load_openspiel_game(name_with_params: str) -> Any:
    """The pyspiel game for an OpenSpiel load string, checked and made turn-based.

    Raises GameSpecError for an unknown game, bad parameters, or a game efgkit cannot
    represent (see ``checked_openspiel_game``).
    """
    return checked_openspiel_game(_load(name_with_params), repr(name_with_params))


def _load(name_with_params: str) -> Any:
    pyspiel = _pyspiel()
    name = name_with_params.split("(", 1)[0].strip()
    # Checked here because OpenSpiel prints its whole game list to stderr on an unknown name.
    if name not in pyspiel.registered_names():
        raise GameSpecError(
            f"OpenSpiel has no game {name!r}; pyspiel.registered_names() lists the games"
        )
    try:
        return pyspiel.load_game(name_with_params)
    except pyspiel.SpielError as exc:
        reason = str(exc).strip().splitlines()[0]
        raise GameSpecError(f"OpenSpiel cannot load {name_with_params!r}: {reason}") from exc


def checked_openspiel_game(openspiel_game: Any, name: str | None = None) -> Any:
    """``openspiel_game`` if efgkit can compile it, turn-based if it has simultaneous moves.

    Raises GameSpecError unless the game has two players, is zero- or constant-sum,
    sequential or simultaneous, lists its chance outcomes, and has information state
    strings. ``name`` names the game in messages (default ``str(openspiel_game)``).
    """
    pyspiel = _pyspiel()
    game_type = openspiel_game.get_type()
    where = f"OpenSpiel game {name or openspiel_game}"
    if openspiel_game.num_players() != 2:
        raise GameSpecError(f"{where} has {openspiel_game.num_players()} players; efgkit needs 2")
    utility = pyspiel.GameType.Utility
    if game_type.utility not in (utility.ZERO_SUM, utility.CONSTANT_SUM):
        kind = game_type.utility.name.lower().replace("_", "-")
        raise GameSpecError(f"{where} is {kind}; efgkit needs a zero-sum or constant-sum game")
    dynamics = pyspiel.GameType.Dynamics
    if game_type.dynamics not in (dynamics.SEQUENTIAL, dynamics.SIMULTANEOUS):
        raise GameSpecError(
            f"{where} has {game_type.dynamics.name.lower()} dynamics; efgkit needs a "
            f"sequential or simultaneous-move game"
        )
    if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise GameSpecError(f"{where} only samples chance outcomes; efgkit needs them listed")
    if not game_type.provides_information_state_string:
        raise GameSpecError(f"{where} has no information state strings")
    if game_type.dynamics == dynamics.SIMULTANEOUS:
        return pyspiel.convert_to_turn_based(openspiel_game)
    return openspiel_game


class _SharedInformationState(Exception):
    """Both players have an information state with the same string (keys need a prefix)."""


class _Node:
    """A pyspiel state with what the builder asks of it more than once."""

    __slots__ = ("state", "key", "label_to_action")

    def __init__(self, state: Any) -> None:
        self.state = state
        self.key: str | None = None
        self.label_to_action: dict[str, int] | None = None


def _unique_labels(labels: list[str], actions: Sequence[int]) -> tuple[str, ...]:
    if len(set(labels)) == len(labels):
        return tuple(labels)
    return tuple(f"{label} [{action}]" for label, action in zip(labels, actions, strict=True))


class OpenSpielGame:
    """The Game protocol over a (turn-based) pyspiel game.

    ``openspiel_game`` is the pyspiel game. Infoset keys are OpenSpiel's information state
    strings, with ``"P{player}:"`` in front when ``prefix_player`` (needed only by a game
    whose two players can have equal strings). Action labels are taken once per infoset
    from its first state. The public state is OpenSpiel's public observation string when
    the game offers a public-information observer, else one public state for the whole
    game (every subgame is then the whole game, which is always safe).
    """

    def __init__(self, openspiel_game: Any, spec: str, *, prefix_player: bool = False) -> None:
        pyspiel = _pyspiel()
        self.openspiel_game = openspiel_game
        self.spec = spec
        self.prefix_player = prefix_player
        self.utility_shift = float(openspiel_game.utility_sum()) / 2.0
        self._chance_id = pyspiel.PlayerId.CHANCE
        self._infosets: dict[str, tuple[int, tuple[int, ...], tuple[str, ...]]] = {}
        self._public_observation = _public_observation(openspiel_game)

    def initial_state(self) -> _Node:
        return _Node(self.openspiel_game.new_initial_state())

    def current_player(self, node: _Node) -> int:
        state = node.state
        if state.is_terminal():
            return TERMINAL
        if state.is_chance_node():
            return CHANCE
        return int(state.current_player())

    def legal_actions(self, node: _Node) -> tuple[str, ...]:
        state = node.state
        player = int(state.current_player())
        key = self.infoset_key(node)
        actions = tuple(state.legal_actions())
        known = self._infosets.get(key)
        if known is None:
            labels = _unique_labels([state.action_to_string(player, a) for a in actions], actions)
            known = self._infosets[key] = (player, actions, labels)
        elif known[0] != player:  # impossible with prefix_player: keys then name the player
            raise _SharedInformationState
        elif known[1] != actions:
            raise GameDefinitionError(
                f"game {self.spec!r}: OpenSpiel information state {key!r} has states with "
                f"different legal actions ({known[1]} vs {actions})"
            )
        labels = known[2]
        node.label_to_action = dict(zip(labels, actions, strict=True))
        return labels

    def chance_outcomes(self, node: _Node) -> list[tuple[str, float]]:
        state = node.state
        outcomes = state.chance_outcomes()
        actions = [action for action, _ in outcomes]
        labels = _unique_labels([state.action_to_string(self._chance_id, a) for a in actions],
                                actions)
        node.label_to_action = dict(zip(labels, actions, strict=True))
        return [(label, float(p)) for label, (_, p) in zip(labels, outcomes, strict=True)]

    def apply(self, node: _Node, action: str) -> _Node:
        if node.label_to_action is None:
            if node.state.is_chance_node():
                self.chance_outcomes(node)
            else:
                self.legal_actions(node)
        try:
            return _Node(node.state.child(node.label_to_action[action]))
        except KeyError:
            raise GameDefinitionError(
                f"game {self.spec!r}: {action!r} is not a legal action here"
            ) from None

    def terminal_utility(self, node: _Node) -> float:
        returns = node.state.returns()
        if abs(returns[0] + returns[1] - 2.0 * self.utility_shift) > MATCH_TOLERANCE * max(
            1.0, abs(returns[0])
        ):
            raise GameDefinitionError(
                f"game {self.spec!r}: returns {returns} do not sum to the game's utility sum "
                f"{2.0 * self.utility_shift}"
            )
        return float(returns[0]) - self.utility_shift

    def infoset_key(self, node: _Node) -> str:
        if node.key is None:
            state = node.state
            key = state.information_state_string()
            node.key = f"P{state.current_player()}:{key}" if self.prefix_player else key
        return node.key

    def public_state_key(self, node: _Node) -> Hashable:
        if self._public_observation is None:
            return ""
        return self._public_observation.string_from(node.state, 0)


def _public_observation(openspiel_game: Any) -> Any:
    """OpenSpiel's perfect-recall public-information observation, or None if unsupported."""
    pyspiel = _pyspiel()
    from open_spiel.python.observation import make_observation

    observation = make_observation(
        openspiel_game,
        pyspiel.IIGObservationType(
            perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
        ),
    )
    if observation is None:
        return None
    if observation.string_from(openspiel_game.new_initial_state(), 0) is None:
        return None
    return observation


def import_openspiel_game(
    name_with_params: str, node_limit: int | None = None, progress: bool = False
) -> GameTree:
    """Compile an OpenSpiel game named by its load string (e.g. ``"leduc_poker"``).

    The tree's spec is ``"openspiel:" + name_with_params``; see ``compile_openspiel_game``.
    """
    return compile_openspiel_game(_load(name_with_params), SPEC_PREFIX + name_with_params,
                                  node_limit=node_limit, progress=progress)


ESTIMATE_PATHS = 64
ESTIMATE_MARGIN = 100
"""A game is refused before building when Knuth's estimate exceeds the node limit this much
(the estimate is unbiased but spread; games near the limit are built and counted exactly)."""


def estimated_nodes(game: Any, paths: int = ESTIMATE_PATHS, seed: int = 0) -> float:
    """Knuth's (1975) unbiased estimate of a game tree's node count: along a random path from
    the root, sum the products of the branching factors seen; averaged over ``paths`` paths.

    Cheap even for games far too large to walk (chess: a few random games), so
    ``compile_openspiel_game`` refuses those at once instead of enumerating for hours.
    """
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(paths):
        state, product, count = game.new_initial_state(), 1.0, 1.0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[rng.integers(len(outcomes))][0]
                branching = len(outcomes)
            else:
                actions = state.legal_actions()
                action = actions[rng.integers(len(actions))]
                branching = len(actions)
            product *= branching
            count += product
            state.apply_action(action)
            if count > 1e300:
                break
        total += count
    return total / paths


def compile_openspiel_game(
    openspiel_game: Any, spec: str | None = None, *, node_limit: int | None = None,
    progress: bool = False,
) -> GameTree:
    """Compile a pyspiel game object (any two-player zero-sum one) into a GameTree.

    ``spec`` defaults to ``"openspiel:" + str(openspiel_game)``. ``tree.game`` is the
    ``OpenSpielGame`` adapter; its ``openspiel_game`` is the (turn-based) pyspiel game.
    Infoset keys are OpenSpiel's information state strings unless both players share
    one somewhere, in which case every key gets a ``"P{player}:"`` prefix.
    """
    spec = spec or SPEC_PREFIX + str(openspiel_game)
    game = checked_openspiel_game(openspiel_game, repr(spec.removeprefix(SPEC_PREFIX)))
    limit = node_limit_from_env() if node_limit is None else node_limit
    estimate = estimated_nodes(game)
    if estimate > ESTIMATE_MARGIN * limit:
        raise TreeTooLargeError(
            f"game {spec!r} has about {estimate:.2g} nodes (Knuth's estimate from {ESTIMATE_PATHS} random "
            f"paths), far more than the node limit of {limit:,}; it cannot be built")
    try:
        return build_tree(OpenSpielGame(game, spec), node_limit=node_limit, progress=progress)
    except _SharedInformationState:
        return build_tree(OpenSpielGame(game, spec, prefix_player=True), node_limit=node_limit,
                          progress=progress)


def openspiel_game_of(tree: GameTree) -> Any:
    """The OpenSpiel game a tree corresponds to: its own for imported trees, else by spec.

    Raises GameSpecError for a native game with no OpenSpiel counterpart (see
    ``NATIVE_COUNTERPARTS``).
    """
    if isinstance(tree.game, OpenSpielGame):
        return tree.game.openspiel_game
    if tree.spec.startswith(SPEC_PREFIX):
        return load_openspiel_game(tree.spec[len(SPEC_PREFIX):])
    load_string = NATIVE_COUNTERPARTS.get(tree.spec)  # a tree's spec is canonical
    if load_string is None:
        known = ", ".join(NATIVE_COUNTERPARTS)
        raise GameSpecError(
            f"game {tree.spec!r} has no OpenSpiel counterpart (known: {known}); pass the "
            f"OpenSpiel game explicitly"
        )
    return load_openspiel_game(load_string)


@dataclass(frozen=True)
class OpenSpielCorrespondence:
    """Where each efgkit infoset-action of a tree lives in an OpenSpiel game.

    ``information_states[I]`` is the OpenSpiel information state string of efgkit infoset
    ``I`` and ``infoset_of`` its inverse; ``action_ids`` (int64, one per efgkit flat
    infoset-action) is the OpenSpiel action id of each action and ``action_infoset``
    (int32, same length) the efgkit infoset it belongs to.
    """

    openspiel_game: Any
    information_states: list[str]
    infoset_of: dict[str, int]
    action_ids: np.ndarray
    action_infoset: np.ndarray

    def policy_rows(self, state_lookup: dict[str, int]) -> np.ndarray:
        """int64 per efgkit flat infoset-action: its row in a TabularPolicy's array."""
        try:
            rows = np.array([state_lookup[key] for key in self.information_states], dtype=np.int64)
        except KeyError as exc:
            raise StrategyError(
                f"the OpenSpiel policy has no entry for information state {exc.args[0]!r}"
            ) from None
        return rows[self.action_infoset]


def _describe(kind: int, children: int) -> str:
    if kind == TERMINAL:
        return "a terminal node"
    noun = "outcomes" if kind == CHANCE else "actions"
    return f"a {KIND_NAMES[kind]} node with {children} {noun}"


def openspiel_infoset_correspondence(
    tree: GameTree, openspiel_game: Any = None
) -> OpenSpielCorrespondence:
    """Walk ``tree`` and an OpenSpiel game in parallel and map infosets and actions.

    ``openspiel_game`` is a pyspiel game, an OpenSpiel load string, or None for
    ``openspiel_game_of(tree)``. Both trees are walked breadth-first with children in
    legal-action / chance-outcome order; node kinds, child counts, chance probabilities
    and player-0 utilities (constant-sum games shifted to zero-sum) must agree at every
    node, and infosets must correspond one to one. Raises GameDefinitionError naming the
    first mismatch.
    """
    if openspiel_game is None:
        game = openspiel_game_of(tree)
    elif isinstance(openspiel_game, str):
        game = load_openspiel_game(openspiel_game)
    else:
        game = checked_openspiel_game(openspiel_game)
    shift = float(game.utility_sum()) / 2.0
    kinds, node_infoset, first_child, num_children, chance_prob, utility = tree.node_lists()
    offsets = tree.infoset_action_offset.tolist()
    information_states: list[str | None] = [None] * tree.num_infosets
    action_ids = np.full(tree.num_infoset_actions, -1, dtype=np.int64)
    infoset_of: dict[str, int] = {}

    def mismatch(node: int, state: Any, what: str) -> GameDefinitionError:
        return GameDefinitionError(
            f"efgkit game {tree.spec!r} differs from OpenSpiel game {game} at node {node} "
            f"(OpenSpiel history {state.history()}): {what}"
        )

    queue = deque([game.new_initial_state()])
    for node in range(tree.num_nodes):
        state = queue.popleft()
        if state.is_terminal():
            kind, actions = TERMINAL, []
        elif state.is_chance_node():
            outcomes = state.chance_outcomes()
            kind, actions = CHANCE, [action for action, _ in outcomes]
        else:
            kind, actions = int(state.current_player()), state.legal_actions()
        if kind != kinds[node] or len(actions) != num_children[node]:
            raise mismatch(node, state, f"efgkit has {_describe(kinds[node], num_children[node])}, "
                                        f"OpenSpiel {_describe(kind, len(actions))}")
        if kind == TERMINAL:
            value = state.returns()[0] - shift
            if abs(value - utility[node]) > MATCH_TOLERANCE * max(1.0, abs(value)):
                raise mismatch(node, state, f"efgkit utility {utility[node]}, OpenSpiel {value}")
            continue
        if kind == CHANCE:
            for k, (_, probability) in enumerate(outcomes):
                if abs(probability - chance_prob[first_child[node] + k]) > MATCH_TOLERANCE:
                    raise mismatch(node, state, f"chance outcome {k} has probability "
                                                f"{chance_prob[first_child[node] + k]} in efgkit, "
                                                f"{probability} in OpenSpiel")
        else:
            infoset = node_infoset[node]
            key = state.information_state_string()
            lo, hi = offsets[infoset], offsets[infoset + 1]
            if information_states[infoset] is None:
                other = infoset_of.setdefault(key, infoset)
                if other != infoset:
                    raise mismatch(node, state, f"OpenSpiel information state {key!r} spans "
                                                f"efgkit infosets {tree.infoset_keys[other]!r} "
                                                f"and {tree.infoset_keys[infoset]!r}")
                information_states[infoset] = key
                action_ids[lo:hi] = actions
            elif information_states[infoset] != key:
                raise mismatch(node, state, f"efgkit infoset {tree.infoset_keys[infoset]!r} spans "
                                            f"OpenSpiel information states "
                                            f"{information_states[infoset]!r} and {key!r}")
            elif action_ids[lo:hi].tolist() != list(actions):
                raise mismatch(node, state, f"OpenSpiel information state {key!r} has different "
                                            f"legal actions in different states")
        queue.extend(state.child(action) for action in actions)
    return OpenSpielCorrespondence(game, information_states, infoset_of, action_ids,
                                   tree.action_infoset)


def _tabular_policy_class() -> Any:
    _pyspiel()
    from open_spiel.python.policy import TabularPolicy

    return TabularPolicy


def to_tabular_policy(strategy: Strategy, openspiel_game: Any = None) -> Any:
    """OpenSpiel's Python ``TabularPolicy`` playing ``strategy`` (on any InfosetMap).

    ``openspiel_game`` as in ``openspiel_infoset_correspondence``. Every original infoset
    plays its abstract infoset's distribution (``strategy.behavior()``), so OpenSpiel's
    ``exploitability.nash_conv(game, policy)`` evaluates the same profile as ours.
    """
    correspondence = openspiel_infoset_correspondence(strategy.tree, openspiel_game)
    policy = _tabular_policy_class()(correspondence.openspiel_game)
    if len(policy.state_lookup) != len(correspondence.information_states):
        raise GameDefinitionError(
            f"OpenSpiel's TabularPolicy has {len(policy.state_lookup)} information states, "
            f"game {strategy.tree.spec!r} {len(correspondence.information_states)} infosets"
        )
    rows = correspondence.policy_rows(policy.state_lookup)
    policy.action_probability_array[:] = 0.0
    policy.action_probability_array[rows, correspondence.action_ids] = strategy.behavior()
    return policy


def from_tabular_policy(policy: Any, tree: GameTree) -> Strategy:
    """The Strategy (identity map on ``tree``) an OpenSpiel ``TabularPolicy`` plays.

    The policy's game must correspond to the tree (checked node by node). Raises
    StrategyError when an information state is missing or its probabilities over the
    legal actions do not sum to 1.
    """
    if not isinstance(policy, _tabular_policy_class()):
        raise StrategyError(
            f"expected an open_spiel.python.policy.TabularPolicy, got {type(policy).__name__}"
        )
    correspondence = openspiel_infoset_correspondence(tree, policy.game)
    rows = correspondence.policy_rows(policy.state_lookup)
    behavior = policy.action_probability_array[rows, correspondence.action_ids]
    return Strategy.from_behavior(tree, behavior)
