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
- elementwise operations (``a < b``, ``~m``, ``a & b``): the rows of the operands whose rows
  are known, when they agree;
- a field read off an object whose class the code names (``input_batch.prompt_lens`` with
  ``input_batch: InputBatch``): the width the field is given where the project builds that
  class (``InputBatch(..., prompt_lens=prompt_lens)``), when every such construction gives it
  the same known count (one that passes None or leaves the field out gives it no rows and
  does not count; one whose width is not known, or that passes arguments by position or
  ``**kw``, leaves the field's width unknown: SGLang builds ``ForwardBatch.out_cache_loc`` at
  the padded count for a capture and from the scheduler's batch for a step), and nothing may
  change the field after (:meth:`RowWidths._settled`).  Constructions are calls of the class
  by a name that resolves to it (an import alias too) and ``cls(...)`` in its class methods;
  ``dataclasses.replace`` is not read.

A boolean mask used as a gather index gives fewer rows than the mask has: an index that may be
one (a comparison, ``~``, ``&``, a ``bool`` dtype) gives no width (:meth:`RowWidths._mask`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

# (axes imports this module only inside AxisAnalysis, so these names exist when it is imported)
from padlint.analysis.axes import CountAxis, _first_dim_upper, _functions, _Locals, _own_nodes
from padlint.analysis.literals import expr_text
from padlint.analysis.project import ClassInfo, ModuleInfo, Project, _dotted, _type_names, scan_method_attr_types

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
_STORE = r"(?:[-+*/|&]|//|<<|>>)?=(?!=)"  # an assignment or augmented assignment, not `==`


@dataclass(frozen=True)
class Step:
    """One step of the reason a value has its rows: ``path`` None for the function being read."""

    path: str | None
    line: int
    text: str


@dataclass(frozen=True)
class ValueWidth:
    count: CountAxis
    steps: tuple[Step, ...]  # outermost first

    @property
    def key(self) -> tuple:
        """What two widths must share to be the same rows: the count, its offset, padded or not."""
        return (self.count.name, self.count.offset, self.count.padded)


def _agree(got: list[ValueWidth | None]) -> ValueWidth | None:
    """The first of ``got`` when every one is known and all have the same rows, else None."""
    if not got or any(g is None for g in got) or len({g.key for g in got}) != 1:  # type: ignore[union-attr]
        return None
    return got[0]


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class RowWidths:
    """Widths of values, memoised per class field for one program.

    ``count(expr, loc)`` gives the axis of a count expression (:meth:`AxisAnalysis.count`);
    ``locals_of(fn)`` the local assignments of a function (memoised by the axis analysis)."""

    #: how many class fields deep a width is followed (a field given a field of another class...):
    #: a guard against pathological chains only; a field's width is memoised once found, so a
    #: limit met on one reading and not another would make results depend on the order of reading
    FIELD_DEPTH = 12

    def __init__(self, project: Project, row_copies: tuple[str, ...], *, count: Callable, locals_of: Callable):
        self.project = project
        self.row_copies = frozenset(row_copies)
        self._count = count
        self._locals_of = locals_of
        self._fields: dict[tuple[str, str], ValueWidth | None] = {}
        self._active: set[tuple[str, str]] = set()
        self._sites: dict[str, list[tuple[ModuleInfo, ast.AST, ast.Call]]] = {}
        self._mod_calls: dict[str, list[tuple[str, str | None]]] = {}
        self._cut = False  # a lookup met a depth limit: its result is not kept
        # (id of a function's locals, name) -> the width the name has while a value of it that
        # reads the name itself is read (:meth:`of`)
        self._bound: dict[tuple[int, str], ValueWidth] = {}
        self._settled_memo: dict[tuple[str, str], bool] = {}
        self._stored_attrs: dict[tuple, bool] = {}  # (class, attr) -> some module may store `x.attr = ...` on one

    # ------------------------------------------------------------------ values
    def of(self, v: ast.AST, loc: _Locals, mod: ModuleInfo, depth: int = 0, fields: int = 0) -> ValueWidth | None:
        """The rows of value ``v`` in a function with locals ``loc`` in module ``mod``, or None."""
        if depth > 8:
            self._cut = True
            return None
        line = getattr(v, "lineno", 0)
        if isinstance(v, ast.Subscript):
            upper = _first_dim_upper(v.slice)
            if upper is not None:
                c = self._count(upper, loc)
                return ValueWidth(c, (Step(None, line, f"`{expr_text(v)}`: rows [:{c.text}]"),)) if c is not None else None
            if isinstance(v.slice, (ast.Name, ast.Attribute, ast.Call)) and not self._mask(v.slice, loc):
                w = self.of(v.slice, loc, mod, depth + 1, fields)
                if w is not None:
                    step = Step(None, line, f"`{expr_text(v)}` gathers one row per row of `{expr_text(v.slice)}`")
                    return ValueWidth(w.count, (step, *w.steps))
            return None
        if isinstance(v, ast.Call):
            return self._call(v, loc, mod, depth, fields)
        if isinstance(v, ast.Name):
            bound = self._bound.get((id(loc), v.id))
            if bound is not None:
                return bound
            if v.id in loc.opaque or v.id in loc.params:
                return None
            vals = [x for x in loc.values.get(v.id, []) if not _is_none(x)]
            if not vals:
                return None
            # a value that reads the name itself (`idx = torch.from_numpy(idx).cuda()`) is read
            # with the name bound to the width its other values agree on
            own = [x for x in vals if any(isinstance(n, ast.Name) and n.id == v.id for n in ast.walk(x))]
            base = [x for x in vals if not any(x is o for o in own)]
            if not base:
                return None
            got = [self.of(x, loc, mod, depth + 1, fields) for x in base]
            if own:
                agreed = _agree(got)
                if agreed is None:
                    return None
                self._bound[(id(loc), v.id)] = agreed
                try:
                    got += [self.of(x, loc, mod, depth + 1, fields) for x in own]
                finally:
                    del self._bound[(id(loc), v.id)]
                vals = base + own
            first = _agree(got)
            if first is None:
                return None
            if first.steps and first.steps[0].line == vals[0].lineno:
                return first  # the value's own step is on the assignment's line: it says enough
            step = Step(None, vals[0].lineno, f"`{v.id} = {expr_text(vals[0])}`")
            return ValueWidth(first.count, (step, *first.steps))
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name):
            cls = self._class_of(v.value.id, loc, mod)
            if cls is None:
                return None
            w = self.field(cls, v.attr, fields + 1)
            if w is None:
                return None
            return ValueWidth(w.count, (Step(None, line, f"`{expr_text(v)}`, field `{v.attr}` of `{cls.name}`"),
                                        *w.steps))
        if isinstance(v, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)):
            return self._elementwise(v, loc, mod, depth, fields)
        if isinstance(v, ast.IfExp):
            alts = [x for x in (v.body, v.orelse) if not _is_none(x)]
            return _agree([self.of(x, loc, mod, depth + 1, fields) for x in alts])
        return None

    def _mask(self, idx: ast.AST, loc: _Locals, depth: int = 0, seen: frozenset = frozenset()) -> bool:
        """Whether a gather index may be a boolean mask (it selects fewer rows than it has): a
        comparison, ``~``, ``&``, ``|``, an allocation or conversion with a ``bool`` dtype, or a
        local one of whose values is one of those."""
        if depth > 4:
            return True
        if isinstance(idx, ast.Compare) or isinstance(idx, ast.UnaryOp) and isinstance(idx.op, (ast.Invert, ast.Not)) \
                or isinstance(idx, ast.BinOp) and isinstance(idx.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return True
        if isinstance(idx, ast.Call):
            if any(k.arg == "dtype" and "bool" in expr_text(k.value) for k in idx.keywords) \
                    or any("bool" in expr_text(a) for a in idx.args[1:]):
                return True
            if isinstance(idx.func, ast.Attribute) and idx.func.attr in ("bool",):
                return True
            if isinstance(idx.func, ast.Attribute) and idx.func.attr in ROW_METHODS:
                return self._mask(idx.func.value, loc, depth + 1, seen)
            return bool(idx.args) and _dotted(idx.func) in ROW_FUNCTIONS and self._mask(idx.args[0], loc, depth + 1, seen)
        if isinstance(idx, ast.Name):
            if idx.id in seen:
                return False  # (a value that reads the name itself: its other values decide)
            return any(self._mask(x, loc, depth + 1, seen | {idx.id}) for x in loc.values.get(idx.id, []))
        return False

    def _elementwise(self, v: ast.AST, loc: _Locals, mod: ModuleInfo, depth: int, fields: int) -> ValueWidth | None:
        """An elementwise operation (``a < b``, ``~m``, ``a & b``, ``x + 1``) has the rows of its
        operands whose rows are known, when they agree: an operand of unknown rows broadcasts
        against them (a scalar, or the same rows), else the operation could not run."""
        if isinstance(v, ast.BinOp):
            if isinstance(v.op, (ast.MatMult,)):
                return None
            parts = [v.left, v.right]
        elif isinstance(v, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in v.ops):
                return None  # `x is None`, `a in b`: one bool, not a tensor of rows
            parts = [v.left, *v.comparators]
        elif isinstance(v, ast.UnaryOp):
            if not isinstance(v.op, (ast.Invert, ast.USub, ast.UAdd)):
                return None
            parts = [v.operand]
        else:
            return None  # `and`/`or` of arrays raise; of anything else it is not a tensor
        first = _agree([w for p in parts if (w := self.of(p, loc, mod, depth + 1, fields)) is not None])
        if first is None:
            return None
        step = Step(None, getattr(v, "lineno", 0), f"`{expr_text(v)}` keeps the rows of its operands")
        return ValueWidth(first.count, (step, *first.steps))

    def _call(self, v: ast.Call, loc: _Locals, mod: ModuleInfo, depth: int, fields: int) -> ValueWidth | None:
        name = _dotted(v.func) or ""
        line = v.lineno
        if isinstance(v.func, ast.Attribute) and v.func.attr in ROW_METHODS \
                and (_dotted(v.func.value) or "") not in _MODULES:
            w = self.of(v.func.value, loc, mod, depth + 1, fields)
            if w is None:
                return None
            return ValueWidth(w.count, (Step(None, line, f"`{expr_text(v)}` keeps the rows of `{expr_text(v.func.value)}`"),
                                        *w.steps))
        copies = name in ROW_FUNCTIONS or name.rsplit(".", 1)[-1] in self.row_copies
        if copies and v.args and not any(k.arg == "out" for k in v.keywords):
            w = self.of(v.args[0], loc, mod, depth + 1, fields)
            if w is None:
                return None
            return ValueWidth(w.count, (Step(None, line, f"`{name}(...)` keeps the rows of `{expr_text(v.args[0])}`"),
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
        return ValueWidth(c, (Step(None, line, f"`{expr_text(v)}`: {c.text} rows"),))

    def _class_of(self, name: str, loc: _Locals, mod: ModuleInfo) -> ClassInfo | None:
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
        """The width ``attr`` is given where the project constructs ``cls``, when every
        construction that passes it gives the same known count and nothing changes it after
        (:meth:`_settled`); None otherwise.  A field met again while it is being read (a cycle of
        fields) gives None: one construction of unknown width makes a field's width unknown, so
        every field of the cycle is None whichever is read first, and that is kept.  A result cut
        by a depth limit is not kept: it would depend on where the reading started."""
        key = (cls.key, attr)
        if key in self._fields:
            return self._fields[key]
        if key in self._active:
            return None
        if fields > self.FIELD_DEPTH:
            self._cut = True
            return None
        if not self._settled(cls, attr):
            self._fields[key] = None
            return None
        self._active.add(key)
        outer, self._cut = self._cut, False
        got: list[ValueWidth | None] = []
        try:
            for mod, fn, call in self._constructions(cls):
                if call.args or any(k.arg is None for k in call.keywords):
                    got.append(None)  # positional or ``**kw``: the field may be passed, unseen
                    break
                value = next((k.value for k in call.keywords if k.arg == attr), None)
                if value is None or _is_none(value):
                    continue
                w = self.of(value, self._locals_of(fn), mod, 0, fields)
                if w is None:
                    got.append(None)  # a construction of unknown width: the field may have any
                    break
                site = Step(mod.path, call.lineno, f"`{cls.name}({attr}={expr_text(value)})`")
                steps = tuple(Step(s.path or mod.path, s.line, s.text) for s in w.steps)
                got.append(ValueWidth(w.count, (site, *steps)))
        except RecursionError:  # pragma: no cover - a pathological chain
            self._cut = True
            got = [None]
        finally:
            self._active.discard(key)
        cut, self._cut = self._cut, outer or self._cut
        result = _agree(got)
        if not cut:
            self._fields[key] = result
        return result

    def _settled(self, cls: ClassInfo, attr: str) -> bool:
        """Whether field ``attr`` of ``cls`` keeps the value a construction gives it: a dataclass or
        named tuple without ``__init__``/``__post_init__``/``__setattr__`` of its own and no
        ``self.attr = ...`` in its body, and no module of the project that stores ``x.attr = ...``
        (``batch.prompt_lens = F.pad(batch.prompt_lens, ...)``: the text is enough to give up)."""
        key = (cls.key, attr)
        got = self._settled_memo.get(key)
        if got is None:
            got = self._settled_memo[key] = self._settled_now(cls, attr)
        return got

    def _settled_now(self, cls: ClassInfo, attr: str) -> bool:
        if attr not in cls.fields:
            return False
        record = cls.is_dataclass or any(b.rsplit(".", 1)[-1] == "NamedTuple" for b in cls.bases)
        if not record or {"__init__", "__post_init__", "__setattr__"} & set(cls.methods):
            return False
        body = cls.mod.line_text(cls.start, cls.end)
        if "__setattr__" in body or re.search(rf"\bself\.{attr}\s*{_STORE}", body):
            return False
        key = (cls.key, attr)
        stored = self._stored_attrs.get(key)
        if stored is None:
            store = re.compile(rf"\.{attr}\s*{_STORE}")
            stored = self._stored_attrs[key] = any(
                self._stores_on(cls, attr, mod_key, text, m.start())
                for mod_key in self.project.modules_mentioning([f".{attr}"])
                for text in [self.project.source_text(mod_key) or ""] for m in store.finditer(text))
        return not stored

    def _stores_on(self, cls: ClassInfo, attr: str, mod_key: str, text: str, at: int) -> bool:
        """Whether the store ``<x>.attr = ...`` at offset ``at`` of module ``mod_key`` may store
        on an object of ``cls``: any receiver may but ``self`` (``x.prompt_lens = F.pad(...)``),
        and ``self`` in a class of that module that is ``cls`` or a subclass of it and stores
        the attribute (another class's ``self.prompt_lens = torch.zeros(...)`` stores on its own
        objects: vLLM 0.32.0's watermarking draft state unsettled the input batch's field).
        ``text`` is the module's text."""
        before = text[max(0, at - 5):at]
        if not (before.endswith("self") and (len(before) < 5 or not (before[0].isalnum() or before[0] in "_."))):
            return True
        mod = self.project.module(mod_key)
        if mod is None:
            return True
        line = mod.line_at(at)
        klass = next((c for c in mod.classes.values() if c.start <= line <= c.end), None)
        if klass is None or any(b.key == cls.key for b in self.project.mro(klass)):
            return True  # (`self` outside a class the module indexes: taken as a store on any object)
        scan_method_attr_types(klass)
        # its own methods store it on its own objects; a store from a class nested in it is not told
        return attr not in klass.stored_in

    def _constructions(self, cls: ClassInfo) -> list[tuple[ModuleInfo, ast.AST, ast.Call]]:
        """``(module, function, call)`` of every call in a project function that constructs
        ``cls``: by a name that resolves to it (an import alias too), or as ``cls(...)`` in a
        class method of ``cls`` itself.  Calls by name first: the message cites the first
        construction, and a class method's ``cls(...)`` is most often a dummy or a test batch."""
        got = self._sites.get(cls.key)
        if got is not None:
            return got
        named: list[tuple[ModuleInfo, int]] = []  # (module, index into its calls)
        factory: list[tuple[ModuleInfo, int]] = []
        for key in self.project.modules_mentioning([cls.name]):
            mod = self.project.module(key)
            if mod is None:
                continue
            # the names this module may call the class by: its own name, or an alias of an import of it
            names = {cls.name} | {alias for alias, (_src, attr) in mod.imports.items() if attr == cls.name}
            for i, (name, owner) in enumerate(self._calls(mod)):
                head = name.rsplit(".", 1)[-1]
                if name == "cls":
                    if owner == cls.name and mod.key == cls.module:
                        factory.append((mod, i))
                    continue
                if head not in names and name.partition(".")[0] not in names:
                    continue
                try:
                    target = self.project.resolve(mod, name, base=True)
                except (RecursionError, LookupError, SyntaxError, ValueError):  # pragma: no cover
                    target = None
                if isinstance(target, ClassInfo) and target.key == cls.key:
                    named.append((mod, i))
        out: list[tuple[ModuleInfo, ast.AST, ast.Call]] = []
        nodes: dict[str, list[tuple[ast.AST, ast.Call]]] = {}
        for mod, i in named + factory:
            if mod.key not in nodes:
                nodes[mod.key] = [(fn, call) for fn, call, _n, _o in self._walk_calls(mod)]
            fn, call = nodes[mod.key][i]
            out.append((mod, fn, call))
        self._sites[cls.key] = out
        return out

    def _calls(self, mod: ModuleInfo) -> list[tuple[str, str | None]]:
        """``(dotted name, top-level class)`` of every call with arguments in the module's
        functions, in walk order (one walk per module, whatever the number of classes looked
        up; names only, so that no syntax tree is held: :meth:`_walk_calls` walks again, in the
        same order, the few modules that construct a class)."""
        got = self._mod_calls.get(mod.key)
        if got is None:
            got = self._mod_calls[mod.key] = [(name, owner) for _fn, _call, name, owner in self._walk_calls(mod)]
        return got

    def _walk_calls(self, mod: ModuleInfo) -> list[tuple[ast.AST, ast.Call, str, str | None]]:
        out: list[tuple[ast.AST, ast.Call, str, str | None]] = []
        try:
            tree = mod.peek_tree()
        except (LookupError, SyntaxError, ValueError):  # pragma: no cover - a module the index could not re-read
            return out
        for _qual, fn, owner in _functions(tree):
            for n in _own_nodes(fn):
                if isinstance(n, ast.Call) and (n.keywords or n.args):
                    name = _dotted(n.func)
                    if name:
                        out.append((fn, n, name, owner))
        return out
