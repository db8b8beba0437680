"""Whole-program call graph over the project index (``ast`` only, lazy, memoised).

Answers three questions for the engine, each without libcst:

* ``relevant(fn)``: can interpreting ``fn`` change or read padding state?
  Its text mentions something PAD001 acts on (a padded count, a sink, a
  reset, a device copy, an allocator; :func:`padlint.analysis.index.relevance_pattern`),
  or it calls a relevant function.  Calls to irrelevant functions are not
  followed by the interpreter.
* ``sinkward(fn)``: does ``fn`` reach a sink (holds one, or calls a function
  that does)?  Only those are entry points.
* ``callers(fn)``: the project functions that call ``fn`` (found by a
  substring scan of the project's text for its name, then confirmed by
  resolving the calls), so that entry points are the outermost callers, in
  whichever module they live, not whatever function happens to be in a
  checked file.

Resolution (same rules as the interpreter's): ``self.m()`` by the MRO,
``super().m()``, ``self.a.b.m()`` by attribute types (a base class stands for
its project subclasses: all overriding methods are callees), ``p.m()`` for
an annotated parameter ``p``, module functions, functions and classes
imported by name, ``mod.f()`` for an imported module.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass

from padlint.analysis.index import (
    _literals,
    _relevance_literals,
    prefilter_patterns,
    relevance_pattern,
)
from padlint.analysis.kernels import tail_stores
from padlint.analysis.project import (
    ClassInfo,
    FunctionInfo,
    ModuleInfo,
    Project,
    _dotted,
    _type_names,
    bind_arguments,
)
from padlint.profile import Profile


@dataclass(frozen=True)
class GraphInput:
    """A persistent buffer a captured CUDA graph reads whole, written by the capture with a value
    computed from the captured size (see :meth:`CallGraph.graph_inputs`)."""

    attr: str      # attribute path from ``self`` (``buffers.global_num_tokens_gpu``)
    field: str     # the keyword the capture hands it on under
    path: str      # file of the capturing method
    line: int      # the capture's write
    write: str     # that write, as source text
    count: str     # the count its value is computed from (``num_tokens``)
    # the attributes of ``self`` the capturing method stores graphs into (``self.graphs[bs] =
    # graph``: "graphs"); empty when it stores none (a backend keeps them)
    tables: frozenset = frozenset()


def _graph_tables(node: ast.AST) -> frozenset:
    """The attributes of ``self`` a capturing method stores into by key (``self.graphs[bs] =
    graph``: ``graphs``): the tables its graphs are replayed from."""
    return frozenset(t.value.attr for sub in ast.walk(node) if isinstance(sub, ast.Assign)
                     for t in sub.targets if isinstance(t, ast.Subscript)
                     and isinstance(t.value, ast.Attribute) and isinstance(t.value.value, ast.Name)
                     and t.value.value.id == "self")


# a slice of an attribute of `self` with a named bound: `self.buf[:n]`, `self.a.b[k:n]`, `self.buf[n:]`
# (after any leading whole dimensions: `x[:, :n]` bounds the columns)
_ANY_COUNT_SLICE = re.compile(r"\w\[\s*(?::\s*,\s*)*:\s*[A-Za-z_]")
#: a tail-shaped in-place write to any name (`t[n:p] = 0`, `b[n:].zero_()`, `x[:, k:m].fill_(v)`): rows
#: from a bound onwards written, the shape of a padding reset, through a local that may alias a buffer
_TAIL_WRITE = re.compile(r"\w\[\s*(?::\s*,\s*)*[A-Za-z_][\w.]*\s*(?:[+-]\s*\w+\s*)?:[^\]\[\n]*\]\s*"
                         r"(?:=(?!=)|\.(?:fill_|zero_|fill|masked_fill_)\(|\.mul_\(\s*(?:0|False)\b)")
_COUNT_SLICE = re.compile(r"\bself\.[\w.]+\[\s*(?::\s*,\s*)*(?:[\w.]*\s*:\s*[A-Za-z_]|[A-Za-z_][\w.]*\s*(?:[+-]\s*\d+\s*)?:)")


def _may_name(text: str, word: str) -> bool:
    """Whether source ``text`` may hold the identifier ``word`` (an ASCII word): it holds the
    word, or it is not ASCII (Python normalises identifiers, so `ｇｒａｐｈ` is `graph`)."""
    return word in text or not text.isascii()


class PeekedNodes(Mapping):
    """A module's functions by name as ``def`` nodes, each made on lookup and not kept
    (:meth:`FunctionInfo.peek`): a kernel's helpers, read once."""

    def __init__(self, functions: Mapping[str, FunctionInfo]):
        self._functions = functions

    def __getitem__(self, name: str):
        return self._functions[name].peek()

    def __iter__(self):
        return iter(self._functions)

    def __len__(self) -> int:
        return len(self._functions)


