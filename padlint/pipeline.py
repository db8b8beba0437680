"""Drive the stages for one run: discover -> prefilter -> parse -> analysis -> suppress
-> select/per-file-ignores -> baseline.

:func:`run` never raises for a bad file: every per-file failure (unreadable,
undecodable, binary, syntax error, too deeply nested, an unexpected
exception in any stage) becomes a :class:`FileError` and the run goes on.
It raises only for run-level problems: :class:`padlint.baseline.BaselineError`
from the baseline file (a baseline nested too deeply to read is one too).

Bounds per file (each an error entry, and the run goes on): a file that
passes the prefilter and is larger than ``max_file_size`` bytes is not
parsed (the analysis of one long method costs about 0.55 GB per MB of
source); an analysis that takes longer than ``file_timeout`` seconds is
stopped (:func:`padlint.parse.with_big_stack`).

``files_checked`` counts files that were read and checked, including those
the prefilter skipped (nothing in them can matter); files with an error are
not counted.
"""

from __future__ import annotations

import ast
import os
import sys
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from padlint.config import (
    DEFAULT_FILE_TIMEOUT,
    DEFAULT_MAX_FILE_SIZE,
    Config,
    PathPattern,
    RuleSelection,
    per_file_ignored,
)
from padlint.discover import discover, discover_stdin
from padlint.model import CheckResult, FileError, Finding
from padlint.parse import (
    DEEP_MESSAGE,
    AnalysisTimeout,
    SourceFile,
    decode_source,
    read_source,
    syntax_error,
    with_big_stack,
)
from padlint.prefilter import FEW_FILES, build_prefilter, has_directives, has_own_directives, writes_rows
from padlint.profile import Profile
from padlint.suppress import Directives, PadPolicy, apply, scan



#: What a file the parser (libcst) refuses but CPython accepts is reported as.
PARSER_LIMIT_MESSAGE = "not analysed: the parser cannot read this file"


@dataclass(frozen=True)
class RunOptions:
    """Inputs of one run.

    ``excludes``: extra exclude globs (``--exclude``, anchored at the
    working directory) on top of the configuration's.  ``baseline``: a
    baseline file to apply (None: none).  ``show_traceback``: print the
    traceback of internal errors to stderr.  ``jobs``: worker processes for
    parse and analysis (1: none).  ``force_exclude``: excludes apply to named
    files too.  ``respect_gitignore``: skip what git ignores while walking.
    ``max_file_size``: bytes (0: no limit) above which a file that could
    matter is not parsed; ``file_timeout``: seconds (0: none) one file's
    analysis may take.  ``progress``: called with (stage, done, total) as
    files are read ("read") and analysed ("analyse"), for a progress bar.
    ``cache_dir``: where analysis results are cached (:mod:`padlint.cache`;
    None: no cache).
    """

    profile: Profile
    config: Config = field(default_factory=Config)
    selection: RuleSelection = field(default_factory=RuleSelection)
    excludes: tuple[PathPattern, ...] = ()
    baseline: str | None = None
    show_traceback: bool = False
    jobs: int = 1
    force_exclude: bool = False
    respect_gitignore: bool = True
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    progress: Callable[[str, int, int], None] | None = field(default=None, compare=False)
    cache_dir: str | None = None


