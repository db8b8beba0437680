"""The project index keeps a syntax tree only for what the analysis reads (padlint/analysis/project.py,
``ModuleInfo``): a module's tree is dropped once it is no longer one of the last few indexed, a
function's or class's node is then parsed from its own lines, and every way of reaching one function
(its info, its class's body, its module's tree) gives the same node object, with the file's lines
and columns."""

from __future__ import annotations

import ast
import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from padlint.analysis.callgraph import CallGraph, PeekedNodes
from padlint.analysis.kernels import tail_stores
from padlint.analysis.project import ModuleInfo, Project, index_module
from padlint.model import split_lines
from padlint.profile import load_profile

from .project_files import check_text

SOURCE = '''\
import torch


class Runner:
    size: int = 4

    @staticmethod
    def helper(x):
        return x + 1

    def step(self, n):
        if n:
            self.buf[n:].fill_(0)
        return self.buf[:n]


@decorated(1)
def build(a,
          b):
    return a * b


class Other(Runner):
    def step(self, n):
        return n
'''


def _fresh(drop: bool):
    mod = index_module("pkg.m", "pkg/m.py", SOURCE)
    if drop:
        mod._spare = None  # what the project does once SPARE_TREES later modules were indexed
    return mod


def _walk_equal(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, include_attributes=True) == ast.dump(b, include_attributes=True)


@pytest.mark.parametrize("drop", [False, True])
def test_nodes_keep_the_files_lines_and_columns(drop: bool) -> None:
    # the whole-module parse is the reference: each node, however it was made, dumps the same
    # with its positions (`helper` is at line 8 column 4, its decorator at line 7; `build`'s
    # decorator at line 17, its `def` at line 18 and its body at line 20)
    mod = _fresh(drop)
    ref = ast.parse(SOURCE)
    runner, build, other = ref.body[1], ref.body[2], ref.body[3]
    helper = mod.classes["Runner"].methods["helper"]
    assert (helper.start, helper.end, helper.node.lineno, helper.node.col_offset) == (7, 9, 8, 4)
    assert _walk_equal(helper.node, runner.body[1])
    assert _walk_equal(mod.classes["Runner"].methods["step"].node, runner.body[2])
    assert mod.functions["build"].start == 17 and mod.functions["build"].node.body[0].lineno == 20
    assert _walk_equal(mod.functions["build"].node, build)
    assert _walk_equal(mod.classes["Other"].node, other)
    assert _walk_equal(mod.classes["Runner"].node, runner)


@pytest.mark.parametrize("order", ["function first", "class first", "tree first"])
def test_one_function_is_one_node_whichever_way_it_is_reached(order: str) -> None:
    # the spare tree is gone, so each way parses anew; the nodes handed out first are adopted by
    # the later parses (a cache keyed on a node's identity must see one function as one node)
    mod = _fresh(drop=True)
    cls = mod.classes["Runner"]
    fn = cls.methods["step"]
    if order == "function first":
        first = fn.node
        assert cls.node.body[2] is first
        assert mod.tree.body[1] is cls.node
    elif order == "class first":
        first = cls.node.body[2]
        assert fn.node is first
        assert mod.tree.body[1].body[2] is first
    else:
        first = mod.tree.body[1].body[2]
        assert fn.node is first and cls.node is mod.tree.body[1]
    assert mod.functions["build"].node is mod.tree.body[2]


def test_a_module_read_for_one_function_keeps_that_function_only() -> None:
    # `build` alone was asked for: no tree and no other node is made, and `build` keeps its node
    mod = _fresh(drop=True)
    node = mod.functions["build"].node
    assert isinstance(node, ast.FunctionDef) and node.name == "build"
    assert mod._tree is None and mod._spare is None
    assert mod.classes["Runner"]._node is None and mod.classes["Runner"].methods["step"]._node is None
    del node
    gc.collect()
    assert mod.functions["build"]._node is not None


def test_a_class_taken_from_the_spare_tree_gives_its_methods_after_the_tree_is_dropped() -> None:
    # the class node came from the spare tree (its methods not handed out yet); once the spare is
    # dropped, a method is the one in that class's body, not a parse of its own lines
    mod = _fresh(drop=False)
    cls = mod.classes["Runner"].node
    mod._spare = None
    assert mod.classes["Runner"].methods["helper"].node is cls.body[1]