class CallGraph:
    MAX_DEPTH = 6  # calls searched below a function for relevance (deeper: not relevant)

    def __init__(self, project: Project, profile: Profile):
        self.project = project
        self.profile = profile
        self._pattern = relevance_pattern(profile)
        self._sink_re, _ = prefilter_patterns(profile)
        self._sink_lits, _ = _literals(profile)
        self._extra = self._extra_literals(profile)
        self._rel_lits = _relevance_literals(profile) + self._extra
        self._core: dict[str, bool] = {}
        self._sink: dict[str, bool] = {}
        self._callees: dict[str, list[FunctionInfo]] = {}
        self._self_callees: dict[str, frozenset[str]] = {}
        self._relevant: dict[str, bool] = {}
        self._sinkward: dict[str, bool] = {}
        self._callers: dict[str, list[FunctionInfo]] = {}
        self._unresolved_refs: dict[str, bool] = {}
        self._graph_bound: dict[str, tuple[tuple[str, str, str, str, int], ...]] = {}
        self._graph_binders: dict[str, dict[str, frozenset[str]]] = {}  # class -> attr -> capture methods
        self._capture_written: dict[str, dict[str, frozenset[str]]] = {}  # class -> capture method -> attrs
        self._captured: dict[str, dict[str, frozenset[str]]] = {}
        self._capture_writes: dict[str, frozenset[str]] = {}
        self._graph_inputs: dict[str, tuple[GraphInput, ...]] = {}
        self._holders: dict[tuple[str, str], tuple[str, ...]] = {}
        self._aliases: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        self._param_field_memo: dict[str, dict] = {}
        self._pool_lines: dict[str, frozenset[str]] = {}  # module -> names a line may assign a container
        self._pool_kinds: dict[tuple[str, str], str | None] = {}  # (module, name) -> module_container
        self._mentions: dict[str, list[str]] = {}  # text -> modules mentioning it (field aliases)
        self._builder_out: dict[str, dict[str, ClassInfo]] = {}
        # the last names of the profile's replay calls (`_replay_graph` of `*._replay_graph`)
        self._replay_names = tuple({p.rsplit(".", 1)[-1].strip("*") for p in profile.graph_replay} - {""})
        # and of its manager captures (`capture` of `*cudagraph_manager.capture`)
        self._capture_names = tuple({p.rsplit(".", 1)[-1].strip("*") for p in profile.graph_captured_by} - {""})
        self._slots: dict[str, tuple[tuple[str, str, str, str, bool], ...]] = {}
        self._read_conds: dict[str, dict[str, str]] = {}
        # a module is searched for callers only if its text mentions a count (real or
        # padded), a sink, a device copy, a padded getter or a reset helper: a module that only
        # fills tensors of its own (`torch.empty`, `.fill_`) cannot touch the padding rows of a
        # persistent buffer it is handed without a count to bound them
        names = {n for pair in profile.counts for n in (*pair.real, *pair.padded)}
        names |= set(profile.copy_to_device) | set(profile.padded_getters) | {h for h, _ in profile.reset_helpers}
        # (and `copy_(`: a helper that copies whole buffers, `out.copy_(data)`, is a write; and
        # `fields(self)`: a dataclass that resets its own buffers by reflection, SGLang's
        # `ForwardInputBuffers.reset_index_buffers`, is the class of a runner's buffers)
        lits = tuple(sorted(names)) + self._sink_lits + ("_padded", "_after_padding", ".copy_(", "tl.store(",
                                                         "fields(self)")
        strict = tuple(n for pair in profile.counts for n in pair.padded) + self._sink_lits + (
            "_padded", "_after_padding", *profile.copy_to_device, *profile.padded_getters)
        project.set_text_filter(lambda text: any(x in text for x in lits),
                                lambda text: any(x in text for x in strict))

    @staticmethod
    def _extra_literals(profile: Profile) -> tuple[str, ...]:
        out: list[str] = [".copy_("]  # a helper that copies a whole buffer writes it
        for pair in profile.counts:
            out.extend(pair.padded)
        return tuple(out)

    # ---------------------------------------------------------------- text
    def _text(self, fn: FunctionInfo) -> str:
        mod = self.project.module(fn.module)
        if mod is None:
            return ""
        return mod.line_text(fn.start, fn.end)

    def core(self, fn: FunctionInfo) -> bool:
        v = self._core.get(fn.key)
        if v is None:
            text = self._text(fn)
            v = any(x in text for x in self._rel_lits) and (
                self._pattern.search(text) is not None
                or any(x in text for x in self._extra))
            if not v and "self." in text and _COUNT_SLICE.search(text):
                # a slice of an attribute bounded by a count (`self.buf[:n]`, `self.buf[k:n] = 0`):
                # the function takes views of a persistent buffer (and may return them) or resets
                # its rows, whatever the counts are called
                v = True
            if not v and _TAIL_WRITE.search(text):
                # rows from a bound on written in place through a local (`t = self.buf; t[n:p] = 0`,
                # `for b in bufs: b[n:p].zero_()`): a reset of a buffer's padding rows, whatever the
                # counts and the buffer are called here
                v = True
            if not v and self._reads_pool(fn, text):
                # an element of a module-level container the process shares (a buffer pool): its
                # rows hold what other calls put there (Interpreter._module_pool)
                v = True
            if not v and self.profile.dummy_runs and self.profile.is_dummy_run(fn.name) \
                    and _ANY_COUNT_SLICE.search(text):
                # a dummy run's views (`block_table[:num_reqs]`): its rows are dummy requests, so a
                # slice to a real count may hand out rows no write of the run reached
                v = True
            if not v and "store(" in text:  # a kernel that pads the tail rows of a pointer argument
                mod = self.project.module(fn.module)
                v = bool(tail_stores(fn.peek(), PeekedNodes(mod.functions) if mod else None))
            if not v:  # a metadata builder constructs its output (a sink)
                v = self._builds_output(fn, text)
            if not v and fn.owner and (".replay(" in text or any(f"{r}(" in text for r in self._replay_names)):
                # a CUDA graph replay of a class whose graphs read inputs sized at capture: whether
                # the path to it writes them is the question (no padded slice needed)
                cls = self.project.class_info(fn.owner)
                v = cls is not None and (bool(self.graph_inputs(cls)) or bool(self.graph_bound(cls)))
            if not v and fn.owner and any(f"{c}(" in text for c in self._capture_names):
                v = self._captures_index_fields(fn)  # a manager's capture: a sink (holds_sink)
            if not v and fn.owner and "self." in text:
                v = self._runs_shape_capture(fn, text)  # a per-shape capture: a sink (holds_sink)
            self._core[fn.key] = v
        return v

    def _reads_pool(self, fn: FunctionInfo, text: str) -> bool:
        """Whether ``fn`` returns an element of a module-level container of its module (``return
        _pool.get(k)``, ``canonical = _pool[k]; ... return canonical``: the name and a return)."""
        if not fn.module or "return " not in text:
            return False
        return any(self.pool_kind(fn.module, p) is not None for p in self._pool_names(fn.module)
                   if p in text and re.search(rf"(?<![\w.]){re.escape(p)}\s*(\.get\(|\[)", text))

    def _pool_names(self, module: str) -> frozenset[str]:
        """Names a line of ``module`` at column 0 may assign a container (:func:`pool_candidates`)."""
        names = self._pool_lines.get(module)
        if names is None:
            mod = self.project.module(module)
            names = self._pool_lines[module] = pool_candidates(mod.text) if mod is not None else frozenset()
        return names

    def pool_kind(self, module: str, name: str) -> str | None:
        """:func:`module_container` of ``name`` in ``module`` (a buffer pool: "dict" or "list"),
        memoised; the module's syntax tree is read only where its text may assign the name a
        container."""
        key = (module, name)
        kind = self._pool_kinds.get(key, 0)
        if kind == 0:
            kind = None
            if name in self._pool_names(module):
                mod = self.project.module(module)
                kind = module_container(mod, name) if mod is not None else None
            self._pool_kinds[key] = kind
        return kind

    def holds_sink(self, fn: FunctionInfo) -> bool:
        v = self._sink.get(fn.key)
        if v is None:
            text = self._text(fn)
            v = any(x in text for x in self._sink_lits) and self._sink_re.search(text) is not None
            if not v:  # a store on a parameter typed as a metadata class (`forward_batch: ForwardBatch`)
                v = self._stores_on_sink_param(fn)
            if not v and fn.owner:  # `self.metadata_cls(...)`: a class-level attribute naming sink classes
                v = self._calls_sink_class_attr(fn, text)
            if not v:  # a metadata builder constructs its output
                v = self._builds_output(fn, text)
            if not v and fn.owner and (".replay(" in text or any(f"{r}(" in text for r in self._replay_names)):
                # a CUDA graph replay (`graphs[bs].replay()`, a profile `[graphs] replay` call) reads
                # its bound buffers
                cls = self.project.class_info(fn.owner)
                v = cls is not None and (bool(self.graph_bound(cls)) or bool(self.graph_inputs(cls)))
            if not v and fn.owner and any(f"{c}(" in text for c in self._capture_names):
                # a manager's capture runs the captured functions on rows no request holds: the
                # index fields they read are judged there (Interpreter._check_capture)
                v = self._captures_index_fields(fn)
            if not v and fn.owner and "self." in text:
                # a call of a per-shape capture whose graph binds index fields: the captured
                # forward runs on rows no request holds (Interpreter._check_shape_capture)
                v = self._runs_shape_capture(fn, text)
            self._sink[fn.key] = v
        return v

    def _runs_shape_capture(self, fn: FunctionInfo, text: str) -> bool:
        """Whether ``fn`` calls ``self.<m>(...)`` where ``m`` captures the graph of one shape
        itself (``[graphs] capture``, or a ``with ...graph(...):`` block; not a function a graph
        manager captures) and binds an index field (:meth:`graph_binders`)."""
        mod = self.project.module(fn.module)
        names = self.profile.graph_capture
        if mod is None or not ("graph(" in mod.text or any(
                fnmatch.fnmatchcase(w, pat) for pat in names for w in re.findall(r"self\.(\w+)\(", text))):
            return False
        cls = self.project.class_info(fn.owner)
        if cls is None:
            return False
        fields = {a: f for a, f, *_ in self.graph_bound(cls)}
        captured = self.captured_functions(cls)
        methods = {m for a, ms in self.graph_binders(cls).items() if self.profile.is_index_field(fields.get(a, ""))
                   for m in ms if m not in captured}
        return any(f"self.{m}(" in text for m in methods)

    def _captures_index_fields(self, fn: FunctionInfo) -> bool:
        """Whether ``fn``'s class hands methods to graph managers (``[graphs] captured_by``) that
        read an index field before writing it (what a capture judges)."""
        cls = self.project.class_info(fn.owner)
        return cls is not None and bool(self.graph_managers(cls)) and any(
            self.profile.is_index_field(b[1]) for b in self.graph_bound(cls))

    def _calls_sink_class_attr(self, fn: FunctionInfo, text: str) -> bool:
        """``self.X(...)`` in ``fn`` where ``X`` is no method of its class but a class-level
        attribute that names sink classes only (see :meth:`Project.class_valued_attr`)."""
        cls = self.project.class_info(fn.owner)
        if cls is None:
            return False
        return any(self.sink_class_attr(cls, attr) for attr in set(re.findall(r"\bself\.([a-z_]\w*)\s*\(", text)))

    def sink_class_attr(self, cls: ClassInfo, attr: str) -> list[ClassInfo]:
        """The classes ``obj.attr(...)`` constructs on an object of ``cls`` when ``attr`` is no
        method of it but a class-level attribute naming only sink classes (see
        :meth:`Project.class_valued_attr`); empty otherwise."""
        if self.project.find_method(cls, attr) is not None:
            return []
        found = self.project.class_valued_attr(cls, attr)
        return found if found and all(self.profile.is_sink_constructor(c.name) for c in found) else []

    def builder_outputs(self, cls_key: str) -> dict[str, ClassInfo]:
        """The metadata classes of a metadata builder (a class deriving from a ``[sinks] builders``
        base): the project classes with fields that its methods' return annotations name, or
        that they return constructed (``def build(...) -> FlashMLAMetadata``, ``def
        _build_decode(...) -> FlashMLADecodeMetadata``), and the classes of those classes'
        annotated fields, two levels down (``decode: DecodeMetadata | None``).  The builder's
        output is what the attention kernels read, so constructing one of them in a method of
        the builder is a sink constructor call.  Empty for any other class.  Memoised."""
        got = self._builder_out.get(cls_key)
        if got is not None:
            return got
        out: dict[str, ClassInfo] = {}
        self._builder_out[cls_key] = out
        cls = self.project.class_info(cls_key)
        pats = self.profile.sink_builders
        if cls is None or not pats:
            return out
        mro = self.project.mro(cls)
        if not self._is_builder(mro):
            return out
        todo: list[tuple[ClassInfo, int]] = []
        for c in mro:
            for m in c.methods.values():
                todo.extend((t, 0) for t in self.project.returned_classes(m))
        while todo:
            t, depth = todo.pop()
            if t.key in out:
                continue
            tmro = self.project.mro(t)
            if not any(c.fields for c in tmro) or self._is_builder(tmro):
                continue  # no fields to read (an enum, a plain class), or a builder factory
            out[t.key] = t
            if depth >= 2:
                continue
            for c in tmro:
                mod = self.project.module(c.module)
                for item in c.items() if mod is not None else ():
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        for n in _type_names(item.annotation):
                            r = self.project.resolve(mod, n)
                            if isinstance(r, ClassInfo):
                                todo.append((r, depth + 1))
        return out

    def _builds_output(self, fn: FunctionInfo, text: str) -> bool:
        """``fn``, a method of a metadata builder, constructs one of its metadata classes."""
        if not fn.owner or not self.profile.sink_builders:
            return False
        return any(re.search(rf"\b{re.escape(c.name)}\s*\(", text) for c in self.builder_outputs(fn.owner).values())

    def _is_builder(self, mro: list[ClassInfo]) -> bool:
        pats = self.profile.sink_builders
        return any(fnmatch.fnmatchcase(name, p) for c in mro
                   for name in (c.name, *(b.rsplit(".", 1)[-1] for b in c.bases)) for p in pats)

    # ----------------------------------------------------------- resolution
    def methods_of(self, classes: list[ClassInfo], name: str, *, subclasses: bool = True) -> list[FunctionInfo]:
        """Method ``name`` on each class and, for dispatch, on each project subclass overriding it."""
        out: dict[str, FunctionInfo] = {}
        for c in classes:
            m = self.project.find_method(c, name)
            if m is not None:
                out.setdefault(m.key, m)
            if subclasses:
                for s in self.project.subclass_candidates(c, name):
                    out.setdefault(s.methods[name].key, s.methods[name])
        return list(out.values())

    def attr_chain_classes(self, owner: ClassInfo | None, chain: list[str]) -> list[ClassInfo]:
        """Classes of ``self.a.b`` for chain ``[a, b]`` from class ``owner``."""
        classes = [owner] if owner is not None else []
        for attr in chain:
            nxt: dict[str, ClassInfo] = {}
            for c in classes:
                for t in self.project.attr_classes(c, attr):
                    nxt.setdefault(t.key, t)
            classes = list(nxt.values())
            if not classes:
                break
        return classes

    def callees(self, fn: FunctionInfo) -> list[FunctionInfo]:
        v = self._callees.get(fn.key)
        if v is not None:
            return v
        out: dict[str, FunctionInfo] = {}
        mod = self.project.module(fn.module)
        owner = self.project.class_info(fn.owner) if fn.owner else None
        params: dict[str, list[str]] = {}
        node = fn.peek()  # the result is kept by key: the node need not be
        a = node.args
        for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
            names = _type_names(p.annotation)
            if names:
                params[p.arg] = names
        on_self: dict[str, bool] = {}  # callee key -> every call that resolves to it is on `self`
        mro_keys = lambda c: {k.key for k in self.project.mro(c)}  # noqa: E731
        me, foreign = _self_scope(node) if owner is not None else (None, set())
        if mod is not None:
            called: set[int] = set()
            local = self._local_classes(node, mod, owner, params)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    called.add(id(sub.func))
                    # a method passed to another function (`warmup(self.execute_model)`) is called
                    # there, if at all, by code the analysis does not follow: no edge from here, so
                    # a public method stays the entry point it is
                    called.update(id(a) for a in sub.args)
                    called.update(id(k.value) for k in sub.keywords)
                    here = me is not None and id(sub) not in foreign
                    mine = here and _on_self(sub, me)
                    unbound = here and not mine and _passes_self(sub, me)
                    for t in self.resolve_call(sub.func, mod, owner, params, local):
                        out.setdefault(t.key, t)
                        # `Base.m(self, ...)`: a method of a class `self` is an instance of
                        yes = bool(t.owner) and (mine or unbound and t.owner in mro_keys(owner))
                        on_self[t.key] = on_self.get(t.key, True) and yes
            if owner is not None:
                # a method taken as a value and called later in this function (`fn = self._a if c
                # else self._b; fn(...)`): an edge too, or it would look like an entry point
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Attribute) and id(sub) not in called \
                            and isinstance(sub.value, ast.Name) and sub.value.id == "self" \
                            and isinstance(sub.ctx, ast.Load):
                        for t in self.methods_of([owner], sub.attr):
                            out.setdefault(t.key, t)
                            on_self[t.key] = on_self.get(t.key, True) and me == "self" and id(sub) not in foreign
        v = self._callees[fn.key] = list(out.values())
        self._self_callees[fn.key] = frozenset(k for k, yes in on_self.items() if yes)
        return v

    def self_callees(self, fn: FunctionInfo) -> frozenset[str]:
        """Keys of the methods ``fn`` calls only on its own object (``self.m()``,
        ``super().m()``, ``cls.m()``, ``Base.m(self, ...)``, ``self.m`` taken as a value): in
        them, ``self`` is the object ``fn`` runs on, of ``fn``'s class or a subclass of it."""
        if fn.key not in self._self_callees:
            self.callees(fn)
        return self._self_callees[fn.key]

    def _local_classes(self, node: ast.AST, mod: ModuleInfo, owner: ClassInfo | None,
                       params: dict[str, list[str]]) -> dict[str, list[ClassInfo]]:
        """Classes of the local names a function binds to typed expressions (one binding each:
        a name bound twice to different things is left out): ``g = self.attn_groups[i][j]``,
        ``b = g.get_metadata_builder()`` (a return annotation)."""
        out: dict[str, list[ClassInfo]] = {}
        seen: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                name = sub.targets[0].id
                if name in seen:
                    out.pop(name, None)
                    continue
                seen.add(name)
                classes = self.expr_classes(sub.value, mod, owner, params, out)
                if classes:
                    out[name] = classes
        return out

    def expr_classes(self, expr: ast.AST, mod: ModuleInfo, owner: ClassInfo | None,
                     params: dict[str, list[str]], local: dict[str, list[ClassInfo]] | None = None,
                     depth: int = 0) -> list[ClassInfo]:
        """Classes an expression's value may be an object of, as far as annotations say:
        ``self.a.b``, a parameter, a local bound to one, an element of a typed container
        (``self.attn_groups[i][j]``) or of an object whose class's ``__getitem__`` says what it
        gives (``self.block_table[gid]``), the result of a method or function with a return
        annotation (``g.get_metadata_builder()``)."""
        if depth > 4:
            return []
        if isinstance(expr, ast.Name):
            if expr.id == "self":
                return [owner] if owner is not None else []
            if local and expr.id in local:
                return local[expr.id]
            if expr.id in params:
                return [c for c in (self.project.resolve(mod, t) for t in params[expr.id]) if isinstance(c, ClassInfo)]
            return []
        if isinstance(expr, ast.Attribute):
            base = self.expr_classes(expr.value, mod, owner, params, local, depth + 1)
            out: dict[str, ClassInfo] = {}
            for c in base:
                for t in self.project.attr_classes(c, expr.attr):
                    out.setdefault(t.key, t)
            return list(out.values())
        if isinstance(expr, ast.Subscript):
            # an element: of a typed container attribute, at any depth
            node = expr.value
            while isinstance(node, ast.Subscript):
                node = node.value
            out = {}
            if isinstance(node, ast.Attribute):
                base = self.expr_classes(node.value, mod, owner, params, local, depth + 1)
                for c in base:
                    for t in self.project.attr_elem_classes(c, node.attr):
                        out.setdefault(t.key, t)
            if not out:
                # an object whose class indexes to another (`def __getitem__(...) -> BlockTable`)
                for c in self.expr_classes(expr.value, mod, owner, params, local, depth + 1):
                    for t in self.project.item_classes(c):
                        out.setdefault(t.key, t)
            return list(out.values())
        if isinstance(expr, (ast.IfExp, ast.BoolOp)):
            # `self.av if draft_tokens else None`, `self.pcp_manager or self.block_tables`: an
            # object of any class a branch may give (None gives none)
            out = {}
            for part in ((expr.body, expr.orelse) if isinstance(expr, ast.IfExp) else expr.values):
                for c in self.expr_classes(part, mod, owner, params, local, depth + 1):
                    out.setdefault(c.key, c)
            return list(out.values())
        if isinstance(expr, ast.Call):
            out = {}
            for t in self.resolve_call(expr.func, mod, owner, params, local, depth + 1):
                names = self.project.return_annotation_names(t)
                if names:
                    tmod = self.project.module(t.module)
                    for name in names:
                        c = self.project.resolve(tmod, name) if tmod is not None else None
                        if isinstance(c, ClassInfo):
                            out.setdefault(c.key, c)
            return list(out.values())
        return []

    def resolve_call(self, func: ast.AST, mod: ModuleInfo, owner: ClassInfo | None,
                     params: dict[str, list[str]], local: dict[str, list[ClassInfo]] | None = None,
                     depth: int = 0) -> list[FunctionInfo]:
        if isinstance(func, ast.Subscript):  # a kernel launch `kernel[grid](...)`
            func = func.value
        if isinstance(func, ast.Name):
            t = self.project.resolve(mod, func.id)
            return [t] if isinstance(t, FunctionInfo) else []
        if not isinstance(func, ast.Attribute):
            return []
        name = func.attr
        recv = func.value
        if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
            if owner is None:
                return []
            m = self.project.find_method(owner, name, after=owner.key)
            return [m] if m is not None else []
        if isinstance(recv, (ast.Call, ast.Subscript)) or (isinstance(recv, ast.Name) and local and recv.id in local):
            # `self.get_builder(i).build(...)`, `self.groups[i].build(...)`, `g.build(...)`
            return self.methods_of(self.expr_classes(recv, mod, owner, params, local, depth), name)
        chain: list[str] = []
        node = recv
        while isinstance(node, ast.Attribute):
            chain.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return []
        if node.id == "self" or node.id == "cls" and not chain:
            # (`cls.m(...)` in a class method: a method of the class)
            if not chain:
                return self.methods_of([owner], name) if owner is not None else []
            return self.methods_of(self.attr_chain_classes(owner, chain), name)
        if node.id in params and not chain:
            classes = [c for c in (self.project.resolve(mod, t) for t in params[node.id])
                       if isinstance(c, ClassInfo)]
            return self.methods_of(classes, name)
        dotted = ".".join([node.id, *chain, name])
        t = self.project.resolve(mod, dotted)
        if isinstance(t, FunctionInfo):
            return [t]
        return []

    # ------------------------------------------------------------ closures
    def relevant(self, fn: FunctionInfo) -> bool:
        return self._closure(fn, self._relevant, self.core)

    def sinkward(self, fn: FunctionInfo) -> bool:
        return self._closure(fn, self._sinkward, self.holds_sink)

    def _closure(self, fn: FunctionInfo, memo: dict[str, bool], base) -> bool:
        """``base(fn)`` or ``base`` of a function it reaches (iterative DFS, cycles safe)."""
        if fn.key in memo:
            return memo[fn.key]
        # iterative: compute reachability of a base-true function from fn
        seen: dict[str, FunctionInfo] = {}
        order: list[FunctionInfo] = []
        stack = [(fn, 0)]
        found_base: set[str] = set()
        cut = False  # the depth bound stopped the search somewhere: falses are not final
        while stack:
            f, depth = stack.pop()
            if f.key in seen:
                continue
            seen[f.key] = f
            order.append(f)
            if f.key in memo:
                if memo[f.key]:
                    found_base.add(f.key)
                continue
            if base(f):
                found_base.add(f.key)
                continue
            if depth < self.MAX_DEPTH:
                for c in self.callees(f):
                    if c.key not in seen:
                        stack.append((c, depth + 1))
            else:
                cut = True
        # propagate: a function is true if it reaches a true one (fixpoint over the seen subgraph)
        truth = {k: (k in found_base) for k in seen}
        changed = True
        while changed:
            changed = False
            for k, f in seen.items():
                if truth[k] or (k in memo and not memo[k]):
                    continue
                if any(truth.get(c.key) for c in self.callees(f)):
                    truth[k] = changed = True
        for k, v in truth.items():
            if v or k == fn.key or not cut:
                memo[k] = v
        return memo[fn.key]

    def _stores_on_sink_param(self, fn: FunctionInfo) -> bool:
        node = fn.peek()  # its result is kept (holds_sink's closure): the node need not be
        a = node.args
        typed = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                 if any(self.profile.is_sink_constructor(n.rsplit(".", 1)[-1]) for n in _type_names(p.annotation))}
        if not typed:
            return False
        # a local bound only to such a parameter is the same object (`m = metadata`): its one
        # binding in the function (no loop, `with`, tuple or other assignment rebinds it)
        stores: dict[str, int] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                stores[sub.id] = stores.get(sub.id, 0) + 1
        typed |= {t.id for sub in ast.walk(node) if isinstance(sub, ast.Assign) and len(sub.targets) == 1
                  for t in sub.targets if isinstance(t, ast.Name) and t.id not in typed
                  and stores.get(t.id) == 1 and isinstance(sub.value, ast.Name) and sub.value.id in typed}
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                # `forward_batch.x = v`, or a store on an object it holds (`forward_batch.spec_info.x = v`)
                if any(isinstance(t, ast.Attribute) and _root_name(t.value) in typed for t in targets):
                    return True
            # `dataclasses.replace(m, field=v)` of such a parameter: a metadata object again
            if isinstance(sub, ast.Call) and (_dotted(sub.func) or "").rsplit(".", 1)[-1] == "replace" \
                    and sub.args and isinstance(sub.args[0], ast.Name) and sub.args[0].id in typed \
                    and sub.keywords:
                return True
        return False

    def graph_bound(self, cls: ClassInfo) -> tuple[tuple[str, str, str, str, int, frozenset], ...]:
        """Persistent buffers a CUDA graph captured by this class reads at every replay:
        ``(attribute path, field, bound, definition, dim)`` for each slice ``self.X[:n]``, or
        ``self.X[:, :n]`` (``dim`` 1: the count bounds the second dimension) (also through a local
        alias, ``buffers = self.buffers; buffers.x[:n]``: path ``buffers.x``) in a method that
        captures (holds a ``with ...graph(...):`` block, or is named by the profile's
        ``[graphs] capture``), ``field`` being the keyword it is passed under (or the attribute
        name) and ``bound`` the name ``n`` when it is one (the replay reads rows up to that
        count: a token buffer sliced ``[:num_tokens]`` is read up to the replay's
        ``num_tokens``), and ``definition`` the source of that name's one assignment in the
        capturing method when it is arithmetic (``bs * self.captured_req_width``; else "").
        A seventh element, ``tables``: the attributes of ``self`` the capturing methods that bind
        the buffer store their graphs into (``self.draft_graphs[bs] = graph``), empty when one of
        them stores none (a backend keeps its graphs: any replay of the class may read it)."""
        v = self._graph_bound.get(cls.key)
        if v is not None:
            return v
        out: dict[str, tuple[str, str, str, int]] = {}
        tables: dict[str, frozenset | None] = {}  # attribute -> tables (None: some capture keeps none)
        binders: dict[str, set[str]] = {}  # attribute -> the capturing methods that bind it
        capture_written: dict[str, set[str]] = {}  # capturing method -> attributes it writes first
        binder = ""

        def bind(attr: str, entry: tuple, stored: frozenset) -> None:
            out.setdefault(attr, entry)
            binders.setdefault(attr, set()).add(binder)
            if attr in tables and tables[attr] is None:
                return
            tables[attr] = None if not stored else (tables.get(attr) or frozenset()) | stored

        captured = self.captured_functions(cls)
        capturing = list(self._capture_methods(cls))
        names = {m.name for m in capturing}
        for m in [*capturing, *((h, c) for c in capturing for h in self._capture_helpers(cls, c, names))]:
            stored = None
            if isinstance(m, tuple):
                # a method the capturing method calls with its size (SGLang 0.5.14 on:
                # `forward_batch, ... = self.capture_prepare(bs, num_tokens=num_tokens)`): the views it
                # takes are what the graph captured at that size reads
                m, by = m
                stored = _graph_tables(by.peek())
                binder = by.name
            else:
                binder = m.name
            tree = m.peek()  # one tree for this scan of the method (nothing kept by id)
            aliases = _self_aliases(tree)
            defs = _single_definitions(tree)
            stored = _graph_tables(tree) if stored is None else stored
            # a function a manager captures runs inside the graph: the rows it writes before (or
            # without) reading them are the graph's own work, not inputs a replay reads
            inputs = _graph_read_first(tree, aliases) if m.name in captured else None
            if inputs:
                inputs -= self._written_by_holder_calls(cls, tree, aliases, inputs)
            if inputs is not None:
                stored = captured[m.name]  # the managers keep its graphs: their replays run it
            # a local bound to a slice (or to `slice if c else None`) and handed on by keyword:
            # the keyword names the field (`aux = buffers.aux_hidden_states[:n] if f else None`,
            # `ForwardBatch(aux_hidden_states_buffer=aux)`)
            sliced: dict[str, ast.Subscript] = {}
            for sub in ast.walk(tree):
                if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                    v = sub.value.body if isinstance(sub.value, ast.IfExp) else sub.value
                    if isinstance(v, ast.Subscript) and _self_slice(v, aliases):
                        sliced[sub.targets[0].id] = v
            for sub in ast.walk(tree):
                # `out=` names where a torch op writes, not an input: the slice keeps its own name
                value = sliced.get(sub.value.id) if isinstance(sub, ast.keyword) \
                    and isinstance(sub.value, ast.Name) else getattr(sub, "value", None)
                if isinstance(sub, ast.keyword) and sub.arg and sub.arg != "out" and value is not None \
                        and (attr := _self_slice(value, aliases)):
                    if inputs is not None and attr not in inputs:
                        continue
                    b = _bound_name(value)
                    bind(attr, (sub.arg, b, defs.get(b, ""), _slice_dim(value)), stored)
            for sub in ast.walk(tree):
                attr = _self_slice(sub, aliases) if isinstance(sub, ast.Subscript) else None
                if attr and (inputs is None or attr in inputs):
                    b = _bound_name(sub)
                    bind(attr, (attr.rsplit(".", 1)[-1], b, defs.get(b, ""), _slice_dim(sub)), stored)
            dict_slices = list(_dict_slices(tree, aliases, lambda n, mod=cls.module: self._module_strings(mod, n)))
            if inputs is None:
                # rows a capturing method (or the helper it hands its size) writes before the
                # graph reads them, on every path to the read, are the capture's own: they do not
                # hold what they held before
                capture_written.setdefault(binder, set()).update(
                    _written_before_read(tree, aliases, [(a, sub) for a, _k, sub in dict_slices]))
            for attr, key, sub in dict_slices:
                # `self.D["k"][:n]` of a dict of buffers (also `s[name][:n]` in a loop over a module
                # tuple of keys): the entry's buffer, a location of its own
                if inputs is None or attr in inputs:
                    b = _bound_name(sub)
                    bind(attr, (key, b, defs.get(b, ""), _slice_dim(sub)), stored)
            for attr, name, b in self._slot_views(cls, tree):
                if inputs is None or attr in inputs:
                    bind(attr, (name, b, defs.get(b, ""), 0), stored)
        host = self.profile.graph_host
        self._graph_binders[cls.key] = {a: frozenset(b) for a, b in binders.items()}
        self._capture_written[cls.key] = {m: frozenset(a) for m, a in capture_written.items()}
        v = self._graph_bound[cls.key] = tuple(sorted(
            (a, f, b, d, dim, tables[a] or frozenset()) for a, (f, b, d, dim) in out.items()
            if not any(fnmatch.fnmatchcase(a.rsplit(".", 1)[-1], pat) for pat in host)))
        return v

    def _module_strings(self, module: str, name: str) -> tuple[str, ...] | None:
        """The strings of a module-level ``NAME = ("a", "b")`` of ``module`` (:func:`module_strings`)."""
        mod = self.project.module(module) if module else None
        return module_strings(mod.top_statements(), name) if mod is not None else None

    def _written_by_holder_calls(self, cls: ClassInfo, fn: ast.AST, aliases: dict[str, str],
                                 inputs: set[str]) -> set[str]:
        """Of ``inputs`` (attribute paths a captured function reads before it writes them), those
        a method of the object holding them may write before the first read: a call
        ``self.h.m(...)`` earlier in ``fn`` (``self.candidate_sampler.sample(...)`` before
        ``self.candidate_sampler.scores[:n]``), where ``m`` of a class ``self.h`` may hold stores,
        writes in place, hands to a call (a kernel launch) or passes as ``out=`` the attribute
        ``self.scores``.  Those rows are the graph's own work."""
        first: dict[str, tuple[int, int]] = {}
        for sub in ast.walk(fn):
            attr = _self_slice(sub, aliases) if isinstance(sub, ast.Subscript) else None
            if attr in inputs:
                pos = (sub.lineno, sub.col_offset)
                if attr not in first or pos < first[attr]:
                    first[attr] = pos
        out: set[str] = set()
        # calls that run on every path, in order: those of the function's own top-level simple
        # statements (a call under a test or in a loop may not run), ending before the read
        calls = [sub for st in getattr(fn, "body", ()) if isinstance(st, (ast.Expr, ast.Assign, ast.AnnAssign))
                 for sub in ast.walk(st)
                 if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)]
        for sub in calls:
            holder = _attr_path(sub.func.value, aliases) if isinstance(sub.func.value, ast.Attribute) else None
            if not holder:
                continue
            end = (sub.end_lineno or sub.lineno, sub.end_col_offset or 0)
            for attr, pos in first.items():
                if attr in out or not attr.startswith(holder + ".") or end > pos:
                    continue
                rest = attr[len(holder) + 1:]
                for c in self.attr_chain_classes(cls, holder.split(".")):
                    m = self.project.find_method(c, sub.func.attr)
                    if m is not None and _may_write_self_attr(m.peek(), rest):
                        out.add(attr)
                        break
        return out

    def capture_written(self, cls: ClassInfo) -> dict[str, frozenset[str]]:
        """Capturing method -> the attribute paths of :meth:`graph_bound` it (or a helper it calls
        with its size) writes rows of before reading them (``s["x"][:bs].copy_(v)`` then
        ``ForwardBatch(x=s["x"][:bs])``): at capture those rows hold what the capture wrote."""
        self.graph_bound(cls)
        return self._capture_written.get(cls.key, {})

    def graph_binders(self, cls: ClassInfo) -> dict[str, frozenset[str]]:
        """Attribute path of each graph-bound buffer of :meth:`graph_bound` -> the names of the
        capturing methods that bind it (itself, or through a helper it calls with its size)."""
        self.graph_bound(cls)
        return self._graph_binders.get(cls.key, {})

    def graph_inputs(self, cls: ClassInfo) -> tuple["GraphInput", ...]:
        """Persistent buffers a CUDA graph captured by this class reads whole, whose value the
        capture computes from the size it captures: in a capturing method (see
        :meth:`graph_bound`), a whole-buffer write (``buffers.x.copy_(v)``, ``.fill_(v)``,
        ``buffers.x[...] = v``) whose value ``v`` depends on a count (a name with an axis in the
        profile, or the method's first parameter when it is an ``int`` or unannotated, directly or
        through the method's locals: ``t = torch.tensor([num_tokens] * k)``),
        of a buffer the method hands on whole (``x=buffers.x``, or through a local bound to it).
        The graphs are captured at many sizes and share the buffer: after the captures it holds
        the last size's value, so every replay must write it for its own size."""
        v = self._graph_inputs.get(cls.key)
        if v is not None:
            return v
        host = self.profile.graph_host
        out: dict[str, GraphInput] = {}
        for m in self._capture_methods(cls):
            tree = m.peek()  # one tree for this scan (nothing kept by id)
            aliases = _self_aliases(tree)
            defs: dict[str, list[ast.AST]] = {}
            for sub in ast.walk(tree):
                if isinstance(sub, ast.Assign):
                    for t in sub.targets:
                        if isinstance(t, ast.Name):
                            defs.setdefault(t.id, []).append(sub.value)
                elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.value is not None:
                    defs.setdefault(sub.target.id, []).append(sub.value)
            handed = _whole_arguments(tree, aliases, defs, self._binds_graph_input)
            tables = _graph_tables(tree)
            # the size a capture method is called with: its first parameter, annotated `int` or not
            # at all (`capture_one_shape(self, size, forward, stream_idx: int = 0)`)
            a = tree.args
            first = (*a.posonlyargs, *a.args)[1:2]
            sizes = {p.arg for p in first
                     if p.annotation is None or (isinstance(p.annotation, ast.Name) and p.annotation.id == "int")}
            mod = self.project.module(m.module)
            for sub in ast.walk(tree):
                target = value = None
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                        and sub.func.attr in ("copy_", "fill_") and sub.args:
                    target, value = sub.func.value, sub.args[0]
                elif isinstance(sub, ast.Assign) and len(sub.targets) == 1 \
                        and isinstance(sub.targets[0], ast.Subscript) and _whole_index(sub.targets[0]):
                    target, value = sub.targets[0].value, sub.value
                path = _attr_path(target, aliases) if isinstance(target, ast.Attribute) else None
                if path is None or path not in handed or path in out \
                        or any(fnmatch.fnmatchcase(path.rsplit(".", 1)[-1], pat) for pat in host):
                    continue
                count = self._count_in(value, defs, set(), sizes)
                if count:
                    out[path] = GraphInput(path, handed[path], mod.path if mod is not None else "",
                                           sub.lineno, ast.unparse(sub), count, tables)
        v = self._graph_inputs[cls.key] = tuple(out[k] for k in sorted(out))
        return v

    def holders(self, cls: ClassInfo, attr: str) -> tuple[str, ...]:
        """Attributes of ``self`` that a method of ``cls`` (its MRO) sets to the result of a call
        handed the buffer at attribute path ``attr`` or an object holding it
        (``self.refresher = Refresher(self.buf)``, ``self.registry = build(source=self.buffers)``
        for ``buffers.x``): an object that may keep the buffer and write it in its methods."""
        key = (cls.key, attr)
        v = self._holders.get(key)
        if v is not None:
            return v
        parts = attr.split(".")
        wanted = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        out: set[str] = set()
        for c in self.project.mro(cls):
            for m in c.methods.values():
                tree = m.peek()  # one tree for this scan (nothing kept by id)
                aliases = _self_aliases(tree)
                for sub in ast.walk(tree):
                    if not (isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call)):
                        continue
                    handed = [*sub.value.args, *(k.value for k in sub.value.keywords)]
                    if not any(_attr_path(a, aliases) in wanted for a in handed if isinstance(a, ast.Attribute)):
                        continue
                    for t in sub.targets:
                        p = _attr_path(t, aliases) if isinstance(t, ast.Attribute) else None
                        if p is not None:
                            out.add(p)
        v = self._holders[key] = tuple(sorted(out))
        return v

    def field_aliases(self, cls_key: str, attr: str) -> tuple[tuple[str, str], ...]:
        """How an object of class ``cls_key`` gets its attribute ``attr`` from the object that
        holds it: ``((F, G), ...)`` when every assignment of ``self.<attr>`` in the class (its
        MRO) stores one parameter of one method ``m`` (``def init_buffers_and_capture(self,
        buffers): self.buffers = buffers``) and every call of ``.m(`` in the project is made, in
        a method, on ``self.F`` or an element of it (``self.runners[step].m(...)``) and hands
        ``self.G`` for that parameter (``self.buffers``): then ``<holder>.F.attr`` (or
        ``<holder>.F[*].attr``) is the very object ``<holder>.G`` (SGLang's step runners share
        their composite's buffers).  Empty when any of that does not hold."""
        key = (cls_key, attr)
        got = self._aliases.get(key)
        if got is not None:
            return got
        self._aliases[key] = ()
        found = self._param_fields(cls_key).get(attr)
        if found is None:
            return ()
        m, param = found
        params = list(m.header().params)[1:]  # (positional parameters, without `self`)
        pos = params.index(param) if param in params else None
        pairs: set[tuple[str, str]] = set()
        word = f".{m.name}("
        mentioning = self._mentions.get(word)
        if mentioning is None:
            mentioning = self._mentions[word] = self.project.modules_mentioning([word])
        for mod_key in mentioning:
            mod = self.project.module(mod_key)
            if mod is None:
                return ()
            for sub in ast.walk(mod.tree):
                if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == m.name):
                    continue
                recv = sub.func.value
                if isinstance(recv, ast.Subscript):
                    recv = recv.value
                arg = next((k.value for k in sub.keywords if k.arg == param), None)
                if arg is None and pos is not None and pos < len(sub.args):
                    arg = sub.args[pos]
                if not (_self_field(recv) and arg is not None and _self_field(arg)):
                    return ()
                pairs.add((recv.attr, arg.attr))
        got = self._aliases[key] = tuple(sorted(pairs))
        return got

    def _param_fields(self, cls_key: str) -> dict[str, tuple[FunctionInfo, str] | None]:
        """Attributes of ``self`` the class (its MRO) assigns, each with the one method and the
        parameter it is always assigned from (``self.buffers = buffers`` in
        ``init_buffers_and_capture``), or None (assigned elsewhere too, from anything else, in a
        constructor, or the parameter is rebound first)."""
        got = self._param_field_memo.get(cls_key)
        if got is not None:
            return got
        out: dict[str, tuple[FunctionInfo, str] | None] = {}
        cls = self.project.class_info(cls_key)
        for c in self.project.mro(cls) if cls is not None else ():
            for m in c.methods.values():
                if not self._runs_for(cls, m):
                    continue  # a base's method the class overrides without calling it
                node = m.peek()  # the result keeps no node
                a = node.args
                params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)} - {"self"}
                rebound = {n.id for sub in ast.walk(node)
                           if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                           for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
                           for n in ast.walk(t) if isinstance(n, ast.Name)}
                for sub in ast.walk(node):
                    targets = sub.targets if isinstance(sub, ast.Assign) else \
                        [sub.target] if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else []
                    for t in targets:
                        for n in ast.walk(t):
                            if not (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                                    and n.value.id == "self"):
                                continue
                            ok = (isinstance(sub, ast.Assign) and len(sub.targets) == 1 and t is n
                                  and isinstance(sub.value, ast.Name) and sub.value.id in params
                                  and sub.value.id not in rebound and not m.name.startswith("__"))
                            here = (m, sub.value.id) if ok else None
                            if n.attr in out and (out[n.attr] is None or here is None
                                                  or out[n.attr][0].key != m.key or out[n.attr][1] != here[1]):
                                out[n.attr] = None
                            elif n.attr not in out:
                                out[n.attr] = here
        self._param_field_memo[cls_key] = out
        return out

    def _binds_graph_input(self, call: ast.Call, inside: bool) -> bool:
        """A call of a capturing method whose keyword arguments the captured graph reads: one in
        the ``with ...graph(...):`` block (the captured forward), or the construction of a sink
        class of the profile (``ForwardBatch(...)``, handed to the forward)."""
        return inside or self.profile.is_sink_constructor(_dotted(call.func) or "")

    def _count_in(self, node: ast.AST, defs: dict[str, list[ast.AST]], seen: set[str],
                  sizes: set[str] = frozenset()) -> str:
        """The first count name (one with an axis in the profile, or one of ``sizes``: the
        capture method's size parameter, never reassigned) ``node`` reads, directly or through
        the locals ``defs`` assigns; "" if none."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id not in seen:
                if self.profile.count_axis(sub.id) or (sub.id in sizes and sub.id not in defs):
                    return sub.id
                seen.add(sub.id)
                for d in defs.get(sub.id, ()):
                    found = self._count_in(d, defs, seen, sizes)
                    if found:
                        return found
        return ""

    def _runs_for(self, cls: ClassInfo, m: FunctionInfo) -> bool:
        """Whether objects of ``cls`` run method ``m`` of their MRO under its name: it is the one
        the name resolves to, or each override between calls ``super().name(...)``."""
        r = self.project.find_method(cls, m.name)
        while r is not None and r is not m:
            # (an override whose text does not name `super` calls no base: not parsed)
            if not _may_name(self._text(r), "super") or not any(
                    isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr == m.name and isinstance(sub.func.value, ast.Call)
                    and isinstance(sub.func.value.func, ast.Name) and sub.func.value.func.id == "super"
                    for sub in ast.walk(r.peek())):
                return False
            r = self.project.find_method(cls, m.name, after=r.owner)
        return r is m

    def captured_functions(self, cls: ClassInfo) -> dict[str, frozenset[str]]:
        """The methods of ``cls`` that a method of its class (or a base) hands to a call the
        profile's ``[graphs] captured_by`` names (``self.prefill_cudagraph_manager.capture(
        self._prefill, ...)``; through a local, ``fn = self._a if c else self._b``), each with
        the attributes of ``self`` holding the managers that capture it (``prefill_cudagraph_manager``;
        empty for a manager held elsewhere): a manager captures one graph per size by calling
        them, and its replays run what they read."""
        pats = self.profile.graph_captured_by
        if not pats:
            return {}
        v = self._captured.get(cls.key)
        if v is not None:
            return v
        out: dict[str, set[str]] = {}
        # a method whose text does not name a pattern's last part (`capture` for
        # `*cudagraph_manager.capture`) makes no such call: not parsed
        words = None if any(any(ch in p.rpartition(".")[2] for ch in "*?[") for p in pats) \
            else {p.rpartition(".")[2] for p in pats}
        for c in self.project.mro(cls):
            for m in c.methods.values():
                if words is not None and not any(_may_name(self._text(m), w) for w in words):
                    continue
                local: dict[str, set[str]] = {}
                calls = []
                for sub in ast.walk(m.peek()):  # the result keeps no node
                    if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                        local.setdefault(sub.targets[0].id, set()).update(_self_methods(sub.value))
                    elif isinstance(sub, ast.Call) and any(fnmatch.fnmatchcase(_dotted(sub.func) or "", pat)
                                                           for pat in pats):
                        calls.append(sub)
                for sub in calls:
                    recv = _dotted(sub.func.value) if isinstance(sub.func, ast.Attribute) else None
                    manager = recv[len("self."):] if recv and recv.startswith("self.") and recv.count(".") == 1 else ""
                    # positional or keyword (`capture(self._generate, prepare_forward=self._prep)`:
                    # the manager runs both inside the graph)
                    for a in (*sub.args, *(k.value for k in sub.keywords)):
                        for name in (local.get(a.id, set()) if isinstance(a, ast.Name) else _self_methods(a)):
                            if self.project.find_method(cls, name) is not None:  # not `self.model`
                                out.setdefault(name, set()).update({manager} - {""})
        v = self._captured[cls.key] = {k: frozenset(ms) for k, ms in out.items()}
        return v

    def graph_read_conditions(self, cls: ClassInfo) -> dict[str, str]:
        """Slices a captured function (:meth:`captured_functions`) hands only to methods of the class
        that read them only under ``if <p> is not None:``, ``p`` a parameter the call binds to an
        attribute of ``self``: attribute path -> that attribute (``"self.draft_logits"``).  The
        graph reads such a slice only when the attribute is set (vLLM 0.25.0's drafter:
        ``self.sample_draft(..., idx_mapping, ..., self.draft_logits)``, whose ``idx_mapping`` feeds
        the sampling kernel under ``if draft_logits is not None:``), so a reset made under the same
        test covers the replay's read."""
        got = self._read_conds.get(cls.key)
        if got is not None:
            return got
        out: dict[str, str] = {}
        self._read_conds[cls.key] = out
        captured = self.captured_functions(cls)
        for name in captured:
            m = self.project.find_method(cls, name)
            if m is None:
                continue
            tree = m.peek()  # one tree for this scan (nothing kept by id)
            aliases = _self_aliases(tree)
            conds: dict[str, set[str | None]] = {}
            local_of: dict[str, str] = {}  # local -> attribute path of the slice it holds
            for sub in ast.walk(tree):
                if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) \
                        and isinstance(sub.value, ast.Subscript) and (a := _self_slice(sub.value, aliases)):
                    local_of[sub.targets[0].id] = a
            parents = _parents(tree)
            for sub in ast.walk(tree):
                attr = None
                if isinstance(sub, ast.Subscript) and (a := _self_slice(sub, aliases)):
                    par = parents.get(id(sub))
                    if isinstance(par, ast.Assign) and par.value is sub and len(par.targets) == 1 \
                            and isinstance(par.targets[0], ast.Name):
                        continue  # bound to a local: its uses are judged
                    attr = a
                elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in local_of:
                    attr = local_of[sub.id]
                if attr is None:
                    continue
                conds.setdefault(attr, set()).add(self._use_condition(cls, sub, parents))
            for attr, cs in conds.items():
                if len(cs) == 1 and None not in cs and out.get(attr, next(iter(cs))) == next(iter(cs)):
                    out[attr] = next(iter(cs))
        return out

    def _use_condition(self, cls: ClassInfo, use: ast.AST, parents: dict[int, ast.AST]) -> str | None:
        """``self.<attr>`` when ``use`` is an argument of ``self.f(...)`` whose parameter ``f`` reads
        only under ``if <q> is not None:``, with ``q`` bound at the call to ``self.<attr>``; else None."""
        call = parents.get(id(use))
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"):
            return None
        f = self.project.find_method(cls, call.func.attr)
        if f is None:
            return None
        bound = bind_arguments(call, f.call_params(bound=True))
        mine = next((p for p, v in bound.items() if v is use), None)
        if mine is None:
            return None
        ftree = f.peek()  # one tree for this scan (nothing kept by id)
        fparents = _parents(ftree)
        guard: str | None = None
        for sub in ast.walk(ftree):
            if not (isinstance(sub, ast.Name) and sub.id == mine and isinstance(sub.ctx, ast.Load)):
                continue
            cur, found = sub, None
            while id(cur) in fparents:
                par = fparents[id(cur)]
                if isinstance(par, ast.If) and any(cur is b for b in par.body) \
                        and isinstance(par.test, ast.Compare) and len(par.test.ops) == 1 \
                        and isinstance(par.test.ops[0], ast.IsNot) and isinstance(par.test.left, ast.Name) \
                        and isinstance(par.test.comparators[0], ast.Constant) and par.test.comparators[0].value is None:
                    q = bound.get(par.test.left.id)
                    d = _dotted(q) if q is not None else None
                    if d and d.startswith("self.") and d.count(".") == 1:
                        found = d
                        break
                cur = par
            if found is None or (guard is not None and guard != found):
                return None
            guard = found
        return guard

    def graph_managers(self, cls: ClassInfo) -> frozenset[str]:
        """The attributes of ``self`` holding the managers that capture methods of ``cls``."""
        return frozenset(m for ms in self.captured_functions(cls).values() for m in ms)

    def _capture_methods(self, cls: ClassInfo):
        """The methods of ``cls`` that capture a CUDA graph, as its objects resolve them (a
        base's method a subclass overrides is not run by the subclass's objects): named by the
        profile's ``[graphs] capture``, handed to a ``[graphs] captured_by`` call
        (:meth:`captured_functions`), or holding a ``with ...graph(...):`` block."""
        capture = self.profile.graph_capture
        captured = self.captured_functions(cls)
        for c in self.project.mro(cls):
            for m in c.methods.values():
                if not self._runs_for(cls, m):
                    continue  # overridden, and the override does not call it
                # (a `with ...graph(...):` block needs `graph` in the method's text: the others are
                # not parsed, and the node of one that is is not kept)
                if m.name in captured or any(fnmatch.fnmatchcase(m.name, pat) for pat in capture) or (
                        _may_name(self._text(m), "graph") and any(
                            isinstance(w, ast.With) and any(
                                isinstance(i.context_expr, ast.Call)
                                and (_dotted(i.context_expr.func) or "").rsplit(".", 1)[-1] == "graph"
                                for i in w.items) for w in ast.walk(m.peek()))):
                    yield m

    def _capture_helpers(self, cls: ClassInfo, m: FunctionInfo, capturing: set[str]) -> list[FunctionInfo]:
        """Methods of ``cls`` that capturing method ``m`` calls on ``self`` handing on its size
        (its first parameter, or a local computed from it: ``self.capture_prepare(bs,
        num_tokens=num_tokens)``) and whose result it binds: they prepare the inputs of the
        graph ``m`` captures at that size.  One level; capturing methods themselves are not
        helpers (they are scanned as such)."""
        first = list(m.header().params[1:2])
        if not first:
            return []
        tree = m.peek()  # one tree for this scan (nothing kept by id)
        sized = set(first)
        for sub in ast.walk(tree):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) \
                    and any(isinstance(n, ast.Name) and n.id in first for n in ast.walk(sub.value)) \
                    and not isinstance(sub.value, ast.Call):
                sized.add(sub.targets[0].id)  # `bs = size`, `num_tokens = size * w`
        out: dict[str, FunctionInfo] = {}
        for sub in ast.walk(tree):
            if not (isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call)):
                continue
            call = sub.value
            f = call.func
            if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                    and f.attr not in capturing):
                continue
            handed = [*call.args, *(k.value for k in call.keywords)]
            if not any(isinstance(x, ast.Name) and x.id in sized for x in handed):
                continue
            h = self.project.find_method(cls, f.attr)
            if h is not None and h.key != m.key:
                out.setdefault(h.key, h)
        return list(out.values())

    def capture_writes(self, cls: ClassInfo) -> frozenset[str]:
        """Attribute paths (as :meth:`graph_bound` names them) of the persistent buffers a
        capturing method of ``cls`` writes itself (``self.x[:bs].fill_(1)``, ``self.x.zero_()``,
        ``buffers.x[:n] = v``, any in-place ``*_`` method): what such a buffer held when the graph
        was captured is not its construction value."""
        v = self._capture_writes.get(cls.key)
        if v is not None:
            return v
        out: set[str] = set()
        for m in self._capture_methods(cls):
            tree = m.peek()  # one tree for this scan (nothing kept by id)
            aliases = _self_aliases(tree)
            for sub in ast.walk(tree):
                target = None
                if isinstance(sub, (ast.Assign, ast.AugAssign)):
                    for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                        if isinstance(t, ast.Subscript):
                            target = t.value
                elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                        and sub.func.attr.endswith("_") and not sub.func.attr.startswith("_"):
                    target = sub.func.value
                while isinstance(target, ast.Subscript):
                    target = target.value
                path = _attr_path(target, aliases) if target is not None else None
                if path:
                    out.add(path)
        v = self._capture_writes[cls.key] = frozenset(out)
        return v

    def registry_slots(self, cls: ClassInfo) -> tuple[tuple[str, str, str, str, bool], ...]:
        """Slots a class registers in a buffer registry (profile ``[registry]``):
        ``(buffer attribute, axis, policy, pad value as literal text or "", computed)`` for each
        ``SlotClass(name, self.X, axis=..., padding_policy=Policy.P, pad_value=v)`` (``computed``:
        given a hook that computes the whole buffer at every fill)."""
        spec = self.profile.registry
        if spec is None:
            return ()
        v = self._slots.get(cls.key)
        if v is not None:
            return v
        out: list[tuple[str, str, str, str, bool]] = []
        for c in self.project.mro(cls):
            mod = self.project.module(c.module)
            for m in c.methods.values():
                for sub in ast.walk(m.peek()):  # (the answer is kept by class: the tree is not)
                    if not isinstance(sub, ast.Call):
                        continue
                    if (_dotted(sub.func) or "").rsplit(".", 1)[-1] in spec.slot_classes:
                        buf = self._slot_buffer(sub)
                        if isinstance(buf, ast.Attribute) and isinstance(buf.value, ast.Name) \
                                and buf.value.id == "self":
                            out.append((buf.attr, *self._slot_policy(sub)))
                    elif mod is not None:
                        out.extend(self._built_slots(sub, mod))
        v = self._slots[cls.key] = tuple(out)
        return v

    def _slot_views(self, cls: ClassInfo, fn: ast.AST) -> list[tuple[str, str, str]]:
        """Padded views of registry slots ``fn`` takes (profile ``[registry] lookup``,
        ``slice_method``, ``slice_counts``): ``registry.get_slot("positions").slice_for(bs,
        num_tokens)``, also through a helper nested in ``fn`` that does it for the name it is
        given (``def _slot(name): return registry.get_slot(name).slice_for(bs, num_tokens)``;
        ``_slot("positions")``): ``(buffer attribute path, slot name, bound name)`` for each, the
        bound being the argument the slot's axis counts with (SGLang 0.5.13 on binds its graph
        inputs so)."""
        spec = self.profile.registry
        if spec is None or not spec.lookup or not spec.slice_method:
            return []
        slots = {path.rsplit(".", 1)[-1]: (path, axis) for path, axis, *_ in self.registry_slots(cls)}
        if not slots:
            return []
        counts = dict(spec.slice_counts)

        def view(call: ast.AST, name_param: str | None = None) -> tuple[str | None, list[ast.AST]] | None:
            # `<x>.<lookup>(N).<slice_method>(a, b)`: (the slot name N, or None when it is the
            # helper's parameter, and the slice's arguments)
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == spec.slice_method):
                return None
            inner = call.func.value
            if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr == spec.lookup and len(inner.args) == 1):
                return None
            arg = inner.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return arg.value, list(call.args)
            if name_param is not None and isinstance(arg, ast.Name) and arg.id == name_param:
                return None, list(call.args)
            return None

        helpers: dict[str, list[ast.AST]] = {}
        for sub in ast.walk(fn):
            if isinstance(sub, ast.FunctionDef) and sub is not fn and len(sub.args.args) == 1 \
                    and len(sub.body) == 1 and isinstance(sub.body[0], ast.Return):
                got = view(sub.body[0].value, sub.args.args[0].arg)
                if got is not None and got[0] is None:
                    helpers[sub.name] = got[1]
        out = []
        for sub in ast.walk(fn):
            if not isinstance(sub, ast.Call):
                continue
            got = view(sub)
            if got is None and isinstance(sub.func, ast.Name) and sub.func.id in helpers and len(sub.args) == 1 \
                    and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
                got = (sub.args[0].value, helpers[sub.func.id])
            if got is None or got[0] not in slots:
                continue
            path, axis = slots[got[0]]
            i = counts.get(axis)
            if i is None or i >= len(got[1]) or not isinstance(got[1][i], ast.Name):
                continue
            out.append((path, got[0], got[1][i].id))
        return out

    def _slot_buffer(self, call: ast.Call) -> ast.AST | None:
        spec = self.profile.registry
        for k in call.keywords:
            if k.arg == spec.buffer_keyword:
                return k.value
        return call.args[spec.buffer_position] if len(call.args) > spec.buffer_position else None

    def _slot_policy(self, call: ast.Call) -> tuple[str, str, str, bool]:
        """(axis, policy, pad value as literal text or "", computed) of a slot construction;
        ``computed``: it is given a hook that computes its whole buffer at every fill (the
        profile's ``[registry] computed`` keyword, not None)."""
        spec = self.profile.registry
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        axis = kw.get(spec.axis)
        axis_s = axis.value if isinstance(axis, ast.Constant) and isinstance(axis.value, str) else spec.default_axis
        pol = kw.get(spec.policy)
        pol_s = (_dotted(pol) or "").rsplit(".", 1)[-1] if pol is not None else spec.default_policy
        pad = kw.get(spec.pad_value)
        pad_s = repr(pad.value) if isinstance(pad, ast.Constant) and isinstance(pad.value, (int, float)) else ""
        hook = kw.get(spec.computed) if spec.computed else None
        computed = hook is not None and not (isinstance(hook, ast.Constant) and hook.value is None)
        return axis_s, pol_s, pad_s, computed

    def _built_slots(self, call: ast.Call, mod: ModuleInfo) -> list[tuple[str, str, str, str, bool]]:
        """Slots a registry-building function makes for buffers its caller hands it:
        ``build_registry(..., source=self.buffers)`` whose body creates ``Slot("positions", ...)``
        with no buffer and binds each by name, ``getattr(source, slot.name)``: the slot's buffer
        is ``self.buffers.positions``.  (SGLang 0.5.23 ``build_decode_registry``.)"""
        name = _dotted(call.func)
        fn = self.project.resolve(mod, name) if name else None
        if not isinstance(fn, FunctionInfo) or fn.owner:
            return []
        spec = self.profile.registry
        node = fn.peek()  # read for this call's slots only
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        by_name: set[str] = set()  # parameters the body binds slots from by name
        slots: list[tuple[str, ast.Call]] = []
        # `for name in ("a", "b"): Slot(name, ...)`: the names a loop variable takes
        looped: dict[str, list[str]] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.For) and isinstance(sub.target, ast.Name) \
                    and isinstance(sub.iter, (ast.Tuple, ast.List)) and sub.iter.elts \
                    and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in sub.iter.elts):
                looped.setdefault(sub.target.id, []).extend(e.value for e in sub.iter.elts)
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call):
                continue
            if (_dotted(sub.func) or "").rsplit(".", 1)[-1] in spec.slot_classes:
                # a named slot not handed a buffer object (its second argument is a shape
                # function there): the buffer is bound by name below
                if not sub.args or isinstance(self._slot_buffer(sub), ast.Attribute):
                    continue
                first = sub.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    slots.append((first.value, sub))
                elif isinstance(first, ast.Name):
                    slots.extend((n, sub) for n in looped.get(first.id, ()))
            elif isinstance(sub.func, ast.Name) and sub.func.id == "getattr" and len(sub.args) >= 2 \
                    and isinstance(sub.args[0], ast.Name) and sub.args[0].id in params \
                    and isinstance(sub.args[1], ast.Attribute) and sub.args[1].attr == "name":
                by_name.add(sub.args[0].id)
        if not slots or not by_name:
            return []
        given: dict[str, ast.AST] = {k.arg: k.value for k in call.keywords if k.arg}
        for i, a in enumerate(call.args):
            if i < len(params):
                given.setdefault(params[i], a)
        out = []
        for p in sorted(by_name):
            src = given.get(p)
            if not (isinstance(src, ast.Attribute) and isinstance(src.value, ast.Name) and src.value.id == "self"):
                continue
            for slot_name, sl in slots:
                out.append((f"{src.attr}.{slot_name}", *self._slot_policy(sl)))
        return out

    def callers(self, fn: FunctionInfo) -> list[FunctionInfo]:
        """Project functions that call ``fn`` (resolved calls; a text scan finds the candidates)."""
        v = self._callers.get(fn.key)
        if v is not None:
            return v
        name = fn.name
        # a method is also referenced without a call (`self._multi_step_decode` as a value)
        words = [f".{name}(", f"{name}("] if not fn.owner else [f".{name}"]
        out: dict[str, FunctionInfo] = {}
        rx = re.compile(rf"\b{re.escape(name)}\s*\(" if not fn.owner else rf"\.{re.escape(name)}\b")
        for key in self._caller_modules(fn, words):
            if not self.project.text_may_matter(key):
                continue  # a module that mentions nothing relevant: its callers would add nothing
            mod = self.project.module(key)
            if mod is None:
                continue
            for f in _functions(mod):
                if f.key == fn.key:
                    continue
                if not rx.search(mod.line_text(f.start, f.end)):
                    continue
                if any(c.key == fn.key for c in self.callees(f)):
                    out.setdefault(f.key, f)
        v = self._callers[fn.key] = list(out.values())
        return v

    def referenced_unresolved(self, fn: FunctionInfo) -> bool:
        """Whether code may call method ``fn`` where :meth:`callers` does not see it: a reference
        ``x.<name>`` (called or not) in a function that is not one of its resolved callers and
        calls no other function of that name (an unresolved receiver, a bound method kept as a
        value and called later, a callback), one at module level, or ``getattr(x, "<name>")``.
        A method of another class called under the same name through a resolved receiver does
        not count.  Memoised."""
        v = self._unresolved_refs.get(fn.key)
        if v is not None:
            return v
        name = fn.name
        callers = {c.key for c in self.callers(fn)}
        out = False
        rx = re.compile(rf"\.{re.escape(name)}\b|[\"']{re.escape(name)}[\"']")
        for key in self.project.modules_mentioning([f".{name}", f'"{name}"', f"'{name}'"]):
            mod = self.project.module(key)
            if mod is None:
                continue
            spans = [(f.start, f.end, f) for f in _functions(mod)]

            def place(line: int):
                inside = [f for start, end, f in spans if start <= line <= end]
                return min(inside, key=lambda g: g.end - g.start) if inside else None  # (a method, not its class)

            # the text first: a module whose mentions are all in the method itself or its resolved
            # callers is not parsed (a transient parse where one is)
            lines = {mod.line_at(m.start()) for m in rx.finditer(mod.text)}
            if not any((f := place(line)) is None or (f.key != fn.key and f.key not in callers) for line in lines):
                continue
            for node in ast.walk(mod.peek_tree()):
                if isinstance(node, ast.Attribute) and node.attr == name:
                    pass
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                        and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                        and node.args[1].value == name:
                    pass
                else:
                    continue
                f = place(node.lineno)
                if f is None:
                    out = True  # module-level code
                    break
                if f.key == fn.key or f.key in callers:
                    continue
                if isinstance(node, ast.Attribute) and any(c.name == name for c in self.callees(f)):
                    continue  # resolved to another function of that name
                out = True
                break
            if out:
                break
        self._unresolved_refs[fn.key] = out
        return out

    def _caller_modules(self, fn: FunctionInfo, words: list[str]) -> list[str]:
        """Modules whose text may hold a call of ``fn``.  A constructor body is called by name
        only from its own class's subclasses (``super().__init__(...)``, ``Base.__init__(self)``;
        a construction ``Cls(...)`` is not a call of it here): their modules and its own, not
        every module that says ``.__init__`` (most of a large package)."""
        cls = self.project.class_info(fn.owner) if fn.owner and fn.name == "__init__" else None
        if cls is None:
            return self.project.modules_mentioning(words)
        return [fn.module, *(k for k in self.project.subclass_modules(cls) if k != fn.module)]


