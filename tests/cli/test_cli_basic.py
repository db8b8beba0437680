"""The check command end to end: exit codes, formats, output file, colour, subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from padlint import __version__

from .conftest import CANONICAL, CANONICAL_FIXED

PADLINT = Path(sys.executable).parent / "padlint"
ANSI = "\x1b["


def test_version(project):
    r = project.run("--version")
    assert r.rc == 0
    assert r.out.strip() == f"padlint {__version__}"


def test_no_command_prints_help_and_exits_2(project):
    r = project.run()
    assert r.rc == 2
    assert "check" in r.err


def test_unknown_option_is_usage_error(project):
    r = project.run("check", "--bogus")
    assert r.rc == 2
    assert "unrecognized arguments: --bogus" in r.err
    assert "Traceback" not in r.err
    # reported with the check command's usage (its options), not the top-level one
    assert "usage: padlint check" in r.err and "--format" in r.err
    assert "padlint check: error: unrecognized arguments: --bogus" in r.err


def test_unknown_argument_of_other_commands_names_the_command(project):
    r = project.run("rules", "extra")
    assert r.rc == 2
    assert "padlint rules: error: unrecognized arguments: extra" in r.err
    r = project.run("--bogus")
    assert r.rc == 2
    assert "padlint: error: unrecognized arguments: --bogus" in r.err
    # before the command, an option is the top level's, not the command's
    r = project.run("--bogus", "check")
    assert r.rc == 2
    assert "padlint: error: unrecognized arguments: --bogus" in r.err and "padlint check:" not in r.err


def test_clean_file_exits_0(project):
    project.write("ok.py", CANONICAL_FIXED)
    r = project.run("check", "ok.py")
    assert r.rc == 0
    assert "Found 0 findings in 1 file (0 errors)." in r.out


def test_canonical_bug_text_output(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check")
    assert r.rc == 1
    # grouped by file: a header line with the path, then path:line:col CODE message
    lines = r.out.splitlines()
    assert lines[0] == "bug.py"
    # the sink argument `x` in `return CommonAttentionMetadata(is_prefilling=x)` on line 7
    assert lines[1].startswith("bug.py:7:")
    assert " PAD001 " in lines[1]
    # the source line of the trace (line 6) and the sink line (line 7) are shown
    assert "  6 |         x = self.a[:num_reqs_padded] < self.b[:num_reqs_padded]" in r.out
    assert "  7 |         return CommonAttentionMetadata(is_prefilling=x)" in r.out
    # the suggested reset and where it goes
    assert "fix (unsafe): insert `x[num_reqs:] = False` before line 7" in r.out
    assert r.out.rstrip().endswith("Found 1 finding in 1 file (0 errors).")
    assert ANSI not in r.out


def test_exit_zero(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--exit-zero")
    assert r.rc == 0
    assert "PAD001" in r.out


def test_json_shape(project):
    project.write("bug.py", CANONICAL)
    project.write("ok.py", CANONICAL_FIXED)
    project.write("other.py", "print('nothing padded here')\n")
    project.write("bin.py", raw=b"x = 1\0\n")
    r = project.run("check", "--format", "json")
    assert r.rc == 1
    doc = json.loads(r.out)  # exactly one JSON object
    assert set(doc) == {"version", "files_checked", "findings", "errors"}
    assert doc["version"] == __version__
    assert doc["files_checked"] == 3  # bug, ok and other (prefilter-skipped); bin.py is an error
    assert doc["errors"] == [{"path": "bin.py", "line": None, "message": "binary file, skipped"}]
    [f] = doc["findings"]
    assert set(f) >= {"code", "path", "line", "column", "end_line", "end_column", "message", "severity",
                      "sink", "field", "buffer", "padded", "real", "trace", "fix"}
    assert (f["code"], f["path"], f["line"]) == ("PAD001", "bug.py", 7)
    assert (f["sink"], f["field"], f["padded"], f["real"]) == (
        "CommonAttentionMetadata", "is_prefilling", "num_reqs_padded", "num_reqs")
    assert all(set(step) == {"path", "line", "note"} for step in f["trace"])
    assert any(step["line"] == 6 for step in f["trace"])
    assert f["fix"]["text"] == "x[num_reqs:] = False"


def test_json_no_findings(project):
    project.write("ok.py", CANONICAL_FIXED)
    r = project.run("check", "--format=json")
    assert r.rc == 0
    assert json.loads(r.out) == {"version": __version__, "files_checked": 1, "findings": [], "errors": []}


def test_output_file(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "json", "--output-file", "report.json")
    assert r.rc == 1
    assert r.out == ""
    doc = json.loads((project.root / "report.json").read_text())
    assert doc["findings"][0]["path"] == "bug.py"


def test_output_file_unwritable_is_exit_2(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "-o", "no/such/dir/report.txt")
    assert r.rc == 2
    assert r.err.startswith("padlint: error: no/such/dir/report.txt: cannot write output")
    assert len(r.err.strip().splitlines()) == 1


def test_output_file_over_an_input_is_refused_and_the_input_kept(project):
    # `-o bug.py` while checking bug.py (or the directory holding it) would replace the user's
    # source with the report: exit 2, one line, the file untouched
    project.write("bug.py", CANONICAL)
    for args in (["bug.py", "-o", "bug.py"], [".", "-o", "bug.py"], ["-o", "./bug.py"]):
        r = project.run("check", *args)
        assert r.rc == 2, args
        assert r.err.startswith("padlint: error: --output-file: ") and "is an input of this run" in r.err
        assert len(r.err.strip().splitlines()) == 1
        assert (project.root / "bug.py").read_text() == CANONICAL
    # a report file that is no input (not Python, or outside the paths checked) is written
    assert project.run("check", "bug.py", "-o", "report.py").rc == 1
    assert "bug.py:7:40: PAD001 " in (project.root / "report.py").read_text()


def test_statistics(project, fake_analysis):
    project.write("a.py", """\
        self.keep_me = torch.zeros(8)  # padlint: pad=keep(kernel reads only [:num_reqs])
        m = Meta(x=stale("self.a[:num_reqs_padded]"), y=stale("self.b[:num_reqs_padded]"))
        m = Meta(z=stale("self.keep_me[:num_reqs_padded]"))
        """)
    project.write("b.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))\n')
    r = project.run("check", "--statistics")
    assert r.rc == 1
    assert "    3  PAD001" in r.out
    assert "pad=keep buffers:" in r.out
    assert "a.py:1: self.keep_me (1 finding silenced): kernel reads only [:num_reqs]" in r.out
    assert "a.py:2:" not in r.out  # statistics replace the finding list
    assert "Found 3 findings in 2 files (0 errors)." in r.out


def test_statistics_json(project, fake_analysis):
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))\n')
    r = project.run("check", "--statistics", "--format", "json")
    doc = json.loads(r.out)
    assert doc["statistics"] == [{"code": "PAD001", "count": 1}]
    assert doc["keep"] == []


@pytest.mark.parametrize("fmt", ["concise", "github", "sarif"])
def test_other_formats_render(project, fmt):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", fmt)
    assert r.rc == 1
    assert "bug.py" in r.out
    if fmt == "sarif":
        assert json.loads(r.out)["runs"][0]["results"]


def test_no_color_flag_gives_plain_text(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--no-color")
    assert ANSI not in r.out


def test_text_escapes_no_markup(project, fake_analysis):
    # `[bold]` in a buffer must be printed literally, not as rich markup
    project.write("a.py", 'm = Meta(x=stale("self.a[bold][:num_reqs_padded]"))\n')
    r = project.run("check")
    assert "self.a[bold][:num_reqs_padded]" in r.out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "PADLINT_DEBUG", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    return env


def test_subprocess_piped_output_has_no_ansi(tmp_path):
    (tmp_path / "bug.py").write_text(CANONICAL)
    proc = subprocess.run([str(PADLINT), "check", "."], cwd=tmp_path, capture_output=True, text=True, check=False,
                          env=_env(), timeout=120)
    assert proc.returncode == 1
    assert ANSI not in proc.stdout
    assert "bug.py:7:" in proc.stdout
    assert proc.stderr == ""


def test_subprocess_force_color_colours(tmp_path):
    # rich honours FORCE_COLOR; --no-color still wins
    (tmp_path / "bug.py").write_text(CANONICAL)
    env = _env() | {"FORCE_COLOR": "1"}
    coloured = subprocess.run([str(PADLINT), "check", "."], cwd=tmp_path, capture_output=True, text=True, check=False,
                              env=env, timeout=120)
    plain = subprocess.run([str(PADLINT), "check", ".", "--no-color"], cwd=tmp_path, capture_output=True, check=False,
                           text=True, env=env, timeout=120)
    assert ANSI in coloured.stdout
    assert ANSI not in plain.stdout


def test_subprocess_python_m_and_exit_codes(tmp_path):
    (tmp_path / "ok.py").write_text(CANONICAL_FIXED)
    ok = subprocess.run([sys.executable, "-m", "padlint", "check", "ok.py", "--format", "json"], cwd=tmp_path,
                        capture_output=True, text=True, check=False, env=_env(), timeout=120)
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["files_checked"] == 1
    bad = subprocess.run([str(PADLINT), "check", "--config", "missing.toml"], cwd=tmp_path,
                         capture_output=True, text=True, check=False, env=_env(), timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.startswith("padlint: error: ")
    assert "missing.toml: configuration file not found" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_explain_and_rules(project):
    r = project.run("rules")
    assert r.rc == 0
    assert "PAD001" in r.out
    r = project.run("explain", "PAD001")
    assert r.rc == 0
    assert "PAD001" in r.out


def test_explain_unknown_code_is_exit_2(project):
    r = project.run("explain", "PAD999")
    assert r.rc == 2
    assert r.err.startswith("padlint: error:")
    assert "Traceback" not in r.err


def test_profile_option(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--profile", "vllm")
    assert r.rc == 1
    r = project.run("check", "--profile", "nosuchengine")
    assert r.rc == 2
    assert "unknown profile 'nosuchengine'" in r.err
    # a path is a profile file: a missing one, or a directory, is said to be that, in one line
    r = project.run("check", "--profile", "nowhere/engine.toml")
    assert (r.rc, r.err.strip()) == (2, "padlint: error: nowhere/engine.toml: profile file not found")
    (project.root / "profdir").mkdir()
    r = project.run("check", "--profile", str(project.root / "profdir"))
    assert r.rc == 2 and r.err.strip().endswith("profdir: cannot read profile: not a regular file")
    assert len(r.err.strip().splitlines()) == 1


def test_internal_error_outside_files_is_one_line(project, monkeypatch):
    import padlint.pipeline

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(padlint.pipeline, "run", boom)
    r = project.run("check")
    assert r.rc == 2
    assert r.err == "padlint: internal error: RuntimeError: kaput\n"


def test_jobs_option_gives_the_same_result(project):
    # -j is accepted; the whole-program analysis runs in one process either way
    for i in range(4):
        project.write(f"bug{i}.py", CANONICAL)
    project.write("bad.py", "x = num_reqs_padded\ndef f(:\n")
    serial = project.run("check", "--format", "json", "-j", "1")
    parallel = project.run("check", "--format", "json", "-j", "2")
    assert serial.rc == parallel.rc == 1
    assert json.loads(serial.out) == json.loads(parallel.out)
    assert len(json.loads(parallel.out)["findings"]) == 4


def test_static_check_never_imports_torch(tmp_path):
    (tmp_path / "bug.py").write_text(CANONICAL)
    code = ("import sys\nfrom padlint.cli import main\n"
            "rc = main(['check', '.', '--format', 'json', '-o', 'out.json', '-j', '1'])\n"
            "rc2 = main(['check', '.', '--statistics', '-o', 'stats.txt'])\n"
            "print(rc, rc2, 'torch' in sys.modules, 'numpy' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False,
                          env=_env(), timeout=120)
    assert proc.stdout.split() == ["1", "1", "False", "False"], proc.stderr


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_statistics_are_the_same_text_for_text_like_formats(project, fake_analysis, fmt):
    project.write("a.py", """\
        self.keep_me = torch.zeros(8)  # padlint: pad=keep(kernel reads only [:num_reqs])
        m = Meta(x=stale("self.a[:num_reqs_padded]"), y=stale("self.b[:num_reqs_padded]"))
        m = Meta(z=stale("self.keep_me[:num_reqs_padded]"))
        y = 1  # padlint: ignore[PAD001]
        """)
    r = project.run("check", "--statistics", "--format", fmt)
    assert r.rc == 1
    assert r.out == ("    2  PAD001  stale-padding-reaches-sink\n"
                     "    1  PAD100  unused-suppression\n"
                     "pad=keep buffers:\n"
                     "  a.py:1: self.keep_me (1 finding silenced): kernel reads only [:num_reqs]\n"
                     "\n"
                     "Found 3 findings in 1 file (0 errors).\n")


def test_statistics_with_sarif_is_a_usage_error(project, fake_analysis):
    project.write("a.py", 'm = Meta(x=stale("self.a[:num_reqs_padded]"))\n')
    r = project.run("check", "--statistics", "--format", "sarif")
    assert (r.rc, r.out) == (2, "")
    assert r.err == ("padlint: error: --statistics cannot be used with --format sarif (statistics are printed "
                     "as text, or as JSON with --format json)\n")


@pytest.mark.parametrize("argv", [["-j", "-1"], ["--jobs=-3"], ["-j-1"]])
def test_negative_jobs_is_a_usage_error(project, argv):
    project.write("bug.py", CANONICAL)
    r = project.run("check", *argv)
    assert (r.rc, r.out) == (2, "")
    value = argv[-1].split("=")[-1].removeprefix("-j")
    assert r.err == (f"padlint: error: --jobs: expected a number of worker processes >= 0 (0: one per CPU), "
                     f"got {value}\n")


def test_zero_jobs_means_one_per_cpu(project):
    project.write("bug.py", CANONICAL)
    assert project.run("check", "-j", "0").rc == 1


def test_sarif_srcroot_resolves_result_uris_to_the_checked_files(project):
    from urllib.parse import unquote, urljoin, urlparse

    project.write("pkg dir/bug.py", CANONICAL)
    r = project.run("check", "--format", "sarif")
    run = json.loads(r.out)["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == project.root.as_uri() + "/"
    (loc,) = [res["locations"][0]["physicalLocation"]["artifactLocation"] for res in run["results"]]
    assert loc == {"uri": "pkg%20dir/bug.py", "uriBaseId": "%SRCROOT%"}
    resolved = urljoin(run["originalUriBaseIds"][loc["uriBaseId"]]["uri"], loc["uri"])
    assert unquote(urlparse(resolved).path) == str(project.root / "pkg dir" / "bug.py")
