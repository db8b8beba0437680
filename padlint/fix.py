"""Autofix: insert reset statements with libcst, and write files back safely.

:func:`apply_fixes` is pure (text in, text out); :func:`write_atomic`,
:func:`write_fixed` and :func:`fix_file` are the only code in padlint that
writes a user's source file.  Guarantees: comments, formatting, line endings
(``\\n``, ``\\r\\n``) and the source encoding (PEP 263 cookie or UTF-8 BOM)
survive; a fix that cannot be applied raises before anything is written;
the file is replaced atomically, keeping its permission bits.
"""

from __future__ import annotations

import ast
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from padlint.model import FileError, Fix, split_lines
from padlint.parse import SourceFile, read_source


class FixError(ValueError):
    """A fix cannot be applied; the message names the fix's path, line and text."""


class FileChangedError(FixError):
    """The file's bytes changed between reading it and writing its fixes."""


def apply_fixes(source: str, fixes: Sequence[Fix]) -> str:
    """Insert each fix's statement before the statement starting at ``Fix.line``.

    ``Fix.line`` is 1-based and must be the first line of a statement in a
    module body or an indented block (for a decorated definition: the line of
    its first decorator), and that line must be indented by exactly
    ``Fix.indent``; otherwise :class:`FixError`.  The inserted statement
    takes the block's indentation and the module's newline; comments and
    blank lines above the target stay above the inserted statement, so the
    result equals a plain text insertion of ``indent + text + newline`` at
    line ``Fix.line``, column 1 (as in the SARIF ``fixes``).

    Identical fixes (same line, same statement) are applied once; fixes for
    the same line keep their order.  A fix whose statement already stands
    immediately before the target, or is the target itself, is skipped, so
    applying the result of a run again changes nothing.  ``Fix.path`` is
    only used in error messages.  Raises :class:`FixError` for source that
    does not parse and for a ``Fix.text`` that is not one statement.
    """
    if not fixes:
        return source
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        raise FixError(f"{fixes[0].path}: cannot apply fixes, source does not parse: {e.message}") from None
    by_line: dict[int, list[tuple[Fix, cst.BaseStatement, str]]] = {}
    for fix in fixes:
        stmt = _parse_fix_statement(fix, module)
        key = _canonical(module, stmt)
        entries = by_line.setdefault(fix.line, [])
        if all(k != key for _, _, k in entries):
            entries.append((fix, stmt, key))
    lines = split_lines(source)
    for line_no, entries in by_line.items():
        fix = entries[0][0]
        if not 1 <= line_no <= len(lines):
            raise FixError(f"{fix.path}:{line_no}: fix {fix.text!r}: line is outside the file ({len(lines)} lines)")
        text = lines[line_no - 1]
        actual = text[: len(text) - len(text.lstrip())]
        for f, _, _ in entries:
            if f.indent != actual:
                raise FixError(f"{f.path}:{line_no}: fix {f.text!r}: expected indentation {f.indent!r}, "
                               f"the line has {actual!r} (was the file changed since it was checked?)")
    wrapper = MetadataWrapper(module)
    inserter = _Inserter(by_line)
    new_module = wrapper.visit(inserter)
    missing = sorted(set(by_line) - inserter.found)
    if missing:
        fix = by_line[missing[0]][0][0]
        raise FixError(f"{fix.path}:{fix.line}: fix {fix.text!r}: line {fix.line} does not start a statement")
    return new_module.code


def _parse_fix_statement(fix: Fix, module: cst.Module) -> cst.BaseStatement:
    if "\n" in fix.text or "\r" in fix.text or not fix.text.strip():
        raise FixError(f"{fix.path}:{fix.line}: fix text must be one statement on one line, got {fix.text!r}")
    try:
        return cst.parse_statement(fix.text.strip() + module.default_newline,
                                   config=module.config_for_parsing)
    except cst.ParserSyntaxError as e:
        raise FixError(f"{fix.path}:{fix.line}: fix text {fix.text!r} is not a statement: {e.message}") from None


