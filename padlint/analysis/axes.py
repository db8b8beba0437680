"""Axis facts: which rows a persistent buffer has, which axis a count counts, how wide
the fields of one metadata object are sliced.

Plain data out, no rule knowledge (PAD004 queries these facts):

- :class:`BufferAxis`: the axis of a persistent buffer (``"reqs"``: one row per request,
  ``"tokens"``: one per token) with its evidence: the first dimension it is allocated
  with (``torch.empty((self.max_num_reqs,))``, ``self._make_buffer(self.max_num_tokens)``)
  and the counts it is written with (``self.buf[:num_spec_decodes].copy_(x)``).  Evidence
  that disagrees leaves the axis unknown.
- :class:`CountAxis`: the axis of a count as written at a slice: the profile's
  ``[[counts]]`` and ``[axes.*].counts`` names, followed through the function's local
  assignments (``batch_size = m.num_actual_tokens`` makes ``batch_size`` a token count),
  ``n + 1`` (offset 1), ``min(a, b)`` of counts on one axis.
- :class:`SliceSite`: ``self.buf[:count]`` (first dimension) in a checked function.
- :class:`MetadataWidths`: the fields of one metadata object (one sink constructor call
  and the attribute stores on the object it builds, or on a parameter typed as one) with
  the count each is sliced to.

Only the checked modules' functions are scanned for slice sites and metadata objects;
allocations and writes are looked up in the buffer's class (its MRO, and the classes an
attribute chain ``self.input_batch.x`` reaches) through the project index.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from padlint.analysis.literals import expr_text
from padlint.analysis.project import (ClassInfo, FunctionInfo, ModuleInfo, Project, _dotted, _type_names,
                                      bind_arguments, import_bindings)
from padlint.profile import Profile

AXES = ("reqs", "tokens")


@dataclass(frozen=True)
class Evidence:
    """One reason for a buffer's axis: ``kind`` "allocation" (first dimension) or "write"
    (a store or ``copy_`` into ``[:count]``), where, and what was seen."""

    axis: str
    kind: str
    path: str
    line: int
    text: str


@dataclass(frozen=True)
class BufferAxis:
    """A persistent buffer ``owner``.``attr`` and every piece of axis evidence found for it."""

    owner: str            # class key ("pkg.mod:Cls")
    attr: str
    evidence: tuple[Evidence, ...] = ()

    def axis(self, *, skip: tuple[str, int] | None = None) -> str | None:
        """The axis all evidence agrees on (ignoring evidence at ``skip`` = (path, line)),
        provided one allocation says it; None when there is none or it disagrees."""
        ev = [e for e in self.evidence if skip is None or (e.path, e.line) != skip]
        axes = {e.axis for e in ev}
        if len(axes) != 1 or not any(e.kind == "allocation" for e in ev):
            return None
        return axes.pop()

    def allocation(self) -> Evidence | None:
        return next((e for e in self.evidence if e.kind == "allocation"), None)


@dataclass(frozen=True)
class CountAxis:
    """A count as written (``text``) and what decides its axis: the profile name ``name``
    reached (directly or through local assignments), with ``offset`` (``n + 1``: 1).
    ``padded``: True/False when ``name`` is a padded/real count of ``[[counts]]``, else None.
    ``definition``: when the count is a local assigned exactly once, that assignment's value
    (text, line, column, end line, end column): where a replacement would go."""

    text: str
    name: str
    axis: str
    offset: int = 0
    padded: bool | None = None
    via: tuple[str, ...] = ()   # the locals followed, outermost first
    definition: tuple[str, int, int, int, int] | None = None
    uses: int = 0  # with a definition: how often the function reads the local it assigns


@dataclass(frozen=True)
class SliceSite:
    """``buffer_text[:count]`` on the first dimension of a persistent buffer."""

    path: str
    function: str
    line: int
    column: int           # 1-based
    end_line: int
    end_column: int
    text: str
    buffer_text: str
    buffer: BufferAxis
    count: CountAxis
    write: bool
    stmt_line: int
    stmt_text: str


@dataclass(frozen=True)
class FieldWidth:
    """One field of a metadata object and the count its value is sliced to."""

    field: str
    text: str             # the value as written (a slice, or the local holding one)
    slice_text: str       # the slice itself
    count: CountAxis
    line: int
    column: int
    end_line: int
    end_column: int
    # a count field of the object (``num_reqs=num_reqs_padded``) rather than a sliced tensor: it
    # says how many rows the consumer reads, and a field sliced to fewer is the odd one; it is
    # never reported itself
    declared: bool = False
    # the value is not sliced where it is handed over: how its rows were found
    # (:mod:`padlint.analysis.widths`), (path, line, text) steps, outermost first
    steps: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True)
class MetadataWidths:
    """The fields of one metadata object with a known slice width."""

    path: str
    function: str
    sink: str             # constructor as written, or the receiver of the stores
    line: int
    fields: tuple[FieldWidth, ...]
    stmt_text: str
    # the widths hold on the paths where these local counts take their padded value
    # (``num_reqs = input_batch.num_reqs_after_padding``, line 181); empty: on every path
    condition: str = ""


@dataclass(frozen=True)
class WholeHandout:
    """A persistent buffer refreshed in one function only up to a real count
    (``self.x[:num_reqs] = v``, ``self.x[:num_reqs].copy_(v)``, ``self.x.copy_to_gpu(num_reqs)``)
    and handed whole (``self.x``, ``self.x.gpu``: no slice) to a metadata sink later in the
    same function, with no reset of it there (no fill, no store past the count, no other
    call it is passed to)."""

    path: str
    function: str
    sink: str
    field: str
    line: int
    column: int
    end_line: int
    end_column: int
    buffer_text: str
    refresh_line: int
    refresh_text: str
    count: CountAxis
    stmt_text: str


@dataclass
class AxisFacts:
    slices: list[SliceSite] = field(default_factory=list)
    metadata: list[MetadataWidths] = field(default_factory=list)
    handouts: list[WholeHandout] = field(default_factory=list)


# ------------------------------------------------------------------ helpers
def _first_dim_upper(sl: ast.AST) -> ast.AST | None:
    """The upper bound of a ``[:n]`` (or ``[0:n]``) slice of the first dimension, else None."""
    if isinstance(sl, ast.Tuple) and sl.elts:
        sl = sl.elts[0]
    if not isinstance(sl, ast.Slice) or sl.upper is None or sl.step is not None:
        return None
    if sl.lower is not None and not (isinstance(sl.lower, ast.Constant) and sl.lower.value == 0):
        return None
    return sl.upper


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST, str | None]]:
    """(qualified name, function node, top-level class name or None) of every function."""
    def walk(body: list, prefix: str, cls: str | None) -> Iterator[tuple[str, ast.AST, str | None]]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}{node.name}"
                yield q, node, cls
                yield from walk(node.body, q + ".", cls)
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.", cls if cls is not None else node.name)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for name in ("body", "orelse", "finalbody", "handlers"):
                    yield from walk(getattr(node, name, []) or [], prefix, cls)
    yield from walk(tree.body, "", None)


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``fn``'s body, not those of nested functions or classes."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))


class _Locals:
    """The local assignments of one function: name -> values (flow-insensitive)."""

    def __init__(self, fn: ast.AST, nodes: list[ast.AST] | None = None):
        self.values: dict[str, list[ast.AST]] = {}
        self.opaque: set[str] = set()   # assigned by unpacking, loops, augmented assignment...
        args = getattr(fn, "args", None)
        self.params: set[str] = set()
        self.annotations: dict[str, ast.AST] = {}
        self.loads: dict[str, int] = {}  # name -> how often the function reads it
        if args is not None:
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                self.params.add(a.arg)
                if a.annotation is not None:
                    self.annotations[a.arg] = a.annotation
        for n in (nodes if nodes is not None else _own_nodes(fn)):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self.loads[n.id] = self.loads.get(n.id, 0) + 1
            elif isinstance(n, ast.Assign):
                for t in n.targets:
                    self._target(t, n.value)
            elif isinstance(n, ast.AnnAssign) and n.value is not None:
                self._target(n.target, n.value)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                self.opaque.add(n.target.id)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                for sub in ast.walk(n.target):
                    if isinstance(sub, ast.Name):
                        self.opaque.add(sub.id)
            elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                self.values.setdefault(n.target.id, []).append(n.value)
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                for item in n.items:
                    if item.optional_vars is not None:
                        for sub in ast.walk(item.optional_vars):
                            if isinstance(sub, ast.Name):
                                self.opaque.add(sub.id)

    def _target(self, t: ast.AST, value: ast.AST) -> None:
        if isinstance(t, ast.Name):
            self.values.setdefault(t.id, []).append(value)
        elif isinstance(t, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                for a, b in zip(t.elts, value.elts):
                    self._target(a, b)
            else:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        self.opaque.add(sub.id)


class AxisAnalysis:
    """Computes :class:`AxisFacts` for the checked modules of one program."""

    def __init__(self, profile: Profile, project: Project):
        self.profile = profile
        self.project = project
        self.views = {*profile.shared_views, profile.device_view}
        self._buffers: dict[tuple[str, str], BufferAxis] = {}
        self._locals: dict[int, _Locals] = {}
        self._own: dict[int, list[ast.AST]] = {}
        self._stmts: dict[int, list[ast.stmt]] = {}
        self._class_ev: dict[str, dict[str, list[Evidence]]] = {}
        self._attr_sizes: dict[tuple[str, str], str | None] = {}
        self._builders: dict[tuple[str, int], tuple | None] = {}  # see _builder_memo
        allocs = set(profile.uninitialized_allocators) | set(profile.initialized_allocators)
        allocs = {a for a in allocs if a.rsplit(".", 1)[-1] not in ("arange", "tensor", "array")}
        self.allocators = allocs | set(profile.axes.allocators)
        from padlint.analysis.widths import RowWidths  # (widths reads this module's helpers)
        self.widths = RowWidths(project, profile.axes.row_copies, count=self.count, locals_of=self.locals_of)

    # ------------------------------------------------------------- counts
    def locals_of(self, fn: ast.AST) -> _Locals:
        # keyed on the node's identity: the value keeps the node, so no other node gets its id
        got = self._locals.get(id(fn))
        if got is None:
            got = self._locals[id(fn)] = (fn, _Locals(fn, self.own(fn)))
        return got[1]

    def own(self, fn: ast.AST) -> list[ast.AST]:
        """The nodes of ``fn``'s own body (computed once per function)."""
        got = self._own.get(id(fn))
        if got is None:
            got = self._own[id(fn)] = (fn, sorted(_own_nodes(fn), key=lambda n: (getattr(n, "lineno", 0),
                                                                               getattr(n, "col_offset", 0))))
        return got[1]

    def stmts(self, fn: ast.AST) -> list[ast.stmt]:
        """The statements of ``fn``'s own body, in source order (computed once per function)."""
        got = self._stmts.get(id(fn))
        if got is None:
            got = self._stmts[id(fn)] = (fn, sorted((n for n in self.own(fn) if isinstance(n, ast.stmt)),
                                                    key=lambda n: (n.lineno, n.col_offset)))
        return got[1]

    def count(self, expr: ast.AST, loc: _Locals, depth: int = 0) -> CountAxis | None:
        """The axis of a count expression in a function with locals ``loc``, or None."""
        if depth > 6:
            return None
        text = expr_text(expr)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
                if isinstance(b, ast.Constant) and type(b.value) is int:
                    inner = self.count(a, loc, depth + 1)
                    if inner is None:
                        return None
                    return CountAxis(text, inner.name, inner.axis, inner.offset + b.value, inner.padded,
                                     inner.via, inner.definition, inner.uses)
            return None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("min", "max") \
                and expr.args and not expr.keywords:
            parts = [self.count(a, loc, depth + 1) for a in expr.args if not isinstance(a, ast.Constant)]
            if not parts or any(p is None for p in parts) or len({p.axis for p in parts}) != 1:
                return None
            first = parts[0]
            return CountAxis(text, first.name, first.axis, 0, None, first.via)
        if isinstance(expr, ast.Attribute):
            axis = self.profile.count_axis(expr.attr)
            if axis is None:
                return None
            return CountAxis(text, expr.attr, axis, 0, self.profile.is_padded_count(expr.attr))
        if not isinstance(expr, ast.Name):
            return None
        name = expr.id
        own = self.profile.count_axis(name)
        if name in loc.opaque:
            # bound by unpacking a call's result, a loop, `+=`...: only its name says its axis
            if own is None:
                return None
            return CountAxis(text, name, own, 0, self.profile.is_padded_count(name))
        values = loc.values.get(name, [])
        if not values:
            if own is None:
                return None
            return CountAxis(text, name, own, 0, self.profile.is_padded_count(name))
        found = [self.count(v, loc, depth + 1) for v in values]
        known = [f for f in found if f is not None]
        if len(known) < len(found) or name in loc.params:
            # some assignment (or the caller, for a parameter) gives a value of unknown axis:
            # the name's own axis holds only where no known assignment disagrees with it
            if own is None or any(f.axis != own for f in known):
                return None
            return CountAxis(text, name, own, 0, self.profile.is_padded_count(name))
        axes = {f.axis for f in known} | ({own} if own else set())
        if len(axes) != 1:
            return None
        axis = axes.pop()
        inner = known[0]
        if inner.offset and len(known) == 1:
            return None  # `n = m + 1` then `[:n]`: offsets through locals are not followed
        if len(known) == 1:
            v = values[0]
            definition = (expr_text(v), v.lineno, v.col_offset + 1, v.end_lineno or v.lineno,
                          (v.end_col_offset or v.col_offset) + 1)
            return CountAxis(text, inner.name, axis, 0, inner.padded, (name, *inner.via), definition,
                             loc.loads.get(name, 0))
        if own is not None:
            return CountAxis(text, name, axis, 0, self.profile.is_padded_count(name))
        return CountAxis(text, inner.name, axis, 0, None, (name,))

    # ------------------------------------------------------------- buffers
    def _strip_views(self, node: ast.AST) -> ast.AST:
        while isinstance(node, ast.Attribute) and node.attr in self.views:
            node = node.value
        return node

    def buffer_of(self, node: ast.AST, cls: ClassInfo | None) -> BufferAxis | None:
        """The persistent buffer ``node`` names (``self.x``, ``self.x.gpu``, ``self.a.x``), or None."""
        if cls is None:
            return None
        node = self._strip_views(node)
        if not isinstance(node, ast.Attribute):
            return None
        chain: list[str] = []
        cur: ast.AST = node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if not (isinstance(cur, ast.Name) and cur.id == "self") or len(chain) > 3:
            return None
        chain.reverse()
        owners = [cls]
        for attr in chain[:-1]:
            nxt: dict[str, ClassInfo] = {}
            for o in owners:
                for c in self.project.attr_classes(o, attr):
                    nxt.setdefault(c.key, c)
            owners = list(nxt.values())
        found = [b for b in (self.buffer(o, chain[-1]) for o in owners) if b.evidence]
        return found[0] if len(found) == 1 else None

    def buffer(self, cls: ClassInfo, attr: str) -> BufferAxis:
        key = (cls.key, attr)
        got = self._buffers.get(key)
        if got is None:
            got = self._buffers[key] = BufferAxis(cls.key, attr, tuple(self._evidence(cls, attr)))
        return got

    def _evidence(self, cls: ClassInfo, attr: str) -> Iterator[Evidence]:
        for c in self.project.mro(cls):
            yield from self._class_evidence(c).get(attr, ())

    def _class_evidence(self, c: ClassInfo) -> dict[str, list[Evidence]]:
        """attr -> the allocations and writes of ``self.<attr>`` in ``c``'s own methods (once per class)."""
        got = self._class_ev.get(c.key)
        if got is not None:
            return got
        got = self._class_ev[c.key] = {}
        mod = self.project.module(c.module)
        if mod is None:
            return got
        for meth in c.methods.values():
            for attr, ev in self._method_evidence(meth.node, mod, c):
                got.setdefault(attr, []).append(ev)
        return got

    def _self_attr(self, node: ast.AST) -> str | None:
        node = self._strip_views(node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr
        return None

    def _method_evidence(self, fn: ast.AST, mod: ModuleInfo, cls: ClassInfo) -> Iterator[tuple[str, Evidence]]:
        loc: _Locals | None = None

        def write(target: ast.Subscript, line: int) -> tuple[str, Evidence] | None:
            """``self.x[:n] = ...`` / ``self.x[:n].copy_(...)``: evidence of x's axis from n."""
            nonlocal loc
            attr = self._self_attr(target.value)
            upper = _first_dim_upper(target.slice) if attr is not None else None
            if upper is None:
                return None
            loc = loc or self.locals_of(fn)
            c = self.count(upper, loc)
            if c is None:
                return None
            return attr, Evidence(c.axis, "write", mod.path, line,
                                  f"written as `{expr_text(target)}` (`{c.text}` counts {c.axis})")

        for n in self.own(fn):
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                value = n.value
                for t in targets:
                    if value is not None and isinstance(t, ast.Attribute) and \
                            isinstance(t.value, ast.Name) and t.value.id == "self":
                        ev = self._allocation(value, fn, cls, mod)
                        if ev is not None:
                            yield t.attr, ev
                    elif isinstance(t, ast.Subscript):
                        found = write(t, n.lineno)
                        if found is not None:
                            yield found
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "copy_" and \
                    isinstance(n.func.value, ast.Subscript):
                found = write(n.func.value, n.lineno)
                if found is not None:
                    yield found

    def _allocation(self, value: ast.AST, fn: ast.AST, cls: ClassInfo, mod: ModuleInfo) -> Evidence | None:
        if not isinstance(value, ast.Call):
            return None
        name = _dotted(value.func) or ""
        last = name.rsplit(".", 1)[-1]
        if name not in self.allocators and last not in self.profile.axes.allocators:
            return None
        dim: ast.AST | None = None
        if value.args:
            dim = value.args[0]
        else:
            dim = next((k.value for k in value.keywords if k.arg == "size"), None)
        if isinstance(dim, (ast.Tuple, ast.List)):
            dim = dim.elts[0] if dim.elts else None
        if dim is None:
            return None
        axis = self.size_axis(dim, cls, self.locals_of(fn))
        if axis is None:
            return None
        return Evidence(axis, "allocation", mod.path, value.lineno,
                        f"allocated with first dimension `{expr_text(dim)}`")

    def size_axis(self, dim: ast.AST, cls: ClassInfo | None, loc: _Locals, depth: int = 0) -> str | None:
        """The axis of a capacity expression: a name or attribute the profile's
        ``[axes.*].sizes`` know (``n + 1`` too; ``min``/``max`` of one axis), a local or a
        ``self`` attribute assigned only such values."""
        if depth > 4:
            return None
        if isinstance(dim, ast.BinOp) and isinstance(dim.op, ast.Add) and \
                isinstance(dim.right, ast.Constant) and type(dim.right.value) is int:
            return self.size_axis(dim.left, cls, loc, depth + 1)
        if isinstance(dim, ast.Call) and isinstance(dim.func, ast.Name) and dim.func.id in ("min", "max"):
            axes = {self.size_axis(a, cls, loc, depth + 1) for a in dim.args if not isinstance(a, ast.Constant)}
            return axes.pop() if len(axes) == 1 else None
        if isinstance(dim, ast.Attribute):
            own = self.profile.axes.size_axis(dim.attr)
            if own is not None:
                return own
            if cls is not None and isinstance(dim.value, ast.Name) and dim.value.id == "self":
                return self._attr_size_axis(cls, dim.attr, depth)
            return None
        if isinstance(dim, ast.Name):
            own = self.profile.axes.size_axis(dim.id)
            if own is not None:
                return own
            values = loc.values.get(dim.id, [])
            if values and dim.id not in loc.opaque:
                axes = {self.size_axis(v, cls, loc, depth + 1) for v in values}
                return axes.pop() if len(axes) == 1 else None
        return None

    def _attr_size_axis(self, cls: ClassInfo, attr: str, depth: int) -> str | None:
        key = (cls.key, attr)
        if key in self._attr_sizes:
            return self._attr_sizes[key]
        self._attr_sizes[key] = None  # a cycle (`self.a` sized by `self.a`) has no axis
        axes: set[str | None] = set()
        for c in self.project.mro(cls):
            for meth in c.methods.values():
                for n in self.own(meth.node):
                    if isinstance(n, ast.Assign) and any(
                            isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                            and t.value.id == "self" for t in n.targets):
                        axes.add(self.size_axis(n.value, c, self.locals_of(meth.node), depth + 1))
        got = axes.pop() if len(axes) == 1 else None
        self._attr_sizes[key] = got
        return got

    # ------------------------------------------------------------- sites
    def scan_module(self, mod: ModuleInfo, path: str, out: AxisFacts) -> None:
        # a tree for this scan alone, and the per-node tables emptied after it: a tree run scans
        # hundreds of modules once each, and keeping their trees was most of this rule's memory
        for qual, fn, cls_name in _functions(mod.peek_tree()):
            cls = mod.classes.get(cls_name) if cls_name else None
            self._scan_function(qual, fn, cls, mod, path, out)
        self._locals.clear()
        self._own.clear()
        self._stmts.clear()

    def _scan_function(self, qual: str, fn: ast.AST, cls: ClassInfo | None, mod: ModuleInfo, path: str,
                       out: AxisFacts) -> None:
        loc = self.locals_of(fn)
        for st in self.stmts(fn):
            writes: set[int] = set()
            if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                    if isinstance(t, ast.Subscript):
                        writes.add(id(t))
            for n in self._expr_nodes(st):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                        n.func.attr in ("copy_",) and isinstance(n.func.value, ast.Subscript):
                    writes.add(id(n.func.value))
            for n in self._expr_nodes(st):
                if not isinstance(n, ast.Subscript):
                    continue
                upper = _first_dim_upper(n.slice)
                if upper is None:
                    continue
                buf = self.buffer_of(n.value, cls)
                if buf is None:
                    continue
                c = self.count(upper, loc)
                if c is None:
                    continue
                out.slices.append(SliceSite(
                    path=path, function=qual, line=n.lineno, column=n.col_offset + 1,
                    end_line=n.end_lineno or n.lineno, end_column=(n.end_col_offset or n.col_offset) + 1,
                    text=expr_text(n), buffer_text=expr_text(n.value), buffer=buf, count=c, write=id(n) in writes,
                    stmt_line=st.lineno, stmt_text=expr_text(st) if not _is_compound(st) else _head(st)))
        self._scan_metadata(qual, fn, loc, mod, path, out, cls)

    @staticmethod
    def _expr_nodes(st: ast.stmt) -> Iterator[ast.AST]:
        """The expression nodes of one statement (not of the statements nested in it)."""
        if _is_compound(st):
            heads = [getattr(st, name) for name in ("test", "iter", "target") if getattr(st, name, None) is not None]
            heads += [i.context_expr for i in getattr(st, "items", [])]
            for h in heads:
                yield from ast.walk(h)
            return
        yield from ast.walk(st)

    # ------------------------------------------------------------- metadata
    def _slice_width(self, value: ast.AST, loc: _Locals, depth: int = 0) -> tuple[str, CountAxis] | None:
        """(slice text, count) when ``value`` is ``x[:count]``, or a local assigned only slices
        to one count; None otherwise."""
        if isinstance(value, ast.Subscript):
            upper = _first_dim_upper(value.slice)
            if upper is None:
                return None
            c = self.count(upper, loc)
            return (expr_text(value), c) if c is not None else None
        if isinstance(value, ast.Name) and depth < 3 and value.id not in loc.opaque and value.id not in loc.params:
            vals = loc.values.get(value.id, [])
            got = [self._slice_width(v, loc, depth + 1) for v in vals]
            if not got or any(g is None for g in got):
                return None
            keys = {(g[1].name, g[1].offset) for g in got}  # type: ignore[index]
            return got[0] if len(keys) == 1 else None
        return None

    def _callee(self, call: ast.Call, mod: ModuleInfo, cls: ClassInfo | None, qual: str,
                local: tuple[set[str], dict[str, tuple]]) -> tuple[FunctionInfo, bool] | None:
        """``(function, bound)`` for the project function a call in function ``qual`` names: a
        module function (defined or imported by name, or reached through an imported module or a
        class) or, for ``self.m(...)`` in a method of ``cls`` itself (not of a class nested in it
        or a function nested in the method), a method of ``cls``.  ``bound``: the call does not
        pass the receiver (``self.m(a)``; ``Cls.m(obj, a)`` passes it).  None where ``local``
        (the names the calling function binds itself, :func:`_bound_names`) shadows the name's
        head, or nothing in the project is named so; a name only the function's imports bind
        resolves to what they import."""
        name = _dotted(call.func)
        if not name:
            return None
        head, _, rest = name.partition(".")
        if head == "self":
            if cls is None or "." in rest or qual.count(".") != 1 \
                    or qual.partition(".")[0] != cls.key.partition(":")[2]:
                return None
            fn = self.project.find_method(cls, rest)
            return (fn, True) if fn is not None else None
        names, imports = local
        if head in names:
            return None
        try:
            got = self.project.resolve(mod, name, imports=imports)
        except (RecursionError, LookupError, SyntaxError, ValueError):  # pragma: no cover - odd re-exports
            return None
        return (got, False) if isinstance(got, FunctionInfo) else None

    #: how many builders deep a call is followed to the metadata constructor
    BUILDER_DEPTH = 3

    def _builder_fields(self, fn: FunctionInfo, depth: int = 0) -> tuple[str, dict[str, tuple[str, str | None]]] | None:
        """``(constructor, {parameter: (field, bound)})`` when ``fn`` builds a metadata object (a
        call of a sink constructor in its own body, or of another such builder, at most
        :attr:`BUILDER_DEPTH` deep) from two or more of its own parameters as they are (or a
        prefix ``p[:q]`` of one, ``bound`` then naming the parameter ``q``; a prefix bounded by
        anything else is not a field a caller's width decides): then the arguments a caller
        passes for those parameters are fields of one metadata object (vLLM Model Runner V2's
        ``build_attn_metadata(num_reqs=..., seq_lens=..., is_prefilling=...)``, and a method that
        hands its parameters on to it).  None for any other function."""
        got, _complete = self._builder_memo(fn, depth, set())
        return got

    def _builder_memo(self, fn: FunctionInfo, depth: int, active: set[str]):
        """:meth:`_builder_fields` with the functions being read (``active``): a call back into
        one of them finds no builder, and a result that met one is not kept (it depends on where
        the reading started); neither is one cut by the depth."""
        key = (fn.key, depth)
        if key in self._builders:
            return self._builders[key], True
        if fn.key in active:
            return None, False
        active.add(fn.key)
        complete = True
        result = None
        try:
            node = fn.peek()
        except (LookupError, SyntaxError, ValueError):  # pragma: no cover - a module the index could not re-read
            node = None
        if node is not None:
            a = node.args
            params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)} - {"self", "cls"}
            nodes = list(_own_nodes(node))
            loc = _Locals(node, nodes)
            local = _bound_names(node, loc, fn.mod)
            cls = self.project.class_info(fn.owner) if fn.owner else None
            qual = f"{cls.key.partition(':')[2]}.{fn.name}" if cls is not None else fn.name
            for n in nodes:
                if not isinstance(n, ast.Call):
                    continue
                ctor = _dotted(n.func) or ""
                if not ctor:
                    continue
                mapping: dict[str, tuple[str, str | None]] = {}
                if self.profile.is_sink_constructor(ctor):
                    name = ctor.rsplit(".", 1)[-1]
                    for kw in n.keywords:
                        src = _param_of(kw.value, params, loc) if kw.arg is not None else None
                        if src is not None and (src[1] is None or src[1] in params):
                            mapping.setdefault(src[0], (kw.arg, src[1]))
                elif n.keywords or n.args:
                    if depth >= self.BUILDER_DEPTH:
                        complete = False
                        continue
                    found = self._callee(n, fn.mod, cls, qual, local)
                    if found is None:
                        continue
                    callee, bound = found
                    inner, done = self._builder_memo(callee, depth + 1, active)
                    complete = complete and done
                    if inner is None:
                        continue
                    name, fields = inner
                    args = bind_arguments(n, callee.call_params(bound))
                    for param, arg in args.items():
                        src = _param_of(arg, params, loc)
                        if src is None or param not in fields or src[1] is not None:
                            continue
                        fld, limit = fields[param]
                        if limit is not None:
                            # the callee takes a prefix bounded by its own parameter: a field of this
                            # function's where this function passes that parameter one of its own
                            outer = _param_of(args[limit], params, loc) if limit in args else None
                            if outer is None or outer[1] is not None:
                                continue
                            limit = outer[0]
                        mapping.setdefault(src[0], (fld, limit))
                else:
                    continue
                if len(mapping) >= 2 and (result is None or len(mapping) > len(result[1])):
                    result = (name, mapping)
        active.discard(fn.key)
        if complete:
            self._builders[key] = result
        return result, complete

    def _declared_width(self, fld: str, v: ast.AST, loc: _Locals) -> FieldWidth | None:
        """A count field handed a padded count of its own axis (``num_reqs=num_reqs_padded``), as a
        declared width of the object, or None."""
        axis = self.profile.count_axis(fld)
        if axis is None or not isinstance(v, (ast.Name, ast.Attribute)):
            return None
        c = self.count(v, loc)
        if c is None or c.axis != axis or c.padded is not True or c.offset:
            return None
        return _field_at(fld, v, expr_text(v), c, declared=True)

    def _field(self, fld: str, v: ast.AST, loc: _Locals, mod: ModuleInfo, path: str) -> FieldWidth | None:
        """Field ``fld`` handed ``v``: sliced to a count (``x[:n]``, or a local holding such slices),
        or a count field declaring the padded width (:meth:`_declared_width`), or a value whose
        rows :class:`RowWidths` finds (a gather, a copy, a field of an object built elsewhere);
        None otherwise."""
        w = self._slice_width(v, loc)
        if w is not None:
            return _field_at(fld, v, w[0], w[1])
        got = self._declared_width(fld, v, loc)
        if got is not None:
            return got
        return self._value_field(fld, v, loc, mod, path)

    def _value_field(self, fld: str, v: ast.AST, loc: _Locals, mod: ModuleInfo, path: str) -> FieldWidth | None:
        vw = self.widths.of(v, loc, mod)
        if vw is None or vw.count.padded is None:
            return None
        return _field_at(fld, v, expr_text(v), vw.count, steps=tuple((s.path or path, s.line, s.text) for s in vw.steps))

    def _scan_metadata(self, qual: str, fn: ast.AST, loc: _Locals, mod: ModuleInfo, path: str,
                       out: AxisFacts, cls: ClassInfo | None = None) -> None:
        groups, built = self._metadata_groups(qual, fn, loc, mod, path, cls)
        for sink, line, stmt, fields in groups.values():
            if len(fields) >= 2:
                out.metadata.append(MetadataWidths(path, qual, sink, line, tuple(fields), stmt))
        alt = self._padded_path(fn, loc) if groups else None
        if alt is not None:
            # the same objects on the path where the function's counts take their padded values
            # (``num_reqs = input_batch.num_reqs_after_padding`` under a test, ``input_batch.num_reqs``
            # on the other branch): a field whose rows do not follow that count is narrower there.
            # Only objects that assignment reaches (after it, not on the other branch, not past a
            # `return` that ends its block)
            loc2, condition, assigned = alt
            again, _ = self._metadata_groups(qual, fn, loc2, mod, path, cls)
            for key, (sink, line, stmt, fields) in again.items():
                before = groups.get(key)
                if len(fields) >= 2 and (before is None or before[3] != fields) \
                        and all(_reaches(fn, a, line) for a in assigned):
                    out.metadata.append(MetadataWidths(path, qual, sink, line, tuple(fields), stmt, condition))
        self._scan_handouts(qual, fn, loc, path, built, out)

    def _padded_path(self, fn: ast.AST, loc: _Locals) -> tuple[_Locals, str, list[ast.stmt]] | None:
        """The function's locals on the paths where every local count that is a real count on
        some path and a padded count of the same axis on another holds its padded one, with the
        words that say so and the statements that assign those padded counts; None when the
        function has no such local.  Such a local: assigned both (``num_reqs =
        input_batch.num_reqs_after_padding`` in one branch, ``= input_batch.num_reqs`` in the
        other), assigned ``padded if c else real``, or a parameter named as a real count and
        assigned a padded one in a branch (``if full: num_reqs = num_reqs_padded``)."""
        chosen: dict[str, ast.AST] = {}
        for name, vals in loc.values.items():
            if name in loc.opaque:
                continue
            alts: list[ast.AST] = []
            for v in vals:
                alts.extend((v.body, v.orelse) if isinstance(v, ast.IfExp) else (v,))
            counts = [self.count(v, loc) for v in alts]
            if any(c is None for c in counts) or len({c.axis for c in counts}) != 1:  # type: ignore[union-attr]
                continue
            padded = [v for v, c in zip(alts, counts) if c.padded is True]  # type: ignore[union-attr]
            real = any(c.padded is False for c in counts)  # type: ignore[union-attr]
            if name in loc.params:
                own = self.profile.count_axis(name)
                real = own == counts[0].axis and not self.profile.is_padded_count(name)  # type: ignore[union-attr]
            if padded and real:
                chosen[name] = padded[0]
        if not chosen:
            return None
        assigned = []
        for name, v in chosen.items():
            st = _assignment_of(fn, v)
            if st is None:
                return None
            assigned.append(st)
        loc2 = _Locals.__new__(_Locals)
        loc2.__dict__.update(loc.__dict__)
        loc2.values = {**loc.values, **{n: [v] for n, v in chosen.items()}}
        loc2.params = loc.params - set(chosen)
        words = ", ".join(f"`{n} = {expr_text(v)}` (line {v.lineno})" for n, v in sorted(chosen.items()))
        return loc2, words, assigned

    def _metadata_groups(self, qual: str, fn: ast.AST, loc: _Locals, mod: ModuleInfo, path: str,
                         cls: ClassInfo | None) -> tuple[dict[str, tuple[str, int, str, list[FieldWidth]]],
                                                         dict[str, str]]:
        """The metadata objects ``fn`` builds, key -> (sink, line, statement, fields with a known
        width), and the locals assigned a sink constructor's result (local -> constructor)."""
        groups: dict[str, tuple[str, int, str, list[FieldWidth]]] = {}
        built: dict[str, str] = {}  # local name -> constructor it is assigned from
        receivers: dict[int, str] = {}  # id(constructor call) -> the local it is assigned to
        for st in self.stmts(fn):
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
                name = _dotted(st.value.func) or ""
                if name and self.profile.is_sink_constructor(name):
                    for t in st.targets:
                        if isinstance(t, ast.Name):
                            built[t.id] = name
                            receivers.setdefault(id(st.value), t.id)
        for pname, ann in loc.annotations.items():
            for tname in _type_names(ann):
                if self.profile.is_sink_constructor(tname) and pname not in loc.values:
                    built[pname] = tname
        for n in self.own(fn):
            if isinstance(n, ast.Call):
                name = _dotted(n.func) or ""
                if not name or not self.profile.is_sink_constructor(name):
                    continue
                fields: list[FieldWidth] = []
                for kw in n.keywords:
                    if kw.arg is not None and (f := self._field(kw.arg, kw.value, loc, mod, path)) is not None:
                        fields.append(f)
                receiver = receivers.get(id(n))
                key = receiver or f"@{n.lineno}:{n.col_offset}"
                groups[key] = (name, n.lineno, expr_text(n.func) + "(...)", fields)
        local: tuple | None = None  # the names this function binds, read at its first candidate call
        for n in self.own(fn):
            # a call of a project function that builds a metadata object from its parameters: the
            # arguments passed for them are that object's fields, as if passed to the constructor
            if not isinstance(n, ast.Call) or not (n.keywords or n.args):
                continue
            name = _dotted(n.func) or ""
            if not name or self.profile.is_sink_constructor(name):
                continue
            if local is None:
                local = _bound_names(fn, loc, mod)
            found = self._callee(n, mod, cls, qual, local)
            built_by = self._builder_fields(found[0]) if found is not None else None
            if built_by is None:
                continue
            callee, bound = found  # type: ignore[misc]
            ctor, mapping = built_by
            fields = []
            args = bind_arguments(n, callee.call_params(bound))
            for param, v in args.items():
                if param not in mapping:
                    continue
                fld, limit = mapping[param]
                if limit is None:
                    f = self._field(fld, v, loc, mod, path)
                    if f is not None:
                        fields.append(f)
                    continue
                # the builder takes a prefix of this argument bounded by another parameter: the
                # field's width is the count passed for that one (never wider than the argument)
                w = self._slice_width(v, loc)
                c = self.count(args[limit], loc) if limit in args else None
                if c is None or w is not None and (w[1].name, w[1].offset) != (c.name, c.offset):
                    continue
                if w is None and c.padded:
                    # an argument made with the real count of the padded one's pair keeps that width
                    narrow = self._value_field(fld, v, loc, mod, path)
                    if narrow is not None and narrow.count.padded is False \
                            and self.profile.is_real_for(narrow.count.name, c.name):
                        fields.append(narrow)
                        continue
                fields.append(_field_at(fld, v, f"{expr_text(v)}[:{c.text}]", c))
            groups[f"@{n.lineno}:{n.col_offset}"] = (f"{ctor} (built by `{name}`)", n.lineno,
                                                      expr_text(n.func) + "(...)", fields)
        # attribute stores, in source order; storing a field the current group already has starts
        # a new group (the object is being set again: SGLang pads a forward batch's fields for a
        # replay, then restores them to the real counts)
        stored: dict[str, set[str]] = {}
        phase: dict[str, int] = {}
        for st in self.stmts(fn):
            if not isinstance(st, ast.Assign):
                continue
            for t in st.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in built:
                    recv = t.value.id
                    names = stored.setdefault(recv, {f.field for f in groups[recv][3]} if recv in groups else set())
                    if t.attr in names:
                        phase[recv] = phase.get(recv, 0) + 1
                        names.clear()
                    names.add(t.attr)
                    w = self._slice_width(st.value, loc)
                    steps: tuple = ()
                    if w is None:
                        vf = self._value_field(t.attr, st.value, loc, mod, path)
                        if vf is None:
                            continue
                        w, steps = (vf.slice_text, vf.count), vf.steps
                    key = recv if not phase.get(recv) else f"{recv}#{phase[recv]}"
                    if key not in groups:
                        groups[key] = (built[recv], st.lineno, f"{recv}.*", [])
                    v = st.value
                    groups[key][3].append(FieldWidth(t.attr, expr_text(v), w[0], w[1], t.lineno, t.col_offset + 1,
                                                     t.end_lineno or t.lineno,
                                                     (t.end_col_offset or t.col_offset) + 1, steps=steps))
        return groups, built

    def _self_attr_name(self, node: ast.AST) -> str | None:
        """``x`` for ``self.x`` and its views (``self.x.gpu``), else None."""
        return self._self_attr(node)

    def _scan_handouts(self, qual: str, fn: ast.AST, loc: _Locals, path: str, built: dict[str, str],
                       out: AxisFacts) -> None:
        def attr_of(node: ast.AST) -> str | None:
            """``x`` for ``self.x`` and its views, or for a local assigned once from one of those
            (``buf = self.x``: an alias of the buffer, refreshed and handed out through it)."""
            got = self._self_attr_name(node)
            if got is None and isinstance(node, ast.Name) and node.id not in loc.params \
                    and node.id not in loc.opaque:
                vals = loc.values.get(node.id, [])
                if len(vals) == 1:
                    got = self._self_attr_name(vals[0])
            return got

        refreshed: dict[str, tuple[int, str, CountAxis]] = {}   # attr -> first refresh
        spoiled: set[str] = set()   # reset, rebound, written wider, or passed to another call
        # (sink, field, value, statement, axes): ``axes`` those of the padded counts the sink call
        # declares its consumer's width with (`num_reqs=num_reqs_padded`): a buffer of such an
        # axis handed whole is read to that padded width, which PAD001 judges
        sinks: list[tuple[str, str, ast.AST, ast.stmt, frozenset]] = []
        sink_calls: set[int] = set()
        for st in self.stmts(fn):
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
                name = _dotted(st.value.func) or ""
                if name and self.profile.is_sink_constructor(name):
                    sink_calls.add(id(st.value))
        stmt_of: dict[int, ast.stmt] = {}
        for st in self.stmts(fn):
            for n in self._expr_nodes(st):
                stmt_of.setdefault(id(n), st)

        def refresh(attr: str, sub: ast.Subscript | None, count_expr: ast.AST | None, node: ast.AST) -> None:
            if sub is not None:
                upper = _first_dim_upper(sub.slice)
                if upper is None:
                    spoiled.add(attr)  # `x[n:] = v`, `x[i] = v`: not a refresh up to a count
                    return
                count_expr = upper
            c = self.count(count_expr, loc) if count_expr is not None else None
            if c is None or c.padded is not False or c.offset:
                spoiled.add(attr)  # written with a padded or unknown count: not refreshed only to the real rows
                return
            refreshed.setdefault(attr, (node.lineno, expr_text(node), c))

        for n in self.own(fn):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    if isinstance(t, ast.Subscript):
                        attr = attr_of(t.value)
                        if attr is not None:
                            refresh(attr, t, None, t)
                    else:
                        attr = self._self_attr_name(t)  # (`buf = self.x` makes an alias, rebinds nothing)
                        if attr is not None:
                            spoiled.add(attr)
            elif isinstance(n, ast.Call):
                f = n.func
                if isinstance(f, ast.Attribute):
                    recv = f.value
                    if f.attr == "copy_" and isinstance(recv, ast.Subscript):
                        attr = attr_of(recv.value)
                        if attr is not None:
                            refresh(attr, recv, None, recv)
                    elif f.attr in self.profile.copy_to_device:
                        attr = attr_of(recv)
                        if attr is not None:
                            refresh(attr, None, n.args[0] if n.args else None, n)
                    elif f.attr in self.profile.fill_methods:
                        base = recv.value if isinstance(recv, ast.Subscript) else recv
                        attr = attr_of(base)
                        if attr is not None:
                            spoiled.add(attr)
                if id(n) in sink_calls or (isinstance(f, (ast.Name, ast.Attribute))
                                           and self.profile.is_sink_constructor(_dotted(f) or "")):
                    name = _dotted(f) or ""
                    widths = frozenset(
                        w.axis for kw in n.keywords
                        if kw.arg is not None and isinstance(kw.value, (ast.Name, ast.Attribute))
                        and (w := self.count(kw.value, loc)) is not None and w.padded and not w.offset)
                    for kw in n.keywords:
                        if kw.arg is not None and attr_of(kw.value) is not None \
                                and not isinstance(kw.value, ast.Subscript):
                            sinks.append((name, kw.arg, kw.value, stmt_of.get(id(n)), widths))
                    continue
                for a in (*n.args, *(k.value for k in n.keywords)):
                    attr = attr_of(a.value if isinstance(a, ast.Subscript) else a)
                    if attr is not None:
                        spoiled.add(attr)  # handed to another call (a reset helper, a kernel): not judged
        for st in self.stmts(fn):
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in built \
                        and attr_of(st.value) is not None:
                    sinks.append((built[t.value.id], t.attr, st.value, st, frozenset()))
        for sink, fld, value, st, widths in sinks:
            attr = attr_of(value)
            if attr is None or attr in spoiled or attr not in refreshed:
                continue
            line, text, c = refreshed[attr]
            if c.axis in widths:
                continue  # read to a padded width the sink declares: PAD001's stale rows
            if line >= value.lineno:
                continue
            out.handouts.append(WholeHandout(
                path=path, function=qual, sink=sink, field=fld, line=value.lineno, column=value.col_offset + 1,
                end_line=value.end_lineno or value.lineno, end_column=(value.end_col_offset or value.col_offset) + 1,
                buffer_text=expr_text(value), refresh_line=line, refresh_text=text, count=c,
                stmt_text=expr_text(st) if st is not None and not _is_compound(st) else ""))


