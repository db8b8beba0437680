"""Rows a request left, read by a dummy run before any admission (PAD003), and the two engine
capabilities it rests on:

- a dummy run's views are judged in the methods of *other* classes it calls too (a block table
  object's ``get(n)`` returning ``self.table[:n]``), not only in its own class's;
- indexing an object whose class defines ``__getitem__(...) -> T`` gives a ``T`` (vLLM's
  ``MultiGroupBlockTable[gid]`` is a ``BlockTable``), so methods called on the element resolve.

The shape is vLLM 0.26.0 -> 0.27.0 (docs/historical-bugs.md, B5), written from scratch: a
``move_row`` that copies a row's block ids into the hole a finished request left and does not
clear the source row; admission (``add_row``) overwrites a row before a new request uses it, so
PAD003 used to accept it; but a dummy run (the profile's ``_dummy_run``, a DP rank with nothing
scheduled, a capture) hands rows ``[0:num_reqs_padded]`` of the block table to the attention
metadata without writing them, and the vacated rows are among them: the dummy forward writes KV
or Mamba state through block ids a finished request owned.
"""

from __future__ import annotations

from .project_files import check_files

TABLES = '''\
import torch


class BlockTable:
    def __init__(self, max_num_reqs: int, max_blocks: int) -> None:
        self.table = torch.zeros(max_num_reqs, max_blocks, dtype=torch.int32)
        self.num_blocks = [0] * max_num_reqs

    def add_row(self, block_ids: list, row: int) -> None:
        self.table[row, : len(block_ids)] = torch.tensor(block_ids)
        self.num_blocks[row] = len(block_ids)

    def move_row(self, src: int, tgt: int) -> None:
        n = self.num_blocks[src]
        self.table[tgt, :n] = self.table[src, :n]
        self.num_blocks[tgt] = n
        {RESET}

    def get(self, num_reqs: int) -> torch.Tensor:
        return self.table[:num_reqs]


class MultiGroupBlockTable:
    def __init__(self, groups: int, max_num_reqs: int, max_blocks: int) -> None:
        self.block_tables = [BlockTable(max_num_reqs, max_blocks) for _ in range(groups)]

    def __getitem__(self, gid: int) -> "BlockTable":
        return self.block_tables[gid]
'''

RUNNER = '''\
from vllm.v1.attention.backend import CommonAttentionMetadata

from pkg.tables import MultiGroupBlockTable


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.block_table = MultiGroupBlockTable(1, max_num_reqs, 16)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        bt = self.block_table[0].get(num_reqs_padded)
        bt[num_reqs:num_reqs_padded].fill_(0)
        return CommonAttentionMetadata(block_table_tensor=bt, num_reqs=num_reqs)

    def _dummy_run(self, num_reqs: int):
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        {DUMMY}
        return CommonAttentionMetadata(block_table_tensor=self.block_table[0].get(num_reqs_padded),
                                       num_reqs=num_reqs_padded)
'''


def _found(tmp_path, reset="pass", dummy="pass", checked=("pkg/tables.py", "pkg/runner.py")):
    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES, "pkg/runner.py": RUNNER}
    return check_files(tmp_path, files, list(checked), {"RESET": reset, "DUMMY": dummy})


def test_a_dummy_run_reads_the_row_a_move_vacated(tmp_path):
    # move_row copies row src into tgt and leaves src; add_row would overwrite it at the next
    # admission, but _dummy_run hands rows [0:num_reqs_padded] to block_table_tensor first
    (f,) = [f for f in _found(tmp_path) if f.code == "PAD003"]
    assert f.path.endswith("tables.py") and f.line == 15 and f.field == "table"
    assert "`_dummy_run` hands rows [0:num_reqs_padded]" in f.message
    assert "`block_table_tensor`" in f.message
    assert f.fix is not None and f.fix.text == "self.table[src].fill_(0)" and f.fix.line == 16
    # the trace names the vacating statement and the dummy run's read, each in its own file
    assert [t.path.rsplit("/", 1)[-1] for t in f.trace] == ["tables.py", "tables.py"]
    assert f.trace[1].line == 20 and "`_dummy_run`" in f.trace[1].note


def test_pad001_judges_the_view_as_a_padded_slice(tmp_path):
    # at the sink, PAD001 judges a dummy run's rows [0:n] only in views the run's own class takes
    # (a builder of another class writes its own buffers in ways the dummy reading would misjudge);
    # the view BlockTable.get takes is judged as a padded slice in the dummy run's counts
    hits = [f for f in _found(tmp_path) if f.code == "PAD001" and f.function == "ModelRunner._dummy_run"]
    assert [f.field for f in hits] == ["block_table_tensor"]
    assert "rows [num_reqs:num_reqs_padded] may be stale" in hits[0].message
    assert not any("no write of this run reached its rows" in t.note for t in hits[0].trace)


def test_a_reset_of_the_vacated_row_fixes_it(tmp_path):
    # vLLM 0.27.0: the source row is cleared after the move
    got = _found(tmp_path, reset="self.table[src, :n] = 0")
    assert not [f for f in got if f.code == "PAD003"]


def test_no_dummy_read_no_finding(tmp_path):
    # the dummy run writes the rows it hands on: a vacated row is not read before admission
    got = _found(tmp_path, dummy="self.block_table[0].get(num_reqs_padded).fill_(0)")
    assert not [f for f in got if f.code == "PAD003"]
    assert not [f for f in got if f.code == "PAD001" and f.function == "ModelRunner._dummy_run"]


