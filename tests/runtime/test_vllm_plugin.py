"""The vllm.general_plugins entry point reaches an engine worker process.

The "worker" is a subprocess with a stand-in ``vllm`` package
(fixtures/runtime/fake_vllm) on its path: it loads the general plugins the
way every vLLM process does, then imports the model runner (after the
plugin ran, as in vLLM) and runs two steps of the buggy toy runner; step 2
pads 3 requests to 4 and row 3 holds a stale prefill (see
test_toy_runner._scenario).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

from conftest import ROOT, TOY_DIR

WORKER = textwrap.dedent('''
    import sys
    from vllm.plugins import load_general_plugins

    print("PLUGINS=" + ",".join(load_general_plugins()))
    load_general_plugins()  # vLLM may load plugins more than once: must stay harmless
    import padlint.runtime as pr
    print("INSTALLED=%s" % (pr.installed() is not None if "padlint.runtime.hooks" in sys.modules else False))

    from vllm.v1.worker.gpu_model_runner import GPUModelRunner
    from toy_common import prepare_stale_step

    runner = GPUModelRunner()
    prepare_stale_step(runner)
    try:
        runner.execute_model()
        print("NO_ERROR")
    except AssertionError as e:
        print("RAISED " + type(e).__name__)
        print(e)
''')


def _worker(mode, code=WORKER, **padlint_env):
    """Run ``code`` as a worker; ``padlint_env``: more PADLINT_* variables (PROFILE="vlm")."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PADLINT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(TOY_DIR / "fake_vllm"), str(TOY_DIR), str(ROOT)])
    if mode is not None:
        env["PADLINT_RUNTIME"] = mode
    env.update({f"PADLINT_{k}": v for k, v in padlint_env.items()})
    return subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)


def _stderr_lines(out):
    """stderr lines without the "[padlint pid N] " prefix."""
    return [re.sub(r"^\[padlint pid \d+\] ", "", line) for line in out.stderr.splitlines()]


def test_entry_point_is_declared():
    eps = {ep.name: ep.value for ep in entry_points(group="vllm.general_plugins")}
    assert eps.get("padlint_runtime") == "padlint.runtime.vllm_plugin:register"


def test_strict_env_reaches_the_worker_and_raises():
    out = _worker("strict")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "PLUGINS=padlint_runtime" in lines
    assert "INSTALLED=True" in lines
    assert "RAISED StalePaddingError" in lines
    assert "CommonAttentionMetadata.is_prefilling" in out.stdout and "row 3: True" in out.stdout
    # counts came from the profile's real provider target, reached through the stand-in module path
    assert "GPUModelRunner._build_attention_metadata(num_reqs=3, num_reqs_padded=4" in out.stdout
    # the atexit report of the worker
    assert "objects checked" in out.stderr and "2 violations" in out.stderr


def test_without_env_the_worker_is_unchecked():
    out = _worker(None)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "INSTALLED=False" in lines and "NO_ERROR" in lines


def test_off_spellings_and_typos_are_parsed_like_the_pytest_plugin():
    """One parser (padlint.runtime.modes, no torch) for the engine plugin, the pytest plugin
    and Checker: 0 / false / off (any case) mean off; a typo raises before torch is imported."""
    code = textwrap.dedent("""
        import os, sys
        from padlint.runtime import vllm_plugin
        from padlint.runtime.modes import parse_mode
        assert [parse_mode(t) for t in ("0", "FALSE", " Off ", "", None, "Strict", "record")] == [
            "off", "off", "off", "off", "off", "strict", "record"]
        for text in ("0", "false"):
            os.environ["PADLINT_RUNTIME"] = text
            vllm_plugin.register()
        os.environ["PADLINT_RUNTIME"] = "loud"
        try:
            vllm_plugin.register()
        except ValueError as e:
            print(e)
        assert "torch" not in sys.modules and "padlint.runtime.hooks" not in sys.modules
        print("clean")
    """)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "padlint runtime mode 'loud': expected strict, record or off (0 and false also mean off)", "clean"]


