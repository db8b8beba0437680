"""Installing, uninstalling, and what each hook sees."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
import textwrap
import threading
import typing

import pytest
import toy_common
import toy_runner_buggy
import toy_runner_fixed
from conftest import ROOT, TOY_DIR, make_runner
from toy_common import prepare_stale_step

import padlint.runtime as pr
from padlint.runtime import StalePaddingError


def test_import_padlint_patches_nothing_and_imports_no_torch():
    code = textwrap.dedent("""
        import sys
        import padlint, padlint.runtime, padlint.pytest_plugin, padlint.runtime.vllm_plugin
        padlint.runtime.vllm_plugin.register()   # PADLINT_RUNTIME unset: nothing happens
        assert "torch" not in sys.modules, "torch imported"
        assert "padlint.runtime.hooks" not in sys.modules
        print("clean")
    """)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "clean"


def test_uninstall_restores_every_patched_attribute(install_toy):
    cls = toy_common.CommonAttentionMetadata
    init, setattr_ = cls.__dict__["__init__"], cls.__dict__.get("__setattr__")
    provider = toy_runner_buggy.ToyModelRunner.__dict__["_build_attention_metadata"]
    install_toy("buggy")
    assert cls.__dict__["__init__"] is not init
    assert toy_runner_buggy.ToyModelRunner.__dict__["_build_attention_metadata"] is not provider
    pr.uninstall()
    assert cls.__dict__["__init__"] is init
    assert cls.__dict__.get("__setattr__") is setattr_  # was inherited (None here): deleted again
    assert toy_runner_buggy.ToyModelRunner.__dict__["_build_attention_metadata"] is provider
    assert pr.installed() is None
    # and the buggy runner runs unchecked again
    runner = make_runner("buggy")
    prepare_stale_step(runner)
    runner.execute_model()


def test_install_twice_is_refused(install_toy):
    install_toy("buggy")
    with pytest.raises(RuntimeError, match="already installed"):
        pr.install("vllm", provider=None, classes=[], step=None)


def test_unknown_target_module_raises_and_leaves_nothing_patched(install_toy):
    init = toy_common.CommonAttentionMetadata.__dict__["__init__"]
    with pytest.raises(ImportError):
        pr.install("vllm", provider="no_such_module_xyz:R.f", classes=["toy_common:CommonAttentionMetadata"],
                   step=None)
    assert toy_common.CommonAttentionMetadata.__dict__["__init__"] is init
    assert pr.installed() is None


def _meta(seq_lens, n_tokens=4):
    seq = toy_common.torch.tensor(seq_lens, dtype=toy_common.torch.int32)
    q = toy_common.torch.zeros(len(seq_lens) + 1, dtype=toy_common.torch.int32)
    return toy_common.CommonAttentionMetadata(
        query_start_loc=q, query_start_loc_cpu=q.clone(), seq_lens=seq, num_reqs=len(seq_lens),
        num_actual_tokens=n_tokens, max_query_len=1, max_seq_len=9,
        block_table_tensor=toy_common.torch.zeros(len(seq_lens), 2, dtype=toy_common.torch.int32),
        slot_mapping=toy_common.torch.full((n_tokens,), -1, dtype=toy_common.torch.int64))


class _Provider:
    """A provider of the toy's signature that builds whatever the test passes in."""

    def _build_attention_metadata(self, num_reqs, num_reqs_padded, num_tokens, num_tokens_padded, build=None):
        return build()


@pytest.fixture
def provider_hooks(install_toy):
    def _install(mode="strict"):
        return install_toy(provider=f"{__name__}:_Provider._build_attention_metadata", mode=mode)
    return _install


def test_dataclasses_replace_is_checked(provider_hooks):
    provider_hooks()
    p = _Provider()
    good = p._build_attention_metadata(2, 4, 1, 4, build=lambda: _meta([3, 4, 0, 0]))
    # replace() goes through __init__: the new seq_lens has a stale row 3
    with pytest.raises(StalePaddingError) as info:
        p._build_attention_metadata(2, 4, 1, 4, build=lambda: dataclasses.replace(
            good, seq_lens=toy_common.torch.tensor([3, 4, 0, 5], dtype=toy_common.torch.int32)))
    (v,) = info.value.violations
    assert v.field == "seq_lens" and v.rows == (3,) and v.when == "construction"