@pytest.mark.parametrize("source, name", [
    # the def's last line ends in a backslash before a blank line: its lines alone end in `\`
    ("def f():\n    x = 1 \\\n\ny = 2\n", "f"),
    ("class A:\n    def m(self):\n        x = 1 \\\n\n    y = 2\n", "m"),
    # a form feed before a class: the class is at column 1, its methods at column 4
    ("\x0cclass A:\n    def m(self):\n        return 1\n", "m"),
    # a one-line class body and a def after a `;` line
    ("class A: x = 1\nclass B:\n    def m(self): return 2; pass\n", "m"),
])
def test_a_function_parsed_alone_is_the_modules_node(source: str, name: str) -> None:
    # each function's node, made after the spare tree is dropped, dumps as the whole file's parse
    ref = {n.name: n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    mod = index_module("pkg.e", "pkg/e.py", source)
    mod._spare = None
    infos = [*mod.functions.values(), *(m for c in mod.classes.values() for m in c.methods.values())]
    got = {i.name: i.node for i in infos}
    assert _walk_equal(got[name], ref[name])


def test_the_project_keeps_spare_trees_of_the_last_modules_only(tmp_path) -> None:
    # SPARE_TREES + 2 modules indexed in order: the first two have dropped their trees, the
    # last SPARE_TREES still hold theirs (a function read right after its module was indexed
    # needs no second parse)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    n = Project.SPARE_TREES + 2
    for i in range(n):
        (pkg / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    project = Project()
    project.add_source(str(pkg / "__init__.py"), "")
    mods = [project.module(f"pkg.m{i}") for i in range(n)]
    assert [m._spare is None for m in mods[:3]] == [True, True, False]
    assert all(m._spare is not None for m in mods[2:])
    # a dropped module's function still reads right
    assert ast.unparse(mods[0].functions["f0"].node) == "def f0(x):\n    return x + 0"


def test_a_runner_after_a_form_feed_with_a_trailing_backslash_is_analysed(tmp_path) -> None:
    # a form feed before the class puts it at column 1, and `other` ends in a backslash before a
    # blank line: the interpreter's segments parsed neither (the file was "not analysed"); now the
    # padded slice `positions[:num_tokens_padded]` of the zero-initialised buffer, never reset, is
    # the one PAD001 finding, at the model call on line 10
    text = (
        "import torch\n\n\x0cclass Runner:\n"
        "    def __init__(self):\n"
        "        self.positions = torch.zeros(64, dtype=torch.int64)\n\n"
        "    def execute_model(self, num_tokens, num_tokens_padded):\n"
        "        x = 1 + \\\n            2\n"
        "        self.model(positions=self.positions[:num_tokens_padded])\n\n"
        "    def other(self):\n"
        "        y = 1 \\\n\n"
        "        return y\n"
    )
    ast.parse(text)  # valid Python
    found = check_text(tmp_path, text)
    assert [(f.code, f.line, f.field) for f in found] == [("PAD001", 10, "positions")]


# -- scans that keep their result, not the syntax tree (session of 2026-12-06, fourth) ----------

def test_peek_gives_the_held_node_or_one_that_is_not_kept() -> None:
    # no spare tree and nothing held: `peek` parses `step` for this use, dumps as the file's
    # parse, and leaves nothing held; once `node` was asked for, `peek` gives that very node
    mod = _fresh(drop=True)
    step = mod.classes["Runner"].methods["step"]
    ref = ast.parse(SOURCE).body[1].body[2]
    first = step.peek()
    assert _walk_equal(first, ref)
    assert step._node is None and mod.classes["Runner"]._node is None and mod._tree is None
    assert step.peek() is not first  # made again: nothing may key a sub-node by id past a scan
    held = step.node
    assert step.peek() is held


def test_a_class_read_for_its_fields_hands_out_no_method_node() -> None:
    # `Runner.items()` is the class-level annotation `size: int = 4` (the decorated static method
    # and `step` are defs): the class is parsed for it, and neither the class nor a method keeps
    # a node; `Other` has no class-level statement
    mod = _fresh(drop=True)
    runner = mod.classes["Runner"]
    items = runner.items()
    assert [ast.unparse(st) for st in items] == ["size: int = 4"]
    assert runner._node is None and all(m._node is None for m in runner.methods.values())
    assert mod.classes["Other"].items() == []
    # the methods reached later are still one node each way (the class's body adopts them)
    step = runner.methods["step"].node
    assert runner.node.body[2] is step


def test_module_level_statements_are_kept_without_the_tree() -> None:
    # the module's non-def statements: the import only (two classes and a function are defs);
    # the tree they came from is not kept
    mod = _fresh(drop=True)
    assert [ast.unparse(st) for st in mod.top_statements()] == ["import torch"]
    assert mod._tree is None and mod._spare is None
    assert all(f._node is None for f in mod.functions.values())


_LINE_PIECES = ["a", "bc", " ", "\n", "\r\n", "\r", "\x0c", "\t", "é", "\\", ""]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LINE_PIECES), max_size=12), st.integers(0, 8), st.integers(0, 9))
def test_line_text_is_the_lines_joined(pieces: list[str], start: int, end: int) -> None:
    # the lines Python numbers (`\r\n`, `\r`, `\n` end a line; a form feed does not) from line
    # `start` (>= 1) to `end` (>= 0), sliced from the text by offsets, are what joining the split
    # lines gave; the module's lines are not split
    text = "".join(pieces)
    mod = ModuleInfo(key="k", path="k.py", text=text)
    lines = split_lines(text, keepends=True)
    if start >= 1:
        assert mod.line_text(start, end) == "".join(lines[start - 1:end])
        assert mod._lines is None
    assert mod.lines == lines


