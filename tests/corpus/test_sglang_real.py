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
