"""The explicit-stack depth-first walk every poker engine runs, with per-engine visitors.

The streamed best response (``full_game._walk_block`` over a betting template, ``_item`` and
``card_blind.blind_item`` over the boards of a work item), sampled CFR
(``sampled_cfr._walk_player``) and local best response and matches
(``board_walk.responder_value``) each walk a stack indexed by depth: start a node, set up
its next child one deeper or finish the node when none is left, combine a finished child
into its parent. ``depth_first`` is that loop; the engine gives four *visitors*
``visitor(args, d)`` (``args`` its tuple of bundles and scalars, ``d`` int64 the depth):
``open_`` starts the node at ``d`` (True: a leaf, finished at once), ``next_child`` sets up
the next child at ``d + 1`` (False: none left), ``close`` finishes the node at ``d``
(``no_close``: nothing to do), ``gather`` combines the child at ``d + 1`` into ``d``.

Inlined, not called: a call per node passing an engine's bundles costs more than a node's
work on small games (``sampled_cfr.py``'s note above ``_open``). ``depth_first`` is
``inline="always"`` and takes the visitors as arguments, so numba merges it into the engine's
kernel before typing, where the visitors are constants and those ``inline="always"`` are
merged in turn: each kernel compiles to the loop it wrote by hand (docs/benchmarks.md).
Visitors doing a level's work per call (the board walks') stay kernels of their own. The
inliner takes no ``*args``: hence one ``args`` tuple.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def depth_first(open_, next_child, close, gather, args, root):
    """Walk the subtree of the node set up at depth ``root`` (int64) depth first, an explicit
    stack: ``open_`` each node, ``next_child`` until none is left then ``close``, ``gather``
    each finished child into its parent (the visitors and ``args`` as the module says). A
    leaf root is only opened."""
    d = root
    if open_(args, d):
        return
    while True:
        if next_child(args, d):
            d += 1
            if not open_(args, d):
                continue
        else:
            close(args, d)
            if d == root:
                return
        d -= 1
        gather(args, d)


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def no_close(args, d):
    """The ``close`` of walks whose nodes are finished by their children's ``gather``."""


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def push_child(stack, d, a, m, first_child):
    """Make child ``a`` of the ``m`` children from ``first_child`` the next one at depth
    ``d + 1`` of ``stack`` (int64 per depth ``node``, ``cursor`` the next child to try,
    ``action``); False, and nothing set up, when ``a == m``: none is left."""
    stack.cursor[d] = a + 1
    if a == m:
        return False
    stack.action[d] = a
    stack.node[d + 1] = first_child + a
    return True
