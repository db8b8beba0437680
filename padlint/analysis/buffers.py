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
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from padlint.analysis.kernels import is_jit, pointer_write
from padlint.analysis.project import ClassInfo, Project, bind_arguments
from padlint.profile import Profile

EMPTY = "empty"  # InitialValue.value of an uninitialised allocation
# `getattr(obj, name)` / `setattr(obj, name, v)` with a computed (not quoted) attribute name
_COMPUTED_GETATTR = re.compile(r"\b(?:get|set)attr\s*\(\s*[^,()]+,\s*(?![\"'\s])")
UNKNOWN_VALUE = "?"  # InitialValue.value of an allocation whose value is not one known literal

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
# builtins whose result is one of their arguments, or holds them (``max(a, b)``, ``sorted([a, b])``)
_ARG_RETURNING_BUILTINS = frozenset({"max", "min", "sorted", "list", "tuple", "reversed", "iter", "next"})
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
_IN_PROGRESS = object()  # a memo entry being computed


@dataclass(frozen=True)
class Site:
    """One place in the project: file, 1-based line, and what happens there."""

    path: str
    line: int
    what: str


@dataclass(frozen=True)
class InitialValue:
    """A buffer's value in every row when nothing writes it after allocation.

    ``value``: the literal text (``0``, ``False``, ``-1``), :data:`EMPTY`, or :data:`UNKNOWN_VALUE`
    (``torch.arange``, ``torch.full(n, var)``, allocations that disagree): fresh storage that no
    step writes, so never stale, but of a value not judged here;
    ``site``: the first allocation (the one a message names)."""

    value: str
    site: Site
    #: the value as the code writes it when it is no literal but one reference
    #: (``torch.full(n, self.num_tokens_per_bs)``: ``self.num_tokens_per_bs``); "" otherwise
    expr: str = ""
    #: every allocation is ``torch.arange(n)`` / ``np.arange(n)``: row i holds i
    arange: bool = False


@dataclass
class BufferFacts:
    """Allocations and writes of the buffers named ``attr`` across the project."""

    attr: str
    allocations: list[tuple[Site, str | None]] = field(default_factory=list)  # (site, value; None: unknown)
    writes: list[Site] = field(default_factory=list)
    owners: set[str] = field(default_factory=set)  # class keys whose methods allocate ``self.attr``
    # (at least one is needed: a buffer only ever stored from outside its class is not claimed)
    aranges: int = 0  # allocations that are `torch.arange(n)` / `np.arange(n)` (row i holds i)

    @property
    def never_written(self) -> bool:
        return not self.writes

    def initial(self) -> InitialValue | None:
        """The one value every allocation writes, when all are known and nothing writes later."""
        if self.writes or not self.allocations:
            return None
        values = {v for _, v in self.allocations}
        if None in values:
            return None  # stored from something else than an allocator: maybe another buffer
        site = min((s for s, _ in self.allocations), key=lambda s: (s.path, s.line))
        return InitialValue(values.pop() if len(values) == 1 else UNKNOWN_VALUE, site,
                            arange=self.aranges == len(self.allocations))


