"""Issue 10: the device checks of one metadata object in at most 5 kernel launches.

Counted on CPU through the same code path (``Checker.force_device_path``): every ATen
operation the checker dispatches while checking one object of 7 device fields.  Views
(slice, view, detach, ...) launch no kernel; everything else would be one launch on CUDA.
On a GPU, tests/runtime/test_cuda.py counts real launches with the profiler.
"""

from __future__ import annotations

from collections import Counter

import torch
from test_odd_inputs import meta
from torch.utils._python_dispatch import TorchDispatchMode

import padlint.runtime as pr
from padlint.runtime.checker import Checker
from padlint.runtime.context import StepCounts

VIEWS = {"slice", "view", "detach", "alias", "narrow", "reshape", "_reshape_alias", "as_strided", "expand"}


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def test_one_object_dispatches_one_launching_op():
    chk = Checker(pr.runtime_spec("vllm", provider=None, classes=[], step=None), mode="record",
                  cuda_policy="deferred")
    chk.force_device_path = True
    obj = meta(seq_lens=torch.tensor([3, 4, 5, 0], dtype=torch.int32),  # row 2 stale
               positions=torch.tensor([1, 2, 0, 0]), is_prefilling=torch.tensor([False, True, False, False]))
    counter = Count()
    with counter:  # the build-time work (the device's); reading the result later is host work
        found = chk.check_object(obj, StepCounts(2, 4, 2, 4, provider="p"))
    found += chk.flush()
    launching = {op: n for op, n in counter.ops.items() if op not in VIEWS}
    # the byte gather of the 7 device fields' padding rows: one cat (on CUDA plus one copy to the host);
    # comparing them with the neutral values runs on the host copy
    assert launching == {"cat": 1}, counter.ops
    assert [(v.field, v.rows, v.values) for v in found] == [("seq_lens", (2,), (5,))]
