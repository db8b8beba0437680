"""The device path (fused reduction, deferred or one sync) and capture handling, exercised on CPU tensors.

``Checker.force_device_path`` sends CPU tensors down the path CUDA tensors
take, and ``Checker.capturing`` stands in for
``torch.cuda.is_current_stream_capturing()``; the CUDA-only parts (pinned
copy, event) run in tests/runtime/test_cuda.py on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import make_runner
from hypothesis import given, settings
from hypothesis import strategies as st
from toy_common import prepare_stale_step

from padlint.runtime import StalePaddingError, checks
from padlint.runtime.spec import FLAT


def _stale_scenario(runner):
    """See test_toy_runner._scenario: step 2 has padding row 3 stale in is_prefilling and seq_lens."""
    prepare_stale_step(runner)


def test_deferred_policy_reports_later_without_host_sync(install_toy):
    """Deferred: nothing is read back at construction; the packed result is read when ready
    (here at the provider's return: a CPU "device" has no event to wait for)."""
    chk = install_toy("buggy", "strict", cuda_policy="deferred")
    chk.force_device_path = True
    runner = make_runner("buggy")
    _stale_scenario(runner)
    with pytest.raises(StalePaddingError) as info:
        runner.execute_model()
    assert {v.field: v.rows for v in info.value.violations} == {"is_prefilling": (3,), "seq_lens": (3,)}
    v = info.value.violations[0]
    assert "deferred device check" in v.when and "toy_runner_buggy.py" in v.constructed_at
    assert "in execute_model" in v.provider_stack
    assert chk.stats.host_syncs == 0 and chk.stats.pending == 0


def test_deferred_results_wait_for_flush_outside_a_provider(install_toy):
    chk = install_toy("buggy", "strict", cuda_policy="deferred")
    chk.force_device_path = True
    runner = make_runner("buggy")
    _stale_scenario(runner)
    with chk.suspended():
        meta, _ = runner.execute_model()
    counts = chk._infer_counts(meta)  # query_start_loc_cpu [0, 1, 5, 6, 6]: 3 real requests
    assert chk.check_object(meta, counts) == []  # packed, not read
    assert chk.stats.pending == 1
    with pytest.raises(StalePaddingError) as info:
        chk.flush()
    assert {v.field: v.rows for v in info.value.violations} == {"is_prefilling": (3,), "seq_lens": (3,)}


def test_sync_policy_one_sync_per_object(install_toy):
    chk = install_toy("fixed", "strict", cuda_policy="sync")
    chk.force_device_path = True
    runner = make_runner("fixed")
    _stale_scenario(runner)
    runner.execute_model()
    # step 1 had padding rows only on the token axis (10 tokens of 16), step 2 on both: 2 objects, 2 syncs
    assert chk.stats.host_syncs == 2
    assert chk.stats.violations == []


def test_sync_policy_raises_at_construction(install_toy):
    chk = install_toy("buggy", "strict", cuda_policy="sync")
    chk.force_device_path = True
    runner = make_runner("buggy")
    _stale_scenario(runner)
    with pytest.raises(StalePaddingError) as info:
        runner.execute_model()
    assert {v.field for v in info.value.violations} == {"is_prefilling", "seq_lens"}


def test_during_capture_device_fields_are_skipped_and_counted(install_toy):
    chk = install_toy("buggy", "strict", cuda_policy="sync")
    chk.force_device_path = True
    chk.capturing = lambda: True
    runner = make_runner("buggy")
    _stale_scenario(runner)
    runner.execute_model()  # nothing raised: nothing checkable
    # step 1: slot_mapping, positions have padding; step 2: 7 fields (see test_toy_runner)
    assert chk.stats.skipped_capture == 2 + 7
    assert chk.stats.fields_checked == 0 and chk.stats.host_syncs == 0
    assert "9 skipped during capture" in chk.stats.line()


def test_capture_probe_is_safe_on_cpu_only_torch():
    assert checks.stream_is_capturing() is False


def _reference(values, start, stop, neutral):
    """Plain-Python answer: rows of a 1-D list that differ from neutral (or from values[start-1] when flat)."""
    v = values[start - 1] if neutral is FLAT else neutral
    return [i for i in range(start, stop) if values[i] != v]


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.integers(min_value=-3, max_value=3), min_size=2, max_size=40),
       data=st.data(), neutral=st.sampled_from([0, -1, 1, FLAT]))
def test_fused_pack_agrees_with_reference(values, data, neutral):
    n = len(values)
    start = data.draw(st.integers(min_value=1, max_value=n - 1))
    t = torch.tensor(values, dtype=torch.int32)
    expected = _reference(values, start, n, neutral)
    packed = checks.pack_device_checks([(t, start, n, neutral)], max_rows=4)
    ((rows, vals, num_bad),) = checks.unpack_device_checks(packed, [(t, start, n, neutral)], max_rows=4)
    assert num_bad == len(expected)
    assert list(rows) == expected[:4]
    assert list(vals) == [values[i] for i in expected[:4]]
    # the CPU path and the detail path agree with it
    assert checks.cpu_has_stale(t.numpy(), start, n, neutral) == bool(expected)
    assert checks.find_stale_rows(t, start, n, neutral, max_rows=4) == (tuple(expected[:4]),
                                                                         tuple(values[i] for i in expected[:4]),
                                                                         len(expected))


