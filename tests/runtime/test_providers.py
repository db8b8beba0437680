"""Providers by where the counts live, module functions imported by name, providers that
give no counts, reading fields without side effects, and profile coverage.

The toy is fixtures/runtime/toy_model_state.py + toy_attn_utils.py (Model Runner V2's
shape): 3 decoding requests padded to 5 rows; with ``stale=True`` the padding rows 3, 4
of seq_lens hold 17 and 5, everything else is neutral.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import warnings

import pytest
import torch

import padlint.runtime as pr
from padlint.runtime import hooks
from padlint.runtime.spec import ProviderSpec

META = "toy_common:CommonAttentionMetadata"
STATE = "toy_model_state:ModelState.prepare_attn"
MRV2_COUNTS = (("input_batch.num_reqs", "input_batch.num_reqs_after_padding"),
               ("input_batch.num_tokens", "input_batch.num_tokens_after_padding"))


@pytest.fixture
def toy():
    if pr.installed() is not None:
        pytest.skip("padlint runtime hooks already installed by the environment")
    import toy_attn_utils
    import toy_model_state

    yield toy_model_state, toy_attn_utils
    pr.uninstall()


def test_counts_on_an_argument_attribute(toy):
    state, _ = toy
    pr.install("vllm", mode="record", provider=ProviderSpec(STATE, *MRV2_COUNTS), classes=[META], step=None)
    state.ModelState().prepare_attn(state.make_batch(stale=True))
    [v] = pr.current_checker().stats.violations
    assert (v.field, v.rows, v.values, v.real, v.padded) == ("seq_lens", (3, 4), (17, 5), 3, 5)
    assert v.counts_from == ("ModelState.prepare_attn(input_batch.num_reqs=3, input_batch.num_reqs_after_padding=5, "
                             "input_batch.num_tokens=3, input_batch.num_tokens_after_padding=5)")
    assert v.fix.startswith("seq_lens[input_batch.num_reqs:input_batch.num_reqs_after_padding] = 0")
    state.ModelState().prepare_attn(state.make_batch(stale=False))
    assert len(pr.current_checker().stats.violations) == 1  # the clean batch adds nothing


def test_profile_may_list_several_providers(toy):
    state, _ = toy
    other = ProviderSpec("toy_runner_fixed:ToyModelRunner._build_attention_metadata")
    pr.install("vllm", mode="record", provider=[other, ProviderSpec(STATE, *MRV2_COUNTS)], classes=[META], step=None)
    assert {other.target, STATE} <= hooks.installed().hooked
    state.ModelState().prepare_attn(state.make_batch(stale=True))
    assert [v.field for v in pr.current_checker().stats.violations] == ["seq_lens"]


def test_a_module_function_is_hooked_in_the_module_that_imported_it_by_name(toy):
    state, attn = toy
    original = attn.build_attn_metadata
    assert state.build_attn_metadata is original
    pr.install("vllm", mode="record", provider=ProviderSpec("toy_attn_utils:build_attn_metadata"),
               classes=[META], step=None)
    assert state.build_attn_metadata is attn.build_attn_metadata is not original
    # the eager path passes the real counts (no padded count: "not padded"): the call through
    # the importing module reached the hook, so the object was checked with num_reqs=3, which
    # its 3-row fields fit, instead of counts inferred from it
    state.ModelState().prepare_attn(state.make_batch(stale=True), full_graph=False)
    chk = pr.current_checker()
    assert chk.stats.objects_checked == 1 and chk.stats.violations == []
    pr.uninstall()
    assert state.build_attn_metadata is original and attn.build_attn_metadata is original


def test_a_provider_that_gives_no_counts_is_a_warning_not_silence(toy):
    state, _ = toy
    # "num_reqs" is no argument of prepare_attn (the counts live on input_batch)
    pr.install("vllm", mode="record", provider=ProviderSpec(STATE), classes=[META], step=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            state.ModelState().prepare_attn(state.make_batch(stale=True))
    msgs = [str(w.message) for w in caught if "gave no counts" in str(w.message)]
    assert len(msgs) == 1 and "ModelState.prepare_attn" in msgs[0]
    assert hooks.no_count_providers() == [(
        "padlint runtime: warning: provider ModelState.prepare_attn was called 2 time(s) but gave no counts "
        "(reqs from num_reqs, tokens from num_tokens): the objects built in it were checked with counts "
        "inferred from the object, or not at all")]
    # inferred from query_start_loc_cpu (flat after row 3): the stale rows are still found
    assert [v.field for v in pr.current_checker().stats.violations] == ["seq_lens", "seq_lens"]
    assert all(v.counts_from.startswith("inferred from query_start_loc_cpu") for v in pr.current_checker().stats.violations)


@dataclasses.dataclass
class PropertyMeta:
    """Reading ``seq_lens_cpu`` through its property would warn and fill ``_seq_lens_cpu``."""

    query_start_loc_cpu: torch.Tensor
    seq_lens: torch.Tensor
    _seq_lens_cpu: torch.Tensor | None = None
    extra_rows: torch.Tensor | None = None  # a tensor field the profile does not know

    @property
    def seq_lens_cpu(self) -> torch.Tensor:
        warnings.warn("seq_lens_cpu is deprecated", DeprecationWarning, stacklevel=2)
        if self._seq_lens_cpu is None:
            self._seq_lens_cpu = self.seq_lens.to("cpu")
        return self._seq_lens_cpu


class SlotsMeta:
    __slots__ = ("query_start_loc_cpu", "seq_lens")

    def __init__(self, q, s):
        self.query_start_loc_cpu = q
        self.seq_lens = s


def _spec_with_property_field():
    # a profile in which seq_lens_cpu is a field (vLLM's profile lists num_computed_tokens_cpu,
    # a deprecated property in 0.21.0)
    spec = pr.runtime_spec("vllm", provider=None, classes=[], step=None)
    rule = dataclasses.replace(spec.rule("seq_lens"), name="seq_lens_cpu")
    return dataclasses.replace(spec, rules=spec.rules + (rule,), by_name={})


def test_fields_are_read_from_the_instance_never_through_a_property():
    from padlint.runtime.checker import Checker

    chk = Checker(_spec_with_property_field(), mode="record")
    chk.register_class(PropertyMeta, ("query_start_loc_cpu",))
    meta = PropertyMeta(torch.tensor([0, 1, 2, 2], dtype=torch.int32), torch.tensor([4, 5, 9], dtype=torch.int32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a DeprecationWarning from the property would raise here
        found = chk.check_object(meta)
    assert [(v.field, v.rows) for v in found] == [("seq_lens", (2,))]
    assert meta._seq_lens_cpu is None  # no CPU copy computed
    # seq_lens_cpu (a property) and _seq_lens_cpu (None) are skipped and counted
    assert chk.stats.skipped_unfilled == 2
    # __slots__ objects: read through the slot descriptor
    chk.register_class(SlotsMeta, ("query_start_loc_cpu",))
    found = chk.check_object(SlotsMeta(torch.tensor([0, 1, 1], dtype=torch.int32), torch.tensor([3, 8], dtype=torch.int32)))
    assert [(v.field, v.rows) for v in found] == [("seq_lens", (1,))]


def test_unknown_tensor_fields_of_a_hooked_class_are_listed_once():
    from padlint.runtime.checker import Checker

    chk = Checker(pr.runtime_spec("vllm", provider=None, classes=[], step=None), mode="record")
    chk.register_class(PropertyMeta, ("query_start_loc_cpu",))
    # from the dataclass annotations: extra_rows (the profile knows seq_lens, _seq_lens_cpu, ...)
    assert chk.unknown_fields == {f"{__name__}.PropertyMeta": ("extra_rows",)}
    meta = PropertyMeta(torch.tensor([0, 1, 1], dtype=torch.int32), torch.tensor([3, 0], dtype=torch.int32))
    meta.__dict__["late_tensor"] = torch.zeros(2)  # set outside the constructor: seen on the first object
    chk.check_object(meta)
    chk.check_object(meta)
    assert chk.unknown_fields == {f"{__name__}.PropertyMeta": ("extra_rows", "late_tensor")}


def test_coverage_lines_name_the_class_and_fields(toy):
    pr.install("vllm", mode="record", provider=None, classes=[f"{__name__}:PropertyMeta"], step=None)
    [line] = hooks.coverage_lines()
    assert line.startswith(f"padlint runtime: warning: {__name__}.PropertyMeta has tensor fields that profile "
                           f"'vllm' neither checks nor exempts: extra_rows: not checked")


def test_vllm_profile_providers_and_fields():
    spec = pr.runtime_spec("vllm")
    by_target = {p.target: p for p in spec.providers}
    mrv2 = by_target["vllm.v1.worker.gpu.model_states.default:DefaultModelState.prepare_attn"]
    assert mrv2.reqs == ("input_batch.num_reqs", "input_batch.num_reqs_after_padding")
    assert spec.provider.target == "vllm.v1.worker.gpu_model_runner:GPUModelRunner._build_attention_metadata"
    assert spec.rule("dcp_local_seq_lens_cpu_upper_bound").neutral == 0


def test_sglang_profile_has_runtime_tables():
    spec = pr.runtime_spec("sglang")
    assert spec.providers and spec.classes
    assert all(":" in p.target for p in spec.providers)


def teardown_module():
    for name in ("toy_attn_utils", "toy_model_state"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()


def make_view(buffers, raw_bs, bs):
    """SGLang's build_replay_fb_view in miniature: a SimpleNamespace of padded buffer slices."""
    from types import SimpleNamespace

    return SimpleNamespace(seq_lens=buffers["seq_lens"][:bs], req_pool_indices=buffers["req_pool_indices"][:bs])


