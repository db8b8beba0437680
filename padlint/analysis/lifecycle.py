"""Row lifecycle facts: which rows of a class's persistent buffers its methods move, swap or
clear, and which buffers the method that admits a new request writes on every admission.

Computed per class from the project index (CPython ``ast``; nothing is run):

- *persistent buffers*: ``self.X`` attributes assigned an allocation anywhere in the class
  (``torch.zeros/empty/ones/full(...)``, ``np.zeros(...)``, ``*_like``, ``torch.tensor``,
  a ``CpuGpuBuffer``-like constructor or ``self._make_buffer(...)``), or a ``.numpy()`` /
  ``.cpu()`` view of one (an alias: its rows are the same memory).  The library (``torch`` or
  ``numpy``) and the number of dimensions are kept where the allocation shows them.
- *row moves*: a statement that copies one row of a buffer into another row of the same
  buffer: ``buf[dst] = buf[src]``, ``buf[dst, :n] = buf[src, :n]``, ``buf[dst] = buf[src].clone()``,
  ``buf[dst].copy_(buf[src])``.  The source row is *vacated* when the method relocates the
  request (:meth:`_Scan.relocation_evidence`; a lone copy of one row is a fork, the source keeps
  its owner).  It is *released* when a later
  statement of the same method writes it again: a reset (``buf[src].fill_(0)``,
  ``buf[src] = 0``), the destination of another move (the temporary-swap idiom), a write of
  ``buf[k:]`` or of the whole buffer.
- *view swaps*: ``a[i], a[j] = a[j], a[i]`` on a tensor (or on a numpy array indexed to less
  than its full rank): the right side is two views, so after the first store both rows hold
  the same data.  Fancy-index swaps (``a[[i, j]] = a[[j, i]]``) and list swaps are not.
- *admission*: the method(s) that write rows of the class's buffers for a new request
  (``add_request``, ``add_row``, any method whose name starts with ``add`` or contains
  ``add_req``/``admit`` and writes a row of a buffer).  For each buffer: whether every
  admission writes a row of it (:class:`Coverage`), following ``self.m(...)`` calls two levels
  deep.

The coverage criterion (what "provably overwritten before it is read as a live row" means):
admission covers a buffer for a vacated row when every path through the admitting method
that completes normally writes a row of the buffer, where

- an ``if`` covers when both its branches cover; a branch that ends in ``raise`` covers
  vacuously (no request is admitted on it);
- an ``if`` whose test (with its polarity) also guards the move (the same text, e.g.
  ``if self.use_feature:`` around both) needs only its branch on that side: when the test
  is false the move did not happen;
- an ``if``/``elif`` chain whose final ``else`` raises is a dispatch on the request's kind
  (sampling / pooling): a field written in one branch is that kind's own field; the chain
  covers it when some branch does (recorded as ``per_kind``: a request of another kind does
  not write it, and is assumed not to read it);
- loops do not cover (they may run zero times); ``with`` and ``try`` bodies do.

Everything else (a write under ``if params.allowed_token_ids:`` with no ``else``) is
*conditional*: the request that does not take that branch inherits the vacated row.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from padlint.analysis.literals import expr_text
from padlint.analysis.project import (
    ClassInfo,
    FuncNode,
    FunctionInfo,
    ModuleInfo,
    Project,
)

ALLOC_TORCH = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
               "tensor", "arange", "randn", "rand"}
ALLOC_NUMPY = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
               "array", "arange"}
TORCH_NAMES = {"torch"}
NUMPY_NAMES = {"np", "numpy"}
#: Attribute views of one logical buffer (vLLM's CpuGpuBuffer): rows of `.np` are rows of `.cpu`.
VIEWS = ("np", "cpu", "gpu")
#: In-place writes of a whole row (the receiver is the row view).
ROW_WRITERS = {"fill_", "zero_", "copy_", "fill", "masked_fill_", "index_fill_", "uniform_", "normal_"}
# those that write every element of their receiver (a view's reset, :func:`_row_views`)
_WHOLE_ROW_WRITERS = {"fill_", "zero_", "copy_", "fill"}
MAX_INLINE = 2


@dataclass(frozen=True)
class Buffer:
    """A persistent buffer of a class: ``self.<attr>`` and what its allocation shows."""

    attr: str            # the canonical attribute (``x`` for ``x.np`` and for ``x_np = x.numpy()``)
    lib: str             # "torch" | "numpy" | "" (unknown: a buffer class)
    ndim: int | None     # None when the shape is not written out
    fill: str | None     # the value a fresh row holds ("0", "False"); None for torch.empty
    line: int


@dataclass(frozen=True)
class Guard:
    """One condition a statement runs under: the test's text and its polarity.
    ``dispatch``: a branch of an ``if``/``elif`` chain whose final ``else`` raises."""

    text: str
    positive: bool
    dispatch: bool = False


@dataclass(frozen=True)
class RowMove:
    """``written`` (the target as written, e.g. ``self.a_cpu[dst]``) copied from row ``src``."""

    cls: str
    method: str
    path: str
    attr: str            # canonical buffer attribute
    written: str         # the buffer expression as written (``self.mask_cpu_tensor``)
    dst: str
    src: str
    line: int
    col: int
    end_line: int
    end_col: int
    stmt_text: str
    indent: str
    guards: tuple[Guard, ...]
    released_at: int | None   # line of the later write of the source row in the method, if any


@dataclass(frozen=True)
class ViewSwap:
    cls: str
    method: str
    path: str
    attr: str
    written: str
    left: str            # the index text of the first target (``i1``)
    right: str
    line: int
    col: int
    end_line: int
    end_col: int
    stmt_text: str
    lib: str


@dataclass(frozen=True)
class RowRelease:
    """A method that removes the request of row ``row`` (``self._req_ids[row] = None``, ``del
    self.reqs[row]``) while an object of the class keeps rows per request too: ``holder``
    (``self.block_table``), which the admitting method hands the row (``self.block_table.add_row(
    ids, row)``).  ``handled``: the method (or a method of the class it calls, two levels) does
    anything with that object (``self.block_table.clear_row(row)``, through a local, the object
    handed to a function), which may reset the row; otherwise the object's row keeps the old
    request's values.  ``buffers``: (class key, attribute) of the buffers whose
    rows the admission of the holder's classes, or of the element classes of the containers they
    hold (``MultiGroupBlockTable`` and its ``BlockTable`` elements), writes one row of
    (``BlockTable.block_table``, not the per-token ``slot_mapping``); ``resetter``: a method of the
    holder's class that clears one row, if any."""

    cls: str
    method: str
    path: str
    holder: str          # the attribute of self (``block_table``)
    buffers: tuple[tuple[str, str], ...]
    row: str
    line: int
    col: int
    end_line: int
    end_col: int
    stmt_text: str
    indent: str
    handled: bool
    resetter: str = ""


@dataclass(frozen=True)
class AdmissionGap:
    """A persistent buffer whose row the admitting method writes on some paths only, that no
    other method of the class writes (no removal resets the row, no step refreshes it) and that
    a method of the class reads (``reader``): a request admitted on a path without the write
    keeps the values the row's previous request left.  ``line``/``col``/``end_*``: the write;
    ``written``: the buffer as the write names it (``self.num_bad_words.np``); ``row``: the row
    index; ``conditions``: when the write runs; ``fix_line``/``fix_indent``: where a reset of the
    row on every admission can go (0: nowhere safe, the row's name is bound too late)."""

    cls: str
    method: str
    path: str
    attr: str
    written: str
    row: str
    conditions: tuple[str, ...]
    line: int
    col: int
    end_line: int
    end_col: int
    stmt_text: str
    reader: str
    reader_line: int
    fix_line: int = 0
    fix_indent: str = ""


