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
    from toy_common import prepare_stale_step

    def _scenario(mod):
        # step 2 pads 3 requests to 4; row 3 holds D's old values (see tests/runtime/test_toy_runner.py)
        runner = mod.ToyModelRunner()
        prepare_stale_step(runner)
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


def _pytest(tmp_path, *args, env_mode=None, ini_extra="", tests=TESTS, ini=None, files=None, cwd=None,
            extra_env=None):
    """Run pytest on tmp_path: test_toy.py holds ``tests``, pytest.ini holds ``ini``
    (default: INI + ini_extra); ``files``: more files (name -> text), e.g. a conftest.py."""
    (tmp_path / "test_toy.py").write_text(tests)
    (tmp_path / "pytest.ini").write_text(INI + ini_extra if ini is None else ini)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PADLINT_")}
    env["PYTHONPATH"] = f"{TOY_DIR}{os.pathsep}{ROOT}"
    if env_mode is not None:
        env["PADLINT_RUNTIME"] = env_mode
    env.update(extra_env or {})
    return subprocess.run(check=False, args=[sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args, str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path if cwd is None else cwd, timeout=300)


def _lines(out):
    return (out.stdout + out.stderr).splitlines()


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
    # the provider call stack shows the test's frames, not pytest's and pluggy's dispatch
    lines = out.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "provider call stack (most recent call last):" in line)
    stack = [line for line in lines[start + 1:start + 12] if 'File "' in line]
    assert any("test_toy.py" in line for line in stack) and any("toy_runner_buggy.py" in line for line in stack)
    assert not any(noise in line for line in stack
                   for noise in ("pluggy", "_pytest", "runpy", "pytest/__main__", "padlint/runtime")), stack
    # pytest's traceback of the failure shows the test's and the runner's frames, not padlint's
    # own wrappers (nor their locals)
    failures = out.stdout[out.stdout.index("FAILURES"):out.stdout.index("short test summary")]
    assert "toy_runner_buggy.py" in failures and "padlint/runtime/" not in failures
    # test_buggy: 2 objects; test_fixed: 2; opted out: 0 -> 4 objects.  Fields with padding rows:
    # buggy 2 + 7 (it raises at the second object after checking all 7), fixed 2 + 7.
    assert "padlint runtime: 4 objects checked, 18 fields checked, 0 skipped during capture, 2 violations" in out.stdout


def test_env_var_record_mode_lists_violations_and_fails_the_session(tmp_path):
    out = _pytest(tmp_path, env_mode="record")
    # pytest's closing line says why the exit status is 1 although every test passed
    assert "4 passed, 2 padlint violations" in out.stdout
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


# -- targets that hook nothing -------------------------------------------------------
PROVIDER = "toy_runner_buggy:ToyModelRunner._build_attention_metadata"


def _warning(target, source, reason="was never imported"):
    return f"padlint runtime: warning: target {target!r} ({source}) {reason}: nothing was checked through it"


def test_a_target_whose_module_is_never_imported_is_reported(tmp_path):
    """A module typo in padlint_classes / padlint_provider used to give "0 objects
    checked" and exit 0 with nothing said."""
    ini = f"[pytest]\npadlint_provider = {PROVIDER}\npadlint_classes = toy_comon:CommonAttentionMetadata\n"
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini=ini)
    assert out.returncode == 0, out.stdout + out.stderr  # a warning, not a failure
    assert _warning("toy_comon:CommonAttentionMetadata", "padlint_classes") in _lines(out)
    ini = "[pytest]\npadlint_provider = toy_runer_buggy:ToyModelRunner._build_attention_metadata\n" \
          "padlint_classes = toy_common:CommonAttentionMetadata\n"
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini=ini)
    assert _warning("toy_runer_buggy:ToyModelRunner._build_attention_metadata", "padlint_provider") in _lines(out)


def test_the_default_profile_without_vllm_says_nothing_was_checked(tmp_path):
    """Strict mode with nothing hooked (here or in an engine worker) is an error, not a green run."""
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini="[pytest]\n")
    assert out.returncode == 1, out.stdout + out.stderr
    lines = _lines(out)
    assert any(line.startswith("padlint runtime: error: strict mode, but no provider or metadata class was hooked")
               for line in lines)
    assert "4 passed, 1 padlint error" in out.stdout
    assert _warning("vllm.v1.worker.gpu_model_runner:GPUModelRunner._build_attention_metadata",
                    "profile 'vllm' runtime.provider") in lines
    assert _warning("vllm.v1.attention.backend:CommonAttentionMetadata", "profile 'vllm' runtime.classes") in lines
    assert not any("runtime.step" in line for line in lines)  # the step matters only to poison mode
    assert "padlint runtime: 0 objects checked, 0 fields checked, 0 skipped during capture, 0 violations" in lines


