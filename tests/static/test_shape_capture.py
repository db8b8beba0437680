"""A per-shape capture run from a step, and resets made by reflection over dataclass fields.

A graph runner's per-shape capture (the profile's ``[graphs] capture``, or a method holding a
``with torch.cuda.graph(...)`` block) runs the forward once inside the graph with no request in
it: every row of the index fields it binds is a padding row, and the forward writes KV and
request-pool rows through them.  SGLang 0.5.16 captured again while serving
(``recapture_if_needed`` at the start of a step), when those rows held the previous batch's live
slots; 0.5.17 added ``self.buffers.reset_index_buffers()``, which zeroes the index buffers by
reflection (``for f in fields(self): if f.name not in _INDEX: continue; getattr(self,
f.name).zero_()``), on a base class whose module names no count.  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

BUFFERS = '''\
from dataclasses import dataclass, fields
import dataclasses

import torch

_INDEX = frozenset({"req_pool_indices", "out_cache_loc"})
_ONLY_SLOTS = ("out_cache_loc",)


@dataclass
class BaseBuffers:
    def reset_index_buffers(self) -> None:
        for f in {ITER}:
            {TEST}
            buffer = getattr(self, f.name)
            if buffer is not None:
                buffer.zero_()


@dataclass
class Buffers(BaseBuffers):
    input_ids: torch.Tensor
    req_pool_indices: torch.Tensor
    out_cache_loc: torch.Tensor
'''

RUNNER = '''\
import torch

from pkg.buffers import Buffers


class Runner:
    def __init__(self, model, max_bs: int) -> None:
        self.model = model
        self.capture_bs = [1, 2, 4]
        self.mode = 0
        self.buffers: Buffers = {BUILD}
        self.graphs = {}
        {INIT_CAPTURE}

    def capture(self) -> None:
        {RESET}
        for bs in self.capture_bs:
            self.{CAPTURE}(bs)

    def {CAPTURE}(self, bs: int) -> None:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model.forward(
                input_ids=self.buffers.input_ids[:bs],
                req_pool_indices=self.buffers.req_pool_indices[:bs],
                out_cache_loc=self.buffers.out_cache_loc[:bs],
            )
        self.graphs[bs] = graph

    def replay(self, batch, bs: int) -> None:
        if batch.mode != self.mode:
            self.mode = batch.mode
            {RECAPTURE}
        raw_bs = batch.batch_size
        self.buffers.input_ids[:raw_bs].copy_(batch.input_ids)
        self.buffers.input_ids[raw_bs:bs].zero_()
        self.buffers.req_pool_indices[:raw_bs].copy_(batch.req_pool_indices)
        self.buffers.req_pool_indices[raw_bs:bs].zero_()
        self.buffers.out_cache_loc[:raw_bs].copy_(batch.out_cache_loc)
        self.buffers.out_cache_loc[raw_bs:bs].zero_()
        self.graphs[bs].replay()
'''

BUILT = """Buffers(
            input_ids=torch.zeros(max_bs, dtype=torch.int64),
            req_pool_indices=torch.zeros(max_bs, dtype=torch.int64),
            out_cache_loc=torch.zeros(max_bs, dtype=torch.int64),
        )"""

ALL = [("out_cache_loc", "capture"), ("req_pool_indices", "capture")]


def _found(tmp_path, reset: str, *, it: str = "fields(self)", test: str = "if f.name not in _INDEX: continue",
           capture: str = "capture_one_batch_size", init_capture: str = "pass",
           recapture: str = "self.capture()", build: str = BUILT) -> list[tuple[str, str]]:
    # the runner checked alone, as pre-commit would on a change to it: `pkg/buffers.py`, which
    # names no count and no sink, is read as context
    files = {"pkg/__init__.py": "", "pkg/buffers.py": BUFFERS, "pkg/runner.py": RUNNER}
    got = check_files(tmp_path, files, ["pkg/runner.py"],
                      {"RESET": reset, "ITER": it, "TEST": test, "CAPTURE": capture,
                       "INIT_CAPTURE": init_capture, "RECAPTURE": recapture, "BUILD": build}, profile="sglang")
    return sorted((f.field, "capture" if "at capture" in f.message else f.message) for f in got)


def test_a_capture_run_from_a_step_reads_the_last_batchs_indices(tmp_path):
    # `replay` captures again before it writes anything: the index fields the capture binds hold
    # the previous batch's rows (`input_ids` is no index field: the capture's outputs are dropped)
    assert _found(tmp_path, "pass") == ALL


def test_a_reflective_reset_of_the_index_buffers_covers_them(tmp_path):
    # the base class's method zeroes each field named in `_INDEX`, found through
    # `fields(self)` of the subclass object it runs on
    assert _found(tmp_path, "self.buffers.reset_index_buffers()") == []


def test_the_filter_decides_which_fields_are_reset(tmp_path):
    # only the names in `_ONLY_SLOTS` are zeroed: `req_pool_indices` keeps the last batch's rows
    assert _found(tmp_path, "self.buffers.reset_index_buffers()",
                  test="if f.name not in _ONLY_SLOTS: continue") == [("req_pool_indices", "capture")]


def test_an_equality_test_on_the_field_name(tmp_path):
    # `if f.name != "out_cache_loc": continue`: the same, written as a comparison to a literal
    assert _found(tmp_path, "self.buffers.reset_index_buffers()",
                  test='if f.name != "out_cache_loc": continue') == [("req_pool_indices", "capture")]


def test_dataclasses_fields_through_the_module(tmp_path):
    # `dataclasses.fields(self)`, with `import dataclasses`: the same loop; no filter resets all
    assert _found(tmp_path, "self.buffers.reset_index_buffers()", it="dataclasses.fields(self)",
                  test="pass") == []


def test_an_unknown_iterable_resets_nothing_known(tmp_path):
    # a loop over something else (`vars(self).values()` is not read) proves no reset: the
    # capture's index fields stay stale
    assert _found(tmp_path, "self.buffers.reset_index_buffers()", it="self.unknown_fields()",
                  test="pass") == ALL


def test_an_explicit_reset_before_the_capture(tmp_path):
    # the fix written out, one buffer at a time
    assert _found(tmp_path, "self.buffers.req_pool_indices.zero_(); self.buffers.out_cache_loc.zero_()") == []


def test_a_capture_method_found_by_its_graph_block(tmp_path):
    # the per-shape method is not named by the profile (`[graphs] capture`); it holds the
    # `with torch.cuda.graph(...)` block, which makes it a capture all the same
    assert _found(tmp_path, "pass", capture="record_shape") == ALL


def test_a_capture_only_the_constructor_runs_reads_construction_values(tmp_path):
    # `__init__` captures and nothing else does: the rows hold what construction put there
    # (zeros), no request's; a public method only `__init__` calls is no entry point of its own
    assert _found(tmp_path, "pass", init_capture="self.capture()", recapture="pass") == []


def test_a_capture_the_constructor_and_a_step_run_is_judged_on_the_step(tmp_path):
    # the same capture also runs from `replay`: there the rows hold the last batch's indices
    assert _found(tmp_path, "pass", init_capture="self.capture()") == ALL


def test_a_capture_during_construction_over_buffers_taken_from_elsewhere(tmp_path):
    # the buffers come from a pool the analysis cannot read (`self.model.pool.take(...)`, SGLang's
    # `share_buffers()` hands back another runner's buffer of the same name): construction does
    # not make their rows fresh, so the capture the constructor runs is judged on them too
    assert _found(tmp_path, "pass", init_capture="self.capture()", recapture="pass",
                  build="self.model.pool.take(max_bs)") == ALL
    assert _found(tmp_path, "self.buffers.reset_index_buffers()", init_capture="self.capture()",
                  recapture="pass", build="self.model.pool.take(max_bs)") == []


def test_a_tuple_of_names_written_in_the_test(tmp_path):
    # the names listed in the test itself: both index buffers are zeroed
    assert _found(tmp_path, "self.buffers.reset_index_buffers()",
                  test='if f.name not in ("req_pool_indices", "out_cache_loc"): continue') == []
    assert _found(tmp_path, "self.buffers.reset_index_buffers()",
                  test='if f.name not in ["out_cache_loc"]: continue') == [("req_pool_indices", "capture")]