@dataclass(frozen=True)
class Coverage:
    """How the admitting method(s) write a buffer's rows for a new request.

    ``status``: ``always`` (every admission writes a row), ``per_kind`` (every admission of the
    request kinds that have the field), ``guarded`` (only under the guards in ``conditions``,
    which the vacating move shares), ``conditional`` (only when ``conditions`` hold),
    ``never`` (admission does not write it), ``no_admission`` (the class has no admitting
    method).  ``line``: a write of the row in the admitting method (0 when none).
    """

    status: str
    method: str
    conditions: tuple[str, ...] = ()
    line: int = 0

    @property
    def overwrites(self) -> bool:
        return self.status in ("always", "per_kind", "guarded")


@dataclass
class ClassLifecycle:
    key: str
    name: str
    path: str
    buffers: dict[str, Buffer] = field(default_factory=dict)
    moves: list[RowMove] = field(default_factory=list)
    swaps: list[ViewSwap] = field(default_factory=list)
    admitting: tuple[str, ...] = ()
    releases: list[RowRelease] = field(default_factory=list)
    gaps: list[AdmissionGap] = field(default_factory=list)
    _cls: ClassInfo | None = field(default=None, repr=False)
    _project: Project | None = field(default=None, repr=False)
    _aliases: dict[str, str] = field(default_factory=dict, repr=False)
    _scan: _Scan | None = field(default=None, repr=False)

    def coverage(self, attr: str, move_guards: tuple[Guard, ...] = ()) -> Coverage:
        """Whether admission overwrites a row of ``attr`` before it is read as a live row
        (see the module docstring), judged for a vacating statement under ``move_guards``."""
        if not self.admitting or self._cls is None:
            return Coverage("no_admission", "")
        best: Coverage | None = None
        for name in self.admitting:
            fn = self._cls.methods[name]
            res = _Cover(self, attr, move_guards).body(fn.node.body, 0)
            cov = _coverage_of(name, res)
            if cov.overwrites:
                return cov
            if best is None or (cov.status == "conditional" and best.status == "never"):
                best = cov
        return best or Coverage("never", self.admitting[0])


# -- helpers -------------------------------------------------------------------------------

def _self_chain(node: ast.AST) -> list[str] | None:
    """``self.a.b`` -> ["a", "b"]; None when not rooted at ``self``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "self" and parts:
        return parts[::-1]
    return None


def _call_name(node: ast.AST) -> tuple[str, str] | None:
    """``torch.zeros(...)`` -> ("torch", "zeros"); ``self._make_buffer(...)`` -> ("self", ...)."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f.value.id, f.attr
    if isinstance(f, ast.Attribute):
        return "", f.attr
    if isinstance(f, ast.Name):
        return "", f.id
    return None


def _shape_ndim(call: ast.Call, name: str) -> int | None:
    if name.endswith("_like") or name in ("tensor", "array"):
        return None
    if name == "arange":
        return 1
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(args) != len(call.args):
        return None
    if name == "full":
        args = args[:1]
    for kw in call.keywords:
        if kw.arg == "size":
            args = [kw.value]
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        return len(args[0].elts) if not any(isinstance(e, ast.Starred) for e in args[0].elts) else None
    return len(args) or None


def _fill_of(call: ast.Call, name: str) -> str | None:
    base = name.removesuffix("_like")
    dtype = ""
    for kw in call.keywords:
        if kw.arg == "dtype":
            dtype = expr_text(kw.value)
        if kw.arg == "fill_value" and base == "full":
            return expr_text(kw.value)
    boolean = dtype.endswith(("bool", "bool_"))
    if base == "zeros":
        return "False" if boolean else "0"
    if base == "ones":
        return "True" if boolean else "1"
    if base == "full":  # torch.full(size, value), np.full(shape, value), full_like(x, value)
        return expr_text(call.args[1]) if len(call.args) > 1 else None
    return None


