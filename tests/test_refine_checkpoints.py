"""`efgkit refine --state/--resume`: CFR+IRA and FPIRA resume bit-identically, also after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from efgkit.cli import main

CFR_PLUS_IRA = ["GS4", "--kb", "10", "--kh", "50", "--delay", "0", "--target", "1e-9", "-k", "5"]
FPIRA = ["GS4", "-a", "fpira", "--target", "1e-9", "-k", "5"]


def _refine(runner, *arguments) -> dict:
    result = runner.invoke(main, ["refine", *arguments, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_run(first: dict, second: dict) -> None:
    assert [(h["iteration"], h["nash_conv"], h["abstract_infosets"], h["memory_words"])
            for h in first["history"]] == [(h["iteration"], h["nash_conv"], h["abstract_infosets"],
                                            h["memory_words"]) for h in second["history"]]


@pytest.mark.parametrize("arguments", [CFR_PLUS_IRA, FPIRA], ids=["cfr+ira", "fpira"])
def test_resume_continues_exactly_as_an_uninterrupted_run(runner, tmp_path, arguments):
    whole = _refine(runner, *arguments, "--max-iterations", "40")
    state = tmp_path / "state.h5"
    part = _refine(runner, *arguments, "--max-iterations", "15", "--state", str(state),
                   "--checkpoint-every", "5")
    assert part["checkpoints_written"] >= 3
    resumed = _refine(runner, *arguments, "--max-iterations", "40", "--state", str(state), "--resume")
    _same_run(whole, resumed)
    assert resumed["nash_conv"] == whole["nash_conv"] and resumed["iterations"] == 40


def test_resume_with_other_parameters_is_refused(runner, tmp_path):
    state = tmp_path / "state.h5"
    _refine(runner, *CFR_PLUS_IRA, "--max-iterations", "10", "--state", str(state))
    result = runner.invoke(main, ["refine", *CFR_PLUS_IRA[:-4], "--kh", "60", "--target", "1e-9",
                                  "--max-iterations", "20", "--state", str(state), "--resume"])
    assert result.exit_code == 2 and "same algorithm and parameters" in result.stderr


def test_a_checkpoint_of_the_old_fpira_default_resumes_with_the_papers_conventions(runner, tmp_path):
    """Paper-convention checkpoints record no conventions key (FPIRA's default before it became
    "reference"): resumed without --conventions they continue as paper, bit-identically; with
    --conventions reference they are refused in one line."""
    whole = _refine(runner, *FPIRA, "--conventions", "paper", "--max-iterations", "40")
    state = tmp_path / "state.h5"
    _refine(runner, *FPIRA, "--conventions", "paper", "--max-iterations", "15", "--state", str(state))
    import h5py

    with h5py.File(state, "r") as handle:
        assert "conventions" not in json.loads(handle.attrs["parameters"])
    resumed = _refine(runner, *FPIRA, "--max-iterations", "40", "--state", str(state), "--resume")
    assert resumed["conventions"] == "paper"
    _same_run(whole, resumed)
    result = runner.invoke(main, ["refine", *FPIRA, "--conventions", "reference", "--max-iterations",
                                  "50", "--state", str(state), "--resume"])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "same algorithm and parameters" in result.stderr


@pytest.mark.parametrize("arguments, name, edit, words", [
    (CFR_PLUS_IRA, "numbers", lambda value: {k: v for k, v in value.items() if k != "doublings"},
     "counters has no 'doublings'"),
    (FPIRA, "numbers", lambda value: {**value, "iteration": "many"},
     "/@numbers field 'iteration' is 'many', expected a number"),
    (CFR_PLUS_IRA, "rng_state", lambda value: "x", "/@rng_state is 'x', expected a JSON object or null"),
    (CFR_PLUS_IRA, "rng_state", lambda value: {**value, "has_uint32": 2**63}, "random state is unusable"),
    (FPIRA, "history", lambda value: [{**value[0], "nash_conv": "x"}],
     "/@history entry 0 field 'nash_conv' is 'x', expected a number"),
], ids=["missing counter", "counter text", "random state text", "random state overflow", "history"])
def test_edited_metadata_of_a_refinement_state_is_one_line(runner, tmp_path, arguments, name, edit, words):
    """A re-sealed state whose counters, random state or history have the wrong type or
    miss a field is refused in one line by refine --resume, never a traceback."""
    import h5py

    from efgkit.io.checked_hdf5 import manifest_digest

    state = tmp_path / "state.h5"
    _refine(runner, *arguments, "--max-iterations", "10", "--state", str(state))
    with h5py.File(state, "r+") as handle:
        handle.attrs[name] = json.dumps(edit(json.loads(handle.attrs[name])))
        handle.attrs["content_sha256"] = manifest_digest(handle)
    result = runner.invoke(main, ["refine", *arguments, "--max-iterations", "20", "--state", str(state),
                                  "--resume"])
    assert result.exit_code == 2, result.exception
    assert len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr


def test_checkpoint_options_need_state(runner):
    result = runner.invoke(main, ["refine", "GS4", "--resume"])
    assert result.exit_code == 2 and "--resume needs --state" in result.stderr


def test_sigkill_during_refinement_loses_only_the_work_since_the_last_checkpoint(runner, tmp_path):
    state = tmp_path / "killed.h5"
    command = [sys.executable, "-c", "from efgkit.cli import main; main()", "refine", *CFR_PLUS_IRA,
               "--max-iterations", "300", "--state", str(state), "--checkpoint-every", "5"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not state.exists():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.05)
    time.sleep(0.1)  # a moment somewhere after the first checkpoint
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    resumed = _refine(runner, *CFR_PLUS_IRA, "--max-iterations", "300", "--state", str(state), "--resume")
    whole = _refine(runner, *CFR_PLUS_IRA, "--max-iterations", "300")
    _same_run(whole, resumed)


def test_a_state_that_does_not_fit_is_refused_by_the_library():
    import numpy as np

    from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
    from efgkit.errors import AbstractionError, ParameterError
    from efgkit.specs import load_game

    tree = load_game("GS4")
    state = CFRPlusIRA(tree, k_bound=10, k_heuristic=50, delay=0).iterate(5).state()
    state.arrays["regrets"][0] = np.nan
    with pytest.raises(ParameterError, match="regrets does not fit"):
        CFRPlusIRA(tree, k_bound=10, k_heuristic=50, delay=0).restore(state)
    state.arrays["map/abstract_of"][0] = 10**6
    with pytest.raises(AbstractionError, match="abstract ids out of range"):
        CFRPlusIRA(tree, k_bound=10, k_heuristic=50, delay=0).restore(state)
