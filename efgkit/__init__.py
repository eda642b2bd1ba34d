"""efgkit: memory-efficient abstractions of two-player zero-sum imperfect-information games.

The pipeline: game rules -> GameTree (flat arrays) -> InfosetMap (abstraction)
-> solver (numba kernels) -> Strategy -> exact evaluation in the original game.
"""

__version__ = "0.1.0"