def _allocation(value: ast.AST, buffers: dict[str, Buffer]) -> tuple[str, int | None, str | None] | str | None:
    """(lib, ndim, fill) for an allocation; the alias's attribute for ``self.x.numpy()``."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in ("pin_memory", "to", "contiguous", "cuda", "share_memory_"):
        value = value.func.value
    name = _call_name(value)
    if name is None:
        return None
    owner, fname = name
    assert isinstance(value, ast.Call)
    if fname in ("numpy", "cpu") and isinstance(value.func, ast.Attribute):
        chain = _self_chain(value.func.value)
        if chain and len(chain) == 1:
            return chain[0]
        return None
    if owner in TORCH_NAMES and fname in ALLOC_TORCH:
        return "torch", _shape_ndim(value, fname), _fill_of(value, fname)
    if owner in NUMPY_NAMES and fname in ALLOC_NUMPY:
        return "numpy", _shape_ndim(value, fname), _fill_of(value, fname)
    if fname.endswith("Buffer") or fname in ("_make_buffer", "make_buffer"):
        return "", None, None
    if fname[:1].isupper() and any(k.arg == "dtype" for k in value.keywords):
        # a tensor container class given a dtype (vLLM MRV2 `UvaBackedTensor(n, dtype=...)`,
        # `StagedWriteTensor((n, k), dtype=...)`): rows of a buffer it allocates
        return "", None, None
    return None


def _index_parts(sub: ast.Subscript) -> list[ast.AST]:
    s = sub.slice
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def _is_row_index(node: ast.AST) -> bool:
    """A single row: not a slice, not a constant-free fancy list, not ``...``/None."""
    if isinstance(node, (ast.Slice, ast.List, ast.Tuple, ast.Starred)):
        return False
    if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
        return False
    return not isinstance(node, ast.Compare)  # a boolean mask is not one row


def _ends_in_exit(body: list[ast.stmt], kinds=(ast.Raise,)) -> bool:
    return bool(body) and isinstance(body[-1], kinds)


def _dispatch_chain(node: ast.If) -> list[tuple[ast.AST, list[ast.stmt]]] | None:
    """The branches of ``if A: .. elif B: .. else: raise`` (test, body); None when the chain's
    final ``else`` does not raise."""
    out: list[tuple[ast.AST, list[ast.stmt]]] = []
    cur: ast.If = node
    while True:
        out.append((cur.test, cur.body))
        if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
            cur = cur.orelse[0]
            continue
        if _ends_in_exit(cur.orelse) and len(out) >= 2:
            return out
        return None


# -- the class scan --------------------------------------------------------------------------

class _Scan:
    def __init__(self, cls: ClassInfo, mod: ModuleInfo, project: Project):
        self.cls = cls
        self.mod = mod
        self.project = project
        self.fancy: set[str] = set()
        self.local_alias: dict[str, list[str]] = {}
        self.row_views: dict[str, ast.Subscript] = {}  # see _row_views
        self._settings: set[str] | None = None  # attributes of self assigned outside __init__
        self.out = ClassLifecycle(key=cls.key, name=cls.name, path=mod.path, _cls=cls, _project=project,
                                  _scan=self)

    # buffers ---------------------------------------------------------------------------------
    def buffers(self) -> None:
        found: dict[str, Buffer] = {}
        aliases: dict[str, str] = {}
        for meth in self.cls.methods.values():
            # a node made for this scan and not kept (most classes own no buffer, and the rest
            # of the scan is skipped for them)
            for sub in ast.walk(meth.peek()):
                if isinstance(sub, ast.Assign):
                    targets, value = sub.targets, sub.value
                elif isinstance(sub, ast.AnnAssign) and sub.value is not None:
                    targets, value = [sub.target], sub.value
                else:
                    continue
                alloc = _allocation(value, found)
                if alloc is None:
                    continue
                for t in targets:
                    chain = _self_chain(t)
                    if not chain or len(chain) != 1:
                        continue
                    if isinstance(alloc, str):
                        aliases[chain[0]] = alloc
                        continue
                    lib, ndim, fill = alloc
                    prev = found.get(chain[0])
                    if prev is None:
                        found[chain[0]] = Buffer(chain[0], lib, ndim, fill, sub.lineno)
        # an alias of a buffer (`x_np = x_tensor.numpy()`) is the same rows: one canonical name
        for alias, target in aliases.items():
            if target in found:
                base = found[target]
                found.setdefault(alias, Buffer(target, "numpy" if base.lib == "torch" else base.lib,
                                               base.ndim, base.fill, base.line))
                self.out._aliases[alias] = target
        self.out.buffers = found

    def canonical(self, node: ast.AST) -> tuple[str, str] | None:
        """(canonical buffer attribute, the expression as written) for ``self.x``/``self.x.np``."""
        chain = _self_chain(node)
        if not chain and isinstance(node, ast.Name):
            chain = self.local_alias.get(node.id)
        if not chain:
            return None
        while len(chain) > 1 and chain[-1] in VIEWS:
            chain = chain[:-1]
        if len(chain) != 1 or chain[0] not in self.out.buffers:
            return None
        attr = self.out._aliases.get(chain[0], chain[0])
        return attr, expr_text(node)

    # moves and swaps -------------------------------------------------------------------------
    def row_ref(self, node: ast.AST) -> tuple[str, str, str, ast.Subscript] | None:
        """(attr, written, row index text, subscript) for ``self.buf[i]`` / ``self.buf[i, :n]``;
        also through ``.clone()``/``.copy()``/``.detach()`` of one."""
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("clone", "copy", "detach") and not node.args:
            node = node.func.value
        if not isinstance(node, ast.Subscript):
            return None
        inner = node
        # `self.buf[i][cols]`: the row is the inner subscript
        while isinstance(inner.value, ast.Subscript):
            inner = inner.value
        buf = self.canonical(inner.value)
        if buf is None:
            return None
        parts = _index_parts(inner)
        if not parts or not _is_row_index(parts[0]):
            return None
        if isinstance(parts[0], ast.Name) and parts[0].id in self.fancy:
            return None  # `idx = [a, b]; buf[idx]`: several rows (a permutation), not one
        return buf[0], buf[1], expr_text(parts[0]), node

    def _through_row_view(self, target: ast.AST) -> ast.AST:
        """The row ``self.buf[i]`` a write through a local view of it writes (``row.fill_(v)``,
        ``row[:] = v``, ``row[...] = v`` with ``row = self.buf[i]``, see :func:`_row_views`);
        ``target`` itself otherwise."""
        if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Load) and target.id in self.row_views:
            return self.row_views[target.id]  # the receiver of `row.fill_(v)` (not `row = ...`)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and target.value.id in self.row_views and _whole_index(target):
            return self.row_views[target.value.id]
        return target

    def methods(self) -> None:
        for meth in self.cls.methods.values():
            if meth.name == "__init__":
                continue
            self.method(meth)

    def method(self, meth: FunctionInfo) -> None:
        self.fancy = _fancy_names(meth.node) | _several_params(meth.node)
        self.local_alias = _local_aliases(meth.node)
        self.row_views = _row_views(meth.node)
        moves: list[tuple[RowMove, ast.stmt]] = []
        writes: list[tuple[str, str | None, int]] = []  # (attr, row text or None for a range, line)
        calls: list[tuple[int, set[str], set[str], bool]] = []  # see row_calls
        for stmt, guards in _walk(meth.node.body, ()):
            lines = self.mod.lines
            indent = lines[stmt.lineno - 1][:stmt.col_offset] if stmt.lineno <= len(lines) else ""
            move = self.move_of(stmt)
            if move is not None:
                attr, written, dst, src = move
                moves.append((RowMove(self.cls.key, meth.name, self.mod.path, attr, written, dst, src,
                                      stmt.lineno, stmt.col_offset + 1, stmt.end_lineno or stmt.lineno,
                                      (stmt.end_col_offset or 0) + 1, expr_text(stmt), indent, guards, None),
                              stmt))
            swap = self.swap_of(stmt)
            if swap is not None:
                self.out.swaps.append(ViewSwap(self.cls.key, meth.name, self.mod.path, *swap[:4],
                                               stmt.lineno, stmt.col_offset + 1, stmt.end_lineno or stmt.lineno,
                                               (stmt.end_col_offset or 0) + 1, expr_text(stmt), swap[4]))
            writes.extend(self.writes_of(stmt))
            calls.extend(self.row_calls(stmt))
        evidence = self.relocation_evidence(meth, [(mv.src, mv.dst) for mv, _s in moves])
        for mv, stmt in moves:
            if (mv.src, mv.dst) not in evidence:
                continue  # a copy of one row (a fork: the source keeps its owner), not a relocation
            after = stmt.end_lineno or stmt.lineno
            later = [line for attr, row, line in writes
                     if attr == mv.attr and line > after and (row is None or row == mv.src)]
            # a helper handed the row after the move may reset it (`self.clear_row(src)`, a method
            # of the class; `zero_row(self.table, src)`, a function handed the buffer too)
            later += [line for line, rows, bufs, own in calls
                      if line > after and mv.src in rows and (own or mv.attr in bufs)]
            if later:
                mv = RowMove(**{**mv.__dict__, "released_at": min(later)})
            self.out.moves.append(mv)

    def relocation_evidence(self, meth: FunctionInfo, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
        """The (src, dst) row pairs that ``meth`` *relocates* (the source row's request moves to
        ``dst``, so ``src`` is vacated), as opposed to copying a row whose owner stays (a fork).

        Evidence, any of: the method's name says so (move, condense, compact, swap, relocate,
        defrag); two or more attributes of ``self`` (buffers or lists) are copied from ``src``
        to ``dst`` (the request's state goes along); the source row of an attribute is cleared
        (``self.ids[src] = None``, ``self.d.pop(src)``, ``del self.ids[src]``)."""
        low = meth.name.lower()
        if any(w in low for w in ("move", "condense", "compact", "swap", "relocat", "defrag")):
            return set(pairs)
        copied: dict[tuple[str, str], set[str]] = {}
        cleared: set[str] = set()
        for stmt, _g in _walk(meth.node.body, ()):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                t, v = stmt.targets[0], stmt.value
                if isinstance(t, ast.Subscript) and isinstance(v, ast.Subscript):
                    ct, cv = _self_chain(t.value), _self_chain(v.value)
                    if ct and ct == cv:
                        key = (expr_text(_index_parts(v)[0]), expr_text(_index_parts(t)[0]))
                        copied.setdefault(key, set()).add(".".join(ct))
                if isinstance(t, ast.Subscript) and _self_chain(t.value) and isinstance(v, ast.Constant) \
                        and v.value is None:
                    cleared.add(expr_text(_index_parts(t)[0]))
            elif isinstance(stmt, ast.Delete):
                for t in stmt.targets:
                    if isinstance(t, ast.Subscript) and _self_chain(t.value):
                        cleared.add(expr_text(_index_parts(t)[0]))
            for n in ast.walk(stmt):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop" \
                        and _self_chain(n.func.value) and n.args:
                    cleared.add(expr_text(n.args[0]))
        return {p for p in pairs if len(copied.get(p, ())) >= 2 or p[0] in cleared}

    def move_of(self, stmt: ast.stmt) -> tuple[str, str, str, str] | None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            dst, src = self.row_ref(stmt.targets[0]), self.row_ref(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "copy_" \
                and len(stmt.value.args) >= 1:
            dst, src = self.row_ref(stmt.value.func.value), self.row_ref(stmt.value.args[0])
        else:
            return None
        if dst is None or src is None or dst[0] != src[0] or dst[2] == src[2]:
            return None
        return dst[0], dst[1], dst[2], src[2]

    def swap_of(self, stmt: ast.stmt) -> tuple[str, str, str, str, str] | None:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List))):
            return None
        left, right = stmt.targets[0].elts, stmt.value.elts
        if len(left) != 2 or len(right) != 2:
            return None
        refs_l = [self.row_ref(e) for e in left]
        refs_r = [self.row_ref(e) for e in right]
        if any(r is None for r in refs_l + refs_r):
            return None
        if len({r[0] for r in refs_l + refs_r}) != 1:  # type: ignore[index]
            return None
        (a, wa, i1, s1), (_b, _wb, i2, _s2) = refs_l  # type: ignore[misc]
        if i1 == i2 or refs_r[0][2] != i2 or refs_r[1][2] != i1:  # type: ignore[index]
            return None
        if any(isinstance(e, ast.Call) for e in right):
            return None  # `.clone()`/`.copy()` on the right: copies, not views
        inner = s1
        while isinstance(inner.value, ast.Subscript):
            inner = inner.value
        chain = _self_chain(inner.value) or []
        raw = chain[0] if chain else ""
        buf = self.out.buffers.get(raw) or self.out.buffers.get(a)
        if buf is None:
            return None
        if chain and chain[-1] == "np":
            lib = "numpy"
        elif chain and chain[-1] in ("cpu", "gpu"):
            lib = "torch"
        else:
            lib = buf.lib
        if lib == "numpy":
            # a numpy row indexed to full rank is a scalar copy: only partial indexing gives views
            parts = [p for sub in _subscripts(s1) for p in _index_parts(sub)]
            if buf.ndim is None or (len(parts) >= buf.ndim and all(_is_row_index(p) for p in parts)):
                return None
        elif lib != "torch":
            return None
        return a, wa, i1, i2, lib

    def row_calls(self, stmt: ast.stmt) -> list[tuple[int, set[str], set[str], bool]]:
        """The calls in ``stmt`` as (line, texts of its arguments, buffers among them, whether it
        calls a method of ``self``): a helper that may write a row it is handed."""
        out = []
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Call):
                continue
            args = [*n.args, *(k.value for k in n.keywords)]
            own = isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id == "self"
            bufs = {b[0] for b in (self.canonical(a) for a in args) if b is not None}
            out.append((stmt.lineno, {expr_text(a) for a in args}, bufs, own))
        return out

    def writes_of(self, stmt: ast.stmt) -> list[tuple[str, str | None, int]]:
        """Rows of buffers ``stmt`` writes: (attr, row index text or None for a range/whole)."""
        out: list[tuple[str, str | None, int]] = []
        for t in _write_targets(stmt):
            t = self._through_row_view(t)
            whole = self.canonical(t)
            if whole is not None:
                out.append((whole[0], None, stmt.lineno))
                continue
            ref = self.row_ref(t)
            if ref is not None:
                out.append((ref[0], ref[2], stmt.lineno))
                continue
            if isinstance(t, ast.Subscript):
                inner = t
                while isinstance(inner.value, ast.Subscript):
                    inner = inner.value
                buf = self.canonical(inner.value)
                if buf is not None:
                    parts = _index_parts(inner)
                    if parts and isinstance(parts[0], ast.Slice):
                        out.append((buf[0], None, stmt.lineno))  # `buf[k:] = 0`: a range of rows
        return out

    # releases -------------------------------------------------------------------------------
    def releases(self) -> None:
        """Row releases (:class:`RowRelease`) of the objects that admission hands a row to.

        The admitting method hands a row name to an object of the class's (``self.block_table.
        add_row(ids, req_index)``, positionally or by keyword) and records the request in a
        *row table* of its own under that name (``self._req_ids[req_index] = req_id``); a method
        that clears the row table's entry of a row (``self._req_ids[i] = None``, ``del
        self._req_ids[i]``) removes that row's request.  A dict keyed by request id, or a field
        admission does not write by the handed row, is no row table."""
        holders: dict[str, list[tuple[str, str]]] = {}  # attribute -> (class key, buffer) it keeps by row
        handed: set[str] = set()  # the row names admission hands to those objects
        tables: set[str] = set()  # attributes admission writes under a handed row name
        for name in self.out.admitting:
            node = self.cls.methods[name].node
            for call in ast.walk(node):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                    continue
                names = [a.id for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)]
                chain = _self_chain(call.func.value)
                if not names or chain is None or len(chain) != 1 or chain[0] in self.out.buffers:
                    continue
                if chain[0] not in holders:
                    rows = self._holder_rows(chain[0])
                    if not rows:
                        continue
                    holders[chain[0]] = rows
                handed.update(names)
            for sub in ast.walk(node):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] \
                    if isinstance(sub, ast.AnnAssign) else []
                for t in targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Name) and t.slice.id in handed:
                        chain = _self_chain(t.value)
                        if chain and len(chain) == 1:
                            tables.add(chain[0])
        if not holders or not tables:
            return
        for meth in self.cls.methods.values():
            if meth.name in self.out.admitting or meth.name == "__init__":
                continue
            released = _released_row(meth.node, tables)
            if released is None:
                continue
            stmt, row = released
            lines = self.mod.lines
            indent = lines[stmt.lineno - 1][:stmt.col_offset] if stmt.lineno <= len(lines) else ""
            reached = _self_methods(self.project, self.cls, [meth.name])
            for attr, rows in holders.items():
                # anything the method (or a method of self it calls, two levels) does with that
                # object may reset the row: a call on it (directly, through a local bound to it,
                # by keyword or with a list of rows), or the object handed to a function
                handled = any(_uses_holder(fn.node, attr) for fn in reached)
                self.out.releases.append(RowRelease(
                    self.cls.key, meth.name, self.mod.path, attr, tuple(rows), row, stmt.lineno,
                    stmt.col_offset + 1, stmt.end_lineno or stmt.lineno, (stmt.end_col_offset or 0) + 1,
                    expr_text(stmt), indent, handled, self._resetter(attr)))

    def _holder_rows(self, attr: str) -> list[tuple[str, str]]:
        """(class key, buffer) pairs the object ``self.<attr>`` keeps one row of per request: the
        buffers its class's admission (or that of the element classes of its containers, or of
        what its ``__getitem__`` returns) writes one row of."""
        classes = self.project.attr_classes(self.cls, attr)
        keys = {c.key for c in classes}
        for c in classes:
            for a in c.attr_types.keys() | c.elem_types.keys():
                keys.update(e.key for e in self.project.attr_elem_classes(c, a))
            keys.update(e.key for e in self.project.item_classes(c))  # `__getitem__ -> BlockTable`
        return sorted({(k, a) for k in keys for a in self._admitted_rows(k)})

    def _admitted_rows(self, cls_key: str) -> set[str]:
        """Buffers of class ``cls_key`` whose one row its admitting methods (or the methods of
        ``self`` they call, two levels) write: the buffers it keeps per request row."""
        cls = self.project.class_info(cls_key)
        mod = self.project.module(cls.module) if cls is not None else None
        if cls is None or mod is None:
            return set()
        scan = _Scan(cls, mod, self.project)
        scan.buffers()
        if not scan.out.buffers:
            return set()
        scan.admission()
        out: set[str] = set()
        for meth in _self_methods(self.project, cls, scan.out.admitting):
            scan.fancy = _fancy_names(meth.node) | _several_params(meth.node)
            scan.local_alias = _local_aliases(meth.node)
            scan.row_views = _row_views(meth.node)
            for stmt, _g in _walk(meth.node.body, ()):
                out.update(attr for attr, row, _line in scan.writes_of(stmt) if row is not None)
        return out

    def _resetter(self, attr: str) -> str:
        """A method of ``self.<attr>``'s class (every class it may be) that clears one row: its
        name says so (``clear_row``, ``reset_row``) and it takes one argument besides self."""
        found: set[str] = set()
        for c in self.project.attr_classes(self.cls, attr):
            names = {m.name for m in c.methods.values()
                     if re.search(r"(clear|reset|zero)", m.name) and "row" in m.name
                     and len(m.node.args.args) == 2}
            if not names:
                return ""
            found |= names
        return sorted(found)[0] if len(found) == 1 else ""

    # admission ------------------------------------------------------------------------------
    def admission(self) -> None:
        names = []
        for name, meth in self.cls.methods.items():
            low = name.lower().lstrip("_")
            if not (low.startswith("add") or "add_req" in low or "admit" in low):
                continue
            if any(self.writes_of(s) for s, _g in _walk(meth.node.body, ())) or _calls_self(meth.node):
                names.append(name)
        self.out.admitting = tuple(names)

    def gaps(self) -> None:
        """Admission gaps (:class:`AdmissionGap`): buffers admission writes one row of on some
        paths only, written by no other method of the class and read by one."""
        if not self.out.admitting:
            return
        admission = _self_methods(self.project, self.cls, self.out.admitting)
        own = {fn.name for fn in admission}
        written_elsewhere: set[str] = set()
        readers: dict[str, tuple[str, int]] = {}
        handed: dict[str, tuple[str, int]] = {}
        for meth in self.cls.methods.values():
            if meth.name in own or meth.name == "__init__":
                continue
            self.fancy = _fancy_names(meth.node) | _several_params(meth.node)
            self.local_alias = _local_aliases(meth.node)
            self.row_views = _row_views(meth.node)
            # the reset of a row a move vacated clears that row only, not a row a removal freed
            released = {(mv.attr, mv.released_at) for mv in self.out.moves
                        if mv.method == meth.name and mv.released_at is not None}
            copies: set[int] = set()  # lines of row copies (moves, swaps)
            not_reads: set[int] = set()  # ids of expressions written into or tested against None
            for stmt, _g in _walk(meth.node.body, ()):
                if self._inner_copy(stmt) or self.swap_of(stmt) is not None:
                    # a row copied from another row carries a request's values: it neither
                    # resets a row nor reads one for a consumer
                    copies.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
                    continue
                written_elsewhere.update(attr for attr, _row, line in self.writes_of(stmt)
                                         if (attr, line) not in released)
                not_reads.update(_write_bases(stmt))
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Name) \
                        and self.row_views.get(stmt.targets[0].id) is stmt.value:
                    # `row = self.buf[i]` whose every use writes it: no read of the row
                    node = stmt.value
                    while isinstance(node, (ast.Subscript, ast.Attribute)):
                        not_reads.add(id(node))
                        node = node.value
            for n in ast.walk(meth.node):  # breadth first: a comparison before its operands
                # `self.x is None`: a test of the attribute, no read of the buffer's rows
                if isinstance(n, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):
                    not_reads.update(id(e) for e in (n.left, *n.comparators))
                if getattr(n, "lineno", 0) in copies or id(n) in not_reads:
                    continue
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
                    buf = self.canonical(n)
                    if buf is not None and buf[0] not in readers:
                        readers[buf[0]] = (meth.name, n.lineno)
                # the reader to name: a call handed the buffer (a kernel launch, a function)
                if isinstance(n, ast.Call):
                    for a in (*n.args, *(k.value for k in n.keywords)):
                        buf = self.canonical(a)
                        if buf is not None and buf[0] not in handed:
                            handed[buf[0]] = (meth.name, a.lineno)
        for attr in sorted(self.out.buffers):
            if attr != self.out._aliases.get(attr, attr) or attr in written_elsewhere or attr not in readers:
                continue
            cov = self.out.coverage(attr)
            if cov.status != "conditional" or not cov.line:
                continue
            if cov.conditions and all(self._invariant(c) for c in cov.conditions):
                continue  # written for every request or for none: a setting of the object
            fn = self.cls.methods.get(cov.method)
            if fn is None:
                continue
            found = self._row_write(fn, attr, cov.line)
            if found is None:
                continue  # the write is in a helper of the admitting method: not located here
            stmt, written, row = found
            if self._length_prefixed(fn, stmt, attr, row):
                continue
            lines = self.mod.lines
            fix_line, fix_indent = _fix_anchor(fn.node, row, lines)
            reader, reader_line = handed.get(attr) or readers[attr]
            self.out.gaps.append(AdmissionGap(
                self.cls.key, cov.method, self.mod.path, attr, written, row, cov.conditions, stmt.lineno,
                stmt.col_offset + 1, stmt.end_lineno or stmt.lineno, (stmt.end_col_offset or 0) + 1,
                expr_text(stmt), reader, reader_line, fix_line, fix_indent))

    def _length_prefixed(self, fn: FunctionInfo, stmt: ast.stmt, attr: str, row: str) -> bool:
        """Whether the conditional row write ``stmt`` fills the row's first ``n`` columns
        (``self.ids[r, :n] = ...``, ``self.ids[r][:n] = ...``) where the same method stores that
        ``n`` into the row of a per-request count (``self.num_ids[r] = n``) that every admission
        writes (``self.num_ids[r] = 0`` on the other paths).  The code then keeps the row
        length-prefixed: its own write leaves the columns past ``n`` as the previous request
        left them, so the row's valid part is ``[:count]``, and admission writes that part on
        every path (empty where the count is 0)."""
        bound = None
        for t in _write_targets(stmt):
            ref = self.row_ref(t)
            if ref is None or ref[0] != attr:
                continue
            sub = ref[3]
            if sub.value is not None and isinstance(sub.value, ast.Subscript):
                cols = _index_parts(sub)  # `self.buf[r][:n]`
            else:
                cols = _index_parts(sub)[1:]  # `self.buf[r, :n]`
            if len(cols) == 1 and isinstance(cols[0], ast.Slice) and cols[0].step is None \
                    and cols[0].upper is not None \
                    and (cols[0].lower is None or (isinstance(cols[0].lower, ast.Constant)
                                                   and cols[0].lower.value == 0)):
                bound = expr_text(cols[0].upper)
        if bound is None:
            return False
        for other, _g in _walk(fn.node.body, ()):
            if not isinstance(other, ast.Assign) or expr_text(other.value) != bound:
                continue
            for t in other.targets:
                ref = self.row_ref(t)
                if ref is None or ref[0] == attr or ref[2] != row or ref[3].value is None \
                        or isinstance(ref[3].value, ast.Subscript) or len(_index_parts(ref[3])) != 1:
                    continue
                if self.out.coverage(ref[0]).status == "always":
                    return True
        return False

    def _inner_copy(self, stmt: ast.stmt) -> bool:
        """Rows of a buffer copied into rows of the same buffer (a move, ``b[d] = b[s]``,
        ``b[d].copy_(b[s])``; a permutation, ``b[idx] = b[rev]``): no read for a consumer, no
        reset."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            dst, src = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "copy_" \
                and stmt.value.args:
            dst, src = stmt.value.func.value, stmt.value.args[0]
        else:
            return False
        while isinstance(src, ast.Call) and isinstance(src.func, ast.Attribute) \
                and src.func.attr in ("clone", "copy", "detach") and not src.args:
            src = src.func.value

        def base(node: ast.AST):
            if not isinstance(node, ast.Subscript):
                return None
            while isinstance(node, ast.Subscript):
                node = node.value
            b = self.canonical(node)
            return b[0] if b is not None else None

        b = base(dst)
        return b is not None and b == base(src)

    def _invariant(self, condition: str) -> bool:
        """Whether a condition reads only settings of the object: attributes of ``self`` that no
        method but ``__init__`` assigns, literals and upper-case constants (``self.enabled``,
        ``self.decoder_layers is not None``): the same for every request admitted."""
        try:
            tree = ast.parse(condition, mode="eval")
        except SyntaxError:
            return False
        if self._settings is None:
            assigned: set[str] = set()
            for meth in self.cls.methods.values():
                if meth.name == "__init__":
                    continue
                for n in ast.walk(meth.node):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target] \
                        if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
                    for t in targets:
                        for sub in ast.walk(t):
                            chain = _self_chain(sub) if isinstance(sub, ast.Attribute) else None
                            if chain:
                                assigned.add(chain[0])
            self._settings = assigned
        for n in ast.walk(tree.body):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                if n.attr in self._settings or n.attr in self.out.buffers:
                    return False
            elif isinstance(n, ast.Name) and n.id != "self" and not n.id.isupper():
                return False
            elif isinstance(n, (ast.Call, ast.Subscript)):
                return False
        return True

    def _row_write(self, fn: FunctionInfo, attr: str, line: int) -> tuple[ast.stmt, str, str] | None:
        """The statement of ``fn`` at ``line`` that writes one row of ``attr``: (statement, the
        buffer as written, the row index text)."""
        self.fancy = _fancy_names(fn.node) | _several_params(fn.node)
        self.local_alias = _local_aliases(fn.node)
        self.row_views = _row_views(fn.node)
        for stmt, _g in _walk(fn.node.body, ()):
            if stmt.lineno != line:
                continue
            for t in _write_targets(stmt):
                ref = self.row_ref(self._through_row_view(t))
                if ref is not None and ref[0] == attr:
                    inner = ref[3]
                    while isinstance(inner.value, ast.Subscript):
                        inner = inner.value
                    return stmt, expr_text(inner.value), ref[2]
        return None


