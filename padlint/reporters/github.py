"""GitHub Actions workflow-command output: one ``::error``/``::warning`` annotation per line.

Format (GitHub docs, "Workflow commands for GitHub Actions", setting an
error/warning message)::

    ::error file=PATH,line=L,col=C,endLine=EL,endColumn=EC,title=PAD001::MESSAGE

Lines and columns are 1-based; ``endColumn`` is the finding's exclusive end
column, passed through as ruff's ``--output-format github`` does.  Escaping
follows the Actions runner (``toolkit/packages/core/src/command.ts``): in the
message ``%`` -> ``%25``, ``\\r`` -> ``%0D``, ``\\n`` -> ``%0A``; in property
values additionally ``:`` -> ``%3A`` and ``,`` -> ``%2C``.  A file that could
not be checked becomes ``::error file=PATH[,line=L],title=padlint::MESSAGE``.
"""

from __future__ import annotations

from padlint.model import CheckResult, FileError, Finding


def escape_data(text: str) -> str:
    """Escape a workflow-command message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, props: list[tuple[str, object]], message: str) -> str:
    joined = ",".join(f"{key}={escape_property(str(value))}" for key, value in props)
    return f"::{kind} {joined}::{escape_data(message)}"


def annotation(finding: Finding) -> str:
    """The annotation line of one finding (``::warning`` for warning severity, else ``::error``)."""
    kind = "warning" if finding.severity == "warning" else "error"
    return _command(kind, [("file", finding.path), ("line", finding.line), ("col", finding.column),
                           ("endLine", finding.end_line), ("endColumn", finding.end_column),
                           ("title", finding.code)], finding.message)


def render(result: CheckResult) -> str:
    """All annotations, findings sorted by position then errors, one per line; "" when there are none."""
    lines = [annotation(f) for f in sorted(result.findings, key=Finding.sort_key)]
    for error in sorted(result.errors, key=FileError.sort_key):
        props: list[tuple[str, object]] = [("file", error.path)]
        if error.line is not None:
            props.append(("line", error.line))
        props.append(("title", "padlint"))
        lines.append(_command("error", props, error.message))
    return "".join(line + "\n" for line in lines)
