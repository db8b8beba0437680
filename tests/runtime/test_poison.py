"""Poison mode: a missing reset changes the output instead of passing silently."""

from __future__ import annotations

import pytest
from conftest import make_runner

import padlint.runtime as pr


def _run(variant, poison, install_toy):
    """Three requests (prompt 2 each), two steps; each step is padded from 3 to 4 requests.

    Row 3 is never used by a request, so it holds zeros: without poison the
    buggy variant's missing resets read 0 / False there and the output is
    right by luck.  With poison, after step 1 row 3 of every registered
    buffer holds the sentinel: seq_lens -99 and num_computed_tokens -1 (so
    the buggy is_prefilling[3] = (-1 < 0) = True).
    Returns (outputs of both steps, checker).
    """
    chk = install_toy(variant, "record", step=f"toy_runner_{variant}:ToyModelRunner.execute_model", poison=poison,
                      poison_buffers=[])  # only the buffers registered below
    runner = make_runner(variant)
    if poison:
        pr.register_poison_buffer(runner.seq_lens, axis="reqs")
        pr.register_poison_buffer(runner.input_batch.num_computed_tokens_cpu_tensor, axis="reqs", sentinel=-1)
        pr.register_poison_buffer(runner.query_start_loc, axis="reqs+1")
        pr.register_poison_buffer(runner.positions, axis="tokens")
        pr.register_poison_buffer(runner.slot_mapping, axis="tokens")
    for rid in "ABC":
        runner.add_request(rid, 2)
    outs = []
    for _ in range(2):
        _, (num_prefills, out) = runner.execute_model()
        outs.append((num_prefills, out.tolist()))
    return outs, chk


def test_fixed_runner_output_is_the_same_with_poison(install_toy):
    plain, _ = _run("fixed", False, install_toy)
    pr.uninstall()
    poisoned, chk = _run("fixed", True, install_toy)
    # step 1: 3 prefills of 2 tokens: seq_lens sum 6, 6 tokens with a slot, positions 3 * (0 + 1) = 3
    # step 2: 3 decodes: seq_lens 3 each = 9, 3 slots, positions 2 each = 6
    assert plain == [(3, [6, 6, 3]), (0, [9, 3, 6])]
    assert poisoned == plain
    assert chk.stats.violations == []


def test_buggy_runner_output_changes_with_poison(install_toy):
    plain, chk_plain = _run("buggy", False, install_toy)
    assert plain == [(3, [6, 6, 3]), (0, [9, 3, 6])]  # the bug passes silently: row 3 held zeros
    assert chk_plain.stats.violations == []
    pr.uninstall()
    poisoned, chk = _run("buggy", True, install_toy)
    # step 2 reads the sentinels in padding row 3: one extra "prefill", seq_lens sum 9 - 99
    assert poisoned == [(3, [6, 6, 3]), (1, [9 - 99, 3, 6])]
    assert {v.field: (v.rows, v.values) for v in chk.stats.violations} == {
        "is_prefilling": ((3,), (True,)), "seq_lens": ((3,), (-99,))}


def test_poison_api_needs_poison_mode(install_toy):
    install_toy("fixed", "record")
    with pytest.raises(RuntimeError, match="poison mode is off"):
        pr.register_poison_buffer(make_runner("fixed").seq_lens)


def test_profile_poison_buffers_are_registered_from_the_step_runner(install_toy):
    """Poison buffers named by attribute path (the profile's [runtime.poison] table) are
    found on the runner the step is called on: no register call needed."""
    chk = install_toy("buggy", "record", step="toy_runner_buggy:ToyModelRunner.execute_model", poison=True,
                      poison_buffers=[("seq_lens", "reqs", None),
                                      ("input_batch.num_computed_tokens_cpu_tensor", "reqs", -1),
                                      ("no_such_buffer", "reqs", None)])
    runner = make_runner("buggy")
    for rid in "ABC":
        runner.add_request(rid, 2)
    with pytest.warns(Warning, match="not found on the runner, not poisoned: ToyModelRunner.no_such_buffer$"):
        outs = [(n, o.tolist()) for n, o in (runner.execute_model()[1] for _ in range(2))]
    assert outs == [(3, [6, 6, 3]), (1, [9 - 99, 3, 6])]  # as with the explicit registrations above
    assert {v.field for v in chk.stats.violations} == {"is_prefilling", "seq_lens"}
    assert pr.installed().poison.missing == ["ToyModelRunner.no_such_buffer"]


