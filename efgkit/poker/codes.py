"""Every integer code the poker engines share, named once.

Node kinds of the betting tree and the public tree: 0 and 1 the player to act (as in a
GameTree), ``DEAL`` the next round's public cards (a GameTree's CHANCE), ``FOLD`` and
``SHOWDOWN`` the two kinds of terminal (a GameTree has one, TERMINAL). They are the betting
tree's own codes, defined with it in the games floor (``efgkit.games.betting_tree``, where
``LimitPoker.compile`` reads them too) and named here with the engines' other codes. These
values are part of a bucket-strategy file's betting digest, so they are never renumbered.

Objectives of a pass or walk over hands (the public tree's vector passes, the streamed
full-game walks, the card-blind walk): the updating player's counterfactual ``REGRETS``, the
responder's ``BEST_RESPONSE`` value, its ``EXPECTED`` utility under the strategy, or that
expectation while adding up the action values of its decisions at one depth (``ABSTRACT``:
the abstract game's best response).
"""

from efgkit.games.betting_tree import DEAL, FOLD, SHOWDOWN

__all__ = ["ABSTRACT", "BEST_RESPONSE", "DEAL", "EXPECTED", "FOLD", "REGRETS", "SHOWDOWN"]

REGRETS, BEST_RESPONSE, EXPECTED, ABSTRACT = 0, 1, 2, 3
