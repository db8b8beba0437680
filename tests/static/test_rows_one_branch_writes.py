"""Rows a step writes on one branch of a test only.

``if so.seq_lens is not None: self.seq_lens[:num_reqs] = so.seq_lens`` with nothing written into
``self.seq_lens`` on the other branch: where the test fails, rows ``[0:num_reqs]`` hold what an
earlier step wrote there, and the sink reads them (real rows, not only padding rows).  The code
writes those rows on one path, so they are this step's rows; the other path is reported.  Not
where the other branch writes the rows too, where a later statement writes them on every path,
where the reading is under the same test, or where the other path hands the buffer to code the
analysis does not read (a kernel may write them).

Written from scratch: each runner resets the padding rows ``[num_reqs:num_reqs_padded]`` of
``self.seq_lens`` and hands ``self.seq_lens[:num_reqs_padded]`` to the metadata; the expected
findings come from reading each variant: one PAD001 ``seq_lens`` naming rows ``[0:num_reqs]``
where a path leaves them unwritten, none otherwise.
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

    def execute_model(self, so, flag: bool):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
{BODY}
        self.seq_lens[num_reqs:num_reqs_padded] = 0
{READ}
'''
READ = ("        sl = self.seq_lens[:num_reqs_padded]\n"
        "        return CommonAttentionMetadata(seq_lens=sl, num_reqs=num_reqs_padded)")
ONE = ("        if so.seq_lens is not None:\n"
       "            self.seq_lens[:num_reqs] = so.seq_lens\n")
STALE = [("PAD001", "seq_lens")]


def _read_under(test):
    """The read of ``READ``, only where ``test`` holds."""
    return (f"        if {test}:\n"
            "            return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded],\n"
            "                                           num_reqs=num_reqs_padded)\n"
            "        return None")


def _check(tmp_path, body, read=READ):
    text = RUNNER.replace("{BODY}", body.rstrip("\n")).replace("{READ}", read)
    return [f for f in check_text(tmp_path, text) if f.code == "PAD001"]


@pytest.mark.parametrize("body, expected", [
    (ONE, STALE),
    # the rows written through a view of the prefix, or by `copy_`
    ("        if so.seq_lens is not None:\n"
     "            self.seq_lens[:num_reqs].copy_(so.seq_lens)\n", STALE),
    # `else` writes nothing into the buffer
    ("        if flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        else:\n"
     "            so.note = 1\n", STALE),
    # one branch of an `elif` chain writes nothing
    ("        if flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        elif so.spec:\n"
     "            self.seq_lens[:num_reqs] = so.spec\n"
     "        else:\n"
     "            pass\n", STALE),
    # every branch writes the rows
    ("        if so.seq_lens is not None:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        else:\n"
     "            self.seq_lens[:num_reqs].fill_(1)\n", []),
    ("        if flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        elif so.spec:\n"
     "            self.seq_lens[:num_reqs] = so.spec\n"
     "        else:\n"
     "            self.seq_lens[:num_reqs] = 1\n", []),
    # a later write of the prefix on every path
    (ONE + "        self.seq_lens[:num_reqs] += 1\n", STALE),  # (`+=` reads them: not a write of them)
    (ONE + "        self.seq_lens[:num_reqs].copy_(so.base)\n", []),
    # the padded prefix written whole afterwards
    (ONE + "        self.seq_lens[:num_reqs_padded] = so.all\n", []),
    # the other path returns: only the writing path reaches the read
    ("        if so.seq_lens is None:\n"
     "            return None\n"
     "        self.seq_lens[:num_reqs] = so.seq_lens\n", []),
    # the other branch hands the buffer to code padlint does not read: it may write the rows
    ("        if so.seq_lens is not None:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        else:\n"
     "            some_kernel(self.seq_lens, num_reqs)\n", []),
    # ... or the code after the join does
    (ONE + "        some_kernel(self.seq_lens, num_reqs)\n", []),
    # a loop that writes the prefix: not a branch of a test
    ("        for _ in range(2):\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n", []),
    # a later test the other way writes them where the first did not (vLLM 0.33.0's MLA
    # indexer: `if not self.supports_varlen:` copies the lengths, `if self.supports_varlen:` a
    # kernel writes them): on the second test's other branch the first test's write ran
    ("        if not flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        if flag:\n"
     "            some_kernel(self.seq_lens, num_reqs)\n", []),
    ("        if not flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        if flag:\n"
     "            self.seq_lens[:num_reqs].fill_(1)\n"
     "        else:\n"
     "            so.note = 1\n", []),
    # ... not where the second test writes them on the path the first one wrote them too
    ("        if not flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        if not flag:\n"
     "            some_kernel(self.seq_lens, num_reqs)\n", STALE),
    # ... nor where the second test is another one
    ("        if not flag:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        if so.spec:\n"
     "            some_kernel(self.seq_lens, num_reqs)\n", STALE),
    # ... nor where what the tests test changed between them (a review found it; and
    # `test_a_setting_a_method_changes_between_the_tests`): `flag` is
    # `so.budget` and `budget -= 1` makes the second test another one (with a budget of 1,
    # neither branch writes) ...
    ("        budget = so.budget\n"
     "        if not budget:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        budget -= 1\n"
     "        if budget:\n"
     "            some_kernel(self.seq_lens, num_reqs)\n", STALE),
])
def test_rows_written_on_one_branch(tmp_path, body, expected):
    assert [(f.code, f.field) for f in _check(tmp_path, body)] == expected


def test_read_under_the_same_test_is_covered(tmp_path):
    # the sink reads the rows only where the test that wrote them holds
    body = ("        use = so.seq_lens is not None\n"
            "        if use:\n"
            "            self.seq_lens[:num_reqs] = so.seq_lens\n")
    assert _check(tmp_path, body, _read_under("use")) == []
    # ... and is reported where the read is under the other way of the test
    assert [(f.code, f.field) for f in _check(tmp_path, body, _read_under("not use"))] == STALE


def test_message_names_the_rows_the_test_and_no_fix(tmp_path):
    (f,) = _check(tmp_path, ONE)
    assert "rows [0:num_reqs]" in f.message
    assert "writes on some paths only" in f.message
    assert "not written where `so.seq_lens is not None` fails (line 12)" in f.message
    # which value the rows need is not known: no reset is proposed
    assert f.fix is None
    assert any(s.line == 12 for s in f.trace)


def test_a_real_count_slice_reads_them_too(tmp_path):
    # the sink reads only the real rows: they are the stale ones here
    read = ("        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs],\n"
            "                                       num_reqs=num_reqs)")
    assert [(f.code, f.field) for f in _check(tmp_path, ONE, read)] == STALE


HELD = '''\
import torch
from sglang.srt.model_executor.forward_batch_info import ForwardBatch


class Runner:
    def __init__(self, max_bs, full):
        self._static = {"seq_lens": torch.zeros((max_bs,), dtype=torch.int64)} if full else None
        self._slots = max_bs
        self._full = full

    def replay(self, fb, raw_bs):
        if {TEST}:
            s = self._static
            s["seq_lens"][:raw_bs].copy_(fb.seq_lens)
            s["seq_lens"][raw_bs:self._slots].fill_(1)
        if self._full:
            s = self._static
            return ForwardBatch(seq_lens=s["seq_lens"][:self._slots])
        return None
'''


@pytest.mark.parametrize("test, expected", [
    # where the dict holding the buffer is None there is no buffer to read (through an alias too)
    ("self._static is not None", []),
    # the read is under the same test as the write
    ("self._full", []),
    # another test: where it fails, rows [0:raw_bs] are unwritten and the read under
    # `self._full` may reach them
    ("fb.has_lens", [("PAD001", "seq_lens")]),
])
def test_a_holder_tested_for_none_or_the_same_test(tmp_path, test, expected):
    found = check_text(tmp_path, HELD.replace("{TEST}", test), profile="sglang")
    assert [(f.code, f.field) for f in found] == expected
    for f in found:
        # the buffer as the code names it where the rows are written (the dict's entry)
        assert 'persistent buffer `s["seq_lens"]`' in f.message


@pytest.mark.parametrize("body, unwritten", [
    # `if A and B:` runs as two tests; the message names the whole test, once
    ("        if so.a and so.b:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n", "`so.a and so.b` fails (line 12)"),
    # an `elif` is reached where the test before it failed (the line is the `elif`'s)
    ("        if so.a:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        elif so.b:\n"
     "            pass\n"
     "        else:\n"
     "            self.seq_lens[:num_reqs] = 1\n", "`so.a` fails and `so.b` holds (line 14)"),
    ("        if so.a:\n"
     "            self.seq_lens[:num_reqs] = so.seq_lens\n"
     "        elif so.b:\n"
     "            self.seq_lens[:num_reqs] = 1\n", "`so.a` fails and `so.b` fails (line 14)"),
])
def test_the_message_names_the_path_that_leaves_the_rows(tmp_path, body, unwritten):
    (f,) = _check(tmp_path, body)
    assert f"not written where {unwritten}" in f.message
    assert "(and 1 more source)" not in f.message


@pytest.mark.parametrize("other", [
    # written through a CpuGpuBuffer-like view handed to a kernel, or with `out=`
    "            fill_lens(self.seq_lens, num_reqs)",
    "            torch.add(so.a, so.b, out=self.seq_lens[:num_reqs])",
    "            torch.cumsum(so.a, dim=0, out=self.seq_lens[:num_reqs])",
    # updated in place, in a loop, through a tuple target, with a count padlint does not know
    "            self.seq_lens[:num_reqs] += 1",
    "            self.seq_lens += 1",
    "            for _ in range(2):\n                self.seq_lens[:num_reqs].fill_(1)",
    "            self.seq_lens[:num_reqs], x = so.a, so.b",
    "            self.seq_lens[:len(so.b)].copy_(so.b)",
    # a list or dict of views handed to code padlint does not read (SGLang's grouped copies)
    "            copy_all([self.seq_lens[:num_reqs]], [so.a])",
    "            copy_all({'s': self.seq_lens}, so)",
    # a method of the runner padlint does not follow may write any of its buffers
    "            self._refresh_lens(so)",
])
def test_the_other_branch_writes_them_some_other_way(tmp_path, other):
    body = ("        if so.fast:\n"
            "            self.seq_lens[:num_reqs] = so.seq_lens\n"
            "        else:\n" + other + "\n")
    assert _check(tmp_path, body) == []


def test_a_buffer_held_in_a_dict_handed_to_unknown_code(tmp_path):
    for where in ("else", "after"):
        text = HELD.replace("{TEST}", "fb.has_lens")
        if where == "else":
            text = text.replace('            s["seq_lens"][raw_bs:self._slots].fill_(1)\n',
                                '            s["seq_lens"][raw_bs:self._slots].fill_(1)\n'
                                '        else:\n'
                                '            fill_all(self._static, raw_bs)\n')
        else:
            text = text.replace("        if self._full:\n", "        fill_all(self._static, raw_bs)\n"
                                                           "        if self._full:\n", 1)
        assert check_text(tmp_path, text, profile="sglang") == [], where


def test_a_truthiness_test_of_the_holder(tmp_path):
    assert check_text(tmp_path, HELD.replace("{TEST}", "self._static"), profile="sglang") == []


def test_a_list_of_views_copied_after_the_join(tmp_path):
    # the grouped copy after the `if` may write the rows the branch left
    body = ONE + "        copy_all([self.seq_lens[:num_reqs]], [so.a])\n"
    assert _check(tmp_path, body) == []


def test_read_under_the_same_test_after_a_store_of_what_it_tests(tmp_path):
    # SGLang's frozen-KV draft runner: `if fb.mrope is not None:` writes the rows, a store of
    # `fb.mrope` follows (the test's fact is dropped there), and the read is under the same test
    # again, as the code spells it: written on that path
    body = ("        if so.seq_lens is not None:\n"
            "            self.seq_lens[:num_reqs] = so.seq_lens\n"
            "            so.seq_lens = self.seq_lens[:num_reqs]\n")
    assert _check(tmp_path, body, _read_under("so.seq_lens is not None")) == []
    # under the other way of the test it is reported
    assert [(f.code, f.field) for f in _check(tmp_path, body, _read_under("so.seq_lens is None"))] == STALE


def _with_method(body: str, method: str) -> str:
    text = RUNNER.replace("{BODY}", body.rstrip("\n")).replace("{READ}", READ)
    return text.replace("    def execute_model(self, so, flag: bool):", method + "\n    def execute_model(self, so, flag: bool):")


def test_a_helper_called_twice_tests_other_values_under_the_same_names(tmp_path):
    # `stage` writes the rows where its `flag` fails on its first call, and runs the kernel where
    # its `flag` holds on its second; the calls pass different flags (`so.a`, `so.b`), so with
    # `a` true and `b` false neither writes them (a review found it: the first call's write,
    # conditional on the helper's own parameter, settled the second call's rows)
    text = _with_method("        self.stage(so, so.a, num_reqs, True)\n"
                        "        self.stage(so, so.b, num_reqs, False)\n", """    def stage(self, so, flag, num_reqs, first):
        if first:
            if not flag:
                self.seq_lens[:num_reqs] = so.seq_lens
        else:
            if flag:
                some_kernel(self.seq_lens, num_reqs)