def test_vllm_profile_names_poison_buffers():
    spec = pr.runtime_spec("vllm")
    assert spec.step == "vllm.v1.worker.gpu_model_runner:GPUModelRunner.execute_model"
    paths = {p.path: (p.axis, p.sentinel) for p in spec.poison}
    assert paths["input_batch.num_computed_tokens_cpu_tensor"] == ("reqs", -1)
    assert paths["query_start_loc"] == ("reqs+1", None)


def test_step_without_a_provider_call_poisons_nothing(install_toy, monkeypatch):
    """A step that returns early (no provider call) must not poison with the previous step's
    counts: rows past that old count may hold live requests by now."""
    import sys
    import types

    import torch

    mod = types.ModuleType("padlint_early_return_runner")

    class Runner:
        def __init__(self):
            self.seq_lens = torch.zeros(8, dtype=torch.int32)

        def execute_model(self, live):
            """Write the live rows; call the provider only when there is something to run."""
            self.seq_lens[: len(live)] = torch.tensor(live, dtype=torch.int32)
            if len(live) > 2:
                return None  # early return (nothing scheduled this step): no provider call
            return self._build_attention_metadata(len(live), 4, len(live), 4)

        def _build_attention_metadata(self, num_reqs, num_reqs_padded, num_tokens, num_tokens_padded):
            return None

    mod.Runner = Runner
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    install_toy(provider=f"{mod.__name__}:Runner._build_attention_metadata", classes=[],
                step=f"{mod.__name__}:Runner.execute_model", mode="record", poison=True, poison_buffers=[])
    runner = Runner()
    pr.register_poison_buffer(runner.seq_lens, axis="reqs")
    runner.execute_model([1, 2])  # provider: num_reqs 2 -> rows [2:] get the sentinel -99
    assert runner.seq_lens.tolist() == [1, 2, -99, -99, -99, -99, -99, -99]
    runner.execute_model([1, 2, 3, 4, 5])  # early return: rows [0:5) are live, nothing is poisoned
    assert runner.seq_lens.tolist() == [1, 2, 3, 4, 5, -99, -99, -99]
    assert pr.installed().poison.fills == 1


# -- sentinels per dtype -----------------------------------------------------------
NEUTRALS = (False, 0, -1, 1)  # the profile's neutral values (NULL_BLOCK_ID = 0, PAD_SLOT_ID = -1)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                   "float16", "float32", "float64"])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_default_sentinel_fits_every_dtype_and_is_not_neutral(install_toy, kind, dtype):
    """A uint8 numpy buffer used to raise OverflowError (-99 does not fit); every integer,
    bool and float dtype gets a default that fits and is none of the profile's neutral values."""
    import numpy as np
    import torch

    install_toy("fixed", "record", poison=True)
    buf = np.zeros(4, dtype=dtype) if kind == "numpy" else torch.zeros(4, dtype=getattr(torch, dtype))
    entry = pr.register_poison_buffer(buf, axis="reqs", name="b")
    assert pr.poison_padding(2) == 1
    rows = np.asarray(buf if kind == "numpy" else buf.numpy())
    assert rows[:2].tolist() == [0, 0]
    if dtype.startswith("float"):
        # finite, never NaN by default: NaN in padding rows reaches real rows through reductions (vLLM #40047)
        assert rows[2:].tolist() == [-99.0, -99.0] and entry.sentinel == -99.0
        return
    expected = True if dtype == "bool" else -99 if not dtype.startswith("uint") else (
        2**63 - 1 if (kind, dtype) == ("torch", "uint64") else np.iinfo(dtype).max)  # torch fills through int64
    assert rows[2:].tolist() == [expected, expected] and entry.sentinel == expected
    assert dtype == "bool" or expected not in NEUTRALS


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("dtype, sentinel", [("uint8", -1), ("uint8", 256), ("int8", 200), ("int32", 2.5),
                                             ("int32", "x"), ("bool", 2), ("float16", 1e6), ("float32", 1j)])
