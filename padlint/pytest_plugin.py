"""pytest plugin (registered through the ``pytest11`` entry point): runtime assert mode in test runs.

Loaded by every pytest run in an environment where padlint is installed,
so it is inert and cheap when off: it imports only ``os``, ``re``, ``pytest`` and
the torch-free :mod:`padlint.runtime.modes` until checking is enabled, and then installs the hooks of
:mod:`padlint.runtime` once per session.

Enable (first one set wins):

* ``--padlint-runtime=strict|record|off``
* ``PADLINT_RUNTIME=strict|record|off``
* ini option ``padlint_runtime = strict``

("0" and "false" also mean off; any other value is a usage error.)

Other ini options: ``padlint_profile`` (default "vllm"; a relative TOML
path is relative to the ini file's directory), ``padlint_cuda_policy``
("deferred", "sync", "skip"), ``padlint_provider`` and ``padlint_classes``
(override the profile's provider and metadata classes,
``module:Qualified.name``, for a project's own runner; classes separated by
newlines, commas or blanks).  A bad value of any of them is a usage error
naming the option.

``@pytest.mark.padlint_off`` opts one test out: no checks in any thread
during its setup, call and teardown.  Strict mode fails the test whose
step built the metadata (deferred device results are read at the end of
each phase, also when it raised: then they are added as a note to its
error, so they are never raised in a later test), and also a test that
passed although violations were tallied during it (the code under test
caught the :class:`StalePaddingError`).  Record mode lets every test run,
lists the violations in the terminal summary and makes the session fail
(in strict mode, so does a violation found outside every test's phases).
The summary line reads "padlint runtime: N objects checked, N fields
checked, N skipped during capture, N violations", preceded by a warning
for each target that hooked nothing (its module was never imported, or
it names no attribute there) and, when hooks installed before the plugin
(a conftest's ``install()``) were used with another mode than the one
asked for, a warning saying so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from padlint.runtime.modes import parse_mode, parse_switch

_CHECKER = pytest.StashKey[Any]()
_OWNED = pytest.StashKey[bool]()
_SOURCES = pytest.StashKey[dict]()  # kind of target ("provider", "class", "step") -> where it came from
_NOTES = pytest.StashKey[list]()  # warning lines for the terminal summary
_IN_PHASES = pytest.StashKey[set]()  # ids of the violations tallied during checked test phases
_REPORTS = pytest.StashKey[Any]()  # worker reports: (ReportReader, directory, saved environment)
_WORKER_V = pytest.StashKey[list]()  # violation records from engine workers, with "test" (the phase's test or "")
_WORKER_S = pytest.StashKey[list]()  # summary records from engine workers
_ERRORS = pytest.StashKey[list]()  # error lines for the terminal summary (they fail the session)

_TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("padlint", "padlint runtime checker (stale CUDA-graph padding rows)")
    group.addoption("--padlint-runtime", dest="padlint_runtime", default=None, metavar="strict|record|off",
                    help="check padding rows of metadata objects as they are built "
                         "(default: $PADLINT_RUNTIME, else the padlint_runtime ini option, else off; "
                         "0 and false also mean off)")
    parser.addini("padlint_runtime", "padlint runtime mode: strict, record or off", default="off")
    parser.addini("padlint_profile", "padlint engine profile name or TOML path (relative to the ini file)",
                  default="vllm")
    parser.addini("padlint_cuda_policy", "deferred (no host sync), sync (one per object) or skip",
                  default="deferred")
    group.addoption("--padlint-poison", dest="padlint_poison", action="store_true", default=None,
                    help="poison mode: after each step, fill the padding rows of the profile's source buffers with "
                         "a sentinel, so that a missing reset changes test outputs (default: $PADLINT_POISON, "
                         "else the padlint_poison ini option)")
    parser.addini("padlint_poison", "poison mode: true/false (see --padlint-poison)", default="")
    parser.addini("padlint_provider", "override the profile's provider (module:Class.method)", default="")
    parser.addini("padlint_step", "override the profile's step function for poison mode (module:Class.method)",
                  default="")
    group.addoption("--padlint-fail-unknown-fields", dest="padlint_fail_unknown_fields", action="store_true",
                    default=None, help="fail the session when a hooked metadata class has tensor fields the profile "
                                       "neither checks nor exempts (default: $PADLINT_FAIL_UNKNOWN_FIELDS, else the "
                                       "padlint_fail_unknown_fields ini option)")
    parser.addini("padlint_fail_unknown_fields", "fail on tensor fields the profile does not know: true/false",
                  default="")
    parser.addini("padlint_classes", "override the profile's metadata classes (module:Class; separated by "
                  "newlines, commas or blanks)", type="linelist", default=[])


def _mode(config: pytest.Config) -> tuple[str, str]:
    """(mode, where it was set) -- the first of option, environment, ini that is set."""
    for value, where in ((config.getoption("padlint_runtime"), "--padlint-runtime"),
                         (os.environ.get("PADLINT_RUNTIME"), "PADLINT_RUNTIME"),
                         (config.getini("padlint_runtime"), "padlint_runtime")):
        if value is not None and str(value).strip():
            try:
                return parse_mode(value), where
            except ValueError as e:
                raise pytest.UsageError(f"{where}: {e}") from None
    return "off", ""


def _poison(config: pytest.Config) -> bool:
    """Poison mode: --padlint-poison, else PADLINT_POISON, else the padlint_poison ini option."""
    if config.getoption("padlint_poison"):
        return True
    for value, where in ((os.environ.get("PADLINT_POISON"), "PADLINT_POISON"),
                         (config.getini("padlint_poison"), "padlint_poison")):
        if value is not None and str(value).strip():
            try:
                return parse_switch(value, where)
            except ValueError as e:  # the ini key reads `key = 'value': ...`, as the other options do
                text = str(e) if where.isupper() else f"{where} = {value!r}: {str(e).split(': ', 1)[1]}"
                raise pytest.UsageError(text) from None
    return False


def _target(key: str, text: str) -> str:
    if not _TARGET.fullmatch(text):
        raise pytest.UsageError(f"{key} = {text!r}: expected 'module:Qualified.name' "
                                f"(e.g. mypkg.runner:Runner._build_attention_metadata)")
    return text


def _profile(config: pytest.Config) -> str:
    """The padlint_profile value; a TOML path relative to the ini file's directory (else the rootdir)."""
    value = str(config.getini("padlint_profile") or "vllm").strip()
    if not (value.endswith(".toml") or "/" in value or os.sep in value):
        return value  # a profile name
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    path = (base / Path(value).expanduser()).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"padlint_profile = {value!r}: no such file {path}")
    return str(path)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "padlint_off: do not run padlint's runtime padding checks in this test "
                                       "(setup, call and teardown, in every thread)")
    mode, where = _mode(config)
    poison = _poison(config)
    if mode == "off":
        if poison:  # poison mode works through the runtime hooks: on its own it does nothing
            config.issue_config_time_warning(pytest.PytestConfigWarning(
                "padlint: poison mode was asked for, but the runtime mode is off: nothing is poisoned "
                "(add --padlint-runtime=record or strict)"), stacklevel=2)
        return
    try:
        _fail_unknown_fields(config)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    try:
        from padlint.runtime import hooks  # imports torch: only now that checking is on
    except ImportError as e:
        raise pytest.UsageError(f"padlint runtime mode {mode!r} needs torch and numpy "
                                f"(pip install 'padlint[runtime]'): {e}") from None

    config.stash[_NOTES] = []
    existing = hooks.checker()
    if existing is not None:  # e.g. installed by a conftest, or by the engine plugin in this process
        config.stash[_CHECKER] = existing
        config.stash[_OWNED] = False
        config.stash[_SOURCES] = {}
        if existing.mode != mode:
            config.stash[_NOTES].append(
                f"padlint runtime: warning: hooks were already installed (padlint.runtime.install() before the "
                f"plugin, e.g. in a conftest) with mode {existing.mode!r}; that mode was used, "
                f"not {where}={mode!r}")
        _start_reports(config, {"PADLINT_RUNTIME": existing.mode})
        return

    from padlint.runtime.checker import CUDA_POLICIES
    from padlint.runtime.spec import runtime_spec

    policy = str(config.getini("padlint_cuda_policy") or "deferred").strip().lower()
    if policy not in CUDA_POLICIES:
        raise pytest.UsageError(f"padlint_cuda_policy = {config.getini('padlint_cuda_policy')!r}: "
                                f"expected one of {', '.join(CUDA_POLICIES)}")
    raw_profile = str(config.getini("padlint_profile") or "vllm").strip()
    profile = _profile(config)
    kw: dict[str, Any] = {}
    sources = {"provider": f"profile {raw_profile!r} runtime.provider",
               "class": f"profile {raw_profile!r} runtime.classes",
               "step": f"profile {raw_profile!r} runtime.step"}
    provider = str(config.getini("padlint_provider") or "").strip()
    if provider:
        kw["provider"] = _target("padlint_provider", provider)
        sources["provider"] = "padlint_provider"
    step = str(config.getini("padlint_step") or "").strip()
    if step:
        kw["step"] = _target("padlint_step", step)
        sources["step"] = "padlint_step"
    classes = [t for line in config.getini("padlint_classes") for t in re.split(r"[,\s]+", line) if t]
    if classes:
        kw["classes"] = [_target("padlint_classes", t) for t in classes]
        sources["class"] = "padlint_classes"
    try:
        spec = runtime_spec(profile, **kw)
    except ValueError as e:  # ProfileError: unknown name, unreadable or malformed file
        raise pytest.UsageError(f"padlint_profile = {raw_profile!r}: {e}") from None
    try:
        config.stash[_CHECKER] = hooks.install(spec=spec, mode=mode, cuda_policy=policy, lazy=True, poison=poison)
    except ValueError as e:  # nothing to hook: a profile without [runtime] tables
        raise pytest.UsageError(f"padlint_profile = {raw_profile!r}: {e}") from None
    config.stash[_OWNED] = True
    config.stash[_SOURCES] = sources
    _start_reports(config, {"PADLINT_RUNTIME": mode, "PADLINT_PROFILE": profile, "PADLINT_CUDA_POLICY": policy,
                            **({"PADLINT_POISON": "1"} if poison else {})})


