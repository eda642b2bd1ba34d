"""Put re-solved subgame strategies back into the blueprint.

The result is a Strategy on a *refined* InfosetMap: every re-solved original infoset gets
an abstract infoset of its own (detached from whatever blueprint bucket it was in), every
other infoset keeps the blueprint's abstract infoset and probabilities. It is therefore a
behaviour strategy of the full game that BestResponse evaluates exactly and
efgkit.storage.strategy_file saves like any other.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from efgkit.errors import StrategyError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers.strategy import Strategy


def splice(blueprint: Strategy, parts: Iterable[tuple[np.ndarray, np.ndarray]]) -> Strategy:
    """The blueprint with each part ``(original flat actions, probabilities)`` played instead.

    A part must cover whole infosets (``Gadget.resolved_behavior`` gives such parts); parts
    must not overlap.
    """
    tree = blueprint.tree
    behavior = blueprint.behavior().copy()
    replaced = np.zeros(tree.num_infoset_actions, dtype=bool)
    for actions, probabilities in parts:
        actions = np.asarray(actions, dtype=np.int64)
        if actions.size and (actions.min() < 0 or actions.max() >= tree.num_infoset_actions):
            raise StrategyError("a re-solved part names actions outside the game")
        if np.any(replaced[actions]):
            raise StrategyError("two re-solved parts cover the same infoset")
        replaced[actions] = True
        behavior[actions] = probabilities
    whole = np.bincount(tree.action_infoset, weights=replaced, minlength=tree.num_infosets)
    infoset_replaced = whole > 0
    if np.any(infoset_replaced & (whole != tree.infoset_num_actions)):
        raise StrategyError("a re-solved part covers only some actions of an infoset")
    labels = blueprint.infoset_map.abstract_of.astype(np.int64)
    detached = np.flatnonzero(infoset_replaced)
    labels[detached] = blueprint.infoset_map.num_abstract + np.arange(detached.shape[0])
    refined = InfosetMap(tree, labels)
    probabilities = np.empty(refined.num_abstract_actions)
    # Members of a kept abstract infoset play the same distribution, so any member writes it.
    probabilities[refined.abstract_action_of] = behavior
    return Strategy(refined, probabilities)
