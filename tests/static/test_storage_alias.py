"""Two attributes over one memory: a tensor and its ``.numpy()`` view, or a numpy array and its
``torch.from_numpy`` tensor.

vLLM's v1 input batch keeps each host array twice, ``self.num_computed_tokens_cpu_tensor =
torch.zeros(...)`` and ``self.num_computed_tokens_cpu = self.num_computed_tokens_cpu_tensor.numpy()``,
writes through the array and slices the tensor.  Both names are one buffer: a reset or a write
through one is seen through the other.  Written from scratch; expected findings from reading
each variant: the real rows written and the padding rows reset through either name leave none;
without the reset, one PAD001 ``seq_lens``; an attribute also rebound outside the constructor
(``self.seq_lens_np = np.zeros(...)`` in a method) is not taken as the same memory, so a reset
through it does not cover the tensor.
"""

from __future__ import annotations

import pytest


from .project_files import check_text

RUNNER = '''\
import numpy as np
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n: int) -> None:
        {ALLOC}

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens_np[:num_reqs] = so.seq_lens
        {RESET}
        return CommonAttentionMetadata(seq_lens={VIEW}, num_reqs=num_reqs_padded)
{EXTRA}'''
TENSOR_FIRST = "self.seq_lens = torch.zeros(n, dtype=torch.int32)\n        self.seq_lens_np = self.seq_lens.numpy()"
ARRAY_FIRST = "self.seq_lens_np = np.zeros(n, dtype=np.int32)\n        self.seq_lens = torch.from_numpy(self.seq_lens_np)"


def _check(tmp_path, alloc, reset, view="self.seq_lens[:num_reqs_padded]", extra=""):
    text = (RUNNER.replace("{ALLOC}", alloc).replace("{RESET}", reset).replace("{VIEW}", view)
            .replace("{EXTRA}", extra))
    out = check_text(tmp_path, text, "runner.py", "vllm")
    return [(f.code, f.field) for f in out]


STALE = [("PAD001", "seq_lens")]


@pytest.mark.parametrize("alloc", [TENSOR_FIRST, ARRAY_FIRST])
@pytest.mark.parametrize("reset", ["self.seq_lens_np[num_reqs:num_reqs_padded] = 0",
                                   "self.seq_lens[num_reqs:num_reqs_padded] = 0"])
def test_a_reset_through_either_name_covers_the_other(tmp_path, alloc, reset):
    assert _check(tmp_path, alloc, "pass") == STALE
    assert _check(tmp_path, alloc, reset) == []


def test_a_slice_of_the_array_wrapped_by_from_numpy_is_a_view(tmp_path):
    view = "torch.from_numpy(self.seq_lens_np[:num_reqs_padded])"
    assert _check(tmp_path, TENSOR_FIRST, "pass", view) == STALE
    assert _check(tmp_path, TENSOR_FIRST, "self.seq_lens[num_reqs:num_reqs_padded] = 0", view) == []


def test_an_attribute_rebound_outside_the_constructor_is_its_own_buffer(tmp_path):
    extra = "\n    def resize(self, n):\n        self.seq_lens_np = np.zeros(n, dtype=np.int32)\n"
    assert _check(tmp_path, TENSOR_FIRST, "self.seq_lens_np[num_reqs:num_reqs_padded] = 0",
                  extra=extra) == STALE


def test_a_memory_owner_rebound_outside_the_constructor_is_not_shared(tmp_path):
    # `resize` rebinds `seq_lens` to new memory: the array view made in the constructor no
    # longer shares it, so a reset through the array does not cover the tensor
    extra = "\n    def resize(self, n):\n        self.seq_lens = torch.zeros(n, dtype=torch.int32)\n"
    assert _check(tmp_path, TENSOR_FIRST, "self.seq_lens_np[num_reqs:num_reqs_padded] = 0",
                  extra=extra) == STALE


def test_a_view_stored_in_a_tuple_assignment_is_not_taken(tmp_path):
    alloc = ("self.seq_lens = torch.zeros(n, dtype=torch.int32)\n"
             "        self.seq_lens_np, self.other = self.seq_lens.numpy(), 0")
    assert _check(tmp_path, alloc, "self.seq_lens_np[num_reqs:num_reqs_padded] = 0") == STALE