def _self_scope(fn: ast.AST) -> tuple[str | None, set[int]]:
    """The name a method's own object has in it (its first parameter: ``self``, ``cls`` in a
    class method; None for a static method, a method without one, or one that rebinds it),
    and the ids of the nodes where that name means something else (nested classes, nested
    functions and lambdas with a parameter of that name)."""
    a = fn.args
    first = [*a.posonlyargs, *a.args][:1]
    if not first or any(_dotted(d) == "staticmethod" for d in fn.decorator_list):
        return None, set()
    me = first[0].arg
    foreign: set[int] = set()
    for sub in ast.walk(fn):
        if sub is fn:
            continue
        shadows = isinstance(sub, ast.ClassDef) or isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) \
            and me in {p.arg for p in (*sub.args.posonlyargs, *sub.args.args, *sub.args.kwonlyargs)}
        if shadows:
            foreign.update(id(n) for n in ast.walk(sub))
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Name) and sub.id == me and isinstance(sub.ctx, (ast.Store, ast.Del)) \
                and id(sub) not in foreign:
            return None, set()  # `self = ...`: the name is not reliably the object
    return me, foreign


def _on_self(call: ast.Call, me: str) -> bool:
    """Whether ``call`` calls a method on the calling method's own object (``me``: its first
    parameter): ``self.m(...)``, ``cls.m(...)`` in a class method, ``super().m(...)``
    (``Base.m(self, ...)``: :func:`_passes_self`)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    recv = func.value
    if isinstance(recv, ast.Name) and recv.id == me:
        return True
    return isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super"


def _passes_self(call: ast.Call, me: str) -> bool:
    """``X.m(self, ...)`` with ``X`` a name or dotted name (an unbound method of a base class
    when ``m`` resolves to one)."""
    if not isinstance(call.func, ast.Attribute) or _dotted(call.func.value) is None:
        return False
    return bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == me


def _row_slice(node: ast.Subscript) -> tuple[ast.Slice, int] | None:
    """The slice ``[:n]`` of ``X[:n]`` (dimension 0) or of ``X[:, :n]`` (dimension 1: M-RoPE
    positions ``[3, num_tokens]``) with its dimension, else None."""
    sl = node.slice
    dim = 0
    if isinstance(sl, ast.Tuple) and len(sl.elts) == 2 and isinstance(sl.elts[0], ast.Slice) \
            and sl.elts[0].lower is None and sl.elts[0].upper is None and sl.elts[0].step is None:
        sl, dim = sl.elts[1], 1
    if isinstance(sl, ast.Slice) and sl.lower is None and sl.upper is not None:
        return sl, dim
    return None


def _self_field(node: ast.AST) -> bool:
    """``self.F``: one attribute of ``self``."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _self_slice(node: ast.AST, aliases: dict[str, str] | None = None) -> str | None:
    """``X`` for ``self.X[:n]`` (a slice from row 0; also ``self.X[:, :n]``, see
    :func:`_row_slice`), ``a.x`` for ``self.a.x[:n]`` or for ``b.x[:n]`` with ``b`` a local
    alias of ``self.a`` (``aliases``), else None."""
    if not (isinstance(node, ast.Subscript) and _row_slice(node) is not None
            and isinstance(node.value, ast.Attribute)):
        return None
    d = _dotted(node.value) or ""
    head, _, rest = d.partition(".")
    if head == "self" and rest:
        return rest
    if aliases and head in aliases and rest:
        return f"{aliases[head]}.{rest}"
    return None


