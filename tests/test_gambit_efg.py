"""Gambit .efg files: round trips keep every array, values agree with our LP, OpenSpiel and
pygambit, and bad input of every kind is one EfgkitError naming the line (fuzzed too)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_games import random_tree

from efgkit.errors import EfgkitError, FileFormatError, GameDefinitionError, TreeTooLargeError
from efgkit.games.tree import GameTree
from efgkit.interop.gambit_efg import efg_text, load_efg, parse_efg, write_efg
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import BestResponse, SequenceFormLP, Strategy
from efgkit.solvers.strategy import normalize_per_infoset
from efgkit.specs import load_game

KUHN_VALUE = -1 / 18
STRUCTURE_ARRAYS = (
    "node_kind", "node_infoset", "node_first_child", "node_num_children", "node_chance_prob",
    "node_utility", "infoset_player", "infoset_num_actions", "infoset_action_offset",
)
PAPER_GAMES = ("kuhn", "leduc", "GS3", "P111", "pursuit(moves=2)")

SMALL_GAME = """EFG 2 R "a small game" { "Alice" "Bob" } "comment"
c "root" 1 "deal" { "H" 1/3 "L" 2/3 } 0
p "" 1 1 "high" { "bet" "check" } 0
p "" 2 1 "facing a bet" { "call" "fold" } 0
t "" 1 "bet called, high" { 2, -2 }
t "" 2 "fold" { 1 -1 }
t "" 3 "check" { 1 -1 }
p "" 1 2 "low" { "bet" "check" } 0
p "" 2 1 0
t "" 4 "bet called, low" { -2 2 }
t "" 2
t "" 5 "check, low" { -1 1 }
"""


def random_strategy(tree: GameTree, seed: int) -> Strategy:
    weights = np.random.default_rng(seed).random(tree.num_infoset_actions) + 0.01
    return Strategy.from_behavior(tree, normalize_per_infoset(weights, tree.infoset_action_offset))


def nash_conv(tree: GameTree, strategy: Strategy) -> float:
    return BestResponse(InfosetMap.identity(tree)).evaluate(strategy).nash_conv


def assert_same_structure(a: GameTree, b: GameTree) -> None:
    for name in STRUCTURE_ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.infoset_keys == b.infoset_keys
    assert a.action_labels == b.action_labels


# --------------------------------------------------------------------------- reading
def test_small_game_reads_with_outcome_reuse_rationals_and_infosets():
    tree = parse_efg(SMALL_GAME, source="small.efg")
    assert tree.spec == "efg:small.efg"
    assert tree.sizes()["histories"] == 11
    assert tree.infoset_keys == ["high", "low", "facing a bet"]
    assert tree.infoset_actions(2) == ["call", "fold"]
    assert tree.node_chance_prob[1:3].tolist() == [1 / 3, 2 / 3]
    # Bob's infoset spans both deals; outcome 2 ("fold") is reused without its payoffs.
    assert sorted(tree.node_utility[tree.node_kind == 3].tolist()) == [-2, -1, 1, 1, 1, 2]
    assert tree.has_perfect_recall


def test_small_game_value_is_known():
    # Betting high weakly dominates checking. With Alice bluffing low with probability b and
    # Bob calling with q, Alice gets 1/3 (1 + q) + 2/3 (b (1 - 3q) - (1 - b))
    # = -1/3 + 4b/3 + q (1/3 - 2b); Bob's best reply makes b = 1/6 optimal, value -1/9.
    assert SequenceFormLP(parse_efg(SMALL_GAME)).solve().game_value == pytest.approx(-1 / 9, abs=1e-9)


def test_nonterminal_outcomes_add_up_along_the_path():
    text = """EFG 2 R "stages" { "1" "2" }
p "" 1 1 "first" { "a" "b" } 1 "stage payoff" { 3 -3 }
t "" 2 "end" { 1 -1 }
t "" 0
"""
    tree = parse_efg(text)
    assert tree.node_utility[tree.node_kind == 3].tolist() == [4.0, 3.0]


def test_numbered_keys_when_infoset_names_are_empty_or_repeated():
    text = """EFG 2 R "" { "" "" }
