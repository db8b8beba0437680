"""Attributes that describe a tensor (``shape``, ``dtype``, ``device``...) are not buffers.

The shape is vLLM 0.33.0's drafter ``_get_slot_mapping`` (``extract_hidden_states.py``),
written from scratch: the step's slot mapping, read from a metadata object passed in (a
field its class declares a tensor), is copied into the persistent buffer's first
``num_actual = slot_mapping.shape[0]`` rows, and rows ``[num_actual:num_tokens]`` are
filled with -1 when there are any (the caller knows its real count ``num_tokens`` and
passes the padded one, as the drafter's ``propose`` does).  Every padding row of the view handed to
``set_forward_context`` is then reset.  ``slot_mapping.shape`` of an object's field
used to be taken for another field of that object (a location), so ``num_actual`` was a
view, the copy and the reset bounded by it were not seen, and the slice was reported
stale (the false positive at ``extract_hidden_states.py:164`` in docs/triage-vllm-0.33.0.md).
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

_MODULE = '''\
import torch
from dataclasses import dataclass

from vllm.forward_context import set_forward_context


@dataclass
class CommonAttentionMetadata:
    slot_mapping: torch.Tensor
    num_actual_tokens: int


class Proposer:
    def __init__(self, max_num_tokens):
        self._slot_mapping_buffer = torch.zeros(max_num_tokens, dtype=torch.int64)

    def propose(self, common_attn_metadata: CommonAttentionMetadata, num_tokens: int, num_tokens_padded: int):
        with set_forward_context(None, None, slot_mapping=self._get_slot_mapping(
                num_tokens_padded, common_attn_metadata.slot_mapping)):
            return self.model(num_tokens_padded)

    def _get_slot_mapping(self, num_tokens, slot_mapping=None):
        if slot_mapping is not None:
            num_actual = slot_mapping.shape[0]
            self._slot_mapping_buffer[:num_actual].copy_(slot_mapping)
{TAIL}
        return self._slot_mapping_buffer[:num_tokens]
'''

_RESET = '''\
            if num_tokens > num_actual:
                self._slot_mapping_buffer[num_actual:num_tokens].fill_(-1)
'''


def _check(tmp_path, text: str):
    p = tmp_path / "proposer.py"
    p.write_text(text, encoding="utf-8")
    res = check_project([Source(str(p), text)], load_profile("vllm"))
    return [f for fs in res.values() if isinstance(fs, list) for f in fs]


def test_rows_past_the_copied_shape_reset_are_clean(tmp_path):
    assert _check(tmp_path, _MODULE.replace("{TAIL}\n", _RESET)) == []


def test_without_the_reset_the_rows_past_the_shape_are_stale(tmp_path):
    # the copy writes rows [:num_actual] only; the rest of the view keeps an earlier step's slots
    found = _check(tmp_path, _MODULE.replace("{TAIL}\n", ""))
    assert [(f.code, f.field, f.sink) for f in found] == [("PAD001", "slot_mapping", "set_forward_context")]


def test_shape_of_a_field_is_not_a_location(tmp_path):
    # `x.shape[0]` as a slice bound of a reset: the reset covers the rows from there (no
    # finding), whatever object `x` was read from
    text = textwrap.dedent('''\
        import torch

        from vllm.forward_context import set_forward_context


        class Runner:
            def __init__(self, n):
                self.slot_mapping = torch.zeros(n, dtype=torch.int64)

            def step(self, batch, num_tokens, num_tokens_padded):
                n = batch.slot_mapping.shape[0]
                self.slot_mapping[:n].copy_(batch.slot_mapping)
                self.slot_mapping[n:num_tokens_padded].fill_(-1)
                with set_forward_context(None, None, slot_mapping=self.slot_mapping[:num_tokens_padded]):
                    return self.model(num_tokens_padded)
        ''')
    assert _check(tmp_path, text) == []
