"""PAD005 and the never-written fact on vLLM 0.33.0 (Model Runner V2 speculator).

`DraftModelSpeculator.__init__` (vllm/v1/worker/gpu/spec_decode/speculator.py:168)
allocates `self.draft_is_prefilling = torch.zeros(self.max_num_reqs, dtype=torch.bool)`
and nothing in vLLM writes it: its only other use is
`is_prefilling=self.draft_is_prefilling[:num_reqs_padded]` (speculator.py:404),
handed to `build_attn_metadata` (vllm/v1/worker/gpu/attn_utils.py), which passes it
through `dict.pop("is_prefilling", is_prefilling)` into `CommonAttentionMetadata`;
the only uses of `.is_prefilling` in the tree read it (mamba_attn.py clones it
before writing, kda_metadata.py indexes it).  So the buffer facts must say
"never written, every row False", and PAD001, which used to report the
`is_prefilling=` argument of `CommonAttentionMetadata` in attn_utils.py on the
speculator's paths (docs/triage-vllm-0.33.0.md, finding 10, a false positive),
must not; PAD005 must not either (False is the neutral value of `is_prefilling`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from padlint.analysis.buffers import BufferIndex
from padlint.analysis.engine import Source, check_project
from padlint.analysis.project import Project
from padlint.profile import load_profile

pytestmark = pytest.mark.corpus

TREE = Path.home() / ".cache" / "padlint-corpus" / "vllm-0.33.0"
SPEC = TREE / "vllm" / "v1" / "worker" / "gpu" / "spec_decode" / "speculator.py"
ATTN = TREE / "vllm" / "v1" / "worker" / "gpu" / "attn_utils.py"


@pytest.fixture(scope="module")
def tree() -> Path:
    if not SPEC.is_file() or not ATTN.is_file():
        pytest.skip(f"vLLM 0.33.0 tree not extracted under {TREE}")
    return TREE


def test_draft_is_prefilling_is_never_written(tree):
    project = Project()
    project.add_source(str(SPEC), SPEC.read_text(encoding="utf-8"))
    idx = BufferIndex(project, load_profile("vllm"))
    facts = idx.facts("draft_is_prefilling")
    assert facts.writes == [], facts.writes
    assert [(Path(s.path).name, s.line, v) for s, v in facts.allocations] == [("speculator.py", 168, "0")]
    init = idx.initial("draft_is_prefilling")
    assert init is not None and init.value == "0" and init.site.line == 168
    # a buffer name that a step writes is not claimed: `.draft_tokens` is written by
    # `self.draft_tokens[req_idx].zero_()` (states.py:118) and a store in model_runner.py:2326
    assert idx.facts("draft_tokens").writes


def test_no_finding_for_draft_is_prefilling(tree):
    sources = [Source(str(p), p.read_text(encoding="utf-8")) for p in (ATTN, SPEC)]
    out = check_project(sources, load_profile("vllm"))
    findings = [f for res in out.values() if isinstance(res, list) for f in res]
    about = [(f.code, f.path, f.line, f.field) for f in findings
             if "draft_is_prefilling" in f.buffer or "draft_is_prefilling" in f.message]
    assert about == [], about
