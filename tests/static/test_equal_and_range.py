"""Two more ways code says the padding rows are empty or written.

- A branch where the padded count equals its real one (``if num_reqs == num_reqs_padded:``, the
  else of ``!=``, ``if num_reqs_padded <= num_reqs:``) has no padding rows: a padded slice
  handed out there is all real rows.
- ``for i in range(num_reqs, num_reqs_padded): buf[i] = 0`` (or ``buf[i].fill_(0)``) writes
  every padding row, as ``buf[num_reqs:num_reqs_padded] = 0`` does.

Written from scratch.  Each runner writes ``self.seq_lens[:num_reqs]`` and hands out
``self.seq_lens[:num_reqs_padded]``; expected findings from reading each variant are in the
parameters: ``[]`` where every path resets the padding rows or has none, one PAD001
``seq_lens`` where some path hands out stale rows.
"""

from __future__ import annotations

import pytest


from .project_files import check_text

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n: int) -> None:
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
{BODY}
'''
META = "CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)"


def _check(tmp_path, body: str):
    text = RUNNER.replace("{BODY}", body)
    out = check_text(tmp_path, text, "runner.py", "vllm")
    return [(f.code, f.field) for f in out]


STALE = [("PAD001", "seq_lens")]


@pytest.mark.parametrize("body, expected", [
    # the early return has no padding rows; the other path resets them
    (f"        if num_reqs == num_reqs_padded:\n            return {META}\n"
     f"        self.seq_lens[num_reqs:num_reqs_padded] = 0\n        return {META}", []),
    (f"        if num_reqs_padded != num_reqs:\n            self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
     f"            return {META}\n        return {META}", []),
    (f"        if num_reqs_padded <= num_reqs:\n            return {META}\n"
     f"        self.seq_lens[num_reqs:num_reqs_padded] = 0\n        return {META}", []),
    # the branch that hands out the padded slice is the one with padding rows: reported
    (f"        if num_reqs != num_reqs_padded:\n            return {META}\n"
     f"        return {META}", STALE),
    # `<` says nothing about equality on its then-branch
    (f"        if num_reqs < num_reqs_padded:\n            return {META}\n"
     f"        self.seq_lens[num_reqs:num_reqs_padded] = 0\n        return {META}", STALE),
])
def test_a_branch_where_the_counts_are_equal_has_no_padding_rows(tmp_path, body, expected):
    assert _check(tmp_path, body) == expected


@pytest.mark.parametrize("body, expected", [
    (f"        for i in range(num_reqs, num_reqs_padded):\n            self.seq_lens[i] = 0\n        return {META}", []),
    (f"        for i in range(num_reqs, num_reqs_padded):\n            self.seq_lens[i].fill_(0)\n        return {META}", []),
    # from the wrong row on: row num_reqs is not written
    (f"        for i in range(num_reqs + 1, num_reqs_padded):\n            self.seq_lens[i] = 0\n        return {META}",
     STALE),
    # the write is conditional inside the loop
    (f"        for i in range(num_reqs, num_reqs_padded):\n            if so.flag:\n                self.seq_lens[i] = 0\n"
     f"        return {META}", STALE),
    # another row than the loop's
    (f"        for i in range(num_reqs, num_reqs_padded):\n            self.seq_lens[0] = 0\n        return {META}", STALE),
])
def test_a_loop_over_the_padding_rows_writing_each_resets_them(tmp_path, body, expected):
    assert _check(tmp_path, body) == expected
