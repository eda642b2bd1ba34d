"""Gambit's extensive-form text format (.efg): read a file into a GameTree, write a tree out.

The format is Gambit's (doc/formats.efg.rst; pygambit and OpenSpiel's ``efg_game`` read it
too): a prologue ``EFG 2 R "title" { "Player 1" "Player 2" } "optional comment"``, then the
nodes in preorder, each one of ::

    c "node name" event "event name" { "outcome" probability ... } outcome "name" { payoffs }
    p "node name" player infoset "infoset name" { "action" ... } outcome "name" { payoffs }
    t "node name" outcome "name" { payoffs }

Chance events, each player's infosets and outcomes are numbered. Their description (the
name with the action list, or the outcome name with the payoffs) comes with the first use
of the number and may later be omitted, or repeated identically. Outcome 0 is "no
outcome". Payoffs of outcomes at non-terminal nodes add up along the path. Numbers are
integers, decimals or rationals (``1/3``); payoffs may be separated by commas.

efgkit reads two-player zero-sum games: the payoffs reaching every terminal must sum to 0
and chance probabilities to 1. The nodes are in preorder, so ``tree_from_preorder`` builds
the tree. Infoset keys are the file's infoset names when every infoset has its own
non-empty name, else ``"P0 infoset 3 <name>"`` (efgkit numbers players from 0, the file
from 1). The whole game is one public state: a .efg file does not say what is public, and
one public state is always safe for subgame solving. Imperfect recall is read as written
(solvers and best responses refuse it later with the infoset's name).

Writing emits the same format as Gambit writes it: every description repeated at every use,
one chance event per chance node with outcomes labelled 1, 2, ... in child order (a
GameTree keeps no chance labels), infoset names = efgkit's infoset keys, one outcome per
distinct terminal utility. Probabilities and payoffs are written as integers, exact small
rationals or shortest round-trip decimals, so reading the file back gives the same arrays
bit for bit (apart from public states).

Every error names the file, line and column (``game.efg:12:7: ...``) and is a
FileFormatError (malformed text) or GameDefinitionError (a well-formed but inconsistent or
unsupported game); parsing is linear in the file size and never recursive.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import NamedTuple

import numpy as np

import efgkit
from efgkit.errors import FileFormatError, GameDefinitionError, TreeTooLargeError
from efgkit.games.builder import PROBABILITY_TOLERANCE, node_limit_from_env, tree_from_preorder
from efgkit.games.protocol import CHANCE, TERMINAL
from efgkit.games.tree import GameTree
from efgkit.io.atomic import atomic_output_path
from efgkit.io.input_files import check_input_file
from efgkit.io.progress import progress_bar

SPEC_PREFIX = "efg:"
ZERO_SUM_TOLERANCE = 1e-9
"""Largest |u1 + u2| / max(1, |u1|) accepted at a terminal."""
MAX_DEPTH = np.iinfo(np.int16).max
MAX_ACTIONS = np.iinfo(np.int16).max
MAX_NUMBER_LENGTH = 100
"""Longest number token read (longer ones are refused rather than converted slowly)."""

_SPACE = re.compile(r"\s*", re.ASCII)
_TOKEN = re.compile(
    r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")'
    r"|(?P<number>[+-]?(?:\d+/\d+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))"
    r"|(?P<word>[A-Za-z_]\w*)"
    r"|(?P<punctuation>[{},]))",
    re.DOTALL | re.ASCII,
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


class _Token(NamedTuple):
    kind: str
    """"string", "number", "word", "punctuation" or "end"."""
    text: str
    offset: int


class _Declaration(NamedTuple):
    """What the first use of an event, infoset or outcome number said about it."""

    name: str
    items: tuple
    """Action labels (infosets), (label, probability) pairs (events) or payoffs (outcomes)."""
    offset: int


class _Lexer:
    """Tokens of a .efg text with one token of lookahead; errors carry line and column."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.position = 0
        self._peeked: _Token | None = None

    def where(self, offset: int) -> str:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return f"{self.source}:{line}:{column}"

    def error(self, offset: int, message: str, kind: type[Exception] = FileFormatError) -> Exception:
        return kind(f"{self.where(offset)}: {message}")

    def peek(self) -> _Token:
        if self._peeked is None:
            self._peeked = self._read()
        return self._peeked

    def next(self) -> _Token:
        token = self.peek()
        self._peeked = None
        return token

    def _read(self) -> _Token:
        match = _TOKEN.match(self.text, self.position)
        if match is None:
            offset = _SPACE.match(self.text, self.position).end()
            if offset == len(self.text):
                self.position = offset
                return _Token("end", "", offset)
            if self.text[offset] == '"':
                raise self.error(offset, "this string has no closing quote")
            raise self.error(offset, f"unexpected character {self.text[offset]!r}")
        self.position = match.end()
        kind = match.lastgroup
        return _Token(kind, match.group(kind), match.start(kind))

    # ------------------------------------------------------------ typed reads
    def describe(self, token: _Token) -> str:
        if token.kind == "end":
            return "the end of the file"
        text = token.text if len(token.text) <= 40 else token.text[:37] + "..."
        return f"{token.kind} {text!r}" if token.kind != "punctuation" else repr(text)

    def expect(self, punctuation: str, what: str) -> _Token:
        token = self.next()
        if token.kind != "punctuation" or token.text != punctuation:
            raise self.error(token.offset, f"expected {punctuation!r} {what}, found {self.describe(token)}")
        return token

    def string(self, what: str) -> str:
        token = self.next()
        if token.kind != "string":
            raise self.error(token.offset, f"expected {what} (a quoted string), found {self.describe(token)}")
        body = token.text[1:-1]
        return _ESCAPE.sub(r"\1", body) if "\\" in body else body

    def integer(self, what: str, minimum: int) -> tuple[int, int]:
        """A whole number >= minimum and its offset."""
        token = self.next()
        if token.kind != "number" or not token.text.isdigit() or len(token.text) > 18:
            raise self.error(token.offset, f"expected {what} (a whole number), found {self.describe(token)}")
        value = int(token.text)
        if value < minimum:
            raise self.error(token.offset, f"{what} must be at least {minimum}, found {value}")
        return value, token.offset

    def number(self, what: str) -> float:
        token = self.next()
        if token.kind != "number":
            raise self.error(token.offset, f"expected {what} (a number), found {self.describe(token)}")
        if len(token.text) > MAX_NUMBER_LENGTH:
            raise self.error(token.offset, f"{what} has more than {MAX_NUMBER_LENGTH} characters")
        try:
            if "/" in token.text:
                numerator, denominator = token.text.split("/")
                value = int(numerator) / int(denominator)
            else:
                value = float(token.text)
        except (ZeroDivisionError, OverflowError):
            raise self.error(token.offset, f"{what} {token.text} is not a finite number") from None
        if not math.isfinite(value):
            raise self.error(token.offset, f"{what} {token.text} is not a finite number")
        return value


