"""CUDA graphs captured through a manager (vLLM Model Runner V2's speculators).

The speculator hands its step functions to a graph manager (``self.prefill_cudagraph_manager.
capture(self._prefill, ...)``), which captures one graph per padded size by calling them with that
size; a step dispatches a descriptor of the padded size (``desc = dispatch_cg(manager,
num_reqs)``) and replays its graph (``self.prefill_cudagraph_manager.run_fullgraph(desc)``).  The
captured function reads ``self.idx_mapping[:num_reqs]`` with the captured size, so every replay
reads the rows ``[num_reqs:desc.num_reqs]`` as they were left: vLLM 0.24.0 wrote only
``self.idx_mapping[:num_reqs]`` (stale request-state indices in the padding rows: the drafter
sampled for them), 0.25.0 added ``self.idx_mapping[num_reqs:].fill_(-1)`` under a test of
``self.draft_logits`` (vllm#47066) and 0.27.1 made it unconditional.  Here: which replay reads
what, when two managers capture different functions.  Written from scratch.
"""

from __future__ import annotations

from pathlib import Path

from .project_files import check_files

# the manager of the project fixture (fixtures/project/managed_graph_replay_*, whose buggy and
# fixed drafters tests/static/test_project_fixtures.py checks: vLLM 0.24.0's B3 and its fix)
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "project" / "managed_graph_replay_buggy" / "pkg"
MANAGER = (FIXTURE / "cudagraph.py").read_text(encoding="utf-8")

TWO_MANAGERS = '''\
import torch

from pkg.cudagraph import GraphManager, dispatch_cg


class Speculator:
    def __init__(self, max_num_reqs: int, fused: bool) -> None:
        self.fused = fused
        self.idx_mapping = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.positions = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.hidden = torch.zeros(max_num_reqs, 8)
        self.prefill_cudagraph_manager = GraphManager([8, 16])
        self.decode_cudagraph_manager = GraphManager([8, 16])

    def capture(self) -> None:
        self.idx_mapping.fill_(-1)  # no request owns a row at capture (vLLM 0.34.0)
        self.prefill_cudagraph_manager.capture(self._prefill)
        decode_fn = self._generate_fused if self.fused else self._generate_draft
        self.decode_cudagraph_manager.capture(decode_fn)

    def propose(self, input_batch) -> None:
        num_reqs = input_batch.num_reqs
        self.idx_mapping[:num_reqs].copy_(input_batch.idx_mapping)
        self.idx_mapping[num_reqs:].fill_(-1)
        self.positions[:num_reqs].copy_(input_batch.positions)
        {RESET}
        desc = dispatch_cg(self.prefill_cudagraph_manager, num_reqs)
        self.prefill_cudagraph_manager.run_fullgraph(desc)
        decode_desc = dispatch_cg(self.decode_cudagraph_manager, num_reqs)
        self.decode_cudagraph_manager.run_fullgraph(decode_desc)

    def _prefill(self, num_reqs: int) -> None:
        self.hidden[:num_reqs] = 0
        h = self.hidden[:num_reqs]
        torch.ops.vllm.sample(self.idx_mapping[:num_reqs], h)

    def _generate_draft(self, num_reqs: int) -> None:
        torch.ops.vllm.draft(self.idx_mapping[:num_reqs], self.positions[:num_reqs])

    def _generate_fused(self, num_reqs: int) -> None:
        torch.ops.vllm.fused_draft(self.positions[:num_reqs])
'''


def test_each_manager_replays_what_it_captured(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": TWO_MANAGERS}
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"], {"RESET": "pass"}) if f.code == "PAD001"]
    # `positions` is read by the decode functions only (either arm of `decode_fn`): the decode
    # replay (line 30) reads its rows [num_reqs:decode_desc.num_reqs], the prefill replay (28)
    # does not; `hidden`, which `_prefill` writes before it reads it, is no input of the replay
    assert [(f.line, f.field) for f in got] == [(30, "positions")]
    assert "rows [num_reqs:decode_desc.num_reqs]" in got[0].message
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"],
                                  {"RESET": "self.positions[num_reqs:].zero_()"}) if f.code == "PAD001"]
    assert got == []


def test_a_slice_a_torch_op_writes_through_out_keeps_its_name(tmp_path):
    # vLLM 0.34.0's `_decode` (StandaloneARSpeculator): `torch.clamp(self.positions[:n] + 1, ...,
    # out=self.positions[:n])` reads the rows first, so the replay reads them; `out` is where the
    # op writes, not the input's name: the finding names the buffer, once
    clamp = "torch.clamp(self.positions[:num_reqs] + 1, max=7, out=self.positions[:num_reqs])"
    src = TWO_MANAGERS.replace("torch.ops.vllm.fused_draft(self.positions[:num_reqs])", clamp).replace(
        "torch.ops.vllm.draft(self.idx_mapping[:num_reqs], self.positions[:num_reqs])", clamp)
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": src}
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"], {"RESET": "pass"}) if f.code == "PAD001"]
    assert [(f.line, f.field) for f in got] == [(30, "positions")]