def test_explicit_sentinel_that_does_not_fit_is_rejected_at_registration(install_toy, kind, dtype, sentinel):
    import numpy as np
    import torch

    install_toy("fixed", "record", poison=True)
    buf = np.zeros(4, dtype=dtype) if kind == "numpy" else torch.zeros(4, dtype=getattr(torch, dtype))
    with pytest.raises(ValueError, match=rf"^poison buffer 'b': sentinel .* does not fit dtype \S*{dtype}\b") as e:
        pr.register_poison_buffer(buf, sentinel=sentinel, name="b")
    assert "\n" not in str(e.value)
    assert pr.installed().poison.buffers == []


@pytest.mark.parametrize("dtype, sentinel", [("uint8", 255), ("int8", -128), ("int32", 7.0), ("bool", 1),
                                             ("float16", -1), ("float32", float("inf"))])
def test_explicit_sentinel_that_fits_is_written(install_toy, dtype, sentinel):
    import numpy as np

    install_toy("fixed", "record", poison=True)
    buf = np.zeros(3, dtype=dtype)
    pr.register_poison_buffer(buf, sentinel=sentinel, name="b")
    pr.poison_padding(1)
    assert buf[1:].tolist() == [sentinel, sentinel]


def test_torch_uint64_sentinel_is_limited_to_what_torch_writes(install_toy):
    """Torch writes scalars through int64: 2**63 would fail at every step, so it is refused up front."""
    import torch

    install_toy("fixed", "record", poison=True)
    with pytest.raises(ValueError, match=r"range 0\.\.9223372036854775807"):
        pr.register_poison_buffer(torch.zeros(3, dtype=torch.uint64), sentinel=2**63, name="b")


@pytest.mark.parametrize("make", ["leaf", "view of a leaf", "inference tensor"])
def test_buffers_with_autograd_state_are_poisoned(install_toy, make):
    """In-place writes into a requires_grad leaf (or a view of one) used to raise RuntimeError;
    poisoning runs under torch.inference_mode(), which also admits inference tensors."""
    import torch

    install_toy("fixed", "record", poison=True)
    if make == "inference tensor":
        with torch.inference_mode():
            buf = torch.zeros(4)
    else:
        leaf = torch.zeros(5, requires_grad=True)
        buf = leaf if make == "leaf" else leaf[1:]
    pr.register_poison_buffer(buf, name="b")
    assert pr.poison_padding(2) == 1
    assert (buf[2:] == -99.0).all() and (buf[:2] == 0).all()
    if make != "inference tensor":
        assert buf.requires_grad  # still a tensor autograd can use


class _FakeCpuGpuBuffer:
    def __init__(self, cpu):
        self.cpu = cpu


@pytest.mark.parametrize("buffer, shown", [([0, 0, 0, 0], "list"), ((0, 0), "tuple"), ({"a": 1}, "dict"), (7, "int"),
                                           (_FakeCpuGpuBuffer([0, 0]), "_FakeCpuGpuBuffer with .cpu list")])
def test_a_buffer_that_is_not_a_tensor_or_array_is_rejected_at_registration(install_toy, buffer, shown):
    """A list used to be accepted and to fail at the first poisoning with AttributeError."""
    install_toy("fixed", "record", poison=True)
    with pytest.raises(TypeError, match=rf"^poison buffer '\w+': expected a torch\.Tensor, a numpy\.ndarray or "
                                        rf"a CpuGpuBuffer-like object \(with a \.cpu tensor\), got {shown}$"):
        pr.register_poison_buffer(buffer)
    assert pr.installed().poison.buffers == []


def test_a_0d_buffer_is_rejected_at_registration(install_toy):
    import torch

    install_toy("fixed", "record", poison=True)
    with pytest.raises(ValueError, match=r"^poison buffer 'b': a 0-d buffer has no rows to poison$"):
        pr.register_poison_buffer(torch.tensor(3), name="b")


def test_unsupported_dtype_is_rejected_at_registration(install_toy):
    import numpy as np

    install_toy("fixed", "record", poison=True)
    with pytest.raises(TypeError, match=r"^poison buffer 'b': dtype object: poison mode supports bool, integer, "):
        pr.register_poison_buffer(np.zeros(3, dtype=object), name="b")


