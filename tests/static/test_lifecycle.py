"""The row lifecycle facts PAD003 queries (padlint/analysis/lifecycle.py), on small classes.

Each expectation is read off the source: which statements copy a row into another row of the
same persistent buffer, whether the method relocates the request (so the source row is
vacated), whether a later statement writes the source row again, and how the admitting method
writes each buffer (every admission / per request kind / under the move's own guard /
conditionally / never).
"""

from __future__ import annotations

import textwrap

from padlint.analysis.lifecycle import may_have_lifecycle, module_lifecycles
from padlint.analysis.project import Project


def _life(src: str):
    pr = Project()
    key = pr.add_source("m.py", textwrap.dedent(src), "m.py")
    lives = module_lifecycles(pr, key)
    assert len(lives) == 1
    return lives[0]


BATCH = """
import numpy as np
import torch


class Batch:
    def __init__(self, n, v):
        self.a = np.zeros(n, dtype=np.int32)
        self.b = torch.zeros(n, v, dtype=torch.bool)
        self.c_t = torch.zeros(n, dtype=torch.float32)
        self.c = self.c_t.numpy()
        self.d = torch.empty(n, 4)
        self.e = np.zeros((n, 8))
        self.flag = False

    def add_request(self, i, req):
        self.a[i] = req.x
        if req.mask:
            self.b[i] = True
        if p := req.sampling:
            self.c[i] = p.t
        elif req.pooling:
            pass
        else:
            raise ValueError(req)
        if self.flag:
            self._set_e(i, req)

    def _set_e(self, i, req):
        self.e[i, : len(req.e)] = req.e

    def condense(self, dst, src):
        self.a[dst] = self.a[src]
        self.b[dst] = self.b[src]
        self.c[dst] = self.c[src]
        self.d[dst].copy_(self.d[src])
        if self.flag:
            self.e[dst] = self.e[src]
        self.d[src:] = 0
"""


def test_buffers_aliases_and_libraries():
    life = _life(BATCH)
    assert {k: (b.attr, b.lib, b.ndim, b.fill) for k, b in life.buffers.items()} == {
        "a": ("a", "numpy", 1, "0"),
        "b": ("b", "torch", 2, "False"),
        "c_t": ("c_t", "torch", 1, "0"),
        "c": ("c_t", "numpy", 1, "0"),  # `.numpy()` of c_t: the same rows
        "d": ("d", "torch", 2, None),    # torch.empty: no value a fresh row holds
        "e": ("e", "numpy", 2, "0"),
    }


def test_moves_and_release():
    life = _life(BATCH)
    got = {(m.attr, m.src, m.dst): m.released_at for m in life.moves}
    # `self.d[src:] = 0` after the moves writes every row from src on: d's source row is released
    assert got == {("a", "src", "dst"): None, ("b", "src", "dst"): None, ("c_t", "src", "dst"): None,
                   ("d", "src", "dst"): 39, ("e", "src", "dst"): None}


def test_admission_coverage():
    life = _life(BATCH)
    assert life.admitting == ("add_request",)
    moves = {m.attr: m for m in life.moves}
    status = {a: life.coverage(a, moves[a].guards).status for a in ("a", "b", "c_t", "d", "e")}
    assert status == {
        "a": "always",        # unconditional write
        "b": "conditional",   # only `if req.mask:`, no else
        "c_t": "per_kind",    # the sampling branch of a dispatch whose else raises
        "d": "never",
        "e": "guarded",       # under `if self.flag:`, the move's own guard; through the helper _set_e
    }
    cov = life.coverage("b", moves["b"].guards)
    assert cov.conditions == ("req.mask",) and cov.line == 19  # `self.b[i] = True`
    # without the move's guard, e is only conditionally written
    assert life.coverage("e").status == "conditional"


def test_fork_is_not_a_move_and_index_batches_are_not_rows():
    life = _life("""
    import torch

    class Pool:
        def __init__(self, n):
            self.state = torch.zeros(n, 16)
            self.ids = [None] * n

        def fork(self, src, dst):
            self.state[dst] = self.state[src]

        def copy_slots(self, src: torch.Tensor, dst: torch.Tensor):
            self.state[dst] = self.state[src]
            self.ids[dst] = self.ids[src]

        def copy_slots_long(self, src_index: torch.Tensor, dst_index: torch.Tensor):
            src = src_index.to(dtype=torch.long)
            dst = dst_index.to(dtype=torch.long)
            self.state[dst] = self.state[src]
            self.ids[src] = None

        def permute(self, a, b):
            idx, rev = [a, b], [b, a]
            self.state[idx] = self.state[rev]

        def take_over(self, src, dst):
            self.state[dst] = self.state[src]
            self.ids[src] = None
    """)
    assert [(m.method, m.src, m.dst) for m in life.moves] == [("take_over", "src", "dst")]


