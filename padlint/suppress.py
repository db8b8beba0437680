"""Comment directives: suppressions, per-buffer pad policies, PAD100 and PAD101.

Runs after the analysis, over one file's findings and text (comments are
read with :mod:`tokenize`, statement spans from its logical lines).

Suppressions
    ``# padlint: ignore[PAD001]``, ``# padlint: ignore[PAD001,PAD100]``,
    bare ``# padlint: ignore``; ``# noqa: PAD001`` and bare ``# noqa``.
    Codes are prefixes (``PAD0`` covers ``PAD001``), like flake8, and
    case-insensitive (``ignore[pad001]``, ``noqa: pad001``; normalised to
    upper case), like ruff's ``noqa``.  A
    directive on the opening or the closing line of a statement, or in a
    block of comment-only lines directly above it, applies to every finding
    of that statement; on any other line of a multi-line statement (an
    argument's line) it applies only to the findings on that line (that
    argument's).

PAD100 (unused suppression, like ruff's RUF100)
    A ``padlint: ignore`` directive, or a ``PAD`` code of a ``noqa``
    directive, that suppressed nothing.  A finding is credited to one
    directive only (see :func:`_suppress`), so a redundant second directive
    for the same finding is unused too.  A bare ``# noqa`` and non-PAD
    ``noqa`` codes belong to other tools and are never reported.  Listing
    ``PAD100`` in the directive itself silences its PAD100.

Pad policies (on the allocation statement of a persistent buffer)
    ``# padlint: pad=keep(reason)``: findings whose padded-slice buffer is
    that attribute (any view: ``self.seq_lens.gpu[:n]`` matches
    ``self.seq_lens``) are dropped and the buffer is listed with its reason
    by ``--statistics``.  ``pad=zero`` / ``pad=fill(v)``: the finding stays,
    with its reset (``fix.text``, and the same text in message and fix
    description) rewritten to write ``0`` / ``v``.  Policies apply within
    the file that declares them.

PAD101 (invalid directive)
    A ``padlint:`` comment that cannot be understood: unknown directive,
    bad code list (also a code no rule has, ``ignore[PAD9]``), ``pad=keep``
    without a reason, ``pad=fill`` without a value or with one a fix cannot
    write (not a finite literal, ``self.<attribute>`` or a name the module
    binds), a pad policy not on an assignment to a name or attribute.
    Reported as a finding (severity "error") rather than a run error, so it
    points at the line and obeys select/ignore.
"""

from __future__ import annotations

import ast
import functools
import io
import math
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from padlint.config import known_codes
from padlint.model import Finding

UNUSED_CODE = "PAD100"
INVALID_CODE = "PAD101"

