"""Suppression comments, PAD100, PAD101 and pad=keep/zero/fill policies.

Findings come from the stand-in analysis (``stale("BUFFER")`` marks a
PAD001 at that call, with fix ``x[num_reqs:] = False``), so that every
placement is exercised whatever the real analysis reports.
"""

from __future__ import annotations

import json

import pytest

from padlint.suppress import buffer_path, rewrite_reset, scan

from .conftest import CANONICAL


def _findings(project, *args):
    r = project.run("check", "--format", "json", *args)
    assert r.rc in (0, 1), r.err
    return json.loads(r.out)["findings"]


def _summary(findings):
    return [(f["code"], f["line"]) for f in findings]


MULTILINE = """\
def f(self, num_reqs, num_reqs_padded):
    meta = Meta({open}
        a=1,
        x=stale("self.a[:num_reqs_padded]"),{arg}
        b=2,
    ){close}
    return meta
"""


@pytest.mark.parametrize("where", ["open", "arg", "close"])
@pytest.mark.parametrize("comment", ["# padlint: ignore[PAD001]", "# noqa: PAD001", "# noqa", "# padlint: ignore",
                                     "# padlint: ignore[PAD0]", "# NOQA:PAD001,E501"])
def test_suppression_on_any_line_of_multiline_call(project, fake_analysis, where, comment):
    slots = {"open": "", "arg": "", "close": ""}
    slots[where] = "  " + comment
    project.write("a.py", MULTILINE.format(**slots))
    assert _findings(project) == []


def test_unsuppressed_multiline_call_reports_the_argument_line(project, fake_analysis):
    project.write("a.py", MULTILINE.format(open="", arg="", close=""))
    assert _summary(_findings(project)) == [("PAD001", 4)]


def test_suppression_on_line_above(project, fake_analysis):
    project.write("a.py", """\
        def f(self):
            # padlint: ignore[PAD001]
            meta = Meta(x=stale("self.a[:num_reqs_padded]"))
            # noqa: PAD001
            # (second comment line of the same block)
            meta = Meta(x=stale("self.b[:num_reqs_padded]"))
        """)
    assert _findings(project) == []


def test_suppression_above_does_not_leak_past_code(project, fake_analysis):
    project.write("a.py", """\
        def f(self):
            y = 1  # noqa: PAD001
            meta = Meta(x=stale("self.a[:num_reqs_padded]"))
        """)
    # the noqa belongs to `y = 1` (a code line): it suppresses nothing and is itself reported
    assert _summary(_findings(project)) == [("PAD100", 2), ("PAD001", 3)]


def test_other_codes_do_not_suppress(project, fake_analysis):
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa: E501\n')
    # E501 is not ours: no PAD100 for it, and PAD001 stays
    assert _summary(_findings(project)) == [("PAD001", 1)]


def test_wrong_pad_code_does_not_suppress(project, fake_analysis):
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))  # padlint: ignore[PAD002]\n')
    found = _findings(project)
    assert _summary(found) == [("PAD001", 1), ("PAD100", 1)]
    assert found[1]["message"] == "unused suppression `# padlint: ignore[PAD002]` (unused: PAD002)"


def test_pad100_unused_suppressions(project, fake_analysis):
    project.write("a.py", """\
        x = 1  # padlint: ignore[PAD001]
        y = 2  # noqa: PAD001, E501
        z = 3  # noqa
        w = 4  # padlint: ignore
        v = 5  # noqa: E501
        m = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa: PAD001, PAD100
        k = Meta(x=stale("self.b[:num_reqs_padded]"))  # padlint: ignore[PAD001,PAD101]
        """)
    found = _findings(project)
    # line 3 (bare noqa) and 5 (E501 only) are other tools'; line 6 lists PAD100 itself
    assert _summary(found) == [("PAD100", 1), ("PAD100", 2), ("PAD100", 4), ("PAD100", 7)]
    by_line = {f["line"]: f for f in found}
    assert by_line[2]["message"] == "unused suppression `# noqa: PAD001, E501` (unused: PAD001)"
    assert by_line[4]["message"] == "unused suppression `# padlint: ignore`: no finding to suppress here"
    assert by_line[7]["message"].endswith("(unused: PAD101)")
    # PAD100 findings are ordinary findings: severity warning, empty sink fields, no fix
    f = by_line[1]
    assert (f["severity"], f["sink"], f["field"], f["buffer"], f["fix"]) == ("warning", "", "", "", None)
    assert (f["column"], f["end_column"]) == (8, 33)  # the comment `# padlint: ignore[PAD001]` at column 8


