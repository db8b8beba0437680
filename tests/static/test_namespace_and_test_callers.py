"""A file checked alone (pre-commit) sees the whole package: namespace subpackages, and callers
that are the program rather than its tests.

SGLang 0.5.23's ``sglang/srt/`` has no ``__init__.py`` (a namespace subpackage of the regular
package ``sglang``).  The project index walked only directories with ``__init__.py``, so a file of
``sglang/srt`` checked alone saw 1,232 of the 4,716 modules of the package: the callers, the
subclasses and the modules naming a field in the other three quarters were not searched, and a
method whose caller resets the rows it reads was taken for an entry point (a false alarm).

With the namespace subpackages walked, one more kind of caller appeared: the test kits SGLang
ships in ``sglang/test/`` build a runner and call its API.  When such a kit is the only caller
the call graph can resolve (the production worker builds its runner from a class held in a
variable), the method stopped being an entry point and was judged only on the kit's fresh
object: ``EAGLEDraftCudaGraphRunner.execute``'s finding was lost.  Callers in test code
(``test``/``tests``/``testing`` packages, ``test_*`` / ``*_test`` modules) no longer make a
production function part of a larger entry point.

Written from scratch.  The runner hands ``self.seq_lens[:num_reqs_padded]`` (a padded slice) to
``CommonAttentionMetadata`` after writing rows ``[:num_reqs]``; rows
``[num_reqs:num_reqs_padded]`` are stale unless whoever runs ``execute`` reset them first.
"""

from __future__ import annotations

import pytest

from padlint.analysis.project import Project, is_test_module

from .project_files import check_files

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute(self, src, num_reqs: int, num_reqs_padded: int):
        self.seq_lens[:num_reqs].copy_(src)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''

# the production caller: it resets the padding rows before every call (RESET)
WORKER = '''\
from pkg.srt.runner import Runner


class Worker:
    def __init__(self, max_num_reqs: int) -> None:
        self.runner = Runner(max_num_reqs)

    def step(self, src, num_reqs: int, num_reqs_padded: int):
        RESET
        return self.runner.execute(src, num_reqs, num_reqs_padded)
'''


def _namespace_findings(tmp_path, reset: str) -> list[tuple[str, str]]:
    files = {
        "pkg/__init__.py": "",
        # no pkg/srt/__init__.py: a namespace subpackage, as SGLang's sglang/srt
        "pkg/srt/runner.py": RUNNER,
        "pkg/srt/worker.py": WORKER.replace("RESET", reset),
    }
    got = check_files(tmp_path, files, ["pkg/srt/runner.py"])
    return [(f.code, f.field) for f in got]


def test_the_index_lists_modules_of_namespace_subpackages(tmp_path):
    for rel in ("pkg/__init__.py", "pkg/srt/runner.py", "pkg/srt/worker.py", "pkg/srt/deep/mod.py",
                "not-a-name/skipped.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    project = Project()
    project.add_source(str(tmp_path / "pkg/srt/runner.py"), "x = 1\n")
    keys = [k for k, _ in project.files()]
    # every module under the regular package, through directories without __init__.py; a
    # directory whose name is no identifier is no subpackage
    assert sorted(keys) == ["pkg", "pkg.srt.deep.mod", "pkg.srt.runner", "pkg.srt.worker"]


def test_a_reset_made_by_the_caller_in_a_namespace_subpackage_is_seen(tmp_path):
    # Worker.step resets rows [num_reqs:num_reqs_padded] before every call of execute: no stale row reaches the
    # metadata.  (Before, worker.py was not in the index: execute was an entry point of its own,
    # its rows [num_reqs:num_reqs_padded] an earlier step's, and the checked file alone got a false alarm.)
    assert _namespace_findings(tmp_path, "self.runner.seq_lens[num_reqs:num_reqs_padded] = 0") == []


def test_without_the_callers_reset_the_rows_are_stale(tmp_path):
    # the same project with the reset deleted: the finding, reached from Worker.step
    assert _namespace_findings(tmp_path, "pass") == [("PAD001", "seq_lens")]


# the production caller builds its runner from a class it is handed (SGLang picks the graph
# runner's class at run time), so the call graph cannot tell it calls Runner.execute
OPAQUE_WORKER = '''\
class Worker:
    def __init__(self, runner_cls, max_num_reqs: int) -> None:
        self.runner = runner_cls(max_num_reqs)

    def step(self, src, num_reqs: int, num_reqs_padded: int):
        return self.runner.execute(src, num_reqs, num_reqs_padded)
'''

# a test kit shipped inside the package: it builds a fresh runner (through a helper whose return
# annotation names the class, as SGLang's kits do) and calls its API once
KIT = '''\
import torch

from pkg.runner import Runner


def _captured_runner() -> Runner:
    return Runner(8)


def run_runner_case():
    runner = _captured_runner()
    num_reqs, num_reqs_padded = 3, 4
    return runner.execute(torch.ones(num_reqs, dtype=torch.int32), num_reqs, num_reqs_padded)
'''


@pytest.mark.parametrize("kit_path", ["pkg/test/kits.py", "pkg/tests/runner_case.py",
                                      "pkg/test_runner.py", "pkg/runner_test.py"])
def test_a_test_kit_calling_the_api_does_not_hide_the_entry_point(tmp_path, kit_path):
    # The kit's fresh runner has zeros in every row, so judged only from the kit, rows
    # [num_reqs:num_reqs_padded] are not stale.  But execute is the runner's API, run step after step by a
    # caller the graph cannot see: it stays an entry point, where rows [num_reqs:num_reqs_padded] are an
    # earlier step's.
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER.replace("pkg.srt.", "pkg."),
             "pkg/worker.py": OPAQUE_WORKER, kit_path: KIT}
    for d in {"/".join(kit_path.split("/")[:i]) for i in range(2, kit_path.count("/") + 1)}:
        files[d + "/__init__.py"] = ""
    got = check_files(tmp_path, files, ["pkg/runner.py"])
    assert [(f.code, f.field) for f in got] == [("PAD001", "seq_lens")]


def test_test_code_keeps_its_test_callers(tmp_path):
    # a project that is itself test code (a fixture package under tests/): its own callers count.
    # The kit resets nothing, but it builds the runner fresh (zeros), so from the kit no row is
    # stale; were the kit ignored, execute would be an entry point and report.
    files = {"tests/__init__.py": "", "tests/pkg/__init__.py": "",
             "tests/pkg/runner.py": RUNNER,
             "tests/pkg/kit.py": KIT.replace("pkg.runner", "tests.pkg.runner")}
    got = check_files(tmp_path, files, ["tests/pkg/runner.py"])
    assert got == []


@pytest.mark.parametrize("key, test", [
    ("sglang.test.kits.attention_unittest.runner_modes.speculative_draft_runner", True),
    ("pkg.tests.helpers", True),
    ("pkg.testing", True),
    ("pkg.test_runner", True),
    ("pkg.runner_test", True),
    ("pkg.conftest", True),
    ("sglang.srt.speculative.eagle_worker_v2", False),
    ("vllm.v1.worker.gpu_model_runner", False),
    ("pkg.attestation", False),   # "test" inside a word is no test part
    ("pkg.latest", False),
])
def test_which_modules_are_test_code(key, test):
    assert is_test_module(key) is test
