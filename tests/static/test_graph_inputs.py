"""Graph inputs the capture computes from its size: every replay must write them.

SGLang's EAGLE draft runners (0.5.23) capture one graph per batch size and bind
``buffers.global_num_tokens_gpu`` whole (``ForwardBatch(global_num_tokens_gpu=...)``) after
writing it with ``[num_tokens] * dp_size``: a value of the captured size.  All graphs share the
buffer, so after the captures it holds the last size's value; each replay writes
``fill_(bs * w)`` before it replays (``execute``).  Deleting that write leaves every replay
reading another size's token counts: no padding rows, but the same failure (a persistent buffer
read by the graph holds an earlier step's value).  Written from scratch.
"""

from __future__ import annotations

from .project_files import check_files

RUNNER = '''\
import torch

from pkg.forward_batch_info import ForwardBatch


class DraftGraphRunner:
    def __init__(self, model_runner, capture_bs: list[int], dp_size: int) -> None:
        self.model_runner = model_runner
        self.capture_bs = sorted(capture_bs)
        self.dp_size = dp_size
        max_bs = self.capture_bs[-1]
        self.seq_lens = torch.ones((max_bs,), dtype=torch.int64)
        self.global_num_tokens_gpu = torch.zeros((dp_size,), dtype=torch.int32)
        self.graphs = {}

    def capture_one_shape(self, bs: int) -> None:
        num_tokens = bs * 2
        global_num_tokens_cpu = [num_tokens] * self.dp_size
        num_tokens_tensor = torch.tensor(global_num_tokens_cpu, dtype=torch.int32)
        {CAPTURE_WRITE}
        forward_batch = ForwardBatch(
            batch_size=bs,
            seq_lens=self.seq_lens[:bs],
            global_num_tokens_gpu={BOUND},
        )
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model_runner.model.forward(forward_batch)
        self.graphs[bs] = graph

    def execute(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self.model_runner.pad_to_captured(raw_bs)
        if bs != raw_bs:
            self.seq_lens.fill_(1)
        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)
        {REPLAY_WRITE}
        self.graphs[bs].replay()

    def _refresh(self, bs: int) -> None:
        self.global_num_tokens_gpu.fill_(bs * 2)
'''

BATCH = '''\
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    seq_lens: torch.Tensor
    global_num_tokens_gpu: Optional[torch.Tensor] = None
'''

SIZED = "self.global_num_tokens_gpu.copy_(num_tokens_tensor)"


def _findings(tmp_path, replay_write: str = "pass", capture_write: str = SIZED,
              bound: str = "self.global_num_tokens_gpu", runner: str = RUNNER):
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/graph_runner.py": runner}
    subst = {"REPLAY_WRITE": replay_write, "CAPTURE_WRITE": capture_write, "BOUND": bound}
    return check_files(tmp_path, files, ["pkg/graph_runner.py"], subst, profile="sglang")


def test_a_sized_graph_input_no_replay_writes_is_reported_at_the_replay(tmp_path):
    found = _findings(tmp_path)
    # seq_lens is reset on padded replays and written for the live rows: clean.  The graph input
    # is written by the capture from `num_tokens` (line 20) and by nothing on the way to the
    # replay (line 38)
    assert [(f.code, f.line, f.field) for f in found] == [("PAD001", 38, "global_num_tokens_gpu")]
    f = found[0]
    assert f.severity == "error" and f.fix is None
    assert f.message.startswith("`global_num_tokens_gpu` is read whole by the CUDA graph replayed here")
    assert "(`self.global_num_tokens_gpu.copy_(num_tokens_tensor)`, line 20)" in f.message
    assert "so the graph reads what the last capture or an earlier replay wrote, for another size" in f.message
    assert "write it for this replay's size before line 38" in f.message
    # the trace: the entry point, the capture's write, the replay
    assert [s.line for s in f.trace] == [31, 20, 38, 38]
    assert "(`num_tokens`)" in f.trace[1].note


