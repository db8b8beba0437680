"""JSON Lines output (ruff's ``--output-format json-lines``): one JSON object per line.

Each finding is ``{"kind": "finding", ...Finding.to_dict()}`` (the keys of
the ``json`` format's findings), each file that could not be checked
``{"kind": "error", "path", "line", "message"}``; findings first, sorted by
position, then errors.  No summary object: a consumer counts lines.
"""

from __future__ import annotations

import json

from padlint.model import CheckResult, FileError, Finding


def render(result: CheckResult) -> str:
    """One line per finding, then one per error; "" when there are none."""
    rows = [{"kind": "finding", **f.to_dict()} for f in sorted(result.findings, key=Finding.sort_key)]
    rows += [{"kind": "error", **e.to_dict()} for e in sorted(result.errors, key=FileError.sort_key)]
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
