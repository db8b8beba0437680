"""Project index: modules, classes, methods, imports and attribute types, built lazily.

The whole-program engine asks this index where a call goes
(``self.input_batch.condense()``, ``build_attn_metadata(...)`` imported by
name, ``super().m()``, ``self.model_state.prepare_attn(...)`` with several
possible classes).  Everything here is read with CPython's ``ast``: a module
is parsed the first time something asks for it, never before, and a module
that cannot be found, read or parsed is simply absent (the analysis loses
precision there, it never fails the run).  Nothing is imported or run.

Vocabulary: a *module key* is a dotted module name (``pkg.runner``); a
*class key* is ``module:Class``; a *function key* is ``module:qualname``
(``pkg.runner:Runner.execute_model`` or ``pkg.attn_utils:build_attn_metadata``).
"""

from __future__ import annotations

import ast
import bisect
import collections
import os
import re
import warnings
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

from padlint.model import LINE_BREAK, split_lines
from padlint.prefilter import writes_rows

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef


def _not_defs(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body`` other than ``def``s and classes."""
    return [st for st in body if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


class FuncHeader(NamedTuple):
    """What callers ask of a ``def`` line (:meth:`FunctionInfo.header`)."""

    decorators: frozenset[str]  # names of its plain decorators (`@property`)
    params: tuple[str, ...]     # its positional parameters, in order
    returns: bool               # whether it has a return annotation


def bind_arguments(call: ast.Call, params: Iterable[str],
                   keywords: Iterable[str] | None = None) -> dict[str, ast.AST]:
    """Parameter -> argument for the arguments of ``call`` that bind a named parameter of a
    function whose positional parameters the call fills are ``params`` (the receiver left out
    where the call passes it implicitly, :meth:`FunctionInfo.call_params`): positional
    arguments in order up to the first ``*args`` (nothing after it is known) and beyond none
    past the last parameter; keywords by name, only those in ``keywords`` where it is given
    (the names a keyword may bind).  ``**kwargs`` binds nothing.  The one binding every scan
    of call arguments uses (PAD004's builders, kernel launches, the call graph's guards)."""
    out: dict[str, ast.AST] = {}
    allowed = None if keywords is None else set(keywords)
    for kw in call.keywords:  # (keywords first: a caller that keeps the first of a parameter's uses)
        if kw.arg is not None and (allowed is None or kw.arg in allowed):
            out[kw.arg] = kw.value
    for name, arg in zip(params, call.args):
        if isinstance(arg, ast.Starred):
            break
        out.setdefault(name, arg)
    return out


@dataclass
class FunctionInfo:
    """A module-level function or a method of a top-level class.

    Its ``node`` is made on first use and kept (see :class:`ModuleInfo`): a function the
    analysis never reads holds no syntax tree."""

    key: str                 # "pkg.mod:Cls.meth" / "pkg.mod:func"
    module: str
    name: str
    owner: str               # class key ("pkg.mod:Cls"), or "" for a module function
    where: tuple[int, int]   # (line, column) of the ``def`` keyword: finds the node in the tree
    ancestors: tuple[int, ...]  # column offsets of enclosing class lines (for re-parsing)
    start: int               # first line, decorators included
    end: int                 # last line
    mod: ModuleInfo = field(repr=False, compare=False)
    _node: FuncNode | None = field(default=None, repr=False, compare=False)
    _header: FuncHeader | None = field(default=None, repr=False, compare=False)  # read once: :meth:`header`

    def header(self) -> FuncHeader:
        """What callers ask of the ``def`` line, kept without the body's tree: the names of its
        plain decorators (``@property``, not ``@functools.cache`` or ``@x.setter``), its
        positional parameters (``posonlyargs`` and ``args``, in order), and whether it has a
        return annotation."""
        if self._header is None:
            node = self.peek()
            a = node.args
            self._header = FuncHeader(
                decorators=frozenset(d.id for d in node.decorator_list if isinstance(d, ast.Name)),
                params=tuple(x.arg for x in (*a.posonlyargs, *a.args)),
                returns=node.returns is not None)
        return self._header

    def call_params(self, bound: bool) -> tuple[str, ...]:
        """The positional parameters a call's arguments fill: a method's receiver is left out
        where the call is ``bound`` (``self.m(a)``, ``obj.m(a)``) or the method is a class
        method, and kept where the call passes it (``Cls.m(obj, a)``); a static method has
        none."""
        header = self.header()
        names = header.params
        if self.owner and names and "staticmethod" not in header.decorators \
                and (bound or "classmethod" in header.decorators):
            names = names[1:]
        return names

    @property
    def node(self) -> FuncNode:
        if self._node is None:
            self._node = self.peek()
        return self._node

    def peek(self) -> FuncNode:
        """The ``def`` node for one scan whose result the caller keeps by key (a class's
        attribute types, the call graph's callees): the held node where there is one, else one
        made for this use and not kept, so that the thousands of functions the call graph reads
        once hold no syntax tree (on vLLM 0.33.0 they were most of the peak memory).  Nothing
        may key a sub-node by ``id`` beyond the scan."""
        if self._node is not None:
            return self._node
        return self.mod.def_node(self.where, self.start, self.end, self.ancestors)


@dataclass
class ClassInfo:
    key: str
    module: str
    name: str
    where: tuple[int, int]                 # (line, column) of the ``class`` keyword
    mod: ModuleInfo = field(repr=False, compare=False)
    bases: list[str] = field(default_factory=list)  # dotted base expressions as written
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # attribute -> dotted type expressions as written (``InputBatch``, ``attn_utils.Builder``)
    attr_types: dict[str, set[str]] = field(default_factory=dict)
    fields: list[str] = field(default_factory=list)  # class-level annotated names (dataclass fields)
    is_dataclass: bool = False
    nonempty: set | None = None            # attributes a method asserts non-empty (lazy)
    methods_scanned: bool = False  # attr_types from the methods' assignments added (lazily)
    # attribute -> the sibling attributes it holds when every assignment is one fixed tuple or
    # list of `self.X` (``self.spec_buffers = (self.a, self.b)``); None: assigned anything else
    attr_tuples: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    # attribute -> dotted class names of the elements of the container it holds, at any depth
    # (``metadata_builders: list[AttentionMetadataBuilder]``, ``list[list[AttentionGroup]]``)
    elem_types: dict[str, set[str]] = field(default_factory=dict)
    # attribute -> names of the methods that store ``self.<attr>`` (assignment, annotated or
    # augmented assignment)
    stored_in: dict[str, set[str]] = field(default_factory=dict)

    start: int = 0                         # first line, decorators included
    end: int = 0                           # last line
    _node: ast.ClassDef | None = field(default=None, repr=False, compare=False)
    _items: list[ast.stmt] | None = field(default=None, repr=False, compare=False)

    @property
    def node(self) -> ast.ClassDef:
        if self._node is None:
            self._node = self.mod.def_node(self.where, self.start, self.end, ())
        return self._node

    def items(self) -> list[ast.stmt]:
        """The statements of the class body other than ``def``s and nested classes (fields and
        class attributes: ``x: int``, ``metadata_cls = FooMetadata``), kept; read from the held
        node, else from a parse of the class that hands out and keeps none of its methods' nodes
        (a class read for its fields alone then holds no method body)."""
        if self._items is None:
            node = self._node if self._node is not None else \
                self.mod.def_node(self.where, self.start, self.end, (), adopt=False)
            self._items = _not_defs(node.body)
        return self._items


@dataclass
class ModuleInfo:
    """One indexed module.

    Its syntax tree is parsed to index it, then kept only while it is one of the last
    :data:`Project.SPARE_TREES` modules the project indexed.  A function's or class's ``node``
    comes, on first use, from that tree while there is one, else from a held class node's body,
    else from a parse of its own lines, and is kept by the function or class; :attr:`tree`
    (whole-module scans) keeps the module's tree for good, parsing the text again if it was
    dropped.  Most modules are read only to resolve a name, or for a few functions: what they
    keep is the functions the analysis read.  A node is never replaced once handed out: every
    way of reaching one function (its info, its class's body, its module's tree) gives that node;
    a new parse adopts the nodes handed out."""

    key: str
    path: str
    text: str
    is_package: bool = False
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, attr)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    _tree: ast.Module | None = field(default=None, repr=False, compare=False)   # kept for good
    _spare: ast.Module | None = field(default=None, repr=False, compare=False)  # the index's, droppable
    _top: list[ast.stmt] | None = field(default=None, repr=False, compare=False)  # top_statements
    _lines: list[str] | None = field(default=None, repr=False, compare=False)  # lines, once asked for
    _starts: array | None = field(default=None, repr=False, compare=False)  # offset of each line's start

    @property
    def package(self) -> str:
        """The package its relative imports start from: itself for a package's ``__init__``."""
        return self.key if self.is_package else self.key.rpartition(".")[0]

    @property
    def lines(self) -> list[str]:
        """The module's lines with their ends, split on first use and kept (a module read only
        to resolve names, or for :meth:`line_text`, never splits its text)."""
        if self._lines is None:
            self._lines = split_lines(self.text, keepends=True)
        return self._lines

    def line_text(self, start: int, end: int) -> str:
        """``"".join(self.lines[start - 1:end])`` from the text itself, for ``start >= 1`` and
        ``end >= 0`` (line numbers, as a function's span gives them)."""
        if self._lines is not None:
            return "".join(self._lines[start - 1:end])
        starts = self._line_starts()
        n = len(self.text)
        a = starts[start - 1] if start - 1 < len(starts) else n
        b = starts[end] if end < len(starts) else n
        return self.text[a:b] if b > a else ""

    def _line_starts(self) -> array:
        """The offset in :attr:`text` of each line's start, computed on first use and kept."""
        if self._starts is None:
            self._starts = array("L", [0])
            self._starts.extend(m.end() for m in LINE_BREAK.finditer(self.text))
        return self._starts

    def line_at(self, offset: int) -> int:
        """The number (from 1) of the line of :attr:`text` that holds character ``offset``."""
        return bisect.bisect_right(self._line_starts(), offset)

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            tree, self._spare = self._spare, None
            if tree is None:
                tree = _parse(self.text, self.path)
                if tree is None:  # it parsed when indexed: only memory can fail now
                    raise MemoryError(f"cannot parse {self.path} again")
                self._adopt(tree.body, [*self.functions.values(), *self.classes.values()])
            self._tree = tree
        return self._tree

    def top_statements(self) -> list[ast.stmt]:
        """The module-level statements other than ``def``s and classes (imports, constants,
        module-level containers), kept: what a question about a module-level name reads, without
        keeping the module's tree."""
        if self._top is None:
            self._top = _not_defs(self.peek_tree().body)
        return self._top

    def peek_tree(self) -> ast.Module:
        """The module's tree for one scan whose result does not hold on to its nodes by identity
        (a rule's pass over every statement): the kept tree or the index's spare where there is
        one, else a parse made for this use and not kept (:meth:`FunctionInfo.peek`).  Its
        function nodes are not the ones :attr:`FunctionInfo.node` hands out."""
        tree = self._tree or self._spare
        if tree is None:
            tree = _parse(self.text, self.path)
            if tree is None:  # it parsed when indexed: only memory can fail now
                raise MemoryError(f"cannot parse {self.path} again")
        return tree

    @staticmethod
    def _adopt(body: list, infos: list) -> None:
        """Make ``body`` (a new parse's module or class body) and the functions and classes
        ``infos`` share their nodes: a node already handed out replaces the new one in ``body``,
        the others are handed out from ``body``.  One function is then one node, whichever way
        the analysis reaches it (its info, its class's body, its module's tree)."""
        by_where = {i.where: i for i in infos}
        for k, node in enumerate(body):
            info = by_where.get(_at(node))
            if info is None or info.name != getattr(node, "name", None):
                continue
            if info._node is not None:
                body[k] = info._node
                continue
            info._node = node
            if isinstance(info, ClassInfo):
                ModuleInfo._adopt(node.body, list(info.methods.values()))

    def def_node(self, where: tuple[int, int], start: int, end: int, ancestors: tuple[int, ...],
                 adopt: bool = True):
        """The ``def``/``class`` node of a top-level function, class or method whose keyword is
        at ``where``, spanning lines ``start``-``end`` inside classes at columns ``ancestors``.
        ``adopt=False``: a class parsed here hands its methods' nodes to no one (a node for one
        read, not kept)."""
        for c in self.classes.values():  # a method of a class whose node is held: from its body
            if c._node is not None and c.start <= where[0] <= c.end and c.where != where:
                found = _find_def(c._node.body, where, nested=False)
                if found is not None:
                    return found
        tree = self._tree or self._spare
        found = _find_def(tree.body, where) if tree is not None else None
        if found is not None:
            return found
        # the function's own lines, after empty lines so that the lines are the file's (cheaper
        # than renumbering the nodes)
        seg = _parse(segment_text(self.line_text(start, end), start, len(ancestors), pad=True), self.path)
        node = seg.body[0] if seg is not None and seg.body else None
        for _ in ancestors:
            node = node.body[0] if isinstance(node, ast.ClassDef) and node.body else None
        if node is None or _at(node) != where:
            # lines that do not parse alone: the module's tree (kept from now on)
            found = _find_def(self.tree.body, where)
            if found is None:
                raise LookupError(f"no definition at line {where[0]} of {self.path}")
            return found
        if isinstance(node, ast.ClassDef) and adopt:  # its methods: the nodes already handed out
            cls = next((c for c in self.classes.values() if c.where == where), None)
            if cls is not None:
                self._adopt(node.body, list(cls.methods.values()))
        return node


def segment_text(body: str, start: int, depth: int, pad: bool = False) -> str:
    """``body``, the text of a file's lines from ``start`` on (one function or class), as a text
    that parses alone: a ``class _:`` line per enclosing class (``depth``; column 0, below any
    method's indentation, whatever column a form feed gave the class), and a last newline (it
    ends a function whose last line ends in a backslash).  ``pad``: after empty lines, so that
    line numbers are the file's."""
    blank = "\n" * max(0, start - 1 - depth) if pad else ""
    return blank + "class _:\n" * depth + body + "\n"


def _at(node: ast.AST) -> tuple[int, int]:
    """(line, column) of a statement: where a ``def``/``class`` keyword is."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _find_def(body: list, where: tuple[int, int], nested: bool = True):
    """The statement of ``body`` at ``where``, or (``nested``) a method at ``where`` in one of
    its classes; None."""
    for node in body:
        if _at(node) == where:
            return node
        if nested and isinstance(node, ast.ClassDef) and node.lineno < where[0] <= (node.end_lineno or 0):
            found = _find_def(node.body, where, nested=False)
            if found is not None:
                return found
    return None


def _parse(text: str, path: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _span(node) -> tuple[int, int]:
    """First line (decorators included) and last line of a ``def`` or ``class``."""
    return (min([d.lineno for d in node.decorator_list] + [node.lineno]), node.end_lineno or node.lineno)


def _dotted(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _mentions_none(ann: ast.AST | None) -> bool:
    """An annotation that admits None: ``T | None``, ``Optional[T]``, ``Union[T, None]``, ``"T | None"``."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.Constant) and ann.value is None:
        return True
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _mentions_none(ann.left) or _mentions_none(ann.right)
    if isinstance(ann, ast.Subscript):
        head = (_dotted(ann.value) or "").rsplit(".", 1)[-1]
        if head == "Optional":
            return True
        if head == "Union":
            elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return any(_mentions_none(e) for e in elts)
    return False


def _type_names(ann: ast.AST | None) -> list[str]:
    """Dotted class names an annotation may denote: ``X``, ``X | None``, ``Optional[X]``, ``"X"``."""
    if ann is None:
        return []
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return []
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _type_names(ann.left) + _type_names(ann.right)
    if isinstance(ann, ast.Subscript):
        head = _dotted(ann.value) or ""
        if head.rsplit(".", 1)[-1] in ("Optional", "Union"):
            inner = ann.slice
            elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return [n for e in elts for n in _type_names(e)]
        return []
    name = _dotted(ann)
    if name and name not in ("None",):
        return [name]
    return []


_CONTAINERS = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "MutableSequence", "dict", "Dict",
                         "Mapping", "MutableMapping", "set", "Set", "frozenset", "FrozenSet", "Iterable",
                         "Collection", "deque", "defaultdict", "OrderedDict"})