def _field_at(fld: str, v: ast.AST, slice_text: str, count: CountAxis, declared: bool = False,
              steps: tuple[tuple[str, int, str], ...] = ()) -> FieldWidth:
    """Field ``fld`` of width ``count``, located at the value ``v`` handed to it."""
    return FieldWidth(fld, expr_text(v), slice_text, count, v.lineno, v.col_offset + 1, v.end_lineno or v.lineno,
                      (v.end_col_offset or v.col_offset) + 1, declared=declared, steps=steps)


def _param_of(expr: ast.AST, params: set[str], loc: _Locals, depth: int = 0) -> tuple[str, str | None] | None:
    """``(parameter, bound)`` when ``expr`` is a parameter as the function received it, or its
    prefix ``p[:b]`` (``bound`` the text of ``b``, else None), or a value that is one of those on
    the paths that do not give None or a default (``p if c else None``, ``kwargs.pop("k", p)``),
    through local names every assignment of which says so; None otherwise (a parameter the
    function rebinds to anything but its own prefix is no longer what the caller passed)."""
    if depth > 4:
        return None
    if isinstance(expr, ast.Name):
        if expr.id in loc.opaque:
            return None
        vals = loc.values.get(expr.id, [])
        if expr.id in params:
            if not vals:
                return (expr.id, None)
            # `p = p[:b]`: every rebinding the same prefix of the parameter itself
            got = set()
            for v in vals:
                if not (isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) and v.value.id == expr.id):
                    return None
                up = _first_dim_upper(v.slice)
                if up is None:
                    return None
                got.add(expr_text(up))
            return (expr.id, got.pop()) if len(got) == 1 else None
        found = {_param_of(v, params, loc, depth + 1) for v in vals}
        return found.pop() if len(found) == 1 and None not in found else None
    if isinstance(expr, ast.Subscript):
        # a prefix of the first dimension only (`p[:b]`), of a parameter as received
        up = _first_dim_upper(expr.slice)
        if up is None or not isinstance(expr.value, ast.Name):
            return None
        inner = _param_of(expr.value, params, loc, depth + 1)
        if inner is None or inner[1] is not None:
            return None
        return (inner[0], expr_text(up))
    if isinstance(expr, ast.IfExp):
        alts = [x for x in (expr.body, expr.orelse) if not (isinstance(x, ast.Constant) and x.value is None)]
        found = {_param_of(x, params, loc, depth + 1) for x in alts}
        return found.pop() if len(found) == 1 and None not in found else None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("pop", "get") \
            and len(expr.args) == 2 and not expr.keywords:
        return _param_of(expr.args[1], params, loc, depth + 1)
    return None


