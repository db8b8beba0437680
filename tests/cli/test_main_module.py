"""``python -m padlint`` run inside an untrusted checkout imports nothing from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_python_m_padlint_does_not_import_from_the_working_directory(tmp_path: Path):
    # a checkout that shadows the standard library and a dependency: if either
    # is imported, the process exits with its message instead of checking
    (tmp_path / "tomllib.py").write_text('raise SystemExit("SHADOWED tomllib")\n')
    (tmp_path / "libcst").mkdir()
    (tmp_path / "libcst" / "__init__.py").write_text('raise SystemExit("SHADOWED libcst")\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    r = subprocess.run([sys.executable, "-m", "padlint", "check", "a.py", "--no-color"], cwd=tmp_path,
                       capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, timeout=120)
    assert "SHADOWED" not in r.stdout + r.stderr
    assert r.returncode == 0, r.stderr
    assert "Found 0 findings in 1 file (0 errors)." in r.stdout
