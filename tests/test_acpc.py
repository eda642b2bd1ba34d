"""ACPC game definitions: Leduc's gives efgkit's leduc node for node, other limit games agree
with OpenSpiel's universal_poker, what the engine cannot play is refused naming the line,
and fuzzed definitions never crash."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.errors import EfgkitError, FileFormatError, GameDefinitionError, TreeTooLargeError
from efgkit.games.poker import CardStructure
from efgkit.games.tree import GameTree
from efgkit.interop.acpc import game_definition, limit_poker, load_acpc, parse_gamedef, write_acpc
from efgkit.solvers import SequenceFormLP
from efgkit.specs import load_game, make_game

LEDUC_GAMEDEF = """# Leduc hold'em as in the CFR+ release (seed_burch.md 6.2)
GAMEDEF
limit
numPlayers = 2
numRounds = 2
blind = 1 1
raiseSize = 2 4
firstPlayer = 1 1
maxRaises = 2 2
numSuits = 2
numRanks = 3
numHoleCards = 1
numBoardCards = 0 1
END GAMEDEF
"""
KUHN_GAMEDEF = """GAMEDEF
limit
numPlayers = 2
numRounds = 1
blind = 1 1
raiseSize = 1
firstPlayer = 1
maxRaises = 1
numSuits = 1
numRanks = 3
numHoleCards = 1
numBoardCards = 0
END GAMEDEF
"""
ALL_ARRAYS = (
    "node_kind", "node_infoset", "node_first_child", "node_num_children", "node_public_state",
    "node_chance_prob", "node_utility", "infoset_player", "infoset_num_actions",
    "infoset_action_offset",
)


def gamedef_file(tmp_path, text: str, name: str = "game.game"):
    path = tmp_path / name
    path.write_text(text)
    return path


def with_line(text: str, field: str, replacement: str | None) -> str:
    """The definition with the line starting with ``field`` replaced (or dropped)."""
    lines = []
    for line in text.splitlines():
        if line.lower().startswith(field.lower()):
            if replacement is not None:
                lines.append(replacement)
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def assert_same_arrays(a: GameTree, b: GameTree) -> None:
    for name in ALL_ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_leduc_gamedef_is_efgkits_leduc_node_for_node(tmp_path):
    tree = load_game(f"acpc:{gamedef_file(tmp_path, LEDUC_GAMEDEF)}")
    leduc = load_game("leduc")
    assert_same_arrays(tree, leduc)
    assert tree.infoset_keys == leduc.infoset_keys
    assert tree.action_labels == leduc.action_labels
    assert tree.public_state_keys == leduc.public_state_keys
    assert tree.game.card_structure == CardStructure(3, 2, 1, (0, 1))


def test_kuhn_gamedef_is_kuhn_with_acpc_action_names(tmp_path):
    tree = load_acpc(gamedef_file(tmp_path, KUHN_GAMEDEF))
    kuhn = load_game("kuhn")
    assert_same_arrays(tree, kuhn)
    assert tree.infoset_actions(0) == ["call", "raise"]
    assert SequenceFormLP(tree).solve().game_value == pytest.approx(-1 / 18, abs=1e-9)


@pytest.mark.parametrize("spec", ["leduc", "kuhn"])
def test_written_definition_reads_back_as_the_same_game(spec, tmp_path):
    tree = load_game(spec)
    path = tmp_path / "out.game"
    write_acpc(tree, path)
    back = load_acpc(path)
    assert_same_arrays(tree, back)
    text = path.read_text()
    assert text.startswith(f"# written by efgkit from {spec}\nGAMEDEF\nlimit\n")


@pytest.mark.parametrize(
    "fields",
    [
        {"numRanks": 4, "blind": "2 2", "raiseSize": "1 3", "maxRaises": "1 3"},
        {"numRounds": 3, "numSuits": 1, "numRanks": 5, "raiseSize": "1 2 2", "maxRaises": "2 1 2",
         "firstPlayer": "1 1 1", "numBoardCards": "0 0 1"},
        {"numHoleCards": 2, "maxRaises": "1 2"},
        {"blind": "2 1", "firstPlayer": "2 1", "raiseSize": "2 2", "maxRaises": "3 2"},
        {"numRounds": 3, "blind": "4 2", "firstPlayer": "2 1 1", "raiseSize": "2 2 4",
         "maxRaises": "2 1 1", "numBoardCards": "0 1 0", "numSuits": 2, "numRanks": 3},
    ],
    ids=["per-round-caps", "three-rounds", "two-hole-cards", "blinds", "reverse-blinds-three-rounds"],
)
def test_values_match_openspiels_universal_poker(fields, tmp_path):
    pyspiel = pytest.importorskip("pyspiel")
    from efgkit.interop.openspiel import compile_openspiel_game

    parameters = {"betting": "limit", "numPlayers": 2, "numRounds": 2, "blind": "1 1",
                  "raiseSize": "2 4", "firstPlayer": "1 1", "maxRaises": "2 2", "numSuits": 2,
                  "numRanks": 3, "numHoleCards": 1, "numBoardCards": "0 1", **fields}
    text = "GAMEDEF\nlimit\n" + "".join(f"{k} = {v}\n" for k, v in parameters.items()
                                       if k != "betting") + "END GAMEDEF\n"
    try:
        ours = load_acpc(gamedef_file(tmp_path, text))
    except GameDefinitionError:
        assert parameters["numHoleCards"] > 1  # an engine with one hole card refuses two
        return
    theirs = compile_openspiel_game(pyspiel.load_game("universal_poker", parameters))
    if parameters["numHoleCards"] == 1:  # efgkit deals a hand at once, OpenSpiel card by card
        assert ours.num_nodes == theirs.num_nodes
    assert ours.num_infosets == theirs.num_infosets
    value = SequenceFormLP(ours).solve().game_value
    assert value == pytest.approx(SequenceFormLP(theirs).solve().game_value, abs=1e-9)


@pytest.mark.parametrize(
    ("edits", "line", "message"),
    [
        ({"limit": "nolimit"}, 3, "no-limit betting is not supported"),
        ({"numPlayers": "numPlayers = 3", "blind": "blind = 1 1 1"}, 4, "3 players are not supported"),
        ({"numBoardCards": "numBoardCards = 1 0"}, 13, "the first betting round cannot open with a board"),
        ({"maxRaises": None}, 13, "maxRaises is missing"),
        ({"maxRaises": "maxRaises = 0 2"}, 9, "maxRaises must be from 1 to 62"),
        ({"maxRaises": "maxRaises = 2 63"}, 9, "maxRaises must be from 1 to 62"),
        ({"numSuits": "stack = 5 5\nnumSuits = 2"}, 10, "a stack of 5 can force an all-in"),
        ({"numRanks": "numRanks = 1", "numSuits": "numSuits = 4"}, 11, "not supported by efgkit's poker"),
    ],
)
def test_what_the_engine_cannot_play_is_refused_naming_the_line(edits, line, message):
    text = LEDUC_GAMEDEF
    for field, replacement in edits.items():
        text = with_line(text, field, replacement)
    with pytest.raises(GameDefinitionError) as caught:
        limit_poker(parse_gamedef(text, "x.game"), "acpc:x.game", "x.game")
    assert str(caught.value).startswith(f"x.game:{line}: ")
    assert message in str(caught.value)


HULHE_GAMEDEF = """GAMEDEF
limit
numPlayers = 2
numRounds = 4
blind = 10 5
raiseSize = 10 10 20 20
firstPlayer = 2 1 1 1
maxRaises = 3 4 4 4
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


