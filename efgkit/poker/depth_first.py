"""The explicit-stack depth-first walk every poker engine runs, with per-engine visitors.

The streamed best response walks a level's betting template per block of columns
(``full_game._walk_block``) and the boards of a work item level by level
(``full_game._item``, ``card_blind.blind_item``); sampled CFR walks the betting tree on a
sampled board (``sampled_cfr._walk_player``); local best response and matches walk it on a
dealt board (``board_walk.responder_value``). Each is the same loop over a stack indexed by
depth: start a node, set up its next child one deeper (or finish the node when none is
left), and when a child is finished step back and combine it into its parent.
``depth_first`` is that loop, once; what a node, a child and combining mean is the
engine's, given as four *visitors*, each ``visitor(args, d)`` (``args`` the engine's tuple of
bundles and scalars, ``d`` int64 the depth):

* ``open_`` starts the node set up at depth ``d``; True for a leaf, finished at once (a
  terminal, a deal node ending a template, the last level of boards);
* ``next_child`` sets up the next child of the node at ``d`` at depth ``d + 1``; False when
  none is left;
* ``close`` finishes the node at ``d`` once every child is in (sampled CFR's regret update,
  a level of boards walked once the deals below are in; ``no_close`` where nothing is left);
* ``gather`` combines the finished child at ``d + 1`` into the node at ``d``.

Walks of the betting tree keep per depth the ``node``, the next child to try (``cursor``) and
the ``action`` leading to the child below; ``push_child`` is their common last step of
``next_child``.

Why visitors inlined into one driver rather than a driver that calls them: these walks are
the engines' inner loops, and a call per node passing the arrays of an engine's bundles costs
more than the node's work on small games (``sampled_cfr.py``'s note above its ``_open``).
``depth_first`` is ``inline="always"`` and takes the visitors as arguments: numba merges it
into the engine's kernel before typing, the visitors' dispatchers are then constants there,
and those declared ``inline="always"`` are merged in turn. Each engine's kernel is typed and
compiled as the loop it wrote by hand before, specialised to its visitors, with no call left
per node (docs/benchmarks.md has the A/B); visitors that do a level's work per call (the
board walks') stay kernels of their own, called. numba's inliner takes no ``*args``, hence
one ``args`` tuple, which the visitors unpack.
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
