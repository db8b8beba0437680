"""Path conditions, whole buffers read to a sink's declared width, and objects held by sink objects.

Each case is a small SGLang-shaped replay written from scratch (the shapes are those of
SGLang 0.5.23's draft-extend runner, ``fixtures/sglang/whole_buffer_view_*.py``), checked
with the SGLang profile.  ``raw_bs`` is the real request count, ``bs`` the padded one; the
persistent buffers are declared fields of a buffers object the runner builds in
``__init__``.  Expected findings are reasoned per case in its comment.
"""

from __future__ import annotations

from padlint.analysis import check_source
from padlint.profile import load_profile

_HEAD = '''\
from types import SimpleNamespace

import torch


class ForwardBatch:
    batch_size: int
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor | None
    spec_info: object


class Buffers:
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor
    req_pool_indices: torch.Tensor


class Runner:
    def __init__(self, backend, capture_bs):
        self.buffers = Buffers()
        self.backend = backend
        self.capture_bs = capture_bs
        self.width = 2

    def _pad_to_bucket(self, raw_bs):
        return min(b for b in self.capture_bs if b >= raw_bs)

    def replay(self, forward_batch: ForwardBatch):
        buffers = self.buffers
        raw_bs = forward_batch.batch_size
        bs = self._pad_to_bucket(raw_bs)
'''


def _findings(tmp_path, body: str, head: str = _HEAD):
    text = head + "".join("        " + line + "\n" if line else "\n" for line in body.splitlines())
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    return [(f.code, f.field, text.splitlines()[f.line - 1].strip()) for f in
            check_source(text, str(p), load_profile("sglang"))]


# ----------------------------------------------------------- repeated tests of one condition

def test_reset_under_a_test_covers_a_read_under_the_same_test(tmp_path):
    # the host copy is reset and handed out only when the batch has one: on every path that
    # reads `buffers.seq_lens_cpu[:bs]`, the reset ran
    body = '''\
if forward_batch.seq_lens_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
    buffers.seq_lens_cpu[:raw_bs].copy_(forward_batch.seq_lens_cpu)
view = SimpleNamespace(batch_size=bs, seq_lens_cpu=None if forward_batch.seq_lens_cpu is None else buffers.seq_lens_cpu[:bs])
self.backend.init_forward_metadata_out_graph(view)'''
    assert _findings(tmp_path, body) == []


def test_reset_under_a_test_covers_a_sink_inside_the_same_test(tmp_path):
    body = '''\
if forward_batch.seq_lens_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
x = 0
if forward_batch.seq_lens_cpu is not None:
    self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert _findings(tmp_path, body) == []


def test_reset_under_a_test_does_not_cover_a_read_on_every_path(tmp_path):
    # the sink runs whether or not the batch has a host copy: without one, rows [raw_bs:bs] were
    # not reset this step
    body = '''\
if forward_batch.seq_lens_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "seq_lens_cpu")]


def test_a_test_after_its_names_are_reassigned_is_another_condition(tmp_path):
    # `has_cpu` is rebound between the reset and the sink: the second test may hold where the
    # first did not
    body = '''\
has_cpu = self.host_copy(forward_batch)
if has_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
has_cpu = self.other_copy(forward_batch)
if has_cpu is not None:
    self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "seq_lens_cpu")]


def test_an_early_return_holds_the_negated_test_for_the_rest_of_the_block(tmp_path):
    # after `if x is None: return`, every later statement runs with a host copy, so the reset
    # made under `if x is not None:` before it holds at the sink
    body = '''\
if forward_batch.seq_lens_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
if forward_batch.seq_lens_cpu is None:
    return
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert _findings(tmp_path, body) == []


def test_the_same_test_of_an_unchanged_name_is_the_same_condition(tmp_path):
    # the control case of the one above: no reassignment, the reset holds at the sink
    body = '''\
has_cpu = self.host_copy(forward_batch)
if has_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
x = 0
if has_cpu is not None:
    self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert _findings(tmp_path, body) == []


def test_a_test_of_self_attributes_this_function_stores_is_no_condition(tmp_path):
    # `self.host` is stored between the two tests: they need not agree
    body = '''\
if self.host is not None:
    buffers.seq_lens_cpu.fill_(1)
