"""The counts of the current step: a per-thread stack of provider calls (no torch).

The provider hook pushes a :class:`StepCounts` when the provider is entered
and pops it when it returns; metadata objects built in between are checked
against the innermost entry.  Thread-local, so engines that build metadata
on several threads (async scheduling) see their own step.
"""

from __future__ import annotations

import operator
import threading
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

#: pytest leaves padlint's own frames (and their locals) out of tracebacks
__tracebackhide__ = True


@dataclass(slots=True)
class StepCounts:
    """Real and padded counts of one provider call.

    ``num_reqs``/``num_reqs_padded``: request rows; ``num_tokens``/
    ``num_tokens_padded``: token rows.  A padded count equals its real count
    when the provider was called without one (vLLM: ``num_reqs_padded=None``
    outside full CUDA graphs).  ``names`` maps axis ("reqs", "tokens") to the
    (real, padded) argument names used in messages.  ``frame`` is the
    provider's caller (for the call stack in messages); ``seen`` the objects
    checked during this call with, per field, ``(tensor, tensor._version)``
    at check time, re-checked when the provider returns if either changed.
    """

    num_reqs: int | None
    num_reqs_padded: int | None
    num_tokens: int | None
    num_tokens_padded: int | None
    provider: str = ""
    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    frame: FrameType | None = None
    seen: list[tuple[Any, dict[str, tuple[Any, int]]]] = field(default_factory=list)

    def describe(self) -> str:
        r = self.names.get("reqs", ("num_reqs", "num_reqs_padded"))
        t = self.names.get("tokens", ("num_tokens", "num_tokens_padded"))
        def padded(n: int | None) -> str:  # None: inferred, each field's own length is its padded count
            return "each field's length" if n is None else str(n)

        return (f"{self.provider}({r[0]}={self.num_reqs}, {r[1]}={padded(self.num_reqs_padded)}, "
                f"{t[0]}={self.num_tokens}, {t[1]}={padded(self.num_tokens_padded)})")


def row_count(value: Any, what: str) -> int:
    """``value`` as a row count: an int, or anything with ``__index__`` (numpy
    integers, 0-d integer tensors).  Raises TypeError for other values (2.0, a
    float tensor, a bool) and ValueError for a negative one (a negative slice start
    would reach the last rows), naming ``what`` ("num_real", "poison_padding:
    num_reqs").  Shared by the explicit API and poison mode.
    """
    try:
        if isinstance(value, bool):  # True is an int to Python, never a row count
            raise TypeError
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer (int or anything with __index__), "
                        f"got {type(value).__name__} {value!r}") from None
    if n < 0:
        raise ValueError(f"{what} must be >= 0, got {n}")
    return n


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[StepCounts] = []
        self.init_depth = 0
        self.last: StepCounts | None = None


_local = _Local()


def current() -> StepCounts | None:
    """The innermost active provider call of this thread, or None."""
    stack = _local.stack
    return stack[-1] if stack else None


def push(counts: StepCounts) -> None:
    """Enter a provider call on this thread: ``counts`` is :func:`current` until the matching :func:`pop`.

    ``counts``: the call's request counts (rows of ``Tensor[num_reqs_padded]``
    fields) and token counts (rows of ``Tensor[num_tokens_padded]`` fields);
    nested calls stack.  Raises nothing.
    """
    _local.stack.append(counts)


def pop() -> StepCounts:
    """Leave the innermost provider call of this thread; returns its :class:`StepCounts`,
    which becomes :func:`last`.

    Raises IndexError when this thread has no active call (a pop without a push).
    """
    counts = _local.stack.pop()
    _local.last = counts
    return counts


def last() -> StepCounts | None:
    """The most recent provider call of this thread that has returned since
    :func:`clear_last` (poison mode uses it), or None."""
    return _local.last


def clear_last() -> None:
    """Forget the last provider call of this thread (the step hook calls it when a step
    starts, so a step that makes no provider call sees None, not the previous step's counts)."""
    _local.last = None


def local() -> _Local:
    """The module's ``threading.local`` state; every attribute read through it is the calling thread's own.

    Attributes: ``stack`` (``list[StepCounts]``, the active provider calls,
    innermost last), ``init_depth`` (``int``, how many hooked metadata
    ``__init__`` calls are running: fields are checked when the outermost
    returns, at 0), ``last`` (``StepCounts | None``, see :func:`last`).
    The hooks keep the object and read its attributes on each call.
    """
    return _local
