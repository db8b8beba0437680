"""`padlint check -`: one file read from standard input (editors, `git show REV:path | padlint check -`).

Run as a real subprocess, so that the bytes go through the process's own standard input
and the fixed source comes back through its standard output, byte for byte.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli.conftest import CANONICAL

# CANONICAL's sink argument: line 7 is `        return CommonAttentionMetadata(is_prefilling=x)`;
# 8 spaces + "return " (7) + "CommonAttentionMetadata(" (24) = 39 characters before the keyword
# argument `is_prefilling=x`, which the finding points at: column 40.
SINK = "7:40"
# the reset the fix inserts before the sink's statement, in the statement's indentation
RESET_LINE = "        x[num_reqs:] = False\n"  # x is a derived tensor of padded length: its padding rows are [num_reqs:]


def _padlint(cwd: Path, *args: str, data: bytes) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "PADLINT_DEBUG")}
    env["NO_COLOR"] = "1"
    return subprocess.run([sys.executable, "-m", "padlint", "check", *args], input=data, cwd=cwd,
                          capture_output=True, env=env, timeout=120, check=False)


def test_dash_checks_standard_input_and_reports_it_as_dash(tmp_path):
    r = _padlint(tmp_path, "-", "--format", "concise", data=CANONICAL.encode())
    assert r.returncode == 1, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].startswith(f"-:{SINK}: PAD001 ")
    assert "is_prefilling" in lines[0]


def test_stdin_filename_names_the_file_and_implies_dash(tmp_path):
    r = _padlint(tmp_path, "--stdin-filename", "pkg/runner.py", "--format", "concise", data=CANONICAL.encode())
    assert r.returncode == 1, r.stderr
    assert r.stdout.decode().splitlines()[0].startswith(f"pkg/runner.py:{SINK}: PAD001 ")


def test_stdin_filename_gets_per_file_ignores_of_the_config_found_from_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.padlint]
        per-file-ignores = { "tools/*" = ["PAD001"] }
    """))
    ignored = _padlint(tmp_path, "--stdin-filename", "tools/runner.py", data=CANONICAL.encode())
    assert ignored.returncode == 0, ignored.stdout
    kept = _padlint(tmp_path, "--stdin-filename", "engine/runner.py", data=CANONICAL.encode())
    assert kept.returncode == 1


def test_force_exclude_applies_to_the_stdin_filename(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.padlint]\nexclude = ["generated"]\n')
    r = _padlint(tmp_path, "--stdin-filename", "generated/runner.py", "--force-exclude", data=CANONICAL.encode())
    assert r.returncode == 0
    assert "0 files" in r.stdout.decode()
    # without --force-exclude a named file is checked whatever the excludes say
    assert _padlint(tmp_path, "--stdin-filename", "generated/runner.py", data=CANONICAL.encode()).returncode == 1


def test_fix_writes_the_fixed_source_to_stdout_and_the_report_to_stderr(tmp_path):
    r = _padlint(tmp_path, "-", "--fix", "--unsafe-fixes", data=CANONICAL.encode())
    lines = CANONICAL.splitlines(keepends=True)
    assert r.stdout.decode() == "".join(lines[:6] + [RESET_LINE] + lines[6:])
    assert r.returncode == 0, r.stderr
    assert "Fixed 1 finding (0 remaining)." in r.stderr.decode()
    # the printed source is clean: checking it again finds nothing
    assert _padlint(tmp_path, "-", data=r.stdout).returncode == 0


def test_fix_keeps_crlf_and_the_coding_cookie_encoding(tmp_path):
    source = ("# -*- coding: latin-1 -*-\n# d\xe9j\xe0 vu\n" + CANONICAL).replace("\n", "\r\n")
    r = _padlint(tmp_path, "-", "--fix", "--unsafe-fixes", data=source.encode("latin-1"))
    assert r.returncode == 0, r.stderr
    expected = source.replace("        return CommonAttentionMetadata",
                              RESET_LINE.replace("\n", "\r\n") + "        return CommonAttentionMetadata")
    assert r.stdout == expected.encode("latin-1")


def test_fix_without_unsafe_fixes_echoes_the_input_unchanged(tmp_path):
    data = CANONICAL.replace("\n", "\r\n").encode()
    r = _padlint(tmp_path, "-", "--fix", data=data)
    assert r.stdout == data
    assert r.returncode == 1  # the finding remains
    assert "1 unsafe fix available with --unsafe-fixes" in r.stderr.decode()


def test_diff_on_stdin_prints_the_fix_as_a_diff(tmp_path):
    r = _padlint(tmp_path, "-", "--diff", "--unsafe-fixes", data=CANONICAL.encode())
    out = r.stdout.decode()
    assert out.startswith("--- a/-\n+++ b/-\n")
    assert "+" + RESET_LINE in out
    assert r.returncode == 1


def test_dash_with_other_paths_is_a_usage_error(tmp_path):
    (tmp_path / "x.py").write_text("")
    for args in (["-", "x.py"], ["--stdin-filename", "a.py", "x.py"]):
        r = _padlint(tmp_path, *args, data=b"")
        assert r.returncode == 2
        err = r.stderr.decode()
        assert err.startswith("padlint: error: ") and "x.py" in err and len(err.splitlines()) == 1


def test_bad_bytes_on_stdin_are_a_file_error_not_a_traceback(tmp_path):
    r = _padlint(tmp_path, "--stdin-filename", "odd.py", data=b"x = 1\n\x00\x01")
    assert r.returncode == 1
    assert "odd.py: error: binary file, skipped" in r.stdout.decode()
    assert b"Traceback" not in r.stderr


def test_empty_stdin_is_a_clean_file(tmp_path):
    r = _padlint(tmp_path, "-", data=b"")
    assert r.returncode == 0
    assert "1 file" in r.stdout.decode()


def test_closed_stdin_is_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "PADLINT_DEBUG")}
    r = subprocess.run([sys.executable, "-m", "padlint", "check", "-"], stdin=subprocess.DEVNULL, cwd=tmp_path,
                       capture_output=True, env=env, timeout=120, check=False)
    assert r.returncode == 0  # an empty file: nothing to find
    code = "import sys; sys.stdin.close(); from padlint.cli import main; sys.exit(main(['check', '-']))"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, env=env, timeout=120, check=False)
    assert r.returncode == 2
    assert r.stderr.decode().strip() == "padlint: error: cannot read standard input: it is closed"
