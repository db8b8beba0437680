"""padlint.baseline: fingerprints without line numbers, multiset matching, stale entries."""

from __future__ import annotations

import json

import pytest

from padlint import baseline
from padlint.baseline import BaselineError, fingerprint

from .conftest import BUGGY_PATH, canonical_finding


def test_fingerprint_ignores_position_message_trace_fix_and_statement(finding):
    # the statement text is left out: vLLM adds arguments to CommonAttentionMetadata(...) in most releases
    moved = canonical_finding(line=40, column=1, end_line=41, end_column=2, message="other words",
                              trace=(), fix=None,
                              statement="meta = CommonAttentionMetadata(num_reqs=n, is_prefilling=is_prefilling, "
                                        "seq_lens=seq_lens)")
    assert fingerprint(moved) == fingerprint(finding)


def test_fingerprint_normalises_buffer_whitespace_and_path_form(finding):
    assert fingerprint(canonical_finding(buffer="self.input_batch.num_computed_tokens_cpu_tensor[ :num_reqs_padded]"
                                         .replace("[ :", "[:"))) == fingerprint(finding)
    assert fingerprint(canonical_finding(path="./" + BUGGY_PATH)) == fingerprint(finding)


@pytest.mark.parametrize("change", [
    {"path": "other.py"}, {"code": "PAD100"}, {"sink": "FlashAttentionMetadata"}, {"field": "seq_lens"},
    {"buffer": "self.seq_lens[:num_reqs_padded]"}, {"function": "GPUModelRunner._dummy_run"},
])
def test_fingerprint_depends_on_identity_fields(finding, change):
    assert fingerprint(canonical_finding(**change)) != fingerprint(finding)


def test_fingerprint_shape(finding):
    fp = fingerprint(finding)
    assert len(fp) == 20 and all(c in "0123456789abcdef" for c in fp)


def test_write_format_is_stable_and_sorted(tmp_path, finding):
    other = canonical_finding(path="a/first.py", field="seq_lens", line=3)
    path = tmp_path / "padlint-baseline.json"
    baseline.write(path, [finding, other], cwd=tmp_path)
    text = path.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert doc["version"] == 3 and doc["tool"] == "padlint"
    assert [e["path"] for e in doc["entries"]] == ["a/first.py", BUGGY_PATH]
    assert doc["entries"][1] == {
        "buffer": "self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]",
        "code": "PAD001",
        "field": "is_prefilling",
        "fingerprint": fingerprint(finding),
        "function": "GPUModelRunner._build_attention_metadata",
        "path": BUGGY_PATH,
        "sink": "CommonAttentionMetadata",
    }
    assert text.endswith("}\n") and text.startswith('{\n  "entries": [\n    {\n      "buffer": ')
    # Input order does not matter; no line numbers are stored.
    baseline.write(tmp_path / "again.json", [other, finding], cwd=tmp_path)
    assert (tmp_path / "again.json").read_text(encoding="utf-8") == text
    assert '"line"' not in text


def test_apply_hides_known_findings_after_lines_shift(tmp_path, finding):
    path = tmp_path / "b.json"
    baseline.write(path, [finding])
    shifted = canonical_finding(line=finding.line + 7, end_line=finding.end_line + 7)
    new = canonical_finding(field="seq_lens")
    kept, messages = baseline.apply(path, [shifted, new])
    assert kept == [new]
    assert messages == []


def test_apply_is_a_multiset(tmp_path, finding):
    path = tmp_path / "b.json"
    twin = canonical_finding(line=30, end_line=30)
    baseline.write(path, [finding])
    kept, messages = baseline.apply(path, [finding, twin])
    assert kept == [twin] and messages == []

    baseline.write(path, [finding, twin])
    kept, messages = baseline.apply(path, [finding])
    assert kept == []
    assert len(messages) == 1


def test_stale_entry_message(tmp_path, finding):
    path = tmp_path / "b.json"
    baseline.write(path, [finding])
    kept, messages = baseline.apply(path, [])
    assert kept == []
    assert messages == [
        (f"{path}: baseline entry no longer matches: PAD001 CommonAttentionMetadata.is_prefilling in "
        f"{BUGGY_PATH} (GPUModelRunner._build_attention_metadata); remove it")
    ]


def test_empty_baseline_keeps_everything(tmp_path, finding):
    path = tmp_path / "b.json"
    baseline.write(path, [])
    assert json.loads(path.read_text()) == {"entries": [], "tool": "padlint", "version": 3}
    assert baseline.apply(path, [finding]) == ([finding], [])


