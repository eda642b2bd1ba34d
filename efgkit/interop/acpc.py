"""ACPC game definitions (``GAMEDEF ... END GAMEDEF``) as members of efgkit's poker family.

The format is the ACPC server's (project_acpc_server/game.c, ``readGame``; also OpenSpiel's
``universal_poker``): one field per line, ``name = values``, names case-insensitive, lines
starting with ``#`` ignored. Leduc hold'em (seed_burch.md §6.2) reads ::

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

A definition becomes a ``LimitPoker`` (efgkit/games/poker.py), so the tree keeps its
``card_structure`` and card abstraction works on it. The mapping: ACPC player ``i`` is
efgkit's player ``i - 1``; ``blind`` gives the players' starting contributions (equal
blinds are an ante) and ``firstPlayer`` who opens each round (heads-up limit hold'em,
``holdem.limit.2p.reverse_blinds.game``, is efgkit's ``holdem``),
``raiseSize[r]`` is round r's one bet and raise size (a raise first matches, as in ACPC),
``maxRaises[r]`` caps round r's aggressive actions (ACPC counts the opening bet as a
raise, as the engine does), cards are dealt uniformly without replacement, player 0's
hole cards first, then player 1's, then each round's board; actions are fold, call (also
the check) and raise (also the bet), in that order, with Leduc's labels. ACPC ranks hands
the standard poker way (best five cards; with one hole and one board card a pair wins,
else the higher hole card), as ``CardStructure.showdown`` does. Card names follow the
engine (``games.poker.rank_symbols``): four suits keep the top ranks, as the server deals
them (``numRanks = 8`` is 7 to A, as in ``holdem(ranks=8)``); fewer suits count down from
the king (3 ranks are J, Q, K, where the ACPC server deals Q, K, A: the ranking is the
same). So Leduc's definition gives efgkit's ``leduc`` node for node.

What efgkit cannot play is refused with the line of the field: no-limit betting, other
than two players, a round without bets (``maxRaises`` 0), a missing
``maxRaises``, more than 62 raises in a round (the server's 64-action limit would then
bind), a stack small enough to force an all-in, and any deck or deal that the engine's
``CardStructure`` refuses (its message says why; e.g. hole and board cards beyond what
the engine's showdown handles). Games too large to enumerate fail before anything is
built, with their node count (``LimitPoker.num_nodes`` counts without building).

Writing goes the other way for any LimitPoker that deals cards (not ranks) and has one
bet size per round, equal to its raise size (Kuhn, Leduc; not Čermák et al.'s Pbrc,
which deals ranks); the written game is the same up to action labels and order.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from efgkit.errors import FileFormatError, GameDefinitionError
from efgkit.games.poker import LEDUC_STYLE, CardStructure, LimitPoker
from efgkit.games.tree import GameTree
from efgkit.interop.gambit_efg import read_text
from efgkit.io.atomic import atomic_output_path

SPEC_PREFIX = "acpc:"
MAX_ROUNDS = 4
MAX_SUITS = 4
MAX_RANKS = 13
MAX_HOLE_CARDS = 3
MAX_RAISES_MODELLED = 62
"""The ACPC server allows no raise once a round has 63 actions (MAX_NUM_ACTIONS 64 minus
the players), which binds only when a round may hold more than 62 raises."""
MAX_VALUE = 2**31 - 1

_LINE = re.compile(r"^\s*([A-Za-z]+)\s*(?:=\s*)?(.*?)\s*$")
_FIELDS = {
    "numplayers": "numPlayers", "numrounds": "numRounds", "stack": "stack", "blind": "blind",
    "raisesize": "raiseSize", "firstplayer": "firstPlayer", "maxraises": "maxRaises",
    "numsuits": "numSuits", "numranks": "numRanks", "numholecards": "numHoleCards",
    "numboardcards": "numBoardCards",
}


@dataclass(frozen=True)
class GameDefinition:
    """The fields of an ACPC ``GAMEDEF`` (per-player and per-round fields as tuples).

    ``stack`` and ``max_raises`` are None when the definition leaves them out (unlimited
    in ACPC); ``lines`` gives the line of each field read from a file ("betting" for the
    limit/nolimit line, "end" for END GAMEDEF), for messages.
    """

    betting: str
    num_players: int
    num_rounds: int
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]
    first_player: tuple[int, ...]
    max_raises: tuple[int, ...] | None
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: tuple[int, ...]
    stack: tuple[int, ...] | None = None
    lines: tuple[tuple[str, int], ...] = ()

    def text(self, comment: str = "") -> str:
        """The definition in the ACPC format (as ``printGame`` writes it)."""
        def join(values: tuple[int, ...]) -> str:
            return " ".join(str(v) for v in values)

        fields = [("numPlayers", str(self.num_players)), ("numRounds", str(self.num_rounds))]
        if self.stack is not None:
            fields.append(("stack", join(self.stack)))
        fields += [("blind", join(self.blind)), ("raiseSize", join(self.raise_size)),
                   ("firstPlayer", join(self.first_player))]
        if self.max_raises is not None:
            fields.append(("maxRaises", join(self.max_raises)))
        fields += [("numSuits", str(self.num_suits)), ("numRanks", str(self.num_ranks)),
                   ("numHoleCards", str(self.num_hole_cards)),
                   ("numBoardCards", join(self.num_board_cards))]
        body = "".join(f"{name} = {value}\n" for name, value in fields)
        header = "".join(f"# {line}\n" for line in comment.splitlines())
        return f"{header}GAMEDEF\n{self.betting}\n{body}END GAMEDEF\n"


# ---------------------------------------------------------------------- reading
def parse_gamedef(text: str, source: str = "<gamedef>") -> GameDefinition:
    """Read the fields of a ``GAMEDEF`` text; FileFormatError naming the line when malformed."""
    def error(line: int, message: str) -> FileFormatError:
        return FileFormatError(f"{source}:{line}: {message}")

    raw: dict[str, tuple[int, list[int]]] = {}
    betting: tuple[int, str] | None = None
    state = "before"
    last_line = end_line = 1
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        last_line = number
        lowered = " ".join(stripped.lower().split())
        if state == "before":
            if lowered != "gamedef":
                raise error(number, f"expected 'GAMEDEF' to open the game definition, found "
                                    f"{stripped[:40]!r}")
            state = "inside"
        elif state == "after":
            raise error(number, f"text after 'END GAMEDEF': {stripped[:40]!r}")
        elif lowered == "end gamedef":
            state, end_line = "after", number
        elif lowered in ("limit", "nolimit"):
            if betting is not None:
                raise error(number, f"the betting type is given twice (first at line {betting[0]})")
            betting = (number, lowered)
        else:
            match = _LINE.match(stripped)
            name = _FIELDS.get(match.group(1).lower()) if match else None
            if name is None:
                known = ", ".join(["limit", "nolimit", *_FIELDS.values()])
                raise error(number, f"unknown line {stripped[:40]!r}; a GAMEDEF holds {known}")
            if name in raw:
                raise error(number, f"{name} is given twice (first at line {raw[name][0]})")
            values = match.group(2).split()
            if not values or not all(value.isdigit() and len(value) <= 10 for value in values):
                raise error(number, f"{name} needs whole numbers, found {match.group(2)[:40]!r}")
            numbers = [int(value) for value in values]
            if max(numbers) > MAX_VALUE:
                raise error(number, f"{name} value {max(numbers)} is too large")
            raw[name] = (number, numbers)
    if state == "before":
        raise error(last_line, "no 'GAMEDEF' line: this is not an ACPC game definition")
    if state == "inside":
        raise error(last_line, "the file ends before 'END GAMEDEF'")
    return _definition(raw, betting, error, end_line)


def _definition(raw, betting, error, end_line: int) -> GameDefinition:
    """Check counts and ranges as ACPC's ``readGame`` does and build the GameDefinition."""
    def single(name: str, low: int, high: int) -> int:
        if name not in raw:
            raise error(end_line, f"{name} is missing")
        line, values = raw[name]
        if len(values) != 1 or not low <= values[0] <= high:
            raise error(line, f"{name} must be one number from {low} to {high}, found "
                              f"{' '.join(map(str, values))}")
        return values[0]

    def listed(name: str, count: int, what: str, default: int | None = None) -> tuple[int, ...] | None:
        if name not in raw:
            if default is None:
                return None
            return (default,) * count
        line, values = raw[name]
        if len(values) != count:
            raise error(line, f"{name} needs {count} values (one per {what}), found {len(values)}")
        return tuple(values)

    num_players = single("numPlayers", 2, 10)
    num_rounds = single("numRounds", 1, MAX_ROUNDS)
    num_suits = single("numSuits", 1, MAX_SUITS)
    num_ranks = single("numRanks", 1, MAX_RANKS)
    num_hole_cards = single("numHoleCards", 1, MAX_HOLE_CARDS)
    kind = betting[1] if betting else "limit"
    for name in ("blind", "numBoardCards") + (("raiseSize",) if kind == "limit" else ()):
        if name not in raw:
            raise error(end_line, f"{name} is missing")
    blind = listed("blind", num_players, "player")
    stack = listed("stack", num_players, "player")
    raise_size = listed("raiseSize", num_rounds, "round", default=0)
    first_player = listed("firstPlayer", num_rounds, "round", default=1)
    max_raises = listed("maxRaises", num_rounds, "round")
    board = listed("numBoardCards", num_rounds, "round")
    if any(not 1 <= player <= num_players for player in first_player):
        raise error(raw["firstPlayer"][0], f"firstPlayer values must be from 1 to {num_players}")
    if stack is not None and any(b > s for b, s in zip(blind, stack, strict=True)):
        raise error(raw["stack"][0], "a blind is larger than its player's stack")
    if num_hole_cards * num_players + sum(board) > num_suits * num_ranks:
        raise error(raw["numBoardCards"][0], f"the deck of {num_suits * num_ranks} cards is too small "
                                             f"for the hole and board cards")
    lines = (*((name, line) for name, (line, _) in raw.items()), ("end", end_line))
    if betting:
        lines += (("betting", betting[0]),)
    return GameDefinition(kind, num_players, num_rounds, blind, raise_size, first_player, max_raises,
                          num_suits, num_ranks, num_hole_cards, board, stack, lines)