def test_a_replay_that_writes_the_input_is_clean(tmp_path):
    assert _findings(tmp_path, "self.global_num_tokens_gpu.fill_(bs * 2)") == []


def test_a_write_in_a_helper_the_replay_calls_is_seen(tmp_path):
    assert _findings(tmp_path, "self._refresh(bs)") == []


def test_a_write_under_a_test_counts_as_the_replays_refresh(tmp_path):
    # which configurations make the graph read the buffer is not known (it may not exist in the
    # others): a replay that writes it on some path is not judged
    assert _findings(tmp_path, "if self.dp_size > 1:\n            self.global_num_tokens_gpu.fill_(bs * 2)") == []


def test_a_constant_the_capture_writes_needs_no_refresh(tmp_path):
    # the same value for every size: what the last capture left is right for every graph
    assert _findings(tmp_path, capture_write="self.global_num_tokens_gpu.fill_(self.dp_size)") == []


def test_a_sized_write_of_a_buffer_the_capture_does_not_hand_on_is_not_an_input(tmp_path):
    # written from the size, but no call of the capture takes it: nothing says the graph reads it
    assert _findings(tmp_path, bound="None") == []


HELD = '''\
import torch

from pkg.forward_batch_info import Buffers, ForwardBatch


class DraftGraphRunner:
    def __init__(self, model_runner, dp_size: int) -> None:
        self.model_runner = model_runner
        self.dp_size = dp_size
        self.buffers = Buffers(global_num_tokens_gpu=torch.zeros((dp_size,), dtype=torch.int32))
        self.graphs = {}

    def capture_one_shape(self, bs: int) -> None:
        buffers = self.buffers
        num_tokens = bs * 2
        if self.dp_size > 1:
            buffers.global_num_tokens_gpu.copy_(torch.tensor([num_tokens] * self.dp_size))
            gathered = buffers.global_num_tokens_gpu
        else:
            gathered = None
        forward_batch = ForwardBatch(batch_size=bs, seq_lens=None,
                                     global_num_tokens_gpu=gathered if self.dp_size > 1 else None)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model_runner.model.forward(forward_batch)
        self.graphs[bs] = graph

    def execute(self, forward_batch: ForwardBatch) -> None:
        buffers = self.buffers
        raw_bs = forward_batch.batch_size
        bs = self.model_runner.pad_to_captured(raw_bs)
        {REPLAY_WRITE}
        self.graphs[bs].replay()
'''


def _held(tmp_path, replay_write: str):
    batch = BATCH + "\n\n@dataclass\nclass Buffers:\n    global_num_tokens_gpu: torch.Tensor\n"
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": batch, "pkg/graph_runner.py": HELD}
    return check_files(tmp_path, files, ["pkg/graph_runner.py"], {"REPLAY_WRITE": replay_write},
                       profile="sglang")


def test_a_buffer_of_a_held_object_bound_through_locals_is_an_input(tmp_path):
    # `buffers = self.buffers` in both methods, the binding through a local and a conditional
    found = _held(tmp_path, "pass")
    assert [(f.line, f.field) for f in found] == [(33, "global_num_tokens_gpu")]
    assert "`buffers.global_num_tokens_gpu.copy_(torch.tensor([num_tokens] * self.dp_size))`, line 17" \
        in found[0].message


def test_the_replays_write_through_its_own_alias_is_seen(tmp_path):
    assert _held(tmp_path, "buffers.global_num_tokens_gpu.fill_(bs * 2)") == []


