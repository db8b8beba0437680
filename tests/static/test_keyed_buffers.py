"""Persistent buffers held in a dict under string keys, and the facts around them that SGLang
0.5.23's prefill CUDA-graph runner needs (issue 8: "counts as relations", "reset in another
class / a loop").  The runner's shape, written from scratch:

    self._static = {name: torch.zeros((max_bs,)) for name in _FIELDS}     # __init__
    bs = forward_batch.batch_size                                          # the replay
    s = self._static
    s["seq_lens"][:bs].copy_(forward_batch.seq_lens)
    if self._full and bs < self._slots:
        r = self._slots
        s["seq_lens"][bs:r].zero_()
    ... later, under `if self._full:`, `view.seq_lens = s["seq_lens"][:r]` on a copy of the batch

Each test changes one thing and says which rows are stale (or why none are).  The profile is
SGLang's (``bs`` is a padded count there; ``raw_bs`` its real partner).
"""

from __future__ import annotations

import pytest

from .project_files import check_files

#: the batch class the small runners below hand their views to
BATCH = """\
class ForwardBatch:
    def __init__(self, seq_lens):
        self.seq_lens = seq_lens
"""

MODULE = '''\
import copy

import torch

_FIELDS = ("seq_lens", "req_pool_indices")


class ForwardBatch:
    def __init__(self, batch_size, seq_lens, req_pool_indices):
        self.batch_size = batch_size
        self.seq_lens = seq_lens
        self.req_pool_indices = req_pool_indices


class Runner:
    def __init__(self, backend, max_bs):
        self.backend = backend
        self._slots = max_bs
        self._full = True
        self._static = {name: torch.zeros((max_bs,), dtype=torch.int64) for name in _FIELDS}

    def load_batch(self, forward_batch: ForwardBatch):
        bs = forward_batch.batch_size
        s = self._static
        s["seq_lens"][:bs].copy_(forward_batch.seq_lens)
        s["req_pool_indices"][:bs].copy_(forward_batch.req_pool_indices)
        if {GUARD}:
            r = self._slots
            {RESETS}
        self._prepare(forward_batch)

    def _prepare(self, forward_batch: ForwardBatch):
        if self._full:
            r = self._slots
            s = self._static
            view = {COPY}
            view.seq_lens = s["seq_lens"][:r]
            view.req_pool_indices = s["req_pool_indices"][:r]
            self.backend.init_forward_metadata_out_graph(view)
'''
GUARD = "self._full and bs < self._slots"
BOTH = 's["seq_lens"][bs:r].zero_()\n            s["req_pool_indices"][bs:r].zero_()'
LOOP = "for name in _FIELDS:\n                s[name][bs:r].zero_()"


def _stale_fields(tmp_path, module: str) -> list[str]:
    """The fields PAD001 reports when ``module`` is checked alone as ``runner.py`` (sglang profile)."""
    found = check_files(tmp_path, {"runner.py": module}, ["runner.py"], profile="sglang")
    return [f.field for f in found if f.code == "PAD001"]


def _findings(tmp_path, resets=BOTH, guard=GUARD, copy="copy.copy(forward_batch)"):
    """(field, line is the store of that field on the copy) of each finding."""
    found = check_files(tmp_path, {"runner.py": MODULE}, ["runner.py"],
                        {"RESETS": resets, "GUARD": guard, "COPY": copy}, profile="sglang")
    text = (tmp_path / "runner.py").read_text().splitlines()
    return sorted((f.field, text[f.line - 1].strip().startswith(f"view.{f.field} = "))
                  for f in found if f.code == "PAD001")


def test_the_reset_value_is_judged_at_those_padding_rows(tmp_path):
    # the resets of rows [bs:r] make `r` the padded count of `bs`'s pair: `s["seq_lens"][bs:r]`
    # are padding rows the view hands out, and 0 is not the profile's neutral value of
    # `seq_lens` (SEQ_LEN_FILL_VALUE, 1, for the CUDA backends; 0 only in the modules the
    # profile names, this runner.py not among them)
    found = check_files(tmp_path, {"runner.py": MODULE}, ["runner.py"],
                        {"RESETS": BOTH, "GUARD": GUARD, "COPY": "copy.copy(forward_batch)"}, profile="sglang")
    assert [(f.code, f.field, f.line) for f in found] == [("PAD002", "seq_lens", 29)]
    fill = 's["seq_lens"][bs:r].fill_(1)\n            s["req_pool_indices"][bs:r].zero_()'
    found = check_files(tmp_path, {"runner.py": MODULE}, ["runner.py"],
                        {"RESETS": fill, "GUARD": GUARD, "COPY": "copy.copy(forward_batch)"}, profile="sglang")
    assert found == []


