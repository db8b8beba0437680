"""Turn command-line paths into the list of Python files to check.

- A named file is checked whatever its name or the excludes say (like ruff
  without ``--force-exclude``).
- A named directory is walked (symlinked directories are not followed),
  collecting ``*.py`` (and ``*.pyi``) files and skipping directories and
  files that match an exclude pattern, every virtual environment (a
  directory holding ``pyvenv.cfg``) and, inside a git repository, what its
  ``.gitignore`` files and ``.git/info/exclude`` ignore (as ruff does;
  ``respect_gitignore=False`` turns it off).
- A path that does not exist is a :class:`FileError` ("no such file or
  directory"); the run goes on and exits 1, like ruff's E902.
- A directory that cannot be listed or entered is a :class:`FileError` as
  well ("cannot read directory: ..."); the walk goes on with its siblings.
- Standard input (``padlint check -``) is one file, named by
  ``--stdin-filename`` (:func:`discover_stdin`).

Paths are reported as given on the command line joined with the relative
path below them (``fixtures`` -> ``fixtures/bug.py``), normalised.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import defaultdict
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
             force_exclude: bool = False, respect_gitignore: bool = True) -> Discovery:
    """Collect the files under ``paths`` (default ``["."]``), skipping ``excludes``.

    ``force_exclude``: apply the excludes to named paths too (for pre-commit,
    which names every changed file): a named path is skipped, silently, when
    it or one of its directories below an exclude pattern's base matches.
    ``respect_gitignore``: skip what git ignores while walking a directory
    (named files are checked whatever ``.gitignore`` says).
    """
    cwd = cwd or Path.cwd()
    out = Discovery()
    seen: set[str] = set()
    excluder = Excluder(excludes)

    def add(display: str) -> None:
        key = os.path.normpath(os.path.join(cwd, display))  # realpath costs an lstat per component
        if key not in seen:
            seen.add(key)
            out.files.append(display)

    for arg in paths or ["."]:
        display = os.path.normpath(arg)
        full = cwd / display
        if force_exclude and excluder.force_excluded(Path(os.path.abspath(full))):
            continue
        if os.path.isdir(full):
            for f in _walk(display, cwd, excluder, out.errors, respect_gitignore):
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
    if force_exclude and Excluder(excludes).force_excluded(Path(os.path.abspath(cwd / display))):
        return Discovery()
    return Discovery(files=[display])


def _walk(root: str, cwd: Path, excluder: Excluder, errors: list[FileError],
          respect_gitignore: bool = True) -> list[str]:
    found: list[str] = []

    def onerror(e: OSError) -> None:
        where = os.path.relpath(e.filename, cwd) if e.filename and os.path.isabs(e.filename) else (e.filename or root)
        errors.append(FileError(os.path.normpath(where), None, f"cannot read directory: {e.strerror or e}"))

    top = Path(os.path.abspath(cwd / root))
    ignores = GitIgnores.for_tree(top) if respect_gitignore else None
    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror):
        rel_dir = os.path.normpath(os.path.join(root, os.path.relpath(dirpath, top)))
        abs_dir = Path(dirpath)
        if ignores is not None:
            ignores.enter(abs_dir)
        keep = []
        for d in sorted(dirnames):
            sub = abs_dir / d
            if excluder(sub) or _is_virtualenv(sub) or (ignores is not None and ignores.ignored(sub, True)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(PY_SUFFIXES):
                continue
            path = abs_dir / name
            if excluder(path) or (ignores is not None and ignores.ignored(path, False)):
                continue
            found.append(os.path.normpath(os.path.join(rel_dir, name)))
    return found


def _is_virtualenv(directory: Path) -> bool:
    """Whether ``directory`` holds ``pyvenv.cfg``; False when that cannot be told.

    A directory that cannot be entered raises PermissionError from
    ``Path.is_file`` (only "not found"-like errors are swallowed there); it
    is then walked, and ``os.walk`` reports it as one error entry.
    """
    try:
        return os.path.isfile(directory / "pyvenv.cfg")
    except (OSError, ValueError):
        return False


class GitIgnores:
    """The ``.gitignore`` files (and ``.git/info/exclude``) that apply while walking a tree in a git repository.

    Git's rules (pathspec's :class:`GitIgnoreSpec`): each ``.gitignore``
    matches paths relative to its own directory; a deeper file's match wins
    over a shallower one's, and within a file the last matching line wins
    (``!pattern`` re-includes).  Outside a git repository (no ``.git`` in the
    tree's directory or above) nothing is ignored, as in ruff and ripgrep.
    The global ``core.excludesFile`` is not read.
    """

    def __init__(self, repo: Path):
        self.repo = repo
        self.specs: dict[Path, object] = {}

    @classmethod
    def for_tree(cls, top: Path) -> GitIgnores | None:
        repo = next((d for d in (top, *top.parents) if os.path.exists(d / ".git")), None)
        if repo is None:
            return None
        try:
            import pathspec  # noqa: F401
        except ImportError:  # pragma: no cover - a dependency; a broken install checks everything
            return None
        self = cls(repo)
        self._load(repo, repo / ".git" / "info" / "exclude")
        for d in reversed((top, *top.parents)):  # the repository's directories above the tree
            if (d == repo or repo in d.parents) and d != top:
                self.enter(d)
        return self

    def _load(self, directory: Path, file: Path) -> None:
        from pathspec import GitIgnoreSpec

        try:
            with open(file, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:  # absent, a directory, unreadable: nothing ignored by it
            return
        if lines:
            spec = GitIgnoreSpec.from_lines(lines)
            old = self.specs.get(directory)
            # .git/info/exclude and the root .gitignore share a directory: the .gitignore wins
            self.specs[directory] = spec if old is None else _Chain(old, spec)

    def enter(self, directory: Path) -> None:
        """Read ``directory/.gitignore`` (walk order: parents first)."""
        if directory not in self.specs or directory == self.repo:
            self._load(directory, directory / ".gitignore")

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git ignores ``path`` (its parent directories were not ignored: the walk pruned them)."""
        for d in (path.parent, *path.parent.parents):
            spec = self.specs.get(d)
            if spec is not None:
                rel = path.relative_to(d).as_posix() + ("/" if is_dir else "")
                include = spec.check_file(rel).include
                if include is not None:
                    return include
            if d == self.repo:
                break
        return False


class _Chain:
    """Two specs of one directory: the later one's match wins."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def check_file(self, rel: str):
        result = self.second.check_file(rel)
        return result if result.include is not None else self.first.check_file(rel)


class Excluder:
    """``excludes`` compiled once, so that a path is matched against all of them
    in time independent of their number (10,000 excludes are common in generated
    configurations): per base directory, literal names and relative paths go
    into sets, the globs into one regex each.  Matches what
    :meth:`PathPattern.matches` would say for any one of them.
    """

    def __init__(self, excludes: list[PathPattern]):
        groups: dict[Path, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for p in excludes:
            pat = p.pattern.replace(os.sep, "/").rstrip("/").removeprefix("./")  # as PathPattern.matches reads it
            g = groups[p.base]
            if "/" not in pat:
                g["names"].append(pat)
            elif os.path.isabs(pat):
                g["absolute"].append(pat)
            else:
                g["relative"].append(pat)
                while pat.startswith("**/"):  # a leading **/ may match nothing
                    pat = pat[3:]
                    g["relative"].append(pat)
        self.groups = [(base, _Matcher(g["names"]), _Matcher(g["relative"]), _Matcher(g["absolute"]))
                       for base, g in groups.items()]

    def __call__(self, path: Path, *, strictly_below_base: bool = False) -> bool:
        """Whether absolute ``path`` matches an exclude (``strictly_below_base``: only patterns whose base is above it)."""
        for base, names, relative, absolute in self.groups:
            below = base in path.parents
            if strictly_below_base and not below:
                continue
            if names(path.name) or absolute(path.as_posix()):
                return True
            if relative and (below or path == base) and relative(path.relative_to(base).as_posix()):
                return True
        return False

    def force_excluded(self, path: Path) -> bool:
        """Whether ``path`` or a directory above it, below a pattern's base, matches that pattern."""
        return any(self(candidate, strictly_below_base=True) for candidate in (path, *path.parents))


_GLOB_CHARS = re.compile(r"[*?\[]")


class _Matcher:
    """Literal strings in a set, globs (fnmatch, ``*`` crosses ``/``) in one regex."""

    def __init__(self, patterns: list[str]):
        self.literals = {p for p in patterns if not _GLOB_CHARS.search(p)}
        globs = [p for p in dict.fromkeys(patterns) if p not in self.literals]
        self.regex = re.compile("|".join(fnmatch.translate(p) for p in globs)) if globs else None

    def __bool__(self) -> bool:
        return bool(self.literals) or self.regex is not None

    def __call__(self, text: str) -> bool:
        return text in self.literals or (self.regex is not None and self.regex.match(text) is not None)