def test_heads_up_limit_holdem_definition_is_the_holdem_game():
    game = limit_poker(parse_gamedef(HULHE_GAMEDEF, "hulhe.game"), "acpc:hulhe.game", "hulhe.game")
    holdem = make_game("holdem")
    for field in ("blinds", "first_player", "bet_sizes", "raise_sizes", "max_bets_per_round",
                  "card_structure", "num_rounds"):
        assert getattr(game, field) == getattr(holdem, field), field
    assert (game.blinds, game.first_player) == ((10, 5), (1, 0, 0, 0))


def test_the_hulhe_file_is_holdem_for_the_streamed_engines_and_info(tmp_path, runner, json_output):
    """``acpc:PATH`` names the rules (not a compiled tree) where a command needs only them:
    the streamed engines' betting tree, and ``info``'s count without building."""
    from efgkit.cli import main
    from efgkit.poker.betting_tree import BettingTree

    path = gamedef_file(tmp_path, HULHE_GAMEDEF, "hulhe.game")
    ours, holdem = BettingTree(make_game(f"acpc:{path}")), BettingTree(make_game("holdem"))
    for field in ("kind", "num_children", "contribution", "chance_weight", "deal_size"):
        assert np.array_equal(getattr(ours, field), getattr(holdem, field)), field
    counted = json_output(runner.invoke(main, ["info", f"acpc:{path}", "--json"]))
    reference = json_output(runner.invoke(main, ["info", "holdem", "--json"]))
    assert counted["built"] is False and counted["game"] == f"acpc:{path}"
    counted.pop("game"), reference.pop("game")
    assert counted == reference
    missing = runner.invoke(main, ["solve", f"acpc:{tmp_path / 'none.game'}", "--engine", "sampled",
                                   "--buckets", "none"])
    assert missing.exit_code == 2 and "Traceback" not in missing.output


