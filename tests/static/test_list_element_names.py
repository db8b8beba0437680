"""A padded slice of a persistent list's element, named by a comprehension's local.

Model Runner V2's drafters build ``[x[:num_reqs_padded] for x in self.block_tables.input_block_tables]``
(vLLM 0.33.0 ``spec_decode/speculator.py``).  The finding said "`x[:num_reqs_padded]` ... of
persistent buffer `x`", naming a local that exists only inside the comprehension, and its fix
(``x[num_reqs:num_reqs_padded] = 0`` before the sink) would raise NameError where it was
inserted.  The message now names the list, and the fix resets those rows of every element, with
a loop variable the file does not use (the local may be bound at the sink to something else),
only where the slice's own line iterates over the list as the code names it in the sink's
function.
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
                                "`self.input_block_tables`, a persistent buffer; rows [num_reqs:num_reqs_padded]")
    assert "padded slice `x[:num_reqs_padded]` of `x`, an element of " \
        "`self.input_block_tables`: its padding rows" in [s.note for s in f.trace][1]
    assert "persistent buffer `x`" not in " ".join(s.note for s in f.trace)


def test_the_fix_resets_every_element_and_clears_the_finding():
    # `x` is not bound at line 14: the fix loops over the list instead, with a name the file
    # does not use (`buf`)
    (f,) = _check()
    assert f.fix is not None and f.fix.line == 14
    assert f.fix.text == "for buf in self.input_block_tables: buf[num_reqs:num_reqs_padded] = 0"
    # the statement, inserted before the sink, leaves no finding
    assert _check(f.fix.text) == []



def test_the_loop_variable_of_the_fix_shadows_nothing():
    # `buf` is a name of the module (and `x` a local bound at the sink to another buffer): the
    # fix takes the next free name, and the sink's `x` keeps its value
    src = SRC.replace("RESET", "x = self.input_block_tables[0][:num_reqs]\n        buf = None")
    src = src.replace("block_table_tensor=block_tables[0],", "block_table_tensor=block_tables[0], slot_mapping=x,")
    found = check_source(src, "runner.py", load_profile("vllm"))
    (f,) = [f for f in found if f.field == "block_table_tensor"]
    assert f.fix is not None
    assert f.fix.text == "for padded_buf in self.input_block_tables: padded_buf[num_reqs:num_reqs_padded] = 0"


HELPER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


def build(tables, num_reqs, num_reqs_padded):
    block_tables = [x[:num_reqs_padded] for x in tables]
    return CommonAttentionMetadata(block_table_tensor=block_tables[0], num_reqs=num_reqs_padded)


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.input_block_tables = [torch.zeros(max_num_reqs, 16, dtype=torch.int32) for _ in range(2)]

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        return build(self.input_block_tables, num_reqs, num_reqs_padded)
'''


def test_the_list_is_named_as_the_function_that_slices_it_names_it():
    # the sink is in `build`, which knows the list as `tables` (its parameter): the message and
    # the fix name `tables`, not the entry point's `self.input_block_tables` (unbound there)
    (f,) = check_source(HELPER, "runner.py", load_profile("vllm"))
    assert f.line == 7
    assert "an element of `tables`" in f.message
    assert f.fix is not None and f.fix.text == "for buf in tables: buf[num_reqs:num_reqs_padded] = 0"
    fixed = HELPER.replace("    return CommonAttentionMetadata(", "    " + f.fix.text + "\n    return CommonAttentionMetadata(", 1)
    assert check_source(fixed, "runner.py", load_profile("vllm")) == []


def test_a_statement_loop_variable_bound_at_the_sink_keeps_its_own_reset():
    # `for x in self.input_block_tables:` around the sink: `x` is bound there, and resetting its
    # rows before the sink resets each element in turn (a loop over the list would rebind `x`)
    src = SRC.replace(
        "        block_tables = [x[:num_reqs_padded] for x in self.input_block_tables]\n        RESET\n"
        "        return CommonAttentionMetadata(block_table_tensor=block_tables[0], num_reqs=num_reqs_padded)\n",
        "        metas = []\n        for x in self.input_block_tables:\n"
        "            metas.append(CommonAttentionMetadata(block_table_tensor=x[:num_reqs_padded], "
        "num_reqs=num_reqs_padded))\n        return metas\n")
    (f,) = check_source(src, "runner.py", load_profile("vllm"))
    assert f.line == 14 and "an element of `self.input_block_tables`" in f.message
    assert f.fix is not None and f.fix.text == "x[num_reqs:num_reqs_padded] = 0"


def test_two_comprehensions_over_the_list_are_one_origin():
    # vLLM 0.34.0's drafters take the same tables on two paths, one comprehension naming the
    # element `x`, the other `block_table`: the origin is the list, so one finding (not one per
    # loop variable) at the metadata (line 17)
    src = SRC.replace(
        "        block_tables = [x[:num_reqs_padded] for x in self.input_block_tables]\n",
        "        if scheduler_output.ubatch:\n"
        "            block_tables = [x[:num_reqs_padded] for x in self.input_block_tables]\n"
        "        else:\n"
        "            block_tables = [block_table[:num_reqs_padded] for block_table in self.input_block_tables]\n")
    found = check_source(src.replace("RESET", "pass"), "runner.py", load_profile("vllm"))
    assert [(f.line, f.field) for f in found] == [(17, "block_table_tensor")]
