"""Every use of numba's private API in efgkit, in one place: the disk cache of efgkit's
kernels (a stale index is a cache miss, processes compiling at once cannot mix up their
entries) and kernels compiled without reference counting.

numba's bounds in pyproject.toml are the versions these were checked against
(``tests/test_numba_private.py`` checks the installed one: the cache patch installed, the
option known). Where a numba lacks them, both fall back to numba's own behaviour: the cache
is numba's (a stale index raises as numba issue #6018 describes: delete the ``__pycache__``
folders or ``NUMBA_CACHE_DIR``), and the kernels count references (a little slower).

Kernels without reference counting: numba counts a reference for every array a kernel
binds, even a view it never keeps. ``WITHOUT_REFCOUNTS`` (``**``-passed to ``numba.njit``)
turns that off (numba's private ``_nrt`` option) for kernels that allocate nothing and only
read and write their callers' arrays: the streamed best response's and sampled CFR's walks,
where the counting cost 14% of the time.

numba unpickles a kernel's whole cache index (every signature it was compiled for) before
it checks that the source is unchanged (numba issue #6018). A signature naming a class
that has since been renamed or removed (a kernel bundle, a NamedTuple) then raises
``AttributeError`` or ``ImportError`` on the next run, for example after upgrading efgkit
over an old ``__pycache__``; an index cut short by a killed process raises ``EOFError``.
``install`` makes numba treat those indexes of efgkit's own kernels as empty, and a damaged
data file as missing: the kernel is compiled again and its index rewritten. A kernel counts
as efgkit's by the folder of its cache, so kernels decorated before numba ran the entry point
(at its first compilation) are covered too.

numba names a new entry's data file by the lowest number its index does not use yet. Two
processes compiling one kernel for two signatures at once (the warm-up's commands, the
test suite's workers) can both read the index before either writes it, pick the same
file, and leave the index of one signature pointing at the other's machine code.
``install`` also names an efgkit kernel's data file by a hash of its index key, and writes
the data before the index entry: an entry lost to a concurrent write is a cache miss, and
no two signatures share a file.

numba checks a cached kernel against its own source file only (a stamp of that file's path,
modification time and size), not against the kernels it calls in other files, which it compiled
into it: after an edit of ``core/follow_rules.py``, a kernel of ``vector_cfr.py`` that calls its
``follow_update`` loaded the old machine code from the cache. ``install`` stamps the index of an
efgkit kernel with a hash of every efgkit source file as well (``sources_fingerprint``), so any
change to efgkit's code is a cache miss for all of its kernels.

The patches are installed by numba's ``numba_extensions`` ``init`` entry point
(pyproject.toml), so numba runs them before its first compilation or cache load, and
``import efgkit`` does not import numba.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle

_UNREADABLE = (AttributeError, ImportError, EOFError, pickle.UnpicklingError, ValueError, TypeError,
               IndexError, KeyError)
"""What unpickling a damaged or stale cache file raises."""


def _knows_refcount_option() -> bool:
    """Whether this numba has the private ``_nrt`` compile option."""
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:
        return False
    return hasattr(CPUTargetOptions, "_nrt")


WITHOUT_REFCOUNTS = {"_nrt": False} if _knows_refcount_option() else {}
"""``numba.njit`` options compiling a kernel without reference counting, where this numba
allows it (module docstring)."""


@functools.cache
def _efgkit_cache_folders() -> tuple[str, frozenset[str]]:
    """Where numba caches efgkit's kernels: the package folder (``__pycache__`` beside each
    module) and the names of the folders numba makes for them under a ``NUMBA_CACHE_DIR``
    (each source folder's name and the sha1 of its path, as numba's cache locators name them)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    names = frozenset(f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"
                      for folder, _, _ in os.walk(package))
    return package, names


def _caches_an_efgkit_kernel(cache_file) -> bool:
    """Whether numba's ``IndexDataCacheFile`` holds a kernel of efgkit's (decided by its
    folder, so it holds for kernels compiled before the patch was installed too; an
    ``efgkit_kernel`` attribute overrides it)."""
    marked = getattr(cache_file, "efgkit_kernel", None)
    if marked is not None:
        return marked
    package, names = _efgkit_cache_folders()
    folder = os.path.abspath(cache_file._cache_path)
    return folder.startswith(package + os.sep) or os.path.basename(folder) in names


def sources_fingerprint(package: str) -> str:
    """SHA-256 of every ``.py`` file under ``package`` (relative paths and contents, in path
    order)."""
    digest = hashlib.sha256()
    for folder, subfolders, files in os.walk(package):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, package).encode() + b"\0")
                with open(path, "rb") as source:
                    digest.update(hashlib.sha256(source.read()).digest())
    return digest.hexdigest()


@functools.cache
def _efgkit_fingerprint() -> str:
    """``sources_fingerprint`` of the efgkit package this process runs (once per process)."""
    return sources_fingerprint(_efgkit_cache_folders()[0])


def _stamp_with_sources(cache_file) -> None:
    """Add ``_efgkit_fingerprint`` to the source stamp of an efgkit kernel's cache index (once;
    here rather than at construction: kernels decorated before ``install`` ran have theirs)."""
    if not getattr(cache_file, "efgkit_stamped", False) and _caches_an_efgkit_kernel(cache_file):
        cache_file._source_stamp = (cache_file._source_stamp, _efgkit_fingerprint())
        cache_file.efgkit_stamped = True


def install() -> None:
    """Patch numba's cache (once) for efgkit's kernels: an index is stale when any efgkit
    source changed, an unreadable index reads as empty, and each signature's data file is
    named by its key. Other packages' kernels keep
    numba's behaviour."""
    try:
        from numba.core import caching
    except ImportError:  # a numba without this module: its own cache, unpatched
        return
    if getattr(caching.IndexDataCacheFile.save, "efgkit_tolerant", False):
        return
    load = caching.IndexDataCacheFile._load_index
    load_entry = caching.IndexDataCacheFile._load_data
    save = caching.IndexDataCacheFile.save

    def load_index(self):
        _stamp_with_sources(self)
        try:
            return load(self)
        except _UNREADABLE:
            if not _caches_an_efgkit_kernel(self):
                raise
            return {}

    def load_data(self, name):
        try:
            return load_entry(self, name)
        except _UNREADABLE as exc:
            if not _caches_an_efgkit_kernel(self):
                raise
            raise OSError(f"unreadable numba cache entry {name}") from exc  # numba's cache miss

    def save_entry(self, key, data):
        if not _caches_an_efgkit_kernel(self):
            return save(self, key, data)
        _stamp_with_sources(self)
        name = self._data_name(int(hashlib.sha256(self._dump(key)).hexdigest()[:12], 16))
        self._save_data(name, data)
        overloads = self._load_index()
        overloads[key] = name
        self._save_index(overloads)

    save_entry.efgkit_tolerant = True
    caching.IndexDataCacheFile._load_index = load_index
    caching.IndexDataCacheFile._load_data = load_data
    caching.IndexDataCacheFile.save = save_entry
