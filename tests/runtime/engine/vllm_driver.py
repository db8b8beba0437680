"""Drive real vLLM methods on mock runners with real tensors (run in a subprocess).

    PYTHONPATH=<vllm release tree>:<deps dir>:<repo> python vllm_driver.py SCENARIO[:MODE] ...

Runs each scenario (MODE "record" unless given) with its own install/uninstall
and prints one JSON object on the last line of stdout, scenario -> result
(importing vLLM costs ~12 s, so one process runs all scenarios of a version).
Each result holds the violations padlint
reported (field, rows, values, counts_from), the tally, the warnings seen
and scenario-specific facts.  Written from scratch for padlint's tests; the
runner is a ``unittest.mock.MagicMock`` whose attributes are the persistent
buffers a real runner would hold (as vLLM's own unit tests of the runner
do), and the method under test is vLLM's, unchanged, called through its
class.

Scenarios (v1 = ``GPUModelRunner._build_attention_metadata``, MRV2 =
``DefaultModelState.prepare_attn`` -> ``attn_utils.build_attn_metadata``):

* ``v1``: 3 live decode requests padded to 5 request rows (a CUDA-graph
  size), 3 tokens padded to 5.  The padding rows 3 and 4 of the input
  batch hold what ``condense()`` left: num_computed_tokens 0 and prompt
  lengths 7 and 9 of requests that never ran, so ``computed < prompt``
  is True there.  Every other buffer was reset by ``_prepare_inputs`` as
  vLLM does (seq lens 0, query_start_loc flat, slot mapping -1 (the
  block table's padding is filled with NULL_BLOCK_ID by the method).
* ``v1-async``: the same with ``use_async_spec_decode = True`` (vLLM then
  leaves ``_seq_lens_cpu`` and ``_num_computed_tokens_cpu`` None on purpose).
* ``mrv2-stale`` / ``mrv2-clean``: an ``InputBatch`` of 3 requests padded
  to 5 under a FULL CUDA graph; in ``-stale`` the seq_lens buffer's padding
  rows hold 17 and 5 (no reset), in ``-clean`` 0.
* ``mrv2-build-only``: the profile's provider replaced by
  ``attn_utils:build_attn_metadata`` (a module function that
  ``model_states/default.py`` imported by name): the call through the
  importing module must reach the hook.
"""

from __future__ import annotations

import json
import sys
import warnings
from types import SimpleNamespace
from unittest.mock import MagicMock

import numpy as np
import torch

import padlint.runtime as pr

MAX_REQS, MAX_TOKENS, MAX_BLOCKS = 8, 16, 4


class RecordingBuilder:
    """An attention-metadata builder that keeps what it was given (as a backend would read it)."""

    supports_update_block_table = False

    def __init__(self) -> None:
        self.seen: list = []

    def build(self, common_prefix_len: int = 0, common_attn_metadata=None, **kw):
        self.seen.append(common_attn_metadata)
        return SimpleNamespace(common=common_attn_metadata)

    def build_for_cudagraph_capture(self, common_attn_metadata):
        return self.build(0, common_attn_metadata)


class RecordingGroup:
    """An ``AttentionGroup`` with one layer and a :class:`RecordingBuilder` (v1 and MRV2 call shapes)."""

    def __init__(self) -> None:
        self.builder = RecordingBuilder()
        self.layer_names = ["model.layers.0.self_attn"]
        self.kv_cache_spec = object()

    def get_metadata_builder(self, ubatch_id: int = 0):
        return self.builder

    def build_metadata(self, common_attn_metadata, ubatch_idx: int = 0, **kw):
        return self.builder.build(0, common_attn_metadata)

    def build_metadata_for_cudagraph_capture(self, common_attn_metadata, ubatch_idx: int = 0):
        return self.builder.build(0, common_attn_metadata)


class Buf:
    """A CpuGpuBuffer stand-in: ``.cpu`` / ``.np`` share memory, ``.gpu`` is a second tensor."""

    def __init__(self, values, dtype=torch.int32) -> None:
        self.cpu = torch.tensor(values, dtype=dtype)
        self.np = self.cpu.numpy()
        self.gpu = self.cpu.clone()