def test_a_replay_of_a_size_handed_in_is_not_judged(tmp_path):
    # `prepare(fb)` pads and writes the inputs, a later `replay(bs)` (another call of the caller,
    # SGLang's multi-layer EAGLE runners) replays: no real count on this path, so nothing says
    # this path is the step's whole preparation (the graph-bound slices are not judged there
    # either)
    runner = HELD.replace("    def execute(self, forward_batch: ForwardBatch) -> None:\n",
                          "    def execute(self, bs: int) -> None:\n").replace(
        "        raw_bs = forward_batch.batch_size\n        bs = self.model_runner.pad_to_captured(raw_bs)\n", "")
    batch = BATCH + "\n\n@dataclass\nclass Buffers:\n    global_num_tokens_gpu: torch.Tensor\n"
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": batch, "pkg/graph_runner.py": runner}
    assert check_files(tmp_path, files, ["pkg/graph_runner.py"], {"REPLAY_WRITE": "pass"}, profile="sglang") == []


def test_an_ellipsis_store_of_the_count_is_a_sized_write(tmp_path):
    found = _findings(tmp_path, capture_write="self.global_num_tokens_gpu[...] = num_tokens")
    assert [(f.line, f.field) for f in found] == [(38, "global_num_tokens_gpu")]


def test_a_host_buffer_is_not_read_by_the_graph(tmp_path):
    # the sglang profile's `[graphs] host = ["*_cpu"]`: host tensors are not graph inputs
    runner = RUNNER.replace("global_num_tokens_gpu", "global_num_tokens_cpu_buf").replace(
        "self.global_num_tokens_cpu_buf = torch", "self.global_num_tokens_cpu = torch").replace(
        "self.global_num_tokens_cpu_buf", "self.global_num_tokens_cpu")
    batch = BATCH.replace("global_num_tokens_gpu", "global_num_tokens_cpu_buf")
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": batch, "pkg/graph_runner.py": runner}
    subst = {"REPLAY_WRITE": "pass", "CAPTURE_WRITE": "self.global_num_tokens_cpu.copy_(num_tokens_tensor)",
             "BOUND": "self.global_num_tokens_cpu"}
    assert check_files(tmp_path, files, ["pkg/graph_runner.py"], subst, profile="sglang") == []


def test_a_value_computed_from_the_capture_methods_size_parameter_is_sized(tmp_path):
    # SGLang's FrozenKV MTP runner: `capture_one_shape(self, size: int, ...)`, then
    # `expanded_bs = request_bs * w` and `[expanded_bs] * dp`: no name the profile gives an
    # axis, but the capture method's integer parameter is the size it captures
    runner = RUNNER.replace("def capture_one_shape(self, bs: int) -> None:\n        num_tokens = bs * 2\n",
                            "def capture_one_shape(self, size: int, label: str = \"\") -> None:\n"
                            "        bs = size\n        num_tokens = bs * 2\n")
    runner = runner.replace("global_num_tokens_cpu = [num_tokens] * self.dp_size",
                            "expanded = size * 2\n        global_num_tokens_cpu = [expanded] * self.dp_size")
    found = _findings(tmp_path, runner=runner)
    assert [(f.line, f.field) for f in found] == [(40, "global_num_tokens_gpu")]
    assert "(`size`)" in found[0].trace[1].note
    # a parameter of another type is not the size: `label` read into the value is not sized
    runner2 = runner.replace("expanded = size * 2", "expanded = len(label)")
    assert _findings(tmp_path, runner=runner2) == []


REGISTRY = '''\
from dataclasses import dataclass

import torch


@dataclass
class GraphSlot:
    name: str
    shape_fn: object
    dtype: object
    axis: str = "tokens"
    post_fill: object = None
    buffer: torch.Tensor | None = None


class CudaGraphBufferRegistry:
    def __init__(self) -> None:
        self._slots = {}

    def register_slot(self, slot: GraphSlot, bind=None) -> None:
        slot.buffer = bind
        self._slots[slot.name] = slot

    def fill_from(self, forward_batch, *, raw_bs: int, padded_bs: int, raw_num_tokens: int,
                  padded_num_tokens: int) -> None:
        for slot in self._slots.values():
            if slot.post_fill is not None:
                slot.post_fill(slot.buffer, forward_batch, padded_num_tokens)


def build_decode_registry(*, dp_size: int, source=None) -> CudaGraphBufferRegistry:
    reg = CudaGraphBufferRegistry()

    def _global_post_fill(buf, fb, padded_num_tokens):
        buf.fill_(padded_num_tokens)

    slots = []
    for name in ("global_num_tokens_gpu", "global_num_tokens_for_logprob_gpu"):
        slots.append(GraphSlot(name, lambda bs, t: (dp_size,), torch.int32, axis="none", {HOOK}))
    for slot in slots:
        reg.register_slot(slot, bind=getattr(source, slot.name, None))
    return reg
'''

