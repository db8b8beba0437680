"""A local whose name reads as a padded count but which holds a padded slice is that slice.

The shape is vLLM 0.33.0's ``_prepare_kv_sharing_fast_prefill`` (written from scratch here):

    num_logits = logits_indices.shape[0]
    self.logits_buf[:num_logits].copy_(logits_indices)
    self.logits_buf[num_logits:] = logits_indices[-1]          # the reset
    _, batch_desc = self.dispatcher.dispatch(num_logits)
    num_logits_padded = batch_desc.num_tokens                  # a count: an element of a size table
    logits_indices_padded = self.logits_buf[:num_logits_padded]  # a view, named like a count
    return logits_indices_padded

and the caller stores the result on the metadata object (a sink).  The name
``logits_indices_padded`` follows the ``X`` / ``X_padded`` convention of padded counts, and the
engine used to bind it to a count of that name instead of the view: the padded slice never reached
the sink, and deleting the reset went unnoticed (docs/mutation.md, vLLM
``gpu_model_runner.py:2679``).  The value decides over the name when it is a sliced view;
``num_logits_padded``, read from a table of sizes (a whole location, not a slice), stays a count.
"""

from __future__ import annotations

from .project_files import check_files

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class BatchDescriptor:
    def __init__(self, num_tokens: int):
        self.num_tokens = num_tokens


class Dispatcher:
    def __init__(self, sizes: list[int]):
        self._bs_to_padded_graph_size = [0] * (max(sizes) + 1)
        for n in range(max(sizes) + 1):
            self._bs_to_padded_graph_size[n] = min(s for s in sizes if s >= n)

    def dispatch(self, num_tokens: int):
        return None, BatchDescriptor(num_tokens=self._bs_to_padded_graph_size[num_tokens])


class GPUModelRunner:
    def __init__(self, n: int):
        self.dispatcher = Dispatcher([8, 16, 32])
        self.logits_buf = torch.zeros(n, dtype=torch.int64)
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def _prepare_fast_prefill(self, logits_indices: torch.Tensor) -> torch.Tensor:
        num_logits = logits_indices.shape[0]
        self.logits_buf[:num_logits].copy_(logits_indices)
        {RESET}
        _, batch_desc = self.dispatcher.dispatch(num_logits)
        num_logits_padded = batch_desc.num_tokens
        {NAME} = self.logits_buf[:num_logits_padded]
        return {NAME}

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        self.seq_lens[:num_reqs] = scheduler_output.seq_lens
        cm = CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs], num_reqs=num_reqs)
        cm.logits_indices_padded = self._prepare_fast_prefill(scheduler_output.logits_indices)
        return cm
'''

BACKEND = '''\
from dataclasses import dataclass

import torch


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    num_reqs: int
    logits_indices_padded: torch.Tensor | None = None
'''

RESET = "self.logits_buf[num_logits:] = logits_indices[-1]"


def _findings(tmp_path, reset: str, name: str):
    files = {
        "vllm/__init__.py": "",
        "vllm/v1/__init__.py": "",
        "vllm/v1/worker/__init__.py": "",
        "vllm/v1/worker/gpu_model_runner.py": RUNNER,
        "vllm/v1/attention/__init__.py": "",
        "vllm/v1/attention/backend.py": BACKEND,
    }
    return check_files(tmp_path, files, ["vllm/v1/worker/gpu_model_runner.py"],
                       {"RESET": reset, "NAME": name})


def test_view_named_like_a_padded_count_reaches_the_sink(tmp_path):
    # no reset: rows [num_logits:num_logits_padded] of the slice stored on line 39 are stale
    found = _findings(tmp_path, "pass", "logits_indices_padded")
    assert [(f.code, f.line) for f in found] == [("PAD001", 39)]
    assert "rows [num_logits:num_logits_padded]" in found[0].message
    assert "`.logits_indices_padded`" in found[0].message


def test_the_reset_clears_it(tmp_path):
    assert _findings(tmp_path, RESET, "logits_indices_padded") == []


def test_the_same_with_a_name_that_is_no_count(tmp_path):
    # the control: the name was the only difference; both names give the same verdicts
    found = _findings(tmp_path, "pass", "padded_view")
    assert [(f.code, f.line) for f in found] == [("PAD001", 39)]
    assert "rows [num_logits:num_logits_padded]" in found[0].message
    assert _findings(tmp_path, RESET, "padded_view") == []
