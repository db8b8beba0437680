"""The SGLang engine profile (``rules/sglang.toml``) on the fixtures in ``fixtures/sglang/``.

Each fixture is a minimal SGLang-shaped runner written from scratch; buggy
variants declare their findings with ``# expect: PAD001 field=<field>`` on the
line of the sink argument, fixed variants declare none.  The reported
``(code, line, field)`` triples must equal the declared ones, both ways.
These fixtures are checked with the SGLang profile only (``fixtures/static``
is the vLLM profile's).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from pathlib import Path

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sglang"
FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))

_EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
_ITEM = re.compile(r"^(PAD\d{3})\s+field=(\S+)$")


def expectations(source: str) -> Counter:
    """Declared ``(code, line, field)`` triples; comments only (read with tokenize)."""
    out: Counter = Counter()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        m = _EXPECT.search(tok.string)
        if not m:
            continue
        for item in m.group(1).split(";"):
            im = _ITEM.match(item.strip())
            if not im:
                raise ValueError(f"line {tok.start[0]}: malformed expectation {item!r}")
            out[(im.group(1), tok.start[0], im.group(2))] += 1
    return out


@pytest.fixture(scope="module")
def profile():
    return load_profile("sglang")


def test_fixtures_exist_in_pairs():
    names = {p.name for p in FIXTURE_FILES}
    shapes = {n.rsplit("_", 1)[0] for n in names}
    assert len(shapes) >= 2
    for shape in shapes:
        assert {f"{shape}_buggy.py", f"{shape}_fixed.py"} <= names, shape


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_findings_match_expectations(path: Path, profile):
    text = path.read_text(encoding="utf-8")
    expected = expectations(text)
    found = Counter((f.code, f.line, f.field) for f in check_source(text, str(path), profile))
    assert found == expected, (
        f"missing: {sorted((expected - found).elements())}; unexpected: {sorted((found - expected).elements())}")
    if path.name.endswith("_buggy.py"):
        assert expected, "a buggy fixture declares at least one finding"
    else:
        assert not expected, "a fixed fixture declares no finding"


def test_profile_names_sglang_counts_and_sinks(profile):
    assert profile.name == "sglang"
    assert profile.is_real_for("raw_bs", "bs")
    assert profile.is_real_for("raw_num_token", "num_tokens")
    assert profile.is_real_for("raw_num_tokens", "padded_num_tokens")
    assert profile.is_sink_constructor("ForwardBatch")
    assert profile.is_sink_constructor("SimpleNamespace")
    assert profile.field_spec("out_cache_loc").axis == "tokens"
    assert profile.neutral_for("req_pool_indices") == "0"
    assert profile.constant(profile.neutral_for("seq_lens")) == 1


def test_seq_lens_finding_names_counts_and_sink(profile):
    path = FIXTURES / "seq_lens_fill_buggy.py"
    findings = check_source(path.read_text(encoding="utf-8"), str(path), profile)
    seq = [f for f in findings if f.field == "seq_lens"]
    assert len(seq) == 1
    assert seq[0].padded == "bs" and seq[0].real == "raw_bs"
    assert seq[0].sink == "SimpleNamespace"
