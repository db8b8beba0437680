"""What a Triton kernel writes into the padding rows of its pointer arguments.

Engines pad inside kernels: a kernel launched for ``num_reqs`` requests loops
over the tail of a buffer and stores one value there, e.g. (vLLM Model Runner V2)::

    for i in tl.range(num_reqs, max_num_reqs, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        tl.store(seq_lens_ptr + block, 0, mask=block < max_num_reqs)

A *tail store* is a ``tl.store(P + E, V, ...)`` inside a ``for`` loop over
``range(A, B, ...)`` / ``tl.range(A, B, ...)`` whose start ``A`` is not the
literal 0 (it starts at a count: the rows before it are the real ones), where
``P`` is a parameter of the kernel, ``E`` depends on the loop variable and
``V`` does not (one value for every tail row).  A launch ``kernel[grid](..., buf,
...)`` that binds ``buf`` to such a ``P`` resets ``buf``'s padding rows with
``V``.  Stores of loop-dependent values, and stores in loops from 0, are not
resets: they write the real rows.  A kernel launched with one program per padded
row pads too: a store of a literal under ``if pid >= n:`` (``pid =
tl.program_id(k)``, ``n`` a parameter) writes the rows of the programs past the
real count.  The pointer may be loaded from a parameter that is a table of
pointers (``dst = tl.load(dst_ptrs + group).to(...)``): the store then goes to
every buffer the table points to (vLLM MRV2 ``_gather_block_tables_kernel``).

And, for the never-written fact of :mod:`padlint.analysis.buffers`, whether a
kernel may write through a pointer argument at all (:func:`pointer_write`): only
through ``tl.store`` / ``tl.atomic_*`` (or a helper it hands the pointer to).

This reads the kernel's ``ast`` only; nothing is imported or run.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from padlint.analysis.project import _dotted as _dotted_name


@dataclass(frozen=True)
class TailStore:
    """Parameter ``index`` (``name``) gets ``value`` in every row from a count on.

    ``value``: the stored expression as written when it is a literal
    (``0``, ``-1``, ``False``), else "" (a loop-invariant value the analysis
    cannot name: the last real offset, say).  ``line``: the store's line.
    """

    index: int
    name: str
    value: str
    line: int
    # the parameter is a table of pointers (``dst_ptrs``: one buffer per group), and the store
    # goes to the buffers it points to (``dst = _load_ptr(dst_ptrs + g); tl.store(dst + ..., 0)``)
    table: bool = False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_range(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name in ("range", "static_range") and len(call.args) >= 2


def _starts_at_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def _store_call(node: ast.AST) -> ast.Call | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "store" \
            and len(node.args) >= 2:
        return node
    return None


def _pointer(expr: ast.AST, params: dict[str, int]) -> str | None:
    """The parameter ``expr`` offsets (``P + E``, ``P + c + E``), or None."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        if isinstance(expr.left, ast.Name) and expr.left.id in params:
            return expr.left.id
        expr = expr.left
    return None


def _is_program_id(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (_dotted_name(node.func) or "").rsplit(".", 1)[-1] == "program_id"


def _literal_text(value: ast.AST) -> str:
    return ast.unparse(value) if isinstance(value, ast.Constant) or (
        isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant)) else ""


def _pointer_source(expr: ast.AST, params: dict[str, int], defs: dict[str, ast.AST],
                    depth: int = 0) -> tuple[str, bool] | None:
    """The parameter a pointer expression offsets, followed through the kernel's locals
    (``row = base + pid * stride``; ``base = P``), and whether the pointer was loaded from it
    (``base = _load_ptr(P + g, ...)`` / ``tl.load(P + g).to(...)``: P is a table of pointers)."""
    if depth > 8:
        return None
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        expr = expr.left
    if isinstance(expr, ast.Name):
        if expr.id in params:
            return expr.id, False
        if expr.id in defs:
            return _pointer_source(defs[expr.id], params, defs, depth + 1)
        return None
    call = expr
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "to":
        call = call.func.value  # `tl.load(P + g).to(tl.pointer_type(...))`
    if isinstance(call, ast.Call) and call.args and "load" in (_dotted_name(call.func) or "").rsplit(".", 1)[-1]:
        got = _pointer_source(call.args[0], params, defs, depth + 1)
        if got is not None and not got[1]:
            return got[0], True
    return None