def test_pad100_in_file_skipped_by_prefilter(project):
    # no padded name: never parsed, yet its suppression is reported unused
    project.write("plain.py", "x = 1  # noqa: PAD001\n")
    r = project.run("check", "--format", "json")
    assert r.rc == 1
    assert _summary(json.loads(r.out)["findings"]) == [("PAD100", 1)]


def test_pad100_obeys_ignore_and_per_file_ignores(project):
    project.write("plain.py", "x = 1  # noqa: PAD001\n")
    assert project.run("check", "--ignore", "PAD100").rc == 0
    project.write("padlint.toml", '[per-file-ignores]\n"plain.py" = ["PAD100"]\n')
    assert project.run("check").rc == 0


def test_pad101_invalid_directives(project):
    project.write("a.py", """\
        x = 1  # padlint: bogus
        y = 2  # padlint: ignore[E501]
        z = 3  # padlint: ignore[PAD001
        self.buf = torch.zeros(8)  # padlint: pad=keep
        self.buf2 = torch.zeros(8)  # padlint: pad=fill
        self.buf3 = torch.zeros(8)  # padlint: pad=sometimes
        foo(self.buf4)  # padlint: pad=zero
        """)
    found = _findings(project)
    assert _summary(found) == [("PAD101", n) for n in range(1, 8)]
    msgs = [f["message"] for f in found]
    assert "pad=keep needs a reason" in msgs[3]
    assert "pad=fill needs a value" in msgs[4]
    assert "unknown pad policy 'sometimes'" in msgs[5]
    assert "must be on an assignment" in msgs[6]
    assert all(f["severity"] == "error" for f in found)


def test_pad101_a_fill_value_a_fix_cannot_write_and_an_unknown_code(project):
    # the fill value is written into the fix as it stands: a name the module does not bind
    # (`abc`, `nan`) or a non-finite number would make broken or meaningless code; an imported
    # constant, `self.<attribute>` and a finite literal are fine.  A code no rule has is invalid,
    # not merely unused
    project.write("a.py", """\
        from pkg.consts import PAD_SLOT_ID
        self.a = torch.zeros(8)  # padlint: pad=fill(abc)
        self.b = torch.zeros(8)  # padlint: pad=fill(nan)
        self.c = torch.zeros(8)  # padlint: pad=fill(1e999)
        self.d = torch.zeros(8)  # padlint: pad=fill(-1)
        self.e = torch.zeros(8)  # padlint: pad=fill(PAD_SLOT_ID)
        self.f = torch.zeros(8)  # padlint: pad=fill(self.fill_value)
        x = 1  # padlint: ignore[PAD9]
        """)
    found = _findings(project)
    assert _summary(found) == [("PAD101", 2), ("PAD101", 3), ("PAD101", 4), ("PAD101", 8)]
    msgs = [f["message"] for f in found]
    assert "pad=fill value 'abc' is neither a literal" in msgs[0] and "'nan'" in msgs[1]
    assert "pad=fill value '1e999' is not a finite number" in msgs[2]
    assert "unknown rule code 'PAD9'" in msgs[3]


