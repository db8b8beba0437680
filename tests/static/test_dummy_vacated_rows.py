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


def _release(tmp_path, clear="pass", checked=("pkg/batch.py",), runner=RUNNER_BATCH, dummy="pass"):
    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES + MULTI_ADD, "pkg/runner.py": runner,
             "pkg/batch.py": BATCH}
    # the move is released here: only the removal is at stake
    return check_files(tmp_path, files, list(checked), {"RESET": "self.table[src].fill_(0)", "DUMMY": dummy,
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
    got = _release(tmp_path, dummy="self.input_batch.block_table[0].get(num_reqs_padded).fill_(0)")
    assert not [f for f in got if f.code == "PAD003"]


# -- what is not a removal, what hands the row on (a review's probes) ---------------------------

def _release_with(tmp_path, remove_body: str, extra: str = ""):
    """The B2 shape with ``remove_request``'s body replaced (``self`` methods in ``extra``)."""
    batch = BATCH.replace('''    def remove_request(self, req_index: int) -> None:
        self._req_ids[req_index] = None
        {CLEAR}
''', "    def remove_request(self, req_id) -> None:\n" + remove_body + extra)
    batch = batch.replace("self._req_ids = [None] * max_num_reqs",
                          "self._req_ids = [None] * max_num_reqs\n        self.req_id_to_index = {}\n"
                          "        self.in_progress = {}")
    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES + MULTI_ADD, "pkg/runner.py": RUNNER_BATCH,
             "pkg/batch.py": batch}
    got = check_files(tmp_path, files, ["pkg/batch.py"], {"RESET": "self.table[src].fill_(0)", "DUMMY": "pass"})
    return [f for f in got if f.code == "PAD003"]


def test_a_dict_keyed_by_request_id_is_no_row_table(tmp_path):
    # `del self.in_progress[req_id]` comes first but admission never writes `in_progress` by the
    # row it hands the block table: the removal is the `_req_ids` line, which is handled here
    body = ("        del self.in_progress[req_id]\n"
            "        req_index = self.req_id_to_index.pop(req_id)\n"
            "        self._req_ids[req_index] = None\n"
            "        self.block_table.clear_row(req_index)\n")
    assert _release_with(tmp_path, body) == []


def test_a_dict_entry_alone_is_no_removal(tmp_path):
    body = "        self.in_progress[req_id] = None\n"
    assert _release_with(tmp_path, body) == []


def test_the_row_handed_on_by_keyword_or_through_a_helper_or_an_alias(tmp_path):
    head = ("        req_index = self.req_id_to_index.pop(req_id)\n"
            "        self._req_ids[req_index] = None\n")
    assert _release_with(tmp_path, head + "        self.block_table.clear_row(row=req_index)\n") == []
    assert _release_with(tmp_path, head + "        self._clear(req_index)\n",
                         "\n    def _clear(self, i):\n        self.block_table.clear_row(i)\n") == []
    assert _release_with(tmp_path, head + "        bt = self.block_table\n        bt.clear_row(req_index)\n") == []


def test_no_fix_where_a_statement_cannot_follow(tmp_path):
    # the release in a one-line `if`: the finding stands, the fix is not offered
    body = ("        req_index = self.req_id_to_index.pop(req_id)\n"
            "        if req_index is not None: self._req_ids[req_index] = None\n"
            "        return req_index\n")
    (f,) = _release_with(tmp_path, body)
    assert f.fix is None and "add `" not in f.message


def test_a_move_whose_source_row_a_helper_resets(tmp_path):
    # `move_row` ends with `self.clear_src(src)`: a method of the class handed the source row may
    # reset it, so the dummy run's read is no proof of a stale row
    tables = TABLES.replace("        {RESET}\n", "        self.clear_src(src)\n\n"
                            "    def clear_src(self, row: int) -> None:\n        self.table[row].fill_(0)\n")
    files = {"pkg/__init__.py": "", "pkg/tables.py": tables, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/tables.py", "pkg/runner.py"], {"DUMMY": "pass"})
    assert not [f for f in got if f.code == "PAD003"]


def test_a_read_of_another_object_of_the_holder_class_is_not_evidence(tmp_path):
    # the dummy run writes the batch's block table and reads a second BlockTable of the runner's:
    # the removal's row is not read; the other object's rows are its own
    runner = RUNNER_BATCH.replace(
        "self.input_batch = InputBatch(max_num_reqs)",
        "self.input_batch = InputBatch(max_num_reqs)\n        self.cross = BlockTable(max_num_reqs, 16)").replace(
        "from pkg.batch import InputBatch", "from pkg.batch import InputBatch\nfrom pkg.tables import BlockTable").replace(
        "block_table_tensor=self.input_batch.block_table[0].get(num_reqs_padded),",
        "block_table_tensor=self.input_batch.block_table[0].get(num_reqs_padded),\n"
        "            slot_mapping=self.cross.get(num_reqs_padded),")
    got = _release(tmp_path, runner=runner, dummy="self.input_batch.block_table[0].get(num_reqs_padded).fill_(0)")
    assert not [f for f in got if f.code == "PAD003"]


def test_an_indexed_element_is_the_container_element_its_getitem_returns(tmp_path):
    # a reset through `self.block_table.block_tables[0]` and a read through `self.block_table[0]`
    # are of one location (`__getitem__` returns `self.block_tables[gid]`)
    tables = TABLES.replace("self.block_tables = [", "self.block_tables: list[BlockTable] = [")
    runner = RUNNER.replace("bt[num_reqs:num_reqs_padded].fill_(0)",
                            "self.block_table.block_tables[0].table[num_reqs:num_reqs_padded].fill_(0)")
    files = {"pkg/__init__.py": "", "pkg/tables.py": tables, "pkg/runner.py": runner}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"RESET": "pass", "DUMMY": "pass"})
    assert not [f for f in got if f.function == "ModelRunner.execute_model"]