def _single_defs(fn: ast.AST) -> dict[str, ast.AST]:
    """The kernel's locals assigned exactly once (a name -> its value): followed as definitions."""
    defs: dict[str, ast.AST] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            counts[name] = counts.get(name, 0) + 1
            defs[name] = node.value
    return {k: v for k, v in defs.items() if counts[k] == 1}


def _grid_tail_stores(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: dict[str, int]) -> list[TailStore]:
    """Stores of one literal value under ``if pid >= n:`` with ``pid = tl.program_id(k)`` and
    ``n`` a parameter: the programs launched past the real count (a grid of the padded count)
    write the padding rows (vLLM MRV2 ``_gather_block_tables_kernel``: ``if batch_idx >= num_reqs:
    ... tl.store(dst_row_ptr + offset, 0, ...)``)."""
    defs = _single_defs(fn)
    pids = {k for k, v in defs.items() if _is_program_id(v)}
    out = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], (ast.GtE, ast.Gt))
                and isinstance(node.test.left, ast.Name) and node.test.left.id in pids
                and isinstance(node.test.comparators[0], ast.Name) and node.test.comparators[0].id in params):
            continue
        for sub in node.body:
            for inner in ast.walk(sub):
                call = _store_call(inner)
                if call is None:
                    continue
                text = _literal_text(call.args[1])
                src = _pointer_source(call.args[0], params, defs) if text else None
                if src is not None:
                    out.append(TailStore(params[src[0]], src[0], text, call.lineno, table=src[1]))
    return out


def _mask_bound(cond: ast.AST, defs: dict[str, ast.AST], params: dict[str, int], offsets: set[str],
                hops: int = 0) -> tuple[str, str] | None:
    """``("lt", n)`` for a test ``o < n`` (rows below the count pass), ``("ge", n)`` for ``o >= n``,
    ``o`` an offset of the store's pointer and ``n`` a parameter; followed through the kernel's
    locals (``copy_mask = offs < num_tokens``); else None."""
    if isinstance(cond, ast.Name) and cond.id in defs and hops < 4:
        return _mask_bound(defs[cond.id], defs, params, offsets, hops + 1)
    if isinstance(cond, ast.Compare) and len(cond.ops) == 1 and isinstance(cond.left, ast.Name) \
            and cond.left.id in offsets and isinstance(cond.comparators[0], ast.Name) \
            and cond.comparators[0].id in params:
        if isinstance(cond.ops[0], ast.Lt):
            return "lt", cond.comparators[0].id
        if isinstance(cond.ops[0], ast.GtE):
            return "ge", cond.comparators[0].id
    return None


def _selection(value: ast.AST, defs: dict[str, ast.AST], depth: int = 0) -> tuple[ast.Call, str] | None:
    """The call a stored value comes from, followed through the kernel's locals and casts
    (``x = tl.load(...).to(tl.int64)``), with its last name (``where``, ``load``); else None."""
    while depth <= 6:
        if isinstance(value, ast.Name) and value.id in defs:
            value = defs[value.id]
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
            value = value.func.value  # `tl.load(...).to(tl.int64)`
        elif isinstance(value, ast.Call):
            return value, (_dotted_name(value.func) or "").rsplit(".", 1)[-1]
        else:
            return None
        depth += 1
    return None


def _value_bound(value: ast.AST, defs: dict[str, ast.AST], params: dict[str, int], offsets: set[str]) -> str | None:
    """The count ``n`` of the test that selects a stored value's tail (:func:`_select_tail`)."""
    sel = _selection(value, defs)
    if sel is None:
        return None
    call, last = sel
    cond = call.args[0] if last == "where" and call.args else \
        next((k.value for k in call.keywords if k.arg == "mask"), None) if last == "load" else None
    got = _mask_bound(cond, defs, params, offsets) if cond is not None else None
    return got[1] if got is not None else None


