"""The one list of rules: selection, ``padlint rules``, ``explain``, SARIF and docs read it."""

from __future__ import annotations

from padlint.rules.base import Rule
from padlint.rules.directives import InvalidDirective, UnusedSuppression
from padlint.rules.pad001 import StalePaddingReachesSink
from padlint.rules.pad002 import PadValueDiffersFromContract
from padlint.rules.pad003 import VacatedRowKeepsData
from padlint.rules.pad004 import CountAxisMismatch
from padlint.rules.pad005 import InitialValue

#: Every rule, by code.  A new rule is a class here plus its page ``rules/CODE.md``.
RULES: tuple[Rule, ...] = (
    StalePaddingReachesSink(),
    PadValueDiffersFromContract(),
    VacatedRowKeepsData(),
    CountAxisMismatch(),
    InitialValue(),
    UnusedSuppression(),
    InvalidDirective(),
)


def all_rules() -> tuple[Rule, ...]:
    return RULES


def codes() -> tuple[str, ...]:
    return tuple(sorted(r.code for r in RULES))


def get_rule(code: str) -> Rule:
    """The rule with ``code`` (case-insensitive); raises ``KeyError`` naming the known codes."""
    key = code.strip().upper()
    for r in RULES:
        if r.code == key:
            return r
    from padlint.rules_doc import UnknownRuleError

    raise UnknownRuleError(f"unknown rule code {code!r}; known codes: {', '.join(codes())}")


def static_rules() -> tuple[Rule, ...]:
    return tuple(r for r in RULES if r.kind == "static")
