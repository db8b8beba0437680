"""Acceptance tests of the static checker on the fixtures in ``fixtures/static/``.

Every fixture declares its expected findings next to the code: a trailing
comment ``# expect: PAD001 field=<field>`` on the line where the finding
must be reported (the line of the sink argument).  Fixed variants carry no
such comment and must produce no finding.  The first test compares, for
every fixture, the expected and the reported ``(code, line, field)``
triples exactly, both ways; the other tests look at the details of a few
findings (sink, buffer, counts, fix, trace, severity, message).

Why each expectation holds is written in the fixture's docstring.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path

import libcst
import pytest

from padlint.analysis import check_module
from padlint.model import Finding
from padlint.profile import load_profile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "static"
FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))

_EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
_ITEM = re.compile(r"^(PAD\d{3})\s+field=(\S+)$")


def parse_expectations(source: str) -> Counter:
    """The expected ``(code, line, field)`` triples declared in ``source``.

    Comments are read with :mod:`tokenize`, so ``# expect:`` inside a string
    or docstring does not count.  One comment may declare several findings
    separated by ``;``.  A malformed declaration raises ``ValueError`` (a
    typo in a fixture must not silently expect nothing).
    """
    expected: Counter = Counter()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        m = _EXPECT.search(tok.string)
        if not m:
            continue
        for item in m.group(1).split(";"):
            item = item.strip()
            im = _ITEM.match(item)
            if not im:
                raise ValueError(f"line {tok.start[0]}: malformed expectation {item!r}")
            expected[(im.group(1), tok.start[0], im.group(2))] += 1
    return expected


@pytest.fixture(scope="module")
def profile():
    return load_profile("vllm")


def run_fixture(name: str, profile) -> tuple[str, list[Finding]]:
    """Source of ``fixtures/static/<name>`` and the findings padlint reports on it."""
    path = FIXTURES / name
    source = path.read_text(encoding="utf-8")
    findings = check_module(libcst.parse_module(source), str(path), profile)
    return source, findings


def line_of(source: str, text: str) -> int:
    """1-based line of the only line of ``source`` whose code starts with ``text``."""
    hits = [i for i, line in enumerate(source.splitlines(), 1) if line.strip().startswith(text)]
    assert len(hits) == 1, f"{text!r} occurs on lines {hits}, expected exactly one"
    return hits[0]


def method_lines(source: str, name: str) -> range:
    """Lines of the method ``name`` (its ``def`` line through its last line)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return range(node.lineno, node.end_lineno + 1)
    raise AssertionError(f"no method {name!r}")


def only(findings: list[Finding], field: str) -> Finding:
    """The one finding for ``field``."""
    hits = [f for f in findings if f.field == field]
    assert len(hits) == 1, f"expected one finding for field {field!r}, got {[(f.line, f.field) for f in findings]}"
    return hits[0]


# ---------------------------------------------------------------------------
# the expectation parser itself


def test_parse_expectations_reads_comments_only():
    src = (
        '"""docstring mentioning # expect: PAD001 field=nope"""\n'
        "x = f(\n"
        "    a=b,  # expect: PAD001 field=a\n"
        "    c=d,  # expect: PAD001 field=c; PAD001 field=1\n"
        ")\n"
        "s = '# expect: PAD001 field=in_string'\n"
    )
    assert parse_expectations(src) == Counter({
        ("PAD001", 3, "a"): 1, ("PAD001", 4, "c"): 1, ("PAD001", 4, "1"): 1})


def test_parse_expectations_rejects_typos():
    with pytest.raises(ValueError, match="malformed"):
        parse_expectations("x = 1  # expect: PAD001 feild=a\n")


