"""PAD004 (b) for fields whose rows were made away from the metadata call: gathers, copies,
allocations and fields of an object built elsewhere (:mod:`padlint.analysis.widths`).

Each package is written from scratch and checked as a user would (``padlint check .``).  The
sink constructor is the vllm profile's ``CommonAttentionMetadata``; ``num_reqs`` and
``num_reqs_padded`` are the profile's real/padded request pair.  A finding is expected only
where one object gets a field with one row per real request beside fields (or a count field)
at the padded request count.
"""

from __future__ import annotations

from pathlib import Path

from .test_pad004_builders import _check

HEAD = """\
import numpy as np
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata
"""

RUNNER = """
class Runner:
    def __init__(self, max_num_reqs: int):
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.prompt_len = torch.zeros(max_num_reqs, dtype=torch.int32)
"""


def test_a_local_gather_beside_padded_slices(tmp_path: Path) -> None:
    """``idx = np.arange(num_reqs)`` has ``num_reqs`` rows (real); ``self.prompt_len[idx]`` one
    row per row of ``idx``; ``torch.from_numpy``/``.to`` keep rows.  ``run`` hands it beside
    ``seq_lens[:num_reqs_padded]`` and ``num_reqs=num_reqs_padded``: reported on line 14.
    ``run_padded`` gathers with ``np.arange(num_reqs_padded)``: every field padded, nothing."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded):
        idx = torch.from_numpy(np.arange(num_reqs)).to("cuda")
        prompt = self.prompt_len[idx]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       rswa_prefix_lens=prompt)

    def run_padded(self, num_reqs, num_reqs_padded):
        idx = torch.from_numpy(np.arange(num_reqs_padded)).to("cuda")
        prompt = self.prompt_len[idx]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       rswa_prefix_lens=prompt)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 14, "rswa_prefix_lens")]


def test_allocations_and_out_copies(tmp_path: Path) -> None:
    """``np.zeros(num_reqs)`` has ``num_reqs`` rows (line 15 reported beside the padded
    ``seq_lens``); ``np.zeros((num_reqs_padded, 4))`` has the padded rows (nothing, line 19);
    a copy helper named in ``[axes] row_copies`` called with ``out=`` returns ``out`` (a whole
    buffer: width unknown, nothing on line 23)."""
    src = HEAD + """
def async_tensor_h2d(data, device=None, out=None):
    return torch.from_numpy(data).to(device)
""" + RUNNER + """
    def run(self, num_reqs, num_reqs_padded):
        lens = np.zeros(num_reqs, dtype=np.int32)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], rswa_prefix_lens=lens)

    def run2(self, num_reqs, num_reqs_padded):
        lens = np.zeros((num_reqs_padded, 4), dtype=np.int32)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], rswa_prefix_lens=lens)

    def run3(self, num_reqs, num_reqs_padded):
        lens = async_tensor_h2d(np.zeros(num_reqs, dtype=np.int32), out=self.prompt_len)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], rswa_prefix_lens=lens)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 15, "rswa_prefix_lens")]


DATA = """\
from dataclasses import dataclass

import torch


@dataclass
class Batch:
    num_reqs: int
    num_reqs_padded: int
    seq_lens: torch.Tensor
    prompt_lens: torch.Tensor
"""


def test_a_field_built_in_two_places(tmp_path: Path) -> None:
    """``Batch.prompt_lens`` is built with ``num_reqs`` rows in ``a.py`` and, in ``b.py``, with
    ``num_reqs_padded`` rows: constructions disagree, the field's width is unknown, nothing is
    reported where ``use.py`` hands it beside the padded ``seq_lens``.  Without ``b.py`` (second
    package) the one known construction gives it ``num_reqs`` rows: reported on line 9.  With
    ``c.py`` instead of ``b.py`` (a construction from a value of unknown width, as SGLang builds
    ``ForwardBatch.out_cache_loc`` from the scheduler's batch) or ``d.py`` (a construction by
    position), the field may have any width: nothing.  ``e.py`` passes ``prompt_lens=None``: no
    rows, no say: reported as with ``a.py`` alone."""
    a = HEAD + """
from pkg.data import Batch


def make(prompt_len, seq_lens, num_reqs, num_reqs_padded):
    return Batch(num_reqs=num_reqs, num_reqs_padded=num_reqs_padded, seq_lens=seq_lens[:num_reqs_padded],
                 prompt_lens=prompt_len[:num_reqs])
"""
    b = a.replace("prompt_len[:num_reqs]", "prompt_len[:num_reqs_padded]")
    use = HEAD + """from pkg.data import Batch


def use(batch: Batch):
    return CommonAttentionMetadata(num_reqs=batch.num_reqs_padded, seq_lens=batch.seq_lens,
                                   rswa_prefix_lens=batch.prompt_lens)
"""
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    assert _check(tmp_path / "two", {"data.py": DATA, "a.py": a, "b.py": b, "use.py": use}) == []
    assert _check(tmp_path / "one", {"data.py": DATA, "a.py": a, "use.py": use}) == [
        ("pkg/use.py", 9, "rswa_prefix_lens")]
    c = a.replace("prompt_len[:num_reqs]", "prompt_len")
    d = HEAD + """
from pkg.data import Batch


def make(prompt_len, seq_lens, n, p):
    return Batch(n, p, seq_lens[:p], prompt_len[:p])
"""
    e = a.replace("prompt_len[:num_reqs]", "None")
    for name, other in (("c", c), ("d", d), ("e", e)):
        (tmp_path / name).mkdir()
        got = _check(tmp_path / name, {"data.py": DATA, "a.py": a, f"{name}.py": other, "use.py": use})
        assert got == ([("pkg/use.py", 9, "rswa_prefix_lens")] if name == "e" else []), name


def test_counts_chosen_by_a_branch(tmp_path: Path) -> None:
    """``n`` is the padded count on one branch and the real one on the other.  ``run`` hands
    ``num_reqs=n`` and ``seq_lens[:n]`` (both follow ``n``) beside ``prompt``, made with the
    real count: narrower on the padded branch, reported once (line 17).  ``run_same`` makes
    ``prompt`` with ``[:n]`` too: it follows ``n`` on both branches, nothing."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded, full):
        if full:
            n = num_reqs_padded
        else:
            n = num_reqs
        prompt = self.prompt_len[torch.arange(num_reqs)]
        return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                       rswa_prefix_lens=prompt)

    def run_same(self, num_reqs, num_reqs_padded, full):
        if full:
            n = num_reqs_padded
        else:
            n = num_reqs
        return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                       rswa_prefix_lens=self.prompt_len[:n])
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 17, "rswa_prefix_lens")]
