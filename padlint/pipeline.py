"""Drive the stages for one run: discover -> prefilter -> parse -> analysis -> suppress
-> select/per-file-ignores -> baseline.

:func:`run` never raises for a bad file: every per-file failure (unreadable,
undecodable, binary, syntax error, too deeply nested, an unexpected
exception in any stage) becomes a :class:`FileError` and the run goes on.
It raises only for run-level problems: :class:`padlint.baseline.BaselineError`
from the baseline file.

``files_checked`` counts files that were read and checked, including those
the prefilter skipped (nothing in them can matter); files with an error are
not counted.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import os
import sys
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from padlint.config import Config, PathPattern, RuleSelection, per_file_ignored
from padlint.discover import discover, discover_stdin
from padlint.model import CheckResult, FileError, Finding
from padlint.parse import (
    DEEP_MESSAGE,
    SourceFile,
    decode_source,
    read_source,
    syntax_error,
    with_big_stack,
)
from padlint.prefilter import build_prefilter, has_directives, has_own_directives
from padlint.profile import Profile
from padlint.suppress import Directives, PadPolicy, apply, scan

#: Fewer files than this to parse are analysed in this process (a pool costs ~0.1 s to start).
PARALLEL_MIN_FILES = 8


@dataclass(frozen=True)
class RunOptions:
    """Inputs of one run.

    ``excludes``: extra exclude globs (``--exclude``, anchored at the
    working directory) on top of the configuration's.  ``baseline``: a
    baseline file to apply (None: none).  ``show_traceback``: print the
    traceback of internal errors to stderr.  ``jobs``: worker processes for
    parse and analysis (1: none).  ``force_exclude``: excludes apply to named
    files too.
    """

    profile: Profile
    config: Config = field(default_factory=Config)
    selection: RuleSelection = field(default_factory=RuleSelection)
    excludes: tuple[PathPattern, ...] = ()
    baseline: str | None = None
    show_traceback: bool = False
    jobs: int = 1
    force_exclude: bool = False


@dataclass
class RunOutput:
    """What a run produced.

    ``result``: files checked, findings (sorted), errors (sorted).
    ``sources``: decoded text of every file with a finding (for source
    lines in reports and for fixes).  ``policies``: ``pad=keep`` buffers
    with the number of findings each silenced.  ``suppressed``: findings
    hidden by suppression comments.  ``notes``: messages for stderr
    (stale baseline entries).
    """

    result: CheckResult
    sources: dict[str, SourceFile] = field(default_factory=dict)
    policies: list[tuple[PadPolicy, int]] = field(default_factory=list)
    suppressed: int = 0
    notes: list[str] = field(default_factory=list)


def run(paths: list[str], options: RunOptions, cwd: Path | None = None, *,
        stdin: tuple[str | None, bytes] | None = None) -> RunOutput:
    """Check ``paths`` (files or directories; default ``["."]``).

    ``stdin``: (name, bytes) to check instead of ``paths``: the source read
    from standard input, reported under ``name`` (``-`` when None; see
    :func:`padlint.discover.discover_stdin`).

    Reading, the prefilter and comment handling run in this process; parse
    and analysis of the files that pass the prefilter run in ``options.jobs``
    worker processes when there are at least :data:`PARALLEL_MIN_FILES` of
    them (else, or when a pool cannot be started, here).  Results do not
    depend on the number of jobs.
    """
    cwd = cwd or Path.cwd()
    excludes = [*options.config.exclude_patterns(), *options.excludes]
    if stdin is not None:
        found = discover_stdin(stdin[0], excludes, cwd, force_exclude=options.force_exclude)
    else:
        found = discover(paths, excludes, cwd, force_exclude=options.force_exclude)
    out = RunOutput(result=CheckResult(errors=list(found.errors)))
    prefilter = build_prefilter(options.profile)
    views = frozenset((*options.profile.shared_views, options.profile.device_view,
                       *options.profile.padded_getters, *options.profile.copy_to_device))
    per_file = options.config.per_file_patterns()

    sources: list[SourceFile] = []  # only files that need more than reading
    to_analyse: list[SourceFile] = []
    for path in found.files:
        if stdin is not None:
            source = decode_source(path, stdin[1])
        else:
            source = read_source(path if os.path.isabs(path) else str(cwd / path))
        if isinstance(source, FileError):
            out.result.errors.append(FileError(path, source.line, source.message))
            continue
        source = replace(source, path=path)  # keeps `identity`: fixes are written to the file read
        if prefilter.may_matter(source.text):
            to_analyse.append(source)
            sources.append(source)
        elif has_own_directives(source.text):
            sources.append(source)  # no finding possible, but its comments may be reported
        else:
            out.result.files_checked += 1  # nothing here can matter; drop the text
    analysed = _analyse_all(to_analyse, options)

    for source in sources:
        try:
            findings = analysed.get(source.path, [])
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

        out.result.findings, out.notes = apply_baseline(options.baseline, out.result.findings, cwd, in_scope)
    out.result.findings.sort(key=Finding.sort_key)
    out.result.errors.sort(key=FileError.sort_key)
    live = {f.path for f in out.result.findings} | {f.fix.path for f in out.result.findings if f.fix}
    out.sources = {p: s for p, s in out.sources.items() if p in live}
    return out


def analyse(source: SourceFile, profile: Profile, show_traceback: bool = False) -> list[Finding] | FileError:
    """Parse and analyse one file; never raises (errors become a :class:`FileError`).

    Runs in worker processes, so it takes and returns only picklable values.
    """
    # The analysis parses only what can matter: `ast` for the whole file, libcst
    # for the functions on paths to a sink (see padlint.analysis.engine).
    from padlint.analysis import AnalysisSyntaxError, check_source

    try:
        return list(with_big_stack(lambda text: check_source(text, source.path, profile), source.text))
    except AnalysisSyntaxError as e:
        return syntax_error(source, e)
    except (RecursionError, MemoryError):
        return FileError(source.path, None, DEEP_MESSAGE)
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
        if show_traceback:
            traceback.print_exc(file=sys.stderr)
        return FileError(source.path, None, f"internal error: {type(e).__name__}: {e}")


def _analyse_all(sources: list[SourceFile], options: RunOptions) -> dict[str, list[Finding] | FileError]:
    jobs = max(1, options.jobs)
    if jobs > 1 and len(sources) >= PARALLEL_MIN_FILES:
        try:
            return _analyse_parallel(sources, options, jobs)
        except (OSError, ImportError, RuntimeError, concurrent.futures.process.BrokenProcessPool):
            pass  # no worker processes here (sandbox, no /dev/shm): do it in this process
    return {s.path: analyse(s, options.profile, options.show_traceback) for s in sources}


def _analyse_parallel(sources: list[SourceFile], options: RunOptions, jobs: int
                      ) -> dict[str, list[Finding] | FileError]:
    # biggest files first, so that one large file does not finish last alone
    order = sorted(sources, key=lambda s: -len(s.text))
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(order))) as pool:
        results = pool.map(analyse, order, [options.profile] * len(order), [options.show_traceback] * len(order))
        return {s.path: r for s, r in zip(order, results)}


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
