"""Graph replays indexed by a size read off a field (``self.graphs[self.bs]``) or by a key made
from it (``self.graphs[self._make_graph_key(self.bs, i)]``): the rows are named by the field,
never by the key; where a prepare stored the size and its real partner (``self.raw_bs``) under a
test only, the replay is judged on the paths the test holds (and nowhere else: a path that
stored nothing replays another call's size).  Each package is written from scratch and checked
as a user would (the CLI, ``--profile sglang``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from .test_project_fixtures import _env

RUNNER = """\
import torch


def make_key(bs, stream_idx=None):
    return bs if stream_idx is None else f"{stream_idx}_{bs}"


class ForwardBatch:
    def __init__(self, batch_size, req_pool_indices):
        self.batch_size = batch_size
        self.req_pool_indices = req_pool_indices


class Runner:
    def __init__(self, model, capture_bs):
        self.model = model
        self.capture_bs = capture_bs
        self.req_pool_indices = torch.zeros((capture_bs[-1],), dtype=torch.int64)
        self.graphs = {}

    def capture(self, stream_idx=None):
        for bs in self.capture_bs:
            fb = ForwardBatch(batch_size=bs, req_pool_indices=self.req_pool_indices[:bs])
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.model.forward(fb)
            self.graphs[KEY_AT_CAPTURE] = graph

    def prepare(self, fb):
        raw_bs = fb.batch_size
        bs = min(b for b in self.capture_bs if b >= raw_bs)
        RESET
        self.req_pool_indices[:raw_bs].copy_(fb.req_pool_indices)
        self.raw_bs = raw_bs
        self.bs = bs

    def replay(self, fb, stream_idx=None, skip=False):
        PREPARE
        REPLAY