def test_attribute_store_after_construction_is_checked(provider_hooks):
    provider_hooks()

    def build():
        meta = _meta([3, 4, 0, 0])
        meta.dcp_local_seq_lens = toy_common.torch.tensor([1, 1, 2, 0], dtype=toy_common.torch.int32)
        return meta

    with pytest.raises(StalePaddingError) as info:
        _Provider()._build_attention_metadata(2, 4, 1, 4, build=build)
    (v,) = info.value.violations
    assert (v.field, v.rows, v.values, v.when) == ("dcp_local_seq_lens", (2,), (2,), "attribute store")


def test_in_place_write_after_construction_is_caught_at_provider_return(provider_hooks):
    chk = provider_hooks("record")

    def build():
        meta = _meta([3, 4, 0, 0])
        meta.seq_lens[3] = 8  # after the construction check: only the tensor's version changes
        return meta

    _Provider()._build_attention_metadata(2, 4, 1, 4, build=build)
    (v,) = chk.stats.violations
    assert v.field == "seq_lens" and v.rows == (3,) and v.values == (8,)
    assert v.when.startswith("provider return")


def test_copy_copy_skips_init_but_is_checked_at_provider_return(provider_hooks):
    chk = provider_hooks("record")
    with chk.suspended():  # outside a provider the counts would be inferred (all queries empty: all padding)
        clean = _meta([3, 4, 0, 0])

    def build():
        c = copy.copy(clean)  # no __init__, no __setattr__
        c.__dict__["seq_lens"] = toy_common.torch.tensor([3, 4, 6, 0], dtype=toy_common.torch.int32)
        return (c, {})

    _Provider()._build_attention_metadata(2, 4, 1, 4, build=build)
    (v,) = chk.stats.violations
    assert v.field == "seq_lens" and v.rows == (2,) and "not built through __init__" in v.when


def test_counts_are_per_thread(provider_hooks):
    """Two threads in the provider at once, with different counts: each object is
    checked against its own thread's counts (thread A: real 4 of 4, nothing to
    check; thread B: real 2 of 4, row 3 = 5 is stale)."""
    chk = provider_hooks("record")
    barrier = threading.Barrier(2)
    p = _Provider()

    def build():
        barrier.wait(timeout=10)  # both threads are inside their provider call now
        return _meta([3, 4, 0, 5])

    ta = threading.Thread(target=p._build_attention_metadata, args=(4, 4, 1, 4), kwargs={"build": build})
    tb = threading.Thread(target=p._build_attention_metadata, args=(2, 4, 1, 4), kwargs={"build": build})
    ta.start(); tb.start(); ta.join(); tb.join()
    (v,) = chk.stats.violations
    assert v.real == 2 and v.rows == (3,)
    assert chk.stats.objects_checked == 2


def test_padded_none_means_not_padded(provider_hooks):
    """vLLM passes num_reqs_padded=None outside full CUDA graphs: padded = real."""
    chk = provider_hooks("strict")
    _Provider()._build_attention_metadata(4, None, 4, None, build=lambda: _meta([3, 4, 0, 5]))
    assert chk.stats.violations == [] and chk.stats.fields_checked == 0


def test_metadata_with_other_batch_size_is_skipped_not_misjudged(provider_hooks):
    """A micro-batch slice (2 rows) built inside a provider call for 4 padded rows
    matches neither count: counted as skipped, not checked against the wrong rows."""
    chk = provider_hooks("strict")
    _Provider()._build_attention_metadata(1, 4, 1, 4, build=lambda: _meta([3, 9]))
    assert chk.stats.skipped_shape >= 1
    assert chk.stats.violations == []


def test_suspended_and_off_check_nothing(install_toy):
    chk = install_toy("buggy", "strict")
    runner = make_runner("buggy")
    prepare_stale_step(runner)
    with chk.suspended():
        runner.execute_model()
    assert chk.stats.violations == []


