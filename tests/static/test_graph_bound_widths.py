"""The width a CUDA graph reads a token buffer to, named in the capture's terms.

SGLang's EAGLE draft runner (0.5.23) captures each batch size ``num_seqs`` with
``num_tokens = num_seqs * self.captured_req_width`` and binds ``buffers.positions[:num_tokens]``;
its replay (``self._replay_graph(...)``, a replay the sglang profile names) pads ``raw_bs`` to
``bs`` and writes ``positions[:raw_num_token]``.  The graph of size ``bs`` reads ``bs * w``
tokens.  The replay's frame binds no ``num_seqs`` (and, here, no padded token count either), so
the capture's width was not evaluated there and the token buffer was not judged at the replay.
Now a count of the capture's frame stands for the one padded count of its axis in scope at the
replay (``num_seqs`` -> ``bs``, both request counts to the profile).  Written from scratch.
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
        max_bs = self.capture_bs[-1]
        self.positions = torch.zeros((max_bs * width,), dtype=torch.int64)
        self.seq_lens = torch.ones((max_bs,), dtype=torch.int64)
        self.graphs = {}

    def capture_one_shape(self, num_seqs: int) -> None:
        num_tokens = num_seqs * self.captured_req_width
        forward_batch = ForwardBatch(
            batch_size=num_seqs,
            positions=self.positions[:num_tokens],
            seq_lens=self.seq_lens[:num_seqs],
        )
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model_runner.model.forward(forward_batch)
        self.graphs[num_seqs] = graph

    def _replay_graph(self, bs: int, forward_batch: ForwardBatch) -> None:
        self.graphs[bs].replay()

    def execute(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        raw_num_token = raw_bs * self.captured_req_width
        bs = self.model_runner.pad_to_captured(raw_bs)
        if bs != raw_bs:
            self.seq_lens.fill_(1)
            {RESET}
        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        self.positions[:raw_num_token].copy_(forward_batch.positions)
        self._replay_graph(bs, forward_batch)
'''

BATCH = '''\
from dataclasses import dataclass

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    positions: torch.Tensor
    seq_lens: torch.Tensor
'''


def _findings(tmp_path, reset: str):
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/graph_runner.py": RUNNER}
    found = check_files(tmp_path, files, ["pkg/graph_runner.py"], {"RESET": reset}, profile="sglang")
    return [f for f in found if "replay" in f.message]


def test_token_rows_past_the_live_batch_are_stale_at_replay(tmp_path):
    found = _findings(tmp_path, "pass")
    # the graph reads positions[:bs * w]; seq_lens is reset, positions is not.  Two sinks read
    # it: `self.graphs[bs].replay()` in `_replay_graph` (line 29; it read only [:bs] before, the
    # graph's index) and the call the profile names, `self._replay_graph(...)` (line 40), where
    # the real token count is in scope and the fix can name it
    assert [(f.code, f.line) for f in found] == [("PAD001", 29), ("PAD001", 40)]
    for f in found:
        assert f.message.startswith("`positions[:bs * self.captured_req_width]` is a padded slice")
    # the padded bound shown as the code writes it (the engine's own name for it is no identifier)
    assert "rows [raw_num_token:bs * self.captured_req_width] may be stale" in found[1].message
    assert "add `self.positions[raw_num_token:bs * self.captured_req_width] = 0`" in found[1].message


def test_zeroing_the_token_buffer_on_a_padded_replay_clears_it(tmp_path):
    assert _findings(tmp_path, "self.positions.zero_()") == []


def test_a_reset_of_the_padding_tokens_clears_it(tmp_path):
    assert _findings(tmp_path, "self.positions[raw_num_token:].zero_()") == []


def _execute(tmp_path, body: str):
    """The runner with ``execute`` replaced by ``body`` (lines marked ``<<`` are further
    methods of the class)."""
    start = RUNNER.index("    def execute(")
    runner = RUNNER[:start] + "    def execute(self, forward_batch: ForwardBatch) -> None:\n" + "".join(
        ("    " + line[2:] if line.startswith("<<") else "        " + line) + "\n"
        for line in body.strip().splitlines())  # `<<` starts a line of another method
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/graph_runner.py": runner}
    found = check_files(tmp_path, files, ["pkg/graph_runner.py"], profile="sglang")
    return [f for f in found if "replay" in f.message]


def test_a_replay_that_names_the_padded_token_count_is_judged_in_that_name(tmp_path):
    found = _execute(tmp_path, """
raw_bs = forward_batch.batch_size
raw_num_token = raw_bs * self.captured_req_width
bs = self.model_runner.pad_to_captured(raw_bs)
num_tokens = bs * self.captured_req_width
self.seq_lens.fill_(1)
self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.positions[:raw_num_token].copy_(forward_batch.positions)
self.graphs[bs].replay()
""")
    # one name for the bound throughout: the slice, the rows and the fix say `num_tokens`
    assert len(found) == 1
    assert found[0].message.startswith("`positions[:num_tokens]` is a padded slice")
    assert "rows [raw_num_token:num_tokens]" in found[0].message
    assert "add `self.positions[raw_num_token:num_tokens] = 0`" in found[0].message


def test_a_replay_that_binds_the_capture_count_name_to_its_real_count(tmp_path):
    # `num_seqs` here is the live batch, not the graph's size: the width is `bs * w`, not
    # `num_seqs * w` (no padding) nor `bs` (the graph's index, a request count)
    found = _execute(tmp_path, """
raw_bs = forward_batch.batch_size
raw_num_token = raw_bs * self.captured_req_width
num_seqs = forward_batch.batch_size
bs = self.model_runner.pad_to_captured(num_seqs)
if bs != num_seqs:
    self.seq_lens.fill_(1)
self.seq_lens[:num_seqs].copy_(forward_batch.seq_lens)
self.positions[:raw_num_token].copy_(forward_batch.positions)
self.graphs[bs].replay()
""")
    assert len(found) == 1
    assert found[0].message.startswith("`positions[:bs * self.captured_req_width]` is a padded slice")
    assert "rows [raw_num_token:bs * self.captured_req_width]" in found[0].message


def test_a_token_buffer_is_not_read_to_the_graphs_batch_size(tmp_path):
    # `self.graphs[self.bs].replay()` in a helper: `positions` (captured `[:num_tokens]`) is not
    # judged as if the graph read `[:self.bs]` of it (a request count: the rows and the fix would
    # be wrong).  The padded count the path stored in `self.bs` stands for the capture's
    # `num_seqs`, so the capture's width is named in the replay's terms: `self.bs *
    # self.captured_req_width` tokens, of which `[:raw_num_token]` were written.  `seq_lens`
    # (captured `[:num_seqs]`, the same axis as the graph's size) is judged to `self.bs`.
    found = _execute(tmp_path, """
raw_bs = forward_batch.batch_size
raw_num_token = raw_bs * self.captured_req_width
bs = self.model_runner.pad_to_captured(raw_bs)
self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.positions[:raw_num_token].copy_(forward_batch.positions)
self.bs = bs
self._replay()
<<
<<def _replay(self) -> None:
<<    self.graphs[self.bs].replay()
""")
    assert [f.message.split("`")[1] for f in found] == ["positions[:self.bs * self.captured_req_width]",
                                                        "seq_lens[:self.bs]"]
    assert "rows [raw_bs*self.captured_req_width:self.bs * self.captured_req_width]" in found[0].message