class _Module:
    """A parsed module with parent links (built once per module)."""

    def __init__(self, key: str, path: str, tree: ast.Module):
        self.key = key
        self.path = path
        self.tree = tree
        self.parent: dict[int, ast.AST] = {}
        self.attrs: dict[str, list[ast.Attribute]] = {}
        self.keys: dict[str, list[ast.AST]] = {}  # string key -> reads of a dict's value under it
        self.params: dict[str, list[ast.AST]] = {}  # parameter name -> functions taking it
        self.functions: dict[str, list[ast.AST]] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
            if isinstance(node, ast.Attribute):
                self.attrs.setdefault(node.attr, []).append(node)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                    and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                self.keys.setdefault(node.slice.value, []).append(node)  # d["key"]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str):
                self.keys.setdefault(node.args[1].value, []).append(node)  # getattr(obj, "key")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in _DICT_DEFAULTS and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                self.keys.setdefault(node.args[0].value, []).append(node)  # d.get("key"), d.pop("key", x)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, []).append(node)
                a = node.args
                for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                    self.params.setdefault(arg.arg, []).append(node)

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
        self._classes: dict[str, list[str]] = {}
        self._quoted: dict[str, list[str]] = {}
        self._declared: dict[str, bool] = {}
        self._paths: dict[str, str] = {}
        self._field_written: dict[tuple[str, str | None], Site | None] = {}
        self._receivers: dict[tuple[str, int, str], str | None] = {}  # see _receiver_class
        self._related_memo: dict[tuple[str, str], bool] = {}  # see _related
        self._param_written: dict[tuple[str, int, str], Site | None] = {}
        self._name_written: dict[tuple[str, int, int], Site | None] = {}
        self._returns_to: dict[int, tuple[_Module, ast.Call]] = {}  # followed callee -> (module, call)
        self._cycles = 0  # cycles met so far (see _memo)
        self._cuts = 0  # searches stopped by MAX_DEPTH so far (see _memo)
        self._wrappers = dict(profile.wrapper_allocators)
        self._views = {*profile.shared_views, profile.device_view}
        self._construction: dict[str, list | None] = {}  # see _constructions

    # ------------------------------------------------------------ queries
    def facts(self, attr: str) -> BufferFacts:
        """Allocations and writes of every buffer named ``attr`` in the project."""
        f = self._facts.get(attr)
        if f is None:
            f = self._facts[attr] = self._compute(attr)
        return f

    def initial(self, attr: str) -> InitialValue | None:
        """The value every buffer named ``attr`` holds in every row at every step: known when every
        store of ``.attr`` in the project is an allocation, nothing in the project may write such a
        buffer after, and no object gets an ``attr`` another way (a class-level field or default,
        a dataclass or NamedTuple field filled by its constructor, ``setattr(obj, "attr", ...)``).
        Then any object's ``attr`` is one of those allocations, whatever its class."""
        f = self.facts(attr)
        init = f.initial()
        if init is None or not f.owners or self._declared_elsewhere(attr):
            return None
        return init

    def construction_value(self, attr: str, classes: frozenset[str] | None = None) -> dict[str, InitialValue] | None:
        """What each view of a buffer named ``attr`` holds in every row once the code that
        allocates it has run: ``{"": v}`` for a plain tensor, ``{"#host": v, "#dev": v}`` for a
        wrapper (the profile's shared views and device view).  The allocation value
        (:meth:`_alloc_value`), then the whole-buffer fills that follow the allocation in the same
        block of statements (``self.x.np.fill(1)``, ``self.x.fill_(-1)``, ``self.x[:] = 0``; the
        profile's ``copy_to_device`` without arguments copies the host value to the device); a
        later statement of that block that does anything else with ``self.x`` ends the search with
        the value unknown.  ``classes``: the class keys (with their bases) the buffer's object
        may be of; only allocations in their bodies count (None: every allocation of
        ``self.attr`` in the project).  The allocations that count must agree, and each must be
        a known allocator call (else None).  The first dummy run (a profile run, a capture, a
        warm-up: they run before any step) reads these values in rows no write reached."""
        allocs = self._constructions(attr)
        found: dict[str, InitialValue] | None = None
        for owner, got in allocs:
            if classes is not None and owner not in classes:
                continue
            if got is None:
                return None
            if found is not None and {k: (v.value, v.expr) for k, v in found.items()} != \
                    {k: (v.value, v.expr) for k, v in got.items()}:
                return None
            found = found or got
        return found

    def _constructions(self, attr: str) -> list[tuple[str, dict[str, InitialValue] | None]]:
        """``(class key, views)`` of every ``self.attr = ...`` store in a class body's methods of
        the project (views None where it is not a known allocation), and ``(class key, None)``
        for a class whose constructor (``__init__``, ``__post_init__``) does anything else with
        ``self.attr`` (a subclass that fills it after ``super().__init__()``, a use before the
        allocation): its value is not known."""
        if attr in self._construction:
            return self._construction[attr]
        self._index_texts()
        store = re.compile(rf"\.\s*{re.escape(attr)}\s*(?::[^=\n]*)?=(?!=)")
        mention = re.compile(rf"\bself\.{re.escape(attr)}\b")
        out: list[tuple[str, dict[str, InitialValue] | None]] = []
        for key in self._words.get(attr, ()):
            text = self._text(key)
            if not store.search(text) and not (_CONSTRUCTOR_TEXT.search(text) and mention.search(text)):
                continue
            m = self._module(key)
            if m is None:
                continue
            handled: set[int] = set()  # `self.attr` nodes an allocation's scan accounted for
            for node in m.attrs.get(attr, ()):
                if not isinstance(node.ctx, ast.Store):
                    continue
                p = m.up(node)
                if isinstance(p, ast.AugAssign) or not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    continue  # a write (judged elsewhere), or a store on another object (of a class
                    # not known here: its holder finds no allocation of its own and claims nothing)
                value = p.value if isinstance(p, (ast.Assign, ast.AnnAssign)) else None
                if value is None or isinstance(value, ast.Constant) and value.value is None:
                    continue  # a declaration, a placeholder
                cls = m.class_of(node)
                if cls is None:
                    continue
                handled.add(id(node))
                out.append((f"{m.key}:{self._qual(m, cls)}", self._constructed(m, cls, p, attr, value, handled)))
            for node in m.attrs.get(attr, ()):
                if id(node) in handled or not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    continue
                p = m.up(node)
                if isinstance(node.ctx, ast.Store) and isinstance(p, (ast.Assign, ast.AnnAssign)) and (
                        p.value is None or isinstance(p.value, ast.Constant) and p.value.value is None):
                    continue  # a declaration or a `None` placeholder
                fn = m.function_of(node)
                cls = m.class_of(node)
                if cls is not None and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and fn.name in _CONSTRUCTORS and m.class_of(fn) is cls:
                    out.append((f"{m.key}:{self._qual(m, cls)}", None))
        self._construction[attr] = out
        return out

    def _constructed(self, m: _Module, cls: ast.ClassDef, stmt: ast.stmt, attr: str, value: ast.AST,
                     handled: set[int]) -> dict[str, InitialValue] | None:
        """The views' values after the allocation ``stmt`` and the statements that follow it, in
        its block and, past the end of the block, after each enclosing compound statement (a fill
        after the ``with`` / ``if`` / ``try`` that holds the allocation), up to the function's
        end.  The ``self.attr`` nodes accounted for go into ``handled``."""
        v0 = self._alloc_value(value)
        if v0 is None:
            return None
        site = Site(m.path, stmt.lineno, f"`.{attr}` allocated")
        name = _dotted(value.func) if isinstance(value, ast.Call) else ""
        wrapper = any(name == w or name.rsplit(".", 1)[-1] == w.rsplit(".", 1)[-1] for w in self._wrappers)
        first = (v0, "")
        if v0 == UNKNOWN_VALUE:
            ref = _fill_reference(value)
            lit = self._resolve(m, cls, ref) if ref else None
            first = (lit, "") if lit is not None else (v0, ref)
        views = {"#host": first, "#dev": first} if wrapper else {"": first}
        shared = set(self.p.shared_views)
        for later in _statements_after(m, stmt):
            uses = [n for n in ast.walk(later) if isinstance(n, ast.Attribute) and n.attr == attr
                    and isinstance(n.value, ast.Name) and n.value.id == "self"]
            if not uses:
                if _helper_touches(m, cls, later, attr):
                    # `self._init_buffers()` after the allocation, and that method uses `self.attr`:
                    # what it leaves there is not read here
                    return {k: InitialValue(UNKNOWN_VALUE, site) for k in views}
                continue
            fill = _whole_fill(later, attr, self.p.fill_methods, self._literal)
            if fill is None:
                copy = _device_copy(later, attr, self.p.copy_to_device)
                if copy and wrapper:
                    views["#dev"] = views["#host"]
                    handled.update(id(n) for n in uses)
                    continue
                return {k: InitialValue(UNKNOWN_VALUE, site) for k in views}
            handled.update(id(n) for n in uses)
            view, v, ref = fill
            if v is None and ref:
                v = self._resolve(m, cls, ref)
            got = (v, "") if v is not None else (UNKNOWN_VALUE, ref)
            targets = ["#host"] if view in shared else ["#dev"] if view == self.p.device_view else list(views)
            for k in targets:
                if k in views:
                    views[k] = got
        return {k: InitialValue(v, site, expr) for k, (v, expr) in views.items()}

    def _resolve(self, m: _Module, cls: ast.ClassDef, ref: str) -> str | None:
        """The literal a reference stands for: a module-level name assigned once with a literal
        (``PAD = 1``), or ``self.x`` stored once in the class's methods with one; else None."""
        values: list[ast.AST] = []
        if "." not in ref:
            for st in m.tree.body:
                if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == ref for t in st.targets):
                    values.append(st.value)
                elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == ref:
                    values.append(st.value)
        elif ref.startswith("self.") and ref.count(".") == 1:
            name = ref[len("self."):]
            for node in m.attrs.get(name, ()):
                if isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                        and m.class_of(node) is cls:
                    p = m.up(node)
                    values.append(p.value if isinstance(p, (ast.Assign, ast.AnnAssign)) else None)
        if len(values) != 1 or values[0] is None:
            return None
        return self._literal(values[0]) if not isinstance(values[0], (ast.Name, ast.Attribute)) else None

    def row_written(self, attr: str, row: int) -> Site | None:
        """A statement that writes row ``row`` of the buffers named ``attr`` (or every row):
        ``x.attr[row] = v``, ``x.attr[row, :] = v``, ``x.attr[row:k] = v``, ``x.attr[:] = v``,
        ``x.attr[row].fill_(v)``, ``x.attr.zero_()`` / ``fill_`` / ``copy_``.  A store through
        computed indices (``x.attr[indices] = v``) does not prove that row written.  None when
        nothing in the project does."""
        fills = {*self.p.fill_methods, "copy_", "normal_", "uniform_", "random_"}

        def whole(sl: ast.AST) -> bool:
            return isinstance(sl, ast.Slice) and sl.lower is None and sl.upper is None and sl.step is None

        def covers_row(sl: ast.AST) -> bool:
            if isinstance(sl, ast.Tuple):
                if not sl.elts or not all(whole(e) for e in sl.elts[1:]):
                    return False  # `t[0, :k]`, `t[:, 0]`: part of the row, or a column
                sl = sl.elts[0]
            if isinstance(sl, ast.Constant) and sl.value == row and isinstance(row, int):
                return True
            if isinstance(sl, ast.Slice) and sl.step is None:
                lo = sl.lower
                if lo is None or (isinstance(lo, ast.Constant) and isinstance(lo.value, int) and lo.value <= row):
                    hi = sl.upper
                    return hi is None or (isinstance(hi, ast.Constant) and isinstance(hi.value, int)
                                          and hi.value > row)
            return isinstance(sl, ast.Constant) and sl.value is Ellipsis
        for m in self._modules_with(attr):
            for node in m.attrs.get(attr, ()):
                parent = m.up(node)
                if isinstance(parent, ast.Subscript) and parent.value is node and covers_row(parent.slice):
                    up = m.up(parent)
                    if isinstance(parent.ctx, ast.Store) and not isinstance(up, ast.AugAssign) or (
                            isinstance(up, ast.Attribute) and up.attr in fills
                            and isinstance(m.up(up), ast.Call)):
                        return Site(m.path, parent.lineno, f"writes row {row} of `.{attr}`")
                if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in fills \
                        and isinstance(m.up(parent), ast.Call):
                    return Site(m.path, parent.lineno, f"writes every row of `.{attr}`")
        return None

    def _declared_elsewhere(self, attr: str) -> bool:
        """A class-level declaration of ``attr`` (``attr: T``, ``attr = v`` in a class body), a
        ``setattr``/``__dict__`` store naming it anywhere in the project, or its name quoted
        in a module that fetches attributes by a computed name (``getattr(src, slot.name)``)."""
        if attr in self._declared:
            return self._declared[attr]
        self._index_texts()
        line = re.compile(rf"^[ \t]+{re.escape(attr)}\s*[:=]", re.M)
        dynamic = re.compile(rf"(setattr\s*\(|__dict__\s*\[)[^\n]*[\"']{re.escape(attr)}[\"']")
        quoted = re.compile(rf"[\"']{re.escape(attr)}[\"']")
        found = False
        for key in self._paths:
            text = self._text(key)
            if attr not in text:
                continue
            if dynamic.search(text):
                found = True
                break
            if quoted.search(text) and _COMPUTED_GETATTR.search(text):
                # the name as a string where attributes are fetched by a computed name: a registry
                # binding its slots by name (`GraphSlot("positions", ...)`, `getattr(source,
                # slot.name)`) hands the buffer to code that writes it
                found = True
                break
            if line.search(text):
                m = self._module(key)
                for node in ast.walk(m.tree) if m is not None else ():
                    if isinstance(node, ast.ClassDef) and any(
                            isinstance(st, (ast.AnnAssign, ast.Assign)) and any(
                                isinstance(t, ast.Name) and t.id == attr
                                for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))
                            for st in node.body):
                        found = True
                        break
            if found:
                break
        self._declared[attr] = found
        return found

    # ------------------------------------------------------------ modules
    def _module(self, key: str) -> _Module | None:
        """The module parsed here with ``ast`` (not through the project: a module the project
        parses becomes a candidate for its name resolution, which must not change because
        this index looked at it)."""
        if key not in self._mods:
            self._index_texts()
            mod: _Module | None = None
            path, text = self._paths.get(key, ""), self._text(key)
            if text:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        mod = _Module(key, path, ast.parse(text))
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    mod = None
            self._mods[key] = mod
        return self._mods[key]

    def _text(self, key: str) -> str:
        if key in self.project._sources:
            return self.project._sources[key][1]
        path = self._paths.get(key)
        return self.project.text_of(key, Path(path)) if path else ""

    def _modules_with(self, attr: str) -> Iterator[_Module]:
        """Modules whose text has ``.attr`` (one pass over the project's texts, then a lookup),
        each parsed when the caller gets to it.  The modules the analysis already reached come
        first (the runner and what it calls): where a buffer is written, if anywhere, and the
        facts stop at the first write."""
        self._index_texts()
        loaded = self.project.loaded_modules()
        for key in sorted(self._words.get(attr, ()), key=lambda k: k not in loaded):
            m = self._module(key)
            if m is not None:
                yield m

    def _modules_with_param(self, name: str) -> Iterator[_Module]:
        """Modules with a function that has a parameter ``name`` (text prefilter, then parsed),
        each parsed when the caller gets to it: the facts stop at the first write (``input_ids``
        is a parameter of every model's ``forward``: hundreds of modules)."""
        self._index_texts()
        pat = re.compile(rf"\b{re.escape(name)}\b")
        for key in list(self._paths):
            text = self._text(key)
            if name in text and "def " in text and pat.search(text):
                m = self._module(key)
                if m is not None and name in m.params:
                    yield m

    def _modules_quoting(self, key: str) -> list[_Module]:
        """Modules whose text has the string ``"key"`` or ``'key'``."""
        self._index_texts()
        out = []
        for k in self._quoted.get(key, ()):
            m = self._module(k)
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
        classes: dict[str, list[str]] = {}
        paths = {k: str(p) for k, p in self.project.files()}
        for key, (path, _text) in self.project._sources.items():
            paths[key] = path
        self._paths = paths
        word = re.compile(r"\.\s*([A-Za-z_]\w*)")
        define = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(")
        klass = re.compile(r"^\s*class\s+([A-Za-z_]\w*)", re.M)
        quoted = re.compile(r"[\"']([A-Za-z_]\w*)[\"']")
        quotes: dict[str, list[str]] = {}
        for key in paths:
            text = self._text(key)
            for w in set(word.findall(text)):
                words.setdefault(w, []).append(key)
            for w in set(define.findall(text)):
                defs.setdefault(w, []).append(key)
            for w in set(klass.findall(text)):
                classes.setdefault(w, []).append(key)
            for w in set(quoted.findall(text)):
                quotes.setdefault(w, []).append(key)
        self._words = words
        self._defs = defs
        self._classes = classes
        self._quoted = quotes

    # ------------------------------------------------------------ facts
    def _compute(self, attr: str) -> BufferFacts:
        """The buffer's facts.  Only whether it is written matters to :meth:`initial`, so the
        search stops at the first write: first a scan of the texts for writes that need no
        parse (``.attr[i] = v``, ``.attr.np[:n] += v``, ``.attr.gpu[a:b].fill_(v)``), then every
        use, parsed, module by module."""
        f = BufferFacts(attr)
        w = self._text_write(attr)
        if w is not None:
            f.writes.append(w)
            return f
        for m in self._modules_with(attr):
            for node in m.attrs.get(attr, ()):
                self._classify_attr(m, node, f)
                if f.writes:
                    return f  # written: nothing later changes the answer
        return f

    def _text_write(self, attr: str) -> Site | None:
        """A line of the project's text that writes rows of ``.attr`` on its own: a store into a
        subscript, an augmented assignment, or an in-place method (``name_``) on the buffer or a
        slice or view of it.  Each is a write by the same rules as :meth:`_use_writes`.  A line
        with a ``#`` before the match is left to the parsed uses (a comment); a match inside a
        string (a docstring's example) claims a write that is not there: the safe direction,
        the buffer's padding rows are then judged stale, not holding their allocation value."""
        self._index_texts()
        views = "|".join(re.escape(v) for v in sorted({*_ALIAS_ATTRS, *self._views}))
        head = rf"\.\s*{re.escape(attr)}\b(?:\.(?:{views})\b)*"
        sub = r"(?:\[[^\]\n]*\])"
        pat = re.compile(
            rf"{head}(?:{sub}+\s*=(?!=)"  # x.attr[i] = v
            rf"|{sub}*\s*(?:\*\*|//|>>|<<|[-+*/%&|^@])=" # x.attr[i] += v
            rf"|{sub}*\.(?!_)\w+_\()")  # x.attr[:n].fill_(v)
        for key in self._words.get(attr, ()):
            text = self._text(key)
            for mt in pat.finditer(text):
                start = text.rfind("\n", 0, mt.start()) + 1
                if "#" in text[start:mt.start()]:
                    continue  # in a comment (or after a `#` in a string: left to the parsed uses below)
                line = text.count("\n", 0, mt.start()) + 1
                return Site(self._paths.get(key, key), line, f"write of `.{attr}`'s rows")
        return None

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
            if _is_arange(value):
                f.aranges += 1
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
                and value.func.attr in ("to", "cuda", "cpu", "pin_memory", "contiguous", "repeat",
                                        "repeat_interleave", "clone", "reshape", "view", "flatten") \
                and isinstance(value.func.value, ast.Call):
            # torch.zeros(n).to(device); torch.arange(k).repeat(n): fresh storage whose every
            # row holds what the allocation's rows hold
            value = value.func.value
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
            return self._literal(arg) or UNKNOWN_VALUE
        return UNKNOWN_VALUE  # arange, tensor, array, full(n, var): fresh storage, a value not known here

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
            if isinstance(p, (ast.Tuple, ast.List)) and isinstance(m.up(p), ast.Call) \
                    and any(a is p for a in m.up(p).args):
                n = p  # `torch.cat([buf, pad])`: the callee gets the buffer in a list it is passed
                continue
            if isinstance(p, (ast.Tuple, ast.List)) and isinstance(q := m.up(p), ast.Assign) and q.value is p \
                    and len(q.targets) == 1 and isinstance(q.targets[0], (ast.Tuple, ast.List)) \
                    and len(q.targets[0].elts) == len(p.elts) \
                    and not any(isinstance(e, ast.Starred) for e in (*p.elts, *q.targets[0].elts)):
                # `a, b = buf, other`: the buffer is bound to the target in its position
                t = q.targets[0].elts[next(i for i, e in enumerate(p.elts) if e is n)]
                if isinstance(t, ast.Name):
                    return self._name_writes(m, t, depth)
                return site(q, "stored")
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
                    elif isinstance(t, ast.Attribute) and isinstance(p, ast.Assign) and len(targets) == 1:
                        # `fb.mamba_track_mask = buf[:n]`: another object's field holds the buffer;
                        # judged by every use of that field name in the project, as a dict key is,
                        # except on objects of a class the holder's class is not related to
                        return self._field_writes(t.attr, depth + 1, self._receiver_class(m, t.value)) \
                            if depth < MAX_DEPTH else \
                            self._cut(site(p, f"stored as `.{t.attr}` (not followed further)"))
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
            if isinstance(p, ast.Dict) and n in p.values:
                k = p.keys[p.values.index(n)]
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier():
                    # `{"is_prefilling": buf}`: a keyword dict (`**kwargs`) or a record: judged by every
                    # use of that name as a field, a keyword or a string key in the project
                    return self._field_writes(k.value, depth + 1) if depth < MAX_DEPTH else \
                        self._cut(site(p, f"stored under `{k.value!r}` (not followed further)"))
                return site(p, "stored in a dict")
            if isinstance(p, ast.comprehension) and n in p.ifs:
                return None  # a condition of a comprehension
            if isinstance(p, (ast.Slice, ast.Raise)):
                return None  # a slice bound, an exception raised
            if isinstance(p, ast.IfExp):
                if p.test is n:
                    return None
                n = p  # `a if c else buf`: the result may be the buffer
                continue
            if isinstance(p, (ast.Return, ast.Lambda)) and (isinstance(p, ast.Return) or p.body is n):
                fn = p if isinstance(p, ast.Lambda) else m.function_of(p)
                back = self._returns_to.get(id(fn))
                if back is not None:  # a followed callee returns it: the call's value is the buffer
                    return self._use_writes(back[0], back[1], depth)
                return site(p, "returned")
            return site(p, f"escapes ({type(p).__name__.lower()})")

    def _name_writes(self, m: _Module, target: ast.Name, depth: int) -> Site | None:
        """Uses of a local name bound to the buffer, from its binding to the next binding of the name."""
        back = self._returns_to.get(id(m.function_of(target)))
        key = (m.key, id(target), id(back[1]) if back else 0)  # a callee's return goes to its call site
        return self._memo(self._name_written, key, lambda: self._name_writes_now(m, target, depth))

    def _memo(self, table: dict, key, compute) -> Site | None:
        """``compute()`` once per key.  A key met again while it is computed (a cycle: the value
        flows back where it came from) adds no use that the computation in progress does not
        judge: None there.  A "no write" that relied on such a cycle is not kept (it holds only
        inside the computation that was in progress), nor a "may write" that only the depth
        bound produced (a search of the same key from a shallower use may reach the end)."""
        if key in table:
            v = table[key]
            if v is _IN_PROGRESS:
                self._cycles += 1
                return None
            return v
        table[key] = _IN_PROGRESS
        before, cuts = self._cycles, self._cuts
        try:
            w = compute()
        except BaseException:
            del table[key]
            raise
        if w is None and self._cycles > before:
            del table[key]
        elif w is not None and self._cuts > cuts:
            # a "may write" that the depth bound produced holds for a search started this deep;
            # the same key asked from a shallower use may follow the use to its end
            del table[key]
        else:
            table[key] = w
        return w

    def _cut(self, site: Site) -> Site:
        """A use not followed past :data:`MAX_DEPTH`: conservatively a write (see :meth:`_memo`)."""
        self._cuts += 1
        return site

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
        if isinstance(func, ast.Name) and name in _ARG_RETURNING_BUILTINS:
            return self._use_writes(m, call, depth)  # `max(a, b)`, `sorted([a, b])`: the result is an argument
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
            return self._cut(site(call, f"passed to `{name or last}` (not followed further)"))
        if self.p.is_sink_constructor(name or last) or self._is_dataclass_call(m, func):
            kw = arg.arg if isinstance(arg, ast.keyword) else None
            if kw is None:
                return site(call, f"passed positionally to `{name or last}`")
            return self._field_writes(kw, depth + 1)
        if isinstance(func, ast.Subscript) and (kname := _dotted(func.value)):
            # `kernel[grid](buf, ...)`: a Triton kernel launch; the kernel writes a pointer
            # argument only through `tl.store` / `tl.atomic_*` (judged in its body)
            kernels = [(fm, fn) for fm, fn in self._functions_named(kname.rsplit(".", 1)[-1]) if is_jit(fn)]
            bound = [(fm, fn, p) for fm, fn in kernels if (p := self._bind(fn, call, arg, False)) is not None]
            if not bound:
                return site(call, f"passed to kernel `{kname}`, which may write it")
            for fm, fn, param in bound:
                w = pointer_write(fn, param)
                if w is not None:
                    return Site(fm.path, w[0], w[1])
            return None
        fns = self._functions_named(last) if last else []
        lam = self._local_lambda(m, call) if isinstance(func, ast.Name) else None
        if lam is not None:
            fns = [(m, lam)]
        if not fns:
            return site(call, f"passed to `{name or last}`, which may write it")
        bound = [(fm, fn, p) for fm, fn in fns
                 if (p := self._bind(fn, call, arg, isinstance(func, ast.Attribute))) is not None]
        if not bound:  # no project function of that name takes this argument: another callee
            return site(call, f"passed to `{name or last}`, which may write it")
        for fm, fn, param in bound:
            w = self._param_writes(fm, fn, call, param, depth + 1, m)
            if w is not None:
                return w
        return None

    @staticmethod
    def _bind(fn: ast.AST, call: ast.Call, arg: ast.AST, method: bool) -> str | None:
        """The parameter of ``fn`` that ``arg`` of ``call`` binds to; None when the call cannot
        be a call of ``fn`` (too many arguments, an unknown keyword) or the argument is unpacked
        into ``*args``/``**kwargs`` (then nothing is known of it)."""
        args = fn.args
        params = [a.arg for a in (*args.posonlyargs, *args.args)]
        # the names a keyword may bind: those after the positional-only ones (``def f(self, /,
        # buf)``: ``buf``), counted before the receiver is left out
        named = params[len(args.posonlyargs):] + [a.arg for a in args.kwonlyargs]
        if method and params and params[0] in ("self", "cls"):
            named = [n for n in named if n != params[0]]
            params = params[1:]
        target = arg.value if isinstance(arg, ast.keyword) else arg
        return next((p for p, a in bind_arguments(call, params, named).items() if a is target), None)

    @staticmethod
    def _local_lambda(m: _Module, call: ast.Call) -> ast.Lambda | None:
        """``f(...)`` where ``f = lambda ...`` is bound in the calling function."""
        fn = m.function_of(call)
        if fn is None:
            return None
        found = None
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == call.func.id for t in n.targets):
                if not isinstance(n.value, ast.Lambda):
                    return None  # also bound to something else
                found = n.value
        return found

    def _is_dataclass_call(self, m: _Module, func: ast.AST) -> bool:
        """``Name(...)`` where every project class called ``Name`` is a dataclass (by name)."""
        name = _dotted(func).rsplit(".", 1)[-1]
        if not name or not name[:1].isupper():
            return False
        self._index_texts()
        found = False
        for key in self._classes.get(name, ()):
            cm = self._module(key)
            for node in ast.walk(cm.tree) if cm is not None else ():
                if isinstance(node, ast.ClassDef) and node.name == name:
                    if not any("dataclass" in _dotted(d.func if isinstance(d, ast.Call) else d)
                               for d in node.decorator_list):
                        return False
                    found = True
        return found

    def _field_writes(self, fld: str, depth: int, owner: str | None = None) -> Site | None:
        """A write of any ``.fld`` in the project (the object's field holding the buffer).
        ``owner``: the class key of the object holding it, when known: a ``.fld`` read from an
        object of a class no object of ``owner``'s class can be (:meth:`_related`) is another
        object's field."""
        return self._memo(self._field_written, (fld, owner), lambda: self._field_writes_now(fld, depth, owner))

    def _receiver_class(self, m: _Module, expr: ast.AST) -> str | None:
        """The class key of the object ``expr`` names, where the code says it: ``self`` in a
        method (its class), a parameter annotated with a project class and never rebound."""
        if not isinstance(expr, ast.Name):
            return None
        fn = m.function_of(expr)
        if fn is None or isinstance(fn, ast.Lambda):
            return None
        key = (m.key, id(fn), expr.id)
        if key in self._receivers:
            return self._receivers[key]
        out = None
        a = fn.args
        params = (*a.posonlyargs, *a.args, *a.kwonlyargs)
        rebound = any(isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Store)
                      for n in ast.walk(fn))
        if not rebound and params and expr.id == params[0].arg == "self":
            cls = m.up(fn)
            if isinstance(cls, ast.ClassDef):
                out = f"{m.key}:{self._qual(m, cls)}"
        elif not rebound:
            for arg in params:
                if arg.arg == expr.id and arg.annotation is not None:
                    ann = arg.annotation
                    name = ann.value if isinstance(ann, ast.Constant) and isinstance(ann.value, str) \
                        else _dotted(ann)
                    mod = self.project.module(m.key) if name else None
                    t = self.project.resolve(mod, name) if mod is not None else None
                    out = t.key if isinstance(t, ClassInfo) else None
        self._receivers[key] = out
        return out

    def _related(self, a: str, b: str) -> bool:
        """Whether an object of class ``a`` may be one of class ``b`` (:meth:`Project.may_share_object`;
        unknown classes: yes)."""
        if a == b:
            return True
        key = (a, b) if a < b else (b, a)
        got = self._related_memo.get(key)
        if got is None:
            ca, cb = self.project.class_info(a), self.project.class_info(b)
            got = self._related_memo[key] = ca is None or cb is None or self.project.may_share_object(ca, cb)
        return got

    def _field_writes_now(self, fld: str, depth: int, owner: str | None = None) -> Site | None:
        found: Site | None = None
        for fm in self._modules_quoting(fld):
            for node in fm.keys.get(fld, ()):
                # `d["fld"]`, `d.get("fld")`, `d.pop("fld", default)`: the value stored under that key
                w = self._use_writes(fm, node, depth)
                if w is not None:
                    return w
        for fm in self._modules_with_param(fld):
            for fn in fm.params.get(fld, ()):
                # a parameter of that name (`f(**kwargs)` binds the dict's entry, a dataclass's
                # `__post_init__`-style helpers take the field by name): its uses in the function
                for n in ast.walk(fn):
                    if isinstance(n, ast.Name) and n.id == fld and isinstance(n.ctx, ast.Load):
                        w = self._use_writes(fm, n, depth)
                        if w is not None:
                            return w
        for fm in self._modules_with(fld):
            for node in fm.attrs.get(fld, ()):
                if isinstance(node.ctx, ast.Store):
                    continue  # the field rebound to another tensor: not a write into this one
                if owner is not None and (other := self._receiver_class(fm, node.value)) is not None \
                        and not self._related(owner, other):
                    continue  # the field of an object of an unrelated class
                w = self._use_writes(fm, node, depth) if not isinstance(node.ctx, ast.Del) else None
                if w is not None:
                    found = w
                    break
            if found is not None:
                break
        return found

    def _param_writes(self, m: _Module, fn: ast.AST, call: ast.Call, name: str, depth: int,
                      caller: _Module) -> Site | None:
        """May ``fn`` (or what it passes its parameter ``name`` on to) write that parameter?"""
        key = (m.key, fn.lineno, fn.col_offset, name, id(call))
        return self._memo(self._param_written, key, lambda: self._param_writes_now(m, fn, call, name, depth, caller))

    def _param_writes_now(self, m: _Module, fn: ast.AST, call: ast.Call, name: str, depth: int,
                          caller: _Module) -> Site | None:
        saved = self._returns_to.get(id(fn))
        if caller is not None:
            self._returns_to[id(fn)] = (caller, call)
        found: Site | None = None
        try:
            for n in ast.walk(fn):
                if isinstance(n, ast.Name) and n.id == name:
                    if isinstance(n.ctx, ast.Store):
                        continue
                    w = self._use_writes(m, n, depth)
                    if w is not None:
                        found = w
                        break
        finally:
            if saved is None:
                self._returns_to.pop(id(fn), None)
            else:
                self._returns_to[id(fn)] = saved
        return found


