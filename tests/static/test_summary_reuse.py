"""Callee summaries are reused when the callee is given the same thing again (issue 8: "one
summary per function ... cost grows with the code, never with the number of paths").

A summary records what the callee read of the heap it was given, and applies at a later call
whose heap agrees there.  Three things kept it from applying on real runners (vLLM 0.33.0's
``_build_attn_group_metadata`` was interpreted 530 times for ``gpu_model_runner.py`` alone):

- a write counted as a read (``Heap.__setitem__`` looked the old value up with the logging
  ``get``), so every location the callee wrote became an input;
- the callee's own allocations (a tensor or an object made in its body: one location per
  allocation site and call path) were inputs: at the next call on the same path, in the next
  round of a loop, they hold what the previous call left there, never what the first call saw
  (nothing);
- a persistent buffer's location that was not in the heap and one holding the value every
  persistent buffer starts with were different inputs.

The tests count how often the callee's body is interpreted (``Interpreter._exec_function``)
and check that the findings are those of interpreting it every time.  Written from scratch.
"""

from __future__ import annotations

from collections import Counter

import pytest

from padlint.analysis import interp as interp_mod
from padlint.analysis.interp import CountVal
from padlint.analysis.values import PERSISTENT, UNSET, Heap, ReadLog, join_vals

from .project_files import check_files

RUNNER = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    scratch: torch.Tensor


@dataclass
class GroupBatch:
    seq_lens: torch.Tensor
    scratch: torch.Tensor


class Runner:
    def __init__(self, groups, max_num_reqs):
        self.groups = groups
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def _group_batch(self, num_reqs_padded):
        # an allocation and an object made here: this callee's own locations
        scratch = torch.zeros(num_reqs_padded, dtype=torch.int32)
        batch = GroupBatch(seq_lens=self.seq_lens[:num_reqs_padded], scratch=scratch)
        return batch

    def execute_model(self, new_seq_lens, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs].copy_(new_seq_lens)
        {RESET}
        metas = []
        for group in self.groups:
            batch = self._group_batch(num_reqs_padded)
            metas.append(CommonAttentionMetadata(seq_lens=batch.seq_lens, scratch=batch.scratch))
        return metas
'''

CALLEE = "pkg.runner:Runner._group_batch"


def _run(tmp_path, reset: str, monkeypatch, runner: str = RUNNER) -> tuple[list, Counter]:
    """Check ``runner`` (as pkg/runner.py) and count the interpretations of each function body."""
    seen: Counter = Counter()
    orig = interp_mod.Interpreter._exec_function

    def counting(self, func, callee, state):
        seen[callee.qual] += 1
        return orig(self, func, callee, state)

    monkeypatch.setattr(interp_mod.Interpreter, "_exec_function", counting)
    files = {"pkg/__init__.py": "", "pkg/runner.py": runner}
    found = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": reset})
    return found, seen


@pytest.mark.parametrize("reset, stale", [
    ("pass", True),  # rows [num_reqs:num_reqs_padded] of seq_lens keep the last step's values
    ("self.seq_lens[num_reqs:].fill_(0)", False),
])
def test_callee_in_a_loop_is_interpreted_once_and_findings_stay(tmp_path, monkeypatch, reset, stale):
    found, seen = _run(tmp_path, reset, monkeypatch)
    # The loop runs its body until the state is stable (at least twice).  The second round
    # calls `_group_batch` with the same arguments on a heap that differs only in the
    # locations the first call allocated: its summary applies, the body is not interpreted
    # again.  (Before: 2 interpretations, one per round.)
    assert seen[CALLEE] == 1
    seq = [f for f in found if f.code == "PAD001" and f.field == "seq_lens"]
    assert bool(seq) == stale
    if stale:
        assert "[num_reqs:num_reqs_padded]" in seq[0].message


def test_a_write_is_not_a_read():
    h = Heap({"a": PERSISTENT})
    log = ReadLog()
    h.reads = [log]
    h["b"] = PERSISTENT  # written, never read
    assert log.keys == set()
    h.get("a")  # read with the value the callee was given: an input
    assert log.keys == {"a"}
    h["a"] = interp_mod.LocState(False)
    log.keys.clear()
    h.get("a")  # read after the callee wrote it: its own value, not an input
    assert log.keys == set()


def test_join_of_two_padded_counts_does_not_depend_on_order():
    # the alternatives of an object's field are joined in the order of a set, which follows
    # the run's string hashes: the joined count (named in messages) must not
    a, b = CountVal("num_tokens_after_padding", padded=True), CountVal("num_local_tokens_padded", padded=True)
    assert join_vals(a, b) == join_vals(b, a)
    r = CountVal("num_tokens")
    assert join_vals(r, a) == join_vals(a, r) == a  # a padded count still wins over a real one


STAGED = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


@dataclass
class Staging:
    seq_lens: torch.Tensor
    scratch: torch.Tensor


class Runner:
    def __init__(self, groups, max_num_reqs):
        self.groups = groups
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def _stage(self, staging: Staging, num_reqs_padded):
        # stores on an object the caller passes in (its class known from the annotation only),
        # after reading what it holds
        if staging.scratch is not None:
            staging.scratch.zero_()
        staging.scratch = torch.zeros(num_reqs_padded, dtype=torch.int32)
        staging.seq_lens = self.seq_lens[:num_reqs_padded]
        return CommonAttentionMetadata(seq_lens=staging.seq_lens)

    def execute_model(self, new_seq_lens, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs].copy_(new_seq_lens)
        {RESET}
        metas = []
        for group in self.groups:
            metas.append(self._stage(group.staging, num_reqs_padded))
        return metas
'''


