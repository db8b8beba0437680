"""Code shapes the engine read wrongly before 2026-12-06: lambdas as function values,
``@property`` getters, ``while`` loops and ``mul_(0)``.

Written from scratch, on the runner of ``test_tail_views.py``: rows ``[:num_reqs]`` of
``self.seq_lens`` are written, ``self.seq_lens[:num_reqs_padded]`` goes to
``CommonAttentionMetadata``; rows ``[num_reqs:num_reqs_padded]`` are the padding rows.  The
expected findings come from which rows each variant writes (a reset of all padding rows: no
finding; none, or part of them: the finding at the sink) or hands out.

- A ``while`` loop's body was a body that may not run: ``while True: reset; break`` and the
  element-wise ``i = num_reqs; while i < num_reqs_padded: buf[i] = 0; i += 1`` (the ``for i in
  range(...)`` form already counted) left false alarms.
- ``x[R:P].mul_(0)`` (the method form of ``x[R:P] *= 0``, which counted) was no reset.
- A ``@property`` getter returning a padded view (``self.padded_seq_lens``) was a method value,
  not a read: the view it hands to a sink was missed.
- A lambda was evaluated once where it was written, its parameters unknown, and was no value:
  one called later (``build = lambda n: ...; build(num_reqs_padded)``, the Model Runner V2
  speculators' ``return lambda cg_mode: forward_fn(num_reqs, attn_metadata, ...)``) was not run
  with what it was given.
"""

from __future__ import annotations

import pytest

from .project_files import check_text
from .test_tail_views import STALE, _findings


@pytest.mark.parametrize("reset", [
    "while True:\n            self.seq_lens[num_reqs:num_reqs_padded] = 0\n            break",
    "while 1:\n            self.seq_lens[num_reqs:num_reqs_padded].zero_()\n            break",
    # the reset on every round, the loop left after a few rounds
    "k = 0\n        while True:\n            self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
    "            k += 1\n            if k > 3:\n                break",
    # element-wise, the counter from the real count to the padded one
    "i = num_reqs\n        while i < num_reqs_padded:\n            self.seq_lens[i] = 0\n            i += 1",
    "x[num_reqs:num_reqs_padded].mul_(0)".replace("x", "self.seq_lens"),
    # a `break` of a loop nested in the `while True` leaves that loop only
    "while True:\n            for x in scheduler_output.items:\n                if x:\n                    break\n"
    "            self.seq_lens[num_reqs:num_reqs_padded] = 0\n            break",
    # element-wise `for`: a `raise` leaves the function (no stale path), an inner loop's `break`
    # is its own
    "for i in range(num_reqs, num_reqs_padded):\n            if scheduler_output.bad:\n"
    "                raise ValueError()\n            self.seq_lens[i] = 0",
    "for i in range(num_reqs, num_reqs_padded):\n            for x in scheduler_output.items:\n"
    "                if x:\n                    break\n            self.seq_lens[i] = 0",
    "self.seq_lens[num_reqs:num_reqs_padded].mul_(False)",
    "tail = self.seq_lens[num_reqs:num_reqs_padded]\n        tail.mul_(0.0)",
])
def test_a_reset_in_these_forms_counts(tmp_path, reset):
    assert _findings(tmp_path, reset) == []


@pytest.mark.parametrize("reset", [
    # the loop may end before the reset (a `break` first on some round)
    "while True:\n            if so.done:\n                break\n"
    "            self.seq_lens[num_reqs:num_reqs_padded] = 0\n            break".replace("so.", "scheduler_output."),
    # a `while` whose test may be false at once: the body may not run
    "while scheduler_output.more:\n            self.seq_lens[num_reqs:num_reqs_padded] = 0\n            break",
    # element-wise, from one row late
    "i = num_reqs + 1\n        while i < num_reqs_padded:\n            self.seq_lens[i] = 0\n            i += 1",
    # element-wise, a round skips its write
    "i = num_reqs\n        while i < num_reqs_padded:\n            i += 1\n            if i % 2:\n"
    "                continue\n            self.seq_lens[i] = 0\n            i += 1",
    # the counter moves by two: every other row written (also as two increments, or one before
    # the write); the bound shrinks as the counter grows
    "i = num_reqs\n        while i < num_reqs_padded:\n            self.seq_lens[i] = 0\n            i += 2",
    "i = num_reqs\n        while i < num_reqs_padded:\n            self.seq_lens[i] = 0\n            i = i + 1\n"
    "            i += 1",
    "i = num_reqs\n        while i < num_reqs_padded:\n            i += 1\n            self.seq_lens[i] = 0\n"
    "            i += 1",
    "i = num_reqs\n        p = num_reqs_padded\n        while i < p:\n            self.seq_lens[i] = 0\n"
    "            p -= 1\n            i += 1",
    # a `break` out of the `while True` before the reset, two tests deep
    "while True:\n            if scheduler_output.x:\n                self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
    "                if scheduler_output.a:\n                    if scheduler_output.b:\n"
    "                        self.flag = 1\n                break\n            break",
    # a factor that is not zero keeps the stale values
    "self.seq_lens[num_reqs:num_reqs_padded].mul_(2)",
    "self.seq_lens[num_reqs:num_reqs_padded].mul_(scheduler_output.scale)",
])
def test_a_partial_or_unsure_reset_in_these_forms_leaves_the_finding(tmp_path, reset):
    assert _findings(tmp_path, reset) == STALE


