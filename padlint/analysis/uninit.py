"""Uninitialised padding rows of a local allocation (facts for PAD005).

A function allocates a tensor uninitialised with as many rows as another tensor of the step
(``out = torch.empty([q.shape[0], ...])``, ``t.new_empty(...)``, ``torch.empty_like(t)``: the
padded batch the function was handed) or as a count of the batch (``_EXTRA_CTX.num_tokens``), writes it only through prefix
views bounded by another count (``out[:num_actual_tokens]``, a local bound to it, the pieces
``torch.split`` makes of it, each handed to a kernel or passed as ``out=``), and then hands the
whole tensor on (returns it, passes it to a call, computes with it).  Rows
``[num_actual_tokens:q.shape[0]]`` hold whatever the allocator's memory held (possibly NaN)
when they reach what follows: the residual, the router and the experts of an MoE layer,
per-tensor quantisation scales and collectives mix padding rows into real ones (SGLang 0.5.21
zeroes them in ``MambaMixer2.forward``: "Rows past the batch's tokens are DP padding; keep
them finite").

Only the function's own statements are read, in source order (a nested function is another
function).  The first use of the local that is neither a prefix view nor metadata
(``.shape``, ``.dtype``) decides: a write of every row (``.zero_()``, ``out=x``, ``x[...] = v``
over all rows) or an index the analysis does not model ends the search with nothing to
report; any other use reads the whole tensor.  A reset of the tail (``x[n:].zero_()``,
``x[n:] = 0``, also under a test such as ``if n < x.shape[0]:``) with the prefix's bound ``n``
covers it.  Plain data out, no rule knowledge.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from padlint.analysis.axes import _own_nodes
from padlint.analysis.lifecycle import _whole_index
from padlint.analysis.project import _dotted

# attributes of a tensor that only read its metadata
_META = frozenset({"shape", "dtype", "device", "ndim", "size", "numel", "dim", "stride", "data_ptr",
                   "element_size", "is_contiguous", "nbytes", "itemsize", "is_cuda", "layout"})
# in-place methods that write every element of their receiver
_WHOLE_WRITERS = frozenset({"zero_", "fill_", "copy_", "normal_", "uniform_", "fill", "random_"})


@dataclass(frozen=True)
class UninitRows:
    """A local allocated uninitialised, written only up to ``bound``, read whole."""

    function: str        # qualified name in its module (``MambaMixer2.forward``)
    name: str            # the local (``preallocated_ssm_out``)
    allocator: str       # ``torch.empty``
    alloc_line: int
    extent: str          # its rows (``projected_states.shape[0]``)
    bound: str           # the prefix the function writes (``num_actual_tokens``)
    write_line: int      # the first prefix view
    read_line: int       # the use that reads every row
    read_col: int        # 0-based
    read_end_line: int
    read_end_col: int
    read_text: str       # the expression around the use (``self.norm(preallocated_ssm_out, gate)``)
    # where the tail reset goes: (line, after the statement ending on line - 1, indentation),
    # None when no place is safe (see :func:`_fix_place`)
    fix: tuple[int, bool, str] | None


def _rows_of(call: ast.Call) -> str | None:
    """The first dimension of an allocation as written, when it is another tensor's rows
    (``t.shape[0]``, ``t.size(0)``, ``len(t)``, ``*_like(t)``, ``t.new_empty(t.shape)``) or a
    name ``padded`` accepts (a padded count of the profile); else None."""
    func = _dotted(call.func) or ""
    if func.endswith("_like"):
        return f"{ast.unparse(call.args[0])}.shape[0]" if call.args and not isinstance(call.args[0], ast.Starred) \
            else None
    if call.args and not isinstance(call.args[0], ast.Starred):
        first = call.args[0]
    else:
        first = next((k.value for k in call.keywords if k.arg in ("size", "shape")), None)
    if first is None:
        return None
    if isinstance(first, (ast.Tuple, ast.List)):
        if not first.elts or isinstance(first.elts[0], ast.Starred):
            return None
        first = first.elts[0]
    elif isinstance(first, ast.Attribute) and first.attr == "shape":
        return f"{ast.unparse(first.value)}.shape[0]"  # `x.new_empty(t.shape)`
    return ast.unparse(first)


def _tensor_rows(extent: str, is_count) -> bool:
    """Whether ``extent`` counts the rows of a batch: another tensor's rows, or a count name (its
    last component: ``_EXTRA_CTX.num_tokens``) the profile knows.  A capacity or a workspace
    size (``new_size``, ``max_len_per_rank``) is not: rows past what is written there are room,
    not padding."""
    if extent.endswith((".shape[0]", ".size(0)")) or re.fullmatch(r"len\([^()]*\)", extent):
        return True
    last = extent.rsplit(".", 1)[-1]
    return last.isidentifier() and bool(is_count(last))


def _is_zero(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value == 0)


def _functions(tree: ast.Module):
    """(qualified name, function) of every function of the module, nested ones included."""
    todo: list[tuple[str, ast.AST]] = [("", tree)]
    while todo:
        prefix, node = todo.pop()
        for c in ast.iter_child_nodes(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = f"{prefix}.{c.name}" if prefix else c.name
                if not isinstance(c, ast.ClassDef):
                    yield q, c
                todo.append((q, c))
            elif not isinstance(c, ast.Lambda):
                todo.append((prefix, c))


def _allocation(st: ast.AST, allocators) -> str:
    """The allocator of ``name = <uninitialised allocation>``, else ""."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and isinstance(st.value, ast.Call)):
        return ""
    func = _dotted(st.value.func) or ""
    if func in allocators:
        return func
    return "new_empty" if isinstance(st.value.func, ast.Attribute) and st.value.func.attr == "new_empty" else ""