REG_RUNNER = '''\
import torch

from pkg.forward_batch_info import ForwardBatch
from pkg.registry import build_decode_registry


class InputBuffers:
    def __init__(self, dp_size: int) -> None:
        self.global_num_tokens_gpu = torch.zeros((dp_size,), dtype=torch.int32)
        self.global_num_tokens_for_logprob_gpu = torch.zeros((dp_size,), dtype=torch.int32)


class DecodeGraphRunner:
    def __init__(self, model_runner, dp_size: int) -> None:
        self.model_runner = model_runner
        self.dp_size = dp_size
        self.buffers = InputBuffers(dp_size)
        self.buffer_registry = build_decode_registry(dp_size=dp_size, source=self.buffers)
        self.graphs = {}

    def capture_one_shape(self, bs: int) -> None:
        buffers = self.buffers
        num_tokens = bs * 2
        buffers.global_num_tokens_gpu.fill_(num_tokens)
        forward_batch = ForwardBatch(batch_size=bs, seq_lens=None,
                                     global_num_tokens_gpu=buffers.global_num_tokens_gpu)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model_runner.model.forward(forward_batch)
        self.graphs[bs] = graph

    def execute(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self.model_runner.pad_to_captured(raw_bs)
        self.buffer_registry.fill_from(forward_batch, raw_bs=raw_bs, padded_bs=bs,
                                       raw_num_tokens=raw_bs * 2, padded_num_tokens=bs * 2)
        self.graphs[bs].replay()
'''


def test_a_registry_slot_a_hook_computes_at_every_fill_is_written(tmp_path):
    # the sglang profile's `[registry] computed = "post_fill"`: such a slot (here two, named by
    # a loop over a tuple, bound to `self.buffers.<name>`) is written whole by `fill_from`
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/registry.py": REGISTRY,
             "pkg/graph_runner.py": REG_RUNNER}
    hooked = check_files(tmp_path / "a", files, ["pkg/graph_runner.py"], {"HOOK": "post_fill=_global_post_fill"},
                         profile="sglang")
    assert hooked == []
    # without the hook the registry leaves the slot as it was: the replay writes nothing
    bare = check_files(tmp_path / "b", files, ["pkg/graph_runner.py"], {"HOOK": "post_fill=None"},
                       profile="sglang")
    assert [(f.line, f.field) for f in bare] == [(37, "global_num_tokens_gpu")]


def test_a_buffer_handed_to_code_the_analysis_does_not_read_may_be_written(tmp_path):
    # an extension op, a library call with `out=`, a method of an object of unknown class, a
    # store into some of its rows: the replay may refresh the input there (no finding), and the
    # mark this leaves in the heap is not a buffer's state (a callee that resets under a test of
    # its own local, `_prep`, drops those resets at its return: it must skip the mark)
    runner = RUNNER.replace("    def _refresh(self, bs: int) -> None:\n", """\
    def _prep(self, raw_bs: int, bs: int, forward_batch) -> None:
        live = forward_batch.batch_size
        if live < bs:
            self.seq_lens[raw_bs:bs].fill_(1)
        {HOW}

    def _refresh(self, bs: int) -> None:
""")
    for how in ("write_num_tokens(self.global_num_tokens_gpu, bs * 2)",
                "torch.full((self.dp_size,), bs * 2, out=self.global_num_tokens_gpu)",
                "self.model_runner.fill_counts(self.global_num_tokens_gpu, bs)",
                "self.global_num_tokens_gpu[...] = bs * 2",
                "self.global_num_tokens_gpu[0] = bs * 2"):
        found = _findings(tmp_path / str(abs(hash(how))), "self._prep(raw_bs, bs, forward_batch)",
                          runner=runner.replace("{HOW}", how))
        assert found == [], how
    # reading it is not writing it: `torch.sum` reads
    found = _findings(tmp_path / "read", "self._prep(raw_bs, bs, forward_batch)",
                      runner=runner.replace("{HOW}", "total = torch.sum(self.global_num_tokens_gpu)"))
    assert [(f.line, f.field) for f in found] == [(38, "global_num_tokens_gpu")]