def test_the_callees_scan_keeps_no_node(tmp_path) -> None:
    # `CallGraph.callees` reads `Runner.step` once and keeps its answer by key: `step` holds no
    # node after it (a tree run holds the nodes of the functions the interpreter reads, not of
    # every function the call graph looked at), and the answer is the same when asked again
    src = tmp_path / "pkg"
    src.mkdir()
    (src / "__init__.py").write_text("")
    text = ("class Runner:\n"
            "    def helper(self, n):\n        return n\n"
            "    def step(self, n):\n        m = self.helper(n)\n        return m\n")
    (src / "m.py").write_text(text)
    project = Project()
    key = project.add_source(str(src / "m.py"), text)
    graph = CallGraph(project, load_profile("vllm"))
    step = project.module(key).classes["Runner"].methods["step"]
    step.mod._spare = None
    assert [f.name for f in graph.callees(step)] == ["helper"]
    assert step._node is None
    assert [f.name for f in graph.callees(step)] == ["helper"]


def _package(root, files: dict[str, str]) -> Project:
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    project = Project()
    project.roots.append(root)
    return project


KERNEL = '''\
import triton
import triton.language as tl


@triton.jit
def k(a_ptr, b_ptr, n, m, BLOCK: tl.constexpr):
    for i in tl.range(n, m, BLOCK):
        blk = i + tl.arange(0, BLOCK)
        tl.store(a_ptr + blk, 0, mask=blk < m)
    k(b_ptr, a_ptr, n, m, BLOCK)
'''


def test_a_kernel_calling_itself_is_not_its_own_helper(tmp_path) -> None:
    # `k` stores 0 into the tail of `a_ptr`; the call of `k` in its own body is the kernel, not a
    # helper whose stores into its first parameter reset `b_ptr` (with the module's tree gone,
    # the kernel's node and the helper lookup's are two parses of one function)
    project = _package(tmp_path, {"kern.py": KERNEL})
    mod = project.module("pkg.kern")
    mod._spare = None
    fn = mod.functions["k"]
    assert [t.name for t in tail_stores(fn.peek(), PeekedNodes(mod.functions))] == ["a_ptr"]


RUNNER = '''\
import torch


class Base:
    def capture_model(self):
        with torch.cuda.graph(self.g):
            self.fwd()


class Runner(Base):
    def capture_model(self):
        x = 1
        super ().capture_model()

    def warm(self):
        self.cudagraph_manager.capture (self._step)

    def warm2(self):
        (self.cudagraph_manager
         .capture)(self._step2)

    def cap3(self):
        with torch.cuda.\uff47\uff52\uff41\uff50\uff48(self.g):
            self.fwd()

    def _step(self):
        pass

    def _step2(self):
        pass
'''


def test_the_text_prefilters_skip_no_method_the_syntax_accepts(tmp_path) -> None:
    # `super ()`, `.capture (`, a parenthesised `.capture` and a full-width `graph` (Python
    # reads it as `graph`) are what the syntax checks accept; a text test for `super(`,
    # `capture(` or `graph` alone had skipped each
    project = _package(tmp_path, {"runner.py": RUNNER})
    graph = CallGraph(project, load_profile("vllm"))
    mod = project.module("pkg.runner")
    runner, base = mod.classes["Runner"], mod.classes["Base"]
    assert graph._runs_for(runner, base.methods["capture_model"])
    assert sorted(graph.captured_functions(runner)) == ["_step", "_step2"]
    assert sorted(m.name for m in graph._capture_methods(runner)) == ["_step", "_step2", "cap3", "capture_model"]


def test_the_classes_a_factory_returns_grow_with_the_modules_read(tmp_path) -> None:
    # `make() -> Foo` resolves to nothing while `pkg.other` is filtered out unread; once the
    # module is read for another reason the same question finds `Foo` (the annotation and the
    # returned construction): the names are kept, not the first answer
    project = _package(tmp_path, {"other.py": "class Foo:\n    pass\n",
                                  "a.py": "from pkg.other import Foo\n\n\ndef make() -> Foo:\n    return Foo()\n"})
    project.set_text_filter(lambda t: "MAGIC" in t)
    make = project.module("pkg.a").functions["make"]
    assert project.returned_classes(make) == []
    project.module("pkg.other")
    assert [c.key for c in project.returned_classes(make)] == ["pkg.other:Foo", "pkg.other:Foo"]


