"""Tail stores of Triton kernels (padlint.analysis.kernels): which pointer arguments a kernel pads.

Each case is a kernel written here; the expected tail stores follow from the
definition in the module docstring: a ``tl.store(P + E, V)`` in a loop over
``range(A, B)`` with ``A`` not 0, ``E`` depending on the loop variable and
``V`` not.
"""

from __future__ import annotations

import ast
import textwrap

from padlint.analysis.kernels import TailStore, tail_stores


def _stores(src: str) -> list[tuple[str, int, str]]:
    fn = ast.parse(textwrap.dedent(src)).body[0]
    return [(t.name, t.index, t.value) for t in tail_stores(fn)]


def test_tail_loop_from_a_count_is_a_reset_with_its_literal():
    # vLLM MRV2 `_prepare_pos_seq_lens_kernel`: pads seq_lens (parameter 1) with 0
    assert _stores("""
        def k(pos_ptr, seq_lens_ptr, max_num_reqs, BLOCK: tl.constexpr):
            num_reqs = tl.num_programs(0) - 1
            for i in tl.range(num_reqs, max_num_reqs, BLOCK):
                block = i + tl.arange(0, BLOCK)
                mask = block < max_num_reqs
                tl.store(seq_lens_ptr + block, 0, mask=mask)
        """) == [("seq_lens_ptr", 1, "0")]


def test_negative_literal_and_loop_invariant_value():
    # a sentinel (-1) and a value the analysis cannot name (the last real offset: "")
    assert _stores("""
        def k(idx_ptr, qsl_ptr, num_reqs, max_num_reqs, B: tl.constexpr):
            last = tl.load(qsl_ptr + num_reqs)
            for i in range(num_reqs + 1, max_num_reqs + 1, B):
                tl.store(qsl_ptr + i + tl.arange(0, B), last)
            for i in range(num_reqs, max_num_reqs, B):
                blk = i + tl.arange(0, B)
                tl.store(idx_ptr + blk, -1, mask=blk < max_num_reqs)
        """) == [("idx_ptr", 0, "-1"), ("qsl_ptr", 1, "")]


def test_loops_from_zero_and_loop_dependent_values_are_not_resets():
    assert _stores("""
        def k(out_ptr, src_ptr, n, B: tl.constexpr):
            for i in range(0, n, B):
                block = i + tl.arange(0, B)
                tl.store(out_ptr + block, 0)
            for i in range(n, 2 * n, B):
                block = i + tl.arange(0, B)
                tl.store(out_ptr + block, tl.load(src_ptr + block))
        """) == []


def test_store_to_a_fixed_row_or_a_non_parameter_is_not_a_tail_store():
    assert _stores("""
        def k(out_ptr, n, B: tl.constexpr):
            tmp = out_ptr
            for i in range(n, 2 * n, B):
                tl.store(out_ptr + n, 0)      # one row, not the loop's rows
                tl.store(tmp + i, 0)          # an alias the analysis does not follow
        """) == []


def test_one_tail_store_per_parameter_first_wins():
    got = tail_stores(ast.parse(textwrap.dedent("""
        def k(a_ptr, n, m, B: tl.constexpr):
            for i in range(n, m, B):
                tl.store(a_ptr + i, 0)
            for i in range(n, m, B):
                tl.store(a_ptr + i, 1)
        """)).body[0])
    assert got == (TailStore(0, "a_ptr", "0", 4),)


def _tables(src: str) -> list[tuple[str, int, str, bool]]:
    fn = ast.parse(textwrap.dedent(src)).body[0]
    return [(t.name, t.index, t.value, t.table) for t in tail_stores(fn)]


def test_programs_past_the_real_count_storing_a_literal_pad_the_rows():
    # one program per padded row: `if pid >= num_reqs:` stores 0 into that row of out_ptr
    assert _tables("""
        def k(src_ptr, out_ptr, num_reqs, stride, B: tl.constexpr):
            pid = tl.program_id(0)
            row = out_ptr + pid * stride
            if pid >= num_reqs:
                for i in tl.range(0, stride, B):
                    tl.store(row + i + tl.arange(0, B), 0)
                return
            tl.store(row, tl.load(src_ptr + pid))
        """) == [("out_ptr", 1, "0", False)]


