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
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

_MODULE = textwrap.dedent('''\
    from dataclasses import dataclass, replace
    from typing import ClassVar, Generic, TypeVar

    import torch

    NULL_BLOCK_ID = 0


    @dataclass
    class CommonAttentionMetadata:
        num_reqs: int
        num_decodes: int


    @dataclass
    class BaseMambaAttentionMetadata:
        num_reqs: int
        num_decodes: int
        state_indices_tensor_d: torch.Tensor


    @dataclass
    class Mamba2AttentionMetadata(BaseMambaAttentionMetadata):
        pass


    M = TypeVar("M", bound=BaseMambaAttentionMetadata)


    class BaseMambaBuilder(Generic[M]):
        metadata_cls: type[M]

        def __init__(self, max_bs: int):
            self.state_indices_tensor_d = torch.zeros(max_bs, dtype=torch.int32)

        def build(self, common: CommonAttentionMetadata, state_indices: torch.Tensor) -> M:
            metadata = self.metadata_cls(
                num_reqs=common.num_reqs,
                num_decodes=common.num_decodes,
                state_indices_tensor_d=state_indices,
            )
            return self._for_cudagraph(metadata)

        def _for_cudagraph(self, metadata: M) -> M:
            padded_bs = metadata.num_reqs
            self.state_indices_tensor_d[: metadata.num_decodes].copy_(metadata.state_indices_tensor_d)
            state_indices_tensor_d = self.state_indices_tensor_d[:padded_bs]
    {FILL}
            return replace(metadata, state_indices_tensor_d=state_indices_tensor_d)


    class Mamba2Builder(BaseMambaBuilder[Mamba2AttentionMetadata]):
        metadata_cls = Mamba2AttentionMetadata
    ''')

_FILL = "        state_indices_tensor_d[metadata.num_decodes :] = NULL_BLOCK_ID"


def _check(tmp_path, text: str):
    p = tmp_path / "mamba_builder.py"
    p.write_text(text, encoding="utf-8")
    res = check_project([Source(str(p), text)], load_profile("vllm"))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


def test_padding_rows_filled_with_the_null_block_are_quiet(tmp_path):
    assert _check(tmp_path, _MODULE.replace("{FILL}", _FILL)) == []


def test_without_the_fill_the_padding_rows_are_stale(tmp_path):
    found = _check(tmp_path, _MODULE.replace("{FILL}\n", ""))
    assert [(f.code, f.field) for f in found] == [("PAD001", "state_indices_tensor_d")]
    assert "self.metadata_cls" in found[0].message or "replace" in found[0].message


def test_a_method_of_that_name_is_not_a_constructor(tmp_path):
    # `self.make(...)` where `make` is a method: followed as a call, not taken for a class
    text = _MODULE.replace("{FILL}\n", "").replace("metadata = self.metadata_cls(", "metadata = self.make(")
    text = text.replace("    def _for_cudagraph(", "    def make(self, **kw):\n        return None\n\n    def _for_cudagraph(")
    assert _check(tmp_path, text) == []


def test_the_prefilter_keeps_a_module_that_only_names_a_metadata_class():
    # vLLM 0.33.0's mamba_attn.py calls `self.metadata_cls(...)` and mentions its metadata
    # classes only in a TypeVar bound and annotations: it must still be parsed
    from padlint.prefilter import build_prefilter

    pre = build_prefilter(load_profile("vllm"))
    assert pre.may_matter('M = TypeVar("M", bound="BaseMambaAttentionMetadata")\nx = self.metadata_cls(a=1)\n')
    assert not pre.may_matter("x = self.metadata_cls(a=1)\n")  # nothing of the profile's at all
