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

    def propose(self, lens, num_reqs, num_reqs_padded, fused):
        self.seq_lens[:num_reqs] = lens
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


GROUPS = """\
import torch


class Drafter:
    def __init__(self, groups):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)
        self.group_ids = [g for g in groups if g.is_attention]
        ASSERT

    def propose(self, num_reqs, num_reqs_padded):
        for gid in self.group_ids:
            self.seq_lens[num_reqs:num_reqs_padded] = 0
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
"""


def test_a_loop_over_an_attribute_the_code_asserts_non_empty_runs_at_least_once(tmp_path):
    # vLLM 0.33.0 DFlash: `assert self.draft_kv_cache_group_ids, "No draft attention groups found."`
    # in __init__, then the prepare kernel launched once per group: the reset in the loop body
    # happens on every path.  Without the assertion the list may be empty: the rows may be stale.
    for assertion in ('assert self.group_ids, "no attention groups"', "assert len(self.group_ids) > 0"):
        files = {"pkg/__init__.py": "", "pkg/drafter.py": GROUPS.replace("ASSERT", assertion)}
        assert _run(tmp_path, files) == [], assertion
    found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/drafter.py": GROUPS.replace("ASSERT", "pass")})
    assert [f.field for f in found] == ["seq_lens"]
    # an assertion about another attribute proves nothing about this one
    found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/drafter.py": GROUPS.replace(
        "ASSERT", "self.other = [1]\n        assert self.other")})
    assert [f.field for f in found] == ["seq_lens"]


def test_is_not_none_on_a_tensor_takes_only_the_then_branch(tmp_path):
    # vLLM's `async_tensor_h2d(data, out=buf)`: `if out is not None: return out.copy_(t)`; the
    # caller passes a buffer, so the copy happens (the other branch is not a path here)
    helper = """\
    def h2d(data, device=None, out=None):
        if out is not None:
            return out.copy_(data)
        return data.to(device)
    """
    runner = """\
    import numpy as np
    import torch
    from pkg.helper import h2d


    class Runner:
        def __init__(self):
            self.query_start_loc = torch.zeros(257, dtype=torch.int32)

        def execute_model(self, lens, num_reqs, num_reqs_padded, num_tokens):
            qsl = np.empty(257, dtype=np.int32)
            qsl[0] = 0
            np.cumsum(lens, out=qsl[1 : num_reqs + 1])
            qsl[num_reqs + 1 :] = num_tokens
            h2d(qsl, out=self.query_start_loc)
            return CommonAttentionMetadata(query_start_loc=self.query_start_loc[: num_reqs_padded + 1])
    """
    files = {"pkg/__init__.py": "", "pkg/helper.py": helper, "pkg/runner.py": runner}
    assert _run(tmp_path, files) == []
    # the caller passes no buffer: nothing is copied into self.query_start_loc
    found = _run(tmp_path, {**files, "pkg/runner.py": runner.replace(
        "h2d(qsl, out=self.query_start_loc)", "h2d(qsl)")})
    assert [f.field for f in found] == ["query_start_loc"]


WORKER = """\
import torch
from pkg.warmup import warmup


class Worker:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)

    def compile_or_warm_up_model(self):
        warmup(self.execute_model)

    def execute_model(self, lens, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs] = lens
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded])
"""


def test_a_method_passed_as_a_callback_stays_an_entry_point(tmp_path):
    # vLLM 0.21.0 `Worker.compile_or_warm_up_model` calls `warmup_kernels(..., self.execute_model, ...)`.
    # The callback is called inside `warmup`, which the analysis does not follow through its
    # parameter; were the reference an edge, `execute_model` (the engine's step API) would not be
    # an entry point any more and its stale real step would go unreported.
    files = {"pkg/__init__.py": "", "pkg/worker.py": WORKER,
             "pkg/warmup.py": "def warmup(fn):\n    for n in (1, 2):\n        fn(None, n, n)\n"}
    found = _run(tmp_path, files, check=["pkg/worker.py"])
    assert [f.field for f in found] == ["seq_lens"]
    assert "execute_model" in found[0].trace[0].note


