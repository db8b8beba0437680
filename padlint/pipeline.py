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

import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from padlint.config import Config, PathPattern, RuleSelection, per_file_ignored
from padlint.discover import discover
from padlint.model import CheckResult, FileError, Finding
from padlint.parse import DEEP_MESSAGE, SourceFile, parse_source, read_source
from padlint.prefilter import Prefilter, build_prefilter, has_directives, has_own_directives
from padlint.profile import Profile
from padlint.suppress import Directives, PadPolicy, apply, scan


@dataclass(frozen=True)
class RunOptions:
    """Inputs of one run.

    ``excludes``: extra exclude globs (``--exclude``, anchored at the
    working directory) on top of the configuration's.  ``baseline``: a
    baseline file to apply (None: none).  ``show_traceback``: print the
    traceback of internal errors to stderr.
    """

    profile: Profile
    config: Config = field(default_factory=Config)
    selection: RuleSelection = field(default_factory=RuleSelection)
    excludes: tuple[PathPattern, ...] = ()
    baseline: str | None = None
    show_traceback: bool = False


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


def run(paths: list[str], options: RunOptions, cwd: Path | None = None) -> RunOutput:
    """Check ``paths`` (files or directories; default ``["."]``)."""
    cwd = cwd or Path.cwd()
    found = discover(paths, [*options.config.exclude_patterns(), *options.excludes], cwd)
    out = RunOutput(result=CheckResult(errors=list(found.errors)))
    prefilter = build_prefilter(options.profile)
    views = frozenset((*options.profile.shared_views, options.profile.device_view,
                       *options.profile.padded_getters, *options.profile.copy_to_device))
    per_file = options.config.per_file_patterns()
    for path in found.files:
        try:
            _check_file(path, cwd, options, prefilter, views, per_file, out)
        except Exception as e:  # noqa: BLE001 - one bad file must not stop the run
            if options.show_traceback:
                traceback.print_exc(file=sys.stderr)
            out.result.errors.append(FileError(path, None, f"internal error: {type(e).__name__}: {e}"))
    if options.baseline:
        from padlint.baseline import apply as apply_baseline

        out.result.findings, out.notes = apply_baseline(options.baseline, out.result.findings)
    out.result.findings.sort(key=Finding.sort_key)
    out.result.errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    live = {f.path for f in out.result.findings} | {f.fix.path for f in out.result.findings if f.fix}
    out.sources = {p: s for p, s in out.sources.items() if p in live}
    return out


def _check_file(path: str, cwd: Path, options: RunOptions, prefilter: Prefilter, views: frozenset[str],
                per_file, out: RunOutput) -> None:
    source = read_source(str(cwd / path) if not os.path.isabs(path) else path)
    if isinstance(source, FileError):
        out.result.errors.append(FileError(path, source.line, source.message))
        return
    source = SourceFile(path, source.text, source.encoding, source.raw)
    findings: list[Finding] = []
    if prefilter.may_matter(source.text):
        module = parse_source(source)
        if isinstance(module, FileError):
            out.result.errors.append(module)
            return
        try:
            from padlint.analysis import check_module

            findings = list(check_module(module, path, options.profile))
        except RecursionError:
            out.result.errors.append(FileError(path, None, DEEP_MESSAGE))
            return
    out.result.files_checked += 1
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
