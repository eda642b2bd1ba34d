"""efgkit solve --engine sampled and efgkit evaluate --engine streamed: the command line of the
streamed poker engine, its strategy files and its refusals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

from efgkit.cli import main
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent
from efgkit.poker.streamed.full_game import StreamedEvaluator
from efgkit.specs import make_game
from efgkit.storage.bucket_strategy import load_bucket_strategy, save_bucket_strategy
from efgkit.storage.sampled_working import WorkingFile, working_path

GAME = "holdem(ranks=3,rounds=2)"


def test_solve_then_evaluate_in_the_full_game(tmp_path, runner, json_output):
    out = tmp_path / "strategy.h5"
    solved = json_output(runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical",
                                              "-n", "300", "--out", str(out), "--nash-conv", "--json"]))
    assert solved["engine"] == "sampled" and solved["iterations"] == 300
    evaluated = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--json"]))
    assert evaluated["engine"] == "streamed"  # chosen from the file
    assert evaluated["nash_conv"] == pytest.approx(solved["nash_conv"], abs=1e-12)
    assert evaluated["exploitability_mbb_per_game"] == pytest.approx(evaluated["exploitability"] / 10 * 1000)
    layout, strategy, provenance, state = load_bucket_strategy(out, make_game(GAME))
    assert provenance["iterations"] == 300 and set(state) == {"regrets", "average_accumulator"}
    direct = StreamedEvaluator(layout).evaluate(strategy)
    assert direct.nash_conv == pytest.approx(evaluated["nash_conv"], abs=1e-12)


def test_periodic_local_best_response_bounds_the_exact_value(tmp_path, runner, json_output):
    out, plot = tmp_path / "strategy.h5", tmp_path / "lbr.png"
    solved = json_output(runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical",
                                              "-n", "60", "-k", "30", "--lbr", "200", "--plot", str(plot),
                                              "--out", str(out), "--json"]))
    assert [point["iteration"] for point in solved["history"]] == [30, 60]
    assert plot.stat().st_size > 0 and solved["lbr_boards"] == 200
    exact = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--json"]))
    assert solved["lbr_mbb_per_game"] == solved["history"][-1]["lbr_mbb_per_game"]
    assert solved["lbr_ci95_low_mbb"] <= exact["exploitability_mbb_per_game"]


def test_the_abstract_games_best_response_from_the_command_line(tmp_path, runner, json_output):
    """Lossless cards: the abstract game is the full game; canonical hands forget which board
    card came when (imperfect recall): a lower bound on the full game's response."""
    for buckets in ("lossless", "canonical"):
        out = tmp_path / f"{buckets}.h5"
        assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", buckets, "-n", "50",
                                    "--out", str(out)]).exit_code == 0
        full = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--no-game-value", "--json"]))
        abstract = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--abstract-game", "--json"]))
        assert abstract["game_of_response"] == "abstract" and full["game_of_response"] == "full"
        assert abstract["abstract_response_exact"] == (buckets == "lossless")
        if buckets == "lossless":
            assert abstract["nash_conv"] == pytest.approx(full["nash_conv"], abs=1e-12)
        else:
            assert abstract["nash_conv"] <= full["nash_conv"] + 1e-12
    refused = runner.invoke(main, ["evaluate", GAME, str(out), "--abstract-game", "--lbr", "20"])
    assert refused.exit_code == 2 and "--abstract-game" in refused.output


def test_a_solve_evaluated_in_the_abstract_game(tmp_path, runner, json_output):
    out, plot = tmp_path / "strategy.h5", tmp_path / "abstract.png"
    solved = json_output(runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical",
                                              "-n", "40", "-k", "20", "--abstract-game", "--plot", str(plot),
                                              "--out", str(out), "--json"]))
    assert [point["iteration"] for point in solved["history"]] == [20, 40]
    assert all("abstract_nash_conv" in point and "nash_conv" not in point for point in solved["history"])
    assert plot.stat().st_size > 0 and "nash_conv" not in solved
    evaluated = json_output(runner.invoke(main, ["evaluate", GAME, str(out), "--abstract-game", "--json"]))
    assert solved["abstract_nash_conv"] == pytest.approx(evaluated["nash_conv"], abs=1e-12)
    both = runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "4",
                                "--abstract-game", "--lbr", "20"])
    assert both.exit_code == 2 and "choose one" in both.output


@pytest.mark.parametrize("final", [[], ["--nash-conv"]])
def test_sampled_history_ends_at_the_last_iteration_evaluated_once(final, runner, json_output):
    solved = json_output(runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "none",
                                              "-n", "50", "-k", "30", *final, "--json"]))
    assert [point["iteration"] for point in solved["history"]] == [30, 50]
    assert solved["nash_conv"] == solved["history"][-1]["nash_conv"]


