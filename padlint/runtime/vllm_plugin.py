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
        for u in hooks.unresolved_targets(inst):
            table = {"provider": "runtime.provider", "class": "runtime.classes", "step": "runtime.step"}[u.kind]
            print(f"{_prefix()} {u.line(f'profile {profile!r} {table}')}", file=sys.stderr)
        print(f"{_prefix()} {checker.stats.line()}", file=sys.stderr)
        if checker.mode == "record":
            for v in checker.stats.violations:
                print(v.format(), file=sys.stderr)

    atexit.register(_report)