_PADLINT = re.compile(r"padlint\s*:\s*(?P<body>.*)", re.IGNORECASE | re.DOTALL)
_IGNORE = re.compile(r"ignore(?P<rest>(?:\s.*|\[.*)?)$", re.DOTALL)
_PAD = re.compile(r"pad\s*=\s*(?P<kind>[A-Za-z_]+)\s*(?P<arg>\(.*)?$", re.DOTALL)
_NOQA = re.compile(r"noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_START = re.compile(r"#\s*(?=noqa\b|padlint\s*:)", re.IGNORECASE)
_CODE = re.compile(r"PAD[0-9]{0,3}")
_ATTR_PATH = re.compile(r"\s*([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)")


@dataclass
class Suppression:
    """One ``padlint: ignore`` or ``noqa`` directive; ``codes`` None means bare."""

    line: int
    column: int  # 1-based
    end_column: int  # exclusive
    kind: str  # "padlint" or "noqa"
    codes: tuple[str, ...] | None
    text: str
    used: set[str] = field(default_factory=set)
    used_bare: bool = False


@dataclass(frozen=True)
class PadPolicy:
    """A ``pad=keep|zero|fill`` declaration for the buffer assigned on ``line``.

    ``buffer`` is the assigned attribute path (``self.seq_lens``), ``value``
    the reason (keep) or the pad value as written (zero -> "0", fill).
    """

    path: str
    line: int
    buffer: str
    kind: str
    value: str


@dataclass
class Directives:
    """What :func:`scan` found in one file.

    ``spans`` maps a physical line to its logical line (first, last);
    ``comment_only`` holds lines with nothing but a comment.
    """

    path: str = ""
    suppressions: list[Suppression] = field(default_factory=list)
    policies: list[PadPolicy] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    comment_only: set[int] = field(default_factory=set)


@dataclass
class Outcome:
    """Result of :func:`apply` for one file.

    ``findings``: kept findings plus PAD100/PAD101; ``suppressed``: number
    of findings hidden by a suppression; ``kept_by_policy``: findings
    dropped by ``pad=keep``, per policy.
    """

    findings: list[Finding]
    suppressed: int = 0
    kept_by_policy: dict[PadPolicy, int] = field(default_factory=dict)


def scan(text: str, path: str) -> Directives:
    """Read the directives and statement spans of one file's text.

    Never raises: a tokenize error (the file may not even be valid Python
    when the prefilter skipped parsing) keeps what was read before it.
    """
    out = Directives(path=path)
    module_names = functools.cache(lambda: _top_level_names(text))  # read for fill values only
    comments: list[tokenize.TokenInfo] = []
    logical: list[tuple[int, int, list[tokenize.TokenInfo]]] = []
    start: int | None = None
    current: list[tokenize.TokenInfo] = []
    skip = {tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if tok.type == tokenize.COMMENT:
                comments.append(tok)
            if start is None:
                if tok.type == tokenize.COMMENT:
                    out.comment_only.add(tok.start[0])
                    continue
                if tok.type == tokenize.NL or tok.type in skip:
                    continue
                start, current = tok.start[0], []
            current.append(tok)
            if tok.type == tokenize.NEWLINE:
                end = tok.start[0]
                for line in range(start, end + 1):
                    out.spans[line] = (start, end)
                logical.append((start, end, current))
                start = None
    except (tokenize.TokenError, SyntaxError):
        pass
    for tok in comments:
        _read_comment(tok, path, logical, out, module_names)
    return out


def _read_comment(tok: tokenize.TokenInfo, path: str, logical, out: Directives,
                  module_names: Callable[[], frozenset[str]]) -> None:
    """Record the directives of one comment token.

    A comment may hold several (``# noqa: E501  # padlint: ignore[PAD001]``);
    each runs from its ``#`` to the next directive's ``#``, so other ``#``
    (``pad=keep(see #41841)``) stay part of the text.
    """
    line, col0 = tok.start
    text = tok.string
    starts = [m.start() for m in _START.finditer(text)]
    for i, start in enumerate(starts):
        segment = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)].rstrip()
        body = segment[1:].strip()
        column = col0 + start + 1  # 1-based column of the '#'
        end_column = col0 + start + len(segment) + 1
        if body[:4].lower() == "noqa":
            m = _NOQA.match(body)
            # codes are case-insensitive (`noqa: pad001`), as in ruff; compared in upper case
            codes = (tuple(c.upper() for c in re.split(r"[,\s]+", m.group("codes").strip()))
                     if m and m.group("codes") else None)
            shown = m.group(0) if m else body[:4]
            end_column = column + segment.index(shown) + len(shown)
            out.suppressions.append(Suppression(line, column, end_column, "noqa", codes, "# " + shown))
            continue
        m = _PADLINT.match(body)
        if not m:
            continue
        directive = m.group("body").strip()
        problem = _read_padlint(directive, line, column, end_column, path, logical, out, module_names)
        if problem:
            out.problems.append(_finding(INVALID_CODE, path, line, column, end_column,
                                         f"invalid padlint directive `# {body}`: {problem}", "error", body))


