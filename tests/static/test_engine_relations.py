"""What the engine must keep apart on the MRV2 context-parallel (PCP) path, each shape in a
small package written from scratch (the real code: vLLM 0.33.0 `PCPManager.partition_batch`,
docs/triage-vllm-0.33.0.md).

The shape: a manager object slices its own buffer to a padded count, resets the tail from
a count the analysis does not know by name (`n_real = len(segments)`), stores a
`dataclasses.replace`d batch in `self._local_batch` and returns it; the runner takes that
batch on one branch of an `if` and builds metadata from the batch's fields.  Each test
states the finding expected and why; a variant without the reset must be reported, so
the quiet variant is quiet for the right reason.
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile


def _run(tmp_path, files: dict[str, str], check: list[str] | None = None):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    paths = check or [r for r in files if r.endswith(".py")]
    srcs = [Source(str(tmp_path / r), (tmp_path / r).read_text(encoding="utf-8")) for r in paths]
    res = check_project(srcs, load_profile("vllm"))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


MANAGER = """\
from dataclasses import dataclass, replace

import torch


@dataclass
class InputBatch:
    num_reqs: int
    num_reqs_after_padding: int
    seq_lens: torch.Tensor


class Buffers:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)


class Manager:
    def __init__(self):
        self.input_buffers = Buffers()
        self._local_batch = None

    def _pad(self, n):
        return n + 8

    def partition_batch(self, input_batch, segments):
        n_real = len(segments)
        num_reqs_after_padding = self._pad(n_real)
        seq_lens = self.input_buffers.seq_lens[:num_reqs_after_padding]
        seq_lens[:n_real].copy_(input_batch.seq_lens[:n_real])
        seq_lens[n_real:].zero_()
        self._local_batch = replace(input_batch, num_reqs=n_real,
                                    num_reqs_after_padding=num_reqs_after_padding, seq_lens=seq_lens)
        return self._local_batch
"""

RUNNER = """\
from pkg.manager import Buffers, InputBatch, Manager


class Runner:
    def __init__(self):
        self.input_buffers = Buffers()
        self.pcp_manager = Manager()

    def prepare_inputs(self, num_reqs, num_reqs_padded):
        self.input_buffers.seq_lens[num_reqs:num_reqs_padded] = 0
        return InputBatch(num_reqs=num_reqs, num_reqs_after_padding=num_reqs_padded,
                          seq_lens=self.input_buffers.seq_lens[:num_reqs_padded])

    def execute_model(self, num_reqs, num_reqs_padded, segments):
        input_batch = self.prepare_inputs(num_reqs, num_reqs_padded)
        if self.pcp_manager is not None:
            input_batch = self.pcp_manager.partition_batch(input_batch, segments)
        n = input_batch.num_reqs_after_padding
        return CommonAttentionMetadata(seq_lens=input_batch.seq_lens[:n])
"""


def _files(manager=MANAGER, runner=RUNNER):
    return {"pkg/__init__.py": "", "pkg/manager.py": manager, "pkg/runner.py": runner}


def test_batch_stored_on_self_replaced_and_reset_from_an_unnamed_count_is_clean(tmp_path):
    # Both branches reset the padding rows of the buffer their batch holds: the runner's
    # `[num_reqs:num_reqs_padded]`, the manager's `seq_lens[n_real:]` on its view of
    # `[:num_reqs_after_padding]` (n_real is no count the profile names, so it is taken as that
    # view's real count).  Four things must hold for this to be quiet: `self._local_batch = replace(...)`
    # is an object read back by `return self._local_batch`; the reset from `n_real` covers the
    # view; at the `if` join each branch's batch keeps the resets of its own branch (the other
    # branch never touches the manager's buffer); and `seq_lens[:n]`, with `n` joined from the two
    # batches' padded counts, keeps the rows of the slice each batch holds.
    assert _run(tmp_path, _files()) == []


def test_without_the_managers_reset_the_pcp_branch_is_reported(tmp_path):
    found = _run(tmp_path, _files(manager=MANAGER.replace("        seq_lens[n_real:].zero_()\n", "")))
    assert [(f.path.rsplit("/", 1)[-1], f.field) for f in found] == [("runner.py", "seq_lens")]
    f = found[0]
    assert "num_reqs_after_padding" in f.message  # the manager's padded count
    # the slice was made in another class (`self.input_buffers` of the manager is not the
    # runner's): no reset statement is proposed at the sink, only the rows to reset
    assert f.fix is None and "reset rows" in f.message


def test_without_the_runners_reset_the_other_branch_is_reported(tmp_path):
    found = _run(tmp_path, _files(runner=RUNNER.replace(
        "        self.input_buffers.seq_lens[num_reqs:num_reqs_padded] = 0\n", "")))
    assert [(f.path.rsplit("/", 1)[-1], f.field) for f in found] == [("runner.py", "seq_lens")]
    assert "[num_reqs:num_reqs_padded]" in found[0].message


def test_a_named_real_count_is_not_overridden(tmp_path):
    # `seq_lens[num_tokens:]` on a view of requests: num_tokens is a count the profile names
    # (another axis), so it is not taken as the view's real count: still reported
    manager = MANAGER.replace("seq_lens[n_real:].zero_()", "seq_lens[num_tokens:].zero_()").replace(
        "n_real = len(segments)", "n_real = len(segments)\n        num_tokens = 2 * n_real")
    found = _run(tmp_path, _files(manager=manager))
    assert [(f.path.rsplit("/", 1)[-1], f.field) for f in found] == [("runner.py", "seq_lens")]


SPECULATOR = """\
import torch


class Speculator:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)

    def propose(self, num_reqs, num_reqs_padded, fused):
        self.seq_lens[num_reqs:num_reqs_padded] = 0
        decode_fn = self._fused_decode if fused else self._decode
        decode_fn(num_reqs, num_reqs_padded)

    def _fused_decode(self, num_reqs, num_reqs_padded):
        return self._decode(num_reqs, num_reqs_padded)

    def _decode(self, num_reqs, num_reqs_padded):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
"""


def test_a_method_taken_as_a_value_is_called_from_there(tmp_path):
    # `_decode` is only reached through `decode_fn = self._fused_decode if ... else self._decode`:
    # its caller resets the rows first.  Were the reference not a call edge, `_decode` would be an
    # entry point of its own, with nothing reset, and be reported.
    assert _run(tmp_path, {"pkg/__init__.py": "", "pkg/spec.py": SPECULATOR}) == []
    buggy = SPECULATOR.replace("        self.seq_lens[num_reqs:num_reqs_padded] = 0\n", "")
    found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/spec.py": buggy})
    assert [f.field for f in found] == ["seq_lens"]
