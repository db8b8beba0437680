"""Dummy-run views bounded in their columns (``buf[:, :n]``).

vLLM Model Runner V2 keeps one slot mapping per KV-cache group in a 2-D buffer
(``[num_kv_cache_groups, max_num_tokens]``) and hands dummy runs its first columns:
``get_dummy_slot_mappings(n)`` fills the whole buffer with ``PAD_SLOT_ID`` and returns
``self.slot_mappings[:, :n]``; the attention metadata of each group takes one row of that view
(``slot_mappings[gid]``).  Without the fill the dummy forward writes KV through the slots the
last real step left there, which live requests own.  Written from scratch in that shape.

Two engine capabilities: a function whose only count slice bounds the columns is one the
analysis interprets (the call graph's text test admits ``x[:, :n]``), and a row of a view bounded
in its columns is a view of the same columns (``view[gid]``), judged as the dummy run's.
"""

from __future__ import annotations

from .project_files import check_files

TABLES = '''\
import torch

PAD_SLOT_ID = -1


class BlockTables:
    def __init__(self, groups: int, max_tokens: int) -> None:
        self.slot_mappings = torch.zeros(groups, max_tokens, dtype=torch.int64)

    def get_dummy_slot_mappings(self, num_tokens: int) -> torch.Tensor:
        {FILL}
        return self.slot_mappings[:, :num_tokens]
'''

RUNNER = '''\
from vllm.v1.attention.backend import CommonAttentionMetadata

from pkg.tables import BlockTables


class ModelRunner:
    def __init__(self) -> None:
        self.block_tables = BlockTables(2, 1024)

    def _dummy_run(self, num_tokens: int):
        slot_mappings = self.block_tables.get_dummy_slot_mappings(num_tokens)
        out = []
        for gid in range(2):
            out.append(CommonAttentionMetadata(slot_mapping=slot_mappings[gid], num_actual_tokens=num_tokens))
        return out
'''


def _found(tmp_path, fill: str, code: str = "PAD001"):
    got = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/tables.py": TABLES, "pkg/runner.py": RUNNER},
                      ["pkg/runner.py", "pkg/tables.py"], {"FILL": fill})
    return [f for f in got if f.code == code]


def test_a_row_of_an_unfilled_column_view_reaches_the_slot_mapping(tmp_path):
    # nothing in the dummy run writes the buffer: columns [0:num_tokens] of every group's row hold
    # the last real step's slots when `slot_mappings[gid]` becomes the metadata's slot_mapping
    (f,) = _found(tmp_path, "pass")
    assert (f.path.rsplit("/", 1)[-1], f.line, f.field) == ("runner.py", 14, "slot_mapping")
    assert "written by no step of the dummy run `get_dummy_slot_mappings`" in f.message
    assert "reset them to -1" in f.message
    # at the first dummy run they hold the construction value 0, a valid slot (PAD005)
    assert [g.field for g in _found(tmp_path, "pass", "PAD005")] == ["slot_mapping"]


def test_the_fill_of_the_whole_buffer_writes_the_view(tmp_path):
    # MRV2 0.33.0: `self.slot_mappings.fill_(PAD_SLOT_ID)` before the view is taken
    assert _found(tmp_path, "self.slot_mappings.fill_(PAD_SLOT_ID)") == []
    assert _found(tmp_path, "self.slot_mappings.fill_(PAD_SLOT_ID)", "PAD005") == []


def test_a_fill_of_the_viewed_columns_writes_the_view(tmp_path):
    assert _found(tmp_path, "self.slot_mappings[:, :num_tokens].fill_(PAD_SLOT_ID)") == []


PROVIDERS = '''\
import torch

PAD_SLOT_ID = -1


class BlockTables:
    def __init__(self, groups: int, max_tokens: int) -> None:
        self.slot_mappings = torch.zeros(groups, max_tokens, dtype=torch.int64)

    def get_dummy_slot_mappings(self, num_tokens: int) -> torch.Tensor:
        self.slot_mappings.fill_(PAD_SLOT_ID)
        return self.slot_mappings[:, :num_tokens]


class PCPManager:
    def __init__(self, groups: int, max_tokens: int) -> None:
        self.gathered = torch.zeros(groups, max_tokens, dtype=torch.int64)

    def get_dummy_slot_mappings(self, num_tokens: int) -> torch.Tensor:
        {FILL}
        return self.gathered[:, :num_tokens]
'''

EITHER = '''\
from vllm.v1.attention.backend import CommonAttentionMetadata

from pkg.tables import BlockTables, PCPManager


class ModelRunner:
    def __init__(self, pcp: bool) -> None:
        self.block_tables = BlockTables(2, 1024)
        self.pcp_manager = PCPManager(2, 1024) if pcp else None

    def _dummy_run(self, num_tokens: int):
        provider = self.pcp_manager or self.block_tables
        slot_mappings = provider.get_dummy_slot_mappings(num_tokens)
        return [CommonAttentionMetadata(slot_mapping=slot_mappings[gid], num_actual_tokens=num_tokens)
                for gid in range(2)]
'''


def test_either_provider_writes_its_own_buffer_whole(tmp_path):
    # vLLM MRV2 `self.pcp_manager or self.block_tables`: each object's method fills its own buffer
    # before taking the view; after the two paths join, each buffer is written on one path only,
    # but each view was taken after its own buffer's fill: no row is one the run did not write
    files = {"pkg/__init__.py": "", "pkg/tables.py": PROVIDERS, "pkg/runner.py": EITHER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"FILL": "self.gathered.fill_(PAD_SLOT_ID)"})
    assert [f for f in got if f.code in ("PAD001", "PAD005")] == []
    # without the PCP manager's fill its view is the dummy run's unwritten rows, and only its:
    # the first-run finding names the PCP manager's buffer (`self.gathered`, line 17), not the
    # block tables' (line 8)
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"FILL": "pass"})
    assert [f.field for f in got if f.code == "PAD001"] == ["slot_mapping"]
    (first,) = [f for f in got if f.code == "PAD005"]
    assert [(t.path.rsplit("/", 1)[-1], t.line) for t in first.trace if "constructed" in t.note] == [("tables.py", 17)]
