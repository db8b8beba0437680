"""Rules as objects over the engine's facts (see :mod:`padlint.rules.base`)."""

from padlint.rules.base import Facts, Rule
from padlint.rules.registry import RULES, all_rules, codes, get_rule, static_rules

__all__ = ["RULES", "Facts", "Rule", "all_rules", "codes", "get_rule", "static_rules"]