def test_every_shape_has_buggy_and_fixed_variant():
    names = {p.stem for p in FIXTURE_FILES}
    assert names, "no fixtures found"
    for name in names:
        assert name.endswith(("_buggy", "_fixed")), name
        base, _, kind = name.rpartition("_")
        other = "fixed" if kind == "buggy" else "buggy"
        assert f"{base}_{other}" in names, f"{name} has no {other} counterpart"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_declarations_match_variant(path):
    """Buggy fixtures declare at least one finding, fixed ones none."""
    expected = parse_expectations(path.read_text(encoding="utf-8"))
    if path.stem.endswith("_buggy"):
        assert expected, f"{path.name}: a buggy fixture must declare its findings"
    else:
        assert not expected, f"{path.name}: a fixed fixture must not expect findings"


# ---------------------------------------------------------------------------
# the acceptance test: reported == declared, both ways


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_findings(path, profile):
    source = path.read_text(encoding="utf-8")
    expected = parse_expectations(source)
    findings = check_module(libcst.parse_module(source), str(path), profile)
    got = Counter((f.code, f.line, f.field) for f in findings)
    missing = sorted((expected - got).elements())
    unexpected = sorted((got - expected).elements())
    details = "\n".join(f"  {f.line}:{f.column} {f.code} field={f.field}: {f.message}" for f in findings)
    assert not missing and not unexpected, (
        f"{path.name}\n missing (code, line, field): {missing}\n"
        f" unexpected (code, line, field): {unexpected}\n reported:\n{details or '  (nothing)'}")


@pytest.mark.parametrize("eol", ["\r\n", "\r"], ids=["crlf", "cr"])
@pytest.mark.parametrize("path", [p for p in FIXTURE_FILES if p.stem.endswith("_buggy")], ids=lambda p: p.name)
def test_line_endings_do_not_change_findings(path, profile, eol):
    """Python accepts \\r\\n and lone \\r line ends; the same findings, at the same lines and
    columns, must come out (a lone \\r used to hide every class from the text test)."""
    from padlint.analysis import check_source

    source = path.read_text(encoding="utf-8")
    want = [(f.code, f.line, f.column, f.field) for f in check_source(source, str(path), profile)]
    got = [(f.code, f.line, f.column, f.field) for f in check_source(source.replace("\n", eol), str(path), profile)]
    assert want and got == want


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_findings_are_well_formed(path, profile):
    """Every finding names this file, a PAD001 code (PAD002 for the wrong-value reset fixture,
    whose resets cover the padding rows), a column range on its line, and its function."""
    source, findings = run_fixture(path.name, profile)
    lines = source.splitlines()
    for f in findings:
        assert f.code == ("PAD002" if path.name == "wrong_value_reset_buggy.py" else "PAD001")
        assert f.path == str(path)
        assert 1 <= f.line <= f.end_line <= len(lines)
        assert f.column >= 1 and (f.end_line > f.line or f.end_column > f.column)
        assert f.severity in ("error", "warning")
        assert f.function.startswith("ModelRunner."), f.function
        assert f.message
        assert f.trace, "a finding explains its path with at least one trace step"
        for step in f.trace:
            assert 1 <= step.line <= len(lines) and step.note


# ---------------------------------------------------------------------------
# details of particular findings


def test_derived_mask_finding_details(profile):
    """The canonical case: sink, counts, function, message and the one-line fix."""
    source, findings = run_fixture("derived_tensor_buggy.py", profile)
    f = only(findings, "is_prefilling")
    assert f.sink == "CommonAttentionMetadata"
    assert f.padded == "num_reqs_padded"
    assert f.real == "num_reqs"
    assert f.severity == "error"
    assert f.function == "ModelRunner._build_attention_metadata"
    # The column is that of the argument: its keyword or its value.
    text = source.splitlines()[f.line - 1]
    assert f.column in (text.index("is_prefilling=") + 1, text.index("=is_prefilling") + 2), f.column
    for word in ("is_prefilling", "CommonAttentionMetadata", "num_reqs", "num_reqs_padded"):
        assert word in f.message, f"message should name {word!r}: {f.message}"
    # The fix writes False (the profile's neutral value for is_prefilling)
    # into the padding rows of the derived tensor itself.
    assert f.fix is not None
    assert re.fullmatch(
        r"is_prefilling\[num_reqs\s*:\s*(num_reqs_padded)?\s*\]"
        r"(\s*=\s*False|\.fill_\(False\))", f.fix.text), f.fix.text
    assert f.fix.safe is False
    assert f.fix.path == f.path
    # It must go after the derivation (the last write of stale rows) and no
    # later than the statement holding the sink.
    derived = line_of(source, "is_prefilling = computed < prompt")
    sink_stmt = line_of(source, "meta = CommonAttentionMetadata(")
    assert derived < f.fix.line <= sink_stmt
    assert f.fix.indent == " " * 8