@pytest.mark.parametrize("reset, stale", [
    ("pass", True),
    ("self.seq_lens[num_reqs:num_reqs_padded] = 0", False),
])
def test_stores_on_a_passed_in_object_are_not_inputs(tmp_path, monkeypatch, reset, stale):
    found, seen = _run(tmp_path, reset, monkeypatch, STAGED)
    # The object behind `staging` is one location per parameter (each real call has its own
    # object); what the first round stored there is not what the second round is given, so the
    # first call's summary applies to the second (before: 2 interpretations).
    assert seen["pkg.runner:Runner._stage"] == 1
    seq = [f for f in found if f.code == "PAD001" and f.field == "seq_lens"]
    assert bool(seq) == stale


def test_read_log_keeps_what_the_call_held_from_the_first_write_on_any_path():
    # the heap at a call is not copied: each write keeps the value it replaces, once per key,
    # in every read log on the stack that has none for it yet (a caller's and a callee's)
    a0, a1, a2 = PERSISTENT, interp_mod.LocState(False), interp_mod.LocState(True)
    h = Heap({"a": a0, "c": a0})
    outer = ReadLog()
    h.reads = [outer]
    h["a"] = a1  # written in the caller: its log keeps a0
    inner = ReadLog()
    h.reads.append(inner)
    branch = h.fork()  # one path of the callee
    branch["a"] = a2  # the callee's first write of "a": it held a1 at the callee's call
    branch["b"] = a1  # absent at both calls
    del branch["c"]
    assert inner.saved["a"] is a1 and outer.saved["a"] is a0  # the caller's is kept, not replaced
    assert inner.at_call("b", branch, "gone") == "gone" and outer.at_call("b", branch, "gone") == "gone"
    assert inner.at_call("c", branch) is a0  # deleted on that path, held at the call
    # "c" was not written on the other path (the heap given to the callee): it holds its call value
    assert "c" in inner.saved and h.get("c") is a0
    # of the keys the callee read, those its caller was given too: "c" (held since the caller's
    # call), not "a" (the caller wrote it before the call)
    h.reads.pop()
    assert sorted(outer.given(["a", "c"], branch, inner)) == ["c"]
    assert outer.given(["a", "c"], branch) == []  # in `branch` both differ from the caller's call


def _ways_out(with_log: bool):
    """Two ways out of a callee that forked at different depths, joined in full: one wrote
    the field ``@self.bs`` under a nested fork whose written-key set the path no longer carries."""
    from padlint.analysis.values import State
    h = Heap({f"k{i}": PERSISTENT for i in range(50)})
    log = ReadLog()
    h.reads = [log] if with_log else None
    s1 = State({}, h.fork())
    inner = s1.heap.fork()
    inner["@self.bs"] = CountVal("num_reqs_padded", padded=True)  # an object field stored on one path
    s1.heap = Heap(inner, (), inner.fingerprint, reads=h.reads)  # (its written-key set lost)
    s2 = State({}, h.fork())
    return State.join([s2, s1], full=True), log


def test_full_join_in_a_callee_compares_the_keys_written_since_its_call():
    # inside a callee, the ways out differ only in keys some path wrote since the call, which
    # the callee's read log names: the join compares those and finds what comparing every key
    # finds (an entry point's own body has no log: every key)
    out, log = _ways_out(True)
    every, _ = _ways_out(False)
    # (the log names the field and the mark the join wrote, none of the fifty keys no path wrote)
    assert set(log.saved) == {"@self.bs", UNSET + "@self.bs"}
    assert dict(out.heap) == dict(every.heap)
    # the field one way out stored and the other did not is marked so (what the other reads is
    # what an earlier call left): compared, not dropped
    assert out.heap.get(UNSET + "@self.bs") is True
