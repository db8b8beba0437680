"""Resets through a view of the padding rows held by a name, and prefix writes that name the
real rows of a padded count of another pair.

Engines reset padding rows through a view taken first: SGLang's ``GraphSlot.reset_padding``
does ``tail = self.buffer[raw_n:padded_n]`` and then ``tail.fill_(self.pad_value)`` or
``tail.zero_()``; helpers are handed ``buf[n:p]`` and call ``t.zero_()`` on it.  A slice that
does not start at row 0 used to be an unknown value, so those resets were lost and the padded
slice was reported although its padding rows were reset (a false alarm, and a deletion of the
reset went unnoticed because nothing changed).

Written from scratch.  Every case is one runner that writes the real rows
``self.seq_lens[:num_reqs]`` (``num_reqs``/``num_reqs_padded``: the vLLM profile's request pair)
and hands ``self.seq_lens[:num_reqs_padded]`` to ``CommonAttentionMetadata``.  The expected
findings come from reading each variant: with no statement writing rows
``[num_reqs:num_reqs_padded]`` there is one PAD001 ``seq_lens`` at that keyword; a statement that
writes all of them (through whatever view) leaves none; one that writes only part of them
(from ``num_reqs + 1``) or copies stale rows in (``self.other``, which ``update`` writes at
other steps) leaves the finding.
"""

from __future__ import annotations

import pytest

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

from .project_files import check_text

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata
{HELPERS}