def test_a_store_through_a_pointer_loaded_from_a_table_pads_the_pointed_buffers():
    # vLLM MRV2 `_gather_block_tables_kernel`: `dst_ptrs` holds one table's address per group
    assert _tables("""
        def k(idx_ptr, src_ptrs, dst_ptrs, stride, num_reqs, B: tl.constexpr):
            group = tl.program_id(0)
            batch_idx = tl.program_id(1)
            dst = _load_ptr(dst_ptrs + group, tl.int32)
            row = dst + batch_idx * stride
            if batch_idx >= num_reqs:
                for i in tl.range(0, stride, B):
                    tl.store(row + i + tl.arange(0, B), 0)
                return
        """) == [("dst_ptrs", 2, "0", True)]
    assert _tables("""
        def k(dst_ptrs, num_reqs):
            g = tl.program_id(0)
            r = tl.program_id(1)
            dst = tl.load(dst_ptrs + g).to(tl.pointer_type(tl.int32))
            if r >= num_reqs:
                tl.store(dst + r, -1)
        """) == [("dst_ptrs", 0, "-1", True)]


def test_programs_guarded_otherwise_or_storing_data_are_not_padding():
    # `pid < n` guards the real rows; a loaded value is data; a guard on a local is not a count
    assert _tables("""
        def k(out_ptr, src_ptr, num_reqs):
            pid = tl.program_id(0)
            if pid < num_reqs:
                tl.store(out_ptr + pid, 0)
        """) == []
    assert _tables("""
        def k(out_ptr, src_ptr, num_reqs):
            pid = tl.program_id(0)
            if pid >= num_reqs:
                tl.store(out_ptr + pid, tl.load(src_ptr))
        """) == []
    assert _tables("""
        def k(out_ptr, num_reqs):
            pid = tl.program_id(0)
            limit = num_reqs * 2
            if pid >= limit:
                tl.store(out_ptr + pid, 0)
        """) == []


def _module_stores(src: str, kernel: str) -> list[tuple[str, int, str]]:
    tree = ast.parse(textwrap.dedent(src))
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    return [(t.name, t.index, t.value) for t in tail_stores(funcs[kernel], funcs)]


HELPER_PADS = """
    @triton.jit
    def _pad(out_seq_lens_ptr, out_slots_ptr, pad_idx, num_reqs, max_num_reqs, BLOCK: tl.constexpr):
        start = pad_idx * BLOCK
        for i in range(num_reqs + start, max_num_reqs, 32 * BLOCK):
            block = i + tl.arange(0, BLOCK)
            tl.store(out_seq_lens_ptr + block, 0, mask=block < max_num_reqs)
            tl.store(out_slots_ptr + block, -1, mask=block < max_num_reqs)

    @triton.jit
    def _prepare(out_seq_lens_ptr, lens_ptr, out_slots_ptr, num_reqs, max_num_reqs, BLOCK: tl.constexpr):
        req_idx = tl.program_id(0)
        if req_idx >= num_reqs:
            {CALL}
            return
        tl.store(out_seq_lens_ptr + req_idx, tl.load(lens_ptr + req_idx))
"""


def test_a_jit_helper_the_kernel_hands_its_pointers_pads_them():
    # vLLM 0.34.0 MRV2 DFlash: the programs past the batch call `_pad_dflash_inputs(...)`, whose
    # loops from `num_reqs + start` store 0 / -1: the launched kernel's parameters 0 and 2 (as
    # passed to the helper's positions 0 and 1) get those values in their tail rows
    src = HELPER_PADS.replace(
        "{CALL}", "_pad(out_seq_lens_ptr, out_slots_ptr, req_idx - num_reqs, num_reqs, max_num_reqs, BLOCK)")
    assert _module_stores(src, "_prepare") == [("out_seq_lens_ptr", 0, "0"), ("out_slots_ptr", 2, "-1")]
    # by keyword, and an argument that is not a parameter of the kernel (a local) pads nothing
    src = HELPER_PADS.replace(
        "{CALL}", "tmp = lens_ptr\n            _pad(out_slots_ptr=tmp, out_seq_lens_ptr=out_seq_lens_ptr, pad_idx=0, "
                  "num_reqs=num_reqs, max_num_reqs=max_num_reqs, BLOCK=BLOCK)")
    assert _module_stores(src, "_prepare") == [("out_seq_lens_ptr", 0, "0")]