p "" 1 1 "" { "x" "y" } 0
p "" 2 7 "same" { "l" "r" } 0
t "" 1 "o" { 1 -1 }
t "" 2 "p" { -1 1 }
p "" 2 7 "same" { "l" "r" } 0
t "" 1
t "" 2
"""
    assert parse_efg(text).infoset_keys == ["P0 infoset 1", "P1 infoset 7 same"]


def test_openspiels_kuhn_efg_reads_as_kuhn():
    pyspiel = pytest.importorskip("pyspiel")
    tree = parse_efg(pyspiel.get_kuhn_poker_efg_data(), source="kuhn.efg")
    kuhn = load_game("kuhn")
    assert tree.sizes()["histories"] == kuhn.num_nodes
    assert tree.num_infosets == kuhn.num_infosets == 12
    assert SequenceFormLP(tree).solve().game_value == pytest.approx(KUHN_VALUE, abs=1e-9)


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("spec", PAPER_GAMES)
def test_round_trip_keeps_every_array_value_and_nash_conv(spec, tmp_path):
    tree = load_game(spec)
    path = tmp_path / "game.efg"
    write_efg(tree, path)
    back = load_efg(path)
    assert back.spec == f"efg:{path}"
    assert_same_structure(tree, back)
    assert back.sizes() == tree.sizes()
    strategy = random_strategy(tree, seed=len(spec))
    assert nash_conv(back, Strategy.from_behavior(back, strategy.behavior())) == nash_conv(tree, strategy)
    if tree.num_nodes < 10_000:
        lp_value = SequenceFormLP(back).solve().game_value
        assert lp_value == pytest.approx(SequenceFormLP(tree).solve().game_value, abs=1e-9)


def test_written_text_is_stable_and_reads_back_identically():
    tree = parse_efg(SMALL_GAME)
    text = efg_text(tree)
    again = parse_efg(text)
    assert efg_text(again) == text
    assert_same_structure(tree, again)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_random_games_round_trip_exactly(seed):
    tree = random_tree(seed)
    back = parse_efg(efg_text(tree))
    assert_same_structure(tree, back)
    strategy = random_strategy(tree, seed)
    assert nash_conv(back, Strategy.from_behavior(back, strategy.behavior())) == nash_conv(tree, strategy)


def test_numbers_are_written_exactly():
    text = """EFG 2 R "" { "" "" }
