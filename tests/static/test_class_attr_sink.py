"""A metadata class held in a class-level attribute is a sink constructor.

The shape is vLLM 0.33.0's Mamba builders (``mamba_attn.py``), written from scratch: the
base builder's ``build`` makes its metadata with ``self.metadata_cls(...)``, and each
subclass says which class that is (``metadata_cls = Mamba2AttentionMetadata``); a helper
then stages the decode state indices in a persistent buffer, slices it to the padded
request count and fills the padding rows with the null block before ``replace(...)``
hands it out.  Without the fill, rows ``[num_decodes:num_reqs]`` keep an earlier step's
state indices (the kernel would update live requests' Mamba state at them).  Before
this, ``self.metadata_cls(...)`` was not seen as a constructor at all: the deletion of
that fill went unnoticed (docs/mutation.md, ``mamba_attn.py:656``).

The package is fixture 16 (``fixtures/project/class_attr_metadata_{buggy,fixed}``,
whose docstrings say why each expectation holds), checked here in process and
edited for the variants.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "project"


def _check(tmp_path: Path, variant: str, edit=None):
    """Findings of fixture 16's ``variant`` package, ``edit`` applied to ``pkg/mamba_base.py``."""
    dst = tmp_path / variant
    shutil.copytree(FIXTURES / f"class_attr_metadata_{variant}", dst)
    if edit is not None:
        p = dst / "pkg" / "mamba_base.py"
        p.write_text(edit(p.read_text(encoding="utf-8")), encoding="utf-8")
    srcs = [Source(str(p), p.read_text(encoding="utf-8")) for p in sorted((dst / "pkg").glob("*.py"))]
    res = check_project(srcs, load_profile("vllm"))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


def test_padding_rows_filled_with_the_null_block_are_quiet(tmp_path):
    assert _check(tmp_path, "fixed") == []


def test_without_the_fill_the_padding_rows_are_stale(tmp_path):
    found = _check(tmp_path, "buggy")
    assert [(f.code, f.field, Path(f.path).name) for f in found] == [
        ("PAD001", "state_indices_tensor_d", "mamba_base.py")]
    assert "to self.metadata_cls" in found[0].message


def test_a_method_of_that_name_is_not_a_constructor(tmp_path):
    # `self.make(...)` where `make` is a method: followed as a call (it returns None), not
    # taken for a class; no metadata object, so nothing reaches a sink
    def edit(text: str) -> str:
        text = text.replace("metadata = self.metadata_cls(", "metadata = self.make(")
        return text.replace("    def _for_cudagraph(", "    def make(self, **kw):\n        return None\n\n    def _for_cudagraph(")

    assert _check(tmp_path, "buggy", edit) == []


def test_the_prefilter_keeps_a_module_that_only_names_a_metadata_class():
    # vLLM 0.33.0's mamba_attn.py calls `self.metadata_cls(...)` and mentions its metadata
    # classes only in a TypeVar bound and annotations: it must still be parsed
    from padlint.prefilter import build_prefilter

    pre = build_prefilter(load_profile("vllm"))
    assert pre.may_matter('M = TypeVar("M", bound="BaseMambaAttentionMetadata")\nx = self.metadata_cls(a=1)\n')
    assert not pre.may_matter("x = self.metadata_cls(a=1)\n")  # nothing of the profile's at all