def test_pad_keep_silences_matching_buffer_any_view(project, fake_analysis):
    project.write("a.py", """\
        class R:
            def __init__(self, n):
                self.seq_lens = CpuGpuBuffer(n)  # padlint: pad=keep(kernel reads only [:num_reqs])
                # padlint: pad=keep(only read on the host)
                self.other: torch.Tensor = torch.zeros(n)

            def f(self, num_reqs_padded):
                Meta(x=stale("self.seq_lens[:num_reqs_padded]"))
                Meta(x=stale("self.seq_lens.gpu[:num_reqs_padded]"))
                Meta(x=stale("self.seq_lens.np[: num_reqs_padded + 1]"))
                Meta(x=stale("self.other[:num_reqs_padded]"))
                Meta(x=stale("self.seq_lens_cpu[:num_reqs_padded]"))
        """)
    assert _summary(_findings(project)) == [("PAD001", 12)]
    r = project.run("check", "--statistics")
    assert "a.py:3: self.seq_lens (3 findings silenced): kernel reads only [:num_reqs]" in r.out
    assert "a.py:5: self.other (1 finding silenced): only read on the host" in r.out


def test_pad_keep_is_per_file(project, fake_analysis):
    project.write("alloc.py", "self.seq_lens = torch.zeros(8)  # padlint: pad=keep(reason)\n")
    project.write("use.py", 'Meta(x=stale("self.seq_lens[:num_reqs_padded]"))\n')
    assert [(f["path"], f["line"]) for f in _findings(project)] == [("use.py", 1)]


def test_pad_zero_and_fill_rewrite_the_reset(project, fake_analysis):
    project.write("a.py", """\
        self.slots = torch.zeros(8)  # padlint: pad=fill(-1)
        self.lens = torch.zeros(8)  # padlint: pad=zero
        Meta(x=stale("self.slots[:num_reqs_padded]"))
        Meta(x=stale("self.lens.gpu[:num_reqs_padded]"))
        Meta(x=stale("self.other[:num_reqs_padded]"))
        """)
    found = _findings(project)
    fixes = {f["line"]: f["fix"]["text"] for f in found}
    assert fixes == {3: "x[num_reqs:] = -1", 4: "x[num_reqs:] = 0", 5: "x[num_reqs:] = False"}
    assert found[0]["message"] == "stale rows of `self.slots[:num_reqs_padded]` reach Meta; add `x[num_reqs:] = -1`"


def test_pad_keep_and_unused_noqa(project, fake_analysis):
    # the keep policy silences the finding first, so the noqa is unused
    project.write("a.py", """\
        self.seq_lens = torch.zeros(8)  # padlint: pad=keep(reason)
        Meta(x=stale("self.seq_lens[:num_reqs_padded]"))  # noqa: PAD001
        """)
    assert _summary(_findings(project)) == [("PAD100", 2)]


def test_canonical_suppressed_end_to_end(project):
    project.write("bug.py", CANONICAL.replace("(is_prefilling=x)", "(is_prefilling=x)  # padlint: ignore[PAD001]"))
    r = project.run("check")
    assert r.rc == 0, r.out


def test_canonical_suppressed_above_end_to_end(project):
    project.write("bug.py", CANONICAL.replace("        return Common", "        # noqa: PAD001\n        return Common"))
    assert project.run("check").rc == 0


def test_rewrite_reset_unit():
    assert rewrite_reset("x[num_reqs:] = False", "0") == "x[num_reqs:] = 0"
    assert rewrite_reset("buf[n:].fill_(0)", "-1") == "buf[n:].fill_(-1)"
    assert rewrite_reset("buf.np[n + 1:].fill(0)", "7") == "buf.np[n + 1:].fill(7)"
    assert rewrite_reset("buf[n:].zero_()", "0") == "buf[n:].zero_()"
    assert rewrite_reset("buf[n:].zero_()", "1") == "buf[n:].fill_(1)"
    assert rewrite_reset("clear(buf)", "1") == "clear(buf)"


def test_buffer_path_unit():
    views = frozenset({"cpu", "np", "gpu", "get_device_tensor"})
    assert buffer_path("self.seq_lens[:num_reqs_padded]", views) == "self.seq_lens"
    assert buffer_path("self.seq_lens.gpu[: num_reqs_padded + 1]", views) == "self.seq_lens"
    assert buffer_path("self.input_batch.block_table.get_device_tensor(num_reqs_padded)", views) == \
        "self.input_batch.block_table"
    assert buffer_path("(a + b)", views) == ""


