"""The README's set-up snippets name things that exist (issue 11): no release tag and no published
package yet, so pre-commit pins a commit and CI installs from the repository or a checkout."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _tags() -> set[str]:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    r = subprocess.run(["git", "tag", "--list"], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    return set(r.stdout.split())


def test_pre_commit_rev_is_a_commit_or_an_existing_tag():
    revs = re.findall(r"^\s*rev:\s*(\S+)", README, flags=re.MULTILINE)
    assert revs, "the README shows a pre-commit configuration"
    tags = _tags()
    for rev in revs:
        if rev.startswith("<"):  # a placeholder the reader replaces, said so in the text
            assert "<40-hex commit id>" in README
            continue
        assert re.fullmatch(r"[0-9a-f]{40}", rev) or rev in tags, f"rev {rev!r}: neither a commit id nor a tag"


def test_pip_install_names_a_checkout_or_a_pinned_repository():
    lines = re.findall(r"pip install (.+)", README)
    assert lines
    for line in lines:
        target = line.split("#")[0].strip().strip("'\"")
        if target.startswith((".", "/")):
            continue  # a checkout
        # not a bare name: padlint is not on a package registry
        m = re.fullmatch(r"padlint @ git\+https://\S+@(<commit>|[0-9a-f]{40})", target)
        assert m, f"`pip install {line}` names a package that is not published: install from a checkout or git"


def test_local_hook_matches_the_shipped_hook():
    yaml = pytest.importorskip("yaml")
    shipped = {h["id"]: h for h in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())}
    blocks = re.findall(r"```yaml\n(.*?)```", README, flags=re.DOTALL)
    docs = [yaml.safe_load(b.replace("<", "").replace(">", "")) for b in blocks]
    local = [h for d in docs if isinstance(d, dict) for repo in d.get("repos", []) if repo["repo"] == "local"
             for h in repo["hooks"]]
    assert local and local[0]["entry"] == shipped["padlint"]["entry"]
    assert local[0]["types"] == shipped["padlint"]["types"]
