"""Turn command-line paths into the list of Python files to check.

- A named file is checked whatever its name or the excludes say (like ruff
  without ``--force-exclude``).
- A named directory is walked (symlinked directories are not followed),
  collecting ``*.py`` (and ``*.pyi``) files and skipping directories and
  files that match an exclude pattern and every virtual environment (a
  directory holding ``pyvenv.cfg``).
- A path that does not exist is a :class:`FileError` ("no such file or
  directory"); the run goes on and exits 1, like ruff's E902.
- An unreadable directory is a :class:`FileError` as well.
- Standard input (``padlint check -``) is one file, named by
  ``--stdin-filename`` (:func:`discover_stdin`).

Paths are reported as given on the command line joined with the relative
path below them (``fixtures`` -> ``fixtures/bug.py``), normalised.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from padlint.config import PathPattern
from padlint.model import FileError

PY_SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    """Files to check (display paths, in order, no duplicates) and path errors."""

    files: list[str] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)


def discover(paths: list[str], excludes: list[PathPattern], cwd: Path | None = None, *,
             force_exclude: bool = False) -> Discovery:
    """Collect the files under ``paths`` (default ``["."]``), skipping ``excludes``.

    ``force_exclude``: apply the excludes to named paths too (for pre-commit,
    which names every changed file): a named path is skipped, silently, when
    it or one of its directories below an exclude pattern's base matches.
    """
    cwd = cwd or Path.cwd()
    out = Discovery()
    seen: set[str] = set()

    def add(display: str) -> None:
        key = os.path.normpath(os.path.join(cwd, display))  # realpath costs an lstat per component
        if key not in seen:
            seen.add(key)
            out.files.append(display)

    for arg in paths or ["."]:
        display = os.path.normpath(arg)
        full = cwd / display
        if force_exclude and _force_excluded(Path(os.path.abspath(full)), excludes):
            continue
        if os.path.isdir(full):
            for f in _walk(display, cwd, excludes, out.errors):
                add(f)
        elif os.path.lexists(full):
            add(display)  # a file (or FIFO, dangling link): parse.read_source reports it
        else:
            out.errors.append(FileError(display, None, "no such file or directory"))
    return out


def discover_stdin(name: str | None, excludes: list[PathPattern], cwd: Path | None = None, *,
                   force_exclude: bool = False) -> Discovery:
    """The one "file" of a run that reads standard input (``padlint check -``).

    ``name`` (``--stdin-filename``) is the path it is reported under and
    matched against per-file ignores and, with ``force_exclude``, the
    excludes (an excluded name gives no file, silently, as ruff does); None
    reports it as ``-``.  The name need not exist on disk.
    """
    cwd = cwd or Path.cwd()
    if name is None:
        return Discovery(files=["-"])
    display = os.path.normpath(name)
    if force_exclude and _force_excluded(Path(os.path.abspath(cwd / display)), excludes):
        return Discovery()
    return Discovery(files=[display])


def _walk(root: str, cwd: Path, excludes: list[PathPattern], errors: list[FileError]) -> list[str]:
    found: list[str] = []

    def onerror(e: OSError) -> None:
        where = os.path.relpath(e.filename, cwd) if e.filename and os.path.isabs(e.filename) else (e.filename or root)
        errors.append(FileError(os.path.normpath(where), None, f"cannot read directory: {e.strerror or e}"))

    excludes = _Excluder(excludes)
    for dirpath, dirnames, filenames in os.walk(cwd / root, onerror=onerror):
        rel_dir = os.path.normpath(os.path.join(root, os.path.relpath(dirpath, cwd / root)))
        abs_dir = Path(os.path.abspath(dirpath))
        keep = []
        for d in sorted(dirnames):
            sub = abs_dir / d
            if _excluded(sub, excludes) or (sub / "pyvenv.cfg").is_file():
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(PY_SUFFIXES):
                continue
            if _excluded(abs_dir / name, excludes):
                continue
            found.append(os.path.normpath(os.path.join(rel_dir, name)))
    return found


class _Excluder:
    """``excludes`` compiled once: name-only globs become one regex on the name,
    the others are matched as :meth:`PathPattern.matches` does."""

    def __init__(self, excludes: list[PathPattern]):
        def norm(p: PathPattern) -> str:  # as PathPattern.matches reads it
            return p.pattern.replace(os.sep, "/").rstrip("/").removeprefix("./")

        names = [p for p in excludes if "/" not in norm(p)]
        self.paths = [p for p in excludes if p not in names]
        rx = "|".join(fnmatch.translate(norm(p)) for p in names)
        self.names = re.compile(rx) if rx else None

    def __call__(self, path: Path) -> bool:
        if self.names is not None and self.names.match(path.name):
            return True
        return any(p.matches(path) for p in self.paths)


def _excluded(path: Path, excludes) -> bool:
    if isinstance(excludes, _Excluder):
        return excludes(path)
    return any(p.matches(path) for p in excludes)


def _force_excluded(path: Path, excludes: list[PathPattern]) -> bool:
    """Whether ``path`` or a directory above it, below a pattern's base, matches that pattern."""
    for pattern in excludes:
        candidate = path
        while candidate != pattern.base and pattern.base in candidate.parents:
            if pattern.matches(candidate):
                return True
            candidate = candidate.parent
    return False