def test_scan_survives_tokenize_errors():
    d = scan("x = (1,  # noqa: PAD001\n", "a.py")  # unterminated bracket
    assert [s.codes for s in d.suppressions] == [("PAD001",)]


def test_hash_inside_reason_and_trailing_comments():
    d = scan("self.a = torch.zeros(8)  # padlint: pad=keep(see vLLM #41841)  # more words\n"
             "x = 1  # noqa: PAD001  # why: legacy\n"
             "y = 2  # padlint: ignore[PAD001]  # tracked in #12\n", "a.py")
    assert [(p.buffer, p.value) for p in d.policies] == [("self.a", "see vLLM #41841")]
    assert [(s.line, s.codes, s.text) for s in d.suppressions] == [
        (2, ("PAD001",), "# noqa: PAD001"), (3, ("PAD001",), "# padlint: ignore[PAD001]")]
    assert d.problems == []


def test_directive_inside_string_is_not_a_comment():
    d = scan('s = "# noqa: PAD001"\n', "a.py")
    assert d.suppressions == []


def test_lines_counted_like_python_with_cr_and_formfeed(project, fake_analysis):
    # \f and U+2028 are not line breaks for Python; a lone \r is
    project.write("a.py", raw='s = "a\u2028b"\n\x0cx = 1\rm = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa: PAD001\n'
                  .encode())
    assert _findings(project) == []
    r = project.run("check", "--ignore", "PAD100")
    assert r.rc == 0


def test_rewrite_reset_compound_and_comparisons():
    assert rewrite_reset("if x is not None: x[num_reqs:] = 0", "-1") == "if x is not None: x[num_reqs:] = -1"
    assert rewrite_reset("if n != 0: x[n:] = False", "0") == "if n != 0: x[n:] = 0"
    assert rewrite_reset("x[num_reqs + 1:] = x[num_reqs]", "7") == "x[num_reqs + 1:] = 7"
    assert rewrite_reset("not python (", "1") == "not python ("


POLICY_E2E = """\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
    def __init__(self, n):
        self.a = torch.zeros(n)  # padlint: pad=keep(graph kernel masks rows past num_reqs)
        self.b = torch.zeros(n){b_policy}

    def build(self, num_reqs, num_reqs_padded):
        x = self.a[:num_reqs_padded] < self.b[:num_reqs_padded]
        return CommonAttentionMetadata(is_prefilling=x)

    def build2(self, num_reqs, num_reqs_padded):
        seq_lens = self.b[:num_reqs_padded]
        return CommonAttentionMetadata(seq_lens=seq_lens)

    def update(self, a, b, n):
        self.a[:n] = a  # a step writes both: their padding rows may be stale
        self.b[:n] = b
"""


def test_pad_policies_end_to_end(project):
    # real analysis: the mask's finding names `self.a[:num_reqs_padded]` (kept);
    # `seq_lens` comes from `self.b` (reported; its reset writes the field's neutral 0)
    project.write("runner.py", POLICY_E2E.format(b_policy=""))
    found = _findings(project)
    assert [(f["line"], f["buffer"], f["fix"]["text"]) for f in found] == [
        (16, "self.b[:num_reqs_padded]", "seq_lens[num_reqs:] = 0")]
    project.write("runner.py", POLICY_E2E.format(b_policy="  # padlint: pad=fill(-1)"))
    [f] = _findings(project)
    assert f["fix"]["text"] == "seq_lens[num_reqs:] = -1"
    assert "add `seq_lens[num_reqs:] = -1` before line 16" in f["message"]
    r = project.run("check", "--statistics")
    assert "runner.py:7: self.a (1 finding silenced): graph kernel masks rows past num_reqs" in r.out


@pytest.mark.parametrize("comment", ["# padlint: ignore[pad001]", "# padlint: ignore[Pad0]", "# noqa: pad001",
                                     "# NOQA: pad001,e501", "# padlint: ignore[pad001, PAD100]"])
def test_lowercase_codes_suppress(project, fake_analysis, comment):
    project.write("a.py", f'm = Meta(x=stale("self.a[:num_reqs_padded]"))  {comment}\n')
    assert _findings(project) == []