@dataclass
class RunOutput:
    """What a run produced.

    ``result``: files checked, findings (sorted), errors (sorted).
    ``sources``: decoded text of every file with a finding (for source
    lines in reports and for fixes).  ``policies``: ``pad=keep`` buffers
    with the number of findings each silenced.  ``suppressed``: findings
    hidden by suppression comments.  ``baselined``: the number of findings
    the baseline hid, per finding path (paths with none are absent).
    ``notes``: messages for stderr (stale baseline entries).
    """

    result: CheckResult
    sources: dict[str, SourceFile] = field(default_factory=dict)
    policies: list[tuple[PadPolicy, int]] = field(default_factory=list)
    suppressed: int = 0
    baselined: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def run(paths: list[str], options: RunOptions, cwd: Path | None = None, *,
        stdin: tuple[str | None, bytes] | None = None) -> RunOutput:
    """Check ``paths`` (files or directories; default ``["."]``).

    ``stdin``: (name, bytes) to check instead of ``paths``: the source read
    from standard input, reported under ``name`` (``-`` when None; see
    :func:`padlint.discover.discover_stdin`).

    Every file is read here; the analysis sees all of them as one program
    (whole-program: a sink in one file, its padded slice in another) and
    starts from the files that pass the prefilter.  ``options.jobs`` is
    accepted for compatibility; the analysis runs in this process.
    """
    cwd = cwd or Path.cwd()
    excludes = [*options.config.exclude_patterns(), *options.excludes]
    if stdin is not None:
        found = discover_stdin(stdin[0], excludes, cwd, force_exclude=options.force_exclude)
    else:
        found = discover(paths, excludes, cwd, force_exclude=options.force_exclude,
                         respect_gitignore=options.respect_gitignore)
    out = RunOutput(result=CheckResult(errors=list(found.errors)))
    if not found.files:
        out.notes.append("no Python files found under the given paths (everything excluded?): 0 files checked"
                         if stdin is None else "the file read from standard input is excluded: 0 files checked")
    prefilter = build_prefilter(options.profile)
    from padlint.rules.registry import static_rules

    wanting = [r for r in static_rules() if options.selection.enabled(r.code)]
    wanted = False  # some checked file matters to a rule although no file is a seed
    views = frozenset((*options.profile.shared_views, options.profile.device_view,
                       *options.profile.padded_getters, *options.profile.copy_to_device))
    per_file = options.config.per_file_patterns()

    every: list[SourceFile] = []   # every file read: the program the analysis sees
    seeds: set[str] = set()           # files whose functions may start an entry-point search
    progress = options.progress or (lambda stage, done, total: None)
    for done, path in enumerate(found.files):
        progress("read", done, len(found.files))
        if stdin is not None:
            source = decode_source(path, stdin[1])
        else:
            source = read_source(path if os.path.isabs(path) else str(cwd / path))
        if isinstance(source, FileError):
            out.result.errors.append(FileError(path, source.line, source.message))
            continue
        source = replace(source, path=path)  # keeps `identity`: fixes are written to the file read
        every.append(source)
        if not prefilter.may_matter(source.text):
            # a rule that reports without a sink (PAD003) may still want it analysed: then the
            # analysis runs, but the file does not start an entry-point search (what such a rule
            # needs of the entry points it asks the engine for: the rows dummy runs read)
            wanted = wanted or any(r.wants(source.text, options.profile) for r in wanting)
        else:
            if 0 < options.max_file_size < len(source.raw):
                out.result.errors.append(FileError(path, None, _too_large(len(source.raw), options.max_file_size)))
                every.pop()
                continue
            seeds.add(path)
    progress("read", len(found.files), len(found.files))
    if len(every) <= FEW_FILES:
        # a few files checked (pre-commit, a file alone): one that mentions no sink and no padded
        # count but writes rows of a buffer in place may reset or fill what reaches a sink in
        # a module not checked; it starts an entry-point search too (its writers' callers)
        for source in every:
            if source.path not in seeds and writes_rows(source.text) \
                    and not 0 < options.max_file_size < len(source.raw):
                seeds.add(source.path)
    analysed = _analyse_all(every, seeds, options, cwd, progress, out.notes) if seeds or wanted else {}

    for source in every:
        findings = analysed.get(source.path, [])
        if not findings and not has_own_directives(source.text):
            out.result.files_checked += 1  # nothing here can matter
            continue
        try:
            if isinstance(findings, FileError):
                out.result.errors.append(findings)
                continue
            out.result.files_checked += 1
            _finish_file(source, findings, cwd, options, views, per_file, out)
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
            if options.show_traceback:
                traceback.print_exc(file=sys.stderr)
            out.result.errors.append(FileError(source.path, None, f"internal error: {type(e).__name__}: {e}"))
    if options.baseline:
        from padlint.baseline import apply as apply_baseline

        failed = {os.path.normpath(os.path.join(cwd, e.path)) for e in out.result.errors}
        checked = {os.path.normpath(os.path.join(cwd, p)) for p in found.files} - failed

        def in_scope(full: str, code: str) -> bool:
            return full in checked and options.selection.enabled(code)

        before = Counter(f.path for f in out.result.findings)
        try:
            out.result.findings, baseline_notes = apply_baseline(options.baseline, out.result.findings, cwd,
                                                                 in_scope)
        except RecursionError:
            from padlint.baseline import BaselineError

            raise BaselineError(f"{options.baseline}: cannot read baseline: nested too deeply") from None
        out.notes.extend(baseline_notes)
        out.baselined = dict(before - Counter(f.path for f in out.result.findings))
    out.result.findings.sort(key=Finding.sort_key)
    out.result.errors.sort(key=FileError.sort_key)
    live = {f.path for f in out.result.findings} | {f.fix.path for f in out.result.findings if f.fix}
    out.sources = {p: s for p, s in out.sources.items() if p in live}
    return out


