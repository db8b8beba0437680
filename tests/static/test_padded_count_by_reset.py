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

from pathlib import Path

import pytest

from .project_files import check_files

ROOT = Path(__file__).resolve().parents[2]

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
    # and the fix says where: with the other resets (no step computes the number it keeps)
    assert "where the code resets the other padding rows up to `self._capture_req_slots`" in f.message
    assert "is computed and stored" not in f.message


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


# Found by a review of the first version.

HEAD = ('        if {TEST}:\n            r = self._capture_req_slots\n'
        '            s["seq_lens"][bs:r].fill_(1)\n            s["req_pool_indices"][bs:r].zero_()\n')


def _head(new: str) -> str:
    assert RUNNER.count(HEAD) == 1
    return RUNNER.replace(HEAD, new)


@pytest.mark.parametrize("other", ["not self._is_full_backend", "self._use_pool"])
def test_a_reset_under_another_setting_does_not_cover_the_padding_path(tmp_path, other):
    # the code binds `r` (and so pads) where `self._is_full_backend` holds; a reset of
    # `req_pool_indices` made under another setting (or the opposite one) leaves its padding
    # rows stale on that path.  The first version judged the replay under the union of every
    # reset's facts, where that reset counted
    runner = _head(f'        if {other}:\n'
                   '            s["req_pool_indices"][bs:self._capture_req_slots].zero_()\n'
                   '        if self._is_full_backend:\n            r = self._capture_req_slots\n'
                   '            s["seq_lens"][bs:r].fill_(1)\n')
    assert _found(tmp_path, runner) == [("PAD001", _replay_line(runner), "req_pool_indices")]


def test_a_reset_of_another_buffer_under_a_slot_test_counts_only_where_the_slot_exists(tmp_path):
    # `if registry.has_slot("mamba_track_mask"):` holds only where the builder registered the
    # slot; where it did not, the reset of `req_pool_indices` under it did not run.  Only the
    # slot's own buffer is not read there (the first version took the test as always true)
    runner = _head('        if {TEST}:\n            r = self._capture_req_slots\n'
                   '            s["seq_lens"][bs:r].fill_(1)\n'
                   '            if registry.has_slot("mamba_track_mask"):\n'
                   '                s["req_pool_indices"][bs:r].zero_()\n')
    assert _found(tmp_path, runner) == [("PAD001", _replay_line(runner), "req_pool_indices")]


def test_a_padded_count_stored_under_another_field_name_is_judged_as_before(tmp_path):
    # a padded count the code computes (`bs = self._pad_to_bucket(raw_bs)`) stored as
    # `self.graph_bs`, no profile name, and replayed from there: not a count the resets name, so
    # judged as any padded count, the same as the fixture's replay of the local `bs` (the first
    # version took every field of no profile name as such, and skipped it)
    fixture = (ROOT / "fixtures" / "sglang" / "graph_bound_replay_buggy.py").read_text(encoding="utf-8")
    line = "        return self._replay_graph(bs, forward_batch)  # expect: PAD001 field=topk_index\n"
    assert fixture.count(line) == 1
    # the step split in two: `prepare` stores the sizes, `execute` replays from the field
    stored = fixture.replace(line, "        self.raw_bs = raw_bs\n        self.graph_bs = bs\n\n"
                                   "    def execute(self, forward_batch):\n"
                                   "        self.prepare(forward_batch)\n"
                                   "        return self._replay_graph(self.graph_bs, forward_batch)\n")
    stored = stored.replace("    def execute(self, forward_batch):\n        buffers = self.buffers\n",
                            "    def prepare(self, forward_batch):\n        buffers = self.buffers\n", 1)
    assert "def prepare(" in stored
    before = check_files(tmp_path / "a", {"runner.py": fixture}, ["runner.py"], profile="sglang")
    after = check_files(tmp_path / "b", {"runner.py": stored}, ["runner.py"], profile="sglang")
    assert [(f.code, f.field) for f in before] == [("PAD001", "topk_index")]
    assert [(f.code, f.field) for f in after] == [("PAD001", "topk_index")]


def test_a_range_of_real_rows_is_no_padding(tmp_path):
    # `is_draft[num_tokens:end] = 1` writes real draft rows and `[end:num_tokens_padded]` is the
    # padding: `end` is no padded count (it is where other rows start, and the function binds
    # the pair's padded count itself); the positions rows [end:num_tokens_padded] are stale
    runner = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.positions = torch.zeros(max_num_tokens, dtype=torch.int64)
        self.is_draft = torch.zeros(max_num_tokens, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_tokens = scheduler_output.total_num_scheduled_tokens
        end = scheduler_output.num_tokens_with_drafts
        self.is_draft[:num_tokens] = 0
        self.is_draft[num_tokens:end] = 1
        self.positions[:end] = torch.as_tensor(scheduler_output.positions)
        num_tokens_padded = self.cudagraph_dispatcher.pad(end)
        return CommonAttentionMetadata(positions=self.positions[:num_tokens_padded])
'''
    got = check_files(tmp_path, {"runner.py": runner}, ["runner.py"], profile="vllm")
    assert [(f.code, f.field, f.line) for f in got] == [("PAD001", "positions", 17)]


def test_rows_reset_from_the_end_of_a_range_are_the_padding(tmp_path):
    # `[num_tokens:end] = False` (real draft rows), `[end:num_tokens_padded] = True` (padding):
    # the first is no reset of padding rows, and its False no wrong pad value (the first version
    # took `end` for the padded count and reported PAD002 there)
    runner = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.is_padding = torch.zeros(max_num_tokens, dtype=torch.bool)

    def execute_model(self, scheduler_output):
        num_tokens = scheduler_output.total_num_scheduled_tokens
        end = scheduler_output.num_tokens_with_drafts
        num_tokens_padded = self.cudagraph_dispatcher.pad(end)
        self.is_padding[:num_tokens] = False
        self.is_padding[num_tokens:end] = False
        self.is_padding[end:num_tokens_padded] = True
        return CommonAttentionMetadata(is_padding=self.is_padding[:num_tokens_padded])
'''
    assert check_files(tmp_path, {"runner.py": runner}, ["runner.py"], profile="vllm") == []
