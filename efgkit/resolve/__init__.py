"""Safe subgame re-solving: subgames, constraint values, gadgets, splicing (Burch 2017 §5;
Brown & Sandholm 2017; Moravčík et al. 2016/2017).

Typical use::

    subgames = round_subgames(tree, 2)                      # Leduc: 30 subgames
    result = Resolver(blueprint, gadget="resolve", constraints="br", solver="cfr",
                      iterations=2000, checkpoints=[200]).resolve(subgames)
    result.before.exploitability, result.after.exploitability, result.history

The pieces are usable on their own: ``BlueprintValues(blueprint).constraints(subgame,
player, "br")`` gives the constraint values, ``resolve_gadget(constraints)`` etc. build a
gadget GameTree that any solver solves, ``Gadget.resolved_behavior`` maps its solution
back, and ``splice`` puts it into the blueprint. ``DistributionalSolver`` solves a re-solve
gadget with Normal alternative payoffs (Brown & Sandholm §6.1). ``ContinualResolver(blueprint).run()`` plays
DeepStack-style continual re-solving down every public path and evaluates the result.
"""

from efgkit.resolve.constraints import CONSTRAINT_KINDS, BlueprintValues, RootConstraints
from efgkit.resolve.continual import ContinualResolver, ContinualResult, PublicTree
from efgkit.resolve.distributional import (
    DistributionalSolver,
    distributional_gadget,
    distributional_spread,
    follow_probability,
    hedge_follow_probability,
)
from efgkit.resolve.gadgets import (
    GADGETS,
    Gadget,
    coinflip_gadget,
    extract_subgame,
    maxmargin_gadget,
    resolve_gadget,
    unsafe_gadget,
)
from efgkit.resolve.resolver import GIFT_BOUNDS, SOLVERS, Resolver, ResolveResult, SubgameReport
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
    "CONSTRAINT_KINDS", "GADGETS", "SOLVERS", "AugmentedInfosets", "BlueprintValues", "ContinualResolver",
    "ContinualResult", "DistributionalSolver", "GIFT_BOUNDS", "Gadget", "PublicTree",
    "ResolveResult", "Resolver", "RootConstraints", "Subgame", "SubgameError", "SubgameReport",
    "coinflip_gadget", "distributional_gadget", "distributional_spread", "extract_subgame",
    "follow_probability", "hedge_follow_probability", "maxmargin_gadget", "public_state_id", "resolve_gadget",
    "round_subgames", "splice", "subgame_at", "unsafe_gadget",
]
