"""Real SGLang releases: the EAGLE draft runner's `positions` (issue 8 acceptance).

SGLang 0.5.2's `EAGLEDraftCudaGraphRunner.replay`
(sglang/srt/speculative/eagle_draft_cuda_graph_runner.py) copies only the
live rows [:raw_num_token] of `positions` into the persistent buffer and
replays a graph that was captured reading `self.positions[:num_tokens]`:
when `bs != raw_bs` the padding rows [raw_num_token:num_tokens] hold what an
earlier, larger replay left there.  SGLang 0.5.3 added `self.positions.zero_()`
under `if bs != raw_bs:` (the only change to that file besides an import).
So 0.5.2 must report `positions` at the replay and 0.5.3 must not.  Other
fields are not asserted here (`req_pool_indices` is unreset in both; 0.5.23
added its reset).
"""

from __future__ import annotations

import pytest

from padlint.analysis import check_source
from padlint.profile import load_profile

from tests import corpus_cache

pytestmark = pytest.mark.corpus

RUNNER = "sglang/srt/speculative/eagle_draft_cuda_graph_runner.py"


def _findings(version: str):
    try:
        root = corpus_cache.ensure("sglang", version)
    except corpus_cache.CorpusError as e:
        pytest.skip(f"SGLang {version} not available: {e}")
    path = root / RUNNER
    return path, check_source(path.read_text(encoding="utf-8"), str(path), load_profile("sglang"))


def test_sglang_0_5_2_reports_positions_in_the_replay():
    # twice, both in `replay`: where the padded slice is stored on the ForwardBatch the
    # runner was handed (`forward_batch.positions = self.positions[:num_tokens]`), and at the
    # graph replay, which reads the buffer the capture bound
    path, findings = _findings("0.5.2")
    hits = [f for f in findings if f.field == "positions"]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(hits) == 2, [(f.line, f.field) for f in findings]
    assert {f.function for f in hits} == {"EAGLEDraftCudaGraphRunner.replay"}
    assert {lines[f.line - 1].strip().split(" =")[0] for f in hits} == {"forward_batch.positions",
                                                                        "self.graphs[bs].replay()"}
    assert {(f.real, f.padded) for f in hits} == {("raw_num_token", "num_tokens")}


def test_sglang_0_5_3_does_not_report_positions():
    _path, findings = _findings("0.5.3")
    assert [f.line for f in findings if f.field == "positions"] == []


# SGLang 0.5.16's decode runner captured again while serving: `execute -> load_batch ->
# recapture_if_needed -> capture` runs the per-shape capture before the step writes anything, so
# the index buffers the captured forward reads (`capture_prepare`'s views) hold the previous
# batch's live KV slots and request rows.  0.5.17 added `self.buffers.reset_index_buffers()` to
# the capture, which zeroes them by reflection over the buffers dataclass's fields
# (docs/historical-bugs.md S8).  Checked alone from the tree root, as pre-commit would.
DECODE_RUNNER = "sglang/srt/model_executor/runner/decode_cuda_graph_runner.py"
INDEX_FIELDS = {"req_pool_indices", "out_cache_loc", "mamba_track_indices"}


def _capture_findings(version: str) -> list[tuple[str, str, list[tuple[str, ...]]]]:
    """(field, message, call paths) of the capture findings, the file checked alone as the CLI
    checks it (on an analysis thread); the paths are the engine's facts behind each finding
    (function names, entry point first), of which the message names a few."""
    from padlint.analysis.engine import Source, check_project
    from padlint.parse import with_big_stack

    try:
        root = corpus_cache.ensure("sglang", version)
    except corpus_cache.CorpusError as e:
        pytest.skip(f"SGLang {version} not available: {e}")
    path = root / DECODE_RUNNER
    facts: dict = {}
    res = with_big_stack(lambda srcs: check_project(srcs, load_profile("sglang"), facts=facts),
                         [Source(str(path), path.read_text(encoding="utf-8"))])[str(path)]
    assert isinstance(res, list), res
    return sorted((f.field, f.message, facts.get((f.path, f.line, f.field), [])) for f in res
                  if "at capture" in f.message and "hold no request" in f.message)