def test_hands_of_three_hole_cards_are_refused_by_every_poker_engine(tmp_path, runner):
    """ACPC definitions may deal three hole cards; the poker engines' terminal kernels remove two."""
    from efgkit.cli import main
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.materialised.public_tree import PublicTree

    text = with_line(with_line(LEDUC_GAMEDEF, "numHoleCards", "numHoleCards = 3"), "numRanks", "numRanks = 5")
    path = gamedef_file(tmp_path, text, "three.game")
    game = make_game(f"acpc:{path}")
    for engine in (BettingTree, PublicTree):
        with pytest.raises(GameDefinitionError, match="at most 2 hole cards"):
            engine(game)
    for arguments in (["--engine", "sampled", "--buckets", "none"], ["--engine", "public-tree"]):
        result = runner.invoke(main, ["solve", f"acpc:{path}", "-n", "1", *arguments])
        assert result.exit_code == 2 and "at most 2 hole cards" in result.stderr
        assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_two_hole_cards_are_played_or_refused_at_their_line():
    text = with_line(LEDUC_GAMEDEF, "numHoleCards", "numHoleCards = 2")
    text = with_line(with_line(text, "numRanks", "numRanks = 4"), "numSuits", "numSuits = 3")
    try:
        game = limit_poker(parse_gamedef(text, "x.game"), "acpc:x.game", "x.game")
    except GameDefinitionError as exc:
        assert str(exc).startswith("x.game:12: numHoleCards 2")
    else:
        assert game.card_structure.private_cards_per_player == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ":1: no 'GAMEDEF' line"),
        ("limit\n", ":1: expected 'GAMEDEF' to open the game definition"),
        (LEDUC_GAMEDEF.replace("END GAMEDEF\n", ""), ":13: the file ends before 'END GAMEDEF'"),
        (LEDUC_GAMEDEF + "numRounds = 3\n", ":15: text after 'END GAMEDEF'"),
        (with_line(LEDUC_GAMEDEF, "numRanks", "numRanks = three"), ":11: numRanks needs whole numbers"),
        (with_line(LEDUC_GAMEDEF, "numRanks", "numRanks = 3\nnumRanks = 4"), ":12: numRanks is given twice"),
        (with_line(LEDUC_GAMEDEF, "numRanks", "numRank = 3"), ":11: unknown line 'numRank = 3'"),
        (with_line(LEDUC_GAMEDEF, "raiseSize", "raiseSize = 2"), ":7: raiseSize needs 2 values"),
        (with_line(LEDUC_GAMEDEF, "numRounds", "numRounds = 5"),
         ":5: numRounds must be one number from 1 to 4"),
        (with_line(LEDUC_GAMEDEF, "numSuits", None), ":13: numSuits is missing"),
        (with_line(LEDUC_GAMEDEF, "numRanks", "numRanks = 99999999999"), ":11: numRanks needs whole"),
        (with_line(LEDUC_GAMEDEF, "numBoardCards", "numBoardCards = 0 5"), ":13: the deck of 6 cards is too"),
    ],
)
def test_malformed_definitions_name_the_line(text, message):
    with pytest.raises(FileFormatError) as caught:
        parse_gamedef(text, "x.game")
    assert str(caught.value).startswith("x.game:")
    assert message in str(caught.value)


