"""The runtime checker on CUDA tensors and under CUDA graphs (capture, replay).

Marked ``cuda``: skipped without a GPU.  Run on an NVIDIA H200 on 2026-12-04
(all passed; ``scripts/gpu_check.sh``, docs/runtime.md "GPU check").  The CPU stand-ins of the same logic are in
test_device_path.py and test_poison.py.
"""

from __future__ import annotations

import pytest
import torch
from conftest import make_runner
from toy_common import prepare_stale_step

import padlint.runtime as pr
from padlint.runtime import StalePaddingError

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _stale_scenario(runner):
    """Step 1: A, B, C (prompt 2), D (prompt 10); B leaves; step 2 pads 3 requests to 4 and
    row 3 holds D's old values: is_prefilling[3] = True, seq_lens[3] = 4 in the buggy variant."""
    prepare_stale_step(runner)


def test_deferred_check_adds_no_host_sync(install_toy):
    chk = install_toy("buggy", "record", cuda_policy="deferred")
    runner = make_runner("buggy", device="cuda")
    _stale_scenario(runner)
    with chk.suspended():
        meta, _ = runner.execute_model()
    chk.flush()  # step 1's deferred results (clean), so only this object is pending below
    torch.cuda.synchronize()
    counts = pr.current_checker()._infer_counts(meta)  # from query_start_loc_cpu: real 3 of 4
    assert counts.num_reqs == 3
    torch.cuda.set_sync_debug_mode("error")  # any synchronising CUDA call raises
    try:
        found = chk.check_object(meta, counts)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    # is_prefilling is a CPU tensor: found at once; the device fields are pending, unsynchronised
    assert [v.field for v in found] == ["is_prefilling"]
    assert chk.stats.host_syncs == 0 and chk.stats.pending == 1
    chk.flush()
    # seq_lens is on the device (deferred); is_prefilling on the CPU (checked at once)
    assert {v.field: v.rows for v in chk.stats.violations} == {"is_prefilling": (3,), "seq_lens": (3,)}
    dev = next(v for v in chk.stats.violations if v.field == "seq_lens")
    assert dev.device.startswith("cuda") and dev.values == (4,)


def test_strict_deferred_raises_at_flush_with_rows(install_toy):
    chk = install_toy("buggy", "strict", cuda_policy="deferred")
    runner = make_runner("buggy", device="cuda")
    _stale_scenario(runner)
    with pytest.raises(StalePaddingError) as info:  # is_prefilling is a CPU tensor: raised at construction
        runner.execute_model()
    assert {v.field for v in info.value.violations} == {"is_prefilling"}
    with pytest.raises(StalePaddingError) as info:  # seq_lens: the deferred device result
        chk.flush()
    (v,) = info.value.violations
    assert v.field == "seq_lens" and v.rows == (3,) and v.values == (4,)


def test_sync_policy_one_sync_per_object(install_toy):
    chk = install_toy("fixed", "strict", cuda_policy="sync")
    runner = make_runner("fixed", device="cuda")
    _stale_scenario(runner)
    runner.execute_model()
    assert chk.stats.host_syncs == 2 and chk.stats.violations == []


def test_capture_skips_device_fields_and_replay_is_checked(install_toy):
    chk = install_toy("fixed", "record", cuda_policy="deferred")
    runner = make_runner("fixed", device="cuda")
    runner.slot_mapping.np.fill(-1)  # before any step the buffers hold zeros; slot_mapping's neutral is -1
    runner.slot_mapping.copy_to_gpu()
    # graphs for step 1 (3 requests of prompt 2: 6 tokens -> 4 requests, 8 tokens) and
    # step 2 (3 decodes: 3 tokens -> 4 requests, 4 tokens); captured with 1 real request
    runner.capture(1, 4, 1, 8)
    runner.capture(1, 4, 1, 4)
    # per capture: query_start_loc, seq_lens, block_table_tensor, slot_mapping, positions are
    # device fields with padding rows: 5 skipped; is_prefilling, query_start_loc_cpu are CPU: checked
    assert chk.stats.skipped_capture == 2 * 5
    runner.use_cuda_graphs = True
    for rid in "ABC":
        runner.add_request(rid, 2)
    outs = [runner.execute_model()[1] for _ in range(2)]
    chk.flush()
    assert [(n, o.tolist()) for n, o in outs] == [(3, [6, 6, 3]), (0, [9, 3, 6])]
    assert chk.stats.violations == []
    assert chk.stats.skipped_capture == 2 * 5  # replays build metadata outside capture: checked