OPTIONAL = """\
import torch


class ForwardBatch:
    rids: torch.Tensor


class Buffers:
    def __init__(self, with_rids):
        self.rids = torch.zeros(256, dtype=torch.int64) if with_rids else None


class Runner:
    def __init__(self, with_rids):
        self.buffers = Buffers(with_rids)

    def replay(self, forward_batch: ForwardBatch, raw_bs, bs):
        buffers = self.buffers
        if bs != raw_bs:
            if buffers.rids is not None:
                RESET
        if buffers.rids is not None:
            forward_batch.rids = buffers.rids[:bs]
"""


def test_a_buffer_that_is_none_on_a_branch_has_no_stale_rows_there(tmp_path):
    # SGLang 0.5.23 EAGLEDraftCudaGraphRunner: `if buffers.rids_int is not None: buffers.rids_int.zero_()`
    # before `forward_batch.rids_int = buffers.rids_int[:bs]`.  On the branch where the optional
    # buffer is None there are no rows at all, so the join of the two branches is reset.
    profile_files = {"pkg/__init__.py": "", "pkg/runner.py": OPTIONAL.replace("RESET", "buffers.rids.zero_()")}
    srcs_clean = _run_sglang(tmp_path, profile_files)
    assert srcs_clean == []
    found = _run_sglang(tmp_path, {**profile_files, "pkg/runner.py": OPTIONAL.replace("RESET", "pass")})
    assert [f.field for f in found] == ["rids"]


