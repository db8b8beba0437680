"""``[tool.padlint]`` / ``padlint.toml``: find, read and validate the configuration.

Discovery: walking up from the checked paths (from their common directory),
the nearest directory holding ``padlint.toml`` (top-level keys) or a
``pyproject.toml`` with a ``[tool.padlint]`` table wins; in one directory
``padlint.toml`` beats ``pyproject.toml``.  ``--config PATH`` overrides.
The file is read once per run.

Keys (all optional):

- ``select``, ``ignore``: lists of rule-code prefixes ("PAD", "PAD0", "PAD001").
- ``exclude``: globs replacing the default excludes; ``extend-exclude``: globs
  added to them.  Globs are matched against the path relative to the
  directory of the configuration file (``*`` crosses ``/``); a glob without
  ``/`` matches a file or directory name anywhere.
- ``per-file-ignores``: table of glob = list of code prefixes.
- ``profile``: engine profile name ("vllm") or a path to a profile TOML.
- profile extensions, passed to :meth:`padlint.profile.Profile.extended`:
  ``counts``, ``sinks``, ``sink-calls``, ``reset-helpers``, ``neutral``,
  ``ignore-args``.

Every problem raises :class:`ConfigError` with a one-line message naming
the file and the key.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padlint.profile import Profile, ProfileError, load_profile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROFILE_KEYS = ("counts", "sinks", "sink-calls", "reset-helpers", "neutral", "ignore-args")
KNOWN_KEYS = ("select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "profile") + PROFILE_KEYS

#: Directory and file names skipped while walking (``exclude`` replaces them).
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".eggs", "*.egg-info", "build", "dist",
    "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "__pypackages__", "site-packages",
)

DEFAULT_PROFILE = "vllm"

_SELECTOR = re.compile(r"PAD[0-9]{0,3}")


class ConfigError(ValueError):
    """A configuration problem; the message is one line naming file and key."""


@dataclass(frozen=True)
class PathPattern:
    """A glob anchored at ``base`` (an absolute directory).

    A pattern without ``/`` matches any file or directory *name*; otherwise
    it matches the path relative to ``base`` (``*`` crosses ``/``, a leading
    ``**/`` may match nothing), or an absolute path when it is absolute.
    """

    pattern: str
    base: Path

    def matches(self, path: Path) -> bool:
        """Whether absolute ``path`` matches."""
        pat = self.pattern.replace(os.sep, "/").rstrip("/")
        pat = pat.removeprefix("./")
        if "/" not in pat:
            return fnmatch.fnmatchcase(path.name, pat)
        if os.path.isabs(pat):
            return fnmatch.fnmatchcase(path.as_posix(), pat)
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        if fnmatch.fnmatchcase(rel, pat):
            return True
        while pat.startswith("**/"):
            pat = pat[3:]
            if fnmatch.fnmatchcase(rel, pat):
                return True
        return False


@dataclass(frozen=True)
class Config:
    """A validated configuration.

    ``path`` is the file read (None: defaults); ``root`` the directory that
    relative globs are anchored at.  ``select`` None means "all rules".
    ``exclude`` None means :data:`DEFAULT_EXCLUDE`.  ``extensions`` holds the
    profile-extension keys as read.
    """

    path: Path | None = None
    root: Path = field(default_factory=Path.cwd)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    profile: str = DEFAULT_PROFILE
    extensions: dict[str, Any] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        """How messages name this configuration."""
        if self.path is None:
            return "<defaults>"
        return f"{self.path} [tool.padlint]" if self.path.name == "pyproject.toml" else str(self.path)

    def exclude_patterns(self) -> list[PathPattern]:
        names = DEFAULT_EXCLUDE if self.exclude is None else self.exclude
        return [PathPattern(p, self.root) for p in (*names, *self.extend_exclude)]

    def per_file_patterns(self) -> list[tuple[PathPattern, tuple[str, ...]]]:
        return [(PathPattern(g, self.root), codes) for g, codes in self.per_file_ignores]

    def build_profile(self, name: str | None = None) -> Profile:
        """Load the engine profile (``name`` overrides the configured one) and apply extensions.

        Raises :class:`ConfigError` (unknown profile, bad extension).
        """
        name = name or self.profile
        if name.endswith(".toml") and not os.path.isabs(name) and self.path is not None and name == self.profile:
            name = str(self.root / name)
        try:
            profile = load_profile(name)
            if self.extensions:
                profile = profile.extended(self.extensions, self.origin)
        except ProfileError as e:
            raise ConfigError(str(e)) from None
        return profile


def find_config(paths: list[str], cwd: Path | None = None) -> Path | None:
    """The nearest configuration file above the common directory of ``paths``, or None."""
    cwd = cwd or Path.cwd()
    dirs = []
    for p in paths or ["."]:
        ap = Path(os.path.abspath(cwd / p))
        dirs.append(str(ap if ap.is_dir() else ap.parent))
    try:
        start = Path(os.path.commonpath(dirs))
    except ValueError:  # paths on different drives
        start = cwd
    for d in (start, *start.parents):
        candidate = d / "padlint.toml"
        if candidate.is_file():
            return candidate
        candidate = d / "pyproject.toml"
        if candidate.is_file() and _has_padlint_table(candidate):
            return candidate
    return None


def _has_padlint_table(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if "padlint" not in text:
        return False
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return True  # let load_config report the broken file
    return isinstance(data.get("tool"), dict) and "padlint" in data["tool"]


def load_config(path: Path) -> Config:
    """Read and validate one configuration file; raises :class:`ConfigError`."""
    path = Path(os.path.abspath(path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read configuration: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("padlint", {}) if isinstance(data.get("tool"), dict) else {}
        origin = f"{path} [tool.padlint]"
    else:
        table = data
        origin = str(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{origin}: expected a table")
    return config_from_dict(table, origin, path, path.parent)


def config_from_dict(table: dict[str, Any], origin: str, path: Path | None, root: Path) -> Config:
    """Validate a ``[tool.padlint]`` table; raises :class:`ConfigError` naming ``origin`` and the key."""
    for key in table:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(KNOWN_KEYS)}"
            raise ConfigError(f"{origin}: unknown key {key!r}{hint}")
    select = table.get("select")
    cfg = Config(
        path=path,
        root=root,
        select=None if select is None else tuple(parse_selectors(_str_list(select, origin, "select"), f"{origin}: select")),
        ignore=tuple(parse_selectors(_str_list(table.get("ignore", []), origin, "ignore"), f"{origin}: ignore")),
        exclude=None if "exclude" not in table else tuple(_globs(table["exclude"], origin, "exclude")),
        extend_exclude=tuple(_globs(table.get("extend-exclude", []), origin, "extend-exclude")),
        per_file_ignores=tuple(_per_file_ignores(table.get("per-file-ignores", {}), origin)),
        profile=_profile_name(table.get("profile", DEFAULT_PROFILE), origin),
        extensions={k: table[k] for k in PROFILE_KEYS if k in table},
    )
    if cfg.extensions:
        # validate now, so a bad extension is reported even with --profile
        try:
            Profile(name="check").extended(cfg.extensions, origin)
        except ProfileError as e:
            raise ConfigError(str(e)) from None
    return cfg


#: The codes when the rule pages cannot be read (a broken install); kept in step with rules/PAD*.md.
FALLBACK_CODES = ("PAD001", "PAD100", "PAD101")


@functools.lru_cache(maxsize=1)
def known_codes() -> tuple[str, ...]:
    """Every rule code (from the rule pages, :func:`padlint.rules_doc.list_rules`)."""
    try:
        from padlint.rules_doc import list_rules

        codes = tuple(code for code, _, _ in list_rules())
    except Exception:  # noqa: BLE001 - selection must work without the rule pages
        codes = ()
    return codes or FALLBACK_CODES


def parse_selectors(items: list[str], where: str) -> list[str]:
    """Validate rule-code prefixes ("PAD", "PAD0", "PAD001"); raises :class:`ConfigError`.

    Like ruff, a selector must be a prefix of some known code: ``PAD999`` or
    an empty string would silently select nothing.
    """
    out = []
    for item in items:
        code = item.strip()
        if not code:
            raise ConfigError(f"{where}: empty rule selector (expected a code prefix such as PAD, PAD0, PAD001)")
        if not _SELECTOR.fullmatch(code):
            raise ConfigError(f"{where}: invalid rule selector {item!r} (expected a code prefix such as PAD, PAD0, PAD001)")
        known = known_codes()
        if not any(k.startswith(code) for k in known):
            raise ConfigError(f"{where}: unknown rule selector {item!r}: no rule code starts with it "
                              f"(known codes: {', '.join(known)})")
        out.append(code)
    return out


def check_glob(pattern: Any, where: str) -> str:
    """Validate one glob; raises :class:`ConfigError` (not a string, empty, unclosed ``[``)."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise ConfigError(f"{where}: expected a non-empty glob string, got {pattern!r}")
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] in "!^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j)
            if j < 0:
                raise ConfigError(f"{where}: bad glob {pattern!r}: unclosed '['")
            i = j
        i += 1
    return pattern


