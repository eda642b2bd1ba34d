"""Safe subgame re-solving: subgames, constraint values, gadgets, splicing, continual
re-solving (Burch 2017 §5-6; Brown & Sandholm 2017; Moravčík et al. 2016/2017), on any
Solver and Evaluator of the core (engines.py). Guide and conventions: docs/resolve.md.
"""

from efgkit.resolve.constraints import CONSTRAINT_KINDS, BlueprintValues, RootConstraints
from efgkit.resolve.continual import ContinualResolver, ContinualResult, PublicStateTree
from efgkit.resolve.distributional import (
    DistributionalSolver,
    distributional_gadget,
    distributional_spread,
    follow_probability,
    hedge_follow_probability,
)
from efgkit.resolve.engines import EvaluatorFactory, SolverFactory
from efgkit.resolve.gadgets import (
    GADGETS,
    Gadget,
    coinflip_gadget,
    extract_subgame,
    maxmargin_gadget,
    resolve_gadget,
    unsafe_gadget,
)
from efgkit.resolve.resolver import GIFT_BOUNDS, Resolver, ResolveResult, SubgameReport
from efgkit.resolve.splice import splice
from efgkit.resolve.subgame import (
    AugmentedInfosets,
    Subgame,
    SubgameError,
    public_state_id,
    round_subgames,
    subgame_at,
)

__all__ = [
    "CONSTRAINT_KINDS", "GADGETS", "GIFT_BOUNDS", "AugmentedInfosets", "BlueprintValues", "ContinualResolver",
    "ContinualResult", "DistributionalSolver", "EvaluatorFactory", "Gadget", "PublicStateTree",
    "ResolveResult", "Resolver", "RootConstraints", "SolverFactory", "Subgame",
    "SubgameError", "SubgameReport", "coinflip_gadget", "distributional_gadget", "distributional_spread",
    "extract_subgame", "follow_probability", "hedge_follow_probability", "maxmargin_gadget",
    "public_state_id", "resolve_gadget", "round_subgames", "splice", "subgame_at", "unsafe_gadget",
]