def limit_poker(definition: GameDefinition, spec: str, source: str = "<gamedef>") -> LimitPoker:
    """The LimitPoker a definition describes; GameDefinitionError naming the line of what
    efgkit's engine cannot play (see the module docstring)."""
    lines = dict(definition.lines)

    def refuse(field: str, message: str) -> GameDefinitionError:
        where = f"{source}:{lines[field]}" if field in lines else source
        return GameDefinitionError(f"{where}: {message}")

    d = definition
    if d.betting != "limit":
        raise refuse("betting", "no-limit betting is not supported; efgkit's poker engine plays limit games")
    if d.num_players != 2:
        raise refuse("numPlayers", f"{d.num_players} players are not supported; efgkit solves "
                                   f"two-player games")
    if d.max_raises is None:
        raise refuse("end", "maxRaises is missing; without it raises are limited only by the "
                                "stack, which efgkit's poker engine does not model")
    if min(d.max_raises) < 1 or max(d.max_raises) > MAX_RAISES_MODELLED:
        raise refuse("maxRaises", f"maxRaises must be from 1 to {MAX_RAISES_MODELLED} in every round "
                                  f"(a round without bets, or the ACPC server's 64-action limit, is "
                                  f"not modelled)")
    if min(d.raise_size) < 1:
        raise refuse("raiseSize", "raiseSize must be at least 1 in every round")
    most_spent = d.blind[0] + sum(m * s for m, s in zip(d.max_raises, d.raise_size, strict=True))
    if d.stack is not None and min(d.stack) < most_spent:
        raise refuse("stack", f"a stack of {min(d.stack)} can force an all-in (a player may put in "
                              f"{most_spent} chips); efgkit's poker engine has no all-ins")
    try:
        cards = CardStructure(d.num_ranks, d.num_suits, d.num_hole_cards, d.num_board_cards)
    except GameDefinitionError as exc:
        field = ("numHoleCards" if d.num_hole_cards != 1 else
                 "numBoardCards" if d.num_board_cards[0] or sum(d.num_board_cards) > 1 else "numRanks")
        raise refuse(field, f"numHoleCards {d.num_hole_cards}, numBoardCards "
                            f"{' '.join(map(str, d.num_board_cards))}, {d.num_ranks} ranks and "
                            f"{d.num_suits} suits are not supported by efgkit's poker engine: "
                            f"{exc}") from None
    sizes = tuple((size,) for size in d.raise_size)
    return LimitPoker(spec, cards, deal_by_rank=False, ante=min(d.blind), bet_sizes=sizes,
                      raise_sizes=sizes, max_bets_per_round=d.max_raises, style=LEDUC_STYLE,
                      blinds=(d.blind[0], d.blind[1]),
                      first_player=tuple(player - 1 for player in d.first_player))


