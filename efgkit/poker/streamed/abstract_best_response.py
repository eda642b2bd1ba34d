"""The abstract game's best response: the best a responder who sees only the buckets can do.

A strategy on a card abstraction is an equilibrium of the *abstract game* when neither player
gains by deviating to another strategy on the same rows (betting decision, bucket); its
exploitability there is what CFR drives to zero, while the full game's (``full_game.py``)
measures what the abstraction lost (Waugh et al. 2009, "Abstraction pathologies in extensive
games", compare the two). The responder's rows span every board and hand in their bucket, so
its choice at a row is the action of largest value summed over them all, and a row's values
depend on the responder's choices at the rows below it. With perfect recall of the buckets
(``perfect_recall.py``, ``LosslessCards``) the rows below a row's action are reached through
it only, so backward induction is exact: the responder's decisions are settled one depth at a
time, deepest first (the depth of a betting node is the number of the responder's decisions
above it), each depth by one streamed walk (``full_game.ABSTRACT``: the expected-value walk
with the rows already settled pure, adding each action's counterfactual values at that
depth's rows, every board weighted by the boards its suit class stands for). The value is
then the responder's expected utility with those rows (an ``EXPECTED`` walk): D + 2 walks per
player (D its deepest decision's depth) against 1 for the full game's best response.

With imperfect recall the same induction still gives a strategy on the rows, and the value
reported is the better of what that strategy and the strategy's own rows earn, so it is a
lower bound on the abstract game's best response (which is NP-hard to compute there: the
responder's choice at one row changes its own reach at rows it forgets it came through).
Either way the value lies between the strategy's own expected value for the responder (in
``abstract_evaluation``) and the full game's best response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.io.chunk_runner import ChunkRunner
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.codes import ABSTRACT, EXPECTED
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.solvers.best_response import TIE_TOLERANCE


def responder_depths(betting: BettingTree, player: int) -> np.ndarray:
    """int64 (betting nodes,): ``player``'s decisions strictly above each node."""
    depth = np.zeros(betting.num_nodes, np.int64)
    for node in range(betting.num_nodes):  # breadth first: parents before children
        lo = betting.first_child[node]
        depth[lo:lo + betting.num_children[node]] = depth[node] + (betting.kind[node] == player)
    return depth


def settle_rows(evaluator: StreamedEvaluator, profile: np.ndarray, action_values: np.ndarray,
                decisions: np.ndarray) -> None:
    """Make each row of the betting ``decisions`` (indices) in ``profile`` pure on its action of
    largest value in ``action_values`` (the first within ``TIE_TOLERANCE`` of it, so equal values
    summed in another order choose alike; a row nothing reaches plays its first action)."""
    layout = evaluator.layout
    for d in decisions.tolist():
        lo, hi, width = layout.action_start[d], layout.action_start[d + 1], int(layout.width[d])
        values = action_values[lo:hi].reshape(-1, width)
        best = values.max(axis=1, keepdims=True)
        tolerance = TIE_TOLERANCE * np.maximum(np.abs(best), 1.0)
        choice = np.argmax(values >= best - tolerance, axis=1)
        rows = np.zeros_like(values)
        rows[np.arange(rows.shape[0]), choice] = 1.0
        profile[lo:hi] = rows.ravel()


class AbstractResponse(NamedTuple):
    value: float
    """The responder's expected utility with its rows settled by the induction."""
    own_value: float
    """Its expected utility with the strategy's own rows (the first walk's total: nothing is
    settled yet)."""
    profile: np.ndarray
    """The strategy with the responder's rows replaced by the pure rows of the response."""


def abstract_response(evaluator: StreamedEvaluator, strategy: np.ndarray, player: int, runner: ChunkRunner,
                      progress: Callable[[int], None] | None = None, shared=None) -> AbstractResponse:
    """``player``'s abstract-game response to ``strategy`` (as ``layout.checked`` returns it).
    First deals run by ``runner`` (``shared`` as in ``StreamedEvaluator.value``); ``progress``
    is called once per first deal walked."""
    betting = evaluator.betting
    depth = responder_depths(betting, player)
    decisions = betting.decision_nodes
    own = betting.kind[decisions] == player
    profile = strategy.copy()
    shared = runner.share(evaluator) if shared is None else shared
    totals = []
    for target in range(int(depth[decisions[own]].max()), -1, -1):
        total, values = evaluator.walk(profile, player, ABSTRACT, runner, progress, shared, depth, target)
        totals.append(total)
        settle_rows(evaluator, profile, values, np.flatnonzero(own & (depth[decisions] == target)))
    value = evaluator.value(profile, player, EXPECTED, runner, progress, shared)
    return AbstractResponse(value, totals[0], profile)


def abstract_evaluation(evaluator: StreamedEvaluator, strategy, runner: ChunkRunner | None = None,
                        progress: Callable[[int], None] | None = None) -> Evaluation:
    """Both players' abstract-game best-response values, the game value and NashConv, as
    ``StreamedEvaluator.evaluate`` gives the full game's. With imperfect recall a response is
    the better of the induction's and the strategy's own rows (both strategies on the rows)."""
    strategy = evaluator.layout.checked(strategy)
    runner = runner or ChunkRunner()
    shared = runner.share(evaluator)
    found = [abstract_response(evaluator, strategy, p, runner, progress, shared) for p in (0, 1)]
    responses = tuple(max(response.value, response.own_value) for response in found)
    return Evaluation.of(responses, found[0].own_value, game="abstract",
                         exact=evaluator.layout.abstraction.perfect_recall)


def abstract_walks(evaluator: StreamedEvaluator) -> int:
    """First-deal walks of an ``abstract_evaluation`` (both players), for a progress bar."""
    betting = evaluator.betting
    decisions = betting.decision_nodes
    total = 0
    for player in (0, 1):
        depth = responder_depths(betting, player)
        total += int(depth[decisions[betting.kind[decisions] == player]].max()) + 2
    return total * evaluator.work_items