def _with_draft_table(init: str, capture_first: str, fields: str, execute_first: str) -> str:
    """RUNNER with a second capture method storing into its own table (``self.draft_graphs``) and
    a replay of that table; ``{DRAFT}`` in ``execute_draft`` is the statement before its replay."""
    runner = RUNNER.replace("        self.graphs = {}\n", "        self.graphs = {}\n        self.draft_graphs = {}\n" + init)
    return runner.replace("    def _refresh(self, bs: int) -> None:\n", f"""\
    def capture_draft(self, bs: int) -> None:
{capture_first}        forward_batch = ForwardBatch(batch_size=bs, {fields})
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.model_runner.model.forward(forward_batch)
        self.draft_graphs[bs] = graph

    def execute_draft(self, forward_batch: ForwardBatch) -> None:
        raw_bs = forward_batch.batch_size
        bs = self.model_runner.pad_to_captured(raw_bs)
{execute_first}        {{DRAFT}}
        self.draft_graphs[bs].replay()

    def _refresh(self, bs: int) -> None:
""")


def test_a_replay_reads_the_inputs_of_the_captures_of_its_own_graph_table(tmp_path):
    # two capture methods, each storing into its own table and sizing its own input; each replay
    # writes its own input: the other table's input is not read by its graphs
    runner = _with_draft_table("        self.draft_tokens_gpu = torch.zeros((dp_size,), dtype=torch.int32)\n",
                               "        self.draft_tokens_gpu.fill_(bs * 3)\n",
                               "seq_lens=None, global_num_tokens_gpu=self.draft_tokens_gpu", "")

    def inputs(found):
        return [f for f in found if f.field == "global_num_tokens_gpu"]

    both = runner.replace("{DRAFT}", "self.draft_tokens_gpu.fill_(bs * 3)")
    assert inputs(_findings(tmp_path / "a", "self.global_num_tokens_gpu.fill_(bs * 2)", runner=both)) == []
    # the draft replay not writing its own input is reported there, and only there
    bare = runner.replace("{DRAFT}", "pass")
    found = inputs(_findings(tmp_path / "b", "self.global_num_tokens_gpu.fill_(bs * 2)", runner=bare))
    assert [(f.line, f.function) for f in found] == [(54, "DraftGraphRunner.execute_draft")]
    assert "`self.draft_tokens_gpu.fill_(bs * 3)`" in found[0].message
    # the graph-bound slices too: `seq_lens[:bs]`, bound by the first table's capture (whose replay
    # resets its padding rows), is not read by the draft table's graphs, whose replay resets nothing
    assert [f for f in _findings(tmp_path / "c", "self.global_num_tokens_gpu.fill_(bs * 2)", runner=both)
            if f.field == "seq_lens"] == []


