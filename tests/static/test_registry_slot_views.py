"""Graph inputs a capture binds through a buffer registry's slot views (SGLang 0.5.13 on).

SGLang's graph runners stopped slicing their input buffers in the capture
(`buffers.positions[:num_tokens]`) and take each slot's padded view from the registry instead:
`registry.get_slot("positions").slice_for(bs, num_tokens)`, through a helper nested in the
capture method (`def _slot(name): return registry.get_slot(name).slice_for(bs, num_tokens)`;
`positions = _slot("positions")`).  The view runs up to `bs` for a slot of axis "bs" and up to
`num_tokens` for one of axis "tokens" (profile `[registry] lookup`, `slice_method`,
`slice_counts`); every replay of the graph reads those rows.  SGLang 0.5.13's `positions` and
`mrope_positions` slots had the default FOREACH_COPY policy, which leaves the padding rows as the
last replay left them; 0.5.14 gave them ZERO ("the flashinfer verify-path plan reads the padded
tail, so leaving stale out-of-range values there triggers an illegal memory access", sglang#24361;
docs/historical-bugs.md, S6).  The registry below is the one of the project fixture
`fixtures/project/sglang/registry_builder_*` (written from scratch); the runner is written here.
"""

from __future__ import annotations

from pathlib import Path

from .project_files import check_files

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "project" / "sglang"
REGISTRY = (ROOT / "registry_builder_buggy" / "pkg" / "registry.py").read_text(encoding="utf-8")

RUNNER = '''\
import bisect

import torch

from pkg.registry import build_decode_registry


class DecodeInputBuffers:
    def __init__(self, max_bs: int, max_num_token: int) -> None:
        self.positions = torch.zeros((max_num_token,), dtype=torch.int64)
        self.req_pool_indices = torch.zeros((max_bs,), dtype=torch.int64)


class DecodeGraphRunner:
    def __init__(self, capture_bs: list[int], tokens_per_bs: int) -> None:
        self.capture_bs = sorted(capture_bs)
        self.tokens_per_bs = tokens_per_bs
        self.graphs = {}
        self.buffers = DecodeInputBuffers(self.capture_bs[-1], self.capture_bs[-1] * tokens_per_bs)
        self.buffer_registry = build_decode_registry(max_bs=self.capture_bs[-1], source=self.buffers)

    def capture_one_batch_size(self, bs: int) -> None:
        num_tokens = bs * self.tokens_per_bs
        registry = self.buffer_registry

        def _slot(name):
            return registry.get_slot(name).slice_for(bs, num_tokens)

        positions = {VIEW}
        req_pool_indices = _slot("req_pool_indices")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model.forward(positions, req_pool_indices)
        self.graphs[bs] = graph

    def replay(self, forward_batch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self.capture_bs[bisect.bisect_left(self.capture_bs, raw_bs)]
        raw_num_token = raw_bs * self.tokens_per_bs
        num_tokens = bs * self.tokens_per_bs
        self.buffer_registry.fill_from(forward_batch, raw_bs=raw_bs, padded_bs=bs,
                                       raw_num_tokens=raw_num_token, padded_num_tokens=num_tokens)
        self.graphs[bs].replay()
'''


def _found(tmp_path, policy: str, view: str = '_slot("positions")') -> list[tuple[int, str]]:
    registry = REGISTRY.replace('padding_policy=PaddingPolicy.FOREACH_COPY),',
                                f'padding_policy=PaddingPolicy.{policy}),')
    files = {"pkg/__init__.py": "", "pkg/registry.py": registry, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"], {"VIEW": view}, profile="sglang")
    return [(f.line, f.field) for f in got if f.code == "PAD001"]


def test_a_slot_view_taken_through_the_capture_helper_is_read_at_replay(tmp_path):
    # `positions` (axis "tokens", FOREACH_COPY): rows [raw_num_token:num_tokens] keep the last
    # replay's positions when the graph replays (line 47); `req_pool_indices` (ZERO) is reset by
    # `fill_from`
    assert _found(tmp_path, "FOREACH_COPY") == [(43, "positions")]


def test_the_zero_policy_resets_it(tmp_path):
    # SGLang 0.5.14's fix
    assert _found(tmp_path, "ZERO") == []


def test_a_direct_slot_view_is_read_too(tmp_path):
    assert _found(tmp_path, "FOREACH_COPY", 'registry.get_slot("positions").slice_for(bs, num_tokens)') \
        == [(43, "positions")]
