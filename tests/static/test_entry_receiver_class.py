"""The entry-point search keeps the class of ``self`` along calls on ``self``.

A graph runner's base class captures every shape through ``self.capture_one_shape()``
(SGLang's ``DecodeCudaGraphRunner._capture_one_stream``); its subclasses override it, and each
subclass's constructor runs the base's (``super().__init__()``), which captures.  Going up from
one subclass's override, the base's capture loop runs on an object of *that* subclass: of the
callers of the base constructor only that subclass's own constructor can reach the override.
Its siblings' constructors run their own override (or the base's) and are not entry points for
it (they cost a whole interpretation each: SGLang 0.5.23 has a dozen such siblings).

Written from scratch.  The package below, read by hand:

- ``Runner.__init__`` allocates ``slot_mapping`` (zeros) and calls ``self.warm_up()`` ->
  ``self._run(4, 8)`` -> ``self.build(4, 8)`` (construction: the rows hold their allocation
  value, not a stale one).  ``Runner.execute(num_reqs, num_reqs_padded)`` (public) ->
  ``self._run`` -> ``self.build``.  ``Runner.build`` resets rows ``[num_reqs:num_reqs_padded]``
  to -1 before it hands ``slot_mapping[:num_reqs_padded]`` to ``CommonAttentionMetadata``: clean.
- ``Leaky.build`` (leaky.py) hands ``slot_mapping[:num_reqs_padded]`` with no reset: on a step
  (``execute`` on a ``Leaky``) rows ``[num_reqs:num_reqs_padded]`` hold what an earlier step
  left: one PAD001 ``slot_mapping`` at the ``slot_mapping=`` keyword (line 8 without a
  constructor of its own, line 10 with one).
- ``SiblingA`` / ``SiblingB`` (siblings.py) construct through ``super().__init__()`` /
  ``Runner.__init__(self, ...)`` and do not override ``build``.  ``SiblingA.refresh`` calls the
  base's private ``_sibling_only()``; ``SiblingB.step`` calls ``self.execute(...)``: on a
  ``SiblingB``, which runs ``Runner.build`` (clean).  The one resolved caller of ``execute`` is
  thus a sibling's: class-blind, ``SiblingB.step`` was the entry point and ``Leaky``'s step was
  never run.
"""

from __future__ import annotations

from .project_files import check_files

BASE = '''\
import torch


class CommonAttentionMetadata:
    def __init__(self, slot_mapping, num_reqs):
        self.slot_mapping = slot_mapping
        self.num_reqs = num_reqs


class Runner:
    def __init__(self, max_bs: int) -> None:
        self.slot_mapping = torch.zeros(max_bs, dtype=torch.int64)
        self.warm_up()

    def warm_up(self) -> None:
        self._run(4, 8)

    def execute(self, num_reqs: int, num_reqs_padded: int):
        return self._run(num_reqs, num_reqs_padded)

    def _run(self, num_reqs: int, num_reqs_padded: int):
        return self.build(num_reqs, num_reqs_padded)

    def _sibling_only(self):
        return self.build(2, 4)

    def build(self, num_reqs: int, num_reqs_padded: int):
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''

LEAKY = '''\
from pkg.base import CommonAttentionMetadata, Runner


