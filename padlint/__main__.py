"""``python -m padlint``: the same as the ``padlint`` command."""

import sys

from padlint.cli import main

sys.exit(main())
