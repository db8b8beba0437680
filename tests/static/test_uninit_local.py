"""PAD005: padding rows of a local allocation left uninitialised.

SGLang 0.5.20's ``MambaMixer2.forward`` allocated its output with ``torch.empty`` as many rows
as the padded batch (``projected_states.shape[0]``), wrote it only through
``preallocated_ssm_out[:num_actual_tokens]`` (split into prefill and decode pieces handed to the
kernels as ``out=``), and passed the whole tensor to the gated norm; 0.5.21 added
``preallocated_ssm_out[num_actual_tokens:].zero_()`` ("Rows past the batch's tokens are DP
padding; keep them finite").  The sources below are written from scratch; the expected
findings come from reading them:

- ``BUGGY``: ``out`` has ``x.shape[0]`` rows, only ``out[:num_actual_tokens]`` is written (through
  a local and ``torch.split``), and ``self.norm(out, gate)`` at line 16 reads all rows: one
  PAD005 there, rows ``[num_actual_tokens:x.shape[0]]``.
- the same with the tail zeroed under a test (``if num_actual_tokens < out.shape[0]:``): none.
- an allocation the function fills whole (``out.zero_()``, ``out=out``), one sized by a local
  that is no tensor's rows (a growable buffer), one handed whole to a kernel launch before any
  read, and one whose prefix is its full extent: none.
"""

from __future__ import annotations

from padlint.analysis.uninit import uninit_rows
from padlint.model import split_lines
from padlint.profile import load_profile

from .project_files import check_files

BUGGY = '''\
import torch


class Mixer:
    def forward(self, x, gate, meta):
        num_actual_tokens = meta.num_prefill_tokens + meta.num_decode_tokens
        out = torch.empty(
            [x.shape[0], self.width],
            dtype=x.dtype,
            device=x.device,
        )
        {RESET}
        active = out[:num_actual_tokens]
        out_p, out_d = torch.split(active, [meta.num_prefill_tokens, meta.num_decode_tokens])
        torch.ops.mixer.prefill(x[:meta.num_prefill_tokens], out=out_p)
        return self.norm(out, gate)
'''


def _findings(tmp_path, reset: str = "pass", src: str = BUGGY):
    files = {"pkg/__init__.py": "", "pkg/mixer.py": src}
    return [f for f in check_files(tmp_path, files, ["pkg/mixer.py"], {"RESET": reset}, profile="sglang")
            if f.code == "PAD005"]


def test_prefix_written_allocation_read_whole_is_reported(tmp_path):
    got = _findings(tmp_path)
    assert [(f.line, f.field, f.severity) for f in got] == [(16, "out", "warning")]
    f = got[0]
    assert "rows [num_actual_tokens:x.shape[0]]" in f.message
    assert "`self.norm(out, gate)` reads the whole tensor" in f.message
    # the reset goes after the allocation (its bound is defined before it), as one statement
    assert (f.fix.text, f.fix.line, f.fix.after, f.fix.safe) == ("out[num_actual_tokens:].zero_()", 12, True, False)
    assert [s.line for s in f.trace] == [7, 13, 16]


def test_tail_zeroed_under_a_test_is_quiet(tmp_path):
    reset = "if num_actual_tokens < out.shape[0]:\n            out[num_actual_tokens:].zero_()"
    assert _findings(tmp_path, reset) == []
    assert _findings(tmp_path, "out[num_actual_tokens:] = 0") == []


def test_a_tail_reset_with_another_bound_does_not_cover(tmp_path):
    got = _findings(tmp_path, "out[meta.num_prefill_tokens:].zero_()")
    assert [f.line for f in got] == [16]


def test_whole_writes_and_other_sizes_are_quiet(tmp_path):
    assert _findings(tmp_path, "out.zero_()") == []
    assert _findings(tmp_path, "torch.ops.mixer.fill(x, out=out)") == []
    # a kernel launch handed the whole tensor may write every row
    src = BUGGY.replace("return self.norm(out, gate)", "fill_kernel[(1,)](out)\n        return self.norm(out, gate)")
    assert _findings(tmp_path, src=src) == []
    # sized by a local that is not the rows of a tensor (a growable buffer's capacity)
    src = BUGGY.replace("[x.shape[0], self.width]", "[capacity, self.width]").replace(
        "num_actual_tokens = ", "capacity = 2 * x.shape[0]\n        num_actual_tokens = ")
    assert _findings(tmp_path, src=src) == []
    # the prefix is the whole extent
    src = BUGGY.replace("out[:num_actual_tokens]", "out[:x.shape[0]]")
    assert _findings(tmp_path, src=src) == []