class _Frame:
    """An open non-terminal node while its children are read."""

    __slots__ = ("node", "remaining", "probabilities", "next_child", "payoffs")

    def __init__(self, node: int, remaining: int, probabilities: tuple[float, ...] | None,
                 payoffs: tuple[float, float]) -> None:
        self.node = node
        self.remaining = remaining
        self.probabilities = probabilities
        self.next_child = 0
        self.payoffs = payoffs


class _EfgReader:
    """One pass over the tokens: the prologue, then the nodes in preorder (explicit stack)."""

    def __init__(self, text: str, source: str, node_limit: int, progress: bool) -> None:
        self.lexer = _Lexer(text, source)
        self.node_limit = node_limit
        self.progress = progress
        self.kind: list[int] = []
        self.depth: list[int] = []
        self.num_children: list[int] = []
        self.chance_prob: list[float] = []
        self.utility: list[float] = []
        self.infoset_code: list[int] = []
        self.events: dict[int, _Declaration] = {}
        self.infosets: dict[tuple[int, int], _Declaration] = {}
        self.infoset_codes: dict[tuple[int, int], int] = {}
        self.outcomes: dict[int, _Declaration] = {}

    def read(self) -> None:
        self._prologue()
        lexer = self.lexer
        frames: list[_Frame] = []
        with progress_bar(total=len(lexer.text), unit="B", unit_scale=True, desc="reading .efg",
                  enabled=self.progress, mininterval=0.5) as bar:
            while True:
                token = lexer.next()
                if token.kind == "end":
                    if not self.kind:
                        raise lexer.error(token.offset, "the file has no nodes")
                    if frames:
                        frame = frames[-1]
                        children = "child" if frame.remaining == 1 else "children"
                        raise lexer.error(token.offset, f"the file ends inside the tree: node {frame.node} "
                                                        f"still needs {frame.remaining} more {children}")
                    return
                if not frames and self.kind:
                    raise lexer.error(token.offset, f"text after the end of the game tree (the tree is "
                                                    f"complete after {len(self.kind)} nodes)")
                self._node(token, frames)
                while frames and frames[-1].remaining == 0:
                    frames.pop()
                if self.progress and len(self.kind) % 20_000 == 0:
                    bar.update(lexer.position - bar.n)

    def _prologue(self) -> None:
        lexer = self.lexer
        token = lexer.next()
        if token.kind != "word" or token.text != "EFG":
            raise lexer.error(token.offset, f"not a Gambit .efg file: expected 'EFG' at the start, "
                                            f"found {lexer.describe(token)}")
        token = lexer.next()
        if token.kind != "number" or token.text != "2":
            raise lexer.error(token.offset, f"expected the format version 2 after 'EFG', found "
                                            f"{lexer.describe(token)}")
        token = lexer.next()
        if token.kind != "word" or token.text not in ("R", "D"):
            raise lexer.error(token.offset, f"expected 'R' after 'EFG 2', found {lexer.describe(token)}")
        lexer.string("the game title")
        players_at = lexer.expect("{", "to open the list of player names").offset
        players = 0
        while lexer.peek().kind == "string":
            lexer.string("a player name")
            players += 1
        lexer.expect("}", "to close the list of player names")
        if players != 2:
            raise lexer.error(players_at, f"the game has {players} players; efgkit solves two-player "
                                          f"zero-sum games", GameDefinitionError)
        if lexer.peek().kind == "string":
            lexer.string("the comment")

    def _node(self, token: _Token, frames: list[_Frame]) -> None:
        lexer = self.lexer
        if token.kind != "word" or token.text not in ("c", "p", "t"):
            raise lexer.error(token.offset,
                              f"expected a node ('c', 'p' or 't'), found {lexer.describe(token)}")
        node, depth = len(self.kind), len(frames)
        if node >= self.node_limit:
            raise lexer.error(token.offset, f"the game has more than {self.node_limit:,} nodes (the node "
                                            f"limit); raise it with --node-limit or EFGKIT_NODE_LIMIT if "
                                            f"this machine has the memory", TreeTooLargeError)
        if depth > MAX_DEPTH:
            raise lexer.error(token.offset, f"the tree is deeper than {MAX_DEPTH:,} levels",
                              GameDefinitionError)
        probability, payoffs = 1.0, (0.0, 0.0)
        if frames:
            parent = frames[-1]
            if parent.probabilities is not None:
                probability = parent.probabilities[parent.next_child]
            parent.next_child += 1
            parent.remaining -= 1
            payoffs = parent.payoffs
        lexer.string("the node name")
        code, children, probabilities = -1, 0, None
        if token.text == "c":
            kind = CHANCE
            outcomes = self._event()
            children, probabilities = len(outcomes), tuple(p for _, p in outcomes)
        elif token.text == "p":
            player, player_at = lexer.integer("the player number", 1)
            if player > 2:
                raise lexer.error(player_at, f"player {player} does not exist; the game has 2 players",
                                  GameDefinitionError)
            kind = player - 1
            code, children = self._infoset(kind)
        else:
            kind = TERMINAL
        outcome = self._outcome()
        payoffs = (payoffs[0] + outcome[0], payoffs[1] + outcome[1])
        utility = 0.0
        if kind == TERMINAL:
            utility = payoffs[0]
            if not (math.isfinite(payoffs[0]) and math.isfinite(payoffs[1])):
                raise lexer.error(token.offset, f"the payoffs at terminal node {node} add up to "
                                                f"{payoffs[0]:g} and {payoffs[1]:g}, not finite numbers",
                                  GameDefinitionError)
            if abs(payoffs[0] + payoffs[1]) > ZERO_SUM_TOLERANCE * max(1.0, abs(payoffs[0])):
                raise lexer.error(token.offset, f"the payoffs at terminal node {node} are {payoffs[0]:g} and "
                                                f"{payoffs[1]:g}, which do not sum to 0; efgkit solves "
                                                f"zero-sum games", GameDefinitionError)
        else:
            frames.append(_Frame(node, children, probabilities, payoffs))
        self.kind.append(kind)
        self.depth.append(depth)
        self.num_children.append(children)
        self.chance_prob.append(probability)
        self.utility.append(utility)
        self.infoset_code.append(code)

    def _declared(self, table: dict, number, declaration: _Declaration | None, what: str,
                  offset: int) -> _Declaration:
        """The declaration of ``number``, checking a repeated one matches the first."""
        known = table.get(number)
        if declaration is None:
            if known is None:
                raise self.lexer.error(offset, f"{what} is used before it is described (its first use "
                                               f"must give its name and its list)", GameDefinitionError)
            return known
        if known is None:
            table[number] = declaration
            return declaration
        if known.name != declaration.name or known.items != declaration.items:
            raise self.lexer.error(declaration.offset, f"{what} is described differently than at "
                                                       f"{self.lexer.where(known.offset)}",
                                   GameDefinitionError)
        return known

    def _event(self) -> tuple[tuple[str, float], ...]:
        lexer = self.lexer
        number, number_at = lexer.integer("the chance event number", 1)
        declaration = None
        if lexer.peek().kind == "string":
            name_at = lexer.peek().offset
            name = lexer.string("the event name")
            lexer.expect("{", "to open the chance outcomes")
            outcomes = []
            while lexer.peek().kind == "string":
                label = lexer.string("an outcome label")
                outcomes.append((label, lexer.number(f"the probability of outcome {label!r}")))
            lexer.expect("}", "to close the chance outcomes")
            self._check_event(outcomes, name_at)
            declaration = _Declaration(name, tuple(outcomes), name_at)
        return self._declared(self.events, number, declaration, f"chance event {number}", number_at).items

    def _check_event(self, outcomes: list[tuple[str, float]], offset: int) -> None:
        if not outcomes:
            raise self.lexer.error(offset, "a chance event needs at least one outcome", GameDefinitionError)
        if len(outcomes) > MAX_ACTIONS:
            raise self.lexer.error(offset, f"a chance event has more than {MAX_ACTIONS:,} outcomes",
                                   GameDefinitionError)
        probabilities = [p for _, p in outcomes]
        if min(probabilities) < 0:
            raise self.lexer.error(offset, "a chance probability is negative", GameDefinitionError)
        total = math.fsum(probabilities)
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            raise self.lexer.error(offset, f"the chance probabilities sum to {total:.12g}, not 1 (write "
                                           f"thirds and the like as rationals, e.g. 1/3)",
                                   GameDefinitionError)

    def _infoset(self, player: int) -> tuple[int, int]:
        lexer = self.lexer
        number, number_at = lexer.integer("the infoset number", 1)
        declaration = None
        if lexer.peek().kind == "string":
            name_at = lexer.peek().offset
            name = lexer.string("the infoset name")
            lexer.expect("{", "to open the action list")
            actions = []
            while lexer.peek().kind == "string":
                actions.append(lexer.string("an action label"))
            lexer.expect("}", "to close the action list")
            if not actions:
                raise lexer.error(name_at, "an infoset needs at least one action", GameDefinitionError)
            if len(actions) > MAX_ACTIONS:
                raise lexer.error(name_at, f"an infoset has more than {MAX_ACTIONS:,} actions",
                                  GameDefinitionError)
            declaration = _Declaration(name, tuple(actions), name_at)
        key = (player, number)
        known = self._declared(self.infosets, key, declaration,
                               f"infoset {number} of player {player + 1}", number_at)
        code = self.infoset_codes.setdefault(key, len(self.infoset_codes))
        return code, len(known.items)

    def _outcome(self) -> tuple[float, float]:
        lexer = self.lexer
        number, number_at = lexer.integer("the outcome number", 0)
        declaration = None
        if lexer.peek().kind == "string":
            name_at = lexer.peek().offset
            name = lexer.string("the outcome name")
            lexer.expect("{", "to open the payoffs")
            payoffs = []
            while lexer.peek().kind == "number":
                payoffs.append(lexer.number("a payoff"))
                if lexer.peek().text == ",":
                    lexer.next()
            lexer.expect("}", "to close the payoffs")
            if number == 0:
                raise lexer.error(name_at, "outcome 0 means 'no outcome' and cannot have a name or payoffs")
            if len(payoffs) != 2:
                raise lexer.error(name_at, f"outcome {number} has {len(payoffs)} payoffs; the game has 2 "
                                           f"players", GameDefinitionError)
            declaration = _Declaration(name, tuple(payoffs), name_at)
        if number == 0:
            return 0.0, 0.0
        return self._declared(self.outcomes, number, declaration, f"outcome {number}", number_at).items

    def infoset_keys(self) -> list[str]:
        """One key per infoset code: the names if they are unique and non-empty, else numbered."""
        declared = [(key, self.infosets[key].name) for key in self.infoset_codes]
        names = [name for _, name in declared]
        if all(names) and len(set(names)) == len(names):
            return names
        return [f"P{player} infoset {number} {name}".rstrip() for (player, number), name in declared]

    def action_labels(self) -> list[tuple[str, ...]]:
        return [self.infosets[key].items for key in self.infoset_codes]


