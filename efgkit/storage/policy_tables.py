"""A strategy as a JSON table by infoset key: for inspection, and as OpenSpiel's policy table.

``json_table`` keys the probabilities by efgkit's readable infoset keys and action
labels. ``openspiel_policy_table`` is the ``{information_state: [(action_id,
probability), ...]}`` mapping that ``pyspiel.TabularPolicy(table)`` takes (and that
OpenSpiel's Python ``TabularPolicy`` can be filled from), for the games with an OpenSpiel
counterpart (``efgkit.interop.openspiel``). Probabilities are written as JSON floats,
which round-trip float64 exactly, so these exports do not change the strategy.
"""

from __future__ import annotations

import json
import os

from efgkit.io.atomic import write_atomically
from efgkit.solvers.strategy import Strategy

JSON_FORMAT = "efgkit-strategy-json"


def json_table(strategy: Strategy) -> dict:
    """Game, tree fingerprint and ``{infoset key: {action label: probability}}``."""
    tree = strategy.tree
    behavior = strategy.behavior().tolist()
    offsets = tree.infoset_action_offset.tolist()
    infosets = {
        key: dict(zip(tree.action_labels[offsets[i]:offsets[i + 1]],
                      behavior[offsets[i]:offsets[i + 1]], strict=True))
        for i, key in enumerate(tree.infoset_keys)
    }
    return {"format": JSON_FORMAT, "version": 1, "game": tree.spec,
            "tree_fingerprint": tree.fingerprint, "infosets": infosets}


def openspiel_policy_table(strategy: Strategy, openspiel_game=None) -> dict[str, list[list]]:
    """``{information state string: [[action id, probability], ...]}`` in OpenSpiel's terms.

    ``openspiel_game`` as in ``openspiel_infoset_correspondence`` (default: the tree's
    OpenSpiel counterpart; GameSpecError if it has none).
    """
    from efgkit.interop.openspiel import openspiel_infoset_correspondence

    correspondence = openspiel_infoset_correspondence(strategy.tree, openspiel_game)
    table: dict[str, list[list]] = {state: [] for state in correspondence.information_states}
    for infoset, action_id, probability in zip(correspondence.action_infoset.tolist(),
                                               correspondence.action_ids.tolist(),
                                               strategy.behavior().tolist(), strict=True):
        table[correspondence.information_states[infoset]].append([action_id, probability])
    return table


def write_json(path: str | os.PathLike, data: dict) -> int:
    """Write ``data`` as JSON atomically; returns the number of bytes written."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False).encode()
    write_atomically(path, text)
    return len(text)
