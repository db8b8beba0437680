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
            if (checker.mode == "strict" and isinstance(exc, pytest.skip.Exception)
                    and len(checker.stats.violations) > before):  # swallowed, then skipped: still a failure
                from padlint.runtime.errors import format_violations

                found = checker.stats.violations[before:]
                pytest.fail(f"padlint runtime: strict mode: {len(found)} violation(s) during this test, which "
                            f"was then skipped\n{format_violations(found)}", pytrace=False)
            raise
        checker.label = item.nodeid
        checker.flush()  # deferred device results of this phase; strict mode raises here
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
        if inst.poison is not None:
            lines.extend(inst.poison.summary_lines())  # poison paths not found, buffers not poisoned
    return lines


def _outside_phases(config: pytest.Config, checker: Any) -> list:
    seen = config.stash.get(_IN_PHASES, set())
    return [v for v in checker.stats.violations if id(v) not in seen]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    checker = config.stash.get(_CHECKER, None)
    if checker is None:
        return
    try:
        checker.flush()
    except AssertionError:
        pass  # already tallied; listed below
    stats = checker.stats
    if checker.mode == "record" and stats.violations:
        terminalreporter.section("padlint runtime: stale padding rows")
        for v in stats.violations:
            terminalreporter.write_line(v.format())
    outside = _outside_phases(config, checker)
    if checker.mode == "strict" and outside:
        terminalreporter.section("padlint runtime: stale padding rows outside any test")
        terminalreporter.write_line(f"padlint runtime: strict mode: {len(outside)} violation(s) found outside "
                                    f"every test's setup, call and teardown (they fail the session)")
        for v in outside:
            terminalreporter.write_line(v.format())
    for line in _warnings(config):
        terminalreporter.write_line(line)
    terminalreporter.write_line(stats.line())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    checker = session.config.stash.get(_CHECKER, None)
    if checker is None:
        return
    try:
        checker.flush()  # deferred device results still pending at the end of the run
    except AssertionError:
        pass  # tallied in stats.violations
    # record mode: violations fail the session; strict mode: so does a violation found outside
    # every test phase (e.g. a deferred result read only now), which failed no test
    if exitstatus == 0 and (checker.mode == "record" and checker.stats.violations
                            or checker.mode == "strict" and _outside_phases(session.config, checker)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_OWNED, False):
        from padlint.runtime import hooks

        try:
            hooks.uninstall()
        except AssertionError:
            pass
        config.stash[_OWNED] = False
