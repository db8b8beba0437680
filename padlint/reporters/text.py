"""The ``text`` format (default): findings grouped by file, with source lines and the reset.

For each file with findings, a header line, then per finding::

    path:line:col: CODE message
         5 | computed < prompt ...                    <- trace lines, in call order
           |   note: padded slice of `...`
         = other.py:12: note: ...                   <- a trace step in another file
         7 | CommonAttentionMetadata(is_prefilling=x)  <- the sink line, last
      fix (unsafe): insert `x[num_reqs:] = False` before line 7

then file errors (``path:line: error: message``) and a summary line
"Found N findings in M files (K errors)." where M is the number of files
checked, and the footer the CLI passes (``Fixed M findings (K remaining).``
after ``--fix``, ``N findings hidden by the baseline.``).  Rendered with
rich; colour only when asked (``color=True``), so piped output and
``--output-file`` carry no ANSI codes.  Everything is
printed as :class:`rich.text.Text` (never markup), so ``[`` in messages or
paths is literal.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from padlint.model import LINE_BREAK, CheckResult, Finding
from padlint.parse import SourceFile
from padlint.suppress import PadPolicy

SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow"}


def _console(color: bool) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, color_system="standard" if color else None,
                      highlight=False, emoji=False, markup=False, width=10_000, soft_wrap=True)
    return console, buf


def render(result: CheckResult, sources: dict[str, SourceFile], *, color: bool = False,
           statistics: bool = False, policies: list[tuple[PadPolicy, int]] | None = None,
           rule_name: Callable[[str], str] | None = None, footer: str = "", summary_line: bool = True) -> str:
    """Render ``result``; ``sources`` gives the text of files with findings.

    ``statistics``: print counts per code and the ``pad=keep`` buffers
    instead of the findings.  ``rule_name(code)`` names a code in the
    statistics.  ``footer``: extra text after the summary line.
    ``summary_line``: False leaves out the summary line (``--quiet``).
    """
    console, buf = _console(color)
    if statistics:
        _statistics(console, result, policies or [], rule_name)
    else:
        _findings(console, result, sources)
    _errors(console, result)
    if summary_line:
        console.print(Text(summary(result), style="bold"))
    if footer:
        console.print(Text(footer))
    return buf.getvalue()


def summary(result: CheckResult) -> str:
    """"Found N findings in M files (K errors)." (M: files checked)."""
    n, m, k = len(result.findings), result.files_checked, len(result.errors)
    return f"Found {_plural(n, 'finding')} in {_plural(m, 'file')} ({_plural(k, 'error')})."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _findings(console: Console, result: CheckResult, sources: dict[str, SourceFile]) -> None:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in result.findings:
        by_file[f.path].append(f)
    for path in sorted(by_file):
        console.print(Text(path, style="bold underline"))
        # split like Python's tokenizer (\n, \r\n, \r), not str.splitlines (\f, \v, U+2028, ...)
        lines = LINE_BREAK.split(sources[path].text) if path in sources else []
        for f in sorted(by_file[path], key=Finding.sort_key):
            _finding(console, f, lines)
        console.print()


def _finding(console: Console, f: Finding, lines: list[str]) -> None:
    head = Text()
    head.append(f"{f.path}:{f.line}:{f.column}:", style="bold")
    head.append(" ")
    head.append(f.code, style=SEVERITY_STYLE.get(f.severity, "bold"))
    head.append(" ")
    head.append(f.message)
    console.print(head)
    # the trace in call order (the entry point first, the sink last), not by line
    # number: a step in this file shows its source line once, with the notes of
    # the consecutive steps on that line; a step in another file is one line
    rows: list[tuple[str | None, int, list[str]]] = []
    for step in f.trace:
        where = None if step.path == f.path else step.path
        if rows and rows[-1][0] == where and rows[-1][1] == step.line:
            rows[-1][2].append(step.note)
        else:
            rows.append((where, step.line, [step.note]))
    if not any(where is None and line == f.line for where, line, _ in rows[-1:]):
        rows.append((None, f.line, []))
    width = max((len(str(line)) for where, line, _ in rows if where is None), default=1)
    for where, line_no, notes in rows:
        if where is not None:
            for note in dict.fromkeys(notes):
                console.print(Text(f"  = {where}:{line_no}: note: {note}", style="cyan"))
            continue
        text = lines[line_no - 1].rstrip() if 0 < line_no <= len(lines) else ""
        row = Text()
        row.append(f"  {line_no:>{width}} | ", style="blue")
        row.append(text.expandtabs(4), style="bold" if line_no == f.line else "")
        console.print(row)
        for note in dict.fromkeys(notes):  # each note once
            note_row = Text()
            note_row.append(f"  {'':>{width}} |   ", style="blue")
            note_row.append(f"note: {note}", style="cyan")
            console.print(note_row)
    if f.fix is not None:
        other = "" if f.fix.path == f.path else f" of {f.fix.path}"
        kind = "fix" if f.fix.safe else "fix (unsafe)"
        row = Text()
        row.append(f"  {kind}: ", style="green")
        if f.fix.is_replacement:
            row.append(f"replace `{f.fix.old}` with `{f.fix.text}` at line {f.fix.line}{other}")
        else:
            row.append(f"insert `{f.fix.text}` {f.fix.where}{other}")
        if f.fix.description:
            row.append(f" ({f.fix.description})")
        console.print(row)


def _errors(console: Console, result: CheckResult) -> None:
    for e in result.errors:
        row = Text()
        row.append(f"{e.path}:{e.line}:" if e.line else f"{e.path}:", style="bold")
        row.append(" error: ", style="bold red")
        row.append(e.message)
        console.print(row)
    if result.errors:
        console.print()


def _statistics(console: Console, result: CheckResult, policies: list[tuple[PadPolicy, int]],
                rule_name: Callable[[str], str] | None) -> None:
    counts = Counter(f.code for f in result.findings)
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        row = Text()
        row.append(f"{n:>5}  ")
        row.append(code, style="bold")
        name = rule_name(code) if rule_name else ""
        if name:
            row.append(f"  {name}")
        console.print(row)
    if policies:
        console.print(Text("pad=keep buffers:", style="bold"))
        for policy, silenced in sorted(policies, key=lambda pn: (pn[0].path, pn[0].line)):
            row = Text()
            row.append(f"  {policy.path}:{policy.line}: ", style="bold")
            row.append(policy.buffer)
            row.append(f" ({_plural(silenced, 'finding')} silenced): {policy.value}")
            console.print(row)
    if counts or policies:
        console.print()
