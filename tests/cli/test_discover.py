"""Which files a run checks: recursion, default excludes, --exclude, explicit files, missing paths."""

from __future__ import annotations

import json
from pathlib import Path

from padlint.config import DEFAULT_EXCLUDE, PathPattern
from padlint.discover import discover

from .conftest import CANONICAL, unprivileged_prefix


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


# -- issue 11: runs that survive bad trees ---------------------------------------


def test_directory_that_cannot_be_entered_is_an_error_entry_and_the_run_goes_on(tmp_path):
    """A real directory with mode 000 inside the checked tree (no monkeypatching).

    Before: `internal error: PermissionError` (exit 2, no report).  The machine
    runs as root, which permissions do not stop, so as root padlint runs under
    `setpriv` without the two capabilities that bypass them.
    """
    import os
    import subprocess
    import sys

    import pytest

    prefix = unprivileged_prefix()
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "bug.py").write_text(CANONICAL)
    (tmp_path / "locked" / "inner").mkdir(parents=True)
    (tmp_path / "locked" / "inner" / "bug.py").write_text(CANONICAL)
    os.chmod(tmp_path / "locked", 0o000)
    try:
        probe = subprocess.run([*prefix, "ls", str(tmp_path / "locked")], capture_output=True, check=False)
        if probe.returncode == 0:
            pytest.skip("permissions are not enforced here (capabilities could not be dropped)")
        r = subprocess.run([*prefix, sys.executable, "-m", "padlint", "check", ".", "--format", "json", "-j", "1"],
                           cwd=tmp_path, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
                           timeout=120)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["errors"] == [{"path": "locked", "line": None, "message": "cannot read directory: Permission denied"}]
    assert [f["path"] for f in doc["findings"]] == ["ok/bug.py"]
    assert doc["files_checked"] == 1


def test_run_that_checks_no_file_says_so(project):
    project.write("build/bug.py", CANONICAL)  # excluded by default
    project.write("notes.txt", "x")
    r = project.run("check", "--format", "json")
    assert r.rc == 0
    assert json.loads(r.out)["files_checked"] == 0
    assert "padlint: warning: no Python files found under the given paths" in r.err
    # a run that checks a file does not say it
    project.write("a.py", "x = 1\n")
    assert "no Python files" not in project.run("check").err


def _git_tree(project):
    (project.root / ".git").mkdir()
    project.write(".gitignore", "gen/\n*_pb2.py\n!keep_pb2.py\n/top_only.py\n")
    project.write("pkg/.gitignore", "local.py\n")
    for rel in ("src/a.py", "gen/b.py", "src/c_pb2.py", "src/keep_pb2.py", "top_only.py", "src/top_only.py",
                "pkg/local.py", "pkg/other.py", "local.py"):
        project.write(rel, "x = 1\n")


def test_gitignore_is_respected_inside_a_git_repository(project):
    _git_tree(project)
    r = project.run("check", "--show-files")
    assert r.rc == 0
    # gen/ (directory), *_pb2.py except keep_pb2.py, /top_only.py only at the root,
    # pkg/.gitignore's local.py only below pkg/
    assert r.out.splitlines() == ["local.py", "pkg/other.py", "src/a.py", "src/keep_pb2.py", "src/top_only.py"]
    # walking a subdirectory reads the .gitignore files above it too
    assert project.run("check", "--show-files", "pkg").out.splitlines() == ["pkg/other.py"]
    # .git/info/exclude counts as well
    project.write(".git/info/exclude", "src/a.py\n")
    assert "src/a.py" not in project.run("check", "--show-files").out.splitlines()


def test_gitignore_can_be_turned_off(project):
    _git_tree(project)
    r = project.run("check", "--show-files", "--no-respect-gitignore")
    assert len(r.out.splitlines()) == 9
    project.write("padlint.toml", "respect-gitignore = false\n")
    assert len(project.run("check", "--show-files").out.splitlines()) == 9
    # the command line wins over the configuration
    assert len(project.run("check", "--show-files", "--respect-gitignore").out.splitlines()) == 5


def test_gitignore_outside_a_git_repository_is_not_read(project):
    # as in ruff and ripgrep: .gitignore files mean something only in a repository
    project.write(".gitignore", "*.py\n")
    project.write("a.py", "x = 1\n")
    assert project.run("check", "--show-files").out.splitlines() == ["a.py"]


def test_gitignored_file_named_on_the_command_line_is_checked(project):
    _git_tree(project)
    assert project.run("check", "--show-files", "gen/b.py").out.splitlines() == ["gen/b.py"]


def test_ten_thousand_excludes_match_like_one(tmp_path: Path):
    # the compiled excluder must say what each PathPattern says (its speed is in
    # benchmarks/excludes_bench.py: 10,000 excludes over vLLM 0.33.0 took 2 s, 1,000 took 60 s before)
    from padlint.discover import Excluder

    for rel in ("a/keep.py", "a/gen_3/x.py", "b/mod_7.py", "b/mod_70.py", "deep/er/thing.py", "n/skipme/z.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    patterns = [f"b/mod_{i}.py" for i in range(5000)] + [f"gen_{i}_*/*.py" for i in range(4997)]
    patterns += ["a/gen_3/*", "**/er/thing.py", "skipme"]
    excludes = [PathPattern(p, tmp_path) for p in patterns]
    found = discover(["."], excludes, tmp_path)
    assert found.files == ["a/keep.py"]
    excluder = Excluder(excludes)
    for rel in ("a/keep.py", "a/gen_3/x.py", "b/mod_7.py", "b/mod_70.py", "b/mod_7000.py", "deep/er/thing.py",
                "er/thing.py", "n/skipme", "n/skipme/z.py", "gen_4_x/y.py", "gen_4_x/sub/y.py", "c.py"):
        path = tmp_path / rel
        assert excluder(path) == any(p.matches(path) for p in excludes), rel