def _run_sglang(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    srcs = [Source(str(tmp_path / r), (tmp_path / r).read_text(encoding="utf-8")) for r in files]
    profile = load_profile("sglang")
    res = check_project(srcs, profile)
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


MASKED = """\
import torch


class Runner:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)
        self.live = torch.zeros(256, dtype=torch.bool)
        self.flags = torch.zeros(256, dtype=torch.bool)

    def execute_model(self, lens, flags, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs] = lens
        self.flags[:num_reqs] = flags
        live = self.live[:num_reqs_padded]
        live[:num_reqs] = True
        live[num_reqs:] = MASKPAD
        seq_lens = torch.where(live, self.seq_lens[:num_reqs_padded], 0)
        flags = self.flags[:num_reqs_padded] & live
        return CommonAttentionMetadata(seq_lens=seq_lens, is_prefilling=flags)
"""


def test_a_mask_false_on_padding_rows_makes_them_neutral(tmp_path):
    # `live[num_reqs:] = False` makes every padding row of the mask False: `torch.where(live, x, 0)`
    # holds 0 there whatever `x` holds, and `flags & live` holds False.  Neither is stale.
    files = {"pkg/__init__.py": "", "pkg/runner.py": MASKED.replace("MASKPAD", "False")}
    assert _run(tmp_path, files) == []
    # a mask whose padding rows are True selects the stale rows instead
    found = _run(tmp_path, {**files, "pkg/runner.py": MASKED.replace("MASKPAD", "True")})
    assert sorted(f.field for f in found) == ["is_prefilling", "seq_lens"]
    # a mask with no reset proves nothing
    found = _run(tmp_path, {**files, "pkg/runner.py": MASKED.replace("        live[num_reqs:] = MASKPAD\n", "")})
    assert sorted(f.field for f in found) == ["is_prefilling", "seq_lens"]
    # logical_and is `&`
    found = _run(tmp_path, {**files, "pkg/runner.py": MASKED.replace("MASKPAD", "False").replace(
        "self.flags[:num_reqs_padded] & live", "torch.logical_and(self.flags[:num_reqs_padded], live)")})
    assert found == []


def test_a_sink_in_a_module_not_checked_is_reported_at_the_padded_slice(tmp_path):
    """pre-commit passes only the changed file: a deleted reset in the runner whose sink is in
    `attn_utils.py` (read, not checked) is reported where the runner makes the padded slices,
    naming the sink; with both files checked the finding is at the sink only (no duplicate)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "fixtures" / "project"
    runner = root / "metadata_other_module_buggy" / "pkg" / "runner.py"
    src = [Source(str(runner), runner.read_text(encoding="utf-8"))]
    found = check_project(src, load_profile("vllm"))[str(runner)]
    lines = runner.read_text(encoding="utf-8").splitlines()
    assert sorted(f.field for f in found) == ["seq_lens", "slot_mapping"]
    for f in found:
        assert f.path == str(runner) and f"{f.field}[:" in lines[f.line - 1]  # the slice's own line
        assert "attn_utils.py:" in f.message and "a module not checked here" in f.message
        assert f.fix is None and f.trace[-1].path.endswith("attn_utils.py")
    fixed = root / "metadata_other_module_fixed" / "pkg" / "runner.py"
    assert check_project([Source(str(fixed), fixed.read_text(encoding="utf-8"))], load_profile("vllm"))[str(fixed)] == []
    utils = runner.parent / "attn_utils.py"
    both = check_project(src + [Source(str(utils), utils.read_text(encoding="utf-8"))], load_profile("vllm"))
    assert both[str(runner)] == [] and sorted(f.field for f in both[str(utils)]) == ["seq_lens", "slot_mapping"]


PROPOSER = """\
import torch
from vllm.forward_context import set_forward_context


class Proposer:
    def __init__(self, n):
        self._slot_mapping_buffer = torch.zeros(n, dtype=torch.int64)
        self.scheduled_slots = torch.zeros(n, dtype=torch.int64)

    def _get_slot_mapping(self, num_tokens, slot_mapping=None):
        if slot_mapping is not None:
            num_actual = slot_mapping.shape[0]
            self._slot_mapping_buffer[:num_actual].copy_(slot_mapping)
            if num_tokens > num_actual:
                self._slot_mapping_buffer[num_actual:num_tokens].fill_(-1)
        view = self._slot_mapping_buffer[:num_tokens]
        return {name: view for name in self.layer_names}

    def propose(self, num_tokens, num_tokens_padded):
        sm = self._get_slot_mapping(num_tokens_padded, self.scheduled_slots[:num_tokens])
        with set_forward_context(None, None, slot_mapping=sm):  # PROPOSE
            return self.model(num_tokens_padded)
"""


def test_a_ranged_reset_from_an_unnamed_count_names_the_real_count(tmp_path):
    # vLLM 0.33.0 EAGLE proposers (`_get_slot_mapping`, written from scratch): the callee's
    # `num_tokens` is the caller's padded count; `[num_actual:num_tokens].fill_(-1)` resets rows
    # from a count no profile names up to that padded count, so `num_actual` is the real count of
    # the padded range (as for `v[x:]` on a padded view `v`): quiet
    assert _run(tmp_path, {"pkg/__init__.py": "", "pkg/proposer.py": PROPOSER}) == []


def test_a_call_that_writes_no_row_leaves_the_padded_range_stale(tmp_path):
    # a dummy run asks for the view without a slot mapping: nothing is written this step, so
    # every row up to the padded count keeps the last step's slots (KV written into live slots)
    runner = PROPOSER + """
    def dummy_run(self, num_tokens, num_tokens_padded):
        sm = self._get_slot_mapping(num_tokens_padded)
        with set_forward_context(None, None, slot_mapping=sm):  # DUMMY
            return self.model(num_tokens_padded)
"""
    found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/proposer.py": runner})
    line = next(i + 1 for i, t in enumerate(runner.splitlines()) if t.endswith("# DUMMY"))
    assert [(f.line, f.field, f.sink) for f in found] == [(line, "slot_mapping", "set_forward_context")]


TWO_ORIGINS = """\
import torch


class Runner:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)
        self.spare_lens = torch.zeros(256, dtype=torch.int32)

    def execute_model(self, lens, use_spare, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs] = lens
        self.spare_lens[:num_reqs] = lens
        seq_lens = self.spare_lens[:num_reqs_padded] if use_spare else self.seq_lens[:num_reqs_padded]
        DERIVED
        return CommonAttentionMetadata(seq_lens=seq_lens)
