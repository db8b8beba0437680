"""padlint.rules_doc: rule pages parsed from rules/PADnnn.md, explain, docs generation."""

from __future__ import annotations

import shutil

import libcst as cst
import pytest

from padlint import rules_doc
from padlint.rules_doc import (
    RulePageError,
    UnknownRuleError,
    explain,
    list_rules,
    load_pages,
    parse_page,
)

from .conftest import REPO_ROOT

SECTIONS = ("What it finds", "Why is this bad?", "Example", "Fix", "Options")


def test_list_rules():
    assert list_rules() == [
        ("PAD001", "stale-padding-reaches-sink",
         "A value whose CUDA-graph padding rows may be stale reaches attention metadata or a kernel"),
        ("PAD002", "pad-value-differs-from-contract",
         "The padding rows of a sink field are written, but with a value its consumer does not treat as padding"),
        ("PAD003", "vacated-row-keeps-data",
         "A method that moves, swaps, frees or admits rows of a persistent per-request buffer leaves the old request's "
         "values in the row"),
        ("PAD004", "count-axis-mismatch",
         "A buffer with one row per request is sliced with a token count, the fields of one metadata object are "
         "sliced to different widths, or a buffer refreshed up to a count is handed out whole"),
        ("PAD005", "initial-value",
         "A persistent buffer's initial value reaches a sink non-neutral or uninitialised in its padding rows "
         "(a buffer nothing writes after allocation, or rows a dummy run hands on at its first run), padding "
         "rows of an index field select an uninitialised row of its table, or a local tensor allocated "
         "uninitialised for the padded batch is written only up to the real count and read whole"),
        ("PAD100", "unused-suppression", "A padlint suppression comment suppresses no finding"),
        ("PAD101", "invalid-directive", "A padlint comment directive cannot be understood"),
    ]


@pytest.mark.parametrize("code", ["PAD001", "PAD002", "PAD003", "PAD004", "PAD005", "PAD100", "PAD101"])
def test_pages_have_the_ruff_sections(code):
    page = load_pages()[code]
    for title in SECTIONS:
        assert page.section(title), f"{code}: section {title!r} is missing or empty"
    assert page.name == page.name.lower() and " " not in page.name


def test_explain_pad001_tells_the_real_bug():
    text = explain("PAD001")
    assert text.startswith("# stale-padding-reaches-sink (PAD001)\n\n"
                           "A value whose CUDA-graph padding rows may be stale reaches attention metadata or a kernel.\n")
    for needle in ("vLLM issue 41841", "_build_attention_metadata", "treat_short_extends_as_decodes=False",
                   "is_prefilling[num_reqs:] = False", "0.22.0", "## Options", "reset-helpers", "ignore-args",
                   "pad=keep"):
        assert needle in text
    # Test data stays out of the terminal text.
    assert "## Valid examples" not in text and "# error: PAD001" not in text
    assert "---\ncode:" not in text


def test_explain_is_case_insensitive_and_unknown_code_is_a_key_error():
    assert explain("pad001") == explain("PAD001")
    with pytest.raises(KeyError) as info:
        explain("PAD999")
    assert isinstance(info.value, UnknownRuleError)
    assert str(info.value) == "unknown rule code 'PAD999'; known codes: PAD001, PAD002, PAD003, PAD004, PAD005, PAD100, PAD101"


def test_pad001_examples():
    page = load_pages()["PAD001"]
    invalid = [e for e in page.examples if not e.valid]
    valid = [e for e in page.examples if e.valid]
    assert len(invalid) == 7 and len(valid) == 7
    # The canonical case: the mark is on the `is_prefilling=is_prefilling,` argument, line 10 of the block.
    assert invalid[0].title == "Derived mask without a reset"
    assert invalid[0].errors == ((10, "PAD001"),)
    assert invalid[0].code.splitlines()[9].strip() == "is_prefilling=is_prefilling,  # error: PAD001"
    for example in page.examples:
        cst.parse_module(example.code)


def test_pages_are_found_through_rules_dir(tmp_path, monkeypatch):
    """An installed wheel has no rules/ beside the package: pages come from profile.rules_dir()."""
    for name in ("PAD001.md", "vllm.toml"):
        shutil.copy(REPO_ROOT / "rules" / name, tmp_path / name)
    monkeypatch.setattr(rules_doc, "rules_dir", lambda: tmp_path)
    assert list(load_pages()) == ["PAD001"]
    assert explain("PAD001").startswith("# stale-padding-reaches-sink (PAD001)")
    with pytest.raises(KeyError):
        explain("PAD100")
    # every registered rule needs its page: a missing one is named, not skipped
    with pytest.raises(RulePageError, match=r"(PAD\d{3})\.md: rule \1 has no page"):
        list_rules()