@pytest.mark.parametrize("args, error, match", [
    ((-1,), ValueError, r"^poison_padding: num_reqs must be >= 0, got -1$"),
    ((2, -3), ValueError, r"^poison_padding: num_tokens must be >= 0, got -3$"),
    ((2.0,), TypeError, r"^poison_padding: num_reqs must be an integer \(int or anything with __index__\), got float 2\.0$"),
    (("2",), TypeError, r"^poison_padding: num_reqs must be an integer .*, got str '2'$"),
    ((2, "tensor(2.)"), TypeError, r"^poison_padding: num_tokens must be an integer .*, got Tensor tensor\(2\.\)$"),
])
def test_negative_or_non_integer_counts_are_rejected(install_toy, args, error, match):
    """poison_padding(-1) used to poison the last row (a negative slice start)."""
    import torch

    install_toy("fixed", "record", poison=True)
    reqs, toks = torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(reqs, axis="reqs")
    pr.register_poison_buffer(toks, axis="tokens")
    args = tuple(torch.tensor(2.0) if a == "tensor(2.)" else a for a in args)
    with pytest.raises(error, match=match):
        pr.poison_padding(*args)
    assert reqs.tolist() == toks.tolist() == [0, 0, 0, 0]  # nothing written
    assert pr.installed().poison.fills == 0


def test_integer_like_counts_are_accepted(install_toy):
    import numpy as np
    import torch

    install_toy("fixed", "record", poison=True)
    reqs, toks = torch.zeros(4, dtype=torch.int32), torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(reqs, axis="reqs")
    pr.register_poison_buffer(toks, axis="tokens")
    assert pr.poison_padding(np.int64(3), torch.tensor(2)) == 2
    assert reqs.tolist() == [0, 0, 0, -99] and toks.tolist() == [0, 0, -99, -99]
    assert pr.poison_padding(None, 4) == 0  # None: that axis is not poisoned; 4: no row past the count


# -- a buffer that cannot be poisoned ----------------------------------------------
def _read_only(n=4):
    import numpy as np

    a = np.zeros(n, dtype=np.int32)
    a.flags.writeable = False  # writing raises ValueError: assignment destination is read-only
    return a


