"""Row counts of values: how many rows a tensor or array that a function computes has, as a
count (:class:`padlint.analysis.axes.CountAxis`), with the steps that show it.

PAD004 (b) compares the widths of the fields of one metadata object.  A field sliced to a
count (``x[:num_reqs]``) says its width where it is handed over; one that is not (vLLM 0.33.0's
``rswa_prefix_lens=input_batch.prompt_lens``, a gather made two functions away) has the width
its value was made with.  This module follows that, flow-insensitively, through:

- prefixes ``x[:n]``; gathers ``x[idx]``: one row per row of the index;
- conversions and copies that keep the rows: ``.to()``, ``.cuda()``, ``.numpy()``,
  ``torch.from_numpy(a)``, ``np.asarray(a)``..., and the profile's ``[axes] row_copies``
  (vLLM's ``async_tensor_h2d(a, ...)``; not with ``out=``, whose rows are the ``out`` tensor's);
- allocations with a count as first dimension (``np.zeros(n)``, ``torch.empty((n, k))``,
  ``np.fromiter(it, count=n)``);
- local names every assignment of which has one width (``None`` assignments aside: no rows);
- a field read off an object whose class the code names (``input_batch.prompt_lens`` with
  ``input_batch: InputBatch``): the width the field is given where the project builds that
  class (``InputBatch(..., prompt_lens=prompt_lens)``), when every such construction gives it
  the same known count (one that passes None or leaves the field out gives it no rows and
  does not count; one whose width is not known, or that passes arguments by position or
  ``**kw``, leaves the field's width unknown: SGLang builds ``ForwardBatch.out_cache_loc`` at
  the padded count for a capture and from the scheduler's batch for a step).  Constructions
  are calls of the class by a name that resolves to it; ``dataclasses.replace`` and
  ``cls(...)`` in a class method are not read.

A boolean mask used as a gather index would give fewer rows than the mask has; masks come from
comparisons, which this module does not follow, so an index with a known width is a tensor
of indices made by one of the shapes above.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from padlint.analysis.project import ClassInfo, ModuleInfo, Project, _dotted, _type_names

if TYPE_CHECKING:  # pragma: no cover
    from padlint.analysis.axes import CountAxis, _Locals

#: methods whose result has the rows of the tensor or array they are called on
ROW_METHODS = frozenset({"to", "cuda", "cpu", "numpy", "contiguous", "clone", "pin_memory", "detach", "long",
                         "int", "float", "bool", "half", "bfloat16", "double", "astype", "copy", "tolist"})
#: functions whose result has the rows of their first positional argument
ROW_FUNCTIONS = frozenset({"torch.from_numpy", "torch.as_tensor", "np.asarray", "numpy.asarray",
                           "np.ascontiguousarray", "numpy.ascontiguousarray", "np.array", "numpy.array"})
#: allocations whose first positional argument (or its first element) is the first dimension
SIZED = frozenset({f"{m}.{f}" for m in ("torch", "np", "numpy")
                   for f in ("zeros", "empty", "ones", "full", "arange")})
#: ``np.fromiter(iterable, dtype, count=n)``: n rows
COUNTED = frozenset({"np.fromiter", "numpy.fromiter"})
_MODULES = frozenset({"torch", "np", "numpy"})


@dataclass(frozen=True)
class Step:
    """One step of the reason a value has its rows: ``path`` None for the function being read."""

    path: str | None
    line: int
    text: str


@dataclass(frozen=True)
class ValueWidth:
    count: "CountAxis"
    steps: tuple[Step, ...]  # outermost first


def _text(node: ast.AST) -> str:
    try:
        return " ".join(ast.unparse(node).split())
    except Exception:  # noqa: BLE001 - a text is only shown
        return "?"


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class RowWidths:
    """Widths of values, memoised per class field for one program.

    ``count(expr, loc)`` gives the axis of a count expression (:meth:`AxisAnalysis.count`);
    ``locals_of(fn)`` the local assignments of a function; ``first_dim_upper(slice)`` the
    ``n`` of ``[:n]``; ``functions(tree)`` the (name, node, class) of a module's functions;
    ``own_nodes(fn)`` a function's nodes outside nested functions."""

    #: how many class fields deep a width is followed (a field given a field of another class...)
    FIELD_DEPTH = 3

    def __init__(self, project: Project, row_copies: tuple[str, ...], *, count: Callable, locals_of: Callable,
                 first_dim_upper: Callable, functions: Callable, own_nodes: Callable):
        self.project = project
        self.row_copies = frozenset(row_copies)
        self._count = count
        self._locals_of = locals_of
        self._upper = first_dim_upper
        self._functions = functions
        self._own_nodes = own_nodes
        self._fields: dict[tuple[str, str], ValueWidth | None] = {}
        self._active: set[tuple[str, str]] = set()
        self._sites: dict[str, list[tuple[ModuleInfo, ast.AST, ast.Call]]] = {}

    # ------------------------------------------------------------------ values
    def of(self, v: ast.AST, loc: "_Locals", mod: ModuleInfo, depth: int = 0, fields: int = 0) -> ValueWidth | None:
        """The rows of value ``v`` in a function with locals ``loc`` in module ``mod``, or None."""
        if depth > 8:
            return None
        line = getattr(v, "lineno", 0)
        if isinstance(v, ast.Subscript):
            upper = self._upper(v.slice)
            if upper is not None:
                c = self._count(upper, loc)
                return ValueWidth(c, (Step(None, line, f"`{_text(v)}`: rows [:{c.text}]"),)) if c is not None else None
            if isinstance(v.slice, (ast.Name, ast.Attribute, ast.Call)):
                w = self.of(v.slice, loc, mod, depth + 1, fields)
                if w is not None:
                    step = Step(None, line, f"`{_text(v)}` gathers one row per row of `{_text(v.slice)}`")
                    return ValueWidth(w.count, (step, *w.steps))
            return None
        if isinstance(v, ast.Call):
            return self._call(v, loc, mod, depth, fields)
        if isinstance(v, ast.Name):
            if v.id in loc.opaque or v.id in loc.params:
                return None
            vals = [x for x in loc.values.get(v.id, []) if not _is_none(x)]
            if not vals:
                return None
            got = [self.of(x, loc, mod, depth + 1, fields) for x in vals]
            if any(g is None for g in got):
                return None
            keys = {(g.count.name, g.count.offset, g.count.padded) for g in got}  # type: ignore[union-attr]
            if len(keys) != 1:
                return None
            first = got[0]
            if first.steps and first.steps[0].line == vals[0].lineno:  # type: ignore[union-attr]
                return first  # the value's own step is on the assignment's line: it says enough
            step = Step(None, vals[0].lineno, f"`{v.id} = {_text(vals[0])}`")
            return ValueWidth(first.count, (step, *first.steps))  # type: ignore[union-attr]
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name):
            cls = self._class_of(v.value.id, loc, mod)
            if cls is None or fields >= self.FIELD_DEPTH:
                return None
            w = self.field(cls, v.attr, fields + 1)
            if w is None:
                return None
            return ValueWidth(w.count, (Step(None, line, f"`{_text(v)}`, field `{v.attr}` of `{cls.name}`"),
                                        *w.steps))
        if isinstance(v, ast.IfExp):
            alts = [x for x in (v.body, v.orelse) if not _is_none(x)]
            got = [self.of(x, loc, mod, depth + 1, fields) for x in alts]
            if not got or any(g is None for g in got):
                return None
            if len({(g.count.name, g.count.offset, g.count.padded) for g in got}) != 1:  # type: ignore[union-attr]
                return None
            return got[0]
        return None

    def _call(self, v: ast.Call, loc: "_Locals", mod: ModuleInfo, depth: int, fields: int) -> ValueWidth | None:
        name = _dotted(v.func) or ""
        line = v.lineno
        if isinstance(v.func, ast.Attribute) and v.func.attr in ROW_METHODS \
                and (_dotted(v.func.value) or "") not in _MODULES:
            w = self.of(v.func.value, loc, mod, depth + 1, fields)
            if w is None:
                return None
            return ValueWidth(w.count, (Step(None, line, f"`{_text(v)}` keeps the rows of `{_text(v.func.value)}`"),
                                        *w.steps))
        copies = name in ROW_FUNCTIONS or name.rsplit(".", 1)[-1] in self.row_copies
        if copies and v.args and not any(k.arg == "out" for k in v.keywords):
            w = self.of(v.args[0], loc, mod, depth + 1, fields)
            if w is None:
                return None
            return ValueWidth(w.count, (Step(None, line, f"`{name}(...)` keeps the rows of `{_text(v.args[0])}`"),
                                        *w.steps))
        dim: ast.AST | None = None
        if name in SIZED and v.args:
            dim = v.args[0]
            if isinstance(dim, (ast.Tuple, ast.List)):
                dim = dim.elts[0] if dim.elts else None
            if name.endswith("arange") and len(v.args) > 1:
                dim = None  # arange(start, stop): stop - start rows
        elif name in COUNTED:
            dim = next((k.value for k in v.keywords if k.arg == "count"), v.args[2] if len(v.args) > 2 else None)
        if dim is None:
            return None
        c = self._count(dim, loc)
        if c is None:
            return None
        return ValueWidth(c, (Step(None, line, f"`{_text(v)}`: {c.text} rows"),))

    def _class_of(self, name: str, loc: "_Locals", mod: ModuleInfo) -> ClassInfo | None:
        """The project class a local name holds: a parameter's annotation, or every assignment
        a construction of one class."""
        names: list[str] = []
        if name in loc.params:
            if name in loc.values or name in loc.opaque:
                return None
            names = _type_names(loc.annotations.get(name))
        elif name not in loc.opaque:
            vals = loc.values.get(name, [])
            heads = {_dotted(x.func) if isinstance(x, ast.Call) else None for x in vals}
            if len(heads) == 1 and None not in heads:
                names = [heads.pop()]  # type: ignore[list-item]
        found = set()
        for n in names:
            try:
                got = self.project.resolve(mod, n, base=True)
            except (RecursionError, LookupError, SyntaxError, ValueError):  # pragma: no cover - odd re-exports
                got = None
            if isinstance(got, ClassInfo):
                found.add(got.key)
                cls = got
        return cls if len(found) == 1 else None

    # ------------------------------------------------------------------ fields
    def field(self, cls: ClassInfo, attr: str, fields: int = 1) -> ValueWidth | None:
        """The width ``attr`` is given where the project constructs ``cls`` (keyword arguments),
        when the constructions whose width is known agree; None otherwise."""
        key = (cls.key, attr)
        if key in self._fields:
            return self._fields[key]
        if key in self._active or attr not in cls.fields:
            return None
        self._active.add(key)
        complete = True
        got: list[tuple[str, ValueWidth] | None] = []
        try:
            for mod, fn, call in self._constructions(cls):
                if call.args or any(k.arg is None for k in call.keywords):
                    got.append(None)  # positional or ``**kw``: the field may be passed, unseen
                    break
                value = next((k.value for k in call.keywords if k.arg == attr), None)
                if value is None or _is_none(value):
                    continue
                loc = self._locals_of(fn)
                w = self.of(value, loc, mod, 0, fields)
                if w is None:
                    got.append(None)  # a construction of unknown width: the field may have any
                    break
                site = Step(mod.path, call.lineno, f"`{cls.name}({attr}={_text(value)})`")
                steps = tuple(Step(s.path or mod.path, s.line, s.text) for s in w.steps)
                got.append((mod.path, ValueWidth(w.count, (site, *steps))))
        except RecursionError:  # pragma: no cover - a pathological chain
            complete = False
        finally:
            self._active.discard(key)
        keys = {(w[1].count.name, w[1].count.offset, w[1].count.padded) if w is not None else None for w in got}
        result = got[0][1] if len(keys) == 1 and None not in keys else None  # type: ignore[index]
        if complete:
            self._fields[key] = result
        return result

    def _constructions(self, cls: ClassInfo) -> list[tuple[ModuleInfo, ast.AST, ast.Call]]:
        """``(module, function, call)`` of every call in a project function that constructs
        ``cls`` by a name that resolves to it."""
        got = self._sites.get(cls.key)
        if got is not None:
            return got
        out: list[tuple[ModuleInfo, ast.AST, ast.Call]] = []
        for key in self.project.modules_mentioning([f"{cls.name}("]):
            mod = self.project.module(key)
            if mod is None:
                continue
            try:
                tree = mod.peek_tree()
            except (LookupError, SyntaxError, ValueError):  # pragma: no cover - a module the index could not re-read
                continue
            for _qual, fn, _cls in self._functions(tree):
                for n in self._own_nodes(fn):
                    if not isinstance(n, ast.Call) or not (n.keywords or n.args):
                        continue
                    name = _dotted(n.func) or ""
                    if name.rsplit(".", 1)[-1] != cls.name:
                        continue
                    try:
                        target = self.project.resolve(mod, name, base=True)
                    except (RecursionError, LookupError, SyntaxError, ValueError):  # pragma: no cover
                        target = None
                    if isinstance(target, ClassInfo) and target.key == cls.key:
                        out.append((mod, fn, n))
        self._sites[cls.key] = out
        return out
