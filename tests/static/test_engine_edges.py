"""Analysis edge cases found by trying padlint as a new user would.

Each source is a minimal runner; the expected findings are reasoned in the
comment next to each case.  `run` returns {field: Finding}.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

PROFILE = load_profile("vllm")

HEAD = """\
from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.pad(num_reqs)
"""


def run(body: str, head: str = HEAD):
    src = head + textwrap.indent(textwrap.dedent(body), " " * 8)
    return src, {f.field: f for f in check_source(src, "r.py", PROFILE)}


def line_of(src: str, text: str) -> int:
    """1-based line as Python counts it (only \n ends a line in these sources, not \f)."""
    return next(i for i, line in enumerate(src.split("\n"), 1) if text in line)


def test_sink_in_elif_test_has_its_own_location_and_no_misplaced_fix():
    # The constructor is evaluated in the `elif` test; inserting a reset before
    # `return None` (the statement before it in the file) would never run on
    # the elif path, and a reset cannot stand between `if` and `elif`.
    src, found = run("""\
        if so.a:
            return None
        elif (m := CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])):
            return m
    """)
    f = found["seq_lens"]
    assert f.line == line_of(src, "elif (m :=")
    assert f.column == src.split("\n")[f.line - 1].index("seq_lens=") + 1
    assert f.fix is None
    assert "on every path before this test" in f.message


def test_reset_with_a_non_neutral_value_is_pad002_not_pad001():
    # 7 is not the neutral value of seq_lens (0).  The reset covers the padding rows, so they
    # are not stale (no PAD001, which until the split reported it with a "(the reset at line X
    # writes 7, ...)" note); they hold a wrong pad value: PAD002, at the reset, naming value,
    # neutral value and contract, with the value replaced as its fix.
    src, found = run("""\
        self.seq_lens[num_reqs:num_reqs_padded] = 7
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """)
    f = found["seq_lens"]
    assert f.code == "PAD002"
    assert f.line == line_of(src, "= 7") and f.column == src.split("\n")[f.line - 1].index("7") + 1
    assert f"the reset at line {f.line} writes 7 into the padding rows [num_reqs:num_reqs_padded]" in f.message
    assert "the neutral value of `seq_lens` is 0 (the profile's [fields.seq_lens]" in f.message
    assert f.fix is not None and f.fix.is_replacement and (f.fix.old, f.fix.text) == ("7", "0")


def test_literal_reset_of_cumulative_offsets_is_wrong():
    # query_start_loc padding must repeat the last real offset ("flat"); 0 makes offsets go
    # backwards.  No literal is the neutral value, so there is no replacement fix.
    _, found = run("""\
        self.query_start_loc[num_reqs + 1:num_reqs_padded + 1] = 0
        return CommonAttentionMetadata(query_start_loc=self.query_start_loc[:num_reqs_padded + 1])
    """)
    f = found["query_start_loc"]
    assert f.code == "PAD002" and "the last real value (cumulative offsets)" in f.message
    assert f.fix is None


def test_named_constant_is_the_neutral_value():
    # NULL_BLOCK_ID is 0 in the profile's [constants]; block_table_tensor's neutral value is NULL_BLOCK_ID.
    _, found = run("""\
        self.blocks[num_reqs:].fill_(NULL_BLOCK_ID)
        return CommonAttentionMetadata(block_table_tensor=self.blocks[:num_reqs_padded])
    """)
    assert found == {}


def test_stepped_slice_is_not_a_reset():
    # [R:P:2] writes every other padding row only.
    _, found = run("""\
        self.seq_lens[num_reqs:num_reqs_padded:2] = 0
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """)
    assert set(found) == {"seq_lens"}


@pytest.mark.parametrize("reset", [
    "self.seq_lens[num_reqs:num_reqs_padded].copy_(torch.zeros(num_reqs_padded - num_reqs))",
    "self.seq_lens[num_reqs:num_reqs_padded] *= 0",
])
def test_other_reset_shapes(reset):
    # copy_ from a freshly zeroed tensor, and multiplying by zero, write 0 into every padding row.
    _, found = run(f"""\
        {reset}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """)
    assert found == {}


def test_copy_of_stale_rows_is_not_a_reset():
    # copying the (stale) padding rows of another persistent buffer in keeps them stale
    _, found = run("""\
        self.seq_lens[num_reqs:num_reqs_padded].copy_(self.other[:num_reqs_padded])
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """)
    assert set(found) == {"seq_lens"}


def test_match_whose_every_case_resets():
    # `case _:` is irrefutable: every path through the match resets.
    _, found = run("""\
        match so.kind:
            case "decode":
                self.seq_lens[num_reqs:].fill_(0)
            case _:
                self.seq_lens[num_reqs:].zero_()
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """)
    assert found == {}


def test_match_without_wildcard_may_skip_the_reset():
    _, found = run("""\
        match so.kind:
            case "decode":
                self.seq_lens[num_reqs:].fill_(0)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """)
    assert set(found) == {"seq_lens"}


def test_sink_inside_comprehension_and_lambda():
    # constructors inside a comprehension and a lambda are still sinks
    _, found = run("""\
        metas = [CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded]) for _ in range(2)]
        make = lambda: CommonAttentionMetadata(positions=self.positions[:num_reqs_padded])
        return metas, make
    """)
    assert set(found) == {"seq_lens", "positions"}


def test_setattr_on_metadata_is_a_sink():
    _, found = run("""\
        meta = CommonAttentionMetadata(num_reqs=num_reqs_padded)
        setattr(meta, "seq_lens", self.seq_lens[:num_reqs_padded])
        return meta
    """)
    assert set(found) == {"seq_lens"}


def test_calls_are_followed_twelve_levels_deep():
    # execute_model -> m0 -> ... -> m11, the sink in m11 with no reset anywhere
    methods = "".join(
        f"    def m{i}(self, num_reqs, num_reqs_padded):\n"
        f"        return self.m{i + 1}(num_reqs, num_reqs_padded)\n" for i in range(11))
    src = (HEAD + "        return self.m0(num_reqs, num_reqs_padded)\n" + methods +
           "    def m11(self, num_reqs, num_reqs_padded):\n"
           "        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])\n")
    found = {f.field: f for f in check_source(src, "r.py", PROFILE)}
    assert set(found) == {"seq_lens"}
    assert len([t for t in found["seq_lens"].trace if "calls" in t.note]) == 12


@pytest.mark.parametrize("reset", [
    "is_prefilling[num_reqs:num_reqs + 1] = False",   # one row only
    "is_prefilling[num_reqs:num_reqs] = False",       # no row
])
def test_reset_must_reach_the_padded_count(reset):
    # the canonical bug: a reset whose upper bound stops short of num_reqs_padded leaves rows stale
    _, found = run(f"""\
        is_prefilling = self.a[:num_reqs_padded] < self.b[:num_reqs_padded]
        {reset}
        return CommonAttentionMetadata(is_prefilling=is_prefilling)
    """)
    assert set(found) == {"is_prefilling"}


def test_form_feed_does_not_shift_lines():
    # str.splitlines splits on \f, ast does not: a form feed in a comment above the
    # class must not move the analysed functions (or turn the file into a syntax error)
    src, found = run("""\
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
    """, head="# page break \f here\n" + HEAD)
    assert found["seq_lens"].line == line_of(src, "seq_lens=self.seq_lens")


def test_sink_pattern_with_inner_wildcard_reaches_the_analysis():
    # a configured sink `My*Params`: the text prefilter must not require `My(`
    from dataclasses import replace

    profile = replace(PROFILE, sink_constructors=PROFILE.sink_constructors + ("My*Params",))
    src = HEAD.replace("CommonAttentionMetadata", "MyKernelParams") + \
        "        return MyKernelParams(seq_lens=self.seq_lens[:num_reqs_padded])\n"
    assert {f.field for f in check_source(src, "r.py", profile)} == {"seq_lens"}


def test_no_padding_rows_where_no_real_count_is_known():
    # A capture helper knows only the captured size: every row is a dummy row to
    # it, there is no [real:padded) region to reset.  With the real count in
    # scope (the second method) the same slice is a padded slice.
    src = (
        "from vllm.v1.attention.backend import CommonAttentionMetadata\n\n\n"
        "class Runner:\n"
        "    def capture(self, num_reqs_padded):\n"
        "        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])\n\n"
        "    def build(self, num_reqs, num_reqs_padded):\n"
        "        return CommonAttentionMetadata(positions=self.positions[:num_reqs_padded])\n"
    )
    assert {f.field for f in check_source(src, "r.py", PROFILE)} == {"positions"}


def test_deep_calls_through_elif_chains_do_not_exhaust_the_recursion_limit():
    # 50 calls deep, each call in the `else` of a 40-branch `elif` chain: over 40 Python frames
    # of the interpreter per level (an `elif` is an `if` nested in the `else`), over 2,000 in
    # all, past CPython's default limit of 1,000.  SGLang 0.5.23's runners reached it, and the
    # whole-program run of `sglang/srt` fell back to checking one file at a time.  On an
    # analysis thread (as the CLI runs it) the limit is raised while the interpreter runs.
    from padlint.parse import with_big_stack

    limit = sys.getrecursionlimit()

    def method(i: int) -> str:
        arms = "".join(f"        elif num_reqs == {k}:\n            pass\n" for k in range(1, 40))
        call = (f"self.m{i + 1}(num_reqs, num_reqs_padded)" if i < 49
                else "CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])")
        return (f"    def m{i}(self, num_reqs, num_reqs_padded):\n"
                f"        if num_reqs == 0:\n            pass\n{arms}"
                f"        else:\n            return {call}\n")
    src = HEAD + "        return self.m0(num_reqs, num_reqs_padded)\n" + "".join(method(i) for i in range(50))
    found = with_big_stack(lambda _t: {f.field: f for f in check_source(src, "r.py", PROFILE)}, "")
    assert set(found) == {"seq_lens"}
    assert len([t for t in found["seq_lens"].trace if "calls" in t.note]) == 50
    assert sys.getrecursionlimit() == limit  # restored
