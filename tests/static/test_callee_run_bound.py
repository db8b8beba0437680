"""A function that reaches no sink costs a bounded share of an entry point's interpretation.

From SGLang 0.5.23's scheduler event loop (an entry point of the tree run: it reaches every graph
runner) the interpreter ran 27,171 function bodies, 95% of them in functions that reach no sink:
the prefix caches' eviction (`BasePrefixCache.evict` 617 times), the KV allocators' `free`, the
LoRA batch info.  Each call there comes with a heap its summaries do not match (the caller's
state moved on, often by the callee's own last writes), so each ran again: cost grew with the
call paths, not with the code.  The bodies the calls of such a function run (its callees'
included) are now counted per entry point; past :attr:`Interpreter.MAX_AWAY_BODIES` a further
call that no summary covers is code not read (its arguments and receiver may have any rows
written, it is not trusted to reset, its value is an object of its annotated class).  A small
helper called often (vLLM's `async_tensor_h2d(..., out=...)`, whose copy matters) stays read long
after a function with a large body below it is cut: the bound is on cost, not on calls (a bound
on calls, 24 or 64 a function, cut that helper in vLLM 0.34.0's warm-up and made 2 false findings).

Written from scratch: ``Runner.execute_model`` takes ``N`` slices from a pool, each with a count
of its own (a context no summary covers), and hands the pool to a function whose body calls two
more, then builds the metadata.  The bound is set small in the tests.
"""

from __future__ import annotations

import pytest

from padlint.analysis.interp import Interpreter

from .project_files import check_text, count_bodies

N = 20
BOUND = 10  # MAX_AWAY_BODIES in these tests

# every fixture's module starts so: the metadata class is the sink
HEADER = '''\
import torch


class CommonAttentionMetadata:
    def __init__(self, seq_lens, num_reqs):
        self.seq_lens = seq_lens
        self.num_reqs = num_reqs
'''
RUNNER = HEADER + '''\


class Pool:
    def __init__(self, size: int) -> None:
        self.free = torch.zeros(size, dtype=torch.int64)

    def take(self, n: int):
        out = self.free[:n]
        self.free = self.free[n:]
        return out


def reset_tail(buf, n: int, p: int) -> None:
    buf[n:p] = 0


def drain(pool: Pool, n: int) -> None:
    pool.take(n)
    pool.take(n + 1)


class Runner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.pool = Pool(1024)

    def execute_model(self, num_reqs: int, num_reqs_padded: int, {PARAMS}):
        {RESET}
{CALLS}
{DRAINS}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''


@pytest.fixture
def runs(monkeypatch):
    """How often the interpreter runs each function's body (by its name on the call path), with
    the bound set to :data:`BOUND`."""
    monkeypatch.setattr(Interpreter, "MAX_AWAY_BODIES", BOUND)
    return count_bodies(monkeypatch)


def _text(reset: str, takes: int = N, drains: int = 0) -> str:
    return (RUNNER.replace("{PARAMS}", ", ".join(f"n{i}: int" for i in range(N)))
            .replace("{CALLS}", "\n".join(f"        self.pool.take(n{i})" for i in range(takes)))
            .replace("{DRAINS}", "\n".join(f"        drain(self.pool, n{i})" for i in range(drains)))
            .replace("{RESET}", reset))


@pytest.mark.parametrize("reset, expected", [
    # rows [num_reqs:num_reqs_padded] of `seq_lens` hold an earlier step's lengths
    ("pass", [("PAD001", "seq_lens")]),
    # the reset by a module helper (which reaches no sink either) is read: it ran once
    ("reset_tail(self.seq_lens, num_reqs, num_reqs_padded)", []),
])
def test_a_callee_that_reaches_no_sink_runs_within_its_share(tmp_path, runs, reset, expected):
    got = check_text(tmp_path, _text(reset))
    assert sorted((f.code, f.field) for f in got) == expected
    # `take` reaches no sink and runs one body a call: of its N calls, each with a count of its
    # own, the first BOUND ran; the entry point (it reaches the sink) ran once
    assert runs["runner:Pool.take"] == BOUND
    assert runs["runner:Runner.execute_model"] == 1
    if reset != "pass":
        assert runs["runner:reset_tail"] == 1


def test_the_share_counts_the_bodies_below_a_call(tmp_path, runs):
    # each run of `drain` runs three bodies (its own and two of `take`): after four runs (12
    # bodies, past BOUND) the other calls of `drain` are not read; `take`'s own count (8) stays
    # under BOUND, so every call of it that `drain` made ran
    got = check_text(tmp_path, _text("pass", takes=0, drains=N))
    assert sorted((f.code, f.field) for f in got) == [("PAD001", "seq_lens")]
    assert runs["runner:drain"] == 4
    assert runs["runner:Pool.take"] == 8


DRIVER = HEADER + '''\


class Runner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute(self, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)


