"""Real-engine tier: padlint's runtime checker on vLLM's own methods (``-m engine``).

vLLM's ``.py`` files run from the release trees of the corpus cache
(``tests/corpus_cache.py``), its import-time dependencies from the cached
directory of ``tests/runtime/engine/engine_env.py`` (``make engine-deps``;
``make test`` runs it first).  Each version runs in one subprocess
(``tests/runtime/engine/vllm_driver.py``, which documents the scenarios and
their data), so this process never imports vLLM.  Without the dependencies
or a release tree every test here skips with one reason.

Expected results, from the data the driver sets up (3 live decode requests
padded to 5 request rows and 5 token rows):

* vLLM 0.21.0 derives ``is_prefilling = computed < prompt`` from two padded
  slices; padding rows 3, 4 hold computed 0 and prompts 7, 9 (left by
  ``condense()``), so rows [3:5) are True: strict mode raises, naming
  exactly that field and those rows, with the provider's counts.
* 0.22.0 and 0.33.0 reset ``is_prefilling[num_reqs:] = False``; every other
  buffer holds its neutral value (the slot mapping is padded with -1), so
  nothing is reported.
* Model Runner V2 (0.33.0): counts come from ``input_batch.num_reqs`` /
  ``input_batch.num_reqs_after_padding``; stale seq_lens rows [3:5) (17, 5)
  are reported with those counts; with zeros nothing is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "tests" / "runtime" / "engine"
sys.path.insert(0, str(ENGINE))
import engine_env

sys.path.insert(0, str(ROOT))
from tests import corpus_cache

pytestmark = pytest.mark.engine

COUNTS_V1 = "GPUModelRunner._build_attention_metadata(num_reqs=3, num_reqs_padded=5, num_tokens=3, num_tokens_padded=5)"
COUNTS_MRV2 = ("DefaultModelState.prepare_attn(input_batch.num_reqs=3, input_batch.num_reqs_after_padding=5, "
               "input_batch.num_tokens=3, input_batch.num_tokens_after_padding=5)")


def skip_reason(version: str) -> str | None:
    """One reason why the tier cannot run here, or None."""
    if not engine_env.is_installed():
        return (f"vLLM's import dependencies are not installed in {engine_env.deps_dir()} "
                f"(run `make engine-deps`)")
    if not corpus_cache.is_extracted(version):
        return f"vLLM {version} release tree not in the corpus cache (run `make corpus`)"
    return None


def engine_env_vars(version: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PADLINT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(corpus_cache.tree_dir(version)), str(engine_env.deps_dir()), str(ROOT)])
    return env


@cache
def drive(version: str, *scenarios: str) -> dict:
    """Run the driver once for ``version`` and these scenarios; skip (one reason) without the environment."""
    reason = skip_reason(version)
    if reason:
        pytest.skip(reason)
    proc = subprocess.run([sys.executable, str(ENGINE / "vllm_driver.py"), *scenarios], cwd=ROOT,
                          env=engine_env_vars(version), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


V021 = ("0.21.0", "v1:strict", "v1-async")
V033 = ("0.33.0", "v1", "mrv2-stale", "mrv2-clean", "mrv2-build-only")


def test_v1_0_21_0_strict_fails_with_is_prefilling_rows_3_to_5():
    out = drive(*V021)["v1:strict"]
    assert out["raised"] == "StalePaddingError"
    assert [(v["field"], v["rows"], v["values"], v["start"], v["stop"]) for v in out["violations"]] == [
        ("is_prefilling", [3, 4], [True, True], 3, 5)]
    assert out["violations"][0]["counts_from"] == COUNTS_V1
    assert "CommonAttentionMetadata.is_prefilling: 2 stale padding row(s) in [3:5)" in out["message"]
    assert out["built"] == 0  # strict: the error left the constructor, no backend saw the object


def test_v1_0_21_0_reads_no_property_no_deprecation_warning_no_cpu_copy_under_async_spec_decode():
    out = drive(*V021)["v1-async"]
    # the check still finds the bug, and reading the object ran none of vLLM's deprecated properties
    assert [v["field"] for v in out["violations"]] == ["is_prefilling"]
    assert not [w for w in out["warnings"] if "Deprecat" in w], out["warnings"]
    # vLLM leaves the CPU copies None under async spec decode; padlint must not fill them in
    assert out["unfilled"] == {"_seq_lens_cpu": True, "_num_computed_tokens_cpu": True}
    # both None fields, and the two deprecated properties, are counted as not filled
    assert out["stats"]["unfilled"] >= 2


@pytest.mark.parametrize("version", ["0.22.0", "0.33.0"])
def test_v1_fixed_releases_are_clean_with_realistic_data(version):
    out = drive(version, "v1:strict", "v1")["v1:strict"] if version == "0.22.0" else drive(*V033)["v1"]
    assert out["raised"] is None and out["violations"] == []
    assert out["built"] == 1 and out["stats"]["objects"] == 1 and out["stats"]["fields"] >= 7
    assert not [w for w in out["warnings"] if "Deprecat" in w]


def test_v1_0_33_0_profile_knows_every_tensor_field():
    out = drive(*V033)["v1"]
    assert out["unknown_fields"] == {}


def _rows(out: dict) -> list[dict]:
    """The stale-row violations (not the row-count ones, see test_mrv2_is_prefilling_row_count)."""
    return [v for v in out["violations"] if "row counts" not in v["when"]]


def test_mrv2_stale_rows_reported_with_the_steps_counts():
    out = drive(*V033)["mrv2-stale"]
    assert out["raised"] is None  # record mode
    got = {v["field"]: (v["rows"], v["values"], v["counts_from"]) for v in _rows(out)}
    assert got == {"seq_lens": ([3, 4], [17, 5], COUNTS_MRV2),
                   "seq_lens_cpu_upper_bound": ([3, 4], [17, 5], COUNTS_MRV2)}
    assert _rows(out)[0]["fix"].startswith(
        "seq_lens[input_batch.num_reqs:input_batch.num_reqs_after_padding] = 0")
    assert "vllm.v1.worker.gpu.model_states.default:DefaultModelState.prepare_attn" in out["hooked"]
    assert out["no_counts"] == [] and out["unresolved"] == []


def test_mrv2_clean_batch_passes():
    out = drive(*V033)["mrv2-clean"]
    assert _rows(out) == [] and out["built"] == 1 and out["stats"]["fields"] >= 5


@pytest.mark.parametrize("scenario", ["mrv2-clean", "mrv2-stale", "mrv2-build-only"])
def test_mrv2_is_prefilling_row_count(scenario):
    """vLLM 0.33.0 Model Runner V2: DefaultModelState.prepare_attn passes
    ``is_prefilling=torch.from_numpy(input_batch.is_prefilling_np)``, which has ``num_reqs``
    rows (model_runner.py builds it from ``idx_mapping_np``: real requests only), while
    ``seq_lens`` and the offsets have ``num_reqs_after_padding`` (5 here, 3 real).  The
    row-count check at construction reports it (PAD004's runtime half): MambaHybridModelState
    pads its ``is_prefilling`` to the padded count, and ``split_decodes_and_prefills`` ORs it
    into a mask of the padded length (``is_prefill |= is_prefilling``), which fails for 3 rows
    against 5.  Latent under the default model state (no backend there takes that branch)."""
    out = drive(*V033)[scenario]
    widths = [v for v in out["violations"] if "row counts" in v["when"]]
    assert [(v["field"], v["real"], v["padded"], v["axis"]) for v in widths] == [("is_prefilling", 3, 5, "reqs")]


def test_module_function_hooked_in_the_module_that_imported_it_by_name():
    out = drive(*V033)["mrv2-build-only"]
    assert out["importer_patched"] is True
    # build_attn_metadata receives the padded count as num_reqs under a FULL graph: the
    # provider's counts (5, not padded) were used, not counts inferred from the object
    assert _rows(out) == [] and out["stats"]["objects"] == 1 and out["no_counts"] == []


def test_real_vllm_worker_loads_the_plugin_and_reports_to_the_report_directory(tmp_path):
    """vLLM 0.21.0's load_general_plugins() finds padlint's entry point in a worker process;
    the violation reaches PADLINT_REPORT_DIR although the worker swallowed the error."""
    from padlint.runtime.reports import ReportReader

    reason = skip_reason("0.21.0")
    if reason:
        pytest.skip(reason)
    env = engine_env_vars("0.21.0")
    env.update(PADLINT_RUNTIME="strict", PADLINT_REPORT_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, str(ENGINE / "vllm_driver.py"), "worker"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"installed": True, "raised": "StalePaddingError"}
    records = ReportReader(str(tmp_path)).read_new()
    violations = [r for r in records if r["kind"] == "violation"]
    assert [(r["field"], r["rows"]) for r in violations] == [("is_prefilling", [3, 4])]
    assert violations[0]["counts_from"] == COUNTS_V1
    [summary] = [r for r in records if r["kind"] == "summary"]
    assert summary["hooked"] is True and summary["stats"]["violations"] == 1
