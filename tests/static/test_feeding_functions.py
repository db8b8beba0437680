"""A function that reaches no sink itself but whose caller does is searched for entry points
(issue 8: "pre-commit passes a few files"; the mutation test checks one file at a time).

The shape is vLLM 0.33.0 Model Runner V2's ``PCPManager.partition_batch``
(``v1/worker/gpu/pcp_manager.py``): it takes ``seq_lens = input_buffers.seq_lens[:num_reqs_after_padding]``,
writes the local requests' rows, resets the rest (``seq_lens[num_local_reqs:].zero_()``) and
returns a new batch; the runner hands that batch to the attention metadata.  Entry points were
searched only from functions that reach a sink, so checking ``pcp_manager.py`` alone
interpreted nothing there and deleting the reset went unnoticed, while a whole-tree run (which
enters through the runner) saw it.  Written from scratch; expected findings reasoned in each
test.
"""

from __future__ import annotations

from .project_files import check_files

FILES = {
    "pkg/__init__.py": "",
    "pkg/runner.py": '''\
import torch
from dataclasses import dataclass

from pkg.local import LocalManager


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    num_reqs: int


class Runner:
    def __init__(self, n):
        self.local = LocalManager(n)

    def execute_model(self, lens, num_reqs, num_reqs_after_padding):
        seq_lens, n = self.local.partition_batch(lens, num_reqs, num_reqs_after_padding)
        return CommonAttentionMetadata(seq_lens=seq_lens, num_reqs=n)
''',
    # no sink here: what partition_batch returns reaches one in the runner
    "pkg/local.py": '''\
import torch


class LocalManager:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def partition_batch(self, lens, num_reqs, num_reqs_after_padding):
        num_local_reqs = num_reqs // 2
        seq_lens = self.seq_lens[:num_reqs_after_padding]
        seq_lens[:num_local_reqs].copy_(lens[:num_local_reqs])
        {RESET}
        return seq_lens, num_reqs_after_padding
''',
}


def _findings(tmp_path, reset: str = "pass"):
    # only local.py is checked; the runner is read as context
    found = check_files(tmp_path, FILES, ["pkg/local.py"], {"RESET": reset})
    return [(f.line, f.field, f.message) for f in found]


def test_a_padded_view_returned_to_a_sinkward_caller_is_checked_from_its_own_file(tmp_path):
    # Runner.execute_model -> partition_batch: rows [num_local_reqs:num_reqs_after_padding] of
    # `seq_lens[:num_reqs_after_padding]` (local.py line 10) are not written on this step and
    # reach CommonAttentionMetadata(seq_lens=) in runner.py: one finding, at the padded slice
    got = _findings(tmp_path)
    assert [(line, fld) for line, fld, _m in got] == [(10, "seq_lens")]
    assert "runner.py" in got[0][2]


def test_with_the_local_reset_it_is_quiet(tmp_path):
    assert _findings(tmp_path, reset="seq_lens[num_local_reqs:].zero_()") == []


def test_checked_together_the_runner_finds_it_from_its_own_entry(tmp_path):
    # both files checked (a tree run): no module is left to search for callers; the runner's
    # execute_model is an entry point of its own and reaches partition_batch: the same stale
    # rows, reported at the sink (runner.py line 19) now that its file is checked
    found = check_files(tmp_path, FILES, ["pkg/local.py", "pkg/runner.py", "pkg/__init__.py"], {"RESET": "pass"})
    got = [(f.path.rsplit("/", 1)[-1], f.line, f.field) for f in found]
    assert got == [("runner.py", 19, "seq_lens")]


def test_not_searched_above_the_bound_on_checked_files(tmp_path, monkeypatch):
    # the caller search is made for a few checked files only (it scans the project once per
    # such function: quadratic on a tree); with the bound below the one checked file, the
    # local view is not followed to the runner's sink and nothing is reported
    from padlint.analysis import engine

    monkeypatch.setattr(engine, "FEEDER_SEARCH_MAX_FILES", 0)
    assert _findings(tmp_path) == []


def test_a_caller_through_a_conditional_local_is_found(tmp_path):
    # the runner calls the manager through a local bound by a conditional expression (vLLM
    # 0.34.0: `adaptive_verification = self.adaptive_verification if draft_tokens else None`),
    # or by `or`: the local may be the manager (None gives no class), so its method's caller is
    # found and checking local.py alone reports the slice, as with a direct call
    for bind in ("self.local if num_reqs else None", "None or self.local"):
        runner = FILES["pkg/runner.py"].replace(
            "        seq_lens, n = self.local.partition_batch(",
            f"        local = {bind}\n        seq_lens, n = local.partition_batch(")
        found = check_files(tmp_path, {**FILES, "pkg/runner.py": runner}, ["pkg/local.py"], {"RESET": "pass"})
        assert [(f.line, f.field) for f in found] == [(10, "seq_lens")], bind
