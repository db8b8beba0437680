"""PAD005 fixtures (``fixtures/rules/PAD005/``) and the never-written fact PAD001 shares.

Each fixture is a tiny package checked with the vllm profile, exactly as a user
would run it (``python -m padlint check . --format json``, from inside the
fixture), and the reported ``(path, line, code, field)`` must equal the
``# expect:`` declarations, both ways.  Why each expectation holds is in the
fixture modules' docstrings:

* ``init_value_buggy``: ``num_accepted = torch.zeros`` (neutral 1) and
  ``slots = torch.empty`` (neutral -1), both never written: PAD005 on
  ``num_accepted_tokens=`` and ``slot_mapping=``; the never-written
  ``draft_is_prefilling = torch.zeros(bool)`` (neutral False) passed through a
  builder that only reads it, and the written-and-reset ``seq_lens``: nothing.
  ``init_value_fixed``: the same with ``torch.ones`` / ``torch.full(.., -1)``: nothing.
* ``never_written_buggy``: ``draft_is_prefilling`` written once in another
  module: PAD001 (stale rows).  ``never_written_fixed``: only read there: nothing
  (the vLLM 0.33.0 ``speculator.py:404`` false positive, gone).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_project_fixtures import _env, expectations, reported

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "rules" / "PAD005"
DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("fixture", DIRS, ids=lambda p: p.name)
def test_pad005_fixture(fixture: Path) -> None:
    expected = expectations(fixture)
    assert bool(expected) == fixture.name.endswith("_buggy")
    proc = subprocess.run(
        [sys.executable, "-m", "padlint", "check", ".", "--format", "json", "--profile", "vllm", "--no-cache"],
        cwd=fixture, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["errors"] == []
    got = reported(doc)
    assert got == expected, f"missing: {sorted(expected - got)}\nunexpected: {sorted(got - expected)}"


def test_both_variants_present() -> None:
    names = {p.name for p in DIRS}
    assert {"init_value_buggy", "init_value_fixed", "never_written_buggy", "never_written_fixed"} <= names
