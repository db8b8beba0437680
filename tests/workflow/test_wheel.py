"""Rule pages ship in the wheel (padlint/_rules) and are found there, not in a source checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow

PAGES = ("PAD001.md", "PAD100.md", "PAD101.md")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(REPO_ROOT), "-w", str(out)],
                   check=True, timeout=600)
    (whl,) = out.glob("padlint-*.whl")
    return whl


def test_wheel_holds_rule_pages(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for page in PAGES:
        assert f"padlint/_rules/{page}" in names
    assert "padlint/_rules/vllm.toml" in names


def test_installed_wheel_explains_rules(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, timeout=600)
    code = ("import padlint, padlint.rules_doc as r; "
            "print(padlint.__file__); print(r.get_page('PAD001').path); print([c for c, _, _ in r.list_rules()]); "
            "print(r.explain('PAD101').splitlines()[0])")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(target)},
                          cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120)
    module, page, codes, head = proc.stdout.splitlines()
    assert module.startswith(str(target))
    assert page == str(target / "padlint" / "_rules" / "PAD001.md")
    # the installed wheel carries a page for every registered rule (list_rules raises otherwise)
    from padlint.rules import codes as registered

    assert codes == str(list(registered())) == \
        "['PAD001', 'PAD002', 'PAD003', 'PAD004', 'PAD005', 'PAD100', 'PAD101']"
    assert head == "# invalid-directive (PAD101)"
