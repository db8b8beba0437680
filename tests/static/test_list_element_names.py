"""A padded slice of a persistent list's element, named by a comprehension's local.

Model Runner V2's drafters build ``[x[:num_reqs_padded] for x in self.block_tables.input_block_tables]``
(vLLM 0.33.0 ``spec_decode/speculator.py``).  The finding said "`x[:num_reqs_padded]` ... of
persistent buffer `x`", naming a local that exists only inside the comprehension, and its fix
(``x[num_reqs:num_reqs_padded] = 0`` before the sink) would raise NameError where it was
inserted.  The message now names the list, and the fix resets that rows of every element.
Written from scratch.
"""

from __future__ import annotations

from padlint.analysis import check_source
from padlint.profile import load_profile

SRC = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.input_block_tables = [torch.zeros(max_num_reqs, 16, dtype=torch.int32) for _ in range(2)]

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        block_tables = [x[:num_reqs_padded] for x in self.input_block_tables]
        RESET
        return CommonAttentionMetadata(block_table_tensor=block_tables[0], num_reqs=num_reqs_padded)
'''


def _check(reset: str = "pass"):
    return check_source(SRC.replace("RESET", reset), "runner.py", load_profile("vllm"))


def test_the_message_and_the_trace_name_the_list():
    # nothing writes the tables on this step: rows [num_reqs:num_reqs_padded] of each element are
    # stale when the first reaches the metadata (line 14)
    (f,) = _check()
    assert f.line == 14
    assert f.message.startswith("`x[:num_reqs_padded]` is a padded slice of an element of "
                                "`input_block_tables`, a persistent buffer; rows [num_reqs:num_reqs_padded]")
    assert "padded slice `x[:num_reqs_padded]` of `x`, an element of the persistent list " \
        "`self.input_block_tables`: its padding rows" in [s.note for s in f.trace][1]
    assert "persistent buffer `x`" not in " ".join(s.note for s in f.trace)


def test_the_fix_resets_every_element_and_clears_the_finding():
    # `x` is not bound at line 14: the fix loops over the list instead
    (f,) = _check()
    assert f.fix is not None and f.fix.line == 14
    assert f.fix.text == "for x in self.input_block_tables: x[num_reqs:num_reqs_padded] = 0"
    # the statement, inserted before the sink, leaves no finding
    assert _check(f.fix.text) == []

