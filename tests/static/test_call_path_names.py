"""A call path names a method's class where a method calls a method of the same name.

vLLM's worker forwards ``execute_model`` to the model runner's ``execute_model``; the path read
``execute_model -> execute_model -> _build_attention_metadata``, like a recursion.  Where a
step calls a method of its own name in another class, both steps name their class
(``Worker.execute_model -> ModelRunner.execute_model``); every other step keeps its bare name.
Written from scratch.
"""

from __future__ import annotations

from padlint.analysis.engine import Source, check_project
from padlint.profile import load_profile

from .project_files import check_files

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = torch.as_tensor(scheduler_output.seq_lens)
        return self._build_attention_metadata(num_reqs, num_reqs_padded)

    def _build_attention_metadata(self, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''

WORKER = '''\
from pkg.runner import ModelRunner


class Worker:
    def __init__(self) -> None:
        self.model_runner = ModelRunner(8)

    def {NAME}(self, scheduler_output):
        return self.model_runner.execute_model(scheduler_output)

    def warm_up(self, scheduler_output):
        return self.model_runner.execute_model(scheduler_output)
'''


def _findings(tmp_path, name: str):
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER, "pkg/worker.py": WORKER}
    return check_files(tmp_path, files, ["pkg/runner.py", "pkg/worker.py"], {"NAME": name})


def test_a_method_calling_its_namesake_in_another_class_names_both_classes(tmp_path):
    # the worker's execute_model and warm_up are entry points; each calls the runner's
    # execute_model, which writes [:num_reqs] and hands [:num_reqs_padded] to the metadata: one
    # finding (seq_lens) on two paths.  The path shown is the first entry's (sorted): the worker's
    # execute_model, whose call of its namesake names both classes; warm_up's stays bare
    (f,) = _findings(tmp_path, "execute_model")
    assert "on 2 paths from `Worker.execute_model` and `warm_up`, e.g. " \
        "Worker.execute_model -> ModelRunner.execute_model -> _build_attention_metadata;" in f.message
    notes = [s.note for s in f.trace]
    assert notes[:3] == ["entry point `Worker.execute_model`", "calls `ModelRunner.execute_model`",
                         "calls `_build_attention_metadata`"]


def test_other_names_stay_bare(tmp_path):
    # the worker's method has another name: nothing is ambiguous, nothing is qualified
    (f,) = _findings(tmp_path, "run_step")
    assert "on 2 paths from `run_step` and `warm_up`, e.g. run_step -> execute_model -> " \
        "_build_attention_metadata;" in f.message
    assert "ModelRunner." not in f.message and "Worker." not in f.message


def test_a_long_path_keeps_its_ends_and_the_trace_keeps_every_step(tmp_path):
    # six functions from the entry to the sink: the message shows the first two and the last two
    # (the middle two elided), the trace every call
    src = RUNNER.replace(
        "        return self._build_attention_metadata(num_reqs, num_reqs_padded)\n",
        "        return self._a(num_reqs, num_reqs_padded)\n\n"
        "    def _a(self, num_reqs, num_reqs_padded):\n        return self._b(num_reqs, num_reqs_padded)\n\n"
        "    def _b(self, num_reqs, num_reqs_padded):\n        return self._c(num_reqs, num_reqs_padded)\n\n"
        "    def _c(self, num_reqs, num_reqs_padded):\n"
        "        return self._build_attention_metadata(num_reqs, num_reqs_padded)\n")
    files = {"pkg/__init__.py": "", "pkg/runner.py": src,
             "pkg/worker.py": WORKER.replace("{NAME}", "run_step")}
    (f,) = check_files(tmp_path, files, ["pkg/runner.py", "pkg/worker.py"])
    # run_step -> execute_model -> _a -> _b -> _c -> _build_attention_metadata (6 functions)
    assert "e.g. run_step -> execute_model -> ... -> _c -> _build_attention_metadata;" in f.message
    assert [s.note for s in f.trace][:6] == [
        "entry point `run_step`", "calls `execute_model`", "calls `_a`", "calls `_b`", "calls `_c`",
        "calls `_build_attention_metadata`"]