"""


def test_one_finding_per_buffer_that_reaches_a_sink_argument(tmp_path):
    # two persistent buffers, each sliced to the padded count without a reset, reach the same
    # argument: two bugs, each with its own reset (and its own baseline fingerprint)
    found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": TWO_ORIGINS.replace("DERIVED", "pass")})
    assert sorted((f.field, f.buffer) for f in found) == [
        ("seq_lens", "self.seq_lens[:num_reqs_padded]"), ("seq_lens", "self.spare_lens[:num_reqs_padded]")]
    assert all("more source" not in f.message for f in found)


def test_a_derived_value_is_one_origin(tmp_path):
    # `seq_lens + 1` of either buffer: one reset of the derived value fixes both, one finding
    found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": TWO_ORIGINS.replace("DERIVED", "seq_lens = seq_lens + 1")})
    assert [f.field for f in found] == ["seq_lens"]


ORIGIN_ON_A_LONGER_PATH = """\
import torch


class Runner:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)
        self.spare_lens = torch.zeros(256, dtype=torch.int32)

    def execute_model(self, lens, use_spare, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs] = lens
        self.spare_lens[:num_reqs] = lens
        if use_spare:
            FIRST
        else:
            SECOND

    def _via(self, num_reqs, num_reqs_padded):
        self._build(self.spare_lens[:num_reqs_padded])

    def _build(self, seq_lens):
        return CommonAttentionMetadata(seq_lens=seq_lens)
"""


def test_an_origin_met_only_on_a_longer_path_is_its_own_finding(tmp_path):
    # `self.seq_lens[:P]` reaches the sink directly (execute_model -> _build); `self.spare_lens[:P]`
    # only through `_via` (one call longer). Each is a bug with its own reset, whichever path the
    # analysis meets first; the longer one is reported with its own path.
    direct = "self._build(self.seq_lens[:num_reqs_padded])"
    longer = "self._via(num_reqs, num_reqs_padded)"
    for first, second in ((direct, longer), (longer, direct)):
        text = ORIGIN_ON_A_LONGER_PATH.replace("FIRST", first).replace("SECOND", second)
        found = _run(tmp_path, {"pkg/__init__.py": "", "pkg/runner.py": text})
        by_buffer = {f.buffer: f for f in found}
        assert sorted(by_buffer) == ["self.seq_lens[:num_reqs_padded]", "self.spare_lens[:num_reqs_padded]"]
        assert [f.field for f in found] == ["seq_lens", "seq_lens"]
        # each finding's trace is the path that brings its own buffer
        spare = " ".join(step.note for step in by_buffer["self.spare_lens[:num_reqs_padded]"].trace)
        direct_trace = " ".join(step.note for step in by_buffer["self.seq_lens[:num_reqs_padded]"].trace)
        assert "`_via`" in spare and "`_via`" not in direct_trace


DUMMY_OUTSIDE_RUNNER = """\
import torch

from pkg.builder import build


class ModelRunner:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = scheduler_output.seq_lens
        self.seq_lens[num_reqs:num_reqs_padded] = 0
        return self._prepare(num_reqs, num_reqs_padded)

    def _dummy_run(self, num_tokens):
        num_reqs = min(num_tokens, 256)
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = 1
        return self._prepare(num_reqs_padded, num_reqs_padded)

    def _prepare(self, num_reqs, num_reqs_padded):
        return build(self.seq_lens[:num_reqs_padded])
"""

DUMMY_OUTSIDE_BUILDER = """\
def build(seq_lens):
    return CommonAttentionMetadata(seq_lens=seq_lens)
