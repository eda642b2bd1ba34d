"""Graph Pursuit GPx, the visibility pursuit game of Čermák et al. (Sec. 5.3.3).

An attacker (player 0, the "evader") walks a directed graph from node 0 towards the
goal node 10; a defender (player 1, the "patroller") moves two units that start on nodes
7 and 13. The paper's Fig. 4 is not available; the graph, start nodes and information
structure follow the authors' reference code (GTLibrary ``VisibilityPursuitGameState``,
``pursuit_goal_optimized.txt``), as digested in seed_cermak.md §4.3.3. Out-edges:
0→1,4; 1→2,5; 2→1,3,6; 3→2,7; 4→5,8; 5→1,4,6,9,10; 6→2,10; 7→3,6; 8→4,9; 9→8,10;
10→7,13; 12→8,13; 13→9,12 (nodes 11, 14 and 15 are unused).

One round: the attacker moves along an out-edge, then the defender, without seeing that
move, moves both units at once (one joint action from the Cartesian product of the two
units' out-edges; unit 1's edge varies slowest). Every unit must move every round. x
rounds are played (GPx), unless the attacker is caught earlier: it ends on a unit's node,
or it and a unit swap across an edge.

Payoffs (player 0): 2 if the attacker stands on the goal, uncaught, when the game ends
after the last round, -1 if it is caught (which ends the game), 0 otherwise (the paper's
timeout value, ``payoffs=paper``); ``payoffs=reference`` pays +1 there as the reference
code does (seed_cermak.md Appendix A item 8), and 2 for a capture on the goal (the code
tests the goal before the capture).
Decisions, made to reproduce the digest's sizes EXACTLY and a game that is not trivial:

* The tree is the reference code's: reaching the goal does not end the game. Play goes on
  (the goal node has out-edges and every unit must move every round) until a capture or
  the move limit, and, as in the reference code, the goal pays only if the attacker is on
  it at the end. Truncating the tree at the goal gives other sizes (below), which miss
  the paper's implied IS counts (100 sampled ISs = 1.1% of GP5). Paying 2 as soon as the
  goal is first reached (with the same tree) makes GP5 trivial: the attacker wins surely
  (value exactly 2; CFR+ below NashConv 1e-3 in 100 iterations), which cannot be the
  game on which the paper's solvers needed seconds to minutes. With the end-of-game rule
  GP5's value is -0.4 for the attacker and CFR+ needs about 200 iterations to 0.005.
* Under ``payoffs=paper`` the goal counts only for a round that ends without a capture: an
  attacker that steps onto the goal while a unit steps onto it too (or swaps with it) is
  caught (-1). ``payoffs=reference`` tests the goal first, as the reference code does, so
  such a capture pays 2.
* Distances are directed shortest paths along out-edges, measured FROM the attacker TO a
  unit. At its turn the attacker sees the nodes of the units within distance <= 2 of its
  current node, listed in unit order, e.g. ``units{9,12}``, without saying which unit is
  which: seeing one unit on node 9 is the same observation whichever unit it is (the
  reference code keys a list of nodes). At its turn the defender sees the node the
  attacker occupied at the start of the round (before its current, unseen move) if that
  node is within distance <= 2 of either unit (before they move), e.g. ``attacker{5}``,
  else ``attacker{}``. Observations are made at every own decision, also the first.
* Perfect recall: an infoset is the owner's whole history of observations and own
  actions, e.g. ``"P0 units{} 0->1 units{3,9} 1->5 units{2,8}"`` or
  ``"P1 attacker{} 7->3,13->9 attacker{1}"``. (The reference code gets the same partition
  from actions that compare together with their infoset.)
* The public state is the number of completed rounds; nothing else is public.

Sizes (all nodes / terminals / infosets player 0 + player 1): GP5 101,989 / 80,363 /
3,698 + 5,610 = 9,308; GP6 800,129 / 580,377 / 36,292 + 67,706 = 103,998, exactly the
[COMPUTED] numbers of seed_cermak.md §4.3.4; the coarsest abstraction (player,
own-sequence length, number of actions) has 19 (GP5) and 23 (GP6) sets. Other readings,
GP5 then GP6 (nodes / terminals / infosets 0 + 1), all of which miss them:

* game ends when the attacker arrives at the goal, before the defender moves:
  62,621 / 48,993 / 2,320 + 3,430 and 395,865 / 284,602 / 22,589 + 38,698;
* game ends at the goal after the defender's move: 69,293 / 54,231 / 2,320 + 3,430 and
  471,629 / 342,915 / 22,589 + 38,698;
* only the current observation in the key: 860 + 1,702 = 2,562 and 2,921 + 13,761 =
  16,682 infosets;
* attacker observation labelled by unit: 3,726 and 37,146 attacker infosets; sorted by
  node: 3,617 and 34,813; as a set (two units on one node seen once): 3,463 and 32,530;
* undirected distances: 4,463 + 5,686 and 48,450 + 69,236 infosets; distances from unit
  to attacker: 2,416 + 5,073 and 23,433 + 60,865.

``GraphPursuit(moves).compile()`` builds the tree with a numba kernel that emits it in
preorder (``pursuit_preorder``, imported only then); ``build_tree(GraphPursuit(moves))``
walks the protocol methods and gives the identical tree (same fingerprint), only slower.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from efgkit.errors import GameDefinitionError, GameSpecError
from efgkit.games.builder import compile_preorder
from efgkit.games.parameters import GameEntry, Parameter
from efgkit.games.protocol import PLAYER0, PLAYER1, TERMINAL
from efgkit.games.pursuit_board import (
    ATTACKER_START,
    CAPTURE_UTILITY,
    DISTANCE,
    GOAL,
    GOAL_UTILITY,
    GRAPH_OUT_EDGES,
    NUM_GRAPH_NODES,
    PAYOFFS,
    UNIT_STARTS,
    VISIBILITY_RADIUS,
)
from efgkit.games.tree import GameTree

MIN_MOVES = 1
MAX_MOVES = 12
"""GP12 has 8.9e11 nodes (each round multiplies them by about 8): far past any node limit."""
DEFAULT_MOVES = 4




def _attacker_sees(attacker: int, unit1: int, unit2: int) -> tuple[int, ...]:
    return tuple(u for u in (unit1, unit2) if DISTANCE[attacker, u] <= VISIBILITY_RADIUS)


def _defender_sees(attacker: int, unit1: int, unit2: int) -> tuple[int, ...]:
    visible = min(DISTANCE[attacker, unit1], DISTANCE[attacker, unit2]) <= VISIBILITY_RADIUS
    return (attacker,) if visible else ()


def _observation_text(player: int, seen: tuple[int, ...]) -> str:
    name = "units" if player == PLAYER0 else "attacker"
    return f"{name}{{{','.join(str(n) for n in seen)}}}"


@cache
def _attacker_moves(attacker: int) -> tuple[tuple[int, str], ...]:
    """(target, label) of each attacker action, in action order."""
    return tuple((target, f"{attacker}->{target}") for target in GRAPH_OUT_EDGES[attacker])


@cache
def _defender_moves(unit1: int, unit2: int) -> tuple[tuple[int, int, str], ...]:
    """(unit 1's target, unit 2's target, label) of each joint action, in action order."""
    return tuple(
        (to1, to2, f"{unit1}->{to1},{unit2}->{to2}")
        for to1 in GRAPH_OUT_EDGES[unit1]
        for to2 in GRAPH_OUT_EDGES[unit2]
    )


@cache
def _labels(player: int, position_a: int, position_b: int) -> tuple[str, ...]:
    """Action labels at an infoset of ``player`` whose pieces stand on the given nodes."""
    if player == PLAYER0:
        return tuple(label for _, label in _attacker_moves(position_a))
    return tuple(label for _, _, label in _defender_moves(position_a, position_b))


def _is_capture(origin: int, attacker: int, unit1: tuple[int, int], unit2: tuple[int, int]) -> bool:
    """Capture after a round: same node, or a swap across an edge. ``unit`` = (from, to)."""
    return any(
        attacker == to or (attacker == start and origin == to) for start, to in (unit1, unit2)
    )


@cache
def _subtree_counts(rounds_left: int, attacker: int, unit1: int, unit2: int
                    ) -> tuple[int, int, int]:
    """(attacker decisions, defender decisions, terminals) under and including an attacker
    decision with ``rounds_left`` rounds to play."""
    attacker_decisions, defender_decisions, terminals = 1, 0, 0
    for target, _ in _attacker_moves(attacker):
        defender_decisions += 1
        for to1, to2, _ in _defender_moves(unit1, unit2):
            if rounds_left == 1 or _is_capture(attacker, target, (unit1, to1), (unit2, to2)):
                terminals += 1
                continue
            below = _subtree_counts(rounds_left - 1, target, to1, to2)
            attacker_decisions += below[0]
            defender_decisions += below[1]
            terminals += below[2]
    return attacker_decisions, defender_decisions, terminals


def node_counts(moves: int) -> tuple[int, int, int]:
    """(attacker decisions, defender decisions, terminals) of GP``moves``, without building it."""
    return _subtree_counts(moves, ATTACKER_START, *UNIT_STARTS)


def num_nodes(moves: int) -> int:
    """All nodes (decision and terminal) of GP``moves``, counted without building it."""
    return sum(node_counts(moves))


class _State(NamedTuple):
    rounds_done: int
    mover: int  # PLAYER0, PLAYER1 or TERMINAL
    origin: int  # the attacker's node at the start of the round
    attacker: int  # its node after this round's move (= origin at its own turn)
    unit1: int
    unit2: int
    utility: float
    attacker_key: str
    defender_key: str


class GraphPursuit:
    """Rules of Graph Pursuit with ``moves`` rounds (the Game protocol)."""

    def __init__(self, moves: int = DEFAULT_MOVES, payoffs: str = "paper") -> None:
        if not MIN_MOVES <= moves <= MAX_MOVES:
            raise GameSpecError(f"pursuit: moves={moves} must be between {MIN_MOVES} and {MAX_MOVES}")
        if payoffs not in PAYOFFS:
            raise GameSpecError(f"pursuit: payoffs={payoffs} must be one of {', '.join(PAYOFFS)}")
        self.moves = moves
        self.payoffs = payoffs
        self.timeout_utility, self.capture_on_goal_utility = PAYOFFS[payoffs]
        self.spec = PURSUIT.canonical_spec({"moves": moves, "payoffs": payoffs})

    # ----------------------------------------------------------- Game protocol
    def initial_state(self) -> _State:
        unit1, unit2 = UNIT_STARTS
        seen = _observation_text(PLAYER0, _attacker_sees(ATTACKER_START, unit1, unit2))
        return _State(0, PLAYER0, ATTACKER_START, ATTACKER_START, unit1, unit2, 0.0,
                      f"P0 {seen}", "P1")

    def current_player(self, state: _State) -> int:
        return state.mover

    def legal_actions(self, state: _State) -> list[str]:
        if state.mover == PLAYER0:
            return list(_labels(PLAYER0, state.attacker, -1))
        if state.mover == PLAYER1:
            return list(_labels(PLAYER1, state.unit1, state.unit2))
        return []

    def chance_outcomes(self, state: _State) -> list[tuple[str, float]]:
        return []

    def apply(self, state: _State, action: str) -> _State:
        if state.mover == PLAYER0:
            targets = {label: target for target, label in _attacker_moves(state.attacker)}
            if action not in targets:
                raise GameDefinitionError(f"pursuit: {action!r} is not a legal attacker move here")
            seen = _defender_sees(state.origin, state.unit1, state.unit2)
            return state._replace(
                mover=PLAYER1,
                attacker=targets[action],
                attacker_key=f"{state.attacker_key} {action}",
                defender_key=f"{state.defender_key} {_observation_text(PLAYER1, seen)}",
            )
        moves = {label: (to1, to2) for to1, to2, label in _defender_moves(state.unit1, state.unit2)}
        if state.mover != PLAYER1 or action not in moves:
            raise GameDefinitionError(f"pursuit: {action!r} is not a legal defender move here")
        to1, to2 = moves[action]
        caught = _is_capture(state.origin, state.attacker, (state.unit1, to1), (state.unit2, to2))
        rounds_done = state.rounds_done + 1
        common = {"rounds_done": rounds_done, "origin": state.attacker, "unit1": to1,
                  "unit2": to2,
                  "defender_key": f"{state.defender_key} {action}"}
        if caught or rounds_done == self.moves:
            on_goal = state.attacker == GOAL
            utility = ((self.capture_on_goal_utility if on_goal else CAPTURE_UTILITY) if caught
                       else GOAL_UTILITY if on_goal else self.timeout_utility)
            return state._replace(mover=TERMINAL, utility=utility, **common)
        seen = _observation_text(PLAYER0, _attacker_sees(state.attacker, to1, to2))
        return state._replace(mover=PLAYER0, attacker_key=f"{state.attacker_key} {seen}",
                              **common)

    def terminal_utility(self, state: _State) -> float:
        return state.utility

    def infoset_key(self, state: _State) -> str:
        return state.attacker_key if state.mover == PLAYER0 else state.defender_key

    def public_state_key(self, state: _State) -> int:
        return state.rounds_done

    # ------------------------------------------------------------ fast builder
    def compile(self, node_limit: int | None = None, progress: bool = False) -> GameTree:
        """Build the GameTree with a numba kernel (identical to ``build_tree(self)``)."""
        from efgkit.games.pursuit_preorder import BOARD, emit_preorder

        attacker_decisions, defender_decisions, terminals = node_counts(self.moves)

        def emit(preorder):
            # Each decision node adds at most one row to its player's trie (plus row 0).
            trie = np.zeros((2, max(attacker_decisions, defender_decisions) + 1, 5), np.int64)
            board = BOARD._replace(timeout_utility=self.timeout_utility,
                                   capture_on_goal_utility=self.capture_on_goal_utility)
            written, trie_rows = emit_preorder(self.moves, board, preorder, trie)
            names = [_infoset_names(player, trie[player, : trie_rows[player]])
                     for player in (PLAYER0, PLAYER1)]
            return written, {"describe_infoset": lambda code: names[code & 1][code >> 1][0],
                             "action_labels_of": lambda code: names[code & 1][code >> 1][1]}

        return compile_preorder(self, attacker_decisions + defender_decisions + terminals, node_limit,
                                progress, emit)


def _decode_observation(player: int, code: int) -> tuple[int, ...]:
    if code == 0:
        return ()
    if player == PLAYER1 or code <= NUM_GRAPH_NODES:
        return (code - 1,)
    return divmod(code - 1 - NUM_GRAPH_NODES, NUM_GRAPH_NODES)


def _infoset_names(player: int, trie: np.ndarray) -> list[tuple[str, tuple[str, ...]]]:
    """(key, action labels) of each trie row of one player; row 0 is the empty history.

    ``trie`` is int64 (rows, 5): parent row, action index taken at the parent, observation
    code, and the owner's position(s) at the infoset. Parents precede their children.
    """
    names: list[tuple[str, tuple[str, ...]]] = [(f"P{player}", ())]
    for parent, action, observation, position_a, position_b in trie[1:].tolist():
        parent_key, parent_labels = names[parent]
        taken = f" {parent_labels[action]}" if parent else ""
        seen = _observation_text(player, _decode_observation(player, observation))
        names.append((f"{parent_key}{taken} {seen}", _labels(player, position_a, position_b)))
    return names


PURSUIT = GameEntry(
    name="pursuit",
    summary=(
        "Graph Pursuit GPx (Čermák et al., Sec. 5.3.3): an attacker walks a 13-node directed "
        "graph to a goal, two defender units chase it, each side sees only 2 steps far"
    ),
    parameters=(
        Parameter("moves", int, DEFAULT_MOVES, "rounds of moves (x of GPx)", minimum=MIN_MOVES,
                  maximum=MAX_MOVES),
        Parameter("payoffs", str, "paper",
                  "paper: timeout 0; reference (the authors' code): timeout +1, a capture "
                  "on the goal 2"),
    ),
    factory=GraphPursuit,
)

ENTRIES = (PURSUIT,)
