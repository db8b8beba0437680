"""CUDA graphs captured through a manager (vLLM Model Runner V2's speculators).

The speculator hands its step functions to a graph manager (``self.prefill_cudagraph_manager.
capture(self._prefill, ...)``), which captures one graph per padded size by calling them with that
size; a step dispatches a descriptor of the padded size (``desc = dispatch_cg(manager,
num_reqs)``) and replays its graph (``self.prefill_cudagraph_manager.run_fullgraph(desc)``).  The
captured function reads ``self.idx_mapping[:num_reqs]`` with the captured size, so every replay
reads the rows ``[num_reqs:desc.num_reqs]`` as they were left: vLLM 0.24.0 wrote only
``self.idx_mapping[:num_reqs]`` (stale request-state indices in the padding rows: the drafter
sampled and computed slot mappings for them), and 0.25.0 added
``self.idx_mapping[num_reqs:].fill_(-1)`` (vllm#47066).  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

MANAGER = '''\
from dataclasses import dataclass


@dataclass
class BatchDesc:
    num_reqs: int
    num_tokens: int
    full: bool


class GraphManager:
    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sorted(sizes)
        self.graphs = {}

    def capture(self, fn, progress_bar_desc: str = "") -> None:
        for size in self.sizes:
            self.graphs[size] = fn

    def run_fullgraph(self, desc: BatchDesc) -> None:
        self.graphs[desc.num_reqs].replay()


def dispatch_cg(manager: GraphManager, num_reqs: int) -> BatchDesc:
    for size in manager.sizes:
        if size >= num_reqs:
            return BatchDesc(size, size, True)
    return BatchDesc(num_reqs, num_reqs, False)
'''

SPECULATOR = '''\
import torch
import triton

from pkg.cudagraph import GraphManager, dispatch_cg


@triton.jit
def _sample_kernel(idx_mapping_ptr, sample_col_ptr, out_ptr):
    pass


class Speculator:
    def __init__(self, max_num_reqs: int) -> None:
        self.idx_mapping = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.temperature = torch.zeros(max_num_reqs, dtype=torch.float32)
        self.draft_tokens = torch.zeros(max_num_reqs, dtype=torch.int64)
        # the column of each request's draft step: a constant pattern no step writes
        self.sample_col = torch.arange(4, dtype=torch.int32).repeat(max_num_reqs)
        self.prefill_cudagraph_manager = GraphManager([8, 16])

    def capture(self) -> None:
        self.prefill_cudagraph_manager.capture(self._prefill, progress_bar_desc="prefill")

    def _copy_request_inputs(self, num_reqs: int, idx_mapping: torch.Tensor) -> None:
        self.idx_mapping[:num_reqs].copy_(idx_mapping)
        {RESET}

    def propose(self, input_batch) -> torch.Tensor:
        num_reqs = input_batch.num_reqs
        self._copy_request_inputs(num_reqs, input_batch.idx_mapping)
        desc = dispatch_cg(self.prefill_cudagraph_manager, num_reqs)
        if desc.full:
            self.prefill_cudagraph_manager.run_fullgraph(desc)
        else:
            self._prefill(num_reqs)
        return self.draft_tokens[:num_reqs]

    def _prefill(self, num_reqs: int) -> None:
        idx_mapping = self.idx_mapping[:num_reqs]
        self.draft_tokens[:num_reqs] = 0
        _sample_kernel[(num_reqs,)](idx_mapping, self.sample_col[:num_reqs], self.draft_tokens)
'''

FILES = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": SPECULATOR}


def _check(tmp_path, reset: str):
    return [f for f in check_files(tmp_path, FILES, ["pkg/speculator.py"], {"RESET": reset})
            if f.code == "PAD001"]


def test_a_replay_reads_the_padding_rows_of_what_the_captured_function_sliced(tmp_path):
    got = _check(tmp_path, "pass")
    # the replay at line 33 (`run_fullgraph(desc)`) runs the graph captured for `desc.num_reqs`
    # requests: `_prefill` read `self.idx_mapping[:num_reqs]` at that size, and `propose` wrote
    # only rows [:num_reqs] (the real count) on this path; `sample_col`, which no step writes,
    # holds its construction pattern in every row (not stale)
    assert [(f.line, f.field) for f in got] == [(33, "idx_mapping")]
    (f,) = got
    assert "[num_reqs:" in f.message and "CUDA graph" in f.message


def test_the_reset_of_the_padding_rows_before_the_replay_covers_it(tmp_path):
    # vLLM 0.25.0's fix; `draft_tokens`, which the captured function only writes, is never
    # a read of the replay
    assert _check(tmp_path, "self.idx_mapping[num_reqs:].fill_(-1)") == []


TWO_MANAGERS = '''\
import torch

from pkg.cudagraph import GraphManager, dispatch_cg


class Speculator:
    def __init__(self, max_num_reqs: int, fused: bool) -> None:
        self.fused = fused
        self.idx_mapping = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.positions = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.hidden = torch.zeros(max_num_reqs, 8)
        self.prefill_cudagraph_manager = GraphManager([8, 16])
        self.decode_cudagraph_manager = GraphManager([8, 16])

    def capture(self) -> None:
        self.prefill_cudagraph_manager.capture(self._prefill)
        decode_fn = self._generate_fused if self.fused else self._generate_draft
        self.decode_cudagraph_manager.capture(decode_fn)

    def propose(self, input_batch) -> None:
        num_reqs = input_batch.num_reqs
        self.idx_mapping[:num_reqs].copy_(input_batch.idx_mapping)
        self.idx_mapping[num_reqs:].fill_(-1)
        self.positions[:num_reqs].copy_(input_batch.positions)
        {RESET}
        desc = dispatch_cg(self.prefill_cudagraph_manager, num_reqs)
        self.prefill_cudagraph_manager.run_fullgraph(desc)
        decode_desc = dispatch_cg(self.decode_cudagraph_manager, num_reqs)
        self.decode_cudagraph_manager.run_fullgraph(decode_desc)

    def _prefill(self, num_reqs: int) -> None:
        self.hidden[:num_reqs] = 0
        h = self.hidden[:num_reqs]
        torch.ops.vllm.sample(self.idx_mapping[:num_reqs], h)

    def _generate_draft(self, num_reqs: int) -> None:
        torch.ops.vllm.draft(self.idx_mapping[:num_reqs], self.positions[:num_reqs])

    def _generate_fused(self, num_reqs: int) -> None:
        torch.ops.vllm.fused_draft(self.positions[:num_reqs])
'''


def test_each_manager_replays_what_it_captured(tmp_path):
    files = {**FILES, "pkg/speculator.py": TWO_MANAGERS}
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"], {"RESET": "pass"}) if f.code == "PAD001"]
    # `positions` is read by the decode functions only (either arm of `decode_fn`): the decode
    # replay (line 29) reads its rows [num_reqs:decode_desc.num_reqs], the prefill replay (27)
    # does not; `hidden`, which `_prefill` writes before it reads it, is no input of the replay
    assert [(f.line, f.field) for f in got] == [(29, "positions")]
    assert "rows [num_reqs:decode_desc.num_reqs]" in got[0].message
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"],
                                  {"RESET": "self.positions[num_reqs:].zero_()"}) if f.code == "PAD001"]
    assert got == []
