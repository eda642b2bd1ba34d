"""numba's disk cache of efgkit's kernels: a stale index is a cache miss, and processes
compiling at once cannot mix up their entries.

numba unpickles a kernel's whole cache index (every signature it was compiled for) before
it checks that the source is unchanged (numba issue #6018). A signature naming a class
that has since been renamed or removed (a kernel bundle, a NamedTuple) then raises
``AttributeError`` or ``ImportError`` on the next run, for example after upgrading efgkit
over an old ``__pycache__``; an index cut short by a killed process raises ``EOFError``.
``install`` makes numba treat those indexes of efgkit's own kernels as empty: the kernel
is compiled again and its index rewritten.

numba names a new entry's data file by the lowest number its index does not use yet. Two
processes compiling one kernel for two signatures at once (the warm-up's commands, the
test suite's workers) can both read the index before either writes it, pick the same
file, and leave the index of one signature pointing at the other's machine code.
``install`` also names an efgkit kernel's data file by a hash of its index key, and writes
the data before the index entry: an entry lost to a concurrent write is a cache miss, and
no two signatures share a file.

Both patches are installed by numba's ``numba_extensions`` ``init`` entry point
(pyproject.toml), so numba runs them before its first compilation or cache load, and
``import efgkit`` does not import numba.
"""

from __future__ import annotations

import hashlib
import pickle

_UNREADABLE = (AttributeError, ImportError, EOFError, pickle.UnpicklingError)


def install() -> None:
    """Patch numba's cache (once) for efgkit's kernels: an unreadable index reads as
    empty, and each signature's data file is named by its key."""
    from numba.core import caching

    if getattr(caching.Cache.__init__, "efgkit_tolerant", False):
        return
    open_cache = caching.Cache.__init__
    load = caching.IndexDataCacheFile._load_index
    save = caching.IndexDataCacheFile.save

    def cache_init(self, py_func):
        open_cache(self, py_func)
        self._cache_file.efgkit_kernel = py_func.__module__.partition(".")[0] == "efgkit"

    def load_index(self):
        try:
            return load(self)
        except _UNREADABLE:
            if not getattr(self, "efgkit_kernel", False):
                raise
            return {}

    def save_entry(self, key, data):
        if not getattr(self, "efgkit_kernel", False):
            return save(self, key, data)
        name = self._data_name(int(hashlib.sha256(self._dump(key)).hexdigest()[:12], 16))
        self._save_data(name, data)
        overloads = self._load_index()
        overloads[key] = name
        self._save_index(overloads)

    cache_init.efgkit_tolerant = True
    caching.Cache.__init__ = cache_init
    caching.IndexDataCacheFile._load_index = load_index
    caching.IndexDataCacheFile.save = save_entry
