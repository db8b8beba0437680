"""A replay whose sizes are fields of the runner, and graph inputs taken by a capture helper.

SGLang's decode runner (0.5.14 on) takes the views its graphs bind in ``capture_prepare(bs)``, a
method the per-shape capture calls with its size, and replays with
``self.backend.replay(key, forward_batch)`` after ``self.load_batch(forward_batch)``, which
computes ``bs`` / ``raw_bs`` and stores them on the runner (``self.bs = bs``).  The replay's
frame names neither count: they are fields of ``self`` the path to the replay stored.  A
``load_batch`` may also return early when an earlier call ("pre-planned", on another stream)
already prepared the batch: that way out stores no size and fills nothing, and stands for the
earlier call.  The module below is written from scratch in that shape; ``{RESET}`` is where the
padding resets go, ``{PLANNED}`` an optional early return.
"""

from __future__ import annotations

from .project_files import check_files

RUNNER = '''\
import bisect

import torch


class ForwardBatch:
    def __init__(self, input_ids, seq_lens, req_pool_indices, batch_size):
        self.input_ids = input_ids
        self.seq_lens = seq_lens
        self.req_pool_indices = req_pool_indices
        self.batch_size = batch_size


class DecodeInputBuffers:
    def __init__(self, max_bs: int, max_num_token: int) -> None:
        self.input_ids = torch.zeros((max_num_token,), dtype=torch.int64)
        self.seq_lens = torch.ones((max_bs,), dtype=torch.int32)
        self.req_pool_indices = torch.zeros((max_bs,), dtype=torch.int64)


class DecodeGraphRunner:
    def __init__(self, capture_bs: list[int], tokens_per_bs: int, backend) -> None:
        self.capture_bs = sorted(capture_bs)
        self.captured_req_width = tokens_per_bs
        self.backend = backend
        self.buffers = DecodeInputBuffers(self.capture_bs[-1], self.capture_bs[-1] * tokens_per_bs)

    def capture_prepare(self, size: int):
        bs = size
        num_tokens = bs * self.captured_req_width
        buffers = self.buffers
        return ForwardBatch(
            input_ids=buffers.input_ids[:num_tokens],
            seq_lens=buffers.seq_lens[:bs],
            req_pool_indices=buffers.req_pool_indices[:bs],
            batch_size=bs,
        )

    def capture_one_shape(self, size: int, forward) -> None:
        forward_batch = self.capture_prepare(size)
        self.backend.capture(size, lambda: forward(forward_batch))

    def load_batch(self, forward_batch: ForwardBatch) -> None:
        {PLANNED}
        raw_bs = forward_batch.batch_size
        raw_num_token = raw_bs * self.captured_req_width
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        buffers = self.buffers
        buffers.input_ids[:raw_num_token].copy_(forward_batch.input_ids)
        buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        buffers.req_pool_indices[:raw_bs].copy_(forward_batch.req_pool_indices)
        {RESET}
        self.raw_bs = raw_bs
        self.raw_num_token = raw_num_token
        self.bs = bs

    def execute(self, forward_batch: ForwardBatch):
        self.load_batch(forward_batch)
        return self.backend.replay(self.bs, forward_batch)
'''

RESETS = ("buffers.input_ids[raw_num_token:bs * self.captured_req_width].zero_(); "
          "buffers.seq_lens[raw_bs:bs].fill_(1); buffers.req_pool_indices[raw_bs:bs].zero_()")
PLANNED = ("if forward_batch.pre_planned:\n"
           "            self.buffers.input_ids[: self.raw_num_token].copy_(forward_batch.input_ids)\n"
           "            return")


def _replay_line(planned: str = "pass") -> int:
    """The line of the replay call in RUNNER with ``planned`` substituted."""
    text = RUNNER.replace("{PLANNED}", planned)
    return next(i for i, ln in enumerate(text.splitlines(), 1) if "self.backend.replay(self.bs" in ln)


def _found(tmp_path, reset: str = "pass", planned: str = "pass") -> list[tuple[int, str, str]]:
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": reset, "PLANNED": planned}, profile="sglang")
    return sorted((f.line, f.field, f.message) for f in got if f.code == "PAD001")


def test_the_views_a_capture_helper_takes_are_read_at_the_replay_of_held_sizes(tmp_path):
    # `load_batch` writes rows [:raw_bs] (and [:raw_num_token]) and resets nothing; the graph of
    # size `self.bs` reads rows [:self.bs] of the request buffers and [:self.bs * w] of the token
    # buffer (the capture's `num_tokens = bs * self.captured_req_width`, in the replay's terms)
    found = _found(tmp_path)
    line = _replay_line()
    assert [(ln, field) for ln, field, _ in found] == [(line, "input_ids"), (line, "req_pool_indices"),
                                                      (line, "seq_lens")]
    messages = {field: m for _, field, m in found}
    assert "rows [raw_bs:bs]" in messages["req_pool_indices"]
    assert "`req_pool_indices[:self.bs]`" in messages["req_pool_indices"]
    assert "rows [raw_bs*self.captured_req_width:self.bs * self.captured_req_width]" in messages["input_ids"]


def test_resets_in_the_method_that_stores_the_sizes_cover_them(tmp_path):
    assert _found(tmp_path, RESETS) == []


def test_a_pre_planned_early_return_stands_for_the_call_that_prepared(tmp_path):
    # the early return stores no size and writes only the real input ids: it relies on an
    # earlier call for the same batch, which took the preparing way; the replay is judged on
    # that way (still stale without the resets, clean with them)
    line = _replay_line(PLANNED)
    assert [(ln, field) for ln, field, _ in _found(tmp_path, planned=PLANNED)] == [
        (line, "input_ids"), (line, "req_pool_indices"), (line, "seq_lens")]
    assert _found(tmp_path, RESETS, PLANNED) == []


def test_a_size_stored_on_some_paths_only_is_not_the_replays(tmp_path):
    # here the way that stores no size is not an early return of the preparing method: the
    # replaying method itself decides (`if ...: self.load_batch(fb)`), so on the other way
    # `self.bs` holds whatever an earlier step left, and the buffers too: no size to judge by
    runner = RUNNER.replace("        self.load_batch(forward_batch)\n",
                            "        if forward_batch.needs_load:\n            self.load_batch(forward_batch)\n")
    files = {"pkg/__init__.py": "", "pkg/runner.py": runner}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": "pass", "PLANNED": "pass"}, profile="sglang")
    assert [f for f in got if f.code == "PAD001"] == []


def test_a_local_size_bound_on_one_branch_only_is_not_the_replays(tmp_path):
    # `bs` is bound only where the batch is loaded here; the other branch replays what an
    # earlier call prepared, with the size it stored.  A count the engine picks from the names
    # in scope must be bound on every path to the replay.
    runner = RUNNER.replace(
        "    def execute(self, forward_batch: ForwardBatch):\n"
        "        self.load_batch(forward_batch)\n"
        "        return self.backend.replay(self.bs, forward_batch)\n",
        "    def execute(self, forward_batch: ForwardBatch):\n"
        "        if forward_batch.planned:\n"
        "            self.buffers.input_ids[: self.raw_num_token].copy_(forward_batch.input_ids)\n"
        "        else:\n"
        "            raw_bs = forward_batch.batch_size\n"
        "            bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]\n"
        "            self.buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)\n"
        "        return self.backend.replay(0, forward_batch)\n")
    files = {"pkg/__init__.py": "", "pkg/runner.py": runner}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": "pass", "PLANNED": "pass"}, profile="sglang")
    assert [f for f in got if f.code == "PAD001"] == []
