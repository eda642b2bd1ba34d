"""Arrays whose first element starts a cache line, for the vector loops of the numba kernels.

NumPy aligns its buffers to 16 bytes, and a large one comes from ``mmap`` through malloc, 16
bytes past a page boundary. A kernel's vector loop over such a row then splits every 32- or
64-byte load and store across two cache lines, and the stores of a running sum (a
showdown's card sums) no longer forward to the loads after them. Allocating with the first
element on a 64-byte boundary keeps every row whose length is a multiple of 8 float64 aligned.
"""

from __future__ import annotations

import numpy as np

CACHE_LINE = 64
"""Bytes of a cache line (x86-64, ARMv8)."""


def aligned_zeros(shape: int | tuple[int, ...], dtype=np.float64) -> np.ndarray:
    """Zeros of ``shape`` and ``dtype``, the first element on a ``CACHE_LINE`` boundary."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    raw = np.zeros(count * dtype.itemsize + CACHE_LINE, np.uint8)
    start = -raw.ctypes.data % CACHE_LINE
    return raw[start:start + count * dtype.itemsize].view(dtype).reshape(shape)
