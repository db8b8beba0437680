"""Write a small package of modules into a temporary directory and check some of its files
(the others are read as context, as when pre-commit passes a few files)."""

from __future__ import annotations

from pathlib import Path

from padlint.analysis.engine import Source, check_project
from padlint.model import Finding
from padlint.profile import load_profile


def check_files(root: Path, files: dict[str, str], checked: list[str], subst: dict[str, str] | None = None,
                profile: str = "vllm") -> list[Finding]:
    """Write ``files`` (relative path -> text, each ``{KEY}`` of ``subst`` replaced) under
    ``root`` and return the findings of checking the ``checked`` paths together."""
    for rel, text in files.items():
        for k, v in (subst or {}).items():
            text = text.replace("{" + k + "}", v)
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    srcs = [Source(str(root / rel), (root / rel).read_text(encoding="utf-8")) for rel in checked]
    res = check_project(srcs, load_profile(profile))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


def check_text(root: Path, text: str, name: str = "runner.py", profile: str = "vllm") -> list[Finding]:
    """Write ``text`` as ``root/name`` and return the findings of checking that file alone (a file
    error fails the calling test)."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    out = check_project([Source(str(path), text)], load_profile(profile))[str(path)]
    assert isinstance(out, list), out
    return out


def count_bodies(monkeypatch, limit: int | None = None):
    """A Counter of the function bodies the interpreter runs, by their name on the call path
    (``Frame.qual``); with ``limit``, the check fails once more than that many have run (a
    recursion or a path explosion the test is about fails fast instead of running on)."""
    from collections import Counter

    from padlint.analysis.interp import Interpreter

    seen: Counter = Counter()
    real = Interpreter._exec_function

    def exec_function(self, func, frame, state):
        seen[frame.qual] += 1
        if limit is not None and sum(seen.values()) > limit:
            raise AssertionError(f"more than {limit} function bodies run")
        return real(self, func, frame, state)

    monkeypatch.setattr(Interpreter, "_exec_function", exec_function)
    return seen
