"""Exact best response, NashConv and game value in the full (unabstracted) poker game.

Johanson et al. 2011: one bottom-up pass per player over the public tree with the
opponent's reach vectors, maximising at every (public node, hand) of the responder —
the information sets of the unabstracted game, whatever abstraction the strategy was
computed on. Values include chance, so the root total is the responder's expected
utility; NashConv is the sum of both players' best-response values (efgkit's convention,
docs/conventions.md) and NashConv/2 OpenSpiel's exploitability.
"""

from __future__ import annotations

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import StrategyError
from efgkit.poker.codes import BEST_RESPONSE, EXPECTED
from efgkit.poker.materialised.layout import StrategyLayout
from efgkit.poker.materialised.vector_cfr import reach_pass, tree_view, value_pass, workspace


def evaluate_strategy(layout: StrategyLayout, strategy: np.ndarray) -> Evaluation:
    """Best-response values of both players against ``strategy`` (float64 per layout action)."""
    strategy = np.ascontiguousarray(strategy, np.float64)
    if strategy.shape != (layout.num_actions,):
        raise StrategyError(f"the strategy has shape {strategy.shape}, the layout "
                            f"{layout.num_actions} actions")
    tree = layout.tree
    view, rows, work = tree_view(tree), layout.view(), workspace(tree)
    reach_pass(view, rows, strategy, work.reach)
    unused = np.zeros(0)
    responses = tuple(float(value_pass(view, rows, strategy, p, BEST_RESPONSE, work, unused))
                      for p in (0, 1))
    game_value = float(value_pass(view, rows, strategy, 0, EXPECTED, work, unused))
    return Evaluation.of(responses, game_value)
