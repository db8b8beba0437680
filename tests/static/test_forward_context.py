"""`set_forward_context(...)` is a sink of the vLLM profile (`[sinks] calls`): every layer of the
forward pass reads its arguments (attention writes KV at `slot_mapping`, MoE skips the tokens
`is_padding` marks).  The shape is vLLM 0.33.0's `_prepare_padding_mask` / MRV2's
`prepare_inputs`, written from scratch: the mask's real rows are written False, its padding rows
must be written True (`[fields.is_padding] neutral = "True"`)."""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile


def _runner(body: str) -> str:
    """The runner module with ``body`` (dedented) as the step's mask writes."""
    return textwrap.dedent("""\
        import torch
        from vllm import envs
        from vllm.forward_context import set_forward_context


        class Runner:
            def __init__(self, max_num_tokens):
                self.is_padding = torch.zeros(max_num_tokens, dtype=torch.bool)

            def execute(self, num_tokens, num_tokens_padded):
                is_padding = self.is_padding[:num_tokens_padded]
        """) + textwrap.indent(textwrap.dedent(body), "        ") + (
        "        with set_forward_context(None, None, num_tokens=num_tokens_padded, is_padding=is_padding):\n"
        "            return self.model(num_tokens_padded)\n")


def _check(tmp_path, text: str):
    p = tmp_path / "runner.py"
    p.write_text(text, encoding="utf-8")
    res = check_project([Source(str(p), text)], load_profile("vllm"))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


def _run(tmp_path, tail: str):
    """The real rows written False, then ``tail``."""
    return _check(tmp_path, _runner("is_padding[:num_tokens].fill_(False)\n" + textwrap.dedent(tail)))


def test_mask_padding_rows_not_written_reach_the_forward_context(tmp_path):
    # rows [num_tokens:num_tokens_padded] keep an earlier step's mask (False where that step
    # had real tokens): MoE would route those padding tokens
    found = _run(tmp_path, "")
    assert [(f.code, f.field, f.sink, f.severity) for f in found] == [
        ("PAD001", "is_padding", "set_forward_context", "error")]
    assert found[0].fix is not None and found[0].fix.text == "is_padding[num_tokens:] = True"


def test_padding_rows_marked_true_are_quiet(tmp_path):
    assert _run(tmp_path, "is_padding[num_tokens:].fill_(True)\n") == []


def test_padding_rows_marked_false_break_the_contract(tmp_path):
    # covered, so not stale (PAD001 quiet), but False is not the mask's neutral value: PAD002
    found = _run(tmp_path, "is_padding[num_tokens:].fill_(False)\n")
    assert [(f.code, f.field) for f in found] == [("PAD002", "is_padding")]


def test_reset_under_the_consumers_own_condition_counts(tmp_path):
    # `[fields.is_padding] read_when = "envs.VLLM_MOE_SKIP_PADDING"`: MoE reads the mask only
    # when the flag is set, and the runner marks it only then (vLLM 0.33.0 MRV2 prepare_inputs);
    # on the path where the flag is off the mask is not read, so nothing is stale there
    text = _runner("""\
        if envs.VLLM_MOE_SKIP_PADDING:
            is_padding[:num_tokens].fill_(False)
            is_padding[num_tokens:].fill_(True)
    """)
    assert _check(tmp_path, text) == []


def test_another_condition_does_not_excuse_the_other_path(tmp_path):
    # under a condition the consumer does not test, the path that skips the reset is stale; so
    # are the real rows the path skips writing: two findings (the padding rows, rows [0:num_tokens])
    text = _runner("""\
        if self.use_moe:
            is_padding[:num_tokens].fill_(False)
            is_padding[num_tokens:].fill_(True)
    """)
    found = _check(tmp_path, text)
    assert [f.field for f in found] == ["is_padding", "is_padding"]
    assert sum("rows [0:num_tokens]" in f.message and "`self.use_moe` fails" in f.message for f in found) == 1


_HELPER = textwrap.dedent("""\
    import torch
    from vllm.forward_context import set_forward_context


    class Runner:
        def __init__(self, max_num_tokens):
            self.is_padding = torch.zeros(max_num_tokens, dtype=torch.bool)

        def _prepare_padding_mask(self, num_tokens_unpadded, num_tokens_padded):
            padding_mask = self.is_padding[:num_tokens_padded]
            padding_mask[:num_tokens_unpadded].fill_(False)
    {TAIL}
            return padding_mask

        def execute(self, num_tokens_unpadded, num_tokens_padded):
            is_padding = self._prepare_padding_mask(num_tokens_unpadded, num_tokens_padded)
            with set_forward_context(None, None, num_tokens=num_tokens_padded, is_padding=is_padding):
                return self.model(num_tokens_padded)
    """)


def test_a_helper_named_for_padding_returns_its_view(tmp_path):
    # vLLM 0.33.0 `_prepare_padding_mask` (gpu_model_runner.py): a method whose name says
    # "padding" and that takes a real count was taken for a padding helper returning a padded
    # count, so the mask it returns was a number and never checked at the sink
    assert _check(tmp_path, _HELPER.replace("{TAIL}", "        padding_mask[num_tokens_unpadded:].fill_(True)")) == []
    found = _check(tmp_path, _HELPER.replace("{TAIL}\n", ""))
    assert [(f.code, f.field, f.sink) for f in found] == [("PAD001", "is_padding", "set_forward_context")]