"""


def test_a_finding_at_a_sink_not_checked_says_its_path_is_a_dummy_run(tmp_path):
    # Only the runner is checked; the sink is in `builder.py`.  The real step resets the padding
    # rows; `_dummy_run` passes its padded count as `_prepare`'s real count and wrote only
    # `[:num_reqs]`: the one stale path is a dummy run, and the message reported at the slice says so.
    files = {"pkg/__init__.py": "", "pkg/runner.py": DUMMY_OUTSIDE_RUNNER, "pkg/builder.py": DUMMY_OUTSIDE_BUILDER}
    [f] = _run(tmp_path, files, check=["pkg/runner.py"])
    assert f.path.endswith("runner.py") and f.field == "seq_lens"
    assert "a module not checked here" in f.message
    assert "a dummy run (a call on it passes a padded count as the callee's real count)" in f.message


WRITER_BUFFERS = """\
import torch


class Buffers:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)


class Stats:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)

    def record(self, lens, num_reqs):
        self.seq_lens[:num_reqs] = lens


def prepare(bufs, lens, num_reqs, num_reqs_padded):
    bufs.seq_lens[:num_reqs] = lens
    RESET
"""

WRITER_RUNNER = """\
from pkg.buffers import Buffers, Stats, prepare


class ModelRunner:
    def __init__(self):
        self.buffers = Buffers()
        self.stats = Stats()

    def execute_model(self, lens, num_reqs, num_reqs_padded):
        self.stats.record(lens, num_reqs)
        prepare(self.buffers, lens, num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.buffers.seq_lens[:num_reqs_padded])
"""


def test_a_sink_not_checked_is_reported_at_the_checked_write_of_its_buffer(tmp_path):
    """pre-commit passes only `buffers.py`, whose `prepare` writes the real rows of the runner's
    buffer and (fixed) resets its padding rows.  The padded slice and the sink are both in
    `runner.py`, not checked: the deleted reset is reported at the write that stops at the real
    count (`bufs.seq_lens[:num_reqs] = lens`, the place to add it), naming the sink.  `Stats`
    writes its own `seq_lens`, another buffer that reaches no sink: no finding there."""
    files = {"pkg/__init__.py": "", "pkg/runner.py": WRITER_RUNNER,
             "pkg/buffers.py": WRITER_BUFFERS.replace("RESET", "pass")}
    [f] = _run(tmp_path, files, check=["pkg/buffers.py"])
    lines = (tmp_path / "pkg" / "buffers.py").read_text(encoding="utf-8").splitlines()
    assert f.path.endswith("buffers.py") and lines[f.line - 1].strip() == "bufs.seq_lens[:num_reqs] = lens"
    assert f.field == "seq_lens" and f.sink == "CommonAttentionMetadata" and f.fix is None
    assert "runner.py:12" in f.message and "a module not checked here" in f.message
    assert "`prepare` writes rows [:num_reqs] of `seq_lens` here" in f.message
    assert "resets rows [num_reqs:num_reqs_padded]: reset them after this write" in f.message
    assert f.trace[0].path.endswith("buffers.py") and f.trace[-1].path.endswith("runner.py")
    # the reset restored: quiet
    fixed = {**files, "pkg/buffers.py": WRITER_BUFFERS.replace("RESET", "bufs.seq_lens[num_reqs:num_reqs_padded] = 0")}
    assert _run(tmp_path, fixed, check=["pkg/buffers.py"]) == []
    # both files checked: the finding is at the sink, once
    [g] = _run(tmp_path, files)
    assert g.path.endswith("runner.py") and g.line == 12


WRITER_KERNEL = """\
import torch
import triton
import triton.language as tl


class Buffers:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)


@triton.jit
def _copy_kernel(out_ptr, src_ptr):
    i = tl.program_id(0)
    tl.store(out_ptr + i, tl.load(src_ptr + i))


@triton.jit
def _sum_kernel(total_ptr, src_ptr):
    i = tl.program_id(0)
    tl.atomic_add(total_ptr, tl.load(src_ptr + i))


class Stats:
    def __init__(self):
        self.total = torch.zeros(1, dtype=torch.int32)


