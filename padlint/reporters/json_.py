"""The ``json`` format: exactly one JSON object.

Shape::

    {"version": "0.1.0", "files_checked": 12,
     "findings": [Finding.to_dict(), ...],          # sorted by path, line, column
     "errors": [{"path": ..., "line": int | null, "message": ...}, ...]}

With ``--statistics`` the object is instead
``{"version", "files_checked", "statistics": [{"code", "count"}],
"keep": [{"path", "line", "buffer", "reason", "silenced"}]}``.
"""

from __future__ import annotations

import json
from collections import Counter

from padlint import __version__
from padlint.model import CheckResult
from padlint.suppress import PadPolicy


def render(result: CheckResult) -> str:
    """The JSON document for ``result`` (ends with a newline)."""
    doc = {
        "version": __version__,
        "files_checked": result.files_checked,
        "findings": [f.to_dict() for f in sorted(result.findings, key=lambda f: f.sort_key())],
        "errors": [e.to_dict() for e in result.errors],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_statistics(result: CheckResult, policies: list[tuple[PadPolicy, int]]) -> str:
    """The ``--statistics`` JSON document: counts per code and ``pad=keep`` buffers."""
    counts = Counter(f.code for f in result.findings)
    doc = {
        "version": __version__,
        "files_checked": result.files_checked,
        "statistics": [{"code": c, "count": n} for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))],
        "keep": [{"path": p.path, "line": p.line, "buffer": p.buffer, "reason": p.value, "silenced": n}
                 for p, n in sorted(policies, key=lambda pn: (pn[0].path, pn[0].line))],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