def test_view_swaps_by_library_and_rank():
    life = _life("""
    import numpy as np
    import torch

    class Batch:
        def __init__(self, n):
            self.t1 = torch.zeros(n)
            self.n1 = np.zeros(n)
            self.n2 = np.zeros((n, 4))
            self.ids = [None] * n

        def swap_states(self, i, j):
            self.t1[i], self.t1[j] = self.t1[j], self.t1[i]
            self.n1[i], self.n1[j] = self.n1[j], self.n1[i]
            self.n2[i], self.n2[j] = self.n2[j], self.n2[i]
            self.n2[i, 0], self.n2[j, 0] = self.n2[j, 0], self.n2[i, 0]
            self.n2[i, :2], self.n2[j, :2] = self.n2[j, :2], self.n2[i, :2]
            self.ids[i], self.ids[j] = self.ids[j], self.ids[i]
            self.t1[i], self.t1[j] = self.t1[j].clone(), self.t1[i].clone()
    """)
    # a 0-d torch element is a view too; numpy rows indexed to full rank are scalar copies;
    # `.clone()` on the right copies; a list swaps objects
    assert [(s.attr, s.line, s.lib) for s in life.swaps] == [("t1", 13, "torch"), ("n2", 15, "numpy"),
                                                             ("n2", 17, "numpy")]


def test_local_alias_of_a_buffer_view():
    # the shape of vLLM's BlockTable.move_row: a local bound once to `self.block_table.np`
    life = _life("""
    import torch

    class BlockTable:
        def __init__(self, n, m):
            self.block_table = CpuGpuBuffer(n, m)
            self.num_blocks_per_row = torch.zeros(n, dtype=torch.int32)

        def move_row(self, src, tgt):
            num_blocks = self.num_blocks_per_row[src]
            bt = self.block_table.np
            bt[tgt, :num_blocks] = bt[src, :num_blocks]
            self.num_blocks_per_row[tgt] = num_blocks
            bt[src, :num_blocks] = 0
    """)
    assert [(m.attr, m.written, m.src, m.released_at) for m in life.moves] == [("block_table", "bt", "src", 14)]


# A buffer allocated through a helper whose call is split over lines, and a `...Buffer` class
# called with a space before the parenthesis: both are allocations (`_allocation`), so the text
# test must let the module through.
SPLIT_ALLOCATIONS = """
class Rows:
    def __init__(self, n):
        self.a = self._make_buffer(
            n, dtype=torch.int32
        )
        self.b = CpuGpuBuffer (n)

    def condense(self, dst, src):
        self.a.np[dst] = self.a.np[src]
        self.b.np[dst] = self.b.np[src]
        self.req_ids[src] = None
"""

# Rows of `self.a` are copied, but `self.a` is a parameter handed in, not a buffer the class
# allocates: no lifecycle facts, and no allocation text at all.
NO_ALLOCATION = """
class Holder:
    def __init__(self, a):
        self.a = a

    def condense(self, dst, src):
        self.a[dst] = self.a[src]
"""


def test_the_text_test_keeps_every_module_whose_classes_own_buffers():
    """Handed the module's text, ``module_lifecycles`` finds the same moves as without it for
    each source of this file whose classes own buffers (the text test only skips modules that
    cannot own one)."""
    for src in (BATCH, SPLIT_ALLOCATIONS):
        text = textwrap.dedent(src)
        assert may_have_lifecycle(text)
        pr = Project()
        key = pr.add_source("m.py", text, "m.py")
        without = [(m.attr, m.src, m.dst) for life in module_lifecycles(pr, key) for m in life.moves]
        pr2 = Project()
        key2 = pr2.add_source("m.py", text, "m.py")
        with_text = [(m.attr, m.src, m.dst) for life in module_lifecycles(pr2, key2, text) for m in life.moves]
        assert with_text == without and without
    # both buffers of SPLIT_ALLOCATIONS move from row src to row dst
    pr = Project()
    key = pr.add_source("m.py", textwrap.dedent(SPLIT_ALLOCATIONS), "m.py")
    assert sorted((m.attr, m.src, m.dst) for life in module_lifecycles(pr, key) for m in life.moves) == [
        ("a", "src", "dst"), ("b", "src", "dst")]


def test_a_module_that_cannot_own_a_buffer_is_not_parsed_for_lifecycles():
    text = textwrap.dedent(NO_ALLOCATION)
    assert not may_have_lifecycle(text)
    pr = Project()
    key = pr.add_source("m.py", text, "m.py")
    assert module_lifecycles(pr, key, text) == []
    assert key not in pr._modules  # nothing parsed it
    # without the text it is parsed, and the copy is not a move of a buffer either
    assert module_lifecycles(pr, key) == [] and key in pr._modules
