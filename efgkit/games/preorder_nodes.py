"""The numba helper the fast tree builders' kernels write their nodes with."""

from __future__ import annotations

import numba


@numba.njit(cache=True, no_cfunc_wrapper=True, inline="always")
def write_node(out, node, kind, depth, num_children, infoset_code, public_code):
    """Write entry ``node`` of ``out`` (a ``builder.Preorder``): its ``kind``, ``depth``,
    ``num_children``, ``infoset_code`` (-1 off decision nodes) and ``public_code``; its chance
    probability and utility are left as they are (1 and 0 unless the caller sets them)."""
    out.kind[node] = kind
    out.depth[node] = depth
    out.num_children[node] = num_children
    out.infoset_code[node] = infoset_code
    out.public_code[node] = public_code
