"""padlint on real vLLM releases: the canonical bug (vLLM issue 41841).

vLLM 0.21.0's `GPUModelRunner._build_attention_metadata` derives
`is_prefilling = num_computed_tokens_cpu < num_prompt_tokens_cpu` from two
padded slices (`[:num_reqs_padded]`) of input-batch state and passes it to
`CommonAttentionMetadata(is_prefilling=is_prefilling)` with its padding rows
unreset.  vLLM 0.22.0 adds `is_prefilling[num_reqs:] = False` before the
constructor.  So padlint must report field `is_prefilling` on 0.21.0, at
the `is_prefilling=is_prefilling` argument, and must not on 0.22.0.

The sources come from the released wheels, fetched and cached by
`tests/corpus_cache.py` (`make corpus`; the first run downloads ~250 MB per
version).  Only the fields of this case are asserted: other findings in
these 7000-line files are not pinned here.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import libcst
import pytest

from padlint.analysis import check_module
from padlint.profile import load_profile

pytestmark = pytest.mark.corpus

_HELPER = Path(__file__).resolve().parents[1] / "corpus_cache.py"


def _load_corpus_cache():
    """Import tests/corpus_cache.py by path (independent of pytest's import mode)."""
    spec = importlib.util.spec_from_file_location("padlint_tests_corpus_cache", _HELPER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


corpus_cache = _load_corpus_cache()


@pytest.fixture(scope="module")
def profile():
    return load_profile("vllm")


@pytest.fixture(scope="module")
def runner_021() -> Path:
    return corpus_cache.runner_path("0.21.0")


@pytest.fixture(scope="module")
def runner_022() -> Path:
    return corpus_cache.runner_path("0.22.0")


def _check(path: Path, profile):
    source = path.read_text(encoding="utf-8")
    return source, check_module(libcst.parse_module(source), str(path), profile)


def _sink_arg_line(source: str) -> int:
    """Line of `is_prefilling=is_prefilling,`: the constructor argument (one in the file)."""
    hits = [i for i, line in enumerate(source.splitlines(), 1)
            if line.strip() == "is_prefilling=is_prefilling,"]
    assert len(hits) == 1, f"expected one is_prefilling= argument, found lines {hits}"
    return hits[0]


def _run_cli(path: Path) -> list[dict]:
    """`padlint check --format json PATH` in a subprocess; the findings as dicts.

    Uses the installed console script beside this interpreter when present.
    Accepts a JSON list of findings or an object with a "findings" list.
    """
    script = Path(sys.executable).with_name("padlint")
    if script.is_file():
        cmd = [str(script)]
    else:
        cmd = [sys.executable, "-c", "import sys; from padlint.cli import main; sys.exit(main())"]
    proc = subprocess.run(cmd + ["check", "--format", "json", str(path)],
                          check=False, capture_output=True, text=True, timeout=600)
    # 0: no findings, 1: findings; anything else is a usage or internal error.
    assert proc.returncode in (0, 1), f"exit {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        pytest.fail(f"padlint check --format json printed no JSON ({e}); exit {proc.returncode}\n"
                    f"stdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}")
    findings = doc["findings"] if isinstance(doc, dict) else doc
    assert isinstance(findings, list), type(findings)
    return findings


def _stale_paths(path, field: str) -> list[tuple[str, ...]]:
    """Every call path on which the value of ``field`` may be stale at its sink (engine facts)."""
    from padlint.analysis.engine import Source, check_project

    facts: dict = {}
    check_project([Source(str(path), path.read_text(encoding="utf-8"))], load_profile("vllm"), facts=facts)
    return [p for (_f, _l, fld), paths in facts.items() if fld == field for p in paths]


def _real_step(path: tuple[str, ...]) -> bool:
    """A path of a real step: through execute_model into the metadata builder, no dummy run."""
    # a step names its class where it calls a namesake (`Worker.execute_model ->
    # GPUModelRunner.execute_model`): compared by the function's own name
    names = [n.rpartition(".")[2] for n in path]
    return "execute_model" in names and "_dummy_run" not in names and names[-1] == "_build_attention_metadata"


def test_vllm_0_21_0_reports_is_prefilling(runner_021, profile):
    source, findings = _check(runner_021, profile)
    hits = [f for f in findings if f.field == "is_prefilling"]
    # two findings at the argument: the real step's (the bug of issue 41841) and the dummy runs'
    assert len(hits) == 2, [(f.line, f.field, f.function, f.message) for f in findings]
    for f in hits:
        assert f.code == "PAD001"
        assert f.sink == "CommonAttentionMetadata"
        assert f.function.endswith("_build_attention_metadata"), f.function
        assert f.line == _sink_arg_line(source)
        assert (f.real, f.padded) == ("num_reqs", "num_reqs_padded")
    real = [f for f in hits if "dummy" not in f.message]
    dummy = [f for f in hits if "dummy" in f.message]
    assert len(real) == 1 and len(dummy) == 1, [f.message for f in hits]
    paths = _stale_paths(runner_021, "is_prefilling")
    assert any(_real_step(p) for p in paths), paths
    assert any("_dummy_run" in p for p in paths), paths
    # the real step's finding proposes the line vLLM 0.22.0 added, before the constructor
    assert real[0].fix is not None
    assert real[0].fix.text == "is_prefilling[num_reqs:] = False"
    assert real[0].fix.line < real[0].line
    assert "is_prefilling[num_reqs:] = False" not in source  # (not there yet)
    # on the dummy paths the callee's num_reqs is the caller's padded count: that reset writes no
    # row there, so the dummy runs' finding proposes none and names the call that binds it
    assert dummy[0].fix is None
    assert "writes no row on these paths" in dummy[0].message
    assert re.search(r"on \d+ paths", dummy[0].message), dummy[0].message


def test_vllm_0_22_0_does_not_report_is_prefilling_on_a_real_step(runner_022, profile):
    source, findings = _check(runner_022, profile)
    assert "is_prefilling[num_reqs:] = False" in source  # the fix is there
    paths = _stale_paths(runner_022, "is_prefilling")
    assert not [p for p in paths if _real_step(p)]
    # what remains is the dummy runs, which pass their padded count as the real count and
    # write none of the input-batch rows the mask is derived from (issue 8, point 3): one finding
    assert paths and all("_dummy_run" in p for p in paths), paths
    hits = [f for f in findings if f.field == "is_prefilling"]
    assert len(hits) == 1 and "all dummy runs" in hits[0].message, [f.message for f in hits]


def test_cli_json_on_vllm_0_21_0(runner_021):
    findings = _run_cli(runner_021)
    hits = [f for f in findings if f.get("field") == "is_prefilling"]
    assert len(hits) == 2, [(f.get("line"), f.get("field")) for f in findings]  # real step, dummy runs
    for h in hits:
        assert h["code"] == "PAD001"
        assert h["sink"] == "CommonAttentionMetadata"
        assert h["line"] == _sink_arg_line(runner_021.read_text(encoding="utf-8"))
