"""What the human-readable formats (text, concise) say after --fix and with --baseline, and that
the machine formats stay unchanged: "Fixed M findings (K remaining)." counts only fixes written
whose finding is gone, and "N findings hidden by the baseline." counts the findings the baseline hid."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from .conftest import CANONICAL, CANONICAL_FIXED

# CANONICAL with a second method of the same bug: two findings, lines 7 and 11 (different
# functions, so different baseline fingerprints).
TWO = CANONICAL + """
    def build2(self, num_reqs, num_reqs_padded):
        x = self.a[:num_reqs_padded] < self.b[:num_reqs_padded]
        return CommonAttentionMetadata(is_prefilling=x)
"""

# A mask derived inside the sink argument: a finding with no fix (it stays after --fix).
NO_FIX = """\
from vllm.v1.attention.backend import CommonAttentionMetadata


class Other:
    def build(self, num_reqs, num_reqs_padded):
        return CommonAttentionMetadata(is_prefilling=self.a[:num_reqs_padded] < 1)
"""


# -- --fix with --format concise ------------------------------------------------------------------

def test_concise_fix_reports_the_fixed_count(project):
    path = project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "concise", "--fix", "--unsafe-fixes")
    assert (r.rc, r.out, r.err) == (0, "Fixed 1 finding (0 remaining).\n", "")
    assert path.read_text() == CANONICAL_FIXED


def test_concise_fix_without_unsafe_fixes_claims_no_fix(project):
    path = project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "concise", "--fix")
    assert r.rc == 1
    lines = r.out.splitlines()
    assert len(lines) == 2, r.out
    assert lines[0].startswith("bug.py:7:40: PAD001 ")
    assert lines[1] == "Fixed 0 findings (1 remaining). 1 unsafe fix available with --unsafe-fixes."
    assert path.read_text() == CANONICAL


def test_concise_fix_counts_only_the_files_written(project, monkeypatch):
    # two fixable files; b.py is saved by someone else during the run, so its fix is not written:
    # one fixed (a.py), one remaining (b.py, at its old line), not "Fixed 2"
    import padlint.fix

    a = project.write("a.py", CANONICAL)
    b = project.write("b.py", CANONICAL)
    edited = CANONICAL + "# saved by an editor meanwhile\n"
    real = padlint.fix.apply_fixes

    def apply_while_editing_b(text, fixes):
        if fixes[0].path == "b.py":
            b.write_text(edited)
        return real(text, fixes)

    monkeypatch.setattr(padlint.fix, "apply_fixes", apply_while_editing_b)
    r = project.run("check", "--format", "concise", "--fix", "--unsafe-fixes")
    assert r.rc == 1
    lines = r.out.splitlines()
    assert len(lines) == 3, r.out
    assert lines[0].startswith("b.py:7:40: PAD001 ")
    assert lines[1] == "b.py: error: fix not applied: the file changed during the run"
    assert lines[2] == "Fixed 1 finding (1 remaining)."
    assert a.read_text() == CANONICAL_FIXED
    assert b.read_text() == edited


def test_concise_fix_does_not_count_a_written_fix_that_left_its_finding(project, monkeypatch):
    import padlint.fix

    path = project.write("bug.py", CANONICAL)
    real = padlint.fix.apply_fixes
    # a reset that misses padding row num_reqs: written, but the finding stays
    monkeypatch.setattr(padlint.fix, "apply_fixes",
                        lambda text, fixes: real(text, fixes).replace("x[num_reqs:] = False",
                                                                      "x[num_reqs + 1:] = False"))
    r = project.run("check", "--format", "concise", "--fix", "--unsafe-fixes")
    assert r.rc == 1
    assert "x[num_reqs + 1:] = False" in path.read_text()
    lines = r.out.splitlines()
    assert len(lines) == 2, r.out
    assert lines[0].startswith("bug.py:8:40: PAD001 ")  # checked again: one line lower
    assert lines[1] == "Fixed 0 findings (1 remaining). 1 fix written did not remove its finding."


def test_concise_fix_counts_like_the_text_format(project):
    # the same line, for the same run, in both human-readable formats (the text one after its summary)
    project.write("a.py", CANONICAL)
    project.write("c.py", NO_FIX)
    concise = project.run("check", "--format", "concise", "--fix", "--unsafe-fixes")
    project.write("a.py", CANONICAL)
    text = project.run("check", "--fix", "--unsafe-fixes")
    assert concise.rc == text.rc == 1
    assert concise.out.splitlines()[-1] == "Fixed 1 finding (1 remaining)."
    assert text.out.splitlines()[-2:] == ["Found 1 finding in 2 files (0 errors).", "Fixed 1 finding (1 remaining)."]


def test_concise_quiet_fix_prints_findings_only(project):
    project.write("a.py", CANONICAL)
    project.write("c.py", NO_FIX)
    r = project.run("check", "--format", "concise", "--fix", "--unsafe-fixes", "-q")
    assert r.rc == 1
    assert [line.split(":")[0] for line in r.out.splitlines()] == ["c.py"]


def test_concise_fix_on_standard_input_reports_on_stderr(tmp_path):
    env_run = subprocess.run([sys.executable, "-m", "padlint", "check", "--stdin-filename", "bug.py",
                              "--format", "concise", "--fix", "--unsafe-fixes", "--no-cache"],
                             input=CANONICAL.encode(), cwd=tmp_path, capture_output=True, timeout=120, check=False)
    assert env_run.returncode == 0, env_run.stderr
    assert env_run.stdout.decode() == CANONICAL_FIXED  # the fixed source, nothing else
    assert env_run.stderr.decode() == "Fixed 1 finding (0 remaining).\n"


# -- --baseline: how many findings it hid -----------------------------------------------------------

def _baseline_two_of_three(project):
    """a.py's two findings in base.json, then a third finding added to a.py (new, reported)."""
    project.write("a.py", TWO)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    project.write("a.py", TWO + "\n" + CANONICAL.split("class Runner:\n")[1].replace("build(", "build3("))