def test_lowercase_codes_are_reported_unused_in_upper_case(project, fake_analysis):
    project.write("a.py", """\
        x = 1  # padlint: ignore[pad001]
        y = 2  # noqa: pad001, e501
        z = 3  # padlint: ignore[pad001,pad100]
        """)
    found = _findings(project)
    # line 3 lists PAD100 itself (in lower case): no PAD100 for it; e501 is another tool's
    assert [(f["code"], f["line"], f["message"]) for f in found] == [
        ("PAD100", 1, "unused suppression `# padlint: ignore[pad001]` (unused: PAD001)"),
        ("PAD100", 2, "unused suppression `# noqa: pad001, e501` (unused: PAD001)"),
    ]


def test_redundant_identical_suppression_above_is_unused(project, fake_analysis):
    project.write("a.py", """\
        def f(self):
            # padlint: ignore[PAD001]
            # padlint: ignore[PAD001]
            meta = Meta(x=stale("self.a[:num_reqs_padded]"))
            return meta
        """)
    found = _findings(project)
    # the first one suppresses the finding; the second is redundant
    assert [(f["code"], f["line"], f["column"], f["message"]) for f in found] == [
        ("PAD100", 3, 5, "unused suppression `# padlint: ignore[PAD001]` (unused: PAD001)")]


def test_redundant_suppressions_of_one_finding(project, fake_analysis):
    project.write("a.py", """\
        # padlint: ignore
        m = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa: PAD001
        """)
    # the directive on the finding's own line is credited; the one above is redundant
    assert _summary(_findings(project)) == [("PAD100", 1)]
    # a bare `# noqa` is credited only when nothing else matches, and is never reported
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa  # padlint: ignore[PAD0]\n')
    assert _findings(project) == []
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))  # noqa\n')
    assert _findings(project) == []


def test_one_suppression_per_argument_line_is_not_redundant(project, fake_analysis):
    project.write("a.py", """\
        meta = Meta(
            x=stale("self.a[:num_reqs_padded]"),  # noqa: PAD001
            y=stale("self.b[:num_reqs_padded]"),  # padlint: ignore[PAD001]
        )
        """)
    assert _findings(project) == []
    # one directive covers every finding of its statement: a second one on another line is redundant
    project.write("a.py", """\
        meta = Meta(  # padlint: ignore[PAD001]
            x=stale("self.a[:num_reqs_padded]"), y=stale("self.b[:num_reqs_padded]"),
        )  # padlint: ignore[PAD001]
        """)
    assert _summary(_findings(project)) == [("PAD100", 3)]


ARGUMENTS = """\
def f(self, num_reqs, num_reqs_padded):
    meta = Meta({open}
        a=stale("self.a[:num_reqs_padded]"),{a}
        x=stale("self.b[:num_reqs_padded]"),{x}
    ){close}
    return meta
"""


def test_noqa_on_one_argument_line_covers_that_argument_only(project, fake_analysis):
    # line 3 holds `a=`, line 4 `x=` (a field added later): the noqa on line 3 must not silence line 4
    project.write("a.py", ARGUMENTS.format(open="", a="  # noqa: PAD001", x="", close=""))
    assert _summary(_findings(project)) == [("PAD001", 4)]
    project.write("a.py", ARGUMENTS.format(open="", a="", x="  # padlint: ignore[PAD001]", close=""))
    assert _summary(_findings(project)) == [("PAD001", 3)]


@pytest.mark.parametrize("where", ["open", "close"])
def test_noqa_on_opening_or_closing_line_covers_the_statement(project, fake_analysis, where):
    slots = {"open": "", "a": "", "x": "", "close": ""}
    slots[where] = "  # noqa: PAD001"
    project.write("a.py", ARGUMENTS.format(**slots))
    assert _findings(project) == []


def test_noqa_above_covers_the_statement(project, fake_analysis):
    project.write("a.py", ARGUMENTS.format(open="", a="", x="", close="").replace(
        "    meta = Meta(", "    # noqa: PAD001\n    meta = Meta("))
    assert _findings(project) == []