def test_a_buffer_bound_by_the_captures_of_two_tables_is_read_by_the_replays_of_both(tmp_path):
    # the draft capture binds `seq_lens[:bs]` too: its replay reads the padding rows it does not
    # reset (the first table's replay resets them), and only there (line 53) is it reported
    runner = _with_draft_table("", "", "seq_lens=self.seq_lens[:bs], global_num_tokens_gpu=None",
                               "        self.seq_lens[:raw_bs].copy_(forward_batch.seq_lens)\n")
    bare = _findings(tmp_path / "a", "self.global_num_tokens_gpu.fill_(bs * 2)", runner=runner.replace("{DRAFT}", "pass"))
    assert [(f.line, f.field, f.function) for f in bare if f.field == "seq_lens"] == \
        [(53, "seq_lens", "DraftGraphRunner.execute_draft")]
    reset = _findings(tmp_path / "b", "self.global_num_tokens_gpu.fill_(bs * 2)",
                      runner=runner.replace("{DRAFT}", "self.seq_lens[raw_bs:bs].fill_(1)"))
    assert [f for f in reset if f.field == "seq_lens"] == []


def test_a_method_of_an_object_built_with_the_input_may_write_it(tmp_path):
    # `self.refresher = Refresher(self.global_num_tokens_gpu)`: the refresher keeps the buffer
    # and its `refresh()` writes it; the fields it was built with are not known at the replay,
    # so a call of one of its methods on the way counts as a write.  A method of an object not
    # built with the buffer (`self.model_runner`) does not
    helper = "class Refresher:\n    def __init__(self, buf) -> None:\n        self.buf = buf\n\n" \
             "    def refresh(self, n: int) -> None:\n        self.buf.fill_(n)\n"
    runner = RUNNER.replace("from pkg.forward_batch_info import ForwardBatch\n",
                            "from pkg.forward_batch_info import ForwardBatch\nfrom pkg.helper import Refresher\n")
    runner = runner.replace("        self.graphs = {}\n",
                            "        self.graphs = {}\n        self.refresher = Refresher(self.global_num_tokens_gpu)\n", 1)
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/helper.py": helper,
             "pkg/graph_runner.py": runner}
    subst = {"CAPTURE_WRITE": SIZED, "BOUND": "self.global_num_tokens_gpu"}
    held = check_files(tmp_path / "a", files, ["pkg/graph_runner.py"],
                       {**subst, "REPLAY_WRITE": "self.refresher.refresh(bs * 2)"}, profile="sglang")
    assert held == []
    other = check_files(tmp_path / "b", files, ["pkg/graph_runner.py"],
                        {**subst, "REPLAY_WRITE": "self.model_runner.sync(bs)"}, profile="sglang")
    assert [(f.line, f.field) for f in other] == [(40, "global_num_tokens_gpu")]


def test_a_keyword_of_a_call_the_graph_does_not_read_does_not_bind(tmp_path):
    # handed whole to a logging helper outside the graph block, not to the captured forward nor to
    # a sink class's construction: nothing says a graph reads it
    runner = RUNNER.replace("        graph = torch.cuda.CUDAGraph()\n",
                            "        print_stats(tensor=self.global_num_tokens_gpu)\n"
                            "        graph = torch.cuda.CUDAGraph()\n", 1)
    assert _findings(tmp_path / "a", bound="None", runner=runner) == []
    # inside the graph block, a keyword of the forward call binds
    inside = RUNNER.replace("            self.model_runner.model.forward(forward_batch)\n",
                            "            self.model_runner.model.forward(forward_batch, "
                            "num_tokens=self.global_num_tokens_gpu)\n")
    found = _findings(tmp_path / "b", bound="None", runner=inside)
    assert [(f.line, f.field) for f in found] == [(38, "num_tokens")]