def test_one_failing_buffer_does_not_stop_the_others(install_toy):
    """The first buffer failing used to raise out of poison_padding before the second was written."""
    import warnings

    import torch

    from padlint.runtime.poison import PoisonWarning

    install_toy("fixed", "record", poison=True)
    good = torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(_read_only(), name="ro")
    pr.register_poison_buffer(good, name="good")
    with pytest.warns(PoisonWarning, match=r"^padlint poison: buffer 'ro' could not be poisoned: ValueError: "
                                           r"assignment destination is read-only$"):
        assert pr.poison_padding(1) == 1
    assert good.tolist() == [0, -99, -99, -99]
    poisoner = pr.installed().poison
    assert [(f.name, f.reason, f.times) for f in poisoner.failures] == [
        ("ro", "ValueError: assignment destination is read-only", 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once: the second failure of the same buffer is only counted
        assert pr.poison_padding(2) == 1
    assert poisoner.failures[0].times == 2
    assert poisoner.failures[0].line() == ("buffer 'ro' could not be poisoned: ValueError: assignment destination "
                                           "is read-only (2 times)")


@pytest.fixture
def step_runner(monkeypatch):
    """A runner module whose step calls the provider with the given counts, then returns
    ("result", ...) or raises what it is told to."""
    import sys
    import types

    import torch

    mod = types.ModuleType("padlint_poison_step_runner")

    class Runner:
        def __init__(self):
            self.seq_lens = torch.zeros(6, dtype=torch.int32)
            self.not_a_buffer = [0] * 6

        @property
        def broken(self):  # a runner property that raises when read
            raise RuntimeError("not initialised yet")

        def execute_model(self, num_reqs=2, raise_=None):
            self._build_attention_metadata(num_reqs, 4, 2, 4)
            if raise_ is not None:
                raise raise_
            return "result"

        def _build_attention_metadata(self, num_reqs, num_reqs_padded, num_tokens, num_tokens_padded):
            return None

    mod.Runner = Runner
    monkeypatch.setitem(sys.modules, mod.__name__, mod)

    def make(install_toy, **kw):
        kw.setdefault("poison_buffers", [])
        install_toy(provider=f"{mod.__name__}:Runner._build_attention_metadata", classes=[],
                    step=f"{mod.__name__}:Runner.execute_model", mode="record", poison=True, **kw)
        return Runner()

    return make


def test_a_failing_buffer_never_replaces_the_step_result(install_toy, step_runner):
    """Poisoning in the step hook used to raise out of the step, replacing its return value."""
    import warnings

    import torch

    runner = step_runner(install_toy)
    pr.register_poison_buffer(torch.zeros(1, dtype=torch.int32).expand(6), name="expanded")  # in-place write fails
    pr.register_poison_buffer(runner.seq_lens, name="seq_lens")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert runner.execute_model() == "result"
        assert runner.execute_model() == "result"
    assert runner.seq_lens.tolist() == [0, 0, -99, -99, -99, -99]
    assert len(caught) == 1  # once, not once per step
    assert str(caught[0].message).startswith("padlint poison: buffer 'expanded' could not be poisoned: RuntimeError: ")
    assert pr.installed().poison.failures[0].times == 2


def test_a_failing_buffer_never_replaces_the_step_exception(install_toy, step_runner):
    runner = step_runner(install_toy)
    pr.register_poison_buffer(_read_only(6), name="ro")
    with pytest.warns(Warning), pytest.raises(KeyError, match="the step's own error"):
        runner.execute_model(raise_=KeyError("the step's own error"))
    assert [f.name for f in pr.installed().poison.failures] == ["ro"]


def test_warnings_as_errors_never_raise_out_of_the_step(install_toy, step_runner):
    import warnings

    runner = step_runner(install_toy)
    pr.register_poison_buffer(_read_only(6), name="ro")
    pr.register_poison_buffer(runner.seq_lens, name="seq_lens")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert runner.execute_model() == "result"
    assert runner.seq_lens.tolist() == [0, 0, -99, -99, -99, -99]
    assert [f.name for f in pr.installed().poison.failures] == ["ro"]


def test_a_profile_buffer_that_cannot_be_registered_never_breaks_the_step(install_toy, step_runner):
    """A [runtime.poison] path naming a list: registration refuses it (TypeError), and the step
    hook's registration records that instead of raising it out of the step."""
    runner = step_runner(install_toy, poison_buffers=[("not_a_buffer", "reqs", None), ("seq_lens", "reqs", -7)])
    with pytest.warns(Warning, match=r"^padlint poison: buffer 'not_a_buffer' could not be registered: TypeError: "
                                     r"poison buffer 'not_a_buffer': expected a torch\.Tensor"):
        assert runner.execute_model() == "result"
    assert runner.seq_lens.tolist() == [0, 0, -7, -7, -7, -7]  # the next path was still registered and poisoned
    assert [f.name for f in pr.installed().poison.failures] == ["not_a_buffer"]
    with pytest.raises(TypeError, match="expected a torch.Tensor"):  # an explicit registration still raises
        pr.register_poison_buffer(runner.not_a_buffer)


def test_a_profile_path_through_a_raising_property_is_missing_not_an_error_in_the_step(install_toy, step_runner):
    runner = step_runner(install_toy, poison_buffers=[("broken.rows", "reqs", None), ("seq_lens", "reqs", -7)])
    with pytest.warns(Warning, match=r"not found on the runner, not poisoned: Runner\.broken\.rows"):
        assert runner.execute_model() == "result"
    assert runner.seq_lens.tolist() == [0, 0, -7, -7, -7, -7]
    assert pr.installed().poison.missing == ["Runner.broken.rows"]


@pytest.mark.parametrize("num_reqs", [-1, 2.5])
def test_bad_provider_counts_are_warned_not_raised(install_toy, step_runner, num_reqs):
    """The provider hook refuses counts that are not row counts (once, as a warning, never out
    of the call); the step's counts are then unknown, so nothing is poisoned."""
    runner = step_runner(install_toy)
    pr.register_poison_buffer(runner.seq_lens, name="seq_lens")
    with pytest.warns(RuntimeWarning, match=r"^padlint runtime: Runner\._build_attention_metadata was called with "
                                            r"counts that are not row counts \(num_reqs must be"):
        assert runner.execute_model(num_reqs) == "result"
    assert runner.seq_lens.tolist() == [0] * 6  # nothing written with counts that are not row counts


def test_missing_profile_buffers_are_warned_once_and_listed(install_toy):
    """[runtime.poison] paths not found on the runner used to be reported nowhere."""
    import warnings

    from padlint.runtime.poison import PoisonWarning

    install_toy("fixed", "record", step="toy_runner_fixed:ToyModelRunner.execute_model", poison=True,
                poison_buffers=[("seq_lens", "reqs", None), ("no_such_buffer", "reqs", None),
                                ("input_batch.nope", "tokens", None)])
    runner = make_runner("fixed")
    for rid in "ABC":
        runner.add_request(rid, 2)
    with pytest.warns(PoisonWarning) as caught:
        runner.execute_model()
    assert [str(w.message) for w in caught] == [
        ("padlint poison: [runtime.poison] buffer(s) not found on the runner, not poisoned: "
         "ToyModelRunner.no_such_buffer, ToyModelRunner.input_batch.nope")]
    poisoner = pr.installed().poison
    assert poisoner.missing == ["ToyModelRunner.no_such_buffer", "ToyModelRunner.input_batch.nope"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: neither the next step nor another runner warns again
        runner.execute_model()
        other = make_runner("fixed")
        other.add_request("A", 2)
        other.execute_model()
    assert poisoner.missing == ["ToyModelRunner.no_such_buffer", "ToyModelRunner.input_batch.nope"]
    assert poisoner.summary_lines() == [
        "padlint poison: [runtime.poison] buffer ToyModelRunner.no_such_buffer not found on the runner: not poisoned",
        "padlint poison: [runtime.poison] buffer ToyModelRunner.input_batch.nope not found on the runner: not poisoned"]


def test_summary_lines_list_failures(install_toy):
    install_toy("fixed", "record", poison=True)
    pr.register_poison_buffer(_read_only(), name="ro")
    with pytest.warns(Warning):
        pr.poison_padding(1)
    pr.poison_padding(1)
    assert pr.installed().poison.summary_lines() == [
        "padlint poison: buffer 'ro' could not be poisoned: ValueError: assignment destination is read-only (2 times)"]


# -- buffers that queued device work may still read -------------------------------------

def test_pinned_or_device_buffers_wait_for_queued_work_before_the_write(install_toy, monkeypatch):
    """vLLM copies pinned CpuGpuBuffer.cpu rows to the GPU with non_blocking=True: poisoning
    them while that copy is queued could change what the current step reads.  With such a
    buffer registered, the device is synchronised once, before any row is written.
    (No pinned memory on a CPU-only build: the pinned test and the synchronisation are
    stood in for; tests/runtime/test_cuda.py runs the real thing on a GPU.)"""
    import torch

    from padlint.runtime import poison

    install_toy("fixed", "record", poison=True)
    pinned = torch.zeros(4, dtype=torch.int32)
    plain = torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(pinned, axis="reqs", name="pinned")
    pr.register_poison_buffer(plain, axis="reqs", name="plain")
    monkeypatch.setattr(poison, "_queued_work_may_read", lambda t: t is pinned)
    monkeypatch.setattr(poison, "stream_is_capturing", lambda: False)
    seen_at_sync = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: seen_at_sync.append((pinned.tolist(), plain.tolist())))
    assert pr.poison_padding(2) == 2
    assert seen_at_sync == [([0, 0, 0, 0], [0, 0, 0, 0])]  # one sync, before anything was written
    assert pinned.tolist() == plain.tolist() == [0, 0, -99, -99]


def test_nothing_is_poisoned_while_a_graph_is_captured(install_toy, monkeypatch):
    """During capture a sync is illegal and a fill of a device buffer would be captured
    into the graph: with a buffer queued work may read, nothing is written."""
    import torch

    from padlint.runtime import poison

    install_toy("fixed", "record", poison=True)
    buf = torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(buf, axis="reqs", name="pinned")
    monkeypatch.setattr(poison, "_queued_work_may_read", lambda t: True)
    monkeypatch.setattr(poison, "stream_is_capturing", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: pytest.fail("synchronised during capture"))
    assert pr.poison_padding(2) == 0
    assert buf.tolist() == [0, 0, 0, 0]


def test_plain_cpu_buffers_need_no_synchronisation(install_toy, monkeypatch):
    import torch

    install_toy("fixed", "record", poison=True)
    buf = torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(buf, axis="reqs", name="b")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: pytest.fail("a pageable CPU buffer needs no sync"))
    assert pr.poison_padding(3) == 1 and buf.tolist() == [0, 0, 0, -99]


@pytest.mark.parametrize("dtype, sentinel, stored", [("float16", 1e-8, "0.0"), ("complex64", 1e300j, "infj")])
def test_a_sentinel_the_dtype_would_round_is_refused(install_toy, dtype, sentinel, stored):
    """float16 stores 1e-8 as 0.0, a neutral value: poison mode would silently write
    nothing useful.  Refused at registration, saying what would have been stored."""
    import torch

    install_toy("fixed", "record", poison=True)
    with pytest.raises(ValueError, match=rf"sentinel .* does not fit dtype torch.{dtype} \(stored as {stored}"):
        pr.register_poison_buffer(torch.ones(4, dtype=getattr(torch, dtype)), sentinel=sentinel, name="b")


def test_an_object_dtype_buffer_with_a_sentinel_is_a_type_error(install_toy):
    import numpy as np

    install_toy("fixed", "record", poison=True)
    with pytest.raises(TypeError, match="dtype object: poison mode supports"):
        pr.register_poison_buffer(np.array([1, None, 3], dtype=object), sentinel=5, name="objs")


def test_a_buffer_whose_cpu_view_raises_does_not_stop_the_others(install_toy):
    """A CpuGpuBuffer-like object whose .cpu raises later (freed): recorded, and the other
    buffers are still poisoned (the queued-work check used to read every .cpu first,
    outside the per-buffer guard)."""
    import warnings

    import torch

    class Freed:
        def __init__(self):
            self.alive = True
            self._cpu = torch.zeros(4, dtype=torch.int32)

        @property
        def cpu(self):
            if not self.alive:
                raise RuntimeError("buffer was freed")
            return self._cpu

    install_toy("fixed", "record", poison=True)
    freed, good = Freed(), torch.zeros(4, dtype=torch.int32)
    pr.register_poison_buffer(freed, name="freed")
    pr.register_poison_buffer(good, name="good")
    freed.alive = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert pr.poison_padding(1) == 1
    assert good.tolist() == [0, -99, -99, -99]
    assert [f.name for f in pr.installed().poison.failures] == ["freed"]
    assert "buffer 'freed' could not be poisoned: RuntimeError: buffer was freed" in str(caught[0].message)


def test_every_new_runner_gets_its_profile_buffers_and_dead_ones_are_dropped(install_toy):
    """Runners were remembered by id(): a new runner at a dead one's address was never
    registered (nothing poisoned, no warning), and the dead runners' buffers were kept
    alive and filled every step."""
    import gc

    import toy_runner_fixed

    install_toy("fixed", "record", step="toy_runner_fixed:ToyModelRunner.execute_model", poison=True,
                poison_buffers=[("query_start_loc", "reqs+1", None)])
    for _ in range(5):
        runner = toy_runner_fixed.ToyModelRunner()
        runner.add_request("A", 2)
        runner.add_request("B", 2)
        runner.execute_model()
        # 2 real requests: offsets [0, 2, 4] are live, rows [3:] get the int32 sentinel
        assert runner.query_start_loc.np[3:].tolist() == [-99] * (len(runner.query_start_loc.np) - 3)
        del runner
        gc.collect()
    runner = toy_runner_fixed.ToyModelRunner()
    runner.add_request("A", 2)
    runner.execute_model()
    assert len(pr.installed().poison.buffers) == 1  # only the live runner's buffer is kept


def test_sparse_and_meta_buffers_are_refused_at_registration(install_toy):
    import torch

    install_toy("fixed", "record", poison=True)
    for buf in (torch.zeros(4).to_sparse(), torch.zeros(4, device="meta")):
        with pytest.raises(TypeError, match="only dense tensors with storage can be poisoned"):
            pr.register_poison_buffer(buf, name="b")