def test_a_card_independent_strategy_file_round_trips(tmp_path):
    game = make_game(GAME)
    layout = BucketLayout(BettingTree(game), CardIndependent())
    strategy = layout.uniform()
    save_bucket_strategy(tmp_path / "uniform.h5", layout, strategy, {"algorithm": "uniform", "iterations": 0})
    loaded, read, _, _ = load_bucket_strategy(tmp_path / "uniform.h5", game)
    assert np.array_equal(read, strategy) and loaded.abstraction.reference == {"kind": "none"}


@pytest.mark.parametrize("arguments, message", [
    (["solve", GAME, "--engine", "sampled"], "needs --buckets"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "-a", "fp"], "runs cfr"),
    (["solve", GAME, "--buckets", "none"], "--buckets goes with --engine sampled"),
    (["solve", "goofspiel", "--engine", "sampled", "--buckets", "none"], "limit poker games only"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "/no/such/buckets.h5"], "no such"),
])
def test_bad_sampled_solves_get_one_line(arguments, message, runner):
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_mismatched_strategy_files_are_refused(tmp_path, runner):
    out = tmp_path / "strategy.h5"
    assert runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "none", "-n", "5", "--out",
                                str(out)]).exit_code == 0
    other = runner.invoke(main, ["evaluate", "holdem(ranks=4,rounds=2)", str(out)])
    assert other.exit_code == 2 and "is for" in other.stderr
    tree_engine = runner.invoke(main, ["evaluate", GAME, str(out), "--engine", "tree"])
    assert tree_engine.exit_code == 2 and "--engine streamed" in tree_engine.stderr
    with h5py.File(out, "r") as handle:
        offset = handle["strategy"].id.get_offset()  # contiguous: the probabilities' first byte
    damaged = tmp_path / "damaged.h5"
    data = bytearray(out.read_bytes())
    data[offset + 3] ^= 0xFF
    damaged.write_bytes(bytes(data))
    broken = runner.invoke(main, ["evaluate", GAME, str(damaged)])
    assert broken.exit_code == 2 and "corrupted" in broken.stderr and "Traceback" not in broken.output


# ------------------------------------------------------------------ long runs: checkpoints, resume, history
def _sampled(runner, *arguments):
    result = runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "--json",
                                  *arguments])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _solver_state(path):
    with h5py.File(path, "r") as handle:
        return {name: handle["solver_state"][name][()] for name in handle["solver_state"]} | {
            "strategy": handle["strategy"][()]}


SCALINGS = ("--precision", "int32", "--regret-scaling", "16,0.5", "--average-scaling", "16,1")
"""int32 scaled per round as the HULHE run (coarser on the last round)."""


def test_a_resumed_cli_solve_equals_an_uninterrupted_one(runner, tmp_path):
    full = _sampled(runner, "-n", "300", *SCALINGS, "--every", "100", "--state", str(tmp_path / "full.h5"))
    part = _sampled(runner, "-n", "150", *SCALINGS, "--every", "100", "--state",
                    str(tmp_path / "part.h5"), "--checkpoint-every", "50")
    assert part["checkpoints_written"] == 4  # 50, 100, 150 and the end
    resumed = _sampled(runner, "-n", "300", *SCALINGS, "--every", "100", "--state",
                       str(tmp_path / "part.h5"), "--resume", "--plot", str(tmp_path / "curve.png"))
    assert resumed["resumed_from_iteration"] == 150
    expected, got = _solver_state(tmp_path / "full.h5"), _solver_state(tmp_path / "part.h5")
    assert set(got) == {"regrets", "average_accumulator", "scaling", "strategy"}
    assert got["regrets"].dtype == np.int32
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name
    # The 150-iteration run ended with its own evaluation; the resumed one continues its history.
    assert [h["iteration"] for h in resumed["history"]] == [100, 150, 200, 300]
    assert [h["nash_conv"] for h in resumed["history"] if h["iteration"] != 150] == [
        h["nash_conv"] for h in full["history"]]
    assert resumed["solver_state_bytes"] == full["solver_state_bytes"] == resumed["actions"] * 8 + 32
    assert resumed["parameters"]["regret_scaling"] == [16.0, 0.5] and got["scaling"].shape == (2, 2)
    _, _, provenance, _ = load_bucket_strategy(tmp_path / "part.h5", make_game(GAME))
    assert provenance["history"] == resumed["history"] and provenance["precision"] == "int32"
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("arguments, message", [
    (["--precision", "float32"], "precision 'int32', not 'float32'"),
    (["-a", "dcfr"], "precision int32 runs cfr+"),
    (["--seed", "3"], "seed 0, not 3"),
    (["--buckets", "none"], "card abstraction canonical"),
    (["-n", "10"], "beyond --iterations 10"),
    (["--regret-scaling", "16,0.5"], "regret_scaling [16.0, 16.0], not [16.0, 0.5]; resume with the same "
                                     "--regret-scaling"),
    (["--average-scaling", "16"], "average_scaling [16.0, 1.0], not [16.0, 16.0]"),
])
def test_mismatched_resumes_are_refused(runner, tmp_path, arguments, message):
    state = tmp_path / "s.h5"
    _sampled(runner, "-n", "20", "--precision", "int32", "--average-scaling", "16,1", "--state", str(state))
    before = state.read_bytes()
    given = dict(zip(arguments[::2], arguments[1::2], strict=True))
    if "--precision" not in given:
        given.setdefault("--average-scaling", "16,1")
    command = ["solve", GAME, "--engine", "sampled", "--buckets", given.pop("--buckets", "canonical"),
               "-n", given.pop("-n", "40"), "--precision", given.pop("--precision", "int32"),
               "--state", str(state), "--resume", *[x for pair in given.items() for x in pair]]
    result = runner.invoke(main, command)
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.output and state.read_bytes() == before