def test_text_summary_says_how_many_findings_the_baseline_hid(project):
    _baseline_two_of_three(project)
    r = project.run("check", "--baseline", "base.json")
    assert (r.rc, r.err) == (1, "")
    assert "build3" in r.out
    assert r.out.endswith("Found 1 finding in 1 file (0 errors).\n2 findings hidden by the baseline.\n"), r.out


def test_concise_says_how_many_findings_the_baseline_hid(project):
    _baseline_two_of_three(project)
    r = project.run("check", "--baseline", "base.json", "--format", "concise")
    assert (r.rc, r.err) == (1, "")
    lines = r.out.splitlines()
    assert len(lines) == 2, r.out
    assert lines[0].startswith("a.py:15:40: PAD001 ")
    assert lines[1] == "2 findings hidden by the baseline."


def test_baseline_that_hides_one_finding_says_one(project):
    project.write("a.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    r = project.run("check", "--baseline", "base.json")
    assert r.rc == 0
    assert r.out == "Found 0 findings in 1 file (0 errors).\n1 finding hidden by the baseline.\n"
    r = project.run("check", "--baseline", "base.json", "--format", "concise")
    assert (r.rc, r.out) == (0, "1 finding hidden by the baseline.\n")


def test_baseline_that_hides_nothing_says_nothing(project):
    # written on a clean tree, then a bug appears: nothing hidden, no line about the baseline
    project.write("a.py", CANONICAL_FIXED)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    project.write("a.py", CANONICAL)
    for fmt in ("text", "concise"):
        r = project.run("check", "--baseline", "base.json", "--format", fmt)
        assert r.rc == 1
        assert "hidden" not in r.out and "baseline" not in r.out
    # a stale entry hides nothing either: the warning on stderr, no count
    project.write("b.py", CANONICAL)
    assert project.run("check", "b.py", "--write-baseline", "base.json").rc == 0
    project.write("b.py", CANONICAL_FIXED)
    r = project.run("check", "--baseline", "base.json", "--format", "concise")
    assert "baseline entry no longer matches" in r.err
    assert "hidden" not in r.out


def test_quiet_leaves_out_the_baseline_count(project):
    _baseline_two_of_three(project)
    for fmt in ("text", "concise"):
        r = project.run("check", "--baseline", "base.json", "--format", fmt, "-q")
        assert r.rc == 1
        assert "hidden" not in r.out


def test_baseline_count_after_fix_counts_the_file_checked_again(project):
    # a.py: build baselined, build2 new and fixed; after the write a.py is checked again and its
    # baselined finding is hidden again: still 1 hidden (neither 0 nor counted twice).  b.py,
    # not written, keeps its 1 hidden finding.
    project.write("a.py", CANONICAL)
    project.write("b.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    a = project.write("a.py", TWO)
    for fmt in ("text", "concise"):
        r = project.run("check", "--baseline", "base.json", "--format", fmt, "--fix", "--unsafe-fixes")
        assert (r.rc, r.err) == (0, ""), r.err
        assert r.out.endswith("Fixed 1 finding (0 remaining).\n2 findings hidden by the baseline.\n"), r.out
        assert a.read_text().count("x[num_reqs:] = False") == 1  # only build2's
        a.write_text(TWO)


def test_baseline_count_after_a_fix_that_also_removed_the_hidden_finding(project, monkeypatch):
    # a.py: build baselined, build2 new.  The fix written resets both methods (one reset can cover
    # several findings): checked again, a.py has no finding left, so none is hidden any more.
    import padlint.fix

    project.write("a.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    a = project.write("a.py", TWO)
    real = padlint.fix.apply_fixes
    reset = "        x[num_reqs:] = False\n        return CommonAttentionMetadata"

    def reset_every_method(text, fixes):
        out = real(text, fixes)
        return out.replace(reset, "        return CommonAttentionMetadata").replace(
            "        return CommonAttentionMetadata", reset)

    monkeypatch.setattr(padlint.fix, "apply_fixes", reset_every_method)
    r = project.run("check", "--baseline", "base.json", "--format", "concise", "--fix", "--unsafe-fixes")
    assert a.read_text().count("x[num_reqs:] = False") == 2
    assert (r.rc, r.out) == (0, "Fixed 1 finding (0 remaining).\n")


def test_statistics_say_how_many_findings_the_baseline_hid(project):
    _baseline_two_of_three(project)
    r = project.run("check", "--baseline", "base.json", "--statistics", "--format", "concise")
    assert r.out.endswith("Found 1 finding in 1 file (0 errors).\n2 findings hidden by the baseline.\n"), r.out


# -- the machine formats carry neither line -----------------------------------------------------

@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "gitlab", "junit", "github"])
def test_machine_formats_stay_valid_after_fix_with_a_baseline(project, fmt):
    # a.py baselined, b.py fixed, c.py left (no fix): one finding in the report, nothing else
    project.write("a.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    b = project.write("b.py", CANONICAL)
    project.write("c.py", NO_FIX)
    r = project.run("check", "--baseline", "base.json", "--format", fmt, "--fix", "--unsafe-fixes")
    assert (r.rc, r.err) == (1, "")
    assert b.read_text() == CANONICAL_FIXED
    assert "remaining)." not in r.out and "hidden by the baseline" not in r.out
    if fmt == "json":
        doc = json.loads(r.out)
        assert set(doc) == {"version", "files_checked", "findings", "errors"}
        assert [f["path"] for f in doc["findings"]] == ["c.py"]
    elif fmt == "json-lines":
        rows = [json.loads(line) for line in r.out.splitlines()]
        assert [(row["kind"], row["path"]) for row in rows] == [("finding", "c.py")]
    elif fmt == "sarif":
        results = json.loads(r.out)["runs"][0]["results"]
        assert [res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in results] == ["c.py"]
    elif fmt == "gitlab":
        assert [issue["location"]["path"] for issue in json.loads(r.out)] == ["c.py"]
    elif fmt == "junit":
        root = ET.fromstring(r.out)
        assert (root.get("tests"), root.get("failures")) == ("1", "1")
        assert [s.get("name") for s in root.iter("testsuite")] == ["c.py"]
    else:
        lines = r.out.splitlines()
        assert len(lines) == 1 and lines[0].startswith("::error ") and "file=c.py," in lines[0]