HEAD = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = torch.as_tensor(scheduler_output.seq_lens)
'''


def _check(tmp_path, body: str, more: str = "") -> list[tuple[str, int, str]]:
    """(code, line, field) of each finding on ``HEAD`` + ``body`` (the rest of ``execute_model``,
    8 spaces in) + ``more`` (methods)."""
    text = HEAD + "".join(f"        {line}\n" if line else "\n" for line in body.splitlines()) + more
    return [(f.code, f.line, f.field) for f in check_text(tmp_path, text, "runner.py", "vllm")]


# line 13 is the first line of `body`
PROPERTY = '''
    @property
    def padded_seq_lens(self):
        return self.seq_lens[:self.num_padded]
'''


def test_a_property_getter_hands_its_view_to_the_sink(tmp_path):
    # the getter returns rows [:num_reqs_padded], rows [num_reqs:] of which no step wrote
    assert _check(tmp_path, "self.num_padded = num_reqs_padded\n"
                            "return CommonAttentionMetadata(seq_lens=self.padded_seq_lens, num_reqs=num_reqs_padded)",
                  PROPERTY) == [("PAD001", 14, "seq_lens")]


def test_a_property_getter_after_the_reset_is_clean(tmp_path):
    assert _check(tmp_path, "self.num_padded = num_reqs_padded\n"
                            "self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
                            "return CommonAttentionMetadata(seq_lens=self.padded_seq_lens, num_reqs=num_reqs_padded)",
                  PROPERTY) == []


def test_a_property_of_the_real_rows_is_clean(tmp_path):
    # the getter hands out rows [:num_reqs], all written
    assert _check(tmp_path, "self.num_padded = num_reqs\n"
                            "return CommonAttentionMetadata(seq_lens=self.padded_seq_lens, num_reqs=num_reqs_padded)",
                  PROPERTY) == []


def test_a_method_that_is_no_property_stays_a_method_value(tmp_path):
    # `self.padded_seq_lens` names the method here (not called): no view reaches the sink
    assert _check(tmp_path, "self.num_padded = num_reqs_padded\n"
                            "return CommonAttentionMetadata(seq_lens=self.padded_seq_lens, num_reqs=num_reqs_padded)",
                  PROPERTY.replace("    @property\n", "")) == []


@pytest.mark.parametrize("body, expected", [
    # a lambda called with the padded count hands out rows [:num_reqs_padded]; the sink is in
    # its body, on line 13
    ("build = lambda n: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build(num_reqs_padded)", [("PAD001", 13, "seq_lens")]),
    # the same lambda called with the real count: every row it hands out was written (it was a
    # false alarm when the lambda ran where written, `n` unknown)
    ("build = lambda n: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build(num_reqs)", []),
    # the reset between the lambda and its call counts
    ("build = lambda n: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
     "return build(num_reqs_padded)", []),
    # a view a lambda returns, handed to the sink where it is called (line 14)
    ("view = lambda: self.seq_lens[:num_reqs_padded]\n"
     "return CommonAttentionMetadata(seq_lens=view(), num_reqs=num_reqs_padded)", [("PAD001", 14, "seq_lens")]),
    ("self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
     "view = lambda: self.seq_lens[:num_reqs_padded]\n"
     "return CommonAttentionMetadata(seq_lens=view(), num_reqs=num_reqs_padded)", []),
])
def test_a_lambda_runs_where_it_is_called(tmp_path, body, expected):
    assert _check(tmp_path, body) == expected


MAKE = '''
    def _make(self, n):
        # the capture's shape: a function made for a size, called later with the graph's mode
        return lambda mode: self._build(n, mode)

    def _build(self, n, mode):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)
