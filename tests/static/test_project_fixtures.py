"""Acceptance tests of the whole-program shapes on ``fixtures/project/`` (issue 8).

Each fixture is a directory holding a tiny package (``pkg/``) and a
``padlint.toml`` naming its profile; SGLang fixtures live under
``fixtures/project/sglang/`` and are checked with ``--profile sglang``,
the others with ``--profile vllm``.  Expected findings are declared as in
``fixtures/static``: a trailing comment ``# expect: PAD001 field=<field>`` on
the line where the finding must be reported, in whichever file that line is.
Fixed variants declare nothing.  Why each expectation holds is written in the
docstrings of the fixture's modules; ``fixtures/project/README.md`` has the
table.

The check runs the CLI exactly as a user would, from inside the fixture
directory: ``python -m padlint check . --format json --profile <name>``, and
compares the declared and the reported ``(path, line, code, field)`` exactly,
both ways (paths relative to the fixture directory, with ``/``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from .test_fixtures import parse_expectations

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "fixtures" / "project"

_VARIANT = re.compile(r"_(buggy|fixed)$")


def fixture_dirs() -> list[Path]:
    """Every ``<shape>_buggy`` / ``<shape>_fixed`` directory under ``fixtures/project``."""
    return sorted(p for p in PROJECTS.rglob("*") if p.is_dir() and _VARIANT.search(p.name))


def profile_of(fixture: Path) -> str:
    """``sglang`` for fixtures under ``fixtures/project/sglang/``, else ``vllm``."""
    return "sglang" if "sglang" in fixture.relative_to(PROJECTS).parts[:-1] else "vllm"


def expectations(fixture: Path) -> Counter:
    """The ``(path, line, code, field)`` findings declared in the fixture's ``.py`` files
    (each file read by :func:`tests.static.test_fixtures.parse_expectations`: comments
    only, a malformed declaration raises ``ValueError``)."""
    expected: Counter = Counter()
    for path in sorted(fixture.rglob("*.py")):
        rel = path.relative_to(fixture).as_posix()
        try:
            found = parse_expectations(path.read_text(encoding="utf-8"))
        except ValueError as e:  # "line N: malformed expectation ..." -> "path:N: ..."
            line, _, rest = str(e).removeprefix("line ").partition(":")
            raise ValueError(f"{rel}:{line}:{rest}") from None
        for (code, line, field), n in found.items():
            expected[(rel, line, code, field)] += n
    return expected


def _env() -> dict[str, str]:
    """The environment of the child: this tree's ``padlint`` first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_padlint(fixture: Path) -> dict:
    """The JSON report of ``padlint check .`` run inside ``fixture`` with its profile."""
    env = _env()
    proc = subprocess.run(
        [sys.executable, "-m", "padlint", "check", ".", "--format", "json", "--no-cache", "--profile", profile_of(fixture)],
        cwd=fixture,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # 0: no finding, 1: findings; anything else is a usage or internal error.
    assert proc.returncode in (0, 1), f"exit {proc.returncode}\n{proc.stderr}"
    return json.loads(proc.stdout)


def reported(doc: dict) -> Counter:
    return Counter(
        (Path(f["path"]).as_posix(), f["line"], f["code"], f["field"]) for f in doc["findings"]
    )


def _id(p: Path) -> str:
    return p.relative_to(PROJECTS).as_posix()


@pytest.mark.parametrize("fixture", fixture_dirs(), ids=_id)
def test_project_fixture(fixture: Path) -> None:
    expected = expectations(fixture)
    if fixture.name.endswith("_fixed"):
        assert not expected, "fixed variants declare no finding"
    else:
        assert expected, "buggy variants declare at least one finding"
    doc = run_padlint(fixture)
    assert doc["errors"] == [], doc["errors"]
    assert doc["files_checked"] == len(list(fixture.rglob("*.py")))
    got = reported(doc)
    missing = expected - got
    unexpected = got - expected
    assert not missing and not unexpected, (
        f"missing (declared, not reported): {sorted(missing)}\n"
        f"unexpected (reported, not declared): {sorted(unexpected)}"
    )


def test_every_shape_has_both_variants() -> None:
    """Each ``<shape>_buggy`` has a ``<shape>_fixed`` beside it and the other way round."""
    dirs = fixture_dirs()
    assert dirs, "no project fixtures found"
    names = {(d.parent, d.name) for d in dirs}
    for parent, name in names:
        shape, variant = _VARIANT.split(name)[0], _VARIANT.search(name).group(1)
        other = "fixed" if variant == "buggy" else "buggy"
        assert (parent, f"{shape}_{other}") in names, f"{parent / name} has no _{other} twin"


def test_child_imports_this_tree(tmp_path: Path) -> None:
    """The CLI the fixtures run is this checkout's ``padlint``, not an installed copy."""
    proc = subprocess.run(
        [sys.executable, "-c", "import padlint, sys; sys.stdout.write(padlint.__file__)"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout).resolve() == ROOT / "padlint" / "__init__.py"


def test_expectation_parser_reads_comments_only(tmp_path: Path) -> None:
    """``# expect:`` counts only as a comment, per file and line; a typo raises."""
    fixture = tmp_path / "x_buggy"
    (fixture / "pkg").mkdir(parents=True)
    (fixture / "pkg" / "a.py").write_text(
        '"""# expect: PAD001 field=doc"""\n'
        "x = f(a=b)  # expect: PAD001 field=a\n"
        "y = g(c, d)  # expect: PAD001 field=0; PAD001 field=1\n",
        encoding="utf-8",
    )
    assert expectations(fixture) == Counter(
        {
            ("pkg/a.py", 2, "PAD001", "a"): 1,
            ("pkg/a.py", 3, "PAD001", "0"): 1,
            ("pkg/a.py", 3, "PAD001", "1"): 1,
        }
    )
    (fixture / "pkg" / "b.py").write_text("z = 1  # expect: PAD001 seq_lens\n", encoding="utf-8")
    with pytest.raises(ValueError, match="pkg/b.py:1"):
        expectations(fixture)


def test_projects_side_by_side_are_separate_programs() -> None:
    """Several fixture projects checked in one run each have a package `pkg`: one module name
    for several files.  Each package root is analysed as its own program, so every fixture
    reports exactly what it reports alone (before: a fixed variant's `pkg.runner` could be read
    from its buggy twin, and `make demo` showed findings in fixed variants)."""
    # the fixtures configured by their profile alone (one run reads one configuration)
    fixtures = [d for d in fixture_dirs() if d.parent == PROJECTS and profile_of(d) == "vllm"
                and (d / "padlint.toml").read_text(encoding="utf-8").split() == ["profile", "=", '"vllm"']]
    assert len(fixtures) > 20
    proc = subprocess.run(
        [sys.executable, "-m", "padlint", "check", *(str(d.relative_to(PROJECTS)) for d in fixtures),
         "--format", "json", "--no-cache", "--profile", "vllm"],
        cwd=PROJECTS, env=_env(), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode in (0, 1), proc.stderr
    got = Counter((Path(f["path"]).as_posix(), f["line"], f["code"], f["field"])
                  for f in json.loads(proc.stdout)["findings"])
    expected: Counter = Counter()
    for d in fixtures:
        for (rel, line, code, fld), n in expectations(d).items():
            expected[(f"{d.relative_to(PROJECTS).as_posix()}/{rel}", line, code, fld)] += n
    assert got == expected