# A runner module imported only after the hooks are installed (lazy targets): its provider
# builds seq_lens [1, 2, 7]: called with 2 real of 3 padded requests, row 2 (7) is stale.
LATE_RUNNER_MODULE = textwrap.dedent("""
        from dataclasses import dataclass
        import torch

        @dataclass
        class CommonAttentionMetadata:
            seq_lens: torch.Tensor

        class Runner:
            def _build_attention_metadata(self, num_reqs, num_reqs_padded, num_tokens, num_tokens_padded):
                return CommonAttentionMetadata(seq_lens=torch.tensor([1, 2, 7], dtype=torch.int32))
    """)


def test_lazy_install_patches_a_module_when_it_is_first_imported(tmp_path):
    mod = tmp_path / "late_runner_mod.py"
    mod.write_text(LATE_RUNNER_MODULE)
    code = textwrap.dedent("""
        import sys
        import padlint.runtime as pr
        pr.install("vllm", mode="strict", provider="late_runner_mod:Runner._build_attention_metadata",
                   classes=["late_runner_mod:CommonAttentionMetadata"], step=None, lazy=True)
        assert "late_runner_mod" not in sys.modules
        import late_runner_mod
        try:
            late_runner_mod.Runner()._build_attention_metadata(2, 3, 2, 3)
        except AssertionError as e:
            print("raised", type(e).__name__, e.violations[0].field, e.violations[0].rows)
        pr.uninstall()
        late_runner_mod.Runner()._build_attention_metadata(2, 3, 2, 3)
        print("uninstalled ok")
    """)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    out = subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["raised StalePaddingError seq_lens (2,)", "uninstalled ok"]


def test_fixed_and_buggy_modules_do_not_share_hooks(install_toy):
    """Hooking the buggy variant's provider leaves the fixed variant's untouched."""
    install_toy("buggy")
    assert "__padlint_wrapped__" not in vars(toy_runner_fixed.ToyModelRunner._build_attention_metadata)
    assert TOY_DIR.is_dir()


class _VllmStyleProvider:
    """The argument order and defaults of vLLM 0.21's provider (counts first, padded counts
    optional and None outside full CUDA graphs), called by keyword as vLLM's execute_model does."""

    def _build_attention_metadata(self, num_tokens, num_reqs, max_query_len, num_tokens_padded=None,
                                  num_reqs_padded=None, ubatch_slices=None, build=None):
        return build()


def test_vllm_keyword_call_style_gives_the_counts(install_toy):
    chk = install_toy(provider=f"{__name__}:_VllmStyleProvider._build_attention_metadata", mode="record")
    p = _VllmStyleProvider()
    # full CUDA graph step: 2 real requests of 4, 1 real token of 4; seq_lens row 3 is stale
    p._build_attention_metadata(num_tokens=1, num_tokens_padded=4, num_reqs=2, num_reqs_padded=4,
                                max_query_len=1, build=lambda: _meta([3, 4, 0, 5]))
    (v,) = chk.stats.violations
    assert (v.field, v.real, v.padded, v.rows) == ("seq_lens", 2, 4, (3,))
    assert "num_reqs=2, num_reqs_padded=4, num_tokens=1, num_tokens_padded=4" in v.counts_from
    # piecewise step: padded counts None -> not padded, nothing examined
    before = chk.stats.fields_checked
    p._build_attention_metadata(num_tokens=4, num_tokens_padded=None, num_reqs=4, num_reqs_padded=None,
                                max_query_len=1, build=lambda: _meta([3, 4, 0, 5]))
    assert chk.stats.fields_checked == before and len(chk.stats.violations) == 1


class _NTMeta(typing.NamedTuple):
    """A NamedTuple metadata class: no __init__ of its own (object.__init__), fields set by __new__."""

    seq_lens: typing.Any
    num_reqs: int = 0


