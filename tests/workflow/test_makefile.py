"""`make demo` installs only the static checker; `make test` adds torch and the extras (issue 11)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import REPO_ROOT


def _plan(target: str, venv: Path) -> str:
    """What `make TARGET` would run on a machine without the venv (`make -n`: prints, runs nothing)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    r = subprocess.run(["make", "-n", target, f"VENV={venv}"], cwd=REPO_ROOT, capture_output=True, text=True,
                       check=True, timeout=60)
    return r.stdout


def test_make_demo_does_not_install_torch(tmp_path):
    plan = _plan("demo", tmp_path / "venv")
    assert "-m venv" in plan and "pip install -q -e ." in plan and "padlint check fixtures/" in plan
    assert "torch" not in plan and "runtime" not in plan.replace("fixtures/runtime", "")


def test_make_test_installs_the_runtime_extras(tmp_path):
    plan = _plan("test", tmp_path / "venv")
    assert 'pip install -q "torch==2.13.0"' in plan
    assert 'pip install -q -e ".[dev,runtime]"' in plan
    assert plan.index("torch==2.13.0") < plan.index("-m pytest -q")
