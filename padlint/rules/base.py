"""A rule is one object: code, name, kind, and a query over the engine's facts.

The engine (:mod:`padlint.analysis.engine`) computes facts about the whole
program: sink hits with their stale paths, resets and what they write,
persistent buffers and how they are allocated, rows that methods move.  A
static rule only *queries* those facts (CodeQL's source/sink/barrier
configurations over one shared dataflow are the model); it never walks the
code itself and knows nothing of the CLI.  Its documentation (summary,
severity, the ruff-style page, valid and invalid examples that are its tests)
is the rule page ``rules/CODE.md`` (:mod:`padlint.rules_doc`), reached through
:attr:`Rule.page`.

Kinds: ``static`` rules run on the engine's facts; ``directive`` rules
(PAD100, PAD101) are decided by the suppression stage from comments, after
the analysis.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from padlint.analysis.callgraph import CallGraph
    from padlint.analysis.interp import Interpreter
    from padlint.analysis.project import Project
    from padlint.model import Finding
    from padlint.profile import Profile
    from padlint.rules_doc import Example, RulePage

T = TypeVar("T")


@dataclass
class Facts:
    """What the engine computed for one program, for rules to query.

    ``texts``: the checked files (path as reported -> text): findings are
    reported only there.  ``keys``: checked path -> module key in ``project``.
    ``interp``: the interpreter after every entry point ran (its ``hits`` are
    the sink arguments reached stale, ``clean_hits`` those reached clean).
    Fact families that only some rules need are computed on first query and
    kept (:meth:`family`).
    """

    profile: Profile
    project: Project
    graph: CallGraph
    interp: Interpreter
    texts: dict[str, str]
    keys: dict[str, str]
    _families: dict[str, Any] = field(default_factory=dict, repr=False)

    def family(self, name: str, compute: Callable[[Facts], T]) -> T:
        """The fact family ``name``, computed once by ``compute(self)``."""
        if name not in self._families:
            self._families[name] = compute(self)
        return self._families[name]


def shown_path(path: str) -> str:
    """A trace step's file as the user sees it: a module read from disk (an absolute path)
    under the working directory is shown relative to it, like the checked files."""
    if path and os.path.isabs(path):
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            return rel
    return path


class Rule:
    """Base of every rule.  Subclasses set :attr:`code`, :attr:`name` and
    :attr:`kind`; static rules implement :meth:`check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    kind: ClassVar[str] = "static"
    #: The profile the page's examples are checked with (``vllm`` or ``sglang``).
    example_profile: ClassVar[str] = "vllm"

    def wants(self, text: str, profile: Profile | None = None) -> bool:
        """Whether a file's text may hold something this rule reports although it has no sink or
        padded count (the prefilter's test): such a file is analysed too.  Cheap text tests only;
        ``profile``: the engine profile of the run, when the test depends on it."""
        return False

    def check(self, facts: Facts) -> list[Finding]:
        """This rule's findings in the checked files (static rules only)."""
        raise NotImplementedError(f"{self.code} is a {self.kind} rule: the suppression stage decides it")

    # -- documentation, from the rule page -------------------------------------------------

    @property
    def page(self) -> RulePage:
        from padlint.rules_doc import get_page

        return get_page(self.code)

    @property
    def summary(self) -> str:
        return self.page.summary

    @property
    def severity(self) -> str:
        """Default severity; a finding may carry a lower one (model inputs: warning)."""
        return self.page.severity

    @property
    def help_uri(self) -> str:
        return self.page.help_uri

    @property
    def examples(self) -> tuple[Example, ...]:
        return self.page.examples

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code} {self.name}>"
