"""Inside a method reached by dispatch on a declared base class, ``self`` is of the class that
defines it (issue 8: "simple dispatch on an attribute whose possible classes are known").

The shape is vLLM 0.33.0's builders: the runner holds ``builder: AttentionMetadataBuilder`` and
calls ``builder.build(...)``; the call goes to every project subclass's ``build``, and a
subclass's ``build`` calls its own helper (``self._build_non_spec_metadata(...)`` in
``short_conv_attn.py``), which the base class does not define.  Before, ``self`` inside the
override kept the declared base class, the helper did not resolve, and nothing it wrote or
handed out was seen.  ``super().m()`` must still keep ``self``'s own class.  Written from
scratch; expected findings reasoned in each test.
"""

from __future__ import annotations

import textwrap

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

RUNNER = """\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class Builder:
    def build(self, n_real, n_pad):
        raise NotImplementedError


class ConvBuilder(Builder):
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def _build_inner(self, n_real, n_pad):
        self.seq_lens[:n_real] = 1
        {RESET}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])

    def build(self, n_real, n_pad):
        return self._build_inner(n_real, n_pad)


class Runner:
    def __init__(self, builder: Builder):
        self.builder = builder

    def execute_model(self, num_reqs, num_reqs_padded):
        return self.builder.build(num_reqs, num_reqs_padded)
"""


def _findings(tmp_path, text: str, profile: str = "vllm"):
    p = tmp_path / "runner.py"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    res = check_project([Source(str(p), p.read_text(encoding="utf-8"))], load_profile(profile))
    return [(f.line, f.field) for fs in res.values() if isinstance(fs, list) for f in fs]


def test_a_subclass_override_reached_by_dispatch_calls_its_own_helper(tmp_path):
    # Runner -> builder.build (declared Builder, dispatched to ConvBuilder.build) ->
    # self._build_inner, a method only ConvBuilder has: rows [n_real:n_pad] of
    # `seq_lens[:n_pad]` are never reset (line 22, the metadata constructor)
    assert (22, "seq_lens") in _findings(tmp_path, RUNNER.replace("{RESET}", "pass"))


def test_with_the_reset_in_the_helper_it_is_quiet(tmp_path):
    assert _findings(tmp_path, RUNNER.replace("{RESET}", "self.seq_lens[n_real:n_pad] = 0")) == []


SUPER = """\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class Base:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def _reset(self, n_real, n_pad):
        {BASE_RESET}

    def build(self, n_real, n_pad):
        self.seq_lens[:n_real] = 1
        self._reset(n_real, n_pad)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])


class Child(Base):
    def _reset(self, n_real, n_pad):
        {CHILD_RESET}

    def build(self, n_real, n_pad):
        return super().build(n_real, n_pad)


class Runner:
    def __init__(self, builder: Base):
        self.builder = builder

    def execute_model(self, num_reqs, num_reqs_padded):
        return self.builder.build(num_reqs, num_reqs_padded)
"""

_RESET = "self.seq_lens[n_real:n_pad] = 0"


def test_super_keeps_self_of_the_subclass(tmp_path):
    # the runner declares `Base` and dispatches to `Child.build` too, whose `super().build`
    # (Base.build) calls `self._reset`: there `self` is still a Child, so Child's `_reset` runs.
    # Child's does nothing and Base's resets: Child's path leaves rows [n_real:n_pad] stale
    # (line 20, the constructor in Base.build).  Were `self` narrowed to Base inside the
    # `super()` call, Base's reset would run on that path too and nothing would be reported.
    text = SUPER.replace("{BASE_RESET}", _RESET).replace("{CHILD_RESET}", "pass")
    assert (20, "seq_lens") in _findings(tmp_path, text)
    # both reset: quiet
    text = SUPER.replace("{BASE_RESET}", _RESET).replace("{CHILD_RESET}", _RESET)
    assert _findings(tmp_path, text) == []


# a backend interface and one leaf implementation whose metadata slice is reset by {RESET}
# (the leaf's metadata constructor is on line 22)
_BACKENDS = """\
import torch
from dataclasses import dataclass


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor


class Backend:
    def init_forward_metadata(self, n_real, n_pad):
        raise NotImplementedError


class Leaf(Backend):
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def init_forward_metadata(self, n_real, n_pad):
        self.seq_lens[:n_real] = 1
        {RESET}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:n_pad])
"""


def _composites(n: int, reset: bool) -> str:
    """A runner dispatching on a declared backend base whose implementations are one leaf and
    ``n`` composites, each holding two children declared as the base (SGLang's hybrid
    attention backends)."""
    reset_line = "self.seq_lens[n_real:n_pad] = 0" if reset else "pass"
    parts = [_BACKENDS.replace("{RESET}", reset_line)]
    for i in range(n):
        parts.append(f'''

class Composite{i}(Backend):
    def __init__(self, a: Backend, b: Backend):
        self.a = a
        self.b = b

    def init_forward_metadata(self, n_real, n_pad):
        self.a.init_forward_metadata(n_real, n_pad)
        return self.b.init_forward_metadata(n_real, n_pad)
''')
    parts.append('''

class Runner:
    def __init__(self, backend: Backend):
        self.backend = backend

    def replay(self, raw_bs, bs):
        return self.backend.init_forward_metadata(raw_bs, bs)
''')
    return "".join(parts)


def test_composites_are_not_nested_in_each_other(tmp_path, monkeypatch):
    # 1 leaf and 6 composites, each with two children declared as the base.  Dispatching again
    # from inside a composite would interpret every implementation under every composite, down
    # to the depth limit (7 ** depth calls).  Each implementation is interpreted where the
    # runner's dispatch reaches it: the composites' own dispatches are not followed, so the
    # runner's one call reaches the 7 implementations once each.
    import padlint.analysis.interp as interp

    calls: list[str] = []
    real_call = interp.Interpreter._call

    def counting(self, fn, *a, **k):
        if fn is not None:
            calls.append(fn.name)
        return real_call(self, fn, *a, **k)

    monkeypatch.setattr(interp.Interpreter, "_call", counting)
    found = _findings(tmp_path, _composites(6, reset=False))
    # the leaf's unreset tail is still reported (line 22, its metadata constructor)
    assert (22, "seq_lens") in found
    assert calls.count("init_forward_metadata") <= 7 * 2  # once per implementation and entry
    assert _findings(tmp_path, _composites(6, reset=True)) == []


WRAPPER = _BACKENDS.replace("{RESET}", "pass") + """

class Wrapper(Backend):
    def __init__(self, inner: Backend):
        self.inner = inner

    def init_forward_metadata(self, n_real, n_pad):
        return self.inner.init_forward_metadata(n_real, n_pad)


class Runner:
    def __init__(self, backend: Wrapper):
        self.backend = backend

    def replay(self, raw_bs, bs):
        return self.backend.init_forward_metadata(raw_bs, bs)
"""


def test_a_wrapper_entered_directly_still_dispatches_to_its_inner_backend(tmp_path):
    # the runner declares the wrapper by its own class: `Wrapper.init_forward_metadata` is
    # entered by a plain call, not by a dispatch over implementations, so its dispatch on
    # `self.inner: Backend` is followed and reaches the leaf's unreset tail (line 22)
    assert (22, "seq_lens") in _findings(tmp_path, WRAPPER)
