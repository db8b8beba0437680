"""Callee summaries: compact while the run lasts, released before the rules.

A summary (:class:`padlint.analysis.interp.Summary`) keeps the heap keys a callee read and wrote
as tuples of keys beside tuples of values, one copy of each key tuple shared by the summaries
that name the same keys, instead of a pair per key; the engine forgets the summaries once its
entry points have run (:meth:`Interpreter.release_summaries`), since the rules query the run's
facts (hits, writers, dummy-run reads), not the summaries.  On vLLM 0.33.0's tree that took the
peak from 1.06 GB to 0.87 GB, SGLang 0.5.23's from 2.45 to 1.83 GB, with the same findings
(docs/performance.md).  These tests pin what the memory change must not alter.
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.analysis import interp as interp_mod
from padlint.profile import load_profile

# `_stage` is called on two branches with different counts, `num_reqs` and `num_reqs + 1` (two
# summaries: the arguments differ), each from the same heap, so both read the same keys and
# write `query_start_loc`; the entry point pads `seq_lens` and resets nothing, so the metadata's
# `seq_lens` is stale in rows [num_reqs:num_reqs_padded] (one PAD001 finding)
RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)
        self.query_start_loc = torch.zeros(n + 1, dtype=torch.int32)

    def _stage(self, width):
        self.query_start_loc[:width].copy_(self.seq_lens[:width])

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
        if so.spec:
            self._stage(num_reqs)
        else:
            self._stage(num_reqs + 1)
        RESET
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''


@pytest.fixture
def released(monkeypatch):
    """The summaries each interpreter held when the engine released them (a list per call)."""
    seen: list[dict] = []
    orig = interp_mod.Interpreter.release_summaries

    def spy(self):
        seen.append({k: list(v) for k, v in self._summaries.items()})
        orig(self)
        assert self._summaries == {} and self._key_tuples == {}

    monkeypatch.setattr(interp_mod.Interpreter, "release_summaries", spy)
    return seen


def test_summaries_of_one_callee_share_their_key_tuples(released):
    check_source(RUNNER.replace("RESET", "pass"), "runner.py", load_profile("vllm"))
    assert released, "the engine releases the summaries once its entry points have run"
    stage = [s for k, v in released[0].items() if k[0].endswith("_stage") for s in v]
    # two calls with different arguments: two summaries, each reading and writing the same
    # buffers (`seq_lens` read, `query_start_loc` written): one key tuple each, shared
    assert len(stage) == 2
    a, b = stage
    assert a.read_keys == b.read_keys and a.read_keys is b.read_keys
    assert a.write_keys is b.write_keys and len(a.write_keys) == len(a.write_values) >= 1
    assert any("query_start_loc" in k for k in a.write_keys)
    assert len(a.read_keys) == len(a.read_values)
    # sorted: summaries that read one set of keys in another order share it too
    assert list(a.read_keys) == sorted(a.read_keys)


@pytest.mark.parametrize("reset, expected", [
    ("pass", 1),  # the padded slice's rows [num_reqs:num_reqs_padded] are stale
    ("self.seq_lens[num_reqs:num_reqs_padded].fill_(0)", 0),
])
def test_releasing_the_summaries_changes_no_finding(monkeypatch, reset, expected):
    src = RUNNER.replace("RESET", reset)
    profile = load_profile("vllm")
    kept = check_source(src, "runner.py", profile)
    monkeypatch.setattr(interp_mod.Interpreter, "release_summaries", lambda self: None)
    unreleased = check_source(src, "runner.py", profile)
    assert len(kept) == expected
    assert [(f.code, f.line, f.message) for f in kept] == [(f.code, f.line, f.message) for f in unreleased]


def test_a_released_interpreter_interprets_again(released):
    # the summaries are a cache: a callee called after the release is interpreted again (the
    # same effect), not answered from a summary that is gone
    from padlint.analysis.callgraph import CallGraph, module_functions
    from padlint.analysis.engine import find_entries
    from padlint.analysis.project import Project

    profile = load_profile("vllm")
    project = Project()
    key = project.add_source("runner.py", RUNNER.replace("RESET", "pass"), "runner.py")
    graph = CallGraph(project, profile)
    fns = [fn for fn in module_functions(project.module(key)) if graph.relevant(fn)]
    (entry,) = [fn for fn in find_entries(graph, fns) if fn.name == "execute_model"]
    first = interp_mod.Interpreter(profile, project, graph)
    first.run_entry(entry)
    hits = {(k[1], h.span) for k, h in first.hits.items()}
    first.release_summaries()
    again = interp_mod.Interpreter(profile, project, graph)
    again.run_entry(entry)
    first.hits.clear()
    first.run_entry(entry)
    assert hits and {(k[1], h.span) for k, h in first.hits.items()} == hits \
        == {(k[1], h.span) for k, h in again.hits.items()}
    assert any(k[0].endswith("_stage") for k in first._summaries)  # summaries made again


# `_reset_tail` is called with the same arguments on both branches, each forked from the same
# heap: the second call is answered from the first call's summary, whose writes (the reset of
# rows [num_reqs:num_reqs_padded]) must reach the heap of that branch too, or the join would
# keep stale rows from it and report `seq_lens`
REPLAYED = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def _reset_tail(self, num_reqs, num_reqs_padded):
        BODY

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
        if so.spec:
            self._reset_tail(num_reqs, num_reqs_padded)
        else:
            self._reset_tail(num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''


@pytest.mark.parametrize("body, expected", [
    ("self.seq_lens[num_reqs:num_reqs_padded].fill_(0)", 0),  # the replayed summary resets
    ("pass", 1),  # nothing reset on either branch
])
def test_a_replayed_summary_applies_its_writes(monkeypatch, released, body, expected):
    ran: list[str] = []
    orig = interp_mod.Interpreter._exec_function

    def spy(self, func, frame, state):
        ran.append(frame.qual)
        return orig(self, func, frame, state)

    monkeypatch.setattr(interp_mod.Interpreter, "_exec_function", spy)
    found = check_source(REPLAYED.replace("BODY", body), "runner.py", load_profile("vllm"))
    assert len(found) == expected, [f.message for f in found]
    # interpreted once, answered once from its one summary
    assert sum(q.endswith("_reset_tail") for q in ran) == 1
    (summaries,) = [v for k, v in released[0].items() if k[0].endswith("_reset_tail")]
    assert len(summaries) == 1
    assert any("seq_lens" in k for k in summaries[0].write_keys) == (expected == 0)


# -- one empty set, and joins that make no new set where one side holds the other ---------------
# `a | b` and `a & b` of frozensets make a new set every time, 216 bytes even when empty; on
# SGLang 0.5.23 the heap states held 0.5 M such sets (most of them empty) at the hand-over.

def test_states_share_one_empty_set():
    from padlint.analysis.values import NOSET, PERSISTENT, LocState, Taint
    t = Taint("self.buf[:n_padded]", "n_padded", 0, "stale")
    # an empty intersection and an empty union are new objects in Python; a state holds the shared one
    s = LocState(taints=frozenset({t}) & frozenset(), clean=frozenset() | frozenset(),
                 extents=frozenset({("n", 0)}) & frozenset({("m", 0)}))
    assert s.taints is NOSET and s.clean is NOSET and s.extents is NOSET
    assert PERSISTENT.taints is NOSET
    # the join of a tainted state with an untainted one keeps the tainted state's very set
    a = LocState(taints=frozenset({t}))
    joined = a.join(LocState(entry_stale=False))
    assert joined.taints is a.taints and joined.entry_stale
    # prefixes written on both paths: the meet of {n} and {n, m} is the first's very set
    b = LocState(extents=frozenset({("n", 0)}))
    c = LocState(extents=frozenset({("n", 0), ("m", 0)}))
    assert b.join(c).extents is b.extents and c.join(b).extents is b.extents
    # prefixes on one path only: nothing both wrote (the shared empty set)
    d = LocState(extents=frozenset({("m", 1)}))
    assert b.join(d).extents is NOSET


def test_joined_views_keep_the_wider_value():
    from padlint.analysis.values import Ref, Refs, join_vals
    x, y = Ref("self.a"), Ref("self.b")
    wide, narrow = Refs(frozenset({x, y})), Refs(frozenset({x}))
    # one side's views contain the other's: the join is that side, not a new value
    assert join_vals(wide, narrow) is wide and join_vals(narrow, wide) is wide
    # None on the narrower side only: the join must say "maybe None", so it is a new value
    maybe = Refs(frozenset({x}), maybe_none=True)
    j = join_vals(wide, maybe)
    assert j.refs == wide.refs and j.maybe_none
    # neither contains the other: their union
    assert join_vals(Refs(frozenset({y})), narrow).refs == frozenset({x, y})
