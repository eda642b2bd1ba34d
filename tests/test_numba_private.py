"""numba's private API, used in one module (efgkit/io/numba_private.py): a stale or damaged
cache index of an efgkit kernel is recompiled, not a crash; the installed numba is one
pyproject.toml allows and has what the module uses; without it, kernels compile as usual."""

import glob
import os
import pickle
import subprocess
import sys

import numba
import numpy as np

RUN = """
import numpy as np
from efgkit.poker.dealt_hands import keep_off_board
out = np.zeros(3, np.int64)
count = keep_off_board(np.array([1, 2, 4], np.int64), np.array([0, 1, 2], np.int64), np.int64(2), out)
print(count, *out[:count])
"""


def _run(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=300)


DAMAGES = [
    b"cefgkit.poker.full_game\nNoSuchBundle\n.",  # a signature naming a renamed class
    b"cno_such_module_of_efgkit\nBundle\n.",  # ... or a module that is gone
    b"\x80\x05\x95",  # an index cut short
]


def test_unreadable_index_is_a_cache_miss(tmp_path):
    first = _run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["2", "0", "2"]
    indexes = glob.glob(str(tmp_path / "**" / "dealt_hands.keep_off_board-*.nbi"), recursive=True)
    assert len(indexes) == 1
    for damage in DAMAGES:
        with open(indexes[0], "wb") as f:
            pickle.dump(numba.__version__, f)
            f.write(damage)
        again = _run(tmp_path)
        assert again.returncode == 0, (damage, again.stderr)
        assert again.stdout.split() == ["2", "0", "2"]
        with open(indexes[0], "rb") as f:  # rewritten by the recompilation
            assert pickle.load(f) == numba.__version__
            stamp, overloads = pickle.loads(f.read())
        assert len(overloads) == 1


def test_a_damaged_data_file_is_a_cache_miss(tmp_path):
    assert _run(tmp_path).returncode == 0
    data = glob.glob(str(tmp_path / "**" / "dealt_hands.keep_off_board-*.nbc"), recursive=True)
    assert data
    for damage in (b"garbage", b"\x80\x05\x95\x00", bytes(range(256))):
        for path in data:
            with open(path, "wb") as f:
                f.write(damage)
        again = _run(tmp_path)
        assert again.returncode == 0, (damage, again.stderr)
        assert again.stdout.split() == ["2", "0", "2"]


def test_concurrent_saves_never_share_a_data_file(tmp_path):
    """Two processes saving two signatures of one kernel, each from the index it read
    before the other wrote (the race numba's numbering loses): every key keeps its data."""
    from numba.core import caching

    from efgkit.io.numba_private import install

    install()
    files = [caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1)) for _ in range(2)]
    for file in files:
        file.efgkit_kernel = True
        file._load_index = dict  # neither process sees the other's entry
    for number, file in enumerate(files):
        file.save(("signature", number), ("machine code", number))
    assert len(glob.glob(str(tmp_path / "*.nbc"))) == 2
    reader = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    reader.efgkit_kernel = True
    assert reader.load(("signature", 1)) == ("machine code", 1)  # the last index written
    assert reader.load(("signature", 0)) is None  # lost to the concurrent write: a miss


CALLEE = """
import numba
@numba.njit(cache=True)
def value():
    return {}
"""
CALLER = """
import numba
from kernels.callee import value
@numba.njit(cache=True)
def caller():
    return value() * 10
"""
RUN_CALLER = """
import sys
sys.path.insert(0, {parent!r})
import efgkit.io.numba_private as private
private._efgkit_cache_folders = lambda: ({package!r}, frozenset())  # these kernels count as efgkit's
from kernels.caller import caller
print(caller())
"""


def test_a_kernel_is_compiled_again_when_a_kernel_it_calls_in_another_file_changes(tmp_path):
    """numba alone checks only the caller's own file and would load the caller with the old
    callee compiled in (prints 10 twice)."""
    package = tmp_path / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caller.py").write_text(CALLER)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # caches in __pycache__
    script = RUN_CALLER.format(parent=str(tmp_path), package=str(package))

    def run_with_callee(constant):
        (package / "callee.py").write_text(CALLEE.format(constant))
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert run_with_callee(1) == "10"
    assert run_with_callee(2) == "20"
    index, = glob.glob(str(package / "__pycache__" / "caller.caller-*.nbi"))
    written = os.stat(index).st_mtime_ns
    assert run_with_callee(2) == "20"  # sources unchanged: a cache hit, not compiled and saved again
    assert os.stat(index).st_mtime_ns == written


def test_the_sources_fingerprint_follows_every_source_file(tmp_path):
    from efgkit.io.numba_private import sources_fingerprint

    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 1\n")
    first = sources_fingerprint(str(tmp_path))
    (tmp_path / "notes.txt").write_text("not a source")
    assert sources_fingerprint(str(tmp_path)) == first
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    assert sources_fingerprint(str(tmp_path)) != first


def test_the_installed_numba_is_within_the_bounds_and_has_what_efgkit_uses():
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    from numba.core import caching
    from packaging.specifiers import SpecifierSet

    from efgkit.io.numba_private import WITHOUT_REFCOUNTS, install

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]
    bound = next(d for d in project["dependencies"] if d.startswith("numba"))
    assert version("numba") in SpecifierSet(bound[len("numba"):])
    install()
    assert getattr(caching.IndexDataCacheFile.save, "efgkit_tolerant", False)
    assert WITHOUT_REFCOUNTS == {"_nrt": False}


def test_a_kernel_without_reference_counting_computes_what_the_plain_one_does():
    from efgkit.io.numba_private import WITHOUT_REFCOUNTS

    def total(values, out):
        for i in range(values.shape[0]):
            out[0] += values[i]

    values = np.arange(10.0)
    results = []
    for options in (WITHOUT_REFCOUNTS, {}):  # {}: the fallback where numba lacks the option
        out = np.zeros(1)
        numba.njit(**options)(total)(values, out)
        results.append(out[0])
    assert results == [45.0, 45.0]