def test_a_resume_with_other_variant_parameters_names_them(runner, tmp_path):
    state = tmp_path / "s.h5"
    _sampled(runner, "-n", "10", "-a", "dcfr", "--alpha", "1.5", "--state", str(state))
    result = runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "20",
                                  "-a", "dcfr", "--alpha", "2", "--state", str(state), "--resume"])
    assert result.exit_code == 2 and "resume with the same variant parameters" in result.stderr
    assert "the same the" not in result.stderr


@pytest.mark.parametrize("arguments, message", [
    (["solve", GAME, "--precision", "int32"], "--precision goes with --engine sampled"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "--plot", "p.png"], "give --every K"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "--resume"], "needs --state"),
    (["solve", GAME, "--regret-scaling", "16"], "--regret-scaling goes with --engine sampled"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "--average-scaling", "16"],
     "--average-scaling goes with --precision int32"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "--precision", "int32", "--regret-scaling",
      "16,x"], "--regret-scaling takes numbers separated by commas"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "--precision", "int32", "--regret-scaling",
      "16,16,16"], "regret_scaling needs one value per round"),
    (["solve", GAME, "--engine", "sampled", "--buckets", "none", "--precision", "int32", "--average-scaling",
      "16,0"], "average_scaling must be finite and > 0"),
])
def test_bad_long_run_options_get_one_line(runner, arguments, message):
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A sampled solve's checkpoint: provenance with history and sampler state."""
    from click.testing import CliRunner

    state = tmp_path_factory.mktemp("checkpoint") / "s.h5"
    _sampled(CliRunner(), "-n", "20", "--every", "10", "--state", str(state))
    return state


def _edited(source, target, name, edit):
    """A copy of ``source`` whose JSON attribute ``name`` went through ``edit``, re-sealed (its
    manifest recomputed, as someone editing the file on purpose would)."""
    import shutil

    from efgkit.io.checked_hdf5 import manifest_digest

    shutil.copy(source, target)
    with h5py.File(target, "r+") as handle:
        handle.attrs[name] = json.dumps(edit(json.loads(handle.attrs[name])))
        handle.attrs["content_sha256"] = manifest_digest(handle)
    return target


@pytest.mark.parametrize("name, edit, words", [
    ("abstraction", lambda value: [1, 2], "/@abstraction is [1, 2], expected a JSON object"),
    ("abstraction", lambda value: {"kind": "bucket-file", "sha256": "0" * 64}, "not a file name"),
    ("abstraction", lambda value: {"kind": "bucket-file", "path": 7, "sha256": "0" * 64}, "not a file name"),
    ("abstraction", lambda value: {"kind": "perfect-recall", "base": 3}, "unknown card abstraction 3"),
    ("provenance", lambda value: "x", "/@provenance is 'x', expected a JSON object"),
    ("provenance", lambda value: {**value, "iterations": "many"},
     "field 'iterations' is 'many', expected an integer"),
    ("provenance", lambda value: {**value, "parameters": [1]},
     "field 'parameters' is [1], expected a JSON object"),
    ("provenance", lambda value: {**value, "history": [{"iteration": 10, "nash_conv": "x"}]},
     "history entry 0 field 'nash_conv' is 'x', expected a number"),
    ("provenance", lambda value: {key: v for key, v in value.items() if key != "algorithm"},
     "has no 'algorithm'"),
])
@pytest.mark.parametrize("command", ["evaluate", "export", "resume"])
def test_edited_metadata_of_a_bucket_strategy_is_one_line(runner, tmp_path, checkpoint, name, edit, words,
                                                          command):
    """Metadata is checked by type as it is read: a re-sealed file whose fields have the wrong
    type is one line and exit code 2 for every command that reads it, never a traceback."""
    path = _edited(checkpoint, tmp_path / "s.h5", name, edit)
    arguments = {"evaluate": ["evaluate", GAME, str(path)],
                 "export": ["export", str(path), "--out", str(tmp_path / "s.efgs")],
                 "resume": ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "30",
                            "--state", str(path), "--resume"]}[command]
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2, result.exception
    assert len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr


