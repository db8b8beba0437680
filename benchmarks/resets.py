"""Find *reset statements* in Python source, syntactically (``ast``), and delete one.

Used by ``benchmarks/mutation.py``.  Knows nothing of padlint.

A reset statement is one statement that writes a neutral-looking value into
rows of a tensor (or array).  Exactly these shapes, each a statement of its
own (an expression statement or a plain assignment):

``assign``
    ``x[IDX] = V`` where ``IDX`` holds a slice (``x[a:]``, ``x[a:b]``,
    ``x[:]``, ``x[i, a:b]``, ``x[..., a:]``) and ``V`` is neutral-looking
    (below).  Whole-buffer writes ``x[:] = 0`` included.
``assign-row``
    ``x[i] = V`` / ``x[i, j] = V`` with no slice in the index, ``V`` a
    *constant* (a number, a bool, ``-1``, an UPPER_CASE name): the reset of
    one vacated row or element (``remove_request``).  ``None`` and strings
    are not tensor values and are left out, so are stores under a string key
    (``kwargs["flag"] = False``).
``fill``
    a call statement ``R.fill_(V)``, ``R.fill(V)`` (numpy), ``R.zero_()``,
    ``R.masked_fill_(M, V)``, ``R.index_fill_(d, I, V)``, ``torch.fill_(R, V)``,
    ``R.copy_(S)`` where ``S`` is a neutral-looking value or a tensor factory of
    one (``torch.zeros``, ``torch.full``, ``torch.ones``, ``*_like``,
    ``torch.tensor(CONST)``), with any receiver ``R``: a slice, a view
    (``buf.np[n:]``, ``buf.gpu``), or the whole buffer.

Neutral-looking ``V``: a constant (number or bool), ``-c``, ``float("inf")``,
a name or attribute whose last part is UPPER_CASE (``NULL_BLOCK_ID``,
``PAD_SLOT_ID``, ``self.PAD``) or has a snake_case part pad/null/fill/
sentinel/neutral/dummy/zero(s)/invalid/default (``pad_value``,
``self.fill_value``; not ``prefill_x`` or ``is_padding``), a scalar
element ``y[k]`` of another tensor (``k`` a constant, a name or arithmetic of
them) written into a tail ``x[n:]``: the last real offset of a cumulative
buffer, ``qsl[n + 1:] = cu[-1]`` (``x[:n] = y[idx]`` is a gather, left out), ``.item()`` of one, and arithmetic of these.

Not resets (left out, by design): row copies of real data
(``x[:n].copy_(y)``, ``x[:n] = y``), fresh allocations
(``x = torch.zeros(...)``: deleting it would unbind a name, not leave rows
stale), resets done inside Triton kernels or custom ops, and statements
whose deletion would leave an empty suite are still mutated (``pass``
keeps the suite).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

#: Parts of a snake_case name that make it neutral-looking (``pad_value``, ``fill_val``; not ``prefill``).
_NEUTRAL_WORDS = frozenset({"pad", "null", "fill", "sentinel", "neutral", "dummy", "zero", "zeros", "invalid", "default"})
_UPPER = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
_FACTORIES = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "tensor", "as_tensor"}


@dataclass(frozen=True)
class ResetSite:
    """One reset statement: where it is, what it says, in which function.

    ``line``/``end_line`` 1-based, ``col``/``end_col`` 0-based (``ast``
    offsets, characters of the line), ``function`` the qualified name of the
    enclosing function (``Class.method``, ``<module>`` at top level).
    ``rows`` which rows it writes (:func:`rows_written`), ``buffer`` the name
    of the buffer written (:func:`buffer_name`).
    """

    path: str
    line: int
    end_line: int
    col: int
    end_col: int
    kind: str
    text: str
    function: str
    rows: str = ""
    buffer: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _has_slice(index: ast.AST) -> bool:
    if isinstance(index, ast.Slice):
        return True
    if isinstance(index, ast.Tuple):
        return any(isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is Ellipsis)
                   for e in index.elts)
    return False


def _is_scalar_index(index: ast.AST) -> bool:
    """An index picking one element: a constant, a plain name, ``n + 1``, ``-1`` (not a mask or a gather)."""
    if isinstance(index, ast.Constant):
        return isinstance(index.value, int)
    if isinstance(index, ast.Name):
        return True
    if isinstance(index, ast.UnaryOp):
        return _is_scalar_index(index.operand)
    if isinstance(index, ast.BinOp):
        return _is_scalar_index(index.left) and _is_scalar_index(index.right)
    return False


def _is_tail(index: ast.AST) -> bool:
    """A slice with a lower bound other than 0 (``n:``, ``n:m``; in a tuple index, any such slice)."""
    slices = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(s, ast.Slice) and s.lower is not None
               and not (isinstance(s.lower, ast.Constant) and s.lower.value == 0) for s in slices)


def is_constant(node: ast.AST) -> bool:
    """A number, a bool, ``-c``, ``float("inf")``, or an UPPER_CASE name."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (bool, int, float)) and node.value is not Ellipsis
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        return is_constant(node.operand)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("float", "int", "bool")
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)):
        return True
    name = _last_name(node)
    return name is not None and bool(_UPPER.match(name))


