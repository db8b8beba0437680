"""A real count the profile does not list, named by its padded partner in the same function
(issue 8: "counts as relations ... the ``X``/``X_padded`` rule as hints, plus what the code
says").

The shape is vLLM 0.33.0 Model Runner V2's ``FastPrefillHelper.prepare``
(``v1/worker/gpu/attn_utils.py``): ``num_logits = logits_indices.shape[0]`` rows of a
persistent buffer are written, the captured size is looked up
(``num_logits_padded = min(desc.num_tokens, ...)``), and ``buf[:num_logits_padded]`` is handed
to the attention metadata through a ``**kwargs`` dict.  ``num_logits_padded`` was a padded count
by the ``X_padded`` rule, but ``num_logits`` (a number read off a parameter's shape) was nothing
to the analysis, so no real partner was known on the path and every row of the slice counted as
real.  A function that names both ``X`` and ``X_padded`` says that ``X`` is the real count.
Written from scratch; the expected findings are reasoned in each test.
"""

from __future__ import annotations

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

HELPER = '''\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    logits_indices_padded: torch.Tensor | None = None


@dataclass
class FastPrefillBatch:
    logits_indices_padded: torch.Tensor
    num_logits_indices: int


class Helper:
    def __init__(self, graphs, max_num_tokens):
        self.graphs = graphs
        self.max_num_tokens = max_num_tokens
        self.buf = torch.zeros(max_num_tokens, dtype=torch.int32)

    def prepare(self, logits_indices, has_prefill):
        if not has_prefill:
            return None
        buf = self.buf
        num_logits = {COUNT}
        buf[:num_logits].copy_(logits_indices)
        {RESET}
        desc = self.graphs.dispatch(num_tokens=num_logits)
        num_logits_padded = min(desc.num_tokens, self.max_num_tokens)
        return FastPrefillBatch(logits_indices_padded=buf[:num_logits_padded],
                                num_logits_indices=num_logits)


def build(seq_lens, num_reqs, fast_prefill=None):
    extra = {}
    if fast_prefill is not None:
        extra.update(logits_indices_padded=fast_prefill.logits_indices_padded)
    return CommonAttentionMetadata(seq_lens=seq_lens[:num_reqs], **extra)


class Runner:
    def __init__(self):
        self.helper = Helper(None, 64)

    def execute_model(self, logits_indices, seq_lens, num_reqs, has_prefill):
        fast_prefill = self.helper.prepare(logits_indices, has_prefill)
        return build(seq_lens, num_reqs, fast_prefill=fast_prefill)
'''

SINK_LINE = 40  # `CommonAttentionMetadata(..., **extra)` in build


def _findings(tmp_path, count: str = "logits_indices.shape[0]", reset: str = "pass"):
    p = tmp_path / "helper.py"
    p.write_text(HELPER.replace("{COUNT}", count).replace("{RESET}", reset), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("vllm"))
    return [(f.line, f.field, f.message) for fs in res.values() if isinstance(fs, list) for f in fs]


def test_rows_past_the_real_count_reach_the_metadata_through_kwargs(tmp_path):
    # rows [:num_logits] are written; rows [num_logits:num_logits_padded] hold what an earlier
    # step left and reach CommonAttentionMetadata(logits_indices_padded=) through `extra`
    got = _findings(tmp_path)
    assert [(line, fld) for line, fld, _m in got] == [(SINK_LINE, "logits_indices_padded")]
    assert "rows [num_logits:num_logits_padded]" in got[0][2]


def test_the_count_bound_to_a_parameter_is_the_real_count_too(tmp_path):
    # the number comes from the caller instead of a shape: the same pair, the same finding
    got = _findings(tmp_path, count="int(has_prefill)")
    assert [(line, fld) for line, fld, _m in got] == [(SINK_LINE, "logits_indices_padded")]


def test_the_tail_reset_makes_it_quiet(tmp_path):
    # vLLM's own reset: the padding rows are broadcast from the last real index
    assert _findings(tmp_path, reset="buf[num_logits:] = logits_indices[-1]") == []


def test_a_padded_count_named_otherwise_gives_the_same_finding(tmp_path):
    # with the padded count called `limit` (no `_padded` name), the write extent already said
    # it: `num_logits` rows written, `limit` handed out.  The `X_padded` name must not make
    # the analysis know less than no name does (before, it did: every row counted as real)
    p = tmp_path / "helper.py"
    text = HELPER.replace("{COUNT}", "logits_indices.shape[0]").replace("{RESET}", "pass")
    p.write_text(text.replace("num_logits_padded", "limit"), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("vllm"))
    got = [(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs]
    assert got == [(SINK_LINE, "logits_indices_padded")]