def test_an_attribute_typo_does_not_break_the_users_import(tmp_path):
    """The lazy hook used to raise inside the test module's ``import toy_runner_buggy``
    (a collection error blaming the user's import); now the target is reported."""
    ini = ("[pytest]\npadlint_provider = toy_runner_buggy:ToyModelRunner._build_attn_metadata\n"
           "padlint_classes = toy_common:CommonAttentionMetdata\n")
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini=ini)
    # both targets hook nothing: strict mode makes that a session error (not a collection error)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "4 passed, 1 padlint error" in out.stdout and "Error" not in out.stdout
    lines = _lines(out)
    assert _warning("toy_runner_buggy:ToyModelRunner._build_attn_metadata", "padlint_provider",
                    "could not be hooked: toy_runner_buggy.ToyModelRunner has no attribute "
                    "'_build_attn_metadata'") in lines
    assert _warning("toy_common:CommonAttentionMetdata", "padlint_classes",
                    "could not be hooked: toy_common has no attribute 'CommonAttentionMetdata'") in lines


def test_an_attribute_typo_in_a_module_imported_before_the_plugin_is_reported(tmp_path):
    ini = "[pytest]\npadlint_provider = toy_runner_buggy:ToyModelRunner._build_attn_metadata\n"
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini=ini, files={"conftest.py": "import toy_runner_buggy\n"})
    assert out.returncode == 1, out.stdout + out.stderr  # nothing hooked in strict mode: a session error
    assert _warning("toy_runner_buggy:ToyModelRunner._build_attn_metadata", "padlint_provider",
                    "could not be hooked: toy_runner_buggy.ToyModelRunner has no attribute "
                    "'_build_attn_metadata'") in _lines(out)


def test_a_provider_or_step_naming_a_class_or_an_immutable_type_is_reported_not_patched(tmp_path):
    """A provider naming a class used to replace the class with a function (isinstance
    then failed in the user's test); a target on a builtin type's method (immutable) used
    to break the import and then crash pytest at unconfigure.  Both are reported."""
    tests = TESTS + textwrap.dedent('''
        def test_class_untouched():
            assert isinstance(toy_runner_buggy.ToyModelRunner(), toy_runner_buggy.ToyModelRunner)
    ''')
    ini = ("[pytest]\npadlint_provider = toy_runner_buggy:ToyModelRunner\n"
           "padlint_step = toy_runner_buggy:np.ndarray.sum\n"
           "padlint_classes = toy_common:CommonAttentionMetadata\n")
    out = _pytest(tmp_path, "--padlint-runtime=strict", "--padlint-poison", ini=ini, tests=tests)
    # the metadata class is still hooked (counts inferred from query_start_loc_cpu): only the
    # buggy scenario fails; the class named as provider is untouched
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed, 4 passed" in out.stdout and "FAILED test_toy.py::test_buggy " in out.stdout
    assert "Traceback" not in out.stdout + out.stderr and "INTERNALERROR" not in out.stdout + out.stderr
    lines = _lines(out)
    assert _warning("toy_runner_buggy:ToyModelRunner", "padlint_provider",
                    "could not be hooked: provider toy_runner_buggy:ToyModelRunner: names a class, not a function "
                    "or method") in lines
    assert any(line.startswith("padlint runtime: warning: target 'toy_runner_buggy:np.ndarray.sum' (padlint_step) "
                               "could not be hooked: cannot set 'sum' attribute of immutable type") for line in lines), lines


def test_classes_may_be_separated_by_commas(tmp_path):
    ini = f"[pytest]\npadlint_provider = {PROVIDER}\n" \
          "padlint_classes = toy_common:CommonAttentionMetadata, toy_comon:Other\n"
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini=ini)
    assert out.returncode == 1 and "1 failed, 3 passed" in out.stdout, out.stdout + out.stderr
    assert "FAILED test_toy.py::test_buggy " in out.stdout
    assert _warning("toy_comon:Other", "padlint_classes") in _lines(out)