def _str_tuple(v: ast.AST, limit: int = 64) -> tuple[str, ...] | None:
    """The strings of a literal tuple, list or set of string constants (at most ``limit``; also
    ``frozenset({...})``, ``tuple([...])``), else None."""
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("frozenset", "set", "tuple", "list") \
            and len(v.args) == 1 and not v.keywords:
        v = v.args[0]
    if isinstance(v, (ast.Tuple, ast.List, ast.Set)) and 0 < len(v.elts) <= limit and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in v.elts):
        return tuple(e.value for e in v.elts)
    return None


def module_strings(body: list[ast.stmt], name: str, limit: int = 64) -> tuple[str, ...] | None:
    """The strings of a module-level ``NAME = ("a", "b")`` (or ``NAME: tuple[str, ...] = ...``)
    assigned once in ``body`` (a module's statements), a literal tuple, list or set of at most
    ``limit`` strings; else None."""
    value = _assigned_once(body, name)
    return _str_tuple(value, limit) if value is not None else None


def _assigned_once(body: list[ast.stmt], name: str) -> ast.expr | None:
    """The value of the one module-level assignment of ``NAME`` in ``body`` (a module's
    statements; annotated too); None where it is assigned other than once."""
    found, seen = None, 0
    for st in body:
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets) \
                or isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == name \
                and st.value is not None:
            seen += 1
            found = st.value
    return found if seen == 1 else None