def is_neutral(node: ast.AST) -> bool:
    """Neutral-looking value (see the module docstring)."""
    if is_constant(node):
        return True
    name = _last_name(node)
    if name is not None:
        return not _NEUTRAL_WORDS.isdisjoint(name.lower().split("_"))
    if isinstance(node, ast.Subscript):
        return _is_scalar_index(node.slice)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item":
        return not node.args and isinstance(node.func.value, ast.Subscript) and is_neutral(node.func.value)
    if isinstance(node, ast.BinOp):
        return is_neutral(node.left) and is_neutral(node.right)
    if isinstance(node, ast.UnaryOp):
        return is_neutral(node.operand)
    return False


def _neutral_source(node: ast.AST) -> bool:
    """The argument of ``copy_``: neutral-looking, or a tensor factory of a neutral value."""
    if is_neutral(node):
        return True
    if isinstance(node, ast.Call):
        name = _last_name(node.func)
        if name in ("zeros", "zeros_like", "ones", "ones_like"):
            return True
        if name in ("full", "full_like", "tensor", "as_tensor") and len(node.args) >= 2 - (name in ("tensor", "as_tensor")):
            value = node.args[-1] if name in ("full", "full_like") else node.args[0]
            return is_neutral(value)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "expand", "expand_as", "view", "reshape"):
            return _neutral_source(node.func.value)
    return False


def rows_written(stmt: ast.stmt) -> str:
    """Which rows a reset statement writes, from its syntax.

    ``tail``: a slice with a lower bound (``x[n:]``, ``x[n:m]``): the shape of a
    padding reset.  ``prefix``: ``x[:n]``.  ``whole``: no index (``x.fill_(v)``,
    ``buf.np.fill(v)``) or ``x[:]``.  ``row``: an element, a row or a row's
    columns (``x[i] = 0``, ``x[i, :n] = 0``, ``x[mask] = 0``).  ``masked``:
    ``masked_fill_``/``index_fill_``.
    """
    if isinstance(stmt, ast.Assign):
        receiver: ast.AST = stmt.targets[0]
    else:
        call = stmt.value  # type: ignore[attr-defined]
        if call.func.attr in ("masked_fill_", "index_fill_"):
            return "masked"
        receiver = call.args[0] if _last_name(call.func.value) == "torch" else call.func.value
    if not isinstance(receiver, ast.Subscript):
        return "whole"
    index = receiver.slice
    first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
    if isinstance(first, ast.Constant) and first.value is Ellipsis and isinstance(index, ast.Tuple):
        first = next((e for e in index.elts[1:] if isinstance(e, ast.Slice)), first)
    if not isinstance(first, ast.Slice):
        return "row"
    if _is_tail(first):
        return "tail"
    return "prefix" if first.upper is not None else "whole"


_VIEWS = frozenset({"np", "cpu", "gpu", "buffer", "data", "T"})


def buffer_name(stmt: ast.stmt) -> str:
    """The name of the buffer a reset writes: ``seq_lens`` for ``self.seq_lens[n:].fill_(0)``,
    ``query_start_loc`` for ``self.query_start_loc.np[n + 1:].fill(v)``, ``seq_lens`` for
    ``s["seq_lens"][bs:r].zero_()``; "" when there is none (a call result)."""
    if isinstance(stmt, ast.Assign):
        node: ast.AST = stmt.targets[0]
    else:
        call = stmt.value  # type: ignore[attr-defined]
        node = call.args[0] if _last_name(call.func.value) == "torch" else call.func.value
    while True:
        if isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, str):
                return index.value
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value  # x.view(...).copy_, x.resize_(n).fill_
        elif isinstance(node, ast.Attribute) and node.attr in _VIEWS:
            node = node.value
        else:
            return _last_name(node) or ""