def test_a_helper_that_is_not_jit_or_not_given_is_not_followed():
    src = HELPER_PADS.replace("{CALL}", "_pad(out_seq_lens_ptr, out_slots_ptr, 0, num_reqs, max_num_reqs, BLOCK)")
    fn = [f for f in ast.parse(textwrap.dedent(src)).body if f.name == "_prepare"][0]
    assert tail_stores(fn) == ()  # no module functions given: the call is not followed
    plain = src.replace("@triton.jit\n    def _pad", "def _pad")
    assert _module_stores(plain, "_prepare") == []


def test_a_store_of_a_value_selected_past_the_count_pads_with_that_literal():
    # vLLM MRV2 `_dcp_local_seq_lens_kernel`: every row up to max_num_reqs is stored, and the
    # value is 0 from num_reqs on (`tl.where(block < num_reqs, x, 0)`): parameter 0 is padded with 0
    assert _stores("""
        def k(out_ptr, seq_lens_ptr, num_reqs, max_num_reqs, BLOCK: tl.constexpr):
            block = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(seq_lens_ptr + block, mask=block < num_reqs)
            v = tl.where(block < num_reqs, x * 2, 0)
            tl.store(out_ptr + block, v, mask=block < max_num_reqs)
        """) == [("out_ptr", 0, "0")]
    # a masked load's `other=` is what the rows past the count get
    assert _stores("""
        def k(out_ptr, src_ptr, num_reqs, max_num_reqs, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=offs < num_reqs, other=-1), mask=offs < max_num_reqs)
        """) == [("out_ptr", 0, "-1")]


def test_a_selection_by_something_else_is_not_padding():
    # no `other=` (the rows past the count hold whatever the load gives), a test of a value, not
    # of the store's offset, and a selection on a local rather than a parameter pad nothing
    assert _stores("""
        def k(out_ptr, src_ptr, num_reqs, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(src_ptr + offs, mask=offs < num_reqs)
            tl.store(out_ptr + offs, x)
            y = tl.where(x < num_reqs, x, 0)
            tl.store(out_ptr + offs + BLOCK, y)
            n = num_reqs - 1
            tl.store(out_ptr + offs + 2 * BLOCK, tl.where(offs < n, x, 0))
        """) == []


def test_selections_through_mask_locals_casts_and_reassigned_values():
    # SGLang 0.5.23 `fill_draft_extend_prepare_buffers_kernel` shape: one program per request row,
    # the row test held in a local (`is_real = i < raw_bs`), the loaded value cast (`.to(...)`),
    # and one local (`tok`) loaded again for each token buffer before its store: each store pads
    # its own parameter with the `other=` of the load just above it
    assert _stores("""
        def k(ids_ptr, pos_ptr, n_ptr, src_ids_ptr, src_pos_ptr, src_n_ptr, num_tokens, max_num_token,
              raw_bs, bs, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK + tl.arange(0, BLOCK)
            copy_mask = offs < num_tokens
            store_mask = offs < max_num_token
            tok = tl.load(src_ids_ptr + offs, mask=copy_mask, other=0).to(tl.int64)
            tl.store(ids_ptr + offs, tok, mask=store_mask)
            tok = tl.load(src_pos_ptr + offs, mask=copy_mask, other=-1).to(tl.int64)
            tl.store(pos_ptr + offs, tok, mask=store_mask)
            i = pid
            is_real = i < raw_bs
            in_bs = i < bs
            nat = tl.load(src_n_ptr + i, mask=is_real, other=-1).to(tl.int32)
            tl.store(n_ptr + i, nat, mask=in_bs)
        """) == [("ids_ptr", 0, "0"), ("pos_ptr", 1, "-1"), ("n_ptr", 2, "-1")]


def test_a_store_that_stops_at_the_same_count_writes_no_tail():
    # `tl.store(p + i, tl.load(src + i, mask=is_real, other=0), mask=is_real)`: the store is
    # masked by the very test that selects the `other=` value, so the rows past the count are
    # not written at all (SGLang's `req_pool_indices` in the kernel above: real rows only)
    assert _stores("""
        def k(rpi_ptr, src_ptr, raw_bs, BLOCK: tl.constexpr):
            i = tl.program_id(0)
            is_real = i < raw_bs
            rpi = tl.load(src_ptr + i, mask=is_real, other=0).to(tl.int64)
            tl.store(rpi_ptr + i, rpi, mask=is_real)
        """) == []
