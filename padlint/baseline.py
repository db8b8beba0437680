"""Baseline: record today's findings, then report only new ones.

A baseline file is JSON (``version`` 3)::

    {
      "entries": [
        {"buffer": "self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]",
         "code": "PAD001", "field": "is_prefilling", "fingerprint": "3f0c...",
         "function": "GPUModelRunner._build_attention_metadata",
         "path": "vllm/v1/worker/gpu_model_runner.py", "sink": "CommonAttentionMetadata"}
      ],
      "tool": "padlint",
      "version": 3
    }

``path`` is the finding's file relative to the directory holding the
baseline file (normalised, POSIX separators; ``../`` when the file lies
outside it), and ``fingerprint`` is :func:`fingerprint` computed with that
path.  So a baseline matches whatever the working directory and whether
the checked paths were given relative or absolute: ``padlint check .
--write-baseline base.json`` inside ``bl/`` and ``padlint check bl
--baseline bl/base.json`` from its parent agree.

The fingerprint is made of path, code, sink, field, function and buffer:
not line numbers, and not the text of the sink statement, so edits
elsewhere in a file, and arguments added to the sink call
(``CommonAttentionMetadata(...)`` grows in most vLLM releases), do not
bring baselined findings back.

Entries are sorted and keys sorted, two-space indented, one trailing
newline, so that a rewritten baseline diffs cleanly.  Matching uses only
the fingerprint.  Matching is a multiset: two identical findings need two
entries.  The idea and the "remove stale entries" message follow ruff's and
mypy-baseline's practice of letting the baseline only shrink.

Older files are still read.  Their fingerprints held the statement text;
their entries are matched on path, code, sink, field and function instead
(an entry without those keys: on its old fingerprint).  Version 1 paths are
as given on the command line of the run that wrote them, so they match
only from the same working directory and path form.  ``--write-baseline``
rewrites them as version 3 (with the buffers).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Any, Callable

from padlint.fix import FixError, write_atomic
from padlint.model import Finding

VERSION = 3
#: Versions :func:`load` accepts (1: paths as given on the command line; 1 and 2: statement fingerprints).
READ_VERSIONS = (1, 2, 3)
_ENTRY_KEYS = ("code", "path", "function", "sink", "field", "buffer", "statement")
#: What identifies an entry of a version 1 or 2 baseline, the statement text left out.
_LEGACY_KEYS = ("path", "code", "sink", "field", "function")


class BaselineError(Exception):
    """A baseline file is absent, unreadable or malformed; ``str()`` is one line naming the file."""


def _normalise_space(text: str) -> str:
    return " ".join(text.split())


def fingerprint(finding: Finding) -> str:
    """A stable 20-hex-digit id of a finding that does not depend on line or column numbers.

    SHA-256 over (path as given, in POSIX form; code; sink; field; qualified
    function name; buffer with runs of whitespace collapsed; "dummy run" for a finding about
    dummy runs' paths only).  Not the sink
    statement's text: adding an argument to the sink call keeps the id.
    Also used as the SARIF ``partialFingerprints`` value.
    """
    parts = [PurePath(finding.path).as_posix(), finding.code, finding.sink, finding.field, finding.function,
             _normalise_space(finding.buffer)]
    if finding.dummy_run:  # (only then: the ids of other findings are those of earlier releases)
        parts.append("dummy run")
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:20]


def _legacy_fingerprint(finding: Finding) -> str:
    """The fingerprint of version 1 and 2 baselines (with the statement text, without the buffer)."""
    parts = [PurePath(finding.path).as_posix(), finding.code, finding.sink, finding.field,
             _normalise_space(finding.statement), finding.function]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:20]


def _legacy_key(path: str, code: str, sink: str, field: str, function: str) -> str:
    return "legacy:" + json.dumps([PurePath(path).as_posix(), code, sink, field, function], ensure_ascii=False)


def _canonical(path: str | os.PathLike[str], cwd: Path) -> str:
    """Absolute, normalised form of ``path`` (relative to ``cwd``), its directory's symlinks resolved."""
    full = os.path.normpath(os.path.join(cwd, path))
    head, tail = os.path.split(full)
    return os.path.join(os.path.realpath(head), tail)


def _relative_to(base_dir: str, path: str, cwd: Path) -> str:
    """``path`` (a finding path, relative to ``cwd`` or absolute) relative to ``base_dir``, POSIX."""
    full = _canonical(path, cwd)
    try:
        return PurePath(os.path.relpath(full, base_dir)).as_posix()
    except ValueError:  # another drive: no relative path exists
        return PurePath(full).as_posix()


def _base_dir(path: str | os.PathLike[str], cwd: Path) -> str:
    """The directory holding the baseline file ``path``, canonical."""
    return os.path.realpath(os.path.dirname(os.path.normpath(os.path.join(cwd, path))))


def _entry(finding: Finding, rel_path: str) -> dict[str, str]:
    located = replace(finding, path=rel_path)
    return {
        "code": finding.code,
        "path": rel_path,
        "function": finding.function,
        "sink": finding.sink,
        "field": finding.field,
        "buffer": _normalise_space(finding.buffer),
        "fingerprint": fingerprint(located),
    }


def _entry_key(entry: dict[str, str]) -> tuple[str, ...]:
    return tuple(entry[k] for k in ("path", "code", "function", "sink", "field", "buffer", "fingerprint"))


def dumps(findings: Iterable[Finding], base_dir: str | os.PathLike[str] = ".",
          cwd: str | os.PathLike[str] | None = None) -> str:
    """The baseline file text for ``findings``, with paths relative to ``base_dir``.

    ``base_dir`` is the directory the baseline file will live in and ``cwd``
    the directory the findings' relative paths start from (both default to
    the working directory).
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    base = os.path.realpath(os.path.join(here, base_dir))
    entries = sorted((_entry(f, _relative_to(base, f.path, here)) for f in findings), key=_entry_key)
    doc = {"tool": "padlint", "version": VERSION, "entries": entries}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(path: str | os.PathLike[str], findings: Iterable[Finding],
          cwd: str | os.PathLike[str] | None = None) -> None:
    """Write a baseline of ``findings`` to ``path`` (UTF-8, atomically).

    Finding paths are taken relative to ``cwd`` (default: the working
    directory) and stored relative to the directory of ``path``.  Raises
    ``OSError``, or :class:`BaselineError` where ``path`` is not a regular
    file (``/dev/null``: never replaced) or its owner cannot be kept.
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    try:
        write_atomic(path, dumps(findings, _base_dir(path, here), here).encode("utf-8"))
    except FixError as e:
        raise BaselineError(str(e)) from None


def _read(path: str | os.PathLike[str]) -> tuple[int, list[dict[str, str]]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BaselineError(f"{path}: cannot read baseline: {e}") from None
    try:
        doc: Any = json.loads(text)
    except json.JSONDecodeError as e:
        raise BaselineError(f"{path}:{e.lineno}: baseline is not valid JSON: {e.msg}") from None
    if (not isinstance(doc, dict) or type(doc.get("version")) is not int or doc["version"] not in READ_VERSIONS
            or not isinstance(doc.get("entries"), list)):
        raise BaselineError(f"{path}: not a padlint baseline (expected an object with version {VERSION} and entries)")
    entries = doc["entries"]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str) or not all(
                isinstance(entry.get(k, ""), str) for k in _ENTRY_KEYS):
            raise BaselineError(f"{path}: entries[{i}]: expected an object with a string fingerprint")
    return doc["version"], entries


def load(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The entries of the baseline file at ``path``; raises :class:`BaselineError`."""
    return _read(path)[1]


def apply(path: str | os.PathLike[str], findings: Iterable[Finding],
          cwd: str | os.PathLike[str] | None = None,
          in_scope: Callable[[str, str], bool] | None = None) -> tuple[list[Finding], list[str]]:
    """Hide the findings recorded in the baseline at ``path``.

    Finding paths are relative to ``cwd`` (default: the working directory)
    or absolute; they are matched relative to the baseline file's directory.
    Returns ``(new findings, in their original order; one message per
    baseline entry that matched no finding)``.  Each entry hides at most one
    finding.  ``in_scope(absolute_path, code)`` says whether this run could
    have reproduced an entry (its file checked without error, its code
    enabled); entries out of scope are never called stale, so a partial run
    (pre-commit on changed files, ``--select``) does not ask to delete valid
    entries.  Raises :class:`BaselineError` for an absent or malformed file.
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    version, entries = _read(path)
    base = _base_dir(path, here)

    def entry_id(entry: dict[str, str]) -> str:
        if version >= 3 or not all(k in entry for k in _LEGACY_KEYS):
            return entry["fingerprint"]
        return _legacy_key(*(entry[k] for k in _LEGACY_KEYS))

    remaining = Counter(entry_id(e) for e in entries)
    kept = []
    for finding in findings:
        located = finding if version == 1 else replace(finding, path=_relative_to(base, finding.path, here))
        if version >= 3:
            ids = [fingerprint(located)]
        else:  # an entry with the legacy keys, else one with only its old fingerprint
            ids = [_legacy_key(located.path, located.code, located.sink, located.field, located.function),
                   _legacy_fingerprint(located)]
        fp = next((i for i in ids if remaining[i] > 0), None)
        if fp is not None:
            remaining[fp] -= 1
        else:
            kept.append(finding)
    messages = []
    for entry in sorted(entries, key=lambda e: tuple(e.get(k, "") for k in ("path", "code", "function",
                                                                           "sink", "field", "fingerprint"))):
        if remaining[entry_id(entry)] > 0:
            remaining[entry_id(entry)] -= 1
            if in_scope is not None and "path" in entry:
                full = os.path.normpath(os.path.join(base if version != 1 else here, entry["path"]))
                if not in_scope(full, entry.get("code", "")):
                    continue
            where = f"{entry.get('sink', '?')}.{entry.get('field', '?')}"
            function = f" ({entry['function']})" if entry.get("function") else ""
            shown = entry.get("path", "?")
            if version != 1 and "path" in entry:
                shown = _display(os.path.join(base, entry["path"]), here)
            messages.append(f"{path}: baseline entry no longer matches: {entry.get('code', '?')} {where} "
                            f"in {shown}{function}; remove it")
    return kept, messages


def _display(full: str, cwd: Path) -> str:
    """``full`` relative to ``cwd`` when it lies below it, else absolute (POSIX)."""
    full = os.path.normpath(full)
    try:
        rel = os.path.relpath(full, os.path.realpath(cwd))
    except ValueError:
        return PurePath(full).as_posix()
    return PurePath(full if rel.split(os.sep)[0] == os.pardir else rel).as_posix()
