"""An entry point a subclass inherits runs with ``self`` of that subclass.

A base class's public method (``capture``, ``propose``) calls methods on ``self`` that its
subclasses override (vLLM Model Runner V2's ``AutoRegressiveSpeculator.capture`` calls
``self._prefill_capture_slot_mappings()``, which ``StandaloneARSpeculator`` overrides; SGLang's
speculative graph runners extend the decode runner).  Inside the inherited method ``self`` may
be an instance of the subclass, and ``self.m()`` then runs the override: the analysis runs the
entry point once more for each project subclass that inherits it and overrides a method it
calls on ``self`` (directly or through the base's own methods), each as its own run (a join of
every subclass's overrides would put methods of different classes on one path).

Written from scratch.  Expected findings come from reading the sources below:

- ``Base.step`` hands ``self.slot_mapping[:num_reqs_padded]`` to ``CommonAttentionMetadata``
  after ``self._stage(num_reqs, num_reqs_padded)``.  ``Base._stage`` writes the real rows and
  resets the padding rows to -1 (clean).  ``Quiet`` overrides ``_stage`` with the same reset
  (clean).  ``Leaky`` overrides it and writes only ``[:num_reqs]`` (rows
  ``[num_reqs:num_reqs_padded]`` stale): one PAD001 ``slot_mapping`` at the `slot_mapping=` keyword (line 24),
  whose trace starts at "entry point `Leaky.step` (inherited from `Base`)".
- ``Leaky`` with its own ``step`` (``OwnStep``) is not an inherited run: its own ``step`` is an
  entry point of its own, which resets.
"""

from __future__ import annotations

from .project_files import check_files

BASE = '''\
import torch


class CommonAttentionMetadata:
    def __init__(self, slot_mapping, num_reqs):
        self.slot_mapping = slot_mapping
        self.num_reqs = num_reqs


class Base:
    def __init__(self, max_num_reqs: int) -> None:
        self.slot_mapping = torch.zeros(max_num_reqs, dtype=torch.int64)

    def _stage(self, src, num_reqs: int, num_reqs_padded: int) -> None:
        self.slot_mapping[:num_reqs].copy_(src)
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)

    def _prepare(self, src, num_reqs: int, num_reqs_padded: int) -> None:
        self._stage(src, num_reqs, num_reqs_padded)

    def step(self, src, num_reqs: int, num_reqs_padded: int):
        self._prepare(src, num_reqs, num_reqs_padded)
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''

SUBS = '''\
from pkg.base import Base


class Quiet(Base):
    def _stage(self, src, num_reqs: int, num_reqs_padded: int) -> None:
        self.slot_mapping[:num_reqs].copy_(src)
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)


class Leaky(Base):
    def _stage(self, src, num_reqs: int, num_reqs_padded: int) -> None:
        {LEAKY}
'''

OWN = '''\
from pkg.base import Base, CommonAttentionMetadata


class OwnStep(Base):
    def _stage(self, src, num_reqs: int, num_reqs_padded: int) -> None:
        self.slot_mapping[:num_reqs].copy_(src)

    def step(self, src, num_reqs: int, num_reqs_padded: int):
        self._stage(src, num_reqs, num_reqs_padded)
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''

LEAKS = "self.slot_mapping[:num_reqs].copy_(src)"
RESETS = LEAKS + "\n        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)"


def _check(tmp_path, leaky: str, checked: list[str]):
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/subs.py": SUBS, "pkg/own.py": OWN}
    return [f for f in check_files(tmp_path, files, checked, {"LEAKY": leaky}) if f.code == "PAD001"]


def test_subclass_override_that_leaves_padding_rows_is_reported_in_the_inherited_entry(tmp_path):
    got = _check(tmp_path, LEAKS, ["pkg/base.py", "pkg/subs.py", "pkg/own.py"])
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.field) for f in got] == [("base.py", 24, "slot_mapping")]
    steps = [s.note for s in got[0].trace]
    assert any("entry point `Leaky.step` (inherited from `Base`)" in m for m in steps), steps