""")
    assert [(f.code, f.field) for f in check_text(tmp_path, text) if f.code == "PAD001"] == STALE


_CONFIGURE = """    def __post_init__(self) -> None:
        self.use_kernel = False

    def configure(self, so) -> None:
        self.use_kernel = so.use_kernel
"""

_TWO_TESTS = ("        if not self.use_kernel:\n"
              "            self.seq_lens[:num_reqs] = so.seq_lens\n"
              "{BETWEEN}"
              "        if self.use_kernel:\n"
              "            some_kernel(self.seq_lens, num_reqs)\n")


def test_a_setting_a_method_changes_between_the_tests(tmp_path):
    # `configure` sets `self.use_kernel` each step: between the two tests it may change (from
    # true to false: neither branch writes), so the second test says nothing of the first
    text = _with_method(_TWO_TESTS.replace("{BETWEEN}", "        self.configure(so)\n"), _CONFIGURE)
    assert [(f.code, f.field) for f in check_text(tmp_path, text) if f.code == "PAD001"] == STALE


def test_a_setting_made_at_construction_holds_at_both_tests(tmp_path):
    # set only when the object is built: both tests read the same value, and on the second
    # test's other branch the first test's write ran
    text = _with_method(_TWO_TESTS.replace("{BETWEEN}", ""), _CONFIGURE.split("\n    def configure")[0] + "\n")
    assert [(f.code, f.field) for f in check_text(tmp_path, text) if f.code == "PAD001"] == []
