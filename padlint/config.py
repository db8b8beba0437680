"""``[tool.padlint]`` / ``padlint.toml``: find, read and validate the configuration.

Discovery: walking up from the checked paths (from their common directory),
the nearest directory holding ``padlint.toml`` (top-level keys) or a
``pyproject.toml`` with a ``[tool.padlint]`` table wins; in one directory
``padlint.toml`` beats ``pyproject.toml``.  ``--config PATH`` overrides.
The file is read once per run.

Keys (all optional):

- ``select``, ``extend-select``, ``ignore``: lists of rule-code prefixes ("PAD", "PAD0", "PAD001").
- ``exclude``: globs replacing the default excludes; ``extend-exclude``: globs
  added to them.  Globs are matched against the path relative to the
  directory of the configuration file (``*`` crosses ``/``); a glob without
  ``/`` matches a file or directory name anywhere.
- ``per-file-ignores``: table of glob = list of code prefixes.
- ``respect-gitignore``: skip what git ignores (default true).
- ``max-file-size``: bytes (or "1MB", "512KB"; 0: no limit) above which a
  file that could matter is not analysed; ``file-timeout``: seconds one
  file's analysis may take (0: no limit).
- ``profile``: engine profile name ("vllm") or a path to a profile TOML.
- profile extensions, passed to :meth:`padlint.profile.Profile.extended`:
  ``counts``, ``sinks``, ``sink-calls``, ``reset-helpers``, ``neutral``,
  ``ignore-args``.

Every problem raises :class:`ConfigError` with a one-line message naming
the file and the key; so does a ``pyproject.toml`` or ``padlint.toml`` met
on the way up that cannot be read or is not UTF-8 (it might hold the
project's excludes: skipping it would check what it excludes), a
configuration path that is not a regular file (``/dev/zero``, a FIFO), and
TOML nested too deeply to read.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padlint.profile import (
    Profile,
    ProfileError,
    UnknownProfileError,
    load_profile,
    one_line,
    read_toml,
)

PROFILE_KEYS = ("counts", "sinks", "sink-calls", "reset-helpers", "neutral", "ignore-args")
KNOWN_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores", "profile",
              "respect-gitignore", "max-file-size", "file-timeout") + PROFILE_KEYS

#: Directory and file names skipped while walking (``exclude`` replaces them).
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".eggs", "*.egg-info", "build", "dist",
    "__pycache__", "node_modules", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    "__pypackages__", "site-packages",
)

DEFAULT_PROFILE = "vllm"

#: Default of ``max-file-size`` / ``--max-file-size``: 1 MiB, three times vLLM's
#: largest file (gpu_model_runner.py, 320 kB); the analysis of one long method
#: costs about 0.55 GB per MB of source.
DEFAULT_MAX_FILE_SIZE = 1024 * 1024

#: Default of ``file-timeout`` / ``--file-timeout`` in seconds.  With the
#: whole-program engine, vLLM 0.33.0's gpu_model_runner.py checked alone takes
#: about 28 s of CPU (the modules its paths reach included; an attention-builder
#: file alone as long, it interprets the runner above it), more wall time on a
#: loaded 2-core machine: the default leaves room for that.
DEFAULT_FILE_TIMEOUT = 180.0

_SELECTOR = re.compile(r"PAD[0-9]{0,3}")


class ConfigError(ValueError):
    """A configuration problem: the message names the file and the key, on one line.

    Control characters (a key with a newline in it) are shown escaped, so the
    message stays one line.
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(one_line(str(message)))


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
    keys: frozenset[str] = frozenset()
    profile: str = DEFAULT_PROFILE
    extensions: dict[str, Any] = field(default_factory=dict)
    extend_select: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    max_file_size: int | None = None
    file_timeout: float | None = None

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

    def profile_name(self, name: str | None = None) -> str:
        """``name`` or the configured profile; a relative ``.toml`` path from the configuration is
        anchored at its directory."""
        name = name or self.profile
        if name.endswith(".toml") and not os.path.isabs(name) and self.path is not None and name == self.profile:
            name = str(self.root / name)
        return name

    def build_profile(self, name: str | None = None) -> Profile:
        """Load the engine profile (``name`` overrides the configured one) and apply extensions.

        Raises :class:`ConfigError` (unknown profile, bad extension).
        """
        from_config = not name and self.path is not None and "profile" in self.keys
        name = self.profile_name(name)
        try:
            try:
                profile = load_profile(name)
            except UnknownProfileError as e:
                if from_config:  # name the file and key it came from
                    raise ConfigError(f"{self.origin}: profile: {e}") from None
                raise
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
    """Whether ``path`` (a pyproject.toml) holds ``[tool.padlint]``.

    Raises :class:`ConfigError` when it cannot be read or is not UTF-8: it
    may hold this project's configuration, and skipping it in silence would
    drop its excludes and ignores.
    """
    try:
        raw = _read_regular(path)
        text = raw.decode("utf-8")
    except (OSError, ConfigError) as e:
        raise ConfigError(f"{path}: cannot read configuration: {_reason(e)}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read configuration: not UTF-8 (TOML files are UTF-8): "
                          f"{e.reason} at byte {e.start}") from None
    if "padlint" not in text:
        return False
    try:
        data = read_toml(text, str(path))
    except ProfileError:
        return True  # let load_config report the broken file
    return isinstance(data.get("tool"), dict) and "padlint" in data["tool"]


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path``; a FIFO, device or directory is refused (reading /dev/zero never ends)."""
    import stat

    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError("not a regular file")
    with open(path, "rb") as f:
        return f.read()


def _reason(e: Exception) -> str:
    return (e.strerror or str(e)) if isinstance(e, OSError) else str(e)


def load_config(path: Path) -> Config:
    """Read and validate one configuration file; raises :class:`ConfigError`."""
    path = Path(os.path.abspath(path))
    try:
        raw = _read_regular(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except (OSError, ConfigError) as e:
        raise ConfigError(f"{path}: cannot read configuration: {_reason(e)}") from None
    try:
        data = read_toml(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: cannot read configuration: not UTF-8 (TOML files are UTF-8): "
                          f"{e.reason} at byte {e.start}") from None
    except ProfileError as e:
        raise ConfigError(str(e)) from None
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
        keys=frozenset(table),
        extend_select=tuple(parse_selectors(_str_list(table.get("extend-select", []), origin, "extend-select"),
                                            f"{origin}: extend-select")),
        respect_gitignore=_bool(table, "respect-gitignore", origin),
        max_file_size=None if "max-file-size" not in table else parse_size(table["max-file-size"],
                                                                           f"{origin}: max-file-size"),
        file_timeout=None if "file-timeout" not in table else parse_seconds(table["file-timeout"],
                                                                            f"{origin}: file-timeout"),
    )
    if cfg.extensions:
        # validate now, so that a bad extension is reported even with --profile;
        # against the configured profile, since neutral values may name its
        # [constants] (an unknown profile is reported, naming this file and key,
        # when it is used: --profile may replace it)
        try:
            base = load_profile(cfg.profile_name())
        except UnknownProfileError:
            base = None
        except ProfileError as e:
            raise ConfigError(str(e)) from None
        if base is not None:
            try:
                base.extended(cfg.extensions, origin)
            except ProfileError as e:
                raise ConfigError(str(e)) from None
    return cfg


@functools.lru_cache(maxsize=1)
def known_codes() -> tuple[str, ...]:
    """Every rule code, from the rule registry (:mod:`padlint.rules.registry`; no page is read)."""
    from padlint.rules.registry import codes

    return codes()


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


def _bool(table: dict[str, Any], key: str, origin: str) -> bool | None:
    if key not in table:
        return None
    if not isinstance(table[key], bool):
        raise ConfigError(f"{origin}: {key}: expected true or false, got {table[key]!r}")
    return table[key]


_SIZE = re.compile(r"\s*(\d+)\s*([kmg]i?b?|b)?\s*", re.IGNORECASE)


def parse_size(value: Any, where: str) -> int:
    """A size in bytes: an integer >= 0, or a string such as "1MB", "512 KiB", "2000000" (K/M/G are 1024-based)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    m = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        raise ConfigError(f"{where}: expected a size in bytes such as 1048576, \"1MB\" or \"512KB\" "
                          f"(0: no limit), got {value!r}")
    unit = (m.group(2) or "b")[0].lower()
    return int(m.group(1)) * {"b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[unit]


def parse_seconds(value: Any, where: str) -> float:
    """A number of seconds >= 0 (0: no limit)."""
    import math

    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}: expected a number of seconds >= 0 (0: no limit), got {value!r}")
    return float(value)


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

    ``layers`` are (select, ignore[, extend_select]) tuples applied in order
    (configuration, then command line).  ``extend_select`` enables the
    codes it matches on top of the layer's state.  A layer's ``select`` (None: keep the previous
    state) enables exactly the codes it matches; within a layer the longest
    matching prefix decides between select and ignore, ignore winning ties.
    The starting state is "every code enabled".
    """

    layers: tuple[tuple, ...] = ()

    def enabled(self, code: str) -> bool:
        state = True
        for layer in self.layers:
            select, ignore = layer[0], layer[1]
            extend = layer[2] if len(layer) > 2 else ()
            s = _longest_prefix(code, select) if select is not None else -1
            if select is not None:
                state = s >= 0
            e = _longest_prefix(code, extend)
            if e >= 0:
                state = True
            i = _longest_prefix(code, ignore)
            if i >= 0 and i >= max(s, e):
                state = False
        return state


def _longest_prefix(code: str, prefixes: tuple[str, ...] | None) -> int:
    return max((len(p) for p in prefixes or () if code.startswith(p)), default=-1)


def per_file_ignored(code: str, path: Path, patterns: list[tuple[PathPattern, tuple[str, ...]]]) -> bool:
    """Whether ``per-file-ignores`` turns ``code`` off for absolute ``path``."""
    return any(pat.matches(path) and _longest_prefix(code, codes) >= 0 for pat, codes in patterns)
