"""Inputs that used to escape as undocumented exceptions (issue 11, runtime checker).

Each case names the exception it used to raise.  Expected results follow from the
values: rows [2:4) are the padding rows; a neutral value the dtype cannot hold
exactly means every padding entry differs from it.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
import torch

import padlint.runtime as pr
from padlint.runtime.checker import Checker
from padlint.runtime.context import StepCounts

sys.path.insert(0, str(__import__("conftest").TOY_DIR))
from toy_common import CommonAttentionMetadata

pytestmark = pytest.mark.padlint_off  # explicit checks with mode= provoke violations on purpose


def rows(found):
    return [(v.rows, v.values) for v in found]


def check(t, neutral, real=2):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # `-W error`: no RuntimeWarning/ComplexWarning may escape
        return rows(pr.check_padding(t, real, neutral, name="x", mode="record"))


@pytest.mark.parametrize("t, neutral, expected", [
    # RuntimeWarning "invalid value encountered in cast" under -W error: NaN/inf in an integer dtype
    (np.array([1, 2, 3, 4], dtype=np.int32), float("nan"), [((2, 3), (3, 4))]),
    (torch.tensor([1, 2, 0, 0], dtype=torch.int32), float("inf"), [((2, 3), (0, 0))]),
    # RuntimeWarning "overflow encountered in cast": 1e6 is no float16 value (it would round to inf)
    (np.array([1, 2, np.inf, 4], dtype=np.float16), 1e6, [((2, 3), (np.inf, 4.0))]),
    (torch.tensor([1, 2, 3, 4], dtype=torch.float16), 1e6, [((2, 3), (3.0, 4.0))]),
    # OverflowError "int too big to convert": 2**70 is a float32/float64 value (a power of two)
    (torch.tensor([1.0, 2.0, 2.0**70, 2.0**70]), 2**70, []),
    (np.ones(5000, dtype=np.float32) * np.float32(2.0**70), 2**70, []),
    (torch.tensor([1.0, 2.0, 2.0**70, 3.0]), 2**70, [((3,), (3.0,))]),
    # ComplexWarning: 0j is the real number 0
    (np.array([1, 2, 0, 5], dtype=np.int32), 0j, [((3,), (5,))]),
    (torch.tensor([1, 2, 1, 1]), 1 + 0j, []),
    # a complex neutral value with an imaginary part: only a complex tensor can hold it
    (torch.tensor([1 + 0j, 2, 1j, 1j]), 1j, []),
    (torch.tensor([1.0, 2.0, 0.0, 0.0]), 1j, [((2, 3), (0.0, 0.0))]),
    # torch ValueError for a negative-stride numpy view
    (np.arange(6)[::-1], 0, [((2, 3, 4), (3, 2, 1))]),
])
def test_values_and_dtypes(t, neutral, expected):
    assert check(t, neutral) == expected


def test_quantized_tensors_are_compared_by_value():
    # RuntimeError "load_scalar: invalid type"
    q = torch.quantize_per_tensor(torch.tensor([1.0, 2.0, 0.0, 3.0]), 0.1, 0, torch.quint8)
    assert check(q, 0) == [((3,), (3.0,))]


def meta(**kw):
    d = {"query_start_loc": torch.tensor([0, 1, 2, 2, 2], dtype=torch.int32),
         "query_start_loc_cpu": torch.tensor([0, 1, 2, 2, 2], dtype=torch.int32),
         "seq_lens": torch.tensor([3, 4, 0, 0], dtype=torch.int32), "num_reqs": 4, "num_actual_tokens": 4,
         "max_query_len": 1, "max_seq_len": 4, "block_table_tensor": torch.zeros(4, 2, dtype=torch.int32),
         "slot_mapping": torch.tensor([5, 6, -1, -1])}
    d.update(kw)
    return CommonAttentionMetadata(**d)


def _quantized(values, scale):
    """A quantized tensor (torch 2.13 warns that quantized tensors are deprecated: the warning is
    about torch, not about what this test checks, and would otherwise print on every run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.quantize_per_tensor(torch.tensor(values), scale, 0, torch.quint8)


@pytest.mark.parametrize("device_path", [False, True])
@pytest.mark.parametrize("field, value, expected", [
    # IndexError "argmax(): Expected reduction dim 1 to have non-zero size" (device path)
    ("block_table_tensor", torch.ones(4, 0, dtype=torch.int32), []),
    # RuntimeError "Can't call numpy() on Tensor that requires grad" (device path)
    ("seq_lens", torch.tensor([3.0, 4.0, 5.0, 0.0], requires_grad=True), [((2,), (5.0,))]),
    # RuntimeError for quantized tensors
    ("seq_lens", _quantized([3.0, 4.0, 0.0, 0.2], 0.1),
     [((3,), (pytest.approx(0.2),))]),
])
def test_metadata_fields(device_path, field, value, expected):
    chk = Checker(pr.runtime_spec("vllm", provider=None, classes=[], step=None), mode="record", cuda_policy="sync")
    chk.force_device_path = device_path
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = chk.check_object(meta(**{field: value}), StepCounts(2, 4, 2, 4, provider="p"))
    assert rows(found) == expected


# -- CUDA-graph capture and replay, through the device code path on CPU tensors ------------
def graph_checker():
    chk = Checker(pr.runtime_spec("vllm", provider=None, classes=[], step=None), mode="record", cuda_policy="sync")
    chk.force_device_path = True
    return chk


STATIC = meta().__dict__  # the other fields' static buffers: the same storage at capture and every replay


def graph_meta(**kw):
    return meta(**{**{k: v for k, v in STATIC.items() if isinstance(v, torch.Tensor)}, **kw})


def test_storage_changed_between_capture_and_replay_is_a_violation():
    chk = graph_checker()
    static = torch.zeros(4, dtype=torch.int32)
    chk.capturing = lambda: True
    # capture (a dummy run: every row real) binds seq_lens to `static`
    assert chk.check_object(graph_meta(seq_lens=static[:4]), StepCounts(4, 4, 4, 4, provider="capture")) == []
    chk.capturing = lambda: False
    # a replayed step that reuses the captured storage: checked as usual
    static[:2] = torch.tensor([3, 4])
    assert chk.check_object(graph_meta(seq_lens=static[:4]), StepCounts(2, 4, 2, 4, provider="replay")) == []
    # a replayed step that passes a new tensor: the graph still reads `static`
    fresh = torch.tensor([3, 4, 0, 0], dtype=torch.int32)
    [v] = chk.check_object(graph_meta(seq_lens=fresh), StepCounts(2, 4, 2, 4, provider="replay"))
    assert v.field == "seq_lens" and v.rows == () and v.num_bad == 0
    assert v.detail.startswith(f"storage changed since CUDA-graph capture: the graph captured for 4 rows reads the "
                               f"tensor at 0x{static.data_ptr():x} (4 rows)")
    assert "seq_lens_static[:n].copy_(new)" in v.format()


def test_a_slice_shorter_than_the_captured_extent_is_checked_up_to_that_extent():
    chk = graph_checker()
    static = torch.zeros(4, dtype=torch.int32)
    chk.capturing = lambda: True
    chk.check_object(graph_meta(seq_lens=static[:4]), StepCounts(4, 4, 4, 4, provider="capture"))
    chk.capturing = lambda: False
    # a step copies 2 real rows into the static buffer and hands on only those 2 rows; rows 2, 3
    # keep an earlier step's lengths, and the replay reads all 4
    static[:] = torch.tensor([7, 8, 9, 6])
    static[:2] = torch.tensor([3, 4])
    [v] = chk.check_object(graph_meta(seq_lens=static[:2]), StepCounts(2, 4, 2, 4, provider="replay"))
    assert (v.field, v.rows, v.values, v.padded) == ("seq_lens", (2, 3), (9, 6), 4)
    static[2:] = 0  # reset: clean
    assert chk.check_object(graph_meta(seq_lens=static[:2]), StepCounts(2, 4, 2, 4, provider="replay")) == []