# -- bad configuration: a usage error naming the option --------------------------------
def test_bad_options_are_usage_errors_naming_the_option(tmp_path):
    cases = [
        ("padlint_profile = vlm\n", "ERROR: padlint_profile = 'vlm': unknown profile 'vlm'; available: "),
        ("padlint_cuda_policy = never\n", "ERROR: padlint_cuda_policy = 'never': expected one of deferred, sync, skip"),
        ("padlint_profile = nothere.toml\n",
         f"ERROR: padlint_profile = 'nothere.toml': no such file {(tmp_path / 'nothere.toml').resolve()}"),
    ]
    for extra, line in cases:
        out = _pytest(tmp_path, "--padlint-runtime=strict", ini_extra=extra)
        assert out.returncode == 4, (extra, out.stdout + out.stderr)
        assert "INTERNALERROR" not in out.stdout + out.stderr
        assert any(x.startswith(line) for x in _lines(out)), (line, out.stdout + out.stderr)
    out = _pytest(tmp_path, "--padlint-runtime=strict",
                  ini="[pytest]\npadlint_provider = toy_runner_buggy.ToyModelRunner._build_attention_metadata\n")
    assert out.returncode == 4 and "INTERNALERROR" not in out.stdout + out.stderr
    assert ("ERROR: padlint_provider = 'toy_runner_buggy.ToyModelRunner._build_attention_metadata': expected "
            "'module:Qualified.name' (e.g. mypkg.runner:Runner._build_attention_metadata)") in _lines(out)


def test_a_relative_profile_path_is_relative_to_the_ini_file(tmp_path):
    (tmp_path / "myprof.toml").write_text((ROOT / "rules" / "vllm.toml").read_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini_extra="padlint_profile = myprof.toml\n", cwd=elsewhere)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed, 3 passed" in out.stdout


# -- strict mode and a swallowed StalePaddingError --------------------------------------
SWALLOWING_TESTS = textwrap.dedent('''
    import toy_runner_buggy
    from toy_common import prepare_stale_step

    def test_swallows():
        runner = toy_runner_buggy.ToyModelRunner()
        prepare_stale_step(runner)
        try:  # an engine that catches every exception of a step
            runner.execute_model()
        except Exception:
            pass

    def test_after():
        pass
''')


def test_strict_mode_fails_a_test_that_swallowed_the_error(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=SWALLOWING_TESTS)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed, 1 passed" in out.stdout
    assert "FAILED test_toy.py::test_swallows - Failed: " in out.stdout
    assert ("padlint runtime: strict mode: 2 violation(s) during this test, "
            "but the StalePaddingError did not reach pytest (caught by the code under test?)") in _lines(out)
    assert "CommonAttentionMetadata.is_prefilling: 1 stale padding row(s) in [3:4)" in out.stdout
    assert "padlint runtime: 2 objects checked, 9 fields checked, 0 skipped during capture, 2 violations" in out.stdout


# -- setup and teardown: label and padlint_off -------------------------------------------
FIXTURE_TESTS = textwrap.dedent('''
    import pytest
    import toy_runner_buggy
    from toy_common import prepare_stale_step

    def _scenario():
        runner = toy_runner_buggy.ToyModelRunner()
        prepare_stale_step(runner)
        runner.execute_model()

    @pytest.fixture
    def buggy_setup():
        _scenario()

    @pytest.fixture
    def buggy_teardown():
        yield
        _scenario()

    def test_first():
        pass

    @pytest.mark.padlint_off
    def test_opted_out(buggy_setup, buggy_teardown):
        pass

    def test_uses_fixture(buggy_setup):
        pass
''')


def test_padlint_off_covers_fixtures_and_setup_violations_carry_their_test_id(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=FIXTURE_TESTS)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "2 passed, 1 error" in out.stdout
    assert "ERROR test_toy.py::test_uses_fixture - " in out.stdout
    assert "test_opted_out" not in out.stdout.split("short test summary info")[-1]
    out = _pytest(tmp_path, "--padlint-runtime=record", tests=FIXTURE_TESTS)
    assert out.returncode == 1 and "3 passed" in out.stdout, out.stdout + out.stderr
    labels = [x.strip() for x in out.stdout.splitlines() if x.strip().startswith("test: ")]
    assert labels == ["test: test_toy.py::test_uses_fixture"] * 2  # not test_first's id