def _start_reports(config: pytest.Config, env: dict[str, str]) -> None:
    """Engine worker processes started by the tests report here: a fresh directory named in
    ``PADLINT_REPORT_DIR``; the mode, profile, CUDA policy and poison switch are exported too
    (unless the environment sets them), so a worker's engine plugin checks as this session does."""
    import tempfile

    from padlint.runtime.reports import ENV, ReportReader

    directory = tempfile.mkdtemp(prefix="padlint-reports-")
    saved = {k: os.environ.get(k) for k in (ENV, *env)}
    os.environ[ENV] = directory
    for key, value in env.items():
        if not os.environ.get(key, "").strip():
            os.environ[key] = value
    config.stash[_REPORTS] = (ReportReader(directory), directory, saved)
    config.stash[_WORKER_V] = []
    config.stash[_WORKER_S] = []
    config.stash[_ERRORS] = []


def _read_workers(config: pytest.Config, test: str) -> list[dict]:
    """New violation records from engine workers (labelled with ``test``); summaries are kept."""
    rep = config.stash.get(_REPORTS, None)
    if rep is None:
        return []
    new = []
    for rec in rep[0].read_new():
        if rec.get("kind") == "violation":
            rec["test"] = test
            new.append(rec)
        elif rec.get("kind") == "summary":
            config.stash[_WORKER_S].append(rec)
    config.stash[_WORKER_V].extend(new)
    return new