def _page(tmp_path, text, name="PAD042.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """---
code: PAD042
name: some-rule
summary: Something is wrong
---

# some-rule (PAD042)

## What it finds

Text with a fake heading inside a fence:

```python
## not a heading
```

## Invalid examples

```python
x = 1  # error: PAD042
```

## Valid examples

### Fine

````python
y = 2
```
still inside
````
"""


def test_parse_page_fences_and_defaults(tmp_path):
    page = parse_page(_page(tmp_path, GOOD))
    assert (page.code, page.name, page.summary, page.severity) == ("PAD042", "some-rule", "Something is wrong", "error")
    assert "## not a heading" in page.section("What it finds")
    assert [(e.valid, e.title, e.errors) for e in page.examples] == [
        (False, "example at line 19", ((1, "PAD042"),)),  # the fence line
        (True, "Fine", ()),
    ]
    assert page.examples[1].code == "y = 2\n```\nstill inside\n"
    assert page.markdown().startswith("# some-rule (PAD042)\n\nSomething is wrong.\n\nDefault severity: error.\n")
    assert "Valid examples" in page.markdown(examples=True) and "Valid examples" not in page.markdown()


@pytest.mark.parametrize("text, message", [
    ("# no front matter\n", "must start with a '---' front-matter block"),
    ("---\ncode: PAD042\nname: x\n", "front matter is not closed"),
    ("---\ncode: PAD042\nname: x\n---\n", "missing 'summary'"),
    ("---\ncode: PAD042\nname x\n---\n", "expected 'key: value'"),
    ("---\ncode: PAD42\nname: x\nsummary: s\n---\n", "is not PADnnn"),
    ("---\ncode: PAD043\nname: x\nsummary: s\n---\n", "file name does not match"),
    ("---\ncode: PAD042\nname: x\nsummary: s\nseverity: fatal\n---\n", "severity must be"),
    ("---\ncode: PAD042\nname: x\nsummary: s\n---\n## Invalid examples\n```python\nx = 1\n```\n",
     "needs a '# error: PADnnn' mark"),
    ("---\ncode: PAD042\nname: x\nsummary: s\n---\n## Valid examples\n```python\nx = 1  # error: PAD042\n```\n",
     "valid example carries"),
    ("---\ncode: PAD042\nname: x\nsummary: s\n---\n## Valid examples\n```text\nx = 1\n```\n", "must be ```python"),
    ("---\ncode: PAD042\nname: x\nsummary: s\n---\n## Valid examples\n```python\nx = 1\n", "not closed"),
])
def test_malformed_pages_name_the_file(tmp_path, text, message):
    path = _page(tmp_path, text)
    with pytest.raises(RulePageError) as info:
        parse_page(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_generate_docs(tmp_path):
    assert rules_doc.main(["--write", str(tmp_path / "out")]) == 0
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["PAD001.md", "PAD002.md", "PAD003.md", "PAD004.md", "PAD005.md",
                                                     "PAD100.md", "PAD101.md", "index.md"]
    pad001 = (out / "PAD001.md").read_text(encoding="utf-8")
    assert pad001.startswith("<!-- generated from rules/PAD001.md")
    assert "# stale-padding-reaches-sink (PAD001)" in pad001 and "## Invalid examples" in pad001
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "| [PAD001](PAD001.md) | stale-padding-reaches-sink |" in index
    assert rules_doc.main(["--check", str(out)]) == 0
    (out / "PAD100.md").write_text("edited\n", encoding="utf-8")
    assert rules_doc.main(["--check", str(out)]) == 1


def test_committed_docs_are_up_to_date():
    assert rules_doc.main(["--check", str(REPO_ROOT / "docs" / "rules"), "--readme", str(REPO_ROOT / "README.md")]) == 0, \
        "docs/rules or the README's rules table is stale: run make docs"


def test_readme_table_is_generated_from_the_registry(tmp_path):
    from padlint.rules.registry import all_rules

    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{rules_doc.README_BEGIN}\nhand-written row\n{rules_doc.README_END}\nrest\n",
                      encoding="utf-8")
    assert rules_doc.main(["--check", str(REPO_ROOT / "docs" / "rules"), "--readme", str(readme)]) == 1
    assert rules_doc.main(["--write", str(tmp_path / "docs"), "--readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert "hand-written row" not in text and text.startswith("intro\n") and text.endswith("rest\n")
    for rule in all_rules():
        assert f"| [{rule.code}](docs/rules/{rule.code}.md) | {rule.name} |" in text
    readme.write_text("no markers\n", encoding="utf-8")
    assert rules_doc.main(["--check", str(tmp_path / "docs"), "--readme", str(readme)]) == 2