def test_a_slice_the_captured_function_only_scatters_into_is_not_read(tmp_path):
    # vLLM 0.34.0's `_decode`: `self.draft_tokens[:num_reqs].scatter_(1, step, tokens)` stores one
    # column of each row and reads nothing of the rows: the replay reads no padding row of it
    src = TWO_MANAGERS.replace(
        "torch.ops.vllm.fused_draft(self.positions[:num_reqs])",
        "self.positions[:num_reqs].scatter_(0, torch.ops.vllm.step(), torch.ops.vllm.tokens())")
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": src}
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"], {"RESET": "pass"}) if f.code == "PAD001"]
    # `_generate_draft` (the other arm of `decode_fn`) still reads `positions`: reported once
    assert [(f.line, f.field) for f in got] == [(30, "positions")]
    src = src.replace("torch.ops.vllm.draft(self.idx_mapping[:num_reqs], self.positions[:num_reqs])",
                      "torch.ops.vllm.draft(self.idx_mapping[:num_reqs])")
    files["pkg/speculator.py"] = src
    got = [f for f in check_files(tmp_path, files, ["pkg/speculator.py"], {"RESET": "pass"}) if f.code == "PAD001"]
    assert got == []


def _capture_findings(tmp_path, reset: str) -> list:
    src = TWO_MANAGERS.replace("self.idx_mapping.fill_(-1)  # no request owns a row at capture (vLLM 0.34.0)",
                               reset)
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": src}
    return sorted((f.code, f.line, f.field) for f in check_files(tmp_path, files, ["pkg/speculator.py"],
                                                                  {"RESET": "self.positions[num_reqs:].zero_()"}))


def test_a_capture_reads_the_index_fields_of_what_it_captures_on_rows_no_request_holds(tmp_path):
    # The managers call `_prefill` and `_generate_draft` at every captured size before any request
    # is in a graph: every row of `self.idx_mapping[:num_reqs]` they read is a padding row then.
    # Nothing before the captures writes it (vLLM 0.27.1's drafter, B10): each capture (lines 17,
    # 19) hands the captured steps whatever indices an earlier run left, and they sample and
    # write KV through them. `positions` is read there too, but it is no index field: the
    # capture's outputs are dropped, as a dummy run's are
    got = _capture_findings(tmp_path, "pass")
    assert got == [("PAD001", 17, "idx_mapping"), ("PAD001", 19, "idx_mapping")]
    (f, _) = [f for f in check_files(tmp_path, {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER,
                                                   "pkg/speculator.py": TWO_MANAGERS.replace(
                                                       "self.idx_mapping.fill_(-1)  # no request owns a row at "
                                                       "capture (vLLM 0.34.0)", "pass")},
                                     ["pkg/speculator.py"], {"RESET": "pass"}) if f.line in (17, 19)]
    assert "when the graphs captured here read them as `idx_mapping` at capture" in f.message
    assert "reset the buffer to -1 before line 17" in f.message


def test_a_capture_time_fill_must_write_the_fields_neutral_value(tmp_path):
    # vLLM 0.28.0-0.33.0 zeroed it before the captures: 0 is a live request's state row (the
    # captured steps wrote draft logits and KV through it); 0.34.0 fills -1, the profile's
    # neutral value for `idx_mapping`: PAD002 at the fill, once
    got = _capture_findings(tmp_path, "self.idx_mapping.zero_()")
    assert got == [("PAD002", 16, "idx_mapping")]
    assert "writes 0 into the padding rows [0:num_reqs] of `idx_mapping`" in _messages(tmp_path)
    assert _capture_findings(tmp_path, "self.idx_mapping.fill_(-1)") == []


def _messages(tmp_path) -> str:
    src = TWO_MANAGERS.replace("self.idx_mapping.fill_(-1)  # no request owns a row at capture (vLLM 0.34.0)",
                               "self.idx_mapping.zero_()")
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": src}
    return "\n".join(f.message for f in check_files(tmp_path, files, ["pkg/speculator.py"], {"RESET": "pass"}))