def test_fix_goes_before_the_read_when_the_bound_is_computed_after_the_allocation(tmp_path):
    src = BUGGY.replace("        num_actual_tokens = meta.num_prefill_tokens + meta.num_decode_tokens\n", "")
    src = src.replace("        {RESET}\n", "        num_actual_tokens = meta.num_prefill_tokens + meta.num_decode_tokens\n")
    got = _findings(tmp_path, src=src)
    assert [(f.fix.line, f.fix.after, f.fix.indent) for f in got] == [(15, False, "        ")]


def test_padded_count_extent_and_new_empty():
    # `t.new_empty((num_tokens, ...))` with the SGLang profile's padded count `num_tokens`,
    # written up to `real_num_tokens` and returned (SGLang's graph_utils pads this way, and
    # zeroes the tail)
    src = (
        "def padded(t, num_tokens, real_num_tokens):\n"
        "    full = t.new_empty((num_tokens, *t.shape[1:]))\n"
        "    full[:real_num_tokens].copy_(t)\n"
        "    return full\n"
    )
    import ast

    p = load_profile("sglang")

    def is_count(n):
        return p.count_axis(n) is not None or p.is_padded_count(n) is not None
    got = uninit_rows(ast.parse(src), split_lines(src), set(p.uninitialized_allocators), is_count)
    assert [(u.name, u.allocator, u.extent, u.bound, u.read_line) for u in got] == [
        ("full", "new_empty", "num_tokens", "real_num_tokens", 4)]
    fixed = src.replace("    return full", "    full[real_num_tokens:].zero_()\n    return full")
    assert uninit_rows(ast.parse(fixed), split_lines(fixed), set(p.uninitialized_allocators), is_count) == []


def test_extent_from_a_count_attribute(tmp_path):
    # vllm-ascend #9687: `o_proj_input = torch.empty((_EXTRA_CTX.num_tokens, ...))` written only
    # through `[:num_actual_tokens]` by the decode and prefill paths, then projected whole
    src = (
        "import torch\n"
        "\n"
        "\n"
        "def forward(self, q, num_actual_tokens):\n"
        "    o_proj_input = torch.empty((_EXTRA_CTX.num_tokens, self.width), dtype=q.dtype)\n"
        "    self._decode(q[:num_actual_tokens], o_proj_input[:num_actual_tokens])\n"
        "    return self.o_proj(o_proj_input)\n"
    )
    files = {"pkg/__init__.py": "", "pkg/mla.py": src}
    got = [f for f in check_files(tmp_path, files, ["pkg/mla.py"], profile="vllm") if f.code == "PAD005"]
    assert [(f.line, f.field, f.padded, f.real) for f in got] == [
        (7, "o_proj_input", "_EXTRA_CTX.num_tokens", "num_actual_tokens")]


def _rows(src: str):
    import ast

    p = load_profile("vllm")

    def is_count(n):
        return p.count_axis(n) is not None or p.is_padded_count(n) is not None
    return uninit_rows(ast.parse(src), split_lines(src), set(p.uninitialized_allocators), is_count)


def _fixed(src: str) -> str:
    """The source with each reported tail reset applied (it must still parse)."""
    import ast

    from padlint.fix import apply_fixes
    from padlint.model import Fix

    fixes = [Fix(path="m.py", line=u.fix[0], after=u.fix[1], indent=u.fix[2], text=f"{u.name}[{u.bound}:].zero_()",
                 description="") for u in _rows(src) if u.fix is not None]
    out = apply_fixes(src, fixes)
    ast.parse(out)
    return out


def test_fix_before_a_multi_line_read_goes_before_its_first_line():
    src = (
        "def f(q, meta):\n"
        "    out = torch.empty(q.shape[0], 3)\n"
        "    num_actual_tokens = meta.n\n"
        "    out[:num_actual_tokens] = 1\n"
        "    return foo(\n"
        "        q,\n"
        "        bar(out),\n"
        "    )\n"
    )
    assert [(u.read_line, u.fix) for u in _rows(src)] == [(7, (5, False, "    "))]
    assert "    out[num_actual_tokens:].zero_()\n    return foo(" in _fixed(src)