def test_a_namedtuple_metadata_class_is_constructed_and_checked(install_toy):
    """The __init__ wrapper used to forward the fields to object.__init__ (TypeError)."""
    chk = install_toy(provider=f"{__name__}:_Provider._build_attention_metadata", classes=[f"{__name__}:_NTMeta"])
    p = _Provider()
    ok = p._build_attention_metadata(2, 4, 1, 4, build=lambda: _NTMeta(
        toy_common.torch.tensor([3, 4, 0, 0], dtype=toy_common.torch.int32), 4))
    assert ok.num_reqs == 4 and ok.seq_lens.tolist() == [3, 4, 0, 0]
    with pytest.raises(StalePaddingError) as info:
        p._build_attention_metadata(2, 4, 1, 4, build=lambda: _NTMeta(
            seq_lens=toy_common.torch.tensor([3, 4, 0, 5], dtype=toy_common.torch.int32)))
    (v,) = info.value.violations
    assert (v.owner, v.field, v.rows, v.when) == ("_NTMeta", "seq_lens", (3,), "construction")
    assert chk.stats.objects_checked == 2


def test_a_lazy_target_that_cannot_be_hooked_never_breaks_the_import(tmp_path):
    """An attribute typo in a lazy target used to raise inside the import that reached its
    module; now the import succeeds, the other targets of the module are hooked, and
    unresolved_targets() says what happened."""
    (tmp_path / "late_typo_mod.py").write_text(LATE_RUNNER_MODULE)
    code = textwrap.dedent("""
        import padlint.runtime as pr
        from padlint.runtime import hooks
        pr.install("vllm", mode="strict", provider="late_typo_mod:Runner._build_attn_metadata",
                   classes=["late_typo_mod:CommonAttentionMetadata", "late_typo_mod:Metadata",
                            "never_imported_mod:M"], step=None, lazy=True)
        import late_typo_mod
        print("imported")
        for u in hooks.unresolved_targets():
            print(u.kind, u.target, "|", u.reason)
        # the good class of the module is hooked (no provider call, nothing to infer counts
        # from: counted as an object checked, its field skipped)
        late_typo_mod.CommonAttentionMetadata(seq_lens=__import__("torch").tensor([1, 2, 7]))
        print("checked", pr.current_checker().stats.objects_checked)
    """)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    out = subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "imported",
        "class late_typo_mod:Metadata | could not be hooked: late_typo_mod has no attribute 'Metadata'",
        ("provider late_typo_mod:Runner._build_attn_metadata | could not be hooked: "
        "late_typo_mod.Runner has no attribute '_build_attn_metadata'"),
        "class never_imported_mod:M | was never imported",
        "checked 1",
    ]


def test_suspended_for_all_threads_covers_other_threads(install_toy):
    """suspended(all_threads=True) (the pytest padlint_off marker): no checks in a thread
    started inside the block; the thread-local suspended() covers only its own thread."""
    chk = install_toy("buggy", "strict")
    errors = []

    def scenario():
        try:
            runner = make_runner("buggy")
            prepare_stale_step(runner)
            runner.execute_model()
        except StalePaddingError as e:
            errors.append(e)

    def in_thread():
        t = threading.Thread(target=scenario)
        t.start()
        t.join()

    with chk.suspended(all_threads=True):
        in_thread()
        assert errors == [] and chk.suspended_here and not chk.active
    assert chk.active and not chk.suspended_here
    with chk.suspended():
        in_thread()
    assert len(errors) == 1 and chk.stats.violations and chk.active


def test_meta_tensors_are_skipped_not_an_error():
    """A metadata object built from meta tensors (shape-only tracing) has no values: its
    fields are not examined, and nothing raises."""
    from dataclasses import dataclass

    import torch

    from padlint.runtime.checker import Checker
    from padlint.runtime.context import StepCounts
    from padlint.runtime.spec import runtime_spec

    @dataclass
    class Meta:
        seq_lens: torch.Tensor

    chk = Checker(runtime_spec("vllm"), mode="strict", cuda_policy="sync")
    assert chk.check_object(Meta(torch.zeros(4, dtype=torch.int32, device="meta")), StepCounts(2, 4, 2, 4)) == []
    assert chk.stats.fields_checked == 0 and chk.stats.objects_checked == 1


