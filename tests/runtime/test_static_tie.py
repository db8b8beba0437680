"""The static checker and the runtime checker agree on the toy runner.

Both read rules/vllm.toml: the static checker reports the fields whose
padded slices reach ``CommonAttentionMetadata`` without a reset; the
runtime checker catches those fields with stale padding rows on the real
tensors.  On the buggy variant both must name exactly {is_prefilling,
seq_lens} (the two resets the fixed variant adds); on the fixed variant
both must name nothing; and the static fix writes the neutral value the
runtime checker expects.
"""

from __future__ import annotations

import pytest
from conftest import TOY_DIR, make_runner
from toy_common import prepare_stale_step

from padlint.profile import load_profile
from padlint.runtime import runtime_spec


def _static_fields(variant):
    libcst = pytest.importorskip("libcst")
    from padlint.analysis import check_module

    path = TOY_DIR / f"toy_runner_{variant}.py"
    findings = check_module(libcst.parse_module(path.read_text()), str(path), load_profile("vllm"))
    return {f.field: f for f in findings if f.code == "PAD001"}


def _runtime_fields(variant, install_toy):
    """Fields flagged in record mode over the stale scenario of test_toy_runner (row 3 of step 2)
    plus a longer life cycle with condensing; union over all steps."""
    chk = install_toy(variant, "record")
    runner = make_runner(variant)
    prepare_stale_step(runner)
    runner.execute_model()
    for rid, prompt in [("E", 9), ("F", 1), ("G", 7)]:
        runner.add_request(rid, prompt)
    runner.execute_model()
    runner.remove_request("A")
    runner.remove_request("F")
    runner.execute_model()
    runner.execute_model()
    return {v.field for v in chk.stats.violations}


def test_static_and_runtime_report_the_same_fields_on_the_buggy_runner(install_toy):
    static = _static_fields("buggy")
    runtime = _runtime_fields("buggy", install_toy)
    assert runtime == {"is_prefilling", "seq_lens"}
    assert set(static) == runtime


def test_static_and_runtime_report_nothing_on_the_fixed_runner(install_toy):
    assert _static_fields("fixed") == {}
    assert _runtime_fields("fixed", install_toy) == set()


def test_static_fix_writes_the_runtime_neutral_value():
    spec = runtime_spec("vllm")
    for name, finding in _static_fields("buggy").items():
        assert finding.fix is not None
        assert finding.fix.text.rsplit("=", 1)[1].strip() == spec.rule(name).neutral_text
