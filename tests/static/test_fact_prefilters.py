"""Text tests that spare parsing a checked module for a rule's fact family
(``padlint/analysis/axes.py`` :func:`may_have_axis_facts` for PAD004,
``padlint/analysis/lifecycle.py`` :func:`may_have_lifecycle` for PAD003).

They only decide what is parsed, never what is concluded: on every module of the rules'
fixtures the facts computed with the texts handed in are the facts computed without them, and
a module that fails the test is not parsed at all.  (On vLLM 0.33.0 the same equality was
checked over all 3,231 modules when the tests were added: 605 pass the axis test, 915 the
lifecycle test; docs/performance.md.)
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from padlint.analysis.axes import axis_facts, count_names, may_have_axis_facts
from padlint.analysis.lifecycle import may_have_lifecycle, module_lifecycles
from padlint.analysis.project import Project
from padlint.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]


def _modules(rule: str) -> list[Path]:
    return sorted((ROOT / "fixtures" / "rules" / rule).rglob("*.py"))


def _project(paths: list[Path]) -> tuple[Project, dict[str, str], dict[str, str]]:
    pr = Project()
    keys, texts = {}, {}
    for p in paths:
        text = p.read_text(encoding="utf-8")
        texts[str(p)] = text
        keys[str(p)] = pr.add_source(str(p), text, str(p))
    return pr, keys, texts


def _axis_signature(facts) -> tuple:
    return tuple(sorted(map(repr, getattr(facts, name))) for name in ("slices", "metadata", "handouts"))


@pytest.mark.parametrize("fixture", sorted(p.name for p in (ROOT / "fixtures/rules/PAD004").iterdir() if p.is_dir()))
def test_axis_facts_are_the_same_with_the_text_test(fixture: str) -> None:
    paths = sorted((ROOT / "fixtures/rules/PAD004" / fixture).rglob("*.py"))
    profile = load_profile("vllm")
    pr, keys, texts = _project(paths)
    plain = axis_facts(profile, pr, keys)
    pr2, keys2, texts2 = _project(paths)
    tested = axis_facts(profile, pr2, keys2, texts2)
    assert _axis_signature(tested) == _axis_signature(plain)
    if fixture.endswith("_buggy"):
        # each buggy twin has slice sites of a count (the facts its findings come from)
        assert plain.slices


def test_a_module_without_a_count_is_not_parsed_for_axis_facts() -> None:
    # `rows` and `n` are no count of the vllm profile; `self.buf[:n]` is a slice of a buffer
    # but bounded by a name of no axis: no fact, and nothing to parse for
    text = textwrap.dedent("""
        import torch

        class Holder:
            def __init__(self, rows):
                self.buf = torch.zeros(rows)

            def get(self, n):
                return self.buf[:n]
        """)
    profile = load_profile("vllm")
    assert not may_have_axis_facts(text, count_names(profile))
    pr = Project()
    key = pr.add_source("m.py", text, "m.py")
    facts = axis_facts(profile, pr, {"m.py": key}, {"m.py": text})
    assert not facts.slices and not facts.metadata and not facts.handouts
    assert key not in pr._modules
    # the same module with `num_reqs` (a count of the profile) as the bound passes the test
    assert may_have_axis_facts(text.replace("n)", "num_reqs)").replace("[:n]", "[:num_reqs]"),
                               count_names(profile))


def test_count_names_follow_the_profile_patterns() -> None:
    profile = load_profile("vllm")
    names = count_names(profile)
    # every name the profile gives an axis matches; a name it does not know may match too
    # (a superset is safe), but plain words do not
    for word in ("num_reqs", "num_reqs_padded", "num_actual_tokens", "num_tokens"):
        if profile.count_axis(word) is not None:
            assert names.fullmatch(word), word
    assert not names.fullmatch("torch") and not names.fullmatch("self")


@pytest.mark.parametrize("fixture", sorted(p.name for p in (ROOT / "fixtures/rules/PAD003").iterdir() if p.is_dir()))
def test_lifecycles_are_the_same_with_the_text_test(fixture: str) -> None:
    paths = sorted((ROOT / "fixtures/rules/PAD003" / fixture).rglob("*.py"))
    pr, keys, texts = _project(paths)
    plain = {p: [(life.key, [(m.attr, m.src, m.dst) for m in life.moves], len(life.swaps))
                 for life in module_lifecycles(pr, k)] for p, k in keys.items()}
    pr2, keys2, texts2 = _project(paths)
    tested = {p: [(life.key, [(m.attr, m.src, m.dst) for m in life.moves], len(life.swaps))
                  for life in module_lifecycles(pr2, k, texts2[p])] for p, k in keys2.items()}
    assert tested == plain
    assert any(plain.values())  # each fixture has a class that moves or swaps rows
    for p, text in texts.items():
        if not may_have_lifecycle(text):
            assert keys2[p] not in pr2._modules
