"""The mutation harness (benchmarks/mutation.py, benchmarks/resets.py) on a mini engine written here.

No corpus: a three-file `vllm` package in tmp_path.  The runner resets
`seq_lens` (tail `fill_(0)`) and the derived `is_prefilling` (tail
`= False`) before `CommonAttentionMetadata` reads both up to the padded
count; the first two deletions therefore let stale padding reach the sink,
which padlint reports (this is the canonical case, `padlint check` finds it
on fixtures/static/*_buggy.py).  `self.scratch` is filled but never read by
anything, so deleting that fill cannot produce a finding in any engine.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"padlint_tests_{name}", _BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(_BENCH))  # mutation.py imports resets
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_BENCH))
    return module


mutation = _load("mutation")
resets = _load("resets")

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata

NULL_BLOCK_ID = 0


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.computed = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.prompt = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.scratch = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = torch.as_tensor(scheduler_output.seq_lens)
        self.seq_lens[num_reqs:].fill_(0)
        is_prefilling = self.computed[:num_reqs_padded] < self.prompt[:num_reqs_padded]
        is_prefilling[num_reqs:] = False
        self.scratch.fill_(
            NULL_BLOCK_ID
        )
        if num_reqs: self.scratch[0] = 0
        return CommonAttentionMetadata(
            seq_lens=self.seq_lens[:num_reqs_padded],
            is_prefilling=is_prefilling,
            num_reqs=num_reqs_padded,
        )

    def update_states(self, computed, prompt, n):
        # a step writes them: their padding rows may be stale (a buffer nothing writes is not)
        self.computed[:n] = computed
        self.prompt[:n] = prompt
'''

# Not targets: a reset here is never mutated.
OTHER = "import torch\n\n\ndef helper(x):\n    x[1:].zero_()\n"


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "engine"
    worker = root / "vllm" / "v1" / "worker"
    worker.mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    (worker / "gpu_model_runner.py").write_text(RUNNER)
    (root / "vllm" / "other.py").write_text(OTHER)
    return root


MINI = mutation.Engine("mini", "vllm", "0", "vllm", (mutation.Group("runner", ("vllm/v1/**/*_runner.py",)),))


def test_reset_statements_found(tree):
    sites = resets.find_resets((tree / "vllm/v1/worker/gpu_model_runner.py").read_text(), "r.py")
    got = [(s.line, s.kind, s.rows, s.function, s.text) for s in sites]
    # Allocations (torch.zeros), the real-row write `[:num_reqs] = torch.as_tensor(...)` and the
    # derivation are not resets; the four below are.
    assert got == [
        (18, "fill", "tail", "ModelRunner.execute_model", "self.seq_lens[num_reqs:].fill_(0)"),
        (20, "assign", "tail", "ModelRunner.execute_model", "is_prefilling[num_reqs:] = False"),
        (21, "fill", "whole", "ModelRunner.execute_model", "self.scratch.fill_( NULL_BLOCK_ID )"),
        (24, "assign-row", "row", "ModelRunner.execute_model", "self.scratch[0] = 0"),
    ]


@pytest.mark.parametrize("source, expected", [
    ("x[n:] = PAD_SLOT_ID", "assign"),
    ("x[n + 1:] = cu[-1]", "assign"),      # last real offset of a cumulative buffer
    ("x[:n] = y[idx]", None),              # a gather of real data
    ("x[:n] = y", None),                   # a copy of real data
    ("x[:n] = pad_value", "assign"),
    ("x[:n] = prefill_lens", None),        # `prefill` is not `fill`
    ('kw["flag"] = False', None),          # a dict store
    ("x[i] = None", None),
    ("x.np[n:].fill(last)", "fill"),
    ("x[a:b].zero_()", "fill"),
    ("x.masked_fill_(m, 0)", "fill"),
    ("x[n:].copy_(torch.zeros(3))", "fill"),
    ("x[:n].copy_(y[:n])", None),
    ("y = x.zero_()", None),
])
def test_classify(source, expected):
    assert resets.classify(ast.parse(source).body[0]) == expected


def test_delete_keeps_lines_and_syntax():
    src = "def f(x, n):\n    if n: x[n:].zero_()\n    x.fill_(\n        0\n    )  # tail\n    x[0] = 1; x.zero_(\n    ); y = 2\n    return y\n"
    sites = resets.find_resets(src, "f.py")
    # line 6 holds two: `x[0] = 1` (a row) and the multi-line `x.zero_(...)` followed by more code
    assert [(s.line, s.rows) for s in sites] == [(2, "tail"), (3, "whole"), (6, "row"), (6, "whole")]
    for s in sites:
        out = resets.delete_statement(src, s)
        assert len(out.splitlines()) == len(src.splitlines())
        ast.parse(out)
        # every other line is unchanged
        changed = [i + 1 for i, (a, b) in enumerate(zip(src.splitlines(), out.splitlines())) if a != b]
        assert changed and min(changed) == s.line and max(changed) <= s.end_line
    assert resets.delete_statement(src, sites[0]).splitlines()[1] == "    if n: pass"
    assert resets.delete_statement(src, sites[2]).splitlines()[5] == "    pass; x.zero_("
    assert resets.delete_statement(src, sites[3]).splitlines()[5:7] == ["    x[0] = 1; pass \\", "; y = 2"]


def test_mutation_run_counts_noticed_deletions(tree):
    before = {p: p.read_bytes() for p in tree.rglob("*.py")}
    report = mutation.run_engine(MINI, tree, jobs=2, log=lambda msg: None)
    assert [rel for _, rel in report.targets] == ["vllm/v1/worker/gpu_model_runner.py"]
    assert report.baseline == [], "the unmutated mini runner resets everything it passes on"
    by_line = {m.site.line: m for m in report.mutants}
    assert sorted(by_line) == [18, 20, 21, 24]
    assert not any(m.errors for m in report.mutants)
    # Deleting the seq_lens or is_prefilling reset lets stale rows reach the constructor.
    assert by_line[18].noticed and {f["field"] for f in by_line[18].new_findings} == {"seq_lens"}
    assert by_line[20].noticed and {f["field"] for f in by_line[20].new_findings} == {"is_prefilling"}
    # The finding sits on the sink's line, which the deletion did not move.
    assert all(f["line"] == 26 or f["line"] == 27 for f in by_line[18].new_findings + by_line[20].new_findings)
    # scratch reaches no sink: deleting its fills changes nothing.
    assert not by_line[21].noticed and not by_line[24].noticed
    assert report.noticed == 2
    # The engine tree itself is never touched (mutations happen in private copies).
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == before
    md = mutation.engine_markdown(report)
    assert "**2/4 (50%) deletions noticed**" in md
    assert "## Missed deletions (2)" in md and "`vllm/v1/worker/gpu_model_runner.py:21`" in md
    assert [s.buffer for s in (m.site for m in report.mutants)] == ["seq_lens", "is_prefilling", "scratch", "scratch"]
    assert not any(m.masked_by_baseline for m in report.mutants)


def test_compare_counts_multiplicity():
    f = {"path": "a.py", "line": 3, "code": "PAD001", "field": "seq_lens"}
    new, lost = mutation.compare([f], [f, dict(f)])
    assert new == [f] and lost == 0
    new, lost = mutation.compare([f, dict(f, field="x")], [f])
    assert new == [] and lost == 1


def test_grown_counts_stale_paths_of_an_existing_finding():
    """A deletion that adds a stale path to a finding the baseline has is seen through "on N paths"."""
    f = {"path": "a.py", "line": 3, "code": "PAD001", "field": "seq_lens",
         "message": "... may be stale when passed as `seq_lens=` to M on 2 paths, e.g. a -> b; ..."}
    one = dict(f, message="... may be stale when passed as `seq_lens=` to M on the path a -> b (other paths ...)")
    three = dict(f, message=f["message"].replace("on 2 paths", "on 3 paths"))
    assert mutation.stale_path_count(f) == 2 and mutation.stale_path_count(one) == 1
    assert mutation.grown([f], [three]) == [three]
    assert mutation.grown([f], [f]) == [] and mutation.grown([f], [one]) == []
    assert mutation.grown([one], [f]) == [f]  # one path -> two
    assert mutation.grown([], [three]) == []  # a new finding is `compare`'s, not this


def test_target_globs(tmp_path):
    for rel in ("vllm/a.py", "vllm/gpu/b.py", "vllm/gpu/sub/c.py", "vllm/gpu/d.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    engine = mutation.Engine("t", "vllm", "0", "vllm", (
        mutation.Group("g1", ("vllm/gpu/**/*.py",)), mutation.Group("g2", ("vllm/*.py", "vllm/gpu/b.py"))))
    assert mutation.find_targets(tmp_path, engine) == [
        ("g1", "vllm/gpu/b.py"), ("g1", "vllm/gpu/sub/c.py"), ("g2", "vllm/a.py")]


@pytest.mark.parametrize("source, name", [
    ("self.query_start_loc.np[n + 1:].fill(v)", "query_start_loc"),
    ('s["seq_lens"][bs:r].zero_()', "seq_lens"),
    ("buf.resize_(N).fill_(PAD)", "buf"),
    ("self.block_table.gpu.fill_(0)", "block_table"),
    ("is_prefilling[n:] = False", "is_prefilling"),
])
def test_buffer_name(source, name):
    assert resets.buffer_name(ast.parse(source).body[0]) == name


def test_already_reported():
    site = resets.find_resets("def f(self, n):\n    self.seq_lens[n:].fill_(0)\n", "f.py")[0]
    assert mutation.already_reported(site, [{"buffer": "buffers.seq_lens[:bs]", "field": "x"}])
    assert not mutation.already_reported(site, [{"buffer": "buffers.seq_lens_cpu[:bs]", "field": "seq_lens_cpu"}])


def test_whole_mode_agrees_on_one_file(tree):
    # With one target file, checking it alone (per-file) and checking all targets (whole) are the same run.
    per_file = mutation.run_engine(MINI, tree, jobs=1, log=lambda msg: None)
    whole = mutation.run_engine(MINI, tree, jobs=1, mode="whole", log=lambda msg: None)
    assert per_file.mode == "per-file" and whole.mode == "whole"
    assert [(m.site.line, m.noticed) for m in per_file.mutants] == [(m.site.line, m.noticed) for m in whole.mutants]
    # per-file mode ran one baseline, for the one file that has reset statements
    assert list(per_file.baseline_seconds) == ["vllm/v1/worker/gpu_model_runner.py"] and not whole.baseline_seconds


def test_budget_leaves_deletions_not_run(tree):
    report = mutation.run_engine(MINI, tree, jobs=1, budget_s=0, log=lambda msg: None)
    # A budget of 0 s is spent before the first run: every deletion is recorded, none measured.
    assert len(report.mutants) == 4 and report.run == [] and report.noticed == 0
    md = mutation.engine_markdown(report)
    assert "**0/0 deletions noticed** (0 of 4 run)" in md and "## Not run (4)" in md


def test_groups_filter_and_unknown_group(tree):
    with pytest.raises(ValueError, match="no group 'nope'"):
        mutation.run_engine(MINI, tree, groups=["nope"], log=lambda msg: None)


def test_json_round_trip_and_merge(tree):
    report = mutation.run_engine(MINI, tree, jobs=2, log=lambda msg: None)
    mutation.ENGINES["mini"] = MINI
    try:
        back = mutation.report_from_dict(report.to_dict())
        # the per-deletion lists come back the same (times are rounded in JSON, so not the header)
        assert mutation.engine_markdown(back).split("## Missed")[1] == \
            mutation.engine_markdown(report).split("## Missed")[1]
        # Two runs that each measured half of the deletions merge into one report of all four.
        first, second = (mutation.report_from_dict(report.to_dict()) for _ in range(2))
        first.mutants, second.mutants = first.mutants[:2], second.mutants[2:]
        merged = mutation.merge_reports([second, first])
        assert [m.site.line for m in merged.mutants] == [18, 20, 21, 24]
        assert merged.noticed == 2 and merged.wall_s == pytest.approx(2 * round(report.wall_s, 1))
    finally:
        del mutation.ENGINES["mini"]


HELPER = '''\
import torch


class Buffers:
    def __init__(self, n: int) -> None:
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def prepare(self, lens, num_reqs: int) -> None:
        self.seq_lens[:num_reqs] = lens
        self.seq_lens[num_reqs:].fill_(0)
'''

CALLER = '''\
from vllm.v1.attention.backend import CommonAttentionMetadata
from vllm.v1.worker.helper import Buffers


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.buffers = Buffers(max_num_reqs)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.buffers.prepare(scheduler_output.seq_lens, num_reqs)
        return CommonAttentionMetadata(
            seq_lens=self.buffers.seq_lens[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''


@pytest.mark.parametrize("mode, helper, where", [
    ("per-file", HELPER, ("vllm/v1/worker/helper.py", 9)),
    ("per-file", HELPER.replace("        self.seq_lens[:num_reqs] = lens\n", ""), None),
    ("imports", HELPER, ("vllm/v1/worker/gpu_model_runner.py", 14)),
    ("whole", HELPER, ("vllm/v1/worker/gpu_model_runner.py", 14))])
def test_sink_in_another_file(tmp_path, mode, helper, where):
    # The reset is in helper.py, the sink (line 13-16 of the caller) in gpu_model_runner.py, which
    # imports helper.  padlint reports a finding where the sink is when that file is checked
    # (imports, whole).  Checking helper.py alone (per-file) reports it at helper.py's write of the
    # buffer's real rows (line 9, where the reset goes); a helper whose only write of the buffer is
    # the deleted reset leaves nothing in helper.py to report at: not noticed.
    worker = tmp_path / "vllm" / "v1" / "worker"
    worker.mkdir(parents=True)
    for pkg in (tmp_path / "vllm", tmp_path / "vllm" / "v1", worker):
        (pkg / "__init__.py").write_text("")
    (worker / "helper.py").write_text(helper)
    (worker / "gpu_model_runner.py").write_text(CALLER)
    engine = mutation.Engine("x", "vllm", "0", "vllm", (mutation.Group("g", ("vllm/v1/worker/*.py",)),))
    report = mutation.run_engine(engine, tmp_path, mode=mode, log=lambda msg: None)
    [m] = report.mutants
    assert m.site.path == "vllm/v1/worker/helper.py" and m.site.text == "self.seq_lens[num_reqs:].fill_(0)"
    assert m.noticed is (where is not None) and not m.errors
    if where is not None:
        assert [(f["path"], f["line"], f["field"]) for f in m.new_findings] == [(*where, "seq_lens")]


def test_import_neighbours(tmp_path):
    files = {"p/__init__.py": "", "p/a.py": "from p import b\nfrom .c import f\n", "p/b.py": "import os\n",
             "p/c.py": "", "p/d.py": "import p.a\n", "p/e.py": "from ..x import y\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    targets = sorted(files)
    # a imports p (its __init__) and b (`from p import b`), and c (relative); d imports a; e imports
    # nothing of these (`..x` is outside p)
    assert mutation.import_neighbours(tmp_path, targets, "p/a.py") == ["p/__init__.py", "p/b.py", "p/c.py", "p/d.py"]
    assert mutation.import_neighbours(tmp_path, targets, "p/b.py") == ["p/a.py"]
    assert mutation.import_neighbours(tmp_path, targets, "p/e.py") == []


def test_baseline_times_survive_the_json_round_trip_as_shown(tree):
    # 0.6451 s is shown as "0.6 s"; stored with two decimals (0.65) it would come back as "0.7 s"
    # (the flaky failure of test_json_round_trip_and_merge): JSON keeps the shown precision
    report = mutation.run_engine(MINI, tree, log=lambda msg: None)
    report.baseline_seconds = {k: 0.6451 for k in report.baseline_seconds}
    mutation.ENGINES["mini"] = MINI
    try:
        back = mutation.report_from_dict(report.to_dict())
        assert report.baseline_seconds and all(f"{v:.1f}" == "0.6" for v in back.baseline_seconds.values())
        assert mutation.engine_markdown(back).split("## Missed")[1] == \
            mutation.engine_markdown(report).split("## Missed")[1]
    finally:
        mutation.ENGINES.pop("mini", None)
