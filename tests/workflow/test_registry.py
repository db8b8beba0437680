"""The rule registry is the one source of rules: selection, `padlint rules`, explain, SARIF and docs."""

from __future__ import annotations

import pytest

from padlint.config import known_codes
from padlint.rules import Facts, Rule, all_rules, codes, get_rule, static_rules
from padlint.rules_doc import list_rules, load_pages


def test_registry_and_pages_agree():
    pages = load_pages()
    assert set(codes()) == set(pages), "a rule without a page, or a page without a rule"
    for rule in all_rules():
        assert pages[rule.code].name == rule.name
        assert rule.summary == pages[rule.code].summary and rule.severity == pages[rule.code].severity
        assert rule.help_uri.endswith(f"docs/rules/{rule.code}.md")
    assert [c for c, _, _ in list_rules()] == sorted(codes())


def test_selection_knows_exactly_the_registered_codes():
    assert known_codes() == codes()


def test_codes_are_unique_and_well_formed():
    seen = [r.code for r in all_rules()]
    assert len(seen) == len(set(seen))
    assert all(len(c) == 6 and c.startswith("PAD") and c[3:].isdigit() for c in seen)


def test_get_rule_is_case_insensitive_and_names_known_codes():
    assert get_rule("pad001").name == "stale-padding-reaches-sink"
    with pytest.raises(KeyError, match="known codes: PAD001"):
        get_rule("PAD999")


def test_directive_rules_are_decided_by_the_suppression_stage():
    for rule in all_rules():
        if rule.kind == "directive":
            with pytest.raises(NotImplementedError):
                rule.check(None)  # type: ignore[arg-type]
    assert all(r.kind == "static" for r in static_rules())


def test_a_static_rule_only_queries_the_facts(tmp_path):
    """A rule sees the engine's facts and reports only in checked files."""
    from padlint.analysis.engine import Source, check_project
    from padlint.model import Finding
    from padlint.profile import load_profile

    class Everywhere(Rule):
        code = "PAD999"
        name = "test-rule"

        def check(self, facts: Facts) -> list[Finding]:
            self.seen = facts
            return [Finding(code=self.code, path=p, line=1, column=1, end_line=1, end_column=2, message="m",
                            severity="error", sink="", field="", buffer="", padded="", real="")
                    for p in (*facts.texts, "elsewhere.py")]

    rule = Everywhere()
    out = check_project([Source("a.py", "x = 1\n")], load_profile("vllm"), rules=[rule])
    assert [f.path for f in out["a.py"]] == ["a.py"]  # not elsewhere.py: not a checked file
    assert rule.seen.texts == {"a.py": "x = 1\n"}
    assert rule.seen.family("n", lambda f: 41 + 1) == 42
    assert rule.seen.family("n", lambda f: 0) == 42  # computed once
