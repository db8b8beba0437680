"""Autofix: insert reset statements, and write files back safely.

:func:`apply_fixes` is pure (text in, text out); :func:`write_atomic`,
:func:`write_fixed` and :func:`fix_file` are the only code in padlint that
writes a user's source file.  Guarantees: comments, formatting, line endings
(``\\n``, ``\\r\\n``) and the source encoding (PEP 263 cookie or UTF-8 BOM)
survive; a fix that cannot be applied raises before anything is written;
the file is replaced atomically, keeping its permission bits and owner; a
read-only file is refused; a path that was not a symbolic link when it was
read is never followed as one when it is written.

Statements are located with CPython's ``ast`` (positions only) and fixes
are inserted as text: a libcst round trip of a whole 7,000-line runner
costs seconds, ``ast`` a few tens of milliseconds.
"""

from __future__ import annotations

import ast
import os
import re
import secrets
import stat
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from padlint.model import FileError, Fix, split_lines
from padlint.parse import SourceFile, read_source


class FixError(ValueError):
    """A fix cannot be applied; the message names the fix's path, line and text."""


class FileChangedError(FixError):
    """The file's bytes changed between reading it and writing its fixes."""


class FileReplacedError(FixError):
    """The path now names another file than the one read (a symbolic link swapped in, a file moved over it)."""


class ReadOnlyError(FixError):
    """The file has no write permission bit; padlint does not rewrite it."""


class OwnerError(FixError):
    """The file belongs to another user or group and its ownership cannot be kept on the new file."""


#: Compound statements whose body may follow the colon on the same line (`if c: a; b`).
_SUITE_HOLDERS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)


@dataclass
class _Placement:
    """Where a group of fixes goes: before statement ``i`` of ``body`` (kind "before"), after
    statement ``i`` of ``body`` on the same line (kind "after": the line is split there), or
    after statement ``i`` of the one-line suite of ``body[0]`` (kind "suite": the suite is
    rewritten as a block)."""

    kind: str
    body: list
    i: int
    line: int
    indent: str
    fixes: list = field(default_factory=list)  # (Fix, ast.stmt, key)