def test_both_entries_reset_nothing_is_stale(tmp_path):
    # rows [bs:r] of both entries are zeroed where bs < r and the views are handed out (both
    # under `self._full`); where bs >= r there are no rows past bs
    assert _findings(tmp_path) == []


def test_an_entry_is_its_own_buffer(tmp_path):
    # only `seq_lens` is reset: `req_pool_indices` rows [bs:r] hold an earlier batch's rows;
    # with one location for every entry the `seq_lens` reset would have hidden it
    only_seq = 's["seq_lens"][bs:r].zero_()'
    assert _findings(tmp_path, resets=only_seq) == [("req_pool_indices", True)]


def test_a_loop_over_the_module_tuple_resets_each_entry(tmp_path):
    # `for name in _FIELDS` runs once per key of the module-level tuple: both entries reset
    assert _findings(tmp_path, resets=LOOP) == []


def test_a_loop_over_another_tuple_resets_only_its_keys(tmp_path):
    resets = 'for name in ("seq_lens",):\n                s[name][bs:r].zero_()'
    assert _findings(tmp_path, resets=resets) == [("req_pool_indices", True)]


def test_without_the_count_test_the_reset_still_counts(tmp_path):
    # `if self._full:` alone: the rows are reset on the path that hands them out
    assert _findings(tmp_path, guard="self._full") == []


def test_a_reset_under_another_flag_does_not_count(tmp_path):
    # `self._other` is not what the helper tests: on the path where it is False and `_full`
    # True, rows [bs:r] of both entries are stale
    found = _findings(tmp_path, guard="self._other and bs < self._slots")
    assert found == [("req_pool_indices", True), ("seq_lens", True)]


def test_the_store_on_a_plain_alias_is_a_sink_too(tmp_path):
    only_seq = 's["seq_lens"][bs:r].zero_()'
    assert _findings(tmp_path, resets=only_seq, copy="forward_batch") == [("req_pool_indices", True)]


def test_a_copy_of_an_unknown_object_is_no_sink(tmp_path):
    # `copy.copy(x)` of an object of no known class: its stores reach nothing the profile names
    only_seq = 's["seq_lens"][bs:r].zero_()'
    assert _findings(tmp_path, resets=only_seq, copy="copy.copy(object())") == []


def test_the_padded_name_is_the_real_count_where_the_code_resets_from_it(tmp_path):
    # `bs` is a padded count to the profile; the function resets rows [bs:r], so there `bs` is
    # where the padding rows start: the one entry not reset is stale from bs on
    only_seq = 's["seq_lens"][bs:r].zero_()'
    found = check_files(tmp_path, {"runner.py": MODULE}, ["runner.py"],
                        {"RESETS": only_seq, "GUARD": GUARD, "COPY": "copy.copy(forward_batch)"},
                        profile="sglang")
    # (and PAD002 for the 0 of `seq_lens`: test_the_reset_value_is_judged_at_those_padding_rows)
    assert [(f.code, f.field) for f in found] == [("PAD001", "req_pool_indices"), ("PAD002", "seq_lens")]
    # named by the profile's real count of the pair (`raw_bs`): `_prepare` has no name of it; the
    # padded count by `_prepare`'s own local `r` (`self._slots`, which the resets of `load_batch`
    # make the padded count of the pair)
    assert "rows [raw_bs:r] may be stale" in found[0].message


def test_with_no_reset_from_it_the_padded_name_stays_padded(tmp_path):
    # a known limit: with no reset from `bs` anywhere in the function, nothing says `bs` is not
    # the profile's padded count; the writes of [:bs] then cover every row the views hand out
    assert _findings(tmp_path, resets="pass") == []


