"""Names are resolved through modules whose own text mentions nothing the analysis acts on
(issue 8: "pre-commit passes a few files: the analysis may read other modules it needs").

The shape is vLLM 0.33.0 Model Runner V2: ``self.model_state = init_model_state(...)``, where
``init_model_state`` (``v1/worker/gpu/model_states/__init__.py``) is a factory annotated
``-> ModelState`` in a package ``__init__`` that names no count, sink or reset.  To save parses,
such a module was not read to resolve a name imported from it, so when the runner was checked
alone (pre-commit, the per-file mutation test) ``self.model_state`` had no class and
``self.model_state.prepare_attn(...)`` was not followed: no finding reached through it.  A whole
tree run had every module as a source and saw it, so a file's findings depended on which other
files were passed.  The modules below are written from scratch; expected findings reasoned in
each test.
"""

from __future__ import annotations

from .project_files import check_files

FILES = {
    "pkg/__init__.py": "",
    # the factory's module: no count, sink, reset or device copy in its text
    "pkg/states/__init__.py": '''\
from pkg.states.base import State


def init_state(cfg) -> State:
    cls = cfg.state_cls
    return cls(cfg)
''',
    "pkg/states/base.py": '''\
class State:
    def prepare_attn(self, seq_lens, num_reqs):
        raise NotImplementedError
''',
    "pkg/states/default.py": '''\
import torch
from dataclasses import dataclass

from pkg.states.base import State


@dataclass
class CommonAttentionMetadata:
    seq_lens: torch.Tensor
    num_reqs: int


class DefaultState(State):
    def __init__(self, cfg):
        self.cfg = cfg

    def prepare_attn(self, seq_lens, num_reqs):
        return CommonAttentionMetadata(seq_lens=seq_lens, num_reqs=num_reqs)
''',
    "pkg/runner.py": '''\
import torch

from pkg.states import init_state


class Runner:
    def __init__(self, cfg):
        self.seq_lens = torch.zeros(cfg.max_num_reqs, dtype=torch.int32)
        self.model_state = init_state(cfg)

    def execute_model(self, lens, num_reqs, num_reqs_padded):
        self.seq_lens[:num_reqs] = lens
        {RESET}
        return self.model_state.prepare_attn(self.seq_lens[:num_reqs_padded], num_reqs_padded)
''',
}


def _findings(tmp_path, reset: str = "pass"):
    # only the runner is checked (as pre-commit would pass it); the package is read as context
    found = check_files(tmp_path, FILES, ["pkg/runner.py"], {"RESET": reset})
    return [(f.line, f.field, f.message) for f in found]


def test_a_dispatch_through_a_factory_in_a_quiet_module_is_followed(tmp_path):
    # `self.model_state` is what `init_state` returns: `State`, dispatched to `DefaultState`,
    # whose `prepare_attn` hands `seq_lens[:num_reqs_padded]` to CommonAttentionMetadata.
    # Rows [num_reqs:num_reqs_padded] were not written this step: one finding, reported at
    # the padded slice in the runner (line 14), naming the sink in the module not checked
    got = _findings(tmp_path)
    assert [(line, fld) for line, fld, _m in got] == [(14, "seq_lens")]
    assert "default.py" in got[0][2]


def test_with_the_reset_it_is_quiet(tmp_path):
    assert _findings(tmp_path, reset="self.seq_lens[num_reqs:num_reqs_padded] = 0") == []


def test_a_conditional_construction_types_the_attribute_with_each_branch():
    """``self.x = A(...) if c else B(...)`` and ``self.y = p or C(...)`` may hold either class:
    a dispatch through the attribute follows each (``None`` adds no class)."""
    import ast

    from padlint.analysis.project import index_module, scan_method_attr_types

    mod = index_module("pkg.m", "pkg/m.py", '''
class A: ...
class B: ...
class C: ...

class Runner:
    def __init__(self, c: bool, p: "A | None"):
        self.x = A() if c else B()
        self.y = p or C()
        self.z = A() if c else None
        self.w = 1 if c else 2
''')
    info = mod.classes["Runner"]
    scan_method_attr_types(info)
    assert info.attr_types["x"] == {"A", "B"}
    assert info.attr_types["y"] == {"A", "C"}
    assert info.attr_types["z"] == {"A"}
    assert "w" not in info.attr_types
    del ast
