"""Flow-sensitive abstract interpreter for PAD001 over libcst function bodies.

Each entry point is interpreted from a state where every persistent buffer
row may be stale.  ``self.m(...)`` calls to needed methods of the same class
(and calls of nested functions) are followed by interpreting the callee with
the caller's heap, its arguments bound to the callee's parameters and its
counts bound in the caller's terms, so a reset in ``_prepare_inputs`` covers
a sink in ``_build_attention_metadata`` on the path that calls both, and no
other path.  Branches are joined (a reset on one branch only does not count;
one under ``if P > R:`` does); loop bodies may run zero times.
"""

from __future__ import annotations

import ast
import dataclasses
import keyword
import re
from dataclasses import dataclass, field, replace

import libcst as cst

from padlint.analysis.kernels import pointer_write, tail_stores
from padlint.analysis.values import (
    TAIL_WRITE, UNSET, PARTIAL,
    ALL, DUMMY_ROWS, NOSET, PADDED_AS_REAL, UNKNOWN, AVal, BoolVal, ClosureVal, Count, DictVal, FactVal, FuncVal, MaskVal, LocState, MapVal, MetaVal, MethodVal, PadWrite, PERSISTENT, ReadLog,
    Ref, Refs, Reset, State, TailVal, Taint, TupleVal, UnknownVal, at_least, covering, covers, extremum, is_extremum, join_all, opaque_term, join_vals, no_literal, origin_key, real_in_scope, stamp, with_step,
)
from padlint.analysis.buffers import EMPTY, UNKNOWN_VALUE, BufferIndex
from padlint.analysis.buffers import _MODULES as READ_ONLY_MODULES, _PURE_MODULE_FUNCS as READ_ONLY_FUNCS
from padlint.analysis.literals import same_literal
from padlint.analysis.callgraph import CallGraph, PeekedNodes, module_strings
from padlint.analysis.project import (
    ClassInfo,
    FunctionInfo,
    Project,
    _type_names,
    scan_method_attr_types,
    segment_text,
)
from padlint.analysis.project import _dotted as _dotted_name_ast
from padlint.profile import Profile


#: the write statements :attr:`Interpreter.writers` keeps per location, entry point and file
MAX_WRITERS = 16

#: heap key prefix of "some path handed this location to code the analysis does not read"
MAY_WRITE = "!w:"
#: heap key prefix of "some path called a method of this object, which the analysis followed": the
#: writes it made through the object's own attributes are in the heap; what the object holds
#: under names of its own (a refresher built with the caller's buffer) may have been written
CALLED = "!c:"


@dataclass(frozen=True, slots=True)
class CountVal(AVal):
    """A count bound in entry-point terms; ``canon`` None is the value None."""

    canon: str | None
    offset: int = 0
    padded: bool = False  # canon is a padded count (set by Interpreter._cv); wins in joins
    # the padded count of a pair only the code's own resets name (``r = self._capture_req_slots``
    # with rows ``[bs:r]`` reset: :meth:`Interpreter._padded_by_reset`), not a profile name
    learned: bool = field(default=False, compare=False)


def _target_names(target) -> list[cst.Name]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``; not attributes or items)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _memory_view_of(value) -> str:
    """``x`` when ``value`` (an ``ast`` expression) is a view of ``self.x``'s memory under another
    type: ``self.x.numpy()``, ``torch.from_numpy(self.x)`` (``np.asarray`` and ``torch.as_tensor``
    copy a list, so they are not taken); else ""."""
    if not isinstance(value, ast.Call):
        return ""
    f = value.func
    if isinstance(f, ast.Attribute) and f.attr == "numpy" and not value.args and not value.keywords:
        inner = f.value
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "torch" \
            and f.attr == "from_numpy" and len(value.args) == 1 and not value.keywords:
        inner = value.args[0]
    else:
        return ""
    if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "self":
        return inner.attr
    return ""


def _cst_walk(node):
    """Every node of a libcst tree, parents before children (in no lexical order: see
    :func:`_kids`; :func:`_walk_lexical` keeps it)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(_kids(n))


#: per libcst node class, the names of its dataclass fields (read once per class)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _kids(n: cst.CSTNode) -> list:
    """The child nodes of ``n``: the same nodes as libcst's ``n.children``, read off its fields
    rather than by a visitor that rebuilds the node (about three times faster), and in the order
    of the fields, not the lexical order (a decorator after its function's body).  For walks that
    collect or test, not for anything that numbers nodes in source order."""
    names = _FIELDS.get(type(n))
    if names is None:
        names = _FIELDS[type(n)] = tuple(f.name for f in dataclasses.fields(n))
    out = []
    for name in names:
        v = getattr(n, name)
        if isinstance(v, cst.CSTNode):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(x for x in v if isinstance(x, cst.CSTNode))
    return out


def _names_in(target) -> list[str]:
    """The plain names an assignment target binds (``a, (b, c)``, ``*d``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names_in(el.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


@dataclass(frozen=True, slots=True)
class LookupIndex(UnknownVal):
    """The index a capture-size lookup computes, ``i = bisect.bisect_left(sizes, X)``: unknown
    as a value, but ``sizes[i]`` is X padded to a captured size (``real``: the count of X then,
    ``name``: X when it is a local name)."""

    real: CountVal | None = None
    name: str = ""


@dataclass(frozen=True, slots=True)
class KeyVal(UnknownVal):
    """A string the code names a dict key with: a literal (``"seq_lens"``), or a loop variable
    over a module-level tuple of literals (``for name in _STATIC_FIELDS``, bound to each in
    turn).  Unknown as a value; ``d[k]`` of a persistent dict of buffers is the buffer under
    that key (each key its own location)."""

    keys: frozenset = frozenset()


#: the names a module-level tuple of keys may hold at most (a loop over it runs once per name)
MAX_KEYS = 32

#: the dataclass fields a loop over ``dataclasses.fields(obj)`` is run for at most (once each)
MAX_FIELDS = 128


@dataclass(frozen=True, slots=True)
class FieldRef(UnknownVal):
    """A ``dataclasses.Field`` of a project dataclass (the loop variable of ``for f in
    fields(self)``): ``f.name`` is the key ``name``, so ``getattr(self, f.name)`` is that field."""

    name: str = ""

# unknown values that keep their meaning when passed to a callee (rows `[n:p]`, a test's facts, a
# literal, a key a loop names: `share(f.name, ...)`): not replaced by a count or a parameter default
_PASSED_AS_IS = (TailVal, FactVal, BoolVal, KeyVal)


_FALSE = frozenset({"False", "0"})
_TRUE = frozenset({"True", "1"})

VIEW_METHODS = frozenset({
    "view", "reshape", "unsqueeze", "squeeze", "flatten", "contiguous", "numpy", "view_as",
    "expand", "expand_as", "detach", "narrow", "t", "permute", "transpose", "as_strided", "ravel",
})
COPY_METHODS = frozenset({
    "clone", "to", "cpu", "cuda", "int", "long", "bool", "float", "half", "double", "type",
    "copy", "tolist", "astype", "pin_memory",
})
ELEMENTWISE_METHODS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor",
    "add", "sub", "mul", "div", "clamp", "clip", "masked_fill", "abs", "neg", "minimum", "maximum",
    "bitwise_and", "bitwise_or", "bitwise_not", "where", "floor_divide", "remainder", "sign",
})
ELEMENTWISE_FUNCS = frozenset({
    "where", "maximum", "minimum", "clamp", "clip", "logical_and", "logical_or", "logical_not",
    "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "subtract", "mul", "multiply",
    "div", "floor_divide", "remainder", "abs", "neg", "negative", "bitwise_and", "bitwise_or",
    "bitwise_not", "greater", "less", "equal", "not_equal", "greater_equal", "less_equal",
})
ELEMENTWISE_MODULES = frozenset({"torch", "np", "numpy"})


def _strip_parens(text: str) -> str:
    """``(a[:n])`` -> ``a[:n]`` when the outer parentheses enclose the whole text."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def norm(text: str) -> str:
    """Whitespace-normalised expression text: ``x.gpu[: n + 1]`` -> ``x.gpu[:n + 1]``."""
    text = re.sub(r"#[^\n]*", "", text)
    text = " ".join(text.split())
    text = re.sub(r"([\[(])\s+", r"\1", text)
    text = re.sub(r"\s+([\])])", r"\1", text)
    text = re.sub(r",\s*([\])])", r"\1", text)
    text = re.sub(r"\s*:\s*", ":", text)
    return _strip_parens(text)


def dotted(node: cst.BaseExpression) -> str | None:
    """``self.model`` for an Attribute/Name chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


class Segment:
    """A function parsed with libcst, with lazily computed file positions.

    Position metadata is costly in libcst (a full code generation pass), so
    statement lines come from the ``ast`` tree of the same text (a parallel
    walk over statements only), and columns are computed on demand for the
    one statement that holds a node (a sink argument, say).  The ``ast`` tree is read once,
    when the segment is made, for the names the analysis asks about (:func:`_ast_facts`), and
    not kept.
    """

    def __init__(self, func: cst.FunctionDef, ast_func, lines: list[str], fill_methods):
        self.func = func
        self.lines = lines
        self.def_line = ast_func.lineno
        self._stmt: dict[int, tuple[int, int]] = {}
        self._pos: dict[int, dict] = {}
        self._line: dict[int, int] = {}  # node ids: nodes live as long as the segment
        # id(statement the analysis made) -> the statement of the file it stands for (the
        # `return` of a lambda's function: :meth:`lambda_def`)
        self.alias: dict[int, cst.CSTNode] = {}
        self._lambdas: dict[int, tuple] = {}  # id(lambda) -> (lambda, its function)
        _map_body(_suite_body(func.body), ast_func.body, self._stmt)
        # what the analysis asks of the `ast` tree, read in one walk so that the segment keeps
        # no `ast` tree (the libcst one is what it interprets); `reset_bounds`: the code says
        # `a` is the real count of the rows `[a:b]` a reset `x[a:b].zero_()` pads
        self.names, self.bound_names, self.reset_bounds = _ast_facts(ast_func, fill_methods)

    def same_lines(self, new, old) -> None:
        """Statement ``new``, made by the analysis for ``old`` (``_split_and``), spans its lines."""
        lines = self._stmt.get(id(old))
        if lines is not None:
            self._stmt[id(new)] = lines

    def lambda_def(self, node: cst.Lambda, stmt) -> cst.FunctionDef:
        """The function a ``lambda`` of statement ``stmt`` stands for, ``def lambda_L_K(params):
        return body`` (L its line, K its place among the statement's lambdas): its ``return``
        stands for ``stmt`` in lines and columns (the body is the lambda's own node)."""
        got = self._lambdas.get(id(node))
        if got is None:
            line = self.line(node, stmt)
            k = next((i for i, n in enumerate(x for x in _walk_lexical(stmt) if isinstance(x, cst.Lambda))
                      if n is node), 0)
            ret = cst.SimpleStatementLine(body=[cst.Return(value=node.body)])
            fdef = cst.FunctionDef(name=cst.Name(f"lambda_{line}_{k}"), params=node.params,
                                   body=cst.IndentedBlock(body=[ret]))
            self.alias[id(ret)] = self.alias.get(id(stmt), stmt)  # (a lambda in a lambda)
            got = self._lambdas[id(node)] = (node, fdef)
        return got[1]

    def same_line_as(self, new, old, stmt) -> None:
        """Node ``new``, made by the analysis for node ``old`` of ``stmt``, is on its line."""
        if id(new) not in self._line:
            self._line[id(new)] = self.line(old, stmt)

    def line(self, node, stmt) -> int:
        """1-based file line of ``node`` inside statement ``stmt``."""
        stmt = self.alias.get(id(stmt), stmt)
        lines = self._stmt.get(id(node)) or self._stmt.get(id(stmt))
        if lines is None:
            return self.def_line
        if node is stmt or lines[0] == lines[1] or id(node) in self._stmt:
            return lines[0]
        cached = self._line.get(id(node))
        if cached is not None:
            return cached
        self._line[id(node)] = line = self._find_line(node, stmt, lines)
        return line

    def _find_line(self, node, stmt, lines: tuple[int, int]) -> int:
        if id(stmt) in self._pos:
            return self.span(node, stmt)[0]
        # Multi-line statement: find the node's first code line in the statement's
        # source rather than running libcst's position pass (a full code generation);
        # exact spans are computed only for sink arguments.
        head = _EMPTY.code_for_node(node).split("\n", 1)[0].strip()
        if head:
            for i in range(lines[0], lines[1] + 1):
                if head in self.lines[i - 1]:
                    return i
        return self.span(node, stmt)[0]

    def span(self, node, stmt) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col) of ``node``, 1-based, end column exclusive."""
        stmt = self.alias.get(id(stmt), stmt)
        lines = self._stmt.get(id(stmt))
        if lines is None:
            return (self.def_line, 1, self.def_line, 1)
        pos = self._pos.get(id(stmt))
        if pos is None:
            pos = self._pos[id(stmt)] = _positions(stmt)
        r = pos.get(node)
        if r is None:
            return (lines[0], 1, lines[0], 1)
        text = self.lines[lines[0] - 1] if lines[0] - 1 < len(self.lines) else ""
        indent = len(text) - len(text.lstrip(" \t"))
        # an `elif` header renders as `if` on its own: two columns short on its first line
        shift = 2 if isinstance(stmt, cst.If) and text.lstrip().startswith("elif") else 0

        def col(line: int, c: int) -> int:
            # libcst renders continuation lines relative to the block indentation too
            return c + indent + 1 + (shift if line == 1 else 0)
        return (lines[0] + r.start.line - 1, col(r.start.line, r.start.column),
                lines[0] + r.end.line - 1, col(r.end.line, r.end.column))


_EMPTY = cst.Module(body=[])


def _ast_facts(ast_func, fill_methods) -> tuple[frozenset[str], frozenset[str], frozenset[tuple[str, str]]]:
    """Of one function's ``ast`` tree, nested functions included: every identifier it mentions
    (names, attribute names, parameters, keyword arguments, names of nested definitions); the
    local names it binds (stores, parameters); and ``(a, b)`` of each reset ``x[a:b].fill_(v)``
    (a method of ``fill_methods``, or a store of a literal) whose lower bound is a name and
    upper bound a name or attribute (its last name)."""
    names: set[str] = set()
    bound: set[str] = set()
    resets: set[tuple[str, str]] = set()
    for n in ast.walk(ast_func):
        if isinstance(n, ast.Name):
            names.add(n.id)
            if isinstance(n.ctx, ast.Store):
                bound.add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
            bound.add(n.arg)
        elif isinstance(n, ast.keyword) and n.arg:
            names.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        target = None
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in fill_methods:
            target = n.func.value
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Constant):
            target = n.targets[0]
        if not isinstance(target, ast.Subscript):
            continue
        sl = target.slice
        if isinstance(sl, ast.Tuple) and sl.elts:
            sl = sl.elts[0]
        if isinstance(sl, ast.Slice) and isinstance(sl.lower, ast.Name) and sl.step is None \
                and isinstance(sl.upper, (ast.Name, ast.Attribute)):
            up = sl.upper.id if isinstance(sl.upper, ast.Name) else sl.upper.attr
            if up != sl.lower.id:
                resets.add((sl.lower.id, up))
    return frozenset(names), frozenset(bound), frozenset(resets)


def parse_segment(lines: list[str], info, ast_func, fill_methods) -> Segment:
    """Parse one function alone, wrapped in ``class _:`` lines so indentation parses
    (lines and columns stay those of the file)."""
    module = cst.parse_module(segment_text("".join(lines[info.start - 1:info.end]), info.start, len(info.ancestors)))
    node: cst.CSTNode = module.body[0]
    for _ in info.ancestors:  # each wrapper `class _:` holds the next level
        assert isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock)
        node = node.body.body[0]
    if not isinstance(node, cst.FunctionDef):
        raise ValueError("segment is not a function")
    return Segment(node, ast_func, lines, fill_methods)


def _positions(stmt) -> dict:
    """libcst positions of the nodes of one statement, relative to its first line."""
    from libcst.metadata import MetadataWrapper, PositionProvider
    if isinstance(stmt, cst.SimpleStatementSuite):
        stmt = cst.SimpleStatementLine(body=stmt.body)
    elif not isinstance(stmt, cst.SimpleStatementLine) and hasattr(stmt, "body"):
        # a compound statement: only its header matters here; drop the bodies
        changes = {"body": cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])}
        for name in ("orelse", "handlers", "finalbody"):
            if hasattr(stmt, name):
                changes[name] = () if name == "handlers" else None
        if isinstance(stmt, cst.FunctionDef):
            changes = {"body": changes["body"]}
        try:
            stmt = stmt.with_changes(**changes)
        except Exception:
            pass
    if getattr(stmt, "leading_lines", None):
        stmt = stmt.with_changes(leading_lines=())  # children keep their identity
    if getattr(stmt, "decorators", None):
        stmt = stmt.with_changes(decorators=())
    module = cst.Module(body=[stmt])
    return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


def _suite_body(block) -> list:
    if isinstance(block, cst.SimpleStatementSuite):
        return [block]
    return list(getattr(block, "body", ()))


def _map_body(cst_body: list, ast_body: list, out: dict[int, tuple[int, int]]) -> None:
    """Give each libcst statement the (first, last) lines of its ast twin."""
    i = 0
    for st in cst_body:
        if i >= len(ast_body):
            return
        if isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            n = len(st.body)
            first, last = ast_body[i], ast_body[min(i + n, len(ast_body)) - 1]
            out[id(st)] = (first.lineno, last.end_lineno or last.lineno)
            i += n
            continue
        a = ast_body[i]
        i += 1
        start = min([d.lineno for d in getattr(a, "decorator_list", ())] + [a.lineno])
        out[id(st)] = (a.lineno, a.lineno) if not hasattr(a, "body") else (a.lineno, _header_end(a))
        if start != a.lineno:
            out[id(st)] = (a.lineno, a.lineno)
        if isinstance(st, cst.If) and isinstance(a, ast.If):
            _map_body(_suite_body(st.body), a.body, out)
            orelse = st.orelse
            if isinstance(orelse, cst.If):
                _map_body([orelse], a.orelse, out)
            elif orelse is not None:
                _map_body(_suite_body(orelse.body), a.orelse, out)
        elif isinstance(st, (cst.For, cst.While)) and hasattr(a, "body"):
            _map_body(_suite_body(st.body), a.body, out)
            if st.orelse is not None:
                _map_body(_suite_body(st.orelse.body), a.orelse, out)
        elif isinstance(st, cst.Try) or type(st).__name__ == "TryStar":
            _map_body(_suite_body(st.body), a.body, out)
            for h, ah in zip(st.handlers, getattr(a, "handlers", ())):
                _map_body(_suite_body(h.body), ah.body, out)
            if st.orelse is not None:
                _map_body(_suite_body(st.orelse.body), a.orelse, out)
            if st.finalbody is not None:
                _map_body(_suite_body(st.finalbody.body), a.finalbody, out)
        elif isinstance(st, cst.Match) and hasattr(a, "cases"):
            for c, ac in zip(st.cases, a.cases):
                _map_body(_suite_body(c.body), ac.body, out)
        elif hasattr(st, "body") and hasattr(a, "body"):  # With, FunctionDef, ClassDef
            _map_body(_suite_body(st.body), a.body, out)


def _header_end(a) -> int:
    """Last line of a compound statement's header (before its body)."""
    body = getattr(a, "body", None)
    if body:
        return max(a.lineno, body[0].lineno - 1)
    return a.lineno


@dataclass(frozen=True, slots=True)
class DummyRead:
    """A dummy run reads rows ``[0:padded]`` of a persistent buffer into an index field with no
    write of the run reaching them (the first such read seen): ``slice`` as written at
    ``path:line`` in the dummy run ``dummy`` (or a method it calls)."""

    dummy: str
    field: str
    slice: str
    path: str
    line: int
    padded: str
    # the classes of the objects on the way to the buffer (``self.input_batch.block_table[*]``:
    # the runner's, the input batch's, the block table's), where known
    via: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class _HitEvent:
    """A sink argument reached while interpreting a function, with what its hit needs besides the
    call path (:meth:`Interpreter._record_hit`): kept in a callee's summary, so that a later call
    the summary answers records the hit on its own path too."""

    key: tuple[int, str]
    sink: str
    field: str
    kind: str
    severity: str
    value_node: object
    value: object
    node: object
    taints: tuple          # empty: reached clean
    real_names: dict
    padded_names: dict
    locs: frozenset        # persistent locations of the buffers whose views reached it
    named: bool            # every taint's real count has a name in scope at the sink
    seg: object
    stmt: object
    qual: str
    path: str
    fixable: bool
    count_locals: dict | None = None  # (:attr:`SinkHit.count_locals`)


@dataclass
class SinkHit:
    """A sink argument reached on one path (stale or clean)."""

    key: tuple[int, str, bool]  # (id of the argument node, field, dummy-run paths): one hit each
    sink: str
    field: str
    kind: str            # "keyword" | "positional" | "attribute"
    severity: str
    arg_text: str        # the argument as written, normalised
    arg_name: str | None # the argument if it is a plain name
    span: tuple[int, int, int, int]
    stmt_line: int
    stmt_text: str
    function: str
    chain: tuple[tuple[int, str, str], ...]  # (line, note, path)
    taints: tuple[Taint, ...]
    real_names: dict[str, str]  # canonical real count -> name in scope at the sink
    padded_names: dict[str, str]
    # the names in scope at the sink bound to a count (or to a value of no known count), each
    # with (that count, whether it is padded, whether the name is a parameter): a profile pair
    # names the real count of a padded one by name (:func:`real_in_scope`)
    count_locals: dict = field(default_factory=dict)
    dims: frozenset = frozenset()  # padded dimensions of every alternative of the value
    maybe_none: bool = False       # the value is None on some path (a fix must guard)
    fixable: bool = True           # the sink statement is a place to insert a reset before
    path: str = ""                 # file of the sink
    lines: list = field(default_factory=list)  # that file's lines
    stale_chains: tuple = ()       # every distinct call path on which the value is stale here
    container: bool = False        # the argument is a dict or list holding the stale views
    at_test: bool = False          # the sink is in an `elif`/`while` test: nothing can go right before it
    in_lambda: bool = False        # the sink is in a lambda's body, run where the lambda is called
    # origin (:func:`origin_key`) -> the hit of the most direct path that brought it, for the
    # origins this hit's own (most direct) path does not bring: each is its own finding
    others: dict = field(default_factory=dict)
    # (entry key, persistent location) of the buffers whose views reached the argument, on the
    # stale paths: where a checked file writes one of them (:attr:`Interpreter.writers`), a sink
    # outside the checked files is reported there
    locs: frozenset = frozenset()
    # the call paths (:meth:`Interpreter._qpath`) on which the value reached the argument stale
    qpaths: frozenset = frozenset()
    # the paths are dummy runs' (a call on each passes a padded count as the callee's real count
    # of the stale rows): a reset at the sink in that real count covers no row on them
    dummy: bool = False


@dataclass(frozen=True, slots=True)
class PadCover:
    """The padding rows of one padded view reaching a sink argument, and what wrote them.

    ``writes``: one set of :class:`PadWrite` per reset covering the rows (the rows hold
    the value of any of them: resets of the same rows by different statements; the
    writes in one set are alternatives from paths that joined).
    """

    buffer: str
    padded: str
    offset: int
    writes: frozenset  # frozenset[frozenset[PadWrite]]
    real: str = ""     # the real count the covering reset starts at ("" for whole-buffer writes)
    derived: bool = False  # ``buffer`` is the expression of a derived tensor, not a buffer
    loc: str = ""      # the persistent buffer's location (its construction value: construction_value)


@dataclass
class PadHit:
    """A sink argument whose padding rows were written by a reset or an allocation fill,
    on some path (the facts of the pad-value contract; judged in
    :mod:`padlint.analysis.padvalue`)."""

    key: tuple[int, str]
    sink: str
    field: str
    kind: str
    path: str
    stmt_line: int
    function: str
    chain: tuple[tuple[int, str, str], ...]
    covers: set = field(default_factory=set)  # set[PadCover]
    arg_name: str | None = None  # the argument if it is a plain name
    _where: tuple = ()  # (segment, node, statement): the argument's span, computed on demand
    _span: tuple | None = None

    def span(self) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col) of the sink argument (1-based, end exclusive)."""
        if self._span is None:
            seg, node, stmt = self._where
            self._span = seg.span(node, stmt)
        return self._span


class Summary:
    """One callee's effect for one input (:meth:`Interpreter._call`): the heap keys it read with
    the values it was given there, the keys it wrote with the values it left, its result, the
    object fields it stored, the writes it noted and its stale sink arguments (each with its call
    path below the call).  Keys and values are kept as parallel tuples, the key tuples shared
    between the summaries that read or write the same keys: a summary holds no pair per key."""

    __slots__ = ("read_keys", "read_values", "write_keys", "write_values", "value", "stored",
                 "noted_writes", "hit_events", "sinks", "cut_in")

    def __init__(self, read_keys: tuple, read_values: tuple, write_keys: tuple, write_values: tuple,
                 value, stored: frozenset, noted_writes: frozenset, hit_events: tuple,
                 sinks: bool = False, cut_in: int = -1):
        self.read_keys, self.read_values = read_keys, read_values
        self.write_keys, self.write_values = write_keys, write_values
        self.value, self.stored, self.noted_writes, self.hit_events = value, stored, noted_writes, hit_events
        # whether its run reached a sink; and the entry point (its number) in which a call below it
        # was cut by that entry point's share (:attr:`Interpreter.MAX_AWAY_BODIES`), -1 if none: it
        # answers calls in that entry point only
        self.sinks, self.cut_in = sinks, cut_in


@dataclass
class Frame:
    qual: str
    owner: str            # class key of the function's class ("" for a module function)
    seg: Segment
    chain: tuple[tuple[int, str, str], ...]
    module: str = ""      # module key
    path: str = ""        # file
    cls: str = ""         # class key of `self` (a subclass of owner, for dispatch)
    params: tuple[str, ...] = ()
    returns: list = field(default_factory=list)
    return_facts: list = field(default_factory=list)  # the path conditions at each return
    loop_exits: list = field(default_factory=list)
    loop_breaks: list = field(default_factory=list)  # those of `loop_exits` a `break` left
    # parameter -> the literal its call passed, where (text, node, segment, statement, path, line,
    # whether that argument is the one place to edit the value):
    # `fill_tail(buf, n, p, -1)` writes -1 through `buf[n:p] = v` (:meth:`Interpreter._literal`),
    # and a PAD002 fix edits the argument at the call
    literals: dict = field(default_factory=dict)
    stmt: cst.CSTNode | None = None
    fixable: bool = True  # a reset inserted before `stmt` runs before the sink
    # counts bound on the call path so far (entry-point terms): a padded count has
    # padding rows only where its real partner is known (else every row is real to
    # the code, e.g. a graph-capture helper that only knows the captured size)
    known: set[str] = field(default_factory=set)
    nested: dict[str, cst.FunctionDef] = field(default_factory=dict)
    # the defaults of each nested function, as its `def` evaluated them (:meth:`Interpreter._defaults`)
    defaults: dict[str, tuple] = field(default_factory=dict)
    # how often each name (or dotted attribute) was assigned so far: a path condition names the
    # versions it tested, so a test after a reassignment is another condition
    epochs: dict[str, int] = field(default_factory=dict)
    # name -> locations holding resets kept under a test of that name (dropped when it is assigned)
    cond_locs: dict[str, set] = field(default_factory=dict)
    # heap keys ``?@loc.f`` of the records this function made: the object field ``@loc.f`` held a
    # different value on each branch of a test of local names (see Interpreter._keep_conditional)
    cond_fields: set[str] = field(default_factory=set)
    # the dummy-run function this frame runs in (itself or a caller: the profile's
    # ``[dummy_runs] functions``) where the frame's function is of that run's class (or nested
    # in one), "" elsewhere: its views' rows are judged as a dummy run's (:meth:`_dummy_taint`)
    dummy: str = ""
    # the function node this frame runs (a nested function's recursion is told by it: its name
    # in the call path grows at each level, `f.prepare.prepare`)
    node: object = None
    # the dummy-run function this frame runs under, in any class (the methods of other objects
    # it calls too): only recorded as :attr:`Interpreter.dummy_reads`
    dummy_any: str = ""
    # locals holding a graph key made from a count (`graph_key = self._make_graph_key(self.bs)`):
    # they carry the count to the engine but are no name of it a message or fix may use
    keys: set[str] = field(default_factory=set)


#: heap key prefix of a join's record (``MAYBE_UNSET + "@loc.f"``): the facts of the branches of a
#: test whose value of the field some path through them did not store (see _keep_conditional)
MAYBE_UNSET = "?!"


# attributes that describe a tensor (its shape, type, placement) rather than hold rows: never a
# buffer, whatever object they are read from (`num_actual = slot_mapping.shape[0]` is a number)
_TENSOR_META = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "layout", "itemsize",
                          "nbytes", "requires_grad", "is_sparse", "is_quantized"})


def _int_literal(node) -> int | None:
    """The value of an integer literal (``0``, ``-1``), else None."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


DEFAULT = "\x00default:"  # a closure's environment key: a parameter's default (:meth:`Interpreter._defaults`)


class Interpreter:
    """Interprets functions of the whole project from entry points; collects :class:`SinkHit`.

    Calls are followed across classes and modules (:class:`CallGraph` resolves
    them; only *relevant* callees are interpreted).  A callee's effect for a
    given input (arguments, ``self``, heap, known counts) is computed once and
    reused (a summary keyed on its input), so the cost grows with the code,
    not with the number of paths through it.
    """

    MAX_DEPTH = 64  # calls followed below an entry point (deeper calls are not followed)
    MAX_NESTING = 200  # expression nesting above which a function is not parsed with libcst
    # function bodies run per entry point in the calls of a function that reaches no sink, its
    # callees' included; past it, the function is code not read in that entry point
    MAX_AWAY_BODIES = 1000
    MAX_SUMMARIES_PER_CALLEE = 16  # summaries kept per callee and arguments

    def __init__(self, profile: Profile, project: Project, graph: CallGraph):
        self.p = profile
        self.project = project
        self.graph = graph
        self._segments: dict[str, Segment | None] = {}
        self.syntax_errors: dict[str, tuple[str, int | None, int | None]] = {}  # module -> error
        self._summaries: dict = {}  # (callee, self class, arguments, known counts) -> [Summary]
        self._key_tuples: dict = {}  # one copy of each summary's key tuple and stored-field set
        self._reads: list[ReadLog] = []  # read logs of the callees being interpreted (innermost last)
        self._attr_type_cache: dict = {}
        self._stores_memo: dict[str, dict] = {}  # function key -> its `self.x` stores (_self_stores)
        self._getitem_cache: dict[frozenset, tuple[frozenset, str]] = {}  # see _getitem_types
        self._returned: dict[str, AVal] = {}
        self._param_cache: dict = {}
        self._member_nodes: dict = {}
        self._capture_defs: dict = {}  # capture-time width definition -> its parsed expression
        self._defs_memo: dict = {}  # id(function node) -> (node, name -> values bound, _local_defs)
        self._kwkeys: dict = {}  # (id of a `**` argument, key) -> _KwargsKey (hits are keyed by node id)
        # (id of the argument node, field, whether the paths are dummy runs'): one hit each
        self.hits: dict[tuple[int, str, bool], SinkHit] = {}
        self.clean_hits: dict[tuple[int, str], list[tuple[tuple[int, str, str], ...]]] = {}
        # functions active on the stack that a dispatch over several implementations entered
        # (a composite among them is not dispatched into again: see `_resolve_callee`)
        self._via_dispatch: dict[str, int] = {}
        self._real_for = profile.is_real_for
        self._helpers = dict(profile.reset_helpers)
        self._kernel_stores: dict[str, tuple] = {}  # kernel key -> its tail stores
        self._kernel_writes: dict[tuple[str, str], bool] = {}  # (kernel key, parameter) -> may it store through it
        self._ptr_tables: dict[str, tuple[str, ...]] = {}  # pointer-table attribute -> containers
        self._sliced_memo: dict[int, tuple] = {}  # id(loop body) -> (body, its variable is sliced)
        self._and_memo: dict[int, tuple] = {}  # id(if statement) -> (it, `if A: if B:` for `if A and B:`)
        # id(`if A:` or `if B:` of a split `if A and B:`) -> that statement (:meth:`_split_and`)
        self._and_origin: dict[int, cst.If] = {}
        # id(an `elif` statement) -> the path that reaches it: "`a` fails" (:meth:`_partial_prefixes`)
        self._elif_context: dict[int, str] = {}
        self._keys_memo: dict[tuple[str, str], tuple[str, ...] | None] = {}  # module constants of keys
        self._rebound_memo: dict[int, tuple] = {}  # id(function) -> (function, names rebound unseen)
        self._bound_memo: dict[int, tuple] = {}  # id(block) -> (block, names it binds)
        self._getattr_nodes: dict[tuple, cst.Attribute] = {}  # (id of a `getattr` call, key) -> `obj.key`
        self._fill_calls: dict[int, cst.Call] = {}  # id of `torch.zero_(x)` -> `x.zero_()`
        self._narrow_texts: dict[int, cst.Subscript] = {}  # id of `x.narrow(...)` -> its slice `x[a:b]`
        self._lookup_nodes: dict[int, cst.Subscript] = {}  # id of `self.t.get(k)` -> `self.t[k]`
        self._path_nodes: dict[str, list[cst.Attribute]] = {}  # "a.b" -> the nodes of `self.a`, `self.a.b`
        self.pad_hits: dict[tuple[int, str], PadHit] = {}  # sink arguments whose padding rows were written
        self._write_nodes: dict[int, tuple] = {}  # PadWrite.node -> (segment, node, statement, form)
        self._read_when: dict[str, set[str]] = {}
        for spec in profile.fields:
            if spec.read_when:
                self._read_when.setdefault(norm(spec.read_when), set()).add(spec.name)
        self._sink_call = re.compile("|".join(_glob(p) for p in profile.sink_calls)) if profile.sink_calls else None
        self._graph_replay = re.compile("|".join(_glob(p) for p in profile.graph_replay)) \
            if profile.graph_replay else None
        self._graph_capture = re.compile("|".join(_glob(p) for p in profile.graph_captured_by)) \
            if profile.graph_captured_by else None
        self._texts: dict[int, str] = {}
        self._eq_counts: dict[str, dict[str, str]] = {}  # class key -> padded field -> real field
        self._binds_memo: dict[tuple[str, str], bool] = {}  # (module, builtin name) -> the module rebinds it
        # (id of a replay call, count name) -> the replaying function assigns it from the descriptor
        self._descriptor_names: dict[tuple[int, str], bool] = {}
        self._keep: list = []
        # persistent buffers: allocations and writes across the project (the never-written fact)
        self.buffers = BufferIndex(project, profile)
        self._property_calls: dict[int, cst.Call] = {}  # id(attribute) -> the getter's call (kept)
        self._escaping: ClosureVal | None = None  # the closure :meth:`_run_escaped` runs now
        # (class of `self`, heap key of its field) holding a padded count the code's resets name ->
        # the facts where the code bound it (:meth:`_padded_by_reset`), met over the bindings seen
        self._learned_when: dict[tuple[str, str], frozenset] = {}
        self._escaped_calls: dict[int, cst.Call] = {}  # id(stored name) -> the escaped closure's call (kept)
        self._written_param_memo: dict[int, tuple] = {}  # id(function) -> (function kept, names)
        self._used_names: dict[int, tuple[cst.FunctionDef, frozenset[str]]] = {}  # id -> (node kept alive, names)
        self._loc_owners: dict[str, set] = {}  # loc -> {attribute name | None}
        self._loc_holders: dict[str, set] = {}  # buffer loc -> {class key of the object holding it | None}
        self._construction_memo: dict[tuple, object] = {}  # see construction_value
        # locations of buffers a CUDA graph replay seen here reads (bound at capture): capture ran
        # the graph with their construction value in every row (:mod:`padlint.analysis.padvalue`)
        self.graph_bound_locs: dict[str, set[tuple[str, str]]] = {}  # loc -> {(class key, attribute path)}
        # (element location, local, file) of a loop or comprehension binding a container's elements
        # to a local (`x[:n] for x in self.tables`) -> the container as the code names it there
        self._elem_text: dict[tuple[str, str, str], str] = {}
        # (class key of the object holding a buffer, buffer attribute) -> the reads of its rows
        # ``[0:n]`` by a dummy run that reached an index field unwritten (:class:`DummyRead`, the
        # first for each way to the buffer): rows a request left hold that request's values
        # there, whatever admission writes later
        self.dummy_reads: dict[tuple[str, str], list[DummyRead]] = {}
        self.dummy_started: set[str] = set()  # keys of the dummy-run functions interpreted
        # (entry key, persistent location) -> {file: [(segment, statement, function, count, call
        # path)]}: the statements of each file that wrote rows of the location on some path of
        # that entry, in the order first seen (``count``: the prefix written, when known; the call
        # path: the writing function's frame chain): a sink outside the checked files is reported
        # at a checked file's write of its buffer on the way to it
        self.writers: dict[tuple[str, str], dict[str, list[tuple]]] = {}
        # the first prefix write ``buf[:k]`` seen per (location, count, offset): the written
        # slice as the code names it, for :meth:`_partial_prefixes`
        self._extent_sites: dict[tuple[str, str, int], str] = {}
        # the locations that got rows one branch left unwritten (:meth:`_partial_prefixes`)
        self._partial_locs: set[str] = set()
        # per branch of a test being interpreted: the locations (buffers, without `#host`/`#dev`)
        # its statements and callees wrote rows of (:meth:`_note_write`)
        self._branch_writes: list[set[str]] = []
        # the tests of the branches being interpreted, outermost first: (function key, test text,
        # True on the branch where it holds): a read under the test that wrote rows one branch
        # left unwritten reads them written (:meth:`_taints`)
        self._branch_tests: list[tuple[str, str, bool]] = []
        self._frames: list[Frame] = []        # the frames being interpreted, entry point first
        # per function that reaches no sink: the bodies its calls ran in this entry point, its
        # callees' included (:attr:`MAX_AWAY_BODIES`); and every body run so far
        self._runs: dict[str, int] = {}
        self._bodies = 0
        # sinks reached so far (checked or not), calls cut by a share so far, the functions the call
        # graph has as reaching no sink that reached one in this entry point, and the entry point's
        # number
        self._sinks_seen = 0
        self._cuts = 0
        self._reaching: set[str] = set()
        self._entry_no = 0
        self._write_log: list[set] = []       # per callee being interpreted: the writes it noted
        self._hit_log: list[list] = []        # per callee being interpreted: its sink hits, with their paths
        self._hit_chains: dict[tuple, set] = {}  # hit key -> its stale chains (membership)
        # path conditions that hold where the interpreter is now (``(key, polarity)`` facts of the
        # enclosing `if` tests of the current function): resets made under them count here
        self._active: frozenset = frozenset()
        self._self_stored: dict[int, tuple] = {}  # id(function) -> (function, `self.` texts it stores)
        self._atoms: dict[int, tuple] = {}  # id(test node) -> (node, its fact or None), see _cond_atom
        self._store_log: list[set] = []  # per callee being interpreted: the field keys it stored

    # ---------------------------------------------------------------- code
    def segment(self, fn: FunctionInfo) -> Segment | None:
        """The function parsed with libcst (once); None when libcst cannot parse it."""
        if fn.key in self._segments:
            return self._segments[fn.key]
        mod = self.project.module(fn.module)
        seg: Segment | None = None
        tree = fn.peek() if mod is not None else None  # read here, not kept (the segment keeps facts)
        if mod is not None and _nesting(tree) > self.MAX_NESTING:
            # libcst's memory grows steeply with nesting (2,800 nested lambdas: 1.5 GB); CPython
            # accepts it, so it is not a syntax error: the function is not analysed
            self.syntax_errors.setdefault(fn.module, ("too deeply nested", fn.start, None))
        elif mod is not None:
            try:
                seg = parse_segment(mod.lines, fn, tree, self.p.fill_methods)
            except cst.ParserSyntaxError as e:
                self.syntax_errors.setdefault(fn.module, (
                    f"syntax error (libcst): {e.message}",
                    e.raw_line + fn.start - 1 - len(fn.ancestors), e.raw_column))
            except ValueError:
                seg = None
            except RecursionError:
                # the stack was already deep where this function was first reached: not a fact of
                # the function, so not kept (a later, shallower call parses it)
                return None
        self._segments[fn.key] = seg
        return seg

    def _self_ref(self, cls: str) -> Refs:
        return Refs(frozenset({Ref("self", None, "self", types=frozenset({cls}) if cls else frozenset())}))

    # ------------------------------------------------------------------ entry
    def run_entry(self, fn: FunctionInfo, self_class: str = "") -> None:
        """Interpret entry point ``fn`` from a state where every persistent row may be stale;
        sink hits accumulate in :attr:`hits` (stale) and :attr:`clean_hits` (clean paths).
        ``self_class``: a subclass that inherits ``fn`` (the class of ``self`` in this run; its
        overrides are what ``self.m()`` calls)."""
        seg = self.segment(fn)
        if seg is None:
            return
        mod = self.project.module(fn.module)
        path = mod.path if mod is not None else ""
        line = seg.def_line
        if self.p.is_dummy_run(fn.name):
            self.dummy_started.add(fn.key)
        cls = self_class or fn.owner
        shown = f"`{cls.rsplit(':', 1)[-1]}.{fn.name}` (inherited from `{fn.owner.rsplit(':', 1)[-1]}`)" \
            if self_class else f"`{fn.name}`"
        frame = Frame(qual=fn.key, owner=fn.owner, seg=seg, module=fn.module, path=path, cls=cls,
                      chain=((line, f"entry point {shown}", path),),
                      dummy=fn.name if self.p.is_dummy_run(fn.name) else "",
                      dummy_any=fn.name if self.p.is_dummy_run(fn.name) else "")
        state = State()
        self._active = frozenset()
        params = self._params(seg.func)
        if fn.owner and params and params[0] == "self":
            state.env["self"] = self._self_ref(cls)
        ps = seg.func.params
        for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params):
            if p.name.value != "self":
                v = self._param_default(p, fn)
                if not isinstance(v, UnknownVal):
                    state.env[p.name.value] = v  # an object of its annotated project class
        frame.params = tuple(params)
        frame.known.update(frame.params)
        self._frames = [frame]
        self._runs, self._reaching = {}, set()
        self._entry_no += 1
        try:
            self._exec_function(seg.func, frame, state)
        finally:
            self._frames = []

    @staticmethod
    def _params(func: cst.FunctionDef) -> list[str]:
        ps = func.params
        return [p.name.value for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)]

    def _exec_function(self, func: cst.FunctionDef, frame: Frame, state: State) -> tuple[State, AVal]:
        self._bodies += 1
        end_facts: list = []
        end = self._exec_block(func.body, frame, state, end_facts)
        states = [s for s, _ in frame.returns] + ([end] if end is not None else [])
        value: AVal | None = None
        # each returned view keeps the resets and write extents of its own return path
        # (`buf[:k] = x; return buf[:n]` on one path, another view returned elsewhere); where every
        # path returns the same value the joined exit state is what it holds (and stamping would
        # make one variant of it per path: cost growing with the paths)
        vals = [v for _, v in frame.returns]
        own = len(states) > 1 and any(v != vals[0] for v in vals[1:])
        for s, v in frame.returns:
            value = join_vals(value, stamp(v, s) if own else v)
        # a reset made on the ways out under a test holds where that test holds (`if not use_spec:
        # return` before the reset), as after an `if` (:meth:`_keep_conditional`): only where the
        # ways out exclude each other (each one's facts contradict every other's); a `return` in a
        # loop whose end is reached without a test does not
        facts = [*frame.return_facts, *([end_facts[0]] if end is not None else [])]
        if len(states) > 1 and any(facts) and all(
                any((k, not p) in facts[j] for k, p in facts[i])
                for i in range(len(facts)) for j in range(len(facts)) if i != j):
            acc, acc_facts = states[0], facts[0]
            for st, ks in zip(states[1:], facts[1:]):
                out = State.join([acc, st], full=True)
                self._keep_conditional(out, acc, st, acc_facts - ks, ks - acc_facts, frame)
                acc, acc_facts = out, acc_facts & ks
            exit_state = acc
        else:
            exit_state = State.join(states, full=True) or state
        prepared = self._preparing_paths(states, exit_state)
        if prepared:
            exit_state = State.join(prepared, full=True) or exit_state
        return exit_state, value if value is not None else UNKNOWN

    def _run_escaped(self, closure: ClosureVal, name_node, frame: Frame, state: State) -> None:
        """Run a nested function the frame stores on an object, once, right after the store:
        code the analysis does not read calls it from there on (SGLang's prefill runner installs
        `replay_layer_forward`, which replays the captured graph, as `self.layer_model.forward`,
        then runs the model, which calls it).  Its sinks are judged on the store's path, with
        what that path wrote and the facts that hold there; its writes are the path's.  The call
        step is the store's line.  (Writes the function makes between the store and the call that
        runs it are not seen: the store is where the analysis knows the function escapes.)"""
        call = self._escaped_calls.get(id(name_node))
        if call is None:
            call = self._escaped_calls[id(name_node)] = cst.Call(func=cst.Name(closure.node.name.value))
            self._keep.append(name_node)
        frame.seg.same_line_as(call, name_node, frame.stmt)
        saved = frame.fixable, self._escaping
        frame.fixable, self._escaping = False, closure
        try:
            # (a function that stores itself while it runs is not run again: :meth:`_call_body`
            # does not enter a function already on the call path)
            self._inline(("closure", closure), call, frame, state)
        finally:
            frame.fixable, self._escaping = saved

    def _preparing_paths(self, states: list[State], joined: State) -> list[State]:
        """The ways out of a method that store a padded count in a field of ``self``
        (``self.bs = bs`` in a ``load_batch``), when others store none: a way out that leaves
        the step's size to a field no path before it stored (SGLang's "pre-planned" early return
        of ``load_batch``: an earlier call for the same batch computed the size and filled the
        buffers) stands for that earlier call, which took a preparing way; its own state is not
        the step's.  Empty when there is no such split."""
        if len(states) < 2 or not joined.unset:
            return []
        me = joined.env.get("self")
        heads = {f"@{r.loc}." for r in me.refs} if isinstance(me, Refs) else {"@self."}
        keys = [k for k in joined.unset
                if any(k.startswith(h) and "." not in k[len(h):] for h in heads)
                and isinstance(v := dict.get(joined.heap, k), CountVal) and v.canon and self.p.is_padded_name(v.canon)]
        if not keys:
            return []
        keep = [s for s in states if all(dict.get(s.heap, k) is not None for k in keys)]
        return keep if 0 < len(keep) < len(states) else []

    # ------------------------------------------------------------- statements
    def _exec_block(self, block: cst.BaseSuite | list, frame: Frame, state: State | None,
                    facts_out: list | None = None) -> State | None:
        if isinstance(block, cst.SimpleStatementSuite):
            body = [block]
        elif isinstance(block, cst.IndentedBlock):
            body = list(block.body)
        else:
            body = list(block)
        # a test that returns early (`if x is None: return`) holds its negation for the rest of
        # this block only
        saved = self._active
        try:
            for stmt in body:
                if state is None:
                    return None
                state = self._exec_stmt(stmt, frame, state)
            return state
        finally:
            if facts_out is not None:  # the conditions at the block's end (the function's)
                facts_out.append(self._active)
            self._active = saved

    def _exec_stmt(self, stmt: cst.CSTNode, frame: Frame, state: State) -> State | None:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            # (no reset can be inserted before a lambda's body: its `return` is the analysis's)
            frame.stmt, frame.fixable = stmt, id(stmt) not in frame.seg.alias
            for small in stmt.body:
                state = self._exec_small(small, frame, state)
                if state is None:
                    return None
            return state
        # a sink in a `while` test runs again after the body: no single place for a reset
        frame.stmt, frame.fixable = stmt, not isinstance(stmt, cst.While)
        if isinstance(stmt, cst.If):
            return self._exec_if(stmt, frame, state)
        if isinstance(stmt, (cst.For, cst.While)):
            return self._exec_loop(stmt, frame, state)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                v = self._eval(item.item, frame, state)
                if item.asname is not None:
                    self._bind(item.asname.name, v, frame, state)
            return self._exec_block(stmt.body, frame, state)
        if isinstance(stmt, (cst.Try, getattr(cst, "TryStar", cst.Try))):
            before = state.copy()
            end = self._exec_block(stmt.body, frame, state)
            if end is not None and stmt.orelse is not None:
                end = self._exec_block(stmt.orelse.body, frame, end)
            ends = [end]
            for h in stmt.handlers:
                start = State.join([before, end]) or before.copy()
                ends.append(self._exec_block(h.body, frame, start.copy()))
            out = State.join(ends)
            if stmt.finalbody is not None and out is not None:
                out = self._exec_block(stmt.finalbody.body, frame, out)
            return out
        if isinstance(stmt, cst.FunctionDef):
            key = f"{frame.qual}.<{stmt.name.value}@{frame.seg.line(stmt, stmt)}>"
            frame.nested[stmt.name.value] = stmt
            frame.defaults[stmt.name.value] = self._defaults(stmt.params, frame, state)
            state.env[stmt.name.value] = FuncVal(key)
            return state
        if isinstance(stmt, cst.Match):
            self._eval(stmt.subject, frame, state)
            # no case may match, unless one is an irrefutable `case _:` / `case name:`
            irrefutable = any(isinstance(c.pattern, cst.MatchAs) and c.pattern.pattern is None
                              and c.guard is None for c in stmt.cases)
            ends = [] if irrefutable else [state]
            for case in stmt.cases:
                ends.append(self._exec_block(case.body, frame, state.copy()))
            return State.join(ends)
        return state  # ClassDef and others: no effect on padding

    LOOP_ROUNDS = 3  # loop bodies are re-run until the loop-head state is stable, at most this often

    def _exec_loop(self, stmt, frame: Frame, state: State) -> State | None:
        """A ``for``/``while`` loop.  Over a literal tuple or list of known length (or an attribute
        assigned only such a tuple), the body runs once per element, in order: a reset of each
        element counts after the loop.  Otherwise the body may run zero or more times: it is
        run from the loop-head state until that state is stable (joined with the state before
        the loop, widened after :data:`LOOP_ROUNDS` rounds)."""
        items = None
        elem: AVal = UNKNOWN  # what the loop variable holds on each round
        each = False
        elocs: tuple[str, ...] = ()  # the element locations of a persistent list iterated
        ran: list[State | None] = []  # the states the rounds that ran left
        if isinstance(stmt, cst.For):
            names = self._dataclass_fields(stmt.iter, frame, state)
            it = self._eval(stmt.iter, frame, state)
            if names is not None:
                items = tuple(FieldRef(name=n) for n in names)
            elif isinstance(it, TupleVal) and not isinstance(stmt.iter, cst.Call):
                items = it.items
            elif isinstance(it, MapVal) and not it.keyed:
                # `for sm in slot_mappings.values(): sm.fill_(-1)`: each element of a container the
                # code made; with no element there is nothing to be stale, so the body's writes to
                # the elements count after the loop (it runs once at least)
                elem, each = it.item, True
            elif self._sliced(stmt.target, stmt.body) and (e := self._container_elem(it)) is not None:
                # `for bt in self.input_block_tables: bt[:n].zero_()`: a persistent list of buffers
                # may be empty, so the body may not run; but then there is no element to be stale:
                # the elements' state after the loop is what the rounds that ran left
                elem, elocs = e, tuple(r.loc for r in e.refs)
                self._name_container(e, stmt.target, stmt.iter, frame)
        else:
            self._eval(stmt.test, frame, state)
            if self._forever(stmt.test):
                return self._exec_forever(stmt, frame, state)
        saved, saved_breaks = frame.loop_exits, frame.loop_breaks
        try:
            if items is not None:
                cur: State | None = state
                for item in items:
                    if cur is None:
                        break
                    frame.loop_exits, frame.loop_breaks = [], []
                    prev, cur = cur, cur.copy()
                    self._bind(stmt.target, item, frame, cur)
                    end = self._exec_block(stmt.body, frame, cur)
                    # (a round continues the path: what it wrote before the loop stays written
                    # for the join of an enclosing test, :func:`_continues`)
                    cur = _continues(State.join([end, *frame.loop_exits], full=bool(frame.loop_exits)), prev)
                after = cur
            else:
                base: State | None = state
                # a literal a name the body rebinds held before the loop is not known at the head of
                # a later round (the rounds stop at LOOP_ROUNDS, not where every value is stable)
                bound = self._block_binds(stmt.body)
                if any(isinstance(state.env.get(n), BoolVal) for n in bound):
                    base = state.copy()
                    for n in bound:
                        if isinstance(base.env.get(n), BoolVal):
                            base.env[n] = UNKNOWN
                if isinstance(stmt, cst.For) and (each or self._nonempty_iter(stmt.iter, frame)):
                    # the code asserts the iterable non-empty: the body runs at least once
                    frame.loop_exits, frame.loop_breaks = [], []
                    first = state.copy()
                    self._bind(stmt.target, elem, frame, first)
                    base = State.join([self._exec_block(stmt.body, frame, first), *frame.loop_exits])
                head = after = base
                for _ in range(self.LOOP_ROUNDS if base is not None else 0):
                    frame.loop_exits, frame.loop_breaks = [], []
                    body_state = head.copy()
                    if isinstance(stmt, cst.For):
                        self._bind(stmt.target, elem, frame, body_state)
                    body_end = self._exec_block(stmt.body, frame, body_state)
                    if elocs:
                        ran += [body_end, *frame.loop_exits]
                    nxt = State.join([base, body_end, *frame.loop_exits]) or base
                    stable = nxt.env == head.env and nxt.heap == head.heap
                    head = after = nxt
                    if stable:
                        break
        finally:
            frame.loop_exits, frame.loop_breaks = saved, saved_breaks
        if elocs and after is not None and (done := State.join(ran)) is not None:
            for loc in elocs:
                for k in (loc, loc + "#host", loc + "#dev"):
                    if k in done.heap:
                        after.heap[k] = done.heap[k]
        if after is not None and isinstance(stmt, cst.For):
            self._range_row_resets(stmt, frame, after)
        elif after is not None:
            self._while_row_resets(stmt, state, frame, after)
        if stmt.orelse is not None and after is not None:
            after = self._exec_block(stmt.orelse.body, frame, after)
        return after

    @staticmethod
    def _forever(test) -> bool:
        """``while True:`` / ``while 1:`` (the test is a literal that is always true)."""
        return (isinstance(test, cst.Name) and test.value == "True") or (
            isinstance(test, cst.Integer) and test.evaluated_value != 0)

    def _exec_forever(self, stmt: cst.While, frame: Frame, state: State) -> State | None:
        """``while True:``: the body runs at least once and the loop is left only by a ``break``
        (a ``return`` or ``raise`` leaves the function): the state after it is the join of the
        states the ``break`` statements leave, on any round (a reset before the ``break`` counts
        after the loop; the ``else`` block never runs).  The rounds run as :meth:`_exec_loop`'s."""
        saved, saved_breaks = frame.loop_exits, frame.loop_breaks
        breaks: list[State] = []
        try:
            head: State | None = state
            for _ in range(self.LOOP_ROUNDS):
                frame.loop_exits, frame.loop_breaks = [], []
                body_end = self._exec_block(stmt.body, frame, head.copy())
                breaks += frame.loop_breaks
                again = [x for x in frame.loop_exits if not any(x is b for b in frame.loop_breaks)]
                nxt = State.join([state, body_end, *again], full=True) or state
                stable = nxt.env == head.env and nxt.heap == head.heap
                head = nxt
                if stable:
                    break
        finally:
            frame.loop_exits, frame.loop_breaks = saved, saved_breaks
        return State.join(breaks, full=True)  # (`break`s at different depths)

    def _range_row_resets(self, stmt: cst.For, frame: Frame, state: State) -> None:
        """``for i in range(R, P): buf[i] = v`` (or ``buf[i].fill_(v)``, ``.zero_()``), the row
        write a statement of the loop's body on every round: rows ``[R:P]`` of ``buf`` hold ``v``
        after the loop, as after ``buf[R:P] = v``."""
        it = stmt.iter
        if not (isinstance(stmt.target, cst.Name) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
                and it.func.value == "range" and "range" not in state.env and len(it.args) == 2
                and all(a.keyword is None and not a.star for a in it.args)
                and isinstance(stmt.body, cst.IndentedBlock)):
            return
        self._row_resets(stmt, stmt.target.value, it.args[0].value, it.args[1].value, stmt.body.body,
                         frame, state)

    def _while_row_resets(self, stmt: cst.While, entry: State, frame: Frame, state: State) -> None:
        """``i = R`` then ``while i < P: buf[i] = v; i += 1`` (the increment the body's last
        statement): rows ``[R:P]`` of ``buf`` hold ``v`` after the loop, as after
        :meth:`_range_row_resets`' ``for`` loop (``entry``: the state before the loop)."""
        test, body = stmt.test, stmt.body
        if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.LessThan)
                and isinstance(before := entry.env.get(test.left.value), CountVal) and before.canon
                and isinstance(body, cst.IndentedBlock) and len(body.body) >= 2
                and isinstance(last := body.body[-1], cst.SimpleStatementLine) and len(last.body) == 1
                and isinstance(inc := last.body[0], cst.AugAssign) and isinstance(inc.operator, cst.AddAssign)
                and isinstance(inc.target, cst.Name) and inc.target.value == test.left.value
                and self._literal(inc.value) == "1"):
            return
        i = test.left.value
        # the counter moves by the last statement only, the bound not at all (`i += 2`, `p -= 1`,
        # an increment before the write: rows would be skipped or the bound read after the loop
        # would not be the one the loop ran to)
        fixed = {i} | {n.value for n in _cst_walk(test.comparisons[0].comparator) if isinstance(n, cst.Name)}
        if any(fixed & _stored_names(b) for b in body.body[:-1]):
            return
        after = state.env.get(i)
        state.env[i] = before  # the lower bound: `i` as it was before the loop
        try:
            self._row_resets(stmt, i, test.left, test.comparisons[0].comparator, body.body[:-1], frame, state)
        finally:
            if after is None:
                state.env.pop(i, None)
            else:
                state.env[i] = after

    def _row_resets(self, stmt, i: str, lower, upper, body, frame: Frame, state: State) -> None:
        """The row resets of a loop over ``i`` from ``lower`` to ``upper`` whose ``body`` (statements)
        writes row ``i`` of a buffer on every round (no ``break``/``continue`` skips a round's
        write): rows ``[lower:upper]`` of each such buffer are reset (:meth:`_range_row_resets`)."""
        if _skips_round(body):
            return

        def row(sub) -> bool:
            return isinstance(sub, cst.Subscript) and len(sub.slice) == 1 \
                and isinstance(sub.slice[0].slice, cst.Index) \
                and isinstance(sub.slice[0].slice.value, cst.Name) and sub.slice[0].slice.value.value == i \
                and not any(isinstance(n, cst.Name) and n.value == i for n in _cst_walk(sub.value))

        for line_stmt in body:
            if not isinstance(line_stmt, cst.SimpleStatementLine) or len(line_stmt.body) != 1:
                continue
            small = line_stmt.body[0]
            target = value_node = None
            method = ""
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and row(small.targets[0].target):
                target, value_node = small.targets[0].target, small.value
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and isinstance(small.value.func, cst.Attribute) and row(small.value.func.value) \
                    and small.value.func.attr.value in self.p.fill_methods:
                target, method = small.value.func.value, small.value.func.attr.value
            if target is None:
                continue
            base = self._eval_quiet(target.value, state)
            if not isinstance(base, Refs):
                continue
            frame.stmt = line_stmt
            line = frame.seg.line(line_stmt, line_stmt)
            if method:
                vtext = self._fill_value(method, small.value)
                site = self._fill_site(method, small.value, frame, line, vtext)
            else:
                vtext = self._literal(value_node)
                site = self._site(frame, line, vtext, value_node, "value")
            for r in base.refs:
                self._reset(r, lower, upper, state, None, vtext, line, site)
        frame.stmt = stmt

    def _dataclass_fields(self, it, frame: Frame, state: State) -> tuple[str, ...] | None:
        """The field names, in order, of ``dataclasses.fields(self)`` (``fields`` imported from
        ``dataclasses``) when ``self``'s class is a project dataclass (its bases' fields first, as
        ``dataclasses`` orders them); else None."""
        if not (isinstance(it, cst.Call) and len(it.args) == 1 and it.args[0].keyword is None
                and isinstance(it.args[0].value, cst.Name) and it.args[0].value.value == "self"
                and frame.owner):
            return None
        func = it.func
        if isinstance(func, cst.Name):
            if self._from_import(frame, func.value) != ("dataclasses", "fields"):
                return None
        elif not (isinstance(func, cst.Attribute) and func.attr.value == "fields"
                  and isinstance(func.value, cst.Name)
                  and self._from_import(frame, func.value.value) == ("dataclasses", None)):
            return None
        # the receiver's classes (a base's method run on a subclass object sees the subclass's
        # fields: `self.buffers.reset_index_buffers()` on a `DecodeInputBuffers`)
        recv = state.env.get("self")
        keys = sorted({t for r in recv.refs for t in r.types}) if isinstance(recv, Refs) else []
        classes = [c for c in map(self.project.class_info, keys) if c is not None] \
            or [c for c in [self.project.class_info(frame.cls or frame.owner)] if c is not None]
        names: list[str] = []
        for cls in classes:
            if not cls.is_dataclass:
                return None
            for c in reversed(self.project.mro(cls)):
                if c.is_dataclass:
                    names += [n for n in c.fields if n not in names]
        return tuple(names) if 0 < len(names) <= MAX_FIELDS else None

    def _nonempty_iter(self, it, frame: Frame) -> bool:
        """``self.x`` (also under ``enumerate``/``zip``/``.items()``...) where a method of the
        frame's class asserts ``self.x`` non-empty (``assert self.x, "..."``)."""
        while isinstance(it, cst.Call):
            if isinstance(it.func, cst.Name) and it.func.value in ("enumerate", "zip", "list", "tuple", "reversed") \
                    and it.args:
                it = it.args[0].value
            elif isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "values", "keys") \
                    and not it.args:
                it = it.func.value
            else:
                return False
        if not (isinstance(it, cst.Attribute) and isinstance(it.value, cst.Name) and it.value.value == "self"
                and frame.owner):
            return False
        cls = self.project.class_info(frame.cls or frame.owner)
        return cls is not None and self.project.asserted_nonempty(cls, it.attr.value)

    def _exec_if(self, stmt: cst.If, frame: Frame, state: State, elif_: bool = False) -> State | None:
        if stmt.orelse is None and isinstance(stmt.test, cst.BooleanOperation) \
                and isinstance(stmt.test.operator, cst.And):
            # `if A and B: body` runs as `if A: if B: body`: where B fails under A, what B says
            # (a count comparison: no padding rows) holds on that path alone
            return self._exec_if(self._split_and(stmt, frame), frame, state, elif_)
        # an `elif` test: a reset cannot be inserted right before it
        frame.stmt, frame.fixable = stmt, not elif_
        self._eval(stmt.test, frame, state)
        self._real_by_comparison(stmt.test, state)
        guard = self._is_padding_guard(stmt.test, frame, state, stmt.body)
        known = self._none_test(stmt.test, state)
        if known is None:
            known = self._key_test(stmt.test, frame, state)
        if known is None:
            known = self._literal_test(stmt.test, frame, state)
        if known is True:  # `if out is not None:` with `out` a tensor on every path here
            return self._exec_block(stmt.body, frame, state)
        if known is False:
            if stmt.orelse is None:
                return state
            if isinstance(stmt.orelse, cst.If):
                return self._exec_if(stmt.orelse, frame, state, elif_=True)
            return self._exec_block(stmt.orelse.body, frame, state)
        if not guard and stmt.orelse is None:
            guard = self._reset_guard(stmt, state)
        then_keys, else_keys = self._cond_keys(stmt.test, frame, state)
        saved = self._active
        then_start, else_start = state.copy(), state.copy()
        if frame.cond_fields:
            self._refine_fields(frame, then_start, saved | then_keys)
            self._refine_fields(frame, else_start, saved | else_keys)
        self._refine_none(stmt.test, then_start, else_start)
        self._refine_extents(stmt.test, then_start, else_start)
        self._equal_by_test(stmt.test, then_start, else_start)
        self._active = saved | then_keys
        then_env = dict(then_start.env) if then_keys else None
        self._branch_writes.append(set())
        test_key = (frame.qual, self._text(self._and_origin.get(id(stmt), stmt).test))
        self._branch_tests.append((*test_key, True))
        try:
            then_end = self._exec_block(stmt.body, frame, then_start)
        finally:
            self._branch_tests.pop()
            then_wrote = self._branch_done()
        self._stamp_branch_locals(then_env, then_end, saved | then_keys)
        self._settle_partial(then_end, saved | then_keys)
        self._active = saved
        if stmt.orelse is None:
            if guard:
                # `if P > R:` only skips when there are no padding rows: the reset counts.
                return then_end if then_end is not None else else_start
            self._unread_when_false(stmt.test, then_end, else_start)
            self._absent_when_false(stmt.test, then_end, else_start, frame)
            self._empty_when_false(stmt.test, then_end, else_start)
            self._settle_partial(else_start, saved | else_keys)
            if then_end is None:
                self._active = saved | else_keys
            out = _continues(State.join([then_end, else_start], branches=not frame.dummy), state)
            self._keep_conditional(out, then_end, else_start, then_keys, else_keys, frame)
            self._partial_prefixes(out, then_end, else_start, stmt, frame, then_keys, else_keys, then_wrote, set())
            return out
        self._active = saved | else_keys
        else_env = dict(else_start.env) if else_keys else None
        self._branch_writes.append(set())
        self._branch_tests.append((*test_key, False))
        try:
            if isinstance(stmt.orelse, cst.If):
                if id(stmt.orelse) not in self._elif_context:
                    orig = self._and_origin.get(id(stmt), stmt)
                    reach = f"`{self._text(orig.test)}` fails"
                    outer = self._elif_context.get(id(orig), "")
                    self._elif_context[id(stmt.orelse)] = f"{outer} and {reach}" if outer else reach
                else_end = self._exec_if(stmt.orelse, frame, else_start, elif_=True)
            else:
                else_end = self._exec_block(stmt.orelse.body, frame, else_start)
        finally:
            self._branch_tests.pop()
            else_wrote = self._branch_done()
        self._stamp_branch_locals(else_env, else_end, saved | else_keys)
        self._settle_partial(else_end, saved | else_keys)
        self._active = saved | (then_keys if else_end is None else else_keys if then_end is None
                                else frozenset())
        self._unread_when_false(stmt.test, then_end, else_end)
        self._absent_when_false(stmt.test, then_end, else_end, frame)
        self._empty_when_false(stmt.test, then_end, else_end)
        out = _continues(State.join([then_end, else_end], branches=not frame.dummy), state)
        self._keep_conditional(out, then_end, else_end, then_keys, else_keys, frame)
        self._partial_prefixes(out, then_end, else_end, stmt, frame, then_keys, else_keys, then_wrote, else_wrote)
        return out

    def _branch_done(self) -> set[str]:
        """End of a branch of a test: the locations it wrote (:attr:`_branch_writes`), which the
        enclosing branch wrote too."""
        wrote = self._branch_writes.pop()
        if self._branch_writes:
            self._branch_writes[-1].update(wrote)
        return wrote

    @staticmethod
    def _stamp_branch_locals(before: dict | None, end: State | None, facts: frozenset) -> None:
        """At the end of a branch taken under ``facts``: each local the branch bound carries the
        resets made under those facts, as the heap holds them there (``if use_spec: extra =
        dict(x=buf[:P])``, with ``buf[R:]`` reset earlier under the same test in another
        function): after the join, and in a callee, the test is no longer active."""
        if before is None or end is None:
            return
        for name, v in list(end.env.items()):
            if before.get(name) is not v:
                stamped = stamp(v, end, facts, conditional_only=True)
                if stamped is not v:
                    end.env[name] = stamped

    # ------------------------------------------------------- path conditions
    _UNSTABLE = (cst.Call, cst.Await, cst.Lambda, cst.NamedExpr, cst.Yield, cst.ListComp,
                 cst.GeneratorExp, cst.DictComp, cst.SetComp)

    def _cond_keys(self, test, frame: Frame, state: State) -> tuple[frozenset, frozenset]:
        """The facts ``(key, polarity)`` that hold on the two branches of ``if test:``.

        A fact is a test of names, attributes and constants (no call): ``x is None``,
        ``a == b``, ``flag``, ``n > m``; ``not``, ``and`` and ``or`` combine them.  Its key
        names the versions of the names it reads (a test after a reassignment is another
        fact) and, for names of this call, the call; a test of ``self``'s attributes only is
        keyed on the object ``self`` is, unless this function stores one of them.  A reset
        made under a fact and read under the same fact covers that read, where paths joined
        in between (path correlation of repeated tests)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            t, e = self._cond_keys(test.expression, frame, state)
            return e, t
        if isinstance(test, cst.BooleanOperation):
            lt, le = self._cond_keys(test.left, frame, state)
            rt, re_ = self._cond_keys(test.right, frame, state)
            if isinstance(test.operator, cst.And):
                return lt | rt, frozenset()
            return frozenset(), le | re_
        none = frozenset(), frozenset()
        if isinstance(test, cst.Name):
            held = state.env.get(test.value)
            if isinstance(held, FactVal):
                # a name bound to a test (`use_spec = self.spec is not None`; a parameter passed
                # it): that test, so two functions that test it agree; not in a function that
                # stores an attribute the test read (there it may test another value)
                if self._stores_self(frame, [c for c in held.chains if c.startswith("self.")]):
                    return none
                return held.then_keys, held.else_keys
        fact = self._cond_atom(test)
        if fact is None:
            return none
        atom, pol, chains = fact
        if all(c.startswith("self.") for c in chains):
            me = state.env.get("self")
            if not isinstance(me, Refs) or not me.refs or self._stores_self(frame, chains):
                return none
            key = ("self", tuple(sorted(r.loc for r in me.refs)), atom)
        else:
            names = sorted({".".join(c.split(".")[:i]) for c in chains for i in range(1, c.count(".") + 2)})
            key = (frame.qual, atom, tuple((n, frame.epochs.get(n, 0)) for n in names))
        return frozenset({(key, pol)}), frozenset({(key, not pol)})

    def _cond_atom(self, test) -> tuple[str, bool, tuple[str, ...]] | None:
        """``(atom, polarity, dotted names read)`` of a test that is one fact (``x is None``,
        ``a == b``, ``flag``, ``n > m``: names, attributes and constants, no call), else None;
        memoised per node."""
        got = self._atoms.get(id(test))
        if got is not None:
            return got[1]
        fact = None
        pol = True
        atom = None
        if isinstance(test, cst.Comparison):
            if len(test.comparisons) == 1:
                comp = test.comparisons[0]
                op = comp.operator
                if isinstance(op, (cst.Is, cst.IsNot)) and isinstance(comp.comparator, cst.Name) \
                        and comp.comparator.value == "None":
                    atom, pol = f"{self._text(test.left)} is None", isinstance(op, cst.Is)
                elif isinstance(op, (cst.Equal, cst.NotEqual)):
                    atom, pol = f"{self._text(test.left)} == {self._text(comp.comparator)}", isinstance(op, cst.Equal)
                else:
                    atom = self._text(test)
        elif isinstance(test, (cst.Name, cst.Attribute)):
            atom = self._text(test)
        if atom is not None:
            chains: list[str] = []
            stable = True

            class _V(cst.CSTVisitor):
                def on_visit(self, node) -> bool:
                    nonlocal stable
                    if isinstance(node, Interpreter._UNSTABLE):
                        stable = False
                        return False
                    if isinstance(node, (cst.Name, cst.Attribute)):
                        d = dotted(node)
                        if d is None:
                            stable = False
                            return False
                        if d not in ("None", "True", "False"):
                            chains.append(d)
                        return False
                    return True

            test.visit(_V())
            if stable and chains:
                fact = (atom, pol, tuple(chains))
        self._atoms[id(test)] = (test, fact)
        return fact

    def _test_chains(self, test) -> list[str]:
        """The dotted names the atoms of a test read (``not``, ``and``, ``or`` looked through)."""
        if isinstance(test, cst.UnaryOperation):
            return self._test_chains(test.expression)
        if isinstance(test, cst.BooleanOperation):
            return [*self._test_chains(test.left), *self._test_chains(test.right)]
        fact = self._cond_atom(test)
        return list(fact[2]) if fact is not None else []

    def _stores_self(self, frame: Frame, chains: list[str]) -> bool:
        """Whether the function of ``frame`` stores one of the ``self.`` attributes ``chains``."""
        func = frame.seg.func
        got = self._self_stored.get(id(func))
        if got is None:
            stored: set[str] = set()

            class _V(cst.CSTVisitor):
                def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
                    for t in ([e.value for e in node.target.elements]
                              if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]):
                        d = dotted(t)
                        if d:
                            stored.add(d)

                def visit_AugAssign(self, node: cst.AugAssign) -> None:
                    d = dotted(node.target)
                    if d:
                        stored.add(d)

            func.visit(_V())
            got = self._self_stored[id(func)] = (func, frozenset(stored))
        return any(c == s or c.startswith(s + ".") or s.startswith(c + ".") for c in chains for s in got[1])

    def _bump(self, target, frame: Frame, state: State) -> None:
        """A name or attribute is assigned: tests of it made before are other facts now, and the
        resets kept under them are dropped (no later test can hold them)."""
        d = dotted(target)
        if not d:
            return
        frame.epochs[d] = frame.epochs.get(d, 0) + 1
        locs = frame.cond_locs.pop(d, None)
        for loc in locs or ():
            st = dict.get(state.heap, loc)
            if st is None:
                continue
            keep = frozenset(r for r in st.clean if not any(
                k[0][0] == frame.qual and any(n == d for n, _ in k[0][2]) for k in r.when))
            if keep != st.clean:
                state.heap[loc] = replace(st, clean=keep)

    _NOT_NONE = re.compile(r"(self(?:\.\w+)+)( is None)?")

    def _when_for(self, when: frozenset, loc: str) -> frozenset:
        """The facts of ``when`` a read of ``loc`` does not imply: a buffer held in ``self.D``
        (``self.D['k']``, ``self.D.x``) is read only where ``self.D`` is not None, so a reset
        of it made under ``if self.D is not None:`` holds wherever it is read."""
        if not when:
            return when
        out = set()
        for fact in when:
            (key, pol) = fact
            if key[0] == "self":
                m = self._NOT_NONE.fullmatch(key[2])
                held = m is not None and any(
                    loc.startswith((me + m.group(1)[4:] + "[", me + m.group(1)[4:] + ".")) for me in key[1])
                # `self.D` true, or `self.D is None` false (`is not None` is kept as that, negated)
                if held and pol == (m.group(2) is None):
                    continue
            out.add(fact)
        return frozenset(out) if len(out) != len(when) else when

    def _split_and(self, stmt: cst.If, frame: Frame) -> cst.If:
        """``if A: if B: body`` for ``if A and B: body`` (made once per statement; the new
        statements take the lines of the one they stand for)."""
        got = self._and_memo.get(id(stmt))
        if got is not None and got[0] is stmt:
            return got[1]
        inner = stmt.with_changes(test=stmt.test.right)
        outer = stmt.with_changes(test=stmt.test.left, body=cst.IndentedBlock(body=[inner]))
        frame.seg.same_lines(inner, stmt)
        frame.seg.same_lines(outer, stmt)
        self._and_memo[id(stmt)] = (stmt, outer, inner)
        origin = self._and_origin.get(id(stmt), stmt)
        self._and_origin[id(inner)] = self._and_origin[id(outer)] = origin
        self._keep.extend((inner, outer))
        return outer

    def _keep_conditional(self, out: State | None, a: State | None, b: State | None,
                          ka: frozenset, kb: frozenset, frame: Frame) -> None:
        """After ``if test:`` joins: a reset one branch made and the other did not holds where
        that branch's test holds (kept as a conditional reset, :attr:`Reset.when`)."""
        if out is None or a is None or b is None or not (ka or kb):
            return
        local = {n for (k, _) in ka | kb if k[0] == frame.qual for n, _ in k[2]}
        # an object field whose value differs between the branches of a test of this function's
        # own local names: the record ``?@loc.f`` = (joined value, ((facts, value), ...)) lives on
        # the joined path (a later join with a path that lacks it drops it; a store of the field
        # deletes it), and a later test of the same facts gives each branch its own value back
        # (:meth:`_refine_fields`)
        record = bool(ka and kb) and all(k[0] == frame.qual and all("." not in n for n, _ in k[2])
                                         for k, _ in ka | kb)
        for loc in a.heap.dirty | b.heap.dirty:
            if loc.startswith("?"):
                continue
            if loc.startswith("@"):
                va, vb = dict.get(a.heap, loc), dict.get(b.heap, loc)
                if record and va != vb:  # (None: no value stored on that path)
                    joined = dict.get(out.heap, loc)
                    if joined is not None:
                        out.heap["?" + loc] = (joined, ((ka, va), (kb, vb)))
                        frame.cond_fields.add("?" + loc)
                        # the branches whose value some path through them did not store (a test
                        # nested in the branch, `if not skip and ready:`): not stored wherever
                        # the branch's facts hold (:meth:`_stored_under`)
                        maybe = tuple(k for k, h in ((ka, a.heap), (kb, b.heap)) if dict.get(h, UNSET + loc))
                        if maybe:
                            out.heap[MAYBE_UNSET + loc] = maybe
                            frame.cond_fields.add(MAYBE_UNSET + loc)
                continue
            sa, sb = dict.get(a.heap, loc, PERSISTENT), dict.get(b.heap, loc, PERSISTENT)
            if not isinstance(sa, LocState) or not isinstance(sb, LocState):
                continue
            ca, cb = sa.clean, sb.clean
            extra = set()
            if sa.extents != sb.extents:
                # a prefix one branch wrote past the prefix both wrote: rows [k:x] written where
                # that branch's test holds (`if full and bs < r: s[bs:r].zero_()` after `s[:bs]`)
                common = sa.extents & sb.extents
                for mine, facts in ((sa.extents, ka), (sb.extents, kb)):
                    if facts:
                        extra.update(Reset(k, ko, when=facts, upto=x, exact=True)
                                     for x, xo in mine - common if not xo for k, ko in common)
            if ca == cb and not extra:
                continue
            if ka:
                extra.update(replace(r, when=r.when | ka) for r in ca - cb)
            if kb:
                extra.update(replace(r, when=r.when | kb) for r in cb - ca)
            extra = {replace(r, when=w) if (w := self._when_for(r.when, loc)) != r.when else r for r in extra}
            if extra:
                j = dict.get(out.heap, loc, PERSISTENT)
                out.heap[loc] = replace(j, clean=j.clean | extra)
                for n in local:
                    frame.cond_locs.setdefault(n, set()).add(loc)

    def _partial_prefixes(self, out: State | None, a: State | None, b: State | None, stmt: cst.If,
                          frame: Frame, ka: frozenset, kb: frozenset, wa: set, wb: set) -> None:
        """After ``if test:`` joins: rows ``[0:k]`` of a persistent buffer that one branch wrote
        (a prefix write, :meth:`_extend`) and the other left untouched hold, on the other
        branch, what an earlier step wrote there (``if x is not None: buf[:n].copy_(x)`` with no
        ``else``).  The code writes those rows on one path, so they are this step's rows: kept as
        a taint of the buffer (:attr:`Taint.partial`, rows from 0) that a later write of the
        prefix on the joined path removes, and, where the test is one of this function's facts,
        a conditional write of them (covering reads under the same test).

        Only where the other branch wrote nothing into the buffer (``wa``/``wb``: the locations
        each branch wrote rows of, in a loop or a callee too, or replayed a graph bound to; ``*``:
        it ran a method of its own object that is not followed) and no code on its path so far
        stored into it or was handed it (or an object holding it) without the analysis reading
        that code (no :data:`MAY_WRITE` mark): such code may have written the rows."""
        if out is None or a is None or b is None or frame.dummy or frame.dummy_any:
            return
        # `if A and B:` runs as `if A: if B:` (:meth:`_split_and`): both name the whole test; an
        # `elif` is reached where the tests before it failed (:attr:`_elif_context`)
        orig = self._and_origin.get(id(stmt), stmt)
        test = self._text(orig.test)
        context = self._elif_context.get(id(orig), "")
        line = frame.seg.line(stmt, stmt)
        # `if holder is not None:` / `if holder:`: where the holder of a buffer (or the buffer) is
        # None it does not exist, and no path reads its rows there; `exists` is the way the test
        # goes where it does, `holders` the locations the test names
        exists, named = "", None
        t = stmt.test
        if isinstance(t, cst.Comparison) and len(t.comparisons) == 1:
            comp = t.comparisons[0]
            if isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None" \
                    and isinstance(comp.operator, (cst.Is, cst.IsNot)):
                exists, named = "holds" if isinstance(comp.operator, cst.IsNot) else "fails", t.left
        elif isinstance(t, (cst.Name, cst.Attribute)):
            exists, named = "holds", t
        elif isinstance(t, cst.UnaryOperation) and isinstance(t.operator, cst.Not) \
                and isinstance(t.expression, (cst.Name, cst.Attribute)):
            exists, named = "fails", t.expression
        holders = None  # (evaluated where a taint would be added)
        for loc in a.heap.dirty | b.heap.dirty:
            if loc[:1] in ("@", "?", "!") or loc.startswith(("new:", "arg:")):
                continue
            sa, sb = a.heap.get(loc) or PERSISTENT, b.heap.get(loc) or PERSISTENT
            if not isinstance(sa, LocState) or not isinstance(sb, LocState):
                continue
            base = loc.split("#", 1)[0]
            for mine, other, end, facts, way, wrote in ((sa, sb, b, ka, "holds", wb), (sb, sa, a, kb, "fails", wa)):
                if not mine.extents or not mine.entry_stale or not other.entry_stale or other.extents \
                        or base in wrote or "*" in wrote or end.heap.get(MAY_WRITE + loc) is not None \
                        or any(end.heap.get(MAY_WRITE + h) is not None for h in _all_holders(base)):
                    continue
                unwritten = f"`{test}` {'fails' if way == 'holds' else 'holds'}"
                if context:
                    unwritten = f"{context} and {unwritten}"
                add, cover = set(), set()
                for k, off in sorted(mine.extents):
                    if off or self.p.is_padded_name(k) or any(t.partial and t.padded == k for t in mine.taints):
                        continue  # (a nested test already named the path that leaves them)
                    written = self._extent_sites.get((loc, k, off))
                    if written is None:
                        continue
                    if way == exists:
                        if holders is None:
                            v = self._eval_quiet(named, out)
                            holders = tuple(r.loc for r in v.refs) if isinstance(v, Refs) else ()
                        if any(loc == h or loc.startswith((h + "[", h + ".", h + "#")) for h in holders):
                            continue
                    add.add(Taint(
                        buffer=written, padded=k, offset=0, reason="stale", real=(DUMMY_ROWS,),
                        padded_written=written[written.rfind("[:") + 2:-1] if written.endswith("]") else k,
                        partial=unwritten, partial_test=(frame.qual, test, way == "holds") if not context else (),
                        steps=((line, f"rows of `{written}` are not written where {unwritten}: there they "
                                      f"hold what an earlier step wrote", frame.path),)))
                    if facts:
                        cover.add(Reset(DUMMY_ROWS, 0, when=facts, upto=k, exact=True))
                if add:
                    self._partial_locs.add(loc)
                    j = out.heap.get(loc) or PERSISTENT
                    out.heap[loc] = replace(j, taints=j.taints | frozenset(add), clean=j.clean | frozenset(cover))
                    if cover:
                        # a write made under a test of this function's locals: dropped where one
                        # of them is assigned again and where the function returns (another call
                        # of it tests other values under the same names)
                        for n in {n for (k, _) in facts if k[0] == frame.qual for n, _ in k[2]}:
                            frame.cond_locs.setdefault(n, set()).add(loc)

    def _settle_partial(self, end: State | None, facts: frozenset) -> None:
        """At the end of a branch taken under ``facts``: rows one branch of an earlier test left
        unwritten (:attr:`Taint.partial`) that the write made there covers under facts holding on
        this branch too (the conditional write :meth:`_partial_prefixes` records) are written on
        this path (``if not v: buf[:n].copy_(x)`` then ``if v: kernel(buf)``: on the second
        test's other branch, the first test's write ran).  Else the join of the second test
        keeps that branch's copy of the taint, true only where the first test failed."""
        if end is None or not facts or not self._partial_locs:
            return
        for loc in self._partial_locs:
            st = dict.get(end.heap, loc)
            if not isinstance(st, LocState) or not st.clean or not any(t.partial for t in st.taints):
                continue
            clean = frozenset(r for r in st.clean if r.when and all(self._stable_fact(k) for k, _ in r.when))
            if not clean:
                continue
            gone = frozenset(t for t in st.taints if t.partial and covers(clean, t, self._real_for, None, facts))
            if gone:
                end.heap[loc] = replace(st, taints=st.taints - gone)

    def _stable_fact(self, key) -> bool:
        """Whether a fact (a test's key, :meth:`_cond_keys`) means the same at two tests of one
        function: a test of its locals (each assignment makes another key, :meth:`_bump`), or
        of attributes of ``self`` that its classes set only at construction or set-up (a
        setting: ``self.supports_varlen``).  An attribute a method sets (``self.configure(so)``
        between the tests) may have changed: its key does not say so."""
        if not (isinstance(key, tuple) and key and key[0] == "self"):
            return True
        me = self._frames[-1] if self._frames else None
        cls_key = (me.cls or me.owner) if me is not None else ""
        types = frozenset({cls_key}) if cls_key else frozenset()
        text = key[2] if len(key) > 2 and isinstance(key[2], str) else ""
        attrs = {m.group(1) for m in re.finditer(r"\bself\.(\w+)", text)}
        return bool(types and attrs) and all(self._set_at_construction(types, a) for a in attrs)

    @staticmethod
    def _refine_fields(frame: Frame, state: State, facts: frozenset) -> None:
        """On a branch where ``facts`` hold: an object field that still holds the join of an
        earlier test's branches (its record on this path, :attr:`Frame.cond_fields`) holds the
        value of the branch whose facts hold here."""
        for rk in frame.cond_fields:
            if rk.startswith(MAYBE_UNSET):
                continue  # (which branches may have stored nothing: no values to refine)
            rec = dict.get(state.heap, rk)
            if rec is None:
                continue  # not on every path here, or stored since
            key = rk[1:]
            joined, alts = rec
            if dict.get(state.heap, key) != joined:
                continue
            chosen = [v for when, v in alts if when <= facts]
            if not chosen:
                continue
            if any(v is None for v in chosen):
                if len(chosen) == 1:
                    del state.heap[key]  # no value stored on that path: the field's own location
                continue
            state.heap[key] = join_all(chosen)

    @staticmethod
    def _drop_local_conditions(state: State, qual: str) -> None:
        """A call returns: its resets made under tests of its own locals hold under facts no
        other code can test again (and would make every call's heap differ): drop them."""
        for loc in list(state.heap.dirty):
            if loc.startswith(("@", "?", "!")):
                continue
            st = dict.get(state.heap, loc)
            if st is None or not any(r.when for r in st.clean):
                continue
            keep = frozenset(r for r in st.clean if not any(k[0][0] == qual for k in r.when))
            if keep != st.clean:
                state.heap[loc] = replace(st, clean=keep)

    def _reset_guard(self, stmt: cst.If, state: State) -> bool:
        """``if P != X:`` (``>``, ``<``) with ``P`` a padded count, over a body that only resets
        buffers (fills, stores of literals): the reset runs whenever there are padding rows (when
        the test fails the counts are equal), so the path that skips it has none."""
        test = stmt.test
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.NotEqual, cst.GreaterThan, cst.LessThan))):
            return False
        sides = [self._count(test.left, state), self._count(test.comparisons[0].comparator, state)]
        if not any(c is not None and c.canon and self.p.is_padded_name(c.canon) for c in sides):
            return False
        body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else [stmt.body]
        smalls = []
        for st in body:
            if not isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                return False
            smalls.extend(st.body)
        if not smalls:
            return False
        for sm in smalls:
            if isinstance(sm, cst.Expr) and isinstance(sm.value, cst.Call) \
                    and isinstance(sm.value.func, cst.Attribute) \
                    and sm.value.func.attr.value in self.p.fill_methods:
                continue
            if isinstance(sm, cst.Assign) and all(isinstance(t.target, cst.Subscript) for t in sm.targets) \
                    and self._literal(sm.value):
                continue
            if isinstance(sm, cst.Pass):
                continue
            return False
        return True

    def _unread_when_false(self, test, then_end: State | None, else_end: State | None) -> None:
        """``if C:`` where the profile says a field's consumer reads it only when ``C`` holds
        (``[fields.X] read_when``): on the other path that field's buffers are not read, so
        they take the state the ``C`` path left (a reset under ``if C:`` counts)."""
        if then_end is None or else_end is None or not self._read_when:
            return
        fields = self._read_when.get(self._text(test))
        if not fields:
            return
        for loc in then_end.heap.dirty:
            if loc.startswith(("@", "?", "!")) or not (self._loc_owners.get(loc, set()) & fields):
                continue
            st = then_end.heap.get(loc)
            if st is not None:
                else_end.heap[loc] = st

    def _literal_test(self, test, frame: Frame, state: State) -> bool | None:
        """The outcome of a test of names that hold a literal ``True``/``False`` on every path
        here (:class:`BoolVal`: ``if not dummy_run:`` in a callee that ``_dummy_run`` called with
        ``dummy_run=True``), with ``not``, ``and``, ``or`` and ``is None``; else None (unknown)."""
        if isinstance(test, cst.Name):
            v = state.env.get(test.value)
            if isinstance(v, BoolVal) and test.value not in state.env.get(PARTIAL, ()) \
                    and test.value not in self._rebound_elsewhere(frame):
                return v.value
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._literal_test(test.expression, frame, state)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            short = isinstance(test.operator, cst.Or)  # the outcome that decides alone
            left = self._literal_test(test.left, frame, state)
            right = self._literal_test(test.right, frame, state)
            if left is short or right is short:
                return short
            if left is not None and right is not None:
                return not short
            return None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            comp = test.comparisons[0]
            if isinstance(comp.operator, (cst.Is, cst.IsNot)) and isinstance(comp.comparator, cst.Name) \
                    and comp.comparator.value == "None" and self._literal_test(test.left, frame, state) is not None:
                return isinstance(comp.operator, cst.IsNot)
        return None

    def _slot_test(self, test, frame: Frame, state: State) -> tuple[str, bool] | None:
        """``registry.has_slot("mamba_track_mask")`` (profile ``[registry] has``), or its ``not``,
        the name a literal or a loop variable over literals, of a slot the class registers: (the
        slot's buffer attribute path, the branch where the slot exists); else None."""
        present = True
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, present = test.expression, False
        path = self._slot_path(test, self.p.registry.has if self.p.registry is not None else "", frame, state)
        return (path, present) if path is not None else None

    def _slot_path(self, call, method: str, frame: Frame, state: State) -> str | None:
        """The buffer attribute path of the registry slot ``call`` names, ``registry.<method>(k)``
        with ``k`` a literal or a loop variable over literals, where the frame's class registers
        one slot of that name (:meth:`CallGraph.registry_slots`); else None."""
        if not method or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
                or call.func.attr.value != method or len(call.args) != 1 \
                or call.args[0].keyword is not None or call.args[0].star:
            return None
        key = self._key_of(call.args[0].value, frame, state)
        if key is None or len(key.keys) != 1:
            return None
        name = next(iter(key.keys))
        cls = self.project.class_info(frame.cls or frame.owner)
        paths = [p for p, *_ in (self.graph.registry_slots(cls) if cls is not None else ())
                 if p.rsplit(".", 1)[-1] == name]
        return paths[0] if len(paths) == 1 else None

    def _absent_when_false(self, test, then_end: State | None, else_end: State | None, frame: Frame) -> None:
        """``if registry.has_slot(k):`` (:meth:`_slot_test`): on the branch where the slot does not
        exist nothing reads its buffer, so the buffer takes the state the other branch left (a
        reset of it under the test counts); every other buffer joins as usual (a slot the builder
        registers under a setting may be absent, and a reset of another buffer under the test
        then did not run)."""
        if then_end is None or else_end is None:
            return
        got = self._slot_test(test, frame, then_end)
        if got is None:
            return
        path, present = got
        src, dst = (then_end, else_end) if present else (else_end, then_end)
        for loc in self._self_attr_locs(path, src):
            for k in (loc, loc + "#host", loc + "#dev"):
                st = dict.get(src.heap, k)
                if isinstance(st, LocState):
                    dst.heap[k] = st

    def _block_binds(self, body) -> frozenset[str]:
        """The names a statement block binds (assignments, loop targets, ``with ... as``, walrus),
        memoised per block."""
        got = self._bound_memo.get(id(body))
        if got is None:
            names: set[str] = set()

            class _V(cst.CSTVisitor):
                def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
                    names.update(n.value for n in _target_names(node.target))

                def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                    names.update(n.value for n in _target_names(node.target))

                def visit_AugAssign(self, node: cst.AugAssign) -> None:
                    names.update(n.value for n in _target_names(node.target))

                def visit_For(self, node: cst.For) -> None:
                    names.update(n.value for n in _target_names(node.target))

                def visit_AsName(self, node: cst.AsName) -> None:
                    names.update(n.value for n in _target_names(node.name))

                def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
                    names.update(n.value for n in _target_names(node.target))

            body.visit(_V())
            got = self._bound_memo[id(body)] = (body, frozenset(names))
        return got[1]

    def _rebound_elsewhere(self, frame: Frame) -> frozenset[str]:
        """Names of the frame's function (nested functions included) that a statement the
        interpreter does not bind may rebind: ``global``/``nonlocal`` names, augmented assignment
        targets (``r &= x``), names a ``match`` pattern captures, walrus targets (a comprehension
        binds them in the function), names a ``try`` body binds (its handlers start from the
        state before the body or after it).  A literal such a name held is not known to hold
        later (memoised per function)."""
        func = frame.seg.func
        got = self._rebound_memo.get(id(func))
        if got is None:
            names: set[str] = set()

            class _V(cst.CSTVisitor):
                def visit_Global(self, node: cst.Global) -> None:
                    names.update(n.name.value for n in node.names)

                def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
                    names.update(n.name.value for n in node.names)

                def visit_AugAssign(self, node: cst.AugAssign) -> None:
                    if isinstance(node.target, cst.Name):
                        names.add(node.target.value)

                def visit_MatchAs(self, node: cst.MatchAs) -> None:
                    if node.name is not None:
                        names.add(node.name.value)

                def visit_MatchStar(self, node: cst.MatchStar) -> None:
                    if node.name is not None:
                        names.add(node.name.value)

                def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
                    if node.rest is not None:
                        names.add(node.rest.value)

                def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
                    # (in a comprehension it binds the enclosing function's name; comprehensions
                    # are evaluated apart)
                    names.update(n.value for n in _target_names(node.target))

                def visit_Try(self, node: cst.Try) -> None:
                    tries.append(node.body)

                def visit_TryStar(self, node) -> None:
                    tries.append(node.body)

            tries: list = []  # a handler starts from the state before the body or after it, not between
            func.visit(_V())
            for body in tries:
                names.update(self._block_binds(body))
            got = self._rebound_memo[id(func)] = (func, frozenset(names))
        return got[1]

    @staticmethod
    def _none_test(test, state: State) -> bool | None:
        """The outcome of ``x is None`` / ``x is not None`` where ``x`` is a tensor view on
        every path here (never None; rows ``[n:p]`` too); else None (unknown)."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.left, cst.Name)):
            return None
        comp = test.comparisons[0]
        if not (isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None"
                and isinstance(comp.operator, (cst.Is, cst.IsNot))):
            return None
        v = state.env.get(test.left.value)
        if not (isinstance(v, Refs) and v.refs and not v.maybe_none or isinstance(v, TailVal)):
            return None  # (a None value joined with an unknown one is not known to be None)
        return isinstance(comp.operator, cst.IsNot)

    def _key_test(self, test, frame: Frame, state: State) -> bool | None:
        """The outcome of a test on one known key (``f.name not in INDEX_BUFFERS``, ``name ==
        "seq_lens"``: a loop variable over field names or over a module-level tuple of names)
        against string literals or a module-level constant of them; else None (unknown)."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return None
        key = self._key_of(test.left, frame, state)
        if key is None or len(key.keys) != 1:
            return None
        (k,) = key.keys
        comp = test.comparisons[0]
        op, right = comp.operator, comp.comparator
        if isinstance(op, (cst.Equal, cst.NotEqual)):
            other = self._key_of(right, frame, state) if isinstance(right, cst.SimpleString) else None
            if other is None or len(other.keys) != 1:
                return None
            return (k in other.keys) == isinstance(op, cst.Equal)
        if isinstance(op, (cst.In, cst.NotIn)):
            if isinstance(right, (cst.Tuple, cst.List, cst.Set)) and right.elements and all(
                    isinstance(e.value, cst.SimpleString) for e in right.elements):
                names = {e.value.evaluated_value for e in right.elements}
            elif isinstance(right, cst.Name) and right.value.lstrip("_").isupper() \
                    and right.value not in state.env:
                names = set(self._module_keys(frame.module, right.value) or ())
                if not names:
                    return None
            else:
                return None
            return (k in names) == isinstance(op, cst.In)
        return None

    def _refine_none(self, test, then_state: State, else_state: State) -> None:
        """`if x is not None:` -> x is None on the other branch (and vice versa).

        A buffer that is None on a branch has no rows there: its locations are clean on that
        branch (`if buffers.rids_int is not None: buffers.rids_int.zero_()` resets every row
        that can exist), so a later use guarded the same way is not stale."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.left, (cst.Name, cst.Attribute))):
            return
        comp = test.comparisons[0]
        if not (isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None"
                and isinstance(comp.operator, (cst.Is, cst.IsNot))):
            return
        none_state = else_state if isinstance(comp.operator, cst.IsNot) else then_state
        v = self._eval_quiet(test.left, none_state)
        if isinstance(v, Refs):
            for r in v.refs:
                if r.count is None:
                    none_state.heap[r.loc] = LocState(False, frozenset(), frozenset({Reset(ALL)}))
        if isinstance(test.left, cst.Name):
            none_state.env[test.left.value] = CountVal(None)

    def _refine_extents(self, test, then_state: State, else_state: State) -> None:
        """A comparison of two counts orders them on each branch: where ``a >= b`` holds, a
        buffer whose rows ``[:a]`` this step wrote has rows ``[:b]`` written too (the segment
        ``[a:b]`` is empty).  ``if actual < padded: buf[actual:padded, 0] = 0`` then leaves no
        unwritten rows on the path that skips the reset."""
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return
        op = test.comparisons[0].operator
        a = self._count(test.left, then_state)
        b = self._count(test.comparisons[0].comparator, then_state)
        if a is None or b is None or not a.canon or not b.canon or a.dim or b.dim:
            return
        # (big, small) pairs that hold on the then / else branch: big >= small
        ge = {cst.LessThan: ([(b, a)], [(a, b)]), cst.LessThanEqual: ([(b, a)], [(a, b)]),
              cst.GreaterThan: ([(a, b)], [(b, a)]), cst.GreaterThanEqual: ([(a, b)], [(b, a)]),
              cst.Equal: ([(a, b), (b, a)], []), cst.NotEqual: ([], [(a, b), (b, a)])}.get(type(op))
        if ge is None:
            return
        for st, facts in zip((then_state, else_state), ge):
            for big, small in facts:
                key, implied = (big.canon, big.offset), (small.canon, small.offset)
                for loc, ls in list(st.heap.items()):
                    if isinstance(ls, LocState) and key in ls.extents and implied not in ls.extents:
                        st.heap[loc] = replace(ls, extents=ls.extents | {implied})

    def _equal_by_test(self, test, then_state: State, else_state: State) -> None:
        """Where a test says a padded count equals its real partner (``if num_reqs ==
        num_reqs_padded:``, the else of ``!=``, ``if P <= R:``, the else of ``if P > R:``; a
        padded count is never below its real one), there are no padding rows: the local that
        holds the padded count is bound to the real one on that branch (the join gives the
        padded one back after it)."""
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return
        op = type(test.comparisons[0].operator)
        left, right = test.left, test.comparisons[0].comparator
        a, b = self._count(left, then_state), self._count(right, then_state)
        if a is None or b is None or not a.canon or not b.canon or a.offset != b.offset or a.dim or b.dim:
            return
        for padded_node, p, r, equal_on in ((left, a, b, {cst.Equal: then_state, cst.NotEqual: else_state,
                                                          cst.LessThanEqual: then_state,
                                                          cst.GreaterThan: else_state}),
                                            (right, b, a, {cst.Equal: then_state, cst.NotEqual: else_state,
                                                           cst.GreaterThanEqual: then_state,
                                                           cst.LessThan: else_state})):
            st = equal_on.get(op)
            if st is None or not isinstance(padded_node, cst.Name) or not self.p.is_padded_name(p.canon) \
                    or not self._real_for(r.canon, p.canon):
                continue
            if isinstance(st.env.get(padded_node.value), (CountVal, UnknownVal, type(None))):
                # (a name bound to a tensor is left alone)
                st.env[padded_node.value] = self._cv(CountVal(r.canon, r.offset))
            return

    def _empty_when_false(self, test, then_end: State | None, else_end: State | None) -> None:
        """``if k > 0:`` (``k >= 1``, ``0 < k``, ``k != 0``, ``k``) around a write of ``buf[:k]``:
        where the test is false the prefix ``[:k]`` is empty, so "rows ``[:k]`` written" holds
        there too, and the paths join with the prefix kept (a later ``buf[:n]`` has rows
        ``[k:n]`` unwritten on both)."""
        if then_end is None or else_end is None:
            return
        k = None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op, right, left = test.comparisons[0].operator, test.comparisons[0].comparator, test.left
            if isinstance(right, cst.Integer) and (
                    (isinstance(op, cst.GreaterThan) and right.value == "0")
                    or (isinstance(op, cst.GreaterThanEqual) and right.value == "1")
                    or (isinstance(op, cst.NotEqual) and right.value == "0")):
                k = self._count(left, then_end)
            elif isinstance(left, cst.Integer) and left.value == "0" and isinstance(op, cst.LessThan):
                k = self._count(right, then_end)
        elif isinstance(test, cst.Name):
            k = self._count(test, then_end)
        if k is None or not k.canon or k.offset or k.dim:
            return
        key = (k.canon, 0)
        for loc in then_end.heap.dirty:
            st = then_end.heap.get(loc)
            if loc.startswith(("@", "new:")) or not isinstance(st, LocState) or key not in st.extents:
                continue
            other = else_end.loc(loc)
            if isinstance(other, LocState) and other.entry_stale and key not in other.extents:
                else_end.heap[loc] = replace(other, extents=other.extents | {key})

    def _real_by_comparison(self, test: cst.BaseExpression, state: State) -> None:
        """``if bs * self.captured_req_width != num_tokens:`` with ``num_tokens`` a local the
        analysis knows only by its name (``num_tokens = forward_batch.input_ids.shape[0]``), a
        padded name in the profile: the code compares it with a count it computed as padded, so
        it is that count's real partner (two padded counts are not compared to find padding).
        The local is bound to the real count from here on; a name the code bound to a known
        count, or one compared with a count known only by its name too, is left alone."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.NotEqual, cst.Equal, cst.LessThan,
                                                              cst.GreaterThan))):
            return
        sides = (test.left, test.comparisons[0].comparator)
        for named, other in (sides, sides[::-1]):
            if not isinstance(named, cst.Name) or isinstance(other, cst.Name):
                continue
            v = state.env.get(named.value)
            by_name = v is None or isinstance(v, UnknownVal) or (
                isinstance(v, CountVal) and v.canon == named.value and not v.offset)
            if not by_name or not self.p.is_padded_name(named.value):
                continue
            padded = self._count(other, state)
            if padded is None or not padded.canon or padded.offset or padded.canon == named.value \
                    or not self.p.is_padded_name(padded.canon):
                continue
            pair = self.p.pair_for_padded(padded.canon)
            if pair is None or not pair.real:
                continue
            state.env[named.value] = CountVal(pair.real[0])
            return

    def _is_padding_guard(self, test: cst.BaseExpression, frame: Frame, state: State, body=None) -> bool:
        diff = self._difference_test(test, frame)
        if diff is not None:
            # `num_padding = bs - raw_bs; if num_padding > 0:` is `if bs > raw_bs:` (`!= 0` and a
            # bare `if num_padding:` are `if bs != raw_bs:`)
            test = cst.Comparison(left=diff[0], comparisons=[cst.ComparisonTarget(
                cst.GreaterThan() if diff[2] else cst.NotEqual(), diff[1])])
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
            # `if bs != raw_bs or x is None:` is false only where every disjunct is: no padding
            return self._is_padding_guard(test.left, frame, state, body) \
                or self._is_padding_guard(test.right, frame, state, body)
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return False
        op = test.comparisons[0].operator
        left = self._count(test.left, state)
        right = self._count(test.comparisons[0].comparator, state)
        if left is None or right is None:
            return False
        def paired(real: Count, padded: Count) -> bool:
            if self._real_for(real.canon, padded.canon):
                return True
            if self.p.is_padded_name(padded.canon) and real.canon and real.written \
                    and not self._known_count(real.canon) and body is not None \
                    and re.search(rf"\[\s*{re.escape(real.written)}\s*(\+\s*\d+\s*)?:", self._text(body)):
                # `if num_tokens > num_actual: buf[num_actual:num_tokens].fill_(-1)` with `num_actual`
                # no count the profile names: the body resets rows from it, so it is the real
                # count of the padded range (:meth:`_reset` names it so)
                return True
            return (not self.p.is_padded_name(real.canon)) and self._real_for(real.written, padded.written)
        if isinstance(op, (cst.GreaterThan, cst.NotEqual)) and paired(right, left):
            return True
        if isinstance(op, (cst.LessThan, cst.NotEqual)) and paired(left, right):
            return True
        return False

    def _difference_test(self, test, frame: Frame) -> tuple | None:
        """(X, Y, ordered) when ``test`` is ``d > 0`` or ``0 < d`` (ordered: X > Y), ``d != 0`` or
        ``d`` alone (X != Y), with ``d`` a local the function binds once, to ``X - Y``; else None."""
        name, ordered = None, False
        if isinstance(test, cst.Name):
            name = test.value
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op, right = test.comparisons[0].operator, test.comparisons[0].comparator
            if isinstance(test.left, cst.Name) and self._is_zero(right) and isinstance(op, (cst.GreaterThan, cst.NotEqual)):
                name, ordered = test.left.value, isinstance(op, cst.GreaterThan)
            elif isinstance(right, cst.Name) and self._is_zero(test.left) and isinstance(op, (cst.LessThan, cst.NotEqual)):
                name, ordered = right.value, isinstance(op, cst.LessThan)
        v = self._bound_once(name, frame) if name is not None else None
        if not isinstance(v, cst.BinaryOperation) or not isinstance(v.operator, cst.Subtract):
            return None
        return v.left, v.right, ordered

    def _bound_once(self, name: str, frame: Frame):
        """The value the frame's function binds local ``name`` to, where its one binding is a plain
        assignment (:meth:`_local_defs`); else None."""
        defs = self._local_defs(frame.seg.func).get(name, ()) if frame.seg is not None else ()
        return defs[0] if len(defs) == 1 else None

    def _local_defs(self, func) -> dict[str, tuple]:
        """Name -> the values the function's own statements bind it to (``None`` for a binding
        that is not a plain assignment: a loop target, a parameter, an augmented assignment)."""
        got = self._defs_memo.get(id(func))
        if got is not None and got[0] is func:
            return got[1]
        out: dict[str, list] = {}
        params = func.params if isinstance(func, cst.FunctionDef) else None
        if params is not None:
            for p in (*params.posonly_params, *params.params, *params.kwonly_params):
                out.setdefault(p.name.value, []).append(None)
            for p in (params.star_arg, params.star_kwarg):
                if isinstance(p, cst.Param):
                    out.setdefault(p.name.value, []).append(None)

        def other(target) -> None:  # a binding that is not a plain assignment
            for n in _names_in(target) if not isinstance(target, str) else [target]:
                out.setdefault(n, []).append(None)

        class _V(cst.CSTVisitor):
            def visit_FunctionDef(self, node):
                return node is func  # not nested functions' own locals
            def visit_ClassDef(self, node):
                return False
            def visit_Assign(self, node):
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        out.setdefault(t.target.value, []).append(node.value)
                    else:
                        for n in _names_in(t.target):
                            out.setdefault(n, []).append(None)
            def visit_AnnAssign(self, node):
                if isinstance(node.target, cst.Name):
                    out.setdefault(node.target.value, []).append(node.value)
            def visit_AugAssign(self, node):
                if isinstance(node.target, cst.Name):
                    out.setdefault(node.target.value, []).append(None)
            def visit_NamedExpr(self, node):
                if isinstance(node.target, cst.Name):
                    out.setdefault(node.target.value, []).append(None)
            def visit_For(self, node):
                for n in _names_in(node.target):
                    out.setdefault(n, []).append(None)
            def visit_WithItem(self, node):
                if node.asname is not None:
                    other(node.asname.name)
            def visit_ExceptHandler(self, node):
                if node.name is not None:
                    other(node.name.name)
            def visit_ImportAlias(self, node):
                name = node.asname.name if node.asname is not None else node.name
                if isinstance(name, cst.Name):
                    other(name)
            def visit_Global(self, node):
                for n in node.names:
                    other(n.name)
            def visit_Nonlocal(self, node):
                for n in node.names:
                    other(n.name)
            def visit_Del(self, node):
                other(node.target)
            def visit_MatchAs(self, node):
                if node.name is not None:
                    other(node.name)
            def visit_MatchStar(self, node):
                if node.name is not None:
                    other(node.name)

        func.visit(_V())
        res = {k: tuple(v) for k, v in out.items()}
        self._defs_memo[id(func)] = (func, res)
        return res

    def _exec_small(self, small: cst.BaseSmallStatement, frame: Frame, state: State) -> State | None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, frame, state)
            for target in small.targets:
                self._assign(target.target, small.value, value, frame, state)
            return state
        if isinstance(small, cst.AnnAssign):
            if small.value is not None:
                value = self._eval(small.value, frame, state)
                self._assign(small.target, small.value, value, frame, state)
            return state
        if isinstance(small, cst.AugAssign):
            self._eval(small.value, frame, state)
            if isinstance(small.target, (cst.Name, cst.Attribute)):
                self._bump(small.target, frame, state)  # `n -= 1`: a test of `n` before is another fact
            if isinstance(small.operator, cst.MultiplyAssign) and self._literal(small.value) == "0" \
                    and isinstance(small.target, cst.Subscript):
                self._write_region(small.target, UNKNOWN, frame, state, small.value)  # `x[R:P] *= 0`
            else:
                # `x[:n] += 1`, `x += 1`: rows updated from their old values, kept across steps on
                # purpose (a branch that does this has not left them unwritten, :meth:`_partial_prefixes`)
                target = small.target.value if isinstance(small.target, cst.Subscript) else small.target
                self._mark_written([self._eval_quiet(target, state)], state)
                if isinstance(small.target, cst.Name) and isinstance(
                        v := state.env.get(small.target.value), CountVal) and is_extremum(v.canon):
                    # `m -= 1` of a bound `m`: the bound moved by the literal, or no count
                    k = self._literal(small.value)
                    sign = {cst.AddAssign: 1, cst.SubtractAssign: -1}.get(type(small.operator))
                    state.env[small.target.value] = CountVal(v.canon, v.offset + sign * int(k)) \
                        if sign is not None and k is not None and k.lstrip("-").isdigit() else UNKNOWN
            return state
        if isinstance(small, cst.Expr):
            self._eval(small.value, frame, state)
            return state
        if isinstance(small, cst.Return):
            value = self._eval(small.value, frame, state) if small.value is not None else UNKNOWN
            frame.returns.append((state, value))
            frame.return_facts.append(self._active)
            return None
        if isinstance(small, cst.Raise):
            return None
        if isinstance(small, (cst.Break, cst.Continue)):
            frame.loop_exits.append(state)
            if isinstance(small, cst.Break):
                frame.loop_breaks.append(state)
            return None
        if isinstance(small, cst.Assert):
            self._eval(small.test, frame, state)
            return state
        return state

    # ------------------------------------------------------------ assignment
    def _bind(self, target: cst.BaseExpression, value: AVal, frame: Frame, state: State) -> None:
        if isinstance(target, cst.Name):
            self._bump(target, frame, state)
            state.env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = [e.value for e in target.elements]
            if isinstance(value, TupleVal) and len(value.items) == len(elems) and not any(
                    isinstance(e, cst.StarredElement) for e in target.elements):
                for e, v in zip(elems, value.items):
                    self._bind(e, v, frame, state)
            else:
                for e in elems:
                    self._bind(e, UNKNOWN, frame, state)
        elif isinstance(target, cst.Subscript):
            # `buf[:n], x = a, b`: some rows of the buffer written (which ones is not followed)
            self._mark_written([self._eval_quiet(target.value, state)], state)

    def _assign(self, target: cst.BaseExpression, value_node: cst.BaseExpression, value: AVal,
                frame: Frame, state: State) -> None:
        if isinstance(target, (cst.Name, cst.Attribute)):
            self._bump(target, frame, state)
        if isinstance(target, cst.Name) and type(value) is UnknownVal and (
                isinstance(value_node, (cst.Comparison, cst.BooleanOperation))
                or isinstance(value_node, cst.UnaryOperation) and isinstance(value_node.operator, cst.Not)):
            t, e = self._cond_keys(value_node, frame, state)
            if t or e:
                value = FactVal(t, e, tuple(self._test_chains(value_node)))
        if isinstance(target, cst.Name):
            # a padding helper's result is a count only where nothing better is known of it: a
            # followed call that returns a view (`self._prepare_padding_mask(...)`) is that view
            followed = isinstance(value_node, cst.Call) and not isinstance(value, (UnknownVal, CountVal))
            if not followed and self._is_bisect(value_node):
                # `index = bisect.bisect_left(sizes, X)`: `sizes[index]` is X padded
                x = value_node.args[1].value if len(value_node.args) > 1 else None
                state.env[target.value] = LookupIndex(
                    self._count_rhs(x, "", state) if x is not None else None,
                    x.value if isinstance(x, cst.Name) else "")
                return
            lookup = None if followed else self._padding_lookup(value_node, state, target.value, frame)
            if lookup is not None and self._known_count(target.value):
                lookup = None  # the name is a count of its own; its lookup only told X's role
            if lookup is not None:
                value = lookup
            elif isinstance(value, (UnknownVal, CountVal)) or (
                    self._known_count(target.value) and not _holds_tensor(value)):
                # a name that reads as a count (`logits_indices_padded`) bound to a view of a
                # persistent buffer is that view, not a count: the value decides over the name
                c = self._count_rhs(value_node, target.value, state)
                if c is not None:
                    value = c
                elif isinstance(value, UnknownVal) and self._paired_here(target.value, frame):
                    value = CountVal(target.value)
                elif isinstance(value, CountVal) and is_extremum(value.canon) \
                        and not isinstance(value_node, cst.Name):
                    # `m - k`, `len(xs) if f else m` of a bound `m`: not that bound (its name would
                    # claim rows it does not cover)
                    value = UNKNOWN
            if isinstance(value, CountVal) and value.canon == target.value and not value.offset \
                    and self._real_by_reset(target.value, frame):
                value = CountVal(self.p.pair_for_padded(target.value).real[0])
                self._padded_fields_by_reset(target.value, self.p.pair_for_padded(target.value), frame, state)
            padded_pair = self._padded_by_reset(target.value, value, frame, state)
            if padded_pair is not None:
                # `r = self._capture_req_slots` where the code resets rows `[bs:r]` from its real
                # count `bs`: `r` is the padded count of that pair, and so is the field it reads
                # on this path (a replay after this step reads the field: `_held_counts`); the
                # facts that hold here are where the code pads, by its own account
                value = CountVal(padded_pair.padded[0], padded=True, learned=True)
                if isinstance(value_node, cst.Attribute) and isinstance(value_node.value, cst.Name) \
                        and value_node.value.value == "self" and isinstance(me := state.env.get("self"), Refs):
                    self._store_field(me, value_node.attr.value, value, state)
                    for r in me.refs:
                        key = (frame.cls or frame.owner, self._field_key(r.loc, value_node.attr.value))
                        had = self._learned_when.get(key)
                        self._learned_when[key] = frozenset(self._active) if had is None else had & self._active
            if isinstance(value, CountVal) and value.canon is not None:
                frame.known.add(value.canon)
                if isinstance(value_node, cst.Attribute) and self.p.is_padded_name(value_node.attr.value):
                    # `n = batch.num_reqs_after_padding`: the field is a padded count, so the object
                    # holds its real partner too (`bs = forward_batch.batch_size` reads a count the
                    # profile does not call padded: the local's name alone says nothing of a partner)
                    self._know_partners(value.canon, frame)
            state.env[target.value] = self._cv(value)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            self._bind(target, value, frame, state)
            return
        if isinstance(target, cst.Attribute):
            self._store_attr(target, value_node, value, frame, state)
            if isinstance(value, ClosureVal) and value.active and value.node is not None \
                    and value.key.startswith(frame.qual + ".<"):
                # a nested function stored on an object: whoever reads the attribute may call it
                self._run_escaped(value, value_node, frame, state)
            return
        if isinstance(target, cst.Subscript):
            holder = state.env.get(target.value.value) if isinstance(target.value, cst.Name) else None
            if isinstance(holder, DictVal):  # kwargs["seq_lens"] = ...
                idx = target.slice[0].slice if len(target.slice) == 1 else None
                kv = self._key_of(idx.value, frame, state) if isinstance(idx, cst.Index) else None
                key = next(iter(kv.keys)) if kv is not None and len(kv.keys) == 1 else None
                if isinstance(key, str):  # also `shape_inputs[name] = ...` over a tuple of key names
                    state.env[target.value.value] = holder.set(key, value)
                elif isinstance(value, (Refs, MapVal)):  # `by_layer[name] = slot_mapping`: keys unknown
                    state.env[target.value.value] = MapVal(join_vals(self._elements(holder), value), keyed=True)
                return
            if isinstance(holder, MapVal):
                state.env[target.value.value] = MapVal(join_vals(holder.item, value), holder.keyed)
                return
            self._write_region(target, value, frame, state, value_node)

    def _store_attr(self, target: cst.Attribute, value_node, value: AVal, frame: Frame, state: State) -> None:
        """``obj.attr = value`` (:meth:`_assign`)."""
        base = self._eval(target.value, frame, state)
        if isinstance(base, MetaVal):
            self._check_sink(base.sink, target.attr.value, "attribute", value_node, value,
                             frame, state, "error", node=frame.stmt)
            if isinstance(target.value, cst.Name) and not base.opaque:  # `meta.f = v`: later reads see v
                state.env[target.value.value] = MetaVal(base.sink, base.fields.set(target.attr.value, value),
                                                        base.cls)
            return
        if isinstance(base, Refs):
            sink = self._sink_type(base)
            if sink is not None:  # a store on an object of a metadata class (a passed-in ForwardBatch)
                self._check_sink(sink, target.attr.value, "attribute", value_node, value,
                                 frame, state, "error", node=frame.stmt)
            is_self = isinstance(target.value, cst.Name) and target.value.value == "self"
            # `self.X = obj` with obj an object of a project class (a dataclass built or
            # `replace`d here): later reads of `self.X` see that object and its fields
            is_object = isinstance(value, Refs) and bool(value.refs) and all(
                r.types and r.count is None for r in value.refs)
            # `self` an object built on this path (a dataclass constructed here, whose method
            # `share_buffers` runs `setattr(self, f.name, ...)`): its fields are values, not
            # persistent locations
            built = bool(base.refs) and not any(r.persistent for r in base.refs)
            # `self.X = self.buf` or `= self.buf[:bs]` in a method that is no constructor (a
            # step's `prepare`): from here on this path's `self.X` is that buffer or view, with
            # its rows' states (what construction stores, the class's own aliases say)
            alias = is_self and frame.seg.func.name.value not in self._CONSTRUCTORS \
                and isinstance(value, Refs) and bool(value.refs) and all(
                    r.persistent and not r.types and not r.elem_types
                    and not r.loc.startswith(("@", "new:")) for r in value.refs)
            if alias:
                self._store_field(base, target.attr.value, self._cv(value), state)
                return
            if not is_self or isinstance(value, CountVal) or is_object or built:
                self._store_field(base, target.attr.value, self._cv(value), state)
                if not is_self or is_object or built:
                    return
            elif any(state.heap.get(self._field_key(r.loc, target.attr.value)) is not None
                     for r in base.refs if r.count is None):
                # any other value (a fresh tensor, one handed in, None) replaces a buffer an
                # earlier store made the field on this path: from here the field is its own
                # location again, stored as such (a write a callee's summary replays; the read
                # above is logged, so a summary made where no buffer was stored does not apply)
                for r in base.refs:
                    if r.count is None:
                        del state.heap[self._field_key(r.loc, target.attr.value)]
                own = self._eval(target, frame, state)
                self._store_field(base, target.attr.value, own, state)
            # `self.X = fresh_tensor`: the persistent location now holds that tensor's state
            fresh = [r for r in (value.refs if isinstance(value, Refs) else ()) if not r.persistent]
            for r in base.refs:
                if r.count is None and r.persistent:
                    loc = self._attr_loc(r.loc, target.attr.value)
                    if fresh:
                        st = None
                        for f in fresh:
                            fs = state.loc(f.loc)
                            fs = LocState(False, fs.taints, fs.clean)
                            st = fs if st is None else st.join(fs)
                        state.heap[loc] = st

    def _write_region(self, target: cst.Subscript, value: AVal, frame: Frame, state: State,
                      value_node=None) -> None:
        """``x[lo:hi] = value``: a reset when ``lo`` is a count; a full write when ``[:P]``/``[:]``."""
        base = self._eval(target.value, frame, state)
        if self._stale_tail(value, state):
            # `x[n:p] = other[n:p]` with rows no step reset there: stale rows copied in
            if isinstance(base, TailVal):
                base = base.base
            if isinstance(base, Refs):
                self._mark_written([base], state)
            return
        if isinstance(base, TailVal):
            # `tail[:] = v`, `tail[...] = v` of `tail = buf[n:p]`: rows [n:p] of the buffer
            if all(isinstance(el.slice, cst.Slice) and el.slice.lower is None and el.slice.upper is None
                   and el.slice.step is None
                   or isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Ellipsis)
                   for el in target.slice):
                vtext = self._literal(value_node)
                line = frame.seg.line(target, frame.stmt)
                site = self._site(frame, line, vtext, value_node, "value")
                for r in base.base.refs:
                    self._reset(r, base.lower, base.upper, state, value, vtext, line, site, dim=base.dim)
            return
        if not isinstance(base, Refs):
            return
        self._mark_written([base], state)  # `x[...] = v`, `x[0] = v`: some rows written
        found = self._slice_dim(target)
        if found is None:
            return
        lower, upper, dim = found
        vtext = self._literal(value_node)
        line = frame.seg.line(target, frame.stmt)
        site = self._site(frame, line, vtext, value_node, "value")
        for r in base.refs:
            self._reset(r, lower, upper, state, value, vtext, line, site, dim=dim)

    def _literal(self, node) -> str:
        """Normalised text of a literal value (``0``, ``-1``, ``False``, a profile constant), else ""."""
        if node is None:
            return ""
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return node.value
            c = self.p.constant(node.value)
            if c is None and self._frames and (got := self._frames[-1].literals.get(node.value)):
                return got[0]  # a parameter every call of this frame passed a literal
            return repr(c) if c is not None else ""
        if isinstance(node, cst.Attribute):
            c = self.p.constant(node.attr.value)
            return repr(c) if c is not None else ""
        if isinstance(node, (cst.Integer, cst.Float)) or (
                isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
                and isinstance(node.expression, (cst.Integer, cst.Float))):
            try:
                return repr(ast.literal_eval(self._text(node)))
            except (ValueError, SyntaxError):
                return ""
        return ""

    def _first_slice(self, node: cst.Subscript):
        """(lower, upper) of the first slice element that bounds rows, or None for an index."""
        found = self._slice_dim(node)
        return None if found is None else found[:2]

    @staticmethod
    def _slice_dim(node: cst.Subscript):
        """(lower, upper, dim) of the first bounding slice element, or None for an index."""
        elems = node.slice
        if len(elems) == 1 and isinstance(elems[0].slice, cst.Index):
            return None
        for dim, el in enumerate(elems):
            s = el.slice
            if isinstance(s, cst.Slice):
                if s.lower is None and s.upper is None and s.step is None and len(elems) > 1:
                    continue  # leading `:` of a 2-D slice: rows are in a later dim
                if s.step is not None:
                    return None  # `x[R:P:2]` covers every other row only
                return (s.lower, s.upper, dim)
        return None

    def _pair_known(self, canon: str, frame: Frame) -> bool:
        """Whether ``canon`` is a padded count whose real partner is known on the call path."""
        pair = self.p.pair_for_padded(canon)
        return pair is not None and any(r in frame.known or r.split("*", 1)[0] in frame.known
                                        for r in pair.real)

    def _no_padding(self, canon: str, state: State, frame: Frame | None = None) -> bool:
        """True where a slice up to padded count ``canon`` has no padding rows on this path.

        That is where no real partner of ``canon`` is known on the call path (the
        code only knows the captured size, as in a graph-capture helper).  A
        caller that binds a callee's real count to its padded count
        (``num_reqs=num_reqs_padded``, a dummy run) does not make the rows real:
        the callee is judged in the caller's counts.
        """
        pair = self.p.pair_for_padded(canon)
        if pair is None:
            return False
        if frame is not None and not any(r in frame.known or r.split("*", 1)[0] in frame.known
                                         for r in pair.real):
            return True
        return False

    def _entry_key(self) -> str:
        """The key of the entry point being interpreted ("" outside a run)."""
        return self._frames[0].qual if self._frames else ""

    def _qpath(self, callee: "Frame | None" = None) -> tuple:
        """The call path to the frame being interpreted (or to ``callee``, about to be called from
        it): one ``(line, file, function key)`` per call, from the entry point.  Two callees of one
        call site (dispatch alternatives) differ in their function only."""
        frames = (*self._frames, callee) if callee is not None else self._frames
        return tuple((f.chain[-1][0], f.chain[-1][2], f.qual) if f.chain else (0, f.path, f.qual) for f in frames)

    def _note_write(self, loc: str, where: tuple | None = None, count: str = "") -> None:
        """Remember that the statement being interpreted (or ``where``: (location, file, segment,
        statement, function, count, call path) of a write a summary replays) writes rows of
        persistent location ``loc`` (``count``: up to that count, when it writes a prefix), for the
        entry point being interpreted, with the call path that led to the writing function
        (:attr:`writers`)."""
        if self._branch_writes:
            self._branch_writes[-1].add((where[0] if where is not None else loc).split("#", 1)[0])
        if where is None:
            if not self._frames:
                return
            f = self._frames[-1]
            if f.stmt is None:
                return
            where = (loc.split("#", 1)[0], f.path, f.seg, f.stmt, f.qual, count, self._qpath())
        base, path = where[0], where[1]
        if self._write_log:
            self._write_log[-1].add(where)
        got = self.writers.setdefault((self._entry_key(), base), {}).setdefault(path, [])
        if len(got) < MAX_WRITERS and all(w[1] is not where[3] or w[3] != where[5] or w[4] != where[6]
                                          for w in got):
            got.append(where[2:])

    def _reset(self, ref: Ref, lower, upper, state: State, value: AVal | None,
               value_text: str = "", line: int = 0, site: PadWrite | None = None, dim: int = 0) -> None:
        """Record a write into rows [lower:upper] of ``ref``'s location.

        ``value_text`` is the written value when it is a literal (normalised,
        "" otherwise); ``site`` the statement that writes it (the pad-value
        contract is judged at the sink, :mod:`padlint.analysis.padvalue`).
        """
        # (a write of a pool's element that stands for several buffers is weak: Heap.__setitem__)
        sites = frozenset({site}) if site is not None else frozenset()
        if ref.persistent:
            # a write of the rows from a count on (`x[n:] = v`) is marked: its function resets a tail
            self._note_write(ref.loc, count=TAIL_WRITE if lower is not None and not self._is_zero(lower) else "")
        st = state.loc(ref.loc) if ref.persistent else state.heap.get(ref.loc, LocState(False))
        low = self._count(lower, state) if lower is not None else None
        if lower is not None and not self._is_zero(lower):
            if upper is not None:
                up = self._count(upper, state)
                if up is None or not up.canon or not self.p.is_padded_name(up.canon) or up.unpadded:
                    # `x[R:R + 1]`, `x[R:R]`, `x[R:n]`: not every padding row; rows [k:n] after
                    # a write of [:k] extend the written prefix to n
                    if low is not None and low.canon and up is not None and up.canon and not up.unpadded \
                            and not dim and ref.persistent and (low.canon, low.offset) in st.extents:
                        self._extend(ref, up, state)
                    return
            if low is not None and low.canon:
                view = ref.count if upper is None else up  # `v[x:]` of `v = buf[:P]`, or `buf[x:P]`
                upto = view.canon if view is not None and view.canon else ("?" if view is not None else "")
                keys = {Reset(low.canon, low.offset, value_text, line, sites, upto=upto, dim=dim)}
                if view is not None and view.canon and not self._known_count(low.canon) \
                        and not self.p.is_real_for(low.canon, view.canon):
                    pair = self.p.pair_for_padded(view.canon)
                    if pair is not None:
                        # `v = buf[:P]; v[x:].zero_()` with `x` no count the analysis knows
                        # (`num_local_reqs = len(segments)`): the code resets the view's padding
                        # from `x` on, so `x` is the real count of that view here
                        keys.add(Reset(pair.real[0], low.offset, value_text, line, sites, upto=upto, dim=dim))
                if low.written and low.written != low.canon and not self.p.is_padded_name(low.canon) \
                        and self._known_count(low.written):
                    # `x[num_scheduled_tokens:]` pairs with `num_input_tokens` by name too,
                    # unless the caller bound the real name to a padded count
                    keys.add(Reset(low.written, low.offset, value_text, line, sites, upto=upto, dim=dim))
                # the latest write of rows [R + k:] is what they hold: it replaces an earlier reset
                # of the same rows (so states reached by different histories compare equal), and
                # the value of an earlier whole-buffer write (an allocation fill) in those rows
                same = {(k.real, k.offset, k.dim) for k in keys}
                kept = frozenset(r for r in st.clean if (r.real, r.offset, r.dim) not in same and r.real != ALL)
                state.heap[ref.loc] = LocState(st.entry_stale, st.taints, kept | keys, st.extents)
            return
        up = self._count(upper, state) if upper is not None else None
        view = ref.count
        bound = up if upper is not None else view
        if bound is not None and bound.canon and not self.p.is_padded_name(bound.canon):
            self._extend(ref, bound, state)
            return  # writes only real rows [:R]: padding untouched
        if upper is not None and up is None:
            return  # unknown bound
        taints = self._taints(value, state, first_run="keep") if value is not None else set()
        if bound is not None and not bound.canon:
            # all rows of a view of unknown extent: which rows of the buffer is not known; stale
            # values written there still reach whatever reads the buffer
            if taints:
                state.heap[ref.loc] = replace(st, taints=st.taints | frozenset(taints))
            return
        if taints:
            state.heap[ref.loc] = LocState(False, frozenset(taints), frozenset())
        else:
            upto = bound.canon if bound is not None else ""
            state.heap[ref.loc] = LocState(False, frozenset(), frozenset({Reset(ALL, 0, value_text, line, sites,
                                                                                 upto=upto)}))

    def _extend(self, ref: Ref, bound: Count, state: State) -> None:
        """This step wrote rows ``[:bound]`` of a persistent buffer: remember the prefix (the
        real count of a later slice of the buffer to another count, :meth:`_inferred_real`)."""
        if ref.persistent:
            self._note_write(ref.loc, count=bound.canon if not bound.dim else "")
        if not ref.persistent or bound.dim or bound.unpadded or not bound.canon:
            return
        st = state.loc(ref.loc)
        if not st.entry_stale:
            return
        key = (bound.canon, bound.offset)
        if (ref.loc, *key) not in self._extent_sites:
            text = self._t(ref.text)
            if ref.count is not None and text.endswith("]"):  # a view `buf[:m]`: the buffer
                text = text[:text.rfind("[")]
            self._extent_sites[(ref.loc, *key)] = f"{text}[:{bound.written or bound.canon}]"
        if any(t.partial for t in st.taints):
            # rows [0:k] written on the joined path now: no longer stale on any path
            kept = frozenset(t for t in st.taints if not (t.partial and not bound.offset and (
                t.padded == bound.canon or self._same_count(t.padded, bound.canon))))
            if kept != st.taints:
                st = replace(st, taints=kept)
                state.heap[ref.loc] = st
        if key not in st.extents:
            state.heap[ref.loc] = replace(st, extents=st.extents | {key})

    def _inferred_real(self, c: Count, st: LocState, more: frozenset = frozenset()) -> tuple[str, ...]:
        """The real counts of a slice ``[:c]`` whose count the profile does not pair, inferred
        from the prefixes this step wrote into the buffer: ``buf[:k].copy_(x)`` then
        ``buf[:n]`` has rows ``[k:n]`` no write of this step reached (the code says so by
        writing ``k`` rows and handing out ``n``).  Empty when a write reached row ``n`` (or
        ``n`` is the same count as every ``k``), when the counts are on different axes
        (PAD004's question), or when nothing was written.

        Also a padded count whose real partner the path does not know (``c.unpadded``: a
        capture helper that only knows the captured size, or a step whose real count has a name
        of another pair, ``self.slot_mapping[:num_tokens]`` then ``[:num_input_tokens]``): the
        code's own prefix write names the real rows there."""
        extents = st.extents | more  # `more`: what the path that took the view wrote (Ref.extents_at)
        if not extents or c.dim or not c.canon or self.p.is_padded_name(c.canon) and not c.unpadded:
            return ()
        axis = self.p.count_axis(c.canon)
        out = []
        for k, off in sorted(extents):
            if at_least(k, off, c.canon, c.offset):
                return ()  # rows [:n] written (also `[:max(n, m)]`)
            if k == c.canon:
                continue
            if self.p.is_padded_name(k) or self._same_count(k, c.canon):
                continue
            k_axis = self.p.count_axis(k)
            if axis and k_axis and axis != k_axis:
                continue
            out.append(k)
        return tuple(out)

    def _same_count(self, a: str, b: str) -> bool:
        """Two names the profile lists as real counts of one pair (``num_scheduled_tokens``,
        ``total_num_scheduled_tokens``): one value under two names."""
        return any(a in pair.real and b in pair.real for pair in self.p.counts)

    def _count_rhs(self, node, target: str, state: State) -> CountVal | None:
        """The count a name bound to ``node`` denotes (:meth:`_count_rhs_of`).  A name the profile
        or the code knows as a count keeps its own name where the value is only known as a
        ``max``/``min`` of other counts (``num_reqs = num_decode_tokens + 1`` with
        ``num_decode_tokens = min(...)``): the profile pairs it by that name, and a bound does
        not say which padded count it is the real partner of."""
        c = self._count_rhs_of(node, target, state)
        if c is not None and is_extremum(c.canon) and target and self._known_count(target):
            return CountVal(target)
        return c

    def _count_rhs_of(self, node, target: str, state: State) -> CountVal | None:
        """The count a name bound to ``node`` denotes (assignment or call argument).

        Direct aliases are followed (``n = num_reqs_padded``, ``P = P or R``,
        ``P + 1``, ``x if c else None``); anything else computed into a name
        that is itself a count name makes that name its own canonical count
        (``num_reqs_padded = batch_desc.num_reqs if ... else num_reqs`` is the
        padded count, not ``num_reqs``).
        """
        own = CountVal(target) if self._known_count(target) else None
        if own is None and isinstance(node, cst.Call) and (ext := self._extremum_count(node, state)) is not None:
            return CountVal(ext)
        if isinstance(node, cst.Name):
            if node.value == "None":
                return CountVal(None)
            v = state.env.get(node.value)
            if isinstance(v, CountVal):
                return v
            if self._known_count(node.value) and (v is None or isinstance(v, UnknownVal)):
                return CountVal(node.value)
            return own
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            c = self._count(node, state)
            if c is not None and c.canon:
                return self._cv(CountVal(c.canon))
            return own
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add) \
                and isinstance(node.right, cst.Integer):
            base = self._count_rhs(node.left, "", state)
            if base is not None and base.canon is not None:
                return CountVal(base.canon, base.offset + int(node.right.value, 0))
            return own
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            left = self._count_rhs(node.left, "", state)
            if left is not None and left.canon is None:
                return self._count_rhs(node.right, target, state)
            return left if left is not None else own
        if isinstance(node, cst.IfExp):
            a = self._count_rhs(node.body, "", state)
            b = self._count_rhs(node.orelse, "", state)
            if a is not None and a.canon is None:
                return b if b is not None else own
            if b is not None and b.canon is None:
                return a if a is not None else own
            if a is not None and b is not None:
                if a == b:
                    return a
                if self.p.is_padded_name(b.canon or "") and not self.p.is_padded_name(a.canon or ""):
                    return b
                return a
            return own
        if isinstance(node, (cst.Subscript, cst.Call)):
            shape = self._shape_count(node, state)
            if shape is not None:
                return self._cv(CountVal(shape.canon, shape.offset))
            return own
        if isinstance(node, cst.Attribute):
            stored = self._field_count(node, state)
            if stored is not None:
                return stored
            # by name, only a padded count: `batch_desc.num_reqs` is the captured (padded)
            # size, not the step's real `num_reqs`; binding it to a real name would erase
            # the padding rows
            if self.p.is_padded_name(node.attr.value):
                return self._cv(CountVal(node.attr.value))
        return own

    PAD_WORDS = ("pad", "bucket", "round_up", "next_power")

    @staticmethod
    def _is_bisect(node) -> bool:
        return isinstance(node, cst.Call) and (dotted(node.func) or "").rsplit(".", 1)[-1].startswith("bisect")

    def _padding_lookup(self, node, state: State, target: str = "", frame: Frame | None = None) -> CountVal | None:
        """A padded count the code computes from a real count R, whatever its name:
        a capture-size lookup ``sizes[bisect.bisect_left(sizes, R)]`` (also through an index
        local, ``i = bisect.bisect_left(sizes, R); sizes[i]``), a padding helper
        ``pad_to_bucket(R, ...)`` / ``round_up(R, k)``, or ``max(R, n)``.  It becomes
        the count ``R_padded``, which the profile pairs with R.

        A capture-size lookup pads its argument by construction, so R is the real count even
        where its name says padded (SGLang's piecewise runner: ``num_tokens =
        len(forward_batch.input_ids)``, ``static_num_tokens = self.capture_num_tokens[index]``):
        a local known only by such a name is bound to the real partner of the lookup's count
        (``target``'s pair when the result is bound to a count name) from here on."""
        def real_in(args) -> CountVal | None:
            for a in args:
                c = self._count_rhs(a.value, "", state)
                if c is not None and c.canon and not c.offset and not self.p.is_padded_name(c.canon) \
                        and any(c.canon in pair.real for pair in self.p.counts):
                    return c
            return None
        call = None
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            idx = node.slice[0].slice.value
            if self._is_bisect(idx):
                x = idx.args[1].value if len(idx.args) > 1 else None
                if x is not None:
                    return self._lookup_of(self._count_rhs(x, "", state),
                                           x.value if isinstance(x, cst.Name) else "", target, state, frame)
            elif isinstance(idx, cst.Name) and isinstance(li := state.env.get(idx.value), LookupIndex):
                return self._lookup_of(li.real, li.name, target, state, frame)
        elif isinstance(node, cst.Call):
            fname = ((dotted(node.func) or "").rsplit(".", 1)[-1]).lower()
            if fname == "max" or any(w in fname for w in self.PAD_WORDS):
                call = node
        if call is None:
            return None
        r = real_in(call.args)
        return CountVal(f"{r.canon}_padded", padded=True) if r is not None else None

    def _lookup_of(self, real: CountVal | None, name: str, target: str, state: State,
                   frame: Frame | None) -> CountVal | None:
        """The padded count of a capture-size lookup of ``real`` (see :meth:`_padding_lookup`)."""
        if real is None or not real.canon or real.offset:
            return None
        if not self.p.is_padded_name(real.canon):
            if any(real.canon in pair.real for pair in self.p.counts):
                return CountVal(f"{real.canon}_padded", padded=True)
            return None
        # R known only by a padded name: it is the real partner of the lookup's count
        by_name = name and real.canon == name and isinstance(state.env.get(name), (CountVal, UnknownVal, type(None)))
        padded = target if target and self.p.is_padded_name(target) and target != name else real.canon
        pair = self.p.pair_for_padded(padded)
        if not by_name or pair is None or not pair.real or pair.real[0] == padded:
            return None
        state.env[name] = CountVal(pair.real[0])
        if frame is not None:
            frame.known.add(pair.real[0])
        return CountVal(padded, padded=True)

    def _field_count(self, node: cst.Attribute, state: State, *, typed: bool = False) -> CountVal | None:
        """A count stored in an object's field (``input_batch.num_reqs_after_padding``);
        ``typed``: also an ``int`` field of an object of a known class (a slice bound
        ``[:m.num_decodes]``; a name bound to it keeps its own name)."""
        base = self._eval_quiet(node.value, state)
        if isinstance(base, Refs):
            v = self._fields_of(base, node.attr.value, state)
            if isinstance(v, CountVal):
                return v
            if typed and v is None and not self._known_count(node.attr.value) and any(
                    r.count is None and r.types and self._int_field(r.types, node.attr.value) for r in base.refs):
                # `m.num_decodes` of an object whose class declares `num_decodes: int` (a parameter
                # `m: GDNAttentionMetadata`): a count, named as written (a count the profile names
                # keeps its profile name, and so its partner)
                return CountVal(self._text(node))
        if isinstance(base, MetaVal):  # a metadata object built here: what its constructor got
            v = base.fields.get(node.attr.value)
            if isinstance(v, CountVal):
                return v
            if not isinstance(v, Refs) and base.cls and (c := self.project.class_info(base.cls)) is not None \
                    and self.project.is_int_field(c, node.attr.value):
                # an `int` field given nothing known (`num_decodes` from a split helper): a count,
                # named as written (`metadata.num_decodes`)
                return CountVal(self._text(node))
        return None

    def _property_read(self, base: Refs, node: cst.Attribute, frame: Frame, state: State) -> AVal | None:
        """``obj.attr`` where every class ``obj`` may be (``base``'s types) makes ``attr`` a
        ``@property`` of the project: its getter runs here, as the call ``obj.attr()`` would
        (``return self.seq_lens[:self.num_padded]``: the view it returns reaches the sink it is
        given to).  None where ``attr`` is no such property (a field; a ``cached_property``,
        whose value is the first read's)."""
        if any(r.count is not None for r in base.refs):
            return None
        types = sorted({t for r in base.refs for t in r.types})
        if not types or node.attr.value in _TENSOR_META:
            return None
        targets = []
        for t in types:
            cls = self.project.class_info(t)
            fn = self.project.find_method(cls, node.attr.value) if cls is not None else None
            if fn is None or not _is_property(fn):
                return None
            targets.append((fn, Refs(frozenset(r for r in base.refs if t in r.types))))
        call = self._property_calls.get(id(node))
        if call is None:
            call = self._property_calls[id(node)] = cst.Call(func=node)
            self._keep.append(node)
        frame.seg.same_line_as(call, node, frame.stmt)
        return self._inline(("funcs", targets), call, frame, state)

    def _eval_quiet(self, node, state: State) -> AVal:
        """The value of a name or attribute chain, without side effects (no calls)."""
        if isinstance(node, cst.Name):
            return state.env.get(node.value, UNKNOWN)
        if isinstance(node, cst.Attribute):
            base = self._eval_quiet(node.value, state)
            if isinstance(base, Refs):
                return self._attribute(base, node, state, 0, "")
            if isinstance(base, MetaVal):
                return base.fields.get(node.attr.value) or UNKNOWN
        return UNKNOWN

    def _attr_value(self, base: AVal, node: cst.Attribute, frame: Frame, state: State, line: int | None) -> AVal:
        """``base.attr`` for an evaluated ``base`` (``line``: where it is read, None for the line of
        ``node``; ``getattr(obj, f.name)`` passes the call's, its attribute node being made up)."""
        at = (lambda: frame.seg.line(node, frame.stmt)) if line is None else (lambda: line)
        if isinstance(base, MetaVal):  # a field of a metadata object built here
            v = base.fields.get(node.attr.value)
            if v is None and base.cls and (c := self.project.class_info(base.cls)) is not None \
                    and self.project.is_required_tensor_field(c, node.attr.value):
                # not given here, but declared a tensor that is never None: a tensor of
                # unknown rows (not stale: nothing here says what it holds)
                loc = f"meta:{base.cls}.{node.attr.value}"
                state.heap[loc] = LocState(False)
                return Refs(frozenset({Ref(loc, None, node, at(), False, path=frame.path)}))
            return no_literal(v) if v is not None else UNKNOWN
        if isinstance(base, Refs):
            if self._fields_of(base, node.attr.value, state) is None:
                members = self._attr_members(base, node.attr.value)
                if members is not None:
                    return TupleVal(tuple(self._eval(m, frame, state) for m in members))
            return self._attribute(base, node, state, at(), frame.path)
        return UNKNOWN

    def _attribute(self, base: Refs, node: cst.Attribute, state: State, line: int, path: str) -> AVal:
        """``base.attr``: per alternative of ``base``, the value stored in that field (an object
        built or written here) or the field's own location (a persistent buffer); joined."""
        attr = node.attr.value
        if attr in _TENSOR_META:
            return UNKNOWN  # `x.shape`, `x.device`: what the tensor is, not rows of a buffer
        out = set()
        joined: AVal | None = None
        optional = False
        for r in base.refs:
            if r.count is not None:
                continue
            v = state.heap.get(self._field_key(r.loc, attr))
            if v is not None:
                joined = join_vals(joined, v)
            elif r.types and self._int_field(r.types, attr):
                # `m.num_reqs` of a metadata object whose class says `num_reqs: int`: a count, named
                # as written (the builder's `batch_size = m.num_reqs` slices and resets in its terms)
                joined = join_vals(joined, self._cv(CountVal(self._text(node))))
            elif not r.loc.startswith("new:"):
                shared = self._storage_alias(r.types, attr) \
                    if attr not in self.p.shared_views and attr != self.p.device_view else ""
                loc = self._alias_loc(r.loc, r.types, attr) or self._attr_loc(r.loc, shared or attr)
                self._note_owner(loc, r, shared or attr)
                # an object reached from a sink object is read by that sink's consumer too
                within = self._sink_type(Refs(frozenset({r}))) or ""
                held = (r.loc == "self" or r.held) and self._set_at_construction(r.types, attr)
                out.add(Ref(loc, None, node, line or r.line, r.persistent,
                            types=self._attr_types(r.types, attr), path=path,
                            elem_types=self._attr_types(r.types, attr, elems=True), within=within,
                            held=held))
                # a field its class declares Optional (`dcp_local_seq_lens: Tensor | None = None`)
                # may be None: `if x is not None:` on it has two paths
                optional = optional or self._optional_field(r.types, attr)
        if out:
            joined = join_vals(joined, Refs(frozenset(out), optional))
        return no_literal(joined) if joined is not None else UNKNOWN

    def _optional_field(self, types: frozenset, attr: str) -> bool:
        key = (types, attr, "optional")
        out = self._attr_type_cache.get(key)
        if out is None:
            out = self._attr_type_cache[key] = any(
                (c := self.project.class_info(t)) is not None and self.project.is_optional_field(c, attr)
                for t in types)
        return out

    _CONSTRUCTORS = frozenset({"__init__", "__post_init__"})

    def _storage_alias(self, types: frozenset, attr: str, depth: int = 0) -> str:
        """The attribute whose storage ``attr`` shares in every class of ``types``: set only in
        the constructors, only to a view of another attribute's memory (``self.x_np =
        self.x.numpy()``, ``self.x = torch.from_numpy(self.x_np)``, ``np.asarray(self.x)``,
        ``torch.as_tensor(self.x_np)``), the same one in every class (followed further when that
        one is such a view too); "" otherwise.  vLLM's input batch keeps each host array as a
        tensor and its ``.numpy()`` view, written through either."""
        if not types or depth > 3:
            return ""
        key = (types, attr, "storage")
        out = self._attr_type_cache.get(key)
        if out is None:
            out = None
            for t in types:
                cls = self.project.class_info(t)
                got = self._class_storage_alias(cls, attr) if cls is not None else ""
                if not got or (out is not None and got != out):
                    out = ""
                    break
                out = got
            out = out or ""
            if out:
                out = self._storage_alias(types, out, depth + 1) or out
            self._attr_type_cache[key] = out
        return out

    def _class_storage_alias(self, cls: ClassInfo, attr: str) -> str:
        values = []
        for c in self.project.mro(cls):
            if attr in c.fields:
                return ""
            scan_method_attr_types(c)
            where = c.stored_in.get(attr)
            if not where:
                continue
            if not where <= self._CONSTRUCTORS:
                return ""
            for name in where:
                fn = c.methods.get(name)
                if fn is None:
                    return ""
                got = self._self_stores(fn).get(attr)
                if got is None:
                    continue
                if got is False:
                    return ""
                values.extend(got)
        others = set(values)
        if len(others) != 1:
            return ""
        other = others.pop()
        if not other or other == attr:
            return ""
        # the memory's owner must be set only when the object is built too (a `resize` that
        # rebinds it leaves the view on the old memory)
        for c in self.project.mro(cls):
            where = c.stored_in.get(other)
            if where and not where <= self._CONSTRUCTORS:
                return ""
        return other

    def _self_stores(self, fn: FunctionInfo) -> dict[str, tuple[str, ...] | bool]:
        """Per attribute ``x`` that ``fn`` stores as ``self.x``: the memories of the values it
        stores there (:func:`_memory_view_of` of each), or False where a store is not one view's
        assignment (``self.x, self.y = ...``, ``self.x = self.y = ...``, ``self.x += ...``).
        Read once per function (memoised by key: the tree is not kept)."""
        got = self._stores_memo.get(fn.key)
        if got is not None:
            return got
        out: dict[str, list[str] | bool] = {}
        for n in ast.walk(fn.peek()):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] \
                if isinstance(n, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                if isinstance(t, (ast.Tuple, ast.List)):
                    for e in ast.walk(t):
                        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
                            out[e.attr] = False
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    if isinstance(n, ast.AugAssign) or len(targets) != 1:
                        out[t.attr] = False
                    elif out.get(t.attr) is not False:
                        out.setdefault(t.attr, []).append(_memory_view_of(n.value))  # type: ignore[union-attr]
        done = self._stores_memo[fn.key] = {k: v if v is False else tuple(v) for k, v in out.items()}
        return done

    def _set_at_construction(self, types: frozenset, attr: str) -> bool:
        """Whether every class of ``types`` sets its attribute ``attr`` only when an object is
        built or the engine set up: a declared (class-level annotated) field, or stores of
        ``self.<attr>`` only in ``__init__``/``__post_init__``, the methods only they run
        (:meth:`_runs_at_construction`) and the profile's set-up methods (``[setup]
        functions``: ``initialize_kv_cache``'s block tables live across steps as the
        constructor's fields do) (the MRO's methods).  Unknown classes: False."""
        if not types:
            return False
        key = (types, attr, "held")
        out = self._attr_type_cache.get(key)
        if out is None:
            out, found = True, False
            for t in types:
                cls = self.project.class_info(t)
                if cls is None:
                    out = False
                    break
                stored = False
                for c in self.project.mro(cls):
                    if attr in c.fields:
                        stored = True
                        continue
                    scan_method_attr_types(c)
                    where = c.stored_in.get(attr)
                    if where:
                        stored = True
                        if not all(m in self._CONSTRUCTORS or self.p.is_setup(m)
                                   or self._runs_at_construction(c.methods.get(m)) for m in where):
                            out = False
                if not out:
                    break
                # a class that never sets the attribute (a declared base, `buffers:
                # ForwardInputBuffers`, of the classes that do) holds it only as one of its
                # subclasses, which are among the types where the code says so
                found = found or stored
            out = out and found
            self._attr_type_cache[key] = out
        return out

    def _runs_at_construction(self, fn: FunctionInfo | None) -> bool:
        """Whether ``fn`` runs only while an object is built or the engine set up: a constructor,
        a set-up method the profile names (``[setup] functions``), or a method every resolved
        caller of which (one at least) runs only then, such as a helper the constructor calls
        (``self._init_and_capture()`` in ``__init__``) or a set-up method calls, and that no code
        may call where the call graph does not resolve it (:meth:`CallGraph.referenced_unresolved`:
        a bound method kept as a value, a receiver of unknown class, ``getattr``).  Four levels of
        callers at most; a cycle is no construction.  Memoised where the answer did not depend
        on that bound or on a call still being looked at (the order of questions must not
        change answers)."""
        return fn is not None and self._at_construction(fn, 0, frozenset())[0]

    def _at_construction(self, fn: FunctionInfo, depth: int, path: frozenset) -> tuple[bool, bool]:
        """(:meth:`_runs_at_construction`, whether that answer holds whatever the bound and the
        path: only those are memoised)."""
        if fn.name in self._CONSTRUCTORS or self.p.is_setup(fn.name):
            return True, True
        memo = self._attr_type_cache
        key = (fn.key, "at-construction")
        got = memo.get(key)
        if got is not None:
            return got, True
        if depth >= 4 or fn.key in path:
            return False, False
        callers = self.graph.callers(fn)
        if callers and self.graph.referenced_unresolved(fn):
            memo[key] = False
            return False, True
        out, exact = bool(callers), True
        for c in callers:
            ok, ex = self._at_construction(c, depth + 1, path | {fn.key})
            exact = exact and ex
            if not ok:
                out = False
                if ex:  # (a caller that surely runs after construction decides it)
                    exact = True
                    break
        if exact:
            memo[key] = out
        return out, exact

    def _known_count(self, name: str) -> bool:
        return self.p.is_padded_count(name) is not None

    def _real_by_reset(self, name: str, frame: Frame) -> bool:
        """``name``, a padded count to the profile, is the real count in this function: the code
        resets rows ``[name:b]`` (``s["seq_lens"][bs:r].zero_()``, ``b`` no capacity of an
        axis), so ``name`` is where the padding rows start (``bs = forward_batch.batch_size`` in a
        replay: the batch's own size).  A local bound so is its pair's real count."""
        if not self.p.is_padded_name(name):
            return False
        pair = self.p.pair_for_padded(name)
        if pair is None or not pair.real or any(r in frame.seg.bound_names for r in pair.real):
            return False  # the function binds the real count itself: `name` is the padded one
        return any(lo == name and not self.p.axes.size_axis(up)
                   for lo, up in frame.seg.reset_bounds)

    def _padded_fields_by_reset(self, real: str, pair, frame: Frame, state: State) -> None:
        """``real`` (a local) is the real count of ``pair`` by the function's resets of rows
        ``[real:b]`` (:meth:`_real_by_reset`): where ``b`` is a number ``self`` keeps, read
        directly (``[bs:self._capture_req_slots]``) or through a local the function binds once to
        it (``r = self._capture_req_slots``), that field is the pair's padded count on this path
        from here on (a test ``if bs < self._capture_req_slots:`` compares the pair; a replay
        after this step reads the padded count off the field, :meth:`_held_counts`)."""
        me = state.env.get("self")
        if not isinstance(me, Refs) or not pair.padded:
            return
        for lo, up in frame.seg.reset_bounds:
            if lo != real or not self._ends_padding(lo, up, pair, frame):
                continue
            v = self._bound_once(up, frame)
            if v is None and up in frame.seg.bound_names:
                continue
            attr = v.attr.value if isinstance(v, cst.Attribute) and isinstance(v.value, cst.Name) \
                and v.value.value == "self" else up if v is None else None
            if not attr or self._known_count(attr) or self.p.axes.size_axis(attr) \
                    or f"self.{attr}" not in self._text(frame.seg.func):
                continue
            self._store_field(me, attr, CountVal(pair.padded[0], padded=True, learned=True), state)

    def _padded_by_reset(self, name: str, value: AVal, frame: Frame, state: State):
        """The count pair whose padded count ``name`` is in this function, or None: the code resets
        rows ``[a:name]`` (``s["seq_lens"][bs:r].zero_()``) where ``a`` holds a real count of a
        pair, so ``name`` is where those padding rows end.  Only for a name that is no count to
        the profile and no capacity of an axis (``r = self._capture_req_slots``: a number the
        runner keeps), bound to a number (no tensor, no object)."""
        if not name or self._known_count(name) or self.p.axes.size_axis(name):
            return None
        if not (isinstance(value, (UnknownVal, CountVal)) or isinstance(value, Refs) and len(value.refs) == 1
                and (r := next(iter(value.refs))).count is None and not r.types and not r.elem_types):
            return None
        if isinstance(value, CountVal) and value.canon and self.p.pair_for_padded(value.canon) is not None \
                and not value.learned:
            return None  # a padded count already (not one the resets named: the field read here)
        for lo, up in frame.seg.reset_bounds:
            if up != name:
                continue
            low = state.env.get(lo)
            if not isinstance(low, CountVal) or not low.canon or low.offset:
                continue
            pair = next((p for p in self.p.counts if low.canon in p.real and p.padded), None)
            if pair is not None and self._ends_padding(lo, up, pair, frame):
                return pair
        return None

    @staticmethod
    def _ends_padding(lo: str, up: str, pair, frame: Frame) -> bool:
        """Whether the function's reset of rows ``[lo:up]`` (``lo`` a real count of ``pair``) says
        ``up`` is where the padding rows end: not where rows from ``up`` on are reset too (``x[n:end]
        = v; x[end:P] = w``: real rows end there), nor where the function binds the pair's padded
        count by its name (``[lo:up]`` is then some range of rows below it)."""
        return not any(lo2 == up for lo2, _up in frame.seg.reset_bounds) \
            and not any(p in frame.seg.bound_names and p != lo for p in pair.padded)

    def _paired_here(self, name: str, frame: Frame) -> bool:
        """``name`` is a real count because the function also names its padded partner: a
        number bound to ``num_logits`` in a function that slices ``[:num_logits_padded]`` is
        the real count of that pair (the ``X``/``X_padded`` rule), whatever the profile lists."""
        return bool(name) and not self.p.is_padded_name(name) \
            and f"{name}_padded" in frame.seg.names

    @staticmethod
    def _is_zero(node) -> bool:
        return isinstance(node, cst.Integer) and node.value == "0"

    # ----------------------------------------------------------- expressions
    def _count(self, node, state: State) -> Count | None:
        """The count a bound expression denotes, in entry-point terms (a :class:`Count` already
        evaluated, a :class:`TailVal`'s bound, is itself)."""
        if node is None:
            return None
        if isinstance(node, Count):
            return node
        if isinstance(node, cst.Name):
            v = state.env.get(node.value)
            if isinstance(v, CountVal):
                if v.canon is None:
                    return None
                return Count(v.canon, v.offset, node.value)
            if v is None or isinstance(v, UnknownVal):
                return Count(node.value, 0, node.value)
            if isinstance(v, Refs) and len(v.refs) == 1 and not v.maybe_none:
                # `r = self._capture_req_slots`: a number the object holds (no tensor, no object
                # of a known class) is a count of its own, named by where it lives
                r = next(iter(v.refs))
                if r.persistent and r.count is None and not r.types and r.loc.startswith("self.") \
                        and r.loc[5:].isidentifier() and not self.p.axes.size_axis(r.loc[5:]):
                    return Count(r.loc, 0, node.value)
            if isinstance(v, Refs) and v.refs and not v.maybe_none and all(
                    r.count is None and not r.types and not r.elem_types and r.loc.endswith("]")
                    for r in v.refs):
                # `padded = self.graph_sizes[n]`: a number taken from a table the object keeps
                # (an element of a container, no tensor view of a buffer): a count of its own,
                # named by the local (write extents then say which rows are real)
                return Count(node.value, 0, node.value)
            return None
        if isinstance(node, cst.Attribute):
            name = node.attr.value
            stored = self._field_count(node, state, typed=True)
            if stored is not None:
                return None if stored.canon is None else Count(stored.canon, stored.offset, self._text(node))
            if self._known_count(name):
                real = self._equal_count(node, state)
                if real is not None:
                    return Count(real, 0, self._text(node))
                return Count(name, 0, self._text(node))
            if isinstance(node.value, cst.Name) and node.value.value == "self" and not self.p.axes.size_axis(name) \
                    and isinstance(me := state.env.get("self"), Refs) and len(me.refs) == 1 \
                    and next(iter(me.refs)).loc == "self":
                # `self._capture_req_slots`: a number of the object (no capacity of an axis), a count
                # of its own named by where it lives (as a local bound to it is)
                return Count(f"self.{name}", 0, self._text(node))
            return None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
            sign = 1 if isinstance(node.operator, cst.Add) else -1
            if isinstance(node.right, cst.Integer):
                c = self._count(node.left, state)
                if c is not None:
                    return Count(c.canon, c.offset + sign * int(node.right.value, 0), c.written)
            if isinstance(node.left, cst.Integer) and sign == 1:
                c = self._count(node.right, state)
                if c is not None:
                    return Count(c.canon, c.offset + int(node.left.value, 0), c.written)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            # `bs * tokens_per_req`: rows per request times a width; padded when the count is
            # (its real partner is the real count times the same width)
            for c_node, k_node in ((node.left, node.right), (node.right, node.left)):
                if not isinstance(k_node, (cst.Name, cst.Attribute, cst.Integer)):
                    continue
                c = self._count(c_node, state)
                if c is None or not c.canon or c.offset:
                    continue
                k = self._text(k_node)
                pair = self.p.pair_for_padded(c.canon)
                if pair is not None:
                    return Count(f"{pair.real[0]}*{k}_padded", 0, self._text(node))
                if any(c.canon in p.real for p in self.p.counts) or "*" in c.canon:
                    return Count(f"{c.canon}*{k}", 0, self._text(node))
            return None
        if isinstance(node, cst.Call) and (ext := self._extremum_count(node, state)) is not None:
            return Count(ext, 0, self._text(node))
        if isinstance(node, (cst.Subscript, cst.Call)):
            return self._shape_count(node, state)
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            left = state.env.get(node.left.value) if isinstance(node.left, cst.Name) else None
            if isinstance(left, CountVal) and left.canon is None:
                return self._count(node.right, state)
            return self._count(node.left, state)
        return None

    def _extremum_count(self, node: cst.Call, state: State) -> str | None:
        """The count ``max(a, b, ...)`` / ``min(...)`` of the builtins (two or more positional
        arguments, no ``key=``), named by :func:`~padlint.analysis.values.extremum` from its
        arguments' counts in entry-point terms (an argument that is no count is one atom,
        :func:`~padlint.analysis.values.opaque_term`): a maximum is at least each argument, so ``buf[:max(n, dirty)].zero_()`` then
        ``buf[:n]`` hands out written rows (:func:`~padlint.analysis.values.at_least`)."""
        if not isinstance(node.func, cst.Name) or node.func.value not in ("max", "min") \
                or node.func.value in state.env or self._module_binds(node.func.value, state) \
                or len(node.args) < 2 or any(a.keyword is not None or a.star for a in node.args):
            return None  # (a local or module-level `max` is not the builtin)
        args = []
        for a in node.args:
            c = self._count(a.value, state)
            args.append((c.canon, c.offset) if c is not None and c.canon else (opaque_term(self._text(a.value)), 0))
        return extremum(node.func.value, args)

    _BINDS_NAME = r"^(?:def\s+{n}\b|class\s+{n}\b|{n}\s*[:=]|.*\bimport\b.*\b{n}\b)"

    def _module_binds(self, name: str, state: State) -> bool:
        """The module of the frame being interpreted binds ``name`` at its top level (``def max``,
        ``max = ...``, ``from builtins import min as max``): not the builtin there."""
        frame = self._frames[-1] if self._frames else None
        mod = self.project.module(frame.module) if frame is not None else None
        if mod is None:
            return False
        key = (mod.key, name)
        got = self._binds_memo.get(key)
        if got is None:
            got = self._binds_memo[key] = re.search(self._BINDS_NAME.format(n=name), mod.text, re.M) is not None
        return got

    def _equal_count(self, node: cst.Attribute, state: State) -> str | None:
        """The real count a padded field of an object denotes when every construction of the
        object's class binds it to the same expression as that real field (:meth:`_equal_counts`),
        else None."""
        name = node.attr.value
        if not self.p.is_padded_name(name):
            return None
        base = self._eval_quiet(node.value, state)
        if not isinstance(base, Refs) or not base.refs:
            return None
        reals = set()
        for r in base.refs:
            if not r.types:
                return None
            for t in r.types:
                cls = self.project.class_info(t)
                real = self._equal_counts(cls).get(name) if cls is not None else None
                if real is None:
                    return None
                reals.add(real)
        return next(iter(reals)) if len(reals) == 1 else None

    def _equal_counts(self, cls: ClassInfo) -> dict[str, str]:
        """Padded fields of a dataclass that every construction in the project binds to the same
        expression as a real field of their pair (``InputBatch(num_tokens=n,
        num_tokens_after_padding=n)``, also ``cls(...)`` in its own methods): padded field -> that
        real field.  A runner that shares the field names of a padding runner but never pads
        (vLLM 0.34.0's CPU runner) has no padding rows there.  Empty for a field some construction
        binds otherwise, that some ``replace(x, P=...)`` call or ``x.P = ...`` store may change, or
        that no construction is seen for."""
        got = self._eq_counts.get(cls.key)
        if got is not None:
            return got
        out: dict[str, str] = {}
        self._eq_counts[cls.key] = out
        if not cls.is_dataclass:
            return out
        fields = set(cls.fields)
        cands = {pad: {r for r in pair.real if r in fields}
                 for pair in self.p.counts for pad in pair.padded if pad in fields}
        cands = {k: v for k, v in cands.items() if v}
        if not cands:
            return out
        seen: set[str] = set()
        for key in self.project.modules_mentioning([f"{cls.name}(", *(f"{p}=" for p in cands)]):
            mod = self.project.module(key)
            if mod is None:
                continue
            own = {id(n) for c in ast.walk(mod.tree) if isinstance(c, ast.ClassDef) and c.name == cls.name
                   and mod.key == cls.module for n in ast.walk(c)}
            # a store or `replace()` of the field may concern this class only where the module
            # knows it (defines it, or its name resolves to it there)
            knows = mod.key == cls.module or self.project.resolve(mod, cls.name) is cls
            for n in ast.walk(mod.tree):
                if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    if not knows:
                        continue
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        if isinstance(t, ast.Attribute) and t.attr in cands:
                            cands[t.attr] = set()  # a store may change it
                    continue
                if not isinstance(n, ast.Call):
                    continue
                kws = {k.arg: k.value for k in n.keywords if k.arg}
                touched = [p for p in cands if p in kws]
                if not touched:
                    continue
                dotted_name = _dotted_name_ast(n.func)
                built = (isinstance(n.func, ast.Name) and n.func.id == "cls" and id(n) in own) or (
                    dotted_name is not None and self.project.resolve(mod, dotted_name) is cls)
                if built:
                    for p in touched:
                        seen.add(p)
                        cands[p] = {r for r in cands[p] if r in kws and ast.dump(kws[r]) == ast.dump(kws[p])}
                elif knows and (dotted_name or "").rsplit(".", 1)[-1] == "replace":
                    for p in touched:
                        cands[p] = set()
        for p, rs in cands.items():
            if p in seen and len(rs) == 1:
                out[p] = next(iter(rs))
        return out

    def _shape_count(self, node, state: State) -> Count | None:
        """The extent of a view, read off the view: ``v.shape[d]``, ``v.size(d)``, ``len(v)``,
        ``v.numel()`` (rows, dimension 0) of a view ``v`` whose rows along ``d`` are bounded
        by a known count on every path (``idx = buf[:P]; rows = idx.shape[0]`` is P)."""
        target, dim = None, 0
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.Integer):
            if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
                target, dim = node.value.value, int(node.slice[0].slice.value.value, 0)
            elif isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute) \
                    and node.value.func.attr.value == "size" and not node.value.args:
                target, dim = node.value.func.value, int(node.slice[0].slice.value.value, 0)
        elif isinstance(node, cst.Call):
            fn = node.func
            if isinstance(fn, cst.Name) and fn.value == "len" and len(node.args) == 1 and not node.args[0].star:
                target = node.args[0].value
            elif isinstance(fn, cst.Attribute) and fn.attr.value == "numel" and not node.args:
                target = fn.value
            elif isinstance(fn, cst.Attribute) and fn.attr.value == "size" and len(node.args) == 1 \
                    and isinstance(node.args[0].value, cst.Integer):
                target, dim = fn.value, int(node.args[0].value.value, 0)
        if target is None or not isinstance(target, (cst.Name, cst.Attribute)):
            return None
        v = self._eval_quiet(target, state)
        if not isinstance(v, Refs) or not v.refs or v.maybe_none:
            return None
        if any(r.width for r in v.refs):
            return None  # widened to a consumer's declared width: not the view's own length
        counts = {r.count for r in v.refs}
        if len(counts) != 1:
            return None
        c = next(iter(counts))
        if c is None or not c.canon or c.dim != dim:
            return None
        return replace(c, written=self._text(node))

    def _text(self, node: cst.CSTNode) -> str:
        key = id(node)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = norm(_EMPTY.code_for_node(node))
            self._keep.append(node)  # ids stay unique while cached
        return text

    def _t(self, x) -> str:
        return x if isinstance(x, str) else self._text(x)

    def _attr_loc(self, loc: str, attr: str) -> str:
        if attr in self.p.shared_views:
            return loc + "#host"
        if attr == self.p.device_view:
            return loc + "#dev"
        return f"{loc}.{attr}"

    # ------------------------------------------------------- object fields
    @staticmethod
    def _field_key(loc: str, attr: str) -> str:
        return f"@{loc}.{attr}"

    def _fields_of(self, base: Refs, attr: str, state: State) -> AVal | None:
        """The value stored in field ``attr`` of every alternative of ``base``, joined; None
        when some alternative has no stored value (then the field is a location)."""
        value: AVal | None = None
        for r in base.refs:
            if r.count is not None:
                return None
            v = state.heap.get(self._field_key(r.loc, attr))
            if v is None:
                return None
            value = join_vals(value, v)
        return value

    def _store_field(self, base: Refs, attr: str, value: AVal, state: State) -> None:
        for r in base.refs:
            if r.count is None:
                key = self._field_key(r.loc, attr)
                self._stored(key, state.heap)
                state.heap[key] = value

    def _stored(self, key: str, heap) -> None:
        """An object field is stored: the record of an earlier join of its values ends (see
        :attr:`Frame.cond_fields`), and the store is logged for the summary of every callee
        being interpreted (a summary applied again stores it again)."""
        del heap["?" + key]
        del heap[MAYBE_UNSET + key]
        del heap[UNSET + key]
        if self._store_log:
            self._store_log[-1].add(key)

    def _class_named(self, name: str, frame: Frame) -> ClassInfo | None:
        mod = self.project.module(frame.module)
        t = self.project.resolve(mod, name) if mod is not None else None
        return t if isinstance(t, ClassInfo) else None

    def _attr_members(self, base: Refs, attr: str) -> list | None:
        """``self.spec_buffers`` always assigned ``(self.a, self.b)``: the attribute nodes to evaluate."""
        if len(base.refs) != 1:
            return None
        r = next(iter(base.refs))
        if r.count is not None or r.loc != "self" or len(r.types) != 1:
            return None
        cls = self.project.class_info(next(iter(r.types)))
        names = self.project.attr_tuple(cls, attr) if cls is not None else None
        if names is None:
            return None
        key = (cls.key, attr)
        nodes = self._member_nodes.get(key)
        if nodes is None:  # built once: hits and texts are keyed by node identity
            nodes = self._member_nodes[key] = [cst.Attribute(value=cst.Name("self"), attr=cst.Name(n))
                                               for n in names]
        return nodes

    def _apply_registry(self, node: cst.Call, frame: Frame, state: State) -> bool:
        """A registry fill: the slots this class registered get their policy's reset over rows
        [real:] (the real count is the call's keyword for the slot's axis).  False when the
        class registers no slot (then the call is followed like any other)."""
        reg = self.p.registry
        cls = self.project.class_info(frame.cls or frame.owner)
        slots = self.graph.registry_slots(cls) if cls is not None else ()
        if not slots:
            return False
        kws = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        for a in node.args:
            self._eval(a.value, frame, state)
        resets, safe, reals = dict(reg.resets), set(reg.declared_safe), dict(reg.real_counts)
        line = frame.seg.line(node, frame.stmt)
        for attr, axis, policy, pad, computed in slots:
            if computed:
                # its hook computes the whole buffer at this fill (a count, a packed table): every
                # row is this step's, whatever the policy says of padding rows
                for base in self._self_locs(state):
                    state.heap[self._attr_loc(base, attr)] = LocState(False, frozenset(), frozenset({Reset(ALL)}))
                continue
            real = kws.get(reals.get(axis, ""))
            if real is None or (policy not in resets and policy not in safe):
                continue  # FOREACH_COPY and the like: the padding rows keep what they held
            value = resets.get(policy, "")
            value = pad if value == reg.pad_value else value
            for base in self._self_locs(state):
                ref = Ref(self._attr_loc(base, attr), None, f"self.{attr}", line, True, path=frame.path)
                self._reset(ref, real, None, state, None, value, line,
                            PadWrite(frame.path, line, value, "registry") if value else None)
        return True

    def _slot_buffer(self, node: cst.Attribute, frame: Frame, state: State) -> Refs | None:
        """``registry.get_slot("mamba_track_mask").buffer`` (profile ``[registry] lookup``, the
        slot's buffer under the constructor's ``buffer_keyword``), the name a literal or a loop
        variable over literals, where the class registers a slot of that name: the buffer the
        slot holds (``self.buffers.mamba_track_mask``), as the capture's ``slice_for`` view of
        it names it (:meth:`CallGraph.registry_slots`); else None."""
        reg = self.p.registry
        if reg is None or node.attr.value != reg.buffer_keyword:
            return None
        path = self._slot_path(node.value, reg.lookup, frame, state)
        if path is None:
            return None
        self._eval(node.value.func.value, frame, state)
        line = frame.seg.line(node, frame.stmt)
        return Refs(frozenset(Ref(loc, None, f"self.{path}", line, True, path=frame.path)
                              for loc in self._self_attr_locs(path, state)))

    def _held_attr_locs(self, attr: str, frame: Frame, state: State, line: int) -> list[str]:
        """The locations ``self.<attr>`` (a dotted path) reads on this path, as the code would read
        it: an object this path built and stored (``self.buffers = Buffers(req_pool_indices=
        torch.zeros(...))`` in the ``__init__`` that captures) gives its fields' own locations;
        else :meth:`_self_attr_locs`."""
        nodes = self._path_nodes.get(attr)
        if nodes is None:
            nodes, expr = [], cst.Name("self")
            for part in attr.split("."):
                if not part.isidentifier() or keyword.iskeyword(part):
                    nodes = []  # not a chain of attributes of self (`a[k].b`, a registry slot's name)
                    break
                expr = cst.Attribute(value=expr, attr=cst.Name(part))
                nodes.append(expr)
            self._path_nodes[attr] = nodes
        if not nodes:
            return self._self_attr_locs(attr, state)
        v = state.env.get("self")
        for node in nodes:
            v = self._attr_value(v, node, frame, state, line)
        locs = sorted({r.loc for r in v.refs if r.count is None}) if isinstance(v, Refs) else []
        return locs or self._self_attr_locs(attr, state)

    def _self_attr_locs(self, attr: str, state: State, note_owners: bool = False) -> list[str]:
        """The locations of ``self.<attr>`` (a dotted path, ``buffers.positions``) on this path.
        ``note_owners``: remember the buffer each location on the way is (as a read of
        ``self.<attr>`` would note it), so that its never-written fact applies (a constant table
        holds its allocation's rows)."""
        out = []
        for loc in self._self_locs(state):
            for i, part in enumerate(attr.split(".")):
                loc = self._self_field_loc(loc, part, state) if i == 0 else self._attr_loc(loc, part)
                if note_owners and part not in self.p.shared_views and part != self.p.device_view:
                    self._loc_owners.setdefault(loc, set()).add(part)
            out.append(loc)
        return out

    def _self_field_loc(self, loc: str, attr: str, state: State) -> str:
        """The location of field ``attr`` of ``self`` at ``loc`` (:meth:`_alias_loc` applied)."""
        me = state.env.get("self")
        types = frozenset().union(*(r.types for r in me.refs if r.loc == loc)) if isinstance(me, Refs) else frozenset()
        return self._alias_loc(loc, types, attr) or self._attr_loc(loc, attr)

    def _alias_loc(self, loc: str, types: frozenset, attr: str) -> str | None:
        """The location of field ``attr`` of the object at ``loc`` when it is another object's
        field by construction (:meth:`CallGraph.field_aliases`: a step runner at
        ``<holder>.runners[*]`` whose ``buffers`` is always ``<holder>.buffers``): that
        location, so that writes through either path meet; else None."""
        if not types or loc.startswith("new:") or "." not in loc:
            return None
        pairs = None
        for t in types:
            got = self.graph.field_aliases(t, attr)
            if not got or (pairs is not None and got != pairs):
                return None
            pairs = got
        for f, g in pairs or ():
            for suffix in (f".{f}", f".{f}[*]"):
                if loc.endswith(suffix) and len(loc) > len(suffix):
                    return self._attr_loc(loc[:-len(suffix)], g)
        return None

    def _held_counts(self, state: State, real_of: str = "") -> dict[str, str]:
        """Padded counts this path stored in fields of ``self`` (``self.bs = bs`` in a
        ``load_batch`` the replaying method called first): canonical count -> ``self.<field>``;
        with ``real_of``, the real counts of that padded count's pair held so (``self.raw_bs``).
        A field some path to here did not store holds no count here (the join keeps none)."""
        out: dict[str, str] = {}
        pair = self.p.pair_for_padded(real_of) if real_of else None
        if real_of and pair is None:
            return out
        reals = {r.split("*", 1)[0] for r in pair.real} if pair is not None else set()
        for loc in self._self_locs(state):
            head = f"@{loc}."
            for k, v in state.heap.items():
                if k.startswith(head) and isinstance(v, CountVal) and v.canon and not v.offset \
                        and not dict.get(state.heap, UNSET + k) \
                        and (v.canon.split("*", 1)[0] in reals if pair is not None
                             else self.p.is_padded_name(v.canon)):
                    attr = k[len(head):]
                    if "." not in attr and (v.canon not in out or attr == v.canon):
                        out[v.canon] = f"self.{attr}"  # `self.bs` before `self._graph_size`
        return out

    @staticmethod
    def _self_locs(state: State) -> tuple[str, ...]:
        """The heap locations ``self`` stands for in this frame: ``self`` where the method is an
        entry point, the receiver's location where a caller reached it
        (``self.graph_runner.execute(...)`` in the model runner: ``self.graph_runner``).
        Resets and reads the engine builds from the class's own attribute paths (registry
        slots, graph-bound buffers) are taken relative to it, so that they meet the writes the
        method's code makes through ``self``."""
        me = state.env.get("self")
        if isinstance(me, Refs):
            locs = tuple(sorted({r.loc for r in me.refs if r.count is None}))
            if locs:
                return locs
        return ("self",)

    def _inside_profile_replay(self) -> bool:
        """Whether a frame below the entry point is a replay call the profile names
        (``[graphs] replay``: ``*._replay_graph``): its graph reads were judged at that call."""
        return self._graph_replay is not None and any(self._graph_replay.fullmatch(f.qual) for f in self._frames[1:])

    def _graph_lookup(self, expr, frame: Frame) -> cst.Subscript | None:
        """``self.graphs[key]`` for ``self.graphs.get(key)`` and for a local the function binds once
        to either (``g = self.graphs[key]``): the graph ``g.replay()`` replays; else None."""
        v = self._bound_once(expr.value, frame) if isinstance(expr, cst.Name) else expr
        if isinstance(v, cst.Subscript) and isinstance(v.value, cst.Attribute) \
                and isinstance(v.value.value, cst.Name) and v.value.value.value == "self":
            return v
        if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "get" \
                and isinstance(v.func.value, cst.Attribute) and isinstance(v.func.value.value, cst.Name) \
                and v.func.value.value.value == "self" and v.args and v.args[0].keyword is None \
                and not v.args[0].star:
            got = self._lookup_nodes.get(id(v))
            if got is None:
                got = self._lookup_nodes[id(v)] = cst.Subscript(
                    value=v.func.value, slice=[cst.SubscriptElement(cst.Index(v.args[0].value))])
                self._keep.append(v)
            return got
        return None

    def _padded_field_read(self, expr, frame: Frame, canon: str, state: State,
                           depth: int = 0) -> cst.Attribute | None:
        """The field ``expr`` reads a padded count off (``self.bs``), directly, as an argument of a
        call (a graph key made from it: ``self._make_graph_key(self.bs, stream_idx)``), or through
        a local the function binds once to either; of several, the one holding count ``canon``
        (the graph's size where it is known); else None."""
        if isinstance(expr, cst.Attribute):
            return expr if self.p.is_padded_name(expr.attr.value) else None
        if isinstance(expr, cst.Call) and depth < 2:
            found: dict[str, cst.Attribute] = {}
            for a in expr.args:
                f = self._padded_field_read(a.value, frame, canon, state, depth + 1)
                if f is not None:
                    found.setdefault(self._text(f), f)
            if len(found) > 1 and canon:
                found = {t: f for t, f in found.items()
                         if (c := self._count(f, state)) is not None and c.canon == canon}
            return next(iter(found.values())) if len(found) == 1 else None
        if isinstance(expr, cst.Name) and depth < 2:
            v = self._bound_once(expr.value, frame)
            return self._padded_field_read(v, frame, canon, state, depth + 1) if v is not None else None
        return None

    def _is_key(self, expr, count: Count | None, frame: Frame, state: State) -> bool:
        """Whether a graph index is a key a call makes from the size (``self._make_graph_key(self.bs,
        i)``, or a local the function binds once to one) rather than the size itself: the call is
        handed the count the index evaluates to (it passes the size through) or, the index
        evaluating to no count, any argument.  A size a call computes (``self.pad_to_captured(
        raw_bs)``) is handed another count: no key."""
        if isinstance(expr, cst.Name):
            expr = self._bound_once(expr.value, frame)
        if not isinstance(expr, cst.Call):
            return False
        if count is None or not count.canon:
            return True
        return any((c := self._count(a.value, state)) is not None and c.canon == count.canon and not c.offset
                   for a in expr.args if not a.star)

    def _check_replay(self, node: cst.Call, graphs: cst.Subscript | None, frame: Frame, state: State) -> None:
        """A graph replay reads rows ``[:count]`` of each graph-bound buffer: ``count`` is the
        graph's index (``self.graphs[bs].replay()``), or, for a replay call the profile names
        (``[graphs] replay``), the padded count in scope of the axis of the count the capture
        sliced the buffer with (none in scope: that buffer is not judged here)."""
        count = None
        key_name = ""  # a local holding a graph key made from the size, not the size itself
        stored_under: frozenset = frozenset()
        if graphs is None and self._inside_profile_replay():
            return  # inside a replay call the profile names (`self._replay_graph(bs, fb)`): judged there
        if graphs is not None:
            idx = graphs.slice[0].slice if len(graphs.slice) == 1 else None
            if not isinstance(idx, cst.Index):
                return
            expr = idx.value
            count = self._count(expr, state)
            key = self._is_key(expr, count, frame, state)  # a key made from the size, not the size
            field = self._padded_field_read(expr, frame, count.canon if count is not None else "", state)
            if field is not None and (key or count is None or not count.canon):
                # the rows of a key made from the size (`graph_key = self._make_graph_key(self.bs, i)`,
                # or the call itself as the index) are those of the field read into it, named so
                size = self._count(field, state)
                if size is not None and size.canon:
                    count = replace(size, written=self._text(field))
            if count is None or not count.canon:
                return
            if key and field is None:
                count = replace(count, written=count.canon)  # (a key is no name of the rows)
            if key and isinstance(expr, cst.Name):
                key_name = expr.value
                frame.keys.add(key_name)
            if field is not None:
                stored_under = self._stored_under(field, count.canon, state)
                if stored_under:
                    # the size was read off an object's field that this step stored under a test
                    # only, its real partner with it: on the paths the test holds the object
                    # holds that partner, as for any padded count read off a field
                    self._know_partners(count.canon, frame)
        cls = self.project.class_info(frame.cls or frame.owner)
        if cls is None:
            return
        # `self.draft_graphs[bs].replay()` replays graphs of the methods that store into
        # `self.draft_graphs`: the buffers another table's captures bind are not read here
        table = graphs.value.attr.value if graphs is not None and isinstance(graphs.value, cst.Attribute) \
            and isinstance(graphs.value.value, cst.Name) and graphs.value.value.value == "self" else None
        if graphs is None and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Attribute) \
                and isinstance(node.func.value.value, cst.Name) and node.func.value.value.value == "self" \
                and node.func.value.attr.value in self.graph.graph_managers(cls):
            # `self.prefill_cudagraph_manager.run_fullgraph(desc)`: the graphs that manager captured
            table = node.func.value.attr.value
        managed = graphs is None and table is not None  # a graph manager's replay of a descriptor
        bound_all = tuple(b for b in self.graph.graph_bound(cls) if table is None or not b[5] or table in b[5])
        inputs = tuple(gi for gi in self.graph.graph_inputs(cls)
                       if table is None or not gi.tables or table in gi.tables)
        if inputs:
            self._check_graph_inputs(node, inputs, frame, state)
        if self._branch_writes:
            # the replay runs the captured work, which may write rows of the buffers its graphs
            # are bound to (a draft step's next input ids): the branch may have written them
            # (:meth:`_partial_prefixes`)
            for b in bound_all:
                self._branch_writes[-1].update(loc.split("#", 1)[0] for loc in self._self_attr_locs(b[0], state))
        if not bound_all:
            return
        by_axis: dict[str, set] = {}  # the padded counts in scope, by axis
        partial = state.env.get(PARTIAL, frozenset())
        in_scope = {c: n for c, n in self._names_in_scope(frame, state)[1].items() if n not in partial}
        if key_name and count is not None:
            in_scope.setdefault(count.canon, count.written)
        held = self._held_counts(state)
        held_real: dict[str, bool] = {}  # padded count -> a real partner of it is held on `self`
        for canon, name in [*in_scope.items(), *((c, n) for c, n in held.items() if c not in in_scope)]:
            axis = self.p.count_axis(canon)
            if axis:
                by_axis.setdefault(axis, set()).add((canon, name))
        line = frame.seg.line(node, frame.stmt)
        outer = self._active
        learned, unseen = self._learned_facts(by_axis, bound_all, frame.cls or frame.owner, state)
        for axis in list(by_axis):
            # a padded count only the code's resets name, none of which reached this replay on
            # this path (they ran under a test the analysis cannot tie to the replay): the code's
            # own account of where the padding rows are is not known here
            by_axis[axis] = {(c, n) for c, n in by_axis[axis] if n not in unseen}
        if learned:
            # the padded count is one the code's own resets name (`r = self._capture_req_slots`,
            # `s[...][bs:r].zero_()`), and it resets those rows only where these facts hold (`if
            # self._is_full_backend and bs < r:`): by its own account the graph reads padding
            # rows there alone, so the replay is judged on those paths
            stored_under = stored_under | learned
        if stored_under:
            # the size was stored in this step only where these facts hold (elsewhere it and its
            # padding rows are another call's): the replay is judged on those paths, where a
            # reset made under the same facts covers it (path correlation, as for a repeated test)
            self._active = outer | stored_under
        try:
            self._judge_replay(node, graphs, count, bound_all, managed, by_axis, partial, held_real, line,
                               cls, frame, state)
        finally:
            self._active = outer

    def _learned_facts(self, by_axis: dict, bound_all, cls: str, state: State) -> tuple[frozenset, set]:
        """For a padded count in scope that only the code's resets name (a number ``self`` keeps,
        :meth:`_padded_by_reset`): the facts under which the code pads, by its own account, and
        the names of the counts of that kind no reset of whose rows reached here on this path (not judged:
        where the code resets them is not known here).  The facts are those that held where the
        code bound the count (`r = self._capture_req_slots` under `if self._is_full_backend and
        bs < r:`), met over its bindings; where it bound none (a reset bounded by the field
        itself), those every reset of such rows of a graph-bound buffer holds under.  A reset
        made under other facts (another setting) then does not cover the replay."""
        learned: dict[str, list[str]] = {}  # canon -> heap keys of the fields holding it
        names: dict[str, set] = {}  # canon -> the names of those fields in scope
        for cands in by_axis.values():
            for canon, name in cands:
                if not name.startswith("self.") or "." in name[5:]:
                    continue
                for loc in self._self_locs(state):
                    key = f"@{loc}.{name[5:]}"
                    v = dict.get(state.heap, key)
                    if isinstance(v, CountVal) and v.learned and v.canon == canon:
                        learned.setdefault(canon, []).append(key)
                        names.setdefault(canon, set()).add(name)
        if not learned:
            return frozenset(), set()
        whens: list = []
        seen: set = set()
        for attr, *_rest in bound_all:
            for loc in self._self_attr_locs(attr, state):
                for loc2 in (loc, loc + "#host", loc + "#dev"):
                    st = dict.get(state.heap, loc2)
                    if not isinstance(st, LocState):
                        continue
                    for rs in st.clean:
                        if rs.real != ALL and rs.upto in learned and self.p.is_real_for(rs.real, rs.upto):
                            whens.append(rs.when)
                            seen.add(rs.upto)
        bound = [self._learned_when[(cls, k)] for c in seen for k in learned[c] if (cls, k) in self._learned_when]
        facts = frozenset.intersection(*bound) if bound else \
            frozenset.intersection(*whens) if whens else frozenset()
        return facts, {n for c in set(learned) - seen for n in names[c]}

    def _stored_under(self, field: cst.Attribute, canon: str, state: State) -> frozenset:
        """The facts under which this path stored ``self.<field>`` (a prepare method called under
        ``if not skip_prepare:``), read off the record a join of the test's branches keeps, where
        a field holding a real partner of the size (count ``canon``) was stored under the same
        facts; empty where every path stored the size (the held counts decide then), where no
        record tells, or where no real partner was stored with it."""
        if not (isinstance(field.value, cst.Name) and field.value.value == "self"):
            return frozenset()
        pair = self.p.pair_for_padded(canon)
        if pair is None:
            return frozenset()
        reals = {r.split("*", 1)[0] for r in pair.real}

        def stored(key: str) -> list:
            rec = dict.get(state.heap, "?" + key)
            if not dict.get(state.heap, UNSET + key) or not (isinstance(rec, tuple) and len(rec) == 2):
                return []
            maybe = dict.get(state.heap, MAYBE_UNSET + key) or ()
            return [(facts, v) for facts, v in rec[1] if v is not None and facts not in maybe]

        out: set = set()
        for loc in self._self_locs(state):
            mine = stored(f"@{loc}.{field.attr.value}")
            if len(mine) != 1:
                continue
            facts = mine[0][0]
            head = f"?@{loc}."
            partner = any(
                len(got := stored(k[1:])) == 1 and got[0][0] == facts and isinstance(got[0][1], CountVal)
                and (got[0][1].canon or "").split("*", 1)[0] in reals
                for k in state.heap if k.startswith(head) and "." not in k[len(head):])
            if partner:
                out |= facts
        return frozenset(out)

    def _judge_replay(self, node: cst.Call, graphs, count, bound_all, managed: bool, by_axis: dict,
                      partial, held_real: dict, line: int, cls: ClassInfo, frame: Frame, state: State) -> None:
        """Judge each graph-bound buffer the replay ``node`` reads (:meth:`_check_replay`)."""
        for attr, fld, bound, definition, dim, _tables in bound_all:
            if dim and not (bound and self.p.count_axis(bound)):
                continue  # columns bounded by no count of an axis (a top-k width): no padding
            defined = self._capture_width(definition, state)
            if defined is not None:
                # the capture sliced with a local it computed (`num_tokens = bs * w`): the graph
                # of this replay's shape reads that many rows, evaluated in the replay's terms
                c = defined
            elif count is not None:
                # rows up to the count the capture sliced with, as the replay's code names it
                # (`[:num_tokens]` for a token buffer), else the capture's width in the replay's
                # terms (`num_seqs * w` -> `bs * w`), else up to the graph's own index
                named = self._count(cst.Name(bound), state) if bound and isinstance(
                    state.env.get(bound), CountVal) and bound not in partial else None
                c = named if named is not None and named.canon else \
                    self._capture_width(definition, state, by_axis)
                if c is None:
                    axis = self.p.count_axis(bound) if bound else None
                    if axis and self.p.count_axis(count.canon) not in (None, axis):
                        continue  # a token buffer is not read to the graph's batch size
                    c = count
            else:
                axis = self.p.count_axis(bound) if bound else None
                cands = by_axis.get(axis, set()) if axis else set()
                if len(cands) == 1:
                    canon, name = next(iter(cands))
                    c = Count(canon, 0, name)
                else:
                    c = self._capture_width(definition, state, by_axis)
                    if c is None and managed and not cands and not self._names_descriptor(node, bound, frame):
                        c = self._descriptor_width(node, bound, state)
                    if c is None:
                        continue
            if c.canon not in held_real:
                held_real[c.canon] = bool(self._held_counts(state, real_of=c.canon))
            c = replace(c, unpadded=self._no_padding(c.canon, state, frame) and not held_real[c.canon], dim=dim)
            refs = set()
            for loc in self._self_attr_locs(attr, state, note_owners=True):
                text = f"self.{attr}[:, :{c.written}]" if dim else f"self.{attr}[:{c.written}]"
                refs.add(Ref(loc, c, text, line, True, path=frame.path))
                self.graph_bound_locs.setdefault(loc, set()).add((cls.key, attr))
            key = self._kwkeys.get((id(node), "replay:" + attr))
            if key is None:
                key = self._kwkeys[(id(node), "replay:" + attr)] = _KwargsKey(node, fld)
            # a field the profile gives a contract is attention metadata (error); any other buffer
            # the graph reads is an input of the captured model forward (the forward severity)
            severity = "error" if graphs is not None or self.p.field_spec(fld) is not None \
                else self.p.forward_severity
            fact = self._read_condition(cls, attr, state) if managed else None
            saved = self._active
            if fact is not None:
                # the graph reads the slice only where the attribute is set: a reset made under the
                # same test covers it (path correlation, as for a repeated test)
                self._active = saved | {fact}
            try:
                self._check_sink("CUDA graph replay", fld, "replay", node, Refs(frozenset(refs)), frame, state,
                                 severity, node=key)
            finally:
                self._active = saved

    def _read_condition(self, cls: ClassInfo, attr: str, state: State):
        """The fact under which the graphs read ``attr`` (:meth:`CallGraph.graph_read_conditions`:
        ``self.draft_logits is not None``), keyed as a test of ``self``'s attribute is
        (:meth:`_cond_keys`), or None."""
        chain = self.graph.graph_read_conditions(cls).get(attr)
        me = state.env.get("self")
        if chain is None or not isinstance(me, Refs) or not me.refs:
            return None
        return (("self", tuple(sorted(r.loc for r in me.refs)), f"{chain} is None"), False)

    def _check_capture(self, node: cst.Call, frame: Frame, state: State) -> None:
        """A graph manager's capture (``self.decode_cudagraph_manager.capture(self._decode, ...)``,
        the profile's ``[graphs] captured_by``) runs the functions it captures once per captured
        size before any request is in a graph: every row they read of a slice they read before
        writing it (rows ``[0:n]`` at size ``n``) is a padding row, holding what it held when the
        capture started.  The capture's outputs are dropped, as a dummy run's are; what it leaves
        behind is what the captured work writes through index fields (KV slots, draft-logits or
        state rows of a live request), so those fields are judged here, as a dummy run's index
        fields are: rows no write before the capture reached are stale (PAD001), and a write that
        reached them must write the field's neutral value (PAD002).  vLLM 0.27.1 -> 0.28.0 added
        ``self.idx_mapping.zero_()`` before the drafter's captures (stale indices of earlier dummy
        runs indexed out of bounds); 0.34.0 made it ``fill_(-1)`` (0 is a live request-state row:
        the captured steps wrote draft logits and KV through it)."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)
                and isinstance(func.value.value, cst.Name) and func.value.value.value == "self"):
            return
        cls = self.project.class_info(frame.cls or frame.owner)
        if cls is None:
            return
        table = func.value.attr.value
        if table not in self.graph.graph_managers(cls):
            return
        line = frame.seg.line(node, frame.stmt)
        captured = sorted(n for n, ms in self.graph.captured_functions(cls).items() if table in ms)
        run = f"{frame.qual.rpartition(':')[2].rpartition('.')[2]}"
        entries = [(attr, fld, bound) for attr, fld, bound, _definition, dim, tables in self.graph.graph_bound(cls)
                   if not dim and bound and table in tables]
        self._judge_capture_reads(node, frame, state, entries, captured, run, line)

    def _check_shape_capture(self, node: cst.Call, method: str, frame: Frame, state: State) -> None:
        """A call of a method that captures the graph of one shape (``self.capture_one_shape(bs,
        ...)``: named by ``[graphs] capture``, or holding a ``with ...graph(...):`` block) from
        another method of its class.  The capture runs the captured forward once, with no request
        in the graph, over the views it (or a helper it hands its size) takes: the index fields
        among them are judged as at a graph manager's capture (:meth:`_check_capture`), their rows
        holding what they held when the call was reached.  Captures run at start-up, and again
        while serving (SGLang 0.5.16's ``recapture_if_needed`` at the start of a step): the
        previous batch's live KV slots and request rows were written through, which 0.5.17 fixed
        with ``self.buffers.reset_index_buffers()`` before the capture."""
        cls = self.project.class_info(frame.cls or frame.owner)
        if cls is None:
            return
        if method in self.graph.captured_functions(cls):
            return  # a function a graph manager captures, run eagerly here (its captures are judged
            # at the manager's capture call)
        binders = self.graph.graph_binders(cls)
        own = self.graph.capture_written(cls).get(method, frozenset())
        entries = [(attr, fld, bound) for attr, fld, bound, _definition, dim, _tables in self.graph.graph_bound(cls)
                   if not dim and bound and method in binders.get(attr, ()) and attr not in own]
        if entries:
            self._judge_capture_reads(node, frame, state, entries, [method], method,
                                      frame.seg.line(node, frame.stmt))

    def _judge_capture_reads(self, node: cst.Call, frame: Frame, state: State, entries, captured: list[str],
                             run: str, line: int) -> None:
        """Rows ``[0:bound]`` of each graph-bound index field in ``entries`` (attribute path,
        field, bound) are padding rows of a capture run by ``node``: a write that reached them
        must be the neutral value (PAD002), rows no reset reached hold an earlier step's (PAD001).
        A capture the constructor runs reads what construction left: fresh allocations are no
        request's, but buffers construction took from elsewhere (a process-wide pool of buffers
        shared by name, a factory the analysis cannot read) may hold anything."""
        for attr, fld, bound in entries:
            if not self.p.is_index_field(fld):
                continue
            # every row `[0:bound]` is a padding row at capture, whatever the axis of `bound`
            # (`num_sample = num_reqs * k`): the pair only names the rows as padding rows
            axis = self.p.count_axis(bound)
            pair = next((p for p in self.p.counts if p.axis == axis and p.padded), None) if axis else None
            pair = pair or next((p for p in self.p.counts if p.padded), None)
            if pair is None:
                continue
            c = Count(pair.padded[0], 0, bound)
            refs = {Ref(loc, c, f"self.{attr}[:{bound}]", line, True, path=frame.path, dummy=run)
                    for loc in self._held_attr_locs(attr, frame, state, line)}
            value = Refs(frozenset(refs))
            key = self._kwkeys.get((id(node), "capture:" + attr))
            if key is None:
                key = self._kwkeys[(id(node), "capture:" + attr)] = _KwargsKey(node, fld)
            if self.p.is_exempt(fld):
                continue
            written = self._covers(value, state)
            if written:
                self._pad_hit(key, "CUDA graph capture", fld, "capture", key, frame, written)
            taints: set[Taint] = set()
            for r in refs:
                st = state.loc(r.loc)
                if not st.entry_stale:
                    continue
                t = Taint(buffer=r.text, padded=c.canon, offset=0, reason="stale", padded_written=bound,
                          real=(DUMMY_ROWS,), dummy=run,
                          steps=((line, f"the capture runs {', '.join(f'`{n}`' for n in captured)} at every "
                                        f"captured size with no request in the graph: rows [0:{bound}] of "
                                        f"`self.{attr}` hold what they held before it", frame.path),))
                if not covers(st.clean, t, self._real_for, None, self._active):
                    taints.add(t)
            self._check_sink("CUDA graph capture", fld, "capture", node, value, frame, state, "error",
                             node=key, given=taints)

    def _check_graph_inputs(self, node: cst.Call, inputs, frame: Frame, state: State) -> None:
        cls = self.project.class_info(frame.cls or frame.owner)
        """A graph input (:meth:`CallGraph.graph_inputs`: a buffer the graph reads whole, which the
        capture wrote with a value computed from the captured size) that no path from the entry
        point to this replay wrote holds what the last capture or replay wrote, for another size.
        A write on some path only (under a test) is taken as the replay's refresh: which
        configurations make the graph read the buffer is not known here (the buffer may not exist
        in the others), so only a replay that never writes it is reported."""
        if self._inside_profile_replay():
            return  # inside a replay call the profile names, judged at that call already
        if not any(self._pair_known(canon, frame) for canon in self._names_in_scope(frame, state)[1]):
            # no padding decided on this path (`bs` handed in, its real count not known here): the
            # replay runs after another call prepared the step (`prepare()` then `replay()`), whose
            # writes this path does not see; the graph-bound slices are not judged there either
            return
        line = frame.seg.line(node, frame.stmt)
        for gi in inputs:
            locs = self._self_attr_locs(gi.attr, state)
            # a key in the heap: some path since the entry point wrote the buffer (a join keeps it),
            # or handed it, or an object holding it, to code the analysis does not read (a kernel,
            # an `out=` call) or called a method of an object the class built with it
            held = [self._attr_loc(base, h) for base in self._self_locs(state)
                    for h in self.graph.holders(cls, gi.attr)]
            if any(state.heap.get(loc) is not None or state.heap.get(loc + "#dev") is not None
                   or any(state.heap.get(MAY_WRITE + holder) is not None for holder in _holders(loc))
                   for loc in locs) or any(state.heap.get(MAY_WRITE + h) is not None
                                           or state.heap.get(CALLED + h) is not None for h in held):
                continue
            text = f"self.{gi.attr}"
            taint = Taint(
                buffer=text, padded="", offset=0, reason="stale", graph_input=gi.write,
                steps=((gi.line, f"the capture writes `{text}` with a value computed from the size it "
                                 f"captures (`{gi.count}`): `{norm(gi.write)}`; every graph reads it",
                        gi.path),
                       (line, f"no path to this replay writes `{text}`: it holds what the last capture "
                              f"or replay wrote, for another size", frame.path)))
            key = self._kwkeys.get((id(node), "input:" + gi.attr))
            if key is None:
                key = self._kwkeys[(id(node), "input:" + gi.attr)] = _KwargsKey(node, gi.field)
            self._check_sink("CUDA graph replay", gi.field, "replay", node,
                             Refs(frozenset({Ref(locs[0], None, text, line, True, path=frame.path)})),
                             frame, state, "error", node=key, given={taint})

    def _descriptor_width(self, node: cst.Call, bound: str, state: State) -> Count | None:
        """The padded count a replay call the profile names replays, read off the descriptor it
        is handed (``manager.run_fullgraph(desc)``: the graph of ``desc.num_reqs`` requests) when
        the captured function sliced with ``bound`` (``num_reqs``), the descriptor has a field of
        that name, and ``bound`` is this frame's real count of the step (the descriptor is its
        padded size): rows ``[num_reqs:desc.num_reqs]`` are the replay's padding rows."""
        if not bound or self.p.is_padded_name(bound) or not isinstance(state.env.get(bound), CountVal):
            return None
        real = self._count(cst.Name(bound), state)
        if real is None or not real.canon or real.offset or self.p.is_padded_name(real.canon):
            return None
        for arg in node.args:
            if arg.keyword is not None or not isinstance(arg.value, (cst.Name, cst.Attribute)):
                continue
            field = cst.Attribute(arg.value, cst.Name(bound))
            c = self._count(field, state)
            if c is None or c.offset:
                continue
            pair = next((p for p in self.p.counts if real.canon in p.real and p.padded), None)
            padded = pair.padded[0] if pair is not None else f"{real.canon}_padded"
            return Count(padded, 0, self._text(field))
        return None

    def _names_descriptor(self, node: cst.Call, bound: str, frame: Frame) -> bool:
        """Whether the replaying function assigns ``bound`` from a field of the descriptor it
        replays (``num_tokens = desc.num_tokens``, ``n = desc.num_reqs or num_reqs``): there the
        name the captured function sliced with holds the replayed size, not the step's real count,
        and ``[bound:desc.bound]`` is no range of padding rows."""
        key = (id(node), bound)
        got = self._descriptor_names.get(key)
        if got is not None:
            return got
        descs = {self._text(a.value) for a in node.args if a.keyword is None}
        got = bool(descs) and any(
            isinstance(sub, cst.Assign)
            and any(isinstance(t.target, cst.Name) and t.target.value == bound for t in sub.targets)
            and any((text := self._text(sub.value)) == f"{d}.{bound}" or text.startswith(f"{d}.{bound} or ")
                    for d in descs)
            for sub in _cst_walk(frame.seg.func))
        self._descriptor_names[key] = got
        return got

    def _capture_width(self, definition: str, state: State, by_axis: dict[str, set] | None = None
                       ) -> Count | None:
        """The padded count a capture-time width definition (``bs * self.captured_req_width``)
        denotes in the replay's frame, or None (no definition, or not a padded count here).  With
        ``by_axis`` (the padded counts in scope, by axis), a count of the capture's frame that is
        no padded count here (``num_seqs * w``, ``num_seqs`` the captured batch size: unbound, or
        the replay's own real count of that name) stands for the one padded count of its axis in
        scope (``bs``), the size of the graph replayed."""
        if not definition:
            return None
        expr = self._capture_defs.get(definition)
        if expr is None:
            try:
                expr = cst.parse_expression(definition)
            except Exception:  # noqa: BLE001 - text from ast.unparse; never expected
                expr = False
            self._capture_defs[definition] = expr
        if expr is False:
            return None
        if by_axis is not None:
            expr = self._as_replayed(expr, state, by_axis)
        if expr is None or not self._names_bound(expr, state):
            return None  # a name of the capture's frame this frame does not have
        partial = state.env.get(PARTIAL, frozenset())
        if partial and any(isinstance(n, cst.Name) and n.value in partial for n in _cst_walk(expr)):
            return None  # bound on some paths only: on the others the size is another step's
        c = self._count(expr, state)
        if c is None or not c.canon or not self.p.is_padded_name(c.canon):
            return None
        return c

    def _as_replayed(self, node, state: State, by_axis: dict[str, set]):
        """``node`` (names, attributes, integers, arithmetic) with each count name (one with an
        axis) that is no padded count here replaced by the one padded count in scope of its axis;
        None if that axis has not exactly one here (or ``node`` is something else)."""
        if isinstance(node, cst.BinaryOperation):
            left = self._as_replayed(node.left, state, by_axis)
            right = self._as_replayed(node.right, state, by_axis) if left is not None else None
            return None if right is None else node.with_changes(left=left, right=right)
        if isinstance(node, cst.Attribute):
            value = self._as_replayed(node.value, state, by_axis)
            return None if value is None else node.with_changes(value=value)
        if isinstance(node, cst.Name):
            axis = self.p.count_axis(node.value)
            v = state.env.get(node.value) if node.value not in state.env.get(PARTIAL, ()) else None
            if axis and not (isinstance(v, CountVal) and v.canon and self.p.is_padded_name(v.canon)):
                cands = by_axis.get(axis, set())
                return cst.parse_expression(next(iter(cands))[1]) if len(cands) == 1 else None
            return node
        return node if isinstance(node, cst.Integer) else None

    @classmethod
    def _names_bound(cls, node, state: State) -> bool:
        """Whether every name ``node`` reads (the root of each attribute chain) is bound in this
        frame; only names, attributes, integers and arithmetic are read."""
        if isinstance(node, cst.BinaryOperation):
            return cls._names_bound(node.left, state) and cls._names_bound(node.right, state)
        if isinstance(node, cst.Attribute):
            return cls._names_bound(node.value, state)
        if isinstance(node, cst.Name):
            return node.value in state.env
        return isinstance(node, cst.Integer)

    def _sink_type(self, base: Refs) -> str | None:
        """The class name of ``base`` when it is an object of a sink (metadata) class."""
        for r in base.refs:
            for t in r.types:
                name = t.rpartition(":")[2]
                if self.p.is_sink_constructor(name):
                    return name
        for r in base.refs:
            if r.within:
                return r.within
        return None

    def _know_partners(self, canon: str, frame: Frame) -> None:
        """A padded count read from an object's field: the object holds its real partner too."""
        pair = self.p.pair_for_padded(canon)
        if pair is not None:
            frame.known.update(pair.real)

    def _cv(self, v: AVal) -> AVal:
        """Mark a count value as padded where the profile says its canonical name is."""
        if isinstance(v, CountVal) and v.canon and not v.padded and self.p.is_padded_name(v.canon):
            return replace(v, padded=True)
        return v

    def _builder_outputs(self, frame: Frame) -> dict:
        """The metadata classes of the frame's builder: of the class defining the method and of
        the class of `self` it runs for (a subclass, under dispatch); empty outside builders."""
        if not self.p.sink_builders or not frame.owner:
            return {}
        outs = self.graph.builder_outputs(frame.owner)
        if frame.cls and frame.cls != frame.owner:
            outs = {**outs, **self.graph.builder_outputs(frame.cls)}
        return outs

    def _sink_class_name(self, obj: Refs, frame: Frame) -> str:
        """The name of a metadata class among the classes of ``obj`` (a sink constructor of the
        profile, or an output of the frame's metadata builder), else ""."""
        outs = self._builder_outputs(frame)
        for r in obj.refs:
            for t in sorted(r.types):
                c = self.project.class_info(t)
                if c is not None and (self.p.is_sink_constructor(c.name) or t in outs):
                    return c.name
        return ""

    def _elem(self, node, frame: Frame, state: State) -> AVal:
        """An element of a tuple or list literal: a string is a key (``for name in ("a", "b"):``
        indexes a dict of buffers with each), anything else its value."""
        if isinstance(node, cst.SimpleString):
            return self._key_of(node, frame, state) or UNKNOWN
        return self._eval(node, frame, state)

    def _key_of(self, node, frame: Frame, state: State) -> KeyVal | None:
        """The dict keys an index names: a string literal, or a name bound to keys (a loop over
        a module-level tuple of names), or a tuple of such parts and others (:meth:`_tuple_key`);
        else None."""
        if isinstance(node, cst.SimpleString):
            key = node.evaluated_value
            return KeyVal(frozenset({key})) if isinstance(key, str) else None
        if isinstance(node, cst.Name):
            v = state.env.get(node.value)
            if isinstance(v, TupleVal) and not v.mutable:
                return self._tuple_key([x if isinstance(x, KeyVal) and x.keys else None for x in v.items])
            return v if isinstance(v, KeyVal) and v.keys else None
        if isinstance(node, cst.Attribute) and node.attr.value == "name" and isinstance(node.value, cst.Name):
            f = state.env.get(node.value.value)  # `f.name` of `for f in fields(self)`
            return KeyVal(frozenset({f.name})) if isinstance(f, FieldRef) else None
        if isinstance(node, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
            return self._tuple_key([self._key_of(e.value, frame, state) for e in node.elements])
        return None

    @staticmethod
    def _tuple_key(parts: list[KeyVal | None]) -> KeyVal | None:
        """The key of a tuple index (``(name, buf.numel(), buf.dtype)``, SGLang 0.5.16's pool key)
        whose parts are known keys or not: one key per combination of the known parts' keys,
        the unknown parts written ``?`` (tuples that differ in a known part are different keys;
        those that differ only in an unknown part are taken as one); None when no part is
        known, or the combinations exceed :data:`MAX_KEYS`."""
        if not any(parts):
            return None
        keys = [""]
        for p in parts:
            alts = sorted(p.keys) if p is not None else ["?"]
            keys = [f"{k}, {a!r}" if p is not None else f"{k}, ?" for k in keys for a in alts]
            if len(keys) > MAX_KEYS:
                return None
        return KeyVal(frozenset(f"({k[2:]})" for k in keys))

    def _module_keys(self, module: str, name: str) -> tuple[str, ...] | None:
        """The strings of a module-level ``NAME = ("a", "b")`` of ``module`` (a tuple of at
        most :data:`MAX_KEYS` string literals, assigned once; not one imported from another
        module: whether that module is read would make a file checked alone differ from a
        whole-tree run)."""
        memo = self._keys_memo.get((module, name), 0)
        if memo != 0:
            return memo
        mod = self.project.module(module) if module else None
        found = module_strings(mod.top_statements(), name, MAX_KEYS) if mod is not None else None
        self._keys_memo[(module, name)] = found
        return found

    def _module_pool(self, frame: Frame, node: cst.Name) -> MapVal | None:
        """A module-level mutable container of the frame's module (``_pool: dict = {}``) read in a
        function: a pool the whole process shares, whose elements were put there by other calls
        (another runner's buffer, an earlier step's): each element is a persistent location whose
        rows hold what they held before this step (SGLang's ``share_input_buffer`` hands out the
        first runner's buffer to every runner that asks for the same name)."""
        kind = self.graph.pool_kind(frame.module, node.value) if frame.module else None
        if kind is None:
            return None
        line = frame.seg.line(node, frame.stmt)
        elem = Refs(frozenset({Ref(f"pool:{frame.module}.{node.value}", None, node, line, True, path=frame.path)}))
        return MapVal(elem, keyed=kind == "dict")

    def _pool_elem(self, pool: AVal, elem: AVal, key_node, frame: Frame, state: State) -> AVal:
        """The element of a module-level pool (:meth:`_module_pool`) under a key the analysis
        knows (a string, a dataclass field's name): a location of its own, so that a reset of one
        shared buffer is not a reset of every other; ``elem`` (the pool's any element) else."""
        if not (isinstance(pool, MapVal) and isinstance(elem, Refs) and len(elem.refs) == 1):
            return elem
        r = next(iter(elem.refs))
        if not r.loc.startswith("pool:") or "[" in r.loc:
            return elem
        kv = self._key_of(key_node, frame, state)
        if kv is None or len(kv.keys) != 1:
            return elem
        return Refs(frozenset({replace(r, loc=f"{r.loc}[{next(iter(kv.keys))!r}]")}), elem.maybe_none)

    def _from_import(self, frame: Frame, local: str) -> tuple[str, str | None] | None:
        """``(module, name)`` that the local name ``local`` of the frame's module was imported as."""
        mod = self.project.module(frame.module) if frame.module else None
        return mod.imports.get(local) if mod is not None else None

    def _replace_object(self, old: Refs, node: cst.Call, frame: Frame, state: State,
                        checked: DictVal | None = None) -> AVal:
        """``dataclasses.replace(obj, f=v)``: a new object of the same class whose fields are the
        old object's (where known) with the keywords' values instead (``checked``: those values,
        already evaluated at a sink check)."""
        line = frame.seg.line(node, frame.stmt)
        types = frozenset(t for r in old.refs for t in r.types)
        obj = Refs(frozenset({Ref(self._new_loc(line, node, frame), None, node, line, False, types=types,
                                  path=frame.path)}))
        # the copied object's fields as they are before the keyword arguments run (a walrus or a
        # call among them may rebind what the first argument names)
        src = node.args[0].value
        before = State(dict(state.env), state.heap) if dotted(src) is not None else None
        given = dict(checked.items) if checked is not None else \
            {a.keyword.value: self._eval(a.value, frame, state) for a in node.args[1:] if a.keyword}
        names = set(given)
        for t in types:
            c = self.project.class_info(t)
            names.update(c.fields if c is not None else ())
        for name in names:
            v = given.get(name)
            if v is None:
                v = self._fields_of(old, name, state)
                if v is None:  # not known on the old object: the same location it had there
                    # (read through the old object as the call names it, so that a count of an int
                    # field is named `input_batch.num_reqs`, not after a placeholder)
                    if before is not None:
                        v = self._eval_quiet(cst.Attribute(value=src, attr=cst.Name(name)), before)
                    else:
                        v = self._eval_quiet(cst.Attribute(value=cst.Name("replaced"), attr=cst.Name(name)),
                                             State({"replaced": old}, state.heap))
            self._store_field(obj, name, self._cv(v), state)
        return obj

    def _construct(self, cls: ClassInfo, node: cst.Call, frame: Frame, state: State) -> AVal:
        """``Cls(...)`` of a project dataclass (or NamedTuple): a new object whose fields
        hold the arguments (keywords by name, positionals in field order)."""
        line = frame.seg.line(node, frame.stmt)
        loc = self._new_loc(line, node, frame)
        obj = Refs(frozenset({Ref(loc, None, node, line, False, types=frozenset({cls.key}), path=frame.path)}))
        fields = list(cls.fields)
        pos = 0
        given: dict[str, tuple[str, AVal]] = {}
        for a in node.args:
            v = self._eval(a.value, frame, state)
            if a.star:
                continue
            if a.keyword is not None:
                name = a.keyword.value
            elif pos < len(fields):
                name = fields[pos]
                pos += 1
            else:
                continue
            if isinstance(v, (UnknownVal, CountVal)):
                c = self._count_rhs(a.value, name, state)
                if c is not None:
                    v = c
            given[name] = (self._text(a.value), v)
            self._store_field(obj, name, self._cv(v), state)
        # a padded field given the very expression its real partner is given
        # (`InputBatch(num_tokens=n, num_tokens_after_padding=n)`: a step that does not pad) holds
        # that real count, not a padded count of its own
        for pair in self.p.counts:
            for pad in pair.padded:
                if pad not in given:
                    continue
                same = [r for r in pair.real if r in given and given[r][0] == given[pad][0]
                        and isinstance(given[r][1], CountVal)]
                if same:
                    self._store_field(obj, pad, given[same[0]][1], state)
        return obj

    def _int_field(self, types: frozenset, attr: str) -> bool:
        key = (types, attr, "int")
        out = self._attr_type_cache.get(key)
        if out is None:
            out = self._attr_type_cache[key] = any(
                (c := self.project.class_info(t)) is not None and self.project.is_int_field(c, attr) for t in types)
        return out

    def _attr_types(self, types: frozenset, attr: str, *, elems: bool = False) -> frozenset:
        """Class keys an attribute of an object of ``types`` may hold (``elems``: the elements
        of the container it holds), memoised."""
        if not types:
            return frozenset()
        key = (types, attr, elems)
        out = self._attr_type_cache.get(key)
        if out is None:
            found: set[str] = set()
            for t in types:
                c = self.project.class_info(t)
                if c is not None:
                    classes = self.project.attr_elem_classes(c, attr) if elems else self.project.attr_classes(c, attr)
                    found.update(x.key for x in classes)
            out = self._attr_type_cache[key] = frozenset(found)
        return out

    def _getitem_types(self, types: frozenset) -> tuple[frozenset, str]:
        """What indexing an object of ``types`` gives: the classes its ``__getitem__`` returns
        (return annotation, or the constructions it returns; empty when a class has none), and
        the attribute whose element it returns when every class's ``__getitem__`` is ``return
        self.<attr>[...]`` ("" otherwise: the element is a location of its own), memoised."""
        out = self._getitem_cache.get(types)
        if out is None:
            found: set[str] = set()
            attrs: set[str] = set()
            for t in types:
                c = self.project.class_info(t)
                fn = self.project.find_method(c, "__getitem__") if c is not None else None
                if fn is None:
                    found.clear()
                    break
                found.update(x.key for x in self.project.returned_classes(fn))
                body = [st for st in fn.peek().body  # (nothing kept by id)
                        if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
                ret = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
                if isinstance(ret, ast.Subscript) and isinstance(ret.value, ast.Attribute) \
                        and isinstance(ret.value.value, ast.Name) and ret.value.value.id == "self":
                    attrs.add(ret.value.attr)
                else:
                    attrs.add("")
            attr = attrs.pop() if len(attrs) == 1 and found else ""
            out = self._getitem_cache[types] = (frozenset(found), attr)
        return out

    @staticmethod
    def _new_loc(line: int, node, frame: Frame) -> str:
        """The location of a tensor or object made at ``node``: one per allocation site and
        call path (not per evaluation), so that a loop body evaluated again names the same
        storage and the loop's state becomes stable."""
        return f"new:{line}:{id(node)}:{hash(frame.chain) & 0xFFFFFFFF:x}"

    def _eval(self, node, frame: Frame, state: State) -> AVal:
        if node is None:
            return UNKNOWN
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return BoolVal(node.value == "True")
            v = state.env.get(node.value)
            if isinstance(v, BoolVal) and node.value in self._rebound_elsewhere(frame):
                return UNKNOWN
            if isinstance(v, FuncVal) and node.value in frame.nested and v.key.startswith(frame.qual + ".<"):
                # a nested function taken as a value where it is defined: it carries its
                # definition and the enclosing locals it names, to run where it is called
                func = frame.nested[node.value]
                free = self._names_used(func)
                return ClosureVal(v.key, node=func,
                                  ctx=(frame.seg, frame.owner, frame.module, frame.path, frame.cls, frame.qual,
                                       dict(frame.nested)),
                                  # (a literal the enclosing function holds may be rebound before the call)
                                  env=tuple(sorted([*((k, no_literal(x)) for k, x in state.env.items() if k in free),
                                                    *frame.defaults.get(node.value, ())],
                                                   key=lambda kv: kv[0])))
            if v is not None:
                return v
            if node.value in frame.nested:
                return FuncVal(node.value)
            keys = self._module_keys(frame.module, node.value) if node.value.lstrip("_").isupper() else None
            if keys is not None:  # `_STATIC_FIELDS = ("seq_lens", ...)` at module level
                return TupleVal(tuple(KeyVal(frozenset({k})) for k in keys))
            pool = self._module_pool(frame, node)
            if pool is not None:
                return pool
            return UNKNOWN
        if isinstance(node, cst.Attribute):
            method = self._method_value(node, frame, state)
            if method is not None:
                return method
            slot = self._slot_buffer(node, frame, state)
            if slot is not None:
                return slot
            base = self._eval(node.value, frame, state)
            if isinstance(base, FieldRef):
                return KeyVal(frozenset({base.name})) if node.attr.value == "name" else UNKNOWN
            if isinstance(base, Refs) and (got := self._property_read(base, node, frame, state)) is not None:
                return got
            return self._attr_value(base, node, frame, state, None)
        if isinstance(node, cst.Subscript):
            return self._eval_subscript(node, frame, state)
        if isinstance(node, cst.Call):
            return self._eval_call(node, frame, state)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self._eval(node.expression, frame, state)
            if isinstance(inner, BoolVal):
                return BoolVal(not inner.value)
        if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation)):
            parts = self._operands(node)
            vals = [self._eval(p, frame, state) for p in parts]
            if isinstance(node, cst.Comparison):
                mask = self._range_mask(node, frame, state)
                if mask is not None:
                    return mask
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr)):
                masked = self._masked(vals, isinstance(node.operator, cst.BitAnd), state)
                if masked is not None:
                    return masked
            return self._derive(vals, node, frame, state, "elementwise")
        if isinstance(node, cst.BooleanOperation):
            left = self._eval(node.left, frame, state)
            if isinstance(left, BoolVal) and left.value == isinstance(node.operator, cst.Or):
                return left  # `True or x`, `False and x`: `x` is not evaluated
            right = self._eval(node.right, frame, state)
            if isinstance(left, BoolVal):
                return right  # `True and x`, `False or x`
            if isinstance(left, CountVal) and left.canon is None and isinstance(node.operator, cst.Or):
                return right
            if isinstance(left, CountVal):
                return left
            return join_vals(left, right)
        if isinstance(node, cst.IfExp):
            self._eval(node.test, frame, state)
            known = self._literal_test(node.test, frame, state)
            if known is not None:  # `x if dummy_run else y` with `dummy_run` passed a literal
                return self._eval(node.body if known else node.orelse, frame, state)
            t, e = self._cond_keys(node.test, frame, state)
            saved = self._active
            try:
                self._active = saved | t
                a = self._eval(node.body, frame, state)
                if t:
                    a = stamp(a, state, self._active)
                self._active = saved | e
                b = self._eval(node.orelse, frame, state)
                if e:
                    b = stamp(b, state, self._active)
            finally:
                self._active = saved
            return join_vals(a, b)
        if isinstance(node, cst.Tuple):
            vals = tuple(self._elem(e.value, frame, state) for e in node.elements)
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return UNKNOWN  # `(*a, x)`: which position holds what is not known
            return TupleVal(vals)
        if isinstance(node, cst.List):
            vals = tuple(self._elem(e.value, frame, state) for e in node.elements)
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return UNKNOWN
            return TupleVal(vals, mutable=True)
        if isinstance(node, cst.Set):
            for e in node.elements:
                self._eval(e.value, frame, state)
            return UNKNOWN
        if isinstance(node, cst.Dict):
            d: DictVal | None = DictVal()
            for e in node.elements:
                if isinstance(e, cst.DictElement):
                    self._eval(e.key, frame, state)
                    v = self._eval(e.value, frame, state)
                    key = e.key.evaluated_value if isinstance(e.key, cst.SimpleString) else None
                    d = d.set(key, v) if d is not None and isinstance(key, str) else None
                else:  # `**other`
                    v = self._eval(e.value, frame, state)
                    if d is not None and isinstance(v, DictVal):
                        for k, x in v.items:
                            d = d.set(k, x)
                    else:
                        d = None
            return d if d is not None else UNKNOWN
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.Lambda)):
            # bodies may hold sinks: evaluate them once on a copy, loop/lambda variables unknown
            if isinstance(node, cst.Lambda):
                # a function value, run where it is called with what it is given there (`return
                # lambda cg_mode: forward_fn(num_reqs, attn_metadata, cg_mode)`); one handed on,
                # returned or stored is also run here, once, its parameters unknown (the code it
                # goes to may not be followed); one a local name is given and the function calls by
                # that name (`view = lambda n: buf[:n]; ...; view(k)`) runs only where it is called
                # (here what its parameters hold, and the resets before the call, are not known)
                params = (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params)
                if not self._named_lambda(node, frame):
                    inner = state.copy()
                    for p in params:
                        inner.env[p.name.value] = UNKNOWN
                    self._eval(node.body, frame, inner)
                return self._lambda_closure(node, frame, state)
            else:
                inner = state.copy()
                comp = node.for_in
                while comp is not None:
                    it = self._eval(comp.iter, frame, inner)
                    # `block_table[:n] for block_table in self.input_block_tables`: each element
                    e = join_all(it.items) if isinstance(it, TupleVal) else self._container_elem(it) \
                        if isinstance(it, MapVal) or self._sliced(comp.target, node) else None
                    if isinstance(e, Refs):
                        self._name_container(e, comp.target, comp.iter, frame)
                    self._bind(comp.target, e if e is not None else UNKNOWN, frame, inner)
                    for cond in comp.ifs:
                        self._eval(cond.test, frame, inner)
                    comp = comp.inner_for_in
                if isinstance(node, cst.DictComp):
                    self._eval(node.key, frame, inner)
                    elt = self._eval(node.value, frame, inner)
                else:
                    elt = self._eval(node.elt, frame, inner)
                # `{gid: _get_slot_mapping(gid) for gid in ...}`: a container of such elements, each
                # with the resets its making did on its own rows (the other effects stay on the copy)
                elt = stamp(elt, inner)
                if isinstance(elt, (Refs, MapVal, TupleVal)):
                    return MapVal(elt, keyed=isinstance(node, cst.DictComp))
            return UNKNOWN
        if isinstance(node, cst.NamedExpr):
            v = self._eval(node.value, frame, state)
            self._bind(node.target, v, frame, state)
            return v
        if isinstance(node, (cst.Await,)):
            return self._eval(node.expression, frame, state)
        if isinstance(node, cst.StarredElement):
            return self._eval(node.value, frame, state)
        return UNKNOWN

    @staticmethod
    def _elements(v: AVal) -> AVal | None:
        """What iterating ``v`` or indexing it with an unknown key gives: a container's
        element, any value of a dict whose keys are known; None for other values."""
        if isinstance(v, MapVal):
            return v.item
        if isinstance(v, DictVal) and v.items:
            return join_all(x for _, x in v.items)
        return None

    def _sliced(self, target, body) -> bool:
        """Whether the loop variable ``target`` (a name) is sliced in ``body`` (``bt[:n]``): the
        iterable holds tensors (a persistent list of buffers), not objects.  Memoised per node
        (functions are parsed once, so their nodes live as long as the interpreter)."""
        if not isinstance(target, cst.Name) or not isinstance(body, cst.CSTNode):
            return False
        got = self._sliced_memo.get(id(body))
        if got is not None and got[0] is body:
            return got[1]
        name = target.value
        found = False

        class _V(cst.CSTVisitor):
            def visit_Subscript(self, node: cst.Subscript) -> bool:
                nonlocal found
                if isinstance(node.value, cst.Name) and node.value.value == name:
                    found = True
                return not found

        body.visit(_V())
        self._sliced_memo[id(body)] = (body, found)
        return found

    @staticmethod
    def _container_elem(it: AVal) -> AVal | None:
        """What a loop over ``it`` binds on each round when that is one abstract element: a
        container the code made (``{gid: f(gid) ...}.values()``), or a persistent list of buffers
        (``self.input_block_tables``: the element ``self.input_block_tables[*]``, as an index
        gives).  None for anything else (a dict's keys, unknown values)."""
        if isinstance(it, MapVal):
            return None if it.keyed else it.item
        if isinstance(it, Refs) and it.refs and all(r.persistent and r.count is None and not r.types
                                                    for r in it.refs):
            return Refs(frozenset(Interpreter._element(r, "*", r.text, r.line, r.path, True) for r in it.refs))
        return None

    @staticmethod
    def _element(r: Ref, key: str, text, line: int, path: str, persistent: bool) -> Ref:
        """The element ``r.loc[key]`` of a container ``r`` (``key`` "*": any element; a quoted
        name: that entry of a dict of buffers), an object of its element classes."""
        return Ref(f"{r.loc}[{key}]", None, text, line, persistent, path=path,
                   types=r.elem_types, elem_types=r.elem_types)

    @staticmethod
    def _operands(node) -> list:
        if isinstance(node, cst.BinaryOperation):
            return [node.left, node.right]
        if isinstance(node, cst.Comparison):
            return [node.left] + [c.comparator for c in node.comparisons]
        return [node.expression]

    def _eval_subscript(self, node: cst.Subscript, frame: Frame, state: State) -> AVal:
        base = self._eval(node.value, frame, state)
        if not isinstance(base, Refs):
            for el in node.slice:
                if isinstance(el.slice, cst.Index):
                    self._eval(el.slice.value, frame, state)
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                idx = node.slice[0].slice.value
                if isinstance(base, DictVal) and isinstance(idx, (cst.SimpleString, cst.Name)):
                    kv = self._key_of(idx, frame, state)
                    if kv is not None:
                        return join_all([base.get(k) or UNKNOWN for k in sorted(kv.keys)]) or UNKNOWN
                elem = self._elements(base)  # `slot_mappings[gid]`
                if elem is not None:
                    return self._pool_elem(base, elem, idx, frame, state)
                if isinstance(base, TupleVal) and base.items and not base.mutable:
                    # `parts[0]` of a tuple (`parts = (buf[:P], P)`, or one a call returned): that
                    # element; a non-literal index: any of them.  (A list may have changed since
                    # its literal: `append`, item stores; its elements are not known.)
                    k = _int_literal(idx)
                    if k is not None:
                        return base.items[k] if -len(base.items) <= k < len(base.items) else UNKNOWN
                    return join_all(base.items) or UNKNOWN
            return UNKNOWN
        found = self._slice_dim(node)
        sl = found[:2] if found is not None else None
        line = frame.seg.line(node, frame.stmt)
        text = node  # rendered lazily (code generation is costly in libcst)
        out = set()
        if sl is None:
            # `block_table[gid]`: an element of a persistent container is persistent too
            idx = node.slice[0].slice
            kv = self._key_of(idx.value, frame, state) if isinstance(idx, cst.Index) and len(node.slice) == 1 \
                else None
            # `s["seq_lens"]` of a persistent dict of buffers: the buffer under that key, a location
            # of its own (a reset of one entry does not reset another); any other index: any element
            # (of a typed container, `self.attn_groups[g][a]`, an object of its element class)
            keys = [repr(k) for k in sorted(kv.keys)] if kv is not None \
                else ["*"] if isinstance(idx, cst.Index) else []
            for r in base.refs:
                if r.count is not None and r.count.dim == 1 and keys and r.dummy:
                    # `slot_mappings[gid]` of a dummy run's view bounded in its columns (`buf[:, :n]`,
                    # one row per KV-cache group): the row is a view of the same columns of the same
                    # buffer.  (Only a view a dummy run took in its own class, judged where it was
                    # taken: other views' rows are judged by the heap at the sink, which a join of
                    # two objects' paths, `p or q`, leaves stale where each path wrote its own
                    # buffer whole.)
                    out.add(replace(r, text=text, line=line, path=frame.path))
                    continue
                if r.count is None:
                    item, via = self._getitem_types(r.types) if r.types and not r.elem_types \
                        else (frozenset(), "")
                    if item:  # an object whose class indexes to another (`def __getitem__(...) -> X`):
                        # the element of the container it returns from (`return self.tables[i]`),
                        # which its other methods' loops over `self.tables` write, or its own
                        base_loc = self._attr_loc(r.loc, via) if via else r.loc
                        if keys:
                            out.add(Ref(f"{base_loc}[*]", None, text, line, r.persistent, path=frame.path,
                                        types=item))
                        continue
                    out.update(self._element(r, k, text, line, frame.path, r.persistent) for k in keys)
            return Refs(frozenset(out)) if out else UNKNOWN
        return self._rows_view(base, sl[0], sl[1], found[2], text, line, frame, state)

    def _rows_view(self, base: Refs, lower, upper, dim: int, text, line: int, frame: Frame,
                   state: State) -> AVal:
        """The view ``base[lower:upper]`` along dimension ``dim`` (``lower``/``upper``: bound
        expressions or None), taken at ``line`` by the code ``text``."""
        found = (lower, upper, dim)
        out = set()
        if lower is not None and not self._is_zero(lower):
            # rows [lo:...] do not start at row 0: not a padded slice; but writes through it
            # (`tail = buf[n:p]; tail.zero_()`) reset those rows
            low = self._count(lower, state)
            up = self._count(upper, state) if upper is not None else None
            if low is not None and low.canon and (upper is None or up is not None):
                return TailVal(base, low, up, found[2])
            return UNKNOWN
        if upper is None:
            return base
        count = self._count(upper, state)
        if count is not None and isinstance(upper, cst.Attribute) and count.canon:
            self._know_partners(count.canon, frame)
        if count is not None:
            count = replace(count, dim=found[2], unpadded=self._no_padding(count.canon, state, frame))
        new_padded = count is not None and bool(count.canon) and self.p.is_padded_name(count.canon)
        for r in base.refs:
            old = r.count
            if old is not None and old.canon and old.dim != dim:
                # a view of a view bounded in another dimension (`buf[:P].narrow(1, 0, k)`,
                # `buf[:P][:, :k]`): the first bound still says which rows it has
                out.add(r)
                continue
            if old is not None and old.canon and old.dim == (count.dim if count is not None else 0) and (
                    not self.p.is_padded_name(old.canon) or new_padded):
                # a view of a view never has more rows than the first: `buf[:R][:P]` has only real
                # rows, and `buf[:P][:Q]` (Q padded too, say a count joined from two objects'
                # fields) keeps the padding rows of the first slice, whose resets name its counts
                out.add(r)
                continue
            # a dummy run's view of a buffer this run already wrote whole before taking it is
            # not one "no write of the run reached" (judged here, on the path that took it: where
            # paths join, `p or q` dispatching to two objects, the heap alone no longer says so)
            fresh = r.persistent and (frame.dummy or frame.dummy_any) and not state.loc(r.loc).entry_stale
            out.add(Ref(r.loc, count if count is not None else Count("", 0, ""),
                        text, line, r.persistent, path=frame.path, dummy="" if fresh else frame.dummy,
                        dummy_any="" if fresh else frame.dummy_any))
        return Refs(frozenset(out))

    def _taints(self, value: AVal | None, state: State, accepts=None, init_accepts=None,
                first_run: str = "judge") -> set[Taint]:
        """Taints reaching a read of ``value`` now.

        ``accepts(value_text)`` says whether a reset's written value is the
        neutral value of the sink field (None: any reset counts).
        ``init_accepts(value_text)``: the same test for the allocation value of a buffer
        nothing writes (None: only an uninitialised allocation is a taint, PAD005).
        ``first_run``: what becomes of a dummy run's first-run taints (:meth:`_first_run_taint`):
        "judge" them by ``init_accepts`` (at a sink), "keep" them for a later sink to judge (a
        copy of the rows: their values go along), "drop" them (a value computed from the rows).
        """
        while isinstance(value, MapVal):  # a container reaching a sink: each of its elements does
            value = value.item
        if not isinstance(value, Refs):
            return set()
        out: set[Taint] = set()
        for r in value.refs:
            st = state.loc(r.loc) if r.persistent else state.heap.get(r.loc, LocState(False))
            clean = st.clean | r.clean_at if r.clean_at else st.clean
            own = st.taints
            if own and self._partial_locs and (self._branch_tests or r.extents_at):
                # rows one branch left unwritten (only once some were), read under the test that
                # wrote them (as the code spells it, in the same function), or of a view taken on
                # (or stamped with) a path that wrote them: written on this path
                own = frozenset(t for t in own if not t.partial or not (
                    t.partial_test and t.partial_test in self._branch_tests
                    or (t.padded, 0) in r.extents_at))
            cands: set[Taint] = set(own)
            c = r.count
            if c is not None:
                inferred = ()
                dummy = self._dummy_taint(r, st)
                if dummy is not None:
                    first = self._first_run_taint(r, dummy)
                    if first is not None:
                        cands.add(first)
                    if self._initial_value(r.loc) is None:
                        cands.add(dummy)
                    else:  # written nowhere: its rows hold the allocation value, no earlier step's
                        dummy = None
                if not c.canon or c.unpadded or not self.p.is_padded_name(c.canon):
                    inferred = self._inferred_real(c, st, r.extents_at) if st.entry_stale and r.persistent else ()
                    if not inferred:
                        if dummy is not None:
                            out.update(t for t in cands if not covers(clean, t, self._real_for, accepts,
                                                                        self._active))
                        else:  # rows [0:k] one branch left unwritten are real rows too
                            out.update(t for t in own if t.partial and not covers(
                                clean, t, self._real_for, accepts, self._active))
                        continue  # sliced to a real (or unknown) count: no padding rows
                    rtext = self._t(r.text)
                    written = " / ".join(f"[:{k}]" for k in inferred)
                    cands.add(Taint(
                        buffer=rtext, padded=c.canon, offset=c.offset, reason="stale", dim=c.dim,
                        padded_written=c.written, real=inferred,
                        element_of=self._element_of(r, rtext),
                        steps=((r.line, f"slice `{rtext}` of {self._buffer_phrase(r, rtext)}: "
                                        f"this step wrote only rows {written}, so rows up to "
                                        f"{c.written or c.canon} may be stale", r.path),)))
                    out.update(t for t in cands if not covers(clean, t, self._real_for, accepts, self._active))
                    continue
                init = self._initial_value(r.loc) if st.entry_stale and r.persistent else None
                if init is not None:
                    # never written anywhere after allocation: every row holds the allocation value,
                    # nothing is stale; only a value the sink does not accept is a finding (PAD005)
                    if init.value == EMPTY or (init.value != UNKNOWN_VALUE and init_accepts is not None
                                               and not init_accepts(init.value)):
                        rtext = self._t(r.text)
                        cands.add(Taint(
                            buffer=rtext, padded=c.canon, offset=c.offset, reason="init", dim=c.dim,
                            padded_written=c.written,
                            steps=((init.site.line, f"`{self._base_text(rtext)}` is allocated "
                                    + ("uninitialised" if init.value == EMPTY else f"with {init.value} in every row")
                                    + " and nothing in the project writes it after", init.site.path),
                                   (r.line, f"padded slice `{rtext}`: its padding rows hold that initial value",
                                    r.path))))
                elif st.entry_stale and r.persistent and r.width:
                    whole = self._t(r.text)
                    cands.add(Taint(
                        buffer=f"{whole}[:{c.written}]", padded=c.canon, offset=c.offset, reason="stale",
                        dim=c.dim, padded_written=c.written, width=r.width,
                        steps=((r.line, f"persistent buffer `{whole}` handed whole to a sink whose "
                                        f"`{r.width}` says its consumer reads rows up to {c.written}: "
                                        f"those padding rows may be stale", r.path),)))
                elif st.entry_stale and r.persistent:
                    rtext = self._t(r.text)
                    stale = Taint(
                        buffer=rtext, padded=c.canon, offset=c.offset, reason="stale", dim=c.dim,
                        padded_written=c.written, element_of=self._element_of(r, rtext),
                        steps=((r.line, f"padded slice `{rtext}` of {self._buffer_phrase(r, rtext)}: "
                                        f"its padding rows (up to "
                                        f"{c.written or c.canon}) may be stale", r.path),))
                    cands.add(stale)
                    first = self._first_run_taint(r, stale) if r.dummy else None
                    if first is not None:
                        cands.add(first)
            out.update(t for t in cands if not covers(clean, t, self._real_for, accepts, self._active))
        if first_run != "keep":
            out = {t for t in out if not (t.reason == "init" and t.dummy) or (
                first_run == "judge" and (t.init_value == EMPTY or init_accepts is not None
                                          and not init_accepts(t.init_value)))}
        return out

    def _dummy_taint(self, r: Ref, st: LocState, dummy: str | None = None) -> Taint | None:
        """Rows ``[0:n]`` of a view ``buf[:n]`` taken in a dummy run (:attr:`Ref.dummy`) of a
        persistent buffer that no write of this step reached (no write extent, no write of every
        row): the dummy requests' rows hold what an earlier step left there.  ``dummy``: the dummy
        run to judge the view in instead (:attr:`Ref.dummy_any`, :meth:`_note_dummy_reads`)."""
        c = r.count
        dummy = r.dummy if dummy is None else dummy
        if not dummy or not r.persistent or not st.entry_stale or c is None or not c.canon \
                or st.extents or r.extents_at or r.loc.startswith(("arg:", "@arg:")):
            return None  # a parameter object's buffer: its writes are the caller's, not seen here
        rtext = self._t(r.text)
        t = Taint(
            buffer=rtext, padded=c.canon, offset=c.offset, reason="stale", dim=c.dim,
            padded_written=c.written, real=(DUMMY_ROWS,), dummy=dummy, element_of=self._element_of(r, rtext),
            steps=((r.line, f"slice `{rtext}` of {self._buffer_phrase(r, rtext)} in the dummy "
                            f"run `{dummy}`: no write of this run reached its rows, which hold what an "
                            f"earlier step left there", r.path),))
        return t

    def _note_dummy_reads(self, value: AVal, state: State, fld: str, frame: Frame) -> None:
        """Record the buffers whose rows ``[0:n]`` a dummy run hands to the index field ``fld``
        unwritten (:attr:`dummy_reads`), by the class that holds each and its attribute: views
        taken in any function the run calls (:attr:`Ref.dummy_any`), judged as :meth:`_dummy_taint`
        judges the run's own."""
        while isinstance(value, MapVal):
            value = value.item
        if not isinstance(value, Refs):
            return
        for r in value.refs:
            if not r.dummy_any or not r.persistent:
                continue
            st = state.loc(r.loc)
            t = self._dummy_taint(r, st, r.dummy_any)
            clean = st.clean | r.clean_at if r.clean_at else st.clean
            if t is None or covers(clean, t, self._real_for, None, self._active):
                continue
            owners = self._loc_owners.get(r.loc) or set()
            holders = self._loc_holders.get(r.loc.rsplit("#", 1)[0] if r.loc.endswith(("#host", "#dev")) else r.loc)
            via = self._loc_path_classes(r.loc)
            for holder, attr in sorted({(h, a) for h in holders or () for a in owners}, key=str):
                if holder is not None and attr is not None:
                    known = self.dummy_reads.setdefault((holder, attr), [])
                    if len(known) < 8 and all(k.via != via for k in known):
                        known.append(DummyRead(
                            dummy=t.dummy, field=fld, slice=t.buffer, path=t.steps[0][2] or frame.path,
                            line=t.steps[0][0], padded=t.padded or t.padded_written, via=via))

    def _loc_path_classes(self, loc: str) -> frozenset[str]:
        """Classes of the objects an attribute location is read through: the holders of each of
        its prefixes (``a.b[*].c``: those of ``a.b`` and of ``a.b[*].c``)."""
        base = loc.rsplit("#", 1)[0] if loc.endswith(("#host", "#dev")) else loc
        out: set[str] = set()
        for i, ch in enumerate(base + "."):
            if ch in ".[" and i:
                out.update(h for h in self._loc_holders.get(base[:i], ()) if h is not None)
        return frozenset(out)

    def _first_run_taint(self, r: Ref, stale: Taint) -> Taint | None:
        """The rows of ``stale`` (a view a dummy run took) at the first dummy run: a profile run,
        a capture, a warm-up run before any step, so rows no write reached hold the value the
        buffer was constructed with (:meth:`BufferIndex.construction_value`), not an earlier
        step's.  A taint of reason ``init`` (PAD005) carrying that value, judged where it reaches
        a sink (:meth:`_taints`); None when the value is not known."""
        init = self.construction_value(r.loc)
        if init is None or init.value == UNKNOWN_VALUE:
            return None
        rtext = self._t(r.text)
        what = "uninitialised" if init.value == EMPTY else f"with {init.value} in every row"
        if r.loc.endswith("#dev"):
            host = self.construction_value(r.loc, view="#host")
            if host is not None and host.value not in (init.value, UNKNOWN_VALUE):
                what += f"; its host view holds {host.value}, not copied to the device"
        return replace(stale, reason="init", dummy=r.dummy, init_value=init.value, steps=(
            (init.site.line, f"`{self._base_text(rtext)}` is constructed {what}", init.site.path),
            (r.line, f"slice `{rtext}` in the dummy run `{r.dummy}`: at its first run (before any step) "
                     f"the rows no write of the run reached hold that value", r.path)))

    def construction_value(self, loc: str, view: str | None = None):
        """What every row of the view at ``loc`` holds once its buffer is constructed
        (:meth:`BufferIndex.construction_value`; the views of a wrapper may differ), or None.
        ``view``: another view of the same buffer ("#host", "#dev") than the one at ``loc``."""
        owners = self._loc_owners.get(loc)
        if not owners or None in owners:
            return None
        own = "#host" if loc.endswith("#host") else "#dev" if loc.endswith("#dev") else ""
        view = own if view is None else view
        holders = self._loc_holders.get(loc.rsplit("#", 1)[0] if own else loc)
        if not holders or None in holders:
            return None  # the object's class is not known: whose construction it was is not either
        memo = (loc, view, frozenset(owners), frozenset(holders))
        if memo in self._construction_memo:
            return self._construction_memo[memo]
        keys: set[str] = set()
        found = None
        for t in sorted(holders):
            ci = self.project.class_info(t)
            if ci is None:
                break
            # its bases' constructors and, `self` being any subclass in a base's method, its
            # subclasses' (each must agree, or the value is not known)
            keys.update(c.key for c in self.project.mro(ci))
            keys.update(self.project.subclass_keys(ci))
        else:
            classes = frozenset(keys)
            for attr in sorted(owners):
                cv = self.buffers.construction_value(attr, classes)
                v = cv.get(view) if cv else None
                if v is None or (found is not None and (v.value, v.expr) != (found.value, found.expr)):
                    found = None
                    break
                found = found or v
        self._construction_memo[memo] = found
        return found

    def _beyond_view(self, value: AVal, state: State, spec) -> set[Taint]:
        """A field whose consumer reads the whole persistent buffer (``[fields.X] reads =
        "buffer"``: a kernel captured in a CUDA graph at a larger size reads the capture-time
        extent at every replay): rows past each view ``buf[:n]`` of a persistent buffer reach it
        too, and must have been reset since the step began (``buf[n:] = 0``)."""
        if not isinstance(value, Refs):
            return set()
        out: set[Taint] = set()
        for r in value.refs:
            if not r.persistent or r.types or r.elem_types:
                continue
            st = state.loc(r.loc)
            if not st.entry_stale:
                continue
            text = self._t(r.text)
            c = r.count
            if c is not None and (not c.canon or c.dim):
                continue
            if c is None:
                # the whole buffer: rows past what this step wrote (its write extents)
                views = [(k, off, k) for k, off in sorted(st.extents | r.extents_at)]
                base = text
            else:
                views = [(c.canon, c.offset, c.written or c.canon)]
                base = text[:text.rfind("[")] if text.endswith("]") else text
            for real, off, shown in views:
                t = Taint(buffer=f"{base}[:]", padded=f"{base}.shape[0]", offset=off, reason="stale",
                          padded_written=f"{base}.shape[0]", real=(real,), beyond=spec.consumer,
                          steps=((r.line, f"`{text}` of persistent buffer `{base}`: the consumer of "
                                          f"`{spec.name}` reads the whole buffer ({spec.consumer}), so its "
                                          f"rows past {shown}{f' + {off}' if off else ''} must hold "
                                          f"{spec.neutral} and may be stale", r.path),))
                clean = st.clean | r.clean_at if r.clean_at else st.clean
                # only a reset to the end of the buffer covers rows a whole-buffer reader reads
                if not any(not x.upto for x in covering(clean, t, self._real_for, self._active)):
                    out.add(t)
        return out

    def _init_accepts(self, fld: str, frame: Frame):
        """Whether an allocation value is the sink field's neutral value (in the sink's module,
        for per-backend values); None when the profile names no neutral value for the field."""
        spec = self.p.field_spec(fld)
        if spec is None:
            return None
        neutral, _backend = spec.neutral_in(frame.module)

        def accepts(text: str) -> bool:
            return same_literal(text, neutral, self.p) is not False
        return accepts

    def _note_owner(self, loc: str, base: Ref, attr: str) -> None:
        """Remember which buffer ``loc`` is: the attribute name it was read as; a view (``.gpu``,
        ``.np``) of a wrapper buffer is the wrapper's buffer (``None``: not known)."""
        owners = self._loc_owners.setdefault(loc, set())
        if attr in self.p.shared_views or attr == self.p.device_view:
            owners.update(self._loc_owners.get(base.loc) or {None})
        else:
            owners.add(attr)
            # the classes of the object the buffer is read from (None: not known)
            self._loc_holders.setdefault(loc, set()).update(base.types or {None})

    def _initial_value(self, loc: str):
        """The allocation value every row of the persistent buffer at ``loc`` holds at every step
        (:meth:`BufferIndex.initial`: allocated with one known value, written nowhere), or None."""
        owners = self._loc_owners.get(loc)
        if not owners or None in owners:
            return None
        found = None
        for attr in owners:
            init = self.buffers.initial(attr)
            if init is None or (found is not None and init.value != found.value):
                return None
            found = found or init
        return found

    @staticmethod
    def _rows(real: str, padded: str, offset: int) -> str:
        if offset:
            return f"[{real} + {offset}:{padded} + {offset}]"
        return f"[{real}:{padded}]"

    def _name_container(self, elem: Refs, target, iterable, frame: Frame) -> None:
        """Remember how the code names the container whose elements a loop or comprehension binds
        to a local (``for x in self.block_tables.input_block_tables``): a slice ``x[:n]`` of one
        names its buffer by that local only.  Only a name or an attribute chain (a view of it,
        ``.np``, shares its location but is named as the code writes it)."""
        text = dotted(iterable)
        if text is None or not isinstance(target, cst.Name):
            return
        for r in elem.refs:
            if r.loc.endswith("[*]"):
                self._elem_text[(r.loc, target.value, frame.path)] = text

    def _element_of(self, r: Ref, text: str) -> str:
        """The persistent container ``r`` is an element of, as the code that sliced it names it
        (``self.block_tables.input_block_tables``), where ``text`` names the element by a local
        (``x[:n]`` in ``[x[:n] for x in self.block_tables.input_block_tables]``); else ""."""
        base = self._base_text(text)
        if not base.isidentifier() or base == "self" or not r.loc.endswith("[*]"):
            return ""
        return self._elem_text.get((r.loc, base, r.path), "")

    def _buffer_phrase(self, r: Ref, text: str) -> str:
        """``persistent buffer `x` ``, or for an element of a persistent container named by a
        local, ``` `x`, an element of `self.tables` ```."""
        container = self._element_of(r, text)
        base = self._base_text(text)
        return f"`{base}`, an element of `{container}`" if container \
            else f"persistent buffer `{base}`"

    @staticmethod
    def _base_text(text: str) -> str:
        i = text.find("[")
        return text[:i] if i > 0 else text

    def _padding_literal(self, v: AVal, state: State) -> str | None:
        """The literal every padding row of ``v`` holds (its covering resets agree), else None.

        A mask reset with ``m[num_reqs:] = False`` has False padding rows; a whole-buffer fill
        gives its value to every row."""
        if isinstance(v, MaskVal):  # `torch.arange(P) < R`: False on the padding rows [R:P]
            return "False" if v.below else "True"
        if not isinstance(v, Refs) or not v.refs:
            return None
        seen: set[str] = set()
        for r in v.refs:
            st = state.loc(r.loc) if r.persistent else state.heap.get(r.loc, LocState(False))
            clean = st.clean | r.clean_at
            c = r.count
            if c is not None and c.canon and self.p.is_padded_name(c.canon) and not c.unpadded:
                probe = Taint(buffer="", padded=c.canon, offset=c.offset, reason="stale",
                              padded_written=c.written)
                resets = covering(clean, probe, self._real_for, self._active)
            else:
                resets = [x for x in clean if x.real == ALL]
                if st.taints or (r.persistent and st.entry_stale):
                    return None
            if not resets:
                return None
            seen.update(x.value for x in resets)
        if len(seen) != 1:
            return None
        value = seen.pop()
        return "False" if value in _FALSE else "True" if value in _TRUE else value

    def _masked(self, vals: list[AVal], conj: bool, state: State) -> AVal | None:
        """``a & m`` (``logical_and``) where ``m``'s padding rows are all False: the result's
        padding rows are False whatever ``a`` holds (``|`` with all-True rows likewise)."""
        want = _FALSE if conj else _TRUE
        if any(self._padding_literal(v, state) in want for v in vals):
            return UNKNOWN  # a derived tensor whose padding rows hold the mask's neutral value
        return None

    def _derive(self, vals: list[AVal], node, frame: Frame, state: State, how: str) -> AVal:
        taints: set[Taint] = set()
        for v in vals:
            # a copy keeps the rows' values (a first-run construction value goes along); a value
            # computed from them does not
            taints |= self._taints(v, state, first_run="keep" if how == "copy" else "drop")
        if not taints:
            return UNKNOWN
        line = frame.seg.line(node, frame.stmt)
        text = self._text(node)
        loc = self._new_loc(line, node, frame)
        note = (f"`{text}` is a copy: it keeps the stale rows of this moment" if how == "copy"
                else f"`{text}` is derived ({how}): stale where its inputs are; later resets of the inputs do not reach it")
        state.heap[loc] = LocState(False, frozenset(with_step(t, line, note, t.derived_from or t.buffer, frame.path)
                                                   for t in taints), frozenset())
        return Refs(frozenset({Ref(loc, None, text, line, False, path=frame.path)}))

    # ------------------------------------------------------------------ calls
    def _eval_call(self, node: cst.Call, frame: Frame, state: State) -> AVal:
        func = node.func
        if isinstance(func, cst.Subscript):
            # a kernel launch `kernel[grid](args)` (Triton): a sink when the profile names the kernel
            kname = dotted(func.value) or ""
            for el in func.slice:
                if isinstance(el.slice, cst.Index):
                    self._eval(el.slice.value, frame, state)
            vals: dict[int, AVal] = {}
            if kname and self._sink_call is not None and self._sink_call.fullmatch(kname):
                self._check_call_args(kname, node, frame, state, skip_first=False)
            else:
                vals = {id(a): self._eval(a.value, frame, state) for a in node.args}
            self._kernel_tail_resets(func.value, node, frame, state, vals)
            self._opaque(vals.values(), state)
            return UNKNOWN
        name = dotted(func) or ""
        last = name.rsplit(".", 1)[-1] if name else (func.attr.value if isinstance(func, cst.Attribute) else "")

        # `getattr(obj, f.name)` / `getattr(obj, "x", None)` with one known key: `obj.x`
        if name == "getattr" and "getattr" not in state.env and 2 <= len(node.args) <= 3 \
                and all(a.keyword is None for a in node.args):
            key = self._key_of(node.args[1].value, frame, state)
            if key is not None and len(key.keys) == 1 and next(iter(key.keys)).isidentifier() \
                    and not keyword.iskeyword(next(iter(key.keys))):
                attr = self._getattr_nodes.get((id(node), *key.keys))
                if attr is None:
                    attr = cst.Attribute(value=node.args[0].value, attr=cst.Name(next(iter(key.keys))))
                    self._getattr_nodes[(id(node), *key.keys)] = attr
                    self._keep.append(node)
                base = self._eval(node.args[0].value, frame, state)
                for a in node.args[2:]:
                    self._eval(a.value, frame, state)
                return self._attr_value(base, attr, frame, state, frame.seg.line(node, frame.stmt))

        # forward sinks (checked before following self.m calls)
        if name and name in self.p.forward_calls:
            for i, arg in enumerate(node.args):
                v = self._eval(arg.value, frame, state)
                if arg.star == "**" and isinstance(v, DictVal):  # `self.model(**model_inputs)`
                    for key, item in v.items:
                        if not self.p.is_forward_exempt(key):
                            self._check_sink(name, key, "keyword", arg.value, item, frame, state,
                                             self.p.forward_severity, node=self._kw_node(arg, key))
                    continue
                if arg.star:
                    continue
                fld = arg.keyword.value if arg.keyword else str(i)
                if self.p.is_forward_exempt(fld):
                    continue
                self._check_sink(name, fld, "keyword" if arg.keyword else "positional", arg.value, v,
                                 frame, state, self.p.forward_severity, node=arg)
            return UNKNOWN

        # a class held in a class-level attribute (`self.metadata_cls(...)` with
        # `metadata_cls = Mamba2AttentionMetadata` in the subclasses): a constructor of those classes
        if isinstance(func, cst.Attribute) and not self._looks_like_class(last):
            classes = self._attr_classes_called(func, frame, state)
            if classes:
                return MetaVal(name, self._check_call_args(name, node, frame, state, skip_first=False),
                               self._common_class(classes))

        # the output of a metadata builder (`return FlashMLAMetadata(...)` in a subclass of a
        # `[sinks] builders` base, whose `build` is annotated `-> FlashMLAMetadata`)
        if name and self._looks_like_class(last) and not self.p.is_sink_constructor(name) \
                and (outs := self._builder_outputs(frame)):
            cls = self._class_named(name, frame)
            if cls is not None and cls.key in outs:
                return MetaVal(name, self._check_call_args(name, node, frame, state, skip_first=False), cls.key)

        # metadata constructors
        if name and self.p.is_sink_constructor(name) and self._looks_like_class(last):
            cls = self._class_named(name, frame)
            return MetaVal(name, self._check_call_args(name, node, frame, state, skip_first=False),
                           cls.key if cls is not None else "")

        # dataclasses.replace(meta, field=...) on a metadata object
        if last == "replace" and node.args:
            first = self._eval(node.args[0].value, frame, state)
            if isinstance(first, MetaVal):
                given = self._check_call_args(first.sink, node, frame, state, skip_first=True)
                fields = first.fields
                for k, v in given.items:
                    fields = fields.set(k, v)
                return MetaVal(first.sink, fields, first.cls)
            if isinstance(first, Refs) and any(r.types for r in first.refs):
                # `replace(m, field=v)` of an object its class makes a metadata object (a parameter
                # typed `m: GDNAttentionMetadata`): the new fields reach that metadata's consumer
                sink = self._sink_class_name(first, frame)
                given = self._check_call_args(sink, node, frame, state, skip_first=True) if sink else None
                return self._replace_object(first, node, frame, state, given)

        # `copy.copy(obj)` (not `deepcopy`: its tensors are new storage) of an object of a known class: a new object of that
        # class whose fields hold what the old one's did (a shallow copy of a passed-in batch
        # that the code pads and hands to a backend: `padded_view = copy.copy(forward_batch)`)
        if name in ("copy.copy", "copy") and len(node.args) == 1 and not node.args[0].keyword \
                and (name != "copy" or self._from_import(frame, "copy") == ("copy", "copy")):
            first = self._eval(node.args[0].value, frame, state)
            if isinstance(first, MetaVal):
                # a metadata object: stores on the copy are sinks, but neither the fields it copied
                # nor those stored on it are followed (`cm = copy(cm_base)` in vLLM's runner: they
                # would reach every attention
                # builder's own slices, whose writes the runner's frame does not see; on vLLM
                # 0.18-0.31 that gave 12-32 findings more per release, untriaged)
                return MetaVal(first.sink, DictVal(), first.cls, opaque=True)
            if isinstance(first, Refs) and first.refs and all(r.types and r.count is None for r in first.refs):
                return self._replace_object(first, node, frame, state, DictVal(()))
            return UNKNOWN

        # setattr(meta, "field", value) on a metadata object
        if name == "setattr" and "setattr" not in state.env and len(node.args) == 3 \
                and all(a.keyword is None and not a.star for a in node.args) \
                and (isinstance(node.args[1].value, cst.SimpleString)
                     or self._key_of(node.args[1].value, frame, state) is not None):
            obj = self._eval(node.args[0].value, frame, state)
            v = self._eval(node.args[2].value, frame, state)
            key = self._key_of(node.args[1].value, frame, state)
            fld = next(iter(key.keys)) if key is not None and len(key.keys) == 1 else None
            if not (isinstance(fld, str) and fld.isidentifier() and not keyword.iskeyword(fld)):
                fld = None
            if isinstance(obj, MetaVal):
                if fld is not None:
                    self._check_sink(obj.sink, fld, "attribute", node.args[2].value, v, frame, state,
                                     "error", node=node.args[2])
            elif isinstance(obj, Refs) and fld is not None and dotted(node.args[0].value) is not None:
                # (an object named by a name or attributes: evaluated again as the store's target)
                # `setattr(self, f.name, share(f.name, getattr(self, f.name)))` with one known key:
                # the store `obj.key = v` (a literal key, or a dataclass field of a loop over them)
                attr = self._getattr_nodes.get((id(node), "=", fld))
                if attr is None:
                    attr = cst.Attribute(value=node.args[0].value, attr=cst.Name(fld))
                    self._getattr_nodes[(id(node), "=", fld)] = attr
                    self._keep.append(node)
                self._assign(attr, node.args[2].value, v, frame, state)
            return UNKNOWN

        # enumerate / list / tuple of a container the code made: its elements (with an index)
        if name in ("enumerate", "list", "tuple", "reversed", "sorted") and len(node.args) == 1:
            v = self._eval(node.args[0].value, frame, state)
            if isinstance(v, MapVal) and not v.keyed:
                return MapVal(TupleVal((UNKNOWN, v.item))) if name == "enumerate" else v
            if name in ("list", "tuple") and self._container_elem(v) is not None:
                return v  # `tuple(self.input_block_tables)`: the same buffers
            return UNKNOWN

        # dict(a=x, ...): a kwargs dict whose keys are known
        if name == "dict" and all(a.keyword is not None or a.star == "**" for a in node.args):
            d: DictVal | None = DictVal()
            for a in node.args:
                v = self._eval(a.value, frame, state)
                if a.keyword is not None and d is not None:
                    d = d.set(a.keyword.value, v)
                elif isinstance(v, DictVal) and d is not None:
                    for k, x in v.items:
                        d = d.set(k, x)
                else:
                    d = None
            return d if d is not None else UNKNOWN
        # kwargs.pop("k", ...), kwargs.update(k=v) on a local dict
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and isinstance(state.env.get(func.value.value), DictVal) and last in ("pop", "update", "get"):
            d = state.env[func.value.value]
            vals = [self._eval(a.value, frame, state) for a in node.args]
            key = node.args[0].value.evaluated_value if node.args and isinstance(node.args[0].value, cst.SimpleString) else None
            if last == "get":
                return d.get(key) or UNKNOWN if isinstance(key, str) else UNKNOWN
            if last == "pop":
                if isinstance(key, str):
                    state.env[func.value.value] = d.drop(key)
                    return d.get(key) or (vals[1] if len(vals) > 1 else UNKNOWN)
                return UNKNOWN
            for a, v in zip(node.args, vals):  # update
                if a.keyword is not None:
                    d = d.set(a.keyword.value, v)
                elif isinstance(v, DictVal):
                    for k, x in v.items:
                        d = d.set(k, x)
            state.env[func.value.value] = d
            return UNKNOWN

        # `self.registry.fill_from(fb, raw_bs=..., ...)`: each registered slot's padding policy
        reg = self.p.registry
        if reg is not None and last in reg.fill_methods and frame.owner and isinstance(func, cst.Attribute):
            if self._apply_registry(node, frame, state):
                return UNKNOWN

        # `self.graphs[bs].replay()`: a CUDA graph replay reads every buffer bound at capture
        if last == "replay" and isinstance(func, cst.Attribute) and not node.args and frame.owner:
            graphs = func.value if isinstance(func.value, cst.Subscript) else self._graph_lookup(func.value, frame)
            if graphs is not None and graphs is not func.value:
                # a lookup's replay is a CUDA graph's only in a class whose captures bind buffers
                # (another class's own `replay()` is followed as a call)
                cls = self.project.class_info(frame.cls or frame.owner)
                if cls is None or not (self.graph.graph_bound(cls) or self.graph.graph_inputs(cls)):
                    graphs = None
            if graphs is not None:
                self._check_replay(node, graphs, frame, state)
                return UNKNOWN
        # a replay call the profile names (`self.backend.replay(shape_key, forward_batch)`): the
        # graph of the current shape reads its bound buffers; the call is followed as any other
        if name and frame.owner and self._graph_replay is not None and self._graph_replay.fullmatch(name):
            self._check_replay(node, None, frame, state)
        # a graph manager's capture (`self.decode_cudagraph_manager.capture(fn, ...)`) runs what it
        # captures on rows that hold no request
        if name and frame.owner and self._graph_capture is not None and self._graph_capture.fullmatch(name):
            self._check_capture(node, frame, state)

        # Cls(...) of a project dataclass: an object whose fields hold the arguments (also
        # `cls(...)` in a classmethod of one: `InputBatch.make_dummy`)
        if name == "cls" and frame.owner and frame.seg is not None and _decorated(frame.seg.func, "classmethod"):
            cls = self.project.class_info(frame.owner)
            if cls is not None and (cls.is_dataclass or any(b.endswith("NamedTuple") for b in cls.bases)):
                return self._construct(cls, node, frame, state)
        if name and self._looks_like_class(last):
            cls = self._class_named(name, frame)
            if cls is not None and (cls.is_dataclass or any(b.endswith("NamedTuple") for b in cls.bases)):
                return self._construct(cls, node, frame, state)

        # reset helpers: clear_padding(buf, n) (a helper the profile names is a reset even when its
        # body, a Triton kernel say, cannot be read; where the body can be read, it is followed
        # too: what it writes besides is the code's to say, not the profile's)
        if last in self._helpers:
            idx = self._helpers[last]
            args = [a for a in node.args if a.keyword is None]
            target = self._resolve_callee(func, frame, state)
            if target is not None and target[0] == "funcs" and len(target[1]) == 1 and target[1][0][1] is None:
                # the body first, for what it writes besides: what the profile says of the argument
                # it names holds after it (a write the body makes that the analysis cannot tell
                # from stale is the helper's reset, by the profile); its result is not followed (a
                # view it returns would carry the states its own path saw, before that reset).
                # The call evaluated every argument: only the reset one is read again, after it
                self._inline(target, node, frame, state)
                vals = {id(args[idx]): self._eval(args[idx].value, frame, state)} if idx < len(args) else {}
            else:
                vals = {id(a): self._eval(a.value, frame, state) for a in node.args}
            if idx < len(args):
                buf = vals[id(args[idx])]
                count = args[idx + 1].value if idx + 1 < len(args) else None
                if isinstance(buf, Refs):
                    for r in buf.refs:
                        if count is not None and self._count(count, state) is not None:
                            self._reset(r, count, None, state, None)
                        else:
                            self._reset(r, None, None, state, None)
            return UNKNOWN

        # configured sink calls (before following the call: `set_forward_context` is a project
        # function whose arguments every layer of the forward pass reads, not a body to follow)
        if name and self._sink_call is not None and self._sink_call.fullmatch(name):
            self._check_call_args(name, node, frame, state, skip_first=False)
            return UNKNOWN

        # `self.capture_one_shape(bs, ...)`: the capture of one shape runs the captured forward
        if frame.owner and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == "self":
            self._check_shape_capture(node, func.attr.value, frame, state)

        # self.m(...) / nested function / module-level function; a call of the profile's buffer
        # method in its shape (`copy_to_gpu(n)`, `copy_to_gpu()`: rows [:n] to the device view)
        # means what the profile says on an object of a project class too (the wrapper's own
        # body, `if n is None:` a whole copy, is not followed); a project's namesake of another
        # shape (`pool.copy_to_gpu(x, out=buf[:n])`) is followed
        target = None if self._profile_copy(node, state) else self._resolve_callee(func, frame, state)
        if target is not None:
            return self._inline(target, node, frame, state)

        # allocators
        if name in self.p.uninitialized_allocators:
            return self._alloc(node, frame, state, uninit=True, like=name.endswith("_like"))
        if name in self.p.initialized_allocators:
            self._mark_written(self._out_args(node, [self._eval(a.value, frame, state) for a in node.args]), state)
            loc = self._new_loc(frame.seg.line(node, frame.stmt), node, frame)
            state.heap[loc] = LocState(False, frozenset(), self._fill_reset(name, node, frame, state))
            return Refs(frozenset({Ref(loc, None, node, frame.seg.line(node, frame.stmt), False,
                                       path=frame.path)}))

        # a view of the same memory under another type: `torch.from_numpy(x)` (`np.asarray`,
        # `torch.as_tensor` copy a list: not taken)
        if name == "torch.from_numpy" and len(node.args) == 1 and node.args[0].keyword is None \
                and not node.args[0].star:
            v = self._eval(node.args[0].value, frame, state)
            if isinstance(v, Refs):
                return v

        # `torch.narrow(x, dim, start, length)` is `x.narrow(dim, start, length)`
        if name == "torch.narrow" and node.args and node.args[0].keyword is None and not node.args[0].star \
                and "torch" not in state.env:
            v = self._eval(node.args[0].value, frame, state)
            for a in node.args[1:]:
                self._eval(a.value, frame, state)
            return self._narrowed(v, node.args[1:], node, frame, state) if isinstance(v, Refs) else UNKNOWN

        # function forms of in-place fills: `torch.zero_(x)`, `torch.fill_(x, v)`,
        # `torch.nn.init.zeros_(x)` / `constant_(x, v)` are `x.zero_()` / `x.fill_(v)`
        method_form = self._fill_function(name, node)
        if method_form is not None and (name.split(".")[0] not in state.env):
            call = self._fill_calls.get(id(node))
            if call is None:
                call = cst.Call(func=cst.Attribute(value=node.args[0].value, attr=cst.Name(method_form)),
                                args=list(node.args[1:2]))
                self._fill_calls[id(node)] = call
                self._keep.append(node)
            frame.seg.same_lines(call, frame.stmt)
            return self._eval_call(call, frame, state)

        # module-level elementwise functions: torch.where(...), np.maximum(...)
        if isinstance(func, cst.Attribute) and name and name.split(".")[0] in ELEMENTWISE_MODULES \
                and last in ELEMENTWISE_FUNCS:
            vals = [self._eval(a.value, frame, state) for a in node.args]
            outs = self._out_args(node, vals)
            if outs:  # `torch.add(a, b, out=buf[:n])`, `np.add(..., out=buf.np[:n])`: writes rows there
                self._opaque(self._noted(outs), state)
                self._drop_partial(outs, state)
            if last == "where" and len(vals) == 3:
                # torch.where(m, x, y): where m's padding rows are all False they hold y
                # (a literal: the same value in every padding row), where all True they hold x
                mv = self._padding_literal(vals[0], state)
                if mv in _FALSE or mv in _TRUE:
                    chosen, chosen_node = (vals[2], node.args[2].value) if mv in _FALSE else (vals[1], node.args[1].value)
                    if self._literal(chosen_node):
                        return UNKNOWN
                    return self._derive([chosen], node, frame, state, f"`{name}`")
            if last in ("logical_and", "logical_or") and len(vals) == 2:
                masked = self._masked(vals, last == "logical_and", state)
                if masked is not None:
                    return masked
            return self._derive(vals, node, frame, state, f"`{name}`")

        # resets: `buf[R:P].fill_(v)`, `buf.np[R + 1:].fill(v)`
        fill = self._fill_method(node)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Subscript) and (
                fill is not None or func.attr.value == "copy_"):
            arg_vals = [self._eval(a.value, frame, state) for a in node.args]
            if func.attr.value == "copy_" and (not arg_vals or self._taints(arg_vals[0], state)
                                               or self._stale_tail(arg_vals[0], state)):
                return UNKNOWN  # copies stale rows in: not a reset
            base = self._eval(func.value.value, frame, state)
            sl = self._slice_dim(func.value)
            if isinstance(base, Refs) and sl is not None:
                self._fill_rows(base.refs, fill or func.attr.value, node, frame, state, *sl)
            return UNKNOWN

        # method calls on a receiver
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            recv = self._eval(func.value, frame, state)
            elem = self._elements(recv) if method in ("values", "items", "get", "pop") else None
            if elem is not None:  # `slot_mappings.values()`, `.items()`, `.get(gid)` on a container
                for a in node.args:
                    self._eval(a.value, frame, state)
                if method == "values":
                    return MapVal(elem)
                if method == "items":
                    return MapVal(TupleVal((UNKNOWN, elem)))
                if node.args and method in ("get", "pop"):
                    elem = self._pool_elem(recv, elem, node.args[0].value, frame, state)
                if method == "get" and isinstance(elem, Refs) and isinstance(recv, MapVal) and recv.keyed:
                    return Refs(elem.refs, True)  # `pool.get(k)`: None where no call put `k` there
                return elem
            arg_vals = [self._eval(a.value, frame, state) for a in node.args]
            if isinstance(recv, Refs):
                return self._method(recv, method, node, arg_vals, frame, state)
            if isinstance(recv, TailVal) and (fill is not None or method == "copy_"):
                # `tail = buf[n:p]; tail.fill_(v)` (also a helper's `t.zero_()` on such a view)
                if method == "copy_" and (not arg_vals or self._taints(arg_vals[0], state)
                                          or self._stale_tail(arg_vals[0], state)):
                    return UNKNOWN  # copies stale rows in: not a reset
                self._fill_rows(recv.base.refs, fill or method, node, frame, state, recv.lower, recv.upper, recv.dim)
                return UNKNOWN
            self._opaque(self._noted(self._out_args(node, arg_vals)), state)
            if not (name and name.split(".")[0] in READ_ONLY_MODULES and last in READ_ONLY_FUNCS):
                self._mark_written(arg_vals, state)  # (`torch.sum(buf)` only reads it)
                self._drop_partial(arg_vals, state)
            return UNKNOWN

        arg_vals = [self._eval(a.value, frame, state) for a in node.args]
        self._opaque(self._noted(self._out_args(node, arg_vals)), state)
        if not (name and name.split(".")[0] in READ_ONLY_MODULES and last in READ_ONLY_FUNCS):
            self._mark_written(arg_vals, state)  # (`torch.sum(buf)` only reads it)
            self._drop_partial(arg_vals, state)
        return UNKNOWN

    @staticmethod
    def _not_self(recv, state: State):
        """``recv`` without the frame's own ``self`` (a receiver: a method of its own class that
        is not followed writes what the analysis cannot see either way; marking ``self`` would
        mark every buffer it holds); other values as they are."""
        me = state.env.get("self")
        if not isinstance(recv, Refs) or not isinstance(me, Refs):
            return recv
        mine = {r.loc for r in me.refs}
        other = frozenset(r for r in recv.refs if r.loc not in mine)
        return Refs(other) if other else None

    @staticmethod
    def _mark_written(vals, state: State) -> None:
        """The persistent buffers of ``vals`` may have been written here (a store into some of
        their rows, or a call the analysis does not read that receives them: an extension op, a
        library function, a method of an object of unknown class).  Only "did any path write
        it?" reads the mark (:meth:`_check_graph_inputs`); the padding state is not changed.
        Lists, tuples and dicts of buffers are looked into (``torch._foreach_copy_(dsts, srcs)``,
        SGLang's ``_grouped_foreach_copy_``)."""
        todo = [(v, 0) for v in vals]
        while todo:
            v, depth = todo.pop()
            if isinstance(v, TailVal):  # rows of a buffer from a count on: the buffer
                v = v.base
            if isinstance(v, Refs):
                for r in v.refs:
                    if r.persistent or r.types:  # a buffer, or an object that may hold one
                        state.heap[MAY_WRITE + r.loc] = True
            elif depth < 4 and isinstance(v, TupleVal):
                todo.extend((x, depth + 1) for x in v.items)
            elif depth < 4 and isinstance(v, DictVal):
                todo.extend((x, depth + 1) for _k, x in v.items)
            elif depth < 4 and isinstance(v, MapVal):
                todo.append((v.item, depth + 1))

    def _drop_partial(self, vals, state: State) -> None:
        """Code the analysis does not read, handed a buffer (or an object or container holding
        one), may write any of its rows: rows one branch left unwritten (:attr:`Taint.partial`)
        are no longer known to be unwritten, and the branch being interpreted may have written
        the buffer (:attr:`_branch_writes`).  Only the locations that ever had such rows are
        looked at."""
        if not self._partial_locs and not self._branch_writes:
            return
        vals = list(vals)
        while vals:
            v = vals.pop()
            if isinstance(v, TailVal):
                v = v.base
            if isinstance(v, MapVal):  # a container's elements (`[buf[:n], ...]`, a dict's values)
                vals.append(v.item)
                continue
            if isinstance(v, TupleVal):
                vals.extend(v.items)
                continue
            if isinstance(v, DictVal):
                vals.extend(x for _k, x in v.items)
                continue
            if not isinstance(v, Refs):
                continue
            for r in v.refs:
                if not (r.persistent or r.types):
                    continue
                base = r.loc.split("#", 1)[0]
                if self._branch_writes:
                    # (an object: any buffer it holds, `*`)
                    self._branch_writes[-1].add(base if not r.types else "*")
                for loc in self._partial_locs:
                    if loc != r.loc and loc.split("#", 1)[0] != base \
                            and not loc.startswith((base + ".", base + "[")):
                        continue
                    st = state.heap.get(loc)
                    if isinstance(st, LocState) and any(t.partial for t in st.taints):
                        state.heap[loc] = replace(st, taints=frozenset(t for t in st.taints if not t.partial))

    def _noted(self, vals: list) -> list:
        """``vals`` (the ``out=`` arguments of a library call), each persistent buffer among them
        noted as written here (:meth:`_note_write`)."""
        for v in vals:
            if isinstance(v, Refs):
                for r in v.refs:
                    if r.persistent and not r.types:
                        self._note_write(r.loc)
        return vals

    @staticmethod
    def _out_args(node: cst.Call, vals: list) -> list:
        """The values a library call writes into: its ``out=`` argument (``torch.cumsum(x, 0,
        out=buf)``, ``np.cumsum(a, out=buf.np[1:n + 1])``)."""
        return [v for a, v in zip(node.args, vals) if a.keyword is not None and a.keyword.value == "out"]

    def _opaque(self, vals, state: State) -> None:
        """Buffers handed to code the analysis does not read (a kernel, a library function with
        ``out=``, a function it does not follow) may have any rows written there: what this
        step wrote into them is no longer known (their write extents are dropped; their
        padding state is kept: such code is not trusted to reset)."""
        self._mark_written(vals, state)
        for v in vals:
            if not isinstance(v, Refs):
                continue
            for r in v.refs:
                if not r.persistent:
                    continue
                for loc in (r.loc, r.loc + "#host", r.loc + "#dev"):
                    st = state.heap.get(loc)
                    if st is not None and (st.extents or any(t.partial for t in st.taints)):
                        # (rows a branch left unwritten: that code may write them)
                        state.heap[loc] = replace(st, extents=frozenset(),
                                                  taints=frozenset(t for t in st.taints if not t.partial))

    def _site(self, frame: Frame, line: int, vtext: str, node, form: str, kind: str = "reset") -> PadWrite | None:
        """The :class:`PadWrite` of a literal write (None when the value is not a literal: it is
        accepted on trust).  ``form``: "value" (``node`` is the written value) or "zero"
        (``node`` is a ``zero_()`` call); the span is computed only if a rule asks."""
        if not vtext:
            return None
        if isinstance(node, cst.Name) and (lit := frame.literals.get(node.value)) is not None:
            # a parameter the call passed a literal: the write is the call's (its argument edits,
            # where it is the one place: :meth:`_written_params`)
            _text, arg, seg, stmt, path, at, editable = lit
            if not editable:
                return PadWrite(path, at, vtext, kind, 0)
            self._write_nodes[id(arg)] = (seg, arg, stmt, form)
            return PadWrite(path, at, vtext, kind, id(arg))
        key = 0
        if node is not None:
            key = id(node)
            self._write_nodes[key] = (frame.seg, node, frame.stmt, form)
        return PadWrite(frame.path, line, vtext, kind, key)

    def _stale_tail(self, value: AVal, state: State) -> bool:
        """Whether ``value`` is rows ``[n:...]`` of a persistent buffer that may hold an earlier
        step's values there: no reset of this step wrote the buffer from row ``n`` (or before)
        on.  Copied into padding rows, such rows are no reset."""
        if not isinstance(value, TailVal):
            return False
        low = value.lower
        for r in value.base.refs:
            if not r.persistent:
                continue
            init = self._initial_value(r.loc)
            if init is not None and init.value != EMPTY:
                continue  # never written after its allocation: every row holds that value
            st = state.loc(r.loc)
            if st.taints or st.entry_stale and not any(
                    k.real == ALL or k.real == low.canon and k.offset <= low.offset and k.dim == value.dim
                    for k in st.clean if not k.when):
                return True
        return False

    def _fill_rows(self, refs, method: str, node: cst.Call, frame: Frame, state: State,
                   lower=None, upper=None, dim: int = 0) -> None:
        """Fill method ``method`` (call ``node``) writing rows ``[lower:upper]`` (cst bounds or
        counts already evaluated, a :class:`TailVal`'s; None: from the start / to the end of each
        view) of each of ``refs``."""
        vtext = self._fill_value(method, node)
        line = frame.seg.line(node, frame.stmt)
        site = self._fill_site(method, node, frame, line, vtext)
        for r in refs:
            self._reset(r, lower, upper, state, None, vtext, line, site, dim=dim)

    def _fill_method(self, node: cst.Call) -> str | None:
        """The profile's fill method call ``node`` is (``x.fill_(v)``, ``x.zero_()``), or "zero_"
        for ``x.mul_(0)`` (rows that hold zero after it, as after ``x *= 0``: :meth:`_exec_small`;
        a PAD002 fix edits no such call: :mod:`padlint.rules.pad002` rewrites ``zero_()`` only)."""
        func = node.func
        if not isinstance(func, cst.Attribute):
            return None
        if func.attr.value in self.p.fill_methods:
            return func.attr.value
        if func.attr.value == "mul_" and len(node.args) == 1 and node.args[0].keyword is None \
                and self._literal(node.args[0].value) in ("0", "0.0", "-0.0", "False") \
                and "zero_" in self.p.fill_methods:
            return "zero_"
        return None

    def _fill_site(self, method: str, node: cst.Call, frame: Frame, line: int, vtext: str) -> PadWrite | None:
        if method.startswith("zero"):
            return self._site(frame, line, vtext, node, "zero")
        return self._site(frame, line, vtext, node.args[0].value if node.args else None, "value")

    def write_span(self, site: PadWrite) -> tuple[int, int, int, int, str] | None:
        """(line, col, end_line, end_col, form) of the value a :class:`PadWrite` writes
        (1-based, end exclusive), or None where no expression of it can be edited."""
        found = self._write_nodes.get(site.node)
        if found is None:
            return None
        seg, node, stmt, form = found
        if stmt is None:
            return None
        return (*seg.span(node, stmt), form)

    def _fill_value(self, method: str, node: cst.Call) -> str:
        """The value a fill method writes: ``zero_()`` -> "0", ``fill_(v)`` -> v if literal."""
        if method.startswith("zero"):
            return "0"
        if method == "copy_":
            return ""  # from a clean tensor: value unknown
        return self._literal(node.args[0].value) if node.args else ""

    def _attr_classes_called(self, func: cst.Attribute, frame: Frame, state: State) -> list[ClassInfo]:
        """The sink classes ``obj.attr(...)`` constructs when, in every class ``obj`` may be,
        ``attr`` is a class-level attribute naming only sink classes
        (:meth:`CallGraph.sink_class_attr`); empty when one of them does not."""
        recv = self._eval_quiet(func.value, state)
        if not isinstance(recv, Refs) or not recv.refs:
            return []
        types = {t for r in recv.refs for t in r.types}
        if not types and isinstance(func.value, cst.Name) and func.value.value == "self" and frame.cls:
            types = {frame.cls}
        out: dict[str, ClassInfo] = {}
        for t in sorted(types):
            c = self.project.class_info(t)
            found = self.graph.sink_class_attr(c, func.attr.value) if c is not None else []
            if not found:
                return []
            out.update((k.key, k) for k in found)
        return list(out.values())

    def _common_class(self, classes: list[ClassInfo]) -> str:
        """The nearest project class every one of ``classes`` is (itself or a subclass of), by
        key; "" when they share none (their fields' declarations are then not consulted)."""
        common = None
        for c in classes:
            keys = [b.key for b in self.project.mro(c)]
            common = keys if common is None else [k for k in common if k in keys]
        return common[0] if common else ""

    @staticmethod
    def _looks_like_class(last: str) -> bool:
        return bool(last) and last[0].isupper()

    def _method(self, recv: Refs, method: str, node: cst.Call, arg_vals: list[AVal],
                frame: Frame, state: State) -> AVal:
        p = self.p
        fill = self._fill_method(node) if method in p.fill_methods or method == "mul_" else None
        if fill is not None:
            self._fill_rows(recv.refs, fill, node, frame, state)
            return recv
        if method in p.copy_to_device:
            arg = node.args[0].value if node.args else None
            count = self._count(arg, state) if arg is not None else None
            for r in recv.refs:
                if r.count is not None:
                    continue
                if count is not None and count.canon and not p.is_padded_name(count.canon):
                    # copies only real rows [:R]: device padding rows keep their state
                    self._extend(replace(r, loc=r.loc + "#dev"), count, state)
                    continue
                host = state.loc(r.loc + "#host")
                state.heap[r.loc + "#dev"] = host
            return UNKNOWN
        if method == "copy_" and node.args:
            src = arg_vals[0]
            taints = self._taints(src, state, first_run="keep")
            for r in recv.refs:
                if r.persistent:
                    self._note_write(r.loc)
                c = r.count
                if c is not None and c.canon and not p.is_padded_name(c.canon):
                    self._extend(r, c, state)
                    continue
                if c is not None and not c.canon:
                    # a view of unknown extent: which rows it wrote is not known (a stale source's
                    # values are in the buffer now, somewhere)
                    if taints:
                        st = state.loc(r.loc) if r.persistent else state.heap.get(r.loc, LocState(False))
                        state.heap[r.loc] = replace(st, taints=st.taints | frozenset(taints))
                    continue
                if isinstance(src, Refs) and len(src.refs) == 1 and not taints:
                    s = next(iter(src.refs))
                    if s.count is None:
                        state.heap[r.loc] = state.loc(s.loc) if s.persistent else state.heap.get(s.loc, LocState(False))
                        continue
                state.heap[r.loc] = (LocState(False, frozenset(taints), frozenset()) if taints
                                     else LocState(False, frozenset(), frozenset({Reset(ALL)})))
            return recv
        if method in p.padded_getters and node.args:
            count = self._count(node.args[0].value, state)
            if count is not None:
                count = replace(count, unpadded=self._no_padding(count.canon, state, frame))
            line = frame.seg.line(node, frame.stmt)
            out = {Ref(r.loc + "#dev", count if count is not None else Count(""), node, line,
                       r.persistent, path=frame.path, dummy=frame.dummy, dummy_any=frame.dummy_any)
                   for r in recv.refs if r.count is None}

            return Refs(frozenset(out)) if out else UNKNOWN
        if method == "masked_fill_" and len(node.args) >= 2:
            low = self._true_from(arg_vals[0], recv, state)
            if low is not None:
                # `x[:P].masked_fill_(m, v)` with `m` True on rows [R:P] and written elsewhere (a
                # padding mask: `m[:R].fill_(False)`, `m[R:].fill_(True)`): rows [R:P] of x are v,
                # as `x[R:P] = v` would write them
                vnode = node.args[1].value
                vtext = self._literal(vnode)
                line = frame.seg.line(node, frame.stmt)
                site = self._site(frame, line, vtext, vnode, "value")
                for r in recv.refs:
                    self._reset(r, cst.Name(low), None, state, None, vtext, line, site)
                return recv
        if method == "index_fill_" and len(node.args) >= 3:
            rows = self._arange_rows(node.args[1].value, state)
            if rows is not None and self._is_zero(node.args[0].value):
                # `x.index_fill_(0, torch.arange(R, P), v)`: rows [R:P] of x are v
                vnode = node.args[2].value
                vtext = self._literal(vnode)
                line = frame.seg.line(node, frame.stmt)
                site = self._site(frame, line, vtext, vnode, "value")
                for r in recv.refs:
                    self._reset(r, rows[0], rows[1], state, None, vtext, line, site)
                return recv
        if method == "masked_fill" and len(node.args) >= 2 and isinstance(arg_vals[0], MaskVal) \
                and not arg_vals[0].below and self._literal(node.args[1].value):
            # `x.masked_fill(torch.arange(P) >= R, v)`: a new tensor whose padding rows hold v
            return UNKNOWN
        if method == "narrow":
            return self._narrowed(recv, node.args, node, frame, state)
        if method in VIEW_METHODS:
            return recv
        if method in COPY_METHODS:
            return self._derive([recv], node, frame, state, "copy")
        if method in ELEMENTWISE_METHODS:
            return self._derive([recv, *arg_vals], node, frame, state, f"`.{method}()`")
        if method.endswith("_") and not method.startswith("_"):
            self._opaque([recv], state)  # an in-place method: `buf.index_copy_(...)`, `buf.scatter_(...)`
        self._opaque(self._noted(self._out_args(node, arg_vals)), state)
        # `self.model_runner.fill_counts(buf, n)` may write buf; `self.refresher.refresh(n)` what
        # the refresher holds
        not_self = self._not_self(recv, state)
        self._mark_written([not_self, *arg_vals], state)
        self._drop_partial([not_self, *arg_vals], state)
        if not_self is not recv and self._branch_writes:
            # a method of the frame's own object that is not followed may write any of its
            # buffers: the branch may have written them (:meth:`_partial_prefixes`)
            self._branch_writes[-1].add("*")
        return UNKNOWN

    def _narrowed(self, base: Refs, args, node: cst.Call, frame: Frame, state: State) -> AVal:
        """``x.narrow(dim, start, length)``: the view ``x[start:start + length]`` along ``dim``, a
        literal dimension (a prefix view from 0; rows from ``start`` are a :class:`TailVal`, which
        only writes through it use).  Another dimension expression: the view keeps every row (it
        narrows some dimension; which one is not known)."""
        pos = [a.value for a in args if a.keyword is None and not a.star]
        kw = {a.keyword.value: a.value for a in args if a.keyword is not None}
        vals = pos + [kw[k] for k in ("dim", "start", "length")[len(pos):] if k in kw]
        if len(vals) != 3 or not isinstance(vals[0], cst.Integer):
            return base
        dim, start, length = int(vals[0].value, 0), vals[1], vals[2]
        if self._is_zero(start):
            lower, upper = None, length
        elif isinstance(length, cst.BinaryOperation) and isinstance(length.operator, cst.Subtract) \
                and self._text(length.right) == self._text(start):
            lower, upper = start, length.left  # `narrow(0, R, P - R)`: rows [R:P]
        else:
            lower, upper = start, cst.BinaryOperation(start, cst.Add(), length)
        line = frame.seg.line(node, frame.stmt)
        # named as the slice it is (`self.buf[:P]`: messages name the buffer, fixes slice it); the
        # finding's position is the narrow call's
        src = node.args[0].value if dotted(node.func) == "torch.narrow" else node.func.value
        text = self._narrow_texts.get(id(node))
        if text is None:
            text = cst.Subscript(value=src, slice=[
                *(cst.SubscriptElement(cst.Slice(lower=None, upper=None)) for _ in range(dim)),
                cst.SubscriptElement(cst.Slice(lower=None if self._is_zero(lower) else lower, upper=upper))])
            self._narrow_texts[id(node)] = text
            self._keep.append(node)
        return self._rows_view(base, lower, upper, dim, text, line, frame, state)

    _FILL_FUNCTIONS = {"zero_": "zero_", "fill_": "fill_", "zeros_": "zero_", "constant_": "fill_"}

    def _fill_function(self, name: str, node: cst.Call) -> str | None:
        """``zero_`` / ``fill_`` for a function form of an in-place fill (``torch.zero_(x)``,
        ``torch.fill_(x, v)``, ``torch.nn.init.zeros_(x)``, ``nn.init.constant_(x, v)``), else None."""
        parts = name.split(".")
        if len(parts) < 2 or parts[0] not in ("torch", "nn", "init") or parts[-1] not in self._FILL_FUNCTIONS:
            return None
        if parts[-1] in ("zeros_", "constant_") and "init" not in parts:
            return None
        method = self._FILL_FUNCTIONS[parts[-1]]
        want = 1 if method == "zero_" else 2
        if len(node.args) != want or any(a.keyword is not None or a.star for a in node.args):
            return None
        return method

    def _arange_extent(self, node, state: State, frame: Frame | None = None):
        """``(lower node, upper node)`` of ``torch.arange(P)`` / ``arange(0, P)`` / ``arange(R, P)``
        (also ``np.arange``; keyword arguments such as ``device=`` aside), or of ``X[:P]`` with
        ``X`` a persistent buffer allocated ``arange(n)`` and written nowhere (``self.arange_np``:
        row i holds i), else None."""
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            sl = node.slice[0].slice
            if sl.lower is not None or sl.upper is None or sl.step is not None:
                return None
            return self._arange_buffer(node.value, sl.upper, frame, state) if frame is not None else None
        if not isinstance(node, cst.Call):
            return None
        name = dotted(node.func) or ""
        if name.rsplit(".", 1)[-1] != "arange" or name.split(".")[0] not in ("torch", "np", "numpy"):
            return None
        pos = [a.value for a in node.args if a.keyword is None and not a.star]
        if any(a.keyword is not None and a.keyword.value in ("start", "end", "step") for a in node.args):
            return None
        if len(pos) == 1:
            return None, pos[0]
        if len(pos) == 2:
            return pos[0], pos[1]
        return None

    def _arange_rows(self, node, state: State):
        """``(R node, P node)`` of ``torch.arange(R, P)`` with ``P`` a padded count, else None."""
        ext = self._arange_extent(node, state)
        if ext is None or ext[0] is None or self._is_zero(ext[0]):
            return None
        up = self._count(ext[1], state)
        if up is None or not up.canon or not self.p.is_padded_name(up.canon) or up.unpadded:
            return None
        return ext

    def _arange_buffer(self, base, upper, frame: Frame, state: State):
        """``(None, upper)`` when ``base`` is a persistent buffer every allocation of which is
        ``arange(n)`` and that nothing writes (row i holds i), else None."""
        v = self._eval(base, frame, state)
        if not isinstance(v, Refs) or not v.refs:
            return None
        for r in v.refs:
            if not r.persistent or r.count is not None:
                return None
            init = self._initial_value(r.loc.split("#", 1)[0])
            if init is None or not init.arange:
                return None
        return None, upper

    def _range_mask(self, node: cst.Comparison, frame: Frame, state: State) -> MaskVal | None:
        """``torch.arange(P) < R`` (``<=`` / ``>`` / ``>=``, either side), with ``P`` a padded count
        and ``R`` its real one: a mask True below R and False on the padding rows (or the reverse)."""
        if len(node.comparisons) != 1:
            return None
        op = node.comparisons[0].operator
        left, right = node.left, node.comparisons[0].comparator
        flip = {cst.LessThan: cst.GreaterThan, cst.GreaterThan: cst.LessThan,
                cst.LessThanEqual: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.LessThanEqual}
        if self._arange_extent(left, state, frame) is None:
            if self._arange_extent(right, state, frame) is None or type(op) not in flip:
                return None
            left, right, op = right, left, flip[type(op)]()
        ext = self._arange_extent(left, state, frame)
        if ext is None or (ext[0] is not None and not self._is_zero(ext[0])):
            return None
        if not isinstance(op, (cst.LessThan, cst.GreaterThanEqual)):
            return None  # `<=` / `>`: the boundary row R is on the other side
        up, low = self._count(ext[1], state), self._count(right, state)
        if up is None or low is None or not up.canon or not low.canon or low.offset or up.offset \
                or not self.p.is_padded_name(up.canon) or up.unpadded:
            return None
        pair = self.p.pair_for_padded(up.canon)
        if pair is None or low.canon not in pair.real:
            return None
        return MaskVal(real=self._text(right), real_canon=low.canon, padded_canon=up.canon,
                       below=isinstance(op, cst.LessThan))

    def _true_from(self, mask: AVal, target: Refs, state: State) -> str | None:
        """The count R when ``mask`` is a view of one persistent buffer whose rows from R to the
        end of the view were last written True on every path (``m[R:].fill_(True)`` on
        ``m = buf[:P]``), or a range mask ``torch.arange(P) >= R``, and ``target`` is a view to
        the same count P; else None."""
        if isinstance(mask, MaskVal):
            if mask.below or not mask.real.isidentifier():
                return None
            if any(r.count is None or (r.count.canon, r.count.offset) != (mask.padded_canon, 0)
                   for r in target.refs):
                return None
            return mask.real
        if not isinstance(mask, Refs) or len(mask.refs) != 1 or mask.maybe_none:
            return None
        m = next(iter(mask.refs))
        if not m.persistent or m.count is None or not m.count.canon or m.count.offset:
            return None
        if any(r.count is None or (r.count.canon, r.count.offset) != (m.count.canon, 0) for r in target.refs):
            return None
        st = state.loc(m.loc)
        found = {k.real for k in st.clean if k.value == "True" and k.real != ALL and not k.offset
                 and not k.when and k.upto == m.count.canon}
        if len(found) != 1:
            return None
        low = next(iter(found))
        return low if low.isidentifier() else None

    #: allocators that write one value into every row: name -> the value (None: their fill argument)
    FILL_ALLOCATORS = {"full": None, "full_like": None, "zeros": "0", "zeros_like": "0", "ones": "1",
                       "ones_like": "1"}

    def _fill_reset(self, name: str, node: cst.Call, frame: Frame, state: State) -> frozenset:
        """The whole-buffer write an allocation fill makes (``torch.full((P,), -1)``): every row
        holds the value until written, padding rows included.  Empty when the allocation has
        no fill value, its value is not a literal, or it is sized to a real count (a slice
        ``[:P]`` of it then has no padding rows)."""
        last = name.rsplit(".", 1)[-1]
        if last not in self.FILL_ALLOCATORS:
            return frozenset()
        line = frame.seg.line(node, frame.stmt)
        value = self.FILL_ALLOCATORS[last]
        vnode = None
        if value is None:
            pos = [a for a in node.args if a.keyword is None]
            kw = {a.keyword.value: a for a in node.args if a.keyword is not None}
            arg = kw.get("fill_value") or (pos[1] if len(pos) > 1 else None)
            if arg is None:
                return frozenset()
            vnode = arg.value
            value = self._literal(vnode)
            if not value:
                return frozenset()
        first = node.args[0].value if node.args and node.args[0].keyword is None else None
        if first is not None and not last.endswith("_like"):
            if isinstance(first, (cst.Tuple, cst.List)) and first.elements:
                first = first.elements[0].value
            count = self._count(first, state)
            if count is not None and count.canon and not self.p.is_padded_name(count.canon):
                return frozenset()  # sized to a real count: no padding rows
        site = self._site(frame, line, value, vnode, "value", kind="fill") if vnode is not None \
            else PadWrite(frame.path, line, value, "fill")
        return frozenset({Reset(ALL, 0, value, line, frozenset({site}))})

    def _alloc(self, node: cst.Call, frame: Frame, state: State, *, uninit: bool, like: bool) -> AVal:
        line = frame.seg.line(node, frame.stmt)
        loc = self._new_loc(line, node, frame)
        taints: set[Taint] = set()
        count: Count | None = None
        if node.args:
            first = node.args[0].value
            if like:
                v = self._eval(first, frame, state)
                if isinstance(v, Refs):
                    for r in v.refs:
                        if r.count is not None and r.count.canon:
                            count = r.count
            else:
                if isinstance(first, (cst.Tuple, cst.List)) and first.elements:
                    first = first.elements[0].value
                count = self._count(first, state)
        if uninit and count is not None and count.canon and self.p.is_padded_name(count.canon) \
                and not count.unpadded and not self._no_padding(count.canon, state, frame):
            pair = self.p.pair_for_padded(count.canon)
            rows = self._rows(pair.real[0] if pair else "?", count.canon, count.offset)
            text = self._text(node)
            taints.add(Taint(buffer=text, padded=count.canon, offset=count.offset, reason="uninit",
                             padded_written=count.written,
                             steps=((line, f"`{text}` allocates uninitialised rows: {rows} hold garbage "
                                           f"unless written", frame.path),)))
        state.heap[loc] = LocState(False, frozenset(taints), frozenset())
        return Refs(frozenset({Ref(loc, None, node, line, False, path=frame.path)}))

    # ------------------------------------------------------------- inlining
    def _kernel_tail_resets(self, kernel, node: cst.Call, frame: Frame, state: State,
                            vals: dict[int, AVal]) -> None:
        """A launch of a project kernel that stores one value into the tail rows of a pointer
        argument (:mod:`padlint.analysis.kernels`) resets that argument's padding rows."""
        target = self._resolve_callee(kernel, frame, state)
        if target is None or target[0] != "funcs":
            return
        for fn, _recv in target[1]:
            stores = self._kernel_stores.get(fn.key)
            if stores is None:
                mod = self.project.module(fn.module)
                helpers = PeekedNodes(mod.functions) if mod is not None else None
                stores = self._kernel_stores[fn.key] = tail_stores(fn.peek(), helpers)
            positional = [a for a in node.args if a.keyword is None and not a.star]
            by_kw = {a.keyword.value: a for a in node.args if a.keyword is not None}
            self._note_kernel_writes(fn, positional, by_kw, vals)
            if not stores:
                continue
            line = frame.seg.line(node, frame.stmt)
            for ts in stores:
                arg = by_kw.get(ts.name) or (positional[ts.index] if ts.index < len(positional) else None)
                if arg is None:
                    continue
                buf = vals[id(arg)] if id(arg) in vals else self._eval(arg.value, frame, state)
                if isinstance(buf, Refs):
                    for r in buf.refs:
                        targets = [r] if not ts.table else [
                            Ref(f"{c}[*]", None, r.text, r.line, True, path=r.path)
                            for c in self._pointed_containers(r)]
                        for t in targets:
                            self._reset(t, None, None, state, None, ts.value, line,
                                        PadWrite(frame.path, line, ts.value, "kernel") if ts.value else None)

    def _note_kernel_writes(self, fn: FunctionInfo, positional: list, by_kw: dict, vals: dict) -> None:
        """The persistent buffers a kernel launch hands to pointer parameters the kernel may store
        through (:func:`padlint.analysis.kernels.pointer_write`) are written here
        (:meth:`_note_write`; only the launches whose arguments were evaluated)."""
        if not vals:
            return
        params = fn.header().params
        for i, pname in enumerate(params):
            arg = by_kw.get(pname) or (positional[i] if i < len(positional) else None)
            v = vals.get(id(arg)) if arg is not None else None
            if not isinstance(v, Refs) or not any(r.persistent and not r.types for r in v.refs):
                continue
            key = (fn.key, pname)
            w = self._kernel_writes.get(key)
            if w is None:
                w = self._kernel_writes[key] = pointer_write(fn.peek(), pname) is not None
            if w:
                for r in v.refs:
                    if r.persistent and not r.types:
                        self._note_write(r.loc)

    def _pointed_containers(self, r: Ref) -> list[str]:
        """The persistent containers whose buffers a pointer table points to: for the table
        ``X.attr``, each ``X.Y`` where a class of the project assigns ``self.attr`` a call that
        reads one attribute of ``self``, ``self.Y`` (vLLM MRV2 ``self.input_block_table_ptrs =
        self._make_ptr_tensor(self.input_block_tables)``)."""
        if not r.persistent or r.count is not None or "." not in r.loc:
            return []
        prefix, attr = r.loc.rsplit(".", 1)
        got = self._ptr_tables.get(attr)
        if got is None:
            found: set[str] = set()
            for key in self.project.modules_mentioning([f"self.{attr} ="]):
                mod = self.project.module(key)
                if mod is None:
                    continue
                for node in ast.walk(mod.tree):
                    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                            and isinstance(t := node.targets[0], ast.Attribute) and t.attr == attr \
                            and isinstance(t.value, ast.Name) and t.value.id == "self" \
                            and isinstance(node.value, ast.Call):
                        # the one attribute of `self` the call reads (not a method it calls):
                        # `self._make_ptr_tensor(self.input_block_tables)`,
                        # `torch.tensor([t.data_ptr() for t in self._local_block_tables], ...)`
                        funcs = {id(c.func) for c in ast.walk(node.value) if isinstance(c, ast.Call)}
                        read = {a.attr for a in ast.walk(node.value)
                                if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name)
                                and a.value.id == "self" and id(a) not in funcs}
                        if len(read) == 1:
                            found |= read
            got = self._ptr_tables[attr] = tuple(sorted(found))
        return [f"{prefix}.{y}" for y in got]

    def _method_value(self, node: cst.Attribute, frame: Frame, state: State) -> MethodVal | None:
        """``self.m`` naming a method of the frame's class, not called here (a value)."""
        if not (isinstance(node.value, cst.Name) and node.value.value == "self" and frame.owner):
            return None
        cls = self.project.class_info(frame.cls or frame.owner)
        fn = self.project.find_method(cls, node.attr.value) if cls is not None else None
        if fn is None or _is_property(fn):  # (a property's read runs its getter: :meth:`_property_read`)
            return None
        target = self._resolve_callee(node, frame, state)
        if target is None or target[0] != "funcs":
            return None
        return MethodVal(frozenset((fn.key, recv) for fn, recv in target[1]))

    def _profile_copy(self, node: cst.Call, state: State) -> bool:
        """Whether ``node`` calls one of the profile's ``copy_to_device`` methods in its shape: no
        argument, or one positional count."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in self.p.copy_to_device):
            return False
        if not node.args:
            return True
        a = node.args[0]
        return len(node.args) == 1 and a.keyword is None and not a.star \
            and self._count(a.value, state) is not None

    def _resolve_callee(self, func, frame: Frame, state: State):
        """Where a call goes: ("nested", name), or ("funcs", [(FunctionInfo, receiver), ...])
        for project functions (several for dispatch on a base class), or None."""
        if isinstance(func, cst.Name):
            v = state.env.get(func.value)
            if isinstance(v, FuncVal) and func.value in frame.nested:
                return ("nested", func.value)
            if isinstance(v, ClosureVal) and v.node is not None:
                return ("closure", v)  # a nested function handed in (`create_forward_fn(desc)`)
            if isinstance(v, MethodVal):  # `decode_fn(...)` after `decode_fn = self._decode`
                fns = [(self.project.function(k), recv) for k, recv in sorted(v.targets, key=lambda t: t[0])]
                fns = [(f, r) for f, r in fns if f is not None]
                return ("funcs", fns) if fns else None
            if func.value in state.env:
                return None
            mod = self.project.module(frame.module)
            t = self.project.resolve(mod, func.value) if mod is not None else None
            if isinstance(t, FunctionInfo) and not t.owner:
                return ("funcs", [(t, None)])
            return None
        if not isinstance(func, cst.Attribute):
            return None
        name = func.attr.value
        recv_node = func.value
        # super().m(...)
        if isinstance(recv_node, cst.Call) and isinstance(recv_node.func, cst.Name) \
                and recv_node.func.value == "super" and frame.owner:
            cls = self.project.class_info(frame.cls or frame.owner)
            m = self.project.find_method(cls, name, after=frame.owner) if cls is not None else None
            return ("funcs", [(m, state.env.get("self"))]) if m is not None else None
        # `cls.m(...)` in a class method: a static or class method of the class
        if isinstance(recv_node, cst.Name) and recv_node.value == "cls" and frame.owner \
                and frame.seg is not None and _decorated(frame.seg.func, "classmethod"):
            cls = self.project.class_info(frame.cls or frame.owner)
            m = self.project.find_method(cls, name) if cls is not None else None
            if m is not None and (_decorated_ast(m, "staticmethod") or _decorated_ast(m, "classmethod")):
                return ("funcs", [(m, None)])
            return None
        # mod.f(...) / pkg.mod.f(...) for imported modules
        d = dotted(recv_node)
        if d is not None and d.split(".")[0] not in state.env:
            mod = self.project.module(frame.module)
            t = self.project.resolve(mod, f"{d}.{name}") if mod is not None else None
            if isinstance(t, FunctionInfo) and (not t.owner or _decorated_ast(t, "staticmethod")
                                                or _decorated_ast(t, "classmethod")):
                # a module function, or a static method called on its class (`Runner._zero(buf, n, p)`)
                return ("funcs", [(t, None)])
            return None
        recv = self._eval(recv_node, frame, state)
        if not isinstance(recv, Refs):
            return None
        # in the order of the class keys, not of the frozensets' hashes: the dispatch order
        # decides which path a finding names as its example, which must not vary per run
        classes: dict[str, object] = {}
        for key in sorted({k for r in recv.refs if r.count is None for k in r.types}):
            c = self.project.class_info(key)
            if c is not None:
                classes[key] = c
        if not classes:
            return None
        # `self.m()` dispatches on self's class only; an attribute's declared class on its
        # project subclasses too (MRV2 `self.model_state`: several ModelState classes)
        is_self = isinstance(recv_node, cst.Name) and recv_node.value == "self"
        found = self.graph.methods_of(list(classes.values()), name, subclasses=not is_self)
        if len(found) > 1 and self.p.devices:
            # on a path through code of one device (an NPU runner), a dispatch does not go to
            # implementations the profile declares for another device (code of no declared
            # device, a torch-native backend, stays)
            dev = self._path_device()
            here = [t for t in found if not dev or self.p.device_of(t.module) in ("", dev)]
            if here:
                found = here
        targets = [t for t in found if self.graph.relevant(t)]
        if len(targets) > 1 and any(self._via_dispatch.get(t.key) for t in targets):
            # a composite: an implementation of the interface dispatches on the same interface
            # (`HybridAttnBackend.init_forward_metadata` calls
            # `self.full_attn_backend.init_forward_metadata(...)`, declared `AttentionBackend`,
            # whose implementations include itself).  Each implementation is interpreted where
            # the outer dispatch reaches it; dispatching to all of them again from inside would
            # nest every implementation in every composite (exponential in the number of
            # composites).  Not followed here; a dispatch whose implementations were not
            # entered by a dispatch (`Worker.execute_model` to its runners, a wrapper the
            # caller declares by its own class) and a delegation to one implementation
            # (`MultiGroupBlockTable.commit_block_table`) are.
            return None
        if not targets:
            # nothing to follow, but the result's class may be known: `self.get_builder(i)` with
            # `-> AttentionMetadataBuilder` gives an object whose methods are followed
            typed = [t for t in found if t.header().returns]
            return ("returns", typed) if typed else None
        return ("funcs", [(t, recv) for t in targets])

    def _path_device(self) -> str:
        """The device of the first frame on the call path whose module, or whose ``self``'s
        class's module, the profile's ``[devices]`` name ("" for none)."""
        for f in self._frames:
            for mod in (f.module, (f.cls or "").split(":", 1)[0]):
                if mod:
                    d = self.p.device_of(mod)
                    if d:
                        return d
        return ""

    def _narrow(self, recv, fn: FunctionInfo):
        """The receiver as ``fn`` sees it: only the classes whose ``fn.name`` is ``fn`` (a
        dispatch on several subclasses must not let one class's method call another
        class's override through ``self``)."""
        if not isinstance(recv, Refs) or not fn.owner:
            return recv
        owner = self.project.class_info(fn.owner)
        bases = {c.key for c in self.project.mro(owner)[1:]} if owner is not None else set()
        out = set()
        for r in recv.refs:
            keep = frozenset(t for t in r.types if (c := self.project.class_info(t)) is not None
                             and (m := self.project.find_method(c, fn.name)) is not None and m.key == fn.key)
            if keep:
                out.add(replace(r, types=keep) if keep != r.types else r)
            elif len(r.types) >= 2 or (r.types and r.types <= bases and self.graph.sinkward(fn)):
                # declared as a base of fn's class (`builder: AttentionMetadataBuilder`), dispatched
                # to a subclass's override that reaches a sink: inside it, `self` is of that
                # subclass, so its own methods (`self._build_non_spec_metadata()`) resolve.  An
                # override that reaches no sink keeps the declared class (its helpers are not
                # followed: SGLang's scheduler reached every prefix cache's eviction internals)
                out.add(replace(r, types=frozenset({fn.owner})))
            else:
                out.add(r)  # `super().m()`: `self` keeps its own class
        return Refs(frozenset(out), recv.maybe_none)

    def _inline(self, target, node: cst.Call, frame: Frame, state: State) -> AVal:
        kind, key = target
        arg_vals = [self._eval(a.value, frame, state) for a in node.args]
        if kind == "returns":  # not followed (no sink or reset below): only the result's class
            self._opaque(arg_vals, state)
            return join_all(self._returned_object(fn) for fn in key) or UNKNOWN
        if kind == "nested":
            return self._call(None, frame.nested[key], node, arg_vals, None, frame, state)
        if kind == "closure":
            return self._call(None, key.node, node, arg_vals, None, frame, state, closure=key)
        if len(key) == 1:
            fn, recv = key[0]
            return self._call(fn, None, node, arg_vals, self._narrow(recv, fn), frame, state)
        # dispatch: each possible callee from the same state; effects joined
        ends: list[State] = []
        value: AVal | None = None
        for fn, recv in key:
            branch = state.copy()
            self._via_dispatch[fn.key] = self._via_dispatch.get(fn.key, 0) + 1
            try:
                v = self._call(fn, None, node, arg_vals, self._narrow(recv, fn), frame, branch)
            finally:
                self._via_dispatch[fn.key] -= 1
            ends.append(branch)
            value = join_vals(value, v)
        joined = State.join(ends)
        if joined is not None:
            state.heap = joined.heap
        return value if value is not None else UNKNOWN

    def _call(self, fn: FunctionInfo | None, nested: cst.FunctionDef | None, node: cst.Call,
              arg_vals: list[AVal], recv: AVal | None, frame: Frame, state: State,
              closure: ClosureVal | None = None) -> AVal:
        """Interpret one callee with the caller's heap and count bindings (``closure``: a nested
        function defined in another frame, run in its defining frame's terms).

        A method of another object (``self.refresher.refresh(bs)`` with ``self.refresher =
        Refresher(buf)``) may write what that object holds under names the caller does not track:
        after the call, the object is marked :data:`CALLED`, which the graph-input check reads for
        the objects that hold a buffer under a name of their own.  Its writes through its own
        attributes are in the heap already, so the mark is not a :data:`MAY_WRITE` of everything
        the object holds, and it is made after the call, not before: a worker's
        ``self.cuda_graph_runner.can_run_graph(batch)`` then ``.execute(batch)`` read as writes of
        the graph inputs ``execute`` never writes."""
        value = self._call_body(fn, nested, node, arg_vals, recv, frame, state, closure)
        if fn is not None and fn.owner and isinstance(recv, Refs):
            seg = self.segment(fn)
            if seg is not None and _binds_self(seg.func):
                other = self._not_self(recv, state)
                for r in other.refs if other is not None else ():
                    if r.persistent or r.types:  # (as :meth:`_mark_written`)
                        state.heap[CALLED + r.loc] = True
        return value

    def _call_body(self, fn: FunctionInfo | None, nested: cst.FunctionDef | None, node: cst.Call,
                   arg_vals: list[AVal], recv: AVal | None, frame: Frame, state: State,
                   closure: ClosureVal | None) -> AVal:
        """:meth:`_call` but the receiver's mark."""
        if fn is not None:
            if not self.graph.relevant(fn) and not any(
                    isinstance(v, TailVal) or isinstance(v, ClosureVal) and v.active for v in arg_vals):
                # (a callee handed a nested function of an analysed one may call it: followed,
                # `super().capture(create_forward_fn, ...)`; one handed rows `buf[n:p]` may reset
                # them: `_zero(buf[n:p])` with `def _zero(t): t.zero_()`)
                self._opaque([*arg_vals, self._not_self(recv, state)], state)
                return UNKNOWN
            seg = self.segment(fn)
            if seg is None:
                self._opaque([*arg_vals, self._not_self(recv, state)], state)
                return UNKNOWN
            func, owner, qual, name = seg.func, fn.owner, fn.key, fn.name
            mod = self.project.module(fn.module)
            module, path = fn.module, (mod.path if mod is not None else "")
        elif closure is not None:
            func = nested
            seg, owner, module, path, def_cls, def_qual, def_nested = closure.ctx
            name = func.name.value
            qual = f"{def_qual}.{name}"
        else:
            func = nested
            seg, owner, module, path = frame.seg, frame.owner, frame.module, frame.path
            name = func.name.value
            qual = f"{frame.qual}.{name}"
        if any(f.qual == qual or f.node is func for f in self._frames) or len(self._frames) > self.MAX_DEPTH:
            self._opaque([*arg_vals, self._not_self(recv, state)], state)
            return UNKNOWN
        line = frame.seg.line(node, frame.stmt)
        chain, shown = _qualified_call(frame, name, owner if fn is not None else "", module, fn is None)
        if fn is None and func.body.body and id(func.body.body[0]) in seg.alias:
            shown = "lambda"  # (:meth:`Segment.lambda_def`)
        if fn is not None and self.p.is_dummy_run(name):
            self.dummy_started.add(fn.key)
        callee = Frame(qual=qual, owner=owner, seg=seg, module=module, path=path,
                       cls=(def_cls if closure is not None else frame.cls) if fn is None else owner,
                       chain=chain + ((line, f"stores `{shown}` for code the analysis does not read to call"
                                              if closure is not None and closure is self._escaping else
                                              f"calls `{shown}`", frame.path),), known=set(frame.known),
                       dummy=(name if self.p.is_dummy_run(name) else
                              frame.dummy if fn is None or fn.owner == frame.owner else ""),
                       dummy_any=name if self.p.is_dummy_run(name) else frame.dummy_any, node=func)
        if fn is None and closure is not None:
            callee.nested = dict(def_nested)
            env = dict(closure.env)  # the enclosing locals, as they were when it was taken
            if def_qual == frame.qual and seg is frame.seg:
                # called in the frame that made it: its free names are looked up now, as Python
                # does (`n = P; view = lambda: buf[:n]; n = R; view()` reads `[:R]`)
                free = self._names_used(func)
                env.update((k, v) for k, v in state.env.items() if k in free)
        elif fn is None:
            callee.nested = dict(frame.nested)
            # closure: the enclosing locals the nested function names (only those: its summary
            # is keyed on them, and the others change from one loop round to the next)
            free = self._names_used(func)
            env = {k: v for k, v in state.env.items() if k in free}
        else:
            env = {}
        ps = func.params
        positional = [*ps.posonly_params, *ps.params]
        is_method = fn is not None and owner != "" and _binds_self(func)
        if is_method:
            # (a method of another object: what that object holds is marked after the call, :meth:`_call`)
            self_val = recv if isinstance(recv, Refs) else state.env.get("self") if recv is None else None
            if not isinstance(self_val, Refs):
                self_val = self._self_ref(owner)
            env["self"] = self_val
            types = {t for r in self_val.refs for t in r.types}
            if types and owner not in types:
                callee.cls = next(iter(sorted(types)))
            positional = positional[1:]
        elif fn is not None and owner != "" and positional and _decorated(func, "classmethod"):
            # `cls` is the class, bound by the call (`self._zero(buf, n, p)`, `Runner._zero(...)`):
            # the caller's arguments fill the parameters after it; `cls.m()` in it resolves on the
            # class the call names (a subclass's override of `m`)
            env[positional[0].name.value] = UNKNOWN
            positional = positional[1:]
            bound = self._classmethod_class(node, recv, frame)
            if bound and bound != owner:
                callee.cls = bound
        all_params = positional + list(ps.kwonly_params)
        # a nested function's or a lambda's default that names a local of the function that made
        # it (`lambda n=num_reqs: buf[:n]`, `def build(n=num_reqs)`): what it held at the `def`
        # or the `lambda` (:meth:`_defaults`), carried by the closure or kept by the frame
        if closure is not None:
            made = dict(closure.env)
        elif fn is None:
            made = dict(frame.defaults.get(func.name.value, ()))
        else:
            made = {}
        for p in all_params:
            if p.default is not None:
                d = p.default
                if isinstance(d, cst.Name) and d.value == "None":
                    env[p.name.value] = CountVal(None)
                elif isinstance(d, cst.Name) and d.value in ("True", "False"):
                    env[p.name.value] = BoolVal(d.value == "True")  # not passed: the default
                elif (DEFAULT + p.name.value) in made:
                    env[p.name.value] = made[DEFAULT + p.name.value]
                else:
                    env[p.name.value] = UNKNOWN
            else:
                env[p.name.value] = self._param_default(p, fn)
        pos_i = 0
        names = {p.name.value for p in all_params}
        extra: dict[str, AVal] = {}  # keywords for the callee's `**kwargs`
        given: list = []
        for a, v in zip(node.args, arg_vals):
            if a.star == "**" and isinstance(v, DictVal):
                # `f(**extra)` with the keys known: each key is a keyword argument
                for k, x in v.items:
                    if k in names:
                        env[k] = self._cv(x)
                    else:
                        extra[k] = x
                continue
            if a.keyword is not None and a.keyword.value not in names:
                extra[a.keyword.value] = v
                continue
            given.append((a, v))
        star_kwarg = ps.star_kwarg if isinstance(ps.star_kwarg, cst.Param) else None
        if star_kwarg is not None:
            env[star_kwarg.name.value] = DictVal(tuple(sorted(extra.items())))
        if any(a.star for a in node.args):
            # `f(*args)`, `f(**opts)` (also a dict whose keys are known here: code may have added
            # others): any parameter may be given there, so no default is known
            for k, v in list(env.items()):
                if isinstance(v, BoolVal):
                    env[k] = UNKNOWN
        as_real: list[str] = []  # the padded counts this call passes as the callee's real counts
        spread = False  # after `*args`: which parameter a positional argument binds is not known
        for a, v in given:
            if a.star:
                spread = spread or a.star == "*"
                continue
            pname = None
            if a.keyword is not None:
                if any(p.name.value == a.keyword.value for p in all_params):
                    pname = a.keyword.value
            elif pos_i < len(positional) and not spread:
                pname = positional[pos_i].name.value
                pos_i += 1
            if pname is None:
                continue
            if not isinstance(v, _PASSED_AS_IS) and (isinstance(v, (UnknownVal, CountVal)) or self._known_count(pname)):
                c = self._count_rhs(a.value, pname, state)
                v = c if c is not None else v
            if isinstance(v, CountVal) and v.canon is not None:
                callee.known.add(v.canon)
            if isinstance(v, UnknownVal) and not isinstance(v, _PASSED_AS_IS):
                param = next(p for p in all_params if p.name.value == pname)
                v = self._param_default(param, fn)
                if isinstance(v, UnknownVal) and isinstance(a.value, cst.Name) and _maybe_int(param) \
                        and isinstance(state.env.get(a.value.value, UNKNOWN), UnknownVal):
                    # a name the caller knows nothing about, passed on: the callee's count is the
                    # caller's (`self._stage(src, num_decodes)`), so rows it writes or slices
                    # are in the caller's terms (write extents compare them)
                    v = CountVal(a.value.value)
            env[pname] = self._cv(v)
            how = self._written_params(func).get(pname)
            if how is not None:
                editable, direct = how
                lit = self._literal_arg(a.value, frame, flags=direct)
                if lit is not None:
                    # (the argument is the place to edit only where the callee writes it once)
                    callee.literals[pname] = lit if editable else (*lit[:6], False)
            if isinstance(v, CountVal) and v.canon and not v.offset and self.p.is_padded_name(v.canon) \
                    and any(pname in pair.real for pair in self.p.counts) and fn is not None:
                as_real.append(f"`{v.canon}` {PADDED_AS_REAL} `{pname}`")
        if as_real:  # one step naming every count the call binds that way
            callee.chain = chain + (
                (line, f"calls `{shown}` with the padded count {' and '.join(as_real)}", frame.path),)
        # a summary: the same callee, with the same arguments, on a heap that agrees on every
        # location the callee read, has the same effect (its writes) and result; a nested
        # function's environment holds the enclosing locals it sees (its closure)
        base_key = None
        try:
            # (empty parts as the shared empty set and tuple: the summaries keep their keys)
            base_key = (qual, callee.cls, frozenset(env.items()) if env else NOSET,
                        frozenset(callee.known) if callee.known else NOSET, callee.dummy,
                        callee.dummy_any, self._path_device() if self.p.devices else "",
                        tuple(sorted((k, x[0], id(x[1])) for k, x in callee.literals.items()))
                        if callee.literals else ())
            hash(base_key)
        except TypeError:
            base_key = None
        heap = state.heap
        if heap.reads is None:
            heap.reads = self._reads
        if base_key is not None:
            look = dict.get  # not Heap.get: a summary that does not apply leaves no read behind
            for summ in self._summaries.get(base_key, ()):
                if (summ.cut_in < 0 or summ.cut_in == self._entry_no) and all(
                        (x := look(heap, k, v if v is PERSISTENT else _GONE)) is v or x == v
                        for k, v in zip(summ.read_keys, summ.read_values)):
                    if heap.reads:  # what the callee read, its caller read (where it was given it)
                        heap.reads[-1].keys.update(heap.reads[-1].given(summ.read_keys, heap))
                    for k, v in zip(summ.write_keys, summ.write_values):
                        heap[k] = v
                    for k in summ.stored:  # the object fields the callee stored, as if it ran again
                        self._stored(k, heap)
                    for w in summ.noted_writes:  # and the writes it noted, for this entry, on this path
                        self._note_write(w[0], w[:6] + (self._qpath(callee) + w[6],))
                    if summ.sinks:  # (its callers reach a sink through it)
                        self._sinks_seen += 1
                    if summ.cut_in >= 0:  # (and a call below them was cut)
                        self._cuts += 1
                    if summ.hit_events:  # and its stale sink arguments, on this path
                        here_q = self._qpath(callee)
                        for ev, c, q, n, nq in summ.hit_events:
                            chain, qpath = callee.chain + c[n:], here_q + q[nq:]
                            if self._hit_log:
                                self._hit_log[-1].append((ev, chain, qpath, 0, 0))
                            self._record_hit(ev, chain, qpath)
                    return summ.value
        # (a call the call graph does not resolve may be resolved here, from the values: a function
        # that reached a sink in some run is not held to the share, `Scheduler.run_batch`)
        away = fn is not None and fn.key not in self._reaching and not self.graph.sinkward(fn)
        if away and self._runs.get(fn.key, 0) >= self.MAX_AWAY_BODIES:
            # its runs in this entry point have cost their share: from here on it is code not read.
            # What it was handed may have any rows written (it is not trusted to reset), and its
            # value is an object of its annotated class.  (The join of what its earlier runs
            # returned was tried: values made in other contexts carried their stale rows into this
            # one, 18 false findings on vLLM 0.33.0)
            self._cuts += 1
            self._opaque([*arg_vals, self._not_self(recv, state)], state)
            return self._returned_object(fn) if fn.header().returns else UNKNOWN
        bodies, sinks, cuts = self._bodies, self._sinks_seen, self._cuts
        read = ReadLog()  # (what the heap held at the call: ``read.saved``, kept as it is written)
        self._reads.append(read)
        callee_state = State(env, heap)
        out = heap  # (the heap the callee's paths leave: its exit state's)
        self._store_log.append(set())
        self._write_log.append(set())
        self._hit_log.append([])
        self._frames.append(callee)
        active, self._active = self._active, frozenset()  # a callee's tests are its own
        try:
            exit_state, value = self._exec_function(func, callee, callee_state)
            out = exit_state.heap
        finally:
            self._active = active
            self._frames.pop()
            stored = frozenset(self._store_log.pop())
            if self._store_log:
                self._store_log[-1].update(stored)
            noted = self._fewest_write_paths(self._write_log.pop())
            if self._write_log:
                self._write_log[-1].update(noted)
            hit_log = self._fewest_paths(self._hit_log.pop(), len(callee.chain))
            if self._hit_log:
                self._hit_log[-1].extend(hit_log)
            self._reads.pop()
            if self._reads:  # what the callee read, its caller read too (where it was given it)
                self._reads[-1].keys.update(self._reads[-1].given(read.keys, out, read))
        if callee.cond_locs or callee.epochs:
            self._drop_local_conditions(exit_state, callee.qual)
        for rk in callee.cond_fields:  # its records are of its own tests
            del exit_state.heap[rk]
        state.heap = exit_state.heap
        if fn is not None and isinstance(value, UnknownVal) and fn.header().returns:
            value = self._returned_object(fn)
        if away:
            if self._sinks_seen > sinks:
                self._reaching.add(fn.key)
            else:
                self._runs[fn.key] = self._runs.get(fn.key, 0) + self._bodies - bodies
        if base_key is not None:
            entries = self._summaries.setdefault(base_key, [])
            if any(e.cut_in >= 0 and e.cut_in != self._entry_no for e in entries):
                entries[:] = [e for e in entries if e.cut_in < 0 or e.cut_in == self._entry_no]
            if len(entries) < self.MAX_SUMMARIES_PER_CALLEE:
                # (a key the callee wrote holds another value than at the call; one it did not is
                # not in ``read.saved``)
                saved = read.saved
                writes = [(k, v) for k, old in saved.items()
                          if (v := dict.get(out, k, _GONE)) is not _GONE and old is not v]
                # the callee's own allocations (absent when it was called, written by it) are not
                # inputs: at a later call on the same path the location holds what this call left
                # there, and the summary's writes replace it as the callee's allocation would; so
                # are the fields it stored on a typed parameter's object (`@arg:`, one location
                # per parameter, where each real call has its own object)
                own = {k for k, _v in writes if k.startswith(("new:", "@new:", "@arg:"))
                       and read.at_call(k, out, _GONE) is _GONE}
                # the writes' call paths below this call: a later call replays them on its own path
                here = self._qpath(callee)
                rel = frozenset(w[:6] + (w[6][len(here):],) for w in noted if w[6][:len(here)] == here)
                # (each with the lengths of the call path to strip: the paths are not copied)
                n, nq = len(callee.chain), len(here)
                # (matched on the call path: the chain's last step may have been renamed since,
                # `Worker.execute_model` for a call of a namesake)
                hits = tuple({(ev, c, q, n, nq): None for ev, c, q, _n, _nq in hit_log
                              if len(c) >= n and q[:nq] == here})
                read_keys = tuple(sorted(k for k in read.keys if k not in own))
                entries.append(Summary(self._interned(read_keys), tuple(_given(k, read.at_call(k, out, _GONE)) for k in read_keys),
                                       self._interned(tuple(k for k, _v in writes)),
                                       tuple(v for _k, v in writes), value, self._interned(stored),
                                       self._interned(rel), hits, self._sinks_seen > sinks,
                                       self._entry_no if self._cuts > cuts else -1))
        return value

    def _interned(self, keys):
        """``keys`` (a tuple or a frozenset), or the equal one an earlier summary holds (one copy
        each: on SGLang 0.5.23 the summaries' stored-field sets were 40 K sets of 11 K values)."""
        return self._key_tuples.setdefault(keys, keys)

    def release_summaries(self) -> None:
        """Forget the callees' summaries (a cache: a later call interprets the callee again).
        The engine calls it once its entry points have run: what the rules query (sink hits,
        writers, dummy-run reads) is kept apart, and the summaries are most of the memory the
        run holds."""
        self._summaries = {}
        self._key_tuples = {}

    @staticmethod
    def _named_lambda(node: cst.Lambda, frame: Frame) -> bool:
        """Whether ``node`` is the whole value of a statement ``name = lambda ...`` of a function
        that calls ``name(...)`` and uses ``name`` no other way (it is not handed on, returned or
        stored: run where called, it is run whole)."""
        stmt = frame.stmt
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(a := stmt.body[0], cst.Assign) and a.value is node and len(a.targets) == 1
                and isinstance(a.targets[0].target, cst.Name)):
            return False
        name = a.targets[0].target.value
        called = other = 0
        for n in _cst_walk(frame.seg.func.body):
            if isinstance(n, cst.Call):
                called += isinstance(n.func, cst.Name) and n.func.value == name
            elif isinstance(n, cst.Name) and n.value == name:
                other += 1
        # every mention but the binding itself is the callee of a call
        return called > 0 and other == called + 1

    def _classmethod_class(self, node: cst.Call, recv, frame: Frame) -> str:
        """The class a class method's call binds to ``cls``: the receiver's (``self.m()``, an
        object's), the class it names (``Runner.m()``), the caller's own ``cls`` (``cls.m()``);
        "" where not known."""
        if isinstance(recv, Refs):
            types = sorted({t for r in recv.refs for t in r.types})
            if len(types) == 1:
                return types[0]
        func = node.func
        if isinstance(func, cst.Attribute):
            if isinstance(func.value, cst.Name) and func.value.value == "cls":
                return frame.cls or frame.owner
            d = dotted(func.value)
            mod = self.project.module(frame.module)
            c = self.project.resolve(mod, d) if d and mod is not None else None
            if isinstance(c, ClassInfo):
                return c.key
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                return frame.cls or frame.owner
        return ""

    def _defaults(self, params: cst.Parameters, frame: Frame, state: State) -> tuple:
        """``(DEFAULT + parameter, value)`` for each default of a nested function or lambda that
        names a local of the function making it, as it is there now (the `def` or `lambda` runs):
        the local's value, or the count of that name (a parameter of that function may hold one);
        a name it does not bind is left unknown."""
        out = []
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            d = p.default
            if not isinstance(d, cst.Name) or d.value in ("None", "True", "False") \
                    or d.value not in frame.seg.bound_names:
                continue
            v = state.env.get(d.value)
            if v is None or isinstance(v, UnknownVal):
                if not _maybe_int(p):
                    continue
                v = CountVal(d.value)
            out.append((DEFAULT + p.name.value, no_literal(v)))
        return tuple(out)

    def _lambda_closure(self, node: cst.Lambda, frame: Frame, state: State) -> ClosureVal:
        """A ``lambda`` as a closure, like a nested function taken as a value where it is
        defined (:meth:`Segment.lambda_def`)."""
        func = frame.seg.lambda_def(node, frame.stmt)
        free = self._names_used(func)
        env = tuple(sorted([*((k, no_literal(x)) for k, x in state.env.items() if k in free),
                            *self._defaults(node.params, frame, state)], key=lambda kv: kv[0]))
        active = any(isinstance(x, (FuncVal, MethodVal)) for _k, x in env) or any(
            isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name)
            and c.func.value.value == "self" for c in _cst_walk(node.body))
        return ClosureVal(f"{frame.qual}.<{func.name.value}>", node=func,
                          ctx=(frame.seg, frame.owner, frame.module, frame.path, frame.cls, frame.qual,
                               dict(frame.nested)),
                          env=env, active=active)

    def _literal_arg(self, node, frame: Frame, flags: bool = False) -> tuple | None:
        """What :attr:`Frame.literals` holds for argument ``node`` of a call in ``frame``: a
        literal written there, or a parameter of ``frame`` its own call passed one (handed on:
        not the one place to edit).  ``True``/``False`` only where ``flags`` (a parameter the
        callee writes into rows; one it only hands on is a flag, held by :class:`BoolVal`)."""
        if isinstance(node, cst.Name) and node.value in frame.literals:
            return (*frame.literals[node.value][:6], False)
        text = self._literal(node)
        if not text or (not flags and isinstance(node, cst.Name) and node.value in ("True", "False")):
            return None
        return (text, node, frame.seg, frame.stmt, frame.path, frame.seg.line(node, frame.stmt), True)

    def _written_params(self, func: cst.FunctionDef) -> dict[str, tuple[bool, bool]]:
        """The parameters of ``func`` that its body writes as a value into rows (``buf[n:p] = v``,
        ``buf.fill_(v)``) or hands to another call, and never rebinds (tuple targets, ``with ...
        as``, loops included): where its call passes a literal, that literal is what such a write
        writes (:attr:`Frame.literals`).  The value says whether the call's argument is the one
        place to edit that value (PAD002's fix): a parameter written once, in this body, and not
        handed on (a value written into two fields, with two neutral values, has no one fix);
        each value is ``(that, whether the body writes the parameter itself)``: a flag literal
        (``True``/``False``) counts only where it does (:meth:`_literal_arg`)."""
        got = self._written_param_memo.get(id(func))
        if got is None:
            ps = func.params
            params = {p.name.value for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)}
            direct: dict[str, int] = {}
            passed: set[str] = set()
            for n in _cst_walk(func.body):
                if isinstance(n, cst.Assign):
                    if isinstance(n.value, cst.Name) and any(isinstance(t.target, cst.Subscript) for t in n.targets):
                        direct[n.value.value] = direct.get(n.value.value, 0) + 1
                elif isinstance(n, cst.Call):
                    fill = isinstance(n.func, cst.Attribute) and (
                        n.func.attr.value.endswith(("fill_", "fill")) or n.func.attr.value == "mul_")
                    for a in n.args:
                        if isinstance(a.value, cst.Name):
                            if fill:
                                direct[a.value.value] = direct.get(a.value.value, 0) + 1
                            else:
                                passed.add(a.value.value)
            keep = (set(direct) | passed) & params
            keep -= _stored_names(func.body)
            got = self._written_param_memo[id(func)] = (
                func, {k: (direct.get(k, 0) == 1 and k not in passed, k in direct) for k in keep})
        return got[1]

    def _names_used(self, func: cst.FunctionDef) -> frozenset[str]:
        """Every name that ``func``'s body (nested functions included) mentions."""
        got = self._used_names.get(id(func))
        if got is None:
            names: set[str] = set()

            class _V(cst.CSTVisitor):
                def visit_Name(self, node: cst.Name) -> None:
                    names.add(node.value)

            func.visit(_V())
            got = self._used_names[id(func)] = (func, frozenset(names))
        return got[1]

    def _returned_object(self, fn: FunctionInfo) -> AVal:
        """What a call of ``fn`` gives when its body gives nothing known: an object of the class its
        return annotation names (``-> AttentionMetadataBuilder``; dispatch widens it to the
        subclasses), one per function, whose buffers persist across steps like any object's."""
        v = self._returned.get(fn.key)
        if v is None:
            classes = frozenset(c.key for c in self.project.returned_classes(fn))
            v = self._returned[fn.key] = Refs(frozenset({Ref(f"ret:{fn.key}", None, "", 0, True, types=classes)})) \
                if classes else UNKNOWN
        return v

    def _param_default(self, p: cst.Param, fn: FunctionInfo | None) -> AVal:
        """An unbound parameter: an object of its annotated project class, if any."""
        if fn is None or p.annotation is None:
            return UNKNOWN
        key = (fn.key, p.name.value)
        v = self._param_cache.get(key)
        if v is None:
            v = self._param_cache[key] = self._param_object(p, fn)
        return v

    def _param_object(self, p: cst.Param, fn: FunctionInfo) -> AVal:
        mod = self.project.module(fn.module)
        if mod is None:
            return UNKNOWN
        names = _cst_type_names(p.annotation.annotation)
        types = set()
        for n in names:
            t = self.project.resolve(mod, n)
            if isinstance(t, ClassInfo):
                types.add(t.key)
        if not types:
            return UNKNOWN
        return Refs(frozenset({Ref(f"arg:{fn.key}:{p.name.value}", None, p.name.value, types=frozenset(types),
                                   persistent=False)}))

    # ----------------------------------------------------------------- sinks
    def _check_call_args(self, sink: str, node: cst.Call, frame: Frame, state: State, *,
                         skip_first: bool) -> DictVal:
        """Check every argument of a sink call; the keyword arguments' values (the fields of a
        metadata object it builds)."""
        fields = DictVal()
        vals = [self._eval(arg.value, frame, state) for arg in node.args]
        widths = self._sink_widths(node, frame, state)
        for i, (arg, v) in enumerate(zip(node.args, vals)):
            if arg.star == "**" and isinstance(v, DictVal):
                # `Meta(**kwargs)`: each key of the dict is a field, reported on the `**` argument
                for key, item in v.items:
                    self._check_sink(sink, key, "keyword", arg.value, item, frame, state, "error",
                                     node=self._kw_node(arg, key))
                    fields = fields.set(key, item)
                continue
            if arg.star or (skip_first and i == 0):
                continue
            fld = arg.keyword.value if arg.keyword else str(i)
            if arg.keyword:
                fields = fields.set(fld, v)
                if widths:
                    v = self._widen(fld, v, widths)
            self._check_sink(sink, fld, "keyword" if arg.keyword else "positional", arg.value, v,
                             frame, state, "error", node=arg)
        return fields

    def _sink_widths(self, node: cst.Call, frame: Frame, state: State) -> dict[str, tuple[Count, str]]:
        """The padded counts a sink call declares its consumer's row width with, by axis
        (``batch_size=bs``, ``num_reqs=num_reqs_padded``): the keyword arguments whose value is a
        padded count of a known axis, one per axis (none where two disagree).  The consumer reads
        that many rows of every tensor of that axis it is handed, a whole buffer too."""
        found: dict[str, set] = {}
        for arg in node.args:
            if arg.keyword is None or arg.star or not isinstance(arg.value, (cst.Name, cst.Attribute)):
                continue
            c = self._count(arg.value, state)
            if c is None or not c.canon or c.offset or not self.p.is_padded_name(c.canon):
                continue
            axis = self.p.count_axis(c.canon)
            if axis:
                c = replace(c, unpadded=self._no_padding(c.canon, state, frame))
                found.setdefault(axis, set()).add((c, f"{arg.keyword.value}={c.written}"))
        return {a: next(iter(v)) for a, v in found.items() if len({c.canon for c, _ in v}) == 1}

    def _widen(self, fld: str, value: AVal, widths: dict[str, tuple[Count, str]]) -> AVal:
        """``value`` as its sink's consumer reads it: a whole persistent tensor handed to a sink
        that declares a padded width for the field's axis (the profile's ``[fields]`` axis of the
        field, else of the buffer's attribute name) is read up to that width."""
        if not isinstance(value, Refs):
            return value
        out, changed = set(), False
        for r in value.refs:
            if r.count is None and r.persistent and r.held and not r.types and not r.elem_types \
                    and not r.loc.startswith(("@", "new:")):  # a tensor (an object of a project class has no rows)
                axis = self._field_axis(fld, r.loc)
                w = widths.get("reqs" if axis == "reqs+1" else axis) if axis else None
                if w is not None:
                    c, declared = w
                    if axis == "reqs+1":
                        c = replace(c, offset=c.offset + 1)
                    r = replace(r, count=c, width=declared)
                    changed = True
            out.add(r)
        return Refs(frozenset(out), value.maybe_none) if changed else value

    def _field_axis(self, fld: str, loc: str) -> str | None:
        """The axis of sink field ``fld`` holding the buffer at ``loc``: the profile's
        ``[fields.<fld>]``, else the ``[fields]`` entry of the attribute the buffer was read as
        (when every such name agrees)."""
        spec = self.p.field_spec(fld)
        if spec is not None:
            return spec.axis
        axes = {spec.axis for name in (self._loc_owners.get(loc) or {None})
                if name is not None and (spec := self.p.field_spec(name)) is not None}
        return axes.pop() if len(axes) == 1 else None

    def _kw_node(self, arg, key: str) -> "_KwargsKey":
        """One stand-in node per (``**`` argument, key): hits are keyed by node identity."""
        kw = self._kwkeys.get((id(arg), key))
        if kw is None:
            kw = self._kwkeys[(id(arg), key)] = _KwargsKey(arg, key)
        return kw

    def _check_sink(self, sink: str, fld: str, kind: str, value_node, value: AVal,
                    frame: Frame, state: State, severity: str, node,
                    given: set[Taint] | None = None) -> None:
        """``given``: the taints, already judged (a graph input no replay path wrote), instead of
        those :meth:`_taints` finds in ``value``."""
        self._sinks_seen += 1
        if self.p.is_exempt(fld) or self.p.is_arg_ignored(sink, fld):
            return
        # the argument node is the same object on every path (each function is parsed once);
        # its libcst position is resolved only when the value is stale
        key = (id(node), fld)
        if given is not None:
            taints = given
        else:
            covers = self._covers(value, state)
            if covers:
                self._pad_hit(key, sink, fld, kind, node, frame, covers,
                              value_node.value if isinstance(value_node, cst.Name)
                              and not isinstance(node, _KwargsKey) else None)
            taints = self._taints(value, state, init_accepts=self._init_accepts(fld, frame))
            if not self.p.is_index_field(fld):
                # a dummy run's outputs are dropped: its stale rows matter where they are indices
                # the run writes through (KV slots, blocks, state slots of a live request)
                taints = {t for t in taints if (t.real != (DUMMY_ROWS,) or t.partial)
                          and not (t.dummy and t.reason == "init")}
            else:
                self._note_dummy_reads(value, state, fld, frame)
            spec = self.p.field_spec(fld)
            if spec is not None and spec.reads == "buffer":
                taints |= self._beyond_view(value, state, spec)
        if not taints:
            ev = _HitEvent(key, sink, fld, kind, severity, value_node, value, node, (), {}, {}, frozenset(),
                           False, frame.seg, frame.stmt, frame.qual, frame.path, frame.fixable)
        else:
            # a reset at the sink fixes every stale path only if each names the real count there
            # (a dummy run binds the callee's real name to its own padded count: it does not)
            real_names, padded_names, count_locals = self._names_in_scope(frame, state)
            base_val = value
            while isinstance(base_val, MapVal):
                base_val = base_val.item
            locs = frozenset(r.loc.split("#", 1)[0] for r in base_val.refs if r.persistent) \
                if isinstance(base_val, Refs) else frozenset()
            named = not isinstance(value, MapVal) and all(
                real_in_scope(t, self.p.pair_for_padded(t.padded), real_names, count_locals)[2]
                for t in taints)
            ev = _HitEvent(key, sink, fld, kind, severity, value_node, value, node, tuple(taints), real_names,
                           padded_names, locs, named, frame.seg, frame.stmt, frame.qual, frame.path, frame.fixable,
                           count_locals)
        chain, qpath = frame.chain, self._qpath()
        if self._hit_log and taints:  # a summary of a callee being interpreted replays it on its later paths
            self._hit_log[-1].append((ev, chain, qpath, 0, 0))
        self._record_hit(ev, chain, qpath)

    @staticmethod
    def _fewest_write_paths(noted: set) -> frozenset:
        """The writes a callee noted (``(location, file, segment, statement, function, count, call
        path)``), one per write statement: the most direct call path to it.  Every path to every
        write below the callee would make the cost grow with the paths (a summary replays them)."""
        if len(noted) < 2:
            return frozenset(noted)
        best: dict[tuple, tuple] = {}
        for w in noted:
            k = w[:6]
            got = best.get(k)
            if got is None or len(w[6]) < len(got[6]) or len(w[6]) == len(got[6]) and w[6] < got[6]:
                best[k] = w
        return frozenset(best.values())

    @staticmethod
    def _fewest_paths(log: list, n: int) -> list:
        """The stale sink events a callee recorded (``(event, chain, qpath, _, _)``), at most two per
        sink event: the most direct path below the callee (chain past its first ``n`` steps) that
        passes a padded count as a real one, and the most direct that does not.  What a caller
        needs of them (the finding, whether its path is a dummy run's, the most direct trace) is
        kept; every path below would make the cost grow with the paths."""
        if len(log) < 2:
            return log
        best: dict[tuple, tuple] = {}
        for entry in log:
            ev, c = entry[0], entry[1]
            k = (id(ev), any(PADDED_AS_REAL in note for _l, note, _p in c[n:]))
            got = best.get(k)
            if got is None or len(c) < len(got[1]):
                best[k] = entry
        return list(best.values())

    def _record_hit(self, ev: "_HitEvent", chain: tuple, qpath: tuple) -> None:
        """Record a sink argument reached on call path ``chain`` (``qpath``): stale (``ev.taints``)
        in :attr:`hits`, else clean in :attr:`clean_hits`.  Called where the sink is interpreted
        and where a callee's summary replays it on another path."""
        key = ev.key
        if not ev.taints:
            self.clean_hits.setdefault(key, []).append(chain)
            return
        taints = ev.taints
        # the paths of dummy runs (a call on the path passes a padded count as the callee's real
        # count) and those of real steps are two findings: a reset at the sink in the real count
        # fixes the second and not the first (the dummy run must write its rows), and a real
        # step's stale rows are not hidden behind a dummy run's report of the same argument
        key = (*key, self._dummy_chain(chain, taints))
        old = self.hits.get(key)
        entry = self._entry_key()
        locs = frozenset((entry, loc) for loc in ev.locs)
        qpaths = frozenset({qpath})
        named, value, value_node, node, seg = ev.named, ev.value, ev.value_node, ev.node, ev.seg

        def make(ts, stale_chains: tuple, fixable: bool) -> SinkHit:
            span = seg.span(node.arg if isinstance(node, _KwargsKey) else node, ev.stmt)
            stmt = ev.stmt if ev.stmt is not None else node
            in_lambda = id(stmt) in seg.alias  # (:meth:`Segment.lambda_def`: the file's statement)
            stmt = seg.alias.get(id(stmt), stmt)
            return SinkHit(
                key=key, sink=ev.sink, field=ev.field, kind=ev.kind, severity=ev.severity,
                arg_text=f"{self._text(value_node)}[{ev.field!r}]" if isinstance(node, _KwargsKey)
                else self._text(value_node),
                arg_name=value_node.value if isinstance(value_node, cst.Name) and not isinstance(node, _KwargsKey)
                else None,
                span=span, stmt_line=seg.line(stmt, stmt), stmt_text=self._stmt_text(stmt),
                function=ev.qual.rpartition(":")[2],
                chain=chain, taints=tuple(sorted(ts, key=lambda t: (t.steps[0][0], t.buffer, len(t.steps), repr(t)))),
                # a total order, the most direct first: the message names the first, whatever the
                # run's string hashes
                real_names=ev.real_names, padded_names=ev.padded_names, count_locals=ev.count_locals or {},
                fixable=fixable, path=ev.path,
                lines=seg.lines, stale_chains=stale_chains,
                dims=frozenset(r.count.dim for r in value.refs if r.count is not None and r.count.canon)
                if isinstance(value, Refs) else frozenset(),
                maybe_none=isinstance(value, Refs) and value.maybe_none,
                container=isinstance(value, MapVal), at_test=not ev.fixable and not in_lambda,
                in_lambda=in_lambda, locs=locs, qpaths=qpaths,
                dummy=key[2])

        known = self._hit_chains.setdefault(key, set())
        new_chain = chain not in known
        known.add(chain)
        if old is not None:
            chains = old.stale_chains + (chain,) if new_chain else old.stale_chains
            if not locs <= old.locs:
                old.locs = old.locs | locs
            if qpath not in old.qpaths:
                old.qpaths = old.qpaths | qpaths
            if len(old.chain) <= len(chain):
                old.stale_chains = chains
                old.fixable = old.fixable and named and ev.fixable
                # an origin this longer path brings and the most direct one does not is another bug
                # (another buffer to reset): keep it with the most direct path that brings it
                mine = {origin_key(t) for t in old.taints}
                for o in {origin_key(t) for t in taints} - mine:
                    other = old.others.get(o)
                    if other is None or len(other.chain) > len(chain):
                        old.others[o] = make([t for t in taints if origin_key(t) == o], (chain,),
                                             ev.fixable and named)
                    else:
                        seen = self._hit_chains.setdefault((key, o), set(other.stale_chains))
                        if chain not in seen:
                            seen.add(chain)
                            other.stale_chains = other.stale_chains + (chain,)
                    if other is not None:
                        if not locs <= other.locs:
                            other.locs = other.locs | locs
                        if qpath not in other.qpaths:
                            other.qpaths = other.qpaths | qpaths
                return  # keep the most direct stale path
        new = self.hits[key] = make(taints, (old.stale_chains if old is not None else ()) + ((chain,) if new_chain else ()),
                                    ev.fixable and named and (old is None or old.fixable))
        if old is not None:
            new.locs = new.locs | old.locs
            new.qpaths = new.qpaths | old.qpaths
            # the path it replaces may have brought origins this one does not
            mine = {origin_key(t) for t in taints}
            new.others = {o: h for o, h in old.others.items() if o not in mine}
            for o in {origin_key(t) for t in old.taints} - mine:
                new.others.setdefault(o, replace(old, taints=tuple(t for t in old.taints if origin_key(t) == o),
                                                  others={}))

    def _dummy_chain(self, chain, taints) -> bool:
        """Whether ``chain`` is a dummy run's path for ``taints``: a call on it passes a padded
        count as the callee's real count of one of the taints (``_build_attention_metadata(
        num_reqs=num_reqs_padded)``: a reset at the sink from ``num_reqs`` writes no row there)."""
        reals = {r for t in taints for r in (t.real or (self.p.pair_for_padded(t.padded) or _NOPAIR).real)}
        for _l, note, _p in chain:
            if PADDED_AS_REAL in note:
                names = re.findall(re.escape(PADDED_AS_REAL) + r" `(\w+)`", note)
                if not reals or reals.intersection(names):
                    return True
        return False

    def _covers(self, value: AVal, state: State) -> set[PadCover]:
        """The writes that put the padding rows of each padded view of ``value`` where they are:
        resets covering them (stale or uninitialised rows made clean) and allocation fills of
        tensors made on this path.  Rows no write covers are not here (they are stale: PAD001)."""
        out: set[PadCover] = set()
        while isinstance(value, MapVal):
            value = value.item
        if not isinstance(value, Refs):
            return out
        for r in value.refs:
            c = r.count
            st = state.loc(r.loc) if r.persistent else state.heap.get(r.loc, LocState(False))
            padded = c is not None and bool(c.canon) and not c.unpadded and self.p.is_padded_name(c.canon)
            inferred: tuple[str, ...] = ()
            if c is not None and not padded and r.persistent and st.entry_stale:
                # rows the step did not write (write extents): their reset is judged too
                inferred = self._inferred_real(c, st, r.extents_at)
                padded = bool(inferred)
            if c is not None and not padded:
                continue  # sliced to a real (or unknown) count: no padding rows
            clean = st.clean | r.clean_at if r.clean_at else st.clean
            if not any(x.sites for x in clean):
                continue  # no literal written: nothing to judge
            text = self._t(r.text)
            # a derived or allocated tensor (whole view) carries its padded rows in its taints
            cands = list(st.taints)
            if padded and ((st.entry_stale and r.persistent) or not cands):
                cands.append(Taint(buffer=text, padded=c.canon, offset=c.offset, reason="stale", dim=c.dim,
                                   padded_written=c.written, real=inferred))
            for t in cands:
                cov = covering(clean, t, self._real_for, self._active)
                writes = frozenset(x.sites for x in cov)
                if writes:
                    real = min((x.real for x in cov if x.real != ALL), default="")
                    out.add(PadCover(t.buffer, t.padded, t.offset, writes, real, bool(t.derived_from),
                                     r.loc if r.persistent and t.buffer == text else ""))
        return out

    def _pad_hit(self, key, sink: str, fld: str, kind: str, node, frame: Frame, covers: set,
                 arg_name: str | None = None) -> None:
        hit = self.pad_hits.get(key)
        if hit is None:
            stmt = frame.stmt if frame.stmt is not None else node
            hit = self.pad_hits[key] = PadHit(
                key=key, sink=sink, field=fld, kind=kind, path=frame.path,
                stmt_line=frame.seg.line(stmt, stmt), function=frame.qual.rpartition(":")[2], chain=frame.chain,
                arg_name=arg_name,
                _where=(frame.seg, node.arg if isinstance(node, _KwargsKey) else node, frame.stmt))
        hit.covers |= covers

    def _stmt_text(self, stmt: cst.CSTNode) -> str:
        if isinstance(stmt, cst.SimpleStatementLine):
            return norm(" ; ".join(self._text(s) for s in stmt.body))
        if isinstance(stmt, (cst.If, cst.While)):
            return norm(self._text(stmt.test))
        return norm(self._text(stmt))[:200]

    def _names_in_scope(self, frame: Frame, state: State) -> tuple[dict[str, str], dict[str, str], dict[str, tuple]]:
        """Map canonical counts to names that denote them at the sink (for the fix), and the names
        in scope bound to a count (or to a value of no known count: its own name) to (that
        count, whether it is padded, whether the name is a parameter)."""
        real: dict[str, str] = {}
        padded: dict[str, str] = {}
        count_locals: dict[str, tuple] = {}
        func = getattr(frame.seg, "func", None)
        params = set(self._params(func)) if isinstance(func, cst.FunctionDef) else set(frame.params)
        for n in sorted(set(state.env) | set(frame.params)):
            if n in frame.keys:
                continue
            v = state.env.get(n)
            if isinstance(v, CountVal):
                if v.canon is None or v.offset:
                    continue
                canon = v.canon
            elif v is None or isinstance(v, UnknownVal):
                canon = n
            else:
                continue
            is_padded = self.p.is_padded_name(canon)
            table = padded if is_padded else real
            count_locals[n] = (canon, is_padded or (isinstance(v, CountVal) and v.padded), n in params)
            if canon not in table or n == canon:
                table[canon] = n
        return real, padded, count_locals


_NOPAIR = type("NoPair", (), {"real": ()})()


def _continues(out: State | None, parent: State) -> State | None:
    """``out``, the join of the branches of a test forked from ``parent``, continues ``parent``'s
    path: its heap has written what ``parent`` had written since its own fork (a branch's heap
    holds those keys as its ``base``, not as written: where one branch alone is live, the join
    is that branch's heap), and it forks and joins at ``parent``'s level (its ``base`` is
    ``parent``'s).  Else a write made before the test, in a branch of an enclosing test, is lost
    to that test's join (the fields of an object a callee built under ``if not dummy_run:``,
    then a nested test: the join kept the other path's value and dropped the view's resets)."""
    if out is None or out.heap is parent.heap:
        return out
    h = out.heap
    h.dirty |= parent.heap.dirty
    h.base = parent.heap.base
    return out


def _qualified_call(frame: Frame, name: str, owner: str, module: str, nested: bool) -> tuple[tuple, str]:
    """The caller's chain and the name a call step shows for callee ``name`` (a method of class
    key ``owner``, or a function of module key ``module`` where ``owner`` is "").  A function that
    calls a function of the same name elsewhere (a worker's ``execute_model`` calling the
    runner's) would read ``execute_model -> execute_model``, like a recursion: both steps then
    name where they are defined, the class for a method, the module for a module function
    (``Worker.execute_model -> GPUModelRunner.execute_model``, ``helpers.execute_model``), in
    full (``pkg.a.worker.Worker``) where those names are the same.  A nested function (of the
    caller or the callee) is not qualified: it has no such name."""
    chain = frame.chain
    caller_owner = frame.owner
    caller_is_function = frame.qual == (f"{caller_owner}.{name}" if caller_owner else f"{frame.module}:{name}")
    if not chain or nested or not caller_is_function:
        return chain, name
    if (owner or module) == (caller_owner or frame.module) and bool(owner) == bool(caller_owner):
        return chain, name  # the same function (recursion) or the same place
    line, note, path = chain[-1]
    head, _tick, rest = note.partition("`")
    shown, tick2, tail = rest.partition("`")
    if not tick2 or shown.rpartition(".")[2] != name:
        return chain, name

    def place(cls_key: str, mod_key: str, full: bool) -> str:
        if cls_key:
            mod, _c, cls = cls_key.partition(":")
            return f"{mod}.{cls}" if full else cls.rpartition(".")[2]
        return mod_key if full else mod_key.rpartition(".")[2]

    full = place(caller_owner, frame.module, False) == place(owner, module, False)
    caller = f"{place(caller_owner, frame.module, full)}.{name}"
    return chain[:-1] + ((line, f"{head}`{caller}`{tail}", path),), f"{place(owner, module, full)}.{name}"


def _holds_tensor(value: AVal) -> bool:
    """Whether ``value`` is known to be a tensor: a sliced view of a buffer (``buf[:n]``) on
    some path.  (A whole location may be a number: an element of a persistent table of sizes,
    ``self._bs_to_padded_graph_size[bs]``, is a count.)"""
    return isinstance(value, Refs) and any(r.count is not None for r in value.refs)


_GONE = object()


def _given(key: str, v):
    """What a callee was given at ``key``: ``v``, its value at the call; a persistent buffer's
    location that is not there holds what any persistent buffer holds (:data:`PERSISTENT`, the
    value ``State.loc`` reads), so a summary taken before some path wrote that value explicitly
    still applies after (an object field, ``@...``, or an allocation, ``new:...``, that is not
    there is absent: :data:`_GONE`).  A value equal to it is it, so that the lookup can
    compare by identity first."""
    if key.startswith(("@", "new:")):
        return v
    return PERSISTENT if v is _GONE or v == PERSISTENT else v


@dataclass(eq=False)
class _KwargsKey:
    """Stands for one key of a ``**kwargs`` sink argument (its own hit, the argument's span)."""

    arg: cst.Arg
    key: str


def _all_holders(loc: str) -> list[str]:
    """``loc`` and the locations of the objects and containers that hold it
    (``self._static['seq_lens']``: also ``self._static`` and ``self``)."""
    return [loc, *(loc[:m.start()] for m in re.finditer(r"[.\[]", loc) if m.start())]


def _holders(loc: str) -> list[str]:
    """``loc`` and the locations of the objects that hold it (``self.buffers.x``: also
    ``self.buffers`` and ``self``): code handed a holder may write the buffer through it."""
    parts = loc.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _maybe_int(p: cst.Param) -> bool:
    """A parameter that may hold a count: no annotation, or ``int``."""
    return p.annotation is None or (isinstance(p.annotation.annotation, cst.Name)
                                    and p.annotation.annotation.value == "int")


def _nesting(node: ast.AST) -> int:
    """The deepest nesting of ``node``'s syntax tree (iterative: it may be very deep)."""
    deepest = 0
    todo = [(node, 1)]
    while todo:
        n, d = todo.pop()
        if d > deepest:
            deepest = d
        todo.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest


def _cst_type_names(ann) -> list[str]:
    """Dotted class names a libcst annotation may denote (``X``, ``X | None``, ``Optional[X]``)."""
    if isinstance(ann, cst.SimpleString):
        try:
            return _type_names(ast.parse(ann.evaluated_value, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError, TypeError):
            return []
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        return _cst_type_names(ann.left) + _cst_type_names(ann.right)
    if isinstance(ann, cst.Subscript):
        head = dotted(ann.value) or ""
        if head.rsplit(".", 1)[-1] in ("Optional", "Union"):
            return [n for el in ann.slice if isinstance(el.slice, cst.Index)
                    for n in _cst_type_names(el.slice.value)]
        return []
    name = dotted(ann)
    return [name] if name and name != "None" else []


def _glob(pat: str) -> str:
    return re.escape(pat).replace(r"\*", ".*").replace(r"\?", ".")


def _walk_lexical(node: cst.CSTNode):
    """Every node under ``node`` (``node`` included) in source order, parents before children
    (libcst's own ``children``: slower)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))



def _binds_self(func: cst.FunctionDef) -> bool:
    """A method whose first positional parameter is ``self`` (not a static method): a call binds
    its receiver there."""
    ps = func.params
    positional = [*ps.posonly_params, *ps.params]
    return bool(positional) and positional[0].name.value == "self" and not _decorated(func, "staticmethod")


def _decorated(func: cst.FunctionDef, name: str) -> bool:
    """Whether ``func`` carries the plain decorator ``@name`` (``staticmethod``, ``classmethod``)."""
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == name for d in func.decorators)


def _is_property(fn: FunctionInfo) -> bool:
    """Whether project function ``fn`` is a ``@property`` getter (not ``cached_property``)."""
    return _decorated_ast(fn, "property")


def _decorated_ast(fn: FunctionInfo, name: str) -> bool:
    """Whether project function ``fn`` carries the plain decorator ``@name``."""
    return name in fn.header().decorators


def _skips_round(body) -> bool:
    """Whether a ``break`` or ``continue`` of the loop whose ``body`` (statements) this is may cut
    a round short (those of loops nested in it, and of functions defined there, do not)."""
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Break, cst.Continue)):
            return True
        if isinstance(n, (cst.For, cst.While)):
            stack.extend(n.orelse.body.body if n.orelse is not None and hasattr(n.orelse.body, "body") else ())
            continue  # (its own body's `break`s are its own)
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(_kids(n))
    return False


def _stored_names(node) -> set[str]:
    """The names ``node`` binds anywhere in it: assignment, augmented and annotated targets (tuple
    targets included), ``for``/comprehension targets, ``with ... as``, walrus, ``except ... as``,
    ``del``."""
    out: set[str] = set()
    for n in _cst_walk(node):
        targets = []
        if isinstance(n, cst.AssignTarget):
            targets = [n.target]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets = [n.target]
        elif isinstance(n, cst.AsName):
            targets = [n.name]
        elif isinstance(n, cst.Del):
            targets = [n.target]
        for t in targets:
            out.update(_names_in(t))
    return out
