"""Resets and reads the engine builds from a class's own attribute paths are taken relative to
the receiver a caller reached the method through (issue 8).

SGLang 0.5.23 reaches its graph runners from the model runner:
``ModelRunner._forward_raw`` calls ``self.decode_cuda_graph_runner.execute(forward_batch)``.
Inside ``execute`` (and ``load_batch``) ``self`` is then the model runner's
``decode_cuda_graph_runner`` object, and the method's own writes (``self.seq_lens.fill_(...)``)
land on that object's buffers.  Two facts the engine adds itself were built on a literal
``self`` location instead, the one ``self`` has only where the method is an entry point:
the buffers a CUDA graph bound at capture and reads at replay, and the resets of a buffer
registry's ``fill_from``.  Reached through the model runner, the replay read (or the view's
slice) and the reset were on two different locations, and every reset of the EAGLE draft
runner and of the decode runner's registry went unseen (24 false alarms on SGLang's tree).
Written from scratch; the expected findings are reasoned in each test.
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

GRAPH_RUNNER = """\
import bisect

import torch
from dataclasses import dataclass


@dataclass
class ForwardBatch:
    batch_size: int
    seq_lens: torch.Tensor


class GraphRunner:
    def __init__(self, model, capture_bs, seq_len_fill_value):
        self.model = model
        self.capture_bs = sorted(capture_bs)
        self.seq_len_fill_value = seq_len_fill_value
        self.seq_lens = torch.full((self.capture_bs[-1],), seq_len_fill_value, dtype=torch.int64)
        self.graphs = {}

    def capture(self):
        for size in self.capture_bs:
            fb = ForwardBatch(batch_size=size, seq_lens=self.seq_lens[:size])
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.model.forward(fb)
            self.graphs[size] = graph

    def execute(self, forward_batch: ForwardBatch):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        if bs != raw_bs:
            {RESET}
        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        self.graphs[bs].replay()


class ModelRunner:
    def __init__(self, model, capture_bs):
        self.graph_runner = GraphRunner(model, capture_bs, 1)

    def forward(self, forward_batch: ForwardBatch):
        return self.graph_runner.execute(forward_batch)
"""

REGISTRY_RUNNER = """\
import bisect
from types import SimpleNamespace

import torch


class PaddingPolicy:
    ZERO = 0
    FILL_SENTINEL = 1
    FOREACH_COPY = 2


class GraphSlot:
    def __init__(self, name, buffer, axis="tokens", padding_policy=PaddingPolicy.FOREACH_COPY, pad_value=0):
        self.name = name
        self.buffer = buffer


class Registry:
    def __init__(self):
        self.slots = []

    def register_slot(self, slot):
        self.slots.append(slot)


class DecodeRunner:
    def __init__(self, backend, capture_bs, seq_len_fill_value):
        self.backend = backend
        self.capture_bs = sorted(capture_bs)
        self.seq_lens = torch.full((self.capture_bs[-1],), seq_len_fill_value, dtype=torch.int64)
        self.registry = Registry()
        self.registry.register_slot(
            GraphSlot("seq_lens", self.seq_lens, axis="bs",
                      padding_policy=PaddingPolicy.{POLICY}, pad_value=seq_len_fill_value))

    def load_batch(self, forward_batch):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        self.registry.fill_from(forward_batch, raw_bs=raw_bs, padded_bs=bs)
        view = SimpleNamespace(batch_size=bs, seq_lens=self.seq_lens[:bs])
        self.backend.init_forward_metadata_out_graph(view)


class ModelRunner:
    def __init__(self, backend, capture_bs):
        self.decode_runner = DecodeRunner(backend, capture_bs, 1)

    def forward(self, forward_batch):
        return self.decode_runner.load_batch(forward_batch)
"""


def _findings(tmp_path, text: str) -> list[tuple[int, str, tuple[int, ...]]]:
    p = tmp_path / "runner.py"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("sglang"))
    return [(f.line, f.field, tuple(s.line for s in f.trace)) for fs in res.values() if isinstance(fs, list)
            for f in fs]


def test_graph_bound_buffer_reset_by_a_runner_reached_through_the_model_runner(tmp_path):
    # `execute` is reached twice: as an entry point (self = the runner) and from
    # `ModelRunner.forward` (self = the model runner's `graph_runner`).  On both, the whole
    # `seq_lens` buffer is filled when `bs != raw_bs`, else rows [raw_bs:bs] are empty: the
    # replay (line 35) reads no stale row.  Before, the replay's read from the second path was
    # taken on the entry point's `self.seq_lens` location, which that path never wrote.
    assert _findings(tmp_path, GRAPH_RUNNER.replace("{RESET}", "self.seq_lens.fill_(self.seq_len_fill_value)")) == []


def test_without_the_reset_the_replay_is_reported_on_both_paths(tmp_path):
    found = _findings(tmp_path, GRAPH_RUNNER.replace("{RESET}", "pass"))
    assert {(line, field) for line, field, _ in found} == {(35, "seq_lens")}
    # the report names a path through the model runner or the runner's own entry point; the
    # sink is the replay either way
    assert all(trace[-1] == 35 for _, _, trace in found)


def test_registry_reset_of_a_runner_reached_through_the_model_runner(tmp_path):
    # FILL_SENTINEL: `fill_from` resets rows [raw_bs:bs] of the slot's buffer, `self.seq_lens`
    # of the runner that calls it, before the view (line 41) slices `[:bs]`.  Reached from
    # `ModelRunner.forward`, that runner is the model runner's `decode_runner`.
    assert _findings(tmp_path, REGISTRY_RUNNER.replace("{POLICY}", "FILL_SENTINEL")) == []


def test_a_registry_policy_that_keeps_the_tail_is_still_reported(tmp_path):
    # FOREACH_COPY copies the head and leaves rows [raw_bs:bs] as they were: the view's
    # `seq_lens[:bs]` (line 41) is reported
    found = _findings(tmp_path, REGISTRY_RUNNER.replace("{POLICY}", "FOREACH_COPY"))
    assert {(line, field) for line, field, _ in found} == {(41, "seq_lens")}
