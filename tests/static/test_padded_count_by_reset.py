"""A padded count the code names only by its own resets (SGLang's prefill graph runner).

SGLang's prefill runner (0.5.17 on, ``runner/prefill_cuda_graph_runner.py``) captures its full
CUDA graphs with the request axis padded to ``self._capture_req_slots`` (the capture binds
``s[name][:bs]`` with ``bs = self._capture_req_slots``).  At replay, ``load_batch`` copies the
live requests into rows ``[:bs]`` with ``bs = forward_batch.batch_size`` (the batch's own size,
under the name the profile gives the *padded* count) and resets the padding rows:

    if self._is_full_backend and bs < self._capture_req_slots:
        r = self._capture_req_slots
        s["seq_lens"][bs:r].zero_()  # (0 in that runner; 1 below, the profile's neutral value)
        ...
        for name in ("mamba_track_mask", "mamba_track_indices"):
            if registry.has_slot(name):
                registry.get_slot(name).buffer[bs:r].zero_()

No profile name says that ``r`` is the padded count: the resets say it (rows ``[bs:r]`` are the
padding rows, so ``bs`` is the real count and ``r`` the padded one).  0.5.18 added the registry
loop ("a stale mask row still carries a live destination slot: it would land this replay's
window in an earlier request's checkpoint"; docs/historical-bugs.md, S11).  The runner below has
that shape, written from scratch: with every reset there is nothing to report; deleting one makes
its buffer's padding rows stale where the graph replays.
"""

from __future__ import annotations

from .project_files import check_files

REGISTRY = '''\
from dataclasses import dataclass

import torch


@dataclass
class GraphSlot:
    name: str
    shape_fn: object
    dtype: object
    axis: str = "tokens"
    buffer: torch.Tensor | None = None

    def slice_for(self, bs: int, num_tokens: int) -> torch.Tensor:
        return self.buffer[:bs] if self.axis == "bs" else self.buffer[:num_tokens]


class CudaGraphBufferRegistry:
    def __init__(self) -> None:
        self._slots: dict[str, GraphSlot] = {}

    def register_slot(self, slot: GraphSlot, bind=None) -> None:
        slot.buffer = bind
        self._slots[slot.name] = slot

    def has_slot(self, name: str) -> bool:
        return name in self._slots

    def get_slot(self, name: str) -> GraphSlot:
        return self._slots[name]


def build_prefill_registry(*, source=None) -> CudaGraphBufferRegistry:
    reg = CudaGraphBufferRegistry()
    for slot in [GraphSlot("mamba_track_mask", lambda bs, t: (bs,), torch.bool, axis="bs")]:
        reg.register_slot(slot, bind=getattr(source, slot.name, None))
    return reg
'''

BATCH = '''\
from dataclasses import dataclass

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    seq_lens: torch.Tensor
    req_pool_indices: torch.Tensor
    extend_start_loc: torch.Tensor
    mamba_track_mask: torch.Tensor
'''

RUNNER = '''\
import torch

from pkg.forward_batch_info import ForwardBatch
from pkg.registry import build_prefill_registry

_STATIC_FIELDS = ("seq_lens", "req_pool_indices", "extend_start_loc")


class PrefillInputBuffers:
    def __init__(self, max_bs: int) -> None:
        self.mamba_track_mask = torch.zeros((max_bs,), dtype=torch.bool)


class PrefillGraphRunner:
    def __init__(self, backend, max_req: int, full: bool) -> None:
        self.backend = backend
        self._is_full_backend = full
        self._capture_req_slots = max_req
        self._static = {
            "seq_lens": torch.zeros((max_req,), dtype=torch.int64),
            "req_pool_indices": torch.zeros((max_req,), dtype=torch.int64),
            "extend_start_loc": torch.zeros((max_req,), dtype=torch.int64),
        }
        self.buffers = PrefillInputBuffers(max_req)
        self.buffer_registry = build_prefill_registry(source=self.buffers)

    def capture_one_shape(self, num_tokens: int) -> None:
        bs = self._capture_req_slots
        s = self._static
        shape_inputs = {}
        for name in _STATIC_FIELDS:
            shape_inputs[name] = s[name][:bs]
        registry = self.buffer_registry

        def _slot(name):
            return registry.get_slot(name).slice_for(bs, num_tokens)

        forward_batch = ForwardBatch(
            batch_size=bs,
            seq_lens=shape_inputs["seq_lens"],
            req_pool_indices=shape_inputs["req_pool_indices"],
            extend_start_loc=shape_inputs["extend_start_loc"],
            mamba_track_mask=_slot("mamba_track_mask") if registry.has_slot("mamba_track_mask") else None,
        )
        self.backend.capture(num_tokens, forward_batch)

    def load_batch(self, forward_batch: ForwardBatch, num_tokens: int) -> None:
        bs = forward_batch.batch_size
        self.raw_bs = bs
        s = self._static
        s["seq_lens"][:bs].copy_(forward_batch.seq_lens)
        s["req_pool_indices"][:bs].copy_(forward_batch.req_pool_indices)
        s["extend_start_loc"][:bs].copy_(forward_batch.extend_start_loc)
        registry = self.buffer_registry
        registry.get_slot("mamba_track_mask").buffer[:bs].copy_(forward_batch.mamba_track_mask)
        if {TEST}:
            r = self._capture_req_slots
            s["seq_lens"][bs:r].fill_(1)
            s["req_pool_indices"][bs:r].zero_()
            s["extend_start_loc"][bs:r].fill_(num_tokens)
            for name in ("mamba_track_mask",):
                if registry.has_slot(name):
                    registry.get_slot(name).buffer[bs:r].zero_()

    def execute(self, forward_batch: ForwardBatch, num_tokens: int):
        self.load_batch(forward_batch, num_tokens)
        return self.backend.replay(num_tokens, forward_batch)
'''