def _canonical(module: cst.Module, stmt: cst.CSTNode) -> str:
    """Comparison key of a statement: its AST dump, so whitespace, comments and parentheses don't count."""
    if isinstance(stmt, cst.SimpleStatementLine):
        code = "; ".join(module.code_for_node(s) for s in stmt.body)
    else:
        code = module.code_for_node(stmt.with_changes(leading_lines=()))
    try:
        return ast.dump(ast.parse(code.strip()))
    except SyntaxError:
        return " ".join(code.split())


class _Inserter(cst.CSTTransformer):
    """Inserts statements before the statements of a module or block that start on given lines."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, by_line: dict[int, list[tuple[Fix, cst.BaseStatement, str]]]) -> None:
        super().__init__()
        self.by_line = by_line
        self.found: set[int] = set()

    def _start_line(self, node: cst.CSTNode) -> int:
        decorators = getattr(node, "decorators", ())
        first = decorators[0] if decorators else node
        return self.get_metadata(PositionProvider, first).start.line

    def _rebuild(self, original: Sequence[cst.BaseStatement],
                 updated: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        out: list[cst.BaseStatement] = []
        changed = False
        for orig, upd in zip(original, updated):
            entries = self.by_line.get(self._start_line(orig))
            if entries:
                self.found.add(self._start_line(orig))
                module = self.module
                present = {_canonical(module, upd)}
                if out:
                    present.add(_canonical(module, out[-1]))
                new = [stmt for _, stmt, key in entries if key not in present]
                if new:
                    changed = True
                    # Comments and blank lines above the target stay above the new statements.
                    new[0] = new[0].with_changes(leading_lines=upd.leading_lines)
                    upd = upd.with_changes(leading_lines=())
                    out.extend(new)
            out.append(upd)
        return out if changed else None

    def visit_Module(self, node: cst.Module) -> bool:
        self.module = node
        return True

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body = self._rebuild(original_node.body, updated_node.body)
        return updated_node if body is None else updated_node.with_changes(body=body)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        body = self._rebuild(original_node.body, updated_node.body)
        return updated_node if body is None else updated_node.with_changes(body=body)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the file at ``path`` with ``data`` (bytes) atomically.

    Writes a temporary file in the same directory, gives it the original's
    permission bits (a new file gets ``0o666`` less the umask), flushes and
    fsyncs it, then ``os.replace``-s it over the target; a symlink is
    followed and its target replaced, so the link survives.  On any error
    the temporary file is removed and the original is untouched.  Raises
    ``OSError``.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    while True:
        tmp = target.with_name(f".{target.name}.padlint-{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if mode is not None:
                os.chmod(f.fileno() if os.chmod in os.supports_fd else tmp, mode)
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(target.parent)


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

    Only if the file's bytes are still ``source.raw`` (what the run read):
    a file edited during the run is left alone.  Raises
    ``UnicodeEncodeError`` (a fix's text cannot be written in the file's
    encoding), :class:`FileChangedError`, or ``OSError``; in every case
    nothing is written.
    """
    data = new_text.encode(source.encoding)
    with open(source.path, "rb") as fh:
        current = fh.read()
    if current != source.raw:
        raise FileChangedError(f"{source.path}: the file changed during the run")
    write_atomic(source.path, data)


def fix_file(path: str | os.PathLike[str], fixes: Sequence[Fix]) -> bool:
    """Apply ``fixes`` to the file at ``path`` in its own encoding; True if it changed.

    Reads and decodes as the checker does (:func:`padlint.parse.read_source`:
    PEP 263 cookie or BOM, line endings kept).  Raises :class:`FixError`
    (the file cannot be read or decoded, or a fix cannot be applied),
    ``UnicodeEncodeError`` (a fix's text cannot be written in the file's
    encoding) or ``OSError`` (writing failed); nothing is written then.
    """
    source = read_source(os.fspath(path))
    if isinstance(source, FileError):
        raise FixError(f"{source.path}: {source.message}")
    new = apply_fixes(source.text, fixes)
    if new == source.text:
        return False
    write_fixed(source, new)
    return True
