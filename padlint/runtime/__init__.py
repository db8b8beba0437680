"""Runtime checker: padding rows of real tensors, checked when metadata is built.

Needs torch (``pip install padlint[runtime]``).  Importing this package
imports neither torch nor patches anything: names are loaded on first use,
and hooks exist only between :func:`install` and :func:`uninstall`.

    import padlint.runtime as pr
    pr.install("vllm", mode="strict")        # hooks the provider and metadata classes
    ...                                        # run the engine / the tests
    pr.uninstall()

    pr.check_padding(seq_lens, num_reqs, 0, name="seq_lens")   # explicit API
    pr.check_metadata(meta, num_reqs=(3, 4), num_tokens=(9, 16))

See docs/runtime.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "install": "padlint.runtime.hooks",
    "uninstall": "padlint.runtime.hooks",
    "installed": "padlint.runtime.hooks",
    "current_checker": "padlint.runtime.hooks",
    "check_padding": "padlint.runtime.api",
    "check_metadata": "padlint.runtime.api",
    "summary": "padlint.runtime.api",
    "register_poison_buffer": "padlint.runtime.api",
    "poison_padding": "padlint.runtime.api",
    "Checker": "padlint.runtime.checker",
    "Stats": "padlint.runtime.checker",
    "parse_mode": "padlint.runtime.modes",
    "StalePaddingError": "padlint.runtime.errors",
    "Violation": "padlint.runtime.errors",
    "runtime_spec": "padlint.runtime.spec",
    "RuntimeSpec": "padlint.runtime.spec",
    "FLAT": "padlint.runtime.spec",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'padlint.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
