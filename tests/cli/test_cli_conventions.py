"""Issue 11, "CLI and output (ruff's conventions)": no prefix matching, ruff's option names,
--show-settings/--show-files, --quiet/--verbose, JSON Lines, GitLab and JUnit output, progress bar."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest

from .conftest import CANONICAL


def test_option_prefixes_are_not_expanded(project):
    # before: `--unsafe --fi` was read as `--unsafe-fixes --fix` and rewrote the file
    path = project.write("bug.py", CANONICAL)
    r = project.run("check", "bug.py", "--unsafe", "--fi")
    assert r.rc == 2
    assert "unrecognized arguments: --unsafe --fi" in r.err
    assert path.read_text() == CANONICAL
    assert project.run("check", "bug.py", "--form", "json").rc == 2
    assert project.run("--vers").rc == 2


def test_output_format_is_an_alias_of_format(project):
    project.write("bug.py", CANONICAL)
    a = project.run("check", "--output-format", "json")
    b = project.run("check", "--format", "json")
    assert a.rc == b.rc == 1
    assert json.loads(a.out) == json.loads(b.out)


def test_extend_select_adds_to_the_configured_selection(project):
    project.write("padlint.toml", 'select = ["PAD100"]\n')
    project.write("bug.py", CANONICAL)
    assert json.loads(project.run("check", "--format", "json").out)["findings"] == []
    doc = json.loads(project.run("check", "--format", "json", "--extend-select", "PAD001").out)
    assert [f["code"] for f in doc["findings"]] == ["PAD001"]
    # the configuration's extend-select too, and an ignore of the same code wins
    project.write("padlint.toml", 'select = ["PAD100"]\nextend-select = ["PAD001"]\n')
    assert len(json.loads(project.run("check", "--format", "json").out)["findings"]) == 1
    assert json.loads(project.run("check", "--format", "json", "--ignore", "PAD001").out)["findings"] == []
    assert project.run("check", "--extend-select", "PAD9").rc == 2  # an unknown prefix, as for --select


def test_quiet_prints_only_findings(project):
    project.write("bug.py", CANONICAL)
    project.write("build/x.py", "x = 1\n")
    r = project.run("check", "--quiet")
    assert r.rc == 1
    assert "bug.py:7:" in r.out
    assert "Found" not in r.out and r.err == ""
    r = project.run("check", "-q", "build")  # nothing checked: no warning either
    assert r.out == "" and r.err == ""


def test_verbose_says_what_it_used(project):
    project.write("padlint.toml", "")
    project.write("bug.py", CANONICAL)
    r = project.run("check", "-v")
    assert f"padlint: configuration: {project.root / 'padlint.toml'}" in r.err
    assert "padlint: profile: vllm (" in r.err
    assert "padlint: 1 file checked, 0 errors, 1 finding in " in r.err
    assert project.run("check", "-q", "-v").rc == 2  # one or the other


def test_show_settings(project):
    project.write("pyproject.toml", '[tool.padlint]\nextend-exclude = ["gen"]\nignore = ["PAD100"]\n')
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--show-settings", "--no-respect-gitignore", "--max-file-size", "2MB")
    assert r.rc == 0
    settings = dict(line.split(" = ", 1) for line in r.out.splitlines())
    assert json.loads(settings["configuration"]) == f"{project.root / 'pyproject.toml'} [tool.padlint]"
    assert json.loads(settings["profile"]) == "vllm"
    assert json.loads(settings["enabled-rules"]) == ["PAD001", "PAD002", "PAD003", "PAD004", "PAD005", "PAD101"]
    assert json.loads(settings["exclude"])[-1] == "gen"
    assert json.loads(settings["respect-gitignore"]) is False
    assert json.loads(settings["max-file-size"]) == 2 * 1024 * 1024
    assert "bug.py" not in r.out and "Found" not in r.out  # nothing was checked


def test_show_files_lists_what_would_be_checked(project):
    project.write("b.py", "x = 1\n")
    project.write("a/c.py", "x = 1\n")
    project.write("build/d.py", "x = 1\n")
    project.write("a/notes.txt", "")
    r = project.run("check", "--show-files")
    assert r.rc == 0
    assert r.out.splitlines() == ["a/c.py", "b.py"]
    r = project.run("check", "--show-files", "missing")
    assert r.rc == 1 and "missing: no such file or directory" in r.err


def _two_findings(project):
    project.write("bug.py", CANONICAL)
    project.write("other/bug.py", CANONICAL)
    project.write("bad.py", raw=b"x = '\xff'\n")


def test_json_lines(project):
    _two_findings(project)
    r = project.run("check", "--format", "json-lines")
    assert r.rc == 1
    rows = [json.loads(line) for line in r.out.splitlines()]
    assert [(row["kind"], row["path"]) for row in rows] == [("finding", "bug.py"), ("finding", "other/bug.py"),
                                                             ("error", "bad.py")]
    full = json.loads(project.run("check", "--format", "json").out)
    assert [{k: v for k, v in row.items() if k != "kind"} for row in rows[:2]] == full["findings"]


def test_gitlab_code_quality(project):
    _two_findings(project)
    issues = json.loads(project.run("check", "--format", "gitlab").out)
    assert [(i["check_name"], i["location"]["path"], i["severity"]) for i in issues] == [
        ("PAD001", "bug.py", "major"), ("PAD001", "other/bug.py", "major"), ("padlint/file-error", "bad.py", "major")]
    assert issues[0]["location"]["positions"]["begin"] == {"line": 7, "column": 40}
    assert issues[0]["description"].startswith("PAD001 ")
    assert len({i["fingerprint"] for i in issues}) == 3
    # stable across runs, and independent of the line (a line added above)
    again = json.loads(project.run("check", "--format", "gitlab").out)
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]
    project.write("bug.py", "# a comment\n" + CANONICAL)
    moved = json.loads(project.run("check", "--format", "gitlab").out)
    assert moved[0]["fingerprint"] == issues[0]["fingerprint"]
    assert moved[0]["location"]["positions"]["begin"]["line"] == 8


def test_junit(project):
    _two_findings(project)
    root = ET.fromstring(project.run("check", "--format", "junit").out)
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == ("testsuites", "3", "2", "1")
    suites = {s.get("name"): s for s in root}
    assert sorted(suites) == ["bad.py", "bug.py", "other/bug.py"]
    case = suites["bug.py"].find("testcase")
    assert (case.get("name"), case.get("classname"), case.get("line")) == ("padlint.PAD001", "bug.py", "7")
    assert case.find("failure").text.startswith("line 7, col 40, ")
    assert suites["bad.py"].find("testcase/error") is not None
    project.write("bug.py", "x = 1\n")
    project.write("other/bug.py", "x = 1\n")
    project.write("bad.py", "x = 1\n")
    clean = ET.fromstring(project.run("check", "--format", "junit").out)
    assert clean.get("failures") == "0" and clean.find("testsuite/testcase").get("name") == "No errors found"
    # the top level counts the one passing test case of its one suite
    assert clean.get("tests") == "1" == clean.find("testsuite").get("tests")


@pytest.mark.parametrize("fmt", ["json-lines", "gitlab", "junit"])
def test_statistics_only_for_text_and_json(project, fmt):
    project.write("bug.py", CANONICAL)
    assert project.run("check", "--statistics", "--format", fmt).rc == 2


def test_progress_bar_appears_only_on_a_terminal_once_the_run_is_long():
    from rich.console import Console

    from padlint.cli import _progress_bar, _ProgressBar

    assert _progress_bar() is None  # stderr is captured here: not a terminal
    ticks = iter([0.0, 0.5, 5.0, 5.0, 5.0, 5.0])
    buf = io.StringIO()
    bar = _ProgressBar(Console(file=buf, force_terminal=True, width=100), delay=1.0, clock=lambda: next(ticks))
    bar("read", 0, 50)  # 0.5 s in: nothing yet
    assert bar.progress is None
    bar("read", 10, 50)  # 5 s in: shown
    assert bar.progress is not None
    bar("analyse", 3, 8)
    bar.close()
    out = buf.getvalue()
    assert "reading files" in out and "analysing" in out
    bar("read", 1, 50)  # the run after --fix wrote: no bar again
    assert bar.progress is None


def test_progress_bar_stays_away_from_a_short_run():
    from rich.console import Console

    from padlint.cli import _ProgressBar

    buf = io.StringIO()
    bar = _ProgressBar(Console(file=buf, force_terminal=True), delay=60.0)
    for i in range(100):
        bar("read", i, 100)
    bar.close()
    assert buf.getvalue() == ""