# ---- the interpreter's own reads (session of 2026-12-06, fifth): segments, headers, stores ----

FACTS = '''\
class R:
    @property
    def width(self) -> int:
        return self.n

    @staticmethod
    @functools.cache
    def plain(a, /, b, *rest, c=1, **kw):
        pass

    def step(self, num_reqs, num_reqs_padded, x):
        y, z = x
        for i in range(3):
            self.buf[num_reqs:num_reqs_padded].fill_(0)
        self.buf[num_reqs:self.max_reqs] = 0
        self.tab[i:i].zero_()
        self.other[num_reqs:](1)
        def inner(k=x):
            return k
        return inner(keyword=y)
'''


def test_a_segment_keeps_no_syntax_tree_and_answers_as_the_tree_did() -> None:
    # what the interpreter asks of a segment's `ast` tree, read once when it is made: every
    # identifier, the names bound, the `(real, padded)` bounds of its tail resets; the segment
    # holds no `ast` node and the function's info holds none after the interpreter parsed it
    from padlint.analysis.interp import Interpreter
    project = Project()
    key = project.add_source("pkg_facts.py", FACTS)
    profile = load_profile("vllm")
    interp = Interpreter(profile, project, CallGraph(project, profile))
    mod = project.module(key)
    mod._spare = None
    step = mod.classes["R"].methods["step"]
    seg = interp.segment(step)
    assert seg is not None and step._node is None
    assert not any(isinstance(v, ast.AST) for v in vars(seg).values())
    # names: parameters, locals, attributes, keywords, nested definitions
    assert {"self", "num_reqs", "num_reqs_padded", "x", "y", "z", "i", "buf", "fill_", "inner",
            "k", "keyword", "max_reqs", "tab", "other", "range"} <= seg.names
    # bound: name stores and parameters (nested ones too), not attributes, loads or `def` names
    assert seg.bound_names == {"self", "num_reqs", "num_reqs_padded", "x", "y", "z", "i", "k"}
    # `x[a:b].fill_(v)` and `x[a:b] = literal` with named bounds (an attribute's last name);
    # `[i:i]` (one name) and a call that is no fill method are not resets
    assert seg.reset_bounds == {("num_reqs", "num_reqs_padded"), ("num_reqs", "max_reqs")}


def test_a_functions_header_is_read_once_and_not_kept() -> None:
    mod = index_module("pkg.h", "pkg/h.py", FACTS)
    mod._spare = None
    width, plain = mod.classes["R"].methods["width"], mod.classes["R"].methods["plain"]
    assert width.header() == (frozenset({"property"}), ("self",), True)
    # plain names only (not `functools.cache`), positional parameters only
    assert plain.header() == (frozenset({"staticmethod"}), ("a", "b"), False)
    assert width._node is None and plain._node is None
    assert plain.header() is plain.header()


def test_constructor_stores_are_read_once_per_function(tmp_path) -> None:
    # `self.x_np = self.x.numpy()` in `__init__` makes `x_np` share `x`'s memory; a tuple
    # store or an augmented store of the attribute anywhere in the constructor rules it out
    from padlint.analysis.interp import Interpreter
    text = ("import torch\n"
            "class B:\n"
            "    def __init__(self, n):\n"
            "        self.x = torch.zeros(n)\n"
            "        self.x_np = self.x.numpy()\n"
            "        self.y = torch.zeros(n)\n"
            "        self.y_np = self.y.numpy()\n"
            "        self.y_np, self.z = self.y.numpy(), 1\n"
            "        self.w = torch.zeros(n)\n"
            "        self.w_np = self.w.numpy()\n"
            "        self.w_np += 0\n")
    project = Project()
    key = project.add_source("pkg_b.py", text)
    profile = load_profile("vllm")
    interp = Interpreter(profile, project, CallGraph(project, profile))
    cls = project.module(key).classes["B"]
    init = cls.methods["__init__"]
    stores = interp._self_stores(init)
    assert stores["x_np"] == ("x",) and stores["x"] == ("",)
    assert stores["y_np"] is False and stores["z"] is False and stores["w_np"] is False
    assert interp._self_stores(init) is stores and init._node is None
    assert interp._class_storage_alias(cls, "x_np") == "x"
    assert interp._class_storage_alias(cls, "y_np") == ""
    assert interp._class_storage_alias(cls, "w_np") == ""