class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.other = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = torch.as_tensor(scheduler_output.seq_lens)
        {RESET}
        return CommonAttentionMetadata(
            seq_lens=self.seq_lens[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )

    def update(self, x):
        self.other.copy_(x)
'''


def _findings(tmp_path, reset: str, helpers: str = "") -> list[tuple[str, str, str]]:
    """(code, where, field) of each finding; ``where`` is "sink" for the line of
    ``seq_lens=self.seq_lens[:num_reqs_padded]`` (helpers and resets move it down)."""
    text = RUNNER.replace("{HELPERS}", helpers).replace("{RESET}", reset)
    sink = text.splitlines().index("            seq_lens=self.seq_lens[:num_reqs_padded],") + 1
    out = check_text(tmp_path, text, "runner.py", "vllm")
    return [(f.code, "sink" if f.line == sink else str(f.line), f.field) for f in out]


STALE = [("PAD001", "sink", "seq_lens")]


def test_without_a_reset_the_padded_slice_is_reported(tmp_path):
    assert _findings(tmp_path, "pass") == STALE


@pytest.mark.parametrize("reset", [
    # a name holding the padding rows, then a fill method on it
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail.zero_()",
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail.fill_(0)",
    # open-ended: rows from num_reqs to the end of the buffer, the padding rows among them
    "tail = self.seq_lens[num_reqs:]\n        tail.fill_(0)",
    # a store of every element of the view
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail[:] = 0",
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail[...] = 0",
    # the SGLang registry's shape: the value depends on a setting, both branches write the rows
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n"
    "        if self.pad_value is not None:\n"
    "            tail.fill_(self.pad_value)\n"
    "        else:\n"
    "            tail.zero_()",
    # a copy of a clean tensor into the view
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail.copy_(torch.zeros_like(tail))",
])
def test_a_reset_through_a_view_of_the_padding_rows_counts(tmp_path, reset):
    assert _findings(tmp_path, reset) == []


@pytest.mark.parametrize("helpers, reset", [
    # a module function handed the view of the padding rows
    ("def _zero(t):\n    t.zero_()", "_zero(self.seq_lens[num_reqs:num_reqs_padded])"),
    # a name holding the view, handed to a helper with the value
    ("def _fill(t, v):\n    t.fill_(v)", "tail = self.seq_lens[num_reqs:]\n        _fill(tail, 0)"),
])
def test_a_helper_handed_the_padding_rows_resets_them(tmp_path, helpers, reset):
    assert _findings(tmp_path, reset, helpers) == []


@pytest.mark.parametrize("reset", [
    # row num_reqs is left out: the first padding row keeps its old value
    "tail = self.seq_lens[num_reqs + 1:num_reqs_padded]\n        tail.zero_()",
    # stale rows of another buffer copied in: not a reset
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail.copy_(self.other[num_reqs:num_reqs_padded])",
    # the same without a name: rows [num_reqs:num_reqs_padded] of `other` were never written
    "self.seq_lens[num_reqs:num_reqs_padded].copy_(self.other[num_reqs:num_reqs_padded])",
    # a store of another buffer's unreset rows (`update` writes it at other steps)
    "self.seq_lens[num_reqs:num_reqs_padded] = self.other[num_reqs:num_reqs_padded]",
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail[:] = self.other[num_reqs:num_reqs_padded]",
    # two views joined: on one path the view starts a row late
    "if scheduler_output.flag:\n            tail = self.seq_lens[num_reqs + 1:num_reqs_padded]\n"
    "        else:\n            tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail.zero_()",
    # a view of the padding rows only read (its sum), never written
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        total = tail.sum()",
])
def test_a_view_that_does_not_write_every_padding_row_leaves_the_finding(tmp_path, reset):
    assert _findings(tmp_path, reset) == STALE


def test_a_helper_that_only_reads_the_view_leaves_the_finding(tmp_path):
    assert _findings(tmp_path, "_peek(self.seq_lens[num_reqs:num_reqs_padded])",
                     "def _peek(t):\n    return t.sum()") == STALE


OTHER_PAIR = '''\
import torch
from vllm.forward_context import set_forward_context


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.slot_mapping = torch.zeros(max_num_tokens, dtype=torch.int64)

    def execute_model(self, scheduler_output):
        num_tokens = scheduler_output.total_num_tokens
        num_input_tokens = self.cudagraph_dispatcher.pad(num_tokens)
        self.slot_mapping[:num_tokens] = torch.as_tensor(scheduler_output.slots)
        {RESET}
        with set_forward_context(None, self.vllm_config, num_tokens=num_input_tokens,
                                 slot_mapping=self.slot_mapping[:num_input_tokens]):
            return self.model(None)
'''


def _other_pair(tmp_path, reset: str):
    text = OTHER_PAIR.replace("{RESET}", reset)
    path = tmp_path / "runner.py"
    path.write_text(text)
    return check_project([Source(str(path), text)], load_profile("vllm"))[str(path)]


def test_prefix_write_names_the_real_rows_of_a_padded_count_of_another_pair(tmp_path):
    # `num_input_tokens` is the padded count of the pair (num_scheduled_tokens, num_input_tokens);
    # this step names its real count `num_tokens` (the real count of another pair), so the pair's
    # real partner is not known here.  The code says which rows are real: it writes
    # `[:num_tokens]` and hands out `[:num_input_tokens]`, so rows [num_tokens:num_input_tokens]
    # hold what an earlier step left: one PAD001 `slot_mapping` at line 15.
    got = _other_pair(tmp_path, "pass")
    assert [(f.code, f.line, f.field, f.real) for f in got] == [("PAD001", 15, "slot_mapping", "num_tokens")]
    assert "this step wrote only rows [:num_tokens]" in " ".join(s.note for s in got[0].trace)
    assert _other_pair(tmp_path, "self.slot_mapping[num_tokens:num_input_tokens].fill_(-1)") == []


def test_only_the_padded_count_and_no_prefix_write_stays_quiet(tmp_path):
    # A capture-style function that knows only the padded size and writes no prefix of the
    # buffer: every row is a (dummy) real row of the captured size, as before.
    text = OTHER_PAIR.replace("        self.slot_mapping[:num_tokens] = torch.as_tensor(scheduler_output.slots)\n",
                              "").replace("{RESET}", "pass")
    path = tmp_path / "runner.py"
    path.write_text(text)
    assert check_project([Source(str(path), text)], load_profile("vllm"))[str(path)] == []


def test_a_copy_of_reset_rows_of_another_buffer_is_a_reset(tmp_path):
    # `other`'s rows from num_reqs on are reset first: what is copied in is the neutral value
    assert _findings(tmp_path, "self.other[num_reqs:].zero_()\n"
                               "        self.seq_lens[num_reqs:num_reqs_padded].copy_(self.other[num_reqs:num_reqs_padded])"
                     ) == []


def test_a_copy_of_a_buffer_nothing_writes_after_allocation_is_a_reset(tmp_path):
    # `zeros` is allocated with zeros in the constructor and written nowhere: its rows hold 0 at
    # every step, so copying them into the padding rows resets those (and `other`, which
    # `update` writes, does not)
    text = RUNNER.replace("{HELPERS}", "").replace(
        "        self.other = torch.zeros(max_num_reqs, dtype=torch.int32)\n",
        "        self.other = torch.zeros(max_num_reqs, dtype=torch.int32)\n"
        "        self.zeros = torch.zeros(max_num_reqs, dtype=torch.int32)\n")
    path = tmp_path / "runner.py"
    for src, expected in (("self.zeros", []), ("self.other", [("PAD001", "seq_lens")])):
        t = text.replace("{RESET}", f"self.seq_lens[num_reqs:num_reqs_padded].copy_({src}[num_reqs:num_reqs_padded])")
        path.write_text(t)
        out = check_project([Source(str(path), t)], load_profile("vllm"))[str(path)]
        assert [(f.code, f.field) for f in out] == expected, src