self.host = self.other_copy(forward_batch)
if self.host is not None:
    self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "seq_lens_cpu")]


def test_a_test_of_self_attributes_holds_across_statements(tmp_path):
    body = '''\
if self.host is not None:
    buffers.seq_lens_cpu.fill_(1)
x = 0
if self.host is not None:
    self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert _findings(tmp_path, body) == []


def test_a_negated_test_does_not_cover(tmp_path):
    # reset when there is a host copy, read when there is none: the read's path never reset
    body = '''\
if forward_batch.seq_lens_cpu is not None:
    buffers.seq_lens_cpu.fill_(1)
if forward_batch.seq_lens_cpu is None:
    self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu[:bs]))'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "seq_lens_cpu")]


# ------------------------------------------------------------- a guard over resets only

def test_resets_guarded_by_a_padded_count_comparison_run_whenever_there_is_padding(tmp_path):
    # `bs * width != num_tokens` fails only when the padded token count equals the real one:
    # then there are no padding rows, so the path that skips the fills has none to reset
    body = '''\
num_tokens = forward_batch.seq_lens.shape[0] * self.width
if bs * self.width != num_tokens:
    buffers.seq_lens.fill_(1)
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=buffers.seq_lens[:bs]))'''
    assert _findings(tmp_path, body) == []


def test_a_guard_whose_body_does_more_than_reset_is_not_taken_for_a_padding_guard(tmp_path):
    # the body also calls out: the test is not known to be "there are padding rows" (`n_tok` is
    # no count the profile names), so the path that skips it leaves rows [raw_bs:bs] as the last
    # step left them
    body = '''\
n_tok = forward_batch.seq_lens.shape[0] * self.width
if bs * self.width != n_tok:
    buffers.seq_lens.fill_(1)
    self.log_padding(bs)
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=buffers.seq_lens[:bs]))'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "seq_lens")]


def test_a_local_compared_with_a_padded_count_is_its_real_count(tmp_path):
    # `num_tokens` is a padded name in the profile, but this local is compared with the padded
    # token count the code computed (`bs * self.width`): it is that count's real partner, so the
    # test is "there are padding rows" and the path that skips the fill has none, whatever else
    # the body does (the same body with `n_tok` above is reported)
    body = '''\
num_tokens = forward_batch.seq_lens.shape[0] * self.width
if bs * self.width != num_tokens:
    buffers.seq_lens.fill_(1)
    self.log_padding(bs)
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=buffers.seq_lens[:bs]))'''
    assert _findings(tmp_path, body) == []
    # and a write of its rows is a write of real rows only: rows past it, up to the padded
    # token count, are stale at a sink that reads [:bs * self.width]
    body = '''\
num_tokens = forward_batch.positions.shape[0]
if bs * self.width != num_tokens:
    buffers.seq_lens.fill_(1)
buffers.positions[:num_tokens].copy_(forward_batch.positions)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, positions=buffers.positions[:bs * self.width]))'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "positions")]


# -------------------------------------------------- whole buffers read to a declared width

def test_a_whole_buffer_is_read_to_the_padded_width_its_sink_declares(tmp_path):
    # `batch_size=bs` makes the backend read rows [:bs] of `seq_lens` (a request-axis field):
    # rows [raw_bs:bs] were not written this step
    body = '''\
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=buffers.seq_lens))'''
    found = _findings(tmp_path, body)
    assert [f[:2] for f in found] == [("PAD001", "seq_lens")]


def test_the_finding_names_the_declaring_argument(tmp_path):
    body = '''\
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=buffers.seq_lens))'''
    p = tmp_path / "runner.py"
    text = _HEAD + "        " + body + "\n"
    p.write_text(text, encoding="utf-8")
    (f,) = check_source(text, str(p), load_profile("sglang"))
    assert "handed whole" in f.message and "`batch_size=bs`" in f.message
    assert f.fix is not None and f.fix.text == "buffers.seq_lens[raw_bs:bs] = 1"


def test_a_whole_buffer_with_its_padding_reset_is_clean(tmp_path):
    body = '''\
buffers.seq_lens.fill_(1)
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=buffers.seq_lens))'''
    assert _findings(tmp_path, body) == []