def test_a_list_where_a_tensor_belongs_never_breaks_construction(install_toy):
    """Hooks installed, no provider call: counts are inferred from query_start_loc_cpu.  A
    Python list there (not a tensor) used to raise AttributeError out of the user's
    constructor; now it is passed over and the next infer_from field, the CPU tensor
    query_start_loc [0, 2, 4, 6, 6] (3 real requests), gives the counts."""
    import torch
    from toy_common import CommonAttentionMetadata

    chk = install_toy("buggy", "strict")

    def build(seq_lens):
        return CommonAttentionMetadata(
            query_start_loc=torch.tensor([0, 2, 4, 6, 6]), query_start_loc_cpu=[0, 2, 4, 6, 6],
            seq_lens=torch.tensor(seq_lens), num_reqs=4, num_actual_tokens=6, max_query_len=2, max_seq_len=3,
            block_table_tensor=torch.zeros(4, 2, dtype=torch.int32), slot_mapping=torch.zeros(6, dtype=torch.int64))

    assert build([1, 2, 3, 0]).num_reqs == 4
    assert chk.stats.fields_checked > 0
    with pytest.raises(StalePaddingError, match=r"seq_lens: 1 stale padding row\(s\) in \[3:4\)"):
        build([1, 2, 3, 9])


def _bad_counts_module(tmp_path, name):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        from dataclasses import dataclass
        import torch

        @dataclass
        class DM:
            query_start_loc_cpu: torch.Tensor
            seq_lens: torch.Tensor

        @dataclass
        class SubDM(DM):
            pass

        class Runner:
            def build(self, num_reqs, num_reqs_padded, num_tokens=None, num_tokens_padded=None):
                return DM(torch.tensor([0, 1, 2, 2], dtype=torch.int32), torch.tensor([1, 2, 9], dtype=torch.int32))
    """))


def test_provider_counts_that_are_not_row_counts_never_break_the_call(tmp_path, monkeypatch):
    """-1, 2.0 or padded below real used to raise torch or numpy errors out of the user's
    constructor (even in record mode): now one warning, and those calls' objects are not
    checked.  A 0-d tensor count is read as an int."""
    import warnings

    import torch

    _bad_counts_module(tmp_path, "bad_counts_mod")
    monkeypatch.syspath_prepend(str(tmp_path))
    import bad_counts_mod

    pr.install("vllm", mode="record", provider="bad_counts_mod:Runner.build", classes=["bad_counts_mod:DM"], step=None)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for real, padded in ((-1, 3), (2.0, 3.0), (3, 2)):
                assert bad_counts_mod.Runner().build(real, padded).seq_lens.tolist() == [1, 2, 9]
        assert len(caught) == 1 and "was called with counts that are not row counts" in str(caught[0].message)
        assert pr.current_checker().stats.violations == []
        bad_counts_mod.Runner().build(2, torch.tensor(3))
        (v,) = pr.current_checker().stats.violations
        assert (v.field, v.rows, v.padded) == ("seq_lens", (2,), 3) and "num_reqs_padded=3" in v.counts_from
    finally:
        pr.uninstall()


def test_a_class_listed_twice_or_with_its_subclass_is_checked_once(tmp_path, monkeypatch):
    import torch

    _bad_counts_module(tmp_path, "dup_class_mod")
    monkeypatch.syspath_prepend(str(tmp_path))
    import dup_class_mod

    pr.install("vllm", mode="record", provider=None, step=None,
               classes=["dup_class_mod:DM", "dup_class_mod:DM", "dup_class_mod:SubDM"])
    try:
        # counts inferred from query_start_loc_cpu [0, 1, 2, 2]: 2 real requests of 3
        m = dup_class_mod.SubDM(torch.tensor([0, 1, 2, 2], dtype=torch.int32), torch.tensor([1, 2, 0], dtype=torch.int32))
        m.seq_lens = torch.tensor([1, 2, 7], dtype=torch.int32)  # one bad store: one violation
        assert len(pr.current_checker().stats.violations) == 1
        dup_class_mod.DM(torch.tensor([0, 1, 2, 2], dtype=torch.int32), torch.tensor([1, 2, 5], dtype=torch.int32))
        assert len(pr.current_checker().stats.violations) == 2
    finally:
        pr.uninstall()
    assert "__padlint_wrapped__" not in vars(dup_class_mod.DM).get("__init__", lambda: 0).__dict__
