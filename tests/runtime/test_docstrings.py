"""Public functions of the runtime checker document what they take, return and raise."""

from __future__ import annotations

import pytest
import torch

from padlint.runtime import context
from padlint.runtime.checker import Checker
from padlint.runtime.errors import format_violations
from padlint.runtime.poison import Poisoner
from padlint.runtime.spec import RuntimeSpec


@pytest.mark.parametrize("func", [context.push, context.pop, context.local, Poisoner.register,
                                  Checker.register_class, RuntimeSpec.rule, format_violations],
                         ids=lambda f: f.__qualname__)
def test_public_function_has_a_docstring(func):
    assert func.__doc__ and len(func.__doc__.split()) >= 8, func.__qualname__


def test_poisoner_register_rejects_an_unknown_axis():
    p = Poisoner()
    with pytest.raises(ValueError, match=r"^poison buffer 'x': axis 'rows': expected one of reqs, reqs\+1, tokens$"):
        p.register(torch.zeros(4, dtype=torch.int32), axis="rows", name="x")
    assert p.buffers == []


def test_pop_without_push_raises_index_error():
    with pytest.raises(IndexError):
        context.pop()
