"""Which files a run checks: recursion, default excludes, --exclude, explicit files, missing paths."""

from __future__ import annotations

import json
from pathlib import Path

from padlint.config import DEFAULT_EXCLUDE, PathPattern
from padlint.discover import discover

from .conftest import CANONICAL


def _files(project, *args):
    r = project.run("check", "--format", "json", *args)
    return r, sorted({f["path"] for f in json.loads(r.out)["findings"]})


def test_recurses_and_skips_default_dirs(project):
    for d in ("pkg/sub", ".git", "build", "dist", "pkg/__pycache__", "x.egg-info", "node_modules", ".tox", ".nox",
              ".venv", "venv", "myenv"):
        project.write(f"{d}/bug.py", CANONICAL)
    project.write("myenv/pyvenv.cfg", "home = /usr\n")  # a virtualenv under any name
    project.write("pkg/notes.txt", CANONICAL)  # not a .py file
    r, paths = _files(project)
    assert paths == ["pkg/sub/bug.py"]
    assert json.loads(r.out)["files_checked"] == 1


def test_exclude_option(project):
    project.write("a/bug.py", CANONICAL)
    project.write("b/bug.py", CANONICAL)
    project.write("c/gen_bug.py", CANONICAL)
    _, paths = _files(project, "--exclude", "b", "--exclude", "c/gen_*.py")
    assert paths == ["a/bug.py"]


def test_exclude_path_glob_relative_to_cwd(project):
    project.write("fixtures/runtime/bug.py", CANONICAL)
    project.write("fixtures/static/bug.py", CANONICAL)
    _, paths = _files(project, "fixtures/", "--exclude", "fixtures/runtime/*")
    assert paths == ["fixtures/static/bug.py"]


def test_explicit_file_is_checked_even_in_excluded_dir(project):
    project.write("build/bug.py", CANONICAL)
    project.write("gen/bug.py", CANONICAL)
    _, paths = _files(project, "build/bug.py", "gen/bug.py", "--exclude", "gen")
    assert paths == ["build/bug.py", "gen/bug.py"]


def test_explicit_directory_is_walked(project):
    # naming an excluded directory checks it (its own name is not filtered)
    project.write("build/bug.py", CANONICAL)
    _, paths = _files(project, "build")
    assert paths == ["build/bug.py"]


def test_missing_path_is_error_entry_and_exit_1(project):
    project.write("bug.py", CANONICAL)
    r = project.run("check", "--format", "json", "nope", "bug.py")
    doc = json.loads(r.out)
    assert r.rc == 1
    assert doc["errors"] == [{"path": "nope", "line": None, "message": "no such file or directory"}]
    assert [f["path"] for f in doc["findings"]] == ["bug.py"]


def test_missing_path_alone_still_exit_1(project):
    r = project.run("check", "does/not/exist")
    assert r.rc == 1
    assert "does/not/exist: error: no such file or directory" in r.out


def test_duplicates_are_checked_once(project):
    project.write("pkg/bug.py", CANONICAL)
    r = project.run("check", "--format", "json", "pkg", "pkg/bug.py", "./pkg")
    doc = json.loads(r.out)
    assert doc["files_checked"] == 1
    assert len(doc["findings"]) == 1


def test_discover_unit(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("")
    (tmp_path / "a" / "y.pyi").write_text("")
    (tmp_path / "a" / "z.txt").write_text("")
    (tmp_path / "a" / "__pycache__").mkdir()
    (tmp_path / "a" / "__pycache__" / "x.py").write_text("")
    found = discover(["a"], [PathPattern(p, tmp_path) for p in DEFAULT_EXCLUDE], tmp_path)
    assert found.files == ["a/x.py", "a/y.pyi"]
    assert found.errors == []


def test_path_pattern_semantics(tmp_path: Path):
    base = tmp_path
    assert PathPattern("build", base).matches(base / "x" / "build")
    assert PathPattern("*.egg-info", base).matches(base / "padlint.egg-info")
    assert PathPattern("src/gen/*", base).matches(base / "src" / "gen" / "deep" / "m.py")  # * crosses /
    assert not PathPattern("src/gen/*", base).matches(base / "other" / "src" / "gen" / "m.py")
    assert PathPattern("**/gen/*.py", base).matches(base / "gen" / "m.py")  # **/ may match nothing
    assert PathPattern("./src/*.py", base).matches(base / "src" / "m.py")


def test_unreadable_directory_is_an_error_entry(project, monkeypatch):
    import os as os_module

    project.write("ok/bug.py", CANONICAL)
    project.write("locked/bug.py", CANONICAL)
    real_scandir = os_module.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os_module, "scandir", scandir)
    r = project.run("check", "--format", "json")
    doc = json.loads(r.out)
    assert r.rc == 1
    assert doc["errors"] == [{"path": "locked", "line": None, "message": "cannot read directory: Permission denied"}]
    assert [f["path"] for f in doc["findings"]] == ["ok/bug.py"]


def test_force_exclude_applies_to_named_files(project):
    project.write("padlint.toml", 'extend-exclude = ["generated", "vendor/*.py"]\n')
    project.write("generated/deep/bug.py", CANONICAL)
    project.write("vendor/bug.py", CANONICAL)
    project.write("build/bug.py", CANONICAL)
    project.write("src/bug.py", CANONICAL)
    named = ["generated/deep/bug.py", "vendor/bug.py", "build/bug.py", "src/bug.py"]
    r, paths = _files(project, *named)
    assert paths == sorted(named)  # named files are checked by default
    r, paths = _files(project, "--force-exclude", *named)
    assert paths == ["src/bug.py"]
    assert json.loads(r.out)["files_checked"] == 1
    # a named directory that is excluded is skipped as well
    r, paths = _files(project, "--force-exclude", "generated")
    assert paths == []


def test_exclude_with_dot_slash_prefix_skips_the_directory(project):
    # `--exclude ./src` names the directory src below the working directory
    project.write("src/a.py", "x = 1\n")
    project.write("b.py", "x = 1\n")
    r = project.run("check", "--format", "json", "--exclude", "./src")
    assert json.loads(r.out)["files_checked"] == 1
