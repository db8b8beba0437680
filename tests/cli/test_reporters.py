"""text and json reporters on hand-built results."""

from __future__ import annotations

import json

from padlint import __version__
from padlint.model import CheckResult, FileError, Finding, Fix, TraceStep
from padlint.parse import SourceFile
from padlint.reporters import json_, text
from padlint.suppress import PadPolicy

SRC = """\
def build(self, num_reqs, num_reqs_padded):
    computed = self.computed[:num_reqs_padded]
    prompt = self.prompt[:num_reqs_padded]
    is_prefilling = computed < prompt
    return CommonAttentionMetadata(is_prefilling=is_prefilling)
"""


def _finding(**kw) -> Finding:
    base = dict(
        code="PAD001", path="runner.py", line=5, column=51, end_line=5, end_column=64,
        message="`is_prefilling` has stale padding rows", severity="error", sink="CommonAttentionMetadata",
        field="is_prefilling", buffer="self.computed[:num_reqs_padded]", padded="num_reqs_padded", real="num_reqs",
        trace=(TraceStep("runner.py", 2, "padded slice of `self.computed`"),
               TraceStep("helpers.py", 10, "reset helper does not cover the padding rows"),
               TraceStep("runner.py", 4, "derived from two padded slices")),
        fix=Fix("runner.py", 5, "    ", "is_prefilling[num_reqs:] = False", "reset the padding rows"),
    )
    base.update(kw)
    return Finding(**base)


def _sources() -> dict[str, SourceFile]:
    return {"runner.py": SourceFile("runner.py", SRC, "utf-8", SRC.encode())}


def test_text_finding_block():
    result = CheckResult(files_checked=3, findings=[_finding()])
    out = text.render(result, _sources())
    assert out.splitlines() == [
        "runner.py",
        "runner.py:5:51: PAD001 `is_prefilling` has stale padding rows",
        "  2 |     computed = self.computed[:num_reqs_padded]",
        "    |   note: padded slice of `self.computed`",
        "  = helpers.py:10: note: reset helper does not cover the padding rows",
        "  4 |     is_prefilling = computed < prompt",
        "    |   note: derived from two padded slices",
        "  5 |     return CommonAttentionMetadata(is_prefilling=is_prefilling)",
        "  fix (unsafe): insert `is_prefilling[num_reqs:] = False` before line 5 (reset the padding rows)",
        "",
        "Found 1 finding in 3 files (0 errors).",
    ]


def test_text_without_source_or_fix():
    f = _finding(path="gone.py", trace=(), fix=None)
    out = text.render(CheckResult(files_checked=1, findings=[f]), {})
    assert "gone.py:5:51: PAD001" in out
    assert "  5 | " in out
    assert "fix" not in out


def test_text_fix_in_other_file():
    f = _finding(fix=Fix("base.py", 9, "", "x[n:] = 0", ""))
    out = text.render(CheckResult(files_checked=1, findings=[f]), _sources())
    assert "  fix (unsafe): insert `x[n:] = 0` before line 9 of base.py" in out


def test_text_errors_and_plurals():
    result = CheckResult(files_checked=1, errors=[FileError("a.py", 3, "syntax error: invalid syntax"),
                                                   FileError("b.py", None, "binary file, skipped")])
    out = text.render(result, {})
    assert "a.py:3: error: syntax error: invalid syntax" in out
    assert "b.py: error: binary file, skipped" in out
    assert out.rstrip().endswith("Found 0 findings in 1 file (2 errors).")


def test_text_colour_only_when_asked():
    result = CheckResult(files_checked=1, findings=[_finding()])
    assert "\x1b[" not in text.render(result, _sources(), color=False)
    assert "\x1b[" in text.render(result, _sources(), color=True)


def test_text_statistics():
    result = CheckResult(files_checked=2, findings=[_finding(), _finding(line=4), _finding(code="PAD100")])
    policy = PadPolicy("runner.py", 7, "self.seq_lens", "keep", "kernel reads only [:num_reqs]")
    out = text.render(result, _sources(), statistics=True, policies=[(policy, 2)],
                      rule_name=lambda c: {"PAD001": "stale-padding-reaches-sink"}.get(c, ""))
    assert out.splitlines()[:4] == [
        "    2  PAD001  stale-padding-reaches-sink",
        "    1  PAD100",
        "pad=keep buffers:",
        "  runner.py:7: self.seq_lens (2 findings silenced): kernel reads only [:num_reqs]",
    ]


def test_json_roundtrip():
    f = _finding()
    result = CheckResult(files_checked=2, findings=[f], errors=[FileError("b.py", None, "binary file, skipped")])
    doc = json.loads(json_.render(result))
    assert doc == {"version": __version__, "files_checked": 2, "findings": [f.to_dict()],
                   "errors": [{"path": "b.py", "line": None, "message": "binary file, skipped"}]}
    assert doc["findings"][0]["trace"][1] == {"path": "helpers.py", "line": 10, "note":
                                              "reset helper does not cover the padding rows"}
    assert doc["findings"][0]["fix"]["safe"] is False


def test_json_sorted_findings():
    a, b = _finding(line=9), _finding(line=2)
    doc = json.loads(json_.render(CheckResult(findings=[a, b])))
    assert [f["line"] for f in doc["findings"]] == [2, 9]


CALLS = """\
class Runner:
    def _build(self, x):
        return CommonAttentionMetadata(is_prefilling=x)

    def execute_model(self, num_reqs, num_reqs_padded):
        x = self.computed[:num_reqs_padded] < 1
        return self._build(x)
"""


def test_text_trace_in_call_order_not_by_line():
    # the entry point (lines 5-7) is below the sink (line 3): the trace is printed
    # as the path runs, so the slice comes first and the sink last
    f = _finding(line=3, column=55, end_line=3, end_column=56, trace=(
        TraceStep("runner.py", 5, "entry point `execute_model`"),
        TraceStep("runner.py", 6, "padded slice of `self.computed`"),
        TraceStep("runner.py", 6, "derived: `x`"),
        TraceStep("runner.py", 7, "passed to `_build`"),
    ), fix=None)
    out = text.render(CheckResult(files_checked=1, findings=[f]),
                      {"runner.py": SourceFile("runner.py", CALLS, "utf-8", CALLS.encode())})
    assert out.splitlines()[2:10] == [
        "  5 |     def execute_model(self, num_reqs, num_reqs_padded):",
        "    |   note: entry point `execute_model`",
        "  6 |         x = self.computed[:num_reqs_padded] < 1",
        "    |   note: padded slice of `self.computed`",
        "    |   note: derived: `x`",
        "  7 |         return self._build(x)",
        "    |   note: passed to `_build`",
        "  3 |         return CommonAttentionMetadata(is_prefilling=x)",
    ]
