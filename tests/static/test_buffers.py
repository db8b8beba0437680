"""The persistent-buffer facts (padlint.analysis.buffers): allocations, initial values, writes.

Each test writes a tiny package, asks :class:`BufferIndex` about one attribute
name and checks what it says against what the code does, reasoned per case."""

from __future__ import annotations

import textwrap
from pathlib import Path

from padlint.analysis.buffers import EMPTY, UNKNOWN_VALUE, BufferIndex
from padlint.analysis.project import Project
from padlint.profile import load_profile


def _index(tmp_path: Path, files: dict[str, str]) -> tuple[BufferIndex, Project]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(textwrap.dedent(text))
    project = Project()
    first = pkg / next(iter(files))
    project.add_source(str(first), first.read_text(), str(first))
    return BufferIndex(project, load_profile("vllm")), project


RUNNER = """
    import torch
    class Runner:
        def __init__(self, n):
            self.buf = torch.zeros(n, dtype=torch.int32)
            self.empty = torch.empty(n)
            self.full = torch.full((n,), -1)
            self.wrapped = self._make_buffer(n, dtype=torch.int32)
            self.later = None
            self.steps = torch.arange(n)
            self.width = torch.full((n,), n)
            self.alias = make_view(n)
"""


def test_initial_values_of_allocators(tmp_path):
    idx, project = _index(tmp_path, {"runner.py": RUNNER})
    # nothing else mentions them: never written, initial value from the allocator
    assert idx.initial("buf").value == "0"
    assert idx.initial("empty").value == EMPTY
    assert idx.initial("full").value == "-1"
    assert idx.initial("wrapped").value == "0"  # vllm profile: _make_buffer = 0
    assert idx.initial("later") is None  # only a None placeholder: no allocation known
    # fresh storage of a value not known here (a value per row; a fill value from a variable)
    assert idx.initial("steps").value == UNKNOWN_VALUE
    assert idx.initial("width").value == UNKNOWN_VALUE
    assert idx.initial("alias") is None  # not an allocator: maybe a view of another buffer



def test_writes_of_every_kind(tmp_path):
    cases = {
        "store": "def f(r): r.buf[:3] = 1",
        "view store": "def f(r): r.buf.np[:3] = 1",
        "inplace": "def f(r): r.buf.fill_(1)",
        "copy to device": "def f(r): r.buf.copy_to_gpu(3)",
        "augassign": "def f(r): r.buf += 1",
        "alias": "def f(r):\n    x = r.buf[:4]\n    x[0] = 2",
        "unknown call": "def f(r): some_kernel(r.buf)",
        "triton launch": "def f(r): kern[(1,)](r.buf, 3)",
        "out=": "def f(r, a): torch.cumsum(a, 0, out=r.buf)",
        "container": "def f(r): return [r.buf]",
        "returned": "def f(r): return r.buf[:3]",
        "callee returns it, caller writes": "def g(t):\n    return t[:2]\ndef f(r):\n    g(r.buf).fill_(0)",
        "local lambda, result written": "def f(r):\n    cut = lambda x: x[:3]\n    cut(r.buf)[0] = 1",
        "field flows back, then written": "from dataclasses import dataclass\n@dataclass\nclass M:\n    seq: object\n"
                                          "def f(r): return M(seq=r.buf)\ndef g(m): return M(seq=m.seq[:2])\n"
                                          "def h(m): m.seq.fill_(0)",
        "kwargs dict entry, written by key": "def f(r): return {'seq': r.buf}\ndef g(d): d['seq'].zero_()",
        "kwargs dict entry, written through **": "def f(r): return {'seq': r.buf}\n"
                                                 "def g(seq=None): seq.zero_()\ndef h(d): g(**d)",
        "callee writes param": "def g(t):\n    t.zero_()\ndef f(r): g(r.buf)",
        "field written elsewhere": "def f(r): M(seq=r.buf)\ndef h(m): m.seq[:2] = 0\n"
                                   "from dataclasses import dataclass\n@dataclass\nclass M:\n    seq: object",
    }
    for what, code in cases.items():
        sub = tmp_path / what.replace(" ", "_").replace("=", "")
        sub.mkdir()
        idx, _ = _index(sub, {"runner.py": RUNNER, "user.py": "import torch\n" + code + "\n"})
        facts = idx.facts("buf")
        assert facts.writes, f"{what}: a write must be found"
        assert idx.initial("buf") is None, what


