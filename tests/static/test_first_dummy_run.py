"""PAD005 at the first dummy run: a dummy run (the profile's ``[dummy_runs] functions``: profile
runs, captures, warm-ups) runs before any step, so the rows of its views that no write of the run
reaches hold the value the buffer was *constructed* with, not an earlier step's.  The shape is
vLLM 0.31.0 -> 0.32.0 (docs/historical-bugs.md, B7), written from scratch:

    self.num_accepted_tokens = self._make_buffer(max_num_reqs, dtype=torch.int32)   # zeros
    # 0.32.0 adds: self.num_accepted_tokens.np.fill(1); self.num_accepted_tokens.copy_to_gpu()
    ...
    _dummy_run -> _build(num_reqs_padded, num_reqs_padded)   # skips execute_model's writes
        CommonAttentionMetadata(num_accepted_tokens=self.num_accepted_tokens.gpu[:num_reqs_padded])

``num_accepted_tokens`` is an index field of the vllm profile (its consumer indexes the conv
state at ``num_accepted_tokens[i] - 1``) with neutral value 1.  PAD001 reports the same sink in
every variant (after a real step the rows hold that step's counts: stale); PAD005 is about the
first run only and goes away when the construction writes 1 into the view the sink reads.
"""

from __future__ import annotations

from .project_files import check_files