def _str_list(value: Any, origin: str, key: str) -> list[str]:
    # a bare string is an error, not a one-item list: `select = "PAD100"` like `sinks = "Foo"`
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{origin}: {key}: expected a list of strings, got {value!r}")
    return value


def _globs(value: Any, origin: str, key: str) -> list[str]:
    return [check_glob(p, f"{origin}: {key}") for p in _str_list(value, origin, key)]


def _per_file_ignores(value: Any, origin: str) -> list[tuple[str, tuple[str, ...]]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{origin}: per-file-ignores: expected a table of glob = [codes]")
    out = []
    for glob, codes in value.items():
        where = f"{origin}: per-file-ignores.{glob!r}"
        check_glob(glob, where)
        out.append((glob, tuple(parse_selectors(_str_list(codes, origin, f"per-file-ignores.{glob!r}"), where))))
    return out


def _profile_name(value: Any, origin: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{origin}: profile: expected an engine profile name such as 'vllm', got {value!r}")
    return value


def resolve_config(paths: list[str], config_path: str | None) -> Config:
    """The run's configuration: ``config_path`` if given, else the nearest file, else defaults."""
    if config_path:
        return load_config(Path(config_path))
    found = find_config(paths)
    return load_config(found) if found else Config()


@dataclass(frozen=True)
class RuleSelection:
    """Which codes are enabled, resolved like ruff.

    ``layers`` are (select, ignore) pairs applied in order (configuration,
    then command line).  A layer's ``select`` (None: keep the previous
    state) enables exactly the codes it matches; within a layer the longest
    matching prefix decides between select and ignore, ignore winning ties.
    The starting state is "every code enabled".
    """

    layers: tuple[tuple[tuple[str, ...] | None, tuple[str, ...]], ...] = ()

    def enabled(self, code: str) -> bool:
        state = True
        for select, ignore in self.layers:
            s = _longest_prefix(code, select) if select is not None else -1
            if select is not None:
                state = s >= 0
            i = _longest_prefix(code, ignore)
            if i >= 0 and i >= s:
                state = False
        return state


def _longest_prefix(code: str, prefixes: tuple[str, ...] | None) -> int:
    return max((len(p) for p in prefixes or () if code.startswith(p)), default=-1)


def per_file_ignored(code: str, path: Path, patterns: list[tuple[PathPattern, tuple[str, ...]]]) -> bool:
    """Whether ``per-file-ignores`` turns ``code`` off for absolute ``path``."""
    return any(pat.matches(path) and _longest_prefix(code, codes) >= 0 for pat, codes in patterns)
