"""The sarif, github and concise reporters on hand-built findings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from padlint.baseline import fingerprint
from padlint.fix import apply_fixes
from padlint.model import CheckResult, FileError
from padlint.reporters import concise, github, sarif
from padlint.rules_doc import DOCS_BASE_URL, explain

from .conftest import BUGGY_PATH, DATA, REPO_ROOT, SCHEMA_SKIP, canonical_finding

#: The OASIS schema is not vendored: it lies in ../shared/data beside the repository (PADLINT_SARIF_SCHEMA
#: overrides).  Without it the schema tests are skipped and the pytest summary says so (conftest.py).
SCHEMA = Path(os.environ.get("PADLINT_SARIF_SCHEMA") or REPO_ROOT / "../shared/data/sarif-schema-2.1.0.json")

WARNING = canonical_finding(path="pkg/runner.py", line=3, column=5, end_line=3, end_column=9, severity="warning",
                            message="`x` passed to `self.model(...)` may hold stale padding rows", sink="self.model",
                            field="0", trace=(), fix=None)
PARSE_ERROR = FileError(path="pkg/broken.py", line=7, message="cannot parse: invalid syntax")
READ_ERROR = FileError(path="pkg/gone.py", line=None, message="cannot read: No such file or directory")


def _result(*findings, errors=()):
    return CheckResult(files_checked=3, findings=list(findings), errors=list(errors))


# -- SARIF -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def validator():
    if not SCHEMA.is_file():
        pytest.skip(f"{SCHEMA_SKIP}: SARIF schema not found at {SCHEMA.resolve()} "
                    f"(expected ../shared/data beside the repository)")
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@pytest.mark.parametrize("result", [
    _result(),
    _result(canonical_finding(), WARNING, errors=[PARSE_ERROR, READ_ERROR]),
    _result(canonical_finding(path="/abs/dir with space/runner.py")),
], ids=["empty", "findings-and-errors", "absolute-path"])
def test_sarif_validates_against_schema(validator, result):
    doc = json.loads(sarif.render(result, rules=["PAD001", "PAD100"]))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_sarif_replacement_fix_validates_and_applies(validator):
    # a PAD002 fix replaces the written value: SARIF carries it as a deletedRegion over the value
    # and the value as insertedContent; applying that region to the text gives apply_fixes' result
    from dataclasses import replace as dc_replace

    from padlint.model import Fix

    text = "def f(x, n):\n    x[n:].fill_(-1)\n"
    fix = Fix(path="pkg/runner.py", line=2, indent="", text="0", description="write 0", column=17,
              end_line=2, end_column=19, old="-1")
    finding = dc_replace(canonical_finding(path="pkg/runner.py", line=2, column=17, end_line=2, end_column=19),
                         code="PAD002", fix=fix)
    doc = json.loads(sarif.render(_result(finding), rules=["PAD002"]))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    (change,) = doc["runs"][0]["results"][0]["fixes"][0]["artifactChanges"]
    (rep,) = change["replacements"]
    region = rep["deletedRegion"]
    line = text.split("\n")[region["startLine"] - 1]
    applied = line[:region["startColumn"] - 1] + rep["insertedContent"]["text"] + line[region["endColumn"] - 1:]
    assert apply_fixes(text, [fix]).split("\n")[1] == applied == "    x[n:].fill_(0)"


def test_sarif_driver_rules_come_from_rule_pages():
    doc = json.loads(sarif.render(_result(), rules=["PAD001", "PAD100"]))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "padlint" and driver["version"] == "0.1.0"
    assert [r["id"] for r in driver["rules"]] == ["PAD001", "PAD100"]
    pad001 = driver["rules"][0]
    assert pad001["name"] == "stale-padding-reaches-sink"
    assert pad001["help"] == {"text": explain("PAD001"), "markdown": explain("PAD001")}
    assert pad001["helpUri"] == DOCS_BASE_URL + "PAD001.md"
    assert pad001["defaultConfiguration"] == {"level": "error"}
    assert driver["rules"][1]["defaultConfiguration"] == {"level": "warning"}
    assert pad001["fullDescription"]["text"].startswith("A *padded slice* of a persistent buffer")
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_sarif_result_fields(finding):
    doc = json.loads(sarif.render(_result(finding), rules=["PAD100", "PAD001"]))
    (res,) = doc["runs"][0]["results"]
    assert res["ruleId"] == "PAD001" and res["ruleIndex"] == 1  # index into rules as given
    assert res["level"] == "error"
    assert res["message"] == {"text": finding.message}
    assert res["locations"] == [{"physicalLocation": {
        "artifactLocation": {"uri": BUGGY_PATH, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 14, "startColumn": 13, "endLine": 14, "endColumn": 40}}}]
    assert res["partialFingerprints"] == {"padlint/v1": fingerprint(finding)}
    (flow,) = res["codeFlows"]
    steps = flow["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [8, 10, 14]
    assert [s["location"]["message"]["text"] for s in steps] == [t.note for t in finding.trace]
    assert res["fixes"] == [{
        "description": {"text": "Reset the padding rows of `is_prefilling` to False"},
        "artifactChanges": [{
            "artifactLocation": {"uri": BUGGY_PATH, "uriBaseId": "%SRCROOT%"},
            "replacements": [{
                "deletedRegion": {"startLine": 12, "startColumn": 1, "endLine": 12, "endColumn": 1},
                "insertedContent": {"text": "        is_prefilling[num_reqs:] = False\n"},
            }],
        }],
    }]


def test_sarif_fix_matches_apply_fixes(finding):
    """Applying the SARIF replacement as plain text gives what padlint --fix writes."""
    source = (DATA / "runner_buggy.py").read_text(encoding="utf-8")
    (res,) = json.loads(sarif.render(_result(finding), rules=["PAD001"]))["runs"][0]["results"]
    rep = res["fixes"][0]["artifactChanges"][0]["replacements"][0]
    lines = source.splitlines(keepends=True)
    at = rep["deletedRegion"]["startLine"] - 1
    by_text = "".join(lines[:at]) + rep["insertedContent"]["text"] + "".join(lines[at:])
    assert by_text == apply_fixes(source, [finding.fix])


def test_sarif_warning_unknown_rule_and_errors():
    odd = canonical_finding(code="PAD999", severity="info")
    doc = json.loads(sarif.render(_result(WARNING, odd, errors=[READ_ERROR, PARSE_ERROR]), rules=["PAD001"]))
    run = doc["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["PAD001", "PAD999"]
    assert run["tool"]["driver"]["rules"][1] == {"id": "PAD999", "shortDescription": {"text": "PAD999"}}
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["PAD001"]["level"] == "warning" and "codeFlows" not in by_rule["PAD001"]
    assert "fixes" not in by_rule["PAD001"]
    assert by_rule["PAD999"]["level"] == "note" and by_rule["PAD999"]["ruleIndex"] == 1
    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] is False
    assert inv["toolExecutionNotifications"] == [
        {"level": "error", "message": {"text": "cannot parse: invalid syntax"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "pkg/broken.py", "uriBaseId": "%SRCROOT%"},
                                             "region": {"startLine": 7}}}]},
        {"level": "error", "message": {"text": "cannot read: No such file or directory"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": "pkg/gone.py", "uriBaseId": "%SRCROOT%"}}}]},
    ]


def test_sarif_uris():
    assert sarif.artifact_location("a b/c%.py") == {"uri": "a%20b/c%25.py", "uriBaseId": "%SRCROOT%"}
    assert sarif.artifact_location("./x/y.py") == {"uri": "x/y.py", "uriBaseId": "%SRCROOT%"}
    assert sarif.artifact_location("/abs/dir with space/r.py") == {"uri": "file:///abs/dir%20with%20space/r.py"}


def test_sarif_output_is_deterministic(finding):
    a = sarif.render(_result(WARNING, finding), rules=["PAD001", "PAD100"])
    b = sarif.render(_result(finding, WARNING), rules=["PAD001", "PAD100"])
    assert a == b and a.endswith("}\n")


# -- GitHub annotations ------------------------------------------------------------

def test_github_annotation_line(finding):
    assert github.render(_result(finding)) == (
        f"::error file={BUGGY_PATH},line=14,col=13,endLine=14,endColumn=40,title=PAD001::"
        "`is_prefilling` passed to `CommonAttentionMetadata(is_prefilling=...)` may hold stale "
        "padding rows [num_reqs:num_reqs_padded]\n"  # ':' is escaped only in properties
    )


def test_github_warning_and_errors_after_findings(finding):
    out = github.render(_result(WARNING, finding, errors=[PARSE_ERROR, READ_ERROR]))
    assert out.splitlines() == [  # findings by path ("pkg/" < "tests/"), then errors by path
        ("::warning file=pkg/runner.py,line=3,col=5,endLine=3,endColumn=9,title=PAD001::"
        "`x` passed to `self.model(...)` may hold stale padding rows"),
        f"::error file={BUGGY_PATH},line=14,col=13,endLine=14,endColumn=40,title=PAD001::{finding.message}",
        "::error file=pkg/broken.py,line=7,title=padlint::cannot parse: invalid syntax",
        "::error file=pkg/gone.py,title=padlint::cannot read: No such file or directory",
    ]


def test_github_escaping():
    odd = canonical_finding(path="dir,1/a:b%.py", message="50% stale\r\nsee a:b, c")
    assert github.render(_result(odd)) == (
        "::error file=dir%2C1/a%3Ab%25.py,line=14,col=13,endLine=14,endColumn=40,title=PAD001::"
        "50%25 stale%0D%0Asee a:b, c\n")
    assert github.escape_property("a%:,\n") == "a%25%3A%2C%0A"
    assert github.escape_data("a%:,\n") == "a%25:,%0A"


def test_github_empty():
    assert github.render(_result()) == ""


# -- concise -------------------------------------------------------------------------

def test_concise_lines_sorted_then_errors(finding):
    out = concise.render(_result(finding, WARNING, errors=[READ_ERROR, PARSE_ERROR]))
    assert out.splitlines() == [
        "pkg/runner.py:3:5: PAD001 `x` passed to `self.model(...)` may hold stale padding rows",
        f"{BUGGY_PATH}:14:13: PAD001 {finding.message}",
        "pkg/broken.py:7: error: cannot parse: invalid syntax",
        "pkg/gone.py: error: cannot read: No such file or directory",
    ]
    assert out.endswith("\n")


def test_concise_keeps_each_finding_on_one_line():
    out = concise.render(_result(canonical_finding(message="first\nsecond")))
    assert out == f"{BUGGY_PATH}:14:13: PAD001 first second\n"


def test_concise_empty():
    assert concise.render(_result()) == ""


def test_sarif_defines_srcroot_as_the_working_directory(tmp_path, monkeypatch, finding):
    monkeypatch.chdir(tmp_path)
    run = json.loads(sarif.render(_result(finding), rules=["PAD001"]))["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")
    # an explicit root, one with a space, and the file-system root keep exactly one trailing slash
    (tmp_path / "a b").mkdir()
    doc = sarif.to_sarif(_result(finding), rules=["PAD001"], srcroot=tmp_path / "a b")
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/a%20b/"
    assert sarif.srcroot_uri("/") == "file:///"


def test_missing_sarif_schema_is_said_in_the_summary(tmp_path):
    # a fresh clone has no ../shared/data: the schema tests skip, and `pytest -q` must say so
    import subprocess
    import sys

    test = f"{Path(__file__)}::test_sarif_validates_against_schema"  # not this test: it would run itself
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], cwd=REPO_ROOT, capture_output=True, text=True, check=False,
                       env={**os.environ, "PADLINT_SARIF_SCHEMA": str(tmp_path / "absent.json")}, timeout=300)
    assert "SARIF schema tests skipped: sarif-schema-2.1.0.json not found" in r.stdout, r.stdout
    assert r.returncode == 0
