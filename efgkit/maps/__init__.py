"""What solvers take: the map from original to abstract information sets.

``InfosetMap`` (fixed) and ``RefinableMap`` (split in place by FPIRA / CFR+IRA) both meet
the ``AbstractionMap`` protocol.
"""

from efgkit.maps.infoset_map import InfosetMap
from efgkit.maps.protocol import AbstractionMap
from efgkit.maps.refinable_map import RefinableMap

__all__ = ["AbstractionMap", "InfosetMap", "RefinableMap"]
