"""A graph manager's capture on vLLM 0.33.0 (Model Runner V2's target-dependent drafter).

`TargetDependentARSpeculator.capture` (vllm/v1/worker/gpu/spec_decode/target_dependent_ar/
speculator.py) zeroes `self.idx_mapping` before `self.prefill_cudagraph_manager.capture(
self._prefill, ...)` and the decode manager's capture.  The captured steps read
`self.idx_mapping[:num_reqs]` on rows that hold no request, and sample into draft-logits rows
and write KV through the request-state rows it names: 0 is a live request's row.  vLLM 0.34.0
(`AutoRegressiveSpeculator.capture`) writes -1 instead, the value the kernels skip ("As in dummy
runs, -1 keeps draft steps from writing KV through a request-state row's stale block ids";
docs/historical-bugs.md, V34-2).  So the released file has one PAD002 at the fill (-1 is the
profile's neutral value of `idx_mapping`), and with 0.34.0's fill in its place (text only, the
rest of the package read from disk) none, and no PAD001 at the captures either.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

pytestmark = pytest.mark.corpus

TREE = Path.home() / ".cache" / "padlint-corpus" / "vllm-0.33.0"
DRAFTER = TREE / "vllm" / "v1" / "worker" / "gpu" / "spec_decode" / "target_dependent_ar" / "speculator.py"
ZERO = "        self.idx_mapping.zero_()\n"


@pytest.fixture(scope="module")
def drafter() -> str:
    if not DRAFTER.is_file():
        pytest.skip(f"vLLM 0.33.0 tree not extracted under {TREE}")
    return DRAFTER.read_text(encoding="utf-8")


def _idx_mapping(source: str) -> list[tuple[str, int]]:
    out = check_project([Source(str(DRAFTER), source)], load_profile("vllm"))
    findings = [f for res in out.values() if isinstance(res, list) for f in res]
    return sorted((f.code, f.line) for f in findings if f.field == "idx_mapping")


def test_the_capture_time_zero_is_not_the_neutral_value(drafter):
    assert drafter.count(ZERO) == 1
    line = drafter[:drafter.index(ZERO)].count("\n") + 1
    assert _idx_mapping(drafter) == [("PAD002", line)]


def test_the_fix_of_vllm_0_34_0_is_quiet(drafter):
    assert _idx_mapping(drafter.replace(ZERO, "        self.idx_mapping.fill_(-1)\n")) == []
