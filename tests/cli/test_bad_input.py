"""Bad input: every case is one error entry with path and reason; the run goes on; no traceback."""

from __future__ import annotations

import json
import os

import pytest

import padlint.analysis
from padlint.parse import DEEP_MESSAGE, SourceFile
from padlint.pipeline import analyse
from padlint.profile import load_profile

from .conftest import CANONICAL, LIVE


def _check(project, *args):
    r = project.run("check", "--format", "json", *args)
    assert "Traceback" not in r.err
    return r, json.loads(r.out)


def _errors(doc):
    return {e["path"]: (e["line"], e["message"]) for e in doc["errors"]}


def test_syntax_error_with_line(project):
    # a class with a sink and a padded count: the prefilter sends the file to the parser
    project.write("broken.py", LIVE + "def f(:\n    pass\n")
    project.write("bug.py", CANONICAL)
    r, doc = _check(project)
    assert r.rc == 1
    line, msg = _errors(doc)["broken.py"]
    assert line == 4  # three lines of LIVE, then the broken def
    assert msg.startswith("syntax error: ")
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]  # the run went on
    assert doc["files_checked"] == 1


def test_syntax_error_in_file_the_prefilter_skips_is_not_reported(project):
    # no sink and nothing padded in it: the prefilter skips parsing, so nothing can be found (documented)
    project.write("broken.py", "def f(:\n")
    project.write("broken2.py", "x = num_reqs\ndef f(:\n")
    r, doc = _check(project)
    assert r.rc == 0
    assert doc["files_checked"] == 2


def test_syntax_error_in_file_with_a_padded_count_is_reported(project):
    # a padded count alone makes a file a place where an entry-point search starts (the sink
    # may be in another module), so it is parsed and its syntax error reported
    project.write("broken2.py", "x = num_reqs_padded\ndef f(:\n")
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc)["broken2.py"][1].startswith("syntax error")


def test_not_utf8_without_cookie(project):
    project.write("latin.py", raw=b"x = 1\ns = '\xe9'\n")
    r, doc = _check(project)
    assert r.rc == 1
    line, msg = _errors(doc)["latin.py"]
    assert line == 2
    assert msg.startswith("cannot decode as UTF-8")


def test_coding_cookie_is_honoured(project):
    src = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + CANONICAL
    project.write("cookie.py", raw=src.encode("latin-1"))
    _r, doc = _check(project)
    assert doc["errors"] == []
    # two lines more than CANONICAL: the sink is on line 9
    assert [(f["path"], f["line"]) for f in doc["findings"]] == [("cookie.py", 9)]


def test_unknown_coding_cookie(project):
    project.write("bogus.py", "# coding: no-such-codec\nx = 1\n")
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc)["bogus.py"] == (None, "cannot decode: unknown encoding: no-such-codec")


def test_utf8_bom_is_fine(project):
    project.write("bom.py", raw=b"\xef\xbb\xbf" + CANONICAL.encode())
    _r, doc = _check(project)
    assert doc["errors"] == []
    assert [(f["path"], f["line"]) for f in doc["findings"]] == [("bom.py", 7)]


def test_empty_file_is_fine(project):
    project.write("empty.py", "")
    r, doc = _check(project)
    assert r.rc == 0
    assert doc == {"version": doc["version"], "files_checked": 1, "findings": [], "errors": []}


def test_binary_file(project):
    project.write("blob.py", raw=b"num_reqs_padded\x00\x01\x02")
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc) == {"blob.py": (None, "binary file, skipped")}


def test_fifo_is_not_opened(project):
    os.mkfifo(project.root / "pipe.py")  # opening it for reading would block the run
    project.write("bug.py", CANONICAL)
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc) == {"pipe.py": (None, "not a regular file, skipped")}
    assert len(doc["findings"]) == 1


def test_dangling_symlink(project):
    os.symlink(project.root / "gone.py", project.root / "link.py")
    r, doc = _check(project)
    assert r.rc == 1
    _line, msg = _errors(doc)["link.py"]
    assert msg == "cannot read: No such file or directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_real(project):
    p = project.write("secret.py", CANONICAL)
    p.chmod(0)
    try:
        _r, doc = _check(project)
    finally:
        p.chmod(0o644)
    assert _errors(doc)["secret.py"] == (None, "cannot read: Permission denied")


def test_permission_denied_simulated(project, monkeypatch):
    project.write("secret.py", CANONICAL)
    project.write("bug.py", CANONICAL)
    real_open = open

    def fake_open(file, mode="r", *args, **kwargs):
        if str(file).endswith("secret.py") and "b" in mode:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc)["secret.py"] == (None, "cannot read: Permission denied")
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]