def test_reads_are_not_writes(tmp_path):
    cases = {
        "compare": "def f(r): return (r.buf < 1).sum()",
        "clone": "def f(r): return r.buf.clone()",
        "shape": "def f(r): return r.buf.shape[0]",
        "index of another": "def f(r, t): t[r.buf[:2]] = 0",
        "source of copy_": "def f(r, t): t.copy_(r.buf)",
        "torch.where": "def f(r): return torch.where(r.buf > 0, 1, 0)",
        "alias rebound then written": "def f(r):\n    x = r.buf\n    y = x.sum()\n    x = torch.zeros(3)\n    x[0] = 1",
        # a name rebound to a slice of itself in a loop: its uses are followed, and the walk ends
        "alias rebound in a loop": "def f(r):\n    x = r.buf\n    for i in range(3):\n        x = x[:i]\n    return x.sum()",
        "local lambda that slices": "def f(r, n):\n    cut = lambda x: x[:n] if x is not None else None\n"
                                    "    return CommonAttentionMetadata(seq=cut(r.buf))",
        "callee returns a slice, caller reads": "def g(t, n):\n    return t[:n]\ndef f(r):\n    return g(r.buf, 2).sum()",
        # the field's value flows back into the same field (vLLM's `unpadded()` re-slices every
        # field into a new CommonAttentionMetadata): a cycle, judged by the uses already seen
        "field flows back into itself": "from dataclasses import dataclass\n@dataclass\nclass M:\n    seq: object\n"
                                        "def f(r): return M(seq=r.buf)\ndef g(m): return M(seq=m.seq[:2])",
        # vLLM's MambaHybridAttnMetadata.get_extra_common_attn_kwargs returns
        # {"is_prefilling": ...}, popped by build_attn_metadata and passed on as a keyword
        "kwargs dict entry, only read": "def f(r): return {'seq': r.buf[:2]}\n"
                                        "def g(d): return d.pop('seq', None).sum()",
        "callee only reads": "def g(t):\n    return t.sum()\ndef f(r): g(r.buf)",
        "dict.pop default, then sink field read": (
            "def f(r, d):\n    v = d.pop('k', r.buf)\n    return CommonAttentionMetadata(is_prefilling=v)\n"
            "def h(m): return m.is_prefilling.clone()"),
    }
    for what, code in cases.items():
        sub = tmp_path / what.replace(" ", "_").replace(",", "").replace(".", "_")
        sub.mkdir()
        idx, _ = _index(sub, {"runner.py": RUNNER, "user.py": "import torch\n" + code + "\n"})
        facts = idx.facts("buf")
        assert not facts.writes, f"{what}: {facts.writes}"
        assert idx.initial("buf").value == "0", what


def test_other_ways_to_get_the_attribute_claim_nothing(tmp_path):
    # a dataclass field filled by its constructor, a class-level default, a setattr naming it: an
    # object may hold a `buf` that is none of the allocations seen, so nothing is claimed
    others = {
        "dataclass field": "from dataclasses import dataclass\n@dataclass\nclass B:\n    buf: object\n",
        "class default": "class B:\n    buf = None\n",
        "setattr": "def f(o, t):\n    setattr(o, 'buf', t)\n",
        # a registry that binds slots by name (SGLang `build_decode_registry`): the quoted name and a
        # getattr with a computed name hand the buffer to code that writes it
        "bound by name": "def bind(src, names, reg):\n    for n in ('buf', 'other'):\n"
                         "        reg.add(getattr(src, n))\n",
    }
    for what, code in others.items():
        sub = tmp_path / what.replace(" ", "_")
        sub.mkdir()
        idx, _ = _index(sub, {"runner.py": RUNNER, "other.py": code})
        assert idx.initial("buf") is None, what
    # the quoted name alone (a log message) is no reflection
    sub = tmp_path / "quoted_only"
    sub.mkdir()
    idx, _ = _index(sub, {"runner.py": RUNNER, "other.py": "def f():\n    print('buf', getattr(f, 'x'))\n"})
    assert idx.initial("buf").value == "0"
    # a store only from outside the class (no `self.buf = ...` anywhere): not claimed either
    sub = tmp_path / "outside"
    sub.mkdir()
    idx, _ = _index(sub, {"runner.py": "import torch\ndef make(o, n):\n    o.extra = torch.zeros(n)\n"})
    assert idx.initial("extra") is None


def test_disagreeing_allocations_give_an_unknown_value(tmp_path):
    other = "import torch\nclass Other:\n    def __init__(self):\n        self.buf = torch.ones(3)\n"
    idx, _ = _index(tmp_path, {"runner.py": RUNNER, "other.py": other})
    assert not idx.facts("buf").writes
    # two allocations of `.buf` write different values (0 and 1): never written, value not one literal
    assert idx.initial("buf").value == UNKNOWN_VALUE


