"""A CUDA graph replayed through a lookup: ``g = self.graphs[bs]; g.replay()`` and
``self.graphs.get(bs).replay()``.

Real runners take the graph out of their table first (SGLang's NPU graph backend:
``graph = self._graphs[shape_key]`` ... ``graph.replay()``; its DSpark sampling graph:
``graph = self._graphs.get(key)``).  Only ``self.graphs[bs].replay()`` was judged.  Written
from scratch: the drafter captures ``self.model(input_ids=self.input_ids[:bs], positions=...)``
for each captured size, and a step writes ``[:num_reqs]`` of both buffers and replays the graph
of ``num_reqs_padded`` (a capture-size lookup).  Expected findings from reading it: without a
reset, rows ``[num_reqs:num_reqs_padded]`` of both buffers are stale when the replay reads them,
one PAD001 each at the replay; with ``self.input_ids[num_reqs:num_reqs_padded] = 0`` and the same
for ``positions``, none.  The same for every form of the lookup.
"""

from __future__ import annotations

import pytest

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

DRAFTER = '''\
import bisect
import torch


class Drafter:
    def __init__(self, n: int) -> None:
        self.input_ids = torch.zeros(n, dtype=torch.int64)
        self.positions = torch.zeros(n, dtype=torch.int64)
        self.capture_sizes = [1, 2, 4, 8]
        self.graphs = {}

    def capture(self):
        for bs in self.capture_sizes:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.out = self.model(input_ids=self.input_ids[:bs], positions=self.positions[:bs])
            self.graphs[bs] = g

    def run(self, ids, pos):
        num_reqs = ids.shape[0]
        num_reqs_padded = self.capture_sizes[bisect.bisect_left(self.capture_sizes, num_reqs)]
        self.input_ids[:num_reqs] = ids
        self.positions[:num_reqs] = pos
        {RESET}
        {REPLAY}
        return self.out[:num_reqs]
'''
RESET = "self.input_ids[num_reqs:num_reqs_padded] = 0\n        self.positions[num_reqs:num_reqs_padded] = 0"


def _check(tmp_path, replay: str, reset: str, profile: str):
    text = DRAFTER.replace("{REPLAY}", replay).replace("{RESET}", reset)
    path = tmp_path / "drafter.py"
    path.write_text(text)
    out = check_project([Source(str(path), text)], load_profile(profile))[str(path)]
    assert isinstance(out, list), out
    line = next(i for i, l in enumerate(text.splitlines(), 1) if ".replay()" in l)
    return sorted((f.code, f.field, f.line == line) for f in out)


@pytest.mark.parametrize("profile", ["vllm", "sglang"])
@pytest.mark.parametrize("replay", [
    "self.graphs[num_reqs_padded].replay()",
    "g = self.graphs[num_reqs_padded]\n        g.replay()",
    "self.graphs.get(num_reqs_padded).replay()",
    "g = self.graphs.get(num_reqs_padded)\n        g.replay()",
])
def test_a_replay_through_a_lookup_reads_the_graph_bound_rows(tmp_path, replay, profile):
    assert _check(tmp_path, replay, "pass", profile) == [("PAD001", "input_ids", True),
                                                         ("PAD001", "positions", True)]
    assert _check(tmp_path, replay, RESET, profile) == []