def uninit_rows(tree: ast.Module, lines: list[str], allocators, is_count) -> list[UninitRows]:
    """Every :class:`UninitRows` of a module.  ``allocators``: dotted names of uninitialised
    allocators (the profile's ``uninitialized_allocators``; ``x.new_empty`` is one too);
    ``is_count(name)``: whether a name is a count of the batch (real or padded)."""
    out: list[UninitRows] = []
    for qual, fn in _functions(tree):
        nodes = list(_own_nodes(fn))
        allocs = [st for st in nodes if _allocation(st, allocators)]
        if not allocs:
            continue
        parents: dict[ast.AST, ast.AST] = {}
        for n in nodes:
            for c in ast.iter_child_nodes(n):
                parents[c] = n
        for n in fn.body:
            parents[n] = fn
        stores: dict[str, list[ast.Name]] = {}
        for n in nodes:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                stores.setdefault(n.id, []).append(n)
        a = fn.args
        params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
        for st in allocs:
            name = st.targets[0].id
            if len(stores.get(name, ())) != 1:
                continue
            extent = _rows_of(st.value)
            if extent is None or not _tensor_rows(extent, is_count):
                continue
            found = _judge(st, name, extent, nodes, parents)
            if found is None:
                continue
            bound, write_line, use, around = found
            fix = _fix_place(st, use, bound, lines, parents, stores, params)
            out.append(UninitRows(
                function=qual, name=name, allocator=_allocation(st, allocators), alloc_line=st.lineno,
                extent=extent, bound=bound, write_line=write_line,
                read_line=around.lineno, read_col=around.col_offset,
                read_end_line=around.end_lineno or around.lineno, read_end_col=around.end_col_offset or 0,
                read_text=ast.unparse(around), fix=fix))
    return out


def _alone(st: ast.stmt, lines: list[str]) -> bool:
    """Whether ``st`` starts its first line and ends its last one (no other statement, no
    one-line suite: ``if c: x = ...``, ``a = 1; x = ...``): a statement can go before or after it."""
    first = lines[st.lineno - 1] if 0 < st.lineno <= len(lines) else ""
    last = lines[(st.end_lineno or st.lineno) - 1] if 0 < (st.end_lineno or st.lineno) <= len(lines) else ""
    if first[:st.col_offset].strip():
        return False
    rest = last[st.end_col_offset or 0:] if isinstance(st, (ast.Assign, ast.Expr, ast.Return, ast.AnnAssign,
                                                            ast.AugAssign)) else ""
    return not rest.strip() or rest.strip().startswith("#")


def _fix_place(alloc: ast.Assign, use: ast.AST, bound: str, lines: list[str], parents: dict,
               stores: dict, params: set) -> tuple[int, bool, str] | None:
    """Where ``name[bound:].zero_()`` goes: (line, after, indentation).  Right after the
    allocation when every binding of the bound's names comes before it; else right before the
    statement that reads the tensor whole (the head ``if`` of an ``elif`` chain); None when the
    bound has a side effect or runs code (a call, ``await``, ``yield``, ``:=``: it would be
    evaluated again) or no statement boundary is there."""
    try:
        expr = ast.parse(bound, mode="eval")
    except SyntaxError:
        return None
    if any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda,
                          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) for n in ast.walk(expr)):
        return None
    names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} - {"self"}
    start = (alloc.lineno, alloc.col_offset)
    if all(all((s.lineno, s.col_offset) < start for s in stores.get(x, ())) and (x in params or stores.get(x))
           for x in names) and _alone(alloc, lines):
        return (alloc.end_lineno or alloc.lineno) + 1, True, _indent(lines, alloc.lineno)
    stmt = use
    while stmt in parents and not isinstance(stmt, ast.stmt):
        stmt = parents[stmt]
    while isinstance(stmt, ast.If) and isinstance(parents.get(stmt), ast.If) \
            and parents[stmt].orelse == [stmt] and lines[stmt.lineno - 1].lstrip().startswith("elif"):
        stmt = parents[stmt]  # an `elif` test: before the head `if`
    if not isinstance(stmt, ast.stmt) or (lines[stmt.lineno - 1] if 0 < stmt.lineno <= len(lines) else "")[
            :stmt.col_offset].strip():
        return None
    return stmt.lineno, False, _indent(lines, stmt.lineno)


def _indent(lines: list[str], line: int) -> str:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return text[:len(text) - len(text.lstrip())]