def parse_efg(text: str, *, source: str = "<efg>", spec: str | None = None,
              node_limit: int | None = None, progress: bool = False) -> GameTree:
    """Compile the text of a .efg file into a GameTree.

    ``source`` names the text in error messages; ``spec`` is the tree's spec (default
    ``"efg:" + source``). Raises FileFormatError for malformed text, GameDefinitionError
    for an inconsistent or unsupported game and TreeTooLargeError past the node limit,
    each naming the line and column.
    """
    limit = node_limit_from_env() if node_limit is None else node_limit
    reader = _EfgReader(text, source, limit, progress)
    reader.read()
    keys = reader.infoset_keys()
    labels = reader.action_labels()
    return tree_from_preorder(
        spec or SPEC_PREFIX + source,
        kind=np.array(reader.kind, np.int8),
        depth=np.array(reader.depth, np.int16),
        num_children=np.array(reader.num_children, np.int16),
        chance_prob=np.array(reader.chance_prob, np.float64),
        utility=np.array(reader.utility, np.float64),
        infoset_code=np.array(reader.infoset_code, np.int64),
        public_code=np.zeros(len(reader.kind), np.int64),
        describe_infoset=keys.__getitem__,
        action_labels_of=labels.__getitem__,
        describe_public=lambda code: "",
        node_limit=limit,
    )