def _write_targets(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions ``stmt`` writes into: assignment targets (each element of a tuple target),
    the receiver of an in-place row writer (``x[i].fill_(v)``)."""
    if isinstance(stmt, ast.Assign):
        return [e for t in stmt.targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in ROW_WRITERS:
        return [stmt.value.func.value]
    return []


def _write_bases(stmt: ast.stmt) -> set[int]:
    """The ``id`` of each node on the chain of an expression ``stmt`` writes into without
    reading it (``self.x.np`` and ``self.x`` in ``self.x.np[i] = v`` or ``self.x[i].fill_(v)``)."""
    out: set[int] = set()
    # (`x[i] += v` reads the row it writes)
    for node in _write_targets(stmt) if not isinstance(stmt, ast.AugAssign) else ():
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            out.add(id(node))
            node = node.value
    return out


def _fix_anchor(fn: FuncNode, row: str, lines: list[str]) -> tuple[int, str]:
    """(line, indent) before which a statement of ``fn``'s body can write row ``row`` on every
    path: the body's first statement (after a docstring) when ``row`` is a parameter, else the
    statement after the top-level assignment that binds it; (0, "") when neither."""
    body = fn.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0
    a = fn.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    at: int | None = start if row in params else None
    if at is None:
        for i, stmt in enumerate(body):
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(
                    isinstance(t, ast.Name) and t.id == row
                    for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
                at = i + 1
                break
    if at is None or at >= len(body):
        return 0, ""
    stmt = body[at]
    if getattr(stmt, "decorator_list", None):
        return 0, ""  # a decorated nested definition: its line is not where its text starts
    text = lines[stmt.lineno - 1] if stmt.lineno <= len(lines) else ""
    return stmt.lineno, text[:stmt.col_offset]


def _local_aliases(fn: ast.AST) -> dict[str, list[str]]:
    """Local names bound once to an attribute chain of ``self`` (``bt = self.block_table.np``)."""
    out: dict[str, list[str]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            chain = _self_chain(n.value)
            name = n.targets[0].id
            if chain and name not in out:
                out[name] = chain
            elif name in out:
                out[name] = []
    stores: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    return {k: v for k, v in out.items() if v and stores.get(k) == 1}


def _whole_index(sub: ast.Subscript) -> bool:
    """``x[:]``, ``x[...]``, ``x[:, :]``: every element."""
    parts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    return all(isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None
               or isinstance(p, ast.Constant) and p.value is Ellipsis for p in parts)


def _row_views(fn: ast.AST) -> dict[str, ast.Subscript]:
    """Locals bound once to a subscript of an attribute chain of ``self`` (``row =
    self.mask[i]``) and used only to write every element of it (``row.fill_(v)``, ``row.zero_()``,
    ``row[:] = v``): a reset of that row through a view.  Any other use (a read, an argument, a
    partial write) keeps the name out: the binding is then a read as before."""
    bound: dict[str, ast.Subscript] = {}
    stores: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Subscript) and _self_chain(n.value.value):
            bound[n.targets[0].id] = n.value
    cand = {k: v for k, v in bound.items() if stores.get(k) == 1}
    if not cand:
        return {}
    ok_uses: set[int] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
                and n.value.func.attr in _WHOLE_ROW_WRITERS and isinstance(n.value.func.value, ast.Name):
            ok_uses.add(id(n.value.func.value))
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and _whole_index(t):
                    ok_uses.add(id(t.value))
    loaded: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in cand:
            if id(n) not in ok_uses:
                cand.pop(n.id)
            else:
                loaded.add(n.id)
    return {k: v for k, v in cand.items() if k in loaded}  # bound and never written: no reset


def _several_params(fn: FuncNode) -> set[str]:
    """Parameters annotated as several indices (``torch.Tensor``, ``list[int]``, ``Sequence``,
    ``np.ndarray``): ``buf[idx]`` with one of them is a batch of rows, not one request's row."""
    out: set[str] = set()
    a = fn.args
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
        if arg.annotation is None:
            continue
        ann = expr_text(arg.annotation)
        if any(w in ann for w in ("Tensor", "List", "list", "Sequence", "ndarray", "Iterable", "tuple", "Tuple")):
            out.add(arg.arg)
    # locals computed from them (`src = src_index.to(torch.long)`), to a fixpoint
    changed = bool(out)
    while changed:
        changed = False
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and n.targets[0].id not in out \
                    and any(isinstance(x, ast.Name) and x.id in out for x in ast.walk(n.value)):
                out.add(n.targets[0].id)
                changed = True
    return out


def _fancy_names(fn: ast.AST) -> set[str]:
    """Local names assigned a list, tuple, array or tensor of indices (``idx = [a, b]``)."""
    def several(value: ast.AST) -> bool:
        if isinstance(value, (ast.List, ast.ListComp)):
            return True
        return isinstance(value, ast.Call) and isinstance(value.func, (ast.Attribute, ast.Name)) and \
            expr_text(value.func).rsplit(".", 1)[-1] in ("tensor", "array", "asarray", "arange", "nonzero", "where")

    out: set[str] = set()
    for n in ast.walk(fn):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            if isinstance(t, ast.Name) and (several(n.value) or isinstance(n.value, ast.Tuple)):
                out.add(t.id)
            elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, (ast.Tuple, ast.List)) \
                    and len(t.elts) == len(n.value.elts):
                out.update(e.id for e, v in zip(t.elts, n.value.elts) if isinstance(e, ast.Name) and several(v))
    return out