def _graph_run(variant, poison, install_toy):
    chk = install_toy(variant, "record", step=f"toy_runner_{variant}:ToyModelRunner.execute_model",
                      poison=poison, poison_buffers=[])  # only the buffers registered below
    runner = make_runner(variant, device="cuda")
    if poison:
        pr.register_poison_buffer(runner.seq_lens, axis="reqs")
        pr.register_poison_buffer(runner.input_batch.num_computed_tokens_cpu_tensor, axis="reqs", sentinel=-1)
    with chk.suspended():
        runner.capture(4, 4, 8, 8)
        runner.capture(4, 4, 4, 4)
    runner.use_cuda_graphs = True
    for rid in "ABC":
        runner.add_request(rid, 2)
    outs = [(n, o.tolist()) for n, o in (runner.execute_model()[1] for _ in range(2))]
    chk.flush()
    return outs, chk


def test_poison_changes_the_replayed_output_of_the_buggy_runner(install_toy):
    plain, _ = _graph_run("buggy", False, install_toy)
    assert plain == [(3, [6, 6, 3]), (0, [9, 3, 6])]  # row 3 held zeros: the bug is silent
    pr.uninstall()
    poisoned, chk = _graph_run("buggy", True, install_toy)
    assert poisoned == [(3, [6, 6, 3]), (1, [9 - 99, 3, 6])]
    assert {v.field for v in chk.stats.violations} == {"is_prefilling", "seq_lens"}
    pr.uninstall()
    fixed, chk = _graph_run("fixed", True, install_toy)
    assert fixed == plain and chk.stats.violations == []


def test_one_object_costs_at_most_5_kernel_launches(install_toy):
    """Issue 10: the checks of one metadata object in at most 5 kernel launches (the byte
    gather: one cat, one copy to pinned host memory), counted with the profiler."""
    from torch.profiler import ProfilerActivity, profile

    chk = install_toy("buggy", "record", cuda_policy="deferred")
    runner = make_runner("buggy", device="cuda")
    _stale_scenario(runner)
    with chk.suspended():
        meta, _ = runner.execute_model()
    chk.flush()
    torch.cuda.synchronize()
    counts = pr.current_checker()._infer_counts(meta)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        chk.check_object(meta, counts)
        torch.cuda.synchronize()
    launches = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert len(launches) <= 5, [e.name for e in launches]
    chk.flush()
    assert {v.field for v in chk.stats.violations} == {"is_prefilling", "seq_lens"}


def test_poison_default_float_sentinel_is_finite_on_cuda(install_toy):
    install_toy("fixed", "record", poison=True)
    buf = torch.zeros(4, device="cuda")
    pr.register_poison_buffer(buf, name="b")
    assert pr.poison_padding(2) == 1
    assert buf.cpu().tolist() == [0.0, 0.0, -99.0, -99.0]


def test_replay_with_a_new_storage_is_a_violation_under_a_real_capture(install_toy):
    """Capture a graph that reads seq_lens from a static buffer while the metadata object is
    built; a later step whose metadata holds a new tensor (never read by the replay) is reported."""
    from test_odd_inputs import graph_meta

    from padlint.runtime.checker import Checker
    from padlint.runtime.context import StepCounts

    chk = Checker(pr.runtime_spec("vllm", provider=None, classes=[], step=None), mode="record")
    static = {k: v.cuda() for k, v in graph_meta().__dict__.items() if isinstance(v, torch.Tensor)}
    seq_lens = torch.zeros(4, dtype=torch.int32, device="cuda")
    out = torch.zeros(4, dtype=torch.int32, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(torch.cuda.Stream()), torch.cuda.graph(graph):
        chk.check_object(graph_meta(**{**static, "seq_lens": seq_lens[:4]}), StepCounts(4, 4, 4, 4, provider="c"))
        out.copy_(seq_lens * 2)
    torch.cuda.synchronize()
    assert chk.stats.violations == []
    seq_lens[:2] = torch.tensor([3, 4], device="cuda")
    chk.check_object(graph_meta(**{**static, "seq_lens": seq_lens[:4]}), StepCounts(2, 4, 2, 4, provider="r"))
    graph.replay()
    chk.check_object(graph_meta(**{**static, "seq_lens": torch.tensor([3, 4, 0, 0], dtype=torch.int32,
                                                                        device="cuda")}),
                     StepCounts(2, 4, 2, 4, provider="r"))
    chk.flush()
    assert [v.field for v in chk.stats.violations] == ["seq_lens"]
    assert chk.stats.violations[0].detail.startswith("storage changed since CUDA-graph capture")