def _select_tail(value: ast.AST, defs: dict[str, ast.AST], params: dict[str, int], offsets: set[str]) -> str | None:
    """The literal a stored value takes in the rows from a count on: ``tl.where(o < n, x, c)``
    (``o >= n``: ``tl.where(o >= n, c, x)``) or ``tl.load(p + o, mask=o < n, other=c)``, ``o`` an
    offset the store's pointer uses and ``n`` a parameter of the kernel; followed through the
    kernel's locals and casts (:func:`_selection`); else None."""
    sel = _selection(value, defs)
    if sel is None:
        return None
    value, last = sel

    def bound(cond: ast.AST) -> str | None:
        got = _mask_bound(cond, defs, params, offsets)
        return got[0] if got is not None else None

    if last == "where" and len(value.args) == 3:
        how = bound(value.args[0])
        tail = value.args[2] if how == "lt" else value.args[1] if how == "ge" else None
        return _literal_text(tail) or None if tail is not None else None
    if last == "load":
        kw = {k.arg: k.value for k in value.keywords if k.arg}
        if "mask" in kw and "other" in kw and bound(kw["mask"]) == "lt":
            return _literal_text(kw["other"]) or None
    return None


def _selected_tail_stores(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: dict[str, int]) -> list[TailStore]:
    """Stores over the whole range of a pointer whose value is a literal in the rows from a
    count on (:func:`_select_tail`): vLLM MRV2 ``_dcp_local_seq_lens_kernel``, ``v = tl.where(block
    < num_reqs, x, 0); tl.store(out_ptr + block, v, mask=block < max_num_reqs)``."""
    single = _single_defs(fn)
    assigns = [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name)]
    out = []
    for node in ast.walk(fn):
        call = _store_call(node)
        if call is None:
            continue
        ptr = _pointer(call.args[0], params)
        if ptr is None:
            continue
        # a local assigned several times (`tok = tl.load(...)` once per buffer) stands for its
        # last assignment above the store
        defs = dict(single)
        for a in sorted(assigns, key=lambda a: a.lineno):
            if a.lineno < call.lineno and a.targets[0].id not in single:
                defs[a.targets[0].id] = a.value
        offsets = _names(call.args[0]) - {ptr}
        value = _select_tail(call.args[1], defs, params, offsets)
        mask = next((k.value for k in call.keywords if k.arg == "mask"), call.args[2] if len(call.args) > 2 else None)
        stored = _mask_bound(mask, defs, params, offsets) if mask is not None else None
        if value and stored is not None and stored == ("lt", _value_bound(call.args[1], defs, params, offsets)):
            continue  # the store itself stops at that count (`mask=is_real`): the tail is not written
        if value:
            out.append(TailStore(params[ptr], ptr, value, call.lineno))
    return out


