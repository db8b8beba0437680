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

Poisoning never raises out of a step: a buffer that cannot be written or
registered, counts that are not row counts and ``[runtime.poison]`` paths
missing on the runner are recorded (:attr:`Poisoner.failures`,
:attr:`Poisoner.missing`) and warned about once (:class:`PoisonWarning`).
"""

from __future__ import annotations

import cmath
import math
import numbers
import operator
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from padlint.profile import AXES
from padlint.runtime.checks import stream_is_capturing
from padlint.runtime.context import StepCounts, row_count
from padlint.runtime.errors import warn

#: pytest leaves padlint's own frames (and their locals) out of tracebacks
__tracebackhide__ = True

#: Default sentinel of signed integer dtypes: distinctive, fits every signed
#: integer dtype (int8 included), and none of the vLLM profile's neutral
#: values (False, 0, -1, NULL_BLOCK_ID = 0, 1).
DEFAULT_INT_SENTINEL = -99


#: Torch writes a Python int scalar through int64: the largest value a torch
#: uint64 buffer can be filled with (numpy takes the full uint64 range).
_TORCH_SCALAR_MAX = 2**63 - 1


def _kind(dtype: Any) -> tuple[str, Any]:
    """``(kind, limit)`` of a torch or numpy dtype: kind "bool", "int" (limit:
    ``(min, max)`` a scalar fill can write), "float" (limit: the largest finite
    value), "complex" or "other" (limit None)."""
    if isinstance(dtype, torch.dtype):
        if dtype == torch.bool:
            return "bool", None
        if dtype.is_complex:
            return "complex", None
        if dtype.is_floating_point:
            return "float", float(torch.finfo(dtype).max)
        try:
            info = torch.iinfo(dtype)
        except TypeError:
            return "other", None
        return "int", (int(info.min), min(int(info.max), _TORCH_SCALAR_MAX))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "bool", None
    if dt.kind in "iu":
        return "int", (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
    if dt.kind == "f":
        return "float", float(np.finfo(dt).max)
    if dt.kind == "c":
        return "complex", None
    return "other", None


def default_sentinel(dtype: Any) -> Any:
    """The sentinel written when none is given, for a torch or numpy ``dtype``.

    ``True`` for bool, -99.0 for floating point and complex (finite: NaN in
    padding rows reaches real rows through reductions and routing, e.g. a
    softmax or top-k over the padded batch, vLLM #40047; ask for NaN per
    buffer with ``sentinel=float("nan")``), -99
    (:data:`DEFAULT_INT_SENTINEL`) for signed integers (it fits int8), the
    dtype's maximum for unsigned integers (255 for uint8; 2**63 - 1 for a
    torch uint64, the largest scalar torch writes): always a value the dtype
    holds, never a neutral value of the profile (False, 0, -1, 1).
    Raises TypeError for any other dtype (e.g. numpy object or string arrays,
    torch quantized dtypes).
    """
    kind, limit = _kind(dtype)
    if kind == "bool":
        return True
    if kind in ("float", "complex"):
        return float(DEFAULT_INT_SENTINEL)  # -99.0: exact in float16 too
    if kind == "int":
        return DEFAULT_INT_SENTINEL if limit[0] < 0 else limit[1]
    raise TypeError(f"dtype {dtype}: poison mode supports bool, integer, floating-point and complex dtypes")


def _fitted_sentinel(value: Any, dtype: Any, name: str) -> Any:
    """``value`` as a Python scalar the ``dtype`` holds exactly (NaN and infinities
    for floating point; a float that would be stored rounded, 1e-8 in float16
    as 0.0, is not held); raises ValueError naming buffer ``name`` and ``dtype``
    otherwise, TypeError for a dtype poison mode does not support."""
    kind, limit = _kind(dtype)
    if kind == "other":
        raise TypeError(f"poison buffer {name!r}: dtype {dtype}: poison mode supports bool, integer, "
                        f"floating-point and complex dtypes")
    why = ""
    try:
        if kind == "bool":
            if isinstance(value, (bool, np.bool_)) or (not isinstance(value, (float, np.floating))
                                                        and operator.index(value) in (0, 1)):
                return bool(value)
            why = " (True, False, 0 or 1)"
        elif kind == "int":
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                v = int(value)
            elif isinstance(value, (float, np.floating)):
                v, why = None, " (not an integer)"
            else:
                v = operator.index(value)
            if v is not None:
                if limit[0] <= v <= limit[1]:
                    return v
                why = f" (range {limit[0]}..{limit[1]})"
        elif kind == "float":
            if isinstance(value, numbers.Real):
                v = float(value)
                if not math.isfinite(v) or (abs(v) <= limit and _stored(v, dtype) == v):
                    return v
                why = (f" (largest finite {limit:g})" if abs(v) > limit
                       else f" (stored as {_stored(v, dtype)!r}, not exactly)")
        elif kind == "complex" and isinstance(value, numbers.Complex):
            v = complex(value)
            back = _stored(v, dtype)
            if back == v or (cmath.isnan(back) and cmath.isnan(v)):
                return v
            why = f" (stored as {back!r}, not exactly)"
    except (TypeError, ValueError, OverflowError):
        pass
    raise ValueError(f"poison buffer {name!r}: sentinel {value!r} does not fit dtype {dtype}{why}")


def _stored(value: Any, dtype: Any) -> Any:
    """``value`` written into ``dtype`` and read back (float16 stores 1e-8 as 0.0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow to inf is the answer, not a problem
        if isinstance(dtype, torch.dtype):
            return torch.tensor([value], dtype=dtype).item()
        return np.array([value], dtype=dtype)[0].item()


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
    #: for a profile buffer, a weak reference to the runner it was found on: when the
    #: runner is gone the entry is dropped (its buffers are not kept alive or filled)
    owner: Any = None

    def dead(self) -> bool:
        return self.owner is not None and self.owner() is None


class PoisonWarning(RuntimeWarning):
    """Poison mode could not do something (a buffer could not be poisoned or
    registered, a step's counts were not row counts); warned once per buffer."""


@dataclass
class PoisonFailure:
    """Something poison mode could not do, recorded in :attr:`Poisoner.failures` instead of raised.

    ``name``: the buffer's name ("counts" for a step's counts, "step" for
    any other error after a step); ``reason``: the first error, as
    ``"ExceptionType: message"``; ``text``: the one-line description;
    ``times``: how many times it failed (it is warned about once).
    """

    name: str
    reason: str
    text: str
    times: int = 1

    def line(self) -> str:
        """``text``, with ``" (N times)"`` when it failed more than once."""
        return self.text if self.times == 1 else f"{self.text} ({self.times} times)"


def _reason(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__


def _storage(buf: Any) -> Any:
    return getattr(buf, "cpu", buf) if not isinstance(buf, torch.Tensor) else buf


def _checked_storage(buf: Any, name: str) -> torch.Tensor | np.ndarray:
    """The tensor or array written for ``buf`` (a CpuGpuBuffer-like object's ``.cpu``).

    Raises TypeError when ``buf`` is neither a tensor, an array nor an object
    whose ``.cpu`` is one; ValueError when it has no rows (0-d).
    """
    t = _storage(buf)
    if not isinstance(t, (torch.Tensor, np.ndarray)):
        got = type(buf).__name__
        if t is not buf:
            got += f" with .cpu {type(t).__name__}"
        raise TypeError(f"poison buffer {name!r}: expected a torch.Tensor, a numpy.ndarray or a CpuGpuBuffer-like "
                        f"object (with a .cpu tensor), got {got}")
    if t.ndim == 0:
        raise ValueError(f"poison buffer {name!r}: a 0-d buffer has no rows to poison")
    if isinstance(t, torch.Tensor) and (t.layout != torch.strided or t.device.type == "meta"):
        raise TypeError(f"poison buffer {name!r}: a {t.layout} tensor on {t.device}: only dense tensors "
                        f"with storage can be poisoned")
    return t


def _count(value: Any, arg: str, where: str = "poison_padding") -> int | None:
    """``value`` as a row count (:func:`padlint.runtime.context.row_count`); None stays None."""
    return None if value is None else row_count(value, f"{where}: {arg}" if where else arg)


def _queued_work_may_read(t: Any) -> bool:
    """Whether queued device work may still read ``t``: a CUDA tensor, or a pinned host tensor
    (the source of non-blocking host-to-device copies)."""
    if not isinstance(t, torch.Tensor):
        return False
    if t.is_cuda:
        return True
    try:
        return t.is_pinned()
    except RuntimeError:  # a build without an accelerator: nothing can be pinned
        return False


def _wait_for_queued_work() -> bool:
    """Synchronise the current CUDA device so that no queued copy or kernel still reads
    the rows about to be poisoned.  False while a CUDA graph is being captured
    (synchronising is illegal then, and a fill would be captured into the graph):
    the caller writes nothing."""
    if stream_is_capturing():
        return False
    torch.cuda.synchronize()
    return True


class Poisoner:
    """The registered buffers of one installation.

    ``buffers``: the registered entries; ``fills``: buffers filled so far;
    ``failures``: :class:`PoisonFailure` records, one per buffer that could
    not be poisoned or registered (and one for bad step counts): poisoning
    never raises out of a step, each is warned about once
    (:class:`PoisonWarning`) and kept here for a summary; ``missing``:
    the profile's ``[runtime.poison]`` paths not found on a step's runner
    (``"Runner.attribute.path"``, each once; warned about once when first
    found missing).  :meth:`summary_lines` gives both as text.
    """

    def __init__(self) -> None:
        self.buffers: list[PoisonedBuffer] = []
        self.fills = 0
        self.failures: list[PoisonFailure] = []
        self.missing: list[str] = []
        self._failure_of: dict[Any, PoisonFailure] = {}
        self._lock = threading.Lock()

    def _record(self, key: Any, name: str, e: BaseException, text: str) -> PoisonFailure | None:
        """Count a failure under ``key``; returns the new record the first time (to warn about), else None."""
        with self._lock:
            old = self._failure_of.get(key)
            if old is not None:
                old.times += 1
                return None
            f = self._failure_of[key] = PoisonFailure(name, _reason(e), f"{text}: {_reason(e)}")
            self.failures.append(f)
            return f

    @staticmethod
    def _warn(new: list[PoisonFailure], quiet: bool = False) -> None:
        """Warn once per new failure; ``quiet``: never raise (warnings turned into errors
        must not escape a step: the failure stays in :attr:`failures`)."""
        for f in new:
            warn(f"padlint poison: {f.text}", PoisonWarning, quiet=quiet, stacklevel=4)

    def summary_lines(self) -> list[str]:
        """One line per missing ``[runtime.poison]`` path, then one per failure
        (:meth:`PoisonFailure.line`), each starting ``"padlint poison: "``; empty
        when everything was found and poisoned.  For the plugins' summaries."""
        with self._lock:
            return ([f"padlint poison: [runtime.poison] buffer {p} not found on the runner: not poisoned"
                     for p in self.missing] + [f"padlint poison: {f.line()}" for f in self.failures])

    def note_missing(self, paths: list[str]) -> None:
        """Record ``[runtime.poison]`` paths not found on a step's runner
        (``"Runner.attribute.path"``; the step hook calls this); warns once,
        naming those not seen before.  Never raises (it runs inside the step):
        a warning turned into an error is dropped, the paths stay in
        :attr:`missing`."""
        with self._lock:
            new = [p for p in dict.fromkeys(paths) if p not in self.missing]
            self.missing += new
        if new:
            warn("padlint poison: [runtime.poison] buffer(s) not found on the runner, not poisoned: "
                 + ", ".join(new), PoisonWarning, quiet=True, stacklevel=4)

    def register(self, buffer: Any, *, axis: str = "reqs", sentinel: Any = None,
                 name: str = "", quiet: bool = False, owner: Any = None) -> PoisonedBuffer | None:
        """Register a persistent source buffer to poison after each step; returns its entry.

        ``buffer``: a CPU ``Tensor[max_rows, ...]`` (any dtype), a numpy
        array, or a CpuGpuBuffer-like object (its ``.cpu`` is written).
        Rows are requests for ``axis`` "reqs" (``[num_reqs:]`` poisoned),
        cumulative offsets ``Tensor[max_num_reqs + 1]`` for "reqs+1"
        (``[num_reqs + 1:]``), tokens for "tokens" (``[num_tokens:]``).
        ``sentinel``: the value written; None: :func:`default_sentinel` of
        the buffer's dtype (torch or numpy).  ``name``: for messages
        (default: the buffer's type name).
        Raises ValueError for an unknown ``axis``, a 0-d buffer, or an
        explicit ``sentinel`` the dtype cannot hold exactly (-1 or 256 in
        uint8, 2.5 in int32, 2 in bool, 1e6 in float16; the message names the
        buffer and the dtype); TypeError for a buffer that is neither a
        tensor, an array nor an object whose ``.cpu`` is one (a list), and for
        a dtype other than bool, integer, floating point or complex.  Every
        error is one line starting ``poison buffer '<name>':``.  With
        ``quiet`` (the step hook registering the profile's ``[runtime.poison]``
        paths inside the step, which must not raise) it raises nothing: the
        error is recorded in :attr:`failures`, warned about once, and None is
        returned.  ``owner``: the runner a profile buffer was found on; the entry
        is dropped once that runner is garbage-collected.
        """
        try:
            return self._register(buffer, axis, sentinel, name, owner)
        except Exception as e:
            if not quiet:
                raise
            name = name or type(buffer).__name__
            self._warn([f for f in [self._record(("register", name), name, e,
                                                 f"buffer {name!r} could not be registered")] if f], quiet=True)
            return None

    def _register(self, buffer: Any, axis: str, sentinel: Any, name: str, owner: Any = None) -> PoisonedBuffer:
        if axis not in AXES:
            raise ValueError(f"poison buffer {name or type(buffer).__name__!r}: axis {axis!r}: "
                             f"expected one of {', '.join(AXES)}")
        name = name or type(buffer).__name__
        t = _checked_storage(buffer, name)
        if sentinel is None:
            try:
                sentinel = default_sentinel(t.dtype)
            except TypeError as e:
                raise TypeError(f"poison buffer {name!r}: {e}") from None
        else:
            sentinel = _fitted_sentinel(sentinel, t.dtype, name)
        try:
            ref = weakref.ref(owner) if owner is not None else None
        except TypeError:  # an owner without weak references: kept as long as poison mode
            ref = None
        entry = PoisonedBuffer(buffer, axis, sentinel, name, ref)
        with self._lock:
            self.buffers.append(entry)
        return entry

    def poison(self, num_reqs: Any, num_tokens: Any) -> int:
        """Fill rows past the real counts of every registered buffer; returns how many were filled.

        ``num_reqs``/``num_tokens``: the step's real counts, each an int or
        anything with ``__index__`` (numpy integers, 0-d integer tensors), or
        None to leave the buffers of that axis alone.  Raises TypeError for
        a count that is not an integer (2.0, a float tensor) and ValueError
        for a negative one, naming the argument, before anything is written.
        The writes run under ``torch.inference_mode()`` (no autograd), so a
        ``requires_grad`` leaf, a view of one, or an inference tensor is
        written like any other buffer.
        A buffer that cannot be written (a read-only array, an expanded
        tensor) does not stop the others: it is recorded in :attr:`failures`
        and warned about (:class:`PoisonWarning`) the first time.
        """
        n, new = self._fill(_count(num_reqs, "num_reqs"), _count(num_tokens, "num_tokens"))
        self._warn(new)
        return n

    def _fill(self, num_reqs: int | None, num_tokens: int | None) -> tuple[int, list[PoisonFailure]]:
        """Write every buffer it applies to; returns (buffers filled, failures seen for the first time).

        A buffer in pinned host memory or on a CUDA device may still be read by
        work the step queued (vLLM's ``copy_to_gpu`` copies from pinned
        ``CpuGpuBuffer.cpu`` with ``non_blocking=True``): writing it now could
        change what that copy delivers.  So with such a buffer registered the
        device is synchronised once first (:func:`_wait_for_queued_work`), and
        nothing is written while a CUDA graph is being captured.
        """
        n = 0
        new: list[PoisonFailure] = []
        storages = []
        with self._lock:
            self.buffers = [b for b in self.buffers if not b.dead()]  # runners gone: drop their buffers
            buffers = list(self.buffers)
        for b in buffers:
            try:
                storages.append((b, _storage(b.buffer)))  # a CpuGpuBuffer's .cpu may raise (freed)
            except Exception as e:  # noqa: BLE001 - one buffer must not stop the others
                f = self._record(id(b), b.name, e, f"buffer {b.name!r} could not be poisoned")
                new += [f] if f else []
        if any(_queued_work_may_read(t) for _, t in storages) and not _wait_for_queued_work():
            return 0, new
        with torch.inference_mode():
            for b, t in storages:
                real = num_tokens if b.axis == "tokens" else num_reqs
                if real is None:
                    continue
                start = real + 1 if b.axis == "reqs+1" else real
                try:
                    if start < t.shape[0]:
                        t[start:] = b.sentinel
                        n += 1
                except Exception as e:  # noqa: BLE001 - one buffer must not stop the others
                    f = self._record(id(b), b.name, e, f"buffer {b.name!r} could not be poisoned")
                    if f is not None:
                        new.append(f)
        with self._lock:
            self.fills += n
        return n, new

    def after_step(self, counts: StepCounts | None) -> None:
        """Poison with the counts of the step's (last) provider call; never raises.

        It runs when the step returns or raises, so nothing it does may
        replace the step's result or exception: a buffer that cannot be
        written, counts that are not row counts (negative, not integers;
        nothing is poisoned then) and any other error are recorded in
        :attr:`failures` and warned about once (a warning filter that turns
        warnings into errors does not make it raise).
        ``counts`` None (the step returned without calling the provider,
        e.g. nothing was scheduled): nothing is poisoned, since the real
        count of that step is unknown and rows past an older count may hold
        live requests now.
        """
        new: list[PoisonFailure] = []
        try:
            if counts is not None:
                try:
                    num_reqs = _count(counts.num_reqs, "num_reqs", "")
                    num_tokens = _count(counts.num_tokens, "num_tokens", "")
                except (TypeError, ValueError) as e:
                    f = self._record("counts", "counts", e,
                                     f"counts of {counts.describe()} are not row counts, nothing was poisoned")
                    new += [f] if f else []
                else:
                    new += self._fill(num_reqs, num_tokens)[1]
        except Exception as e:  # noqa: BLE001 - never out of the step
            f = self._record("step", "step", e, "poisoning after a step failed")
            new += [f] if f else []
        self._warn(new, quiet=True)
