"""PAD002 where the profile gives a field no neutral value but the code states one twice: the
buffer is constructed with a deliberate value (``torch.full(n, self.width)``, ``torch.ones``, a
fill right after the allocation) and a reset writes another literal into the padding rows.  The
shape is SGLang 0.5.6 -> 0.5.7 (docs/historical-bugs.md, S4), written from scratch: the EAGLE
draft-extend runner constructs ``accept_length`` with ``num_tokens_per_bs`` per row (what capture
runs with) and its replay resets the padding rows to 1; 0.5.7 resets them to
``self.num_tokens_per_bs``.  ``accept_length`` has no ``[fields]`` entry in the sglang profile.
"""

from __future__ import annotations

from .project_files import check_files

MODULE = '''\
import bisect

import torch


class DraftExtendRunner:
    def __init__(self, model_runner, max_bs: int, steps: int) -> None:
        self.model_runner = model_runner
        self.capture_bs = [1, 2, 4, 8]
        self.num_tokens_per_bs = steps + 1
        self.accept_length = {ALLOC}
        {CONSTRUCT}
        self.graphs = {}

    def capture_one_batch_size(self, bs: int):
        with torch.cuda.graph(self.graphs[bs]):
            self.model_runner.forward(accept_length=self.accept_length[:bs])

    def replay(self, forward_batch):
        raw_bs = forward_batch.batch_size
        index = bisect.bisect_left(self.capture_bs, raw_bs)
        bs = self.capture_bs[index]
        if bs != raw_bs:
            self.accept_length.fill_({RESET})
        self.accept_length[:raw_bs].copy_(forward_batch.accept_length)
        self.graphs[bs].replay()
'''
FULL = "torch.full((max_bs,), self.num_tokens_per_bs, dtype=torch.int32)"


def _pad002(tmp_path, alloc=FULL, construct="pass", reset="1"):
    found = check_files(tmp_path, {"runner.py": MODULE}, ["runner.py"],
                        {"ALLOC": alloc, "CONSTRUCT": construct, "RESET": reset}, profile="sglang")
    return [f for f in found if f.code == "PAD002"]


def test_a_reset_that_disagrees_with_the_construction_is_reported(tmp_path):
    # capture runs with `num_tokens_per_bs` in the padding rows, the replay's reset writes 1
    (f,) = _pad002(tmp_path)
    assert f.field == "accept_length" and f.severity == "warning"
    assert "writes 1 into the padding rows [raw_bs:bs] of `accept_length`" in f.message
    assert "constructs `accept_length` with `self.num_tokens_per_bs` in every row (line 11)" in f.message
    assert "the profile does not give" in f.message
    # the write is the reset's statement; the unsafe fix writes the construction's value
    assert f.line == 24
    assert f.fix is not None and not f.fix.safe and f.fix.text == "self.num_tokens_per_bs" and f.fix.old == "1"


def test_the_reset_the_fix_release_writes_agrees(tmp_path):
    # SGLang 0.5.7: `fill_(self.num_tokens_per_bs)`, not a literal: nothing to compare, nothing said
    assert _pad002(tmp_path, reset="self.num_tokens_per_bs") == []


def test_zeros_are_no_statement_of_a_pad_value(tmp_path):
    # `torch.zeros` is how buffers are allocated by default: it states no pad value
    assert _pad002(tmp_path, alloc="torch.zeros((max_bs,), dtype=torch.int32)", reset="1") == []


def test_literal_constructions_are_compared_as_values(tmp_path):
    ones = "torch.ones((max_bs,), dtype=torch.int32)"
    assert _pad002(tmp_path, alloc=ones, reset="1") == []
    assert _pad002(tmp_path, alloc=ones, reset="1.0") == []  # the same value written another way
    (f,) = _pad002(tmp_path, alloc=ones, reset="2")
    assert "constructs `accept_length` with 1 in every row" in f.message


def test_a_fill_after_the_allocation_is_the_construction_value(tmp_path):
    zeros = "torch.zeros((max_bs,), dtype=torch.int32)"
    (f,) = _pad002(tmp_path, alloc=zeros, construct="self.accept_length.fill_(self.num_tokens_per_bs)")
    assert "with `self.num_tokens_per_bs` in every row" in f.message


def test_a_field_with_a_profile_contract_is_judged_by_the_profile_only(tmp_path):
    # `encoder_lens` has one neutral value in the sglang profile (0, no per-backend values): a reset
    # writing 0 is right whatever the construction says (7 here), and no construction is consulted
    src = MODULE.replace("accept_length", "encoder_lens")
    found = check_files(tmp_path, {"runner.py": src}, ["runner.py"],
                        {"ALLOC": FULL.replace("self.num_tokens_per_bs", "7"), "CONSTRUCT": "pass", "RESET": "0"},
                        profile="sglang")
    assert not [f for f in found if f.code == "PAD002"]


