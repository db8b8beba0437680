"""Engine worker processes report to the pytest session that started them (real subprocesses).

The outer session is a real pytest run (subprocess) with the plugin on; its test
starts a "worker" (another subprocess) with the stand-in ``vllm`` package of
fixtures/runtime/fake_vllm, which loads the general plugins the way every vLLM
process does and runs the buggy toy runner's stale step (2 stale fields:
is_prefilling and seq_lens, row 3).  The worker catches the StalePaddingError,
as an engine that catches every exception of a step would, and exits 0: only
the report directory (PADLINT_REPORT_DIR, set by the outer plugin) tells the
outer session.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import ROOT, TOY_DIR
from test_pytest_plugin import _lines, _pytest

from padlint.runtime.reports import ReportReader, ReportWriter

ENGINE_TEST = textwrap.dedent(f'''
    import os, subprocess, sys

    WORKER = """
    from vllm.plugins import load_general_plugins
    load_general_plugins()
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner
    from toy_common import prepare_stale_step
    runner = GPUModelRunner()
    prepare_stale_step(runner)
    try:
        runner.execute_model()
    except AssertionError:
        pass  # the engine swallows the step's exception
    """

    def test_engine():
        env = dict(os.environ)  # the plugin exported PADLINT_RUNTIME, PADLINT_REPORT_DIR, ...
        env["PYTHONPATH"] = os.pathsep.join([{str(TOY_DIR / "fake_vllm")!r}, {str(TOY_DIR)!r}, {str(ROOT)!r}])
        out = subprocess.run([sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        print("WORKER_ENV", env.get("PADLINT_RUNTIME"), bool(env.get("PADLINT_REPORT_DIR")))

    def test_after():
        pass
''')


def test_strict_worker_violation_fails_the_test_that_started_the_worker(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=strict", tests=ENGINE_TEST, ini="[pytest]\n")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "WORKER_ENV strict True" in out.stdout
    assert "1 failed, 1 passed" in out.stdout
    assert "FAILED test_toy.py::test_engine" in out.stdout
    text = out.stdout
    assert "padlint runtime: strict mode: 2 violation(s) in engine worker processes during this test" in text
    assert "CommonAttentionMetadata.is_prefilling: 1 stale padding row(s) in [3:4)" in text
    assert "[engine worker pid " in text
    # the worker hooked the profile's targets, so "nothing hooked" is no error here
    assert "padlint runtime: error:" not in text
    assert "padlint runtime: engine workers: 1 process(es) reported: 2 objects checked" in text


def test_record_worker_violations_are_listed_and_counted_in_the_closing_line(tmp_path):
    out = _pytest(tmp_path, "--padlint-runtime=record", tests=ENGINE_TEST, ini="[pytest]\n")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "2 passed, 2 padlint violations" in out.stdout
    lines = _lines(out)
    assert "  during: test_toy.py::test_engine" in lines
    assert sum("CommonAttentionMetadata.seq_lens: 1 stale padding row(s) in [3:4)" in line for line in lines) == 1


def test_reports_directory_and_environment_are_removed_after_the_session(tmp_path):
    probe = textwrap.dedent('''
        import os
        def test_probe():
            print("DIR=" + os.environ["PADLINT_REPORT_DIR"])
    ''')
    out = _pytest(tmp_path, "--padlint-runtime=record", tests=probe, ini="[pytest]\n")
    directory = next(line[4:] for line in out.stdout.splitlines() if line.startswith("DIR="))
    import os

    assert not os.path.exists(directory)


def test_reader_reads_complete_lines_only(tmp_path):
    path = tmp_path / "worker-1.jsonl"
    path.write_text('{"kind": "violation", "n": 1}\n{"kind": "viol')
    reader = ReportReader(str(tmp_path))
    assert reader.read_new() == [{"kind": "violation", "n": 1}]
    assert reader.read_new() == []  # the partial line waits
    with open(path, "a") as f:
        f.write('ation", "n": 2}\nnot json\n')
    assert reader.read_new() == [{"kind": "violation", "n": 2}]
    assert reader.bad_lines == 1


def test_concurrent_writers_do_not_interleave_lines(tmp_path):
    code = textwrap.dedent('''
        import sys
        from padlint.runtime.reports import ReportWriter
        w = ReportWriter(sys.argv[1])
        for i in range(300):
            assert w.write({"kind": "violation", "i": i, "text": "x" * 3000})
    ''')
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    records = ReportReader(str(tmp_path)).read_new()
    assert len(records) == 900 and all(len(r["text"]) == 3000 for r in records)
    assert len(list(tmp_path.glob("worker-*.jsonl"))) == 3


def test_a_writer_never_raises(tmp_path):
    w = ReportWriter(str(tmp_path / "missing" / "dir"))
    assert w.write({"kind": "summary"}) is False and "FileNotFoundError" in w.failed
