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


def test_fix_leaves_a_file_edited_during_the_run_alone(project, monkeypatch):
    """The file is saved by someone else between the check and the fix: the fix is not
    written over the new text, and the run says why (one line, exit 1)."""
    import padlint.fix

    path = project.write("bug.py", CANONICAL)
    edited = CANONICAL + "# saved by an editor meanwhile\n"
    real = padlint.fix.apply_fixes

    def apply_while_editing(text, fixes):
        path.write_text(edited)
        return real(text, fixes)

    monkeypatch.setattr(padlint.fix, "apply_fixes", apply_while_editing)
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert r.rc == 1
    assert "bug.py: error: fix not applied: the file changed during the run" in r.out
    assert path.read_text() == edited


def test_fix_that_cannot_be_encoded_is_an_error_and_writes_nothing(project, monkeypatch):
    """An ASCII-declared file and a fix whose text is not ASCII: one error line, file untouched."""
    import padlint.fix

    src = "# -*- coding: ascii -*-\n" + CANONICAL
    path = project.write("bug.py", raw=src.encode("ascii"))
    real = padlint.fix.apply_fixes
    monkeypatch.setattr(padlint.fix, "apply_fixes",
                        lambda text, fixes: real(text, fixes).replace("= False", "= False  # r\u00e9initialis\u00e9"))
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert r.rc == 1
    assert "bug.py: error: fix not applied: cannot encode as ascii" in r.out
    assert path.read_bytes() == src.encode("ascii")


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


def test_baseline_matches_from_any_directory_and_path_form(project, monkeypatch):
    # Written inside bl/ with `check .`: entries are relative to bl/ (the baseline's directory).
    project.write("bl/bug.py", CANONICAL)
    project.write("bl/sub/other.py", CANONICAL)
    monkeypatch.chdir(project.root / "bl")
    r = project.run("check", ".", "--write-baseline", "base.json")
    assert r.rc == 0 and "wrote 2 findings" in r.err
    doc = json.loads((project.root / "bl" / "base.json").read_text(encoding="utf-8"))
    assert doc["version"] == 3
    assert [e["path"] for e in doc["entries"]] == ["bug.py", "sub/other.py"]
    # From the parent, relative and absolute forms; from below, with `..`.
    monkeypatch.chdir(project.root)
    for argv in (["bl", "--baseline", "bl/base.json"],
                 ["./bl/", "--baseline", "./bl/../bl/base.json"],
                 [str(project.root / "bl"), "--baseline", str(project.root / "bl" / "base.json")],
                 ["bl/sub/other.py", "bl/bug.py", "--baseline", "bl/base.json"]):
        r = project.run("check", *argv)
        assert (r.rc, r.err) == (0, ""), argv
        assert "Found 0 findings in 2 files (0 errors)." in r.out
    monkeypatch.chdir(project.root / "bl" / "sub")
    r = project.run("check", "..", "--baseline", "../base.json")
    assert (r.rc, r.err) == (0, "")
    # A baseline written from the parent into another directory matches from bl/ too.
    monkeypatch.chdir(project.root)
    project.write("elsewhere/.keep")
    assert project.run("check", "bl", "--write-baseline", "elsewhere/b.json").rc == 0
    doc = json.loads((project.root / "elsewhere" / "b.json").read_text(encoding="utf-8"))
    assert [e["path"] for e in doc["entries"]] == ["../bl/bug.py", "../bl/sub/other.py"]
    monkeypatch.chdir(project.root / "bl")
    r = project.run("check", ".", "--baseline", "../elsewhere/b.json")
    assert (r.rc, r.err) == (0, "")


def test_stale_entry_names_the_file_relative_to_the_working_directory(project, monkeypatch):
    project.write("bl/bug.py", CANONICAL)
    monkeypatch.chdir(project.root / "bl")
    project.run("check", "--write-baseline", "base.json")
    project.write("bl/bug.py", CANONICAL_FIXED)
    monkeypatch.chdir(project.root)
    r = project.run("check", "bl", "--baseline", "bl/base.json")
    assert r.rc == 0
    assert r.err == ("padlint: warning: bl/base.json: baseline entry no longer matches: PAD001 "
                     "CommonAttentionMetadata.is_prefilling in bl/bug.py (Runner.build); remove it\n")


def test_partial_run_does_not_call_unchecked_entries_stale(project):
    # Baseline of two buggy files; pre-commit then checks only a.py.  The entry
    # for b.py could not have matched (b.py was not checked): no "remove it" for it.
    project.write("a.py", CANONICAL)
    project.write("b.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    r = project.run("check", "a.py", "--baseline", "base.json")
    assert r.rc == 0
    assert "no longer matches" not in r.err
    # once b.py is fixed and checked, its entry is stale and is named
    project.write("b.py", CANONICAL_FIXED)
    r = project.run("check", "a.py", "b.py", "--baseline", "base.json")
    assert r.rc == 0
    assert r.err.count("no longer matches") == 1 and "b.py" in r.err


def test_disabled_code_does_not_make_entries_stale(project):
    # with only PAD100 selected, the PAD001 entry cannot match: not stale
    project.write("a.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    r = project.run("check", "--select", "PAD100", "--baseline", "base.json")
    assert r.rc == 0
    assert "no longer matches" not in r.err


def test_findings_left_after_fix_are_reported_at_their_new_lines(project):
    # The fix inserts one line (the reset) above the sink, so the unused
    # suppression below it moves from line 10 to line 11; the report after
    # --fix must name line 11, found by checking the written file again.
    project.write("bug.py", CANONICAL + "\n\nx = 1  # padlint: ignore[PAD001]\n")
    before = json.loads(project.run("check", "--format", "json").out)
    assert sorted((f["code"], f["line"]) for f in before["findings"]) == [("PAD001", 7), ("PAD100", 10)]
    r = project.run("check", "--fix", "--unsafe-fixes", "--format", "json")
    after = json.loads(r.out)
    assert [(f["code"], f["line"]) for f in after["findings"]] == [("PAD100", 11)]