KERNELS = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def scatter_kernel(mask_ptr, idx_ptr, src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0)
        m = tl.load(mask_ptr + i)        # the mask is only read
        j = tl.load(idx_ptr + i)         # a loaded index, used to address dst: data, not idx_ptr
        v = tl.load(src_ptr + j, mask=m)
        out = dst_ptr + j
        tl.store(out, v, mask=m)         # writes through dst_ptr (via the local `out`)


    @triton.jit
    def helper_kernel(a_ptr, b_ptr):
        helper(a_ptr)                    # handed on to a call not read here: may write
        tl.atomic_add(b_ptr, 1)


    class Backend:
        def __init__(self, n):
            self.mask = torch.zeros(n, dtype=torch.bool)
            self.idx = torch.zeros(n, dtype=torch.int64)
            self.dst = torch.zeros(n)
            self.a = torch.zeros(n)
            self.b = torch.zeros(n)
            self.kept = torch.zeros(n, dtype=torch.int64)
            self.leaked = torch.zeros(n, dtype=torch.int64)

        def step(self, src, fb, rows):
            scatter_kernel[(rows,)](self.mask, self.idx, src, self.dst, rows, BLOCK=128)
            helper_kernel[(rows,)](self.a, self.b)
            fb.kept_view = self.kept[:rows]      # another object's field, only read elsewhere
            fb.leaked_view = self.leaked[:rows]  # another object's field, written elsewhere


    def consumer(fb):
        total = fb.kept_view.sum()
        fb.leaked_view.zero_()
        return total
"""


def test_triton_kernels_write_only_through_store_and_atomics(tmp_path):
    # `kernel[grid](...)` binds each argument to the kernel's pointer parameter, and the
    # kernel's body says whether it writes through it: `mask_ptr` and `idx_ptr` are only
    # loaded (the loaded index addresses `dst`: data, not `idx_ptr`'s storage), so `mask` and
    # `idx` keep their allocation value; `dst` is stored to through a local pointer, `b` by an
    # atomic, and `a` is handed to a helper the kernel calls (not read: may write)
    idx, _ = _index(tmp_path, {"backend.py": KERNELS})
    assert idx.initial("mask").value == "0"  # torch.zeros: 0 (False as a bool)
    assert idx.initial("idx").value == "0"
    for attr, why in (("dst", "`tl.store`"), ("b", "`tl.atomic_add`"), ("a", "`helper`")):
        assert idx.initial(attr) is None, attr
        assert why in idx.facts(attr).writes[0].what, (attr, idx.facts(attr).writes)


def test_a_buffer_stored_on_another_object_is_judged_by_that_field_s_uses(tmp_path):
    # `fb.kept_view = self.kept[:rows]`: every use of `.kept_view` in the project only reads it
    # (`.sum()`), so `kept` is never written; `.leaked_view` is zeroed in `consumer`
    idx, _ = _index(tmp_path, {"backend.py": KERNELS})
    assert idx.initial("kept").value == "0"
    assert idx.initial("leaked") is None
    assert "zero_" in idx.facts("leaked").writes[0].what


DEPTH = """
    import torch


    def consume(v):
        return v.sum()


    def p1(fb, x):
        p2(fb, x)


    def p2(fb, x):
        p3(fb, x)


    def p3(fb, x):
        fb.inert_view = x


    class A:
        def __init__(self, n):
            self.inert = torch.zeros(n)
            self.other = torch.zeros(n)

        def step(self, fb, rows):
            fb.inert_view = self.inert[:rows]
            p1(fb, self.other[:rows])
            consume(fb.inert_view)
"""


def test_an_answer_cut_by_the_depth_bound_does_not_stick_to_the_field(tmp_path):
    # `other` reaches `fb.inert_view = x` three calls deep; the uses of `.inert_view` are then
    # judged at the depth bound, and `consume(fb.inert_view)` is not followed: "may write", for
    # that search.  `inert` is stored in the same field directly: from there `consume` is
    # followed and only reads, so `inert` is never written, whichever buffer is asked first.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fresh, _ = _index(tmp_path / "a", {"a.py": DEPTH})
    assert fresh.initial("inert").value == "0"
    idx, _ = _index(tmp_path / "b", {"a.py": DEPTH})
    assert idx.initial("other") is None
    assert "not followed further" in idx.facts("other").writes[0].what
    assert idx.initial("inert").value == "0"


SHARED_FIELD_NAME = """
    import torch
    from dataclasses import dataclass


    @dataclass
    class StepBatch:
        track_mask: torch.Tensor = None


    class ScheduledBatch:
        def __init__(self):
            self.track_mask = None

        def pack(self):
            self.track_mask.zero_()
            return (self.track_mask,)


    def consume(fb: StepBatch):
        return fb.track_mask.sum()


    class Backend:
        def __init__(self, n):
            self.inert = torch.zeros(n, dtype=torch.bool)
            self.shared = torch.zeros(n, dtype=torch.bool)

        def prepare(self, fb: StepBatch, sb: ScheduledBatch, rows):
            fb.track_mask = self.inert[:rows]
            consume(fb)

        def prepare_any(self, holder, rows):
            holder.track_mask = self.shared[:rows]
