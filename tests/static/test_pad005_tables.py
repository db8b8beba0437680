"""PAD005 through indices: an index field's padding rows index a row of its table.

The SGLang profile names `req_to_token` as the table of `req_pool_indices` (neutral 0): every
padding row of `req_pool_indices` selects row 0 of `req_to_token`, so that row must be
initialised.  Each test below is a pool module of a few lines; what makes row 0 written (or
not) is reasoned in the test.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from padlint.analysis.engine import Source, check_project
from padlint.profile import ProfileError, load_profile, profile_from_dict

_POOL = '''\
import torch


class ReqToTokenPool:
    def __init__(self, size, width):
        self.req_to_token = torch.{ALLOC}((size + 1, width), dtype=torch.int32)

    def write(self, indices, values):
        self.req_to_token[indices] = values
{MORE}'''


def _pad005(tmp_path: Path, alloc: str = "empty", more: str = "") -> list[tuple[int, str]]:
    p = tmp_path / "pool.py"
    p.write_text(_POOL.replace("{ALLOC}", alloc).replace("{MORE}", textwrap.indent(textwrap.dedent(more), "    ")),
                 encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("sglang"))
    return [(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs if f.code == "PAD005"]


def test_an_uninitialised_table_whose_pad_row_nothing_writes_is_reported(tmp_path):
    # `write` stores through computed indices: it does not prove row 0 written
    assert _pad005(tmp_path) == [(6, "req_pool_indices")]


@pytest.mark.parametrize("more", [
    "def clear(self):\n    self.req_to_token[0] = 0\n",          # row 0 itself
    "def clear(self):\n    self.req_to_token[0, :] = 0\n",       # row 0, every column
    "def clear(self):\n    self.req_to_token[:1] = 0\n",         # a slice holding row 0
    "def clear(self):\n    self.req_to_token.zero_()\n",         # every row
    "def clear(self):\n    self.req_to_token[0].fill_(0)\n",     # row 0 by a fill
])
def test_a_write_of_the_pad_row_initialises_it(tmp_path, more):
    assert _pad005(tmp_path, more=more) == []


@pytest.mark.parametrize("more", [
    "def clear(self):\n    self.req_to_token[1:] = 0\n",         # rows from 1: not row 0
    "def clear(self):\n    self.req_to_token[1] = 0\n",          # another row
])
def test_a_write_of_other_rows_does_not(tmp_path, more):
    assert _pad005(tmp_path, more=more) == [(6, "req_pool_indices")]


def test_an_initialised_allocation_is_quiet(tmp_path):
    assert _pad005(tmp_path, alloc="zeros") == []


def test_the_table_key_is_validated():
    sinks = {"sinks": {"constructors": ["Meta"]}}
    with pytest.raises(ProfileError, match="fields.idx.table: only an index field"):
        profile_from_dict({**sinks, "fields": {"idx": {"neutral": "0", "table": "t"}}}, "my.toml")
    with pytest.raises(ProfileError, match="fields.idx.table: expected the attribute name"):
        profile_from_dict({**sinks, "fields": {"idx": {"neutral": "0", "kind": "index", "table": "a.b"}}},
                          "my.toml")
    p = profile_from_dict({**sinks, "fields": {"idx": {"neutral": "0", "kind": "index", "table": "t"}}}, "my.toml")
    assert p.field_spec("idx").table == "t"


@pytest.mark.parametrize("more", [
    "def clear(self):\n    self.req_to_token[:, 0] = 0\n",       # a column, not row 0
    "def clear(self):\n    self.req_to_token[0, :4] = 0\n",      # part of row 0
    "def clear(self):\n    self.req_to_token[0] += 1\n",         # reads the uninitialised row
])
def test_partial_or_reading_writes_do_not_initialise_the_row(tmp_path, more):
    assert _pad005(tmp_path, more=more) == [(6, "req_pool_indices")]


def test_the_rule_wants_files_allocating_a_named_table():
    from padlint.rules.pad005 import InitialValue
    rule, sglang = InitialValue(), load_profile("sglang")
    assert rule.wants("self.req_to_token = torch.empty(n)", sglang)
    assert not rule.wants("self.other = torch.empty(n)", sglang)        # not a table the profile names
    assert not rule.wants("self.req_to_token = torch.empty(n)", load_profile("vllm"))  # names none
