"""Who calls a constructor body: only its own class's subclasses (``super().__init__(...)``,
``Base.__init__(self)``).  The caller search looked in every module that says ``.__init__``
(most of a large package: 26 s of the 109 s that checking vLLM 0.33.0's
``gpu_model_runner.py`` alone took); it now looks in the modules whose class lines name the
class, directly or through a subclass, and the class's own module.  Written from scratch."""

from __future__ import annotations

from padlint.analysis.callgraph import CallGraph
from padlint.analysis.project import Project
from padlint.profile import load_profile

BASE = '''\
import torch


class Runner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n)
        self.num_reqs_padded = n


class LocalRunner(Runner):
    def __init__(self, n):
        Runner.__init__(self, n)
'''

SUB = '''\
from pkg.base import LocalRunner


class CpuRunner(LocalRunner):
    def __init__(self, n):
        super().__init__(n)
        self.num_reqs_padded = n
'''

OTHER = '''\
class Unrelated:
    def __init__(self, n):
        super().__init__()
        self.num_reqs_padded = n
'''


def test_constructor_callers_are_found_in_subclasses_only(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in {"__init__.py": "", "base.py": BASE, "sub.py": SUB, "other.py": OTHER}.items():
        (pkg / name).write_text(text)
    project = Project()
    key = project.add_source(str(pkg / "base.py"), BASE)
    graph = CallGraph(project, load_profile("vllm"))
    runner_init = project.function(f"{key}:Runner.__init__")
    local_init = project.function(f"{key}:LocalRunner.__init__")
    # `Runner.__init__(self, n)` in the same module; `CpuRunner`'s `super().__init__` reaches
    # `LocalRunner.__init__`, not `Runner.__init__`; `Unrelated` (which also says
    # `.__init__`) calls `object.__init__`
    assert [f.key for f in graph.callers(runner_init)] == [f"{key}:LocalRunner.__init__"]
    assert [f.key for f in graph.callers(local_init)] == ["pkg.sub:CpuRunner.__init__"]
