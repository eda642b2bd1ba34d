"""OpenSpiel's ``universal_poker`` for efgkit's limit poker, and its policies as bucket strategies.

``universal_poker_game(rules)`` loads the OpenSpiel game of a ``LimitPoker`` from its ACPC
game definition (``acpc.game_definition``), so OpenSpiel's solvers (its C++ external-sampling
MCCFR, say) play the game efgkit's poker engines play: the same deck numbered the same way
(card ``rank * num_suits + suit``, the ACPC server's and efgkit's numbering; the rank and suit
letters differ and change nothing), blinds, bet sizes, caps and first players.

``bucket_strategy_from_policy(policy, layout)`` turns an OpenSpiel policy over that game into a
strategy on a ``BucketLayout`` of ``LosslessCards`` (a row per betting decision, hand and
board: the unabstracted game), so efgkit's exact full-game best response
(``poker.streamed.full_game``) measures it. A row's OpenSpiel information state string is
built from a template: the betting tree and an OpenSpiel state are walked together (a deal
node of the tree is the OpenSpiel chance nodes dealing that round's board), and at each
decision the OpenSpiel string has the shape ::

    [Round r][Player: p][Pot: x][Money: a b][Private: CARDS][Public: CARDS][Sequences: ...]

where the betting fixes everything but the two card fields, and a card field lists its cards
in descending card order (OpenSpiel prints card sets; so the ``Public`` field of a game with
more than one board deal does not say which round dealt which card: OpenSpiel's information
states there merge boards that efgkit's lossless rows keep apart, and every such row gets
the merged state's distribution). The action ids are OpenSpiel's (0 fold, 1 call, 2 raise),
matched to efgkit's actions by position (both list fold, call, raise; fold only when facing a
bet) and checked by name.

An information state the policy does not hold (a CFR average policy holds only the states its
iterations visited) plays uniformly, as OpenSpiel's own evaluation of such a policy does (its
default policy is uniform); rows whose hand meets the board are never reached and are uniform.

pyspiel is an optional dependency, imported on use (``interop.openspiel``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import combinations
from typing import Any

import numpy as np

from efgkit.errors import GameDefinitionError, StrategyError
from efgkit.games import poker
from efgkit.games.poker import LimitPoker
from efgkit.interop.acpc import game_definition
from efgkit.interop.openspiel import _pyspiel
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import LosslessCards
from efgkit.poker.codes import DEAL

_ACTION_NAMES = {poker.FOLD: "Fold", poker.CHECK: "Call", poker.CALL: "Call", poker.BET: "Bet",
                 poker.RAISE: "Bet"}
"""efgkit's action kinds -> the word OpenSpiel's ``action_to_string`` ends with."""
_PRIVATE, _PUBLIC, _SEQUENCES = "[Private: ", "][Public: ", "][Sequences: "


def universal_poker_parameters(rules: LimitPoker) -> dict[str, Any]:
    """The ``universal_poker`` parameters of ``rules``' ACPC game definition."""
    d = game_definition(rules)

    def join(values) -> str:
        return " ".join(str(v) for v in values)

    return {"betting": d.betting, "numPlayers": d.num_players, "numRounds": d.num_rounds,
            "blind": join(d.blind), "raiseSize": join(d.raise_size), "firstPlayer": join(d.first_player),
            "maxRaises": join(d.max_raises), "numSuits": d.num_suits, "numRanks": d.num_ranks,
            "numHoleCards": d.num_hole_cards, "numBoardCards": join(d.num_board_cards)}


def universal_poker_game(rules: LimitPoker) -> Any:
    """The pyspiel ``universal_poker`` game of ``rules`` (GameDefinitionError if ACPC cannot
    describe it: see ``acpc.game_definition``)."""
    return _pyspiel().load_game("universal_poker", universal_poker_parameters(rules))


