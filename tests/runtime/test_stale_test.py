"""checks.stale_test, the CPU padding-slice test: its fast byte comparison (small integer
and bool slices) and its numpy path must give the same answer as a plain-Python reading of
"some padding entry differs from the neutral value", for every dtype, neutral value and
size, on both sides of checks.BYTES_COMPARE_MAX; and so must the torch paths (the error
details, checks.find_stale_rows, and the fused device reduction)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from padlint.runtime import checks
from padlint.runtime.spec import FLAT

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64]
# 0 and False (NULL_BLOCK_ID, masks), -1 (PAD_SLOT_ID), 1 (num_accepted_tokens), flat
# (cumulative offsets), and values some dtypes cannot hold exactly (-1 in bool/uint8,
# 300 in int8/uint8, 0.5 in the integer dtypes): there every entry differs from them.
NEUTRALS = [0, False, -1, 1, True, FLAT, 300, 0.5]


def _expected(x: np.ndarray, start: int, stop: int, neutral) -> bool:
    """Python semantics, element by element (NaN differs from everything, -0.0 == 0)."""
    rows = x.tolist()
    ref = rows[start - 1] if neutral is FLAT else None
    for row in rows[start:stop]:
        entries = row if isinstance(row, list) else [row]
        want = (ref if isinstance(ref, list) else [ref] * len(entries)) if neutral is FLAT \
            else [neutral] * len(entries)
        if any(e != w for e, w in zip(entries, want)):
            return True
    return False


def _values(dtype) -> st.SearchStrategy:
    if np.dtype(dtype).kind == "b":
        return st.booleans()
    if np.dtype(dtype).kind == "f":
        return st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, float("nan")])
    info = np.iinfo(dtype)
    return st.sampled_from(sorted({v for v in (0, 1, -1, 2, 127, info.min, info.max) if info.min <= v <= info.max}))


@st.composite
def _case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    itemsize = np.dtype(dtype).itemsize
    cols = draw(st.sampled_from([1, 1, 16]))  # 1-D fields, or a block table with 16 columns
    # row counts around the byte limit, so both the byte path and the numpy path run
    limit_rows = checks.BYTES_COMPARE_MAX // (itemsize * cols)
    rows = draw(st.one_of(st.integers(2, 40), st.integers(max(2, limit_rows - 3), limit_rows + 4)))
    shape = (rows,) if cols == 1 else (rows, cols)
    neutral = draw(st.sampled_from(NEUTRALS))
    # most entries are the fill value (the neutral value where the dtype holds it), a few differ
    fill = draw(_values(dtype))
    if neutral is not FLAT:
        try:
            one = np.full(1, neutral, dtype=dtype)
            if one[0] == neutral:
                fill = one[0].item()
        except (OverflowError, ValueError, TypeError):
            pass
    a = draw(hnp.arrays(dtype, shape, elements=_values(dtype), fill=st.just(fill)))
    start = draw(st.integers(1, rows))
    return a, start, rows, neutral


@settings(max_examples=400, deadline=None)
@given(_case())
def test_stale_test_agrees_with_python_reference(case):
    a, start, stop, neutral = case
    expected = _expected(a, start, stop, neutral)
    assert checks.stale_test(neutral)(a, start, stop) is expected
    assert checks.cpu_has_stale(a, start, stop, neutral) is expected
    # the torch paths (error details, and the fused device reduction run on CPU tensors) agree:
    # a neutral value the dtype cannot hold is never wrapped (torch compares uint8 with -1 as 255)
    t = torch.from_numpy(a)
    assert bool(checks.find_stale_rows(t, start, stop, neutral)[2]) is expected
    if start < stop:
        items = [(t, start, stop, neutral)]
        ((_, _, num_bad),) = checks.unpack_device_checks(checks.pack_device_checks(items), items)
        assert bool(num_bad) is expected


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_])
def test_byte_path_and_numpy_path_both_catch_one_stale_entry(dtype):
    """The last padding entry alone is stale, once in a slice under the byte limit and
    once over it: both paths must see it (and see nothing once it is reset)."""
    itemsize = np.dtype(dtype).itemsize
    for rows in (8, checks.BYTES_COMPARE_MAX // itemsize + 8):
        a = np.zeros(rows, dtype=dtype)
        a[-1] = 1
        assert checks.stale_test(0)(a, 4, rows) is True
        a[-1] = 0
        assert checks.stale_test(0)(a, 4, rows) is False


def test_value_patterns_are_per_dtype():
    """One bound test sees int32 then int64 fields (the pattern bytes differ per dtype)."""
    test = checks.stale_test(-1)
    a32 = np.full(6, -1, dtype=np.int32)
    a64 = np.full(6, -1, dtype=np.int64)
    assert test(a32, 2, 6) is False and test(a64, 2, 6) is False
    a64[5] = 0xFFFFFFFF  # the bytes of an int32 -1, but not -1 as an int64
    assert test(a64, 2, 6) is True
    assert test(a32, 2, 6) is False


def test_flat_compares_with_last_real_offset():
    # query_start_loc of 3 real requests padded to 5: [0, 2, 5, 6 | 6, 6]
    qsl = np.array([0, 2, 5, 6, 6, 6], dtype=np.int32)
    assert checks.stale_test(FLAT)(qsl, 4, 6) is False
    qsl[5] = 9  # a stale offset left from an earlier, larger batch
    assert checks.stale_test(FLAT)(qsl, 4, 6) is True
