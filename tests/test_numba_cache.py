"""A stale or damaged numba cache index of an efgkit kernel is recompiled, not a crash."""

import glob
import os
import pickle
import subprocess
import sys

import numba

RUN = """
import numpy as np
from efgkit.poker.full_game import keep_off_board
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
    indexes = glob.glob(str(tmp_path / "**" / "full_game.keep_off_board-*.nbi"), recursive=True)
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
