"""Baseline: record today's findings, then report only new ones.

A baseline file is JSON (``version`` 1)::

    {
      "entries": [
        {"code": "PAD001", "field": "is_prefilling", "fingerprint": "3f0c...",
         "function": "GPUModelRunner._build_attention_metadata",
         "path": "vllm/v1/worker/gpu_model_runner.py", "sink": "CommonAttentionMetadata",
         "statement": "return CommonAttentionMetadata(is_prefilling=is_prefilling)"}
      ],
      "tool": "padlint",
      "version": 1
    }

Entries are sorted and keys sorted, two-space indented, one trailing
newline, so that a rewritten baseline diffs cleanly.  Matching uses only
:func:`fingerprint`, which leaves line numbers out, so edits elsewhere in
a file do not invalidate the baseline.  Matching is a multiset: two
identical findings need two entries.  The idea and the "remove stale
entries" message follow ruff's and mypy-baseline's practice of letting the
baseline only shrink.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import Any

from padlint.fix import write_atomic
from padlint.model import Finding

VERSION = 1
_ENTRY_KEYS = ("code", "path", "function", "sink", "field", "statement")


class BaselineError(Exception):
    """A baseline file is absent, unreadable or malformed; ``str()`` is one line naming the file."""


def _normalise_space(text: str) -> str:
    return " ".join(text.split())


def fingerprint(finding: Finding) -> str:
    """A stable 20-hex-digit id of a finding that does not depend on line or column numbers.

    SHA-256 over (path as given, in POSIX form; code; sink; field; the sink
    statement with runs of whitespace collapsed; qualified function name).
    Also used as the SARIF ``partialFingerprints`` value.
    """
    parts = [PurePath(finding.path).as_posix(), finding.code, finding.sink, finding.field,
             _normalise_space(finding.statement), finding.function]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()[:20]


def _entry(finding: Finding) -> dict[str, str]:
    return {
        "code": finding.code,
        "path": PurePath(finding.path).as_posix(),
        "function": finding.function,
        "sink": finding.sink,
        "field": finding.field,
        "statement": _normalise_space(finding.statement),
        "fingerprint": fingerprint(finding),
    }


def _entry_key(entry: dict[str, str]) -> tuple[str, ...]:
    return tuple(entry[k] for k in ("path", "code", "function", "sink", "field", "statement", "fingerprint"))


def dumps(findings: Iterable[Finding]) -> str:
    """The baseline file text for ``findings``."""
    entries = sorted((_entry(f) for f in findings), key=_entry_key)
    doc = {"tool": "padlint", "version": VERSION, "entries": entries}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(path: str | os.PathLike[str], findings: Iterable[Finding]) -> None:
    """Write a baseline of ``findings`` to ``path`` (UTF-8, atomically).  Raises ``OSError``."""
    write_atomic(path, dumps(findings).encode("utf-8"))


def load(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The entries of the baseline file at ``path``; raises :class:`BaselineError`."""
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
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("entries"), list):
        raise BaselineError(f"{path}: not a padlint baseline (expected an object with version {VERSION} and entries)")
    entries = doc["entries"]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str) or not all(
                isinstance(entry.get(k, ""), str) for k in _ENTRY_KEYS):
            raise BaselineError(f"{path}: entries[{i}]: expected an object with a string fingerprint")
    return entries


def apply(path: str | os.PathLike[str], findings: Iterable[Finding]) -> tuple[list[Finding], list[str]]:
    """Hide the findings recorded in the baseline at ``path``.

    Returns ``(new findings, in their original order; one message per
    baseline entry that matched no finding)``.  Each entry hides at most one
    finding.  Raises :class:`BaselineError` for an absent or malformed file.
    """
    entries = load(path)
    remaining = Counter(e["fingerprint"] for e in entries)
    kept = []
    for finding in findings:
        fp = fingerprint(finding)
        if remaining[fp] > 0:
            remaining[fp] -= 1
        else:
            kept.append(finding)
    messages = []
    for entry in sorted(entries, key=lambda e: tuple(e.get(k, "") for k in ("path", "code", "function",
                                                                           "sink", "field", "fingerprint"))):
        if remaining[entry["fingerprint"]] > 0:
            remaining[entry["fingerprint"]] -= 1
            where = f"{entry.get('sink', '?')}.{entry.get('field', '?')}"
            function = f" ({entry['function']})" if entry.get("function") else ""
            messages.append(f"{path}: baseline entry no longer matches: {entry.get('code', '?')} {where} "
                            f"in {entry.get('path', '?')}{function}; remove it")
    return kept, messages
