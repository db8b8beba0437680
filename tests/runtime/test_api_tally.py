"""The explicit API with hooks installed: an explicit ``mode`` still counts in the installed tally.

``check_padding``/``check_metadata`` with ``mode=...`` use their own mode
(and the ``sync`` CUDA policy) but, as their docstrings say, add what they
check and find to the installed checker's ``stats`` (the pytest summary
line and record-mode session failure read that tally).
"""

from __future__ import annotations

import pytest
import torch
from toy_common import CommonAttentionMetadata

import padlint.runtime as pr
from padlint.runtime import StalePaddingError, check_metadata, check_padding


def _meta():
    # 2 real requests of 4 padded, 3 real tokens of 4 padded:
    # seq_lens row 3 holds 9 (stale; row 2 holds 0), slot_mapping row 3 holds 17 (stale, not -1);
    # query_start_loc [0, 2, 3, 3, 3] is flat past the real offsets, the block table is all 0.
    q = torch.tensor([0, 2, 3, 3, 3], dtype=torch.int32)
    return CommonAttentionMetadata(
        query_start_loc=q.clone(), query_start_loc_cpu=q, seq_lens=torch.tensor([5, 6, 0, 9], dtype=torch.int32),
        num_reqs=4, num_actual_tokens=4, max_query_len=2, max_seq_len=9,
        block_table_tensor=torch.zeros(4, 2, dtype=torch.int32),
        slot_mapping=torch.tensor([4, 5, 6, 17], dtype=torch.int64))


def test_check_padding_record_mode_adds_to_the_installed_tally(install_toy):
    chk = install_toy("fixed", "strict")
    found = check_padding(torch.tensor([1, 2, 3, 7], dtype=torch.int32), 3, 0, name="seq_lens", mode="record")
    assert [(v.rows, v.values) for v in found] == [((3,), (7,))]  # record mode: returned, not raised
    assert chk.stats.violations == found
    assert (chk.stats.objects_checked, chk.stats.fields_checked) == (1, 1)
    assert pr.summary() is chk.stats


def test_check_padding_strict_mode_raises_and_is_tallied(install_toy):
    chk = install_toy("fixed", "record")
    with pytest.raises(StalePaddingError) as info:
        check_padding(torch.tensor([True, False, True]), 2, False, name="is_prefilling", mode="strict")
    assert chk.stats.violations == list(info.value.violations)
    assert [(v.rows, v.values) for v in chk.stats.violations] == [((2,), (True,))]


def test_check_metadata_record_mode_adds_to_the_installed_tally(install_toy):
    chk = install_toy("fixed", "strict")
    with chk.suspended():  # built unchecked (the hooked __init__ would infer counts and raise)
        meta = _meta()
    found = check_metadata(meta, num_reqs=(2, 4), num_tokens=(3, 4), mode="record")
    assert {v.field: (v.rows, v.values) for v in found} == {"seq_lens": ((3,), (9,)),
                                                           "slot_mapping": ((3,), (17,))}
    assert chk.stats.violations == found
    # one object; fields with padding rows: query_start_loc, query_start_loc_cpu, seq_lens,
    # block_table_tensor, slot_mapping (positions and is_prefilling are None)
    assert (chk.stats.objects_checked, chk.stats.fields_checked) == (1, 5)


def test_explicit_checks_in_a_suspended_thread_keep_their_own_tally(install_toy):
    """Inside ``suspended()`` (the pytest ``padlint_off`` marker) an explicit check with a mode
    still runs, but does not count in the installed tally."""
    chk = install_toy("fixed", "strict")
    with chk.suspended():
        found = check_padding(torch.tensor([1, 2, 3, 7], dtype=torch.int32), 3, 0, name="seq_lens", mode="record")
    assert [v.rows for v in found] == [(3,)]
    assert chk.stats.violations == [] and chk.stats.objects_checked == 0
