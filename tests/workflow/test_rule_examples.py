"""The valid and invalid examples on each rule page are the rule's tests (the Fixit convention).

An invalid example must produce its rule's code on exactly the lines marked
``# error: PADnnn``; a valid example must produce no finding of that code.
PAD001 examples run through the analysis API directly; PAD100 (unused
suppression) and PAD101 (invalid directive) are decided after the analysis,
by the suppression stage, so their examples run through ``padlint check``.
"""

from __future__ import annotations

import libcst as cst
import pytest

from padlint.profile import load_profile
from padlint.rules_doc import load_pages

PAGES = load_pages()


def _examples(code, valid):
    return [pytest.param(e, id=e.title) for e in PAGES[code].examples if e.valid == valid]


def _expected_lines(example, code):
    return sorted(line for line, c in example.errors if c == code)


def _pad001_lines(example):
    from padlint.analysis import check_module

    findings = check_module(cst.parse_module(example.code), "example.py", load_profile("vllm"))
    return sorted(f.line for f in findings if f.code == "PAD001"), [f.message for f in findings]


@pytest.mark.parametrize("example", _examples("PAD001", valid=False))
def test_pad001_invalid_example(example):
    lines, messages = _pad001_lines(example)
    assert lines == _expected_lines(example, "PAD001"), messages


@pytest.mark.parametrize("example", _examples("PAD001", valid=True))
def test_pad001_valid_example(example):
    lines, messages = _pad001_lines(example)
    assert lines == [], messages


def _padlint_check_lines(tmp_path, capsys, example, code):
    """Run ``padlint check --format concise`` on the example; the lines reported with ``code``."""
    from padlint.cli import main

    path = tmp_path / "example.py"
    path.write_text(example.code, encoding="utf-8")
    rc = main(["check", "--format", "concise", str(path)])
    out = capsys.readouterr().out
    lines = sorted(int(line.split(":")[1]) for line in out.splitlines() if f": {code} " in line)
    return rc, lines, out


def _cli_examples(valid):
    return [pytest.param(code, e, id=f"{code}-{e.title}")
            for code in ("PAD100", "PAD101") for e in PAGES[code].examples if e.valid == valid]


@pytest.mark.parametrize("code, example", _cli_examples(valid=False))
def test_directive_rule_invalid_example(tmp_path, capsys, code, example):
    rc, lines, out = _padlint_check_lines(tmp_path, capsys, example, code)
    assert lines == _expected_lines(example, code), out
    assert rc == 1


@pytest.mark.parametrize("code, example", _cli_examples(valid=True))
def test_directive_rule_valid_example(tmp_path, capsys, code, example):
    rc, lines, out = _padlint_check_lines(tmp_path, capsys, example, code)
    assert lines == [] and rc == 0, out
