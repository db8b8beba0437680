"""Poison mode: make a missing reset change the output instead of passing silently.

CUDA-graph replays read the same buffers every step, and a metadata check
only sees what reaches a metadata object.  Poison mode writes a sentinel
into the rows past the real count of registered *source* buffers (the
persistent buffers padded slices are cut from) when each step returns, so
the next step's padding rows hold the sentinel unless the runner resets
them.  A runner with every reset in place produces the same output with
and without poison; a runner missing one produces a different output (or a
runtime-check failure outside capture).

Rows ``[real:]`` of a per-request buffer hold no live request after a step
(live requests occupy rows ``[:num_reqs]``; condensing moves rows down), so
writing them is safe for a correct runner.  Opt-in: it costs one fill per
registered buffer per step.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import torch

from padlint.profile import AXES
from padlint.runtime.context import StepCounts

#: Default sentinel per dtype kind: distinctive, and never a neutral value
#: of the vLLM profile (False, 0, -1, NULL_BLOCK_ID = 0, 1).
DEFAULT_INT_SENTINEL = -99


def default_sentinel(dtype: torch.dtype) -> Any:
    """``True`` for bool, NaN for floating point, -99 for integers."""
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point:
        return float("nan")
    return DEFAULT_INT_SENTINEL


@dataclass
class PoisonedBuffer:
    """A registered source buffer: a tensor, a numpy array, or a CpuGpuBuffer-like
    object (poisoned through its ``.cpu`` view; ``.np`` shares that memory and
    ``copy_to_gpu(n)`` carries the sentinel to ``.gpu``).  ``axis``: "reqs",
    "reqs+1" or "tokens" (rows poisoned: ``[real:]``, ``[real + 1:]``, ``[real:]``)."""

    buffer: Any
    axis: str
    sentinel: Any
    name: str


def _storage(buf: Any) -> Any:
    return getattr(buf, "cpu", buf) if not isinstance(buf, torch.Tensor) else buf


class Poisoner:
    """The registered buffers of one installation."""

    def __init__(self) -> None:
        self.buffers: list[PoisonedBuffer] = []
        self.fills = 0
        self._lock = threading.Lock()

    def register(self, buffer: Any, *, axis: str = "reqs", sentinel: Any = None, name: str = "") -> PoisonedBuffer:
        """Register a persistent source buffer to poison after each step; returns its entry.

        ``buffer``: a CPU ``Tensor[max_rows, ...]`` (any dtype), a numpy
        array, or a CpuGpuBuffer-like object (its ``.cpu`` is written).
        Rows are requests for ``axis`` "reqs" (``[num_reqs:]`` poisoned),
        cumulative offsets ``Tensor[max_num_reqs + 1]`` for "reqs+1"
        (``[num_reqs + 1:]``), tokens for "tokens" (``[num_tokens:]``).
        ``sentinel``: the value written; None: :func:`default_sentinel` of
        the tensor's dtype (-99 for a numpy array).  ``name``: for messages
        (default: the buffer's type name).
        Raises ValueError for an unknown ``axis``.
        """
        if axis not in AXES:
            raise ValueError(f"poison buffer {name or type(buffer).__name__!r}: axis {axis!r}: "
                             f"expected one of {', '.join(AXES)}")
        t = _storage(buffer)
        if sentinel is None:
            sentinel = default_sentinel(t.dtype) if isinstance(t, torch.Tensor) else DEFAULT_INT_SENTINEL
        entry = PoisonedBuffer(buffer, axis, sentinel, name or type(buffer).__name__)
        with self._lock:
            self.buffers.append(entry)
        return entry

    def poison(self, num_reqs: int | None, num_tokens: int | None) -> int:
        """Fill rows past the real counts of every registered buffer; returns how many were filled."""
        n = 0
        for b in list(self.buffers):
            real = num_tokens if b.axis == "tokens" else num_reqs
            if real is None:
                continue
            start = real + 1 if b.axis == "reqs+1" else real
            t = _storage(b.buffer)
            if start < t.shape[0]:
                t[start:] = b.sentinel
                n += 1
        with self._lock:
            self.fills += n
        return n

    def after_step(self, counts: StepCounts | None) -> None:
        """Poison with the counts of the step's (last) provider call.

        ``counts`` None (the step returned without calling the provider,
        e.g. nothing was scheduled): nothing is poisoned, since the real
        count of that step is unknown and rows past an older count may hold
        live requests now.
        """
        if counts is not None:
            self.poison(counts.num_reqs, counts.num_tokens)