THREAD_TESTS = textwrap.dedent('''
    import threading
    import pytest
    import toy_runner_buggy
    from toy_common import prepare_stale_step

    def _scenario(errors):
        try:
            runner = toy_runner_buggy.ToyModelRunner()
            prepare_stale_step(runner)
            runner.execute_model()
        except Exception as e:
            errors.append(e)

    @pytest.mark.padlint_off
    def test_worker_thread_opted_out():
        errors = []
        t = threading.Thread(target=_scenario, args=(errors,))
        t.start(); t.join()
        assert errors == []

    def test_worker_thread_checked():
        errors = []
        t = threading.Thread(target=_scenario, args=(errors,))
        t.start(); t.join()
        assert [type(e).__name__ for e in errors] == ["StalePaddingError"]
''')


def test_padlint_off_covers_the_tests_threads(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=THREAD_TESTS)
    # the checked test's thread raised (asserted there); the error never reached pytest, so
    # strict mode fails that test too: only the opted-out test passes
    assert "1 failed, 1 passed" in out.stdout, out.stdout + out.stderr
    assert "FAILED test_toy.py::test_worker_thread_checked - Failed: " in out.stdout
    assert ("padlint runtime: strict mode: 2 violation(s) during this test, "
            "but the StalePaddingError did not reach pytest (caught by the code under test?)") in _lines(out)
    assert "2 violations" in out.stdout


# -- hooks installed before the plugin ----------------------------------------------------
def test_a_conftest_install_with_another_mode_is_reported(tmp_path):
    conftest = textwrap.dedent(f'''
        import padlint.runtime as pr
        pr.install("vllm", mode="strict", provider="{PROVIDER}",
                   classes=["toy_common:CommonAttentionMetadata"], step=None)
    ''')
    out = _pytest(tmp_path, "--padlint-runtime=record", files={"conftest.py": conftest})
    assert out.returncode == 1 and "1 failed, 3 passed" in out.stdout, out.stdout + out.stderr  # strict was used
    assert ("padlint runtime: warning: hooks were already installed (padlint.runtime.install() before the "
            "plugin, e.g. in a conftest) with mode 'strict'; that mode was used, not --padlint-runtime='record'"
            ) in _lines(out)
    out = _pytest(tmp_path, "--padlint-runtime=strict", files={"conftest.py": conftest})
    assert "already installed" not in out.stdout


def test_strict_mode_fails_the_session_for_a_violation_outside_every_test(tmp_path):
    """A violation caught outside any test phase (here in a conftest hook) fails no test;
    the session must still not exit 0, and the summary says why.  An expected failure
    (xfail) is its test's outcome and leaves the exit status alone."""
    conftest = textwrap.dedent('''
        import toy_runner_buggy
        from toy_common import prepare_stale_step

        def pytest_collection_finish(session):
            runner = toy_runner_buggy.ToyModelRunner()
            prepare_stale_step(runner)
            try:
                runner.execute_model()
            except AssertionError:
                pass
    ''')
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests="def test_ok():\n    pass\n",
                  files={"conftest.py": conftest})
    assert out.returncode == 1 and "1 passed" in out.stdout, out.stdout + out.stderr
    assert ("padlint runtime: strict mode: 2 violation(s) found outside every test's setup, call and "
            "teardown (they fail the session)") in _lines(out)
    xfail = textwrap.dedent('''
        import pytest
        import toy_runner_buggy
        from toy_common import prepare_stale_step
        from padlint.runtime import StalePaddingError

        @pytest.mark.xfail(raises=StalePaddingError, reason="known stale rows", strict=True)
        def test_known_bug():
            runner = toy_runner_buggy.ToyModelRunner()
            prepare_stale_step(runner)
            runner.execute_model()
    ''')
    (tmp_path / "conftest.py").unlink()
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=xfail)
    assert out.returncode == 0 and "1 xfailed" in out.stdout, out.stdout + out.stderr
    assert "2 violations" in out.stdout and "outside every test" not in out.stdout


LUCKY_TESTS = textwrap.dedent('''
    import toy_runner_buggy

    def test_buggy_but_lucky():
        # three requests (prompt 2 each) padded to 4 for two steps: row 3 never held a request,
        # so the buggy runner's missing is_prefilling reset reads zeros there and passes by luck
        runner = toy_runner_buggy.ToyModelRunner()
        for rid in "ABC":
            runner.add_request(rid, 2)
        runner.execute_model()
        runner.execute_model()
''')


