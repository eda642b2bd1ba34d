"""Contiguous HDF5 datasets opened as memory-mapped numpy arrays, so kernels work on them in place.

h5py does not memory-map (h5py/h5py#1607 is open). The recipe (see
../shared/research/anchors_abstraction.md §6): a contiguous, uncompressed dataset whose
space is allocated when it is created has a fixed byte offset in the file
(``dataset.id.get_offset()``), and mapping those bytes gives the dataset itself.
efgkit creates such files with every dataset of a page or more aligned to a page
boundary. A writable map first reserves its bytes on disk (``posix_fallocate``): HDF5
allocates a dataset's space by extending the file, which leaves a hole, and a store into
a hole on a full disk is a SIGBUS; reserved, a full disk is a DiskSpaceError before the
run. ``MappedFile`` maps them as ``numpy.memmap`` does (an ndarray over an
``mmap``) but keeps the ``mmap`` objects, so their resident pages can be dropped
(``MappedFile.release``) — how a solve keeps its resident set under a memory limit while
its arrays are larger than it.
"""

from __future__ import annotations

import errno
import mmap
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import h5py
import numpy as np

from efgkit.errors import DiskSpaceError, FileFormatError

ALIGNMENT = max(mmap.PAGESIZE, mmap.ALLOCATIONGRANULARITY)
COPY_BYTES = 1 << 22
"""Arrays are copied and hashed in slices of this many bytes, so copying never needs more."""


def create_file(path: str | os.PathLike) -> h5py.File:
    """A new HDF5 file (fails if ``path`` exists) whose large datasets start on a page.

    HDF5 1.8 object headers (``libver="v108"``) carry checksums of the file's metadata.
    """
    return h5py.File(path, "w-", libver=("v108", "v108"), alignment_threshold=ALIGNMENT,
                     alignment_interval=ALIGNMENT)


def create_contiguous(group: h5py.Group, name: str, shape: tuple[int, ...],
                      dtype: np.dtype | str) -> h5py.Dataset:
    """A contiguous dataset whose space is allocated now (never filled), so it can be mapped."""
    plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    plist.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    plist.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    return group.create_dataset(name, shape=shape, dtype=np.dtype(dtype), dcpl=plist)


def write_contiguous(group: h5py.Group, name: str, array: np.ndarray, dtype: np.dtype | str,
                     after_slice: Callable[[np.ndarray], None] | None = None) -> h5py.Dataset:
    """A contiguous dataset holding ``array`` (one-dimensional, possibly a memory map).

    The data is copied in slices of at most COPY_BYTES; ``after_slice`` sees each slice as
    written (to hash it, or to drop the pages of a mapped source).
    """
    dtype = np.dtype(dtype)
    dataset = create_contiguous(group, name, array.shape, dtype)
    for part in slices(array.shape[0], dtype.itemsize):
        block = np.ascontiguousarray(array[part], dtype=dtype)
        dataset[part] = block
        if after_slice is not None:
            after_slice(block)
    return dataset


def slices(length: int, itemsize: int) -> Iterator[slice]:
    """Consecutive slices of ``length`` items, each at most COPY_BYTES long."""
    step = max(1, COPY_BYTES // max(itemsize, 1))
    for start in range(0, length, step):
        yield slice(start, min(start + step, length))


def dataset_offset(dataset: h5py.Dataset) -> int:
    """Byte offset of a contiguous dataset's data in its file; FileFormatError otherwise."""
    offset = dataset.id.get_offset() if dataset.size else None
    if dataset.size and (offset is None or dataset.chunks is not None or dataset.compression):
        raise FileFormatError(
            f"{dataset.file.filename}: dataset {dataset.name} is not contiguous and uncompressed, "
            f"so it cannot be memory-mapped"
        )
    if dataset.dtype.byteorder == ">":
        raise FileFormatError(f"{dataset.file.filename}: dataset {dataset.name} is big-endian")
    return int(offset or 0)


class Closing:
    """A resource a ``with`` block closes: ``__enter__`` gives it, ``__exit__`` calls ``close()``."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class MappedFile(Closing):
    """Memory maps of datasets of one file; the arrays stay valid until ``close``.

    Open the file with h5py to find the datasets, then ``map`` each one. Writable maps are
    shared: writes go to the file (``flush`` forces them out). ``release`` drops every
    mapped page from the process's resident set; the data stays in the page cache and
    the file, and the next access faults it back in.
    """

    def __init__(self, path: str | os.PathLike, writable: bool) -> None:
        self.path = Path(path)
        self.writable = writable
        self._handle = open(self.path, "r+b" if writable else "rb")  # noqa: SIM115 - closed in close()
        self._maps: list[tuple[mmap.mmap, int]] = []

    def map(self, dataset: h5py.Dataset) -> np.ndarray:
        """The dataset's data as a numpy array backed by the file (no copy)."""
        offset = dataset_offset(dataset)
        dtype = dataset.dtype
        nbytes = int(dataset.size) * dtype.itemsize
        if nbytes == 0:
            return np.zeros(dataset.shape, dtype)
        start = offset - offset % mmap.ALLOCATIONGRANULARITY
        access = mmap.ACCESS_WRITE if self.writable else mmap.ACCESS_READ
        if offset + nbytes > os.fstat(self._handle.fileno()).st_size:
            raise FileFormatError(f"{self.path}: file is truncated (dataset {dataset.name})")
        if self.writable:
            self._reserve(offset, nbytes)
        mapping = mmap.mmap(self._handle.fileno(), offset - start + nbytes, access=access,
                            offset=start)
        self._maps.append((mapping, offset - start + nbytes))
        array = np.frombuffer(mapping, dtype=dtype, count=int(dataset.size), offset=offset - start)
        return array.reshape(dataset.shape)

    def _reserve(self, offset: int, nbytes: int) -> None:
        """Allocate the file's blocks of ``nbytes`` at ``offset`` (data already there is kept)."""
        try:
            os.posix_fallocate(self._handle.fileno(), offset, nbytes)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                raise DiskSpaceError(f"{self.path}: no room on disk for {nbytes:,} bytes of mapped "
                                     f"arrays ({exc.strerror}); free space or choose another folder") from exc
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                raise

    def release(self) -> None:
        """Drop the resident pages of every mapping (dirty pages are kept by the page cache)."""
        for mapping, length in self._maps:
            mapping.madvise(mmap.MADV_DONTNEED, 0, length)

    def flush(self) -> None:
        """Write dirty pages of writable maps to the file (msync)."""
        if self.writable:
            for mapping, _ in self._maps:
                mapping.flush()

    def close(self) -> None:
        """Unmap and close; arrays from ``map`` must no longer be referenced."""
        self.flush()
        for mapping, _ in self._maps:
            try:
                mapping.close()
            except BufferError:
                pass  # an array still uses it; the map goes when the array does
        self._maps.clear()
        self._handle.close()
