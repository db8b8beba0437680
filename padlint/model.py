"""Plain data classes shared by every stage: findings, trace steps, fixes, errors.

The analysis produces them; suppressions, baseline and reporters consume
them.  Nothing here knows about the CLI or an output format.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

#: Python's own line breaks (what ``ast``/``tokenize`` count); str.splitlines also
#: splits on form feeds, U+2028 and others, which would shift line numbers.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """Lines of ``text`` as Python numbers them (``\r\n``, ``\r`` or ``\n`` end a line)."""
    if not keepends:
        lines = LINE_BREAK.split(text)
        if lines and lines[-1] == "":
            lines.pop()
        return lines
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


@dataclass(frozen=True)
class TraceStep:
    """One step of a finding's path: where, and what happens there.

    ``line`` is 1-based.  ``note`` is one sentence, e.g.
    "padded slice of `self.seq_lens` (rows [num_reqs:num_reqs_padded] may be stale)".
    """

    path: str
    line: int
    note: str


@dataclass(frozen=True)
class Fix:
    """An edit that makes the padding rows hold the neutral value: an insertion or a replacement.

    Insertion (``column`` 0, PAD001, PAD003): ``line`` is the 1-based line
    *before which* ``text`` is inserted, at ``indent`` (the indentation of
    that statement, as written).  ``text`` is one statement without
    indentation or newline, e.g. ``is_prefilling[num_reqs:] = False``.

    ``after``: the text follows the statement that ends on line ``line - 1``
    (a row reset right after the statement that vacates the row, PAD003): it
    is inserted at the start of ``line``, at ``indent`` (that statement's
    indentation), as the next statement of the same block.  As plain text the
    insertion is the same: ``indent + text + newline`` at line ``line``, column 1.

    Replacement (``column`` >= 1, PAD002): the expression from (``line``,
    ``column``) to (``end_line``, ``end_column``) (1-based, end exclusive,
    in characters), which must read ``old``, becomes ``text`` (one
    expression), e.g. ``-1`` -> ``NULL_BLOCK_ID``.  ``indent`` is unused.

    ``safe`` is False for all: the fix changes the values of the padding rows.
    """

    path: str
    line: int
    indent: str
    text: str
    description: str
    safe: bool = False
    after: bool = False
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    old: str = ""

    @property
    def where(self) -> str:
        """Where the statement goes, in words: ``before line 7`` / ``after line 6``."""
        return f"after line {self.line - 1}" if self.after else f"before line {self.line}"

    @property
    def is_replacement(self) -> bool:
        return self.column > 0


@dataclass(frozen=True)
class Finding:
    """One place where a value with stale padding rows reaches a sink.

    Positions are 1-based lines and 1-based columns (end column exclusive,
    as in ruff's JSON output) of the sink argument.  ``sink`` is the
    constructor or call as written (``CommonAttentionMetadata``), ``field``
    the keyword, attribute or positional index (as a string) it is passed as,
    ``buffer`` the padded-slice expression as written (whitespace-normalised),
    ``padded``/``real`` the count names, ``statement`` the normalised text of
    the sink statement (used for baseline fingerprints), ``function`` the
    qualified name of the function holding the sink, ``dummy_run`` whether the finding is
    about the paths of dummy runs (PAD001 reports them apart from a real step's).
    """

    code: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    severity: str
    sink: str
    field: str
    buffer: str
    padded: str
    real: str
    trace: tuple[TraceStep, ...] = ()
    fix: Fix | None = None
    statement: str = ""
    function: str = ""
    #: the finding is about the paths of dummy runs to its sink argument (a call on each passes a
    #: padded count as the callee's real count); the same argument's real-step paths are another
    dummy_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["trace"] = [asdict(t) for t in self.trace]
        return d

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.field)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked: ``line`` is None when no line applies."""

    path: str
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sort_key(self) -> tuple:
        return (self.path, self.line or 0, self.message)


@dataclass
class CheckResult:
    """Everything one run produced, before reporting."""

    files_checked: int = 0
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
