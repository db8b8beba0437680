"""The static analysis: per-module facts and dataflow, producing PAD001 findings.

Entry point: :func:`check_module`.  Knows nothing of the CLI or output formats.
"""

from __future__ import annotations

from padlint.analysis.engine import AnalysisSyntaxError, check_module, check_source
from padlint.analysis.index import may_matter, prefilter_patterns

__all__ = ["AnalysisSyntaxError", "check_module", "check_source", "may_matter", "prefilter_patterns"]