def test_a_real_width_reads_no_padding_rows(tmp_path):
    # `batch_size=raw_bs`: the backend reads the real rows only
    body = '''\
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=raw_bs, seq_lens=buffers.seq_lens))'''
    assert _findings(tmp_path, body) == []


def test_a_field_of_an_object_made_each_step_is_not_a_persistent_buffer(tmp_path):
    # `self.step_batch` is stored by a step method (not at construction): its `seq_lens` is that
    # step's tensor, not a buffer kept across steps, so handing it whole says nothing of stale rows
    head = _HEAD.replace('''    def replay(self, forward_batch: ForwardBatch):''', '''    def stage(self, forward_batch: ForwardBatch):
        self.step_batch = forward_batch

    def replay(self, forward_batch: ForwardBatch):''')
    body = '''\
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=self.step_batch.seq_lens))'''
    assert _findings(tmp_path, body, head) == []


def test_a_whole_buffer_in_a_field_of_unknown_axis_is_not_widened(tmp_path):
    # the profile gives `scratch` no axis: the width of a request-axis count says nothing of it
    head = _HEAD.replace("    req_pool_indices: torch.Tensor\n", "    req_pool_indices: torch.Tensor\n    scratch: torch.Tensor\n")
    body = '''\
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, scratch=buffers.scratch))'''
    assert _findings(tmp_path, body, head) == []


# ------------------------------------------------------ objects held by sink objects

def test_a_store_on_an_object_a_sink_object_holds_is_a_sink(tmp_path):
    # the backend reads `forward_batch.spec_info.seq_lens` like any field of the batch
    body = '''\
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
forward_batch.spec_info.seq_lens = buffers.seq_lens[:bs]'''
    assert [f[:2] for f in _findings(tmp_path, body)] == [("PAD001", "seq_lens")]


def test_a_store_on_an_object_of_no_sink_is_not_a_sink(tmp_path):
    body = '''\
buffers.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
self.scratch.seq_lens = buffers.seq_lens[:bs]'''
    assert _findings(tmp_path, body) == []


_BACKEND = '''\
import torch


class ForwardBatch:
    batch_size: int
    padded_bs: int
    spec_info: object


class Backend:
    def __init__(self, max_bs):
        self.kv_indptr = torch.zeros(max_bs + 1, dtype=torch.int32)

    def init_forward_metadata_out_graph(self, forward_batch: ForwardBatch):
        bs = forward_batch.{FIELD}
        forward_batch.spec_info.kv_indptr = self.kv_indptr[: bs + 1]
'''


def test_a_count_field_the_profile_does_not_call_padded_brings_no_real_partner(tmp_path):
    # inside an attention backend, `bs = forward_batch.batch_size` is the size of the (padded)
    # view it was handed; no real count is in scope, so the slice has no padding rows here
    text = _BACKEND.replace("{FIELD}", "batch_size")
    p = tmp_path / "backend.py"
    p.write_text(text, encoding="utf-8")
    assert check_source(text, str(p), load_profile("sglang")) == []


def test_a_padded_count_field_holds_its_real_partner(tmp_path):
    # `padded_bs` is a padded count of the profile: the object it is read from holds `raw_bs`
    # too, so rows [raw_bs + 1:bs + 1] are padding rows nothing here reset
    text = _BACKEND.replace("{FIELD}", "padded_bs")
    p = tmp_path / "backend.py"
    p.write_text(text, encoding="utf-8")
    assert [(f.code, f.field) for f in check_source(text, str(p), load_profile("sglang"))] == \
        [("PAD001", "kv_indptr")]


def test_an_object_handed_whole_is_not_a_buffer_read_to_the_width(tmp_path):
    # `seq_lens=self.helper`: an object of a project class (no rows of its own), not a tensor,
    # whatever the profile says of the field `seq_lens`
    head = _HEAD.replace("class Runner:", "class Helper:\n    pass\n\n\nclass Runner:").replace(
        "        self.buffers = Buffers()\n", "        self.buffers = Buffers()\n        self.helper = Helper()\n")
    body = '''\
self.backend.init_forward_metadata_out_graph(SimpleNamespace(batch_size=bs, seq_lens=self.helper))'''
    assert _findings(tmp_path, body, head) == []