def apply_fixes(source: str, fixes: Sequence[Fix]) -> str:
    """Insert each fix's statement before the statement starting at ``Fix.line``.

    ``Fix.line`` is 1-based and must be the first line of a statement in a
    module body or an indented block (for a decorated definition: the line of
    its first decorator), and that line must be indented by exactly
    ``Fix.indent``; otherwise :class:`FixError`.  The inserted statement
    takes the block's indentation and the module's newline; comments and
    blank lines above the target stay above it.  Usually the result equals a
    plain text insertion of ``indent + text + newline`` at line ``Fix.line``,
    column 1 (as in the SARIF ``fixes``), with two exceptions written as a
    formatter would write them:

    - a compound fix (``if x is not None: x[n:] = 0``) is written on two
      lines, its body indented one level deeper;
    - when the variable the fix resets is assigned on the target line
      itself, before a later statement of that line
      (``x = a < b; meta = M(x)``, ``if c: x = a < b; return M(x)``), the
      reset goes right after that assignment: the line is split there (a
      one-line suite becomes an indented block), since before the line the
      variable does not exist yet.

    Identical fixes (same line, same statement) are applied once; fixes for
    the same line keep their order.  A fix resetting a local variable is
    dropped when the same reset is already inserted earlier in the same block
    and nothing in between assigns that variable (one value reaching two
    sinks gets one reset).  A fix whose statement already stands immediately
    before the target, or is the target itself, is skipped, so applying the
    result of a run again changes nothing.  ``Fix.path`` is only used in
    error messages.  Raises :class:`FixError` for source that does not parse
    and for a ``Fix.text`` that is not one statement on one line.
    """
    if not fixes:
        return source
    tree = _parse_source(source, fixes[0].path)
    lines = split_lines(source, keepends=True)
    starts = _statement_starts(tree, lines)
    newline = _newline(source)
    offsets = [0]
    for text in lines:
        offsets.append(offsets[-1] + len(text))

    def pos(line: int, col: int) -> int:
        """Character offset in ``source`` of an ast (line, UTF-8 byte column) position."""
        text = lines[line - 1]
        return offsets[line - 1] + len(text.encode("utf-8")[:col].decode("utf-8", "ignore"))

    placements: dict[tuple[str, int, int], _Placement] = {}
    for fix in fixes:
        stmt = _parse_fix_statement(fix)
        key = ast.dump(stmt)
        if fix.after:
            placement = _place_after(fix, tree_ends(starts), lines)
            slot = (placement.kind, id(placement.body), placement.i)
            placement = placements.setdefault(slot, placement)
            if all(k != key for _, _, k in placement.fixes):
                placement.fixes.append((fix, stmt, key))
            continue
        line_no = fix.line
        if not 1 <= line_no <= len(lines):
            raise FixError(f"{fix.path}:{line_no}: fix {fix.text!r}: line is outside the file ({len(lines)} lines)")
        text = lines[line_no - 1]
        actual = text[: len(text) - len(text.lstrip())]
        if fix.indent != actual:
            raise FixError(f"{fix.path}:{line_no}: fix {fix.text!r}: expected indentation {fix.indent!r}, "
                           f"the line has {actual!r} (was the file changed since it was checked?)")
        if line_no not in starts:
            raise FixError(f"{fix.path}:{line_no}: fix {fix.text!r}: line {line_no} does not start a statement")
        body, i = starts[line_no]
        placement = _place(body, i, line_no, actual, _target_name(stmt), lines)
        slot = (placement.kind, id(placement.body), placement.i)
        placement = placements.setdefault(slot, placement)
        if all(k != key for _, _, k in placement.fixes):
            placement.fixes.append((fix, stmt, key))
    _drop_repeated_resets(list(placements.values()))

    unit = "\t" if "\t" in "".join(p.indent for p in placements.values()) else "    "
    edits: list[tuple[int, int, str]] = []
    for p in placements.values():
        if p.kind == "before":
            present = {ast.dump(p.body[p.i])}
            if p.i > 0:
                present.add(ast.dump(p.body[p.i - 1]))
        elif p.kind == "end":  # after body[i]: the statement right after it may be the fix already
            present = {ast.dump(p.body[p.i + 1])} if p.i + 1 < len(p.body) else set()
        else:
            holder = p.body[p.i + 1] if p.kind == "after" and p.i + 1 < len(p.body) else None
            present = {ast.dump(holder)} if holder is not None else set()
        new = [(f, s) for f, s, k in p.fixes if k not in present]
        if not new:
            continue
        if p.kind in ("before", "end"):
            at = offsets[p.line - 1]
            edits.append((at, at, "".join(row + newline for f, s in new
                                          for row in _render(f.text, s, p.indent, unit))))
        elif p.kind == "after":
            first, second = p.body[p.i], p.body[p.i + 1]
            start = pos(first.end_lineno, first.end_col_offset)
            end = pos(second.lineno, second.col_offset)
            rows = [row for f, s in new for row in _render(f.text, s, p.indent, unit)]
            edits.append((start, end, newline + "".join(r + newline for r in rows) + p.indent))
        else:  # rewrite the one-line suite of body[0] as an indented block
            suite = p.body
            inner = p.indent + unit
            colon = pos(suite[0].lineno, suite[0].col_offset)
            while colon > 0 and source[colon - 1] in " \t":
                colon -= 1
            parts = []
            for j, s in enumerate(suite):
                parts.append(newline + inner + source[pos(s.lineno, s.col_offset):pos(s.end_lineno, s.end_col_offset)])
                if j == p.i:
                    parts.extend(newline + row for f, st in new for row in _render(f.text, st, inner, unit))
            edits.append((colon, pos(suite[-1].end_lineno, suite[-1].end_col_offset), "".join(parts)))
    out = source
    for start, end, text in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:start] + text + out[end:]
    return out


def _parse_source(source: str, path: str) -> ast.Module:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except SyntaxError as e:
        raise FixError(f"{path}: cannot apply fixes, source does not parse: {e.msg} (line {e.lineno})") from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise FixError(f"{path}: cannot apply fixes, source does not parse: {type(e).__name__}") from None