def load_acpc(path: str | os.PathLike, *, node_limit: int | None = None,
              progress: bool = False) -> GameTree:
    """Compile the limit poker game an ACPC game definition file describes.

    The tree's spec is ``"acpc:" + path`` (normalised as for .efg files) and ``tree.game``
    its LimitPoker. Raises FileFormatError / GameDefinitionError naming the line, or
    TreeTooLargeError with the node count before building anything.
    """
    return acpc_rules(path).compile(node_limit=node_limit, progress=progress)


def acpc_rules(path: str | os.PathLike) -> LimitPoker:
    """The LimitPoker an ACPC game definition file describes, not compiled (what the
    streamed poker engines play); errors as ``load_acpc``'s."""
    source = os.path.normpath(path)
    definition = parse_gamedef(read_text(path, "the ACPC game definition"), source)
    return limit_poker(definition, SPEC_PREFIX + source, source)


# ---------------------------------------------------------------------- writing
def game_definition(game: LimitPoker) -> GameDefinition:
    """The ACPC definition of a LimitPoker game; GameDefinitionError if ACPC cannot say it."""
    cards = game.card_structure
    if game.deal_by_rank:
        raise GameDefinitionError(
            f"game {game.spec!r} deals ranks (suit isomorphism); an ACPC game deals cards one by one"
        )
    sizes = []
    for round_index, (bets, raises, cap) in enumerate(
        zip(game.bet_sizes, game.raise_sizes, game.max_bets_per_round, strict=True)
    ):
        # With a cap of 1 nobody can raise, so the raise sizes do not matter (Kuhn has none).
        if len(bets) != 1 or (cap > 1 and raises != bets) or cap > MAX_RAISES_MODELLED:
            raise GameDefinitionError(
                f"game {game.spec!r}: round {round_index + 1} has bet sizes {list(bets)}, raise sizes "
                f"{list(raises)} and {cap} aggressive actions; an ACPC limit game has one size per "
                f"round for bets and raises and at most {MAX_RAISES_MODELLED} raises"
            )
        sizes.append(bets[0])
    rounds = game.num_rounds
    return GameDefinition(
        betting="limit", num_players=2, num_rounds=rounds, blind=game.blinds,
        raise_size=tuple(sizes), first_player=tuple(player + 1 for player in game.first_player),
        max_raises=tuple(game.max_bets_per_round),
        num_suits=cards.num_suits, num_ranks=cards.num_ranks,
        num_hole_cards=cards.private_cards_per_player,
        num_board_cards=tuple(cards.public_cards_per_round),
    )


def poker_rules_of(tree: GameTree) -> LimitPoker:
    """The LimitPoker a tree was built from; GameDefinitionError for any other tree."""
    if not isinstance(tree.game, LimitPoker):
        raise GameDefinitionError(
            f"game {tree.spec!r} is not a poker game built by efgkit (a spec like leduc or an "
            f"acpc: file); only those can be written as an ACPC game definition"
        )
    return tree.game


def write_acpc(tree: GameTree, path: str | os.PathLike) -> None:
    """Write the ACPC game definition of a poker tree (atomically)."""
    game = poker_rules_of(tree)
    text = game_definition(game).text(comment=f"written by efgkit from {game.spec}")
    with atomic_output_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
