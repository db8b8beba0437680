"""Counts bounded by ``max``/``min``: a prefix written up to ``max(n, m)`` covers a view ``[:n]``;
one written up to ``min(n, m)`` does not.

vLLM 0.34.0's Model Runner V2 (``BlockTables.get_dummy_block_tables``) zeroes
``block_table[:max(num_reqs, self._num_dirty_rows)]`` (the rows this dummy run hands out and the
rows an earlier one dirtied) and returns ``block_table[:num_reqs]``: every row handed out was
zeroed.  padlint named the local ``num_rows`` a count of its own, unrelated to ``num_reqs``, and
reported rows ``[num_rows:num_reqs]`` as stale (a false alarm on 103 paths).  A count computed
by the builtins ``max``/``min`` is now named by its arguments (``max(num_reqs,
self._num_dirty_rows)``) and that name carries the relation.

The fixtures are written from scratch.  Expected findings follow from which rows the step wrote:
the persistent buffer's rows ``[:READ]`` reach ``CommonAttentionMetadata``; the step wrote
``[:W]``; rows ``[W:READ]`` are stale unless ``W >= READ`` for every value of the counts.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from padlint.analysis.values import _extremum_args, at_least, extremum

from .project_files import check_files, check_text

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.block_table = torch.zeros(max_num_reqs, 16, dtype=torch.int32)
        self._dirty = 0

    def execute_model(self, scheduler_output):
        rows = scheduler_output.rows
        BODY
        return CommonAttentionMetadata(block_table_tensor=self.block_table[:READ], num_reqs=rows)
'''
STALE = [("PAD001", "sink", "block_table_tensor")]


def _findings(tmp_path, body: str, read: str) -> list[tuple[str, str, str]]:
    text = RUNNER.replace("BODY", body).replace("READ", read)
    sink = next(i for i, ln in enumerate(text.splitlines(), 1) if "CommonAttentionMetadata(" in ln)
    out = check_text(tmp_path, text)
    return [(f.code, "sink" if f.line == sink else str(f.line), f.field) for f in out]


@pytest.mark.parametrize("body, read", [
    # max(rows, d) >= rows: every row handed out was written (inline, through a local, either order)
    ("self.block_table[:max(rows, self._dirty)].zero_()", "rows"),
    ("n = max(rows, self._dirty)\n        self.block_table[:n].zero_()", "rows"),
    ("n = max(self._dirty, rows)\n        self.block_table[:n].zero_()", "rows"),
    # max(rows + 1, d) >= rows + 1 >= rows
    ("self.block_table[:max(rows + 1, self._dirty)].zero_()", "rows + 1"),
    # rows >= min(rows, 3): a view no wider than what was written
    ("self.block_table[:rows].zero_()", "min(rows, 3)"),
    # max(rows, d) >= max(d, rows): one count, whatever the order of the arguments
    ("self.block_table[:max(rows, self._dirty)].zero_()", "max(self._dirty, rows)"),
])
def test_a_write_at_least_as_wide_as_the_view_leaves_no_stale_rows(tmp_path, body, read):
    assert _findings(tmp_path, body, read) == []


@pytest.mark.parametrize("body, read", [
    # min(rows, d) may be below rows: rows [min(rows, d):rows] were not written
    ("self.block_table[:min(rows, self._dirty)].zero_()", "rows"),
    ("n = min(rows, self._dirty)\n        self.block_table[:n].zero_()", "rows"),
    # max(rows, d) may be below rows + 1 (when d <= rows)
    ("self.block_table[:max(rows, self._dirty)].zero_()", "rows + 1"),
    # max(rows, d) may be below max(rows, 3) (when d < 3 and rows < 3)
    ("self.block_table[:max(rows, self._dirty)].zero_()", "max(rows, 3)"),
])
def test_a_write_that_may_be_narrower_than_the_view_leaves_stale_rows(tmp_path, body, read):
    assert _findings(tmp_path, body, read) == STALE


def test_the_message_names_the_rows_by_the_bound_as_written(tmp_path):
    out = check_text(tmp_path, RUNNER.replace("BODY", "self.block_table[:min(rows, self._dirty)].zero_()")
                     .replace("READ", "rows"))
    assert len(out) == 1
    assert "rows [min(rows, self._dirty):rows] may be stale" in out[0].message


TABLES = '''\
import torch


class BlockTables:
    def __init__(self, max_num_reqs: int) -> None:
        self.input_block_tables = [torch.zeros(max_num_reqs, 16, dtype=torch.int32) for _ in range(2)]
        self._num_dirty_rows = 0

    def get_dummy_block_tables(self, num_reqs: int):
        num_rows = {ROWS}
        for block_table in self.input_block_tables:
            block_table[:num_rows].zero_()
        self._num_dirty_rows = num_reqs
        return tuple(block_table[:num_reqs] for block_table in self.input_block_tables)
'''
DUMMY_RUNNER = '''\
import dataclasses
from dataclasses import dataclass

from vllm.v1.attention.backend import CommonAttentionMetadata

from pkg.tables import BlockTables


@dataclass
class BatchDesc:
    num_reqs: int
    num_tokens: int


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.block_tables = BlockTables(max_num_reqs)

    def _dummy_run(self, desc: BatchDesc):
        desc = dataclasses.replace(desc, num_tokens=desc.num_tokens)
        tables = self.block_tables.get_dummy_block_tables(desc.num_reqs)
        return CommonAttentionMetadata(block_table_tensor=tables[0], num_reqs=desc.num_reqs)
'''


def _dummy(tmp_path, rows: str):
    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES, "pkg/runner.py": DUMMY_RUNNER}
    return check_files(tmp_path, files, ["pkg/runner.py", "pkg/tables.py"], {"ROWS": rows})


def test_dummy_tables_zeroed_up_to_the_maximum_of_the_rows_handed_out_and_the_dirty_rows(tmp_path):
    # The MRV2 shape: the dummy run's count is the field of a `dataclasses.replace`d descriptor,
    # the zeroing loop and the returned views are in another class and module; every row handed
    # out ([:num_reqs]) is below max(num_reqs, dirty): no finding
    assert _dummy(tmp_path, "max(num_reqs, self._num_dirty_rows)") == []


def test_dummy_tables_zeroed_up_to_the_minimum_are_reported_in_the_callers_names(tmp_path):
    # min(num_reqs, dirty) may be below num_reqs: rows [min(...):num_reqs] of the handed-out view
    # hold what an earlier step left.  The count is named after the object `replace` copied
    # (`desc.num_reqs`), not after a placeholder of the analysis
    got = _dummy(tmp_path, "min(num_reqs, self._num_dirty_rows)")
    assert [(f.code, f.line, f.field) for f in got] == [("PAD001", 22, "block_table_tensor")]
    assert "rows [min(desc.num_reqs, self._num_dirty_rows):desc.num_reqs] may be stale" in got[0].message
    assert "__old__" not in got[0].message and "replaced" not in got[0].message


# --- the relation itself: sound for every value of the counts ---------------------------------

NAMES = ("a", "b", "c")
_terms = st.deferred(lambda: st.one_of(
    st.tuples(st.sampled_from(NAMES), st.integers(-2, 2)),
    st.tuples(st.sampled_from(("max", "min")), st.lists(_terms, min_size=2, max_size=3),
              st.integers(-2, 2)).map(lambda t: (extremum(t[0], t[1]), t[2])).filter(lambda t: t[0] is not None),
))


def _value(name: str, off: int, env: dict[str, int]) -> int:
    if name in env:
        return env[name] + off
    # a generated maximum or minimum, evaluated through its arguments as its name gives them
    fn = name[:3]
    args = _extremum_args(name)
    assert args is not None and args[0] == fn, name
    vals = [_value(a, o, env) for a, o in args[1]]
    return (max if fn == "max" else min)(vals) + off


@given(_terms, _terms)
def test_at_least_holds_for_every_value_of_the_counts(k, c):
    if not at_least(k[0], k[1], c[0], c[1]):
        return
    for vals in itertools.product(range(-3, 4), repeat=len(NAMES)):
        env = dict(zip(NAMES, vals))
        assert _value(*k, env) >= _value(*c, env), (k, c, env)


@pytest.mark.parametrize("k, c", [
    ((extremum("max", [("a", 0), ("b", 0)]), 0), ("a", 0)),
    ((extremum("max", [("a", 1), ("b", 0)]), 0), ("a", 1)),
    (("a", 0), (extremum("min", [("a", 0), ("b", 0)]), 0)),
    ((extremum("max", [("a", 0), ("b", 0)]), 0), (extremum("max", [("b", 0), ("a", 0)]), 0)),
    ((extremum("min", [("a", 2), ("a", 1)]), 0), ("a", 1)),
])
def test_at_least_knows_the_relations_of_maxima_and_minima(k, c):
    assert at_least(k[0], k[1], c[0], c[1])


@pytest.mark.parametrize("k, c", [
    ((extremum("min", [("a", 0), ("b", 0)]), 0), ("a", 0)),
    ((extremum("max", [("a", 0), ("b", 0)]), 0), ("a", 1)),
    ((extremum("max", [("a", 0), ("b", 0)]), 0), (extremum("max", [("a", 0), ("c", 0)]), 0)),
    (("a", 0), ("b", 0)),
])
def test_at_least_claims_nothing_the_counts_do_not_say(k, c):
    assert not at_least(k[0], k[1], c[0], c[1])


def test_a_count_the_profile_names_keeps_its_name_when_computed_from_a_bound(tmp_path):
    # vLLM's `_dummy_run`: `num_decode_tokens = min(max_num_reqs - 1, num_tokens // 2)`, then
    # `num_reqs = num_decode_tokens + 1`.  `num_reqs` is the profile's real count, paired with
    # `num_reqs_padded`: the reset `[num_reqs:num_reqs_padded]` covers the padded slice.  Named
    # `min(...)+1` instead, it would pair with nothing and the slice would be reported
    text = RUNNER.replace("rows = scheduler_output.rows", "num_reqs_padded = scheduler_output.padded") \
        .replace("BODY", "num_decode_tokens = min(self._dirty - 1, scheduler_output.n // 2)\n"
                         "        num_reqs = num_decode_tokens + 1\n"
                         "        self.block_table[:num_reqs] = 1\n"
                         "        self.block_table[num_reqs:num_reqs_padded] = 0") \
        .replace("READ", "num_reqs_padded").replace("num_reqs=rows", "num_reqs=num_reqs_padded")
    assert check_text(tmp_path, text) == []
    # the same without the reset: the padding rows [num_reqs:num_reqs_padded] are reported, by name
    out = check_text(tmp_path, text.replace("        self.block_table[num_reqs:num_reqs_padded] = 0\n", ""))
    assert [(f.code, f.field, f.real, f.padded) for f in out] == [
        ("PAD001", "block_table_tensor", "num_reqs", "num_reqs_padded")]


def test_a_maximum_kept_across_a_loop_is_one_count():
    # `m = max(m, x)` in a loop: the name of round k+1 is that of round k (flattened, deduplicated),
    # so the loop's fixpoint is reached and the name does not grow
    once = extremum("max", [("m", 0), ("x", 0)])
    assert extremum("max", [(once, 0), ("x", 0)]) == once
    assert extremum("max", [("x", 0), (once, 0), ("m", 0)]) == once
    # a minimum inside a maximum is an argument, not flattened
    mixed = extremum("max", [(extremum("min", [("a", 0), ("b", 0)]), 0), ("c", 0)])
    assert mixed == "max(c, min(a, b))"
    # too long a name is no count
    assert extremum("max", [("x" * 100, 0), ("y" * 100, 0)]) is None


@pytest.mark.parametrize("body, read", [
    # a term that is no count (source text) is one atom: `max(a, b) - len(xs)` is not a maximum of
    # `a` and `b - len(xs)`, so the write up to max(rows, it) says nothing of rows up to `a`
    ("a = scheduler_output.a\n        b = scheduler_output.b\n        k = scheduler_output.k\n"
     "        self.block_table[:k] = 1\n"
     "        self.block_table[:max(rows, max(a, b) - len(scheduler_output.xs))].zero_()", "a"),
    # nor is `a >> b+1` the term `a >> b` plus one
    ("a = scheduler_output.a\n        b = scheduler_output.b\n"
     "        self.block_table[:max(rows, a >> b+1)].zero_()", "max(rows, a >> b)"),
    # a local `max` is not the builtin
    ("k = scheduler_output.k\n        self.block_table[:k] = 1\n"
     "        max = min\n        self.block_table[:max(rows, self._dirty)].zero_()", "rows"),
    # a bound moved or replaced after it was taken is not that bound
    ("m = max(rows, self._dirty)\n        m -= 1\n        self.block_table[:m].zero_()", "rows"),
    ("m = max(rows, self._dirty)\n        m -= scheduler_output.k\n        self.block_table[:m].zero_()", "rows"),
    ("m = max(rows, self._dirty)\n        for x in scheduler_output.xs:\n            m = m - 1\n"
     "        self.block_table[:m].zero_()", "rows"),
    ("m = max(rows, self._dirty)\n        n = len(scheduler_output.xs) if scheduler_output.f else m\n"
     "        self.block_table[:n].zero_()", "rows"),
    ("m = max(rows, self._dirty)\n        if scheduler_output.f:\n            m = scheduler_output.k\n"
     "        self.block_table[:m].zero_()", "rows"),
])
def test_a_bound_claims_rows_only_where_it_holds(tmp_path, body, read):
    # each of these writes a prefix that may be narrower than the view: a finding (a review of the
    # first version found each silent)
    assert _findings(tmp_path, body, read) == STALE


def test_a_bound_moved_by_a_literal_keeps_its_relation(tmp_path):
    # max(rows, d) + 1 >= rows: covered
    assert _findings(tmp_path, "m = max(rows, self._dirty)\n        m += 1\n        self.block_table[:m].zero_()",
                     "rows") == []


REPLACED = '''\
import dataclasses
from dataclasses import dataclass

import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


@dataclass
class Batch:
    block_table: torch.Tensor
    num_reqs: int
    num_tokens: int


class ModelRunner:
    def __init__(self, batch: Batch) -> None:
        self._batch = batch

    def execute_model(self, so, desc: Batch):
        num_reqs = so.num_reqs
        num_reqs_padded = so.num_reqs_padded
        b = dataclasses.replace(desc, num_tokens=(desc := self._batch).num_tokens)
        return CommonAttentionMetadata(block_table_tensor=b.block_table[:num_reqs_padded], num_reqs=num_reqs)
'''


def test_replace_copies_the_fields_the_object_had_before_its_keywords_ran(tmp_path):
    # `b` copies the `desc` the caller passed (its `block_table` is the caller's tensor, nothing
    # persistent here); the walrus rebinds `desc` to `self._batch` only while the keywords run.
    # Reading the copied fields through `desc` after that took `self._batch.block_table`, a
    # persistent buffer, and reported its padded slice (a review found it)
    assert check_text(tmp_path, REPLACED) == []
    # the control: copying `self._batch` itself hands out its persistent buffer's padded slice
    out = check_text(tmp_path, REPLACED.replace("replace(desc, num_tokens=(desc := self._batch).num_tokens)",
                                                "replace(self._batch, num_tokens=desc.num_tokens)"))
    assert [(f.code, f.field) for f in out] == [("PAD001", "block_table_tensor")]


@pytest.mark.parametrize("body", [
    # a maximum kept across a loop: every round's bound is at least `rows` (their join is the
    # minimum of bounds that each cover `rows`)
    "m = max(rows, self._dirty)\n        for x in scheduler_output.xs:\n            m = max(m, x)\n"
    "        self.block_table[:m].zero_()",
    # two branches, each a bound of `rows`
    "if scheduler_output.f:\n            m = max(rows, self._dirty)\n        else:\n"
    "            m = max(rows, scheduler_output.k)\n        self.block_table[:m].zero_()",
    # a branch moves the bound up by a literal
    "m = max(rows, self._dirty)\n        if scheduler_output.f:\n            m += 1\n"
    "        self.block_table[:m].zero_()",
])
def test_bounds_joined_from_paths_that_each_cover_the_view_cover_it(tmp_path, body):
    assert _findings(tmp_path, body, "rows") == []


JOINED = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.block_table = torch.zeros(max_num_reqs, 16, dtype=torch.int32)
        self._dirty = 0
        self.scale = 1.5

    def _zero(self, n):
        self.block_table[:n].zero_()

    def _bound(self, n):
        return max(n, self._dirty)

    def execute_model(self, so):
        rows = so.rows
        num_reqs_padded = so.num_reqs_padded
        if so.f:
            n = num_reqs_padded
        else:
            n = max(rows, self._dirty)
        return CommonAttentionMetadata(block_table_tensor=self.block_table[:n], num_reqs=rows)
'''


def test_a_padded_count_joined_with_a_bound_is_the_padded_count(tmp_path):
    # `n` is the padded count on one path and a bound of the real count on the other: the padded
    # count wins the join (its padding rows must be judged), as for any two counts; the first
    # version of the bound join made it unknown and lost the finding (a review found it)
    out = check_text(tmp_path, JOINED)
    assert [(f.code, f.field, f.real, f.padded) for f in out] == [
        ("PAD001", "block_table_tensor", "num_reqs", "num_reqs_padded")]


def test_a_max_the_module_defines_is_not_the_builtin(tmp_path):
    text = "def max(a, b):\n    return a\n\n\n" + RUNNER.replace(
        "BODY", "k = scheduler_output.k\n        self.block_table[:k] = 1\n"
                "        self.block_table[:max(rows, self._dirty)].zero_()").replace("READ", "rows")
    assert [(f.code, f.field) for f in check_text(tmp_path, text)] == [("PAD001", "block_table_tensor")]


def test_a_literal_term_reads_as_written(tmp_path):
    out = check_text(tmp_path, RUNNER.replace("BODY", "self.block_table[:min(rows, 8)].zero_()").replace("READ", "rows"))
    assert len(out) == 1 and "rows [min(8, rows):rows] may be stale" in out[0].message
    out = check_text(tmp_path, RUNNER.replace("BODY", "self.block_table[:min(rows, len(scheduler_output.xs))].zero_()")
                     .replace("READ", "rows"))
    assert len(out) == 1 and "rows [min((len(scheduler_output.xs)), rows):rows]" in out[0].message
