"""A dispatch on a path through code of one device goes to that device's implementations.

SGLang's Ascend NPU graph runner (``sglang/srt/hardware_backend/npu/...``) hands its replay view
to its attention backend (``self.attn_backend.<method>(view)``); the attention backend is
declared by its base class, whose implementations include the CUDA and ROCm DeepSeek-V4
backends.  Joining every implementation sent the NPU runner's stale rows into CUDA code that
never runs on an NPU (triage of SGLang 0.5.23, C1-C4).  The profile's ``[devices.npu] modules``
names the NPU code; on a path through it, a dispatch with NPU implementations goes to those.

Written from scratch.  ``Runner.execute`` writes ``positions[:raw_bs]`` and builds the view of
``positions[:bs]`` (stale rows ``[raw_bs:bs]``: one PAD001 at the view, in the runner's module),
then dispatches; ``CudaBackend`` re-wraps the view's positions in a ``SimpleNamespace`` (a sink:
one PAD001 in ``layers/cuda_backend.py`` when the path can reach it), ``NpuBackend`` (under
``hardware_backend/npu``) only reads the batch size.  Expected: with the runner under
``sglang/srt/`` both backends are possible, two findings; with the same runner under
``sglang/srt/hardware_backend/npu/``, the dispatch goes to ``NpuBackend`` only: the runner's
finding alone.
"""

from __future__ import annotations

import pytest

from .project_files import check_files

BASE = '''\
class AttentionBackend:
    def prepare_replay(self, fb, bs: int):
        raise NotImplementedError
'''
CUDA = '''\
from types import SimpleNamespace

from sglang.srt.layers.backend import AttentionBackend


class CudaBackend(AttentionBackend):
    def prepare_replay(self, fb, bs: int):
        self.inner = SimpleNamespace(positions=fb.positions, batch_size=bs)
'''
NPU = '''\
from sglang.srt.layers.backend import AttentionBackend


class NpuBackend(AttentionBackend):
    def prepare_replay(self, fb, bs: int):
        self.bs = bs
'''
RUNNER = '''\
import bisect
from types import SimpleNamespace

import torch

from sglang.srt.layers.backend import AttentionBackend


class Runner:
    def __init__(self, max_bs, attn_backend: AttentionBackend):
        self.positions = torch.zeros((max_bs,), dtype=torch.int64)
        self.capture_bs = [1, 2, 4, 8]
        self.attn_backend = attn_backend

    def execute(self, forward_batch):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        self.positions[:raw_bs].copy_(forward_batch.positions)
        view = SimpleNamespace(positions=self.positions[:bs], batch_size=bs)
        self.attn_backend.prepare_replay(view, bs)
'''


@pytest.mark.parametrize("runner_at, in_cuda", [
    ("sglang/srt/runner.py", True),
    ("sglang/srt/hardware_backend/npu/runner.py", False),
])
def test_an_npu_path_does_not_dispatch_to_cuda_backends(tmp_path, runner_at, in_cuda):
    files = {
        "sglang/__init__.py": "", "sglang/srt/__init__.py": "", "sglang/srt/layers/__init__.py": "",
        "sglang/srt/hardware_backend/__init__.py": "", "sglang/srt/hardware_backend/npu/__init__.py": "",
        "sglang/srt/layers/backend.py": BASE, "sglang/srt/layers/cuda_backend.py": CUDA,
        "sglang/srt/hardware_backend/npu/npu_backend.py": NPU, runner_at: RUNNER,
    }
    got = check_files(tmp_path, files, [runner_at, "sglang/srt/layers/cuda_backend.py"], profile="sglang")
    where = sorted((f.path.split("sglang/srt/", 1)[1], f.field) for f in got if f.code == "PAD001")
    expected = [(runner_at.split("sglang/srt/", 1)[1], "positions")]
    if in_cuda:
        expected.append(("layers/cuda_backend.py", "positions"))
    assert where == sorted(expected)


def test_the_devices_table_is_validated():
    from padlint.profile import ProfileError, profile_from_dict

    base = {"name": "t", "sinks": {"constructors": ["Meta"]}}
    p = profile_from_dict({**base, "devices": {"npu": {"modules": ["pkg.npu.*"], "why": "Ascend"}}}, "t.toml")
    assert p.device_of("pkg.npu.runner") == "npu" and p.device_of("pkg.cuda.runner") == ""
    with pytest.raises(ProfileError, match=r"t\.toml: devices\.npu: name the modules"):
        profile_from_dict({**base, "devices": {"npu": {"why": "x"}}}, "t.toml")
    with pytest.raises(ProfileError, match=r"devices\.npu\.module"):
        profile_from_dict({**base, "devices": {"npu": {"module": ["pkg.npu.*"]}}}, "t.toml")
    with pytest.raises(ProfileError, match=r"devices\.npu\.modules: expected a list"):
        profile_from_dict({**base, "devices": {"npu": {"modules": "pkg.npu.*"}}}, "t.toml")