def test_the_tables_file_checked_alone(tmp_path):
    # pre-commit on the changed file only: the call graph finds the runner that calls `get` on
    # `self.block_table[0]` (a `MultiGroupBlockTable`, whose `__getitem__` gives a `BlockTable`),
    # so the dummy run is interpreted and its read known, as in a run over both files
    got = _found(tmp_path, checked=("pkg/tables.py",))
    assert [(f.code, f.line) for f in got if f.code == "PAD003"] == [("PAD003", 15)]


def test_an_element_of_a_getitem_class_resolves_its_methods(tmp_path):
    # without `__getitem__ -> "BlockTable"` the element's class is unknown and `get` is opaque:
    # no view of the table reaches the sink at all
    plain = TABLES.replace('def __getitem__(self, gid: int) -> "BlockTable":', "def __getitem__(self, gid):")
    files = {"pkg/__init__.py": "", "pkg/tables.py": plain, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/tables.py", "pkg/runner.py"], {"RESET": "pass", "DUMMY": "pass"})
    assert not [f for f in got if f.field in ("table", "block_table_tensor")]


# -- a request removed from its row (vLLM 0.18.1 -> 0.19.0, docs/historical-bugs.md, B2) --------
# `InputBatch.remove_request` frees the row (`self._req_ids[req_index] = None`) but the block
# table object the batch hands each admitted request's row to (`self.block_table.add_row(ids,
# req_index)`) keeps the old block ids there; 0.19.0 adds `self.block_table.clear_row(req_index)`.

BATCH = '''\
import torch

from pkg.tables import MultiGroupBlockTable


class InputBatch:
    def __init__(self, max_num_reqs: int) -> None:
        self._req_ids = [None] * max_num_reqs
        self.temperature = torch.zeros(max_num_reqs)
        self.block_table = MultiGroupBlockTable(1, max_num_reqs, 16)

    def add_request(self, req, req_index: int) -> None:
        self._req_ids[req_index] = req.req_id
        self.temperature[req_index] = req.temperature
        self.block_table.add_row(req.block_ids, req_index)

    def remove_request(self, req_index: int) -> None:
        self._req_ids[req_index] = None
        {CLEAR}
'''

MULTI_ADD = '''
    def add_row(self, block_ids, row: int) -> None:
        for bt in self.block_tables:
            bt.add_row(block_ids, row)

    def clear_row(self, row: int) -> None:
        for bt in self.block_tables:
            bt.table[row].fill_(0)
'''

RUNNER_BATCH = RUNNER.replace("from pkg.tables import MultiGroupBlockTable", "from pkg.batch import InputBatch").replace(
    "self.block_table = MultiGroupBlockTable(1, max_num_reqs, 16)", "self.input_batch = InputBatch(max_num_reqs)").replace(
    "self.block_table[0]", "self.input_batch.block_table[0]")


def _release(tmp_path, clear="pass", checked=("pkg/batch.py",)):
    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES + MULTI_ADD, "pkg/runner.py": RUNNER_BATCH,
             "pkg/batch.py": BATCH}
    # the move is released here: only the removal is at stake
    return check_files(tmp_path, files, list(checked), {"RESET": "self.table[src].fill_(0)", "DUMMY": "pass",
                                                         "CLEAR": clear})


def test_a_removed_request_leaves_its_block_table_row(tmp_path):
    # the batch file checked alone (pre-commit): the dummy run that reads the table is found by
    # its name in the project (the profile's [dummy_runs]) and interpreted for its reads
    (f,) = [f for f in _release(tmp_path) if f.code == "PAD003"]
    assert (f.line, f.function, f.field, f.buffer) == (18, "InputBatch.remove_request", "table", "self.block_table")
    assert "removes the request of row `req_index`" in f.message
    assert "`_dummy_run` hands rows [0:num_reqs_padded] of `table`" in f.message
    # the holder's class has a row reset: the fix calls it after the release, unsafe
    assert f.fix is not None and f.fix.text == "self.block_table.clear_row(req_index)" and not f.fix.safe
    assert f.fix.line == 19


def test_handing_the_row_to_the_block_table_fixes_it(tmp_path):
    got = _release(tmp_path, clear="self.block_table.clear_row(req_index)")
    assert not [f for f in got if f.code == "PAD003"]


def test_a_per_request_buffer_of_the_batch_itself_is_not_this_finding(tmp_path):
    # `temperature` is written at every admission and read by no dummy run: no finding for it
    got = _release(tmp_path)
    assert {f.field for f in got if f.code == "PAD003"} == {"table"}


def test_no_dummy_run_reads_the_table_no_finding(tmp_path):
    # the dummy run writes the rows it hands on (a fill of the view): the vacated row is not read
    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES + MULTI_ADD, "pkg/runner.py": RUNNER_BATCH,
             "pkg/batch.py": BATCH}
    got = check_files(tmp_path, files, ["pkg/batch.py"], {
        "RESET": "self.table[src].fill_(0)", "CLEAR": "pass",
        "DUMMY": "self.input_batch.block_table[0].get(num_reqs_padded).fill_(0)"})
    assert not [f for f in got if f.code == "PAD003"]