def test_games_too_large_to_enumerate_give_their_node_count(tmp_path):
    big = with_line(with_line(LEDUC_GAMEDEF, "numSuits", "numSuits = 4"), "numRanks", "numRanks = 13")
    with pytest.raises(TreeTooLargeError, match=r"has 9,984,833 nodes, more than 1,000,000 nodes"):
        load_acpc(gamedef_file(tmp_path, big), node_limit=1_000_000)
    huge = with_line(with_line(big, "numRounds", "numRounds = 4"), "raiseSize", "raiseSize = 2 4 4 4")
    huge = with_line(huge, "maxRaises", "maxRaises = 62 62 62 62")
    huge = with_line(huge, "firstPlayer", "firstPlayer = 1 1 1 1")
    huge = with_line(huge, "numBoardCards", "numBoardCards = 0 1 0 0")
    expected = r"has [\d,]{15,} nodes, more than [\d,]+ nodes \(the node limit: a memory budget"
    with pytest.raises(TreeTooLargeError, match=expected):
        load_acpc(gamedef_file(tmp_path, huge))


def test_games_acpc_cannot_describe_are_refused_when_writing(tmp_path):
    with pytest.raises(GameDefinitionError, match="deals ranks"):
        write_acpc(load_game("P111"), tmp_path / "p.game")
    with pytest.raises(GameDefinitionError, match="is not a poker game built by efgkit"):
        write_acpc(load_game("GS3"), tmp_path / "g.game")
    assert not (tmp_path / "p.game").exists() and not (tmp_path / "g.game").exists()


def test_game_definition_of_leduc_matches_the_file():
    from_file = dataclasses.replace(parse_gamedef(LEDUC_GAMEDEF), lines=())
    assert game_definition(load_game("leduc").game) == from_file


# --------------------------------------------------------------------------- fuzzing
FIELD_VALUES = st.sampled_from(["0", "1", "2", "3", "4", "13", "62", "63", "1 1", "0 1", "2 4", "1 2 3",
                                "", "x", "-1", "99999999999", "1 1 1 1"])
FIELD_NAMES = st.sampled_from(["numPlayers", "numRounds", "stack", "blind", "raiseSize", "firstPlayer",
                               "maxRaises", "numSuits", "numRanks", "numHoleCards", "numBoardCards",
                               "limit", "nolimit", "GAMEDEF", "END GAMEDEF", "# comment", "bogus"])


@settings(max_examples=150, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 15), FIELD_NAMES, FIELD_VALUES, st.booleans()),
                      max_size=4))
def test_fuzzed_definitions_load_or_fail_with_one_located_error(edits, tmp_path_factory):
    lines = LEDUC_GAMEDEF.splitlines()
    for position, name, value, replace in edits:
        line = f"{name} = {value}" if not name.isupper() and not name.startswith("#") else name
        position = min(position, len(lines))
        lines[position:position + int(replace)] = [line]
    path = tmp_path_factory.mktemp("fuzz") / "f.game"
    path.write_text("\n".join(lines) + "\n")
    try:
        tree = load_acpc(path, node_limit=20_000)
    except EfgkitError as exc:
        assert str(exc).startswith(f"{path}:") or "nodes" in str(exc)
        assert "\n" not in str(exc)
        return
    tree.validate()


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_random_text_never_crashes_the_gamedef_parser(text):
    for candidate in (text, "GAMEDEF\n" + text, "GAMEDEF\n" + text + "\nEND GAMEDEF"):
        try:
            limit_poker(parse_gamedef(candidate, "r.game"), "acpc:r.game", "r.game")
        except EfgkitError as exc:
            assert str(exc).startswith("r.game") and "\n" not in str(exc)