def _elem_type_names(ann: ast.AST | None) -> list[str]:
    """Class names of a container annotation's elements (a dict's values), at any depth:
    ``list[X]``, ``dict[int, X]``, ``list[list[X]]``, ``tuple[X, ...]``, ``Optional[list[X]]``."""
    if ann is None:
        return []
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return []
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _elem_type_names(ann.left) + _elem_type_names(ann.right)
    if not isinstance(ann, ast.Subscript):
        return []
    head = (_dotted(ann.value) or "").rsplit(".", 1)[-1]
    elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    if head in ("Optional", "Union"):
        return [n for e in elts for n in _elem_type_names(e)]
    if head not in _CONTAINERS:
        return []
    if head in ("dict", "Dict", "Mapping", "MutableMapping", "defaultdict", "OrderedDict"):
        elts = elts[-1:]  # the values
    out: list[str] = []
    for e in elts:
        if isinstance(e, ast.Constant) and e.value is Ellipsis:
            continue
        out.extend(_elem_type_names(e) or _type_names(e))
    return out


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = _dotted(target) or ""
        if name.rsplit(".", 1)[-1] == "dataclass":
            return True
    return False


def _index_class(owner: ModuleInfo, node: ast.ClassDef, col: int) -> ClassInfo:
    mod = owner.key
    key = f"{mod}:{node.name}"
    first, last = _span(node)
    info = ClassInfo(key=key, module=mod, name=node.name, where=(node.lineno, node.col_offset), mod=owner,
                     start=first, end=last,
                     # a generic base `AttentionMetadataBuilder[GDNAttentionMetadata]` is its class
                     bases=[b for b in (_dotted(x.value if isinstance(x, ast.Subscript) else x)
                                        for x in node.bases) if b],
                     is_dataclass=_is_dataclass(node))
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if item.name in info.methods and any(
                    isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in item.decorator_list):
                continue  # `@x.setter`: the method `x` stays the property's getter
            info.methods[item.name] = FunctionInfo(f"{key}.{item.name}", mod, item.name, key,
                                                   (item.lineno, item.col_offset), (col,), *_span(item), owner)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            info.fields.append(item.target.id)
            names = _type_names(item.annotation)
            if names:
                info.attr_types.setdefault(item.target.id, set()).update(names)
            elems = _elem_type_names(item.annotation)
            if elems:
                info.elem_types.setdefault(item.target.id, set()).update(elems)
    return info