def prepare(bufs, stats, lens, num_reqs, num_reqs_padded):
    _sum_kernel[(num_reqs,)](stats.total, bufs.seq_lens)
    _copy_kernel[(num_reqs,)](bufs.seq_lens, lens)
"""

KERNEL_RUNNER = """\
from pkg.buffers import Buffers, Stats, prepare


class ModelRunner:
    def __init__(self):
        self.buffers = Buffers()
        self.stats = Stats()

    def execute_model(self, lens, num_reqs, num_reqs_padded):
        prepare(self.buffers, self.stats, lens, num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.buffers.seq_lens[:num_reqs_padded])
"""


def test_a_kernel_launch_that_stores_through_the_buffer_is_a_write_of_it(tmp_path):
    """The checked file writes the runner's buffer only through a Triton kernel that stores
    through its pointer (`_copy_kernel`): the launch is the write the finding is reported at.
    `_sum_kernel` only loads from the buffer (it stores through another pointer): not a write
    of it, so its launch, the first statement of `prepare`, is not where the finding goes."""
    files = {"pkg/__init__.py": "", "pkg/runner.py": KERNEL_RUNNER, "pkg/buffers.py": WRITER_KERNEL}
    [f] = _run(tmp_path, files, check=["pkg/buffers.py"])
    lines = (tmp_path / "pkg" / "buffers.py").read_text(encoding="utf-8").splitlines()
    assert lines[f.line - 1].strip() == "_copy_kernel[(num_reqs,)](bufs.seq_lens, lens)"
    assert "`prepare` writes rows of `seq_lens` here, on the way" in f.message
    # a kernel that only reads the buffer writes nothing of it: no checked write, no finding
    reads_only = WRITER_KERNEL.replace("    _copy_kernel[(num_reqs,)](bufs.seq_lens, lens)\n", "")
    assert _run(tmp_path, {**files, "pkg/buffers.py": reads_only}, check=["pkg/buffers.py"]) == []


ALTERNATIVES = """\
import torch


class Base:
    def __init__(self):
        self.seq_lens = torch.zeros(256, dtype=torch.int32)


class Resetting(Base):
    def prepare(self, lens, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs] = lens
        RESET


class Silent(Base):
    def prepare(self, lens, num_reqs, num_reqs_padded):
        pass
"""

ALT_RUNNER = """\
from pkg.drafters import Resetting, Silent


class ModelRunner:
    def __init__(self, kind):
        self.drafter = Resetting() if kind else Silent()

    def execute_model(self, lens, num_reqs, num_reqs_padded):
        self.drafter.prepare(lens, num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(seq_lens=self.drafter.seq_lens[:num_reqs_padded])
"""


def test_a_write_of_another_dispatch_alternative_is_not_where_the_rows_go_stale(tmp_path):
    """`self.drafter` is a `Resetting` or a `Silent`: the slice reaches the sink stale on the
    `Silent` path (a run over both files reports it at the sink).  Checked alone, `drafters.py`'s
    only write of the buffer is in `Resetting.prepare`, which resets the padding rows right after:
    the stale rows do not come from there, so nothing is reported there.  With its reset deleted,
    `Resetting.prepare` is where they come from on its own path: reported at its write."""
    files = {"pkg/__init__.py": "", "pkg/runner.py": ALT_RUNNER,
             "pkg/drafters.py": ALTERNATIVES.replace("RESET", "self.seq_lens[num_reqs:num_reqs_padded] = 0")}
    assert [f.path.rsplit("/", 1)[-1] for f in _run(tmp_path, files)] == ["runner.py"]
    assert _run(tmp_path, files, check=["pkg/drafters.py"]) == []
    [f] = _run(tmp_path, {**files, "pkg/drafters.py": ALTERNATIVES.replace("RESET", "pass")},
               check=["pkg/drafters.py"])
    lines = (tmp_path / "pkg" / "drafters.py").read_text(encoding="utf-8").splitlines()
    assert lines[f.line - 1].strip() == "self.seq_lens[:num_reqs] = lens"
