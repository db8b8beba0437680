"""PAD002 on the real vLLM 0.33.0 model runner: the 0.19.1 block-table bug, re-introduced.

vLLM 0.19.1 filled the padding rows of the block table with -1 (PAD_SLOT_ID,
a slot sentinel) in `GPUModelRunner._build_attention_metadata`; vLLM PR 35431
(0.20.0) writes `NULL_BLOCK_ID` (0), which 0.33.0 still does:

    blk_table_tensor[num_reqs:num_reqs_padded].fill_(NULL_BLOCK_ID)

vLLM 0.19.x is not on the package registry here, so the real buggy release
cannot be checked.  Instead the 0.33.0 source is checked as released (no
PAD002: NULL_BLOCK_ID is the block table's neutral value) and with that one
line reverted to 0.19.1's `fill_(-1)` (text only, analysed in place of the
file: the rest of the package is read from disk): exactly one PAD002, at that
line, field `block_table_tensor`, with the replacement of `-1` by
`NULL_BLOCK_ID` (imported by the module) as its fix.  The PAD001 findings of
the file are the same in both runs (the fill covers the rows either way).
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

from .test_vllm_real import corpus_cache

pytestmark = pytest.mark.corpus

FILL = "blk_table_tensor[num_reqs:num_reqs_padded].fill_(NULL_BLOCK_ID)"


@pytest.fixture(scope="module")
def runner():
    if not corpus_cache.is_extracted("0.33.0"):
        pytest.skip("vLLM 0.33.0 is not in the corpus cache (make corpus)")
    path = corpus_cache.runner_path("0.33.0")
    return path, path.read_text(encoding="utf-8")


def test_block_table_fill_released_and_reverted(runner):
    path, source = runner
    assert source.count(FILL) == 1
    profile = load_profile("vllm")
    released = check_source(source, str(path), profile)
    assert [f for f in released if f.code == "PAD002"] == []

    reverted = source.replace(FILL, FILL.replace("NULL_BLOCK_ID", "-1"))
    found = check_source(reverted, str(path), profile)
    pad002 = [f for f in found if f.code == "PAD002"]
    line = next(i for i, text in enumerate(reverted.splitlines(), 1) if "[num_reqs:num_reqs_padded].fill_(-1)" in text)
    assert [(f.line, f.field) for f in pad002] == [(line, "block_table_tensor")]
    f = pad002[0]
    assert (f.fix.old, f.fix.text) == ("-1", "NULL_BLOCK_ID")
    assert "NULL_BLOCK_ID (0)" in f.message
    key = lambda fs: sorted((x.line, x.field) for x in fs if x.code == "PAD001")  # noqa: E731
    assert key(found) == key(released)
