"""A field of a passed-in object set under a test and restored under the same test later in the
function holds its restored value after both (path correlation of repeated tests, issue 8).

SGLang 0.5.23's EAGLE draft and frozen-KV graph runners do
``if bs != raw_bs: forward_batch.batch_size = bs; forward_batch.seq_lens = buffers.seq_lens[:bs]``,
replay, then ``if bs != raw_bs: forward_batch.batch_size = raw_bs; ...[:raw_bs]``.  Joined at the
first test, the field held the padded count (a join keeps the padded one) and the second test's
other branch kept that join, so every runner reached later with the same ``forward_batch`` read
``raw_bs = forward_batch.batch_size`` as a padded count: its resets ``[raw_bs:bs]`` covered
nothing, and 18 false alarms of SGLang's tree followed (NPU graph runner, DeepSeek-V4 backends,
ForwardBatch stores).  The engine now keeps, for a field whose value differs between the branches
of a test, each branch's value, and a later test of the same fact (same names, not reassigned)
sees on each branch the value that branch's fact left.  Written from scratch; the expected
findings are reasoned in each test.
"""

from __future__ import annotations

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

# `Worker.step` hands one `StepBatch` to a draft runner, then to a target runner.  The draft
# pads the batch for its graph when `use_graph` is set and, under `{TEST}`, restores it.  The
# target reads `raw_bs` from the batch, copies the batch's `seq_lens` into its buffer's first
# raw_bs rows, fills rows [raw_bs:bs] with 1 and builds the attention backend's view with
# `seq_lens[:bs]` (line 44, the sink; line 45 hands it on).  The draft never resets its own rows [raw_bs:bs]: they are stale.
RUNNERS = """\
import bisect
from types import SimpleNamespace

import torch
from dataclasses import dataclass


@dataclass
class StepBatch:
    batch_size: int
    seq_lens: torch.Tensor


class DraftRunner:
    def __init__(self, model, capture_bs):
        self.model = model
        self.capture_bs = sorted(capture_bs)
        self.seq_lens = torch.ones(self.capture_bs[-1], dtype=torch.int64)

    def replay(self, forward_batch: StepBatch, use_graph: bool, keep_padded: bool):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        if use_graph:
            forward_batch.batch_size = bs
            forward_batch.seq_lens = self.seq_lens[:bs]
        {BETWEEN}
        if {TEST}:
            forward_batch.batch_size = raw_bs
            forward_batch.seq_lens = self.seq_lens[:raw_bs]


class TargetRunner:
    def __init__(self, backend, capture_bs):
        self.backend = backend
        self.capture_bs = sorted(capture_bs)
        self.seq_lens = torch.ones(self.capture_bs[-1], dtype=torch.int64)

    def replay(self, forward_batch: StepBatch):
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        self.seq_lens[raw_bs:bs].fill_(1)
        view = SimpleNamespace(batch_size=bs, seq_lens=self.seq_lens[:bs])
        self.backend.init_forward_metadata_out_graph(view)


class Worker:
    def __init__(self, model, backend, capture_bs):
        self.draft = DraftRunner(model, capture_bs)
        self.target = TargetRunner(backend, capture_bs)

    def step(self, forward_batch: StepBatch, use_graph: bool, keep_padded: bool):
        raw_bs = forward_batch.batch_size
        self.draft.replay(forward_batch, use_graph, keep_padded)
        self.target.replay(forward_batch)
"""

REPLAY = "self.model.forward(forward_batch.batch_size)"


