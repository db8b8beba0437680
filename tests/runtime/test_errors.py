"""The text of a StalePaddingError: one exception a person can act on, without repetition."""

from __future__ import annotations

from padlint.runtime.context import StepCounts
from padlint.runtime.errors import StalePaddingError, Violation

STACK = '  File "runner.py", line 34, in execute_model\n    meta = self._build_attention_metadata(3, 4, 6, 8)\n'


def _violation(field: str, stack: str = STACK, when: str = "construction") -> Violation:
    return Violation(owner="CommonAttentionMetadata", field=field, axis="reqs", real=3, padded=4, start=3, stop=4,
                     dtype="torch.int32", device="cpu", shape=(4,), expected="0", why="", rows=(3,), values=(7,),
                     num_bad=1, fix=f"{field}[num_reqs:num_reqs_padded] = 0", constructed_at="runner.py:70 in build",
                     provider_stack=stack, when=when)


def test_one_provider_stack_is_printed_once_for_all_fields():
    text = str(StalePaddingError([_violation("seq_lens"), _violation("slot_mapping")]))
    assert text.count("provider call stack") == 1
    assert text.count("in execute_model") == 1
    # after both fields, so each field's own lines stay together
    assert text.index("slot_mapping: 1 stale") < text.index("provider call stack")


def test_different_stacks_stay_with_their_fields():
    other = STACK.replace("line 34", "line 99")
    text = str(StalePaddingError([_violation("seq_lens"), _violation("slot_mapping", other)]))
    assert text.count("provider call stack") == 2
    assert text.index("line 34") < text.index("slot_mapping: 1 stale") < text.index("line 99")


def test_explicit_check_says_where_it_was_checked_not_constructed():
    assert "  checked at: runner.py:70 in build" in _violation("x", when="explicit check").format()
    assert "  constructed at: runner.py:70 in build" in _violation("x").format()


def test_inferred_counts_say_the_padded_count_is_each_fields_length():
    counts = StepCounts(3, None, 6, None, provider="inferred from query_start_loc_cpu")
    assert counts.describe() == ("inferred from query_start_loc_cpu(num_reqs=3, num_reqs_padded=each field's "
                                 "length, num_tokens=6, num_tokens_padded=each field's length)")
    assert "num_reqs_padded=4" in StepCounts(3, 4, 6, 8, provider="p").describe()