TEST = "self._is_full_backend and bs < self._capture_req_slots"


def _replay_line(runner: str) -> int:
    return runner.splitlines().index("        return self.backend.replay(num_tokens, forward_batch)") + 1


def _found(tmp_path, runner: str = RUNNER, test: str = TEST) -> list[tuple[str, int, str]]:
    files = {"pkg/__init__.py": "", "pkg/registry.py": REGISTRY, "pkg/forward_batch_info.py": BATCH,
             "pkg/runner.py": runner}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"TEST": test}, profile="sglang")
    return sorted((f.code, f.line, f.field) for f in got)


def _without(line: str) -> str:
    assert RUNNER.count(line) == 1, line
    return RUNNER.replace(line, "")


def test_every_padding_row_reset_nothing_to_report(tmp_path):
    # the four graph-bound buffers of the request axis get rows [bs:r] reset on the paths where
    # the code pads (`self._is_full_backend`, and `bs < r`: elsewhere there are no padding rows)
    assert _found(tmp_path) == []


def test_a_deleted_reset_of_a_static_buffer_is_noticed(tmp_path):
    # rows [bs:r] of `extend_start_loc` keep the last replay's request starts; the other resets
    # say those rows are the padding rows of the graph's request axis
    runner = _without('            s["extend_start_loc"][bs:r].fill_(num_tokens)\n')
    assert _found(tmp_path, runner) == [("PAD001", _replay_line(runner), "extend_start_loc")]


def test_the_message_names_the_padded_count_as_the_code_does(tmp_path):
    runner = _without('            s["req_pool_indices"][bs:r].zero_()\n')
    files = {"pkg/__init__.py": "", "pkg/registry.py": REGISTRY, "pkg/forward_batch_info.py": BATCH,
             "pkg/runner.py": runner}
    (f,) = check_files(tmp_path, files, ["pkg/runner.py"], {"TEST": TEST}, profile="sglang")
    assert f.field == "req_pool_indices"
    # the rows run to the number the runner keeps, as the code names it, not to a profile name
    assert "[:self._capture_req_slots]" in f.message
    assert ":self._capture_req_slots] may be stale" in f.message


def test_a_deleted_registry_slot_reset_is_noticed(tmp_path):
    # SGLang 0.5.17 -> 0.5.18 (S11): the slot's buffer is `get_slot(name).buffer`, under
    # `if registry.has_slot(name):` (the class registers the slot: the test holds)
    runner = RUNNER.replace('            for name in ("mamba_track_mask",):\n'
                            '                if registry.has_slot(name):\n'
                            '                    registry.get_slot(name).buffer[bs:r].zero_()\n', "")
    assert runner != RUNNER
    assert _found(tmp_path, runner) == [("PAD001", _replay_line(runner), "mamba_track_mask")]


def test_under_a_comparison_of_the_counts_alone_the_same(tmp_path):
    # `if bs < r:` skips only where there are no padding rows (the counts are equal)
    guard = "bs < self._capture_req_slots"
    assert _found(tmp_path, test=guard) == []
    runner = _without('            s["seq_lens"][bs:r].fill_(1)\n')
    assert _found(tmp_path, runner, test=guard) == [("PAD001", _replay_line(runner), "seq_lens")]


def test_under_a_test_the_replay_cannot_be_tied_to_nothing_is_judged(tmp_path):
    # `if forward_batch.is_full:` names nothing the analysis keeps a fact of: the resets are lost
    # where the branches join, and with them the code's account of which rows are padding rows
    # on the replay's path; the replay's request axis is not judged (no alarm on every buffer,
    # and, a known limit, no notice of a deleted reset either)
    assert _found(tmp_path, test="forward_batch.is_full") == []
    runner = _without('            s["seq_lens"][bs:r].fill_(1)\n')
    assert _found(tmp_path, runner, test="forward_batch.is_full") == []


def test_no_tail_reset_no_padded_count(tmp_path):
    # with no reset of rows [bs:r] at all, nothing names `self._capture_req_slots` a padded count:
    # the replay's request axis is not judged (what the profile does not name, only the code's
    # resets can tell)
    runner = RUNNER.replace("        if {TEST}:\n", "        if False:\n")
    runner = "\n".join(ln for ln in runner.splitlines() if "[bs:r]" not in ln and "for name in (" not in ln
                       and "if registry.has_slot(name):" not in ln and "r = self._capture_req_slots" not in ln)
    runner = runner.replace("        if False:\n", "        if False:\n            pass\n")
    assert _found(tmp_path, runner) == []
