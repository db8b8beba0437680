"""``python -m padlint``: the same as the ``padlint`` command.

``python -m`` puts the working directory first on ``sys.path``, so a checkout
being checked could shadow the standard library or padlint's dependencies
(a ``tomllib.py`` or ``libcst/`` next to the code).  It is dropped before
anything else is imported.  (``padlint/__init__.py``, run before this file,
imports nothing.)
"""

import sys


def _drop_working_directory(path: list) -> None:
    """Remove the working directory that ``-m`` inserted at ``path[0]`` (no-op under ``-P``/PYTHONSAFEPATH)."""
    if getattr(sys.flags, "safe_path", False) or not path:
        return
    import os  # already imported at interpreter start-up (frozen), never from the working directory

    first = path[0]
    try:
        here = os.getcwd()
    except OSError:
        here = None
    if first in ("", ".") or (here is not None and os.path.abspath(first) == here):
        del path[0]


_drop_working_directory(sys.path)

from padlint.cli import main  # imported only after the working directory is gone

sys.exit(main())