class Driver:
    def __init__(self) -> None:
        self.runner = Runner(64)

    def loop(self, num_reqs: int, num_reqs_padded: int, {PARAMS}):
        self.runner.execute(num_reqs, num_reqs_padded)
{CALLS}

    def step(self, runner, num_reqs: int, num_reqs_padded: int):
        return runner.execute(num_reqs, num_reqs_padded)
'''


def test_a_callee_that_reaches_a_sink_through_a_value_is_not_held_to_the_share(tmp_path, runs):
    # `step`'s `runner` has no annotation: the call graph does not resolve `runner.execute`, so it
    # has `step` as reaching no sink; the interpreter resolves it from the value `loop` hands it
    # (the `Runner` its constructor made), and each run of `step` reaches the metadata sink.
    # Every one of its N calls (each with a real count of its own) runs, though N * 2 bodies are
    # past BOUND
    text = (DRIVER.replace("{PARAMS}", ", ".join(f"n{i}: int" for i in range(N)))
            .replace("{CALLS}", "\n".join(f"        self.step(self.runner, n{i}, num_reqs_padded)" for i in range(N))))
    got = check_text(tmp_path, text)
    assert sorted((f.code, f.field) for f in got) == [("PAD001", "seq_lens")]
    assert runs["runner:Driver.step"] == N


REPLAYED = HEADER + '''\


class Runner:
    def execute(self, buf, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(seq_lens=buf[:num_reqs_padded], num_reqs=num_reqs_padded)


class Driver:
    def __init__(self) -> None:
        self.runner = Runner()
        self.a = torch.zeros(64, dtype=torch.int32)
        self.b = torch.zeros(64, dtype=torch.int32)

    def loop(self, num_reqs: int, num_reqs_padded: int, {PARAMS}):
        r = self.runner
        a = self.a
        a[num_reqs:num_reqs_padded].zero_()
        r.execute(a, num_reqs, num_reqs_padded)
{CALLS}
        self.step(r, self.b, num_reqs, num_reqs_padded, 0)

    def step(self, runner, buf, num_reqs: int, num_reqs_padded: int, k: int):
        return runner.execute(buf, num_reqs, num_reqs_padded)
'''


def test_a_sink_reached_through_a_summary_counts_as_reached(tmp_path, runs):
    # (found by a review) `step` reaches the sink in `execute` through the value it is handed;
    # after the first call, `execute(a, num_reqs, num_reqs_padded)` is answered by its summary,
    # so no sink is checked during `step`'s later runs, yet each reaches one.  The last call hands
    # `self.b`, never reset: rows [num_reqs:num_reqs_padded] are stale there.  A summary says
    # whether its run reached a sink, and a replay counts as reaching it: `step` is not held to
    # the share and the last call is read
    text = (REPLAYED.replace("{PARAMS}", ", ".join(f"n{i}: int" for i in range(N)))
            .replace("{CALLS}", "\n".join(f"        self.step(r, a, num_reqs, num_reqs_padded, n{i})" for i in range(N))))
    got = check_text(tmp_path, text)
    assert sorted((f.code, f.field) for f in got) == [("PAD001", "seq_lens")]
    assert runs["runner:Driver.step"] == N + 1


ORDERED = HEADER + '''\


def reset_tail(buf, n: int, p: int) -> None:
    buf[n:p] = 0


class Runner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.other = torch.zeros(max_num_reqs, dtype=torch.int32)

    def prepare(self, num_reqs: int, num_reqs_padded: int) -> None:
        reset_tail(self.seq_lens, num_reqs, num_reqs_padded)

{CAPTURE}
    def execute_model(self, num_reqs: int, num_reqs_padded: int, {PARAMS}):
        self.prepare(num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''
CAPTURE = '''\
    def capture_model(self, num_reqs: int, num_reqs_padded: int, {PARAMS}):
{CALLS}
        self.prepare(num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''


@pytest.mark.parametrize("capture", [False, True], ids=["alone", "after an entry point that spent the share"])
def test_a_cut_in_one_entry_point_does_not_reach_another(tmp_path, runs, capture):
    # (found by a review) `capture_model` spends `reset_tail`'s share on another buffer, then calls
    # `prepare`, whose reset of `seq_lens` is cut there: `capture_model` reports `seq_lens`.  The
    # summary of `prepare` made with that cut answers calls in `capture_model` only: in
    # `execute_model` (an entry point of its own, run after it, with the same parameters: the same
    # summary key) `prepare` runs again with the share of that entry point, the reset is read, and
    # `execute_model` reports nothing, as it does alone
    text = ORDERED.replace("{CAPTURE}", CAPTURE if capture else "")
    text = (text.replace("{CALLS}", "\n".join(f"        reset_tail(self.other, n{i}, num_reqs_padded)" for i in range(N)))
            .replace("{PARAMS}", ", ".join(f"n{i}: int" for i in range(N))))
    got = check_text(tmp_path, text)
    assert [f for f in got if f.function == "Runner.execute_model"] == []
    if capture:
        # the cut reset in `capture_model` is a false alarm the share costs (documented)
        assert [(f.code, f.field) for f in got if f.function == "Runner.capture_model"] == [("PAD001", "seq_lens")]