def v1_runner(async_spec: bool) -> tuple[MagicMock, RecordingGroup]:
    """A v1 GPUModelRunner stand-in after ``_prepare_inputs`` of a step with 3 decodes padded to 5."""
    runner = MagicMock(name="GPUModelRunner")
    group = RecordingGroup()
    runner.kv_cache_config.kv_cache_groups = [SimpleNamespace(kv_cache_spec=object(), layer_names=group.layer_names)]
    runner.attn_groups = [[group]]
    runner.max_model_len = 4096
    runner.device = torch.device("cpu")
    runner.use_async_spec_decode = async_spec
    runner.dcp_world_size = 1
    runner.speculative_config = None
    runner.is_mm_prefix_lm = False
    runner.routed_experts_initialized = False
    runner.cache_config.kv_sharing_fast_prefill = False
    runner.cache_config.use_replayssm = False
    runner.model_config.rswa_window = None
    runner._get_encoder_seq_lens = lambda *a, **k: (None, None)
    # live rows 0..2: decodes (computed >= prompt); rows 3, 4: left by condense(), never run
    computed = torch.tensor([10, 20, 5, 0, 0, 0, 0, 0], dtype=torch.int32)
    prompt = torch.tensor([4, 8, 3, 7, 9, 0, 0, 0], dtype=torch.int32)
    runner.input_batch.num_computed_tokens_cpu_tensor = computed
    runner.input_batch.num_prompt_tokens_cpu_tensor = prompt
    block_table = torch.zeros(MAX_REQS, MAX_BLOCKS, dtype=torch.int32)
    block_table[:5, 0] = torch.tensor([3, 4, 5, 6, 7], dtype=torch.int32)  # rows 3, 4: old requests' blocks
    runner.input_batch.block_table = [SimpleNamespace(get_device_tensor=lambda n: block_table[:n])]
    # reset by _prepare_inputs (as vLLM does): lengths 0, offsets flat, positions 0
    runner.optimistic_seq_lens_cpu = torch.tensor([11, 21, 6, 0, 0, 0, 0, 0], dtype=torch.int32)
    runner.seq_lens = runner.optimistic_seq_lens_cpu.clone()
    runner.query_start_loc = Buf([0, 1, 2, 3, 3, 3, 3, 3, 3])
    runner.positions = torch.tensor([10, 20, 5] + [0] * (MAX_TOKENS - 3), dtype=torch.int64)
    return runner, group


def run_v1(mode: str, async_spec: bool) -> dict:
    pr.install("vllm", mode=mode, lazy=True)  # before the import, as the engine plugin does
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner

    runner, group = v1_runner(async_spec)
    slot_mapping = torch.tensor([30, 40, 50, -1, -1], dtype=torch.int64)  # padding tokens: PAD_SLOT_ID
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            GPUModelRunner._build_attention_metadata(
                runner, num_tokens=3, num_reqs=3, max_query_len=1, num_tokens_padded=5, num_reqs_padded=5,
                slot_mappings={0: slot_mapping})
            out["raised"] = None
        except pr.StalePaddingError as e:
            out["raised"] = "StalePaddingError"
            out["message"] = str(e)
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    metas = group.builder.seen
    out["built"] = len(metas)
    if metas:
        d = metas[0].__dict__
        out["unfilled"] = {k: d.get(k) is None for k in ("_seq_lens_cpu", "_num_computed_tokens_cpu") if k in d}
    return out


def mrv2_batch(stale: bool):
    from vllm.v1.worker.gpu.input_batch import InputBatch

    num_reqs, padded, num_tokens, tokens_padded = 3, 5, 3, 5
    seq_lens_buf = torch.tensor([11, 21, 6] + ([17, 5] if stale else [0, 0]) + [0] * 3, dtype=torch.int32)
    qsl = np.array([0, 1, 2, 3, 3, 3, 3, 3, 3], dtype=np.int32)
    return InputBatch(
        req_ids=["a", "b", "c"], num_reqs=num_reqs, num_reqs_after_padding=padded,
        idx_mapping=torch.arange(num_reqs), idx_mapping_np=np.arange(num_reqs),
        expanded_idx_mapping=torch.arange(num_reqs), expanded_local_pos=torch.zeros(num_reqs, dtype=torch.int32),
        num_scheduled_tokens=np.ones(num_reqs, dtype=np.int32), num_tokens=num_tokens,
        num_tokens_after_padding=tokens_padded, num_draft_tokens=0, num_draft_tokens_per_req=None,
        query_start_loc=torch.from_numpy(qsl[: padded + 1].copy()), query_start_loc_np=qsl,
        seq_lens=seq_lens_buf[:padded], seq_lens_cpu_upper_bound=seq_lens_buf.clone(),
        dcp_local_seq_lens=None, num_computed_tokens_np=np.array([10, 20, 5], dtype=np.int32),
        prefill_len_np=np.array([4, 8, 3], dtype=np.int32),
        num_computed_prefill_tokens_np=np.array([4, 8, 3], dtype=np.int32),
        is_prefilling_np=np.zeros(num_reqs, dtype=bool), has_prefill=False, decode_graph_eligible=True,
        input_ids=torch.zeros(tokens_padded, dtype=torch.int32),
        positions=torch.tensor([10, 20, 5, 0, 0], dtype=torch.int64),
        is_padding=torch.tensor([False] * 3 + [True] * 2), logits_indices=torch.arange(num_reqs),
        cu_num_logits=torch.arange(num_reqs + 1, dtype=torch.int32),
        cu_num_logits_np=np.arange(num_reqs + 1, dtype=np.int32), has_structured_output_reqs=False,
        prompt_lens=None, max_query_len=1)