def _worker_text(found: list[dict]) -> str:
    return "\n".join(f"[engine worker pid {r.get('pid')}] {r.get('text', '')}" for r in found)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Label the test's violations, from its setup on; ``padlint_off``: suspend every
    thread for its setup, call and teardown (pytest runs one test at a time)."""
    checker = item.config.stash.get(_CHECKER, None)
    if checker is None:
        return (yield)
    checker.label = item.nodeid
    if item.get_closest_marker("padlint_off") is not None:
        with checker.suspended(all_threads=True):
            return (yield)
    return (yield)


def _phase(item: pytest.Item) -> Any:
    """One phase (setup, call, teardown) of a checked test: deferred results are read
    at its end; in strict mode, violations tallied during it fail it even if the code
    under test caught the StalePaddingError."""
    checker = item.config.stash.get(_CHECKER, None)
    if checker is None or item.get_closest_marker("padlint_off") is not None:
        return (yield)
    checker.label = item.nodeid
    before = len(checker.stats.violations)
    try:
        try:
            result = yield
        except BaseException as exc:
            # The phase raised: its deferred device results still belong to it.  Read them now
            # (else the next test's flush would raise them); in strict mode a violation is
            # attached to this test's own failure, which stays the primary error.
            checker.label = item.nodeid
            try:
                checker.flush()
            except AssertionError as stale:  # StalePaddingError; already tallied in stats.violations
                if isinstance(exc, Exception):
                    exc.add_note(f"\n{stale}")
                elif isinstance(exc, pytest.skip.Exception):  # a skip must not hide stale rows
                    raise stale from exc
                # exit / KeyboardInterrupt: propagate; the violation stays in the tally
            workers = _read_workers(item.config, item.nodeid)
            if workers and checker.mode == "strict" and isinstance(exc, Exception):
                exc.add_note(f"\npadlint runtime: {len(workers)} violation(s) in engine worker processes:\n"
                             f"{_worker_text(workers)}")
            if (checker.mode == "strict" and isinstance(exc, pytest.skip.Exception)
                    and len(checker.stats.violations) > before):  # swallowed, then skipped: still a failure
                from padlint.runtime.errors import format_violations

                found = checker.stats.violations[before:]
                pytest.fail(f"padlint runtime: strict mode: {len(found)} violation(s) during this test, which "
                            f"was then skipped\n{format_violations(found)}", pytrace=False)
            raise
        checker.label = item.nodeid
        checker.flush()  # deferred device results of this phase; strict mode raises here
        workers = _read_workers(item.config, item.nodeid)
        if checker.mode == "strict" and workers:
            pytest.fail(f"padlint runtime: strict mode: {len(workers)} violation(s) in engine worker processes "
                        f"during this test\n{_worker_text(workers)}", pytrace=False)
        if checker.mode == "strict" and len(checker.stats.violations) > before:
            from padlint.runtime.errors import format_violations

            found = checker.stats.violations[before:]
            pytest.fail(f"padlint runtime: strict mode: {len(found)} violation(s) during this test, but the "
                        f"StalePaddingError did not reach pytest (caught by the code under test?)\n"
                        f"{format_violations(found)}", pytrace=False)
        return result
    finally:  # this phase's violations are its test's outcome (failed, or xfailed on purpose)
        item.config.stash.setdefault(_IN_PHASES, set()).update(map(id, checker.stats.violations[before:]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    return (yield from _phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    return (yield from _phase(item))


def _warnings(config: pytest.Config) -> list[str]:
    from padlint.runtime import hooks

    lines = list(config.stash.get(_NOTES, []))
    inst = hooks.installed()
    if inst is not None and inst.checker is config.stash.get(_CHECKER, None):
        sources = config.stash.get(_SOURCES, {})
        lines.extend(u.line(sources.get(u.kind, "padlint.runtime.install()"))
                     for u in hooks.unresolved_targets(inst))
        lines.extend(hooks.no_count_providers(inst))
        lines.extend(hooks.coverage_lines(inst))
        if inst.poison is not None:
            lines.extend(inst.poison.summary_lines())  # poison paths not found, buffers not poisoned
    return lines


def _outside_phases(config: pytest.Config, checker: Any) -> list:
    seen = config.stash.get(_IN_PHASES, set())
    return [v for v in checker.stats.violations if id(v) not in seen]


def _fail_unknown_fields(config: pytest.Config) -> bool:
    if config.getoption("padlint_fail_unknown_fields"):
        return True
    for value, where in ((os.environ.get("PADLINT_FAIL_UNKNOWN_FIELDS"), "PADLINT_FAIL_UNKNOWN_FIELDS"),
                         (config.getini("padlint_fail_unknown_fields"), "padlint_fail_unknown_fields")):
        if value is not None and str(value).strip():
            return parse_switch(value, where)
    return False


def _session_errors(config: pytest.Config, checker: Any) -> list[str]:
    """Lines that fail the session: strict mode with nothing hooked (here or in a worker), and
    tensor fields the profile does not know when padlint_fail_unknown_fields is on."""
    from padlint.runtime import hooks

    out = []
    inst = hooks.installed()
    summaries = config.stash.get(_WORKER_S, [])
    if (checker.mode == "strict" and config.stash.get(_OWNED, False) and inst is not None
            and inst.checker is checker and not hooks.hooked_anything(inst)
            and not any(s.get("hooked") for s in summaries)):
        out.append("padlint runtime: error: strict mode, but no provider or metadata class was hooked (here or in "
                   "an engine worker): nothing was checked (see the warnings above; padlint_profile, "
                   "padlint_provider, padlint_classes)")
    if _fail_unknown_fields(config) and inst is not None and inst.checker is checker:
        unknown = hooks.coverage_lines(inst) + [w for s in summaries for w in s.get("warnings", [])
                                                if "neither checks nor exempts" in w]
        if unknown:
            out.append(f"padlint runtime: error: {len(unknown)} metadata class(es) with tensor fields the profile "
                       f"does not know (padlint_fail_unknown_fields)")
    return out


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    checker = config.stash.get(_CHECKER, None)
    if checker is None:
        return
    try:
        checker.flush()
    except AssertionError:
        pass  # already tallied; listed below
    _read_workers(config, "")
    stats = checker.stats
    workers_v = config.stash.get(_WORKER_V, [])
    if checker.mode == "record" and (stats.violations or workers_v):
        terminalreporter.section("padlint runtime: stale padding rows")
        for v in stats.violations:
            terminalreporter.write_line(v.format())
        for r in workers_v:
            terminalreporter.write_line(_worker_text([r]) + (f"\n  during: {r['test']}" if r.get("test") else ""))
    outside = _outside_phases(config, checker)
    outside_workers = [r for r in workers_v if not r.get("test")]
    if checker.mode == "strict" and (outside or outside_workers):
        terminalreporter.section("padlint runtime: stale padding rows outside any test")
        terminalreporter.write_line(f"padlint runtime: strict mode: {len(outside) + len(outside_workers)} "
                                    f"violation(s) found outside every test's setup, call and teardown (they fail "
                                    f"the session)")
        for v in outside:
            terminalreporter.write_line(v.format())
        for r in outside_workers:
            terminalreporter.write_line(_worker_text([r]))
    for line in _warnings(config):
        terminalreporter.write_line(line)
    summaries = config.stash.get(_WORKER_S, [])
    for line in dict.fromkeys(w for s in summaries for w in s.get("warnings", [])):
        terminalreporter.write_line(f"[engine workers] {line}")
    for line in config.stash.get(_ERRORS, []):
        terminalreporter.write_line(line, red=True, bold=True)
    terminalreporter.write_line(stats.line())
    if stats.unfilled_line():
        terminalreporter.write_line(stats.unfilled_line())
    if summaries:
        objs = sum(s.get("stats", {}).get("objects_checked", 0) for s in summaries)
        flds = sum(s.get("stats", {}).get("fields_checked", 0) for s in summaries)
        terminalreporter.write_line(f"padlint runtime: engine workers: {len(summaries)} process(es) reported: "
                                    f"{objs} objects checked, {flds} fields checked, {len(workers_v)} violations")
    # pytest's closing line counts them too ("3 passed, 2 padlint violations in 0.50s"), so that a
    # session that fails only because of them does not read as all green
    n = len(stats.violations) + len(workers_v)
    if checker.mode == "record" and n:
        terminalreporter.stats.setdefault("padlint violation" + ("s" if n != 1 else ""), []).extend(
            list(stats.violations) + workers_v)
    elif checker.mode == "strict" and (outside or outside_workers):
        n = len(outside) + len(outside_workers)
        terminalreporter.stats.setdefault("padlint violation" + ("s" if n != 1 else "") + " outside tests", []).extend(
            list(outside) + outside_workers)
    errors = config.stash.get(_ERRORS, [])
    if errors:
        terminalreporter.stats.setdefault("padlint error" + ("s" if len(errors) != 1 else ""), []).extend(errors)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    checker = session.config.stash.get(_CHECKER, None)
    if checker is None:
        return
    try:
        checker.flush()  # deferred device results still pending at the end of the run
    except AssertionError:
        pass  # tallied in stats.violations
    config = session.config
    _read_workers(config, "")
    workers_v = config.stash.get(_WORKER_V, [])
    errors = _session_errors(config, checker)
    config.stash.setdefault(_ERRORS, []).extend(errors)
    # record mode: violations fail the session; strict mode: so does a violation found outside
    # every test phase (e.g. a deferred result read only now), which failed no test
    if exitstatus == 0 and (checker.mode == "record" and (checker.stats.violations or workers_v)
                            or checker.mode == "strict" and (_outside_phases(config, checker)
                                                              or any(not r.get("test") for r in workers_v))
                            or errors):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    rep = config.stash.get(_REPORTS, None)
    if rep is not None:
        import shutil

        for key, value in rep[2].items():  # the environment as it was
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(rep[1], ignore_errors=True)
        del config.stash[_REPORTS]
    if config.stash.get(_OWNED, False):
        from padlint.runtime import hooks

        try:
            hooks.uninstall()
        except AssertionError:
            pass
        config.stash[_OWNED] = False
