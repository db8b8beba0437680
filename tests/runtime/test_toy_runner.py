"""The runtime checker on the toy runner (CPU): exact rows, fixed variant clean, random life cycles."""

from __future__ import annotations

import pytest
from conftest import make_runner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toy_common import prepare_stale_step

from padlint.runtime import StalePaddingError


def _scenario(runner):
    """4 requests A, B, C (prompt 2) and D (prompt 10), chunk 4; one step; B leaves.

    Step 1 (4 requests, no padding): A, B, C finish their prompt (2/2), D
    computes 4/10; seq_lens = [2, 2, 2, 4].  Removing B leaves a hole at row
    1; condense moves D from row 3 to row 1 and leaves row 3 as it was:
    computed 4, prompt 10, seq_lens 4.  Step 2 has 3 requests, padded to 4:
    row 3 is a padding row holding D's old values, so in the buggy variant
    is_prefilling[3] = (4 < 10) = True and seq_lens[3] = 4.
    """
    prepare_stale_step(runner)


def test_buggy_runner_fails_in_strict_mode_with_exact_rows(install_toy):
    install_toy("buggy", "strict")
    runner = make_runner("buggy")
    _scenario(runner)
    with pytest.raises(StalePaddingError) as info:
        runner.execute_model()
    by_field = {v.field: v for v in info.value.violations}
    assert set(by_field) == {"is_prefilling", "seq_lens"}
    v = by_field["is_prefilling"]
    assert (v.real, v.padded, v.start, v.stop) == (3, 4, 3, 4)
    assert v.rows == (3,) and v.values == (True,) and v.num_bad == 1
    assert v.dtype == "torch.bool" and v.shape == (4,)
    assert by_field["seq_lens"].rows == (3,) and by_field["seq_lens"].values == (4,)
    msg = str(info.value)
    # one exception says what, where, why and how to fix
    assert "CommonAttentionMetadata.is_prefilling" in msg
    assert "[3:4) on axis 'reqs'" in msg
    assert "row 3: True" in msg
    assert "vLLM issue 41841" in msg  # the profile's why
    assert "toy_runner_buggy.py" in msg and "in _build_attention_metadata" in msg  # constructed at
    assert "in execute_model" in msg  # provider call stack
    assert "is_prefilling[num_reqs:num_reqs_padded] = False" in msg  # the reset
    assert "num_reqs=3, num_reqs_padded=4, num_tokens=6, num_tokens_padded=8" in msg


def test_fixed_runner_passes_in_strict_mode(install_toy):
    chk = install_toy("fixed", "strict")
    runner = make_runner("fixed")
    _scenario(runner)
    meta, (num_prefills, _) = runner.execute_model()
    assert meta.is_prefilling.tolist() == [False, True, False, False]  # row 1 is D, still in its prompt
    assert num_prefills == 1
    # Step 2: 3 real requests padded to 4, 6 tokens padded to 8; the checked fields
    # with padding rows are query_start_loc(_cpu), seq_lens, block_table_tensor,
    # slot_mapping, positions, is_prefilling: 7.  Step 1 had no padding rows at all
    # (4 requests, 10 tokens padded to 16: slot_mapping and positions only: 2).
    assert chk.stats.objects_checked == 2
    assert chk.stats.fields_checked == 7 + 2
    assert chk.stats.violations == []


def test_record_mode_collects_instead_of_raising(install_toy):
    chk = install_toy("buggy", "record")
    runner = make_runner("buggy")
    _scenario(runner)
    runner.execute_model()  # does not raise
    assert sorted(v.field for v in chk.stats.violations) == ["is_prefilling", "seq_lens"]
    assert "2 violations" in chk.stats.line()


# -- random life cycles ----------------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(min_value=1, max_value=12)),
        st.tuples(st.just("remove"), st.integers(min_value=0, max_value=7)),
        st.tuples(st.just("step"), st.just(0)),
    ),
    min_size=1,
    max_size=40,
)


def _expected_stale(runner, variant):
    """{field: rows} that must be stale in the next step, read from the runner's state.

    Computed without the checker: after condense the live rows are
    [0:num_reqs); the step pads to num_reqs_padded.  The buggy variant
    derives is_prefilling from the persistent computed/prompt rows, so a
    padding row is True where computed < prompt; and it copies seq_lens rows
    [:num_reqs_padded] without resetting [num_reqs:], so a padding row keeps
    its last written length.  The fixed variant resets both; every other
    field is reset in both variants.
    """
    if variant == "fixed":
        return {}
    batch = runner.input_batch
    num_reqs, padded, _, _ = runner.step_counts()
    rows = range(num_reqs, padded)
    out = {}
    pre = tuple(i for i in rows if batch.num_computed_tokens_cpu[i] < batch.num_prompt_tokens[i])
    if pre:
        out["is_prefilling"] = pre
    lens = tuple(i for i in rows if runner.seq_lens.np[i] != 0)
    if lens:
        out["seq_lens"] = lens
    return out


@pytest.mark.parametrize("variant", ["buggy", "fixed"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=ops)
def test_random_life_cycles_flag_exactly_the_stale_steps(install_toy, variant, program):
    import padlint.runtime as pr

    if pr.installed() is not None:
        pr.uninstall()
    chk = install_toy(variant, "record")
    runner = make_runner(variant)
    live: list[str] = []
    n_added = 0
    for op, arg in program:
        if op == "add" and len(live) < runner.max_num_reqs:
            rid = f"r{n_added}"
            n_added += 1
            runner.add_request(rid, arg)
            live.append(rid)
        elif op == "remove" and live:
            runner.remove_request(live.pop(arg % len(live)))
        elif op == "step" and live:
            runner.input_batch.condense()  # execute_model condenses too; doing it first lets us read the rows
            expected = _expected_stale(runner, variant)
            before = len(chk.stats.violations)
            runner.execute_model()
            got = {v.field: v.rows for v in chk.stats.violations[before:]}
            assert got == expected
    pr.uninstall()
