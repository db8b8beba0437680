"""The valid and invalid examples on each rule page are the rule's tests (the Fixit convention).

An invalid example must produce its rule's code on exactly the lines marked
``# error: PADnnn``; a valid example must produce no finding of that code.
Static rules' examples run through the analysis API directly (with the
rule's example profile); PAD100 (unused suppression) and PAD101 (invalid
directive) are decided after the analysis, by the suppression stage, so their
examples run through ``padlint check``.  The parameters come from the rule
registry, so a new rule's examples are tests as soon as it is registered.
"""

from __future__ import annotations

import libcst as cst
import pytest

from padlint.profile import load_profile
from padlint.rules.registry import all_rules, static_rules
from padlint.rules_doc import load_pages

PAGES = load_pages()


def _static_examples(valid):
    return [pytest.param(rule, e, id=f"{rule.code}-{e.title}")
            for rule in static_rules() for e in PAGES[rule.code].examples if e.valid == valid]


def _expected_lines(example, code):
    return sorted(line for line, c in example.errors if c == code)


def _static_lines(rule, example):
    from padlint.analysis import check_module

    findings = check_module(cst.parse_module(example.code), "example.py", load_profile(rule.example_profile))
    return sorted(f.line for f in findings if f.code == rule.code), [f"{f.code} {f.message}" for f in findings]


def test_every_rule_has_examples_of_both_kinds():
    for rule in all_rules():
        kinds = {e.valid for e in PAGES[rule.code].examples}
        assert kinds == {True, False}, f"{rule.code}: its page needs valid and invalid examples"


@pytest.mark.parametrize("rule, example", _static_examples(valid=False))
def test_static_rule_invalid_example(rule, example):
    lines, messages = _static_lines(rule, example)
    assert lines == _expected_lines(example, rule.code), messages


@pytest.mark.parametrize("rule, example", _static_examples(valid=True))
def test_static_rule_valid_example(rule, example):
    lines, messages = _static_lines(rule, example)
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
            for code in (r.code for r in all_rules() if r.kind == "directive")
            for e in PAGES[code].examples if e.valid == valid]


@pytest.mark.parametrize("code, example", _cli_examples(valid=False))
def test_directive_rule_invalid_example(tmp_path, capsys, code, example):
    rc, lines, out = _padlint_check_lines(tmp_path, capsys, example, code)
    assert lines == _expected_lines(example, code), out
    assert rc == 1


@pytest.mark.parametrize("code, example", _cli_examples(valid=True))
def test_directive_rule_valid_example(tmp_path, capsys, code, example):
    rc, lines, out = _padlint_check_lines(tmp_path, capsys, example, code)
    assert lines == [] and rc == 0, out