def test_poison_option_turns_a_lucky_pass_into_a_violation(tmp_path):
    """Poison mode through the plugin: after step 1 the profile's source buffers get sentinels
    past the real count (num_computed_tokens -1), so step 2's missing reset reads -1 < 0 =
    True in is_prefilling row 3 and is caught; the profile path the toy runner lacks is
    listed in the summary."""
    ini = "padlint_step = toy_runner_buggy:ToyModelRunner.execute_model\n"
    plain = _pytest(tmp_path, "--padlint-runtime=record", ini_extra=ini, tests=LUCKY_TESTS)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert ", 0 violations" in plain.stdout
    for args, extra, env in ((["--padlint-poison"], "", {}), ([], "padlint_poison = true\n", {}),
                             ([], "", {"PADLINT_POISON": "on"})):
        out = _pytest(tmp_path, "--padlint-runtime=record", *args, ini_extra=ini + extra, tests=LUCKY_TESTS,
                      extra_env=env)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "CommonAttentionMetadata.is_prefilling: 1 stale padding row(s) in [3:4)" in out.stdout
        assert ("padlint poison: [runtime.poison] buffer ToyModelRunner.optimistic_seq_lens_cpu not found on the "
                "runner: not poisoned") in out.stdout


def test_bad_poison_value_is_a_usage_error(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=record", ini_extra="padlint_poison = maybe\n", tests=LUCKY_TESTS)
    assert out.returncode == 4
    assert "padlint_poison = 'maybe': expected one of 1, true, yes, on (on)" in out.stderr


def test_poison_without_a_runtime_mode_is_a_warning(tmp_path):
    """Poison mode needs the runtime hooks: asked for alone, it used to be ignored silently."""
    out = _pytest(tmp_path, "--padlint-poison", "-W", "default", tests=LUCKY_TESTS)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "poison mode was asked for, but the runtime mode is off: nothing is poisoned" in out.stdout + out.stderr


def test_a_bad_mode_names_where_it_came_from(tmp_path):
    out = _pytest(tmp_path, ini_extra="padlint_runtime = strcit\n", tests=LUCKY_TESTS)
    assert out.returncode == 4
    assert "padlint_runtime: padlint runtime mode 'strcit': expected strict, record or off" in out.stderr
    out = _pytest(tmp_path, env_mode="recrod", tests=LUCKY_TESTS)
    assert out.returncode == 4 and "PADLINT_RUNTIME: padlint runtime mode 'recrod'" in out.stderr


def test_summary_line_counts_in_the_singular_and_plural(tmp_path):
    """The poisoned lucky test has exactly one stale field (is_prefilling), the buggy
    scenario two (is_prefilling, seq_lens)."""
    def summary(out):
        return [line for line in _lines(out) if line.startswith("padlint runtime: ") and " checked, " in line][-1]

    one = _pytest(tmp_path, "--padlint-runtime=record", "--padlint-poison", tests=LUCKY_TESTS,
                  ini_extra="padlint_step = toy_runner_buggy:ToyModelRunner.execute_model\n")
    assert summary(one).endswith(", 1 violation")
    two = _pytest(tmp_path, "--padlint-runtime=record", "-k", "test_buggy and not opted")
    assert summary(two).endswith(", 2 violations")


def test_strict_mode_fails_a_test_that_swallowed_the_error_then_skipped(tmp_path):
    tests = textwrap.dedent('''
        import pytest
        import toy_runner_buggy
        from toy_common import prepare_stale_step

        def test_skip_after_violation():
            runner = toy_runner_buggy.ToyModelRunner()
            prepare_stale_step(runner)
            try:
                runner.execute_model()
            except Exception:
                pytest.skip("engine step failed")
    ''')
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=tests)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed" in out.stdout
    assert "2 violation(s) during this test, which was then skipped" in out.stdout


def test_a_profile_without_runtime_tables_is_a_usage_error(tmp_path):
    # the sglang profile without its [runtime] tables (it has them since issue 10)
    text = (ROOT / "rules" / "sglang.toml").read_text()
    (tmp_path / "noruntime.toml").write_text(text[:text.index("# --- runtime checker")])
    out = _pytest(tmp_path, "--padlint-runtime=strict", ini="[pytest]\npadlint_profile = noruntime.toml\n",
                  tests=LUCKY_TESTS)
    assert out.returncode == 4
    assert ("padlint_profile = 'noruntime.toml': profile 'sglang' names no [runtime] provider, metadata classes or step: "
            "nothing to hook") in out.stderr
