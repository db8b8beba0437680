"""One object reached through two attribute paths: a field another object hands in.

SGLang's multi-step draft-extend runner (0.5.23) keeps one set of input buffers and hands it to
each per-step runner (`self.runners[step].init_buffers_and_capture(self.buffers)`, whose only
store of `self.buffers` is that parameter).  The composite's `prepare()` fills the shared
buffers through `self.buffers`; each step runner's graphs read them through its own
`self.buffers`.  The analysis names a buffer by its access path, so the two paths must meet:
`<holder>.runners[*].buffers` is `<holder>.buffers` when every call of the attaching method in
the project hands the holder's own field (`CallGraph.field_aliases`).  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

RUNNER = '''\
import torch


class ForwardBatch:
    def __init__(self, seq_lens, req_pool_indices, batch_size):
        self.seq_lens = seq_lens
        self.req_pool_indices = req_pool_indices
        self.batch_size = batch_size


class SharedBuffers:
    def __init__(self, max_bs: int) -> None:
        self.seq_lens = torch.ones((max_bs,), dtype=torch.int32)
        self.req_pool_indices = torch.zeros((max_bs,), dtype=torch.int64)


class StepRunner:
    def __init__(self, backend) -> None:
        self.backend = backend

    def init_buffers_and_capture(self, buffers: SharedBuffers) -> None:
        self.buffers = buffers

    def capture_one_shape(self, size: int, forward) -> None:
        bs = size
        forward_batch = ForwardBatch(
            seq_lens=self.buffers.seq_lens[:bs],
            req_pool_indices=self.buffers.req_pool_indices[:bs],
            batch_size=bs,
        )
        self.backend.capture_one(bs, lambda: forward(forward_batch))

    def replay(self, bs: int, forward_batch: ForwardBatch):
        return self.backend.replay(bs, forward_batch)


class CompositeRunner:
    def __init__(self, backend, capture_bs: list[int], num_steps: int) -> None:
        self.capture_bs = sorted(capture_bs)
        self.buffers = SharedBuffers(self.capture_bs[-1])
        self.other_buffers = SharedBuffers(self.capture_bs[-1])
        self.runners: list[StepRunner] = [StepRunner(backend) for _ in range(num_steps)]
        for step in range(num_steps):
            self.runners[step].init_buffers_and_capture({HANDED})

    def prepare(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        bs = min(b for b in self.capture_bs if b >= raw_bs)
        buffers = self.buffers
        buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        buffers.req_pool_indices[:raw_bs].copy_(forward_batch.req_pool_indices)
        buffers.seq_lens[raw_bs:bs].fill_(1)
        {RESET}
        self.raw_bs = raw_bs
        self.bs = bs

    def run(self, forward_batch: ForwardBatch, num_steps: int):
        self.prepare(forward_batch)
        out = None
        for step in range(num_steps):
            runner = self.runners[step]
            runner.raw_bs = self.raw_bs
            out = runner.replay(self.bs, forward_batch)
        return out
'''


def _found(tmp_path, reset: str, handed: str = "self.buffers") -> list[tuple[str, str]]:
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": reset, "HANDED": handed}, profile="sglang")
    return sorted((f.field, f.message.split("`")[1]) for f in got if f.code == "PAD001")


def test_a_reset_through_the_holder_meets_the_step_runners_read(tmp_path):
    # `prepare` resets rows [raw_bs:bs] of both shared buffers through `self.buffers`; the step
    # runner's graph reads `self.buffers.*[:bs]`, the same objects: nothing is stale
    assert _found(tmp_path, "buffers.req_pool_indices[raw_bs:bs].zero_()") == []


def test_a_missing_reset_is_reported_at_the_step_runners_replay(tmp_path):
    # without the `req_pool_indices` reset its rows [raw_bs:bs] keep an earlier step's indices
    # (the `seq_lens` reset still covers that buffer)
    assert _found(tmp_path, "pass") == [("req_pool_indices", "req_pool_indices[:bs]")]


def test_another_object_handed_in_is_no_alias(tmp_path):
    # the step runners are given `self.other_buffers`: the resets `prepare` makes through
    # `self.buffers` are not theirs, and the alias follows what is handed, so both buffers the
    # step runners read stay stale
    assert _found(tmp_path, "buffers.req_pool_indices[raw_bs:bs].zero_()", "self.other_buffers") == [
        ("req_pool_indices", "req_pool_indices[:bs]"), ("seq_lens", "seq_lens[:bs]")]


def test_a_call_handing_something_else_breaks_the_alias(tmp_path):
    # one call hands a fresh object: `buffers` is not always the holder's field, so no alias is
    # drawn and the step runners' buffers are their own (stale: nothing resets them)
    handed = "self.buffers if step else SharedBuffers(4)"
    assert _found(tmp_path, "buffers.req_pool_indices[raw_bs:bs].zero_()", handed) == [
        ("req_pool_indices", "req_pool_indices[:bs]"), ("seq_lens", "seq_lens[:bs]")]
