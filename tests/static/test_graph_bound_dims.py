"""A graph-bound buffer sliced along its second dimension (M-RoPE positions ``[3, num_tokens]``).

SGLang's EAGLE draft runners (0.5.23) bind ``buffers.mrope_positions[:, :num_tokens]`` into the
captured batch and, at replay, under ``if self.model_runner.model_config.model_is_mrope:``, zero
the whole buffer ``if bs != raw_bs or forward_batch.mrope_positions is None:`` and copy the live
columns ``[:, :raw_num_token]``.  The graph reads columns ``[:, :num_tokens]`` at every replay, so
without the zeroing, columns ``[:, raw_num_token:num_tokens]`` hold an earlier, larger batch's
positions.  Three things were missing (docs/mutation.md: the deletions of ``mrope_positions.zero_()``
at ``eagle_draft_cuda_graph_runner.py:645`` and ``eagle_draft_extend_cuda_graph_runner.py:569``):

- the graph-bound reading took only ``X[:n]``; ``X[:, :n]`` is the same binding along dimension 1;
- ``if bs != raw_bs or c:`` guards a reset as ``if bs != raw_bs:`` does: the test is false only
  where every disjunct is, so where there are no padding rows;
- the sglang profile's ``read_when`` for ``mrope_positions`` (models read it only for M-RoPE
  checkpoints, named in the profile's ``consumer``): where the configuration test is false the
  field is not read, so the reset under it counts.  Without it, binding ``[:, :n]`` gave false
  alarms on the unmutated runners (docs/triage-sglang-0.5.23.md, "binding buffers sliced along
  their second dimension").

Written from scratch, sglang profile.
"""

from __future__ import annotations

from .project_files import check_files

RUNNER = '''\
import torch

from pkg.forward_batch_info import ForwardBatch


class DraftGraphRunner:
    def __init__(self, model_runner, capture_bs: list[int], width: int) -> None:
        self.model_runner = model_runner
        self.capture_bs = sorted(capture_bs)
        self.captured_req_width = width
        max_num_token = self.capture_bs[-1] * width
        self.positions = torch.zeros((max_num_token,), dtype=torch.int64)
        self.mrope_positions = torch.zeros((3, max_num_token), dtype=torch.int64)
        self.graphs = {}

    def capture_one_shape(self, num_seqs: int) -> None:
        num_tokens = num_seqs * self.captured_req_width
        forward_batch = ForwardBatch(
            batch_size=num_seqs,
            positions=self.positions[:num_tokens],
            mrope_positions=self.mrope_positions[:, :num_tokens],
        )
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model_runner.model.forward(forward_batch)
        self.graphs[num_seqs] = graph

    def execute(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        raw_num_token = raw_bs * self.captured_req_width
        bs = self.model_runner.pad_to_captured(raw_bs)
        num_tokens = bs * self.captured_req_width
        if bs != raw_bs:
            self.positions.zero_()
        self.positions[:raw_num_token].copy_(forward_batch.positions)
        {MROPE}
        self._replay_graph(bs, forward_batch)

    def _replay_graph(self, bs: int, forward_batch: ForwardBatch) -> None:
        self.model_runner.graph_backend.replay(bs)
'''

BATCH = '''\
from dataclasses import dataclass

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    positions: torch.Tensor
    mrope_positions: torch.Tensor
'''

COPY = "self.mrope_positions[:, :raw_num_token].copy_(forward_batch.mrope_positions)"
GUARDED = f"""if bs != raw_bs or forward_batch.mrope_positions is None:
            self.mrope_positions.zero_()
        {COPY}"""
UNDER_CONFIG = """if self.model_runner.model_config.model_is_mrope:
            {RESET}
            self.mrope_positions[:, :raw_num_token].copy_(forward_batch.mrope_positions)"""


def _findings(tmp_path, mrope: str):
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/graph_runner.py": RUNNER}
    return check_files(tmp_path, files, ["pkg/graph_runner.py"], {"MROPE": mrope}, profile="sglang")


def test_columns_past_the_live_batch_are_stale_at_replay(tmp_path):
    found = _findings(tmp_path, COPY)
    # one finding, at the replay the profile names (line 37), about the second dimension;
    # `positions` (dimension 0) is zeroed on a padded replay
    assert [(f.code, f.line) for f in found] == [("PAD001", 37)]
    msg = found[0].message
    assert msg.startswith("`mrope_positions[:, :bs * self.captured_req_width]` is a padded slice")
    assert "entries [:, raw_num_token:num_tokens] may be stale" in msg


def test_a_reset_guarded_by_padding_or_another_test_counts(tmp_path):
    # `if bs != raw_bs or x is None:` is false only where bs == raw_bs: no padding columns
    assert _findings(tmp_path, GUARDED) == []


def test_a_reset_of_the_padding_columns_clears_it(tmp_path):
    assert _findings(tmp_path, "self.mrope_positions[:, raw_num_token:].zero_()\n        " + COPY) == []


def test_a_reset_under_the_configuration_the_consumer_reads_it_under_counts(tmp_path):
    # the profile: models read mrope_positions only under model_is_mrope (read_when)
    fixed = UNDER_CONFIG.replace("{RESET}", "self.mrope_positions.zero_()")
    assert _findings(tmp_path, fixed) == []


def test_no_reset_under_the_configuration_is_still_reported(tmp_path):
    buggy = UNDER_CONFIG.replace("{RESET}", "pass")
    found = _findings(tmp_path, buggy)
    assert [(f.code, f.line) for f in found] == [("PAD001", 39)]
    assert "entries [:, raw_num_token:num_tokens] may be stale" in found[0].message


def test_columns_bounded_by_no_count_are_not_padding(tmp_path):
    # a capture slicing a buffer's columns by a width that is no count of an axis (a top-k width)
    # binds no padding: rows past the live batch are not what `[:, :k]` bounds
    runner = RUNNER.replace(
        "            mrope_positions=self.mrope_positions[:, :num_tokens],\n",
        "            mrope_positions=self.mrope_positions[:, :self.captured_req_width],\n").replace(
        "self.model_runner.graph_backend.replay(bs)", "self.graphs[bs].replay()")  # read to [:bs]
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/graph_runner.py": runner}
    assert check_files(tmp_path, files, ["pkg/graph_runner.py"], {"MROPE": "pass"}, profile="sglang") == []