def _through(path: tuple[str, ...], *names: str) -> bool:
    """Whether the call path passes through ``names`` in that order, one right after another
    (a method named with its class, ``DecodeCudaGraphRunner.__init__``, by its own name)."""
    short = tuple(p.rsplit(".", 1)[-1] for p in path)
    n = len(names)
    return any(short[i:i + n] == names for i in range(len(short) - n + 1))


def test_sglang_0_5_16_reports_the_recapture():
    # reported on the paths through `execute` (the recapture while serving: execute -> load_batch
    # -> recapture_if_needed -> capture), which the engine reaches from the runner's callers
    got = _capture_findings("0.5.16")
    assert {field for field, _, _ in got} == INDEX_FIELDS, got
    for field, _message, paths in got:
        assert any(_through(p, "execute", "load_batch", "recapture_if_needed", "capture") for p in paths), (field, paths)


def test_sglang_0_5_16_reports_the_first_capture_too():
    # and from the constructor (the first capture, over buffers `DecodeInputBuffers.create` makes
    # and `share_buffers()` pools, whose rows may be another runner's: the pool is keyed by
    # `(name, numel, dtype, device)`, and `capture` refills the pooled `seq_lens` first, which
    # must not count as a reset of the other pooled buffers)
    got = _capture_findings("0.5.16")
    assert {field for field, _, _ in got} == INDEX_FIELDS, got
    for field, _message, paths in got:
        assert any(_through(p, "__init__", "capture") for p in paths), (field, paths)


def test_sglang_0_5_17_resets_the_index_buffers_before_a_capture():
    assert [(field, message) for field, message, _ in _capture_findings("0.5.17")] == []


# SGLang 0.5.20's `MambaMixer2.forward` allocated its output `torch.empty` with the padded
# batch's rows (`projected_states.shape[0]`), wrote it only through
# `preallocated_ssm_out[:num_actual_tokens]` and handed the whole tensor to the gated norm; 0.5.21
# zeroes the tail ("Rows past the batch's tokens are DP padding; keep them finite";
# docs/historical-bugs.md S13).
MAMBA = "sglang/srt/layers/attention/mamba/mamba.py"


def _uninit_findings(version: str) -> list:
    try:
        root = corpus_cache.ensure("sglang", version)
    except corpus_cache.CorpusError as e:
        pytest.skip(f"SGLang {version} not available: {e}")
    path = root / MAMBA
    return [f for f in check_source(path.read_text(encoding="utf-8"), str(path), load_profile("sglang"))
            if f.code == "PAD005" and f.sink == "whole-tensor read"]


def test_sglang_0_5_20_reports_the_uninitialised_mamba_output_rows():
    got = _uninit_findings("0.5.20")
    assert [(f.function, f.field, f.real, f.padded) for f in got] == [
        ("MambaMixer2.forward", "preallocated_ssm_out", "num_actual_tokens", "projected_states.shape[0]")]
    assert got[0].fix is not None and got[0].fix.text == "preallocated_ssm_out[num_actual_tokens:].zero_()"


def test_sglang_0_5_21_zeroes_the_tail():
    assert _uninit_findings("0.5.21") == []


# SGLang 0.5.11's decode runner (`model_executor/cuda_graph_runner.py`) replays
# `self.graphs[graph_key]`, `graph_key = self._make_graph_key(self.bs, stream_idx, variant_label)`,
# with `self.bs` / `self.raw_bs` stored by `replay_prepare`, which `replay` calls only
# `if not skip_attn_backend_init:`.  The prepare zeroes `out_cache_loc` when `bs != raw_bs` but not
# the SWA slot buffer `out_cache_loc_swa`, which the captured graph reads to `bs * num_tokens_per_bs`
# rows: padding tokens write SWA KV into live slots.  0.5.12 adds the reset ("Padded SWA indices left
# over from a previous replay would point into real SWA slots"; docs/historical-bugs.md S11-1).
DECODE_RUNNER_0_5_1X = "sglang/srt/model_executor/cuda_graph_runner.py"


