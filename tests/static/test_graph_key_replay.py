"""Graph replays indexed by a size read off a field (``self.graphs[self.bs]``) or by a key made
from it (``self.graphs[self._make_graph_key(self.bs, i)]``): the object holds the size's real
partner too, and the rows are named by the field, never by the key.  Each package is written
from scratch and checked as a user would (the CLI, ``--profile sglang``)."""

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

    def replay(self, fb, stream_idx=None):
        self.prepare(fb)
        REPLAY
"""


def _check(tmp_path: Path, key_at_capture: str, replay: str, reset: str = "pass") -> list[dict]:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    src = RUNNER.replace("KEY_AT_CAPTURE", key_at_capture).replace("REPLAY", replay).replace("RESET", reset)
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