CONDITIONAL = '''\
import torch


''' + BATCH + '''

class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros((max_bs,), dtype=torch.int64)
        self.slots = max_bs

    def replay(self, fb, raw_bs):
        if fb.has_lens:
            self.seq_lens[:raw_bs].copy_(fb.seq_lens)
        {RESET}
        return ForwardBatch(seq_lens=self.seq_lens[:self.slots])
'''


@pytest.mark.parametrize("reset,rows", [
    # a prefix written on one branch only: on the other every row is stale, on this one rows
    # [raw_bs:slots]: two findings, the padding rows (a reset at the sink) and rows [0:raw_bs]
    # where `fb.has_lens` fails (written on that branch)
    ("pass", ["rows [raw_bs:self.slots] may be stale", "rows [0:raw_bs]"]),
    # with the padding rows reset, rows [0:raw_bs] are still unwritten where `fb.has_lens` fails
    ("self.seq_lens[raw_bs:self.slots].fill_(1)", ["rows [0:raw_bs]"]),
])
def test_a_prefix_written_on_one_branch_names_the_padding_rows(tmp_path, reset, rows):
    found = check_files(tmp_path, {"runner.py": CONDITIONAL}, ["runner.py"], {"RESET": reset}, profile="sglang")
    assert [(f.line, f.field) for f in found] == [(18, "seq_lens")] * len(rows)
    for text, f in zip(rows, sorted(found, key=lambda f: "rows [0:" in f.message)):
        assert text in f.message
    (one,) = [f for f in found if "rows [0:raw_bs]" in f.message]
    assert "not written where `fb.has_lens` fails (line 15)" in one.message and one.fix is None


def test_a_prefix_written_on_both_branches_leaves_only_the_padding_rows(tmp_path):
    text = CONDITIONAL.replace("            self.seq_lens[:raw_bs].copy_(fb.seq_lens)\n",
                               "            self.seq_lens[:raw_bs].copy_(fb.seq_lens)\n"
                               "        else:\n"
                               "            self.seq_lens[:raw_bs].fill_(1)\n")
    found = check_files(tmp_path, {"runner.py": text}, ["runner.py"],
                        {"RESET": "self.seq_lens[raw_bs:self.slots].fill_(1)"}, profile="sglang")
    assert found == []


HELD = '''\
import torch


''' + BATCH + '''

class Runner:
    def __init__(self, max_bs, full):
        self._static = {"seq_lens": torch.zeros((max_bs,), dtype=torch.int64)} if full else None
        self._slots = max_bs
        self._full = full

    def replay(self, fb, raw_bs):
        if self._static is not None:
            self._static["seq_lens"][:raw_bs].copy_(fb.seq_lens)
            if self._full and raw_bs < self._slots:
                {RESET}
        if self._full:
            return ForwardBatch(seq_lens=self._static["seq_lens"][:self._slots])
        return None
'''


@pytest.mark.parametrize("reset,expected", [
    # no reset: rows [raw_bs:slots] of the entry are stale where the view is handed out
    ("pass", ["seq_lens"]),
    # the reset holds under `self._full` (the helper tests it again) and under
    # `self._static is not None`, which every read of a buffer held in `self._static` implies
    ('self._static["seq_lens"][raw_bs:self._slots].fill_(1)', []),
])
def test_a_reset_of_a_buffer_held_in_an_optional_dict_holds_where_it_is_read(tmp_path, reset, expected):
    found = check_files(tmp_path, {"runner.py": HELD}, ["runner.py"], {"RESET": reset}, profile="sglang")
    assert [f.field for f in found] == expected


# Found in review, each a minimal input reasoned in its comments: what the mechanisms above must
# not do.

LATER_PREFIX = '''\
import torch


''' + BATCH + '''

class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.zeros((max_bs,), dtype=torch.int64)
        self.full = True
        self.n = 4

    def replay(self, fb, raw_bs, bs):
        self.seq_lens[:raw_bs].copy_(fb.seq_lens)
        if self.full:
            self.seq_lens[:self.n].copy_(fb.more)
        if fb.c:
            self.seq_lens[raw_bs:bs].zero_()
        if self.full:
            return ForwardBatch(seq_lens=self.seq_lens[:bs])
        return None
'''


