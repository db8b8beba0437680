"""Views in forms other than a slice: ``narrow``, and an element of a list or tuple literal.

``x.narrow(dim, start, length)`` and ``torch.narrow(x, dim, start, length)``
are the rows ``[start:start + length]`` of ``x`` along ``dim``.

They were taken as the whole buffer (``narrow`` sat with ``view`` and ``reshape``): a reset of
part of the padding rows through ``narrow`` counted as a reset of all of them (a missed bug),
the real rows handed out through ``narrow(0, 0, num_reqs)`` were the whole buffer (a false alarm),
and the function form was not a view at all (a padded view handed to a sink was missed).
SGLang narrows real-count prefixes this way (``a.narrow(0, 0, real_num_tokens)``).

An element of a list or tuple literal (``parts = [buf[:P], P]``, then ``parts[0]``) was an
unknown value where it was indexed: a padded slice handed to a sink that way was missed.

Written from scratch, on the runner of ``test_tail_views.py``: rows ``[:num_reqs]`` of
``self.seq_lens`` are written, ``self.seq_lens[:num_reqs_padded]`` goes to
``CommonAttentionMetadata``; the expected findings come from which rows each variant writes
or hands out.
"""

from __future__ import annotations

import pytest

from .project_files import check_text
from .test_tail_views import RUNNER, STALE, _findings

SINK = "            seq_lens=self.seq_lens[:num_reqs_padded],"


@pytest.mark.parametrize("reset", [
    # rows [num_reqs:num_reqs + (num_reqs_padded - num_reqs)] = [num_reqs:num_reqs_padded]
    "self.seq_lens.narrow(0, num_reqs, num_reqs_padded - num_reqs).zero_()",
    "torch.narrow(self.seq_lens, 0, num_reqs, num_reqs_padded - num_reqs).fill_(0)",
    "self.seq_lens.narrow(dim=0, start=num_reqs, length=num_reqs_padded - num_reqs).zero_()",
    "tail = self.seq_lens.narrow(0, num_reqs, num_reqs_padded - num_reqs)\n        tail.zero_()",
])
def test_a_reset_through_narrow_of_the_padding_rows_counts(tmp_path, reset):
    assert _findings(tmp_path, reset) == []


@pytest.mark.parametrize("reset", [
    # starts one row late: row num_reqs keeps its old value
    "self.seq_lens.narrow(0, num_reqs + 1, num_reqs_padded - num_reqs - 1).zero_()",
    # three rows from num_reqs + 1: nothing says they cover the padding rows
    "self.seq_lens.narrow(0, num_reqs + 1, 3).zero_()",
    # a length the analysis cannot bound: not a reset of the padding rows
    "self.seq_lens.narrow(0, num_reqs, scheduler_output.k).zero_()",
])
def test_narrow_of_part_of_the_padding_rows_leaves_the_finding(tmp_path, reset):
    assert _findings(tmp_path, reset) == STALE


def _sink(tmp_path, view: str):
    text = RUNNER.replace("{HELPERS}", "").replace("{RESET}", "pass")
    assert SINK in text
    text = text.replace(SINK, f"            seq_lens={view},")
    line = text.splitlines().index(f"            seq_lens={view},") + 1
    return [(f.code, f.line == line, f.field) for f in check_text(tmp_path, text, "runner.py", "vllm")]


@pytest.mark.parametrize("view", [
    "self.seq_lens.narrow(0, 0, num_reqs_padded)",
    "torch.narrow(self.seq_lens, 0, 0, num_reqs_padded)",
    "self.seq_lens.narrow(dim=0, start=0, length=num_reqs_padded)",
])
def test_a_padded_narrow_view_is_a_padded_slice(tmp_path, view):
    assert _sink(tmp_path, view) == [("PAD001", True, "seq_lens")]


def test_a_narrow_view_of_the_real_rows_has_no_padding_rows(tmp_path):
    # rows [0:num_reqs], all written by this step
    assert _sink(tmp_path, "self.seq_lens.narrow(0, 0, num_reqs)") == []


@pytest.mark.parametrize("setup, view, expected", [
    # a list literal holding the padded slice: its element 0 is that slice
    ("parts = [self.seq_lens[:num_reqs_padded], num_reqs_padded]", "parts[0]", [("PAD001", True, "seq_lens")]),
    ("parts = (num_reqs_padded, self.seq_lens[:num_reqs_padded])", "parts[-1]", [("PAD001", True, "seq_lens")]),
    # element 1 is the count, element 0 the real rows: no padding rows at the sink
    ("parts = [self.seq_lens[:num_reqs], num_reqs_padded]", "parts[0]", []),
])
def test_an_element_of_a_list_literal_is_that_element(tmp_path, setup, view, expected):
    text = RUNNER.replace("{HELPERS}", "").replace("{RESET}", setup)
    text = text.replace(SINK, f"            seq_lens={view},")
    line = text.splitlines().index(f"            seq_lens={view},") + 1
    got = [(f.code, f.line == line, f.field) for f in check_text(tmp_path, text, "runner.py", "vllm")]
    assert got == expected