def _bound_names(fn: ast.AST, loc: _Locals, mod: ModuleInfo) -> tuple[set[str], dict[str, tuple]]:
    """The names a function binds itself: parameters, locals, and functions or classes defined
    in its body (a call of one of them is not a call of a module-level name); and, apart, the
    names only its imports bind (``from .attn_utils import build_attn_metadata`` in the body),
    each with what it imports (:func:`import_bindings`): a call of one resolves to that."""
    out = set(loc.params) | set(loc.values) | loc.opaque
    imported: dict[str, set] = {}  # name -> what the function's imports bind it to
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for name, target in import_bindings(n, mod.package):
                imported.setdefault(name, set()).add(target)
            continue
        todo.extend(ast.iter_child_nodes(n))
    own: dict[str, tuple] = {}
    for name, targets in imported.items():
        if name in out or len(targets) != 1:
            out.add(name)  # (bound another way too, or to two things: nothing known)
        else:
            own[name] = next(iter(targets))
    return out, own


def _assignment_of(fn: ast.AST, value: ast.AST) -> ast.stmt | None:
    """The statement of ``fn`` that assigns ``value`` (or an ``a if c else b`` holding it)."""
    for n in _own_nodes(fn):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            v = n.value
            if v is value or isinstance(v, ast.IfExp) and (v.body is value or v.orelse is value):
                return n
    return None


