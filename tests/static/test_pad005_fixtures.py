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


def _variant(tmp_path: Path, extra: str) -> dict:
    """``never_written_fixed`` with ``extra`` appended to ``pkg/prefill.py``."""
    import shutil

    dst = tmp_path / "variant"
    shutil.copytree(FIXTURES / "never_written_fixed", dst)
    p = dst / "pkg" / "prefill.py"
    p.write_text(p.read_text(encoding="utf-8") + extra, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "padlint", "check", ".", "--format", "json", "--profile", "vllm", "--no-cache"],
        cwd=dst, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_a_commented_out_write_is_no_write(tmp_path: Path) -> None:
    # the text scan that finds writes without parsing skips comments: still never written
    doc = _variant(tmp_path, "\n\ndef later(speculator, n):\n"
                             "    # speculator.draft_is_prefilling[:n] = True  (not yet)\n"
                             "    return n\n")
    assert doc["findings"] == []


def test_the_same_write_in_code_is_one(tmp_path: Path) -> None:
    # the same line as code: a store into the buffer's rows, found by the text scan alone;
    # the buffer may now hold an earlier step's True in its padding rows
    doc = _variant(tmp_path, "\n\ndef later(speculator, n):\n"
                             "    speculator.draft_is_prefilling[:n] = True\n")
    assert [(f["code"], f["field"]) for f in doc["findings"]] == [("PAD001", "is_prefilling")]


def test_a_write_through_a_view_method_is_one(tmp_path: Path) -> None:
    # `.fill_` on a slice of a view of the buffer (`x.buf.gpu[a:b].fill_(v)` shape)
    doc = _variant(tmp_path, "\n\ndef later(speculator, n):\n"
                             "    speculator.draft_is_prefilling.data[n:].fill_(True)\n")
    assert [(f["code"], f["field"]) for f in doc["findings"]] == [("PAD001", "is_prefilling")]