def _parse_fix_statement(fix: Fix) -> ast.stmt:
    if "\n" in fix.text or "\r" in fix.text or not fix.text.strip():
        raise FixError(f"{fix.path}:{fix.line}: fix text must be one statement on one line, got {fix.text!r}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(fix.text.strip()).body
    except (SyntaxError, ValueError) as e:
        raise FixError(f"{fix.path}:{fix.line}: fix text {fix.text!r} is not a statement: "
                       f"{getattr(e, 'msg', e)}") from None
    if len(body) != 1:
        raise FixError(f"{fix.path}:{fix.line}: fix text must be one statement on one line, got {fix.text!r}")
    return body[0]


def _newline(source: str) -> str:
    for i, ch in enumerate(source):
        if ch == "\r":
            return "\r\n" if source[i + 1:i + 2] == "\n" else "\r"
        if ch == "\n":
            return "\n"
    return "\n"


def _bodies(node: ast.AST):
    """The statement lists directly held by ``node``."""
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    for handler in getattr(node, "handlers", ()) or ():
        yield handler.body
    for case in getattr(node, "cases", ()) or ():
        yield case.body


def _statement_starts(tree: ast.Module, lines: list[str]) -> dict[int, tuple[list, int]]:
    """Line -> (body, index) of the statement that starts that line (its first decorator's line).

    A statement starts a line when only indentation precedes it and the line
    before does not continue onto it with a backslash: not the second
    statement of ``a; b``, nor the body of ``if c: a``.
    """
    starts: dict[int, tuple[list, int]] = {}
    stack = [tree.body]
    while stack:
        body = stack.pop()
        for i, s in enumerate(body):
            stack.extend(_bodies(s))
            decorators = getattr(s, "decorator_list", None)
            line, col = (decorators[0].lineno, None) if decorators else (s.lineno, s.col_offset)
            if line - 1 >= len(lines):
                continue
            text = lines[line - 1].encode("utf-8")
            if col is not None and text[:col].strip(b" \t\f"):
                continue
            if col is not None and re.match(rb"elif\b", text[col:]):
                continue  # the `If` that ast makes of an `elif` clause: not a statement of its own
            previous = lines[line - 2].rstrip("\r\n") if line > 1 else ""
            if previous.endswith("\\") and "#" not in previous:  # (a comment's backslash continues nothing)
                continue
            if i > 0 and body[i - 1].end_lineno >= line:
                continue
            starts.setdefault(line, (body, i))
    return starts


def _target_name(stmt: ast.stmt) -> str | None:
    """The local variable a reset writes into (``x`` in ``x[n:] = 0``, ``x[n:].fill_(0)``,
    ``if x is not None: x[n:] = 0``); None for attribute targets (``self.buf[n:] = 0``)."""
    if isinstance(stmt, ast.If) and len(stmt.body) == 1:
        return _target_name(stmt.body[0])
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        node = stmt.targets[0]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute):
        node = stmt.value.func.value
    else:
        return None
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _binds(node: ast.AST, name: str) -> bool:
    """Whether ``node`` may (re)bind ``name`` (over-approximated: nested scopes count)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub.name == name:
            return True
        if isinstance(sub, ast.alias) and (sub.asname or sub.name.split(".")[0]) == name:
            return True
        if isinstance(sub, ast.ExceptHandler) and sub.name == name:
            return True
        if isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name == name:
            return True
        if isinstance(sub, ast.MatchMapping) and sub.rest == name:
            return True
        if isinstance(sub, (ast.Global, ast.Nonlocal)) and name in sub.names:
            return True
    return False


def _place(body: list, i: int, line: int, indent: str, name: str | None, lines: list[str]) -> _Placement:
    """Where a reset of ``name`` aimed at the statement ``body[i]`` (starting ``line``) goes."""
    stmt = body[i]
    if name is not None:
        # statements sharing the target's logical line: `a; b; c`
        group_end = i
        while group_end + 1 < len(body) and body[group_end + 1].lineno == body[group_end].end_lineno:
            group_end += 1
        if group_end > i:
            binding = [k for k in range(i, group_end) if _binds(body[k], name)]
            if binding:
                return _Placement("after", body, binding[-1], line, indent)
        elif isinstance(stmt, _SUITE_HOLDERS) and stmt.body and stmt.body[0].lineno == stmt.body[-1].end_lineno:
            suite = stmt.body
            text = lines[suite[0].lineno - 1].encode("utf-8")[:suite[0].col_offset]
            if text.strip(b" \t\f") and len(suite) > 1:  # `if c: x = ...; use(x)`: the suite follows the colon
                binding = [k for k in range(len(suite) - 1) if _binds(suite[k], name)]
                if binding:
                    return _Placement("suite", suite, binding[-1], line, indent)
    return _Placement("before", body, i, line, indent)


def tree_ends(starts: dict[int, tuple[list, int]]) -> dict[int, list[tuple[list, int]]]:
    """Last line -> the statements (body, index) that start a line and end on it."""
    out: dict[int, list[tuple[list, int]]] = {}
    for body, i in starts.values():
        out.setdefault(body[i].end_lineno, []).append((body, i))
    return out


def _place_after(fix: Fix, ends: dict[int, list[tuple[list, int]]], lines: list[str]) -> _Placement:
    """Where a fix that follows the statement ending on line ``fix.line - 1`` goes (``Fix.after``):
    the start of ``fix.line``, as the next statement of that statement's block."""
    last = fix.line - 1
    if not 1 <= last < len(lines):
        raise FixError(f"{fix.path}:{last}: fix {fix.text!r}: no line after line {last} to insert at "
                       f"({len(lines)} lines)")
    for body, i in ends.get(last, ()):
        s = body[i]
        text = lines[s.lineno - 1]
        actual = text[: len(text) - len(text.lstrip())]
        if actual != fix.indent or isinstance(s, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
                                                   ast.AsyncWith, ast.Try, ast.FunctionDef,
                                                   ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if i + 1 < len(body) and body[i + 1].lineno == last:
            continue  # `a; b`: not the last statement of its line
        return _Placement("end", body, i, fix.line, fix.indent)
    raise FixError(f"{fix.path}:{last}: fix {fix.text!r}: no simple statement indented {fix.indent!r} ends on "
                   f"line {last} (was the file changed since it was checked?)")


def _drop_repeated_resets(placements: list[_Placement]) -> None:
    """Drop a local variable's reset already inserted earlier in the same block.

    One value reaching two sinks gets a finding (and a reset) per sink; the
    reset before the first sink still holds at the second when no statement
    between them assigns the variable.
    """
    befores = sorted((p for p in placements if p.kind == "before"), key=lambda p: (id(p.body), p.i))
    for n, later in enumerate(befores):
        for earlier in befores[:n]:
            if earlier.body is not later.body:
                continue
            between = later.body[earlier.i:later.i]
            keep = []
            for fix, stmt, key in later.fixes:
                name = _target_name(stmt)
                repeated = name is not None and any(k == key for _, _, k in earlier.fixes) \
                    and not any(_binds(s, name) for s in between)
                if not repeated:
                    keep.append((fix, stmt, key))
            later.fixes = keep


def _render(text: str, stmt: ast.stmt, indent: str, unit: str) -> list[str]:
    """The lines of one fix statement at ``indent``: a compound statement with its body after the
    colon (``if x is not None: x[n:] = 0``) is written as a header and an indented body."""
    text = text.strip()
    if isinstance(stmt, _SUITE_HOLDERS) and stmt.body and stmt.body[0].lineno == 1 and not stmt.orelse:
        raw = text.encode("utf-8")
        header = raw[:stmt.body[0].col_offset].decode("utf-8").rstrip()
        body = [raw[s.col_offset:s.end_col_offset].decode("utf-8") for s in stmt.body]
        if header.endswith(":"):
            return [indent + header] + [indent + unit + b for b in body]
    return [indent + text]


def insertion_text(fix: Fix, newline: str = "\n") -> str:
    """The text :func:`apply_fixes` inserts for ``fix`` before its line (when the line is not split)."""
    stmt = _parse_fix_statement(fix)
    unit = "\t" if "\t" in fix.indent else "    "
    return "".join(row + newline for row in _render(fix.text, stmt, fix.indent, unit))


def write_atomic(path: str | os.PathLike[str], data: bytes, *, follow_symlinks: bool = True) -> None:
    """Replace the file at ``path`` with ``data`` (bytes) atomically.

    Writes a temporary file in the same directory, gives it the original's
    permission bits (a new file gets ``0o666`` less the umask) and owner
    (:class:`OwnerError` where it cannot: the original is left alone),
    flushes and fsyncs it, then ``os.replace``-s it over the target.  With
    ``follow_symlinks`` a symlink at ``path`` is followed and its target
    replaced, so the link survives; without, ``path`` itself is replaced
    (a rename never follows a link).  On any error, ``KeyboardInterrupt``
    included, the temporary file is removed and the original is untouched.
    Raises ``OSError``.
    """
    target = Path(os.path.realpath(path)) if follow_symlinks else Path(os.path.abspath(path))
    try:
        st: os.stat_result | None = target.stat() if follow_symlinks else os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise FileReplacedError(f"{path}: not a regular file, not written")
    while True:
        tmp = target.with_name(f".{target.name}.padlint-{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
            break
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if st is not None:
                os.chmod(f.fileno() if os.chmod in os.supports_fd else tmp, stat.S_IMODE(st.st_mode))
                _keep_owner(f.fileno(), st, path)
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(target.parent)


def _keep_owner(fd: int, original: os.stat_result, path: str | os.PathLike[str]) -> None:
    """Give the new file (open as ``fd``) the original's owner and group, or raise :class:`OwnerError`."""
    if not hasattr(os, "fchown"):  # pragma: no cover - Windows
        return
    now = os.fstat(fd)
    if (now.st_uid, now.st_gid) == (original.st_uid, original.st_gid):
        return
    try:
        os.fchown(fd, original.st_uid, original.st_gid)
    except OSError:
        raise OwnerError(f"{path}: belongs to uid {original.st_uid}, gid {original.st_gid}; a rewritten file "
                         f"would belong to uid {now.st_uid}, gid {now.st_gid}: not written") from None


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable where the platform allows it (not on Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_fixed(source: SourceFile, new_text: str) -> None:
    """Write ``new_text`` over ``source.path`` in the file's own encoding, atomically.

    Only if the path still names the file the run read: its bytes are still
    ``source.raw`` (else :class:`FileChangedError`), and, where the read
    recorded it (``source.identity``), it is the same file (device and inode)
    reached the same way: a path that was not a symbolic link when it was
    read is opened without following links and replaced itself, never a
    link's target (else :class:`FileReplacedError`).  A file with no write
    permission bit is refused (:class:`ReadOnlyError`); permission bits and
    owner are kept (:class:`OwnerError` where the owner cannot be kept).
    Raises those, ``UnicodeEncodeError`` (a fix's text cannot be written in
    the file's encoding) or ``OSError``; in every case nothing is written.
    """
    data = new_text.encode(source.encoding)
    identity = getattr(source, "identity", None)
    was_link = identity[2] if identity is not None else os.path.islink(source.path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if was_link else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(source.path, flags)
    except OSError:
        if not was_link and os.path.islink(source.path):
            raise FileReplacedError(f"{source.path}: replaced by a symbolic link during the run, not written") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileReplacedError(f"{source.path}: no longer a regular file, not written")
        if identity is not None and (st.st_dev, st.st_ino) != identity[:2]:
            raise FileReplacedError(f"{source.path}: replaced by another file during the run, not written")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    if b"".join(chunks) != source.raw:
        raise FileChangedError(f"{source.path}: the file changed during the run")
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ReadOnlyError(f"{source.path}: read-only file (mode {stat.S_IMODE(st.st_mode):04o}), not written")
    write_atomic(source.path, data, follow_symlinks=was_link)


def fix_file(path: str | os.PathLike[str], fixes: Sequence[Fix]) -> bool:
    """Apply ``fixes`` to the file at ``path`` in its own encoding; True if it changed.

    Reads and decodes as the checker does (:func:`padlint.parse.read_source`:
    PEP 263 cookie or BOM, line endings kept).  Raises :class:`FixError`
    (the file cannot be read or decoded, or a fix cannot be applied, or one
    of :func:`write_fixed`'s refusals), ``UnicodeEncodeError`` (a fix's text
    cannot be written in the file's encoding) or ``OSError`` (writing
    failed); nothing is written then.
    """
    source = read_source(os.fspath(path))
    if isinstance(source, FileError):
        raise FixError(f"{source.path}: {source.message}")
    new = apply_fixes(source.text, fixes)
    if new == source.text:
        return False
    write_fixed(source, new)
    return True