def test_derived_mask_buffer_names_an_input(profile):
    """A derived tensor's finding points back at a padded slice it came from."""
    _, findings = run_fixture("derived_tensor_buggy.py", profile)
    f = only(findings, "is_prefilling")
    assert f.buffer in (
        "self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]",
        "self.input_batch.num_prompt_tokens_cpu_tensor[:num_reqs_padded]",
    ), f.buffer


def test_cross_method_finding_details(profile):
    source, findings = run_fixture("cross_method_reset_buggy.py", profile)
    f = only(findings, "seq_lens")
    assert f.sink == "CommonAttentionMetadata"
    assert f.buffer == "self.seq_lens[:num_reqs_padded]"
    assert f.padded == "num_reqs_padded"
    assert f.real == "num_reqs"
    assert f.severity == "error"
    assert f.function == "ModelRunner._build_attention_metadata"
    for word in ("self.seq_lens", "num_reqs_padded", "num_reqs", "CommonAttentionMetadata", "seq_lens"):
        assert word in f.message, f"message should name {word!r}: {f.message}"
    # Neutral value for seq_lens is 0; the reset covers [num_reqs:] or
    # [num_reqs:num_reqs_padded] of the persistent buffer.
    assert f.fix is not None
    assert re.fullmatch(
        r"self\.seq_lens\[num_reqs\s*:\s*(num_reqs_padded)?\s*\]"
        r"(\.fill_\(0\)|\.zero_\(\)|\s*=\s*0)", f.fix.text), f.fix.text
    # The trace starts at the entry that reaches the sink.
    assert "execute_model" in f.trace[0].note
    assert f.trace[0].line in method_lines(source, "execute_model")


def test_dummy_run_reported_once_on_the_capture_path(profile):
    """Only the capture path lacks the reset: one finding, traced from capture_model."""
    source, findings = run_fixture("dummy_run_buggy.py", profile)
    assert len(findings) == 1, [(f.line, f.field) for f in findings]
    f = findings[0]
    assert f.field == "seq_lens"
    assert "capture_model" in f.trace[0].note, [s.note for s in f.trace]
    assert f.trace[0].line in method_lines(source, "capture_model")
    # The path goes through _dummy_run, and not through the clean entry.
    assert any(s.line == line_of(source, "self._dummy_run(size)") or "_dummy_run" in s.note for s in f.trace)
    assert not any("execute_model" in s.note for s in f.trace), [s.note for s in f.trace]


def test_padded_count_passed_as_real_is_a_finding_of_its_own(profile):
    """The execute_model path and the dummy path are two findings (see the fixture): the first
    traced from execute_model with the reset at the sink proposed, the second from the dummy run,
    with no reset at the sink (there `num_reqs` is the padded count) and the call that binds it."""
    source, findings = run_fixture("padded_as_real_buggy.py", profile)
    assert len(findings) == 2, [(f.line, f.field) for f in findings]
    real = [f for f in findings if "dummy" not in f.message]
    dummy = [f for f in findings if "dummy" in f.message]
    assert len(real) == 1 and len(dummy) == 1, [f.message for f in findings]
    assert "execute_model" in real[0].trace[0].note
    assert real[0].trace[0].line in method_lines(source, "execute_model")
    assert "capture_model" in dummy[0].trace[0].note
    assert dummy[0].fix is None
    call = line_of(source, "return self._build_attention_metadata(num_reqs=num_reqs_padded)")
    assert f"the call of `_build_attention_metadata` at line {call} passes the padded count as `num_reqs`" \
        in dummy[0].message