def test_the_cli_on_the_tables_file_alone_and_its_selection(tmp_path, monkeypatch, capsys):
    # as pre-commit runs it: `padlint check pkg/tables.py`. The file has no sink and no padded
    # count, but it writes rows of its table (`add_row`, `move_row`), so, checked alone, it starts
    # an entry-point search from those writers: PAD001 reports the dummy run's stale rows that a
    # run over both files reports at the runner's sink (runner.py:20), here at the slice that
    # `get` takes (line 20), and PAD003 the vacated row; what PAD001 reports does not depend on
    # whether PAD003 is selected
    import json

    from padlint.cli import main

    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES, "pkg/runner.py": RUNNER}
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.replace("{RESET}", "pass").replace("{DUMMY}", "pass"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def run(*extra):
        assert main(["check", "pkg/tables.py", "--profile", "vllm", "--no-cache", "--format", "json",
                     "--exit-zero", *extra]) == 0
        return sorted((f["code"], f["line"]) for f in json.loads(capsys.readouterr().out)["findings"])

    assert run() == [("PAD001", 20), ("PAD003", 15)]
    assert run("--select", "PAD001") == [("PAD001", 20)]


def test_the_cache_depends_on_the_dummy_run_read(tmp_path, monkeypatch, capsys):
    # the runner is read as context only (the tables file alone is checked); an edit of the
    # runner that makes its dummy run write the rows must not be answered from the cached result
    # of the tables file: both findings that rest on the dummy run's read go
    import json

    from padlint.cli import main

    files = {"pkg/__init__.py": "", "pkg/tables.py": TABLES.replace("{RESET}", "pass"),
             "pkg/runner.py": RUNNER.replace("{DUMMY}", "pass")}
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def run():
        assert main(["check", "pkg/tables.py", "--profile", "vllm", "--cache-dir", str(tmp_path / "cache"),
                     "--format", "json", "--exit-zero"]) == 0
        return sorted(f["code"] for f in json.loads(capsys.readouterr().out)["findings"])

    assert run() == ["PAD001", "PAD003"]
    (tmp_path / "pkg/runner.py").write_text(
        RUNNER.replace("{DUMMY}", "self.block_table[0].get(num_reqs_padded).fill_(0)"), encoding="utf-8")
    assert run() == []
