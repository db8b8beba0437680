"""PAD004 on real vLLM releases: the GDN builder's request buffers sliced with a token count.

vLLM 0.23.0's ``GDNAttentionMetadataBuilder.build``
(``vllm/v1/attention/backends/gdn_attn.py``) sets
``batch_size = m.num_actual_tokens`` ("already padded by the model runner for
CUDAGraph": a padded *token* count) and slices six persistent buffers with it:
``spec_state_indices_tensor``, ``spec_sequence_masks``, ``num_accepted_tokens``,
``non_spec_state_indices_tensor`` (``[:batch_size]``) and ``spec_query_start_loc``,
``non_spec_query_start_loc`` (``[: batch_size + 1]``).  Every one of them is
allocated in ``__init__`` with first dimension ``self.decode_cudagraph_max_bs``
(``+ 1`` for the two offsets; the profile's ``[axes.reqs].sizes`` has ``*_max_bs``)
and refreshed with ``[:num_spec_decodes]`` / ``[:num_decodes]`` (request counts):
one row per request.  vLLM 0.24.0 sets ``batch_size = m.num_reqs``: the same
slices are on the request axis and nothing is reported.

The other buffers of the builder (``spec_token_indx``, ``non_spec_token_indx``)
are allocated ``decode_cudagraph_max_bs * (num_spec + 1)`` rows, a product whose
axis PAD004 does not guess, and sliced with ``.size(0)``: not reported.

The trees come from the corpus cache (``tests/corpus_cache.py``); a version that is
not there and cannot be fetched skips the test.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

_HELPER = Path(__file__).resolve().parents[1] / "corpus_cache.py"
ROOT = Path(__file__).resolve().parents[2]
GDN = Path("vllm/v1/attention/backends/gdn_attn.py")
BUFFERS = {"spec_state_indices_tensor", "spec_sequence_masks", "num_accepted_tokens",
           "non_spec_state_indices_tensor", "spec_query_start_loc", "non_spec_query_start_loc"}


def _corpus_cache():
    spec = importlib.util.spec_from_file_location("padlint_tests_corpus_cache_pad004", _HELPER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _gdn(version: str) -> Path:
    cc = _corpus_cache()
    try:
        tree = cc.ensure_vllm(version)
    except cc.CorpusError as e:
        pytest.skip(f"vLLM {version} not in the corpus cache: {e}")
    return tree / GDN


def _pad004(path: Path) -> list[dict]:
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "padlint", "check", str(path), "--select", "PAD004",
                           "--format", "json", "--no-cache"],
                          capture_output=True, text=True, timeout=900, env=env, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return json.loads(proc.stdout)["findings"]


def _line_of(path: Path, text: str) -> int:
    hits = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip() == text]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def test_vllm_0_23_0_gdn_builder_slices_request_buffers_with_a_token_count():
    path = _gdn("0.23.0")
    findings = _pad004(path)
    assert {f["field"] for f in findings} == BUFFERS
    assert len(findings) == len(BUFFERS)  # one per slice
    define = _line_of(path, "batch_size = m.num_actual_tokens")
    for f in findings:
        assert f["code"] == "PAD004"
        assert f["padded"] in ("batch_size", "batch_size + 1")
        assert f["real"] == "m.num_reqs"  # the replacement the message proposes
        assert f"replace `m.num_actual_tokens` with `m.num_reqs` at line {define}" in f["message"]
        assert "one row per request" in f["message"]
        assert "self.decode_cudagraph_max_bs" in f["message"]
        assert f["line"] > define
    # the first slice of the file: `spec_state_indices_tensor = self.spec_state_indices_tensor[:batch_size]`
    first = min(findings, key=lambda f: f["line"])
    assert first["field"] == "spec_state_indices_tensor"
    assert first["line"] == _line_of(path, "spec_state_indices_tensor = self.spec_state_indices_tensor[:batch_size]")


def test_vllm_0_24_0_gdn_builder_fixed():
    path = _gdn("0.24.0")
    assert "batch_size = m.num_reqs" in path.read_text(encoding="utf-8")
    assert _pad004(path) == []


# vLLM 0.30.0's Model Runner V2 drafter (``vllm/v1/worker/gpu/spec_decode/speculator.py``,
# ``DraftModelSpeculator._build_attn_metadata``) calls the module builder
# ``build_attn_metadata`` (``attn_utils.py``, which passes ``seq_lens``, ``query_start_loc_gpu``,
# ``is_prefilling`` and more to one ``CommonAttentionMetadata``) with ``num_reqs=num_reqs_padded``,
# ``seq_lens=self.input_buffers.seq_lens[:num_reqs_padded]``, ``query_start_loc_gpu=...[:
# num_reqs_padded + 1]`` and ``is_prefilling=self.draft_is_prefilling[:num_reqs]``: one request
# field at the real count beside the others at the padded count.  vLLM 0.31.0 slices it to
# ``[:num_reqs_padded]`` (the fix): nothing is reported there.
SPEC = Path("vllm/v1/worker/gpu/spec_decode/speculator.py")


def _spec(version: str) -> tuple[Path, Path]:
    cc = _corpus_cache()
    try:
        tree = cc.ensure_vllm(version)
    except cc.CorpusError as e:
        pytest.skip(f"vLLM {version} not in the corpus cache: {e}")
    return tree, tree / SPEC


def _pad004_in(tree: Path, rel: Path) -> list[dict]:
    """PAD004 for one file checked from its tree's root (the builder's module is read as context)."""
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "padlint", "check", str(rel), "--select", "PAD004",
                           "--format", "json", "--no-cache"],
                          cwd=tree, capture_output=True, text=True, timeout=900, env=env, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return json.loads(proc.stdout)["findings"]


def test_vllm_0_30_0_drafter_hands_is_prefilling_at_the_real_count():
    tree, path = _spec("0.30.0")
    findings = _pad004_in(tree, SPEC)
    assert [(f["field"], f["line"]) for f in findings] == [
        ("is_prefilling", _line_of(path, "is_prefilling=self.draft_is_prefilling[:num_reqs],"))]
    f = findings[0]
    assert f["real"] == "num_reqs" and f["padded"] == "num_reqs_padded"
    assert "built by `build_attn_metadata`" in f["message"]
    assert "`seq_lens`" in f["message"]


def test_vllm_0_31_0_drafter_fixed():
    tree, path = _spec("0.31.0")
    assert "is_prefilling=self.draft_is_prefilling[:num_reqs_padded]," in path.read_text(encoding="utf-8")
    assert _pad004_in(tree, SPEC) == []


# vLLM 0.33.0's Model Runner V2 (V34-1 in docs/historical-bugs.md): the runner gathers
# ``prompt_lens = self.req_states.prompt_len.gpu[idx_mapping]`` (``model_runner.py``), where
# ``idx_mapping`` is the device copy (``async_tensor_h2d``) of ``BatchReqState.idx_mapping_np``,
# ``np.fromiter(..., count=num_reqs)``: one row per scheduled request, the real count.  It goes
# into ``InputBatch.prompt_lens``; each model state's ``prepare_attn`` picks
# ``num_reqs = input_batch.num_reqs_after_padding`` under FULL graphs and hands
# ``build_attn_metadata`` that count (the builder cuts ``seq_lens`` to it) beside
# ``rswa_prefix_lens=input_batch.prompt_lens``: fewer rows than the object says.  0.34.0 pads it
# in the builder ("FULL graphs include inactive padded requests. Their prompt lengths must be
# zero"), so the builder no longer hands the parameter on as it is.  ``req_idx`` (``default.py``
# only, ``input_batch.idx_mapping_np``: the same real rows; ``CommonAttentionMetadata`` documents
# it as ``(batch_size,)``) and ``is_prefilling`` (``default.py`` only, ``torch.from_numpy(
# input_batch.is_prefilling_np)``, ``num_computed_prefill_tokens_np < prefill_len_np`` of two
# gathers with ``idx_mapping_np``: the same real rows; the Mamba hybrid state hands a padded one
# of its own instead) are not padded in either release: reported in both.
STATES = [Path("vllm/v1/worker/gpu/model_states") / f for f in ("default.py", "encoder_decoder.py",
                                                                 "mamba_hybrid.py")]


def _states(version: str) -> tuple[Path, list[dict]]:
    cc = _corpus_cache()
    try:
        tree = cc.ensure_vllm(version)
    except cc.CorpusError as e:
        pytest.skip(f"vLLM {version} not in the corpus cache: {e}")
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "padlint", "check", *map(str, STATES), "--select", "PAD004",
                           "--format", "json", "--no-cache"],
                          cwd=tree, capture_output=True, text=True, timeout=900, env=env, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return tree, json.loads(proc.stdout)["findings"]


def test_vllm_0_33_0_model_states_hand_prompt_lens_at_the_real_count():
    tree, findings = _states("0.33.0")
    rswa = sorted((f["path"], f["line"]) for f in findings if f["field"] == "rswa_prefix_lens")
    assert rswa == sorted((str(p), _line_of(tree / p, "rswa_prefix_lens=input_batch.prompt_lens,")) for p in STATES)
    for f in findings:
        if f["field"] == "rswa_prefix_lens":
            assert "built by `build_attn_metadata`" in f["message"]
            assert "where `num_reqs = input_batch.num_reqs_after_padding`" in f["message"]
            assert "one row per real request" in f["message"]
            # the trace follows the rows to where they were made, in the runner's module
            texts = " | ".join(s["note"] for s in f["trace"])
            assert "gathers one row per row of `idx_mapping`" in texts
            assert "count=num_reqs" in texts
    others = sorted((f["field"], f["path"], f["line"]) for f in findings if f["field"] != "rswa_prefix_lens")
    assert others == [
        ("is_prefilling", str(STATES[0]),
         _line_of(tree / STATES[0], "is_prefilling=torch.from_numpy(input_batch.is_prefilling_np),")),
        ("req_idx", str(STATES[0]), _line_of(tree / STATES[0], "req_idx=input_batch.idx_mapping_np,"))]
    assert len(findings) == 5


def test_vllm_0_34_0_builder_pads_prompt_lens():
    tree, findings = _states("0.34.0")
    assert "Their prompt lengths" in (tree / "vllm/v1/worker/gpu/attn_utils.py").read_text(encoding="utf-8")
    assert sorted(f["field"] for f in findings) == ["is_prefilling", "req_idx"]
