"""Views in forms other than a slice: ``narrow``, and an element of a tuple literal.

``x.narrow(dim, start, length)`` and ``torch.narrow(x, dim, start, length)``
are the rows ``[start:start + length]`` of ``x`` along ``dim``.

They were taken as the whole buffer (``narrow`` sat with ``view`` and ``reshape``): a reset of
part of the padding rows through ``narrow`` counted as a reset of all of them (a missed bug),
the real rows handed out through ``narrow(0, 0, num_reqs)`` were the whole buffer (a false alarm),
and the function form was not a view at all (a padded view handed to a sink was missed).
SGLang narrows real-count prefixes this way (``a.narrow(0, 0, real_num_tokens)``).

An element of a tuple literal (``parts = (buf[:P], P)``, then ``parts[0]``) was an unknown value
where it was indexed: a padded slice handed to a sink that way was missed.  A list's elements stay
unknown (it may change after its literal).

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


def _sink(tmp_path, view: str, setup: str = "pass"):
    """(code, at the sink's line, field) of each finding, with ``view`` handed to the sink as
    ``seq_lens`` after the statements ``setup``."""
    text = RUNNER.replace("{HELPERS}", "").replace("{RESET}", setup)
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
    # a tuple holding the padded slice: its element 0 (or -1) is that slice
    ("parts = (self.seq_lens[:num_reqs_padded], num_reqs_padded)", "parts[0]", [("PAD001", True, "seq_lens")]),
    ("parts = (num_reqs_padded, self.seq_lens[:num_reqs_padded])", "parts[-1]", [("PAD001", True, "seq_lens")]),
    # element 0 is the real rows: no padding rows at the sink
    ("parts = (self.seq_lens[:num_reqs], num_reqs_padded)", "parts[0]", []),
    # out of range, or a position a starred element shifts: not known (no finding either way)
    ("parts = (self.seq_lens[:num_reqs_padded],)", "parts[1]", []),
    ("parts = (*scheduler_output.views, self.seq_lens[:num_reqs_padded])", "parts[1]", []),
    # a list may change after its literal: its elements are not known
    ("parts = [self.seq_lens[:num_reqs_padded]]\n        parts[0] = self.seq_lens[:num_reqs]", "parts[0]", []),
    ("parts = [self.seq_lens[:num_reqs_padded], self.seq_lens[:num_reqs]]\n        parts.reverse()",
     "parts[0]", []),
    # tuples of different lengths on two paths: which position holds what depends on the path,
    # in either order of the branches
    ("if scheduler_output.flag:\n            parts = (self.seq_lens[:num_reqs],)\n        else:\n"
     "            parts = (self.seq_lens[:num_reqs_padded], 1)", "parts[0]", []),
    ("if scheduler_output.flag:\n            parts = (self.seq_lens[:num_reqs_padded], 1)\n        else:\n"
     "            parts = (self.seq_lens[:num_reqs],)", "parts[0]", []),
])
def test_an_element_of_a_tuple_literal_is_that_element(tmp_path, setup, view, expected):
    assert _sink(tmp_path, view, setup) == expected


@pytest.mark.parametrize("view", [
    # the padded rows stay the rows of the view when another dimension is narrowed or sliced
    "self.seq_lens[:num_reqs_padded].narrow(1, 0, 4)",
    "self.seq_lens.narrow(0, 0, num_reqs_padded).narrow(1, 0, 4)",
    "self.seq_lens[:num_reqs_padded][:, :4]",
])
def test_a_bound_in_another_dimension_keeps_the_padded_rows(tmp_path, view):
    assert _sink(tmp_path, view) == [("PAD001", True, "seq_lens")]


def test_a_narrow_view_is_named_as_a_slice_and_gets_the_fix(tmp_path):
    # the finding is the slice form's, message and fix: the narrow call is named as the slice it is
    # (before, the message named the call as the buffer and no fix was proposed)
    base = RUNNER.replace("{HELPERS}", "").replace("{RESET}", "pass")
    (want,) = check_text(tmp_path / "a", base, "runner.py", "vllm")
    text = base.replace(SINK, "            seq_lens=self.seq_lens.narrow(0, 0, num_reqs_padded),")
    (f,) = check_text(tmp_path / "b", text, "runner.py", "vllm")
    assert f.message == want.message
    assert f.fix is not None and f.fix.text == "self.seq_lens[num_reqs:num_reqs_padded] = 0"
