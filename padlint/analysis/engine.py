"""PAD001 dataflow (placeholder until the engine lands)."""

from __future__ import annotations

import libcst as cst

from padlint.model import Finding
from padlint.profile import Profile


def check_module(module: cst.Module, path: str, profile: Profile) -> list[Finding]:
    """Return PAD001 findings for one parsed module, sorted by position.

    ``path`` is used as written in findings and traces.
    """
    return []
