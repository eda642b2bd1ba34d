"""Strategy files as players of the ACPC protocol (``interop.acpc_protocol``): what
``efgkit bot`` plays.

A policy answers a dealer's match state with the probabilities of its legal actions
(fold, call, raise; those legal, in that order):

* ``CompactPolicy`` reads a compact .efgs file (Python reader) with the key efgkit's
  readers take, ``P0 cards=AsKh board=TdJdQd/Tc bets=rc/c``, as ``efgs_acpc`` does;
* ``BucketPolicy`` plays a bucket strategy (.h5 of ``efgkit solve --engine sampled``) in
  full precision: its row of (betting decision, the bucket of the hole cards and board);
* ``ResolvingPolicy`` plays a bucket strategy as its blueprint and, at each decision after a
  board deal, the subgame after that deal re-solved at decision time
  (``resolve.decision_time.DecisionTimeResolver``: its row of the hole cards, board and betting).

``open_policy`` opens either file and gives the ACPC game definition the bot plays: the one an
.efgs file carries, or for an .h5 file the definition of its game (``interop.acpc.
game_definition``); ``open_resolving_policy`` the re-solving player of a bucket strategy, for
games whose public tree it can hold.
"""

from __future__ import annotations

import os

import numpy as np

from efgkit.errors import FileFormatError, ParameterError
from efgkit.games.poker import Betting, LimitPoker
from efgkit.interop.acpc import GameDefinition, game_definition, limit_poker, parse_gamedef
from efgkit.interop.acpc_protocol import MatchState, ProtocolError
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.storage.compact_reader import CompactFormatError, CompactStrategy, KeyLookupError


def infoset_key(game: LimitPoker, state: MatchState) -> str:
    """efgkit's infoset key of the player to act in ``state`` (card names of ``game``)."""
    structure = game.card_structure
    name = structure.card_name
    field = "card" if structure.private_cards_per_player == 1 else "cards"
    key = f"P{state.position} {field}={''.join(name(c) for c in state.hole[state.position])}"
    if sum(structure.public_cards_per_round):
        rounds, at = [], 0
        for size in structure.public_cards_per_round[1:state.betting.round + 1]:
            rounds.append("".join(name(c) for c in state.board[at:at + size]))
            at += size
        key += f" board={'/'.join(rounds) or '-'}"
    return f"{key} bets={state.betting.text() or '-'}"


class CompactPolicy:
    """The quantized weights a compact file gives the key of each decision (as efgs_acpc)."""

    def __init__(self, strategy: CompactStrategy, game: LimitPoker) -> None:
        self.strategy, self.game = strategy, game

    def __call__(self, state: MatchState) -> list[float]:
        key = infoset_key(self.game, state)
        legal = state.betting.legal()
        own = state.betting.own_actions[state.position]
        try:
            probabilities = self.strategy.quantized(key, (state.position, own, len(legal)))
        except (KeyLookupError, CompactFormatError) as exc:
            raise ProtocolError(f"no strategy row for {key!r}: {exc}") from None
        if len(probabilities) != len(legal):
            raise ProtocolError(f"the strategy's row for {key!r} has {len(probabilities)} actions, the "
                                f"game {len(legal)} (a strategy of another game?)")
        return list(probabilities)


def decision_texts(betting) -> dict[str, int]:
    """Each decision of a ``BettingTree`` (its index among ``decision_nodes``) by its betting text
    (``LimitPoker.betting_text``, as the dealer's lines carry it)."""
    game = betting.game
    return {game.betting_text(Betting(betting.histories[node], (0, 0), 0)): decision
            for decision, node in enumerate(betting.decision_nodes.tolist())}