def test_no_finding_when_every_override_resets(tmp_path):
    assert _check(tmp_path, RESETS, ["pkg/base.py", "pkg/subs.py", "pkg/own.py"]) == []


def test_base_file_checked_alone_still_reads_the_subclasses(tmp_path):
    # pre-commit passes only the base: the subclasses are read as context
    got = _check(tmp_path, LEAKS, ["pkg/base.py"])
    assert [(f.line, f.field) for f in got] == [(24, "slot_mapping")]


def test_inherited_runs_names_only_subclasses_that_inherit_the_entry(tmp_path):
    from padlint.analysis.engine import inherited_runs
    from padlint.analysis.project import Project

    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/subs.py": SUBS.replace("{LEAKY}", LEAKS),
             "pkg/own.py": OWN}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    project = Project()
    key = project.add_source(str(tmp_path / "pkg/base.py"), BASE)
    step = project.module(key).classes["Base"].methods["step"]
    # Quiet and Leaky override `_stage` (called through `_prepare`) and inherit `step`; OwnStep
    # defines its own `step`
    assert [k.rsplit(":", 1)[-1] for k in inherited_runs(project, step)] == ["Leaky", "Quiet"]


def test_subclass_whose_constructor_skips_the_base_is_not_run(tmp_path):
    # SGLang's per-step multi-layer draft-extend runner subclasses the decode runner but sets up
    # its own fields without the base's constructor: the base's `step` is not its interface
    subs = SUBS.replace(
        "class Leaky(Base):\n",
        "class Leaky(Base):\n    def __init__(self, max_num_reqs: int) -> None:\n"
        "        self.max_num_reqs = max_num_reqs\n\n")
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/subs.py": subs, "pkg/own.py": OWN}
    got = [f for f in check_files(tmp_path, files, ["pkg/base.py", "pkg/subs.py"], {"LEAKY": LEAKS})
           if f.code == "PAD001"]
    assert got == []
    # with `super().__init__(max_num_reqs)` it is constructed as a Base: reported again
    files["pkg/subs.py"] = subs.replace("self.max_num_reqs = max_num_reqs",
                                        "super().__init__(max_num_reqs)")
    got = [f for f in check_files(tmp_path, files, ["pkg/base.py", "pkg/subs.py"], {"LEAKY": LEAKS})
           if f.code == "PAD001"]
    assert [(f.line, f.field) for f in got] == [(24, "slot_mapping")]


def test_past_the_cap_subclasses_in_checked_files_come_first(tmp_path, monkeypatch):
    # With more qualifying subclasses than MAX_INHERITED_RUNS, the ones defined in the checked
    # files are run.  Four quiet subclasses in `pkg/aaa.py` (keys sort before `pkg.zzz`) and the
    # leaky one in `pkg/zzz.py`, the file checked with the base: with the cap at 4 and order by
    # key alone the leaky one would be dropped and nothing reported; checked first, it is run.
    import padlint.analysis.engine as engine

    monkeypatch.setattr(engine, "MAX_INHERITED_RUNS", 4)
    quiet = "\n\n".join(
        f"class Q{i}(Base):\n    def _stage(self, src, num_reqs: int, num_reqs_padded: int) -> None:\n"
        f"        {RESETS}\n" for i in range(4))
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE,
             "pkg/aaa.py": "from pkg.base import Base\n\n\n" + quiet,
             "pkg/zzz.py": "from pkg.base import Base\n\n\nclass Leaky(Base):\n"
                           "    def _stage(self, src, num_reqs: int, num_reqs_padded: int) -> None:\n"
                           f"        {LEAKS}\n"}
    got = [f for f in check_files(tmp_path, files, ["pkg/base.py", "pkg/zzz.py"]) if f.code == "PAD001"]
    assert [(f.line, f.field) for f in got] == [(24, "slot_mapping")]
    # checked alone (the subclasses all context), the first four by key run: the leaky one not
    got = [f for f in check_files(tmp_path, files, ["pkg/base.py"]) if f.code == "PAD001"]
    assert got == []
