"""Re-solving runs on any Solver and Evaluator of the core (efgkit.resolve.engines)."""

import functools

import numpy as np
import pytest

from efgkit.core.evaluation import Evaluator, Solver
from efgkit.core.solver_state import SolverState
from efgkit.errors import FileFormatError, ParameterError
from efgkit.maps.infoset_map import InfosetMap
from efgkit.poker.materialised.solver import PublicTreeBestResponse
from efgkit.resolve import (
    ContinualResolver,
    DistributionalSolver,
    Resolver,
    distributional_gadget,
    round_subgames,
    subgame_at,
)
from efgkit.resolve.continual import continual_checkpoints
from efgkit.solvers import BestResponse, CFRPlusSolver, DCFRSolver, FictitiousPlay, SequenceFormLP
from efgkit.specs import load_game


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture(scope="module")
def blueprint(leduc):
    return CFRPlusSolver(leduc).iterate(100).average_strategy()


def test_every_resolving_solver_is_a_core_solver(leduc, blueprint):
    constraints = Resolver(blueprint).values.constraints(round_subgames(leduc, 2)[0], 0, "br")
    gadget = distributional_gadget(constraints)
    spread = np.zeros(constraints.elements.num_elements)
    for solver in (SequenceFormLP(gadget.tree), DistributionalSolver(gadget, spread),
                   ContinualResolver(blueprint)):
        assert isinstance(solver, Solver)
    assert isinstance(PublicTreeBestResponse(blueprint.infoset_map), Evaluator)


def test_the_public_tree_engine_evaluates_a_resolve_as_the_game_tree_does(leduc, blueprint):
    subgames = round_subgames(leduc, 2)
    on_tree = Resolver(blueprint, iterations=20, checkpoints=[5]).resolve(subgames)
    on_public_tree = Resolver(blueprint, iterations=20, checkpoints=[5],
                              evaluator=PublicTreeBestResponse).resolve(subgames)
    assert np.array_equal(on_public_tree.strategy.probabilities, on_tree.strategy.probabilities)
    for (n, tree_value), (m, public_value) in zip(on_tree.history, on_public_tree.history, strict=True):
        assert n == m
        assert public_value.best_response_values == pytest.approx(tree_value.best_response_values, abs=1e-9)
    assert on_public_tree.before.nash_conv == pytest.approx(on_tree.before.nash_conv, abs=1e-9)


def test_a_configured_solver_factory_is_used_for_every_gadget(leduc, blueprint):
    built = []

    def discounted(tree):
        built.append(tree)
        return DCFRSolver(tree, alpha=2.0)

    subgame = subgame_at(leduc, "board=Qs bets=cc/")
    result = Resolver(blueprint, solver=discounted, iterations=30).resolve([subgame])
    configured = functools.partial(DCFRSolver, alpha=2.0)
    same = Resolver(blueprint, solver=configured, iterations=30).resolve([subgame])
    assert len(built) == 2 and np.array_equal(result.strategy.probabilities, same.strategy.probabilities)
    with pytest.raises(ParameterError, match="solver and evaluator must build"):
        Resolver(blueprint, evaluator=BestResponse(blueprint.infoset_map))
    with pytest.raises(ParameterError, match="CFR-family class"):
        Resolver(blueprint, gadget="distributional", solver=discounted)


def test_the_sequence_form_solver_is_the_lp_equilibrium_at_every_iteration(leduc):
    kuhn = load_game("kuhn")
    solver = SequenceFormLP(kuhn).iterate(5)
    assert np.array_equal(solver.average_strategy().probabilities,
                          SequenceFormLP(kuhn).solve().strategy.probabilities)
    resumed = SequenceFormLP(kuhn)
    resumed.load_state(solver.state())
    assert resumed.iteration == 5 and resumed.current_strategy() is resumed.average_strategy()
    with pytest.raises(FileFormatError):
        resumed.load_state(SolverState({"regrets": np.zeros(3)}, 1))


def test_fictitious_play_is_a_solver_that_resumes_bit_identically():
    kuhn = load_game("kuhn")
    straight = FictitiousPlay(kuhn, alternating=True).iterate(6)
    first = FictitiousPlay(kuhn, alternating=True).iterate(3)
    state = first.state()
    resumed = FictitiousPlay(kuhn, alternating=True)
    assert isinstance(resumed, Solver)
    resumed.load_state(SolverState({name: array.copy() for name, array in state.arrays.items()}, 3))
    resumed.iterate(3)
    assert resumed.iteration == 6
    assert np.array_equal(resumed.average_strategy().probabilities, straight.average_strategy().probabilities)
    assert np.array_equal(resumed.current_strategy().probabilities, straight.current_strategy().probabilities)
    with pytest.raises(FileFormatError):
        resumed.load_state(SolverState({"average": np.zeros(3)}, 1))


def test_a_continual_walk_resumes_bit_identically_from_its_solver_state(blueprint):
    straight = ContinualResolver(blueprint, iterations=10)
    straight.iterate(straight.num_steps)
    for stop in (7, straight.num_steps // 2):  # inside the first agent's walk; between the agents
        first = ContinualResolver(blueprint, iterations=10).iterate(stop)
        state = first.state()
        resumed = ContinualResolver(blueprint, iterations=10)
        resumed.load_state(SolverState({name: array.copy() for name, array in state.arrays.items()},
                                       state.iteration))
        resumed.iterate(resumed.num_steps - stop)
        assert np.array_equal(resumed.average_strategy().probabilities,
                              straight.average_strategy().probabilities)
    with pytest.raises(ParameterError, match="more steps"):
        straight.iterate(1)


def test_a_continual_checkpoint_of_another_run_is_refused(blueprint, tmp_path):
    path = tmp_path / "continual.h5"
    resolver = ContinualResolver(blueprint, iterations=10).iterate(3)
    continual_checkpoints(path, resolver, seconds=60.0).write(resolver, [])
    with pytest.raises(FileFormatError, match="made with"):
        ContinualResolver(blueprint, iterations=11).run(state=path)
    with pytest.raises(FileFormatError, match="another game"):
        kuhn = load_game("kuhn")
        ContinualResolver(CFRPlusSolver(InfosetMap.identity(kuhn)).iterate(10).average_strategy(),
                          iterations=10).run(state=path)
