"""Concise text output: one line per finding, ``path:line:col: CODE message``.

The format of ruff's ``--output-format concise`` (lines and columns 1-based).
A file that could not be checked is ``path:line: error: message``, or
``path: error: message`` when no line applies.  No summary line; the CLI
appends, as for the text format, the ``Fixed M findings (K remaining).``
line of ``--fix`` and the ``N findings hidden by the baseline.`` line
(:func:`padlint.cli._render`).
"""

from __future__ import annotations

from padlint.model import CheckResult, FileError, Finding


def finding_line(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}:{finding.column}: {finding.code} {_one_line(finding.message)}"


def error_line(error: FileError) -> str:
    where = error.path if error.line is None else f"{error.path}:{error.line}"
    return f"{where}: error: {_one_line(error.message)}"


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


def render(result: CheckResult) -> str:
    """Findings sorted by position, then errors; each line ends in a newline; "" when there are none."""
    lines = [finding_line(f) for f in sorted(result.findings, key=Finding.sort_key)]
    lines += [error_line(e) for e in sorted(result.errors, key=FileError.sort_key)]
    return "".join(line + "\n" for line in lines)