def _read_padlint(directive: str, line: int, column: int, end_column: int, path: str, logical,
                  out: Directives, module_names: Callable[[], frozenset[str]]) -> str | None:
    """Record one ``padlint:`` directive; returns a problem description or None."""
    m = _IGNORE.match(directive)
    if m:
        rest = m.group("rest").strip()
        codes = None
        if rest.startswith("["):
            if "]" not in rest:
                return "unclosed '[' in the code list"
            codes = tuple(c.upper() for c in re.split(r"[,\s]+", rest[1:rest.index("]")]) if c)
            if not codes:
                return "empty code list (write `ignore` to suppress every code)"
            bad = [c for c in codes if not _CODE.fullmatch(c)]
            if bad:
                return f"invalid rule code {bad[0]!r} (expected e.g. PAD001)"
            known = known_codes()
            unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
            if unknown:
                return f"unknown rule code {unknown[0]!r} (no rule's code starts with it; `padlint rules` lists them)"
        shown = "# padlint: ignore" + (rest[: rest.index("]") + 1] if codes else "")
        out.suppressions.append(Suppression(line, column, min(end_column, column + len(shown)), "padlint", codes,
                                            shown))
        return None
    m = _PAD.match(directive)
    if not m:
        return "expected `ignore`, `ignore[CODES]`, `pad=keep(reason)`, `pad=zero` or `pad=fill(value)`"
    kind, arg = m.group("kind"), m.group("arg")
    inner = None
    if arg is not None:
        close = _closing_paren(arg)
        if close is None:
            return "expected `)` at the end of the pad policy"
        trailing = arg[close + 1:].strip()
        if trailing and not trailing.startswith("#"):
            return f"unexpected text after the pad policy: {trailing!r}"
        inner = arg[1:close].strip()
    if kind == "keep":
        if not inner:
            return "pad=keep needs a reason: `pad=keep(kernel reads only [:num_reqs])`"
        value = inner
    elif kind == "zero":
        if inner:
            return "pad=zero takes no argument (use pad=fill(value))"
        value = "0"
    elif kind == "fill":
        if not inner:
            return "pad=fill needs a value: `pad=fill(-1)`"
        try:
            expr = ast.parse(inner, mode="eval").body
        except SyntaxError:
            return f"pad=fill value {inner!r} is not a Python expression"
        problem = _fill_value_problem(expr, inner, module_names)
        if problem:
            return problem
        value = inner
    else:
        return f"unknown pad policy {kind!r} (expected keep, zero or fill)"
    target = _assigned_target(line, logical)
    if target is None:
        return "a pad policy must be on an assignment to a name or attribute (the buffer's allocation)"
    out.policies.append(PadPolicy(path, target[0], target[1], kind, value))
    return None


def _top_level_names(text: str) -> frozenset[str]:
    """The names a module binds at its top level (imports, assignments, functions, classes, also
    under top-level ``if``/``try``/``with``); empty when the text does not parse."""
    try:
        todo = list(ast.parse(text).body)
    except (SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.ExceptHandler):
            todo.extend(node.body)
    return frozenset(names)


def _fill_value_problem(expr: ast.expr, text: str, module_names: Callable[[], frozenset[str]]) -> str | None:
    """Why ``pad=fill(text)`` cannot be written into a fix, or None: the value must be a finite
    literal (``-1``, ``0``, ``False``), ``self.<attribute>``, or a name the module binds at its top
    level (an imported constant, ``NULL_BLOCK_ID``), as such a name or one of its attributes."""
    try:
        value = ast.literal_eval(expr)
    except (ValueError, SyntaxError, TypeError):
        value = None
    else:
        if isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
            return None
        return f"pad=fill value {text!r} is not a finite number or bool"
    root = expr
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and (root.id == "self" and root is not expr or root.id in module_names()):
        return None
    return (f"pad=fill value {text!r} is neither a literal (-1, 0, False), `self.<attribute>`, nor a name this "
            f"module binds at its top level (the fix would write it into the code)")