def tail_stores(fn: ast.FunctionDef | ast.AsyncFunctionDef,
                helpers: Mapping[str, ast.AST] | None = None, _depth: int = 0) -> tuple[TailStore, ...]:
    """The tail stores of kernel ``fn`` (see the module docstring), one per parameter: stores in a
    loop over the tail rows, and stores of the programs a grid launches past the real count.

    ``helpers``: the functions of the kernel's module by name.  A ``@triton.jit`` helper the
    kernel calls with one of its pointer parameters (``_pad_inputs(out_seq_lens_ptr, ...,
    num_reqs, ...)``, vLLM 0.34.0 MRV2 DFlash) stores what it stores for that parameter: the
    helper's tail stores count as the kernel's, for the parameter passed in that position."""
    params = {a.arg: i for i, a in enumerate(fn.args.posonlyargs + fn.args.args)}
    found: dict[str, TailStore] = {}
    for ts in _grid_tail_stores(fn, params):
        found.setdefault(ts.name, ts)
    for ts in _selected_tail_stores(fn, params):
        found.setdefault(ts.name, ts)
    if helpers and _depth < 3:
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                continue
            helper = helpers.get(call.func.id)
            # (the kernel itself, by where it is: a helper's node may be a parse of its own)
            if helper is None or not isinstance(helper, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    or (helper.lineno, helper.col_offset) == (fn.lineno, fn.col_offset) or not is_jit(helper):
                continue
            hparams = [a.arg for a in helper.args.posonlyargs + helper.args.args]
            passed: dict[str, ast.AST] = dict(zip(hparams, call.args))
            passed.update({k.arg: k.value for k in call.keywords if k.arg})
            for ts in tail_stores(helper, helpers, _depth + 1):
                arg = passed.get(ts.name)
                if isinstance(arg, ast.Name) and arg.id in params:
                    found.setdefault(arg.id, TailStore(params[arg.id], arg.id, ts.value, ts.line, ts.table))
    for loop in ast.walk(fn):
        if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name) or not _is_range(loop.iter):
            continue
        if _starts_at_zero(loop.iter.args[0]):
            continue
        # names that depend on the loop variable inside the loop body (`block = i + tl.arange(...)`)
        varying = {loop.target.id}
        changed = True
        while changed:
            changed = False
            for node in ast.walk(loop):
                if isinstance(node, ast.Assign) and _names(node.value) & varying:
                    for t in node.targets:
                        for n in _names(t) - varying:
                            varying.add(n)
                            changed = True
        for node in ast.walk(loop):
            call = _store_call(node)
            if call is None:
                continue
            ptr = _pointer(call.args[0], params)
            if ptr is None or not (_names(call.args[0]) & varying) or _names(call.args[1]) & varying:
                continue
            found.setdefault(ptr, TailStore(params[ptr], ptr, _literal_text(call.args[1]), call.lineno))
    return tuple(sorted(found.values(), key=lambda t: t.index))


_TL_WRITES = frozenset({"store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg",
                        "atomic_and", "atomic_or", "atomic_xor"})


def is_jit(fn: ast.AST) -> bool:
    """A Triton kernel: decorated ``@triton.jit`` / ``@jit`` (possibly under ``@triton.autotune``)."""
    for d in getattr(fn, "decorator_list", ()):
        name = _dotted_name(d.func if isinstance(d, ast.Call) else d) or ""
        if name.rsplit(".", 1)[-1] == "jit":
            return True
    return False


def pointer_write(fn: ast.AST, param: str) -> tuple[int, str] | None:
    """May the Triton kernel ``fn`` write through its pointer parameter ``param``?  (line, why)
    of the first statement that may, else None.

    Pointer arithmetic and loads read.  A write is a ``tl.store`` / ``tl.atomic_*`` whose pointer
    names the parameter or a local computed from it (transitively; what ``tl.load`` returns is
    data, not the pointer), or the parameter (or such a local) handed to any call other than a
    ``tl.``/``triton.`` function (a helper kernel: not followed, so it may write)."""
    derived = {param}

    def names(node: ast.AST) -> bool:
        # the value a `tl.load(ptr)` returns is data, not the pointer's storage
        if isinstance(node, ast.Call) and (_dotted_name(node.func) or "").rsplit(".", 1)[-1] == "load":
            return False
        if isinstance(node, ast.Name):
            return node.id in derived
        return any(names(c) for c in ast.iter_child_nodes(node))

    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               and getattr(n, "value", None) is not None]
    changed = True
    while changed:
        changed = False
        for a in assigns:
            if not names(a.value):
                continue
            for t in (a.targets if isinstance(a, ast.Assign) else [a.target]):
                for x in ast.walk(t):
                    if isinstance(x, ast.Name) and x.id not in derived:
                        derived.add(x.id)
                        changed = True

    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        name = _dotted_name(n.func) or ""
        head, _, last = name.rpartition(".")
        args = [*n.args, *(k.value for k in n.keywords)]
        if head.split(".", 1)[0] in ("tl", "triton") or name.startswith("triton.language."):
            if last in _TL_WRITES:
                ptr = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg == "pointer"), None)
                if ptr is not None and names(ptr):
                    return n.lineno, f"`{name}` in kernel `{fn.name}` writes through `{param}`"
            continue
        if name in ("range", "min", "max", "len", "int", "float", "print", "isinstance"):
            continue
        if any(names(a) for a in args):
            return n.lineno, f"passed on to `{name or 'a call'}` in kernel `{fn.name}`"
    return None
