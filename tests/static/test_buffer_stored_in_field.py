"""A persistent buffer stored in a field of ``self`` by a method (not the constructor).

``self.seq_lens_cpu = self.seq_lens_buf`` in a step's ``prepare``: from there on, on that
path, ``self.seq_lens_cpu`` *is* the buffer, with the rows the step wrote and reset.  Before,
the store was dropped and a later read of ``self.seq_lens_cpu`` was a location of its own
that no write had reached: stale padding rows handed out under the other name were not seen,
and a reset made under the buffer's own name did not count for it.

The shape is that of SGLang 0.5.23's multi-layer draft-extend runner (``prepare`` copies
``[:raw_bs]`` into a host buffer, resets the rest under ``if bs != raw_bs``, stores the
buffer in a field, and the replay hands the field whole with ``batch_size=bs``), written from
scratch; checked with the SGLang profile.  ``raw_bs`` is the real request count, ``bs`` the
padded one (the capture size the batch is padded to).
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

_RUNNER = '''\
from types import SimpleNamespace

import torch


class Backend:
    def init_forward_metadata_out_graph(self, view) -> None:
        print(view.seq_lens_cpu[: view.batch_size])


class Runner:
    def __init__(self, max_bs: int) -> None:
        self.capture_bs = [1, 2, 4, 8]
        self.seq_len_fill_value = 1
        self.seq_lens_buf = torch.full((max_bs,), 1, dtype=torch.int64)
        self.backend = Backend()

    def _pad_to_bucket(self, raw_bs: int) -> int:
        return next(b for b in self.capture_bs if b >= raw_bs)

    def prepare(self, forward_batch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self._pad_to_bucket(raw_bs)
        if bs != raw_bs:
            RESET
        self.seq_lens_buf[:raw_bs].copy_(forward_batch.seq_lens_cpu)
        self.seq_lens_cpu = STORED
        self.bs = bs

    def replay(self, bs: int, seq_lens_cpu) -> None:
        view = SimpleNamespace(batch_size=bs, seq_lens_cpu=seq_lens_cpu)
        self.backend.init_forward_metadata_out_graph(view)

    def step(self, forward_batch) -> None:
        self.prepare(forward_batch)
        self.replay(self.bs, HANDED)
'''

#: the reset of the padding rows `[raw_bs:bs]` the buggy variants lack (the whole buffer to the
#: neutral value, then the real rows copied over it)
_RESET = "self.seq_lens_buf.fill_(self.seq_len_fill_value)"


def _findings(tmp_path, reset: str, stored: str = "self.seq_lens_buf", handed: str = "self.seq_lens_cpu"):
    text = _RUNNER.replace("RESET", reset).replace("STORED", stored).replace("HANDED", handed)
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    return [(f.code, f.field, text.splitlines()[f.line - 1].strip()) for f in
            check_source(text, str(p), load_profile("sglang"))]


_SINK = "view = SimpleNamespace(batch_size=bs, seq_lens_cpu=seq_lens_cpu)"


@pytest.mark.parametrize("handed", ["self.seq_lens_cpu", "self.seq_lens_buf"])
def test_padding_rows_of_a_buffer_stored_in_a_field_reach_the_sink(tmp_path, handed):
    # no reset: rows [raw_bs:bs] of the buffer hold an earlier, larger batch's lengths, and the
    # replay hands the whole buffer beside `batch_size=bs`.  Under either name: the field holds
    # the buffer itself (before, only the buffer's own name was reported)
    assert _findings(tmp_path, "pass", handed=handed) == [("PAD001", "seq_lens_cpu", _SINK)]


@pytest.mark.parametrize("handed", ["self.seq_lens_cpu", "self.seq_lens_buf"])
def test_a_reset_under_the_buffers_name_holds_for_the_field(tmp_path, handed):
    assert _findings(tmp_path, _RESET, handed=handed) == []


def test_a_reset_through_the_field_holds_for_the_buffer(tmp_path):
    # the reset written after the store, under the field's name, resets the buffer: the replay
    # that hands the buffer under its own name gets the neutral rows (without that reset it is
    # reported: the first test)
    p = tmp_path / "later.py"
    text = _RUNNER.replace("RESET", "pass").replace("STORED", "self.seq_lens_buf").replace(
        "HANDED", "self.seq_lens_buf").replace(
        "        self.bs = bs\n", "        self.seq_lens_cpu[raw_bs:bs].fill_(self.seq_len_fill_value)\n        self.bs = bs\n")
    p.write_text(text, encoding="utf-8")
    assert check_source(text, str(p), load_profile("sglang")) == []


def test_a_view_stored_in_a_field_keeps_its_padding_rows(tmp_path):
    # `self.seq_lens_cpu = self.seq_lens_buf[:bs]`: the field holds the padded view; handed on
    # by name, its rows [raw_bs:bs] are the same stale rows
    assert _findings(tmp_path, "pass", stored="self.seq_lens_buf[:bs]") == [("PAD001", "seq_lens_cpu", _SINK)]
    assert _findings(tmp_path, _RESET, stored="self.seq_lens_buf[:bs]") == []


def test_a_fresh_tensor_stored_in_a_field_is_no_buffer(tmp_path):
    # `self.seq_lens_cpu = torch.ones(8)`: made this step with the neutral value in every row:
    # nothing stale to hand out, reset or not (as before)
    assert _findings(tmp_path, "pass", stored="torch.ones(8, dtype=torch.int64)") == []