@pytest.mark.parametrize("content, message", [
    (None, "baseline file not found"),
    ("{not json", "baseline is not valid JSON"),
    ("[]", "not a padlint baseline"),
    ('{"version": 4, "entries": []}', "not a padlint baseline"),
    ('{"version": true, "entries": []}', "not a padlint baseline"),
    ('{"version": 1, "entries": [{"code": "PAD001"}]}', "entries[0]: expected an object with a string fingerprint"),
    ('{"version": 1, "entries": [{"fingerprint": "x", "path": 3}]}', "entries[0]"),
])
def test_bad_baseline_raises_one_line_error_naming_the_file(tmp_path, finding, content, message):
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError) as info:
        baseline.apply(path, [finding])
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_paths_are_stored_relative_to_the_baseline_directory(tmp_path):
    # cwd tmp_path: finding paths "pkg/a.py" and an absolute one; the baseline lives in tmp_path/pkg.
    (tmp_path / "pkg").mkdir()
    rel = canonical_finding(path="pkg/a.py")
    absolute = canonical_finding(path=str(tmp_path / "pkg" / "sub" / "b.py"))
    outside = canonical_finding(path="./other/../c.py")
    path = tmp_path / "pkg" / "base.json"
    baseline.write(path, [rel, absolute, outside], cwd=tmp_path)
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    assert [e["path"] for e in entries] == ["../c.py", "a.py", "sub/b.py"]
    # The stored fingerprint is that of the finding seen from the baseline's directory.
    assert entries[1]["fingerprint"] == fingerprint(canonical_finding(path="a.py"))
    # Applied from another working directory, with other path forms, everything matches.
    kept, messages = baseline.apply(path, [canonical_finding(path="a.py"), canonical_finding(path="sub/b.py"),
                                           canonical_finding(path="../c.py")], cwd=tmp_path / "pkg")
    assert (kept, messages) == ([], [])
    kept, messages = baseline.apply(str(tmp_path / "pkg" / "base.json"),
                                    [canonical_finding(path=str(tmp_path / "pkg" / "a.py"))], cwd=tmp_path / "pkg" / "sub")
    assert kept == [] and len(messages) == 2
    # Another file with the same name elsewhere is not the same finding.
    other = canonical_finding(path="a.py")
    kept, _ = baseline.apply(path, [other], cwd=tmp_path)  # tmp_path/a.py, not tmp_path/pkg/a.py
    assert kept == [other]


def test_version_1_baseline_is_still_accepted(tmp_path, finding):
    # Written by padlint before baseline paths became relative: paths as given, matched as given.
    path = tmp_path / "old.json"
    entry = {"code": "PAD001", "field": "is_prefilling", "fingerprint": baseline._legacy_fingerprint(finding),
             "function": "GPUModelRunner._build_attention_metadata", "path": BUGGY_PATH,
             "sink": "CommonAttentionMetadata", "statement": finding.statement}
    path.write_text(json.dumps({"tool": "padlint", "version": 1, "entries": [entry]}), encoding="utf-8")
    assert baseline.apply(path, [finding], cwd=tmp_path) == ([], [])
    other = canonical_finding(field="seq_lens")
    kept, messages = baseline.apply(path, [other], cwd=tmp_path)
    assert kept == [other]
    assert messages == [f"{path}: baseline entry no longer matches: PAD001 CommonAttentionMetadata.is_prefilling "
                        f"in {BUGGY_PATH} (GPUModelRunner._build_attention_metadata); remove it"]


def test_version_2_baseline_matches_after_the_sink_statement_grew(tmp_path, finding):
    # A version 2 entry (statement fingerprint) matches on path, code, sink, field and function,
    # so the statement it recorded may differ from today's
    path = tmp_path / "v2.json"
    old_statement = "meta = CommonAttentionMetadata( is_prefilling=is_prefilling, )"
    entry = {"code": "PAD001", "field": "is_prefilling", "function": finding.function, "path": BUGGY_PATH,
             "sink": "CommonAttentionMetadata", "statement": old_statement,
             "fingerprint": baseline._legacy_fingerprint(canonical_finding(statement=old_statement))}
    path.write_text(json.dumps({"tool": "padlint", "version": 2, "entries": [entry]}), encoding="utf-8")
    assert baseline.apply(path, [finding], cwd=tmp_path) == ([], [])
    other = canonical_finding(function="GPUModelRunner._dummy_run")
    kept, messages = baseline.apply(path, [other], cwd=tmp_path)
    assert kept == [other] and len(messages) == 1
    # an entry with only a fingerprint is matched on it
    bare = {"fingerprint": baseline._legacy_fingerprint(finding)}
    path.write_text(json.dumps({"tool": "padlint", "version": 2, "entries": [bare]}), encoding="utf-8")
    assert baseline.apply(path, [finding], cwd=tmp_path) == ([], [])