def test_uninitialised_slot_mapping_fix_uses_pad_slot_id(profile):
    """torch.empty padding: the fix writes -1 (PAD_SLOT_ID) into [num_tokens:]."""
    source, findings = run_fixture("torch_empty_buggy.py", profile)
    f = only(findings, "slot_mapping")
    assert f.padded == "num_tokens_padded"
    assert f.real == "num_tokens"
    assert f.fix is not None
    assert re.fullmatch(
        r"slot_mapping\[num_tokens\s*:\s*(num_tokens_padded)?\s*\]"
        r"(\.fill_\(-1\)|\s*=\s*-1)", f.fix.text), f.fix.text
    written = line_of(source, "slot_mapping[:num_tokens] =")
    assert written < f.fix.line <= line_of(source, "return CommonAttentionMetadata(")


def test_tuple_return_findings_keep_their_own_counts(profile):
    """Each unpacked element keeps the count pair of its own padded slice."""
    _, findings = run_fixture("tuple_return_buggy.py", profile)
    seq_lens = only(findings, "seq_lens")
    positions = only(findings, "positions")
    assert (seq_lens.real, seq_lens.padded) == ("num_reqs", "num_reqs_padded")
    assert (positions.real, positions.padded) == ("num_tokens", "num_tokens_padded")
    assert seq_lens.buffer == "self.seq_lens[:num_reqs_padded]"
    assert positions.buffer == "self.positions[:num_tokens_padded]"


def test_copy_to_gpu_too_short_reports_device_view_only(profile):
    _, findings = run_fixture("copy_to_gpu_short_buggy.py", profile)
    f = only(findings, "query_start_loc")
    # whitespace-normalised: the space after `[:` as written may or may not survive
    assert re.fullmatch(r"self\.query_start_loc\.gpu\[:\s?num_reqs_padded \+ 1\]", f.buffer), f.buffer
    assert f.padded == "num_reqs_padded"
    assert f.real == "num_reqs"


def test_attribute_store_sink_fields(profile):
    source, findings = run_fixture("attribute_store_buggy.py", profile)
    gpu = only(findings, "dcp_local_seq_lens")
    cpu = only(findings, "dcp_local_seq_lens_cpu")
    assert gpu.line == line_of(source, "meta.dcp_local_seq_lens = ")
    assert cpu.line == line_of(source, "meta.dcp_local_seq_lens_cpu = ")
    assert gpu.severity == cpu.severity == "error"
    assert gpu.padded == "num_reqs_padded" and gpu.real == "num_reqs"


def test_model_forward_is_a_warning(profile):
    """Forward sink: warning; no input is exempt on a belief (token-wise inputs included)."""
    assert not profile.is_forward_exempt("input_ids") and not profile.is_forward_exempt("positions")
    _, findings = run_fixture("model_forward_buggy.py", profile)
    f = only(findings, "seq_lens")
    assert sorted(x.field for x in findings) == ["input_ids", "positions", "seq_lens"]
    assert {x.severity for x in findings} == {"warning"}
    assert f.sink == "self.model"
    assert (f.real, f.padded) == ("num_reqs", "num_reqs_padded")
    assert f.function == "ModelRunner.execute_model"


def test_positional_argument_field_is_its_index(profile):
    source, findings = run_fixture("positional_arg_buggy.py", profile)
    f = only(findings, "0")
    assert f.sink == "FlashAttentionMetadata"
    assert f.buffer == "self.seq_lens[:num_reqs_padded]"
    assert f.line == line_of(source, "self.seq_lens[:num_reqs_padded],")