def _subscripts(node: ast.Subscript) -> list[ast.Subscript]:
    """``a[i][j]`` -> [a[i], a[i][j]] (innermost first)."""
    out = [node]
    while isinstance(out[0].value, ast.Subscript):
        out.insert(0, out[0].value)
    return out


def _self_methods(project: Project, cls: ClassInfo, names) -> list[FunctionInfo]:
    """The methods ``names`` of ``cls`` and the methods of the class they call on ``self``, two
    levels deep (:data:`MAX_INLINE`), each once."""
    out: list[FunctionInfo] = []
    todo, seen = [(n, 0) for n in names], set()
    while todo:
        name, depth = todo.pop()
        fn = project.find_method(cls, name)
        if fn is None or name in seen:
            continue
        seen.add(name)
        out.append(fn)
        if depth < MAX_INLINE:
            todo.extend((n.func.attr, depth + 1) for n in ast.walk(fn.node)
                        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                        and isinstance(n.func.value, ast.Name) and n.func.value.id == "self")
    return out


def _uses_holder(fn: FuncNode, attr: str) -> bool:
    """Whether ``fn`` calls a method of ``self.<attr>`` (also through a local bound to it) or
    hands ``self.<attr>`` to a call."""
    aliases = {n.targets[0].id for n in ast.walk(fn)
               if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
               and _self_chain(n.value) == [attr]}
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        if isinstance(n.func, ast.Attribute):
            recv = n.func.value
            if _self_chain(recv) == [attr] or (isinstance(recv, ast.Name) and recv.id in aliases):
                return True
        if any(_self_chain(a) == [attr] for a in (*n.args, *(k.value for k in n.keywords))):
            return True
    return False