def _card_names(openspiel_game: Any, num_cards: int) -> list[str]:
    """The name OpenSpiel gives each card id (its first chance node deals them all)."""
    state = openspiel_game.new_initial_state()
    chance = _pyspiel().PlayerId.CHANCE
    names = {action: state.action_to_string(chance, action).split()[-1] for action in state.legal_actions()}
    if sorted(names) != list(range(num_cards)):
        raise GameDefinitionError(f"OpenSpiel's {openspiel_game} deals cards {sorted(names)}, efgkit "
                                  f"{num_cards} cards")
    return [names[card] for card in range(num_cards)]


def _card_field(cards, names: list[str]) -> str:
    return "".join(names[c] for c in sorted(cards, reverse=True))


def _templates(layout: BucketLayout, openspiel_game: Any,
               names: list[str]) -> Iterator[tuple[int, str, str, list[int]]]:
    """Per decision (index into the betting tree's decision nodes): the text of its OpenSpiel
    information state up to the private cards and from ``][Sequences: `` on, and the OpenSpiel
    action id of each of its actions. Walks the betting tree depth first beside an OpenSpiel
    state that deals cards 0, 1, 2, ... in order (the cards do not change these parts)."""
    betting = layout.betting
    hole = betting.game.card_structure.private_cards_per_player

    def deal(state, dealt: int):
        while state.is_chance_node():
            if dealt not in state.legal_actions():
                raise GameDefinitionError(f"OpenSpiel's {openspiel_game} does not deal card {dealt} next")
            state = state.child(dealt)
            dealt += 1
        return state, dealt

    stack = [(0, *deal(openspiel_game.new_initial_state(), 0))]
    while stack:
        node, state, dealt = stack.pop()
        kind = int(betting.kind[node])
        child = int(betting.first_child[node])
        if kind == DEAL:
            stack.append((child, *deal(state, dealt)))
            continue
        if kind > 1:
            if not state.is_terminal():
                raise GameDefinitionError(f"OpenSpiel's {openspiel_game} goes on after betting "
                                          f"{betting.histories[node]}")
            continue
        if state.is_chance_node() or state.is_terminal() or state.current_player() != kind:
            raise GameDefinitionError(f"OpenSpiel's {openspiel_game} has no player-{kind} decision after "
                                      f"betting {betting.histories[node]}")
        actions = state.legal_actions()
        words = [state.action_to_string(kind, a).split("=")[-1] for a in actions]
        kinds = [_ACTION_NAMES[_last_action(betting.histories[child + k])]
                 for k in range(int(betting.num_children[node]))]
        if words != kinds:
            raise GameDefinitionError(f"after betting {betting.histories[node]} efgkit's actions are "
                                      f"{list(betting.action_labels[node])}, OpenSpiel's {words}")
        text = state.information_state_string()
        private = _card_field(range(hole * kind, hole * (kind + 1)), names)
        board = _card_field(range(2 * hole, dealt), names)
        before, found, after = text.partition(_PRIVATE + private + _PUBLIC + board + _SEQUENCES)
        if not found:
            raise GameDefinitionError(f"OpenSpiel's information state {text!r} does not have the "
                                      f"expected card fields")
        yield int(betting.decision_index[node]), before + _PRIVATE, _SEQUENCES + after, list(actions)
        stack.extend((child + k, state.child(action), dealt) for k, action in enumerate(actions))


def _last_action(history) -> int:
    """The kind of the last action of a betting ``history`` (rounds of (kind, amount))."""
    return next(round_[-1][0] for round_ in reversed(history) if round_)


def _boards(deal_sizes: list[int], num_cards: int, board: tuple[int, ...] = ()) -> Iterator[tuple[int, ...]]:
    """Every board dealing ``deal_sizes`` cards in turn (each deal ascending), in order."""
    if not deal_sizes:
        yield board
        return
    left = [c for c in range(num_cards) if c not in board]
    for combo in combinations(left, deal_sizes[0]):
        yield from _boards(deal_sizes[1:], num_cards, board + combo)


