"""The wider poker family: bigger Leduc decks, two private cards, several board rounds, 5-card ranking."""

import pytest

from efgkit.errors import GameSpecError
from efgkit.games import build_tree
from efgkit.games.poker import leduc_poker, two_card_poker
from efgkit.games.protocol import TERMINAL
from efgkit.specs import load_game


@pytest.mark.parametrize(
    "game",
    [leduc_poker(ranks=4, suits=3), two_card_poker(3, 2, "1"), two_card_poker(3, 2, "1-1"),
     two_card_poker(4, 2, "3")],
    ids=lambda game: game.spec,
)
def test_fast_compile_equals_generic_builder_for_the_wider_family(game):
    fast, reference = game.compile(), build_tree(game)
    assert fast.fingerprint == reference.fingerprint
    assert fast.public_state_keys == reference.public_state_keys
    assert fast.has_perfect_recall


@pytest.mark.parametrize(
    ("spec", "nodes", "infosets"),
    [("leduc(ranks=13)", 1_179_777, 19_656), ("twocard", 1_826_617, None),
     ("twocard(ranks=4,board=1-1)", 2_022_329, None)],
)
def test_research_games_are_large_but_countable(spec, nodes, infosets):
    from efgkit.specs import make_game

    game = make_game(spec)
    assert game.num_nodes() == nodes
    if infosets is not None:
        assert load_game(spec).num_infosets == infosets


def _play(game, labels):
    state = game.initial_state()
    for label in labels:
        state = game.apply(state, label)
    return state


def test_two_card_showdown_uses_five_card_ranking():
    game = two_card_poker(5, 2, "3")
    assert [game.card_structure.rank_name(r) for r in range(5)] == list("9TJQK")
    names = game.slot_outcome_names
    hearts_pair = next(name for name in names[0] if name.endswith("h") and name.count("h") == 2)
    state = _play(game, [hearts_pair, names[1][0]])
    assert game.infoset_key(state).startswith(f"P0 cards={hearts_pair} ")
    outcomes = dict(game.chance_outcomes(_play(game, [hearts_pair, "JsQs", "call", "call"])))
    assert sum(outcomes.values()) == pytest.approx(1.0) and len(outcomes) == 20  # C(6, 3) boards
    # Player 0 holds two hearts; a three-heart board makes a flush that beats player 1's pair.
    flush_board = next(board for board in outcomes if board.count("h") == 3)
    final = _play(game, [hearts_pair, "JsQs", "call", "call", flush_board, "call", "call"])
    assert game.current_player(final) == TERMINAL
    cards = game.infoset_cards(f"P0 cards={hearts_pair} board={flush_board} bets=cc/cc")
    assert len(cards.private) == 2 and len(cards.board) == 3 and cards.round == 1
    assert game.terminal_utility(final) == 1  # ante 1 each, no bets: player 0 wins player 1's ante


def test_two_card_spec_errors():
    for bad in ["twocard(board=0)", "twocard(board=x)", "twocard(ranks=2,suits=2)", "twocard(board=1-1-1-1)"]:
        with pytest.raises(GameSpecError):
            load_game(bad)
