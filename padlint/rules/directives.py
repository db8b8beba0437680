"""PAD100 and PAD101: decided by the suppression stage (:mod:`padlint.suppress`) from comments."""

from __future__ import annotations

from padlint.rules.base import Rule
from padlint.suppress import INVALID_CODE, UNUSED_CODE


class UnusedSuppression(Rule):
    code = UNUSED_CODE
    name = "unused-suppression"
    kind = "directive"


class InvalidDirective(Rule):
    code = INVALID_CODE
    name = "invalid-directive"
    kind = "directive"
