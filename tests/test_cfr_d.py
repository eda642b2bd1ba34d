"""CFR-D (resolve/cfr_d.py): falling exploitability, Theorem 17, stored bytes, resume, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from efgkit.cli import main
from efgkit.errors import ParameterError
from efgkit.resolve.cfr_d import CFRD, run_cfr_d
from efgkit.solvers.best_response import nash_conv
from efgkit.specs import load_game


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


def test_cfr_d_exploitability_falls_with_trunk_iterations(leduc):
    solver = CFRD(leduc, variant="cfr+", subgame_iterations=50)
    solver.iterate(3)
    early = nash_conv(solver.resolve(300))
    solver.iterate(27)
    late = nash_conv(solver.resolve(300))
    assert late < 0.5 * early
    assert late < 0.3


def test_cfr_d_implicit_average_is_within_theorem_17(leduc):
    solver = CFRD(leduc, variant="cfr", subgame_iterations=50, track_average=True)
    solver.iterate(10)
    bound = solver.regret_bound()
    implicit = nash_conv(solver.implicit_average())
    assert bound.trunk_infosets == (18, 18) and bound.actions == 3 and bound.root_infosets == 5
    assert 0.0 <= implicit <= bound.nash_conv
    assert bound.subgame_regret >= 0.0


def test_cfr_d_root_values_bound_the_implicit_average(leduc):
    """With the paper's simultaneous updates the averaged best-response root values are >= the
    opponent's counterfactual best-response values against the implicit average (a max of
    averages is at most the average of maxes), so they are feasible re-solving constraints."""
    from efgkit.resolve.constraints import BlueprintValues

    solver = CFRD(leduc, variant="cfr", subgame_iterations=20, track_average=True)
    solver.iterate(5)
    blueprint = BlueprintValues(solver.implicit_average())
    for index, subgame in enumerate(solver.subgames[:6]):
        for player in (0, 1):
            actual = blueprint.constraints(subgame, player, "br").values
            assert np.all(solver.root_values(index, 1 - player) >= actual - 1e-9)


def test_cfr_d_stores_the_trunk_and_root_values_only(leduc):
    stored = CFRD(leduc, subgame_iterations=1).stored_bytes()
    # Leduc's trunk: 36 round-1 infosets (6 cards x 3 per player); root values:
    # 30 subgames x 2 players x 5 opponent cards.
    assert stored.root_values == 30 * 2 * 5 * 8
    assert stored.cfr_d < stored.full_strategy / 9


def test_cfr_d_resume_is_bit_identical(leduc, tmp_path):
    straight = CFRD(leduc, subgame_iterations=10)
    run_cfr_d(straight, 4)
    path = tmp_path / "cfrd.h5"
    first = CFRD(leduc, subgame_iterations=10)
    run_cfr_d(first, 2, state=path)
    resumed = CFRD(leduc, subgame_iterations=10)
    run_cfr_d(resumed, 4, state=path)
    assert resumed.iteration == 4
    for name, array in straight.state_arrays().items():
        assert np.array_equal(array, resumed.state_arrays()[name]), name
    other = CFRD(leduc, subgame_iterations=11)
    with pytest.raises(Exception, match="was made with"):
        run_cfr_d(other, 4, state=path)


def test_cfr_d_refuses_bad_parameters(leduc):
    with pytest.raises(ParameterError):
        CFRD(leduc, variant="dcfr")
    with pytest.raises(ParameterError):
        CFRD(leduc, subgame_iterations=0)
    with pytest.raises(ParameterError):
        CFRD(leduc).resolve(10, gadget="unsafe")


def test_cli_cfr_d_json(tmp_path):
    out = tmp_path / "strategy.h5"
    result = CliRunner().invoke(
        main,
        [
            "cfr-d",
            "leduc",
            "-n",
            "2",
            "--subgame-iterations",
            "5",
            "--resolve-iterations",
            "20",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["iterations"] == 2 and data["subgames"] == 30 and data["nash_conv"] > 0
    assert data["cfr_d_bytes"] < data["full_solver_bytes"]
    assert out.exists()


def test_cli_cfr_d_bad_game_is_one_line():
    result = CliRunner().invoke(main, ["cfr-d", "kuhn", "-n", "1"])
    assert result.exit_code == 2
    assert "no public chance event" in result.output
