"""Containers of padded views: dicts and lists whose keys the analysis does not know.

The shape is vLLM 0.33.0's `GPUModelRunner._get_slot_mappings`, written from scratch: a nested
function slices the slot mapping to the padded token count and resets its tail with -1; a dict
comprehension keeps one such view per KV-cache group; a loop files each under its layers'
names; the runner passes `by_gid[0]` to the attention metadata and the per-layer dict to
`set_forward_context` (a sink of the vLLM profile), and the dummy run resets every element
with `for sm in by_gid.values(): sm.fill_(-1)`.
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

RUNNER = """\
import torch
from vllm.forward_context import set_forward_context


class CommonAttentionMetadata:
    def __init__(self, slot_mapping):
        self.slot_mapping = slot_mapping


class Runner:
    def __init__(self, n, groups):
        self.slot_mapping = torch.zeros(n, dtype=torch.int64)
        self.groups = groups

    def _get_slot_mappings(self, num_tokens_unpadded, num_tokens_padded):
        def _get_slot_mapping(gid):
            slot_mapping = self.slot_mapping[:num_tokens_padded]
            slot_mapping[num_tokens_unpadded:num_tokens_padded].fill_(-1)  # RESET
            return slot_mapping

        by_gid = {gid: _get_slot_mapping(gid) for gid, _ in enumerate(self.groups)}
        by_layer: dict[str, torch.Tensor] = {}
        for gid, group in enumerate(self.groups):
            sm = by_gid[gid]
            for name in group.layer_names:
                by_layer[name] = sm
        return by_gid, by_layer

    def execute(self, num_tokens, num_tokens_padded):
        by_gid, by_layer = self._get_slot_mappings(num_tokens, num_tokens_padded)
        meta = CommonAttentionMetadata(slot_mapping=by_gid[0])  # META
        with set_forward_context(meta, None, slot_mapping=by_layer):  # CONTEXT
            return self.model(num_tokens_padded)

    def dummy(self, num_tokens, num_tokens_padded):
        by_gid, by_layer = self._get_slot_mappings(num_tokens, num_tokens_padded)
        for sm in by_gid.values():
            sm.fill_(-1)  # DUMMY_RESET
        return CommonAttentionMetadata(slot_mapping=by_gid[0])  # DUMMY_META
"""


def _run(tmp_path, text: str):
    p = tmp_path / "runner.py"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile("vllm"))
    found = [f for fs in res.values() if isinstance(fs, list) for f in fs]
    marks = {m: i + 1 for i, line in enumerate(text.splitlines()) for m in ("META", "CONTEXT", "DUMMY_META")
             if line.endswith(f"# {m}")}
    return found, marks


def _drop(text: str, mark: str) -> str:
    """The statement marked ``# mark`` replaced by ``pass`` (same indentation)."""
    out = []
    for line in text.splitlines():
        if line.endswith(f"# {mark}"):
            line = line[: len(line) - len(line.lstrip())] + "pass"
        out.append(line)
    return "\n".join(out) + "\n"


def test_views_made_in_a_comprehension_keep_the_reset_that_made_them(tmp_path):
    found, _ = _run(tmp_path, RUNNER)
    assert found == []


def test_without_the_reset_every_container_sink_is_reported(tmp_path):
    # the dict element (`by_gid[0]`) at the metadata and the per-layer dict at the forward
    # context; the dummy run resets every element in its loop, so its metadata stays quiet
    found, marks = _run(tmp_path, _drop(RUNNER, "RESET"))
    got = sorted((f.line, f.sink, f.field) for f in found)
    assert got == [(marks["META"], "CommonAttentionMetadata", "slot_mapping"),
                   (marks["CONTEXT"], "set_forward_context", "slot_mapping")]
    context = next(f for f in found if f.sink == "set_forward_context")
    # a dict holds the views: no reset statement of the argument itself is proposed
    assert "`by_layer` holds the padded slice" in context.message and context.fix is None


def test_loop_over_the_values_resets_each_element(tmp_path):
    # without the runner's reset and without the dummy run's loop, the dummy metadata is stale too
    found, marks = _run(tmp_path, _drop(_drop(RUNNER, "RESET"), "DUMMY_RESET"))
    assert (marks["DUMMY_META"], "slot_mapping") in {(f.line, f.field) for f in found}


def test_views_in_a_container_keep_their_paths_resets_at_a_join(tmp_path):
    # SGLang 0.5.23 `PrefillCudaGraphRunner.capture_prepare` (written from scratch): under
    # `if self.static is not None:` every row of the static buffer is written and its views are
    # filed in the dict by a loop over names; the other path fills the dict with fresh tensors.
    # After the join the dict's views still carry the write of their own path: quiet.
    text = """\
import torch

NAMES = ("seq_lens",)


class CommonAttentionMetadata:
    def __init__(self, seq_lens):
        self.seq_lens = seq_lens


class Runner:
    def __init__(self, n):
        self.static = torch.zeros(n, dtype=torch.int32)

    def capture_prepare(self, num_reqs, num_reqs_padded, fresh):
        inputs = {"seq_lens": torch.ones(num_reqs_padded, dtype=torch.int32)}
        if self.static is not None:
            self.static[:num_reqs_padded].copy_(fresh)  # WRITE
            for name in NAMES:
                inputs[name] = self.static[:num_reqs_padded]
        return CommonAttentionMetadata(seq_lens=inputs["seq_lens"])
"""
    found, _ = _run(tmp_path, text)
    assert found == []
    # without the write, the static buffer's padding rows reach the sink stale
    found, _ = _run(tmp_path, _drop(text, "WRITE"))
    assert [f.field for f in found] == ["seq_lens"]
