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