_CONSTRUCTORS = ("__init__", "__post_init__")
_CONSTRUCTOR_TEXT = re.compile(r"\bdef\s+__(?:post_)?init__\b")


def _statements_after(m: _Module, stmt: ast.stmt):
    """The statements that run after ``stmt`` in its function: the rest of its block, then the
    rest of each enclosing block after the compound statement holding it."""
    cur: ast.AST = stmt
    while True:
        parent = m.up(cur)
        if parent is None:
            return
        block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                      if isinstance(b, list) and any(x is cur for x in b)), None)
        if block is not None:
            i = next(i for i, x in enumerate(block) if x is cur)
            yield from block[i + 1:]
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module, ast.Lambda)):
            return
        cur = parent
        while not isinstance(cur, ast.stmt):  # an `except` handler, a `match` case: its statement
            cur = m.up(cur)
            if cur is None:
                return


def _helper_touches(m: _Module, cls: ast.ClassDef, stmt: ast.stmt, attr: str, depth: int = 3,
                    seen: set[str] | None = None) -> bool:
    """Whether ``stmt`` calls a method of ``cls`` (``self.m(...)``, defined in the class's body in
    this module) that uses ``self.attr``, directly or through its own such calls (``depth``
    levels)."""
    seen = set() if seen is None else seen
    for call in ast.walk(stmt):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"):
            continue
        name = call.func.attr
        if name in seen:
            continue
        seen.add(name)
        for fn in m.functions.get(name, ()):
            if m.up(fn) is not cls:
                continue
            if any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name)
                   and n.value.id == "self" for n in ast.walk(fn)):
                return True
            if depth > 1 and any(_helper_touches(m, cls, st, attr, depth - 1, seen) for st in fn.body):
                return True
    return False


