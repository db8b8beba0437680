"""``x.masked_fill_(m, v)`` with a padding mask ``m`` resets the padding rows of ``x`` (issue 8:
"a mask that is False on padding rows ... makes those rows neutral").

The shape is vLLM 0.33.0 Model Runner V2's ``PCPManager.partition_batch``
(``v1/worker/gpu/pcp_manager.py``): ``is_padding = buf[:P]``, ``is_padding[:R].fill_(False)``,
``is_padding[R:].fill_(True)``, then ``input_ids[:P].masked_fill_(is_padding, 0)`` and the same
for ``positions``.  The in-place call was opaque (not trusted to reset), so once the local count
R was known the padding rows looked stale.  Written from scratch; expected findings reasoned in
each test.
"""

from __future__ import annotations

import pytest

from .project_files import check_files

MODULE = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    positions: torch.Tensor
    num_reqs: int


class Runner:
    def __init__(self, n):
        self.positions = torch.zeros(n, dtype=torch.int64)
        self.is_padding = torch.zeros(n, dtype=torch.bool)

    def execute_model(self, pos, num_tokens, num_tokens_padded):
        positions = self.positions[:num_tokens_padded]
        positions[:num_tokens].copy_(pos)
        is_padding = self.is_padding[:num_tokens_padded]
        is_padding[:num_tokens].fill_(False)
        {TRUE}
        {MASKED}
        return CommonAttentionMetadata(positions=positions, num_reqs=num_tokens_padded)
'''
SET_TRUE = "is_padding[num_tokens:].fill_(True)"


def _findings(tmp_path, masked: str, true: str = SET_TRUE):
    found = check_files(tmp_path, {"runner.py": MODULE}, ["runner.py"], {"MASKED": masked, "TRUE": true})
    return [(f.line, f.field) for f in found]


def test_without_the_masked_fill_the_padding_rows_are_stale(tmp_path):
    # rows [num_tokens:num_tokens_padded] of positions were not written: line 23
    assert _findings(tmp_path, "pass") == [(23, "positions")]


@pytest.mark.parametrize("masked", ["positions.masked_fill_(is_padding, 0)",
                                    "self.positions[:num_tokens_padded].masked_fill_(is_padding, 0)"])
def test_a_padding_mask_resets_the_padding_rows(tmp_path, masked):
    # the mask is True exactly on rows [num_tokens:num_tokens_padded] of a view of the same
    # extent: those rows of positions become 0
    assert _findings(tmp_path, masked) == []


def test_a_mask_of_another_extent_is_not_a_reset(tmp_path):
    # a view of the mask to another count: which rows of positions it covers is not known
    assert _findings(tmp_path, "positions.masked_fill_(self.is_padding[:num_tokens], 0)") == [(23, "positions")]


def test_a_mask_whose_padding_rows_were_not_set_is_not_a_reset(tmp_path):
    # the deletion the mutation test makes (pcp_manager.py's `is_padding[num_local_tokens:].fill_(True)`):
    # the mask's padding rows hold an earlier step's values, so the masked fill resets nothing known
    assert _findings(tmp_path, "positions.masked_fill_(is_padding, 0)", true="pass") == [(23, "positions")]