def test_a_prefix_written_under_a_test_covers_its_own_count_only(tmp_path):
    # where `full` and not `c`: rows [raw_bs:self.n] written, [self.n:bs] stale; the prefix kept
    # under `full` must not merge with the reset under `c` into a reset of [raw_bs:bs]
    assert _stale_fields(tmp_path, LATER_PREFIX) == ["seq_lens"]


OTHER_OBJECT = '''\
import torch


''' + BATCH + '''

class Helper:
    def __init__(self):
        self._static = None

    def pad(self, bufs, raw_bs, bs):
        if self._static is not None:
            bufs["seq_lens"][raw_bs:bs].fill_(1)


class Runner:
    def __init__(self, max_bs):
        self._static = {"seq_lens": torch.ones((max_bs,), dtype=torch.int64)}
        self.helper = Helper()

    def replay(self, fb, raw_bs, bs):
        self._static["seq_lens"][:raw_bs].copy_(fb.seq_lens)
        self.helper.pad(self._static, raw_bs, bs)
        return ForwardBatch(seq_lens=self._static["seq_lens"][:bs])
'''


def test_a_test_of_another_objects_dict_is_not_implied_by_the_read(tmp_path):
    # the reset holds where the *helper's* `_static` is not None (never): reading the runner's
    # `self._static[...]` implies nothing about it, so rows [raw_bs:bs] stay stale
    assert _stale_fields(tmp_path, OTHER_OBJECT) == ["seq_lens"]


VIEWS_BY_NAME = '''\
import torch


''' + BATCH + '''

class Runner:
    def __init__(self, max_bs):
        self.seq_lens = torch.ones((max_bs,), dtype=torch.int64)
        self.req_pool_indices = torch.zeros((max_bs,), dtype=torch.int64)

    def replay(self, fb, raw_bs, bs, name):
        views = {"seq_lens": self.seq_lens[:bs], "req_pool_indices": self.req_pool_indices[:bs]}
        return ForwardBatch(seq_lens=views[name])
'''


def test_a_dict_of_views_indexed_by_an_unknown_name_gives_every_view(tmp_path):
    # `views[name]` may be either view, each with rows [raw_bs:bs] stale: reported (an unknown
    # name must not make the value unknown, as a first version of the keyed dicts did)
    assert _stale_fields(tmp_path, VIEWS_BY_NAME) == ["seq_lens"]


LOOKUP_AND_RESET = '''\
import bisect

import torch


''' + BATCH + '''

class Runner:
    def __init__(self, max_bs):
        self.capture_bs = [1, 2, 4, 8]
        self.seq_lens = torch.ones((max_bs,), dtype=torch.int64)
        self._slots = max_bs

    def replay(self, fb):
        raw_bs = fb.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        self.seq_lens[:raw_bs].copy_(fb.seq_lens)
        r = self._slots
        self.seq_lens[bs:r].fill_(1)
        return ForwardBatch(seq_lens=self.seq_lens[:bs])
'''


def test_a_padded_name_stays_padded_where_the_function_names_the_real_count(tmp_path):
    # `bs` is the lookup's padded count and `raw_bs` is in scope: the reset from `bs` clears rows
    # past the padded size and says nothing about [raw_bs:bs], which stay stale
    assert _stale_fields(tmp_path, LOOKUP_AND_RESET) == ["seq_lens"]


DUMMY_UNDER_FLAG = '''\
import torch

from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
    def __init__(self, max_num_tokens):
        self.slot_mapping = torch.zeros(max_num_tokens, dtype=torch.int64)
        self.use_dummy_slots = False

    def _dummy_run(self, num_tokens):
        if self.use_dummy_slots:
            self.slot_mapping[:num_tokens].fill_(-1)
        return CommonAttentionMetadata(slot_mapping=self.slot_mapping[:num_tokens])
'''


def test_a_dummy_run_that_writes_only_under_a_flag_is_still_reported(tmp_path):
    # where the flag is off, rows [0:num_tokens] hold the last real step's slots: the prefix the
    # flag's branch wrote is not kept at the join inside a dummy run ("written by no step")
    found = check_files(tmp_path, {"runner.py": DUMMY_UNDER_FLAG}, ["runner.py"], profile="vllm")
    assert [f.field for f in found if f.code == "PAD001"] == ["slot_mapping"]