SHADOWED = '''\
import torch

from pkg.cudagraph import GraphManager, dispatch_cg


class Speculator:
    def __init__(self, max_num_tokens: int) -> None:
        self.expanded_ids = torch.zeros(max_num_tokens, dtype=torch.int64)
        self.prefill_cudagraph_manager = GraphManager([8, 16])

    def capture(self) -> None:
        self.prefill_cudagraph_manager.capture(self._prefill)

    def propose(self, batch, total: int) -> None:
        self.expanded_ids[:total].copy_(batch.ids)
        desc = dispatch_cg(self.prefill_cudagraph_manager, total)
        {LOCAL}
        self.prefill_cudagraph_manager.run_fullgraph(desc)

    def _prefill(self, num_tokens: int) -> None:
        torch.ops.vllm.draft(self.expanded_ids[:num_tokens])
'''


def test_a_local_holding_the_replayed_size_is_not_the_real_count(tmp_path):
    # vLLM 0.34.0's standalone drafter: `num_tokens = prefill_batch_desc.num_tokens` right before
    # `run_fullgraph`. The captured `_prefill` slices with `num_tokens`, but at the replay that
    # name holds the replayed size, so `[num_tokens:desc.num_tokens]` is no range of padding rows
    # (a fix resetting it would reset nothing): the replay's rows are not judged by that name
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": SHADOWED}
    got = [(f.line, f.field, f.message) for f in check_files(tmp_path, files, ["pkg/speculator.py"],
                                                             {"LOCAL": "num_tokens = desc.num_tokens"})]
    assert got == []
    # the step's real token count in scope under the captured function's name: judged
    got = [(f.line, f.field) for f in check_files(tmp_path, files, ["pkg/speculator.py"],
                                                  {"LOCAL": "num_tokens = total"})]
    assert got == [(18, "expanded_ids")]


KEYWORD_CAPTURED = '''\
import torch

from pkg.cudagraph import GraphManager


class Drafter:
    def __init__(self, max_num_reqs: int, k: int) -> None:
        self.k = k
        self.sample_idx_mapping = torch.full((max_num_reqs * k,), -1, dtype=torch.int32)
        self.query_cudagraph_manager = GraphManager([8, 16])

    def capture(self) -> None:
        {RESET}
        self.query_cudagraph_manager.capture(self._generate, prepare_forward=self._prepare)

    def _generate(self, num_reqs: int) -> None:
        pass

    def stage(self, idx_mapping, n: int) -> None:
        self.sample_idx_mapping[:n].copy_(idx_mapping)

    def _prepare(self, num_reqs: int) -> None:
        num_sample = num_reqs * self.k
        torch.ops.vllm.sample(self.sample_idx_mapping[:num_sample])
'''


def test_a_function_handed_to_the_capture_by_keyword_is_captured_too(tmp_path):
    # vLLM 0.34.0's DFlash drafter: `capture(self._generate_draft, ..., prepare_forward=
    # self._prepare_graph_forward)`; the manager runs both inside the graph. The keyword one reads
    # `sample_idx_mapping[:num_sample]` (`num_sample = num_reqs * k`: rows of no profile axis, all
    # padding rows at capture): nothing before the capture writes them (line 14), and `stage`
    # writes live requests' rows into the buffer
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/drafter.py": KEYWORD_CAPTURED}
    got = [(f.code, f.line, f.field) for f in check_files(tmp_path, files, ["pkg/drafter.py"], {"RESET": "pass"})]
    assert got == [("PAD001", 14, "sample_idx_mapping")]
    got = [(f.code, f.line, f.field) for f in check_files(tmp_path, files, ["pkg/drafter.py"],
                                                          {"RESET": "self.sample_idx_mapping.zero_()"})]
    assert got == [("PAD002", 13, "sample_idx_mapping")]
    assert check_files(tmp_path, files, ["pkg/drafter.py"], {"RESET": "self.sample_idx_mapping.fill_(-1)"}) == []


CONDITIONAL_READ = '''\
import torch

from pkg.cudagraph import GraphManager, dispatch_cg


class Drafter:
    def __init__(self, max_num_reqs: int, keep_logits: bool) -> None:
        self.idx_mapping = torch.zeros(max_num_reqs, dtype=torch.int64)
        self.draft_logits = torch.zeros(max_num_reqs, 8) if keep_logits else None
        self.prefill_cudagraph_manager = GraphManager([8, 16])

    def capture(self) -> None:
        self.idx_mapping.fill_(-1)
        self.prefill_cudagraph_manager.capture(self._prefill)

    def propose(self, input_batch) -> None:
        num_reqs = input_batch.num_reqs
        self.idx_mapping[:num_reqs].copy_(input_batch.idx_mapping)
        if {GUARD}:
            self.idx_mapping[num_reqs:].fill_(-1)
        desc = dispatch_cg(self.prefill_cudagraph_manager, num_reqs)
        self.prefill_cudagraph_manager.run_fullgraph(desc)

    def _prefill(self, num_reqs: int) -> None:
        idx_mapping = self.idx_mapping[:num_reqs]
        self.sample_draft(idx_mapping, self.draft_logits)

    def sample_draft(self, idx_mapping, draft_logits):
        if draft_logits is not None:
            return torch.ops.vllm.gumbel_sample(idx_mapping, draft_logits)
        return None
'''


