"""Issue 11, "Discovery and inputs": bad configuration, profile and baseline files, bounds per file,
files the parser cannot read.  Each is one line (path, key) and never a traceback."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from padlint.profile import ProfileError, profile_from_dict

from .conftest import CANONICAL, unprivileged_prefix


def _one_line(r) -> str:
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert "Traceback" not in r.err
    return lines[0]


# -- configuration files -------------------------------------------------------


def test_pyproject_that_is_not_utf8_is_an_error_not_skipped(project):
    # its [tool.padlint] excludes would be lost in silence: report it
    project.write("pyproject.toml", raw='[tool.padlint]\nextend-exclude = ["caf\xe9"]\n'.encode("latin-1"))
    project.write("bug.py", CANONICAL)
    r = project.run("check")
    assert r.rc == 2
    assert _one_line(r).startswith(f"padlint: error: {project.root / 'pyproject.toml'}: cannot read configuration: "
                                   f"not UTF-8")


def test_unreadable_pyproject_is_an_error(project, monkeypatch):
    # as root permissions stop nothing: make the read itself fail as EACCES would
    from padlint import config

    project.write("pyproject.toml", "[tool.padlint]\n")
    project.write("bug.py", CANONICAL)

    def denied(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(config, "_read_regular", denied)
    r = project.run("check")
    assert r.rc == 2
    assert _one_line(r) == (f"padlint: error: {project.root / 'pyproject.toml'}: cannot read configuration: "
                            f"Permission denied")


@pytest.mark.parametrize("option", ["--config", "--baseline"])
def test_device_as_config_or_baseline_is_refused(project, option):
    project.write("bug.py", CANONICAL)
    r = project.run("check", option, "/dev/zero")
    assert r.rc == 2
    assert _one_line(r) == f"padlint: error: {option}: /dev/zero: not a regular file"


@pytest.mark.parametrize("option", ["--config", "--baseline"])
def test_fifo_as_config_or_baseline_is_refused_without_blocking(project, option):
    fifo = project.root / "pipe"
    os.mkfifo(fifo)
    project.write("bug.py", CANONICAL)
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", project.run("check", option, "pipe")), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "wb"):
            pass
        pytest.fail(f"{option} pipe blocked the run")
    r = box["r"]
    assert r.rc == 2
    assert _one_line(r) == f"padlint: error: {option}: pipe: not a regular file"


def test_deeply_nested_toml_config_is_one_line(project):
    project.write("padlint.toml", "x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    project.write("bug.py", CANONICAL)
    r = project.run("check")
    assert r.rc == 2
    assert _one_line(r) == f"padlint: error: {project.root / 'padlint.toml'}: invalid TOML: nested too deeply to read"


def test_deeply_nested_json_baseline_is_one_line(project):
    project.write("base.json", "[" * 200_000 + "]" * 200_000)
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--baseline", "base.json")
    assert r.rc == 2
    line = _one_line(r)
    assert line.startswith("padlint: error: base.json:") and "nested too deeply" in line, line


def test_deeply_nested_profile_is_one_line(project):
    project.write("deep.toml", "x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--profile", "deep.toml")
    assert r.rc == 2
    assert _one_line(r) == "padlint: error: deep.toml: invalid TOML: nested too deeply to read"


def test_unknown_profile_in_config_names_file_and_key(project):
    project.write("pyproject.toml", '[tool.padlint]\nprofile = "vlm"\n')
    project.write("bug.py", CANONICAL)
    r = project.run("check")
    assert r.rc == 2
    assert _one_line(r) == (f"padlint: error: {project.root / 'pyproject.toml'} [tool.padlint]: profile: "
                            f"unknown profile 'vlm'; available: sglang, vllm")
    # on the command line there is no file to name
    assert _one_line(project.run("check", "--profile", "vlm")) == \
        "padlint: error: unknown profile 'vlm'; available: sglang, vllm"


# -- engine profile files (issue 8): unknown tables and keys -------------------

MINIMAL = {"sinks": {"constructors": ["Meta"]}}


@pytest.mark.parametrize("data, message", [
    # [[count]] for [[counts]] silently removed every count pair
    ({**MINIMAL, "count": [{"axis": "reqs", "real": "n", "padded": "n_p"}]},
     "p.toml: unknown table 'count' (did you mean 'counts'?)"),
    ({"sinks": {"constructors": ["Meta"], "constructor": ["X"]}},
     "p.toml: unknown key 'sinks.constructor' (did you mean 'constructors'?)"),
    ({**MINIMAL, "counts": [{"axis": "reqs", "real": "n", "padded": "n_p", "padd": "x"}]},
     "p.toml: unknown key 'counts[0].padd' (did you mean 'padded'?)"),
    ({**MINIMAL, "fields": {"seq_lens": {"axis": "reqs", "neutral": "0", "neutrl": "1"}}},
     "p.toml: unknown key 'fields.seq_lens.neutrl' (did you mean 'neutral'?)"),
    ({**MINIMAL, "buffers": {"device_views": "gpu"}},
     "p.toml: unknown key 'buffers.device_views' (did you mean 'device_view'?)"),
    ({**MINIMAL, "zzz": 1}, "p.toml: unknown key 'zzz'; known: name, description, counts"),
    # the [runtime] tables: their names here, their contents by the runtime's parser
    ({**MINIMAL, "runtime": {"provder": {"target": "m:f"}}},
     "p.toml: unknown table 'runtime.provder' (did you mean 'provider'?)"),
    ({**MINIMAL, "runtime": {"provider": {"target": "m:f", "req": ["a", "b"]}}},
     "p.toml: runtime.provider: unknown key 'req'"),
    # neutral values: a literal or a constant of the profile
    ({**MINIMAL, "fields": {"m": {"neutral": "nope"}}}, "p.toml: fields.m.neutral: expected a literal"),
    ({**MINIMAL, "fields": {"m": {"neutral": float("inf")}}}, "p.toml: fields.m.neutral: expected a literal"),
    ({**MINIMAL, "fields": {"m": {"neutral": float("nan")}}}, "p.toml: fields.m.neutral: expected a literal"),
])
def test_profile_unknown_tables_and_keys_are_errors(data, message):
    with pytest.raises(ProfileError) as e:
        profile_from_dict(data, "p.toml")
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_profile_constant_as_neutral_value():
    p = profile_from_dict({**MINIMAL, "constants": {"PAD": -1}, "fields": {"m": {"neutral": "PAD"}}}, "p.toml")
    assert p.neutral_for("m") == "PAD"


def test_shipped_profiles_pass_the_key_check():
    from padlint.profile import available_profiles, load_profile

    for name in available_profiles():
        assert load_profile(name).name == name


def test_profile_file_with_misspelt_table_is_exit_2_naming_file_and_key(project):
    project.write("my.toml", '[sinks]\nconstructors = ["Meta"]\n[[count]]\nreal = "n"\npadded = "n_p"\n')
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--profile", "my.toml")
    assert r.rc == 2
    assert _one_line(r) == "padlint: error: my.toml: unknown table 'count' (did you mean 'counts'?)"


# -- bounds per file -------------------------------------------------------------


def _single_method(size: int) -> str:
    """One runner method of about ``size`` bytes: a sink and a padded slice, then many statements."""
    head = ("class Runner:\n"
            "    def build(self, num_reqs, num_reqs_padded):\n"
            "        x = self.a[:num_reqs_padded] < self.b[:num_reqs_padded]\n")
    body = []
    n = 0
    while len(head) + n < size:
        line = f"        y{len(body)} = self.c[:num_reqs] + {len(body)}\n"
        body.append(line)
        n += len(line)
    return head + "".join(body) + "        return CommonAttentionMetadata(is_prefilling=x)\n"


def test_two_megabyte_single_method_is_refused_by_the_size_limit_and_the_run_goes_on(project):
    # ~0.55 GB of memory per MB of such a method: the default limit (1 MiB) refuses it unparsed
    project.write("huge.py", _single_method(2 * 1024 * 1024))
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "json")
    doc = json.loads(r.out)
    assert r.rc == 1
    assert doc["errors"] == [{"path": "huge.py", "line": None, "message":
                              "not analysed: 2.0 MiB is larger than the limit of 1.0 MiB per file (--max-file-size)"}]
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]
    assert doc["files_checked"] == 1


def test_size_limit_option_and_config(project):
    project.write("mid.py", _single_method(40 * 1024))
    r = project.run("check", "--format", "json", "--max-file-size", "32KB")
    assert [e["message"] for e in json.loads(r.out)["errors"]] == [
        "not analysed: 40 KiB is larger than the limit of 32 KiB per file (--max-file-size)"]
    project.write("padlint.toml", 'max-file-size = "32KB"\n')
    assert len(json.loads(project.run("check", "--format", "json").out)["errors"]) == 1
    # 0: no limit; the command line wins over the configuration
    doc = json.loads(project.run("check", "--format", "json", "--max-file-size", "0").out)
    assert doc["errors"] == [] and [f["path"] for f in doc["findings"]] == ["mid.py"]
    # a file the prefilter drops (no sink, no padded count) is never refused for its size
    project.write("data.py", "X = [" + "1, " * 20_000 + "]\n")
    assert "data.py" not in project.run("check", "--format", "json", "--max-file-size", "1KB").out


@pytest.mark.parametrize("option, value, message", [
    ("--max-file-size", "lots", "--max-file-size: expected a size in bytes such as 1048576"),
    ("--max-file-size", "-1", "--max-file-size: expected a size in bytes"),
    ("--file-timeout", "soon", "--file-timeout: expected a number of seconds >= 0"),
    ("--file-timeout", "nan", "--file-timeout: expected a number of seconds >= 0"),
])
def test_bad_bounds_are_usage_errors(project, option, value, message):
    project.write("bug.py", CANONICAL)
    r = project.run("check", option, value)
    assert r.rc == 2
    assert _one_line(r).startswith(f"padlint: error: {message}")


def test_time_budget_stops_a_python_loop():
    from padlint.parse import AnalysisTimeout, with_big_stack

    def spin(_):
        while True:
            pass

    start = time.monotonic()
    with pytest.raises(AnalysisTimeout):
        with_big_stack(spin, None, timeout=0.2)
    assert time.monotonic() - start < 10  # the budget, plus the grace period at most


def test_time_budget_does_not_touch_a_quick_analysis():
    from padlint.parse import with_big_stack

    assert with_big_stack(lambda x: x + 1, 1, timeout=5) == 2


def test_file_over_the_time_budget_is_one_error_and_the_run_goes_on(project, monkeypatch):
    # the whole-program run gets the sum of the files' budgets; when it runs out, each file
    # is analysed on its own with its own budget
    import padlint.analysis.engine

    real = padlint.analysis.engine.check_project

    def slow_for_slow_py(sources, profile, **kw):
        if any(s.path.endswith("slow.py") for s in sources):
            while True:  # an analysis that never ends (caught by `except Exception` would not stop it)
                try:
                    time.sleep(0.01)
                except Exception:  # noqa: BLE001, S110 - swallows what it can, as careless code would
                    pass
        return real(sources, profile, **kw)

    monkeypatch.setattr(padlint.analysis.engine, "check_project", slow_for_slow_py)
    project.write("slow.py", CANONICAL)
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "json", "-j", "1", "--file-timeout", "0.5")
    doc = json.loads(r.out)
    assert doc["errors"] == [{"path": "slow.py", "line": None, "message":
                              "not analysed: took longer than the budget of 0.5 s per file (--file-timeout)"}]
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]


# -- valid Python that libcst cannot parse ------------------------------------------


def test_valid_python_that_libcst_rejects_is_not_a_syntax_error(project):
    import ast

    import libcst

    # 10,000 adjacent string literals: CPython takes them, libcst's parser says "syntax error"
    strings = " ".join(['"a"'] * 10_000)
    source = CANONICAL.replace("        x = self.a", f"        s = {strings}\n        x = self.a")
    ast.parse(source)  # valid Python
    with pytest.raises(libcst.ParserSyntaxError):
        libcst.parse_module(source)  # that libcst refuses
    project.write("many_strings.py", source)
    r = project.run("check", "--format", "json")
    doc = json.loads(r.out)
    assert [(e["path"], e["message"]) for e in doc["errors"]] == [
        ("many_strings.py", "not analysed: the parser cannot read this file")]
    # a real syntax error is still one
    project.write("many_strings.py", CANONICAL.replace("x = self.a", "x = = self.a"))
    doc = json.loads(project.run("check", "--format", "json").out)
    assert doc["errors"][0]["message"].startswith("syntax error")


def test_pyproject_without_read_permission_is_an_error(tmp_path):
    """The same with a real mode-000 file (as root: under setpriv without the capabilities that bypass it)."""
    import subprocess
    import sys

    prefix = unprivileged_prefix()
    (tmp_path / "pyproject.toml").write_text('[tool.padlint]\nextend-exclude = ["gen"]\n')
    (tmp_path / "bug.py").write_text(CANONICAL)
    os.chmod(tmp_path / "pyproject.toml", 0o000)
    try:
        probe = subprocess.run([*prefix, "cat", str(tmp_path / "pyproject.toml")], capture_output=True, check=False)
        if probe.returncode == 0:
            pytest.skip("permissions are not enforced here (capabilities could not be dropped)")
        r = subprocess.run([*prefix, sys.executable, "-m", "padlint", "check", "."], cwd=tmp_path,
                           capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, timeout=120)
    finally:
        os.chmod(tmp_path / "pyproject.toml", 0o644)
    assert r.returncode == 2
    assert r.stderr == (f"padlint: error: {tmp_path / 'pyproject.toml'}: cannot read configuration: "
                        f"Permission denied\n")


def test_deeply_nested_function_is_one_error_not_gigabytes(project):
    # 2,800 nested lambdas: CPython parses them, libcst's parser would take ~1.5 GB on this
    # machine; the function is refused before libcst sees it, with one error line
    src = ("from vllm.v1.attention.backend import CommonAttentionMetadata\n"
           "class R:\n    def f(self, num_reqs, num_reqs_padded):\n"
           "        g = " + "lambda: " * 2800 + "1\n"
           "        return CommonAttentionMetadata(seq_lens=self.s[:num_reqs_padded])\n")
    project.write("lam.py", src)
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "json")
    doc = json.loads(r.out)
    assert doc["errors"] == [{"path": "lam.py", "line": None, "message": "too deeply nested to analyse, skipped"}]
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]  # the run went on
