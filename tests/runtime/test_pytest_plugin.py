"""The pytest plugin, driven through real pytest runs in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import ROOT, TOY_DIR

TESTS = textwrap.dedent('''
    import sys
    import pytest
    import toy_runner_buggy, toy_runner_fixed

    def _scenario(mod):
        # step 2 pads 3 requests to 4; row 3 holds D's old values (see tests/runtime/test_toy_runner.py)
        runner = mod.ToyModelRunner()
        for rid, prompt in [("A", 2), ("B", 2), ("C", 2), ("D", 10)]:
            runner.add_request(rid, prompt)
        runner.execute_model()
        runner.remove_request("B")
        runner.execute_model()

    def test_buggy():
        _scenario(toy_runner_buggy)

    def test_fixed():
        _scenario(toy_runner_fixed)

    @pytest.mark.padlint_off
    def test_buggy_opted_out():
        _scenario(toy_runner_buggy)

    def test_torch_state():
        print("HOOKS_LOADED=%s" % ("padlint.runtime.hooks" in sys.modules))
''')

INI = textwrap.dedent('''
    [pytest]
    padlint_provider = toy_runner_buggy:ToyModelRunner._build_attention_metadata
    padlint_classes =
        toy_common:CommonAttentionMetadata
''')


def _pytest(tmp_path, *args, env_mode=None, ini_extra="", tests=TESTS):
    (tmp_path / "test_toy.py").write_text(tests)
    (tmp_path / "pytest.ini").write_text(INI + ini_extra)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PADLINT_")}
    env["PYTHONPATH"] = f"{TOY_DIR}{os.pathsep}{ROOT}"
    if env_mode is not None:
        env["PADLINT_RUNTIME"] = env_mode
    return subprocess.run(check=False, args=[sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args, str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_off_by_default_is_inert(tmp_path):
    out = _pytest(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 passed" in out.stdout
    assert "HOOKS_LOADED=False" in out.stdout
    assert "padlint runtime:" not in out.stdout


def test_strict_option_fails_only_the_buggy_test(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=strict")
    assert out.returncode == 1
    assert "1 failed, 3 passed" in out.stdout
    assert "FAILED test_toy.py::test_buggy " in out.stdout
    assert "CommonAttentionMetadata.is_prefilling" in out.stdout and "row 3: True" in out.stdout
    # test_buggy: 2 objects; test_fixed: 2; opted out: 0 -> 4 objects.  Fields with padding rows:
    # buggy 2 + 7 (it raises at the second object after checking all 7), fixed 2 + 7.
    assert "padlint runtime: 4 objects checked, 18 fields checked, 0 skipped during capture, 2 violations" in out.stdout


def test_env_var_record_mode_lists_violations_and_fails_the_session(tmp_path):
    out = _pytest(tmp_path, env_mode="record")
    assert "4 passed" in out.stdout
    assert out.returncode == 1
    assert "padlint runtime: stale padding rows" in out.stdout
    assert "test: test_toy.py::test_buggy" in out.stdout
    assert "2 violations" in out.stdout


def test_ini_option_and_command_line_precedence(tmp_path):
    out = _pytest(tmp_path, ini_extra="padlint_runtime = strict\n")
    assert out.returncode == 1 and "1 failed, 3 passed" in out.stdout
    out = _pytest(tmp_path, "--padlint-runtime=off", ini_extra="padlint_runtime = strict\n")
    assert out.returncode == 0 and "4 passed" in out.stdout


def test_unknown_mode_is_a_usage_error(tmp_path):
    out = _pytest(tmp_path, env_mode="loud")
    assert out.returncode == 4
    assert "expected strict, record or off" in out.stderr + out.stdout


# A test that builds a stale object whose check is deferred (the device path, forced on CPU
# tensors), then raises before its end; the next test builds nothing.
RAISING_TESTS = textwrap.dedent('''
    import dataclasses
    import padlint.runtime as pr
    import toy_runner_buggy

    def test_raises_after_building():
        chk = pr.current_checker()
        chk.force_device_path = True  # CPU tensors take the deferred device path
        runner = toy_runner_buggy.ToyModelRunner()
        for rid, prompt in [("A", 2), ("B", 2), ("C", 2), ("D", 10)]:
            runner.add_request(rid, prompt)
        with chk.suspended():
            runner.execute_model()
            runner.remove_request("B")
            meta, _ = runner.execute_model()
        # built outside a provider call: counts inferred from query_start_loc_cpu [0, 1, 5, 6, 6]
        # (3 real requests of 4); the check is packed and left pending (deferred)
        dataclasses.replace(meta)
        raise RuntimeError("boom")

    def test_innocent():
        pass
''')


def test_deferred_results_of_a_failing_test_are_reported_in_that_test(tmp_path):
    """The deferred check of an object built by a test that then raises is read in that
    test's teardown of the call (not skipped), attached to its failure; the next test passes."""
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=RAISING_TESTS)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed, 1 passed" in out.stdout, out.stdout
    assert "FAILED test_toy.py::test_raises_after_building - RuntimeError: boom" in out.stdout
    assert "test_innocent FAILED" not in out.stdout and "FAILED test_toy.py::test_innocent" not in out.stdout
    # the stale rows are shown with the failing test (row 3 of is_prefilling: request D, still in its prompt)
    assert "CommonAttentionMetadata.is_prefilling: 1 stale padding row(s) in [3:4)" in out.stdout
    assert "row 3: True" in out.stdout
    assert "test: test_toy.py::test_raises_after_building" in out.stdout
    assert "2 violations" in out.stdout  # is_prefilling and seq_lens, tallied once


def test_off_spellings_accepted_by_the_engine_plugin_are_off_here_too(tmp_path):
    """PADLINT_RUNTIME=0 / false turn the vLLM worker plugin off; the pytest plugin reads
    the same variable with the same parser, so they are "off" here too, not a usage error."""
    for args, env_mode in (((), "0"), ((), "false"), (("--padlint-runtime=FALSE",), None)):
        out = _pytest(tmp_path, *args, env_mode=env_mode)
        assert out.returncode == 0, (args, env_mode, out.stdout + out.stderr)
        assert "4 passed" in out.stdout
        assert "HOOKS_LOADED=False" in out.stdout and "padlint runtime:" not in out.stdout


def test_unknown_mode_on_the_command_line_names_the_accepted_values(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=loud")
    assert out.returncode == 4
    assert "padlint runtime mode 'loud': expected strict, record or off" in out.stderr + out.stdout
