"""Output formats.

``text`` (rich, grouped by file; :mod:`padlint.reporters.text`) and
``json`` (:mod:`padlint.reporters.json_`) live here; ``concise``,
``sarif``, ``github``, ``json-lines``, ``gitlab`` and ``junit`` are separate
modules imported only when chosen (``render(result)``; sarif also takes
``rules=``), so a missing one fails only its own format.
"""

from __future__ import annotations

FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit")
