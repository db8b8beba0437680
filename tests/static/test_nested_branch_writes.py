"""A write made in a branch before a nested test survives the nested test's join.

A branch's heap holds what its parent path had written as its ``base``, not as written; a
nested test's branches forked from it hold only the branch's own writes there.  The join of the
nested test lost the parent's writes, so the enclosing test's join took one path's value of a
key the other path never had and did not compare it.  Here the key is the ``is_padding`` field of
the batch ``prepare_inputs`` builds under ``if not dummy_run:`` (a view whose padding rows it
resets); the nested LoRA test dropped it, the view lost its path's reset at the join, and the
sink after it reported the reset rows as stale (vLLM 0.32.0's Model Runner V2
``execute_model``, ``model_runner.py:2026``: docs/triage-unseen-releases.md, D2).  Written from
scratch in that shape.
"""

from __future__ import annotations

from padlint.analysis import check_source
from padlint.profile import load_profile

RUNNER = '''\
from dataclasses import dataclass

import torch
from vllm.forward_context import set_forward_context


@dataclass
class InputBatch:
    num_tokens: int
    is_padding: torch.Tensor


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.is_padding = torch.zeros(max_num_tokens, dtype=torch.bool)

    def prepare_inputs(self, scheduler_output) -> InputBatch:
        num_tokens = scheduler_output.total_num_scheduled_tokens
        num_tokens_padded = self.cudagraph_dispatcher.pad(num_tokens)
        is_padding = self.is_padding[:num_tokens_padded]
        is_padding[:num_tokens].fill_(False)
        RESET
        return InputBatch(num_tokens=num_tokens, is_padding=is_padding)

    def make_dummy(self, num_tokens: int) -> InputBatch:
        self.is_padding[:num_tokens].fill_(True)
        return InputBatch(num_tokens=num_tokens, is_padding=self.is_padding[:num_tokens])

    def execute_model(self, scheduler_output, dummy_run: bool = False):
        if not dummy_run:
            input_batch = self.prepare_inputs(scheduler_output)
            if self.lora_config:
                if self.lora_config.fully_sharded:
                    self.set_active_loras(1)
                else:
                    self.set_active_loras(2)
        else:
            input_batch = self.make_dummy(8)
        with set_forward_context(None, None, is_padding=input_batch.is_padding):
            return self.model(input_batch)
'''


def _found(reset: str, nested: str = ""):
    src = RUNNER.replace("RESET", reset)
    if nested:
        src = src.replace(NESTED, nested)
    return check_source(src, "runner.py", load_profile("vllm"))


NESTED = """            if self.lora_config:
                if self.lora_config.fully_sharded:
                    self.set_active_loras(1)
                else:
                    self.set_active_loras(2)
"""


def test_reset_in_the_branch_counts_after_a_nested_test():
    # prepare_inputs resets rows [num_tokens:num_tokens_padded] of the view it puts in the
    # batch; the dummy branch's batch holds rows [:8], all written: nothing is stale
    assert _found("is_padding[num_tokens:].fill_(True)") == []


def test_no_reset_is_still_reported():
    # without the reset, rows [num_tokens:num_tokens_padded] of the real step's view are stale
    (f,) = _found("pass")
    assert f.line == 39 and f.field == "is_padding"
    assert "rows [num_tokens:num_tokens_padded] may be stale" in f.message


def test_a_nested_test_with_one_live_branch():
    # a nested test whose one branch leaves the function: the join is the other branch's heap
    one_live = """            if self.lora_config:
                if self.lora_config.fully_sharded:
                    raise ValueError("unsupported")
                self.set_active_loras(2)
"""
    assert _found("is_padding[num_tokens:].fill_(True)", one_live) == []
    (f,) = _found("pass", one_live)
    assert f.field == "is_padding"


LOOP_RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.positions = torch.zeros(max_num_tokens, dtype=torch.int64)
        self.counters = {"a": 0, "b": 0}

    def execute_model(self, scheduler_output):
        num_tokens = scheduler_output.total_num_scheduled_tokens
        num_tokens_padded = self.cudagraph_dispatcher.pad(num_tokens)
        self.positions[:num_tokens] = torch.as_tensor(scheduler_output.positions)
        if scheduler_output.use_spec:
            self.positions[num_tokens:num_tokens_padded] = 0
            for name in ("a", "b"):
                self.counters[name] += 1
        return CommonAttentionMetadata(positions=self.positions[:num_tokens_padded])
'''


def test_a_loop_over_literals_continues_the_branch_path():
    # the reset runs only where `use_spec` holds (a test of nothing the analysis keeps a fact
    # of): the other path hands out stale rows [num_tokens:num_tokens_padded].  The loop over
    # the literal tuple runs its body once per element, each round a fork of the last; the
    # rounds did not continue the branch's path, so the reset made before the loop was no
    # longer among the branch's writes and the join kept it from the one branch (no finding)
    (f,) = check_source(LOOP_RUNNER, "runner.py", load_profile("vllm"))
    assert (f.code, f.field, f.line) == ("PAD001", "positions", 18)
    assert "rows [num_tokens:num_tokens_padded] may be stale" in f.message