def test_checker_mode_uses_the_same_parser():
    from padlint.runtime import Checker, runtime_spec

    spec = runtime_spec("vllm")
    assert Checker(spec, mode="0").mode == "off" and not Checker(spec, mode="false").active


def test_bad_profile_or_cuda_policy_is_one_line_and_the_worker_runs_unchecked():
    """Used to raise a ProfileError / ValueError traceback into the worker."""
    cases = [
        ({"PROFILE": "vlm"}, "padlint runtime: error: PADLINT_PROFILE='vlm': unknown profile 'vlm'; available: "),
        ({"CUDA_POLICY": "never"}, ("padlint runtime: error: PADLINT_CUDA_POLICY='never': expected one of "
                                   "deferred, sync, skip; runtime checks are off in this process")),
        ({"POISON": "maybe"}, ("padlint runtime: error: PADLINT_POISON='maybe': expected one of 1, true, yes, on "
                              "(on) or 0, false, no, off or empty (off); runtime checks are off in this process")),
    ]
    for env, line in cases:
        out = _worker("strict", **env)
        assert out.returncode == 0, (env, out.stderr)
        lines = out.stdout.splitlines()
        assert "INSTALLED=False" in lines and "NO_ERROR" in lines, (env, out.stdout)
        assert len(_stderr_lines(out)) == 1 and _stderr_lines(out)[0].startswith(line), (env, out.stderr)
        assert _stderr_lines(out)[0].endswith("; runtime checks are off in this process")
        assert out.stderr.startswith("[padlint pid ")


def test_poison_spellings():
    code = textwrap.dedent("""
        import os, sys
        from padlint.runtime import hooks, vllm_plugin
        for text in sys.argv[1:]:
            os.environ["PADLINT_POISON"] = text
            vllm_plugin.register()
            print(repr(text), hooks.installed().poison is not None)
            hooks.uninstall()
    """)
    values = ["1", "true", "YES", " On ", "0", "False", "no", "OFF", ""]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PADLINT_")}
    env.update(PYTHONPATH=str(ROOT), PADLINT_RUNTIME="record")
    out = subprocess.run(check=False, args=[sys.executable, "-c", code, *values], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"{v!r} {v.strip().lower() in ('1', 'true', 'yes', 'on')}" for v in values]


LOAD_ONLY = textwrap.dedent('''
    from vllm.plugins import load_general_plugins
    load_general_plugins()
''')


def _never_imported(target, table, what="nothing was checked through it"):
    return f"padlint runtime: warning: target {target!r} (profile 'vllm' {table}) was never imported: {what}"


def test_exit_summary_lists_targets_that_were_never_imported():
    out = _worker("record", code=LOAD_ONLY, POISON="1")
    assert out.returncode == 0, out.stderr
    assert _stderr_lines(out) == [
        _never_imported("vllm.v1.attention.backend:CommonAttentionMetadata", "runtime.classes"),
        # grouped by module (the v1 runner module holds the provider and the step), in profile order
        _never_imported("vllm.v1.worker.gpu_model_runner:GPUModelRunner._build_attention_metadata",
                        "runtime.provider"),
        _never_imported("vllm.v1.worker.gpu_model_runner:GPUModelRunner.execute_model", "runtime.step",
                        "no buffer was poisoned after it"),
        *[_never_imported(target, "runtime.provider") for target in (
            "vllm.v1.worker.gpu.model_states.default:DefaultModelState.prepare_attn",
            "vllm.v1.worker.gpu.model_states.mamba_hybrid:MambaHybridModelState.prepare_attn",
            "vllm.v1.worker.gpu.model_states.encoder_decoder:EncoderDecoderModelState.prepare_attn",
            "vllm.v1.worker.gpu.spec_decode.speculator:DraftModelSpeculator._build_attn_metadata")],
        "padlint runtime: 0 objects checked, 0 fields checked, 0 skipped during capture, 0 violations",
    ]
    # a worker that imports the runner: no warning
    out = _worker("record")
    assert "warning" not in out.stderr and "2 violations" in out.stderr
