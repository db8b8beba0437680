"""The real count a message and its fix name at a sink in a callee.

A profile pair names the real count of a padded one by name (``num_tokens`` for
``num_tokens_padded``).  In a callee a dummy run calls, the callee's own ``num_tokens`` is that
count; another local may hold the *value* of the caller's ``num_tokens`` on one branch only
(``max_query_len = num_tokens`` unless the batch is a uniform decode).  The message and the reset
it proposes named that local (``self.positions[max_query_len:num_tokens_padded] = 0``): on a batch
with more tokens than its longest query that reset would zero real tokens' positions.  vLLM
0.32.0's ``_dummy_run`` -> ``_build_attention_metadata`` did this (docs/triage-unseen-releases.md,
D4); the runner below is that shape, written from scratch.
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

RUNNER = '''\
import numpy as np
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.positions = torch.zeros(max_num_tokens, dtype=torch.int64)

    def execute_model(self, scheduler_output):
        num_tokens = scheduler_output.total_num_scheduled_tokens
        num_tokens_padded = self.cudagraph_dispatcher.pad(num_tokens)
        self.positions[:num_tokens] = torch.as_tensor(scheduler_output.positions)
        self.positions[num_tokens:num_tokens_padded] = 0
        return self._build_attention_metadata(num_tokens=num_tokens, max_query_len=scheduler_output.max_len,
                                              num_tokens_padded=num_tokens_padded)

    def warm_up(self, num_tokens: int, uniform_decode: bool):
        if uniform_decode:
            max_query_len = 1
        else:
            max_query_len = num_tokens
        num_scheduled_tokens = np.array([max_query_len] * 4)
        num_tokens_unpadded = int(num_scheduled_tokens.sum())
        num_tokens_padded = self.cudagraph_dispatcher.pad(num_tokens)
        return self._build_attention_metadata(num_tokens=NUM_TOKENS, max_query_len=max_query_len,
                                              num_tokens_padded=num_tokens_padded)

    def _build_attention_metadata(self, num_tokens: int, max_query_len: int, num_tokens_padded: int):
        return CommonAttentionMetadata(
            positions=self.positions[:num_tokens_padded],
            max_query_len=max_query_len,
            num_actual_tokens=num_tokens_padded,
        )
'''


def _one(num_tokens: str):
    found = check_source(RUNNER.replace("NUM_TOKENS", num_tokens), "runner.py", load_profile("vllm"))
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def test_the_callee_own_count_is_named_not_a_local_equal_on_one_branch():
    # warm_up writes no row of `positions`; execute_model resets its padding rows.  On the path
    # warm_up -> _build_attention_metadata rows [num_tokens:num_tokens_padded] of the callee's
    # counts are stale: `num_tokens` is the callee's parameter (warm_up's unpadded sum), and
    # `max_query_len` is warm_up's `num_tokens` only where the batch is not a uniform decode
    f = _one("num_tokens_unpadded")
    assert "rows [num_tokens:num_tokens_padded] may be stale" in f.message
    assert "max_query_len:" not in f.message
    assert f.real == "num_tokens"
    assert f.fix is not None and f.fix.text == "self.positions[num_tokens:num_tokens_padded] = 0"


def test_the_same_when_the_callee_count_is_the_caller_namesake():
    # the call passes warm_up's own `num_tokens`: both the callee's `num_tokens` and (on one
    # branch) `max_query_len` hold it; the name the profile pairs is shown
    f = _one("num_tokens")
    assert f.real == "num_tokens"
    assert f.fix is not None and f.fix.text == "self.positions[num_tokens:num_tokens_padded] = 0"


def test_a_real_count_bound_to_the_padded_count_is_not_named():
    # the call passes the padded count as the callee's real one (a dummy run's shape): a reset
    # from the callee's `num_tokens` writes no row, so the message proposes none there, and it
    # names the parameter the call binds (before, `max_query_len`, said to be passed the padded
    # count, which it is not)
    f = _one("num_tokens_padded")
    assert f.fix is None
    assert "add `" not in f.message
    assert "passes the padded count as `num_tokens`" in f.message
    assert "max_query_len" not in f.message


#: a runner whose own step names the real count `num_tokens_unpadded` (one of the pair's real
#: names) and binds a local `num_tokens` to something else before the sink
LOCAL = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_tokens: int) -> None:
        self.positions = torch.zeros(max_num_tokens, dtype=torch.int64)

    def execute_model(self, so):
        num_tokens_unpadded = so.total_num_scheduled_tokens
        num_tokens_padded = self.cudagraph_dispatcher.pad(num_tokens_unpadded)
        self.positions[:num_tokens_unpadded] = torch.as_tensor(so.positions)
        BIND
        return CommonAttentionMetadata(positions=self.positions[:num_tokens_padded],
                                       num_actual_tokens=num_tokens)
'''


@pytest.mark.parametrize("bind", [
    # a local of the pair's real name holding the padded count: the range it names is empty
    "num_tokens = num_tokens_padded",
    # ... or a request count: a reset from it would zero the positions of real tokens
    # [num_reqs:num_tokens_unpadded] whenever a request has more than one token
    "num_reqs = so.num_reqs\n        num_tokens = num_reqs",
])
def test_a_local_of_the_pair_name_holding_another_count_is_not_the_real_count(bind):
    # rows [num_tokens_unpadded:num_tokens_padded] are stale (written [:num_tokens_unpadded], no
    # reset); the name the profile pairs is in scope but holds another count: the count the
    # step's own name holds is shown, and the reset from it proposed (a review found both)
    found = check_source(LOCAL.replace("BIND", bind), "runner.py", load_profile("vllm"))
    assert len(found) == 1
    (f,) = found
    assert f.real == "num_tokens_unpadded"
    assert f.fix is not None and f.fix.text == "self.positions[num_tokens_unpadded:num_tokens_padded] = 0"