def test_a_provider_result_is_checked_when_check_result_is_set(toy):
    pr.install("sglang", mode="record", provider=ProviderSpec(f"{__name__}:make_view", ("raw_bs", "bs"),
                                                              check_result=True), classes=[], step=None)
    mod = sys.modules[__name__]
    buffers = {"seq_lens": torch.tensor([7, 9, 1, 1, 4]), "req_pool_indices": torch.tensor([3, 5, 0, 0, 0])}
    mod.make_view(buffers, raw_bs=2, bs=4)  # rows [2:4): seq_lens 1 (SEQ_LEN_FILL_VALUE), indices 0: clean
    assert pr.current_checker().stats.violations == []
    buffers["req_pool_indices"][3] = 6  # a stale pool index in padding row 3
    mod.make_view(buffers, raw_bs=2, bs=4)
    [v] = pr.current_checker().stats.violations
    assert (v.field, v.rows, v.values, v.when) == ("req_pool_indices", (3,), (6,), "provider return (its result)")


def test_deferred_device_violations_keep_the_providers_count_names(toy):
    state, _ = toy
    chk = pr.install("vllm", mode="record", provider=ProviderSpec(STATE, *MRV2_COUNTS), classes=[META], step=None)
    chk.force_device_path = True  # CPU tensors through the deferred device path
    state.ModelState().prepare_attn(state.make_batch(stale=True))
    chk.flush()
    [v] = chk.stats.violations
    assert v.field == "seq_lens" and v.when.endswith("(deferred device check)")
    assert v.fix.startswith("seq_lens[input_batch.num_reqs:input_batch.num_reqs_after_padding] = 0")