def scan_method_attr_types(info: ClassInfo) -> None:
    """Add attribute types from the methods: ``self.x = Cls(...)``, ``self.x: T = ...``,
    ``self.x = param`` with an annotated parameter.  Done once per class, on demand."""
    if info.methods_scanned:
        return
    info.methods_scanned = True
    for meth in info.methods.values():
        fn = meth.peek()
        params: dict[str, list[str]] = {}
        args = fn.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            names = _type_names(a.annotation)
            if names:
                params[a.arg] = names
        for sub in ast.walk(fn):
            if isinstance(sub, ast.AugAssign):
                t = sub.target
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    info.stored_in.setdefault(t.attr, set()).add(meth.name)
                continue
            if isinstance(sub, ast.AnnAssign):
                targets, value, ann = [sub.target], sub.value, sub.annotation
            elif isinstance(sub, ast.Assign):
                targets, value, ann = sub.targets, sub.value, None
            else:
                continue
            for t in targets:
                if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"):
                    continue
                info.stored_in.setdefault(t.attr, set()).add(meth.name)
                members = None
                if isinstance(value, (ast.Tuple, ast.List)) and value.elts and all(
                        isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"
                        for e in value.elts):
                    members = tuple(e.attr for e in value.elts)
                prev = info.attr_tuples.get(t.attr, members)
                info.attr_tuples[t.attr] = members if prev == members else None
                elems = _elem_type_names(ann)
                if elems:
                    info.elem_types.setdefault(t.attr, set()).update(elems)
                names = _type_names(ann)
                names.extend(_value_type_names(value, params))
                if names:
                    info.attr_types.setdefault(t.attr, set()).update(names)


