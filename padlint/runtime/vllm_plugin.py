"""vLLM ``vllm.general_plugins`` entry point: enables the runtime checker in worker processes.

vLLM calls every function registered in the ``vllm.general_plugins``
entry-point group in each of its processes (API server, engine core,
workers; see ``vllm.plugins.load_general_plugins``), possibly more than
once.  :func:`register` reads the environment, which worker processes
inherit:

* ``PADLINT_RUNTIME``: "strict" | "record" | "off" (unset, "off", "0" or "false":
  nothing happens, torch is not imported by padlint; parsed by
  :func:`padlint.runtime.modes.parse_mode`, as in the pytest plugin);
* ``PADLINT_PROFILE``: profile name or TOML path (default "vllm");
* ``PADLINT_CUDA_POLICY``: "deferred" (default) | "sync" | "skip";
* ``PADLINT_POISON``: "1", "true", "yes" or "on" (any case) enable poison
  mode; "0", "false", "no", "off" or empty leave it off.

A bad ``PADLINT_PROFILE``, ``PADLINT_CUDA_POLICY`` or ``PADLINT_POISON``
prints one line to stderr naming the variable and its value, and the
process runs unchecked (no traceback into the worker).

When ``PADLINT_REPORT_DIR`` is set (the pytest plugin sets it for the
processes a test run starts), each violation is also appended as a JSON
line to a file of that directory as soon as it is found, and the summary at
exit (see :mod:`padlint.runtime.reports`): the pytest session merges them.

Hooks are installed lazily (patched when vLLM imports the runner).  At
exit the tally is printed to stderr (in record mode with the violations),
with a warning for each target that hooked nothing (its module was never
imported, or the attribute it names does not exist).
"""

from __future__ import annotations

import os
import sys

_reported_error = False  # one error line per process, although vLLM may call register() again


def _prefix() -> str:
    return f"[padlint pid {os.getpid()}]"


def _error(var: str, value: str, why: str) -> None:
    global _reported_error
    if not _reported_error:
        _reported_error = True
        print(f"{_prefix()} padlint runtime: error: {var}={value!r}: {why}; runtime checks are off in this process",
              file=sys.stderr)


def register() -> None:
    """Install the runtime hooks when ``PADLINT_RUNTIME`` asks for it; idempotent.

    Raises ValueError for an unknown mode (a typo should not silently turn checking off),
    before torch is imported.  A bad ``PADLINT_PROFILE``, ``PADLINT_CUDA_POLICY`` or
    ``PADLINT_POISON`` raises nothing: one line on stderr, and nothing is installed.
    """
    from padlint.runtime.modes import parse_mode, parse_switch  # no torch

    mode = parse_mode(os.environ.get("PADLINT_RUNTIME"))
    if mode == "off":
        return
    poison_text = os.environ.get("PADLINT_POISON", "")
    try:
        poison = parse_switch(poison_text, "PADLINT_POISON")
    except ValueError as e:
        _error("PADLINT_POISON", poison_text, str(e).split(": ", 1)[1])
        return
    from padlint.runtime import hooks  # imports torch

    if hooks.installed() is not None:
        return
    from padlint.runtime.checker import CUDA_POLICIES
    from padlint.runtime.spec import runtime_spec

    policy_text = os.environ.get("PADLINT_CUDA_POLICY", "")
    policy = policy_text.strip().lower() or "deferred"
    if policy not in CUDA_POLICIES:
        _error("PADLINT_CUDA_POLICY", policy_text, f"expected one of {', '.join(CUDA_POLICIES)}")
        return
    profile = os.environ.get("PADLINT_PROFILE", "").strip() or "vllm"
    try:
        spec = runtime_spec(profile)
    except ValueError as e:  # ProfileError: unknown name, unreadable or malformed file
        _error("PADLINT_PROFILE", os.environ.get("PADLINT_PROFILE", ""), str(e))
        return
    try:
        checker = hooks.install(spec=spec, mode=mode, cuda_policy=policy, lazy=True, poison=poison)
    except Exception as e:  # noqa: BLE001 - e.g. a malformed target in the profile: never break the worker
        _error("PADLINT_PROFILE", profile, f"cannot install the hooks: {e}")
        return
    inst = hooks.installed()
    import atexit

    from padlint.runtime import reports

    writer = reports.ReportWriter(os.environ[reports.ENV]) if os.environ.get(reports.ENV) else None
    if writer is not None:  # the pytest session that started this process collects what it finds
        def _send(found: list) -> None:
            test = os.environ.get("PYTEST_CURRENT_TEST", "")
            for v in found:
                writer.write({**reports.violation_record(v), "test": test})
        checker.listeners.append(_send)

    def _report() -> None:
        try:
            checker.flush()
        except AssertionError as e:  # strict mode: a deferred device violation found at exit
            print(f"{_prefix()} {e}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - e.g. a CUDA error from an event: still print the summary
            print(f"{_prefix()} error: deferred device checks could not be read at exit: {type(e).__name__}: {e}",
                  file=sys.stderr)
        if inst.poison is not None:
            for line in inst.poison.summary_lines():
                print(f"{_prefix()} {line}", file=sys.stderr)
        warnings = []
        for u in hooks.unresolved_targets(inst):
            table = {"provider": "runtime.provider", "class": "runtime.classes", "step": "runtime.step"}[u.kind]
            warnings.append(u.line(f"profile {profile!r} {table}"))
        warnings += hooks.no_count_providers(inst) + hooks.coverage_lines(inst)
        for line in warnings:
            print(f"{_prefix()} {line}", file=sys.stderr)
        print(f"{_prefix()} {checker.stats.line()}", file=sys.stderr)
        if checker.stats.unfilled_line():
            print(f"{_prefix()} {checker.stats.unfilled_line()}", file=sys.stderr)
        if writer is not None:
            st = checker.stats
            writer.write({"kind": "summary", "pid": os.getpid(), "line": st.line(), "warnings": warnings,
                          "hooked": hooks.hooked_anything(inst),
                          "stats": {"objects_checked": st.objects_checked, "fields_checked": st.fields_checked,
                                    "violations": len(st.violations)}})
        if checker.mode == "record":
            for v in checker.stats.violations:
                print(v.format(), file=sys.stderr)

    atexit.register(_report)
