"""SARIF 2.1.0 output (OASIS SARIF v2.1.0, as read by GitHub code scanning).

One run; ``tool.driver.rules`` from the rule pages (:mod:`padlint.rules_doc`),
each with ``help`` (text and markdown of the page) and ``helpUri``
(:data:`padlint.rules_doc.DOCS_BASE_URL`).  Each finding is a result with a
``%SRCROOT%``-relative location (paths as given; absolute paths become
``file://`` URIs; the run's ``originalUriBaseIds`` defines ``%SRCROOT%`` as
the absolute ``file://`` URI of the working directory, ending in ``/``), a code flow from its trace, the baseline fingerprint as
``partialFingerprints["padlint/v1"]``, and its fix as an insertion.
Columns are 1-based Unicode code points, end column exclusive, exactly as in
:class:`padlint.model.Finding` (``run.columnKind`` says so).  Files that
could not be checked become ``toolExecutionNotifications``;
``executionSuccessful`` is false when there are any.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from padlint import __version__
from padlint.baseline import fingerprint
from padlint.model import CheckResult, FileError, Finding, Fix, TraceStep
from padlint.rules_doc import REPOSITORY_URL, RulePage, load_pages

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "padlint/v1"
SRCROOT = "%SRCROOT%"

_LEVELS = {"error": "error", "warning": "warning"}


def level(severity: str) -> str:
    """SARIF ``level`` of a padlint severity: error -> "error", warning -> "warning", else "note"."""
    return _LEVELS.get(severity, "note")


def artifact_location(path: str) -> dict[str, str]:
    """``artifactLocation`` of a path: relative paths against ``%SRCROOT%``, absolute ones as file URIs."""
    p = PurePath(path)
    if p.is_absolute():
        return {"uri": p.as_uri()}
    return {"uri": quote(p.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def srcroot_uri(root: str | os.PathLike[str]) -> str:
    """The absolute ``file://`` URI of directory ``root``, ending in ``/`` (SARIF 3.14.14: a base URI is a directory)."""
    uri = Path(os.path.abspath(root)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _rule(code: str, page: RulePage | None) -> dict[str, Any]:
    if page is None:
        return {"id": code, "shortDescription": {"text": code}}
    help_md = page.markdown()
    first = page.section("What it finds").split("\n\n")[0]
    return {
        "id": page.code,
        "name": page.name,
        "shortDescription": {"text": page.summary},
        "fullDescription": {"text": " ".join(first.split()) or page.summary},
        "help": {"text": help_md, "markdown": help_md},
        "helpUri": page.help_uri,
        "defaultConfiguration": {"level": level(page.severity)},
    }


def _location(path: str, line: int, column: int | None = None, end_line: int | None = None,
              end_column: int | None = None) -> dict[str, Any]:
    region: dict[str, int] = {"startLine": line}
    if column is not None:
        region["startColumn"] = column
    if end_line is not None:
        region["endLine"] = end_line
    if end_column is not None:
        region["endColumn"] = end_column
    return {"physicalLocation": {"artifactLocation": artifact_location(path), "region": region}}


def _code_flow(trace: tuple[TraceStep, ...]) -> dict[str, Any]:
    return {"threadFlows": [{"locations": [
        {"location": {**_location(step.path, step.line), "message": {"text": step.note}}}
        for step in trace]}]}


def _fix(fix: Fix) -> dict[str, Any]:
    if fix.is_replacement:
        return {
            "description": {"text": fix.description or f"Replace `{fix.old}` with `{fix.text}`"},
            "artifactChanges": [{
                "artifactLocation": artifact_location(fix.path),
                "replacements": [{
                    "deletedRegion": {"startLine": fix.line, "startColumn": fix.column,
                                      "endLine": fix.end_line or fix.line, "endColumn": fix.end_column},
                    "insertedContent": {"text": fix.text},
                }],
            }],
        }
    return {
        "description": {"text": fix.description or f"Insert `{fix.text}`"},
        "artifactChanges": [{
            "artifactLocation": artifact_location(fix.path),
            "replacements": [{
                "deletedRegion": {"startLine": fix.line, "startColumn": 1, "endLine": fix.line, "endColumn": 1},
                "insertedContent": {"text": f"{fix.indent}{fix.text}\n"},
            }],
        }],
    }


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": level(finding.severity),
        "message": {"text": finding.message},
        "locations": [_location(finding.path, finding.line, finding.column, finding.end_line,
                                finding.end_column)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding)},
    }
    if finding.trace:
        out["codeFlows"] = [_code_flow(finding.trace)]
    if finding.fix is not None:
        out["fixes"] = [_fix(finding.fix)]
    return out


def _notification(error: FileError) -> dict[str, Any]:
    loc = (_location(error.path, error.line) if error.line is not None
           else {"physicalLocation": {"artifactLocation": artifact_location(error.path)}})
    return {"level": "error", "message": {"text": error.message}, "locations": [loc]}


def to_sarif(result: CheckResult, *, rules: list[str], srcroot: str | os.PathLike[str] | None = None
             ) -> dict[str, Any]:
    """The SARIF log as a dict.

    ``srcroot`` is the directory relative paths start from (default: the
    working directory), given as ``originalUriBaseIds["%SRCROOT%"]``.
    ``rules`` are the codes to describe in ``tool.driver.rules`` (typically
    the selected ones), in that order; a code that a finding carries but
    ``rules`` lacks is appended, so every ``ruleIndex`` is valid.  A code
    without a rule page gets a descriptor with only its id.
    """
    pages = load_pages()
    codes = list(dict.fromkeys(rules))
    codes += sorted({f.code for f in result.findings} - set(codes))
    index = {code: i for i, code in enumerate(codes)}
    findings = sorted(result.findings, key=Finding.sort_key)
    errors = sorted(result.errors, key=FileError.sort_key)
    return {
        "$schema": SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "padlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": REPOSITORY_URL,
                "rules": [_rule(code, pages.get(code)) for code in codes],
            }},
            "invocations": [{
                "executionSuccessful": not errors,
                "toolExecutionNotifications": [_notification(e) for e in errors],
            }],
            "originalUriBaseIds": {SRCROOT: {"uri": srcroot_uri(Path.cwd() if srcroot is None else srcroot)}},
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, index[f.code]) for f in findings],
        }],
    }


def render(result: CheckResult, *, rules: list[str], srcroot: str | os.PathLike[str] | None = None) -> str:
    """SARIF 2.1.0 JSON text (two-space indented, trailing newline) of ``result``; see :func:`to_sarif`."""
    return json.dumps(to_sarif(result, rules=rules, srcroot=srcroot), indent=2, ensure_ascii=False) + "\n"
