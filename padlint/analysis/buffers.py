"""Facts about persistent buffers: where each is allocated, with what, and who may write it.

A persistent buffer is an attribute (``self.seq_lens``) allocated with an
allocator call (``torch.zeros(...)``, ``torch.empty(...)``, a CpuGpuBuffer-like
wrapper the profile names in ``[buffers] wrapper_allocators``).  For one
attribute name this module finds, over every module of the project whose text
mentions ``.name``:

* the *allocations*: every ``x.name = <value>`` (the value classified as
  uninitialised ``empty``, a literal such as ``0``/``False``/``-1``, or unknown);
* the *writes*: every place that may change the buffer's rows after that:
  a store into a slice or view (``x.name[i] = v``, ``x.name.np[:n] = v``), an
  augmented assignment, an in-place or unknown method (``fill_``, ``copy_``,
  ``copy_to_gpu``, anything not known to only read), ``out=`` of a torch call,
  passing the buffer (or a view of it) to a call that may write it, storing it
  in a container or another attribute, returning it.

It is conservative: an unknown call that receives the buffer may write it.  A
call of a project function is followed into the callee (the parameter is
judged there, by the same rules, a few levels deep); a buffer handed to a
metadata constructor or project dataclass is judged by every use of that field
name in the project (``meta.is_prefilling[i] = x`` anywhere is a write).  A
local name bound to the buffer is followed in its function until it is bound to
something else.  Attribute *names* are what is matched: a write to ``.x`` of
any object counts as a write of every buffer named ``x`` (sound, coarse).

The interpreter asks :meth:`BufferIndex.initial` at a padded slice of a
persistent buffer: a buffer never written anywhere holds its allocation value
in every row at every step, so its padding rows are not stale, they hold that
value (neutral or not: rule PAD005 judges that).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from padlint.analysis.project import ClassInfo, Project
from padlint.profile import Profile

EMPTY = "empty"  # InitialValue.value of an uninitialised allocation

# attributes of a tensor / CpuGpuBuffer that alias its storage (a write through them writes it)
_ALIAS_ATTRS = frozenset({"T", "mT", "H", "data", "real", "imag", "cpu", "np", "gpu"})
# attributes that only read metadata of the tensor
_META_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "is_pinned", "itemsize", "nbytes",
                         "size", "is_contiguous", "numel", "dim", "stride", "data_ptr", "element_size",
                         "storage_offset", "layout", "requires_grad", "names", "__len__"})
# methods whose result aliases the receiver's storage (followed as the buffer)
_VIEW_METHODS = frozenset({
    "view", "reshape", "unsqueeze", "squeeze", "flatten", "contiguous", "numpy", "view_as", "expand",
    "expand_as", "detach", "narrow", "t", "permute", "transpose", "as_strided", "ravel", "unflatten",
    "to", "cpu", "cuda", "int", "long", "bool", "float", "half", "double", "type", "pin_memory",
    "__getitem__", "split", "chunk", "unbind", "tensor_split", "select", "diagonal", "movedim",
})
# methods that read the receiver and return a new value (or a scalar)
_READ_METHODS = frozenset({
    "clone", "tolist", "item", "sum", "any", "all", "max", "min", "mean", "prod", "argmax", "argmin",
    "nonzero", "cumsum", "cumprod", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_not", "logical_xor", "add", "sub", "mul", "div", "clamp", "clip", "masked_fill", "abs", "neg",
    "minimum", "maximum", "bitwise_and", "bitwise_or", "bitwise_not", "where", "floor_divide", "remainder",
    "sign", "index_select", "gather", "repeat", "repeat_interleave", "masked_select", "copy", "astype",
    "equal", "allclose", "isin", "count_nonzero", "tobytes", "unique", "sort", "argsort", "topk",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "cumsum", "diff", "flip", "roll",
    "round", "sqrt", "exp", "log", "pow", "sigmoid", "softmax", "to_dense", "__repr__", "__str__",
})
_PURE_BUILTINS = frozenset({"len", "isinstance", "print", "str", "repr", "int", "float", "bool", "id", "type",
                            "hasattr", "getattr", "format", "hash", "max", "min", "sum", "any", "all", "sorted"})
# functions of torch / numpy that only read their tensor arguments (``out=`` aside)
_PURE_MODULE_FUNCS = frozenset({
    "where", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "maximum", "minimum", "eq", "ne",
    "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor", "sum", "any", "all",
    "cumsum", "cumprod", "argmax", "argmin", "nonzero", "equal", "allclose", "isclose", "clamp", "clip",
    "isin", "searchsorted", "add", "sub", "subtract", "mul", "multiply", "div", "divide", "floor_divide",
    "remainder", "abs", "neg", "negative", "bitwise_and", "bitwise_or", "bitwise_not", "greater", "less",
    "equal", "not_equal", "greater_equal", "less_equal", "index_select", "gather", "masked_select",
    "repeat_interleave", "count_nonzero", "unique", "sort", "argsort", "topk", "max", "min", "mean",
    "zeros_like", "ones_like", "empty_like", "full_like", "diff", "flip", "roll", "array_equal",
})
_MODULES = frozenset({"torch", "np", "numpy"})
_ALIAS_MODULE_FUNCS = frozenset({"from_numpy", "as_tensor", "asarray", "asanyarray"})
_DICT_DEFAULTS = frozenset({"get", "pop", "setdefault"})  # d.get(k, buf): the result may be buf
MAX_DEPTH = 4  # calls and fields followed from a buffer's use


@dataclass(frozen=True)
class Site:
    """One place in the project: file, 1-based line, and what happens there."""

    path: str
    line: int
    what: str


@dataclass(frozen=True)
class InitialValue:
    """A buffer's value in every row when nothing writes it after allocation.

    ``value``: the literal text (``0``, ``False``, ``-1``) or :data:`EMPTY`;
    ``site``: the first allocation (the one a message names)."""

    value: str
    site: Site


@dataclass
class BufferFacts:
    """Allocations and writes of the buffers named ``attr`` across the project."""

    attr: str
    allocations: list[tuple[Site, str | None]] = field(default_factory=list)  # (site, value; None: unknown)
    writes: list[Site] = field(default_factory=list)
    owners: set[str] = field(default_factory=set)  # class keys whose methods allocate ``self.attr``

    @property
    def never_written(self) -> bool:
        return not self.writes

    def initial(self) -> InitialValue | None:
        """The one value every allocation writes, when all are known and nothing writes later."""
        if self.writes or not self.allocations:
            return None
        values = {v for _, v in self.allocations}
        if len(values) != 1 or None in values:
            return None
        site = min((s for s, _ in self.allocations), key=lambda s: (s.path, s.line))
        return InitialValue(values.pop(), site)


class _Module:
    """A parsed module with parent links (built once per module)."""

    def __init__(self, key: str, path: str, tree: ast.Module):
        self.key = key
        self.path = path
        self.tree = tree
        self.parent: dict[int, ast.AST] = {}
        self.attrs: dict[str, list[ast.Attribute]] = {}
        self.functions: dict[str, list[ast.AST]] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
            if isinstance(node, ast.Attribute):
                self.attrs.setdefault(node.attr, []).append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, []).append(node)

    def up(self, node: ast.AST) -> ast.AST | None:
        return self.parent.get(id(node))

    def function_of(self, node: ast.AST) -> ast.AST | None:
        p = self.up(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            p = self.up(p)
        return p

    def class_of(self, node: ast.AST) -> ast.ClassDef | None:
        p = self.up(node)
        while p is not None and not isinstance(p, ast.ClassDef):
            p = self.up(p)
        return p


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


class BufferIndex:
    """Facts about persistent buffers of one project, computed per attribute name on demand."""

    def __init__(self, project: Project, profile: Profile):
        self.project = project
        self.p = profile
        self._facts: dict[str, BufferFacts] = {}
        self._mods: dict[str, _Module | None] = {}
        self._words: dict[str, list[str]] | None = None
        self._defs: dict[str, list[str]] = {}
        self._field_written: dict[str, Site | None] = {}
        self._param_written: dict[tuple[str, int, str], Site | None] = {}
        self._name_written: dict[tuple[str, int], Site | None] = {}
        self._wrappers = dict(profile.wrapper_allocators)
        self._views = {*profile.shared_views, profile.device_view}

    # ------------------------------------------------------------ queries
    def facts(self, attr: str) -> BufferFacts:
        """Allocations and writes of every buffer named ``attr`` in the project."""
        f = self._facts.get(attr)
        if f is None:
            f = self._facts[attr] = self._compute(attr)
        return f

    def initial(self, owners: frozenset[str] | set[str], attr: str) -> InitialValue | None:
        """The value the buffer ``attr`` of an object of class ``owners`` holds in every row at every
        step: known when each owner (by its MRO) allocates ``self.attr`` itself, every allocation in the
        project writes the same known value, and nothing in the project may write the buffer after."""
        if not owners:
            return None
        f = self.facts(attr)
        init = f.initial()
        if init is None:
            return None
        for key in owners:
            cls = self.project.class_info(key)
            if cls is None or not any(c.key in f.owners for c in self.project.mro(cls)):
                return None
        return init

    # ------------------------------------------------------------ modules
    def _module(self, key: str) -> _Module | None:
        if key not in self._mods:
            info = self.project.module(key)
            self._mods[key] = _Module(key, info.path, info.tree) if info is not None else None
        return self._mods[key]

    def _modules_with(self, attr: str) -> list[_Module]:
        """Modules whose text has ``.attr`` (one pass over the project's texts, then a lookup)."""
        self._index_texts()
        out = []
        for key in self._words.get(attr, ()):
            m = self._module(key)
            if m is not None:
                out.append(m)
        return out

    def _functions_named(self, name: str) -> list[tuple[_Module, ast.AST]]:
        out = []
        for key in self._def_modules(name):
            m = self._module(key)
            if m is not None:
                out.extend((m, fn) for fn in m.functions.get(name, ()))
        return out

    def _def_modules(self, name: str) -> list[str]:
        self._index_texts()
        return self._defs.get(name, [])

    def _index_texts(self) -> None:
        """One pass over the project's texts: module keys per ``.name`` and per ``def name(``."""
        if self._words is not None:
            return
        words: dict[str, list[str]] = {}
        defs: dict[str, list[str]] = {}
        paths = dict(self.project.files())
        keys = [*paths, *self.project._sources]
        word = re.compile(r"\.\s*([A-Za-z_]\w*)")
        define = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(")
        for key in dict.fromkeys(keys):
            text = self.project._sources[key][1] if key in self.project._sources else \
                self.project.text_of(key, paths[key])
            for w in set(word.findall(text)):
                words.setdefault(w, []).append(key)
            for w in set(define.findall(text)):
                defs.setdefault(w, []).append(key)
        self._words = words
        self._defs = defs

    # ------------------------------------------------------------ facts
    def _compute(self, attr: str) -> BufferFacts:
        f = BufferFacts(attr)
        for m in self._modules_with(attr):
            for node in m.attrs.get(attr, ()):
                self._classify_attr(m, node, f)
        return f

    def _classify_attr(self, m: _Module, node: ast.Attribute, f: BufferFacts) -> None:
        p = m.up(node)
        if isinstance(node.ctx, ast.Store) and isinstance(p, ast.AugAssign):
            f.writes.append(Site(m.path, node.lineno, f"augmented assignment of `.{f.attr}`"))
            return
        if isinstance(node.ctx, ast.Store):
            value = None
            if isinstance(p, (ast.Assign, ast.AnnAssign)) and (
                    node in getattr(p, "targets", ()) or getattr(p, "target", None) is node):
                value = p.value
            if value is None and isinstance(p, ast.AnnAssign):
                return  # a declaration only (`self.x: torch.Tensor`)
            if isinstance(value, ast.Constant) and value.value is None:
                return  # `self.x = None`: a placeholder, not a write into rows
            init = self._alloc_value(value) if value is not None else None
            f.allocations.append((Site(m.path, node.lineno, f"`.{f.attr}` allocated"), init))
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                cls = m.class_of(node)
                if cls is not None and init is not None:
                    f.owners.add(f"{m.key}:{self._qual(m, cls)}")
            return
        if isinstance(node.ctx, ast.Del):
            f.writes.append(Site(m.path, node.lineno, f"`del` of `.{f.attr}`"))
            return
        if isinstance(p, ast.Call) and p.func is node:
            return  # `x.name(...)`: a method or function of that name (`torch.empty`), not the buffer
        if _dotted(node.value) in _MODULES:
            return
        w = self._use_writes(m, node, 0)
        if w is not None:
            f.writes.append(w)

    @staticmethod
    def _qual(m: _Module, cls: ast.ClassDef) -> str:
        names = [cls.name]
        p = m.up(cls)
        while p is not None:
            if isinstance(p, ast.ClassDef):
                names.append(p.name)
            p = m.up(p)
        return ".".join(reversed(names))

    def _alloc_value(self, value: ast.AST) -> str | None:
        """The value every row of a fresh allocation holds: a literal text, :data:`EMPTY`, or None."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in ("to", "cuda", "cpu", "pin_memory", "contiguous") \
                and isinstance(value.func.value, ast.Call):
            value = value.func.value  # torch.zeros(n).to(device)
        if not isinstance(value, ast.Call):
            return None
        name = _dotted(value.func)
        last = name.rsplit(".", 1)[-1]
        if name in self.p.uninitialized_allocators:
            return EMPTY
        for w, v in self._wrappers.items():
            if name == w or last == w.rsplit(".", 1)[-1]:
                return v
        if name not in self.p.initialized_allocators:
            return None
        if last in ("zeros", "zeros_like"):
            return "0"
        if last in ("ones", "ones_like"):
            return "1"
        if last in ("full", "full_like"):
            arg = next((k.value for k in value.keywords if k.arg == "fill_value"), None)
            if arg is None and len(value.args) >= 2 and not any(isinstance(a, ast.Starred) for a in value.args):
                arg = value.args[1]
            return self._literal(arg)
        return None  # arange, tensor, array: a value per row, not one literal

    def _literal(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            return repr(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
            return repr(-node.operand.value)
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name is not None:
            c = self.p.constant(name)
            if c is not None:
                return repr(c)
        return None

    # ------------------------------------------------------------ uses
    def _use_writes(self, m: _Module, node: ast.AST, depth: int) -> Site | None:
        """A site where the value of ``node`` (the buffer, or a view of it) may be written, or None
        when the expression around ``node`` only reads it."""
        def site(n: ast.AST, what: str) -> Site:
            return Site(m.path, getattr(n, "lineno", 0) or getattr(node, "lineno", 0), what)

        n = node
        while True:
            p = m.up(n)
            if p is None:
                return None
            if isinstance(p, ast.Attribute) and p.value is n:
                q = m.up(p)
                if isinstance(q, ast.Call) and q.func is p:  # a method call on the buffer
                    meth = p.attr
                    if meth in _VIEW_METHODS:
                        n = q
                        continue
                    if meth in _READ_METHODS or meth in _META_ATTRS:
                        if any(k.arg == "out" for k in q.keywords):
                            return site(q, f"`.{meth}(out=...)`")
                        return None
                    return site(q, f"`.{meth}()` may write it")
                if p.attr in _ALIAS_ATTRS or p.attr in self._views:
                    n = p
                    continue
                if p.attr in _META_ATTRS:
                    return None
                n = p  # another attribute of a wrapper: conservatively the same storage
                continue
            if isinstance(p, ast.Subscript):
                if p.value is n:
                    if isinstance(p.ctx, ast.Store):
                        return site(p, "store into its rows")
                    if isinstance(p.ctx, ast.Del):
                        return site(p, "`del` of its rows")
                    n = p  # a slice: a view
                    continue
                return None  # used as an index into another tensor
            if isinstance(p, (ast.Tuple, ast.List)) and isinstance(m.up(p), ast.Subscript) and m.up(p).slice is p:
                return None  # part of an index
            if isinstance(p, ast.AugAssign):
                return site(p, "augmented assignment") if p.target is n else None
            if isinstance(p, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                if p.value is not n:
                    return site(p, "store")  # n is a target (a view of the buffer assigned to)
                targets = p.targets if isinstance(p, ast.Assign) else [p.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        w = self._name_writes(m, t, depth)
                        if w is not None:
                            return w
                    else:
                        return site(p, "stored in another place")
                return None
            if isinstance(p, ast.Call):
                return self._arg_writes(m, p, n, depth, site)
            if isinstance(p, ast.keyword):
                call = m.up(p)
                if isinstance(call, ast.Call):
                    if p.arg == "out":
                        return site(call, "`out=` of a call")
                    return self._arg_writes(m, call, p, depth, site)
                return site(p, "keyword")
            if isinstance(p, ast.Starred):
                return site(p, "unpacked into a call or container")
            if isinstance(p, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.JoinedStr, ast.FormattedValue,
                              ast.Assert, ast.Expr, ast.If, ast.While)):
                return None
            if isinstance(p, ast.IfExp):
                if p.test is n:
                    return None
                n = p  # `a if c else buf`: the result may be the buffer
                continue
            return site(p, f"escapes ({type(p).__name__.lower()})")

    def _name_writes(self, m: _Module, target: ast.Name, depth: int) -> Site | None:
        """Uses of a local name bound to the buffer, from its binding to the next binding of the name."""
        key = (m.key, id(target))
        if key in self._name_written:
            return self._name_written[key]  # in progress: its other uses are being judged by the caller
        self._name_written[key] = None
        w = self._name_writes_now(m, target, depth)
        self._name_written[key] = w
        return w

    def _name_writes_now(self, m: _Module, target: ast.Name, depth: int) -> Site | None:
        fn = m.function_of(target)
        if fn is None:
            return Site(m.path, target.lineno, f"module-level name `{target.id}`")
        line = target.lineno
        stores = sorted(n.lineno for n in ast.walk(fn)
                        if isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Store)
                        and n.lineno > line)
        if any(isinstance(x, (ast.For, ast.While)) for x in self._ancestors(m, target, fn)):
            end = getattr(fn, "end_lineno", line)  # in a loop: a later use may run before the rebinding
        else:
            end = stores[0] if stores else getattr(fn, "end_lineno", line)
        binding = m.up(target)
        own = {id(x) for x in ast.walk(binding.value)} \
            if isinstance(binding, (ast.Assign, ast.AnnAssign)) and binding.value is not None else set()
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load) \
                    and line <= n.lineno <= end and n is not target:
                if id(n) in own:
                    continue  # the right-hand side of the binding itself (`x = x[:n]`)
                w = self._use_writes(m, n, depth)
                if w is not None:
                    return w
        return None

    @staticmethod
    def _ancestors(m: _Module, node: ast.AST, stop: ast.AST):
        p = m.up(node)
        while p is not None and p is not stop:
            yield p
            p = m.up(p)

    def _arg_writes(self, m: _Module, call: ast.Call, arg: ast.AST, depth: int, site) -> Site | None:
        """``arg`` (an argument node or keyword) passed to ``call``: may the callee write it?"""
        func = call.func
        if arg is func:
            return site(call, "called")
        name = _dotted(func)
        last = name.rsplit(".", 1)[-1] if name else (func.attr if isinstance(func, ast.Attribute) else "")
        head = name.split(".", 1)[0] if name else ""
        if isinstance(func, ast.Name) and name in _PURE_BUILTINS:
            return None
        if head in _MODULES and "." in name:
            if last in _ALIAS_MODULE_FUNCS:
                return self._use_writes(m, call, depth)
            if last in _PURE_MODULE_FUNCS:
                return None
            return site(call, f"passed to `{name}`")
        if isinstance(func, ast.Attribute) and last in _DICT_DEFAULTS:
            return self._use_writes(m, call, depth)  # the result may be the buffer
        if isinstance(func, ast.Attribute) and (last.endswith("_") and not last.startswith("_")) \
                and not isinstance(arg, ast.keyword):
            # `dst.copy_(buf)`, `x.index_copy_(0, i, buf)`: an in-place method writes its receiver
            if not self._functions_named(last):
                return None
        if depth >= MAX_DEPTH:
            return site(call, f"passed to `{name or last}` (not followed further)")
        if self.p.is_sink_constructor(name or last) or self._is_dataclass_call(m, func):
            kw = arg.arg if isinstance(arg, ast.keyword) else None
            if kw is None:
                return site(call, f"passed positionally to `{name or last}`")
            return self._field_writes(kw, depth + 1)
        fns = self._functions_named(last) if last else []
        if not fns:
            return site(call, f"passed to `{name or last}`, which may write it")
        for fm, fn in fns:
            w = self._param_writes(fm, fn, call, arg, depth + 1, isinstance(func, ast.Attribute))
            if w is not None:
                return w
        return None

    def _is_dataclass_call(self, m: _Module, func: ast.AST) -> bool:
        name = _dotted(func)
        if not name or not name.rsplit(".", 1)[-1][:1].isupper():
            return False
        info = self.project.module(m.key)
        t = self.project.resolve(info, name) if info is not None else None
        return isinstance(t, ClassInfo) and t.is_dataclass

    def _field_writes(self, fld: str, depth: int) -> Site | None:
        """A write of any ``.fld`` in the project (the object's field holding the buffer)."""
        if fld in self._field_written:
            return self._field_written[fld]
        self._field_written[fld] = Site("", 0, f"field `{fld}` (cycle)")  # in progress: assume written
        found: Site | None = None
        for fm in self._modules_with(fld):
            for node in fm.attrs.get(fld, ()):
                if isinstance(node.ctx, ast.Store):
                    continue  # the field rebound to another tensor: not a write into this one
                w = self._use_writes(fm, node, depth) if not isinstance(node.ctx, ast.Del) else None
                if w is not None:
                    found = w
                    break
            if found is not None:
                break
        self._field_written[fld] = found
        return found

    def _param_writes(self, m: _Module, fn: ast.AST, call: ast.Call, arg: ast.AST, depth: int,
                      method: bool) -> Site | None:
        args = fn.args
        params = [a.arg for a in (*args.posonlyargs, *args.args)]
        if method and params and params[0] in ("self", "cls"):
            params = params[1:]
        name: str | None
        if isinstance(arg, ast.keyword):
            if arg.arg is None:
                return Site(m.path, call.lineno, "passed in `**kwargs`")
            name = arg.arg if arg.arg in params or arg.arg in [a.arg for a in args.kwonlyargs] else None
            if name is None:
                return Site(m.path, fn.lineno, f"passed to `{fn.name}` through `**{args.kwarg.arg}`"
                            if args.kwarg else f"keyword `{arg.arg}` unknown to `{fn.name}`")
        else:
            pos = [a for a in call.args]
            i = pos.index(arg) if arg in pos else -1
            if i < 0 or any(isinstance(a, ast.Starred) for a in pos[:i + 1]):
                return Site(m.path, call.lineno, "unpacked argument")
            if i >= len(params):
                return Site(m.path, fn.lineno, f"passed to `{fn.name}` through `*{args.vararg.arg}`"
                            if args.vararg else "extra argument")
            name = params[i]
        key = (m.key, fn.lineno, name)
        if key in self._param_written:
            return self._param_written[key]
        self._param_written[key] = Site(m.path, fn.lineno, f"parameter `{name}` of `{fn.name}` (cycle)")
        found: Site | None = None
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == name:
                if isinstance(n.ctx, ast.Store):
                    continue
                w = self._use_writes(m, n, depth)
                if w is not None:
                    found = w
                    break
        self._param_written[key] = found
        return found