MAX_TEXT_BYTES = 1 << 30
"""The largest game file read (a .efg of 1 GiB describes more nodes than any node limit)."""


def read_text(path: str | os.PathLike, what: str) -> str:
    """A regular file's text as UTF-8 (at most ``MAX_TEXT_BYTES``); FileFormatError naming
    the line of the first bad byte. FIFOs and devices (``/dev/zero``) are refused before
    reading, so a read never hangs or exhausts memory."""
    check_input_file(path, what)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if len(data) > MAX_TEXT_BYTES:
        raise FileFormatError(f"{path}: {what} is larger than {MAX_TEXT_BYTES >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(f"{path}:{line}: {what} is not UTF-8 text (byte {exc.start})") from None


def load_efg(path: str | os.PathLike, *, node_limit: int | None = None,
             progress: bool = False) -> GameTree:
    """Compile a .efg file; the tree's spec is ``"efg:" + path`` (normalised: ``./a.efg`` is
    ``a.efg``, so strategy files match however the path is spelled)."""
    return parse_efg(read_text(path, "the .efg file"), source=os.path.normpath(path),
                     node_limit=node_limit, progress=progress)


# ---------------------------------------------------------------------- writing
def _number_text(value: float) -> str:
    """An exact spelling of a float: integer, small rational or shortest round-trip decimal."""
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    fraction = Fraction(value).limit_denominator(1_000_000)
    if fraction.numerator / fraction.denominator == value:
        return f"{fraction.numerator}/{fraction.denominator}"
    return repr(value)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def efg_lines(tree: GameTree) -> Iterator[str]:
    """The lines of ``tree`` as a .efg file, nodes in preorder (see the module docstring)."""
    yield f'EFG 2 R {_quoted(tree.spec)} {{ "Player 1" "Player 2" }}\n'
    yield _quoted(f"written by efgkit {efgkit.__version__}; player 1 is efgkit's player 0") + "\n\n"
    kinds, node_infoset, first_child, num_children, chance_prob, utility = tree.node_lists()
    declarations: dict[int, str] = {}
    infosets_seen = [0, 0]
    outcome_numbers: dict[float, int] = {}
    events = 0
    stack = [0]
    while stack:
        node = stack.pop()
        kind, first, count = kinds[node], first_child[node], num_children[node]
        if kind == TERMINAL:
            value = utility[node]
            number = outcome_numbers.setdefault(value, len(outcome_numbers) + 1)
            payoff = _number_text(value)
            yield f't "" {number} {_quoted(payoff)} {{ {payoff} {_number_text(-value)} }}\n'
            continue
        if kind == CHANCE:
            events += 1
            outcomes = " ".join(f'"{k + 1}" {_number_text(chance_prob[first + k])}' for k in range(count))
            yield f'c "" {events} "" {{ {outcomes} }} 0\n'
        else:
            infoset = node_infoset[node]
            declaration = declarations.get(infoset)
            if declaration is None:
                infosets_seen[kind] += 1
                actions = " ".join(_quoted(label) for label in tree.infoset_actions(infoset))
                declaration = declarations[infoset] = (
                    f"{kind + 1} {infosets_seen[kind]} {_quoted(tree.infoset_keys[infoset])} {{ {actions} }}"
                )
            yield f'p "" {declaration} 0\n'
        stack.extend(range(first + count - 1, first - 1, -1))


def efg_text(tree: GameTree) -> str:
    """``tree`` as the text of a .efg file."""
    return "".join(efg_lines(tree))


def write_efg(tree: GameTree, path: str | os.PathLike) -> None:
    """Write ``tree`` as a .efg file (atomically: a failure never damages an existing file)."""
    with atomic_output_path(path) as temporary, open(temporary, "w", encoding="utf-8") as handle:
        handle.writelines(efg_lines(tree))

