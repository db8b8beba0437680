"""PAD004 on its fixtures (``fixtures/rules/PAD004/``): buggy twins report exactly the
``# expect: PAD004 field=<field>`` lines, fixed twins nothing.

Each fixture is a tiny package checked as a user would: ``python -m padlint check .
--select PAD004 --format json`` from inside the fixture directory (its
``padlint.toml`` names the vllm profile).  Why each expectation holds is in the
docstring of the fixture's module:

- ``gdn_buggy``: three request buffers (allocated with ``self.decode_cudagraph_max_bs``
  rows, refreshed with ``[:num_spec_decodes]``) sliced with
  ``batch_size = m.num_actual_tokens``, a token count: one finding per slice.
  ``gdn_fixed``: ``batch_size = m.num_reqs`` (the vLLM 0.24.0 fix).
- ``widths_buggy``: ``seq_lens[:num_reqs]`` beside three request fields at
  ``num_reqs_padded`` (the cumulative ``query_start_loc`` at ``+ 1``), and a
  per-token field at the real token count beside one at the padded count; and a lone
  ``seq_lens[:num_reqs]`` beside the count field ``num_reqs=num_reqs_padded`` (the count
  field is never reported).
- ``whole_buggy``: ``self.seq_lens`` refreshed up to ``num_reqs`` (host store and
  ``copy_to_gpu(num_reqs)``) and handed out whole (``self.seq_lens.gpu``); a buffer
  whose tail is filled, one refreshed with a padded count and one handed to a helper
  are not reported; ``track_indices`` is refreshed and handed out whole through a local alias
  (``track_buf = self.track_indices``): one more finding.  ``whole_fixed`` slices both to
  ``num_reqs``.
- ``builder_buggy``: the fields reach the metadata object through a module-level builder in
  another module (``build_attn_metadata(num_reqs=num_reqs_padded, seq_lens=...[:num_reqs_padded],
  is_prefilling=...[:num_reqs])``, vLLM 0.30.0's drafter): the builder passes four of its
  parameters to one CommonAttentionMetadata (one renamed, one sliced again, one through a local
  taken from ``**extra`` or the parameter), so the call's arguments are compared as that
  object's fields; ``is_prefilling`` is the one at the real count.  A call of a function that
  builds no metadata object with the same two widths is not reported.  ``chain.py``: a method
  hands its parameters on to that builder and is called with positional arguments (after
  ``self``): its parameters are the object's fields two builders deep; ``is_prefilling`` again.
  ``builder_fixed`` slices ``is_prefilling`` to ``num_reqs_padded`` and resets its padding rows
  in both (vLLM 0.31.0).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from .test_fixtures import parse_expectations
from .test_project_fixtures import _env, reported

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "rules" / "PAD004"


def _dirs() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def _expected(fixture: Path) -> Counter:
    out: Counter = Counter()
    for path in sorted(fixture.rglob("*.py")):
        for (code, line, field), n in parse_expectations(path.read_text(encoding="utf-8")).items():
            out[(path.relative_to(fixture).as_posix(), line, code, field)] += n
    return out


def _run(fixture: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "padlint", "check", ".", "--select", "PAD004", "--format", "json", "--no-cache"],
        cwd=fixture, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), f"exit {proc.returncode}\n{proc.stderr}"
    return json.loads(proc.stdout)


def test_fixtures_come_in_twins() -> None:
    names = {p.name for p in _dirs()}
    assert {"gdn_buggy", "gdn_fixed", "widths_buggy", "widths_fixed", "whole_buggy", "whole_fixed",
            "builder_buggy", "builder_fixed"} <= names
    for n in names:
        shape, _, variant = n.rpartition("_")
        assert f"{shape}_{'fixed' if variant == 'buggy' else 'buggy'}" in names


@pytest.mark.parametrize("fixture", _dirs(), ids=lambda p: p.name)
def test_pad004_fixture(fixture: Path) -> None:
    expected = _expected(fixture)
    assert bool(expected) == fixture.name.endswith("_buggy")
    doc = _run(fixture)
    assert doc["errors"] == []
    got = reported(doc)
    assert got == expected, (sorted(got), sorted(expected))


def test_gdn_message_names_the_replacement() -> None:
    """The finding says why the buffer is per request, what the count is, and the
    replacement at the count's definition (line 39: ``batch_size = m.num_actual_tokens``)."""
    doc = _run(FIXTURES / "gdn_buggy")
    first = min(doc["findings"], key=lambda f: f["line"])
    msg = first["message"]
    assert "one row per request" in msg
    assert "allocated with first dimension `self.decode_cudagraph_max_bs`" in msg
    assert "`batch_size = m.num_actual_tokens`, line 39" in msg
    assert "replace `m.num_actual_tokens` with `m.num_reqs` at line 39" in msg
    assert first["fix"]["text"] == "m.num_reqs"  # the replacement, as an unsafe fix (tests/static/test_pad004_fix.py)
    notes = [s["note"] for s in first["trace"]]
    assert any("one row per request" in n for n in notes) and any("a token count" in n for n in notes)


def test_widths_message_names_the_other_width() -> None:
    doc = _run(FIXTURES / "widths_buggy")
    seq = next(f for f in doc["findings"] if f["field"] == "seq_lens")
    assert "sliced to `num_reqs` (real request count)" in seq["message"]
    assert "sliced to `num_reqs_padded`:" in seq["message"]  # the representative width has no `+ 1`
