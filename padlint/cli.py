"""Command line: ``padlint check``, ``padlint explain CODE``, ``padlint rules``, ``padlint --version``.

Exit codes (like ruff):

- 0: no findings and no file errors (or ``--exit-zero``);
- 1: findings, or files that could not be checked (unreadable, undecodable,
  binary, syntax error, too deeply nested, a path that does not exist);
  with ``--diff``: a fix would change a file (or a file error);
- 2: usage, configuration, profile, baseline or output-file error, or an
  internal error outside any one file: one line on stderr, no traceback
  (``--show-traceback`` or ``PADLINT_DEBUG=1`` prints it).

:func:`main` returns the exit code and never raises (``SystemExit`` from
argparse included); the ``padlint`` console script passes it to ``sys.exit``.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import gc
import os
import stat
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from padlint import __version__
from padlint.config import (
    DEFAULT_FILE_TIMEOUT,
    DEFAULT_MAX_FILE_SIZE,
    ConfigError,
    PathPattern,
    RuleSelection,
    check_glob,
    known_codes,
    parse_seconds,
    parse_selectors,
    parse_size,
    resolve_config,
)
from padlint.model import CheckResult, FileError, Finding, Fix
from padlint.parse import SourceFile, read_source
from padlint.reporters import FORMATS


class UsageError(Exception):
    """A run-level problem reported as one line with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands check, explain, rules)."""
    # allow_abbrev=False everywhere: argparse's prefix matching would read
    # `--unsafe --fi` as `--unsafe-fixes --fix` and rewrite files
    parser = argparse.ArgumentParser(
        prog="padlint", allow_abbrev=False,
        description="Find stale CUDA-graph padding rows reaching metadata sinks in LLM-inference engines.")
    parser.add_argument("--version", action="version", version=f"padlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check files and directories (default: .)", allow_abbrev=False,
                           description="Check Python files for stale padding rows reaching a sink.")
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files or directories (default: .); - reads one file from standard input")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="the path of the file read from standard input (implies -): used in messages, "
                            "for per-file-ignores, the baseline and --force-exclude")
    check.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default="text",
                       help="output format (default: text); --output-format is ruff's name for it")
    check.add_argument("-o", "--output-file", metavar="PATH", help="write the report to PATH instead of stdout")
    check.add_argument("--no-color", action="store_true", help="never colour the output")
    check.add_argument("--statistics", action="store_true",
                       help="print counts per code and the pad=keep buffers instead of the findings "
                            "(text; JSON with --format json; not with --format sarif)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings or file errors")
    check.add_argument("--select", action="append", default=[], metavar="CODES",
                       help="comma-separated code prefixes to enable (PAD, PAD0, PAD001); replaces the config's")
    check.add_argument("--extend-select", action="append", default=[], metavar="CODES",
                       help="comma-separated code prefixes to enable on top of the selected ones")
    check.add_argument("--ignore", action="append", default=[], metavar="CODES",
                       help="comma-separated code prefixes to disable")
    check.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                       help="skip files and directories matching GLOB (added to the configured excludes)")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply the excludes to files named on the command line too (for pre-commit)")
    check.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip files that git ignores (.gitignore, .git/info/exclude) while walking "
                            "directories in a git repository (default: on, or the config's respect-gitignore)")
    check.add_argument("--max-file-size", metavar="SIZE",
                       help="do not analyse a file that could matter when it is larger than SIZE "
                            "(bytes, or 512KB, 2MB; 0: no limit; default 1MB): one error line instead")
    check.add_argument("--file-timeout", metavar="SECONDS",
                       help="stop analysing a file after SECONDS (0: no limit; default 180): one error line instead")
    check.add_argument("--no-cache", action="store_true",
                       help="do not read or write the analysis cache")
    check.add_argument("--cache-dir", metavar="DIR",
                       help="where to cache analysis results (default: $PADLINT_CACHE_DIR, else "
                            ".padlint_cache in the working directory)")
    check.add_argument("--profile", metavar="NAME", help="engine profile (default: from config, else vllm)")
    check.add_argument("--config", metavar="PATH", help="configuration file (padlint.toml or pyproject.toml)")
    check.add_argument("--baseline", metavar="PATH", help="hide the findings recorded in this baseline file")
    check.add_argument("--write-baseline", metavar="PATH", help="record the current findings as a baseline and exit 0")
    check.add_argument("--fix", action="store_true", help="apply fixes (PAD001 resets need --unsafe-fixes)")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change values (all PAD001 resets)")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of writing them")
    check.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                       help="accepted for compatibility: the whole-program analysis runs in one process")
    check.add_argument("--show-traceback", action="store_true", help="print tracebacks of internal errors")
    check.add_argument("--show-settings", action="store_true",
                       help="print the resolved settings (configuration file, profile, rules, excludes) and exit")
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")
    loud = check.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true",
                      help="print the findings and errors only: no summary, warnings or progress bar")
    loud.add_argument("-v", "--verbose", action="store_true",
                      help="also print the configuration, profile, file counts and time taken on stderr")

    explain = sub.add_parser("explain", help="explain a rule", description="Print the documentation of a rule.",
                             allow_abbrev=False)
    explain.add_argument("code", metavar="CODE")
    rules = sub.add_parser("rules", help="list the rules", description="List every rule with its name and summary.",
                           allow_abbrev=False)
    for command in (check, explain, rules):  # an unknown option is reported with its command's usage
        command.set_defaults(command_parser=command)
    return parser


#: objects allocated between two collections of the youngest generation during ``check``
GC_THRESHOLD = 100_000


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        argv = list(argv) if argv is not None else sys.argv[1:]
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            # an option before the command belongs to the top level (`padlint --bogus check`)
            first = argv.index(args.command) if getattr(args, "command", None) in argv else len(argv)
            owner = parser if any(u in argv[:first] for u in unknown) else getattr(args, "command_parser", parser)
            owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as e:  # --help, --version, usage errors
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
    debug = bool(getattr(args, "show_traceback", False)) or os.environ.get("PADLINT_DEBUG", "") not in ("", "0")
    try:
        if args.command == "check":
            # the analysis keeps millions of small objects alive (summaries, heaps, views): with
            # CPython's default thresholds about a quarter of a whole-tree run went to collecting
            # them again and again (docs/performance.md).  Fewer collections, as mypy does; the
            # process's own thresholds come back after the run (main may run in a test process)
            before = gc.get_threshold()
            gc.set_threshold(GC_THRESHOLD, 20, 20)
            try:
                return _check(args, debug)
            finally:
                gc.set_threshold(*before)
        if args.command == "explain":
            return _explain(args.code)
        if args.command == "rules":
            return _rules()
        parser.print_help(sys.stderr)
        return 2
    except UsageError as e:
        print(f"padlint: error: {e}", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(f"padlint: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("padlint: interrupted", file=sys.stderr)
        _exit_now_if_threads(130)
        return 130
    except BrokenPipeError:
        # the reader went away (`padlint check | head`): stop quietly, and keep
        # the interpreter from complaining when it flushes stdout at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        if debug:
            traceback.print_exc(file=sys.stderr)
        print(f"padlint: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


def _exit_now_if_threads(code: int) -> None:
    """Leave at once where a parse thread (``padlint.parse.with_big_stack``) still runs native
    code: interpreter shutdown would wait for it or abort (SIGABRT) instead of exiting ``code``.
    Every file write is atomic, so nothing is left half-written."""
    import threading

    # not Thread.is_alive(): on Python 3.11 a join() interrupted by Ctrl-C marks a running thread stopped
    if any(t is not threading.main_thread() for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


# -- check ----------------------------------------------------------------


def _split_codes(values: list[str], option: str) -> list[str]:
    """The code prefixes of repeated comma-separated ``option`` values; an empty item is an error."""
    items = []
    for value in values:
        pieces = [c.strip() for c in value.split(",")]
        if not any(pieces):
            raise UsageError(f"{option}: empty rule selector list {value!r} (expected comma-separated code "
                             f"prefixes such as PAD, PAD0, PAD001)")
        if not all(pieces):
            raise UsageError(f"{option}: empty rule selector in {value!r} (expected comma-separated code "
                             f"prefixes such as PAD, PAD0, PAD001)")
        items.extend(pieces)
    return parse_selectors(items, option)


def _check(args: argparse.Namespace, debug: bool) -> int:
    from padlint.pipeline import RunOptions, run

    if args.jobs < 0:
        raise UsageError(f"--jobs: expected a number of worker processes >= 0 (0: one per CPU), got {args.jobs}")
    if args.statistics and args.format in ("sarif", "json-lines", "gitlab", "junit"):
        raise UsageError(f"--statistics cannot be used with --format {args.format} (statistics are printed as "
                         f"text, or as JSON with --format json)")
    started = time.perf_counter()
    cwd = Path.cwd()
    for option in ("config", "baseline"):
        _refuse_non_regular(getattr(args, option), f"--{option}")
    stdin = None if args.show_files or args.show_settings else _stdin_input(args)
    paths = args.paths or ["."]
    _refuse_output_over_input(args.output_file, [p for p in paths if p != "-"]
                              + [p for p in (args.config, args.baseline) if p])
    config = resolve_config([args.stdin_filename or "."] if (stdin or args.stdin_filename) else paths, args.config)
    profile = config.build_profile(args.profile)
    cli_select = _split_codes(args.select, "--select") if args.select else None
    cli_extend = _split_codes(args.extend_select, "--extend-select")
    cli_ignore = _split_codes(args.ignore, "--ignore")
    selection = RuleSelection(((config.select, config.ignore, config.extend_select),
                               (None if cli_select is None else tuple(cli_select), tuple(cli_ignore),
                                tuple(cli_extend))))
    excludes = tuple(PathPattern(check_glob(g, "--exclude"), cwd) for g in args.exclude)
    options = RunOptions(profile=profile, config=config, selection=selection, excludes=excludes,
                         baseline=None if args.write_baseline else args.baseline, show_traceback=debug,
                         jobs=args.jobs if args.jobs > 0 else (os.cpu_count() or 1),
                         force_exclude=args.force_exclude,
                         respect_gitignore=_first(args.respect_gitignore, config.respect_gitignore, True),
                         max_file_size=_first(_cli_value(parse_size, args.max_file_size, "--max-file-size"),
                                              config.max_file_size, DEFAULT_MAX_FILE_SIZE),
                         file_timeout=_first(_cli_value(parse_seconds, args.file_timeout, "--file-timeout"),
                                             config.file_timeout, DEFAULT_FILE_TIMEOUT),
                         cache_dir=None if args.no_cache else str(cwd / (
                             args.cache_dir or os.environ.get("PADLINT_CACHE_DIR") or ".padlint_cache")))
    if args.show_settings:
        _emit(_settings_text(args, options, cwd), args.output_file)
        return 0
    if args.show_files:
        return _show_files(paths, options, cwd, args.output_file)
    if args.verbose:
        _say(f"configuration: {config.origin}")
        _say(f"profile: {profile.name} ({profile.source or 'built in'})")
    progress = None if args.quiet else _progress_bar()
    if progress is not None:
        options = dataclasses.replace(options, progress=progress)
    baseline_errors: tuple[type[Exception], ...] = ()
    if options.baseline:
        from padlint.baseline import BaselineError

        baseline_errors = (BaselineError,)
    try:
        output = run(paths, options, cwd, stdin=stdin)
    except baseline_errors as e:
        raise UsageError(str(e)) from None
    finally:
        if progress is not None:
            progress.close()
    if not args.quiet:
        for note in output.notes:
            print(f"padlint: warning: {note}", file=sys.stderr)
    result = output.result
    if args.verbose:
        _say(f"{result.files_checked} file{'s' if result.files_checked != 1 else ''} checked, "
             f"{len(result.errors)} error{'s' if len(result.errors) != 1 else ''}, "
             f"{len(result.findings)} finding{'s' if len(result.findings) != 1 else ''} "
             f"in {time.perf_counter() - started:.2f} s")

    if args.write_baseline:
        from padlint.baseline import BaselineError, write

        try:
            write(args.write_baseline, result.findings, cwd)
        except BaselineError as e:
            raise UsageError(str(e)) from None
        except OSError as e:
            raise UsageError(f"{args.write_baseline}: cannot write baseline: {e.strerror or e}") from None
        n = len(result.findings)
        print(f"padlint: wrote {n} finding{'s' if n != 1 else ''} to baseline {args.write_baseline}", file=sys.stderr)
        return 0

    footer = ""
    if stdin is not None and args.fix and not args.diff:
        return _fix_stdin(args, stdin, options, cwd, output, selection)
    if args.diff or args.fix:
        applied, diff_text, fix_errors, skipped_unsafe = _fixes(result, output.sources, args.unsafe_fixes,
                                                                 write=args.fix and not args.diff)
        result.errors.extend(fix_errors)
        if args.diff:
            _emit(diff_text, args.output_file)
            for e in result.errors:
                print(f"padlint: error: {e.path}{f':{e.line}' if e.line else ''}: {e.message}", file=sys.stderr)
            n = len(applied)
            print(f"padlint: {n} fix{'es' if n != 1 else ''} would be applied"
                  + (f"; {skipped_unsafe} more with --unsafe-fixes" if skipped_unsafe else ""), file=sys.stderr)
            return 0 if args.exit_zero or not (diff_text or result.errors) else 1
        written = [f for f in result.findings if id(f) in applied]
        result.findings = [f for f in result.findings if id(f) not in applied]
        if applied:
            # check again what was written: lines moved, and a fix is not taken on trust
            # the files written, and those of the findings fixed (a fix may live in another file)
            _recheck(output, sorted({f.fix.path for f in written if f.fix is not None} | {f.path for f in written}),
                     options, cwd)
        fixed, not_removed = _verify(written, result.findings)
        footer = _fixed_line(fixed, len(result.findings), not_removed, skipped_unsafe)
    footer = _footer(footer, _baselined_line(output))

    text = _render(args, output, result, selection, "" if args.quiet else footer)
    _emit(text, args.output_file)
    if args.exit_zero:
        return 0
    return 1 if result.findings or result.errors else 0


def _fixed_line(fixed: int, remaining: int, not_removed: int, skipped_unsafe: int) -> str:
    """The line after a ``--fix`` run: "Fixed M findings (K remaining)." and what was not fixed.
    ``fixed`` counts only findings whose fix was written and that the check after the write no
    longer reports (:func:`_verify`)."""
    line = f"Fixed {fixed} finding{'s' if fixed != 1 else ''} ({remaining} remaining)."
    if not_removed:
        line += (f" {not_removed} fix{'es' if not_removed != 1 else ''} written did not remove "
                 f"{'its' if not_removed == 1 else 'their'} finding.")
    if skipped_unsafe:
        line += f" {skipped_unsafe} unsafe fix{'es' if skipped_unsafe != 1 else ''} available with --unsafe-fixes."
    return line


def _baselined_line(output) -> str:
    """"N findings hidden by the baseline." when ``--baseline`` hid any, else ""."""
    n = sum(output.baselined.values())
    return f"{n} finding{'s' if n != 1 else ''} hidden by the baseline." if n else ""


def _footer(*lines: str) -> str:
    """The non-empty ``lines``, one per line (no trailing newline)."""
    return "\n".join(line for line in lines if line)


def _first(*values):
    """The first value that is not None."""
    return next(v for v in values if v is not None)


def _cli_value(parse, value: str | None, option: str):
    if value is None:
        return None
    try:
        return parse(value, option)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _refuse_output_over_input(output: str | None, inputs: list[str]) -> None:
    """``-o`` naming a file the run reads (a path checked, a Python file under a directory checked,
    the configuration or baseline) would replace the user's file with the report: refuse it."""
    if not output:
        return
    out = Path(output).resolve()
    for p in inputs:
        here = Path(p).resolve()
        if out == here or (here.is_dir() and out.suffix in (".py", ".pyi") and here in out.parents):
            raise UsageError(f"--output-file: {output}: is an input of this run ({p}); "
                             f"writing the report there would replace it")