def lossless_layout(rules: LimitPoker) -> BucketLayout:
    """The ``BucketLayout`` of ``rules``' unabstracted game (``LosslessCards``)."""
    from efgkit.poker.betting_tree import BettingTree

    return BucketLayout(BettingTree(rules), LosslessCards(rules))


def bucket_strategy_from_policy(policy: Any, layout: BucketLayout, openspiel_game: Any = None) -> np.ndarray:
    """The strategy (float64, one probability per layout action) that plays OpenSpiel
    ``policy`` (a ``pyspiel.Policy``: a tabular or CFR average policy, anything answering
    ``get_state_policy(information_state_string)``) on ``layout``, a ``LosslessCards`` layout.

    ``openspiel_game`` is the policy's ``universal_poker`` game (default:
    ``universal_poker_game`` of the layout's rules). States the policy does not hold play
    uniformly (module docstring). Raises StrategyError for a layout with a card abstraction,
    or a policy whose probabilities at a state do not sum to 1 over its legal actions.
    """
    if not isinstance(layout.abstraction, LosslessCards):
        raise StrategyError(f"an OpenSpiel policy converts to the lossless layout (every hand and board), "
                            f"not to {layout.abstraction.description}")
    pyspiel = _pyspiel()
    betting = layout.betting
    game = openspiel_game if openspiel_game is not None else universal_poker_game(betting.game)
    names = _card_names(game, betting.num_cards)
    hand_cards, hand_mask = betting.hands()
    private = [_card_field(cards, names) for cards in hand_cards.tolist()]
    rounds: dict[int, list] = {}
    strategy = layout.uniform()
    for decision, before, after, actions in _templates(layout, game, names):
        node = int(betting.decision_nodes[decision])
        round_index, level = int(betting.round[node]), int(betting.level[node])
        if round_index not in rounds:
            rounds[round_index] = list(_round_rows(layout, round_index, level, hand_cards, hand_mask, names))
        width = int(layout.width[decision])
        start = int(layout.action_start[decision])
        column = {action: k for k, action in enumerate(actions)}
        with _stderr_silenced():
            for public, hands, buckets in rounds[round_index]:
                middle = _PUBLIC + public
                for hand, bucket in zip(hands, buckets, strict=True):
                    key = before + private[hand] + middle + after
                    try:
                        pairs = policy.get_state_policy(key)
                    except pyspiel.SpielError:  # not in the table: the default (uniform) policy
                        continue
                    if not pairs:  # a TabularPolicy's answer for a state it does not hold
                        continue
                    row = start + bucket * width
                    probabilities = np.zeros(width)
                    for action, probability in pairs:
                        probabilities[column[action]] = probability
                    total = probabilities.sum()
                    if abs(total - 1.0) > 1e-6:
                        raise StrategyError(f"OpenSpiel's policy at {key!r} sums to {total:.6g}")
                    strategy[row:row + width] = probabilities
    return strategy


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """File descriptor 2 on /dev/null: OpenSpiel prints every exception it raises to stderr
    before pybind11 turns it into a SpielError, one line per state the policy lacks."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _round_rows(layout: BucketLayout, round_index: int, level: int, hand_cards: np.ndarray,
                hand_mask: np.ndarray, names: list[str]) -> Iterator[tuple[str, list[int], list[int]]]:
    """Per board of a round: its ``Public`` field, the hands off it and their lossless buckets."""
    betting = layout.betting
    for board in _boards(betting.deal_size[:level].tolist(), betting.num_cards):
        mask = sum(1 << c for c in board)
        hands = np.flatnonzero((hand_mask & mask) == 0)
        buckets = layout.abstraction.buckets(round_index, np.array(board, np.int64), hand_cards[hands])
        yield _card_field(board, names), hands.tolist(), buckets.tolist()
