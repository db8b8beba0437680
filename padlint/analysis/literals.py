"""Comparing a written literal with a field's neutral value (shared by the interpreter and the
pad-value facts), and the one-line text of an expression shown in messages."""

from __future__ import annotations

import ast
from typing import Any

from padlint.profile import Profile, ProfileError, parse_neutral

_UNPARSED = object()


def literal_value(text: str) -> Any:
    """The Python value of a literal's text, or a marker object when it is not one."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _UNPARSED


def same_literal(written: str, neutral: str, profile: Profile) -> bool | None:
    """Whether literal ``written`` equals the neutral value ``neutral`` (None: cannot tell)."""
    if neutral == "flat":
        return False  # a literal where the last real cumulative value belongs
    try:
        target = parse_neutral(neutral, profile)
    except ProfileError:
        return None
    value = literal_value(written)
    if value is _UNPARSED:
        return None
    if isinstance(target, (list, tuple)) or isinstance(value, (list, tuple)):
        return list(target) == list(value) if isinstance(target, (list, tuple)) and isinstance(value, (list, tuple)) \
            else None
    return value == target


def expr_text(node: ast.AST) -> str:
    """An expression's source text on one line (whitespace collapsed), for messages; ``?``
    where the tree cannot be unparsed."""
    try:
        return " ".join(ast.unparse(node).split())
    except Exception:  # noqa: BLE001 - unparse of odd trees; a text is only shown
        return "?"
