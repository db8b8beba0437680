"""Masks built from row numbers, and function forms of in-place fills.

A mask compared from a range of row numbers, ``torch.arange(num_reqs_padded) < num_reqs``, is
True on the real rows and False on the padding rows (``>=`` the reverse); so is a slice of a
persistent ``arange`` buffer nothing writes (``self.arange_rows[:num_reqs_padded] >= num_reqs``).
Through it the padding rows get a known value: ``torch.where(mask, x, 0)`` holds 0 there,
``x.masked_fill_(arange >= R, 0)`` writes 0 into rows ``[R:P]`` of ``x`` as ``x[R:P] = 0`` would,
``x & mask`` is False there.  ``x.index_fill_(0, torch.arange(R, P), v)`` writes rows ``[R:P]``,
and ``torch.zero_(x)``, ``torch.fill_(x, v)``, ``torch.nn.init.zeros_(x)`` / ``constant_(x, v)``
are ``x.zero_()`` / ``x.fill_(v)``.

Written from scratch: each runner writes ``self.seq_lens[:num_reqs]`` and hands out a value of
``self.seq_lens[:num_reqs_padded]``; expected findings from reading each variant: none where the
padding rows get a literal through the mask or the fill, one PAD001 ``seq_lens`` where the mask
covers the wrong rows (or none).
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
        self.arange_rows = torch.arange(n)

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
        sl = self.seq_lens[:num_reqs_padded]
{BODY}
        return CommonAttentionMetadata(seq_lens=sl, num_reqs=num_reqs_padded)
'''
STALE = [("PAD001", "seq_lens")]


@pytest.mark.parametrize("body, expected", [
    ("        sl = torch.where(torch.arange(num_reqs_padded) < num_reqs, sl, 0)", []),
    ("        valid = torch.arange(num_reqs_padded, device=sl.device) < num_reqs\n"
     "        sl = torch.where(valid, sl, 0)", []),
    ("        sl = torch.where(num_reqs > torch.arange(num_reqs_padded), sl, 0)", []),
    ("        sl = torch.where(torch.arange(num_reqs_padded) >= num_reqs, 0, sl)", []),
    ("        sl.masked_fill_(torch.arange(num_reqs_padded) >= num_reqs, 0)", []),
    ("        sl.masked_fill_(self.arange_rows[:num_reqs_padded] >= num_reqs, 0)", []),
    ("        sl = sl.masked_fill(torch.arange(num_reqs_padded) >= num_reqs, 0)", []),
    ("        self.seq_lens.index_fill_(0, torch.arange(num_reqs, num_reqs_padded), 0)", []),
    ("        torch.zero_(self.seq_lens[num_reqs:num_reqs_padded])", []),
    ("        torch.fill_(self.seq_lens[num_reqs:num_reqs_padded], 0)", []),
    ("        torch.nn.init.zeros_(self.seq_lens[num_reqs:num_reqs_padded])", []),
    # the wrong rows: the mask is True on every row, or True on the padding rows for `where`
    ("        sl = torch.where(torch.arange(num_reqs_padded) < num_reqs_padded, sl, 0)", STALE),
    ("        sl = torch.where(torch.arange(num_reqs_padded) >= num_reqs, sl, 0)", STALE),
    ("        sl.masked_fill_(torch.arange(num_reqs_padded) < num_reqs, 0)", STALE),
    # `<=` keeps row num_reqs on the real side: not every padding row
    ("        sl = torch.where(torch.arange(num_reqs_padded) <= num_reqs, sl, 0)", STALE),
    ("        self.seq_lens.index_fill_(0, torch.arange(num_reqs + 1, num_reqs_padded), 0)", STALE),
    ("        torch.zero_(self.seq_lens[num_reqs + 1:num_reqs_padded])", STALE),
    ("        pass", STALE),
])
def test_padding_rows_through_a_range_mask_or_a_fill_function(tmp_path, body, expected):
    text = RUNNER.replace("{BODY}", body)
    assert [(f.code, f.field) for f in check_text(tmp_path, text) if f.code == "PAD001"] == expected


def test_an_arange_buffer_something_writes_is_no_range(tmp_path):
    # a write into the arange buffer makes its rows unknown: its slice is no range of row numbers
    body = ("        self.arange_rows[:num_reqs] = so.order\n"
            "        sl.masked_fill_(self.arange_rows[:num_reqs_padded] >= num_reqs, 0)")
    text = RUNNER.replace("{BODY}", body)
    assert [(f.code, f.field) for f in check_text(tmp_path, text) if f.code == "PAD001"] == STALE
