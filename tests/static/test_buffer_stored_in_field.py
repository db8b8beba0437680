"""A persistent buffer stored in a field of ``self`` by a method (not the constructor).

``self.seq_lens_cpu = self.seq_lens_buf`` in a step's ``prepare``: from there on, on that
path, ``self.seq_lens_cpu`` *is* the buffer, with the rows the step wrote and reset.  Before,
the store was dropped and a later read of ``self.seq_lens_cpu`` was a location of its own
that no write had reached: stale padding rows handed out under the other name were not seen,
and a reset made under the buffer's own name did not count for it.

The shape is that of SGLang 0.5.23's multi-layer draft-extend runner (``prepare`` copies
``[:raw_bs]`` into a host buffer, resets the rest under ``if bs != raw_bs``, stores the
buffer in a field, and the replay hands the field whole with ``batch_size=bs``), written from
scratch; checked with the SGLang profile.  ``raw_bs`` is the real request count, ``bs`` the
padded one (the capture size the batch is padded to).
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

_RUNNER = '''\
from types import SimpleNamespace

import torch


class Backend:
    def init_forward_metadata_out_graph(self, view) -> None:
        print(view.seq_lens_cpu[: view.batch_size])


class Runner:
    def __init__(self, max_bs: int) -> None:
        self.capture_bs = [1, 2, 4, 8]
        self.seq_len_fill_value = 1
        self.seq_lens_buf = torch.full((max_bs,), 1, dtype=torch.int64)
        self.backend = Backend()

    def _pad_to_bucket(self, raw_bs: int) -> int:
        return next(b for b in self.capture_bs if b >= raw_bs)

    def prepare(self, forward_batch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self._pad_to_bucket(raw_bs)
        if bs != raw_bs:
            RESET
        self.seq_lens_buf[:raw_bs].copy_(forward_batch.seq_lens_cpu)
        self.seq_lens_cpu = STORED
        self.bs = bs

    def replay(self, bs: int, seq_lens_cpu) -> None:
        view = SimpleNamespace(batch_size=bs, seq_lens_cpu=seq_lens_cpu)
        self.backend.init_forward_metadata_out_graph(view)

    def step(self, forward_batch) -> None:
        self.prepare(forward_batch)
        self.replay(self.bs, HANDED)
'''

#: the reset of the padding rows `[raw_bs:bs]` the buggy variants lack (the whole buffer to the
#: neutral value, then the real rows copied over it)
_RESET = "self.seq_lens_buf.fill_(self.seq_len_fill_value)"


def _findings(tmp_path, reset: str, stored: str = "self.seq_lens_buf", handed: str = "self.seq_lens_cpu"):
    text = _RUNNER.replace("RESET", reset).replace("STORED", stored).replace("HANDED", handed)
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    return [(f.code, f.field, text.splitlines()[f.line - 1].strip()) for f in
            check_source(text, str(p), load_profile("sglang"))]


_SINK = "view = SimpleNamespace(batch_size=bs, seq_lens_cpu=seq_lens_cpu)"


@pytest.mark.parametrize("handed", ["self.seq_lens_cpu", "self.seq_lens_buf"])
def test_padding_rows_of_a_buffer_stored_in_a_field_reach_the_sink(tmp_path, handed):
    # no reset: rows [raw_bs:bs] of the buffer hold an earlier, larger batch's lengths, and the
    # replay hands the whole buffer beside `batch_size=bs`.  Under either name: the field holds
    # the buffer itself (before, only the buffer's own name was reported)
    assert _findings(tmp_path, "pass", handed=handed) == [("PAD001", "seq_lens_cpu", _SINK)]


@pytest.mark.parametrize("handed", ["self.seq_lens_cpu", "self.seq_lens_buf"])
def test_a_reset_under_the_buffers_name_holds_for_the_field(tmp_path, handed):
    assert _findings(tmp_path, _RESET, handed=handed) == []


def test_a_reset_through_the_field_holds_for_the_buffer(tmp_path):
    # the reset written after the store, under the field's name, resets the buffer: the replay
    # that hands the buffer under its own name gets the neutral rows (without that reset it is
    # reported: the first test)
    p = tmp_path / "later.py"
    text = _RUNNER.replace("RESET", "pass").replace("STORED", "self.seq_lens_buf").replace(
        "HANDED", "self.seq_lens_buf").replace(
        "        self.bs = bs\n", "        self.seq_lens_cpu[raw_bs:bs].fill_(self.seq_len_fill_value)\n        self.bs = bs\n")
    p.write_text(text, encoding="utf-8")
    assert check_source(text, str(p), load_profile("sglang")) == []


def test_a_view_stored_in_a_field_keeps_its_padding_rows(tmp_path):
    # `self.seq_lens_cpu = self.seq_lens_buf[:bs]`: the field holds the padded view; handed on
    # by name, its rows [raw_bs:bs] are the same stale rows
    assert _findings(tmp_path, "pass", stored="self.seq_lens_buf[:bs]") == [("PAD001", "seq_lens_cpu", _SINK)]
    assert _findings(tmp_path, _RESET, stored="self.seq_lens_buf[:bs]") == []


def test_a_fresh_tensor_stored_in_a_field_is_no_buffer(tmp_path):
    # `self.seq_lens_cpu = torch.ones(8)`: made this step with the neutral value in every row:
    # nothing stale to hand out, reset or not (as before)
    assert _findings(tmp_path, "pass", stored="torch.ones(8, dtype=torch.int64)") == []


# ------------------------------------------- a runner a set-up method stores in a worker's field

_WORKER = '''

class Worker:
    def __init__(self) -> None:
        self.runner = None

    def SETUP(self) -> None:
        self.runner = Runner(8)

    def forward(self, forward_batch) -> None:
        self.runner.prepare(forward_batch)
        self.runner.replay(self.runner.bs, self.runner.seq_lens_cpu)
'''


def _worker_findings(tmp_path, reset: str, setup: str):
    # the worker's `forward` is the entry point: the runner is reached through the worker's field
    text = (_RUNNER.replace("RESET", reset).replace("STORED", "self.seq_lens_buf").replace("HANDED", "self.seq_lens_cpu")
            + _WORKER.replace("SETUP", setup))
    p = tmp_path / "worker.py"
    p.write_text(text, encoding="utf-8")
    return [(f.code, f.field, text.splitlines()[f.line - 1].strip(), f.message) for f in
            check_source(text, str(p), load_profile("sglang"))]


def test_a_runner_a_setup_method_stores_holds_persistent_buffers(tmp_path):
    # `_capture_cuda_graphs` is one of the SGLang profile's `[setup] functions`: the runner it
    # stores lives across steps, so the whole buffer its `replay` hands out beside
    # `batch_size=bs` has stale rows [raw_bs:bs] when `prepare` does not reset them (found
    # from the worker's `forward` too: messages name that entry point)
    found = _worker_findings(tmp_path, "pass", "_capture_cuda_graphs")
    assert [f[:3] for f in found] == [("PAD001", "seq_lens_cpu", _SINK)] * len(found) and found
    assert any("Worker.forward" in f[3] or "`forward`" in f[3] for f in found)
    assert _worker_findings(tmp_path, _RESET, "_capture_cuda_graphs") == []


def test_a_runner_a_step_method_stores_is_not_taken_as_held(tmp_path):
    # the same store in a method the profile does not name (`stage`, maybe run each step): the
    # object may be that step's own, its tensors no buffers kept across steps; from the worker's
    # entry point the whole `seq_lens_cpu` is not read to the sink's width (the runner's own
    # `step` entry point, where `self` is the runner, still reports it: one finding, not two)
    found = _worker_findings(tmp_path, "pass", "stage")
    assert [f[:3] for f in found] == [("PAD001", "seq_lens_cpu", _SINK)]
    assert not any("forward" in f[3] for f in found)


# ------------------------------- objects built by a constructor's helpers and by factory methods

#: the sink's backend and a declared buffers class (the runners below hold one)
_BUFFERS_HEAD = '''\
from types import SimpleNamespace

import torch


class Backend:
    def init_forward_metadata_out_graph(self, view) -> None:
        print(view.seq_lens_cpu[: view.batch_size])


class Buffers:
    seq_lens_cpu: torch.Tensor


'''

_BUFFERED = _BUFFERS_HEAD + '''\
class Runner:
    def __init__(self, max_bs: int) -> None:
        self.capture_bs = [1, 2, 4, 8]
        self.max_bs = max_bs
        self.backend = Backend()
        BUILD

    def _allocate(self) -> Buffers:
        b = Buffers()
        b.seq_lens_cpu = torch.full((self.max_bs,), 1, dtype=torch.int64)
        return b

HELPER
    def _pad_to_bucket(self, raw_bs: int) -> int:
        return next(b for b in self.capture_bs if b >= raw_bs)

    def step(self, forward_batch) -> None:
        buffers = self.buffers
        raw_bs = forward_batch.batch_size
        bs = self._pad_to_bucket(raw_bs)
        if bs != raw_bs:
            RESET
        buffers.seq_lens_cpu[:raw_bs].copy_(forward_batch.seq_lens_cpu)
        view = SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu)
        self.backend.init_forward_metadata_out_graph(view)
'''


#: a method that stores the buffers object (where the constructor calls it)
_HELPER = '''    def _init_buffers(self) -> None:
        self.buffers = self._allocate()
'''


def _buffered_findings(tmp_path, build: str, reset: str):
    helper = _HELPER if "_init_buffers" in build else ""
    text = _BUFFERED.replace("BUILD", build).replace("RESET", reset).replace("HELPER\n", helper + "\n")
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    return [(f.code, f.field, text.splitlines()[f.line - 1].strip()) for f in
            check_source(text, str(p), load_profile("sglang"))]


_HANDED_WHOLE = "view = SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu)"


@pytest.mark.parametrize("build", [
    # the buffers object, made by a method of the runner whose return annotation names its class
    # (`Buffers` declares `seq_lens_cpu`): stored by the constructor itself ...
    "self.buffers = self._allocate()",
    # ... or by a helper only the constructor calls
    "self._init_buffers()",
])
def test_buffers_built_at_construction_are_persistent(tmp_path, build):
    # no reset: rows [raw_bs:bs] of the whole `seq_lens_cpu` handed beside `batch_size=bs` hold
    # an earlier, larger batch's lengths (before, the object's class was unknown, `self._allocate()`
    # naming no class, or its field was set outside the constructor: the whole buffer was not read
    # to the sink's width)
    assert _buffered_findings(tmp_path, build, "pass") == [("PAD001", "seq_lens_cpu", _HANDED_WHOLE)]
    assert _buffered_findings(tmp_path, build, "buffers.seq_lens_cpu.fill_(1)") == []


def test_a_helper_a_step_calls_too_is_not_construction(tmp_path):
    # `_init_buffers` also called from `step` (a re-allocation each step): the object in the field
    # may be that step's own, not one kept across steps (so is one a method nobody calls stores:
    # it may be called from anywhere)
    text = _BUFFERED.replace("BUILD", "self._init_buffers()").replace("RESET", "pass").replace(
        "HELPER\n", _HELPER + "\n").replace(
        "        buffers = self.buffers\n", "        self._init_buffers()\n        buffers = self.buffers\n")
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    assert check_source(text, str(p), load_profile("sglang")) == []


def _helper_findings(tmp_path, build: str, extra: str = "", step_extra: str = ""):
    text = _BUFFERED.replace("BUILD", build).replace("RESET", "pass").replace(
        "HELPER\n", _HELPER + extra + "\n")
    if step_extra:
        text = text.replace("        buffers = self.buffers\n", step_extra + "        buffers = self.buffers\n")
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    return [(f.code, f.field, text.splitlines()[f.line - 1].strip()) for f in
            check_source(text, str(p), load_profile("sglang"))]


#: a set-up method the SGLang profile names (`[setup] functions`), which calls the helper
_SETUP = '''    def init_cuda_graphs(self) -> None:
        self._init_buffers()
'''


def test_a_helper_a_setup_method_calls_is_set_up(tmp_path):
    # `_init_buffers` is called only by `init_cuda_graphs`, a set-up method of the profile: the
    # buffers object it stores lives across steps as one the constructor stores does (before,
    # only the set-up method's own stores counted), so the stale rows [raw_bs:bs] are reported
    assert _helper_findings(tmp_path, "pass", _SETUP) == [("PAD001", "seq_lens_cpu", _HANDED_WHOLE)]


@pytest.mark.parametrize("step_extra", [
    # the helper kept as a bound method and called each step through it (the call graph
    # resolves that reference: `step` is one of its callers)
    "        refresh = self._init_buffers\n        refresh()\n",
    # ... or looked up by name
    "        getattr(self, \"_init_buffers\")()\n",
])
def test_a_helper_called_where_the_call_graph_does_not_see_it_is_not_construction(tmp_path, step_extra):
    # the constructor calls `_init_buffers`, and so does `step`: the object may be that step's
    # own.  Through `getattr(self, "_init_buffers")` the call graph does not resolve the call:
    # before, the constructor was the helper's only resolved caller, and the object was taken as
    # kept across steps
    assert _helper_findings(tmp_path, "self._init_buffers()", step_extra=step_extra) == []
    # (the same constructor without the step's reference: reported, as above)
    assert _helper_findings(tmp_path, "self._init_buffers()") == [("PAD001", "seq_lens_cpu", _HANDED_WHOLE)]


_TYPES = '''\
class V1Runner: ...
class V2Runner: ...
class Buffers: ...


class Worker:
    def __init__(self):
        self.declared: V1Runner = self._make_runner()
        self.made = self._make_runner()
        self.buffers = self._allocate()

    def _make_runner(self):
        if self.v2:
            return V2Runner()
        return V1Runner()

    def _allocate(self) -> Buffers:
        return Buffers()
'''


@pytest.mark.parametrize("attr, classes", [
    ("buffers", ["Buffers"]),  # the method's return annotation
    ("made", ["V1Runner", "V2Runner"]),  # the classes the method constructs and returns
    ("declared", ["V1Runner"]),  # a declared type is the attribute's type, as a type checker reads it
])
def test_an_attribute_a_method_of_the_object_makes_has_that_methods_classes(attr, classes):
    from padlint.analysis.project import Project
    pr = Project()
    key = pr.add_source("m.py", _TYPES, "m.py")
    worker = pr.class_info(f"{key}:Worker")
    assert sorted(c.name for c in pr.attr_classes(worker, attr)) == classes


# ----------------------------- a profile-declared buffer method on an object of a project class

_WRAPPED = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class HostDeviceBuffer:
    def __init__(self, n: int) -> None:
        self.cpu = torch.zeros(n, dtype=torch.int32)
        self.np = self.cpu.numpy()
        self.gpu = torch.zeros(n, dtype=torch.int32)

    def copy_to_gpu(self, n: int | None = None) -> torch.Tensor:
        if n is None:
            return self.gpu.copy_(self.cpu, non_blocking=True)
        return self.gpu[:n].copy_(self.cpu[:n], non_blocking=True)


class Runner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = self._make_buffer(max_num_reqs)

    def _make_buffer(self, n: int) -> HostDeviceBuffer:
        return HostDeviceBuffer(n)

    def execute_model(self, lens, num_reqs: int, num_reqs_padded: int):
        self.seq_lens.np[:num_reqs] = lens
        RESET
        self.seq_lens.copy_to_gpu(num_reqs)
        return CommonAttentionMetadata(seq_lens=self.seq_lens.gpu[:num_reqs_padded])
'''


@pytest.mark.parametrize("reset, stale", [
    ("pass", True),
    ("self.seq_lens.gpu[num_reqs:num_reqs_padded].fill_(0)", False),
])
def test_a_profile_buffer_method_means_what_the_profile_says_on_a_typed_object(tmp_path, reset, stale):
    # `self.seq_lens` is an object of a project class (the factory method's return annotation),
    # and the vLLM profile declares `copy_to_gpu(n)` a copy of rows [:n] to the device view: the
    # device rows [num_reqs:num_reqs_padded] are not written by it, whatever the wrapper's body
    # does when `n` is None (followed, its whole-copy branch counted as a write of every row)
    text = _WRAPPED.replace("RESET", reset)
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    found = [(f.code, f.field) for f in check_source(text, str(p), load_profile("vllm"))]
    assert found == ([("PAD001", "seq_lens")] if stale else [])


# --------------------------------------------------------------- found by this session's review

@pytest.mark.parametrize("later", [
    "self.seq_lens_cpu = torch.ones(self.bs, dtype=torch.int64)",  # a fresh tensor, every row neutral
    "self.seq_lens_cpu = forward_batch.seq_lens_cpu",  # a tensor handed in
    "self.seq_lens_cpu = None",
])
def test_a_later_store_replaces_the_buffer_in_the_field(tmp_path, later):
    # `prepare` (no reset) makes `self.seq_lens_cpu` the buffer; `step` then stores another value
    # in the field before the replay hands it: the stale buffer is no longer what is handed
    text = _RUNNER.replace("RESET", "pass").replace("STORED", "self.seq_lens_buf").replace(
        "        self.prepare(forward_batch)\n", f"        self.prepare(forward_batch)\n        {later}\n").replace(
        "HANDED", "self.seq_lens_cpu")
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    assert check_source(text, str(p), load_profile("sglang")) == []


def test_a_namesake_of_another_shape_is_followed(tmp_path):
    # `copy_to_gpu(x, out=...)` of a project class (vLLM's UVA staging pool) is not the profile's
    # `copy_to_gpu(n)`: its body, which writes `out` whole, is followed, so the padded slice it
    # fills holds this step's values
    text = _WRAPPED.replace("RESET", "pass").replace(
        "        self.seq_lens.copy_to_gpu(num_reqs)\n",
        "        self.pool.copy_to_gpu(lens, out=self.seq_lens.gpu[:num_reqs_padded])\n").replace(
        "        self.seq_lens = self._make_buffer(max_num_reqs)\n",
        "        self.seq_lens = self._make_buffer(max_num_reqs)\n        self.pool = StagingPool()\n").replace(
        "class Runner:", "class StagingPool:\n    def copy_to_gpu(self, x, out):\n        return out.copy_(x)\n\n\nclass Runner:")
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    assert check_source(text, str(p), load_profile("vllm")) == []


_DEEP = _BUFFERS_HEAD + '''\
class Runner:
    def __init__(self) -> None:
        self.capture_bs = [1, 2, 4, 8]
        self.backend = Backend()
        self._a()

    def _a(self):
        self._b()

    def _b(self):
        self._c()

    def _c(self):
        self.near = self._allocate()
        self._d()

    def _d(self):
        self._e()

    def _e(self):
        self.far = self._allocate()

    def _allocate(self) -> Buffers:
        b = Buffers()
        b.seq_lens_cpu = torch.full((8,), 1, dtype=torch.int64)
        return b

    def _pad_to_bucket(self, raw_bs: int) -> int:
        return next(b for b in self.capture_bs if b >= raw_bs)

    def step(self, forward_batch) -> None:
        FIRST
        buffers = self.near
        raw_bs = forward_batch.batch_size
        bs = self._pad_to_bucket(raw_bs)
        buffers.seq_lens_cpu[:raw_bs].copy_(forward_batch.seq_lens_cpu)
        view = SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu)
        self.backend.init_forward_metadata_out_graph(view)
'''


@pytest.mark.parametrize("first", ["pass", "print(self.far.seq_lens_cpu)"])
def test_construction_helpers_do_not_depend_on_the_order_of_questions(tmp_path, first):
    # `_c` runs three calls below `__init__` (construction: `self.near` holds persistent buffers,
    # reported stale); `_e` five (past the bound: not taken as construction).  Asking about `_e`
    # first must not change the answer for `_c`
    text = _DEEP.replace("FIRST", first)
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    assert [(f.code, f.field) for f in check_source(text, str(p), load_profile("sglang"))] == [("PAD001", "seq_lens_cpu")]