def _value_type_names(value: ast.AST | None, params: dict[str, list[str]]) -> list[str]:
    """The classes (or factories) a stored value may be: ``Cls(...)``, an annotated parameter,
    and each branch of ``A(...) if c else B(...)`` and of ``p or Cls(...)`` (``None`` adds
    nothing: a dispatch through the attribute then follows the classes it may hold)."""
    if isinstance(value, ast.Call):
        callee = _dotted(value.func)
        return [callee] if callee else []  # a class, or a factory function (its return annotation/constructions)
    if isinstance(value, ast.Name):
        return list(params.get(value.id, ()))
    if isinstance(value, ast.IfExp):
        return _value_type_names(value.body, params) + _value_type_names(value.orelse, params)
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return [n for v in value.values for n in _value_type_names(v, params)]
    return []


def index_module(key: str, path: str, text: str, *, is_package: bool = False) -> ModuleInfo | None:
    """Index one module's text; None when it does not parse.  Its tree is kept as the module's
    spare (see :class:`ModuleInfo`)."""
    tree = _parse(text, path)
    if tree is None:
        return None
    info = ModuleInfo(key=key, path=path, text=text, is_package=is_package, _spare=tree)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.functions[node.name] = FunctionInfo(f"{key}:{node.name}", key, node.name, "",
                                                     (node.lineno, node.col_offset), (), *_span(node), info)
        elif isinstance(node, ast.ClassDef):
            info.classes[node.name] = _index_class(info, node, node.col_offset)
    for node in _statements(tree.body):  # imports in any statement (vLLM imports lazily in functions)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, target in import_bindings(node, info.package):
                info.imports.setdefault(name, target)
    return info


def import_bindings(node: ast.Import | ast.ImportFrom, package: str) -> list[tuple[str, tuple[str, str | None]]]:
    """The names an import statement binds in a module of ``package``, each with what it
    denotes, as :attr:`ModuleInfo.imports` keeps it: ``(module, None)`` for a module,
    ``(module, attr)`` for a name taken from one.  A relative import above the top package
    binds nothing known; ``*`` binds nothing by name."""
    if isinstance(node, ast.Import):
        return [(a.asname, (a.name, None)) if a.asname else (a.name.split(".")[0], (a.name.split(".")[0], None))
                for a in node.names]
    base = node.module or ""
    if node.level:
        parts = package.split(".") if package else []
        up = node.level - 1
        if up > len(parts):
            return []
        prefix = ".".join(parts[:len(parts) - up]) if up else ".".join(parts)
        base = f"{prefix}.{base}".strip(".") if base else prefix
    return [(a.asname or a.name, (base, a.name)) for a in node.names if a.name != "*"]


def _statements(body: list) -> Iterable[ast.stmt]:
    """Every statement, nested ones included (bodies of defs, classes, ifs, trys...), but not
    expressions: cheaper than ``ast.walk`` where only statements matter."""
    todo = list(reversed(body))
    while todo:
        st = todo.pop()
        yield st
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(st, name, None)
            if isinstance(sub, list):
                todo.extend(reversed(sub))


def _inside_package(d: Path, levels: int = 4) -> bool:
    """A directory without ``__init__.py`` that is a namespace subpackage of a regular
    package (SGLang 0.5.23's ``sglang/srt/``): an ancestor within ``levels`` has one, and
    every name on the way is an identifier."""
    if not d.name.isidentifier():
        return False
    a = d.parent
    for _ in range(levels):
        if not a.name.isidentifier():
            return False
        if (a / "__init__.py").is_file():
            return True
        if a.parent == a:
            return False
        a = a.parent
    return False


#: Dotted-name parts that mark a module as test code (pytest's conventions, and the packages
#: engines ship their test kits in: SGLang's ``sglang/test/``).
_TEST_PARTS = frozenset({"test", "tests", "testing", "conftest"})


def is_test_module(key: str) -> bool:
    """Whether the module ``key`` is test code: a dotted part named ``test``/``tests``/
    ``testing``/``conftest``, or a ``test_*`` / ``*_test`` module or package."""
    return any(p in _TEST_PARTS or p.startswith("test_") or p.endswith("_test") for p in key.split("."))


def find_root(path: str) -> tuple[Path, str] | None:
    """(directory holding the top package, dotted module name) of a Python file."""
    p = Path(os.path.abspath(path))
    if p.suffix != ".py":
        return None
    parts = [] if p.name == "__init__.py" else [p.stem]
    d = p.parent
    while (d / "__init__.py").is_file() or _inside_package(d):
        parts.insert(0, d.name)
        if d.parent == d:
            break
        d = d.parent
    if not parts:
        return None
    return d, ".".join(parts)