def test_findings_are_sorted_and_deterministic(profile):
    """Two runs give the same findings, in position order."""
    _, first = run_fixture("tuple_return_buggy.py", profile)
    _, second = run_fixture("tuple_return_buggy.py", profile)
    assert first == second
    assert [f.sort_key() for f in first] == sorted(f.sort_key() for f in first)


BUGGY_FILES = [p for p in FIXTURE_FILES if p.stem.endswith("_buggy")]


@pytest.mark.parametrize("path", BUGGY_FILES, ids=lambda p: p.name)
def test_applying_the_fixes_removes_the_findings(path, profile):
    """A finding's fix is a reset; inserted where it says, the finding goes away.

    Findings that come without a fix must stay; none may appear.
    """
    from padlint.fix import apply_fixes

    source, findings = run_fixture(path.name, profile)
    fixes = [f.fix for f in findings if f.fix is not None]
    if not fixes:
        pytest.skip("no finding with a fix (the acceptance test reports the missing findings)")
    fixed = apply_fixes(source, fixes)
    after = check_module(libcst.parse_module(fixed), str(path), profile)
    unfixed = Counter(f.field for f in findings if f.fix is None)
    assert Counter(f.field for f in after) == unfixed, (
        f"after inserting {[fx.text for fx in fixes]}:\n"
        + "\n".join(f"  {f.line} field={f.field}: {f.message}" for f in after))


# ---------------------------------------------------------------------------
# the same fixtures through the command line


def _padlint_command() -> list[str]:
    """The installed console script beside this interpreter, else ``padlint.cli:main``."""
    script = Path(sys.executable).with_name("padlint")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from padlint.cli import main; sys.exit(main())"]


def test_cli_json_over_fixture_directory():
    """`padlint check --format json fixtures/static` reports exactly the declared findings.

    The CLI adds discovery, a text prefilter, parsing and reporting around
    the analysis; none of them may lose or invent a finding.  Exit status 1:
    there are findings.
    """
    proc = subprocess.run(_padlint_command() + ["check", "--format", "json", str(FIXTURES)],
                          check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, (
        f"expected exit 1 (findings), got {proc.returncode}\nstdout:\n{proc.stdout[-1000:]}\n"
        f"stderr:\n{proc.stderr[-2000:]}")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        pytest.fail(f"no JSON on stdout ({e}):\n{proc.stdout[-1000:]}\nstderr:\n{proc.stderr[-2000:]}")
    findings = doc["findings"] if isinstance(doc, dict) else doc
    got = Counter((Path(f["path"]).name, f["code"], f["line"], f["field"]) for f in findings)
    expected: Counter = Counter()
    for path in FIXTURE_FILES:
        for (code, line, field), n in parse_expectations(path.read_text(encoding="utf-8")).items():
            expected[(path.name, code, line, field)] += n
    missing = sorted((expected - got).elements())
    unexpected = sorted((got - expected).elements())
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {unexpected}"


def test_a_derived_tensor_trace_lists_both_sources_before_the_derivation(profile):
    # `is_prefilling = computed < prompt` takes its rows from two padded slices: the trace shows
    # each source where it is made (lines of `computed = ...` then `prompt = ...`), then the
    # derivation, then the sink, in that order (before, the second source came after the
    # derivation: merged per taint, the shared step first)
    source, found = run_fixture("derived_tensor_buggy.py", profile)
    (f,) = [f for f in found if f.field == "is_prefilling"]
    lines = [s.line for s in f.trace]
    computed, prompt = line_of(source, "computed = self."), line_of(source, "prompt = self.")
    derived = line_of(source, "is_prefilling = computed < prompt")
    assert lines[-4:-1] == [computed, prompt, derived]