def _too_large(size: int, limit: int) -> str:
    return (f"not analysed: {_size(size)} is larger than the limit of {_size(limit)} per file "
            f"(--max-file-size)")


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KiB"


def analyse(source: SourceFile, profile: Profile, show_traceback: bool = False,
            timeout: float = 0) -> list[Finding] | FileError:
    """Parse and analyse one file on its own (with the modules it reaches on disk);
    never raises (errors become a :class:`FileError`).  ``timeout``: seconds (0: no limit)."""
    return _analyse_all([source], {source.path},
                        RunOptions(profile, show_traceback=show_traceback, file_timeout=timeout),
                        Path.cwd(), None).get(source.path, [])


def _python_accepts(text: str) -> bool:
    """Whether CPython compiles ``text`` to an AST (run only after the analysis refused it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _programs(srcs: list) -> list[list]:
    """The checked files grouped into the programs analysed together: one, unless two of them in
    different package roots have the same module name (two copies of a package, or several
    projects side by side such as padlint's own fixtures, each with its `pkg`): one module name
    would then stand for two files, so each root is its own program (files in no package join
    the first one)."""
    from padlint.analysis.project import find_root

    roots = {s.path: find_root(s.file or s.path) for s in srcs}
    seen: dict[str, str] = {}
    if not any(r is not None and seen.setdefault(r[1], str(r[0])) != str(r[0]) for r in roots.values()):
        return [srcs]
    groups: dict[str, list] = {}
    loose = []
    for s in srcs:
        r = roots[s.path]
        if r is None:
            loose.append(s)
        else:
            groups.setdefault(str(r[0]), []).append(s)
    out = list(groups.values())
    out[0].extend(loose)
    return out


def _analyse_all(sources: list[SourceFile], seeds: set[str], options: RunOptions, cwd: Path,
                 progress: Callable[[str, int, int], None] | None, notes: list[str] | None = None
                 ) -> dict[str, list[Finding] | FileError]:
    """Analyse the checked files as one program (see :mod:`padlint.analysis.engine`).

    Never raises.  The whole-program run gets the sum of the per-file time
    budgets of its seed files; when it fails (an unexpected exception,
    pathological nesting, the budget), each seed file is analysed on its own,
    with its own budget, so that one bad file costs only its own result.
    """
    report = progress or (lambda stage, done, total: None)

    def full(path: str) -> str:
        return path if os.path.isabs(path) or path == "-" else str(cwd / path)

    def convert(res: dict, by_path: dict[str, SourceFile]) -> dict[str, list[Finding] | FileError]:
        out: dict[str, list[Finding] | FileError] = {}
        for path, r in res.items():
            if isinstance(r, AnalysisSyntaxError) and r.msg == "too deeply nested":
                out[path] = FileError(path, None, DEEP_MESSAGE)
            elif isinstance(r, AnalysisSyntaxError):
                src = by_path[path]
                # valid Python that libcst cannot parse (3,000 adjacent string literals): not the user's error
                out[path] = FileError(path, r.lineno or None, PARSER_LIMIT_MESSAGE) \
                    if _python_accepts(src.text) else syntax_error(src, r)
            else:
                out[path] = r
        return out

    by_path = {s.path: s for s in sources}
    report("analyse", 0, len(seeds))
    key = None
    if options.cache_dir:
        from padlint import cache

        # keyed on the paths as reported too: a cached finding carries its reported path.  Looked
        # up before the engine is imported: a cache hit needs neither the engine nor libcst
        key = cache.run_key(options.profile, [(f"{s.path}\0{full(s.path)}", s.text) for s in sources],
                            {f"{p}\0{full(p)}" for p in seeds})
        cached = cache.load(options.cache_dir, key)
        if cached is not None:
            report("analyse", len(seeds), len(seeds))
            return cached
    from padlint.analysis.engine import AnalysisSyntaxError, Source, check_project

    srcs = [Source(s.path, s.text, full(s.path)) for s in sources]
    try:
        read: dict[str, str] = {}
        res: dict = {}
        for group in _programs(srcs):
            gseeds = {s.path for s in group if s.path in seeds}
            # each program gets the sum of the per-file budgets of its seed files
            budget = options.file_timeout * max(1, len(gseeds)) if options.file_timeout else None
            res.update(with_big_stack(
                lambda _t, g=group, gs=gseeds: check_project(g, options.profile, seeds=gs, read=read), "",
                timeout=budget))
        report("analyse", len(seeds), len(seeds))
        out = convert(res, by_path)
        if key is not None:
            note = cache.store(options.cache_dir, key, out, {p: cache.digest(t) for p, t in read.items()})
            if note is not None and notes is not None:
                notes.append(note)
        return out
    except AnalysisTimeout:
        if notes is not None and len(seeds) > 1:
            notes.append(f"the analysis of the {len(seeds)} files together ran past its budget; "
                         "checking them one at a time (calls between them are not followed)")
    except Exception as e:  # noqa: BLE001 - fall back to one file at a time
        if options.show_traceback:
            traceback.print_exc(file=sys.stderr)
        if notes is not None and len(seeds) > 1:
            notes.append(f"the analysis of the {len(seeds)} files together stopped ({type(e).__name__}); "
                         "checking them one at a time (calls between them are not followed; "
                         "--show-traceback prints where)")
    out: dict[str, list[Finding] | FileError] = {}
    seed_srcs = [s for s in srcs if s.path in seeds]
    for done, s in enumerate(seed_srcs):
        report("analyse", done, len(seed_srcs))
        try:
            res = with_big_stack(lambda _t: check_project([s], options.profile), "",
                                 timeout=options.file_timeout or None)
            out.update(convert(res, by_path))
        except AnalysisTimeout:
            out[s.path] = FileError(s.path, None, f"not analysed: took longer than the budget of "
                                                  f"{options.file_timeout:g} s per file (--file-timeout)")
        except (RecursionError, MemoryError):
            out[s.path] = FileError(s.path, None, DEEP_MESSAGE)
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
            if options.show_traceback:
                traceback.print_exc(file=sys.stderr)
            out[s.path] = FileError(s.path, None, f"internal error: {type(e).__name__}: {e}")
    report("analyse", len(seed_srcs), len(seed_srcs))
    return out

def _finish_file(source: SourceFile, findings: list[Finding], cwd: Path, options: RunOptions,
                 views: frozenset[str], per_file, out: RunOutput) -> None:
    path = source.path
    if not (has_own_directives(source.text) or (findings and has_directives(source.text))):
        directives = Directives(path=path)  # nothing can suppress or be reported: skip tokenizing
    else:
        directives = scan(source.text, path)
    if not findings and not directives.suppressions and not directives.policies and not directives.problems:
        return
    outcome = apply(findings, directives, views)
    out.suppressed += outcome.suppressed
    out.policies.extend(outcome.kept_by_policy.items())
    abs_path = Path(os.path.abspath(cwd / path))
    kept = [f for f in outcome.findings
            if options.selection.enabled(f.code) and not per_file_ignored(f.code, abs_path, per_file)]
    if kept:
        out.result.findings.extend(kept)
        out.sources[path] = source
