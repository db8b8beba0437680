"""Read one source file, and turn parse failures into :class:`FileError`.

- :func:`read_source` reads bytes and decodes them (PEP 263 coding cookie or
  BOM, else UTF-8).  Refuses non-regular files (FIFOs, devices: opening a
  FIFO would block the run), unreadable files and binary files (NUL bytes).
  Total: it returns an error instead of raising.
- Parsing is the analysis's (``padlint.analysis.check_source``: CPython's
  ``ast`` first, which refuses input nested deeper than it accepts, then
  libcst for the functions that matter); :func:`syntax_error` words its
  syntax errors, and :func:`with_big_stack` runs it on a thread with a
  large C stack, since libcst's native parser overflows the C stack (a
  crash, not an exception) on very deep input.

Decoding keeps line endings as written (no newline translation), so the
text round-trips byte for byte through :attr:`SourceFile.encoding`.
"""

from __future__ import annotations

import io
import os
import stat
import threading
import tokenize
from dataclasses import dataclass, field, replace

from padlint.model import FileError

DEEP_MESSAGE = "too deeply nested to analyse, skipped"

#: C stack of the thread that runs libcst's native parser (see :func:`with_big_stack`).
PARSE_STACK_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    """A decoded source file.

    ``text`` is the decoded text with line endings as written; ``encoding``
    the codec it was decoded with ("utf-8", "utf-8-sig" for a BOM, or the
    coding cookie's codec); ``raw`` the bytes as read (used to detect that
    the file changed before a fix is written); ``identity`` (device, inode,
    whether ``path`` was a symbolic link) of the file as read, or None
    (text from standard input): a fix is written only to that same file.
    """

    path: str
    text: str
    encoding: str
    raw: bytes
    identity: tuple[int, int, bool] | None = field(default=None, compare=False)


def read_source(path: str) -> SourceFile | FileError:
    """Read and decode ``path``; never raises for a bad file.

    Errors (as :class:`FileError`, line None unless a line applies):
    not a regular file, cannot read (permission, dangling symlink, ...),
    binary file (NUL byte), unknown coding cookie, undecodable bytes.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        return FileError(path, None, f"cannot read: {e.strerror or e}")
    if not stat.S_ISREG(st.st_mode):
        return FileError(path, None, "not a regular file, skipped")
    try:
        is_link = os.path.islink(path)
        with open(path, "rb") as f:
            opened = os.fstat(f.fileno())
            raw = f.read()
    except OSError as e:
        return FileError(path, None, f"cannot read: {e.strerror or e}")
    source = decode_source(path, raw)
    if isinstance(source, SourceFile):
        source = replace(source, identity=(opened.st_dev, opened.st_ino, is_link))
    return source


def decode_source(path: str, raw: bytes) -> SourceFile | FileError:
    """Decode ``raw`` (the bytes of ``path``) per PEP 263; see :func:`read_source`."""
    if b"\0" in raw:
        return FileError(path, None, "binary file, skipped")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as e:
        msg = str(getattr(e, "msg", e))
        if "unknown encoding" in msg or "encoding problem" in msg:
            # a coding cookie naming an unknown codec, or contradicting a BOM
            return FileError(path, None, f"cannot decode: {msg}")
        encoding = "utf-8"  # no usable cookie and not UTF-8: let the decode below say where
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        line = raw[: getattr(e, "start", 0)].count(b"\n") + 1 if isinstance(e, UnicodeDecodeError) else None
        label = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        return FileError(path, line, f"cannot decode as {label}: {getattr(e, 'reason', e)}")
    return SourceFile(path, text, encoding, raw)


def syntax_error(source: SourceFile, error: SyntaxError) -> FileError:
    """A one-line :class:`FileError` for a syntax error the analysis met.

    CPython refuses deep nesting with a SyntaxError ("too many nested
    parentheses"); that is reported as too deeply nested, like a RecursionError.
    """
    msg = _one_line(str(error.msg or "syntax error"))
    # CPython 3.11's parser signals a stack overflow with a bare MemoryError,
    # which the analysis reports as "cannot parse: " with no detail
    if msg.rstrip(": ") == "cannot parse":
        return FileError(source.path, None, DEEP_MESSAGE)
    if "too many nested" in msg or "too many levels of indentation" in msg or "too complex" in msg:
        return FileError(source.path, error.lineno, DEEP_MESSAGE)
    if not msg.startswith(("syntax error", "cannot parse")):
        msg = f"syntax error: {msg}"
    return FileError(source.path, error.lineno or None, msg)


class AnalysisTimeout(BaseException):
    """Raised inside the analysis thread when its time budget is spent (see :func:`with_big_stack`).

    A BaseException, so that no ``except Exception`` in the analysis swallows it.
    """


#: After the budget is spent, how long to wait for the analysis thread to stop.
TIMEOUT_GRACE_SECONDS = 2.0


def with_big_stack(fn, arg, timeout: float | None = None):
    """``fn(arg)`` on a thread with a :data:`PARSE_STACK_BYTES` C stack; re-raises its exception.

    libcst's native parser recurses on the C stack without a limit and kills
    the process when the stack overflows.  Input that passes the ``ast``
    guard comes close on the 8 MiB main-thread stack (CPython accepts about
    2,900 nested lambdas; libcst overflows at about 3,500); 256 MiB
    (reserved, committed only as used) leaves a wide margin.  Falls back to
    the calling thread where a thread cannot be started (then without a
    time budget).

    ``timeout`` (seconds; None or <= 0: none): when ``fn`` has not returned
    by then, :class:`AnalysisTimeout` is raised asynchronously in its thread
    (``PyThreadState_SetAsyncExc``: it costs nothing until then, and lands at
    the next Python bytecode, so a long native parse stops when it returns
    to Python) and here.  A thread that still runs after
    :data:`TIMEOUT_GRACE_SECONDS` is left behind (a daemon, so it never
    keeps the process alive).
    """
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn(arg)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            box["error"] = e

    try:
        old = threading.stack_size(PARSE_STACK_BYTES)
    except (ValueError, RuntimeError):
        return fn(arg)
    try:
        thread = threading.Thread(target=target, name="padlint-parse", daemon=True)
        thread.start()
    except RuntimeError:
        return fn(arg)
    finally:
        threading.stack_size(old)
    budget = timeout if timeout is not None and timeout > 0 else None
    thread.join(budget)
    if thread.is_alive():
        _raise_in_thread(thread, AnalysisTimeout)
        thread.join(TIMEOUT_GRACE_SECONDS)
        raise AnalysisTimeout(budget)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]


def _raise_in_thread(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    """Ask ``thread`` to raise ``exc_type`` at its next bytecode (best effort)."""
    import ctypes

    if thread.ident is None:
        return
    try:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc_type))
    except (AttributeError, OSError):  # pragma: no cover - not CPython
        pass


def _one_line(text: str) -> str:
    """The first line of a (possibly multi-line) libcst error message."""
    first = " ".join(text.split("\n", 1)[0].split())
    for prefix in ("parser error: ", "tokenizer error: "):
        first = first.removeprefix(prefix)
    return first or "invalid syntax"
