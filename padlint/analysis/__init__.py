"""The static analysis: per-module facts and dataflow, producing PAD001 findings.

Entry point: :func:`check_module`.  Knows nothing of the CLI or output formats.

The names below are loaded on first use (PEP 562): importing a light module of this package
(``padlint.analysis.index``, the prefilter's text tests) must not import the engine and libcst,
so that a run answered from the cache starts fast.
"""

from __future__ import annotations

__all__ = ["AnalysisSyntaxError", "check_module", "check_source", "may_matter", "prefilter_patterns"]

_WHERE = {"AnalysisSyntaxError": "engine", "check_module": "engine", "check_source": "engine",
          "may_matter": "index", "prefilter_patterns": "index"}


def __getattr__(name: str):
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{where}"), name)
