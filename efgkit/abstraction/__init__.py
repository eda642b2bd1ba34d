"""Information abstractions: InfosetMap (and, later, coarsest/FPIRA/CFR+IRA refinement, card buckets)."""

from efgkit.abstraction.infoset_map import InfosetMap

__all__ = ["InfosetMap"]