def _closing_paren(text: str) -> int | None:
    """Index of the ``)`` closing the ``(`` at ``text[0]``, or None."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


def _assigned_target(line: int, logical) -> tuple[int, str] | None:
    """The statement the comment on ``line`` annotates: (its first line, target path)."""
    stmt = None
    for first, last, toks in logical:
        if first <= line <= last:
            stmt = (first, toks)
            break
        if first > line:  # a comment-only line above the statement
            stmt = (first, toks)
            break
    if stmt is None:
        return None
    first, toks = stmt
    parts: list[str] = []
    depth = 0
    for tok in toks:
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if depth == 0 and tok.type == tokenize.OP and tok.string in ("=", ":"):
            break
        if tok.type in (tokenize.COMMENT, tokenize.NL):
            continue
        parts.append(tok.string)
    else:
        return None
    target = "".join(parts)
    if not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", target):
        return None
    return first, target


def buffer_path(expr: str, views: frozenset[str]) -> str:
    """The attribute path of a buffer expression, without trailing views/getters.

    ``self.seq_lens.gpu[:num_reqs_padded]`` -> ``self.seq_lens`` (with
    ``gpu`` in ``views``); ``blk.get_device_tensor(n)`` -> ``blk``.
    """
    m = _ATTR_PATH.match(expr)
    if not m:
        return ""
    parts = re.sub(r"\s+", "", m.group(1)).split(".")
    while len(parts) > 1 and parts[-1] in views:
        parts.pop()
    return ".".join(parts)


def apply(findings: list[Finding], directives: Directives, views: frozenset[str] = frozenset()) -> Outcome:
    """Apply pad policies and suppressions to one file's findings; add PAD100/PAD101.

    ``views`` are the names stripped when matching buffers to pad policies
    (the profile's shared and device views and padded getters).
    """
    out = Outcome(findings=[])
    by_buffer: dict[str, PadPolicy] = {}
    for policy in directives.policies:
        by_buffer[buffer_path(policy.buffer, views)] = policy
    for finding in findings:
        policy = by_buffer.get(buffer_path(finding.buffer, views)) if finding.buffer else None
        if policy is not None and policy.kind == "keep":
            out.kept_by_policy[policy] = out.kept_by_policy.get(policy, 0) + 1
            continue
        if policy is not None:
            finding = _with_pad_value(finding, policy.value)
        if _suppress(finding, directives):
            out.suppressed += 1
            continue
        out.findings.append(finding)
    for policy in directives.policies:
        if policy.kind == "keep":
            out.kept_by_policy.setdefault(policy, 0)
    out.findings.extend(_unused(directives, directives.path))
    out.findings.extend(directives.problems)
    out.findings.sort(key=Finding.sort_key)
    return out


def _candidate_lines(finding: Finding, directives: Directives) -> set[int]:
    """Lines whose directives cover ``finding``: its own lines, the opening and closing lines
    of its statement, and the comment-only lines right above the statement.  Not the other
    lines of a multi-line statement: a directive on one argument's line covers that
    argument's findings only (a field added later on another line is not silenced)."""
    lines = set(range(finding.line, max(finding.line, finding.end_line) + 1))
    first, last = directives.spans.get(finding.line, (finding.line, finding.line))
    lines.update((first, last))
    above = min(lines) - 1
    while above in directives.comment_only:
        lines.add(above)
        above -= 1
    return lines


def _suppress(finding: Finding, directives: Directives) -> bool:
    """Whether a directive suppresses ``finding``; credits exactly one directive with it.

    One directive is enough, so the others that would match stay unused and
    are reported as PAD100 (two identical comments above a statement: the
    second).  Credited: a directive on the finding's own lines before one
    elsewhere in the statement or above it (each argument line may carry
    its own), then the first in the file; a bare ``# noqa`` (another tool's
    too, never reported) only when nothing else matches.  Within the
    credited directive every matching code counts as used.
    """
    lines = _candidate_lines(finding, directives)
    own = range(finding.line, max(finding.line, finding.end_line) + 1)
    matching: list[tuple[tuple[bool, bool, int, int], Suppression, list[str] | None]] = []
    for s in directives.suppressions:
        if s.line not in lines:
            continue
        codes = None if s.codes is None else [c for c in s.codes if finding.code.startswith(c)]
        if codes == []:
            continue
        rank = (s.kind == "noqa" and s.codes is None, s.line not in own, s.line, s.column)
        matching.append((rank, s, codes))
    if not matching:
        return False
    _rank, s, codes = min(matching, key=lambda m: m[0])
    if codes is None:
        s.used_bare = True
    else:
        s.used.update(codes)
    return True


def _unused(directives: Directives, path: str) -> list[Finding]:
    out = []
    for s in directives.suppressions:
        if s.codes is None:
            if s.kind == "padlint" and not s.used_bare:
                out.append(_finding(UNUSED_CODE, path, s.line, s.column, s.end_column,
                                    f"unused suppression `{s.text}`: no finding to suppress here", "warning",
                                    s.text))
            continue
        if UNUSED_CODE in s.codes:
            continue
        ours = [c for c in s.codes if c.startswith("PAD")]
        unused = [c for c in ours if c not in s.used]
        if unused:
            out.append(_finding(UNUSED_CODE, path, s.line, s.column, s.end_column,
                                f"unused suppression `{s.text}` (unused: {', '.join(unused)})", "warning", s.text))
    return out


def _finding(code: str, path: str, line: int, column: int, end_column: int, message: str, severity: str,
             statement: str) -> Finding:
    return Finding(code=code, path=path, line=line, column=column, end_line=line, end_column=end_column,
                   message=message, severity=severity, sink="", field="", buffer="", padded="", real="",
                   trace=(), fix=None, statement=statement, function="")


def rewrite_reset(text: str, value: str) -> str:
    """``text`` (a reset statement) writing ``value`` instead of its neutral value.

    Parsed with libcst, so compound statements keep their shape:
    ``x[num_reqs:] = False`` -> ``x[num_reqs:] = 0``;
    ``if x is not None: x[n:] = 0`` -> ``if x is not None: x[n:] = -1``;
    ``buf[n:].fill_(0)`` -> ``buf[n:].fill_(-1)`` (also ``.fill``);
    ``buf[n:].zero_()`` -> ``buf[n:].fill_(v)`` (unchanged when v is 0).
    Text that does not parse, or holds no assignment or fill call, is returned unchanged.
    """
    import libcst as cst

    try:
        stmt = cst.parse_statement(text.strip())
        new_value = cst.parse_expression(value)
    except (cst.ParserSyntaxError, ValueError):
        return text

    class _Rewrite(cst.CSTTransformer):
        def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
            return updated.with_changes(value=new_value)

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            func = updated.func
            if not isinstance(func, cst.Attribute):
                return updated
            if func.attr.value in ("fill_", "fill") and len(updated.args) == 1:
                return updated.with_changes(args=[updated.args[0].with_changes(value=new_value)])
            if func.attr.value == "zero_" and not updated.args and value.strip() != "0":
                return updated.with_changes(func=func.with_changes(attr=cst.Name("fill_")),
                                            args=[cst.Arg(new_value)])
            return updated

    new = stmt.visit(_Rewrite())
    return cst.Module(body=[new]).code.strip()


def _with_pad_value(finding: Finding, value: str) -> Finding:
    if finding.fix is None:
        return finding
    old = finding.fix.text
    new = rewrite_reset(old, value)
    if new == old:
        return finding
    fix = replace(finding.fix, text=new, description=finding.fix.description.replace(old, new))
    return replace(finding, fix=fix, message=finding.message.replace(old, new))
