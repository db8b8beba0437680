"""Buffers kept in a dict that a CUDA graph binds at capture, and rows the capture writes first.

SGLang's prefill graph runner keeps its request buffers in a dict
(``self._prefill_static_buffers = {"seq_lens": torch.zeros(...), ...}``); the per-shape capture
helper writes each entry's rows ``[:bs]`` (``s["seq_lens"][:bs].copy_(...)``), then hands the
graph views of them, in a loop over a module-level tuple of the keys
(``for name in _FIELDS: shape_inputs[name] = s[name][:bs]``).  Every replay reads those rows,
so rows a replay's batch does not fill must be reset, as for buffers held in attributes; and at
capture the rows hold what the capture itself wrote, not what an earlier run left.

Written from scratch in that shape.  ``{BIND}`` is how the capture hands the views, ``{RESET}``
the replay's resets, ``{WRITE}`` the capture's own writes.  Expected findings from reading each
variant are in the parameters.
"""

from __future__ import annotations

import pytest

from .project_files import check_files

RUNNER = '''\
import bisect

import torch

_FIELDS = ("seq_lens", "req_pool_indices")


class ForwardBatch:
    def __init__(self, seq_lens, req_pool_indices, batch_size):
        self.seq_lens = seq_lens
        self.req_pool_indices = req_pool_indices
        self.batch_size = batch_size


class PrefillGraphRunner:
    def __init__(self, capture_bs: list[int], backend) -> None:
        self.capture_bs = sorted(capture_bs)
        self.backend = backend
        max_bs = self.capture_bs[-1]
        self._static = {
            "seq_lens": torch.ones((max_bs,), dtype=torch.int32),
            "req_pool_indices": torch.zeros((max_bs,), dtype=torch.int64),
        }

    def capture_prepare(self, size: int):
        bs = size
        shape_inputs = {
            "seq_lens": torch.ones((bs,), dtype=torch.int32),
            "req_pool_indices": torch.zeros((bs,), dtype=torch.int64),
        }
        s = self._static
        {WRITE}
        {BIND}
        return ForwardBatch(
            seq_lens=shape_inputs["seq_lens"],
            req_pool_indices=shape_inputs["req_pool_indices"],
            batch_size=bs,
        )

    def capture_one_shape(self, size: int, forward) -> None:
        forward_batch = self.capture_prepare(size)
        self.backend.capture(size, lambda: forward(forward_batch))

    def recapture(self, forward) -> None:
        for size in self.capture_bs:
            self.capture_one_shape(size, forward)

    def load_batch(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        s = self._static
        s["seq_lens"][:raw_bs].copy_(forward_batch.seq_lens)
        s["req_pool_indices"][:raw_bs].copy_(forward_batch.req_pool_indices)
        {RESET}
        self.raw_bs = raw_bs
        self.bs = bs

    def execute(self, forward_batch: ForwardBatch):
        self.load_batch(forward_batch)
        return self.backend.replay(self.bs, forward_batch)
'''
LOOP = 'for name in _FIELDS:\n            shape_inputs[name] = s[name][:bs]'
EACH = 'shape_inputs["seq_lens"] = s["seq_lens"][:bs]\n        shape_inputs["req_pool_indices"] = s["req_pool_indices"][:bs]'
WRITE = 's["seq_lens"][:bs].fill_(1)\n        s["req_pool_indices"][:bs].zero_()'
BOTH = 's["seq_lens"][raw_bs:bs].fill_(1)\n        s["req_pool_indices"][raw_bs:bs].zero_()'
ONE = 's["seq_lens"][raw_bs:bs].fill_(1)'


def _found(tmp_path, bind: str, reset: str, write: str = WRITE) -> list[tuple[str, str, str]]:
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"BIND": bind, "RESET": reset, "WRITE": write},
                      profile="sglang")
    return sorted((f.code, f.field, f.function) for f in got)


REPLAY = "PrefillGraphRunner.execute"


@pytest.mark.parametrize("bind", [LOOP, EACH], ids=["loop over module keys", "one store per key"])
@pytest.mark.parametrize("reset, expected", [
    # no reset: rows [raw_bs:bs] of both entries hold an earlier replay's values at this replay
    ("pass", [("PAD001", "req_pool_indices", REPLAY), ("PAD001", "seq_lens", REPLAY)]),
    ("pass\n        " + BOTH, []),
    ("pass\n        " + ONE, [("PAD001", "req_pool_indices", REPLAY)]),
])
def test_dict_entries_a_capture_binds_are_read_at_every_replay(tmp_path, bind, reset, expected):
    assert _found(tmp_path, bind, reset) == expected


def test_rows_the_capture_writes_first_are_no_earlier_runs(tmp_path):
    # the capture helper writes rows [:bs] of both entries before it hands them to the graph: at
    # each capture (run again by `recapture`, while serving) they hold the capture's own values
    assert _found(tmp_path, LOOP, BOTH) == []
    # without those writes the index entry holds whatever an earlier replay left (a live
    # request's row) when the recapture's forward runs: reported at the capture's call
    got = _found(tmp_path, LOOP, BOTH, write="pass")
    assert ("PAD001", "req_pool_indices", "PrefillGraphRunner.recapture") in got, got


@pytest.mark.parametrize("write", [
    # rows [:1] only, not [:bs]
    's["req_pool_indices"][:1].zero_()\n        s["seq_lens"][:bs].fill_(1)',
    # not on every path to the read
    'if bs > 2:\n            s["req_pool_indices"][:bs].zero_()\n        s["seq_lens"][:bs].fill_(1)',
    # a partial writer
    's["req_pool_indices"][:bs].masked_fill_(s["req_pool_indices"][:bs] > 0, 0)\n        s["seq_lens"][:bs].fill_(1)',
])
def test_only_a_write_of_every_row_on_every_path_before_the_read_counts(tmp_path, write):
    got = _found(tmp_path, LOOP, BOTH, write=write)
    assert ("PAD001", "req_pool_indices", "PrefillGraphRunner.recapture") in got, got


def test_a_write_after_the_capture_read_does_not_count(tmp_path):
    # a helper the capture calls with its size after capturing writes the rows: too late
    text = RUNNER.replace(
        "        self.backend.capture(size, lambda: forward(forward_batch))\n",
        "        self.backend.capture(size, lambda: forward(forward_batch))\n"
        "        done = self._after_capture(size)\n\n"
        "    def _after_capture(self, size: int) -> bool:\n"
        "        s = self._static\n"
        "        s[\"req_pool_indices\"][:size].zero_()\n"
        "        return True\n")
    files = {"pkg/__init__.py": "", "pkg/runner.py": text}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"BIND": LOOP, "RESET": BOTH, "WRITE": "pass"},
                      profile="sglang")
    assert ("PAD001", "req_pool_indices", "PrefillGraphRunner.recapture") in sorted(
        (f.code, f.field, f.function) for f in got)


def test_an_annotated_module_tuple_of_keys(tmp_path):
    # `_FIELDS: tuple[str, ...] = (...)` names the keys as a plain assignment does
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER.replace(
        '_FIELDS = ("seq_lens", "req_pool_indices")', '_FIELDS: tuple[str, ...] = ("seq_lens", "req_pool_indices")')}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"BIND": LOOP, "RESET": "pass", "WRITE": WRITE},
                      profile="sglang")
    assert sorted((f.code, f.field, f.function) for f in got) == [
        ("PAD001", "req_pool_indices", REPLAY), ("PAD001", "seq_lens", REPLAY)]

