"""Resolver: re-solve chosen subgames of a blueprint with one gadget and splice the results.

Each subgame is re-solved once per player, always against the *original* blueprint (Burch
thesis §5.4: re-solve player 0 with player 1's constraints, then player 1 with player 0's,
and combine); the unsafe gadget, where both players are free, is solved once per subgame
and gives both players' strategies (Burch §5.4.1; its pruning of dominated strategies is
not implemented). Each gadget GameTree is solved by a fresh Solver (engines.py) and its
average strategy kept; the spliced strategy is evaluated by an Evaluator (exactly in the
full game by default) at every requested checkpoint (curves from one run).

Brown & Sandholm's "Estimated" technique is ``gadget="resolve", constraints="selfplay"``
(the blueprint's own counterfactual values as alternative payoffs); Burch's self-play
experiment is the same thing. "Estimated + Distributional" is ``gadget="distributional"``
(Theorem 4's threshold rule) or ``"distributional-hedge"`` (Appendix B, the paper's choice) with
``constraints="selfplay"``: alternative payoffs ``Normal(alt(I), spread · s(I))``
(distributional.py), solved by CFR with the opponent's head choice set by the rule.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from efgkit.core.evaluation import Evaluation
from efgkit.errors import ParameterError
from efgkit.resolve.constraints import CONSTRAINT_KINDS, BlueprintValues
from efgkit.resolve.distributional import (
    DistributionalSolver,
    check_head_solver,
    distributional_spread,
)
from efgkit.resolve.engines import EvaluatorFactory, SolverFactory, check_factories
from efgkit.resolve.gadgets import (
    GADGETS,
    REACH_GADGETS,
    Gadget,
    coinflip_gadget,
    maxmargin_gadget,
    unsafe_gadget,
)
from efgkit.resolve.splice import splice
from efgkit.resolve.subgame import Subgame, SubgameError
from efgkit.solvers.best_response import BestResponse
from efgkit.solvers.cfr import CFRPlusSolver
from efgkit.solvers.strategy import Strategy

GIFT_BOUNDS = ("cbv", "min-payoff")


@dataclass(frozen=True)
class SubgameReport:
    """One gadget solve. Values are the opponent's, unnormalised (counterfactual).

    ``constraint_sum``: Σ_I c_I (NaN for unsafe); ``opponent_value``: the opponent's best
    response value in the gadget against the re-solved strategy (resolve/coin-flip: Σ_I
    max(c_I, BV_I); maxmargin: minus the minimum normalised margin); ``skipped``: the
    re-solver's blueprint and chance never reach the subgame, so it kept the blueprint;
    ``seconds``: the gadget's solve time (shared by both players' reports for unsafe).
    """

    subgame: str
    player: int
    gadget: str
    gadget_histories: int
    constraint_sum: float
    opponent_value: float
    skipped: bool
    seconds: float


@dataclass(frozen=True)
class ResolveResult:
    """The spliced strategy, its evaluation before/after and at every checkpoint."""

    strategy: Strategy
    before: Evaluation
    after: Evaluation
    history: list[tuple[int, Evaluation]]
    subgames: list[SubgameReport]
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"nash_conv_before": self.before.nash_conv, "nash_conv_after": self.after.nash_conv,
                "exploitability_before": self.before.exploitability,
                "exploitability_after": self.after.exploitability,
                "history": [{"iterations": n, **e.to_dict()} for n, e in self.history],
                "subgames": [asdict(r) for r in self.subgames], "seconds": self.seconds}


class Resolver:
    """Re-solve subgames of ``blueprint`` (a Strategy of the full game, on any InfosetMap).

    ``gadget``: one of GADGETS; ``constraints``: "br", "selfplay" or "deepstack";
    ``solver``: builds the Solver of each gadget GameTree (a CFR variant's class;
    ``SequenceFormLP``: an exact equilibrium, the same at every checkpoint, for small
    gadgets and exact safety checks; distributional gadgets need a CFR-family class);
    ``evaluator``: builds the Evaluator of the blueprint's and the spliced strategies'
    InfosetMaps; ``iterations`` per gadget; ``p``: the coin-flip probability;
    ``split_gifts``: the reach gadgets' (``REACH_GADGETS``) gifts shared by reach (safe) or given
    whole;
    ``gift_bound``: the best alternative's value in a gift, "cbv" (the trunk's best-response
    value) or "min-payoff" (its minimum reachable payoff, Brown & Sandholm's lower bound);
    ``spread``: distributional gadgets, the factor on Brown & Sandholm's ``s(I) = |blueprint
    cfv(I) - CBV(I)|`` (0: a point mass at the constraint value);
    ``checkpoints``: extra iteration counts at which the spliced strategy is evaluated;
    ``players``: which players re-solve; ``progress(done, total)`` after each gadget.
    """

    def __init__(self, blueprint: Strategy, *, gadget: str = "resolve", constraints: str = "br",
                 solver: SolverFactory = CFRPlusSolver, evaluator: EvaluatorFactory = BestResponse,
                 iterations: int = 1000, p: float = 0.5, split_gifts: bool = True, gift_bound: str = "cbv",
                 spread: float = 1.0, checkpoints: Sequence[int] = (), players: Sequence[int] = (0, 1),
                 progress: Callable[[int, int], None] | None = None) -> None:
        if gadget not in GADGETS:
            raise ParameterError(f"gadget must be one of {', '.join(GADGETS)}, got {gadget!r}")
        if constraints not in CONSTRAINT_KINDS:
            raise ParameterError(f"constraints must be one of {', '.join(CONSTRAINT_KINDS)}, "
                                 f"got {constraints!r}")
        check_factories(solver, evaluator)
        if iterations < 1:
            raise ParameterError(f"iterations must be >= 1, got {iterations}")
        if gift_bound not in GIFT_BOUNDS:
            raise ParameterError(f"gift_bound must be one of {', '.join(GIFT_BOUNDS)}, got {gift_bound!r}")
        if not 0.0 <= p <= 1.0:
            raise ParameterError(f"the coin-flip probability p must be in [0, 1], got {p}")
        if not spread >= 0.0 or spread == float("inf"):
            raise ParameterError(f"spread must be a finite number >= 0, got {spread}")
        if REACH_GADGETS.get(gadget, gadget).startswith("distributional"):
            check_head_solver(solver)
        if any(c < 1 or c > iterations for c in checkpoints):
            raise ParameterError(f"checkpoints must lie in 1..{iterations}, got {list(checkpoints)}")
        if not players or any(q not in (0, 1) for q in players):
            raise ParameterError(f"players must be a non-empty subset of (0, 1), got {players!r}")
        self.blueprint = blueprint
        self.gadget = gadget
        self.constraints = constraints
        self.solver = solver
        self.evaluator = evaluator
        self.iterations = int(iterations)
        self.p = float(p)
        self.split_gifts = split_gifts
        self.gift_bound = gift_bound
        self.spread = float(spread)
        self.checkpoints = sorted({*map(int, checkpoints), self.iterations})
        self.players = tuple(dict.fromkeys(players))
        self.progress = progress
        self.values = BlueprintValues(blueprint)

    def gadgets(self, subgames: Sequence[Subgame], player: int) -> Iterator[Gadget | None]:
        """The gadget of every subgame for re-solving ``player`` (None: unreachable), built
        one at a time (constraints and gifts of all subgames are computed first)."""
        values = self.values
        if self.gadget == "unsafe":
            for subgame in subgames:
                reach = values.reach[subgame.root_nodes]
                yield unsafe_gadget(subgame, reach, player) if reach.sum() > 0 else None
            return
        constraints = values.constraints_for(list(subgames), player, self.constraints)
        if self.gadget in REACH_GADGETS:
            gifts = values.gifts(constraints, split=self.split_gifts,
                                 lower_bound=self.gift_bound == "min-payoff")
            constraints = [c.raised_by(g, f"{c.kind}+gifts") for c, g in zip(constraints, gifts,
                                                                               strict=True)]
        for c in constraints:
            if c.total_reach <= 0:
                yield None
            elif self.gadget.endswith("maxmargin"):
                yield maxmargin_gadget(c, kind=self.gadget)
            else:  # resolve and the distributional gadgets are the coin-flip gadget at p = 0
                yield coinflip_gadget(c, self.p if self.gadget == "coinflip" else 0.0, kind=self.gadget)

    def _jobs(self, subgames: Sequence[Subgame]) -> Iterator[tuple[Subgame, tuple[int, ...], Gadget | None]]:
        """(subgame, the players whose strategy its gadget gives, gadget): one unsafe gadget
        gives both players', the others one player's each."""
        for players in [self.players] if self.gadget == "unsafe" else [(q,) for q in self.players]:
            for subgame, gadget in zip(subgames, self.gadgets(subgames, players[0]), strict=True):
                yield subgame, players, gadget

    def resolve(self, subgames: Sequence[Subgame]) -> ResolveResult:
        """Re-solve every subgame for every player, splice, and evaluate in the full game."""
        if not subgames:
            raise ParameterError("no subgames to re-solve")
        covered = np.zeros(self.blueprint.tree.num_nodes, dtype=bool)
        for subgame in subgames:
            self.blueprint.infoset_map.check_tree(subgame.tree)
            if np.any(covered[subgame.nodes]):
                raise SubgameError(f"subgame {subgame.name!r} overlaps another subgame")
            covered[subgame.nodes] = True
        start = time.perf_counter()
        before = self.evaluator(self.blueprint.infoset_map).evaluate(self.blueprint)
        parts: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {c: [] for c in self.checkpoints}
        reports: list[SubgameReport] = []
        total = len(subgames) * (1 if self.gadget == "unsafe" else len(self.players))
        for done, (subgame, players, gadget) in enumerate(self._jobs(subgames), start=1):
            reports.extend(self._solve(subgame, players, gadget, parts))
            if self.progress is not None:
                self.progress(done, total)
        history = []
        for checkpoint in self.checkpoints:
            strategy = splice(self.blueprint, parts[checkpoint])
            history.append((checkpoint, self.evaluator(strategy.infoset_map).evaluate(strategy)))
        return ResolveResult(strategy, before, history[-1][1], history, reports,
                             time.perf_counter() - start)

    def _solve(self, subgame: Subgame, players: tuple[int, ...], gadget: Gadget | None,
               parts: dict[int, list[tuple[np.ndarray, np.ndarray]]]) -> list[SubgameReport]:
        began = time.perf_counter()
        if gadget is None:
            return [SubgameReport(subgame.name, player, self.gadget, 0, float("nan"),
                                  float("nan"), True, 0.0) for player in players]
        base = REACH_GADGETS.get(self.gadget, self.gadget)
        if base.startswith("distributional"):
            spread = self.spread * distributional_spread(self.values, subgame, players[0])
            rule = "hedge" if base == "distributional-hedge" else "threshold"
            solver = DistributionalSolver(gadget, spread, rule=rule, solver=self.solver)
        else:
            solver = self.solver(gadget.tree)
        for checkpoint in self.checkpoints:
            solver.iterate(checkpoint - solver.iteration)
            average = solver.average_strategy()
            parts[checkpoint].extend(gadget.resolved_behavior(average, p) for p in players)
        constraint_sum = (float(gadget.constraints.values.sum()) if gadget.constraints is not None
                          else float("nan"))
        seconds = time.perf_counter() - began
        response = BestResponse(average.infoset_map)
        return [SubgameReport(subgame.name, player, self.gadget, gadget.tree.num_nodes,
                              constraint_sum, float(response.best_response(1 - player, average)[0]),
                              False, seconds) for player in players]