def test_too_deeply_nested_brackets(project):
    # 3000 nested parentheses: CPython refuses more than 200, and libcst's native
    # parser would overflow the C stack on it, so it must never be handed to libcst
    project.write("deep.py", LIVE + "x = num_reqs_padded + " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    project.write("bug.py", CANONICAL)
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc)["deep.py"][1] == DEEP_MESSAGE
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]


def test_too_deeply_nested_operators(project):
    # 20000 chained `-`: no brackets at all, still far past what CPython parses
    project.write("deep.py", LIVE + "x = num_reqs_padded + " + "-" * 20000 + "1\n")
    _r, doc = _check(project)
    assert _errors(doc)["deep.py"][1] == DEEP_MESSAGE


def test_recursion_in_analysis_is_too_deeply_nested(project, monkeypatch):
    def recurse(sources, profile, **kw):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(padlint.analysis.engine, "check_project", recurse)
    project.write("a.py", LIVE)
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc)["a.py"] == (None, DEEP_MESSAGE)


def test_analyse_nested_lambdas_unit():
    # 3,600 nested lambdas overflow libcst's parser on an 8 MiB stack (a crash,
    # not an exception); CPython refuses them first, so libcst never sees them
    src = SourceFile("d.py", LIVE + "x = " + "lambda: " * 3600 + "1\n", "utf-8", b"")
    assert analyse(src, load_profile("vllm")).message == DEEP_MESSAGE


def test_analyse_deep_unit():
    src = SourceFile("d.py", LIVE + "x = " + "[" * 1000 + "]" * 1000 + "\n", "utf-8", b"")
    err = analyse(src, load_profile("vllm"))
    assert err.message == DEEP_MESSAGE


def _check_project_raising(monkeypatch, exc: Exception, when=lambda sources: True) -> None:
    """The engine's ``check_project`` raising ``exc`` for the sources ``when`` accepts, the real
    one for the others."""
    real = padlint.analysis.engine.check_project

    def patched(sources, profile, **kw):
        if when(sources):
            raise exc
        return real(sources, profile, **kw)

    monkeypatch.setattr(padlint.analysis.engine, "check_project", patched)


def test_internal_error_in_one_file_goes_on(project, monkeypatch):
    # the whole-program run fails on a.py; the pipeline then analyses each file alone
    _check_project_raising(monkeypatch, ValueError("boom"),
                           lambda sources: any(s.path == "a.py" for s in sources))
    project.write("a.py", LIVE)
    project.write("bug.py", CANONICAL)
    r, doc = _check(project)
    assert r.rc == 1
    assert _errors(doc)["a.py"] == (None, "internal error: ValueError: boom")
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]
    # one line says why the files were checked one at a time; no traceback
    assert r.err.splitlines() == [
        "padlint: warning: the analysis of the 2 files together stopped (ValueError); checking them "
        "one at a time (calls between them are not followed; --show-traceback prints where)"]


def test_show_traceback(project, monkeypatch):
    _check_project_raising(monkeypatch, ValueError("boom"))
    project.write("a.py", LIVE)
    r = project.run("check", "--show-traceback")
    assert "Traceback" in r.err
    assert "ValueError: boom" in r.err
    monkeypatch.setenv("PADLINT_DEBUG", "1")
    r = project.run("check")
    assert "Traceback" in r.err


def test_text_output_lists_errors(project):
    project.write("blob.py", raw=b"\x00")
    r = project.run("check")
    assert r.rc == 1
    assert "blob.py: error: binary file, skipped" in r.out
    assert r.out.rstrip().endswith("Found 0 findings in 0 files (1 error).")


def test_many_concatenated_strings_do_not_crash(project):
    # CPython accepts 6,000 implicitly concatenated literals; libcst refuses
    # more than about 3,000: a clean per-file error at worst, the run goes on
    project.write("strings.py", LIVE + "        s = (" + '"a" ' * 6000 + ")\n")
    project.write("bug.py", CANONICAL)
    _r, doc = _check(project)
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]
    assert set(_errors(doc)) <= {"strings.py"}  # parsed, or a clean error: never a crash


def test_whole_program_failure_says_it_checks_files_one_at_a_time(project, monkeypatch):
    # the files checked together raise (SGLang's tree ran into the recursion limit); each file
    # alone still works: the run goes on one file at a time and says so on stderr, once,
    # instead of silently losing the calls between the files
    _check_project_raising(monkeypatch, RecursionError("maximum recursion depth exceeded"),
                           lambda sources: len(sources) > 1)
    project.write("bug.py", CANONICAL)
    project.write("other.py", CANONICAL)
    r, doc = _check(project)
    assert r.rc == 1
    assert sorted(f["path"] for f in doc["findings"]) == ["bug.py", "other.py"]  # each alone
    assert r.err.count("checking them one at a time") == 1
    assert "RecursionError" in r.err