def _block_chain(stmts: list, target: ast.stmt) -> list[tuple[list, int]] | None:
    """The statement lists from ``stmts`` down to the one holding ``target``, each with the
    index of the statement on the way (outermost first); None when ``target`` is not there."""
    for i, st in enumerate(stmts):
        if st is target:
            return [(stmts, i)]
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        subs = [getattr(st, k, None) for k in ("body", "orelse", "finalbody")]
        subs += [h.body for h in getattr(st, "handlers", []) or []]
        subs += [c.body for c in getattr(st, "cases", []) or []]
        for sub in subs:
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                got = _block_chain(sub, target)
                if got is not None:
                    return [(stmts, i), *got]
    return None


_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _reaches(fn: ast.AST, st: ast.stmt, line: int) -> bool:
    """Whether control may go from statement ``st`` of ``fn`` to the statement on ``line``: a
    later statement of its block, or of an enclosing block it falls out to (not past a block
    that ends in ``return``, ``raise``, ``continue`` or ``break``)."""
    chain = _block_chain(getattr(fn, "body", []), st)
    if chain is None:
        return False
    for stmts, i in reversed(chain):
        for later in stmts[i + 1:]:
            if later.lineno <= line <= (later.end_lineno or later.lineno):
                return True
        if isinstance(stmts[-1], _ENDS):
            return False
    return False