c "" 1 "" { "a" 0.1 "b" 0.7 "c" 1/5 } 0
t "" 1 "x" { 0.3 -0.3 }
t "" 2 "y" { 1e-3 -1e-3 }
t "" 3 "z" { -2.5 2.5 }
"""
    tree = parse_efg(text)
    back = parse_efg(efg_text(tree))
    assert back.node_chance_prob.tolist() == tree.node_chance_prob.tolist()
    assert back.node_utility.tolist() == tree.node_utility.tolist() == [0, 0.3, 1e-3, -2.5]


@pytest.mark.parametrize("spec", ["kuhn", "leduc"])
def test_written_efg_loads_in_openspiel_with_the_same_values(spec):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy
    from open_spiel.python.algorithms import exploitability

    from efgkit.interop.openspiel import compile_openspiel_game

    tree = load_game(spec)
    openspiel_game = pyspiel.load_efg_game(efg_text(tree))
    imported = compile_openspiel_game(openspiel_game)
    assert imported.num_nodes == tree.num_nodes
    assert imported.num_infosets == tree.num_infosets
    value = SequenceFormLP(tree).solve().game_value
    assert SequenceFormLP(imported).solve().game_value == pytest.approx(value, abs=1e-9)
    uniform = nash_conv(tree, Strategy.uniform(InfosetMap.identity(tree)))
    theirs = exploitability.nash_conv(openspiel_game, policy.UniformRandomPolicy(openspiel_game))
    assert theirs == pytest.approx(uniform, abs=1e-9)


@pytest.mark.parametrize("spec", ["kuhn", "GS3", "pursuit(moves=2)"])
def test_pygambit_lp_solve_agrees_with_our_lp(spec, tmp_path):
    gambit = pytest.importorskip("pygambit")
    tree = load_game(spec)
    path = tmp_path / "game.efg"
    write_efg(tree, path)
    game = gambit.read_efg(str(path))
    result = gambit.nash.lp_solve(game, rational=False)
    theirs = float(result.equilibria[0].payoff(list(game.players)[0]))
    assert theirs == pytest.approx(SequenceFormLP(tree).solve().game_value, abs=1e-7)


def test_pygambits_own_writing_of_our_file_reads_back_the_same_tree(tmp_path):
    gambit = pytest.importorskip("pygambit")
    tree = load_game("kuhn")
    path = tmp_path / "kuhn.efg"
    write_efg(tree, path)
    assert_same_structure(tree, parse_efg(gambit.read_efg(str(path)).to_efg()))


# --------------------------------------------------------------------------- bad input
BAD_FILES = [
    ("", FileFormatError, ":1:1: not a Gambit .efg file"),
    ('NFG 1 R "" { "" "" }', FileFormatError, ":1:1: not a Gambit .efg file"),
    ('EFG 3 R "" { "" "" }', FileFormatError, ":1:5: expected the format version 2"),
    ('EFG 2 R "" { "a" "b" "c" }\nt "" 0', GameDefinitionError, ":1:12: the game has 3 players"),
    ('EFG 2 R "" { "a" "b" }\n', FileFormatError, ":2:1: the file has no nodes"),
    ('EFG 2 R "" { "a" "b" }\nc "" 1 "" { "x" 1/2 "y" 1/3 } 0\nt "" 0\nt "" 0',
     GameDefinitionError, ":2:8: the chance probabilities sum to 0.833333333333"),
    ('EFG 2 R "" { "a" "b" }\nc "" 1 "" { "x" 3/2 "y" -1/2 } 0\nt "" 0\nt "" 0',
     GameDefinitionError, "is negative"),
    ('EFG 2 R "" { "a" "b" }\nt "" 1 "o" { 1 1 }', GameDefinitionError,
     ":2:1: the payoffs at terminal node 0 are 1 and 1, which do not sum to 0"),
    ('EFG 2 R "" { "a" "b" }\np "" 1 1 "i" { "x" "y" } 0\nt "" 0\np "" 1 1 "i" { "x" "z" } 0\nt "" 0',
     GameDefinitionError, ":4:10: infoset 1 of player 1 is described differently than at "),
    ('EFG 2 R "" { "a" "b" }\np "" 1 1 0\nt "" 0', GameDefinitionError,
     ":2:8: infoset 1 of player 1 is used before it is described"),
    ('EFG 2 R "" { "a" "b" }\np "" 3 1 "i" { "x" } 0\nt "" 0', GameDefinitionError,
     ":2:6: player 3 does not exist"),
    ('EFG 2 R "" { "a" "b" }\np "" 1 1 "i" { } 0', GameDefinitionError, "needs at least one action"),
    ('EFG 2 R "" { "a" "b" }\nt "" 4', GameDefinitionError, ":2:6: outcome 4 is used before it is"),
    ('EFG 2 R "" { "a" "b" }\nt "" 1 "o" { 1 -1 }\nt "" 0', FileFormatError,
     ":3:1: text after the end of the game tree"),
    ('EFG 2 R "" { "a" "b" }\np "" 1 1 "i" { "x" "y" } 0\nt "" 0', FileFormatError,
     ":3:7: the file ends inside the tree: node 0 still needs 1 more child"),
    ('EFG 2 R "" { "a" "b" }\np "" 1 1 "i { "x" } 0', FileFormatError,
     ":2:16: expected '{' to open the action list, found word 'x'"),
    ('EFG 2 R "" { "a" "b }', FileFormatError, ":1:18: this string has no closing quote"),
    ('EFG 2 R "" { "a" "b" }\nt "" 1 "o" { 1e999 -1 }', FileFormatError, "is not a finite number"),
    ('EFG 2 R "" { "a" "b" }\nt "" 1 "o" { 1/0 -1 }', FileFormatError, "is not a finite number"),
    ('EFG 2 R "" { "a" "b" }\nt "" 1 "o" { 1' + "0" * 200 + " 1 }", FileFormatError,
     "more than 100 characters"),
    ('EFG 2 R "" { "a" "b" }\nt "" 0 "o" { 1 -1 }', FileFormatError, "outcome 0 means 'no outcome'"),
    ('EFG 2 R "" { "a" "b" }\nt "" 1 "o" { 1 -1 1 }', GameDefinitionError, "has 3 payoffs"),
    ('EFG 2 R "" { "a" "b" }\nq "" 0', FileFormatError, ":2:1: expected a node ('c', 'p' or 't')"),
    ('EFG 2 R "" { "a" "b" } \x01', FileFormatError, "unexpected character"),
]


@pytest.mark.parametrize(("text", "error", "message"), BAD_FILES,
                         ids=[f"bad{k}" for k in range(len(BAD_FILES))])
def test_bad_files_give_one_error_naming_the_place(text, error, message):
    with pytest.raises(error) as caught:
        parse_efg(text, source="bad.efg")
    assert str(caught.value).startswith("bad.efg:")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_node_limit_names_the_line():
    tree_text = efg_text(load_game("kuhn"))
    with pytest.raises(TreeTooLargeError, match=r"^kuhn.efg:\d+:1: the game has more than 20 nodes"):
        parse_efg(tree_text, source="kuhn.efg", node_limit=20)


def test_trees_deeper_than_the_depth_type_are_refused():
    depth = 32_769
    text = 'EFG 2 R "" { "a" "b" }\n' + 'p "" 1 1 "i" { "x" } 0\n' * depth + 't "" 0\n'
    with pytest.raises(GameDefinitionError, match=r"^deep:32770:1: the tree is deeper than 32,767"):
        parse_efg(text, source="deep")


def test_unreadable_and_non_utf8_files(tmp_path):
    with pytest.raises(FileFormatError, match="cannot read the .efg file"):
        load_efg(tmp_path / "missing.efg")
    path = tmp_path / "latin.efg"
    path.write_bytes(b'EFG 2 R "" { "a" "b" }\nt "" 1 "\xe9" { 1 -1 }')
    with pytest.raises(FileFormatError, match=r"latin.efg:2: the .efg file is not UTF-8"):
        load_efg(path)


def test_escaped_quotes_round_trip():
    text = 'EFG 2 R "" { "a" "b" }\np "" 1 1 "say \\"hi\\" \\\\" { "x" } 0\nt "" 0\n'
    tree = parse_efg(text)
    assert tree.infoset_keys == ['say "hi" \\']
    assert parse_efg(efg_text(tree)).infoset_keys == tree.infoset_keys


# --------------------------------------------------------------------------- fuzzing
FUZZ_SEED = efg_text(parse_efg(SMALL_GAME))
FUZZ_ALPHABET = st.sampled_from(list('"{}, \n\\/.-+e0123456789cptEFGR') + ['"x"', " 1/2 ", " 0 ", "\x00"])


def _parses_or_refuses(text: str) -> None:
    try:
        tree = parse_efg(text, source="fuzz.efg", node_limit=10_000)
    except EfgkitError as exc:
        message = str(exc)
        assert message.startswith("fuzz.efg:") and "\n" not in message
        return
    tree.validate()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_efg_files_parse_or_fail_with_one_located_error(data):
    text = FUZZ_SEED
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text)))
        stop = data.draw(st.integers(start, min(len(text), start + 12)))
        insert = "".join(data.draw(st.lists(FUZZ_ALPHABET, max_size=4)))
        text = text[:start] + insert + text[stop:]
    _parses_or_refuses(text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_random_text_never_crashes_the_efg_parser(text):
    _parses_or_refuses('EFG 2 R "" { "a" "b" }\n' + text)
    _parses_or_refuses(text)