def _released_row(fn: FuncNode, tables: set[str]) -> tuple[ast.stmt, str] | None:
    """The first statement of ``fn`` that removes the request of one row from one of the row
    tables ``tables`` (``self._req_ids[i] = None``, ``del self._req_ids[i]``), and the row's
    name; None when there is none."""
    for stmt, _g in _walk(fn.body, ()):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            targets = stmt.targets
        elif isinstance(stmt, ast.Delete):
            targets = stmt.targets
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Name) \
                    and (_self_chain(t.value) or [""])[0] in tables and len(_self_chain(t.value) or []) == 1:
                return stmt, t.slice.id
    return None


def _calls_self(fn: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "self" for n in ast.walk(fn))


def _cond_text(test: ast.AST) -> str:
    """A test as a condition: ``(p := req.params)`` reads as ``req.params``."""
    return expr_text(test.value if isinstance(test, ast.NamedExpr) else test)


def _negated(test: ast.AST) -> str:
    """The text of ``not test``: ``x`` for ``not x``, ``not x`` for ``x``, ``not (a and b)``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _cond_text(test.operand)
    inverse = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn,
               ast.NotIn: ast.In, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in inverse:
        return expr_text(ast.Compare(test.left, [inverse[type(test.ops[0])]()], test.comparators))
    t = _cond_text(test)
    return f"not {t}" if isinstance(test, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.NamedExpr)) \
        else f"not ({t})"


def _walk(body: list[ast.stmt], guards: tuple[Guard, ...]):
    """Every simple statement of ``body`` (nested blocks included, not nested functions) with
    the guards it runs under.  ``if X: continue/return/raise/break`` adds ``not X`` to the
    statements after it."""
    extra: tuple[Guard, ...] = ()
    for stmt in body:
        g = guards + extra
        if isinstance(stmt, ast.If):
            chain = _dispatch_chain(stmt)
            t = _cond_text(stmt.test)
            yield from _walk(stmt.body, g + (Guard(t, True, chain is not None),))
            yield from _walk(stmt.orelse, g + (Guard(t, False),))
            if not stmt.orelse and _ends_in_exit(stmt.body, (ast.Continue, ast.Return, ast.Raise, ast.Break)):
                extra = extra + (Guard(t, False),)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from _walk(stmt.body, g)
            yield from _walk(stmt.orelse, g)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _walk(stmt.body, g)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from _walk(part, g)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            yield stmt, g


@dataclass
class _Result:
    """What one block does for a buffer: ``covers`` on every normal path; ``per_kind`` when that
    relies on a kind dispatch; ``guarded`` when on a guard the move shares; ``line`` of a write;
    ``conditions`` under which a write happens when it does not cover."""

    covers: bool = False
    exits: bool = False
    #: some path of the block returned (the request admitted) without writing the buffer
    ends: bool = False
    per_kind: bool = False
    guarded: tuple[str, ...] = ()
    line: int = 0
    conditions: tuple[str, ...] = ()
    #: with ``ends``: the conditions under which the block does not return (``not X`` for an
    #: ``if X: return``), under which a later write runs
    ends_conditions: tuple[str, ...] = ()


class _Cover:
    def __init__(self, life: ClassLifecycle, attr: str, move_guards: tuple[Guard, ...]):
        self.life = life
        self.attr = attr
        self.move_guards = {(g.text, g.positive) for g in move_guards}
        self.scan = life._scan

    def body(self, stmts: list[ast.stmt], depth: int) -> _Result:
        acc = _Result()
        ended: tuple[str, ...] = ()  # the conditions under which no earlier return was taken
        for stmt in stmts:
            r = self.stmt(stmt, depth)
            if r.line and not acc.line:
                acc.line = r.line
                if acc.ends:
                    # written only past an earlier return: under the conditions that skip it
                    acc.conditions = ended + (r.conditions if not r.covers else ())
            if not acc.conditions and r.conditions:
                acc.conditions = r.conditions
            acc.per_kind = acc.per_kind or r.per_kind
            acc.guarded = acc.guarded or r.guarded
            if r.covers and not acc.ends:
                acc.covers = True
                return acc
            if r.exits and not acc.ends:
                acc.exits = True
                return acc
            if r.ends and not acc.ends:
                # a path returned without writing: nothing after it covers every admission; read
                # on to find the write (its line and the conditions it runs under)
                acc.ends = True
                ended = r.ends_conditions
            if acc.ends and (r.covers or r.exits or (r.ends and isinstance(stmt, ast.Return))):
                return acc
        return acc

    def stmt(self, stmt: ast.stmt, depth: int) -> _Result:
        if isinstance(stmt, ast.Raise):
            return _Result(exits=True)
        if isinstance(stmt, ast.Return):
            covers = self._calls_cover(stmt, depth).covers
            return _Result(covers=covers, ends=not covers, line=0)
        if isinstance(stmt, ast.If):
            return self.if_(stmt, depth)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            inner = self.body(stmt.body, depth)
            return _Result(line=inner.line, ends=inner.ends, conditions=inner.conditions or
                           ((f"the loop `{expr_text(stmt.iter if not isinstance(stmt, ast.While) else stmt.test)}` runs",)
                            if inner.line else ()))
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self.body(stmt.body, depth)
        if isinstance(stmt, ast.Try):
            return self.body(stmt.body, depth)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return _Result()
        for attr, row, _line in self.scan.writes_of(stmt):
            if attr == self.attr and row is not None:
                return _Result(covers=True, line=stmt.lineno)
        return self._calls_cover(stmt, depth)

    def _writes_unless_equal(self, node: ast.If) -> bool:
        """``if X != v: X = v`` (``X`` a row of the buffer): the row holds ``v`` either way."""
        t = node.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.NotEq)):
            return False
        left, right = expr_text(t.left), expr_text(t.comparators[0])
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and expr_text(stmt.targets[0]) == left \
                    and expr_text(stmt.value) == right and any(
                        attr == self.attr and row is not None for attr, row, _l in self.scan.writes_of(stmt)):
                return True
        return False

    def _calls_cover(self, stmt: ast.stmt, depth: int) -> _Result:
        if depth >= MAX_INLINE or self.life._cls is None:
            return _Result()
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
                callee = self.life._cls.methods.get(n.func.attr)
                if callee is None:
                    continue
                r = self.body(callee.node.body, depth + 1)
                if r.covers or r.line:
                    return _Result(covers=r.covers, per_kind=r.per_kind, guarded=r.guarded, line=r.line,
                                   conditions=r.conditions)
        return _Result()

    def if_(self, node: ast.If, depth: int) -> _Result:
        t = _cond_text(node.test)
        chain = _dispatch_chain(node)
        if chain is not None:
            results = [self.body(b, depth) for _t, b in chain]
            line = next((r.line for r in results if r.line), 0)
            if any(r.ends for r in results):
                conditions = next(((_cond_text(test),) + r.conditions for (test, _b), r in zip(chain, results)
                                   if r.line), ())
                return _Result(ends=True, line=line, conditions=conditions)
            if all(r.covers for r in results):
                return _Result(covers=True, line=line)
            if any(r.covers for r in results):
                return _Result(covers=True, per_kind=True, line=line)
            conditions = next(((_cond_text(test),) + r.conditions for (test, _b), r in zip(chain, results) if r.line), ())
            return _Result(line=line, conditions=conditions)
        yes = self.body(node.body, depth)
        no = self.body(node.orelse, depth)
        line = yes.line or no.line
        if not node.orelse and self._writes_unless_equal(node):
            # `if buf[i] != v: buf[i] = v`: the row holds `v` on both paths
            return _Result(covers=True, line=line)
        if (t, True) in self.move_guards and (yes.covers or yes.exits):
            return _Result(covers=yes.covers, exits=yes.exits and not yes.covers, per_kind=yes.per_kind,
                           guarded=(t,), line=line)
        if (t, False) in self.move_guards and (no.covers or no.exits):
            return _Result(covers=no.covers, exits=no.exits and not no.covers, per_kind=no.per_kind,
                           guarded=(f"not {t}",), line=line)
        if yes.ends or no.ends:
            # a branch returns (the request admitted) without writing the buffer
            conditions: tuple[str, ...] = ()
            if yes.line and not no.line:
                conditions = (t,) + yes.conditions
            elif no.line and not yes.line:
                conditions = (_negated(node.test),) + no.conditions
            ends_conditions = () if yes.ends and no.ends else \
                (_negated(node.test),) if yes.ends else (t,)
            return _Result(ends=True, line=line, conditions=conditions, ends_conditions=ends_conditions)
        y_ok = yes.covers or yes.exits
        n_ok = no.covers or no.exits
        if y_ok and n_ok:
            if yes.exits and no.exits:
                return _Result(exits=True)
            return _Result(covers=True, per_kind=yes.per_kind or no.per_kind,
                           guarded=yes.guarded or no.guarded, line=line)
        conditions: tuple[str, ...] = ()
        if yes.line and not no.line:
            conditions = (t,) + yes.conditions
        elif no.line and not yes.line:
            conditions = (_negated(node.test),) + no.conditions
        elif line:
            conditions = yes.conditions or no.conditions or (t,)
        return _Result(line=line, conditions=conditions)


def _coverage_of(method: str, r: _Result) -> Coverage:
    if r.covers:
        status = "guarded" if r.guarded else "per_kind" if r.per_kind else "always"
        return Coverage(status, method, r.guarded, r.line)
    if r.line:
        return Coverage("conditional", method, r.conditions, r.line)
    return Coverage("never", method)


def class_lifecycle(cls: ClassInfo, mod: ModuleInfo, project: Project) -> ClassLifecycle:
    scan = _Scan(cls, mod, project)
    scan.buffers()
    if scan.out.buffers:
        scan.methods()
        scan.admission()
        scan.releases()
        scan.gaps()
    return scan.out


#: What a module's text must hold for one of its classes to own a persistent buffer (see
#: :func:`_allocation`): a ``torch.``/``np.``/``numpy.`` allocation name, or a call of a
#: ``...Buffer`` class or a ``make_buffer`` helper.  A class without a buffer has no row move or
#: view swap, so a module without such text is not parsed for its lifecycle facts (on vLLM
#: 0.33.0, 915 of 3,231 modules have it; most others are parsed for nothing else either).
_ALLOCATION_TEXT = re.compile(
    r"\b(?:%s)\s*\.\s*(?:%s)\b|Buffer\s*\(|make_buffer\s*\(|\bdtype\s*=" % (
        "|".join(sorted(TORCH_NAMES | NUMPY_NAMES)), "|".join(sorted(ALLOC_TORCH | ALLOC_NUMPY))))
_CLASS_TEXT = re.compile(r"^\s*class\s", re.M)


def may_have_lifecycle(text: str) -> bool:
    """False when no class of a module with this text can own a persistent buffer."""
    return _CLASS_TEXT.search(text) is not None and _ALLOCATION_TEXT.search(text) is not None


def module_lifecycles(project: Project, module_key: str, text: str | None = None) -> list[ClassLifecycle]:
    """Row lifecycle facts of every top-level class of a module with a row move or view swap.
    ``text``: the module's text, when the caller has it: a module that cannot own a buffer
    (:func:`may_have_lifecycle`) is then not parsed."""
    if text is not None and not may_have_lifecycle(text):
        return []
    mod = project.module(module_key)
    if mod is None:
        return []
    out = []
    for cls in mod.classes.values():
        life = class_lifecycle(cls, mod, project)
        if life.moves or life.swaps or life.releases or life.gaps:
            out.append(life)
    return out
