"""On-disk cache of analysis results, as ruff keeps ``.ruff_cache``.

One entry per analysed program: the key is a hash of padlint's version and its
own code (so an engine change in a development checkout is never answered from
an old entry), the profile, every checked file's path and text, and which of
them are seeds.  An
entry also lists every *other* file the analysis read (modules reached through
imports, calls and subclass lookups) with the hash of its content (and, where the
file still had that content when the entry was written and was not changed in the two
seconds before, its size, mtime, ctime and inode: an unchanged stat is taken as an
unchanged file, as git's index does); it is used
only while all of them still hash the same, so an edit anywhere the analysis
looked invalidates it.  Entries are JSON (never pickle: a cache directory in
an untrusted checkout must not be able to run code), written atomically.  A
cache that cannot be read is ignored; one that cannot be written costs one
note and nothing else.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from padlint import __version__
from padlint.model import FileError, Finding, Fix, TraceStep

CACHE_FORMAT = 1
DEFAULT_DIR = ".padlint_cache"


def digest(text: str | bytes) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A hash of padlint's own Python files (the package this module belongs to)."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        try:
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            continue
    return h.hexdigest()


def run_key(profile: Any, sources: list[tuple[str, str]], seeds: set[str]) -> str:
    """The key of one analysis: version and code, profile, checked files (path, text), seeds."""
    h = hashlib.sha256()
    h.update(f"padlint {__version__} {code_digest()} cache {CACHE_FORMAT}\0{profile!r}\0".encode(
        "utf-8", "surrogatepass"))
    for path, text in sorted(sources):
        h.update(f"{path}\0{'seed' if path in seeds else ''}\0{digest(text)}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _finding_from(d: dict[str, Any]) -> Finding:
    d = dict(d)
    d["trace"] = tuple(TraceStep(**t) for t in d.get("trace", ()))
    d["fix"] = Fix(**d["fix"]) if d.get("fix") else None
    return Finding(**d)


def load(cache_dir: str, key: str) -> dict[str, list[Finding] | FileError] | None:
    """The cached results for ``key``, or None (absent, unreadable, or a dependency changed)."""
    path = Path(cache_dir) / f"{key}.json"
    try:
        if not path.is_file() or path.stat().st_size > 256 * 1024 * 1024:
            return None
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
            return None
        deps = entry.get("deps", {})
        restat: dict[str, str] = {}  # same bytes, new stat (touched, checked out again)
        for dep, want in deps.items():
            try:
                if isinstance(want, list):  # [digest, *stat]: an unchanged stat is an unchanged file
                    if _stat(os.stat(dep)) == want[1:]:
                        continue
                    want = want[0]
                    restat[dep] = want
                if digest(Path(dep).read_bytes()) != want:
                    return None
            except OSError:
                return None
        out: dict[str, list[Finding] | FileError] = {}
        for p, r in entry["results"].items():
            out[p] = FileError(**r["error"]) if "error" in r else [_finding_from(f) for f in r["findings"]]
        if restat:  # remember the new stats, so that the next run does not hash those files again
            entry["deps"] = {**deps, **_with_stat(restat)}
            _write(Path(cache_dir), key, entry)
        return out
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None  # a damaged or foreign entry: analyse again


def _with_stat(deps: dict[str, str]) -> dict[str, str | list]:
    """Each dependency's digest with the file's stat (:func:`_stat`) where the file on disk still
    has that digest (read again now: a file edited while the analysis ran keeps its bare digest,
    so the entry is used only if the file returns to what was analysed) and was not changed in
    the last :data:`RACY_NS`.  A later load trusts an unchanged stat without reading the file;
    the thousands of modules a whole-program analysis reads are then not hashed on every run."""
    out: dict[str, str | list] = {}
    now = time.time_ns()
    for dep, want in deps.items():
        out[dep] = want
        try:
            st = os.stat(dep)
            if now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
                continue  # changed just now: another change within the same clock tick would not show
            if digest(Path(dep).read_bytes()) == want and _stat(os.stat(dep)) == _stat(st):
                out[dep] = [want, *_stat(st)]
        except OSError:
            pass
    return out


def _stat(st: os.stat_result) -> list[int]:
    """What a file's stat must keep for its bytes to be taken as unchanged: size, mtime, and the
    inode and ctime, which a copy that restores the mtime (`cp -p`, `rsync -t`, `os.utime`)
    still changes, as git's index compares them."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


#: a file changed less than this long before an entry is written keeps its bare digest: on a file
#: system with coarse timestamps, an edit in the same tick would leave size and times unchanged
#: (git's "racily clean" entries)
RACY_NS = 2_000_000_000


def store(cache_dir: str, key: str, results: dict[str, list[Finding] | FileError], deps: dict[str, str]) -> str | None:
    """Write one entry; returns a one-line note when the cache cannot be written (else None)."""
    entry = {
        "format": CACHE_FORMAT, "key": key, "deps": _with_stat(deps),
        "results": {p: ({"error": r.to_dict()} if isinstance(r, FileError)
                        else {"findings": [f.to_dict() for f in r]}) for p, r in results.items()},
    }
    return _write(Path(cache_dir), key, entry, cache_dir)


def _write(d: Path, key: str, entry: dict, shown: str | None = None) -> str | None:
    """Write ``entry`` atomically; a one-line note when it cannot be (else None)."""
    try:
        d.mkdir(parents=True, exist_ok=True)
        ignore = d / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# created by padlint\n*\n", encoding="utf-8")
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, d / f"{key}.json")
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, TypeError, ValueError) as e:
        return f"cache not written ({shown or d}): {e.__class__.__name__}: {e}"
    return None