def _judge(alloc: ast.Assign, name: str, extent: str, nodes: list, parents: dict):
    """(bound, first prefix line, the whole use, the expression around it) when ``name`` is
    written only through prefix views before a use reads it whole, and no tail reset with the
    same bound covers the rows past it; else None."""
    start = (alloc.end_lineno or alloc.lineno, alloc.end_col_offset or 0)  # `x = torch.empty_like(x)`
    uses = sorted((n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                   and (n.lineno, n.col_offset) >= start), key=lambda n: (n.lineno, n.col_offset))
    prefixes: list[tuple[str, int]] = []
    resets: dict[str, tuple[int, int]] = {}  # bound -> where its tail reset is done
    for u in uses:
        p = parents.get(u)
        if isinstance(p, ast.Attribute) and p.value is u:
            if p.attr in _META:
                continue
            if p.attr in _WHOLE_WRITERS and isinstance(parents.get(p), ast.Call):
                return None  # every row written
            return _whole(u, p, prefixes, resets, parents)
        if isinstance(p, ast.Subscript) and p.value is u:
            s = p.slice
            if isinstance(s, ast.Slice) and s.step is None:
                if _is_zero(s.lower) and s.upper is not None:
                    hi = ast.unparse(s.upper)
                    if hi == extent:
                        return _whole(u, p, prefixes, resets, parents)
                    prefixes.append((hi, p.lineno))
                    continue
                if s.lower is not None and (s.upper is None or ast.unparse(s.upper) == extent):
                    at = (p.lineno, p.col_offset) if _writes(p, parents) else _view_written(p, nodes, parents)
                    if at is not None:
                        # `x[n:].zero_()`, `x[n:] = 0`, `tail = x[n:]; tail.zero_()` (where the last
                        # write through the view is)
                        b = ast.unparse(s.lower)
                        resets[b] = min(resets.get(b, at), at)
                        continue
                    return _whole(u, p, prefixes, resets, parents)
                if _is_zero(s.lower) and s.upper is None:
                    return None if _writes(p, parents) else _whole(u, p, prefixes, resets, parents)
            return None  # another index (a column slice, a mask, one row): not modelled
        if isinstance(p, ast.keyword) and p.arg == "out":
            return None  # a torch op writes every row
        return _whole(u, u, prefixes, resets, parents)
    return None


def _view_written(sub: ast.Subscript, nodes: list, parents: dict) -> tuple[int, int] | None:
    """Where the first write is when ``tail = x[n:]`` binds ``tail`` once and every use of it
    writes all its elements (``tail.zero_()``, ``tail.fill_(v)``, ``tail[:] = v``,
    ``tail[...] = v``); else None."""
    p = parents.get(sub)
    if not (isinstance(p, ast.Assign) and p.value is sub and len(p.targets) == 1
            and isinstance(p.targets[0], ast.Name)):
        return None
    name = p.targets[0].id
    uses = [n for n in nodes if isinstance(n, ast.Name) and n.id == name]
    loads = [n for n in uses if isinstance(n.ctx, ast.Load)]
    if len(uses) - len(loads) != 1 or not loads:
        return None
    for u in loads:
        q = parents.get(u)
        if isinstance(q, ast.Attribute) and q.value is u and q.attr in _WHOLE_WRITERS \
                and isinstance(parents.get(q), ast.Call) and parents[q].func is q:
            continue
        if isinstance(q, ast.Subscript) and q.value is u and isinstance(q.ctx, ast.Store) and _whole_index(q):
            continue
        return None
    return min((u.lineno, u.col_offset) for u in loads)


def _writes(sub: ast.Subscript, parents: dict) -> bool:
    """``x[...] = v`` or ``x[...].zero_()`` / ``.fill_(v)`` / ``.copy_(v)``."""
    p = parents.get(sub)
    if isinstance(p, (ast.Assign, ast.AugAssign)) and sub in (getattr(p, "targets", None) or [p.target]):
        return True
    return isinstance(p, ast.Attribute) and p.attr in _WHOLE_WRITERS and isinstance(parents.get(p), ast.Call)


def _whole(use: ast.AST, node: ast.AST, prefixes, resets, parents):
    """The verdict at a use that reads every row: reported when prefixes were written before it
    and no tail reset has their bound."""
    if not prefixes:
        return None
    here = (getattr(use, "lineno", 0), getattr(use, "col_offset", 0))
    bounds = [b for b, _ in prefixes if not (b in resets and resets[b] < here)]
    if not bounds:
        return None
    # the expression that reads it: the call it is an argument of, the return, the operation
    around = node
    p = parents.get(around)
    while p is not None and not isinstance(p, ast.stmt) and not isinstance(p, ast.Call):
        around = p
        p = parents.get(around)
    if isinstance(p, ast.Call):
        around = p
    elif isinstance(p, ast.stmt):
        around = p
    if isinstance(around, ast.Call) and _is_launch(around):
        return None  # a kernel launch handed the whole tensor may write every row
    return bounds[0], next(line for b, line in prefixes if b == bounds[0]), use, around


def _is_launch(call: ast.Call) -> bool:
    """``kernel[grid](...)``: a Triton launch."""
    return isinstance(call.func, ast.Subscript)
