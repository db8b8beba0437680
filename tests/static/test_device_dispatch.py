"""A dispatch on a path through code of one device goes to that device's implementations.

SGLang's Ascend NPU graph runner (``sglang/srt/hardware_backend/npu/...``) hands its replay view
to its attention backend (``self.attn_backend.<method>(view)``); the attention backend is
declared by its base class, whose implementations include the CUDA and ROCm DeepSeek-V4
backends.  Joining every implementation sent the NPU runner's stale rows into CUDA code that
never runs on an NPU (triage of SGLang 0.5.23, C1-C4).  The profile's ``[devices.npu] modules``
names the NPU code (and code of other devices); on a path through it, a dispatch does not go to
implementations declared for another device.

Written from scratch.  ``Runner.execute`` writes ``positions[:raw_bs]`` and builds the view of
``positions[:bs]`` (stale rows ``[raw_bs:bs]``: one PAD001 at the view, in the runner's module),
then dispatches; ``CudaBackend`` re-wraps the view's positions in a ``SimpleNamespace`` (a sink:
one PAD001 in ``layers/cuda_backend.py`` when the path can reach it), ``NpuBackend`` (under
``hardware_backend/npu``) only reads the batch size, ``NativeBackend`` (no declared device)
re-wraps like the CUDA one.  The test's profile declares ``layers/cuda_backend.py`` CUDA-only.
Expected: with the runner under ``sglang/srt/`` every backend is possible, three findings; with
the same runner under ``sglang/srt/hardware_backend/npu/``, the dispatch does not go to the
CUDA-only backend: the runner's and the native backend's findings.
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


NATIVE = CUDA.replace("CudaBackend", "NativeBackend")


def _profile(tmp_path) -> str:
    """The shipped SGLang profile with the fixture's CUDA-only backend declared so."""
    from padlint.profile import rules_dir

    text = (rules_dir() / "sglang.toml").read_text(encoding="utf-8")
    text += '\n[devices.fixture_cuda]\nmodules = ["sglang.srt.layers.cuda_backend"]\n'
    path = tmp_path / "sglang-fixture.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("runner_at, in_cuda", [
    ("sglang/srt/runner.py", True),
    ("sglang/srt/hardware_backend/npu/runner.py", False),
])
def test_an_npu_path_does_not_dispatch_to_cuda_backends(tmp_path, runner_at, in_cuda):
    files = {
        "sglang/__init__.py": "", "sglang/srt/__init__.py": "", "sglang/srt/layers/__init__.py": "",
        "sglang/srt/hardware_backend/__init__.py": "", "sglang/srt/hardware_backend/npu/__init__.py": "",
        "sglang/srt/layers/backend.py": BASE, "sglang/srt/layers/cuda_backend.py": CUDA,
        "sglang/srt/layers/native_backend.py": NATIVE,
        "sglang/srt/hardware_backend/npu/npu_backend.py": NPU, runner_at: RUNNER,
    }
    got = check_files(tmp_path / "src", files, [runner_at, "sglang/srt/layers/cuda_backend.py",
                                                "sglang/srt/layers/native_backend.py"],
                      profile=_profile(tmp_path))
    where = sorted((f.path.split("sglang/srt/", 1)[1], f.field) for f in got if f.code == "PAD001")
    # the runner's own view, and the backend of no declared device on every path
    expected = [(runner_at.split("sglang/srt/", 1)[1], "positions"), ("layers/native_backend.py", "positions")]
    if in_cuda:  # the CUDA-only backend only where the path is not an NPU runner's
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


MODEL_RUNNER = '''\
from sglang.srt.layers.backend import AttentionBackend


class ModelRunner:
    def __init__(self, attn_backend: AttentionBackend):
        self.attn_backend = attn_backend

    def prep(self, view, bs: int):
        self.attn_backend.prepare_replay(view, bs)
'''
SHARED = '''\
import bisect
from types import SimpleNamespace

import torch

from sglang.srt.model_runner import ModelRunner


class Runner:
    def __init__(self, max_bs, model_runner: ModelRunner):
        self.positions = torch.zeros((max_bs,), dtype=torch.int64)
        self.capture_bs = [1, 2, 4, 8]
        self.model_runner = model_runner

    def _common(self, forward_batch):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        self.positions[:raw_bs].copy_(forward_batch.positions)
        view = SimpleNamespace(positions=self.positions[:bs], batch_size=bs)
        self.model_runner.prep(view, bs)


class CudaRunner(Runner):
    def execute(self, forward_batch):
        self._common(forward_batch)
'''
NPU_RUNNER = '''\
from sglang.srt.runner import Runner


class NpuRunner(Runner):
    def execute(self, forward_batch):
        self._common(forward_batch)
'''


def test_a_callee_judged_on_an_npu_path_is_judged_again_on_a_cuda_path(tmp_path):
    # `ModelRunner.prep` is called with the same arguments from the NPU runner's path (where its
    # dispatch skips the CUDA-only backend) and from the CUDA runner's: the effect computed on one
    # path is not reused on the other, so the CUDA path still reaches the CUDA backend's sink
    files = {
        "sglang/__init__.py": "", "sglang/srt/__init__.py": "", "sglang/srt/layers/__init__.py": "",
        "sglang/srt/hardware_backend/__init__.py": "", "sglang/srt/hardware_backend/npu/__init__.py": "",
        "sglang/srt/layers/backend.py": BASE, "sglang/srt/layers/cuda_backend.py": CUDA,
        "sglang/srt/hardware_backend/npu/npu_backend.py": NPU, "sglang/srt/runner.py": SHARED,
        "sglang/srt/model_runner.py": MODEL_RUNNER, "sglang/srt/hardware_backend/npu/npu_runner.py": NPU_RUNNER,
    }
    got = check_files(tmp_path / "src", files, ["sglang/srt/runner.py", "sglang/srt/layers/cuda_backend.py",
                                                "sglang/srt/hardware_backend/npu/npu_runner.py"],
                      profile=_profile(tmp_path))
    where = sorted((f.path.split("sglang/srt/", 1)[1], f.field) for f in got if f.code == "PAD001")
    assert ("layers/cuda_backend.py", "positions") in where
