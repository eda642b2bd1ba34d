"""``aligned_zeros`` gives zeroed arrays of the asked shape and type starting on a cache line."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from efgkit.io.aligned_arrays import CACHE_LINE, aligned_zeros


@given(st.lists(st.integers(0, 40), min_size=1, max_size=3), st.sampled_from([np.float64, np.int64, np.int32,
                                                                              np.bool_]))
def test_aligned_zeros_start_on_a_cache_line(shape, dtype):
    array = aligned_zeros(tuple(shape), dtype)
    assert array.shape == tuple(shape) and array.dtype == dtype
    assert array.ctypes.data % CACHE_LINE == 0 or array.size == 0
    assert not array.any() and array.flags.c_contiguous and array.flags.writeable
    array[...] = 1  # its own memory: writing it is safe
    assert array.all()