class Leaky(Runner):
{INIT}
    def build(self, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''

OWN_INIT = '''\
    def __init__(self, max_bs: int) -> None:
        super().__init__(max_bs)
'''

SIBLINGS = '''\
from pkg.base import Runner


class SiblingA(Runner):
    def __init__(self, max_bs: int) -> None:
        super().__init__(max_bs)

    def refresh(self):
        return self._sibling_only()


class SiblingB(Runner):
    def __init__(self, max_bs: int) -> None:
        Runner.__init__(self, max_bs)

    def step(self, num_reqs: int, num_reqs_padded: int):
        return self.execute(num_reqs, num_reqs_padded)
'''


def _files(init: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/leaky.py": LEAKY.replace("{INIT}", init),
            "pkg/siblings.py": SIBLINGS}


def _entries(tmp_path, init: str, files: dict[str, str] | None = None):
    """Entry points (and extra classes to run them for) found up from ``Leaky.build`` in
    ``pkg/leaky.py``, the package being ``files`` (default: :func:`_files` with ``init``)."""
    from padlint.analysis.callgraph import CallGraph
    from padlint.analysis.engine import find_entries
    from padlint.analysis.project import Project
    from padlint.profile import load_profile

    files = files if files is not None else _files(init)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    project = Project()
    key = project.add_source(str(tmp_path / "pkg/leaky.py"), files["pkg/leaky.py"])
    graph = CallGraph(project, load_profile("vllm"))
    build = project.module(key).classes["Leaky"].methods["build"]
    classes: dict[str, set[str]] = {}
    got = find_entries(graph, [build], classes)
    short = lambda k: k.rsplit(":", 1)[-1]  # noqa: E731
    return sorted(short(f.key) for f in got), {short(k): sorted(short(c) for c in v) for k, v in classes.items()}


def test_siblings_are_not_entry_points_for_an_override(tmp_path):
    entries, classes = _entries(tmp_path, OWN_INIT)
    # up from Leaky.build on a Leaky: Runner._run, Runner.warm_up, Runner.__init__, whose one
    # caller that can be on a Leaky is Leaky.__init__ (super); Runner.execute, whose only caller
    # (SiblingB.step) is on a SiblingB: public and inherited, so an entry point run for Leaky;
    # Runner._sibling_only, whose only caller is on a SiblingA: private, so no entry point.
    # Class-blind, SiblingA.__init__, SiblingB.__init__, SiblingB.step and SiblingA.refresh
    # were the entry points besides Leaky.__init__
    assert entries == ["Leaky.__init__", "Runner.execute"], entries
    assert classes == {"Runner.execute": ["Leaky"]}


def test_inherited_constructor_is_the_entry_point_for_the_subclass(tmp_path):
    # Leaky has no constructor: `Leaky(...)` runs Runner.__init__ on a Leaky object.  Every
    # resolved caller of Runner.__init__ is a sibling's constructor, so Runner.__init__ is an
    # entry point, to be run for Leaky
    entries, classes = _entries(tmp_path, "")
    assert entries == ["Runner.__init__", "Runner.execute"], entries
    assert classes == {"Runner.__init__": ["Leaky"], "Runner.execute": ["Leaky"]}


def _pad001(tmp_path, init: str, checked: list[str]):
    got = [f for f in check_files(tmp_path, _files(init), checked) if f.code == "PAD001"]
    return got, [(f.path.rsplit("/", 1)[-1], f.line, f.field) for f in got]


def test_finding_in_an_override_whose_base_method_only_a_sibling_calls(tmp_path):
    # checked alone (pre-commit): the base and the siblings are read as context
    got, where = _pad001(tmp_path, "", ["pkg/leaky.py"])
    assert where == [("leaky.py", 8, "slot_mapping")]
    steps = [s.note for s in got[0].trace]
    assert any("entry point `Leaky.execute` (inherited from `Runner`)" in m for m in steps), steps


def test_finding_with_the_subclass_constructor(tmp_path):
    assert _pad001(tmp_path, OWN_INIT, ["pkg/leaky.py"])[1] == [("leaky.py", 10, "slot_mapping")]


def test_whole_package_checked_reports_only_the_override(tmp_path):
    # every file checked: the same one finding (the base's `build` resets, on every class)
    assert _pad001(tmp_path, OWN_INIT, ["pkg/base.py", "pkg/leaky.py", "pkg/siblings.py"])[1] == \
        [("leaky.py", 10, "slot_mapping")]


def test_no_finding_when_the_override_resets(tmp_path):
    files = _files(OWN_INIT)
    files["pkg/leaky.py"] = files["pkg/leaky.py"].replace(
        "        return CommonAttentionMetadata(",
        "        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)\n        return CommonAttentionMetadata(", 1)
    got = [f for f in check_files(tmp_path, files, ["pkg/leaky.py"]) if f.code == "PAD001"]
    assert got == []


def test_self_class_of_unrelated_classes(tmp_path):
    from padlint.analysis.engine import _self_class
    from padlint.analysis.project import Project

    text = '''\
class Base:
    pass


class Left(Base):
    pass


class Right(Base):
    pass


class Mixin:
    pass


class Both(Mixin, Right):
    pass
'''
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/m.py").write_text(text)
    project = Project()
    key = project.add_source(str(tmp_path / "pkg/m.py"), text)
    k = lambda n: f"{key}:{n}"  # noqa: E731
    assert _self_class(project, k("Base"), k("Left")) == k("Left")  # a base's method on a Left
    assert _self_class(project, k("Left"), k("Base")) == k("Left")  # narrowed to the subclass
    assert _self_class(project, k("Right"), k("Left")) is None  # siblings: no object is both
    # Both derives from each: an object of neither, the caller's class is all that is known
    assert _self_class(project, k("Mixin"), k("Right")) == k("Mixin")
    assert _self_class(project, k("Mixin"), k("Left")) is None


# --- shapes a review of the first version found (each gave a false finding there) -----------

EXECUTE_RESETS = '''\
    def execute(self, num_reqs: int, num_reqs_padded: int):
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)
        return self._run(num_reqs, num_reqs_padded)
'''


def test_a_subclass_that_overrides_the_entry_is_not_run_through_the_base_version(tmp_path):
    # Leaky overrides `execute` (reset, then `self._run`): `Runner.execute` never runs on a
    # Leaky, so it is no entry point for Leaky; Leaky's own `execute` is, and it resets
    entries, classes = _entries(tmp_path, EXECUTE_RESETS)
    assert "Runner.execute" not in classes, classes
    assert "Leaky.execute" in entries, entries
    assert _pad001(tmp_path, EXECUTE_RESETS, ["pkg/leaky.py"])[1] == []


CHAIN_BASE = '''\
import torch


class CommonAttentionMetadata:
    def __init__(self, slot_mapping, num_reqs):
        self.slot_mapping = slot_mapping
        self.num_reqs = num_reqs


class Runner:
    def __init__(self, max_bs: int) -> None:
        self.slot_mapping = torch.zeros(max_bs, dtype=torch.int64)

    def _sibling_only(self, n: int, p: int):
        return self._run(n, p)

    def _run(self, num_reqs: int, num_reqs_padded: int):
        return self.build(num_reqs, num_reqs_padded)

    def build(self, num_reqs: int, num_reqs_padded: int):
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''

CHAIN_SIBLING = '''\
from pkg.base import Runner


class SiblingA(Runner):
    def refresh(self, num_reqs: int, num_reqs_padded: int):
        return self._sibling_only(num_reqs, num_reqs_padded)
'''


def test_a_chain_below_a_dead_end_is_not_an_entry_point(tmp_path):
    # Leaky.build is reached only through Runner._run <- Runner._sibling_only (private) <-
    # SiblingA.refresh, on a SiblingA: no path runs Leaky.build, so nothing is an entry point
    # for it (`_run` must not come back as "a cycle no outside function calls")
    files = {"pkg/__init__.py": "", "pkg/base.py": CHAIN_BASE, "pkg/leaky.py": LEAKY.replace("{INIT}", ""),
             "pkg/siblings.py": CHAIN_SIBLING}
    assert _entries(tmp_path, "", files) == ([], {})
    assert [f for f in check_files(tmp_path, files, ["pkg/leaky.py"]) if f.code == "PAD001"] == []


PLAIN_BASE = CHAIN_BASE.replace("    def _sibling_only(self, n: int, p: int):\n        return self._run(n, p)\n\n", "")
assert "_sibling_only" not in PLAIN_BASE

MIXIN_BASE = PLAIN_BASE + '''

class Mixin(Base):
    def step(self, num_reqs: int, num_reqs_padded: int):
        return self._run(num_reqs, num_reqs_padded)

    def build(self, num_reqs: int, num_reqs_padded: int):
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''

MIXIN_RIGHT = '''\
from pkg.base import Base, CommonAttentionMetadata, Mixin


class Right(Base):
    def execute(self, num_reqs: int, num_reqs_padded: int):
        self.slot_mapping[num_reqs:num_reqs_padded].fill_(-1)
        return self._run(num_reqs, num_reqs_padded)

    def build(self, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(
            slot_mapping=self.slot_mapping[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )


class Both(Mixin, Right):
    pass
'''


def test_a_mixin_method_is_not_run_on_the_other_base(tmp_path):
    # Both(Mixin, Right): on a Both, `Mixin.step -> self._run -> self.build` runs Mixin.build
    # (first in Both's MRO, resets); a Right never runs `Mixin.step`.  Right.build leaks only
    # after Right.execute's own reset: no finding
    files = {"pkg/__init__.py": "", "pkg/base.py": MIXIN_BASE.replace("class Runner:", "class Base:"),
             "pkg/right.py": MIXIN_RIGHT}
    got = [f for f in check_files(tmp_path, files, ["pkg/right.py"]) if f.code == "PAD001"]
    assert got == [], [(f.path, f.line, [s.note for s in f.trace]) for f in got]


DRIVER = '''\
from pkg.leaky import Leaky


class Driver:
    def __init__(self) -> None:
        self.runner = Leaky(8)

    def step(self, num_reqs: int, num_reqs_padded: int):
        {BODY}
'''


def test_a_local_named_cls_is_not_the_method_s_own_object(tmp_path):
    # `cls = self.runner; cls._run(n, n)` in an instance method of Driver calls `_run` on a
    # Leaky with no padding rows (n, n): the same as `r = self.runner`, no finding either way
    for body in ("cls = self.runner\n        return cls._run(num_reqs, num_reqs)",
                 "r = self.runner\n        return r._run(num_reqs, num_reqs)"):
        files = {"pkg/__init__.py": "", "pkg/base.py": PLAIN_BASE, "pkg/leaky.py": LEAKY.replace("{INIT}", ""),
                 "pkg/driver.py": DRIVER.replace("{BODY}", body)}
        got = [f for f in check_files(tmp_path, files, ["pkg/leaky.py"]) if f.code == "PAD001"]
        assert got == [], body
