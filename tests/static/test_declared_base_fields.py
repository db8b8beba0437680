"""A field reached through an attribute declared with a base class that does not have it.

SGLang 0.5.23's graph runners declare ``buffers: ForwardInputBuffers`` on their base class, a
dataclass with no field of its own (it holds the reflective helpers), and each runner stores a
subclass (``EagleDraftExtendInputBuffers``) that declares ``seq_lens_cpu``.  ``self.buffers``
may then be either class to the analysis; the base never sets ``seq_lens_cpu``, so an object
holding it is one of the subclasses, and whether the field is set only at construction (which
lets a whole buffer handed to a sink with ``batch_size=bs`` be read up to ``bs``) is theirs to
say.  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

BASE = '''\
from dataclasses import dataclass, fields


@dataclass
class BaseBuffers:
    def names(self) -> list[str]:
        return [f.name for f in fields(self)]


class BaseRunner:
    buffers: BaseBuffers
'''

RUNNER = '''\
from dataclasses import dataclass
from types import SimpleNamespace

import torch

from pkg.base import BaseBuffers, BaseRunner


@dataclass
class DraftBuffers(BaseBuffers):
    seq_lens_cpu: torch.Tensor


class DraftRunner(BaseRunner):
    def __init__(self, max_bs: int) -> None:
        self.capture_bs = [1, 2, 4, 8]
        self.buffers = DraftBuffers(seq_lens_cpu=torch.ones(max_bs, dtype=torch.int32))

    def execute(self, forward_batch, bs: int) -> SimpleNamespace:
        raw_bs = forward_batch.batch_size
        buffers = self.buffers
        {RESET}
        buffers.seq_lens_cpu[:raw_bs].copy_(forward_batch.seq_lens_cpu)
        return SimpleNamespace(batch_size=bs, seq_lens_cpu=buffers.seq_lens_cpu)
'''


def _found(tmp_path, reset: str) -> list[str]:
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py", "pkg/base.py"], {"RESET": reset}, profile="sglang")
    return sorted(f"{f.field}: {f.message.split(';')[0]}" for f in got if f.code == "PAD001")


def test_a_whole_buffer_is_read_up_to_the_declared_batch_size(tmp_path):
    # rows [raw_bs:bs] of the whole `seq_lens_cpu` the namespace is handed are an earlier
    # step's: the field is set at construction only, by the subclass the base stands for
    got = _found(tmp_path, "pass")
    assert len(got) == 1 and got[0].startswith("seq_lens_cpu: ") and "rows up to bs" in got[0], got


def test_the_fill_before_the_copy_covers_it(tmp_path):
    assert _found(tmp_path, "buffers.seq_lens_cpu.fill_(1)") == []