def test_fix_before_an_elif_read_goes_before_the_head_if():
    src = (
        "def f(q, meta, c):\n"
        "    out = torch.empty(q.shape[0], 3)\n"
        "    num_actual_tokens = meta.n\n"
        "    out[:num_actual_tokens] = 1\n"
        "    if c:\n"
        "        pass\n"
        "    elif out.sum() > 0:\n"
        "        pass\n"
    )
    assert [u.fix for u in _rows(src)] == [(5, False, "    ")]
    _fixed(src)


def test_no_fix_after_an_allocation_that_shares_its_line():
    src = (
        "def f(q, num_actual_tokens):\n"
        "    out = torch.empty(q.shape[0], 4); y = 1\n"
        "    out[:num_actual_tokens] = 1\n"
        "    return out\n"
    )
    # not after the allocation (another statement shares its line): before the read
    assert [u.fix for u in _rows(src)] == [(4, False, "    ")]
    _fixed(src)


def test_a_bound_rebound_after_the_allocation_puts_the_fix_before_the_read():
    src = (
        "def f(q, meta):\n"
        "    n = 0\n"
        "    out = torch.empty(q.shape[0], 4)\n"
        "    n = meta.num_actual_tokens\n"
        "    out[:n] = 1\n"
        "    return out\n"
    )
    assert [u.fix for u in _rows(src)] == [(6, False, "    ")]


def test_a_bound_that_calls_gets_no_fix():
    src = (
        "def f(q, meta):\n"
        "    out = torch.empty(q.shape[0], 4)\n"
        "    out[:meta.count()] = 1\n"
        "    return out\n"
    )
    got = _rows(src)
    assert [(u.bound, u.fix) for u in got] == [("meta.count()", None)]


def test_nested_functions_are_their_own_functions():
    # only `h`, never called, reads `out` whole: nothing in `f`
    src = (
        "def f(q, num_actual_tokens):\n"
        "    out = torch.empty(q.shape[0], 3)\n"
        "    out[:num_actual_tokens] = 1\n"
        "    def h():\n"
        "        return out\n"
        "    return out[:num_actual_tokens]\n"
    )
    assert _rows(src) == []
    # a store of the same name inside a nested function does not hide `f`'s own read
    src2 = (
        "def f(q, num_actual_tokens):\n"
        "    out = torch.empty(q.shape[0], 3)\n"
        "    out[:num_actual_tokens] = 1\n"
        "    def h():\n"
        "        out = 1\n"
        "        return out\n"
        "    return out\n"
    )
    assert [(u.function, u.read_line) for u in _rows(src2)] == [("f", 7)]


def test_empty_like_of_a_parameter_rebinding_it():
    src = (
        "def f(x, num_actual_tokens):\n"
        "    y = torch.empty_like(x)\n"
        "    y[:num_actual_tokens] = 1\n"
        "    return y\n"
    )
    assert [(u.extent, u.read_line) for u in _rows(src)] == [("x.shape[0]", 4)]


def test_tail_zeroed_through_a_view_is_quiet(tmp_path):
    # after the prefix writes, `tail = out[num_actual_tokens:]` then a write of every element of
    # `tail` before the read
    ret = "        return self.norm(out, gate)\n"
    for reset in ("tail.zero_()", "tail[:] = 0", "tail.fill_(0.0)"):
        src = BUGGY.replace(ret, f"        tail = out[num_actual_tokens:]\n        {reset}\n" + ret)
        assert _findings(tmp_path, src=src) == [], reset


def test_a_view_of_the_tail_that_is_read_or_written_late_is_no_reset(tmp_path):
    ret = "        return self.norm(out, gate)\n"
    # the view read (its sum: the uninitialised rows themselves) as well as written: reported
    # where the view is taken (line 16), the first use that reads those rows
    src = BUGGY.replace(ret, "        tail = out[num_actual_tokens:]\n        s = tail.sum()\n        tail.zero_()\n" + ret)
    assert [f.line for f in _findings(tmp_path, src=src)] == [16]
    # the view written only after the whole read: the read at line 17 sees the rows unwritten
    src = BUGGY.replace(ret, "        tail = out[num_actual_tokens:]\n        y = self.norm(out, gate)\n"
                             "        tail.zero_()\n        return y\n")
    assert [f.line for f in _findings(tmp_path, src=src)] == [17]
    # written before the read: quiet
    src = BUGGY.replace(ret, "        tail = out[num_actual_tokens:]\n        tail.zero_()\n" + ret)
    assert _findings(tmp_path, src=src) == []
