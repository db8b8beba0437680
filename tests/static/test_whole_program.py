"""Whole-program shapes found in the triage of real releases (docs/triage-*.md), each
reproduced in a small package written from scratch: what the engine must see across
modules, through `dataclasses.replace`, helpers that copy whole buffers, counts that are
products, and `**kwargs` into a model call."""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile


def _run(tmp_path, files: dict[str, str], profile: str = "vllm", check: list[str] | None = None):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    paths = check or list(files)
    srcs = [Source(str(tmp_path / r), (tmp_path / r).read_text(encoding="utf-8")) for r in paths]
    res = check_project(srcs, load_profile(profile))
    return {(f.path.rsplit("/", 1)[-1], f.field) for fs in res.values() if isinstance(fs, list) for f in fs}


BATCH = """\
from dataclasses import dataclass
import torch


@dataclass
class Batch:
    num_reqs: int
    num_reqs_after_padding: int
    seq_lens: torch.Tensor
"""

RUNNER_REPLACE = """\
import dataclasses
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata
from pkg.batch import Batch


class Runner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n)

    def update(self, lens, n):
        self.seq_lens[:n] = lens  # a step writes it: its padding rows may be stale

    def execute_model(self, num_reqs, num_reqs_padded, split):
        batch = Batch(num_reqs=num_reqs, num_reqs_after_padding=num_reqs_padded,
                      seq_lens=self.seq_lens[:num_reqs_padded])
        if split:
            batch = dataclasses.replace(batch, seq_lens=torch.zeros(num_reqs_padded))
        return CommonAttentionMetadata(seq_lens=batch.seq_lens)
"""


def test_replace_gives_the_new_field_and_keeps_the_old_ones(tmp_path):
    # the `split` branch replaces seq_lens by a fresh zero tensor; the other branch keeps the
    # stale padded slice: stale on one path, so reported
    files = {"pkg/__init__.py": "", "pkg/batch.py": BATCH, "pkg/runner.py": RUNNER_REPLACE}
    assert _run(tmp_path, files) == {("runner.py", "seq_lens")}
    # with the padding rows reset before the batch is built, neither path is stale, and the
    # replaced object is not taken for a persistent buffer
    fixed = RUNNER_REPLACE.replace("        batch = Batch(", "        self.seq_lens[num_reqs:num_reqs_padded] = 0\n"
                                   "        batch = Batch(")
    assert _run(tmp_path, {**files, "pkg/runner.py": fixed}) == set()


UTILS = """\
def h2d(data, out):
    out.copy_(data)
"""

RUNNER_H2D = """\
import numpy as np
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata
from pkg.utils import h2d


class Runner:
    def __init__(self, n):
        self.query_start_loc = torch.zeros(n + 1)

    def execute_model(self, num_reqs, num_reqs_padded, num_tokens):
        qsl = np.zeros(num_reqs_padded + 1)
        qsl[num_reqs + 1:] = num_tokens
        h2d(qsl, out=self.query_start_loc)
        return CommonAttentionMetadata(query_start_loc=self.query_start_loc[:num_reqs_padded + 1])
"""


def test_a_whole_buffer_copy_in_a_helper_of_another_module_is_a_write(tmp_path):
    # `out.copy_(data)` from a fresh array (its padding rows written with the last offset)
    # replaces every row of the persistent buffer: nothing stale reaches the sink
    files = {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/runner.py": RUNNER_H2D}
    assert _run(tmp_path, files, check=["pkg/runner.py"]) == set()
    # without the copy the persistent buffer's padding rows are stale
    stale = RUNNER_H2D.replace("        h2d(qsl, out=self.query_start_loc)\n", "")
    assert _run(tmp_path, {**files, "pkg/runner.py": stale}, check=["pkg/runner.py"]) == \
        {("runner.py", "query_start_loc")}


SGL_RUNNER = """\
from types import SimpleNamespace
import torch


class DraftRunner:
    def __init__(self, max_bs, width):
        self.width = width
        self.out_cache_loc = torch.zeros(max_bs * width)

    def replay(self, forward_batch, raw_bs, bs):
        self.out_cache_loc[: raw_bs * self.width].copy_(forward_batch.out_cache_loc)
        view = SimpleNamespace(out_cache_loc=self.out_cache_loc[: bs * self.width])
        self.attn_backend.init_forward_metadata_out_graph(view)
"""


def test_a_count_times_a_width_is_a_padded_count(tmp_path):
    # rows [raw_bs * width : bs * width] are padding rows of a token buffer indexed per request
    files = {"pkg/__init__.py": "", "pkg/runner.py": SGL_RUNNER}
    assert _run(tmp_path, files, "sglang") == {("runner.py", "out_cache_loc")}
    fixed = SGL_RUNNER.replace("        view =", "        self.out_cache_loc[raw_bs * self.width: bs * self.width].zero_()\n"
                               "        view =")
    assert _run(tmp_path, {**files, "pkg/runner.py": fixed}, "sglang") == set()


MODEL_KWARGS = """\
import torch


class Runner:
    def __init__(self, n):
        self.positions = torch.zeros(n)

    def update(self, pos, n):
        self.positions[:n] = pos  # a step writes it: its padding rows may be stale

    def execute_model(self, num_tokens, num_tokens_padded):
        model_inputs = {"positions": self.positions[:num_tokens_padded], "flag": True}
        return self.model(**model_inputs)
"""


def test_kwargs_dict_into_the_model_call(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/runner.py": MODEL_KWARGS}
    assert _run(tmp_path, files) == {("runner.py", "positions")}
