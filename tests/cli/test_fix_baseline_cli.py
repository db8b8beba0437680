"""--diff, --fix [--unsafe-fixes], --write-baseline and --baseline through the CLI."""

from __future__ import annotations

import json
import os
import stat

from .conftest import CANONICAL, CANONICAL_FIXED


def test_diff_needs_unsafe_fixes(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--diff")
    assert r.rc == 0
    assert r.out == ""
    assert "0 fixes would be applied; 1 more with --unsafe-fixes" in r.err
    assert (project.root / "bug.py").read_text() == CANONICAL


def test_diff_unsafe_prints_unified_diff_and_writes_nothing(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--diff", "--unsafe-fixes")
    assert r.rc == 1
    assert r.out.startswith("--- a/bug.py\n+++ b/bug.py\n@@ ")
    assert "+        x[num_reqs:] = False\n" in r.out
    assert (project.root / "bug.py").read_text() == CANONICAL


def test_fix_without_unsafe_changes_nothing(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--fix")
    assert r.rc == 1
    assert "Fixed 0 findings (1 remaining). 1 unsafe fix available with --unsafe-fixes." in r.out
    assert (project.root / "bug.py").read_text() == CANONICAL


def test_fix_unsafe_writes_the_reset(project):
    path = project.write("bug.py", CANONICAL)
    path.chmod(0o640)
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert r.rc == 0, r.out
    assert "Fixed 1 finding (0 remaining)." in r.out
    assert path.read_text() == CANONICAL_FIXED
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert project.run("check").rc == 0  # fixed for good


def test_fix_keeps_crlf_and_cookie_encoding(project):
    src = ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + CANONICAL).replace("\n", "\r\n")
    path = project.write("bug.py", raw=src.encode("latin-1"))
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert r.rc == 0, r.out
    data = path.read_bytes()
    assert b"caf\xe9" in data
    assert b"        x[num_reqs:] = False\r\n        return CommonAttentionMetadata" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_write_baseline_then_apply(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--write-baseline", "padlint-baseline.json")
    assert r.rc == 0
    assert "wrote 1 finding to baseline padlint-baseline.json" in r.err
    r = project.run("check", "--baseline", "padlint-baseline.json")
    assert r.rc == 0
    assert "Found 0 findings in 1 file (0 errors)." in r.out
    # a new finding in another file is still reported
    project.write("new.py", CANONICAL)
    r = project.run("check", "--baseline", "padlint-baseline.json", "--format", "json")
    assert r.rc == 1
    assert [f["path"] for f in json.loads(r.out)["findings"]] == ["new.py"]


def test_stale_baseline_entry_is_a_warning(project):
    project.write("bug.py", CANONICAL)
    project.run("check", "--write-baseline", "b.json")
    project.write("bug.py", CANONICAL_FIXED)
    r = project.run("check", "--baseline", "b.json")
    assert r.rc == 0
    assert r.err.startswith("padlint: warning: b.json: baseline entry no longer matches")


def test_bad_baseline_is_exit_2(project):
    project.write("bug.py", CANONICAL)
    project.write("b.json", "{not json")
    r = project.run("check", "--baseline", "b.json")
    assert r.rc == 2
    assert r.err.startswith("padlint: error: b.json:")
    assert len(r.err.strip().splitlines()) == 1
    r = project.run("check", "--baseline", "missing.json")
    assert r.rc == 2
    assert "missing.json: baseline file not found" in r.err
