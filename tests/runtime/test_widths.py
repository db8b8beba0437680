"""Row counts of one metadata object's fields agree per axis (the runtime half of PAD004 (b)).

At construction the checker groups the profile fields of the object that hold a
tensor by axis (request rows: ``reqs`` and ``reqs+1`` without its leading entry;
token rows: ``tokens``) and reports each field whose length differs from the
one most fields of its axis have.  No step counts are needed.  The toy
CommonAttentionMetadata (fixtures/runtime/toy_common.py) is hooked with no
provider; every tensor here holds neutral padding values, so the only possible
violations are the row-count ones.
"""

from __future__ import annotations

import pytest
import torch
from conftest import META
from toy_common import CommonAttentionMetadata

from padlint.runtime import StalePaddingError


def _meta(reqs: int = 4, tokens: int = 8, **override):
    """A well-formed object: 2 real requests of 1 token, padded to ``reqs`` requests and
    ``tokens`` tokens; ``override`` replaces fields (tensors of other lengths)."""
    qsl = torch.tensor([0, 1, 2] + [2] * (reqs - 2), dtype=torch.int32)   # reqs + 1 entries, flat padding
    fields = dict(
        query_start_loc=qsl, query_start_loc_cpu=qsl.clone(),
        seq_lens=torch.tensor([5, 6] + [0] * (reqs - 2), dtype=torch.int32),
        num_reqs=reqs, num_actual_tokens=tokens, max_query_len=1, max_seq_len=6,
        block_table_tensor=torch.zeros(reqs, 3, dtype=torch.int32),
        slot_mapping=torch.tensor([10, 11] + [-1] * (tokens - 2), dtype=torch.int64),
        positions=torch.zeros(tokens, dtype=torch.int64),
    )
    fields.update(override)
    return CommonAttentionMetadata(**fields)


def test_agreeing_widths_pass_with_offsets_and_two_axes(install_toy):
    # request fields: qsl 5 entries (4 + the leading one), seq_lens 4, block table 4 rows;
    # token fields: slot_mapping 8, positions 8: two axes, each consistent
    install_toy("buggy", mode="strict", provider=None, classes=[META])
    _meta()


def test_request_field_at_the_real_count_is_reported(install_toy):
    # seq_lens has 2 rows (the real count) beside a 4-row block table and a 5-entry qsl
    # (4 requests + 1): the request axis says 4, seq_lens disagrees
    install_toy("buggy", mode="strict", provider=None, classes=[META])
    with pytest.raises(StalePaddingError) as info:
        _meta(seq_lens=torch.tensor([5, 6], dtype=torch.int32))
    (v,) = info.value.violations
    assert (v.field, v.axis, v.real, v.padded) == ("seq_lens", "reqs", 2, 4)
    assert v.detail.startswith("2 request rows where the other request fields of this object have 4")
    assert "query_start_loc 4 (+1 leading offset)" in v.detail and "block_table_tensor 4" in v.detail
    assert v.when == "construction (row counts)"
    assert "seq_lens: 2 request rows" in str(info.value)


def test_token_field_mismatch_is_reported_separately(install_toy):
    # request fields agree (4); slot_mapping 8 vs positions 5: a tie of one field each,
    # the longest (8) is the object's width, positions is reported
    chk = install_toy("buggy", mode="record", provider=None, classes=[META])
    _meta(positions=torch.zeros(5, dtype=torch.int64))
    widths = [v for v in chk.stats.violations if v.when == "construction (row counts)"]
    assert [(v.field, v.real, v.padded, v.axis) for v in widths] == [("positions", 5, 8, "tokens")]


def test_request_and_token_axes_are_not_compared(install_toy):
    # 4 requests, 16 tokens: different lengths on different axes are no mismatch
    install_toy("buggy", mode="strict", provider=None, classes=[META])
    _meta(reqs=4, tokens=16)


def test_cumulative_offsets_one_longer_than_requests_are_not_a_mismatch(install_toy):
    # qsl with 4 + 1 entries and seq_lens with 5 rows would disagree (4 vs 5 requests):
    # the +1 is the leading offset, not a request
    chk = install_toy("buggy", mode="record", provider=None, classes=[META])
    _meta(seq_lens=torch.zeros(5, dtype=torch.int32), block_table_tensor=torch.zeros(5, 3, dtype=torch.int32))
    widths = [v for v in chk.stats.violations if v.when == "construction (row counts)"]
    # the majority is 5 (seq_lens, block table); the two offsets fields say 4
    assert sorted((v.field, v.real, v.padded) for v in widths) == [
        ("query_start_loc", 4, 5), ("query_start_loc_cpu", 4, 5)]


def test_none_and_exempt_fields_are_left_out(install_toy):
    # is_prefilling None and dcp_local_seq_lens None are not compared
    install_toy("buggy", mode="strict", provider=None, classes=[META])
    _meta(is_prefilling=None, dcp_local_seq_lens=None)


def test_attribute_store_does_not_compare_widths(install_toy):
    # an object built whole and consistent, then a field stored with another length:
    # stores happen one field at a time, so the row counts are compared at construction only
    chk = install_toy("buggy", mode="record", provider=None, classes=[META])
    m = _meta()
    m.seq_lens = torch.zeros(2, dtype=torch.int32)
    assert not [v for v in chk.stats.violations if "row counts" in v.when]