def test_an_entry_point_reaching_the_sink_two_ways_is_listed_once(tmp_path):
    # Worker.execute_model reaches the sink through the runner's execute_model (its step is then
    # qualified) and directly through `_build_attention_metadata` (not qualified): one entry
    # point, named once in the list of entries
    worker = WORKER.replace(
        "        return self.model_runner.execute_model(scheduler_output)\n\n    def warm_up",
        "        self.model_runner._build_attention_metadata(1, 2)\n"
        "        return self.model_runner.execute_model(scheduler_output)\n\n    def warm_up", 1)
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER, "pkg/worker.py": worker.replace("{NAME}", "execute_model")}
    (f,) = check_files(tmp_path, files, ["pkg/runner.py", "pkg/worker.py"])
    assert "paths from `Worker.execute_model` and `warm_up`," in f.message


def test_a_nested_function_is_not_named_after_the_enclosing_class(tmp_path):
    # a nested `execute_model` inside Worker.step is no method of Worker: no step is qualified
    worker = WORKER.replace(
        "    def {NAME}(self, scheduler_output):\n        return self.model_runner.execute_model(scheduler_output)\n",
        "    def step(self, scheduler_output):\n        def execute_model(so):\n"
        "            return self.model_runner.execute_model(so)\n        return execute_model(scheduler_output)\n")
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER, "pkg/worker.py": worker}
    (f,) = check_files(tmp_path, files, ["pkg/runner.py", "pkg/worker.py"])
    notes = [s.note for s in f.trace]
    assert "Worker." not in " ".join(notes) and "ModelRunner." not in " ".join(notes)


HELPERS = '''\
from pkg.runner import ModelRunner


def execute_model(runner: ModelRunner, scheduler_output):
    return runner.execute_model(scheduler_output)
'''


def test_a_module_function_namesake_names_its_module(tmp_path):
    # Worker.execute_model -> helpers.execute_model (a module function) -> ModelRunner.execute_model
    worker = WORKER.replace("from pkg.runner import ModelRunner", "from pkg import helpers\nfrom pkg.runner import ModelRunner")
    worker = worker[:worker.index("    def warm_up")].rstrip() + "\n"  # the one entry point
    worker = worker.replace("return self.model_runner.execute_model(", "return helpers.execute_model(self.model_runner, ")
    files = {"pkg/__init__.py": "", "pkg/runner.py": RUNNER, "pkg/helpers.py": HELPERS,
             "pkg/worker.py": worker.replace("{NAME}", "execute_model")}
    check_files(tmp_path, files, [])  # writes the files
    facts: dict = {}
    srcs = [Source(str(tmp_path / p), (tmp_path / p).read_text()) for p in
            ("pkg/runner.py", "pkg/worker.py", "pkg/helpers.py")]
    check_project(srcs, load_profile("vllm"), facts=facts)
    (paths,) = facts.values()  # the engine's stale paths to the one sink argument
    # each call of a namesake names both ends: the module function is named by its module (the
    # runner's execute_model, called, is no entry point of its own)
    assert paths == [("Worker.execute_model", "helpers.execute_model", "ModelRunner.execute_model",
                      "_build_attention_metadata")]


def test_two_classes_of_one_name_are_named_in_full(tmp_path):
    # pkg/a/worker.py:Worker.execute_model calls pkg/b/worker.py:Worker.execute_model, which
    # builds the metadata: the short names would read like a recursion
    inner = RUNNER.replace("class ModelRunner:", "class Worker:")
    outer = ("from pkg.b.worker import Worker as Inner\n\n\nclass Worker:\n    def __init__(self) -> None:\n"
             "        self.inner = Inner(8)\n\n    def execute_model(self, scheduler_output):\n"
             "        return self.inner.execute_model(scheduler_output)\n\n"
             "    def warm_up(self, scheduler_output):\n        return self.inner.execute_model(scheduler_output)\n")
    files = {"pkg/__init__.py": "", "pkg/a/__init__.py": "", "pkg/b/__init__.py": "",
             "pkg/a/worker.py": outer, "pkg/b/worker.py": inner}
    (f,) = check_files(tmp_path, files, ["pkg/a/worker.py", "pkg/b/worker.py"])
    notes = [s.note for s in f.trace]
    assert notes[:2] == ["entry point `pkg.a.worker.Worker.execute_model`",
                         "calls `pkg.b.worker.Worker.execute_model`"], notes