def test_a_slice_the_graph_reads_only_under_a_setting_is_covered_by_a_reset_under_it(tmp_path):
    # vLLM 0.25.0 (B3's first fix): the drafter resets idx_mapping's padding rows only when it
    # keeps draft logits, and the captured `_prefill` hands the slice to `sample_draft`, which
    # reads it only then (`if draft_logits is not None:`, bound to `self.draft_logits`): the replay
    # reads no stale row on either path
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/drafter.py": CONDITIONAL_READ}
    assert check_files(tmp_path, files, ["pkg/drafter.py"], {"GUARD": "self.draft_logits is not None"}) == []
    # a reset under another test does not cover it (the replay at line 22)
    got = [(f.line, f.field) for f in check_files(tmp_path, files, ["pkg/drafter.py"],
                                                  {"GUARD": "input_batch.full"})]
    assert got == [(22, "idx_mapping")]
    # and a read the callee makes outside the test is a read on every path
    src = CONDITIONAL_READ.replace("        return None\n", "        return torch.ops.vllm.greedy(idx_mapping)\n")
    files["pkg/drafter.py"] = src
    got = [(f.line, f.field) for f in check_files(tmp_path, files, ["pkg/drafter.py"],
                                                  {"GUARD": "self.draft_logits is not None"})]
    assert got == [(22, "idx_mapping")]


SAMPLER = '''\
import torch


class Sampler:
    def __init__(self, max_num_reqs: int) -> None:
        self.scores = torch.zeros(max_num_reqs, dtype=torch.float32)

    def sample(self, logits, num_reqs: int) -> None:
        {SAMPLE}
'''


def test_rows_a_holder_method_writes_before_the_read_are_no_replay_input(tmp_path):
    # vLLM 0.34.0's DFlash2 `_generate_draft`: `self.candidate_sampler.sample(...)` writes the
    # sampler's `scores` (through a Triton kernel) before `self.candidate_sampler.scores[:num_reqs]`
    # is read: those rows are the graph's own work, no replay reads what an earlier step left.
    # A `sample` that only reads (hands `scores` to nothing) leaves the read a replay input.
    src = TWO_MANAGERS.replace(
        "        self.prefill_cudagraph_manager = GraphManager([8, 16])",
        "        self.sampler = Sampler(max_num_reqs)\n        self.prefill_cudagraph_manager = GraphManager([8, 16])",
    ).replace(
        "torch.ops.vllm.fused_draft(self.positions[:num_reqs])",
        "self.sampler.sample(self.hidden, num_reqs)\n"
        "        torch.ops.vllm.fused_draft(self.sampler.scores[:num_reqs])",
    ).replace("from pkg.cudagraph import GraphManager, dispatch_cg",
              "from pkg.cudagraph import GraphManager, dispatch_cg\nfrom pkg.sampler import Sampler")
    files = {"pkg/__init__.py": "", "pkg/cudagraph.py": MANAGER, "pkg/speculator.py": src,
             "pkg/sampler.py": SAMPLER}

    def fields(sample: str) -> list[str]:
        return sorted(f.field for f in check_files(tmp_path, files, ["pkg/speculator.py"],
                                                    {"RESET": "self.positions[num_reqs:].zero_()",
                                                     "SAMPLE": sample}) if f.code == "PAD001")
    # a kernel launch handed a slice of `self.scores` may write it
    assert fields("sample_kernel[(num_reqs,)](logits, self.scores[:num_reqs], num_reqs)") == []
    assert fields("self.scores[:num_reqs].copy_(logits.sum(-1))") == []
    # `sample` reads logits only: the replay reads the rows [num_reqs:...] of `scores` as left
    assert fields("torch.ops.vllm.noop(logits)") == ["scores"]
    # a call that only reads `scores` (a reduction, `len`) writes none of its rows
    assert fields("return torch.argmax(self.scores[:num_reqs])") == ["scores"]
    # a call under a test may not run: the read still sees the rows an earlier step left
    src_if = src.replace("        self.sampler.sample(self.hidden, num_reqs)\n",
                         "        if num_reqs > 4:\n            self.sampler.sample(self.hidden, num_reqs)\n")
    assert src_if != src
    files["pkg/speculator.py"] = src_if
    assert fields("sample_kernel[(num_reqs,)](logits, self.scores[:num_reqs], num_reqs)") == ["scores"]
