"""PAD003: a vacated row reset through a local view of it (``row = self.mask[last]; row.fill_(False)``).

``InputBatch.condense`` copies row ``last_req_index`` of ``allowed_mask`` into the hole; admission
writes the mask row only for requests with allowed token ids, so the old row must be cleared.
Written from scratch.  Expected findings from reading each variant: a clear of every element of
the row through a view bound once to it leaves none; without it, one PAD003 at the copy (line
16); a view written only in part is no reset (the finding stays).  (A view that is also read
before it is cleared is not taken as a reset view: a known gap, left to the finding.)
"""

from __future__ import annotations

import pytest


from .project_files import check_text

BATCH = '''\
import torch


class InputBatch:
    def __init__(self, max_num_reqs, vocab_size):
        self.allowed_mask = torch.zeros(max_num_reqs, vocab_size, dtype=torch.bool)
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def add_request(self, req_index, params):
        self.seq_lens[req_index] = params.num_tokens
        if params.allowed_token_ids:
            self.allowed_mask[req_index] = True

    def condense(self, empty_index, last_req_index):
        self.seq_lens[empty_index] = self.seq_lens[last_req_index]
        self.allowed_mask[empty_index] = self.allowed_mask[last_req_index]
        {RESET}
'''


def _pad003(tmp_path, reset: str) -> list[int]:
    text = BATCH.replace("{RESET}", reset)
    out = check_text(tmp_path, text, "input_batch.py", "vllm")
    return [f.line for f in out if f.code == "PAD003"]


@pytest.mark.parametrize("reset", [
    "self.allowed_mask[last_req_index].fill_(False)",           # the direct form, for reference
    "row = self.allowed_mask[last_req_index]\n        row.fill_(False)",
    "row = self.allowed_mask[last_req_index]\n        row.zero_()",
    "row = self.allowed_mask[last_req_index]\n        row[:] = False",
    "row = self.allowed_mask[last_req_index]\n        row[...] = False",
])
def test_the_vacated_row_cleared_through_a_view_is_no_finding(tmp_path, reset):
    assert _pad003(tmp_path, reset) == []


@pytest.mark.parametrize("reset", [
    "pass",
    # only the first columns cleared
    "row = self.allowed_mask[last_req_index]\n        row[:5] = False",
    # the view bound and never written
    "row = self.allowed_mask[last_req_index]",
    # a masked write of the view writes only where the mask is set
    "row = self.allowed_mask[last_req_index]\n        row.masked_fill_(so_mask, False)",
])
def test_a_view_that_does_not_only_clear_the_row_leaves_the_finding(tmp_path, reset):
    assert 16 in _pad003(tmp_path, reset)
