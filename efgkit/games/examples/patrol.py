"""A small patrolling game written against the Game protocol: the example of docs/new-game.md.

Sites A, B, C, ... stand on a line; site ``i`` is worth ``i + 1``. The attacker (player 1)
picks a site to rob. A sensor tells the guard (player 0) the right site with probability
1/2, and each other site with equal probability otherwise. The guard, knowing only the
report, patrols one site. If it is the attacker's site the attacker is caught (+1 to the
guard). Otherwise the attacker sees whether the guard stands next to its site ("near") or
not ("far") and either strikes now (steals the site's value) or waits to steal twice the
value; a waiting attacker is caught if the guard, who knows it waited but still not
where, moves onto its site (the guard may step left, stay or step right). Utilities are
the guard's; the attacker gets their negation.
"""

from __future__ import annotations

from typing import NamedTuple

from efgkit.errors import ParameterError
from efgkit.games.protocol import CHANCE, PLAYER0, PLAYER1, TERMINAL

CATCH_REWARD = 1.0
STEPS = {"left": -1, "stay": 0, "right": 1}


class PatrolState(NamedTuple):
    target: int | None = None
    report: int | None = None
    guard: int | None = None
    waits: bool | None = None
    guard_after: int | None = None


class PatrolGame:
    """The rules (the Game protocol); ``efgkit.games.build_tree(PatrolGame(4))`` compiles them."""

    def __init__(self, sites: int = 4) -> None:
        if not 2 <= sites <= 26:
            raise ParameterError(f"patrol: sites={sites} must be between 2 and 26")
        self.sites = sites
        self.spec = f"patrol(sites={sites})"
        self.names = [chr(ord("A") + i) for i in range(sites)]

    def value(self, site: int) -> float:
        return float(site + 1)

    def initial_state(self) -> PatrolState:
        return PatrolState()

    def current_player(self, state: PatrolState) -> int:
        if state.target is None:
            return PLAYER1
        if state.report is None:
            return CHANCE
        if state.guard is None:
            return PLAYER0
        if state.guard == state.target:
            return TERMINAL
        if state.waits is None:
            return PLAYER1
        if state.waits and state.guard_after is None:
            return PLAYER0
        return TERMINAL

    def legal_actions(self, state: PatrolState) -> list[str]:
        if state.target is None:
            return [f"rob {name}" for name in self.names]
        if state.guard is None:
            return [f"patrol {name}" for name in self.names]
        if state.waits is None:
            return ["strike", "wait"]
        return [step for step, delta in STEPS.items() if 0 <= state.guard + delta < self.sites]

    def chance_outcomes(self, state: PatrolState) -> list[tuple[str, float]]:
        wrong = 0.5 / (self.sites - 1)
        return [(f"report {name}", 0.5 if site == state.target else wrong)
                for site, name in enumerate(self.names)]

    def apply(self, state: PatrolState, action: str) -> PatrolState:
        if state.target is None:
            return state._replace(target=self.names.index(action.removeprefix("rob ")))
        if state.report is None:
            return state._replace(report=self.names.index(action.removeprefix("report ")))
        if state.guard is None:
            return state._replace(guard=self.names.index(action.removeprefix("patrol ")))
        if state.waits is None:
            return state._replace(waits=action == "wait")
        return state._replace(guard_after=state.guard + STEPS[action])

    def terminal_utility(self, state: PatrolState) -> float:
        caught = state.guard == state.target or (state.waits and state.guard_after == state.target)
        if caught:
            return CATCH_REWARD
        return -self.value(state.target) * (2.0 if state.waits else 1.0)

    def infoset_key(self, state: PatrolState) -> str:
        if state.target is None:
            return "attacker"
        if state.guard is None:
            return f"guard report={self.names[state.report]}"
        if state.waits is None:
            near = abs(state.guard - state.target) == 1
            return f"attacker robs {self.names[state.target]}, guard {'near' if near else 'far'}"
        return f"guard report={self.names[state.report]} at {self.names[state.guard]}, attacker waits"

    def public_state_key(self, state: PatrolState) -> str:
        # Both players know how far the game has got, nothing more.
        return str(sum(field is not None for field in state))