"""


def _check(tmp_path: Path, key_at_capture: str, replay: str, reset: str = "pass",
           prepare: str = "self.prepare(fb)") -> list[dict]:
    (tmp_path / "pkg").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    src = RUNNER.replace("KEY_AT_CAPTURE", key_at_capture).replace("REPLAY", replay).replace("RESET", reset) \
        .replace("PREPARE", prepare)
    (tmp_path / "pkg" / "runner.py").write_text(textwrap.dedent(src))
    proc = subprocess.run([sys.executable, "-m", "padlint", "check", ".", "--profile", "sglang", "--format",
                           "json", "--no-cache"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["errors"] == []
    return [f for f in doc["findings"] if f["field"] == "req_pool_indices"]


def test_a_graph_indexed_by_a_field_reads_its_padding_rows(tmp_path: Path) -> None:
    # `prepare` stores `self.bs` and `self.raw_bs` and resets nothing: rows [raw_bs:bs] of the
    # captured `req_pool_indices[:bs]` hold an earlier, larger replay's request rows
    got = _check(tmp_path, "bs", "self.graphs[self.bs].replay()")
    assert [(f["line"], f["padded"]) for f in got] == [(39, "bs")], got


def test_a_graph_key_made_from_a_field_is_no_row_count(tmp_path: Path) -> None:
    # the same replay through a key made from the size: reported once, the rows named by the
    # field (`self.bs`), the key (`graph_key`, possibly a string) named nowhere
    got = _check(tmp_path, "make_key(bs, stream_idx)",
                 "graph_key = make_key(self.bs, stream_idx)\n        self.graphs[graph_key].replay()")
    assert [f["line"] for f in got] == [40], got
    assert "graph_key" not in got[0]["message"] and "graph_key" not in json.dumps(got[0].get("fix")), got[0]
    assert "self.bs" in got[0]["message"]


def test_a_reset_in_the_prepare_covers_the_keyed_replay(tmp_path: Path) -> None:
    got = _check(tmp_path, "make_key(bs, stream_idx)",
                 "graph_key = make_key(self.bs, stream_idx)\n        self.graphs[graph_key].replay()",
                 reset="if bs != raw_bs:\n            self.req_pool_indices.zero_()")
    assert got == []


KEYED = "graph_key = make_key(self.bs, stream_idx)\n        self.graphs[graph_key].replay()"
RESET = "if bs != raw_bs:\n            self.req_pool_indices.zero_()"
UNDER_A_TEST = "if not skip:\n            self.prepare(fb)"


def test_a_size_stored_under_a_test_is_judged_where_the_test_holds(tmp_path: Path) -> None:
    # `prepare` (storing `self.bs` and `self.raw_bs`) runs only `if not skip:`; on the other path
    # both are another call's.  Judged where `not skip` holds: no reset there, one finding (the
    # key's line + 1 = the replay, line 41), rows named by the field
    got = _check(tmp_path, "make_key(bs, stream_idx)", KEYED, prepare=UNDER_A_TEST)
    assert [(f["line"], f["real"], f["padded"]) for f in got] == [(41, "raw_bs", "bs")], got
    assert "graph_key" not in got[0]["message"]


def test_a_reset_made_under_the_same_test_covers_the_replay(tmp_path: Path) -> None:
    assert _check(tmp_path, "make_key(bs, stream_idx)", KEYED, reset=RESET, prepare=UNDER_A_TEST) == []


def test_a_size_stored_under_two_tests_is_not_judged_against_the_other_path(tmp_path: Path) -> None:
    # no one record of the stored size: as before, the replay's size has no real count on the
    # path that stored nothing, and the prepare's reset is not second-guessed
    prepare = "if skip == 0:\n            self.prepare(fb)\n        elif skip == 1:\n            self.prepare(fb)"
    assert _check(tmp_path / "keyed", "make_key(bs, stream_idx)", KEYED, reset=RESET, prepare=prepare) == []
    assert _check(tmp_path / "field", "bs", "self.graphs[self.bs].replay()", reset=RESET, prepare=prepare) == []


def test_a_size_with_no_real_partner_has_no_padding_rows(tmp_path: Path) -> None:
    # a warm-up replaying each captured graph: `self.bs` is stored, no real count ever is
    warm = "for bs in self.capture_bs:\n            self.bs = bs\n            self.graphs[self.bs].replay()"
    assert _check(tmp_path, "bs", warm, prepare="pass") == []


def test_a_key_made_in_the_index_itself(tmp_path: Path) -> None:
    # `self.graphs[make_key(self.bs, stream_idx)]`: the call is the index; its rows are the field's
    got = _check(tmp_path, "make_key(bs, stream_idx)", "self.graphs[make_key(self.bs, stream_idx)].replay()")
    assert [(f["line"], f["padded"]) for f in got] == [(39, "bs")], got
    assert "self.bs" in got[0]["message"]


def test_a_key_made_from_two_fields_is_named_by_the_size(tmp_path: Path) -> None:
    got = _check(tmp_path, "make_key(bs, stream_idx)",
                 "graph_key = make_key(self.bs, self.num_tokens)\n        self.graphs[graph_key].replay()")
    assert [f["line"] for f in got] == [40], got
    assert "graph_key" not in got[0]["message"] and "graph_key" not in json.dumps(got[0].get("fix")), got[0]


def test_a_size_stored_under_a_compound_test_is_not_judged_against_the_other_path(tmp_path: Path) -> None:
    # `if not skip and stream_idx is None:` runs as two tests: where `not skip` holds, some path
    # (`stream_idx` set) stored nothing, so the size is not this step's on every path there
    prepare = "if not skip and stream_idx is None:\n            self.prepare(fb)"
    assert _check(tmp_path / "a", "make_key(bs, stream_idx)", KEYED, reset=RESET, prepare=prepare) == []
    # a later test of the same name refines the fields the join recorded (the record of which
    # branches may have stored nothing is no such value)
    later = prepare + "\n        if not skip:\n            self.note = 1"
    assert _check(tmp_path / "b", "make_key(bs, stream_idx)", KEYED, reset=RESET, prepare=later) == []