class Project:
    """Lazily indexed modules under one or more roots (directories holding top packages).

    ``read(path) -> str | None`` reads a file's text (the pipeline's decoder,
    so that encodings and bad files are handled in one place); modules handed
    in with :meth:`add_source` are indexed from the given text (checked files,
    standard input).
    """

    #: a bound on the modules one run indexes (memory): past it a module reads as missing, which
    #: lowers precision silently, so it sits well above a large engine (SGLang 0.5.23's tree run
    #: indexes 3,297 of the package's 4,716 modules; vLLM 0.33.0's 2,459 of 3,231)
    MAX_MODULES = 12000
    #: how many of the last indexed modules keep the tree their index was built from, for a use
    #: that follows soon (most modules are indexed only to resolve a name; see :class:`ModuleInfo`)
    SPARE_TREES = 32

    def __init__(self, read: Callable[[str], str | None] | None = None):
        self._read = read or _read_text
        self.roots: list[Path] = []
        self._modules: dict[str, ModuleInfo | None] = {}
        self._sources: dict[str, tuple[str, str]] = {}   # module key -> (path, text) given
        self._path_keys: dict[str, str] = {}               # abs path -> module key
        self._files: list[tuple[str, Path]] | None = None  # every (module key, path) under the roots
        self._texts: dict[str, str] = {}
        self._mentions: dict[str, frozenset[str]] = {}  # word -> keys of the modules whose text has it
        self._file_of: dict[str, str] = {}
        self._bases: dict[str, list[str]] | None = None
        self._subclass_memo: dict[tuple[str, str], list[ClassInfo]] = {}
        self._class_attr_memo: dict[tuple[str, str], list[ClassInfo]] = {}
        self._located: dict[str, tuple[str, bool] | None] = {}
        self._mro: dict[str, list[ClassInfo]] = {}
        # function key -> (its return annotation's class names, the callees of its `return X(...)`)
        self._returned: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._spares: collections.deque[ModuleInfo] = collections.deque()
        # modules whose text cannot matter (see :meth:`set_text_filter`) are not searched for callers
        # nor parsed to resolve names (except an attribute's factory)
        self._may_matter: Callable[[str], bool] | None = None
        self._writes_memo: dict[str, bool] = {}  # module -> its text writes tensor rows in place
        self._strict: Callable[[str], bool] | None = None

    # ------------------------------------------------------------- sources
    def add_source(self, path: str, text: str, file: str | None = None) -> str:
        """Register a checked file's text (reported as ``path``; ``file``: where it lies
        on disk, default ``path``); returns its module key (a synthetic one outside packages)."""
        file = file or path
        found = find_root(file)
        if found is None:
            key = "__padlint__." + re.sub(r"\W", "_", os.path.abspath(file))
        else:
            root, key = found
            if root not in self.roots:
                self.roots.append(root)
                self._files = None
                self._located.clear()
            old = self._sources.get(key)
            if old is not None and self._file_of.get(key) != os.path.abspath(file):
                # two checked files with one module name (`build/bug.py`, `src/bug.py`): the
                # second is analysed under a name of its own
                key = f"{key}@{len(self._sources)}"
        self._sources[key] = (path, text)
        self._mentions.clear()  # the texts searched changed
        self._file_of[key] = os.path.abspath(file)
        self._path_keys[os.path.abspath(file)] = key
        self._modules.pop(key, None)
        return key

    def is_checked(self, module_key: str) -> bool:
        """Whether the module is one of the checked files (given with :meth:`add_source`)."""
        return module_key in self._sources

    def key_for_path(self, path: str) -> str | None:
        return self._path_keys.get(os.path.abspath(path))

    def _locate(self, key: str) -> tuple[str, bool] | None:
        if key in self._located:
            return self._located[key]
        found = self._located[key] = self._locate_on_disk(key)
        return found

    def _locate_on_disk(self, key: str) -> tuple[str, bool] | None:
        parts = key.split(".")
        for root in self.roots:
            base = root.joinpath(*parts)
            init = base / "__init__.py"
            if init.is_file():
                return str(init), True
            f = base.with_suffix(".py")
            if f.is_file():
                return str(f), False
        return None

    def module(self, key: str) -> ModuleInfo | None:
        """The indexed module ``key`` (parsed on first use), or None."""
        if key in self._modules:
            return self._modules[key]
        if len(self._modules) >= self.MAX_MODULES:
            return None
        info: ModuleInfo | None = None
        if key in self._sources:
            path, text = self._sources[key]
            info = index_module(key, path, text, is_package=os.path.basename(path) == "__init__.py")
        else:
            loc = self._locate(key)
            if loc is not None:
                text = self._texts.get(key)
                if text is None:
                    text = self._read(loc[0])
                if text is not None:
                    info = index_module(key, loc[0], text, is_package=loc[1])
        self._modules[key] = info
        if info is not None:
            self._spares.append(info)
            if len(self._spares) > self.SPARE_TREES:
                self._spares.popleft()._spare = None
        return info

    # ---------------------------------------------------------- resolution
    def resolve(self, mod: ModuleInfo, dotted: str, depth: int = 0, *, factory: bool = False,
                base: bool = False, imports: dict[str, tuple[str, str | None]] | None = None):
        """What a dotted name written in ``mod`` denotes at module level:
        a :class:`ClassInfo`, a :class:`FunctionInfo`, a :class:`ModuleInfo`, or None.

        ``factory``: the name gives an attribute its class (``self.x = make_x(...)``), so a
        module that mentions nothing relevant is still read for a function or a name it
        re-exports (a factory there gives the classes it returns).  ``base``: the name is a
        base class, read wherever it is defined: its methods are its subclasses' (SGLang's
        ``ForwardInputBuffers.reset_index_buffers`` zeroes the fields of every input-buffer
        class through ``dataclasses.fields(self)``, in a module that names no count).
        ``imports``: what a function's own imports bind (:func:`import_bindings`), which shadow
        the module's names inside it."""
        if depth > 8:
            return None
        head, _, rest = dotted.partition(".")
        target = None
        own = imports.get(head) if imports else None
        if own is None and head in mod.classes:
            target = mod.classes[head]
        elif own is None and head in mod.functions:
            target = mod.functions[head]
        elif own is not None or head in mod.imports:
            src, attr = own if own is not None else mod.imports[head]
            if attr is None:
                target = self.module(src)
            else:
                sub = self.module(f"{src}.{attr}") if self._exists(f"{src}.{attr}") else None
                if sub is not None:
                    target = sub
                elif base or self.text_may_matter(src) or self.text_writes_rows(src) \
                        or self._reexports(src, attr) or (factory and not self._defines_class(src, attr)):
                    # an attribute's factory in a module that mentions nothing relevant
                    # (`init_model_state() -> ModelState` in a package `__init__`): read for it.
                    # A module that writes rows of tensors in place is read too: a helper there
                    # may reset the padding rows of a buffer it is handed with counts under
                    # names of its own (`def zero_tail(buf, n, p): buf[n:p].zero_()`), or hold
                    # a runner's buffers and reset them (`self.bufs = InputBuffers(...)`); and a
                    # package that re-exports the name (`pkg/__init__.py` imports it from such a module).
                    # Otherwise a class defined there has no method that matters (unless it is
                    # a base of a class that does: `base`), and a function called there cannot
                    # touch padding rows
                    other = self.module(src)
                    if other is not None and other is not mod:
                        target = self.resolve(other, attr, depth + 1, factory=factory, base=base)
        if target is None:
            return None
        for part in rest.split(".") if rest else []:
            if isinstance(target, ModuleInfo):
                nxt = self.resolve(target, part, depth + 1)
                if nxt is None:
                    nxt = self.module(f"{target.key}.{part}")
                target = nxt
            elif isinstance(target, ClassInfo):
                found = self.find_method(target, part)
                target = found
            else:
                return None
            if target is None:
                return None
        return target

    def _exists(self, key: str) -> bool:
        return key in self._modules and self._modules[key] is not None or key in self._sources \
            or self._locate(key) is not None

    def parsed(self, key: str) -> ModuleInfo | None:
        """The module ``key`` if it is parsed already (nothing is parsed here), else None."""
        return self._modules.get(key)

    def loaded_modules(self) -> set[str]:
        """Keys of the modules parsed so far (checked files and those the analysis reached)."""
        return {k for k, m in self._modules.items() if m is not None} | set(self._sources)

    def set_text_filter(self, may_matter: Callable[[str], bool],
                        strict: Callable[[str], bool] | None = None) -> None:
        """``may_matter(text)``: False when nothing in a module's text can matter to the
        analysis; such a module is not searched for callers, nor parsed to resolve a name
        imported from it, except an attribute's factory (``resolve(..., factory=True)``).
        ``strict(text)``: False when a module mentions no padded count and no sink; its
        overrides of a method are not dispatch targets."""
        self._may_matter = may_matter
        self._strict = strict
        self._subclass_memo.clear()

    def _defines_class(self, key: str, name: str) -> bool:
        """Whether the text of module ``key`` (read by :meth:`text_may_matter`) defines a
        top-level class ``name``."""
        text = self._texts.get(key) or ""
        return re.search(rf"^class\s+{re.escape(name)}\b", text, re.M) is not None

    def _module_text(self, key: str) -> str | None:
        """The text of module ``key`` on disk (read once), or None when it cannot be found."""
        loc = self._locate(key)
        if loc is None:
            return None
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = self._read(loc[0]) or ""
        return text

    def source_text(self, key: str) -> str | None:
        """The text of module ``key``: a checked file's as handed in, else the one on disk."""
        if key in self._sources:
            return self._sources[key][1]
        return self._module_text(key)

    def text_may_matter(self, key: str) -> bool:
        if self._may_matter is None or key in self._modules or key in self._sources:
            return True
        text = self._module_text(key)
        return text is not None and self._may_matter(text)

    def text_writes_rows(self, key: str) -> bool:
        """Whether the text of module ``key`` may write rows of a tensor in place
        (:func:`padlint.prefilter.writes_rows`, tested once per module); False for a module that
        cannot be found."""
        if self._may_matter is None or key in self._modules or key in self._sources:
            return True
        got = self._writes_memo.get(key)
        if got is None:
            text = self._module_text(key)
            got = self._writes_memo[key] = text is not None and writes_rows(text)
        return got

    def _reexports(self, key: str, name: str) -> bool:
        """Whether module ``key`` is a package whose ``__init__`` imports ``name`` (a re-export:
        ``from pkg import f`` with ``f`` defined in ``pkg.utils``)."""
        loc = self._locate(key)
        if loc is None or not loc[1]:
            return False
        text = self._module_text(key) or ""
        return "import" in text and re.search(rf"\b{re.escape(name)}\b", text) is not None

    def class_info(self, key: str) -> ClassInfo | None:
        mod, _, name = key.partition(":")
        m = self.module(mod)
        return m.classes.get(name) if m is not None else None

    def function(self, key: str) -> FunctionInfo | None:
        mod, _, qual = key.partition(":")
        m = self.module(mod)
        if m is None:
            return None
        owner, _, name = qual.rpartition(".")
        if owner:
            c = m.classes.get(owner)
            return c.methods.get(name) if c is not None else None
        return m.functions.get(name)

    def bases(self, cls: ClassInfo) -> list[ClassInfo]:
        mod = self.module(cls.module)
        out = []
        for b in cls.bases:
            t = self.resolve(mod, b, base=True) if mod is not None else None
            if isinstance(t, ClassInfo) and t.key != cls.key:
                out.append(t)
        return out

    def mro(self, cls: ClassInfo) -> list[ClassInfo]:
        v = self._mro.get(cls.key)
        if v is None:
            v = self._mro[cls.key] = self._compute_mro(cls)
        return v

    def _compute_mro(self, cls: ClassInfo) -> list[ClassInfo]:
        out: list[ClassInfo] = []
        todo = [cls]
        while todo and len(out) < 32:
            c = todo.pop(0)
            if any(c.key == o.key for o in out):
                continue
            out.append(c)
            todo.extend(self.bases(c))
        return out

    def find_method(self, cls: ClassInfo, name: str, *, after: str | None = None) -> FunctionInfo | None:
        """Method ``name`` by the MRO; ``after``: start past that class (``super()``)."""
        seen = after is None
        for c in self.mro(cls):
            if not seen:
                seen = c.key == after
                continue
            if name in c.methods:
                return c.methods[name]
        return None

    def attr_classes(self, cls: ClassInfo, attr: str) -> list[ClassInfo]:
        """Classes the attribute ``self.<attr>`` of ``cls`` may hold (by the MRO's assignments
        and annotations); a base class stands for itself and its project subclasses."""
        return self._named_classes(cls, attr, elems=False)

    def attr_elem_classes(self, cls: ClassInfo, attr: str) -> list[ClassInfo]:
        """Classes of the elements of the container ``self.<attr>`` of ``cls`` holds (by its
        annotations: ``list[AttentionGroup]``); a base class stands for its subclasses too."""
        return self._named_classes(cls, attr, elems=True)

    def _named_classes(self, cls: ClassInfo, attr: str, *, elems: bool) -> list[ClassInfo]:
        """The classes the MRO's type names for ``attr`` resolve to (``attr_types``, or
        ``elem_types`` for a container's elements); a factory function stands for the classes
        it returns.  So does a method of the object's own (``self.buffers =
        self._allocate_buffers()``, the override of ``cls``), where nothing else names a class
        for the attribute (a declared type, ``self.model_runner: GPUModelRunner =
        self._make_model_runner()``, is the attribute's type, as a type checker reads it)."""
        out: dict[str, ClassInfo] = {}
        own: list[str] = []
        for c in self.mro(cls):
            mod = self.module(c.module)
            if mod is None:
                continue
            scan_method_attr_types(c)
            for name in (c.elem_types if elems else c.attr_types).get(attr, ()):
                if name.startswith("self.") and "." not in name[5:]:
                    own.append(name[5:])
                    continue
                t = self.resolve(mod, name, factory=not elems)
                if isinstance(t, ClassInfo):
                    out.setdefault(t.key, t)
                elif isinstance(t, FunctionInfo) and not elems:  # a factory: the classes it returns
                    for r in self.returned_classes(t):
                        out.setdefault(r.key, r)
        if not out and not elems:
            for name in own:
                m = self.find_method(cls, name)
                for r in self.returned_classes(m) if m is not None else ():
                    out.setdefault(r.key, r)
        return list(out.values())

    def _field_declaration(self, cls: ClassInfo, attr: str) -> ast.AnnAssign | None:
        """The class-level annotation of field ``attr`` in ``cls`` or the first base declaring it."""
        for c in self.mro(cls):
            for item in c.items():
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) \
                        and item.target.id == attr:
                    return item
        return None

    def is_required_tensor_field(self, cls: ClassInfo, attr: str) -> bool:
        """Whether ``cls`` (or a base) declares its field ``attr`` as a tensor that is never None
        (``slot_mapping: torch.Tensor`` with no ``| None``, ``Optional`` or ``= None``)."""
        item = self._field_declaration(cls, attr)
        if item is None or (isinstance(item.value, ast.Constant) and item.value.value is None):
            return False
        return (_dotted(item.annotation) or "").rsplit(".", 1)[-1] == "Tensor"

    def is_optional_field(self, cls: ClassInfo, attr: str) -> bool:
        """Whether ``cls`` (or a base) declares its field ``attr`` as possibly None
        (``x: T | None``, ``Optional[T]``, ``Union[T, None]``, or a default of None)."""
        item = self._field_declaration(cls, attr)
        if item is None:
            return False
        if isinstance(item.value, ast.Constant) and item.value.value is None:
            return True
        return _mentions_none(item.annotation)

    def is_int_field(self, cls: ClassInfo, attr: str) -> bool:
        """Whether ``cls`` (or a base) annotates its field ``attr`` as ``int`` (``num_reqs: int``
        on a metadata dataclass): a count, not a buffer."""
        item = self._field_declaration(cls, attr)
        return item is not None and isinstance(item.annotation, ast.Name) and item.annotation.id == "int"

    def attr_tuple(self, cls: ClassInfo, attr: str) -> tuple[str, ...] | None:
        """The sibling attributes ``self.<attr>`` always holds (see ``ClassInfo.attr_tuples``)."""
        for c in self.mro(cls):
            scan_method_attr_types(c)
            if attr in c.attr_tuples:
                return c.attr_tuples[attr]
        return None

    def asserted_nonempty(self, cls: ClassInfo, attr: str) -> bool:
        """Whether a method of ``cls`` (or a base) asserts ``self.<attr>`` non-empty:
        ``assert self.x``, ``assert self.x, "msg"``, ``assert len(self.x) > 0`` / ``>= 1``."""
        for c in self.mro(cls):
            found = c.nonempty
            if found is None:
                found = set()
                for m in c.methods.values():
                    if "assert" not in m.mod.line_text(m.start, m.end):
                        continue  # (read for this scan only: the answer is kept by class)
                    for sub in ast.walk(m.peek()):
                        if isinstance(sub, ast.Assert):
                            name = _nonempty_attr(sub.test)
                            if name:
                                found.add(name)
                c.nonempty = found
            if attr in found:
                return True
        return False

    def returned_classes(self, fn: FunctionInfo) -> list[ClassInfo]:
        """Classes a factory function returns: its return annotation (``-> ModelState``: that
        class, which dispatch widens to its subclasses) and the constructions it returns."""
        mod = self.module(fn.module)
        out: list[ClassInfo] = []
        if mod is None:
            return out
        # the names are syntax, kept by key; what they resolve to may grow as modules are read
        annotated, built = self._returned_names(fn)
        for name in (*annotated, *built):
            t = self.resolve(mod, name)
            if isinstance(t, ClassInfo):
                out.append(t)
        return out

    def return_annotation_names(self, fn: FunctionInfo) -> tuple[str, ...]:
        """The class names ``fn``'s return annotation may denote (``-> X | None``: ``X``)."""
        return self._returned_names(fn)[0]

    def _returned_names(self, fn: FunctionInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(:meth:`return_annotation_names`, the dotted callees of its ``return X(...)``s), read
        from a node not kept and kept by key."""
        got = self._returned.get(fn.key)
        if got is None:
            node = fn.peek()
            got = self._returned[fn.key] = (
                tuple(_type_names(node.returns)),
                tuple(name for sub in ast.walk(node) if isinstance(sub, ast.Return) and isinstance(sub.value, ast.Call)
                      for name in [_dotted(sub.value.func)] if name))
        return got

    def item_classes(self, cls: ClassInfo) -> list[ClassInfo]:
        """Classes indexing an object of ``cls`` gives: what its ``__getitem__`` (its own or a
        base's) returns (:meth:`returned_classes`: ``-> BlockTable``); empty without one."""
        getitem = self.find_method(cls, "__getitem__")
        return self.returned_classes(getitem) if getitem is not None else []

    # ------------------------------------------------------- whole project
    def files(self) -> list[tuple[str, Path]]:
        """Every (module key, path) of ``.py`` files under the roots' packages, namespace
        subpackages included (:func:`_inside_package`: SGLang 0.5.23's ``sglang/srt/`` has no
        ``__init__.py``; without it a file checked alone saw a quarter of the package)."""
        if self._files is None:
            out: list[tuple[str, Path]] = []
            seen: set[str] = set()
            for root in self.roots:
                for top in sorted(root.iterdir()) if root.is_dir() else []:
                    if not (top / "__init__.py").is_file():
                        continue
                    for dirpath, dirnames, filenames in os.walk(top):
                        dirnames[:] = sorted(d for d in dirnames if (Path(dirpath) / d / "__init__.py").is_file()
                                             or _inside_package(Path(dirpath) / d))
                        rel = Path(dirpath).relative_to(root).parts
                        for fn in sorted(filenames):
                            if not fn.endswith(".py"):
                                continue
                            parts = list(rel) + ([] if fn == "__init__.py" else [fn[:-3]])
                            key = ".".join(parts)
                            if key not in seen:
                                seen.add(key)
                                out.append((key, Path(dirpath) / fn))
            self._files = out
        return self._files

    def files_read(self) -> dict[str, str]:
        """Every file read from disk (not handed in as a source): path -> text."""
        out: dict[str, str] = {}
        paths = {k: str(p) for k, p in (self._files or [])}
        for key, text in self._texts.items():
            loc = self._located.get(key)
            path = loc[0] if loc is not None else paths.get(key)
            if path is not None:
                out[path] = text
        for key, mod in self._modules.items():
            if mod is not None and key not in self._sources:
                out[mod.path] = mod.text
        return out

    def text_of(self, key: str, path: Path) -> str:
        if key in self._sources:
            return self._sources[key][1]
        t = self._texts.get(key)
        if t is None:
            t = self._texts[key] = self._read(str(path)) or ""
        return t

    def modules_mentioning(self, words: Iterable[str]) -> list[str]:
        """Module keys whose text contains any of ``words`` (substring test on raw text): the
        package's files in their order, then the checked files outside them.  Each word's
        modules are found once (one pass over the texts) and kept until a source is added."""
        hit: set[str] = set()
        for w in words:
            got = self._mentions.get(w)
            if got is None:
                got = self._mentions[w] = frozenset(
                    [key for key, path in self.files() if w in self.text_of(key, path)]
                    + [key for key, (_path, text) in self._sources.items() if w in text])
            hit |= got
        if not hit:
            return []
        out = [key for key, _path in self.files() if key in hit]
        listed = set(out)
        out += [key for key in self._sources if key in hit and key not in listed]
        return out

    def subclass_candidates(self, cls: ClassInfo, method: str) -> list[ClassInfo]:
        """Project subclasses of ``cls`` that define ``method``, found by the text of the
        class lines (transitively, by name) and parsed only where the module's text
        defines that method; each confirmed by its MRO (memoised: the project's files and
        filters do not change during a run)."""
        key = (cls.key, method)
        got = self._subclass_memo.get(key)
        if got is None:
            got = self._subclass_memo[key] = self._subclass_candidates(cls, method)
        return list(got)

    def _subclass_candidates(self, cls: ClassInfo, method: str) -> list[ClassInfo]:
        return [c for c in self._subclasses_whose_text(cls, f"def {method}(", strict=True) if method in c.methods]

    def subclass_modules(self, cls: ClassInfo) -> list[str]:
        """Keys of the modules whose class lines name ``cls`` or, transitively, a class that
        does (by name, from the text: nothing is parsed, so the text filter still decides
        what is read)."""
        return list(dict.fromkeys(key for key, _c in self._subclass_lines(cls)))

    def subclass_keys(self, cls: ClassInfo) -> list[str]:
        """Class keys of the project classes whose class lines name ``cls`` or, transitively, a
        class that does (by name, from the text: over-inclusive, nothing is parsed)."""
        return [f"{key}:{cname}" for key, cname in self._subclass_lines(cls)]

    def may_share_object(self, a: ClassInfo, b: ClassInfo) -> bool:
        """Whether one object may be an instance of both classes: the same class, one a base of
        the other, a structural type (a ``Protocol``), or a common project subclass (a class
        line naming both, transitively, by name; yes when the search was cut)."""
        if a.key == b.key or any(c.key == b.key for c in self.mro(a)) or any(c.key == a.key for c in self.mro(b)):
            return True
        if any(base.rsplit(".", 1)[-1] == "Protocol" for c in (a, b) for k in self.mro(c) for base in k.bases):
            return True
        sa, sb = self._subclass_lines(a), self._subclass_lines(b)
        if len(sa) >= 400 or len(sb) >= 400:
            return True
        return bool(set(sa) & set(sb))

    def _subclass_lines(self, cls: ClassInfo) -> list[tuple[str, str]]:
        """(module, class) of every class line that names ``cls`` or, transitively, a class
        that does, by name (at most 400)."""
        names = {cls.name}
        todo = [cls.name]
        found: list[tuple[str, str]] = []
        while todo and len(found) < 400:
            base = todo.pop()
            for key, cname in self._base_index().get(base, ()):
                if (key, cname) in found:
                    continue
                found.append((key, cname))
                if cname not in names:
                    names.add(cname)
                    todo.append(cname)
        return found

    def _subclasses_whose_text(self, cls: ClassInfo, needle: str, *, strict: bool = False) -> list[ClassInfo]:
        """Project subclasses of ``cls`` (found by the text of the class lines, transitively, by
        name) whose module's text has ``needle`` (and, with ``strict``, passes the strict text
        filter: mentions a padded count or a sink); only those modules are parsed, and each
        class is confirmed by its MRO."""
        out: list[ClassInfo] = []
        for key, cname in self._subclass_lines(cls):
            text = self._sources[key][1] if key in self._sources else self._texts.get(key, "")
            if needle not in text or (strict and self._strict is not None and not self._strict(text)):
                continue  # does not have it, or mentions no padded count and no sink
            mod = self.module(key)
            c = mod.classes.get(cname) if mod is not None else None
            if c is not None and c.key != cls.key and any(b.key == cls.key for b in self.mro(c)[1:]):
                out.append(c)
        return out

    def class_valued_attr(self, cls: ClassInfo, attr: str) -> list[ClassInfo]:
        """The classes a class-level attribute names: ``metadata_cls = Mamba2AttentionMetadata``
        in the body of ``cls``, a base of it, or a project subclass of it (the subclasses count:
        a method of the base calls ``self.metadata_cls(...)`` on objects of every subclass).
        Memoised per (class, attribute)."""
        key = (cls.key, attr)
        got = self._class_attr_memo.get(key)
        if got is not None:
            return list(got)
        out: dict[str, ClassInfo] = {}
        for c in [*self.mro(cls), *self._subclasses_whose_text(cls, f"{attr} =")]:
            mod = self.module(c.module)
            for item in c.items():
                targets = item.targets if isinstance(item, ast.Assign) else \
                    [item.target] if isinstance(item, ast.AnnAssign) and item.value is not None else []
                if mod is None or not any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                    continue
                t = self.resolve(mod, _dotted(item.value) or "")
                if isinstance(t, ClassInfo):
                    out.setdefault(t.key, t)
        self._class_attr_memo[key] = list(out.values())
        return list(out.values())

    def _base_index(self) -> dict[str, list[tuple[str, str]]]:
        """Base-class name (last dotted part) -> (module, class) with a ``class X(... Base ...)``
        line: one regex pass over the project's text, made on first use."""
        if self._bases is None:
            idx: dict[str, list[tuple[str, str]]] = {}
            keys = [k for k, _ in self.files()] + [k for k in self._sources if k not in dict(self.files())]
            paths = dict(self.files())
            for key in keys:
                text = self._sources[key][1] if key in self._sources else self.text_of(key, paths[key])
                if "class " not in text:
                    continue
                for m in _CLASS_LINE.finditer(text):
                    for base in re.findall(r"[\w.]+", m.group(2)):
                        idx.setdefault(base.rsplit(".", 1)[-1], []).append((key, m.group(1)))
            self._bases = idx
        return self._bases

_CLASS_LINE = re.compile(r"^[ \t]*class\s+(\w+)\s*\(([^)]*)\)", re.M)


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            raw = f.read(8 * 1024 * 1024)
        return raw.decode("utf-8", errors="replace")
    except OSError:
        return None


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _nonempty_attr(test: ast.AST) -> str | None:
    """``x`` for an assertion that ``self.x`` is non-empty, else None."""
    name = _self_attr(test)
    if name:
        return name
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call) \
            and isinstance(test.left.func, ast.Name) and test.left.func.id == "len" and len(test.left.args) == 1:
        bound = test.comparators[0]
        if isinstance(bound, ast.Constant) and isinstance(bound.value, int) and (
                (isinstance(test.ops[0], ast.Gt) and bound.value >= 0)
                or (isinstance(test.ops[0], ast.GtE) and bound.value >= 1)):
            return _self_attr(test.left.args[0])
    return None