def _findings(test: str, between: str = REPLAY) -> set[tuple[int, str]]:
    text = RUNNERS.replace("{TEST}", test).replace("{BETWEEN}", between)
    res = check_project([Source("runner.py", text)], load_profile("sglang"))
    return {(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs}


def test_a_field_restored_under_the_same_test_holds_the_real_count_after_it():
    # `if use_graph:` twice, `use_graph` not reassigned in between: where it holds, the second
    # test restores `raw_bs` and the draft's `seq_lens[:raw_bs]`; where it does not, neither test
    # stored anything and the fields hold what the worker passed.  The target then reads the real
    # count: its copy writes rows [:raw_bs] from a view with no padding rows, its fill covers
    # [raw_bs:bs], and the view at line 44 is clean.  (Before: the second test's other branch kept
    # the first join, `bs` and the draft's stale `seq_lens[:bs]`, and the target's fill `[bs:bs]`
    # covered nothing: a false alarm at line 44.)
    assert _findings("use_graph") == set()


def test_a_restore_under_a_weaker_test_leaves_the_padded_batch_on_some_path():
    # `use_graph and not keep_padded`: with keep_padded set, the draft leaves batch_size = bs and
    # seq_lens = its own `seq_lens[:bs]`, whose rows [raw_bs:bs] it never reset; the target copies
    # them into its buffer and hands them to the backend at line 44.  A real bug, reported.
    assert _findings("use_graph and not keep_padded") == {(44, "seq_lens")}


def test_a_test_of_a_reassigned_name_is_another_fact():
    # `use_graph = keep_padded` between the two tests: the second `if use_graph:` tests another
    # value.  Where the first test held and the second does not, the padded batch (with the
    # draft's stale rows) reaches the target as above: reported at line 45 (one line added).
    assert _findings("use_graph", REPLAY + "\n        use_graph = keep_padded") == {(45, "seq_lens")}


def test_a_store_between_the_tests_replaces_the_joined_value():
    # The draft pads the batch again between the tests, on every path: where `use_graph` is not
    # set, nothing restores it, and the target reads batch_size = bs and copies the draft's stale
    # rows [raw_bs:bs] (reported at line 46, two lines added).  The earlier join no longer
    # describes the fields and must not be refined into the values the worker passed.
    between = (REPLAY + "\n        forward_batch.batch_size = bs"
               "\n        forward_batch.seq_lens = self.seq_lens[:bs]")
    assert _findings("use_graph", between) == {(46, "seq_lens")}


FIRST_TEST = """        if use_graph:
            forward_batch.batch_size = bs
            forward_batch.seq_lens = self.seq_lens[:bs]
"""


def _variant(first: str, test: str = "use_graph", between: str = REPLAY, extra_method: str = "") -> set:
    text = RUNNERS.replace(FIRST_TEST, first).replace("{TEST}", test).replace("{BETWEEN}", between)
    if extra_method:
        text = text.replace("    def replay(self, forward_batch: StepBatch, use_graph",
                            extra_method + "\n    def replay(self, forward_batch: StepBatch, use_graph", 1)
    res = check_project([Source("runner.py", text)], load_profile("sglang"))
    return {(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs}


def test_a_path_that_did_not_pass_the_first_test_keeps_its_own_value():
    # `if self.must_pad(raw_bs): pad ... elif use_graph: pad`: where `must_pad` holds and
    # `use_graph` does not, the batch is padded and the second `if use_graph:` does not restore
    # it: the target copies the draft's stale rows and hands them on (line 50, the view; the
    # method and the `elif` add 6 lines).  The join of the `elif` is not what reaches the second
    # test on that path (the outer join, a call test with no fact, drops its record).
    first = """        if self.must_pad(raw_bs):
            forward_batch.batch_size = bs
            forward_batch.seq_lens = self.seq_lens[:bs]
        elif use_graph:
            forward_batch.batch_size = bs
            forward_batch.seq_lens = self.seq_lens[:bs]
"""
    assert _variant(first, extra_method="    def must_pad(self, n):\n        return n > 8\n") \
        == {(50, "seq_lens")}


def test_a_record_made_in_a_loop_round_says_nothing_of_the_entry_path():
    # The batch is padded before the loop; on the `not use_graph` path every round reads the
    # padded size back (`out_bs = forward_batch.batch_size`, `bs` in the first round) and the
    # loop's end stores it: the target gets the padded batch with the draft's stale rows (line
    # 50).  The record of the second test's join, made in round 1, must not refine the loop head,
    # where the entry path joins.
    loop = """        forward_batch.batch_size = bs
        forward_batch.seq_lens = self.seq_lens[:bs]
        out_bs = raw_bs
        for _ in range(len(self.capture_bs)):
            if not use_graph:
                out_bs = forward_batch.batch_size
            else:
                out_bs = raw_bs
            if use_graph:
                forward_batch.batch_size = bs
            else:
                forward_batch.batch_size = raw_bs
        forward_batch.batch_size = out_bs
"""
    text = RUNNERS.replace(FIRST_TEST + "        {BETWEEN}\n        if {TEST}:\n"
                           "            forward_batch.batch_size = raw_bs\n"
                           "            forward_batch.seq_lens = self.seq_lens[:raw_bs]\n", loop)
    res = check_project([Source("runner.py", text)], load_profile("sglang"))
    assert {(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs} == {(50, "seq_lens")}


def test_a_test_of_an_attribute_a_callee_may_change_is_not_correlated():
    # `if self.use_graph:` pads, `self.disable()` clears `use_graph`, and the second
    # `if self.use_graph:` no longer restores: the padded batch reaches the target (line 47).
    # Tests of attributes are not taken as the same fact for object fields: a callee may assign
    # them without the function showing it.
    first = FIRST_TEST.replace("if use_graph:", "if self.use_graph:")
    found = _variant(first, "self.use_graph", "self.disable()",
                     "    def disable(self):\n        self.use_graph = False\n")
    assert found == {(47, "seq_lens")}