'''


@pytest.mark.parametrize("count, expected", [
    ("num_reqs_padded", [("PAD001", 21, "seq_lens")]),  # `_build`'s sink (its return line)
    ("num_reqs", []),
])
def test_a_lambda_returned_by_a_method_runs_with_its_closure(tmp_path, count, expected):
    assert _check(tmp_path, f"fn = self._make({count})\nreturn fn(0)", MAKE) == expected


def test_a_lambda_sink_message_says_when_to_reset(tmp_path):
    text = HEAD + ("        build = lambda n: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
                   "        return build(num_reqs_padded)\n")
    (f,) = check_text(tmp_path, text, "runner.py", "vllm")
    # no reset can go into the lambda's body: the message says before the call, not "before line 13"
    assert "before the lambda of line 13 is called" in f.message
    assert "`build`" not in f.message and "lambda_13" not in f.message


# ---------------------------------------------------------------------------------------------
# cases a review of the first version found (each a from-scratch reproduction)

LAMBDA_HANDED_ON = "build = lambda n: CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=n)\n"


@pytest.mark.parametrize("use", [
    "self.graph_runner.capture(build)",   # handed to code the analysis does not follow
    "self.build_fn = build",              # stored
    "return build",                       # returned uncalled
])
def test_a_named_lambda_that_escapes_still_runs_where_written(tmp_path, use):
    # it is not called here, so it runs where written (as every lambda did before)
    assert _check(tmp_path, LAMBDA_HANDED_ON + use) == [("PAD001", 13, "seq_lens")]


@pytest.mark.parametrize("first, then, expected", [
    ("num_reqs", "num_reqs_padded", [("PAD001", 16, "seq_lens")]),
    ("num_reqs_padded", "num_reqs", []),
])
def test_a_lambda_called_where_made_reads_its_free_names_when_called(tmp_path, first, then, expected):
    # Python looks `n` up at the call: the view is `[:then]`
    body = (f"n = {first}\nview = lambda: self.seq_lens[:n]\nn = {then}\n"
            "return CommonAttentionMetadata(seq_lens=view(), num_reqs=num_reqs_padded)")
    assert _check(tmp_path, body) == expected


RUN = '''
    def _run(self, n):
        f = lambda m: self._build(n, m)
        g = lambda k: f(k)
        return g(0)

    def _build(self, n, m):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=m)
'''


def test_closures_over_different_values_do_not_share_a_summary(tmp_path):
    # `g` holds `f`, which holds `n`: the second call (padded) must not reuse the first's (real)
    assert _check(tmp_path, "self._run(num_reqs)\nreturn self._run(num_reqs_padded)", RUN) \
        == [("PAD001", 22, "seq_lens")]


def test_a_property_with_a_setter_runs_its_getter_on_read(tmp_path):
    setter = PROPERTY + '''
    @padded_seq_lens.setter
    def padded_seq_lens(self, v):
        self.num_padded = v
'''
    assert _check(tmp_path, "self.num_padded = num_reqs_padded\n"
                            "return CommonAttentionMetadata(seq_lens=self.padded_seq_lens, num_reqs=num_reqs_padded)",
                  setter) == [("PAD001", 14, "seq_lens")]


CLS = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class Base:
    @classmethod
    def prepare(cls, buf, n, p):
        cls._pad(buf, n, p)

    @staticmethod
    def _pad(buf, n, p):
        {BASE}


class ModelRunner(Base):
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    @staticmethod
    def _pad(buf, n, p):
        {SUB}

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = torch.as_tensor(scheduler_output.seq_lens)
        {CALL}(self.seq_lens, num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''


@pytest.mark.parametrize("call", ["self.prepare", "ModelRunner.prepare"])
@pytest.mark.parametrize("base, sub, expected", [
    ("pass", "buf[n:p] = 0", []),                        # the subclass's `_pad` runs: reset
    ("buf[n:p] = 0", "pass", [("PAD001", 28, "seq_lens")]),  # the base's does not run (the sink line)
])
def test_cls_in_an_inherited_class_method_is_the_callers_class(tmp_path, call, base, sub, expected):
    text = CLS.replace("{BASE}", base).replace("{SUB}", sub).replace("{CALL}", call)
    out = [(f.code, f.line, f.field) for f in check_text(tmp_path, text, "runner.py", "vllm")]
    assert out == expected


# A default that names a local of the function that made the lambda or nested function is that
# local's value when it runs there (it was unknown: `n` taken for a padded count past the rows
# written, a false alarm on the real count; the padded one was judged by luck of that guess)
@pytest.mark.parametrize("body, expected", [
    ("build = lambda n=num_reqs: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build()", []),
    ("build = lambda n=num_reqs_padded: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build()", [("PAD001", 13, "seq_lens")]),
    # the default given, the argument wins
    ("build = lambda n=num_reqs_padded: CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build(num_reqs)", []),
    ("def build(n=num_reqs):\n"
     "    return CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build()", []),
    ("def build(n=num_reqs_padded):\n"
     "    return CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)\n"
     "return build()", [("PAD001", 14, "seq_lens")]),
    # a default that names a local holding a view: the view it held
    ("view = self.seq_lens[:num_reqs_padded]\n"
     "build = lambda v=view: CommonAttentionMetadata(seq_lens=v, num_reqs=num_reqs_padded)\n"
     "return build()", [("PAD001", 14, "seq_lens")]),
])
def test_a_default_naming_an_enclosing_local_is_its_value(tmp_path, body, expected):
    assert _check(tmp_path, body) == expected


@pytest.mark.parametrize("call", ["return build()", "f = build\nreturn f()"])
def test_a_default_is_what_the_def_saw(tmp_path, call):
    # `def build(k=n)` with `n` rebound after the `def`: the default is the padded count the `def`
    # saw, also where the function is taken as a value after the rebinding (line 15: the sink)
    body = ("n = num_reqs_padded\n"
            "def build(k=n):\n"
            "    return CommonAttentionMetadata(seq_lens=self.seq_lens[:k], num_reqs=k)\n"
            "n = num_reqs\n" + call)
    assert _check(tmp_path, body) == [("PAD001", 15, "seq_lens")]
