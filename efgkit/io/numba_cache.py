"""A stale numba cache index of an efgkit kernel is a cache miss, not a crash.

numba unpickles a kernel's whole cache index (every signature it was compiled for) before
it checks that the source is unchanged (numba issue #6018). A signature naming a class
that has since been renamed or removed (a kernel bundle, a NamedTuple) then raises
``AttributeError`` or ``ImportError`` on the next run, for example after upgrading efgkit
over an old ``__pycache__``; an index cut short by a killed process raises ``EOFError``.
``install`` makes numba treat those indexes of efgkit's own kernels as empty: the kernel
is compiled again and its index rewritten. It is numba's ``numba_extensions`` ``init``
entry point (pyproject.toml), so numba runs it before its first compilation or cache load,
and ``import efgkit`` does not import numba.
"""

from __future__ import annotations

import pickle

_UNREADABLE = (AttributeError, ImportError, EOFError, pickle.UnpicklingError)


def install() -> None:
    """Patch numba's cache (once): an unreadable index of an efgkit kernel reads as empty."""
    from numba.core import caching

    if getattr(caching.Cache.__init__, "efgkit_tolerant", False):
        return
    open_cache = caching.Cache.__init__
    load = caching.IndexDataCacheFile._load_index

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

    cache_init.efgkit_tolerant = True
    caching.Cache.__init__ = cache_init
    caching.IndexDataCacheFile._load_index = load_index