def _reference(node: ast.AST | None) -> str:
    """The source of a name or attribute chain (``self.num_tokens_per_bs``), else ""."""
    d = _dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else ""
    return d or ""


def _fill_reference(call: ast.AST) -> str:
    """The fill value of ``torch.full(shape, x)`` / ``full_like(t, x)`` when ``x`` is a reference."""
    if not isinstance(call, ast.Call):
        return ""
    last = (_dotted(call.func) or "").rsplit(".", 1)[-1]
    if last not in ("full", "full_like"):
        return ""
    arg = next((k.value for k in call.keywords if k.arg == "fill_value"), None)
    if arg is None and len(call.args) >= 2:
        arg = call.args[1]
    return _reference(arg)


def _whole_fill(stmt: ast.stmt, attr: str, fill_methods, literal) -> tuple[str, str | None, str] | None:
    """``(view, value, reference)`` for a statement that fills every row of ``self.attr`` or of one
    of its views (``self.x.fill_(v)``, ``self.x.np.fill(v)``, ``self.x.zero_()``, ``self.x[:] = v``,
    ``self.x.gpu[:] = v``): view "" for the buffer itself; value None when not a literal, and then
    the reference it writes (``self.width``) or ""."""
    def target(node: ast.AST) -> str | None:
        if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
                and node.value.id == "self":
            return ""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == attr \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "self":
            return node.attr
        return None

    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        call = stmt.value
        view = target(call.func.value)
        if view is None or call.func.attr not in fill_methods or call.keywords:
            return None
        if call.func.attr == "zero_" and not call.args:
            return view, "0", ""
        return (view, literal(call.args[0]), _reference(call.args[0])) if len(call.args) == 1 else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        sub = stmt.targets[0]
        sl = sub.slice
        if isinstance(sl, ast.Slice) and sl.lower is None and sl.upper is None and sl.step is None:
            view = target(sub.value)
            if view is not None:
                return view, literal(stmt.value), _reference(stmt.value)
    return None


def _device_copy(stmt: ast.stmt, attr: str, copy_methods) -> bool:
    """``self.attr.copy_to_gpu()`` with no arguments: every row of the host view to the device."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in copy_methods and not call.args and not call.keywords \
        and isinstance(f.value, ast.Attribute) and f.value.attr == attr and isinstance(f.value.value, ast.Name) \
        and f.value.value.id == "self"


def _is_arange(value: ast.AST | None) -> bool:
    """``torch.arange(n)`` / ``np.arange(n, dtype=...)`` (one positional argument: rows 0..n-1),
    also followed by ``.to(...)`` / ``.cuda()`` / ``.pin_memory()``."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in ("to", "cuda", "cpu", "pin_memory", "contiguous") and isinstance(value.func.value, ast.Call):
        value = value.func.value
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and not isinstance(value.args[0], ast.Starred)):
        return False
    name = _dotted(value.func) or ""
    return name.rsplit(".", 1)[-1] == "arange" and name.split(".")[0] in ("torch", "np", "numpy") \
        and not any(k.arg in ("start", "end", "step") for k in value.keywords)