"""


def test_a_field_of_an_unrelated_class_is_another_object_s_field(tmp_path):
    # `inert` is stored as `.track_mask` on a `StepBatch` (an annotated parameter never rebound).
    # `ScheduledBatch.pack` zeroes and packs `self.track_mask`, but its `self` is a ScheduledBatch,
    # a class neither a base nor a subclass of StepBatch: another object.  The only use on a
    # StepBatch, `consume`, reads it: `inert` is never written and holds its allocation value.
    # `shared` is stored on an object of unknown class (`holder`): every `.track_mask` may be it,
    # and `pack` may write it (its `zero_()` at line 16, or the tuple it escapes into at 17).
    idx, _ = _index(tmp_path, {"backend.py": SHARED_FIELD_NAME})
    assert idx.initial("inert").value == "0"  # torch.zeros, whatever the dtype
    assert idx.initial("shared") is None
    assert idx.facts("shared").writes[0].line in (16, 17)


LIST_ARGUMENTS = """
    import torch


    def clear_all(tensors):
        for i in range(len(tensors)):
            tensors[i].zero_()


    class Backend:
        def __init__(self, n):
            self.read_only = torch.zeros(n)
            self.cleared = torch.zeros(n)

        def step(self, rows, size):
            padded = torch.cat([self.read_only[:rows], self.read_only.new_zeros(size - rows)])
            clear_all([self.cleared[:rows]])
            return padded
"""


def test_a_buffer_in_a_list_argument_is_judged_as_that_argument(tmp_path):
    # `torch.cat([...])` only reads the tensors of the list it is given: `read_only` is never
    # written.  `clear_all` gets `cleared` in a list and zeroes `tensors[i]`, a view of each
    # element: written (line 7).  Before, any list element "escaped" and both "may be written".
    idx, _ = _index(tmp_path, {"backend.py": LIST_ARGUMENTS})
    assert idx.initial("read_only").value == "0"
    assert idx.initial("cleared") is None
    assert idx.facts("cleared").writes[0].line == 7


TUPLE_BINDING = """
    import torch


    class Backend:
        def __init__(self, n):
            self.read_only = torch.zeros(n)
            self.cleared = torch.zeros(n)

        def step(self, rows, other):
            a, b = self.read_only[:rows], other
            c, d = other, self.cleared[:rows]
            d.zero_()
            return a.sum() + b.sum() + c.sum()
"""


def test_a_buffer_bound_by_tuple_unpacking_is_judged_by_its_own_target(tmp_path):
    # `a, b = read_only[:rows], other`: only `a` is a view of `read_only`, and it is only read
    # (`.sum()`): never written.  `d` is the view of `cleared`, zeroed at line 13.  Before, any
    # element of a tuple "escaped" and both "may be written".
    idx, _ = _index(tmp_path, {"backend.py": TUPLE_BINDING})
    assert idx.initial("read_only").value == "0"
    assert idx.initial("cleared") is None
    assert idx.facts("cleared").writes[0].line == 13


MIXIN_AND_MAX = """
    import torch
    from dataclasses import dataclass


    @dataclass
    class Holder:
        track_mask: torch.Tensor = None


    class ClearMixin:
        def clear(self):
            self.track_mask.zero_()


    class Batch(Holder, ClearMixin):
        pass


    class Backend:
        def __init__(self, n):
            self.inert = torch.zeros(n, dtype=torch.bool)
            self.a = torch.zeros(n)
            self.b = torch.zeros(n)

        def prepare(self, fb: Holder, rows):
            fb.track_mask = self.inert[:rows]

        def pick(self, rows):
            max([self.a[:rows], self.b[:rows]], key=len).fill_(1)
"""


def test_a_mixin_of_a_subclass_and_a_builtin_returning_its_argument_may_write(tmp_path):
    # `ClearMixin` is no base of `Holder`, but `Batch(Holder, ClearMixin)` is both: its `clear`
    # may zero the holder's `track_mask`, that is `inert` (line 13).  `max([...])` returns one of
    # the views it is given, and `.fill_(1)` writes it: `a` may be written (line 30).
    idx, _ = _index(tmp_path, {"backend.py": MIXIN_AND_MAX})
    assert idx.initial("inert") is None
    assert idx.facts("inert").writes[0].line == 13
    assert idx.initial("a") is None
    assert idx.facts("a").writes[0].line == 30
