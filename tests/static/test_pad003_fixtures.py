"""PAD003 (vacated-row-keeps-data) on the fixtures under ``fixtures/rules/PAD003/``.

Each fixture is a tiny package written from scratch in the shape of a real engine class
(vLLM's ``InputBatch`` with ``condense``/``swap_states``, its ``BlockTable`` with
``move_row``/``swap_row``), as ``<shape>_buggy`` and ``<shape>_fixed``.  Expected findings are
declared with ``# expect: PAD003 field=<buffer>`` on the vacating (or swapping) statement's first
line; the module docstrings say why each holds and why the other moves are not reported (the
admission criterion).  The check runs the CLI from inside the fixture, ``--select PAD003``, and
compares declared and reported ``(path, line, code, field)`` exactly, both ways.

The fix is checked too: ``--fix --unsafe-fixes`` on a copy of each buggy fixture inserts the row
reset right after each vacating statement, after which no vacated-row finding is left (a view
swap has no automatic fix: it stays), and a second run changes nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from .test_project_fixtures import _env, expectations, reported

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "rules" / "PAD003"


def _dirs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name.endswith(("_buggy", "_fixed")))


def _run(cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "padlint", "check", ".", "--select", "PAD003", "--no-cache",
                           "--profile", "vllm", *extra], check=False, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300)


def _json(cwd: Path) -> dict:
    proc = _run(cwd, "--format", "json")
    assert proc.returncode in (0, 1), f"exit {proc.returncode}\n{proc.stderr}"
    return json.loads(proc.stdout)


def test_both_variants_of_every_shape() -> None:
    names = {p.name for p in _dirs()}
    assert {"input_batch_buggy", "input_batch_fixed", "block_table_buggy", "block_table_fixed"} <= names
    for n in names:
        twin = n.replace("_buggy", "_fixed") if n.endswith("_buggy") else n.replace("_fixed", "_buggy")
        assert twin in names, f"{n} has no twin"


@pytest.mark.parametrize("fixture", _dirs(), ids=lambda p: p.name)
def test_pad003_fixture(fixture: Path) -> None:
    expected = expectations(fixture)
    assert bool(expected) == fixture.name.endswith("_buggy")
    doc = _json(fixture)
    assert doc["errors"] == [], doc["errors"]
    got = reported(doc)
    assert got == expected, (f"missing: {sorted(expected - got)}\nunexpected: {sorted(got - expected)}")


@pytest.mark.parametrize("shape", ["input_batch", "block_table"])
def test_pad003_fix_resets_the_vacated_row(tmp_path: Path, shape: str) -> None:
    work = tmp_path / shape
    shutil.copytree(FIXTURES / f"{shape}_buggy", work)
    before = _json(work)
    moves = [f for f in before["findings"] if f["fix"] is not None]
    swaps = [f for f in before["findings"] if f["fix"] is None]
    # each vacating move has a fix; only the view swap (input_batch) has none
    assert len(moves) == 1 and len(swaps) == (1 if shape == "input_batch" else 0)
    fix = moves[0]["fix"]
    assert fix["after"] is True and fix["line"] == moves[0]["end_line"] + 1 and not fix["safe"]
    path = work / moves[0]["path"]
    original = path.read_text(encoding="utf-8").splitlines()
    proc = _run(work, "--fix", "--unsafe-fixes")
    assert proc.returncode in (0, 1), proc.stderr
    fixed = path.read_text(encoding="utf-8").splitlines()
    # exactly one line inserted, right after the vacating statement, at its indentation
    line = moves[0]["end_line"]
    assert fixed[:line] == original[:line] and fixed[line + 1:] == original[line:]
    indent = original[moves[0]["line"] - 1][: moves[0]["column"] - 1]
    want = {"input_batch": "self.allowed_mask[last].fill_(False)",
            "block_table": "self.rope_delta[src].fill_(0)"}[shape]
    assert fixed[line] == indent + want
    after = _json(work)
    assert [f["line"] for f in after["findings"]] == [f["line"] for f in swaps]
    assert Counter(f["fix"] is None for f in after["findings"]) == Counter(True for _ in swaps)
    text = path.read_text(encoding="utf-8")
    _run(work, "--fix", "--unsafe-fixes")
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("text, wanted", [
    ("self.a[d] = self.a[s]", True),
    ("self.a.np[d] = (\n    self.a.np[s]\n)", True),
    ("bt[tgt, :n] = bt[src, :n]", True),          # through a local bound to a buffer
    ("self.m[d].copy_(self.m[s])", True),
    ("self.m[i], self.m[j] = self.m[j], self.m[i]", True),
    ("x = y[1]\nz[0] = 3", False),                 # no row of a buffer copied into another
])
def test_files_without_sinks_are_analysed_when_they_copy_rows(text, wanted):
    # the prefilter skips files without a sink or padded count; PAD003 asks for these too
    from padlint.rules.pad003 import VacatedRowKeepsData

    assert VacatedRowKeepsData().wants(text) is wanted


def test_no_fix_where_the_reset_cannot_go_on_its_own_line():
    # a move in a one-line suite (`if c: a[d] = a[s]`) or followed on its line by another
    # statement is reported, but without a fix: inserting a line after it would change the block
    import textwrap

    from padlint.analysis.engine import Source, check_project
    from padlint.profile import load_profile
    from padlint.rules.pad003 import VacatedRowKeepsData

    src = textwrap.dedent("""
    import torch

    class Batch:
        def __init__(self, n):
            self.m = torch.zeros(n, 8, dtype=torch.bool)

        def add_request(self, i, req):
            if req.allowed:
                self.m[i] = True

        def condense(self, d, s, c):
            if c: self.m[d] = self.m[s]

        def move_row(self, d, s):
            self.m[d] = self.m[s]; x = 1
            return x

        def compact(self, d, s):
            self.m[d] = self.m[s]
            return d
    """)
    res = check_project([Source("b.py", src)], load_profile("vllm"), rules=[VacatedRowKeepsData()])["b.py"]
    got = {(f.function, f.fix.text if f.fix else None) for f in res}
    assert got == {("Batch.condense", None), ("Batch.move_row", None),
                   ("Batch.compact", "self.m[s].fill_(False)")}