def _refuse_non_regular(path: str | None, option: str) -> None:
    """A FIFO or device as --config/--baseline would block or read without end: refuse it (a missing
    file is left to the reader, which says so)."""
    if not path:
        return
    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{option}: {path}: not a regular file")


def _say(message: str) -> None:
    print(f"padlint: {message}", file=sys.stderr)


def _settings_text(args: argparse.Namespace, options, cwd: Path) -> str:
    """``--show-settings``: what this run would use, one ``key = value`` line each (TOML-like)."""
    import json

    config = options.config
    excludes = [p.pattern for p in config.exclude_patterns()] + [p.pattern for p in options.excludes]
    rows = [
        ("configuration", config.origin),
        ("root", str(config.root)),
        ("profile", options.profile.name),
        ("profile-source", options.profile.source or "built in"),
        ("enabled-rules", [c for c in known_codes() if options.selection.enabled(c)]),
        ("exclude", excludes),
        ("per-file-ignores", {g: list(codes) for g, codes in config.per_file_ignores}),
        ("force-exclude", options.force_exclude),
        ("respect-gitignore", options.respect_gitignore),
        ("max-file-size", options.max_file_size),
        ("file-timeout", options.file_timeout),
        ("baseline", options.baseline or ""),
        ("jobs", options.jobs),
        ("format", args.format),
    ]
    return "".join(f"{key} = {json.dumps(value, ensure_ascii=False)}\n" for key, value in rows)


