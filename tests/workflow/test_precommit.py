"""The pre-commit hooks in .pre-commit-hooks.yaml, run for real with ``pre-commit try-repo``.

``try-repo`` builds the hook environment from this repository (its
committed state plus any uncommitted changes) with pip, which fetches
padlint's build backend and dependencies from the package registry: about
10-20 s per environment.  ``PRE_COMMIT_HOME`` is one temporary directory per
test session, so a clean checkout (CI) installs once; a checkout with
uncommitted changes gets a new shadow commit, hence a new environment, per
call.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from padlint.fix import apply_fixes

from .conftest import DATA, REPO_ROOT, canonical_finding

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit try-repo needs git"),
]

BUGGY = (DATA / "runner_buggy.py").read_text(encoding="utf-8")
RESET = "        is_prefilling[num_reqs:] = False\n"


def test_hook_definitions():
    yaml = pytest.importorskip("yaml")
    hooks = {h["id"]: h for h in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())}
    # --force-exclude, as ruff's hooks: configured excludes apply to the files pre-commit names
    assert hooks["padlint"]["entry"] == "padlint check --force-exclude"
    assert hooks["padlint-fix"]["entry"] == "padlint check --force-exclude --fix --unsafe-fixes"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types"] == ["python"]
        assert hook["require_serial"] is True


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory):
    pytest.importorskip("pre_commit")
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path):
    """A fresh git repository holding the buggy runner as runner.py."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "runner.py").write_text(BUGGY, encoding="utf-8")
    subprocess.run(["git", "add", "runner.py"], cwd=root, check=True)
    return root


def try_repo(project, home, hook):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "PIP_NO_INPUT": "1",
           "GIT_AUTHOR_NAME": "padlint tests", "GIT_AUTHOR_EMAIL": "tests@padlint.invalid",
           "GIT_COMMITTER_NAME": "padlint tests", "GIT_COMMITTER_EMAIL": "tests@padlint.invalid"}
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO_ROOT), hook,
                           "--files", "runner.py", "--color", "never"],
                          check=False, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_padlint_hook_fails_on_finding_then_passes_once_fixed(project, pre_commit_home):
    rc, out = try_repo(project, pre_commit_home, "padlint")
    assert rc != 0, out
    assert "Failed" in out and "PAD001" in out and "runner.py" in out, out

    fixed = apply_fixes(BUGGY, [canonical_finding().fix])
    (project / "runner.py").write_text(fixed, encoding="utf-8")
    rc, out = try_repo(project, pre_commit_home, "padlint")
    assert rc == 0, out
    assert "Passed" in out, out


def test_padlint_fix_hook_inserts_the_reset(project, pre_commit_home):
    rc, out = try_repo(project, pre_commit_home, "padlint-fix")
    assert rc != 0, out  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in out, out
    text = (project / "runner.py").read_text(encoding="utf-8")
    assert text.count(RESET) == 1, text
    assert text.index(RESET) < text.index("        meta = CommonAttentionMetadata(")

    rc, out = try_repo(project, pre_commit_home, "padlint-fix")
    assert rc == 0, out  # nothing left to fix, file unchanged
    assert (project / "runner.py").read_text(encoding="utf-8") == text
