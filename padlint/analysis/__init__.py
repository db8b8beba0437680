"""The static analysis: per-module facts and dataflow, producing PAD001 findings.

Entry point: :func:`check_module`.  Knows nothing of the CLI or output formats.
"""

from __future__ import annotations

from padlint.analysis.engine import check_module

__all__ = ["check_module"]
