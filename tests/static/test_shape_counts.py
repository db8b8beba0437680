"""Counts read off a view's shape (issue 8: counts as relations, "what the code says").

The shape is vLLM 0.33.0's short-conv builder (``short_conv_attn.py``): a padded view of one
persistent buffer is taken first (``state_indices_d``), and the padding rows of another buffer
are reset up to that view's length (``num_decode_rows = state_indices_d.numel()``;
``buf[num_decodes:num_decode_rows].fill_(False)``).  The length of a view whose rows are
bounded by a known count is that count, so the reset covers the padding rows of a slice taken
to the padded count.  Each module below is a few lines, written from scratch; the expected
findings are reasoned in each test.
"""

from __future__ import annotations

import pytest

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

MODULE = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    state_indices: torch.Tensor


class Builder:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)
        self.state_indices = torch.zeros((n, 4), dtype=torch.int32)

    def build(self, lens, n_real, n_pad):
        self.state_indices[:n_pad] = 0
        idx = self.state_indices[:n_pad]
        rows = {ROWS}
        self.seq_lens[:n_real] = lens
        {RESET}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad], state_indices=idx)
'''


def _findings(tmp_path, rows: str, reset: str = "self.seq_lens[n_real:rows] = 0"):
    p = tmp_path / "mod.py"
    p.write_text(MODULE.replace("{ROWS}", rows).replace("{RESET}", reset), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("vllm"))
    return [(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs]


@pytest.mark.parametrize("rows", ["idx.shape[0]", "idx.size(0)", "idx.size()[0]", "len(idx)", "idx.numel()"])
def test_the_length_of_a_padded_view_is_its_padded_count(tmp_path, rows):
    # `idx` is rows [:n_pad]; `rows` is n_pad, so `seq_lens[n_real:rows] = 0` resets the padding
    # rows [n_real:n_pad] of the slice handed to the metadata: quiet
    assert _findings(tmp_path, rows) == []


def test_without_the_reset_the_tail_is_reported(tmp_path):
    # the same module without the reset: rows [n_real:n_pad] of `seq_lens[:n_pad]` are stale
    # (line 22: the metadata constructor), so the quiet test above is quiet for its reset
    assert _findings(tmp_path, "idx.shape[0]", reset="pass") == [(22, "seq_lens")]


@pytest.mark.parametrize("rows", ["idx.shape[1]", "idx.size(1)", "len(lens)", "lens.shape[0]"])
def test_another_dimension_or_an_unknown_view_is_no_count(tmp_path, rows):
    # `idx.shape[1]` is the width (4), not the rows; `lens` is a parameter of unknown extent:
    # the reset's upper bound is unknown, so it is not known to cover [n_real:n_pad]
    assert _findings(tmp_path, rows) == [(22, "seq_lens")]


def test_a_view_of_different_lengths_on_two_paths_is_no_count(tmp_path):
    # on one path `idx` has n_pad rows, on the other n_real: its length is not one count
    p = tmp_path / "mod.py"
    text = MODULE.replace("{ROWS}", "idx.shape[0]").replace("{RESET}", "self.seq_lens[n_real:rows] = 0")
    text = text.replace("        idx = self.state_indices[:n_pad]\n",
                        "        idx = self.state_indices[:n_pad]\n"
                        "        if lens is None:\n"
                        "            idx = self.state_indices[:n_real]\n")
    p.write_text(text, encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("vllm"))
    found = [(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs]
    # (the `[:n_real]` path of `idx` itself is judged on its own; only `seq_lens` is asked here)
    assert [x for x in found if x[1] == "seq_lens"] == [(24, "seq_lens")]