_CONTAINER_CALLS = {"dict": "dict", "defaultdict": "dict", "OrderedDict": "dict", "WeakValueDictionary": "dict",
                    "list": "list", "deque": "list"}


# a line at column 0 assigning a container literal or constructor: the names that may be pools,
# found in a module's text without its syntax tree (which is then confirmed on the few that are)
_POOL_LINE = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=\s*(?:\{|\[|(?:collections\.)?(?:dict|defaultdict|"
                        r"OrderedDict|list|deque)\(|(?:weakref\.)?WeakValueDictionary\()", re.M)


def pool_candidates(text: str) -> frozenset[str]:
    """Names a module-level line of ``text`` assigns a container (:data:`_POOL_LINE`)."""
    return frozenset(m.group(1) for m in _POOL_LINE.finditer(text))


def module_container(mod: ModuleInfo, name: str) -> str | None:
    """``"dict"`` or ``"list"`` for a module-level mutable container ``NAME = {}`` (``[]``,
    ``dict()``, ``defaultdict(list)``, ``collections.OrderedDict()``, annotated too) assigned once
    in ``mod`` from which a function hands out what it puts there in place of a parameter
    (:func:`_stores_parameter`): a pool the process shares of buffers its callers own, whose
    elements outlive every call; else None.  The module's tree is read for this question and
    not kept."""
    v = _assigned_once(mod.top_statements(), name)
    if isinstance(v, ast.Dict):
        found = "dict"
    elif isinstance(v, ast.List):
        found = "list"
    elif isinstance(v, ast.Call) and not v.args[1:] and (
            f := v.func.id if isinstance(v.func, ast.Name) else
            v.func.attr if isinstance(v.func, ast.Attribute) else "") in _CONTAINER_CALLS:
        found = _CONTAINER_CALLS[f]
    else:
        return None
    return found if _stores_parameter(mod.peek_tree(), name) else None


def _stores_parameter(tree: ast.Module, name: str) -> bool:
    """Whether a function of ``tree`` hands out an element of the container ``name`` in place of
    a parameter it puts there (``canonical = name.get(k); if canonical is None: name[k] = buf``;
    ``name.setdefault(k, buf)``): it pools what its callers hand it (their buffers), not values
    of its own (a memo of tensors it builds, a setter helper of such a memo).  A parameter the
    function rebinds is not what a caller handed it."""
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = fn.args
        params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
        nodes = list(ast.walk(fn))
        params -= {t.id for node in nodes if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For))
                   for tgt in (node.targets if isinstance(node, ast.Assign) else [node.target])
                   for t in ast.walk(tgt) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
        stores = reads = False
        for node in nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in params \
                    and any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                            for t in node.targets):
                stores = True
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
                if node.func.attr in ("get", "pop", "setdefault", "__getitem__"):
                    reads = True
                if node.func.attr in ("setdefault", "append", "__setitem__", "insert") \
                        and any(isinstance(x, ast.Name) and x.id in params for x in node.args[-1:]):
                    stores = True
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                    and isinstance(node.value, ast.Name) and node.value.id == name:
                reads = True
        if stores and reads:
            return True
    return False


def _dict_slices(fn: ast.AST, aliases: dict[str, str], strings):
    """``(attribute path, key, slice)`` for each ``self.D["k"][:n]`` of ``fn`` (or ``b["k"][:n]``
    with ``b`` a local alias of ``self.D``): the path ``D['k']`` names the entry of a dict of
    buffers as the interpreter's locations do.  A key that is a name bound by ``for name in T``
    (``T`` a literal tuple of strings, or a module-level one: ``strings(T)``) stands for each
    of them."""
    loops: dict[str, set[str]] = {}
    for sub in ast.walk(fn):
        if isinstance(sub, (ast.For, ast.comprehension)) and isinstance(sub.target, ast.Name):
            keys = strings(sub.iter.id) if isinstance(sub.iter, ast.Name) else _str_tuple(sub.iter)
            if keys:
                loops.setdefault(sub.target.id, set()).update(keys)
    for sub in ast.walk(fn):
        if not (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Subscript) and _row_slice(sub)):
            continue
        inner = sub.value
        if isinstance(inner.value, ast.Attribute):
            base = _attr_path(inner.value, aliases)
        elif isinstance(inner.value, ast.Name):
            base = aliases.get(inner.value.id)
        else:
            base = None
        if not base:
            continue
        k = inner.slice
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            keys = [k.value]
        elif isinstance(k, ast.Name) and k.id in loops:
            keys = sorted(loops[k.id])
        else:
            continue
        for key in keys:
            if "." not in key and "[" not in key:
                yield f"{base}[{key!r}]", key, sub


