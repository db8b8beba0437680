"""Tests held in names, early returns under a test, and sinks a reused summary reaches.

Written from scratch, after vLLM's v1 runner: ``_prepare_inputs`` tests
``use_spec_decode = self.speculative_config is not None`` and writes (and resets) the draft
counts only when it holds; ``execute_model`` binds the same test to a local and passes it to
``_build_attention_metadata(use_spec_decode=...)``, which hands the padded slice to the builders
only under ``if use_spec_decode``.  The two tests are one: a name bound to a test of ``self``'s
attributes (also a parameter it was passed to) is that test, so the reset made under it covers
the slice read under it, in another function too.  A test that returns early
(``if not use_spec: return``) makes the resets after it conditional on its negation, at the
function's exit as after an ``if``.

Each runner writes ``self.seq_lens[:num_reqs]`` (and resets its padding rows, or not) only when
``_prepare`` passes its test, and ``_build`` hands ``self.seq_lens[:num_reqs_padded]`` to a
builder (a sink in another method) only under its own test.  Expected findings from reading each
variant: none where the two tests are the same and the reset is there; one PAD001 ``seq_lens``
where the reset is missing or the tests differ.
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

from .project_files import check_text

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class Builder:
    def build(self, n_pad, seq_lens=None):
        return CommonAttentionMetadata(seq_lens=seq_lens, num_reqs=n_pad)


class ModelRunner:
    def __init__(self, n: int, spec, other) -> None:
        self.spec = spec
        self.other = other
        self.builder = Builder()
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def _prepare(self, num_reqs, so):
        use_spec = self.spec is not None
        if not use_spec:
            return
        self.seq_lens[:num_reqs] = so.seq_lens
        {RESET}

    def _build(self, num_reqs, num_reqs_padded, use_spec: bool = False):
        {TEST_B}
        extra = {}
        if use_spec:
            extra = dict(seq_lens=self.seq_lens[:num_reqs_padded])
        return self.builder.build(num_reqs_padded, **extra)

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self._prepare(num_reqs, so)
        {TEST_C}
        return self._build(num_reqs, num_reqs_padded, use_spec=use_spec)
'''
RESET = "self.seq_lens[num_reqs:] = 0"
SAME = "use_spec = self.spec is not None"
STALE = [("PAD001", "seq_lens")]


@pytest.mark.parametrize("reset, test_b, test_c, expected", [
    # the callee tests a local bound to the same test
    (RESET, SAME, "use_spec = None", []),
    ("pass", SAME, "use_spec = None", STALE),
    # the callee tests the parameter the caller passed its own local bound to the test
    (RESET, "pass", SAME, []),
    ("pass", "pass", SAME, STALE),
    # another attribute, or the negated test: not the test the reset was made under
    (RESET, "pass", "use_spec = self.other is not None", STALE),
    (RESET, "pass", "use_spec = self.spec is None", STALE),
    (RESET, "use_spec = self.other is not None", "use_spec = None", STALE),
])
def test_a_name_bound_to_a_test_is_that_test(tmp_path, reset, test_b, test_c, expected):
    text = RUNNER.replace("{RESET}", reset).replace("{TEST_B}", test_b).replace("{TEST_C}", test_c)
    assert [(f.code, f.field) for f in check_text(tmp_path, text)] == expected


def test_a_test_stored_on_self_between_is_not_the_same_fact(tmp_path):
    # `_build` stores `self.spec` before testing it: its test is of another value
    text = RUNNER.replace("{RESET}", RESET).replace("{TEST_C}", "use_spec = None").replace(
        "{TEST_B}", "self.spec = None\n        use_spec = self.spec is not None")
    assert [(f.code, f.field) for f in check_text(tmp_path, text)] == STALE


SHARED = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self._fill(num_reqs, so)
        return self._build(num_reqs, num_reqs_padded)

    def sample_tokens(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self._fill(num_reqs, so)
        return self._build(num_reqs, num_reqs_padded)

    def _fill(self, num_reqs, so):
        self.seq_lens[:num_reqs] = so.seq_lens

    def _build(self, num_reqs, num_reqs_padded):
        return self._meta(num_reqs_padded)

    def _meta(self, n):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n], num_reqs=n)
'''


def test_a_summary_reused_on_another_path_reports_the_sink_on_it():
    # both entry points reach `_build` with the same counts and the same rows written: the second
    # call is answered by the first one's summary, and the sink it reaches is stale on both paths
    (f,) = check_source(SHARED, "runner.py", load_profile("vllm"))
    assert "on 2 paths from `execute_model` and `sample_tokens`" in f.message


# Shapes a review of the change found the first version wrong on (each stale: one PAD001).
STALE_SHAPES = {
    # a padded slice joined with an unknown attribute read of another object: the slice's rows
    # still matter (a bare attribute is no test)
    "joined with an attribute": '''
    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
        if so.override is not None:
            seq_lens = so.override_seq_lens
        else:
            seq_lens = self.seq_lens[:num_reqs_padded]
        return CommonAttentionMetadata(seq_lens=seq_lens, num_reqs=num_reqs_padded)
''',
    # the function that tests the name stores the attribute the test read: another value
    "stored where tested": '''
    def _prepare(self, num_reqs, so, use_spec):
        self.seq_lens[:num_reqs] = so.seq_lens
        if use_spec:
            self.seq_lens[num_reqs:] = 0
        self.spec = so.make_spec()

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        use_spec = self.spec is not None
        self._prepare(num_reqs, so, use_spec)
        if self.spec is not None:
            return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
''',
    # a view bound under the test, then the buffer overwritten with stale rows in the same branch
    "rewritten after binding": '''
    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
        if self.spec is not None:
            self.seq_lens[num_reqs:] = 0
        if self.spec is not None:
            x = self.seq_lens[:num_reqs_padded]
            self.seq_lens[:num_reqs_padded] = self.old[:num_reqs_padded]
            return CommonAttentionMetadata(seq_lens=x, num_reqs=num_reqs_padded)
''',
    # a return inside a loop: the end of the function is reached with no test (no chunks)
    "return in a loop": '''
    def _prepare(self, num_reqs, so):
        self.seq_lens[:num_reqs] = so.seq_lens
        for chunk in so.chunks:
            if self.spec is not None:
                self.seq_lens[num_reqs:] = 0
                return

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self._prepare(num_reqs, so)
        if self.spec is not None:
            return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
''',
}
HEAD = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n: int, spec) -> None:
        self.spec = spec
        self.seq_lens = torch.zeros(n, dtype=torch.int32)
        self.old = torch.zeros(n, dtype=torch.int32)
'''


@pytest.mark.parametrize("name", sorted(STALE_SHAPES))
def test_shapes_where_the_test_does_not_cover_the_read(tmp_path, name):
    found = [(f.code, f.field) for f in check_text(tmp_path, HEAD + STALE_SHAPES[name]) if f.code == "PAD001"]
    assert found == STALE
