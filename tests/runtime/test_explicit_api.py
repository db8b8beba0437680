"""check_padding / check_metadata: the API an engine calls itself.

Every call passes ``mode`` so that it uses its own mode, not the one the
pytest plugin installs when ``PADLINT_RUNTIME`` is set.  An explicit check
adds to the installed checker's tally (see test_api_tally.py), except in a
``padlint_off`` test: these tests expect violations, which must not count in
that session's tally, so the module is marked ``padlint_off``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from toy_common import CommonAttentionMetadata

from padlint.runtime import StalePaddingError, check_metadata, check_padding

pytestmark = pytest.mark.padlint_off


def test_bool_mask_padding_rows_must_be_false():
    mask = torch.tensor([True, False, True, False, True, False])
    # real 3: rows [3:6) = [False, True, False]: row 4 is stale
    with pytest.raises(StalePaddingError) as info:
        check_padding(mask, 3, False, name="is_prefilling", mode="strict")
    (v,) = info.value.violations
    assert (v.rows, v.values, v.num_bad) == ((4,), (True,), 1)
    assert (v.start, v.stop) == (3, 6)
    assert isinstance(info.value, AssertionError)
    # real 5: only row 5 is padding, and it is False
    assert check_padding(mask, 5, False, name="is_prefilling", mode="strict") == []


def test_pad_slot_id_and_values_listed():
    slots = torch.tensor([10, 11, 12, -1, 7, -1, 9], dtype=torch.int64)
    found = check_padding(slots, 3, -1, name="slot_mapping", mode="record")
    assert len(found) == 1
    assert found[0].rows == (4, 6) and found[0].values == (7, 9) and found[0].num_bad == 2
    assert "slot_mapping[3:7] = -1" in found[0].fix


def test_flat_cumulative_offsets():
    # 2 real requests with 3 and 2 tokens: [0, 3, 5]; padding entries must all be 5
    qsl = torch.tensor([0, 3, 5, 5, 5], dtype=torch.int32)
    assert check_padding(qsl, 3, "flat", name="query_start_loc", mode="strict") == []
    stale = torch.tensor([0, 3, 5, 6, 5], dtype=torch.int32)
    (v,) = check_padding(stale, 3, "flat", name="query_start_loc", mode="record")
    assert v.rows == (3,) and v.values == (6,)


def test_two_dimensional_block_table_rows_and_first_bad_entry():
    table = torch.zeros(4, 3, dtype=torch.int32)
    table[:2] = torch.tensor([[5, 6, 7], [8, 9, 0]])
    table[3, 2] = 42  # padding row 3, column 2
    (v,) = check_padding(table, 2, 0, name="block_table_tensor", mode="record")
    assert v.rows == (3,) and v.values == (42,)


def test_axis_one_and_num_padded():
    t = torch.zeros(2, 6, dtype=torch.int32)
    t[1, 4] = 3
    (v,) = check_padding(t, 3, 0, axis=1, name="x", mode="record")
    assert v.rows == (4,)
    # columns [3:4) only: clean
    assert check_padding(t, 3, 0, axis=1, num_padded=4, name="x", mode="record") == []


def test_numpy_array_and_no_padding():
    a = np.array([1, 2, 0, 3], dtype=np.int32)
    (v,) = check_padding(a, 2, 0, name="seq_lens", mode="record")
    assert v.rows == (3,) and v.values == (3,)
    assert check_padding(a, 4, 0, name="seq_lens", mode="strict") == []  # real == padded: nothing to check


def test_off_mode_checks_nothing():
    assert check_padding(torch.ones(4), 1, 0, name="x", mode="off") == []


def _meta(seq_lens, qsl, slots):
    seq = torch.tensor(seq_lens, dtype=torch.int32)
    q = torch.tensor(qsl, dtype=torch.int32)
    return CommonAttentionMetadata(
        query_start_loc=q.clone(), query_start_loc_cpu=q, seq_lens=seq, num_reqs=len(seq_lens),
        num_actual_tokens=len(slots), max_query_len=4, max_seq_len=8,
        block_table_tensor=torch.zeros(len(seq_lens), 2, dtype=torch.int32),
        slot_mapping=torch.tensor(slots, dtype=torch.int64))


def test_check_metadata_with_explicit_counts():
    # 2 real requests of 4 padded; 3 real tokens of 4 padded
    meta = _meta([5, 6, 0, 9], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    found = check_metadata(meta, num_reqs=(2, 4), num_tokens=(3, 4), mode="record")
    assert {v.field: v.rows for v in found} == {"seq_lens": (3,), "slot_mapping": (3,)}


def test_check_metadata_infers_padding_from_query_start_loc():
    # query lengths [2, 1, 0, 0]: the trailing two requests are padding, 3 real tokens;
    # seq_lens row 2 holds 7 (stale); slot_mapping row 3 (a padding token) holds 17.
    meta = _meta([5, 6, 7, 0], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    found = check_metadata(meta, mode="record")
    assert {v.field: v.rows for v in found} == {"seq_lens": (2,), "slot_mapping": (3,)}
    assert "inferred from query_start_loc_cpu" in found[0].counts_from


def test_check_metadata_strict_raises_one_error_for_all_fields():
    meta = _meta([5, 6, 7, 0], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    with pytest.raises(StalePaddingError) as info:
        check_metadata(meta, num_reqs=(2, 4), num_tokens=(3, 4), mode="strict")
    assert {v.field for v in info.value.violations} == {"seq_lens", "slot_mapping"}
    assert "test_explicit_api.py" in info.value.violations[0].constructed_at


def test_checker_cpu_path_uses_checks_stale_test(monkeypatch):
    """The checker's CPU path decides through checks.stale_test (one implementation of the
    padding-slice test, also behind checks.cpu_has_stale), bound once per profile field and
    called once per field with padding rows: (start, stop, neutral)."""
    from padlint.runtime import checks

    calls = []
    real = checks.stale_test

    def spy(neutral, axis=0):
        test = real(neutral, axis)

        def recorded(a, start, stop):
            calls.append((start, stop, repr(neutral)))
            return test(a, start, stop)
        return recorded

    monkeypatch.setattr(checks, "stale_test", spy)
    meta = _meta([5, 6, 0, 9], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    found = check_metadata(meta, num_reqs=(2, 4), num_tokens=(3, 4), mode="record")
    assert {v.field: v.rows for v in found} == {"seq_lens": (3,), "slot_mapping": (3,)}
    # seq_lens and block_table_tensor: reqs rows [2:4) against 0 (NULL_BLOCK_ID = 0);
    # query_start_loc and its CPU copy: reqs+1 rows [3:5) flat; slot_mapping: tokens row [3:4) against -1
    assert sorted(calls) == [(2, 4, "0"), (2, 4, "0"), (3, 4, "-1"), (3, 5, "flat"), (3, 5, "flat")]


# -- bad input: one clear exception naming the argument, never a torch error or a silent pass --

@pytest.mark.parametrize("num_real, error, text", [
    (-1, ValueError, "num_real must be >= 0, got -1"),          # would slice from the end
    (5, ValueError, "num_real=5 is above the padded count 4"),  # more real rows than the tensor has
    (1.0, TypeError, "num_real must be an integer .*got float 1.0"),
])
def test_check_padding_rejects_bad_counts(num_real, error, text):
    with pytest.raises(error, match=text):
        check_padding(torch.tensor([0, 0, 0, 5]), num_real, 0, name="seq_lens", mode="strict")


def test_integer_like_counts_become_plain_ints_in_the_violation():
    for real in (np.int64(2), torch.tensor(2)):
        (v,) = check_padding(torch.tensor([1, 2, 0, 5]), real, 0, name="seq_lens", mode="record")
        assert type(v.real) is int and v.real == 2 and v.rows == (3,) and type(v.rows[0]) is int


@pytest.mark.parametrize("tensor, kwargs, error, text", [
    (torch.tensor(3), {}, ValueError, "0-d tensor"),
    (torch.zeros(4, device="meta"), {}, ValueError, "meta tensor has no values"),
    (np.array([1, None, 3], dtype=object), {}, TypeError, "numpy dtype object holds no numbers"),
    (torch.tensor([0, 0, 5]).to_sparse(), {}, TypeError, "only dense .strided. tensors"),
    (torch.zeros(4), {"axis": 0.0}, TypeError, "axis must be an integer, got 0.0"),
    (torch.zeros(4), {"axis": True}, TypeError, "axis must be an integer, got True"),
    (torch.zeros(4), {"name": None}, TypeError, "name must be a non-empty string"),
    (torch.zeros(4), {"neutral": np.datetime64("2020-01-01")}, TypeError, "neutral value"),
    ([1, 2], {}, TypeError, "expected a torch.Tensor or numpy.ndarray, got list"),
    (torch.zeros(2, 3), {"axis": 2}, ValueError, "axis 2 is out of range for a 2-D tensor"),
    (torch.zeros(4), {"neutral": None}, TypeError, "neutral value None"),
    (torch.zeros(4), {"neutral": "0"}, ValueError, "neutral value '0'"),
])
def test_check_padding_rejects_bad_tensors_and_neutral_values(tensor, kwargs, error, text):
    kwargs = dict(kwargs)
    neutral = kwargs.pop("neutral", 0)
    with pytest.raises(error, match=text):
        check_padding(tensor, 1, neutral, mode="strict", **kwargs)


def test_a_bool_is_not_a_row_count():
    with pytest.raises(TypeError, match="num_real must be an integer .*got bool True"):
        check_padding(torch.zeros(4), True, 0, mode="strict")


def test_largest_int64_neutral_is_compared_exactly_on_every_path():
    """float(2**63 - 1) rounds up to 2**63: the dtype check must not go through float."""
    from padlint.runtime import checks

    big = 2**63 - 1
    t = torch.full((4,), big)
    assert check_padding(t, 1, big, mode="strict") == []
    assert checks.find_stale_rows(t, 1, 4, big) == ((), (), 0)
    items = [(t, 1, 4, big)]
    assert checks.unpack_device_checks(checks.pack_device_checks(items), items)[0][2] == 0


def test_flat_is_accepted_in_any_case():
    qsl = torch.tensor([0, 2, 5, 5, 5], dtype=torch.int32)
    assert check_padding(qsl, 3, "FLAT", name="query_start_loc", mode="strict") == []


def test_fix_indexes_the_checked_axis():
    # block table [3 requests, 4 blocks] checked on axis 1 from column 2: column 3 of row 0 is stale
    table = torch.zeros(3, 4, dtype=torch.int32)
    table[0, 3] = 7
    (v,) = check_padding(table, 2, 0, axis=1, name="block_table_tensor", mode="record")
    assert v.fix == "block_table_tensor[:, 2:4] = 0"
    offsets = torch.tensor([[0, 3, 3, 9]])
    (v,) = check_padding(offsets, 2, "flat", axis=-1, name="x", mode="record")
    assert v.fix == "x[:, 2:4] = x[:, 1]"


def test_dotted_name_is_owner_and_field_and_takes_the_profile_reason():
    (v,) = check_padding(torch.tensor([1, 2, 0, 5]), 2, 0, name="CommonAttentionMetadata.seq_lens", mode="record")
    assert (v.owner, v.field) == ("CommonAttentionMetadata", "seq_lens")
    assert "CommonAttentionMetadata.seq_lens.CommonAttentionMetadata" not in str(StalePaddingError([v]))
    assert "length 0" in v.why  # rules/vllm.toml [fields.seq_lens] why


def test_neutral_value_the_dtype_cannot_hold_reports_every_row_with_its_value():
    # PAD_SLOT_ID = -1 cannot be stored in uint8: 255 is not -1, on every path
    slots = torch.tensor([3, 4, 255, 255], dtype=torch.uint8)
    (v,) = check_padding(slots, 2, -1, name="slot_mapping", mode="record")
    assert (v.rows, v.values, v.num_bad) == ((2, 3), (255, 255), 2)


def test_check_metadata_without_counts_it_can_infer_is_an_error():
    meta = _meta([5, 6, 0, 9], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    meta.query_start_loc_cpu = None
    meta.query_start_loc = None
    with pytest.raises(ValueError, match="cannot tell the real counts of CommonAttentionMetadata"):
        check_metadata(meta, mode="strict")


def test_check_metadata_count_pairs():
    meta = _meta([5, 6, 0, 9], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    # padded None: not padded (vLLM passes num_reqs_padded=None outside full CUDA graphs)
    assert check_metadata(meta, num_reqs=(4, None), num_tokens=(4, None), mode="strict") == []
    with pytest.raises(ValueError, match="num_reqs: padded count 3 is below the real count 4"):
        check_metadata(meta, num_reqs=(4, 3), mode="strict")
    with pytest.raises(ValueError, match=r"num_tokens: expected \(real, padded\)"):
        check_metadata(meta, num_tokens=(1, 2, 3), mode="strict")


@pytest.mark.parametrize("obj, text", [(None, "got None"), ({"layer.0": 1}, "per-layer dict"),
                                       ([1, 2], "got list .for a per-layer dict or a list of micro-batches")])
def test_check_metadata_needs_one_object(obj, text):
    with pytest.raises(TypeError, match=text):
        check_metadata(obj, mode="strict")


def test_check_metadata_on_an_object_without_profile_fields_is_an_error():
    with pytest.raises(ValueError, match="object has none of the profile's fields"):
        check_metadata(object(), num_reqs=(3, 4), mode="strict")


def test_check_metadata_counts_that_fit_no_field_are_an_error():
    """seq_lens has 4 rows: num_reqs=(3, 5) fits neither its real nor its padded count, so
    its stale row 3 would otherwise go unexamined and the call pass."""
    meta = _meta([5, 6, 7, 9], [0, 2, 3, 4, 4], [4, 5, 6, 17])
    with pytest.raises(ValueError, match="seq_lens has 4 rows, but the counts given say 5"):
        check_metadata(meta, num_reqs=(3, 5), num_tokens=(4, 4), mode="record")


def test_check_metadata_infers_the_axis_not_given():
    """Only num_tokens given: the request axis is inferred from query_start_loc_cpu
    ([0, 2, 3, 3, 3]: 2 real requests), so the stale seq_lens rows are still seen."""
    meta = _meta([5, 6, 7, 9], [0, 2, 3, 3, 3], [4, 5, 6, 17])
    found = check_metadata(meta, num_tokens=(3, 4), mode="record")
    assert {v.field: v.rows for v in found} == {"seq_lens": (2, 3), "slot_mapping": (3,)}


def test_check_metadata_takes_another_profile():
    """profile= selects the fields: SGLang's out_cache_loc (neutral 0) is not a vLLM field."""
    from types import SimpleNamespace

    sg = SimpleNamespace(out_cache_loc=torch.tensor([1, 2, 9]))
    with pytest.raises(ValueError, match="none of the profile's fields"):
        check_metadata(sg, num_reqs=(2, 3), num_tokens=(2, 3), mode="record")
    (v,) = check_metadata(sg, num_reqs=(2, 3), num_tokens=(2, 3), mode="record", profile="sglang")
    assert (v.field, v.rows, v.values) == ("out_cache_loc", (2,), (9,))
    with pytest.raises(ValueError, match="unknown profile 'nope'"):
        check_metadata(sg, num_reqs=(2, 3), mode="record", profile="nope")


def test_check_metadata_real_count_above_the_rows_or_not_padded_with_padding_rows_is_an_error():
    """(3, None) says "not padded", but seq_lens has a 4th row (a stale 9); a real count of 5
    is above its 4 rows.  Both used to pass silently."""
    meta = _meta([5, 6, 7, 9], [0, 2, 3, 4, 4], [4, 5, 6, 17])
    with pytest.raises(ValueError, match="seq_lens has 4 rows, but the counts given say 3"):
        check_metadata(meta, num_reqs=(3, None), num_tokens=(4, None), mode="record")
    with pytest.raises(ValueError, match="seq_lens has 4 rows, but the counts given say 5"):
        check_metadata(meta, num_reqs=5, num_tokens=4, mode="record")


def test_a_count_that_is_neither_an_int_nor_a_pair_says_both_are_accepted():
    meta = _meta([5, 6, 7, 9], [0, 2, 3, 4, 4], [4, 5, 6, 17])
    with pytest.raises(TypeError, match=r"num_reqs must be an integer .* \(or a \(real, padded\) pair\)"):
        check_metadata(meta, num_reqs=np.array([3, 4]), mode="record")