MODULE = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class CpuGpuBuffer:
    def __init__(self, *size, dtype):
        self.cpu = torch.zeros(*size, dtype=dtype)
        self.np = self.cpu.numpy()
        self.gpu = torch.zeros_like(self.cpu)

    def copy_to_gpu(self, n=None):
        if n is None:
            return self.gpu.copy_(self.cpu)
        return self.gpu[:n].copy_(self.cpu[:n])


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.num_accepted_tokens = {ALLOC}
        {CONSTRUCT}
        self.seq_lens = {SEQ}

    def _make_buffer(self, *size, dtype):
        return CpuGpuBuffer(*size, dtype=dtype)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.num_accepted_tokens{VIEW}[:num_reqs] = scheduler_output.num_accepted
        self.num_accepted_tokens{VIEW}[num_reqs:].fill_(1)
        self.seq_lens.np[:num_reqs] = scheduler_output.seq_lens
        self.seq_lens.np[num_reqs:].fill(0)
        self.seq_lens.copy_to_gpu()
        return self._build(num_reqs, num_reqs_padded)

    def _dummy_run(self, num_reqs: int):
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        {DUMMY}
        return self._build(num_reqs_padded, num_reqs_padded)

    def _build(self, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(
            num_accepted_tokens=self.num_accepted_tokens{VIEW}[:num_reqs_padded],
            seq_lens=self.seq_lens.gpu[:num_reqs_padded],
            num_reqs=num_reqs,
        )


class Drafter:
    """Another class with a buffer of the same name, allocated uninitialised: not the runner's."""

    def __init__(self, n: int) -> None:
        self.num_accepted_tokens = torch.empty(n, dtype=torch.int32)
'''
WRAPPER = "self._make_buffer(max_num_reqs, dtype=torch.int32)"


def _codes(tmp_path, alloc=WRAPPER, construct="pass", view=".gpu", dummy="pass", seq=WRAPPER):
    """{(code, field)} reported; every finding here is at the metadata constructor's arguments."""
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": MODULE}, ["pkg/runner.py"],
                        {"ALLOC": alloc, "CONSTRUCT": construct, "VIEW": view, "DUMMY": dummy, "SEQ": seq})
    return {(f.code, f.field) for f in found}


PAD001 = ("PAD001", "num_accepted_tokens")
PAD005 = ("PAD005", "num_accepted_tokens")


def test_zeros_at_construction_reach_the_first_dummy_run(tmp_path):
    # the wrapper allocates zeros; nothing of the dummy run writes rows [0:num_reqs_padded]
    got = _codes(tmp_path)
    assert PAD005 in got and PAD001 in got


def test_the_message_names_the_construction_and_the_fix(tmp_path):
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": MODULE}, ["pkg/runner.py"],
                        {"ALLOC": WRAPPER, "CONSTRUCT": "pass", "VIEW": ".gpu", "DUMMY": "pass", "SEQ": WRAPPER})
    (f,) = [f for f in found if f.code == "PAD005"]
    assert "constructed with 0 at line 19" in f.message
    assert "not the neutral value 1 of `num_accepted_tokens`" in f.message
    assert "`_dummy_run`" in f.message and "before any step" in f.message
    assert "construct `num_accepted_tokens` with the neutral value 1" in f.message
    assert f.severity == "error"


def test_filling_host_and_copying_to_the_device_fixes_it(tmp_path):
    # vLLM 0.32.0: `.np.fill(1)` then `copy_to_gpu()`: the device view holds 1 as well
    construct = "self.num_accepted_tokens.np.fill(1)\n        self.num_accepted_tokens.copy_to_gpu()"
    got = _codes(tmp_path, construct=construct)
    assert PAD005 not in got and PAD001 in got  # the stale rows of later steps stay PAD001's


def test_filling_only_the_host_view_leaves_the_device_view_at_zero(tmp_path):
    got = _codes(tmp_path, construct="self.num_accepted_tokens.np.fill(1)")
    assert PAD005 in got


def test_a_partial_copy_to_the_device_is_not_a_construction_value(tmp_path):
    # `copy_to_gpu(n)` copies rows [:n] only: the device rows past n are not known to hold 1;
    # the value is unknown and nothing is claimed about the first run
    construct = "self.num_accepted_tokens.np.fill(1)\n        self.num_accepted_tokens.copy_to_gpu(4)"
    assert PAD005 not in _codes(tmp_path, construct=construct)


def test_a_fill_under_a_test_makes_the_value_unknown(tmp_path):
    construct = "if max_num_reqs > 1:\n            self.num_accepted_tokens.np.fill(1)"
    assert PAD005 not in _codes(tmp_path, construct=construct)


def test_a_neutral_allocation_is_no_finding(tmp_path):
    alloc = "torch.ones(max_num_reqs, dtype=torch.int32)"
    got = _codes(tmp_path, alloc=alloc, view="")
    assert PAD005 not in got and PAD001 in got


def test_a_whole_fill_of_a_plain_tensor(tmp_path):
    alloc = "torch.zeros(max_num_reqs, dtype=torch.int32)"
    assert PAD005 in _codes(tmp_path, alloc=alloc, view="")
    assert PAD005 not in _codes(tmp_path, alloc=alloc, view="", construct="self.num_accepted_tokens.fill_(1)")
    assert PAD005 not in _codes(tmp_path, alloc=alloc, view="", construct="self.num_accepted_tokens[:] = 1")


def test_an_uninitialised_allocation_is_reported_as_such(tmp_path):
    alloc = "torch.empty(max_num_reqs, dtype=torch.int32)"
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": MODULE}, ["pkg/runner.py"],
                        {"ALLOC": alloc, "CONSTRUCT": "pass", "VIEW": "", "DUMMY": "pass", "SEQ": WRAPPER})
    (f,) = [f for f in found if f.code == "PAD005"]
    assert "constructed uninitialised" in f.message and "uninitialised memory" in f.message


def test_a_dummy_run_that_writes_the_rows_has_nothing_to_report(tmp_path):
    # the dummy run writes every row it hands out: neither stale rows nor the construction value
    dummy = "self.num_accepted_tokens.gpu[:num_reqs_padded].fill_(1)"
    got = _codes(tmp_path, dummy=dummy)
    assert PAD005 not in got and PAD001 not in got


def test_a_field_that_is_not_an_index_is_not_judged_in_a_dummy_run(tmp_path):
    # `seq_lens` constructed with 1 (its neutral value is 0) reaches the sink from the dummy run
    # too, but it is no index: a dummy run's outputs are dropped, as for PAD001's dummy rows.
    # (PAD001 still reports its padding rows [num_reqs:num_reqs_padded] of later steps.)
    seq = WRAPPER + "\n        self.seq_lens.np.fill(1)\n        self.seq_lens.copy_to_gpu()"
    got = _codes(tmp_path, seq=seq)
    assert ("PAD005", "seq_lens") not in got


def test_only_the_holding_class_allocations_count(tmp_path):
    # `Drafter.num_accepted_tokens = torch.empty(...)` is another class's buffer: the runner's view
    # is judged by the runner's own allocation (zeros), not declared unknown by the disagreement
    got = _codes(tmp_path, construct="self.num_accepted_tokens.np.fill(1)\n        "
                                     "self.num_accepted_tokens.copy_to_gpu()")
    assert PAD005 not in got
    assert PAD005 in _codes(tmp_path)


# --- the construction, read closely (a review's cases) --------------------------------------


def test_a_fill_after_the_with_block_holding_the_allocation_counts(tmp_path):
    # the allocation inside `with torch.device(...)`, the fill and copy after the block
    alloc = "None\n        with torch.device('cpu'):\n            self.num_accepted_tokens = " + WRAPPER
    construct = "self.num_accepted_tokens.np.fill(1)\n        self.num_accepted_tokens.copy_to_gpu()"
    assert PAD005 not in _codes(tmp_path, alloc=alloc, construct=construct)
    assert PAD005 in _codes(tmp_path, alloc=alloc)


def test_an_object_of_unknown_class_claims_no_construction(tmp_path):
    # `self.state` has no known class: whose allocation its buffer is, is not known either (the
    # `Drafter` of the module allocates one of the same name uninitialised)
    src = MODULE.replace("self.num_accepted_tokens", "self.state.num_accepted_tokens").replace(
        "self.state.num_accepted_tokens = {ALLOC}", "self.state = make_state(max_num_reqs)")
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": src}, ["pkg/runner.py"],
                        {"CONSTRUCT": "pass", "VIEW": "", "DUMMY": "pass", "SEQ": WRAPPER})
    assert not [f for f in found if f.code == "PAD005"]


def test_a_subclass_that_fills_after_the_base_constructor_makes_the_value_unknown(tmp_path):
    # `self` in the base's `_dummy_run` may be a `FilledRunner`, whose constructor fills 1 after
    # `super().__init__()`: the construction value is not one value any more
    sub = ("\n\nclass FilledRunner(ModelRunner):\n    def __init__(self, max_num_reqs: int) -> None:\n"
           "        super().__init__(max_num_reqs)\n        self.num_accepted_tokens.np.fill(1)\n"
           "        self.num_accepted_tokens.copy_to_gpu()\n")
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": MODULE + sub}, ["pkg/runner.py"],
                        {"ALLOC": WRAPPER, "CONSTRUCT": "pass", "VIEW": ".gpu", "DUMMY": "pass", "SEQ": WRAPPER})
    assert not [f for f in found if f.code == "PAD005"]


def test_a_copy_of_the_view_carries_the_construction_value(tmp_path):
    # `acc = view.clone()` handed on: the copy's rows hold what the view's rows held
    src = MODULE.replace("num_accepted_tokens=self.num_accepted_tokens{VIEW}[:num_reqs_padded],",
                         "num_accepted_tokens=self.num_accepted_tokens{VIEW}[:num_reqs_padded].clone(),")
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": src}, ["pkg/runner.py"],
                        {"ALLOC": WRAPPER, "CONSTRUCT": "pass", "VIEW": ".gpu", "DUMMY": "pass", "SEQ": WRAPPER})
    assert [f.field for f in found if f.code == "PAD005"] == ["num_accepted_tokens"]
    # a value computed from the rows (`+ 1`) does not hold the construction value
    src = src.replace("[:num_reqs_padded].clone(),", "[:num_reqs_padded] + 1,")
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": src}, ["pkg/runner.py"],
                        {"ALLOC": WRAPPER, "CONSTRUCT": "pass", "VIEW": ".gpu", "DUMMY": "pass", "SEQ": WRAPPER})
    assert not [f for f in found if f.code == "PAD005"]


def test_a_host_fill_not_copied_to_the_device_is_named_as_such(tmp_path):
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": MODULE}, ["pkg/runner.py"],
                        {"ALLOC": WRAPPER, "CONSTRUCT": "self.num_accepted_tokens.np[:] = 1", "VIEW": ".gpu",
                         "DUMMY": "pass", "SEQ": WRAPPER})
    (f,) = [f for f in found if f.code == "PAD005"]
    assert "its host view holds 1: it is not copied to the device view" in f.message
    assert "num_accepted_tokens.copy_to_gpu()" in f.message


def test_a_helper_the_constructor_calls_after_the_allocation_makes_the_value_unknown(tmp_path):
    # `self._init_buffers()` fills the buffer: what the constructor leaves there is not read
    # through the call, so nothing is claimed about the first run (no false alarm)
    helper = ("\n    def _init_buffers(self) -> None:\n        self.num_accepted_tokens.np.fill(1)\n"
              "        self.num_accepted_tokens.copy_to_gpu()\n")
    src = MODULE.replace("    def _make_buffer(self, *size, dtype):", helper.lstrip("\n") + "\n    def _make_buffer(self, *size, dtype):")
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": src}, ["pkg/runner.py"],
                        {"ALLOC": WRAPPER, "CONSTRUCT": "self._init_buffers()", "VIEW": ".gpu", "DUMMY": "pass",
                         "SEQ": WRAPPER})
    assert not [f for f in found if f.code == "PAD005"]
    # a helper that does not touch the buffer changes nothing
    found = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": src.replace(
        "self.num_accepted_tokens.np.fill(1)\n        self.num_accepted_tokens.copy_to_gpu()", "pass")},
        ["pkg/runner.py"], {"ALLOC": WRAPPER, "CONSTRUCT": "self._init_buffers()", "VIEW": ".gpu", "DUMMY": "pass",
                            "SEQ": WRAPPER})
    assert [f.field for f in found if f.code == "PAD005"] == ["num_accepted_tokens"]