def _is_compound(st: ast.stmt) -> bool:
    return isinstance(st, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
                           ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or \
        type(st).__name__ in ("Match", "TryStar")


def _head(st: ast.stmt) -> str:
    text = expr_text(st)
    return text.split("\n", 1)[0]


_IDENT = re.compile(r"[A-Za-z_]\w*")


def count_names(profile: Profile) -> re.Pattern:
    """A pattern that every identifier with a count axis fully matches (a superset of the names
    :meth:`Profile.count_axis` knows: the ``[[counts]]`` names and the ``[axes.*].counts``
    patterns)."""
    pats = [re.escape(n) for p in profile.counts for n in (*p.real, *p.padded)]
    pats += [fnmatch.translate(pat) for _, group in profile.axes.counts for pat in group]
    return re.compile("|".join(f"(?:{p})" for p in pats) if pats else r"(?!)")


def may_have_axis_facts(text: str, names: re.Pattern) -> bool:
    """False when no identifier of a module's text is a count (``names``: :func:`count_names`).
    Every axis fact hangs on a count, and a count expression bottoms out in a name or an
    attribute the profile gives an axis (:meth:`AxisAnalysis.count`), so such a module has none."""
    return any(names.fullmatch(w) for w in set(_IDENT.findall(text)))


def axis_facts(profile: Profile, project: Project, keys: dict[str, str],
               texts: dict[str, str] | None = None) -> AxisFacts:
    """Axis facts of the checked files ``keys`` (path -> module key in ``project``).  ``texts``
    (path -> text), when given, spares parsing a module without a count
    (:func:`may_have_axis_facts`)."""
    analysis = AxisAnalysis(profile, project)
    out = AxisFacts()
    names = count_names(profile) if texts is not None else None
    for path, key in keys.items():
        text = texts.get(path) if texts is not None else None
        if names is not None and text is not None and not may_have_axis_facts(text, names):
            continue
        mod = project.module(key)
        if mod is not None:
            analysis.scan_module(mod, path, out)
    return out