def classify(stmt: ast.stmt) -> str | None:
    """The kind of reset ``stmt`` is, or None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0]
        if _has_slice(target.slice):
            value = stmt.value
            if isinstance(value, ast.Subscript) and not _is_tail(target.slice):
                return None  # x[:n] = y[idx] is a gather of real data; x[n:] = y[n] fills a tail
            return "assign" if is_neutral(value) else None
        if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            return None  # kwargs["key"] = False: a dict, not rows
        return "assign-row" if is_constant(stmt.value) else None
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    attr = func.attr
    if attr == "zero_" and not call.args:
        return "fill"
    if attr in ("fill_", "fill") and call.args:
        return "fill"
    if attr in ("masked_fill_", "index_fill_") and call.args:
        return "fill"
    if attr == "copy_" and call.args and _neutral_source(call.args[0]):
        return "fill"
    return None


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source
        self.scope: list[str] = []
        self.sites: list[ResetSite] = []

    def _scoped(self, node: ast.AST) -> None:
        self.scope.append(node.name)  # type: ignore[attr-defined]
        self.generic_visit(node)
        self.scope.pop()

    visit_ClassDef = _scoped
    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            kind = classify(node)
            if kind is not None:
                text = ast.get_source_segment(self.source, node) or ""
                self.sites.append(ResetSite(
                    path=self.path, line=node.lineno, end_line=node.end_lineno or node.lineno,
                    col=node.col_offset, end_col=node.end_col_offset or 0, kind=kind,
                    text=" ".join(text.split()), function=".".join(self.scope) or "<module>",
                    rows=rows_written(node), buffer=buffer_name(node)))
        super().generic_visit(node)


def find_resets(source: str, path: str) -> list[ResetSite]:
    """Every reset statement of ``source`` in source order.  Raises SyntaxError."""
    finder = _Finder(path, source)
    finder.visit(ast.parse(source, filename=path))
    return sorted(finder.sites, key=lambda s: (s.line, s.col))


def delete_statement(source: str, site: ResetSite) -> str:
    """``source`` with the statement at ``site`` replaced by ``pass``, same number of lines.

    The statement's own characters are replaced; text before it on its first
    line (indentation, ``if c:``) and after it on its last line (``# comment``,
    ``; other()``) stays.  A statement over several lines becomes ``pass``
    and blank lines, or ``pass`` with backslash continuations when more code
    follows it on its last line.  Raises ValueError if the result does not
    parse or changed its line count (never expected).
    """
    lines = source.splitlines(keepends=True)
    first, last = site.line - 1, site.end_line - 1
    # ast offsets count UTF-8 bytes; convert to characters of the line
    head = lines[first].encode("utf-8")[: site.col].decode("utf-8")
    tail_line = lines[last]
    tail = tail_line.encode("utf-8")[site.end_col :].decode("utf-8")
    extra = last - first
    if extra == 0:
        new = [head + "pass" + tail]
    else:
        rest = tail.strip()
        if not rest or rest.startswith("#"):
            newline = _line_end(tail_line)
            new = [head + "pass" + newline] + [newline] * (extra - 1) + [tail.lstrip(" \t") if rest else newline]
            if rest:  # keep the comment on the last line, indented like the statement
                new[-1] = " " * len(head.expandtabs()) + tail.lstrip(" \t")
        else:
            newline = _line_end(tail_line)
            new = [head + "pass \\" + newline] + ["\\" + newline] * (extra - 1) + [tail]
    mutated = "".join(lines[:first] + new + lines[last + 1 :])
    if len(mutated.splitlines()) != len(source.splitlines()):
        raise ValueError(f"{site.path}:{site.line}: deleting the statement changed the line count")
    try:
        ast.parse(mutated, filename=site.path)
    except SyntaxError as e:
        raise ValueError(f"{site.path}:{site.line}: deleting the statement broke the syntax: {e}") from None
    return mutated


def _line_end(line: str) -> str:
    for end in ("\r\n", "\n", "\r"):
        if line.endswith(end):
            return end
    return "\n"
