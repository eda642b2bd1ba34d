"""Our CFR and CFR+ are OpenSpiel's algorithms: the same NashConv after every iteration count."""

import pytest

from efgkit.solvers import CFRPlusSolver, CFRSolver, evaluate
from efgkit.specs import load_game

pyspiel = pytest.importorskip("pyspiel")


@pytest.mark.parametrize("ours, theirs", [(CFRPlusSolver, "CFRPlusSolver"), (CFRSolver, "CFRSolver")])
@pytest.mark.parametrize("spec, openspiel_name", [("kuhn", "kuhn_poker"), ("leduc", "leduc_poker")])
def test_nash_conv_trajectory_equals_openspiel(ours, theirs, spec, openspiel_name):
    game = pyspiel.load_game(openspiel_name)
    reference = getattr(pyspiel, theirs)(game)
    solver = ours(load_game(spec))
    for checkpoint in (1, 2, 10, 50):
        while solver.iteration < checkpoint:
            reference.evaluate_and_update_policy()
            solver.iterate(1)
        expected = pyspiel.nash_conv(game, reference.average_policy())
        assert evaluate(solver.average_strategy()).nash_conv == pytest.approx(expected, rel=1e-8,
                                                                              abs=1e-12)