def test_a_checkpoint_whose_sampler_state_numpy_cannot_take_is_one_line(runner, tmp_path, checkpoint):
    path = _edited(checkpoint, tmp_path / "s.h5", "provenance",
                   lambda value: {**value, "rng_state": {**value["rng_state"], "has_uint32": 2**63}})
    result = runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "30",
                                  "--state", str(path), "--resume"])
    assert result.exit_code == 2 and "unusable sampler state" in result.stderr, result.exception
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("mapped", [(), ("--mapped",)])
def test_sigkill_after_a_checkpoint_leaves_a_file_that_resumes(runner, tmp_path, mapped):
    """Also with the arrays mapped: the killed run's working file is replaced, never trusted."""
    state = tmp_path / "s.h5"
    command = [sys.executable, "-c", "from efgkit.cli import main; main()", "solve", GAME, "--engine",
               "sampled", "--buckets", "canonical", "-n", "100000000", "--state", str(state),
               "--checkpoint-every", "50", *mapped]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not state.exists():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGKILL)
    process.wait()
    _, _, provenance, _ = load_bucket_strategy(state, make_game(GAME))
    done = provenance["iterations"]
    assert done > 0 and done % 50 == 0
    assert working_path(state).exists() == bool(mapped)
    resumed = _sampled(runner, "-n", str(done + 30), "--state", str(state), "--resume", *mapped)
    assert resumed["resumed_from_iteration"] == done and not working_path(state).exists()
    _sampled(runner, "-n", str(done + 30), "--state", str(tmp_path / "full.h5"))
    expected, got = _solver_state(tmp_path / "full.h5"), _solver_state(state)
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name


def test_a_mapped_solve_resumes_bit_identically_to_one_in_memory(runner, tmp_path):
    """--mapped keeps the arrays in STATE.work (removed at the end); its checkpoints and
    results are the in-memory run's, bit for bit, across a resume."""
    full = _sampled(runner, "-n", "200", *SCALINGS, "--every", "100", "--state", str(tmp_path / "full.h5"))
    part = _sampled(runner, "-n", "120", *SCALINGS, "--state", str(tmp_path / "part.h5"), "--mapped",
                    "--checkpoint-every", "40")
    assert part["state_storage"] == "mapped" and full["state_storage"] == "memory"
    assert not working_path(tmp_path / "part.h5").exists()
    resumed = _sampled(runner, "-n", "200", *SCALINGS, "--every", "100", "--state", str(tmp_path / "part.h5"),
                       "--mapped", "--resume")
    assert resumed["resumed_from_iteration"] == 120 and resumed["history"][-1] == {
        **full["history"][-1], "seconds": resumed["history"][-1]["seconds"]}
    expected, got = _solver_state(tmp_path / "full.h5"), _solver_state(tmp_path / "part.h5")
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name


def test_a_mapped_run_that_fails_leaves_no_working_file(runner, tmp_path):
    """A refused resume fails after the working file was made: it is removed with the run, and
    the state file is untouched."""
    state = tmp_path / "s.h5"
    _sampled(runner, "-n", "20", "--precision", "int32", "--state", str(state))
    before = state.read_bytes()
    result = runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "40",
                                  "--precision", "int32", "--regret-scaling", "8", "--state", str(state),
                                  "--resume", "--mapped"])
    assert result.exit_code == 2 and "regret_scaling" in result.stderr
    assert not working_path(state).exists() and state.read_bytes() == before


@pytest.mark.parametrize("content", [b"not an hdf5 file", None])
def test_a_foreign_or_damaged_working_file_is_refused(runner, tmp_path, content):
    """Whatever lies at STATE.work and is not a working file (random bytes, a working file
    whose header is damaged) is refused in one line and left as it was."""
    state = tmp_path / "s.h5"
    work = working_path(state)
    if content is None:
        _sampled(runner, "-n", "20", "--precision", "int32", "--state", str(state), "--mapped")
        WorkingFile(tmp_path / "other.h5").allocate({"regrets": (1000, np.dtype(np.int32))})
        content = bytearray((tmp_path / "other.h5.work").read_bytes())
        content[:8] = b"\0" * 8  # the HDF5 signature
        content = bytes(content)
    work.write_bytes(content)
    result = runner.invoke(main, ["solve", GAME, "--engine", "sampled", "--buckets", "canonical", "-n", "40",
                                  "--precision", "int32", "--state", str(state), "--mapped"]
                           + ["--resume"] * state.exists())
    assert result.exit_code == 2 and "is not the working file of a mapped solve" in result.stderr
    assert "Traceback" not in result.output and work.read_bytes() == content