def _replay_findings(version: str) -> dict:
    try:
        root = corpus_cache.ensure("sglang", version)
    except corpus_cache.CorpusError as e:
        pytest.skip(f"SGLang {version} not available: {e}")
    path = root / DECODE_RUNNER_0_5_1X
    lines = path.read_text(encoding="utf-8").splitlines()
    return {f.field: f for f in check_source(path.read_text(encoding="utf-8"), str(path), load_profile("sglang"))
            if f.code == "PAD001" and lines[f.line - 1].strip() == "self.graphs[graph_key].replay()"}


def test_sglang_0_5_11_reports_the_swa_slots_at_the_replay():
    got = _replay_findings("0.5.11")
    assert "out_cache_loc_swa" in got, sorted(got)
    f = got["out_cache_loc_swa"]
    assert (f.function, f.real, f.padded) == ("CudaGraphRunner.replay", "raw_bs*self.num_tokens_per_bs",
                                              "self.bs * self.num_tokens_per_bs")
    # `out_cache_loc` is zeroed under `if bs != raw_bs:` in the prepare: not reported
    assert "out_cache_loc" not in got


def test_sglang_0_5_12_resets_the_swa_slots():
    got = _replay_findings("0.5.12")
    assert "out_cache_loc_swa" not in got and "out_cache_loc" not in got, sorted(got)
    # the buffers neither release resets at the replay are reported in both (`req_pool_indices`)
    assert "req_pool_indices" in got


# SGLang 0.5.17's prefill runner pads the request axis of its full graphs to
# `self._capture_req_slots` and, at replay, resets rows `[bs:r]` of its static buffers (`bs =
# forward_batch.batch_size`, `r = self._capture_req_slots`: no count the profile names; the
# resets say which rows are padding rows) but not of the registry's Mamba track slots, which the
# captured track scatter reads too: a stale mask row "would land this replay's window in an
# earlier request's checkpoint".  0.5.18 adds `registry.get_slot(name).buffer[bs:r].zero_()` for
# `mamba_track_mask` and `mamba_track_indices` (docs/historical-bugs.md S11).  Checked alone from
# the tree root, as pre-commit would.
PREFILL_RUNNER = "sglang/srt/model_executor/runner/prefill_cuda_graph_runner.py"
TRACK_FIELDS = {"mamba_track_mask", "mamba_track_indices"}


def _prefill_replay_findings(version: str) -> set[tuple[str, str]]:
    """(field, the replayed line's text) of the findings at a graph replay of the prefill runner."""
    from padlint.analysis.engine import Source, check_project
    from padlint.parse import with_big_stack

    try:
        root = corpus_cache.ensure("sglang", version)
    except corpus_cache.CorpusError as e:
        pytest.skip(f"SGLang {version} not available: {e}")
    path = root / PREFILL_RUNNER
    text = path.read_text(encoding="utf-8")
    res = with_big_stack(lambda srcs: check_project(srcs, load_profile("sglang")), [Source(str(path), text)])[str(path)]
    assert isinstance(res, list), res
    lines = text.splitlines()
    return {(f.field, lines[f.line - 1].strip()) for f in res
            if f.code == "PAD001" and "CUDA graph replayed here" in f.message}


def test_sglang_0_5_17_reports_the_mamba_track_slots_at_the_replay():
    got = _prefill_replay_findings("0.5.17")
    assert {field for field, _ in got} >= TRACK_FIELDS, sorted(got)
    # at the replay in the nested function the runner installs as the model's layer forward too
    assert {(field, line.split("(")[0]) for field, line in got if field in TRACK_FIELDS} >= {
        ("mamba_track_mask", "hs = self.backend.replay"), ("mamba_track_indices", "hs = self.backend.replay")}, sorted(got)


def test_sglang_0_5_18_resets_them():
    got = _prefill_replay_findings("0.5.18")
    assert not {field for field, _ in got} & TRACK_FIELDS, sorted(got)
