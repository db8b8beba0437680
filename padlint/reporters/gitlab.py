"""GitLab code quality report (``--format gitlab``), as ruff writes it.

A JSON array of issues in GitLab's subset of the Code Climate format::

    {"description": "PAD001 message", "check_name": "PAD001", "fingerprint": "<hex>",
     "severity": "major", "location": {"path": "...", "positions": {
         "begin": {"line": L, "column": C}, "end": {"line": EL, "column": EC}}}}

``severity``: padlint ``error`` -> ``major``, ``warning`` -> ``minor``, else
``info``.  ``fingerprint`` is unique within one report and stable across
runs: a SHA-256 of path, code, sink, field, function and buffer (not the
line), with a counter appended for the rare findings that share all of them.
A file that could not be checked is an issue with ``check_name``
``padlint/file-error`` (severity ``major``) at its line (or line 1).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePath

from padlint.model import CheckResult, FileError, Finding

_SEVERITY = {"error": "major", "warning": "minor"}


def _fingerprint(parts: list[object], seen: dict[str, int]) -> str:
    base = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()
    n = seen.get(base, 0)
    seen[base] = n + 1
    return base if n == 0 else hashlib.sha256(f"{base}:{n}".encode()).hexdigest()


def _issue(finding: Finding, seen: dict[str, int]) -> dict[str, object]:
    path = PurePath(finding.path).as_posix()
    return {
        "description": f"{finding.code} {' '.join(finding.message.split())}",
        "check_name": finding.code,
        "fingerprint": _fingerprint([path, finding.code, finding.sink, finding.field, finding.function,
                                     finding.buffer], seen),
        "severity": _SEVERITY.get(finding.severity, "info"),
        "location": {"path": path, "positions": {
            "begin": {"line": finding.line, "column": finding.column},
            "end": {"line": finding.end_line, "column": finding.end_column}}},
    }


def _error_issue(error: FileError, seen: dict[str, int]) -> dict[str, object]:
    path = PurePath(error.path).as_posix()
    return {
        "description": " ".join(error.message.split()),
        "check_name": "padlint/file-error",
        "fingerprint": _fingerprint([path, "file-error", error.message], seen),
        "severity": "major",
        "location": {"path": path, "lines": {"begin": error.line or 1}},
    }


def render(result: CheckResult) -> str:
    """The report (a JSON array, two-space indented, trailing newline); ``[]`` when there is nothing."""
    seen: dict[str, int] = {}
    issues = [_issue(f, seen) for f in sorted(result.findings, key=Finding.sort_key)]
    issues += [_error_issue(e, seen) for e in sorted(result.errors, key=FileError.sort_key)]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