def _show_files(paths: list[str], options, cwd: Path, output_file: str | None) -> int:
    """``--show-files``: the files a run would read, sorted, one per line; path errors on stderr."""
    from padlint.discover import discover

    found = discover(paths, [*options.config.exclude_patterns(), *options.excludes], cwd,
                     force_exclude=options.force_exclude, respect_gitignore=options.respect_gitignore)
    _emit("".join(f + "\n" for f in sorted(found.files)), output_file)
    for e in found.errors:
        print(f"padlint: error: {e.path}: {e.message}", file=sys.stderr)
    return 1 if found.errors else 0


class _ProgressBar:
    """A rich progress bar on stderr, shown only once a run has taken :attr:`delay` seconds.

    Called by the pipeline as ``bar(stage, done, total)``; :meth:`close`
    removes it (transient), so the report below starts on a clean line.
    """

    def __init__(self, console, delay: float = 1.0, clock=time.monotonic):
        self.console = console
        self.delay = delay
        self.clock = clock
        self.start = clock()
        self.progress = None
        self.tasks: dict[str, object] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.progress is None:
            if done >= total or self.clock() - self.start < self.delay:
                return
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(TextColumn("padlint: {task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=self.console, transient=True)
            self.progress.start()
        label = {"read": "reading files", "analyse": "analysing"}.get(stage, stage)
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(label, total=total)
        self.progress.update(self.tasks[stage], completed=done, total=total)

    def close(self) -> None:
        """Remove the bar for good (a second run, after ``--fix`` writes, shows none)."""
        self.delay = float("inf")
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _progress_bar() -> _ProgressBar | None:
    """A progress bar when stderr is a terminal (rich's detection: TERM=dumb and non-ttys get none)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal or console.is_dumb_terminal:
        return None
    return _ProgressBar(console)


def _stdin_input(args: argparse.Namespace) -> tuple[str | None, bytes] | None:
    """(name, bytes) of standard input when the run reads it (path ``-`` or ``--stdin-filename``), else None."""
    if "-" not in args.paths and args.stdin_filename is None:
        return None
    if any(p != "-" for p in args.paths):
        what = "-" if "-" in args.paths else "--stdin-filename"
        raise UsageError(f"{what} reads one file from standard input; it cannot be combined with other paths "
                         f"({', '.join(p for p in args.paths if p != '-')})")
    if args.stdin_filename is not None and not args.stdin_filename.strip():
        raise UsageError("--stdin-filename: expected a path, got an empty string")
    if sys.stdin is None or getattr(sys.stdin, "closed", False):
        raise UsageError("cannot read standard input: it is closed")
    try:
        data = sys.stdin.buffer.read()
    except (OSError, AttributeError, ValueError) as e:
        raise UsageError(f"cannot read standard input: {e}") from None
    return args.stdin_filename, data


def _fix_stdin(args: argparse.Namespace, stdin: tuple[str | None, bytes], options, cwd: Path, output,
               selection: RuleSelection) -> int:
    """``--fix`` on standard input, as ruff does: the fixed source (or the input
    unchanged) goes to standard output, the report of what remains to stderr
    (or to ``--output-file``)."""
    from padlint.pipeline import run

    name = os.path.normpath(stdin[0]) if stdin[0] is not None else "-"
    source = output.sources.get(name)
    fixed: dict[str, str] = {}
    _, _, fix_errors, skipped_unsafe = _fixes(output.result, output.sources, args.unsafe_fixes,
                                              write=False, fixed=fixed)
    data = stdin[1]
    written = [f for f in output.result.findings if f.fix is not None and f.fix.path == name
               and (f.fix.safe or args.unsafe_fixes)]
    if source is not None and name in fixed:
        try:
            data = fixed[name].encode(source.encoding)
        except UnicodeEncodeError as e:
            fix_errors.append(FileError(name, None, f"fix not applied: cannot encode as {source.encoding}: "
                                                    f"{e.reason}"))
        else:
            output = run([], options, cwd, stdin=(stdin[0], data))  # check again what is printed
    result = output.result
    result.errors.extend(fix_errors)
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    fixed_n, not_removed = _verify(written, result.findings) if data is not stdin[1] else (0, 0)
    footer = _footer(_fixed_line(fixed_n, len(result.findings), not_removed, skipped_unsafe), _baselined_line(output))
    _emit(_render(args, output, result, selection, "" if args.quiet else footer), args.output_file, sys.stderr)
    if args.exit_zero:
        return 0
    return 1 if result.findings or result.errors else 0


def _render(args: argparse.Namespace, output, result: CheckResult, selection: RuleSelection, footer: str) -> str:
    fmt = args.format
    if fmt == "text" or (args.statistics and fmt in ("concise", "github")):
        # --statistics prints the same text for every text-like format (as ruff does)
        from padlint.reporters import text

        return text.render(result, output.sources, color=_use_color(args), statistics=args.statistics,
                           policies=output.policies, rule_name=_rule_namer(), footer=footer,
                           summary_line=not getattr(args, "quiet", False))
    if fmt == "json":
        from padlint.reporters import json_

        if args.statistics:
            return json_.render_statistics(result, output.policies)
        return json_.render(result)
    try:
        if fmt == "concise":
            from padlint.reporters import concise

            # no summary line; the footer (fixes made, findings the baseline hid) as the text format prints it
            return _nl(concise.render(result)) + _nl(footer)
        if fmt == "github":
            from padlint.reporters import github

            return _nl(github.render(result))
        if fmt == "json-lines":
            from padlint.reporters import json_lines

            return json_lines.render(result)
        if fmt == "gitlab":
            from padlint.reporters import gitlab

            return gitlab.render(result)
        if fmt == "junit":
            from padlint.reporters import junit

            return junit.render(result)
        from padlint.reporters import sarif

        return _nl(sarif.render(result, rules=_sarif_rules(result, selection)))
    except ImportError as e:
        raise UsageError(f"--format {fmt} is not available: {e}") from None


def _nl(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _use_color(args: argparse.Namespace) -> bool:
    """Colour only on a terminal, never with --no-color, --output-file or NO_COLOR (rich's detection)."""
    if args.no_color or args.output_file:
        return False
    from rich.console import Console

    probe = Console(file=sys.stdout)
    return probe.is_terminal and probe.color_system is not None and not probe.no_color


def _rule_namer():
    try:
        from padlint.rules_doc import list_rules

        names = {code: name for code, name, _ in list_rules()}
    except Exception:  # noqa: BLE001 - names are decoration only
        names = {}
    return lambda code: names.get(code, "")


def _sarif_rules(result: CheckResult, selection: RuleSelection) -> list[str]:
    return sorted({c for c in known_codes() if selection.enabled(c)} | {f.code for f in result.findings})


def _emit(text: str, output_file: str | None, stream: TextIO | None = None) -> None:
    if output_file:
        try:
            Path(output_file).write_text(text, encoding="utf-8")
        except OSError as e:
            raise UsageError(f"{output_file}: cannot write output: {e.strerror or e}") from None
        return
    stream = stream or sys.stdout
    try:
        stream.write(text)
    except UnicodeEncodeError:  # e.g. PYTHONIOENCODING=ascii: escape rather than fail
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()


# -- fixes ----------------------------------------------------------------


def _fixes(result: CheckResult, sources: dict[str, SourceFile], unsafe: bool, *, write: bool,
           fixed: dict[str, str] | None = None) -> tuple[set[int], str, list[FileError], int]:
    """Apply (or only diff) the fixes of ``result``'s findings, file by file.

    Returns (ids of findings whose fix was applied, unified diff text, errors,
    number of findings whose unsafe fix was skipped).  A file is written only
    when ``write``, atomically, re-encoded with its own encoding, and only if
    its bytes are unchanged since they were read.  ``fixed``, when given,
    receives the new text of every file a fix changes.
    """
    from padlint.fix import FixError, apply_fixes

    by_path: dict[str, list[Finding]] = defaultdict(list)
    skipped = 0
    for f in result.findings:
        if f.fix is None:
            continue
        if not (f.fix.safe or unsafe):
            skipped += 1
            continue
        by_path[f.fix.path].append(f)
    applied: set[int] = set()
    diffs: list[str] = []
    errors: list[FileError] = []
    for path in sorted(by_path):
        findings = by_path[path]
        source = sources.get(path) or read_source(path)
        if isinstance(source, FileError):
            errors.append(FileError(path, source.line, f"fix not applied: {source.message}"))
            continue
        fixes: list[Fix] = list(dict.fromkeys(f.fix for f in findings))
        try:
            new_text = apply_fixes(source.text, fixes)
        except FixError as e:
            errors.append(FileError(path, None, f"fix not applied: {e}"))
            continue
        except Exception as e:  # noqa: BLE001 - one file's fixes must not stop the run
            errors.append(FileError(path, None, f"fix not applied: {_one_line(e)}"))
            continue
        if new_text == source.text:
            continue
        diffs.append(_unified_diff(path, source.text, new_text))
        if fixed is not None:
            fixed[path] = new_text
        if write:
            error = _write_fixed(source, new_text)
            if error:
                errors.append(error)
                continue
        applied.update(id(f) for f in findings)
    return applied, "".join(diffs), errors, skipped


def _recheck(output, changed: list[str], options, cwd: Path) -> None:
    """Check the ``changed`` files again and put what they report now into ``output`` (in place),
    in place of what they reported before.  The other files did not change: their findings,
    errors and counts stand (a tree of thousands of files is not checked twice for one fix)."""
    from padlint.pipeline import run

    again = run(changed, options, cwd)
    gone = set(changed)
    result = output.result
    result.findings = [f for f in result.findings if f.path not in gone] + again.result.findings
    result.findings.sort(key=Finding.sort_key)
    result.errors = result.errors + [e for e in again.result.errors if e not in result.errors]
    result.errors.sort(key=FileError.sort_key)
    output.sources.update(again.sources)
    output.policies = [(p, n) for p, n in output.policies if p.path not in gone] + again.policies
    output.baselined = {**{p: n for p, n in output.baselined.items() if p not in gone}, **again.baselined}


def _finding_key(f: Finding) -> tuple[str, ...]:
    """What identifies a finding across a rewrite that moves lines (as in baseline fingerprints)."""
    return (os.path.normpath(f.path), f.code, f.sink, f.field, f.function, f.buffer, str(f.dummy_run))


def _verify(written: list[Finding], after: list[Finding]) -> tuple[int, int]:
    """(findings whose fix was written and that the check after the write no longer reports,
    findings whose fix was written and that are still reported)."""
    left = Counter(_finding_key(f) for f in after)
    fixed = still = 0
    for f in written:
        key = _finding_key(f)
        if left[key] > 0:
            left[key] -= 1
            still += 1
        else:
            fixed += 1
    return fixed, still


def _one_line(e: BaseException, limit: int = 200) -> str:
    """``Type: message`` of an unexpected error, first line only, at most ``limit`` characters
    (an exception can carry the repr of a whole syntax tree)."""
    text = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _unified_diff(path: str, old: str, new: str) -> str:
    lines = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=f"a/{path}", tofile=f"b/{path}"):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _write_fixed(source: SourceFile, new_text: str) -> FileError | None:
    from padlint.fix import FileChangedError, FixError, write_fixed

    try:
        write_fixed(source, new_text)
    except UnicodeEncodeError as e:
        return FileError(source.path, None, f"fix not applied: cannot encode as {source.encoding}: {e.reason}")
    except FileChangedError:
        return FileError(source.path, None, "fix not applied: the file changed during the run")
    except FixError as e:  # read-only, replaced by a link or another file, owner cannot be kept
        message = str(e).removeprefix(f"{source.path}: ")
        return FileError(source.path, None, f"fix not applied: {message}")
    except OSError as e:
        return FileError(source.path, None, f"fix not applied: cannot write: {e.strerror or e}")
    return None


# -- explain / rules ----------------------------------------------------------


def _explain(code: str) -> int:
    try:
        from padlint.rules_doc import explain
    except ImportError as e:
        raise UsageError(f"rule documentation is not available: {e}") from None
    try:
        text = explain(code.strip().upper())
    except (KeyError, ValueError, LookupError) as e:
        msg = e.args[0] if e.args and isinstance(e.args[0], str) else f"unknown rule code {code!r}"
        raise UsageError(msg) from None
    _emit(_nl(text), None)
    return 0


def _rules() -> int:
    try:
        from padlint.rules_doc import list_rules
    except ImportError as e:
        raise UsageError(f"rule documentation is not available: {e}") from None
    rows = list_rules()
    width = max((len(name) for _, name, _ in rows), default=0)
    _emit("".join(f"{code}  {name:<{width}}  {summary}\n" for code, name, summary in rows), None)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