def _attr_path(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``x`` for ``self.x``, ``a.x`` for ``self.a.x`` or for ``b.x`` with ``b`` a local alias
    of ``self.a``; a trailing view (``.np``, ``.gpu``) is kept as written; else None."""
    d = _dotted(node) if isinstance(node, ast.Attribute) else None
    if not d:
        return None
    head, _, rest = d.partition(".")
    if head == "self" and rest:
        return rest
    if head in aliases and rest:
        return f"{aliases[head]}.{rest}"
    return None


def _whole_index(node: ast.Subscript) -> bool:
    """``x[...]`` or ``x[:]``: a write of every element."""
    sl = node.slice
    if isinstance(sl, ast.Constant) and sl.value is Ellipsis:
        return True
    return isinstance(sl, ast.Slice) and sl.lower is None and sl.upper is None and sl.step is None


def _whole_arguments(fn: ast.AST, aliases: dict[str, str], defs: dict[str, list[ast.AST]],
                     binds=None) -> dict[str, str]:
    """Attribute paths of ``self`` (see :func:`_attr_path`) that ``fn`` passes whole as a call's
    keyword argument (``x=buffers.x``; through a local bound to it, ``g = buffers.x`` then
    ``x=g``; either arm of ``a if c else b``): path -> the keyword.  ``binds(call, inside)``:
    which calls count (``inside``: the call is in a ``with ...graph(...):`` block); all if None."""
    out: dict[str, str] = {}
    inside: set[int] = set()
    for w in ast.walk(fn):
        if isinstance(w, ast.With) and any(isinstance(i.context_expr, ast.Call)
                                           and (_dotted(i.context_expr.func) or "").rsplit(".", 1)[-1] == "graph"
                                           for i in w.items):
            inside.update(id(n) for n in ast.walk(w))

    def paths(node: ast.AST, depth: int = 0) -> list[str]:
        if isinstance(node, ast.IfExp):
            return paths(node.body, depth) + paths(node.orelse, depth)
        if isinstance(node, ast.Attribute):
            p = _attr_path(node, aliases)
            return [p] if p else []
        if isinstance(node, ast.Name) and depth < 3:
            return [p for d in defs.get(node.id, ()) for p in paths(d, depth + 1)]
        return []

    for call in ast.walk(fn):
        if not isinstance(call, ast.Call) or (binds is not None and not binds(call, id(call) in inside)):
            continue
        for sub in call.keywords:
            if sub.arg:
                for p in paths(sub.value):
                    out.setdefault(p, sub.arg)
    return out


def _parents(root: ast.AST) -> dict[int, ast.AST]:
    """id of each node under ``root`` -> its parent node."""
    return {id(ch): sub for sub in ast.walk(root) for ch in ast.iter_child_nodes(sub)}


def _self_methods(node: ast.AST) -> set[str]:
    """``m`` for ``self.m``; both for ``self.a if c else self.b``; else nothing."""
    if isinstance(node, ast.IfExp):
        return _self_methods(node.body) | _self_methods(node.orelse)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return {node.attr}
    return set()


#: methods whose result is a view of the receiver (a write into it writes the receiver's rows)
_VIEWS = frozenset({"view", "reshape", "flatten", "unsqueeze", "squeeze", "view_as", "narrow", "select",
                    "t", "transpose", "permute", "unflatten", "as_strided", "contiguous", "detach"})
#: in-place tensor methods that write every element of their receiver without reading it (a
#: masked or indexed fill leaves the other rows as they were: not one of them)
_WRITERS = frozenset({"copy_", "fill_", "zero_", "fill", "uniform_", "normal_", "random_",
                      # writes of some elements that read none of the receiver's (`buf[:n].scatter_(1,
                      # col, v)` stores one column of each row): the rows' other elements are not read
                      "scatter_", "index_put_", "index_copy_", "index_fill_", "masked_fill_",
                      "masked_scatter_", "put_"})


def _graph_read_first(fn: ast.AST, aliases: dict[str, str]) -> set[str]:
    """Attribute paths (as :func:`_self_slice` names them) of the slices ``fn`` reads before it
    writes them: the first access in source order (an assignment's value before its target) is
    not the target of an assignment, nor the receiver of an in-place write (``x[:n].copy_(v)``),
    nor an ``out=`` argument."""
    targets: set[int] = set()
    written: set[int] = set()
    for sub in ast.walk(fn):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Subscript):
                        targets.add(id(n))
                        if not isinstance(sub, ast.AugAssign):  # `x[:n] += v` reads the rows too
                            written.add(id(n))
        elif isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Attribute) and sub.func.attr in _WRITERS:
                written.add(id(sub.func.value))
            for k in sub.keywords:
                if k.arg == "out":
                    written.add(id(k.value))
    first: dict[str, tuple[int, int, int, bool]] = {}
    for sub in ast.walk(fn):
        attr = _self_slice(sub, aliases) if isinstance(sub, ast.Subscript) else None
        if attr:
            key = (sub.lineno, 1 if id(sub) in targets else 0, sub.col_offset, id(sub) in written)
            if attr not in first or key[:3] < first[attr][:3]:
                first[attr] = key
    return {a for a, key in first.items() if not key[3]}


_ROW_WRITERS = frozenset({"copy_", "fill_", "zero_"})


def _written_before_read(fn: ast.AST, aliases: dict[str, str], extra=()) -> set[str]:
    """Attribute paths whose every slice ``X[:b]`` in ``fn`` other than a write comes after a
    write of all rows ``[:b]`` (``X[:b].copy_(v)``, ``.fill_(v)``, ``.zero_()``, ``X[:b] = v``, the
    same bound name) made on every path to it: a statement of the same block, or of a block
    enclosing it, before it.  ``extra``: more ``(attribute path, slice)`` pairs (dict entries)."""
    parent: dict[int, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
    slices = [(a, sub) for sub in ast.walk(fn) if isinstance(sub, ast.Subscript) and (a := _self_slice(sub, aliases))]
    slices += list(extra)

    def stmt_of(node: ast.AST) -> ast.AST | None:
        while node is not None and not isinstance(node, ast.stmt):
            node = parent.get(id(node))
        return node

    writes: dict[int, tuple[str, str, ast.stmt]] = {}  # id(slice) -> (attr, bound, statement)
    for attr, sub in slices:
        st = stmt_of(sub)
        b = _bound_name(sub)
        if not b or st is None:
            continue
        p = parent.get(id(sub))
        if isinstance(st, ast.Expr) and isinstance(p, ast.Attribute) and p.attr in _ROW_WRITERS \
                and isinstance(parent.get(id(p)), ast.Call) and st.value is parent.get(id(p)):
            writes[id(sub)] = (attr, b, st)
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and st.targets[0] is sub:
            writes[id(sub)] = (attr, b, st)

    def before(w: ast.stmt, node: ast.AST) -> bool:
        # `w` is a statement of a block that holds `node` (or a block enclosing it), before it
        cur = stmt_of(node)
        while cur is not None:
            block = parent.get(id(cur))
            for field in ("body", "orelse", "finalbody"):
                seq = getattr(block, field, None)
                if isinstance(seq, list) and cur in seq and w in seq:
                    return seq.index(w) < seq.index(cur)
            cur = stmt_of(block) if block is not None and not isinstance(block, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        return False

    out: set[str] = set()
    reads: dict[str, list] = {}
    for attr, sub in slices:
        if id(sub) not in writes:
            reads.setdefault(attr, []).append(sub)
    for attr, subs in reads.items():
        if all(any(a == attr and b == _bound_name(sub) and before(st, sub) for a, b, st in writes.values())
               for sub in subs):
            out.add(attr)
    return out


def _may_write_self_attr(fn: ast.AST, rest: str) -> bool:
    """Whether ``fn`` writes rows of ``self.<rest>``: a store into it or a slice of it, an
    in-place writer on it (or a slice or view of it), ``out=`` it, or handing it to a Triton
    launch (``kernel[grid](...)``) or a custom op (``torch.ops.ns.op(...)``), which write through
    their pointer arguments.  Any other call is taken as reading it (the question decides that
    rows are no replay input: only writes that certainly happen count)."""
    aliases = _self_aliases(fn)
    for sub in ast.walk(fn):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                if isinstance(t, ast.Subscript) and _root_attr(t, aliases) == rest:
                    return True
        elif isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Attribute) and sub.func.attr in _WRITERS \
                    and _root_attr(sub.func.value, aliases) == rest:
                return True
            if any(k.arg == "out" and _root_attr(k.value, aliases) == rest for k in sub.keywords):
                return True
            launch = isinstance(sub.func, ast.Subscript) or (_dotted(sub.func) or "").startswith("torch.ops.")
            if launch and any(_root_attr(a, aliases) == rest for a in (*sub.args, *(k.value for k in sub.keywords))):
                return True
    return False


def _root_attr(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The attribute path of ``self`` that ``node`` is, or is a slice or view of
    (``self.scores[:n]``, ``self.scores.view(-1)``)."""
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS:
            node = node.func.value
        else:
            break
    return _attr_path(node, aliases) if isinstance(node, ast.Attribute) else None


def _self_aliases(fn: ast.AST) -> dict[str, str]:
    """Locals assigned once, an attribute path of ``self`` (``buffers = self.buffers``)."""
    seen: dict[str, list] = {}
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Assign):
            for t in sub.targets:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, []).append(sub.value)
        elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub.value is not None:
            seen.setdefault(sub.target.id, []).append(sub.value)  # `buffers: Bufs = self.buffers`
    out = {}
    for name, values in seen.items():
        d = _dotted(values[0]) if len(values) == 1 else None
        if d and d.startswith("self.") and isinstance(values[0], ast.Attribute):
            out[name] = d[len("self."):]
    return out