class BucketPolicy:
    """A bucket strategy's row of (betting decision, bucket of the cards), in full precision."""

    def __init__(self, layout: BucketLayout, strategy: np.ndarray) -> None:
        self.layout, self.strategy = layout, layout.checked(strategy)
        self.decision_of = decision_texts(layout.betting)

    def __call__(self, state: MatchState) -> list[float]:
        text = state.betting.text() or "-"
        decision = self.decision_of.get(text)
        legal = state.betting.legal()
        if decision is None or int(self.layout.width[decision]) != len(legal):
            raise ProtocolError(f"betting {text!r} is no decision of the strategy's game with "
                                f"{len(legal)} actions")
        return self.layout.row(self.strategy, decision, state.betting.round, state.board,
                               sorted(state.hole[state.position])).tolist()


class ResolvingPolicy:
    """The row a ``DecisionTimeResolver`` gives the hole cards, board and betting of a decision."""

    def __init__(self, resolver) -> None:
        betting = resolver.tree.betting_tree
        self.resolver, self.game = resolver, resolver.tree.game
        self.history_of = {text: betting.histories[int(betting.decision_nodes[decision])]
                           for text, decision in decision_texts(betting).items()}

    def __call__(self, state: MatchState) -> list[float]:
        text = state.betting.text() or "-"
        history = self.history_of.get(text)
        if history is None:
            raise ProtocolError(f"betting {text!r} is no decision of {self.game.spec}")
        try:
            hand = tuple(sorted(state.hole[state.position]))
            row = self.resolver.probabilities(hand, tuple(state.board), history)
        except ParameterError as exc:
            raise ProtocolError(f"{state.line[:80]!r}: {exc}") from None
        if row.shape[0] != len(state.betting.legal()):
            raise ProtocolError(f"betting {text!r} has {row.shape[0]} actions in {self.game.spec}, "
                                f"{len(state.betting.legal())} at the dealer")
        return row.tolist()


def open_resolving_policy(path: str | os.PathLike, game: LimitPoker, bucket_file=None, *,
                          gadget: str = "resolve", iterations: int = 200):
    """(ResolvingPolicy, GameDefinition, its DecisionTimeResolver) for a bucket-strategy file of
    ``game``: ParameterError for a compact .efgs file (quantized, no blueprint to re-solve) and,
    before anything is built, for a game whose public tree the player cannot hold."""
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.resolve.decision_time import DecisionTimeResolver, check_game_fits
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file, load_bucket_strategy

    if not is_bucket_strategy_file(path):
        raise ParameterError(f"{path}: re-solving needs a bucket strategy (.h5 of efgkit solve --engine "
                             f"sampled) as its blueprint, not a compact file")
    layout, strategy, _, _ = load_bucket_strategy(path, game, bucket_file)
    check_game_fits(game)
    tree = PublicTree(game)
    resolver = DecisionTimeResolver(tree, StrategyLayout.from_bucket_layout(tree, layout), strategy,
                                    gadget=gadget, iterations=iterations)
    return ResolvingPolicy(resolver), game_definition(game), resolver


def open_policy(path: str | os.PathLike, game: LimitPoker | None = None, bucket_file=None):
    """(policy, GameDefinition, closer) for a compact .efgs file (which must carry its game
    definition) or a bucket-strategy file (``game`` needed: its LimitPoker)."""
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file, load_bucket_strategy

    if is_bucket_strategy_file(path):
        if game is None:
            raise FileFormatError(f"{path}: a bucket strategy needs its game")
        layout, strategy, _, _ = load_bucket_strategy(path, game, bucket_file)
        return BucketPolicy(layout, strategy), game_definition(game), lambda: None
    try:
        strategy = CompactStrategy(str(path))
        strategy.verify()
    except (CompactFormatError, OSError) as exc:
        raise FileFormatError(f"{path}: {exc}") from None
    if strategy.game_definition is None:
        strategy.close()
        raise FileFormatError(f"{path}: the file carries no ACPC game definition (export it again "
                              f"with efgkit export)")
    definition: GameDefinition = parse_gamedef(strategy.game_definition, f"{path} (game definition)")
    rules = limit_poker(definition, strategy.spec)
    return CompactPolicy(strategy, rules), definition, strategy.close


__all__ = ["BucketPolicy", "CompactPolicy", "ResolvingPolicy", "infoset_key", "open_policy",
           "open_resolving_policy"]