def test_a_buffer_no_captured_graph_reads_states_no_pad_value(tmp_path):
    # the construction value is what capture ran the graph's dummy requests with; a buffer the
    # captured graph does not read is only allocated with it (a mask of live rows, say)
    src = MODULE.replace("self.model_runner.forward(accept_length=self.accept_length[:bs])",
                         "self.model_runner.forward()")
    found = check_files(tmp_path, {"runner.py": src}, ["runner.py"],
                        {"ALLOC": FULL, "CONSTRUCT": "pass", "RESET": "1"}, profile="sglang")
    assert not any(f.code == "PAD002" for f in found)


def test_a_per_backend_contract_the_code_computes_is_the_code_s(tmp_path):
    # SGLang 0.4.7.post1 -> 0.4.8 (S3b): `seq_lens` has a per-backend contract in the profile (1 is
    # assumed where the module does not tell the backend; Ascend's is 0).  The runner constructs
    # it with the backend's own value and resets its padding rows with the literal 1: accepted by
    # the profile's assumption, contradicted by the code's construction.  0.4.8 resets with
    # `self.seq_len_fill_value`.
    src = MODULE.replace("accept_length", "seq_lens").replace(
        "self.num_tokens_per_bs = steps + 1",
        "self.num_tokens_per_bs = steps + 1\n        "
        "self.seq_len_fill_value = model_runner.attn_backend.get_cuda_graph_seq_len_fill_value()")
    alloc = "torch.full((max_bs,), self.seq_len_fill_value, dtype=torch.int32)"

    def pad002(reset):
        found = check_files(tmp_path, {"runner.py": src}, ["runner.py"],
                            {"ALLOC": alloc, "CONSTRUCT": "pass", "RESET": reset}, profile="sglang")
        return [f for f in found if f.code == "PAD002"]

    (f,) = pad002("1")
    assert "constructs `seq_lens` with `self.seq_len_fill_value` in every row" in f.message
    assert "depends on the backend (1 assumes the CUDA/ROCm/XPU attention backends" in f.message
    assert f.fix is not None and f.fix.text == "self.seq_len_fill_value"
    assert pad002("self.seq_len_fill_value") == []
    # a literal the assumed backend does not accept is the profile's own finding, said once
    (g,) = pad002("5")
    assert "the neutral value of `seq_lens` is SEQ_LEN_FILL_VALUE" in g.message


def test_a_named_constant_is_compared_by_its_value(tmp_path):
    # `PAD = 1` at module level: the construction is 1, the reset's 1 agrees; `NULL = 0` is zeros
    src = "PAD = 1\nNULL = 0\n" + MODULE
    for alloc, reset in (("torch.full((max_bs,), PAD, dtype=torch.int32)", "1"),
                         ("torch.full((max_bs,), NULL, dtype=torch.int32)", "1")):
        found = check_files(tmp_path, {"runner.py": src}, ["runner.py"],
                            {"ALLOC": alloc, "CONSTRUCT": "pass", "RESET": reset}, profile="sglang")
        assert not [f for f in found if f.code == "PAD002"], alloc


def test_capture_that_writes_the_buffer_did_not_run_with_the_construction_value(tmp_path):
    src = MODULE.replace("        with torch.cuda.graph(self.graphs[bs]):",
                         "        self.accept_length[:bs].fill_(1)\n        with torch.cuda.graph(self.graphs[bs]):")
    found = check_files(tmp_path, {"runner.py": src}, ["runner.py"],
                        {"ALLOC": FULL, "CONSTRUCT": "pass", "RESET": "1"}, profile="sglang")
    assert not [f for f in found if f.code == "PAD002"]


def test_no_fix_writes_a_name_the_reset_cannot_see(tmp_path):
    # the construction's `width` is a local of `__init__`: the disagreement is reported, but
    # writing `width` at the reset would not run
    alloc = "torch.full((max_bs,), width, dtype=torch.int32)"
    src = MODULE.replace("def __init__(self, model_runner, max_bs: int, steps: int) -> None:",
                         "def __init__(self, model_runner, max_bs: int, steps: int) -> None:\n        width = steps + 1")
    found = check_files(tmp_path, {"runner.py": src}, ["runner.py"],
                        {"ALLOC": alloc, "CONSTRUCT": "pass", "RESET": "1"}, profile="sglang")
    (f,) = [f for f in found if f.code == "PAD002"]
    assert f.fix is None and "make the two agree" in f.message
