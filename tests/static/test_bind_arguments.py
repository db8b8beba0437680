"""The one binding of call arguments to parameters (``project.bind_arguments`` with
``FunctionInfo.call_params``) that PAD004's builder scan, the buffer index's kernel
launches and the call graph's guard conditions share."""

import ast
import textwrap

from padlint.analysis.project import Project, bind_arguments

SRC = """
class C:
    def meth(self, a, b, c=None):
        pass

    @classmethod
    def make(cls, a, b):
        pass

    @staticmethod
    def util(a, b):
        pass

def free(a, b, *rest, k=None):
    pass
"""


def _project():
    pr = Project()
    key = pr.add_source("m.py", textwrap.dedent(SRC), "m.py")
    return pr, key


def _call(text: str) -> ast.Call:
    return ast.parse(text, mode="eval").body


def _names(bound: dict[str, ast.AST]) -> dict[str, str]:
    return {p: ast.unparse(a) for p, a in bound.items()}


def test_receiver_left_out_only_where_the_call_passes_it_implicitly():
    pr, key = _project()
    meth, make, util = (pr.function(f"{key}:C.{n}") for n in ("meth", "make", "util"))
    # `self.meth(x, y)`: the receiver is bound implicitly; `C.meth(obj, x, y)` passes it
    assert meth.call_params(bound=True) == ("a", "b", "c")
    assert meth.call_params(bound=False) == ("self", "a", "b", "c")
    # a class method never takes `cls` from the call; a static method has no receiver
    assert make.call_params(bound=False) == ("a", "b")
    assert make.call_params(bound=True) == ("a", "b")
    assert util.call_params(bound=True) == ("a", "b")
    assert pr.function(f"{key}:free").call_params(bound=False) == ("a", "b")


def test_positional_arguments_bind_in_order_and_stop_at_star_args():
    # x -> a, y -> b; after `*xs` nothing is known (the starred list may fill b and c)
    assert _names(bind_arguments(_call("f(x, y)"), ("a", "b", "c"))) == {"a": "x", "b": "y"}
    assert _names(bind_arguments(_call("f(x, *xs, y)"), ("a", "b", "c"))) == {"a": "x"}
    assert bind_arguments(_call("f(*xs)"), ("a", "b")) == {}
    # more arguments than parameters: the extra ones bind nothing (the call is not of this f)
    assert _names(bind_arguments(_call("f(x, y, z)"), ("a", "b"))) == {"a": "x", "b": "y"}


def test_keywords_bind_by_name_filtered_where_the_names_are_given():
    call = _call("f(x, b=y, zz=w, **kw)")
    # no filter: every named keyword; `**kw` binds nothing
    assert _names(bind_arguments(call, ("a", "b"))) == {"a": "x", "b": "y", "zz": "w"}
    # with the names a keyword may bind, `zz` (unknown) is dropped
    assert _names(bind_arguments(call, ("a", "b"), ("a", "b"))) == {"a": "x", "b": "y"}
    # an empty filter binds positional arguments only
    assert _names(bind_arguments(call, ("a", "b"), ())) == {"a": "x"}


def test_the_bound_arguments_are_the_call_nodes_themselves():
    # callers find "the parameter this argument binds" by identity
    call = _call("f(x, b=y)")
    bound = bind_arguments(call, ("a", "b"))
    assert bound["a"] is call.args[0] and bound["b"] is call.keywords[0].value


def test_buffer_index_binds_keywords_after_a_positional_only_receiver():
    """``def launch(self, /, buf, n)`` called as ``o.launch(buf=x, n=k)``: ``self`` is the only
    positional-only parameter, so ``buf`` and ``n`` bind by keyword (before the fix the
    positional-only count was taken after leaving ``self`` out, and ``buf`` could not bind);
    ``def f(a, /, b)`` called as ``f(a=x)`` binds nothing (``a`` is positional-only)."""
    from padlint.analysis.buffers import BufferIndex

    meth = ast.parse("def launch(self, /, buf, n): pass").body[0]
    call = _call("o.launch(buf=x, n=k)")
    assert BufferIndex._bind(meth, call, call.keywords[0], True) == "buf"
    assert BufferIndex._bind(meth, call, call.keywords[1], True) == "n"
    free = ast.parse("def f(a, /, b): pass").body[0]
    call = _call("f(a=x, b=y)")
    assert BufferIndex._bind(free, call, call.keywords[0], False) is None
    assert BufferIndex._bind(free, call, call.keywords[1], False) == "b"