def run_mrv2(mode: str, stale: bool, provider=...) -> dict:
    if provider is ...:
        pr.install("vllm", mode=mode, lazy=True)
    else:
        pr.install("vllm", mode=mode, provider=provider)
    from vllm.config.compilation import CUDAGraphMode
    from vllm.v1.worker.gpu.model_states.default import DefaultModelState

    state = MagicMock(name="DefaultModelState")
    state.supports_mm_inputs = False
    state.max_model_len = 4096
    group = RecordingGroup()
    kv_cache_config = SimpleNamespace(kv_cache_groups=[SimpleNamespace(kv_cache_spec=object(),
                                                                       layer_names=group.layer_names)])
    block_table = torch.zeros(5, MAX_BLOCKS, dtype=torch.int32)
    block_table[:3, 0] = torch.tensor([3, 4, 5], dtype=torch.int32)
    slot_mappings = torch.tensor([[30, 40, 50, -1, -1]], dtype=torch.int64)
    batch = mrv2_batch(stale)
    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            DefaultModelState.prepare_attn(state, batch, CUDAGraphMode.FULL, (block_table,), slot_mappings,
                                           [[group]], kv_cache_config)
            out["raised"] = None
        except pr.StalePaddingError as e:
            out["raised"] = "StalePaddingError"
            out["message"] = str(e)
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    out["built"] = len(group.builder.seen)
    return out


def run(scenario: str, mode: str) -> dict:
    if scenario == "v1":
        out = run_v1(mode, async_spec=False)
    elif scenario == "v1-async":
        out = run_v1(mode, async_spec=True)
    elif scenario == "mrv2-stale":
        out = run_mrv2(mode, stale=True)
    elif scenario == "mrv2-clean":
        out = run_mrv2(mode, stale=False)
    elif scenario == "mrv2-build-only":
        from vllm.v1.worker.gpu.model_states import (
            default,  # imports build_attn_metadata by name
        )

        from padlint.runtime.spec import ProviderSpec

        out = run_mrv2(mode, stale=True, provider=ProviderSpec(
            "vllm.v1.worker.gpu.attn_utils:build_attn_metadata", ("num_reqs", "num_reqs_padded"),
            ("num_tokens", "num_tokens_padded")))
        from vllm.v1.worker.gpu import attn_utils

        out["importer_patched"] = (hasattr(default.build_attn_metadata, "__padlint_wrapped__")
                                   and default.build_attn_metadata is attn_utils.build_attn_metadata)
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    inst = pr.installed()
    chk = pr.current_checker()
    from padlint.runtime import hooks

    out["violations"] = [{"owner": v.owner, "field": v.field, "rows": list(v.rows), "values": list(v.values),
                          "start": v.start, "stop": v.stop, "counts_from": v.counts_from, "fix": v.fix,
                          "when": v.when, "real": v.real, "padded": v.padded, "axis": v.axis}
                         for v in chk.stats.violations]
    st = chk.stats
    out["stats"] = {"objects": st.objects_checked, "fields": st.fields_checked, "unfilled": st.skipped_unfilled,
                    "unknown": st.skipped_unknown, "shape": st.skipped_shape}
    out["hooked"] = sorted(inst.hooked)
    out["unresolved"] = [u.line("profile") for u in hooks.unresolved_targets()]
    out["no_counts"] = hooks.no_count_providers()
    out["unknown_fields"] = {k: list(v) for k, v in getattr(chk, "unknown_fields", {}).items()}
    pr.uninstall()
    return out


def run_worker() -> dict:
    """An engine worker: vLLM's own ``load_general_plugins()`` finds padlint's
    ``vllm.general_plugins`` entry point, whose ``register()`` reads PADLINT_RUNTIME (set by
    the caller) and installs lazily; the step's StalePaddingError is swallowed, as an engine
    swallows a step's exception.  Only PADLINT_REPORT_DIR tells the caller."""
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner

    runner, _ = v1_runner(async_spec=False)
    try:
        GPUModelRunner._build_attention_metadata(
            runner, num_tokens=3, num_reqs=3, max_query_len=1, num_tokens_padded=5, num_reqs_padded=5,
            slot_mappings={0: torch.tensor([30, 40, 50, -1, -1])})
        raised = None
    except AssertionError as e:
        raised = type(e).__name__
    return {"installed": pr.installed() is not None, "raised": raised}


def main() -> int:
    if sys.argv[1:] == ["worker"]:
        print(json.dumps(run_worker()))
        return 0
    results = {}
    for arg in sys.argv[1:]:
        scenario, _, mode = arg.partition(":")
        results[arg] = run(scenario, mode or "record")
    print(json.dumps(results, default=repr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
