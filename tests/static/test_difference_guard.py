"""A reset guarded by the number of padding rows: ``num_padding = bs - raw_bs; if num_padding > 0:``.

A reset under ``if bs != raw_bs:`` (or ``bs > raw_bs``) counts on every path: where the test
fails there are no padding rows.  The same test written through the difference of the two
counts is the same guard.  Written from scratch (SGLang profile: ``raw_bs``/``bs`` are its
request pair; the replay view ``SimpleNamespace(...)`` handed to
``init_forward_metadata_out_graph`` is a sink).  Expected findings from reading each variant:
with the reset under a test that fails only where ``bs == raw_bs`` there are none; under a test
that also fails with padding rows (``> 1``), or a difference the function binds twice (which of
them the test reads is not known), the padding rows may stay stale on some path: one PAD001
``seq_lens`` at the view.
"""

from __future__ import annotations

import pytest


from .project_files import check_text

RUNNER = '''\
import bisect
from types import SimpleNamespace

import torch


class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros((max_bs,), dtype=torch.int32)
        self.capture_bs = [1, 2, 4, 8]

    def replay(self, forward_batch):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        {GUARD}
            self.seq_lens[raw_bs:].fill_(1)
        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        view = SimpleNamespace(seq_lens=self.seq_lens[:bs])
        self.attn_backend.init_forward_metadata_out_graph(view)
'''


def _check(tmp_path, guard: str) -> list[tuple[str, int, str]]:
    text = RUNNER.replace("{GUARD}", guard)
    out = check_text(tmp_path, text, "runner.py", "sglang")
    view = next(i for i, l in enumerate(text.splitlines(), 1) if "SimpleNamespace(seq_lens" in l)
    return [(f.code, f.line - view, f.field) for f in out]


@pytest.mark.parametrize("guard", [
    "if bs != raw_bs:",                                  # the plain guard, for reference
    "num_padding = bs - raw_bs\n        if num_padding > 0:",
    "num_padding = bs - raw_bs\n        if num_padding != 0:",
    "num_padding = bs - raw_bs\n        if 0 < num_padding:",
    "num_padding = bs - raw_bs\n        if num_padding:",
    # the difference the other way round: `!= 0` is `raw_bs != bs` either way
    "num_padding = raw_bs - bs\n        if num_padding != 0:",
])
def test_a_reset_guarded_by_the_padding_row_count_counts(tmp_path, guard):
    assert _check(tmp_path, guard) == []


@pytest.mark.parametrize("guard", [
    # one padding row (bs == raw_bs + 1) skips the reset
    "num_padding = bs - raw_bs\n        if num_padding > 1:",
    # bound twice: the test may read the other value
    "num_padding = bs - raw_bs\n        num_padding = forward_batch.extra\n        if num_padding > 0:",
    # a difference of something else than the pair
    "num_padding = bs - forward_batch.extra\n        if num_padding > 0:",
    # the other way round, `> 0` says raw_bs > bs: never true, no guard of the padding rows
    "num_padding = raw_bs - bs\n        if num_padding > 0:",
    # rebound by a `with` (not a plain assignment): which value the test reads is not known
    "num_padding = bs - raw_bs\n        with forward_batch.ctx() as num_padding:\n            pass\n"
    "        if num_padding > 0:",
])
def test_a_test_that_can_fail_with_padding_rows_is_no_guard(tmp_path, guard):
    assert _check(tmp_path, guard) == [("PAD001", 0, "seq_lens")]
