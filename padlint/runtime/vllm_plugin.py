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
* ``PADLINT_POISON``: "1" to enable poison mode.

Hooks are installed lazily (patched when vLLM imports the runner), and
in record mode the tally and violations are printed to stderr at exit.
"""

from __future__ import annotations

import os
import sys


def register() -> None:
    """Install the runtime hooks when ``PADLINT_RUNTIME`` asks for it; idempotent.

    Raises ValueError for an unknown mode (a typo should not silently turn checking off),
    before torch is imported.
    """
    from padlint.runtime.modes import parse_mode  # no torch

    mode = parse_mode(os.environ.get("PADLINT_RUNTIME"))
    if mode == "off":
        return
    from padlint.runtime import hooks  # imports torch

    if hooks.installed() is not None:
        return
    checker = hooks.install(os.environ.get("PADLINT_PROFILE", "vllm"), mode=mode,
                            cuda_policy=os.environ.get("PADLINT_CUDA_POLICY", "deferred"),
                            lazy=True, poison=os.environ.get("PADLINT_POISON", "") == "1")
    import atexit

    def _report() -> None:
        try:
            checker.flush()
        except AssertionError as e:  # strict mode: a deferred device violation found at exit
            print(f"[padlint pid {os.getpid()}] {e}", file=sys.stderr)
        print(f"[padlint pid {os.getpid()}] {checker.stats.line()}", file=sys.stderr)
        if checker.mode == "record":
            for v in checker.stats.violations:
                print(v.format(), file=sys.stderr)

    atexit.register(_report)