def test_fused_pack_two_dimensional_and_bool():
    table = torch.zeros(5, 3, dtype=torch.int32)
    table[4, 1] = 9
    mask = torch.tensor([True, False, False, True])
    items = [(table, 2, 5, 0), (mask, 1, 4, False)]
    out = checks.unpack_device_checks(checks.pack_device_checks(items), items)
    assert out == [((4,), (9,), 1), ((3,), (True,), 1)]
    assert np.asarray(checks.pack_device_checks(items)).dtype == np.float64


def test_explicit_check_padding_on_the_device_path_costs_one_sync(install_toy):
    """check_padding on a device tensor: the fused reduction and one copy (not find_stale_rows'
    nonzero + two copies), with the same rows and values as the CPU path, on any axis."""
    from padlint.runtime import check_padding

    chk = install_toy("buggy", "record")
    chk.force_device_path = True
    seq_lens = torch.tensor([4, 2, 0, 7, 0, 9], dtype=torch.int32)   # real 2: rows 3 and 5 stale
    table = torch.zeros(2, 6, dtype=torch.int32)
    table[1, 4] = 5                                                   # axis 1 from column 3: column 4 stale
    before = chk.stats.host_syncs
    (v,) = check_padding(seq_lens, 2, 0, name="seq_lens", mode="record")
    assert (v.rows, v.values, v.num_bad) == ((3, 5), (7, 9), 2)
    (w,) = check_padding(table, 3, 0, axis=1, name="block_table_tensor", mode="record")
    assert (w.rows, w.values, w.num_bad) == ((4,), (5,), 1)
    assert chk.stats.host_syncs - before == 2  # one per call
    chk.force_device_path = False  # the CPU path agrees
    assert check_padding(seq_lens, 2, 0, name="seq_lens", mode="record")[0].rows == (3, 5)


_DTYPES = [torch.int8, torch.bool, torch.int32, torch.int64, torch.float32, torch.float16, torch.bfloat16]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_byte_gather_host_test_agrees_with_torch(data):
    """The device path's host side: each field of one gathered byte buffer tested with the
    field's numpy padding-slice test (a view of the host copy) must give what torch's
    find_stale_rows gives on the field itself, for fields at unaligned byte offsets (an int8
    or bool field before an int64 one), 2-D rows, floats (-0.0 equals 0, NaN differs), a
    dtype numpy cannot view (bfloat16: torch only) and FLAT offsets."""
    items, tests = [], []
    for _ in range(data.draw(st.integers(1, 4))):
        dtype = data.draw(st.sampled_from(_DTYPES))
        n = data.draw(st.integers(2, 12))
        width = data.draw(st.sampled_from([None, 1, 3]))
        if dtype == torch.bool:
            pool = st.sampled_from([0.0, 1.0])
        elif dtype.is_floating_point:
            pool = st.sampled_from([0.0, -0.0, 1.0, -1.0, float("nan"), 2.5])
        else:
            pool = st.integers(-2, 2)
        shape = (n,) if width is None else (n, width)
        values = data.draw(st.lists(pool, min_size=n * (width or 1), max_size=n * (width or 1)))
        t = torch.tensor(values).reshape(shape).to(dtype)
        neutral = data.draw(st.sampled_from([0, -1, 1, FLAT] if dtype != torch.bool else [False, True, FLAT]))
        start = data.draw(st.integers(1, n - 1))
        items.append((t, start, n, neutral))
        tests.append(checks.stale_test(neutral))
    packed, layout = checks.pack_device_rows(items)
    expected = [checks.find_stale_rows(t, s, e, v) for t, s, e, v in items]
    as_str = lambda out: [(r, tuple(map(str, v)), k) for r, v, k in out]  # NaN == NaN as text
    assert as_str(checks.unpack_device_rows(packed, layout, items, tests=tests)) == as_str(expected)
    assert as_str(checks.unpack_device_rows(packed, layout, items)) == as_str(expected)


def test_deferred_stack_is_the_stack_the_sync_policy_reports(install_toy):
    """The deferred path keeps (file, line, function) of the provider's frames and formats them
    only when it reports: the text is the one the sync policy formats at construction (with
    each frame's source line), not the frames' state at the later flush."""
    stacks = {}
    for policy in ("sync", "deferred"):
        chk = install_toy("buggy", "record", cuda_policy=policy)
        chk.force_device_path = True
        runner = make_runner("buggy")
        _stale_scenario(runner)
        runner.execute_model()
        chk.flush()
        (v,) = [v for v in chk.stats.violations if v.field == "seq_lens"]
        stacks[policy] = v.provider_stack
        import padlint.runtime as pr
        pr.uninstall()
    assert stacks["sync"] == stacks["deferred"]
    # the stack of the provider's call: its caller's frame last, with the source line of the call
    assert stacks["deferred"].rstrip().endswith("attn_metadata = self._build_attention_metadata(num_reqs, "
                                                "num_reqs_padded, num_tokens, num_tokens_padded)")
    assert "in execute_model" in stacks["deferred"]