def _single_definitions(fn: ast.AST) -> dict[str, str]:
    """Locals of ``fn`` assigned exactly once, by an arithmetic expression of other names
    (``num_tokens = bs * self.captured_req_width``): name -> the expression's source.  A
    graph captured with ``buf[:num_tokens]`` reads that many rows at every replay of its
    shape, so a replay can evaluate the expression in its own terms."""
    seen: dict[str, list] = {}
    for sub in ast.walk(fn):
        targets = sub.targets if isinstance(sub, ast.Assign) else \
            [sub.target] if isinstance(sub, (ast.AugAssign, ast.AnnAssign)) else \
            [sub.target] if isinstance(sub, (ast.For, ast.comprehension)) else []
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    seen.setdefault(n.id, []).append(
                        sub.value if isinstance(sub, ast.Assign) and t is n else None)
    out = {}
    for name, values in seen.items():
        if len(values) == 1 and isinstance(values[0], ast.BinOp) \
                and isinstance(values[0].op, (ast.Mult, ast.Add, ast.Sub)):
            out[name] = ast.unparse(values[0])
    return out


def _bound_name(node: ast.Subscript) -> str:
    rs = _row_slice(node)
    upper = rs[0].upper if rs is not None else None
    return upper.id if isinstance(upper, ast.Name) else ""


def _slice_dim(node: ast.Subscript) -> int:
    rs = _row_slice(node)
    return rs[1] if rs is not None else 0


def _functions(mod: ModuleInfo):
    yield from mod.functions.values()
    for c in mod.classes.values():
        yield from c.methods.values()


def module_functions(mod: ModuleInfo) -> list[FunctionInfo]:
    return list(_functions(mod))


def _root_name(node: ast.AST) -> str | None:
    """``a`` for ``a``, ``a.b``, ``a.b.c``; None for anything else."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