# A worker that holds the runner, asks it whether it can run the batch, and calls its `execute`
# (SGLang's draft workers: `self.cuda_graph_runner.can_run_graph(fb)` then
# `self.cuda_graph_runner.execute(fb)`).  Once the project index saw those workers, a runner file
# checked alone was judged from them, and the mark "a method of another object may write what it
# holds" read inside `execute` as a write of the graph input that no path made: the finding was
# lost (SGLang 0.5.23's `FrozenKVMTPCudaGraphRunner.execute` without its
# `global_num_tokens_gpu.fill_`).  The mark was made before each call, on everything the object
# holds; it is now made after the call, and read only for the objects that hold a buffer under a
# name of their own (the refresher above): a followed method's writes through the object's own
# attributes are in the heap.
WORKER = '''\
from pkg.graph_runner import DraftGraphRunner


class DraftWorker:
    def __init__(self, model_runner, capture_bs, dp_size):
        self.cuda_graph_runner = None
        self.cuda_graph_runner = DraftGraphRunner(model_runner, capture_bs, dp_size)

    def draft(self, forward_batch):
        if self.cuda_graph_runner and self.cuda_graph_runner.can_run(forward_batch):
            return self.cuda_graph_runner.execute(forward_batch)
'''

CAN_RUN = '''
    def can_run(self, forward_batch: ForwardBatch) -> bool:
        return forward_batch.batch_size <= self.capture_bs[-1]
'''


def _from_worker(tmp_path, replay_write: str):
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": BATCH, "pkg/graph_runner.py": RUNNER + CAN_RUN,
             "pkg/worker.py": WORKER}
    subst = {"REPLAY_WRITE": replay_write, "CAPTURE_WRITE": SIZED, "BOUND": "self.global_num_tokens_gpu"}
    return check_files(tmp_path, files, ["pkg/graph_runner.py"], subst, profile="sglang")


def test_a_replay_reached_from_a_worker_is_judged_as_from_its_own_entry(tmp_path):
    # the entry point is now the worker's `draft` (it calls `execute`); no path to the replay
    # (line 38) writes the graph input, as when `execute` was its own entry point
    found = _from_worker(tmp_path, "pass")
    assert [(f.code, f.line, f.field) for f in found] == [("PAD001", 38, "global_num_tokens_gpu")]
    assert found[0].trace[0].note == "entry point `draft`"


def test_a_replay_reached_from_a_worker_that_writes_the_input_is_clean(tmp_path):
    assert _from_worker(tmp_path, "self.global_num_tokens_gpu.fill_(bs * 2)") == []


# The buffers object's own method refreshes the input, through a list handed to a foreach op or
# to a helper that hands it on (SGLang's `_grouped_foreach_copy_(dsts, srcs)`): code the analysis
# does not read, handed a list holding the buffer, may write it.  (Before the mark change above,
# the mark on everything the called object holds hid that a list's buffers were not marked.)
def _held_refresh(tmp_path, body: str):
    batch = ("import torch\n" + BATCH + "\n\ndef _copy(dsts, srcs):\n    torch._foreach_copy_(dsts, srcs)\n\n"
             "@dataclass\nclass Buffers:\n    global_num_tokens_gpu: torch.Tensor\n\n"
             "    def refresh(self, n: int) -> None:\n        " + body + "\n")
    files = {"pkg/__init__.py": "", "pkg/forward_batch_info.py": batch, "pkg/graph_runner.py": HELD}
    return check_files(tmp_path, files, ["pkg/graph_runner.py"], {"REPLAY_WRITE": "buffers.refresh(bs * 2)"},
                       profile="sglang")


def test_a_refresh_through_a_foreach_op_on_a_list_is_a_write(tmp_path):
    assert _held_refresh(tmp_path / "a", "torch._foreach_fill_([self.global_num_tokens_gpu], n)") == []
    assert _held_refresh(tmp_path / "b", "_copy([self.global_num_tokens_gpu], [torch.full((1,), n)])") == []
    assert _held_refresh(tmp_path / "c", "bufs = {'g': self.global_num_tokens_gpu}\n"
                                         "        torch._foreach_fill_(list(bufs.values()), n)") == []


def test_a_refresh_that_writes_nothing_is_no_write(tmp_path):
    # the same method with nothing in it: the replay (line 33) reads what a capture left
    found = _held_refresh(tmp_path, "pass")
    assert [(f.line, f.field) for f in found] == [(33, "global_num_tokens_gpu")]
