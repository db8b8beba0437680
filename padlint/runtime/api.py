"""Explicit API for engines and tests that call the checker themselves."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from padlint.runtime import checks, context, hooks
from padlint.runtime.checker import Checker, Stats
from padlint.runtime.context import StepCounts, row_count
from padlint.runtime.errors import StalePaddingError, Violation
from padlint.runtime.modes import parse_mode
from padlint.runtime.spec import FLAT, FieldRule, RuntimeSpec, runtime_spec

#: pytest leaves padlint's own frames (and their locals) out of tracebacks
__tracebackhide__ = True

_SPECS: dict[str, RuntimeSpec] = {}


def _spec(profile: str) -> RuntimeSpec:
    if profile not in _SPECS:
        _SPECS[profile] = runtime_spec(profile)
    return _SPECS[profile]


def _checker(mode: str | None, profile: str | None = None, cuda_policy: str = "sync") -> Checker:
    """The checker an explicit call uses.

    No ``mode`` and no ``profile``: the installed checker when there is one.
    Otherwise a checker of its own with that mode (default: the installed
    checker's, else "strict"), the ``profile``'s fields (default: the
    installed checker's, else vllm) and the ``sync`` CUDA policy; with
    hooks installed it shares the installed checker's spec, tally
    (``stats``, and the lock guarding it) and test label, so what it checks
    and finds counts in the installed tally, except in a thread where the
    installed checker is suspended (pytest ``padlint_off``).  Without hooks
    it is a throw-away checker.  Raises ValueError for an unknown profile.
    """
    inst = hooks.checker()
    if inst is not None and mode is None and profile is None:
        return inst
    spec = _spec(profile) if profile is not None else inst.spec if inst else _spec("vllm")
    chk = Checker(spec, mode=parse_mode(mode if mode is not None else inst.mode if inst else None, "strict"),
                  cuda_policy=cuda_policy)
    if inst is not None:
        chk.label = inst.label
        chk.capturing = inst.capturing
        chk.force_device_path = inst.force_device_path
        if not inst.suspended_here:
            chk.stats = inst.stats
            chk._lock = inst._lock
    return chk


def check_padding(tensor: Any, num_real: int, neutral: Any, *, axis: int = 0, num_padded: int | None = None,
                  name: str = "tensor", why: str = "", mode: str | None = None) -> list[Violation]:
    """Check that rows ``[num_real:num_padded)`` of ``tensor`` on ``axis`` hold ``neutral``.

    ``tensor``: ``Tensor[num_padded, ...]`` (any dtype, CPU or CUDA) or a
    numpy array, at least 1-D; ``num_padded`` defaults to
    ``tensor.shape[axis]``.  ``neutral``: a scalar (``False``, ``0``, ``-1`` =
    vLLM PAD_SLOT_ID, ``0`` = vLLM NULL_BLOCK_ID, ``1``) or ``"flat"`` (any
    case) for cumulative offsets (every padding entry equals entry
    ``num_real - 1``; for ``query_start_loc`` pass ``num_real = num_reqs +
    1``).  A scalar the dtype cannot hold (-1 in ``uint8``) is never met.
    ``name``: the field (``"seq_lens"`` or ``"CommonAttentionMetadata.seq_lens"``);
    when it names a profile field, ``why`` defaults to the profile's reason.
    ``mode``: "strict" (default without installed hooks) raises
    :class:`StalePaddingError`; "record" returns the violations; "off"
    checks nothing; None uses the installed checker (its mode and CUDA
    policy).  With hooks installed, what an explicit call checks and finds
    (in any mode) is added to the installed checker's tally
    (``current_checker().stats``), except in a thread where that checker is
    suspended.
    A CUDA tensor costs one host synchronisation (none while a CUDA graph
    is being captured: then nothing is checked and the skip is counted).

    Raises ``TypeError`` (not a dense tensor or a numeric array; a count or
    ``axis`` that is not an integer; a neutral value that is not a number,
    bool or string; ``name`` not a string) and ``ValueError`` (a string
    neutral value other than "flat", a 0-d or meta tensor, ``axis`` out of
    range, a negative count,
    ``num_real`` above the padded count, ``num_padded`` above the length).
    """
    chk = _checker(mode)
    if not chk.active:
        return []
    if not isinstance(name, str) or not name:
        raise TypeError(f"check_padding: name must be a non-empty string, got {name!r}")
    if not isinstance(tensor, (torch.Tensor, np.ndarray)):
        raise TypeError(f"{name}: expected a torch.Tensor or numpy.ndarray, got {type(tensor).__name__}")
    if isinstance(tensor, np.ndarray) and tensor.dtype.kind not in "biufc":
        raise TypeError(f"{name}: numpy dtype {tensor.dtype} holds no numbers to check")
    if isinstance(tensor, torch.Tensor) and tensor.layout != torch.strided:
        raise TypeError(f"{name}: a {tensor.layout} tensor: only dense (strided) tensors are checked")
    if tensor.ndim == 0:
        raise ValueError(f"{name}: a 0-d tensor has no rows to check")
    if isinstance(tensor, torch.Tensor) and tensor.device.type == "meta":
        raise ValueError(f"{name}: a meta tensor has no values to check")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name}: axis must be an integer, got {axis!r}")
    axis = int(axis)
    if not -tensor.ndim <= axis < tensor.ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for a {tensor.ndim}-D tensor")
    axis %= tensor.ndim
    num_real = row_count(num_real, f"{name}: num_real")
    length = tensor.shape[axis]
    if num_padded is None:
        padded = length
    else:
        padded = row_count(num_padded, f"{name}: num_padded")
        if length < padded:
            raise ValueError(f"{name}: shape {tuple(tensor.shape)} has fewer than num_padded={padded} rows "
                             f"on axis {axis}")
    if num_real > padded:
        raise ValueError(f"{name}: num_real={num_real} is above the padded count {padded}"
                         + ("" if num_padded is not None else f" (the length of axis {axis})"))
    neutral = _neutral(neutral, name)
    if neutral is FLAT and num_real < 1:
        raise ValueError(f"{name}: a flat (cumulative) check needs num_real >= 1")
    owner, _, field = name.rpartition(".")
    profile_rule = chk.spec.rule(field)
    why = why or (profile_rule.why if profile_rule is not None else "")
    rule = FieldRule(field, f"dim {axis}", neutral, "flat" if neutral is FLAT else repr(neutral), why)
    with chk._lock:
        chk.stats.objects_checked += 1
    if num_real == padded:
        return []
    on_device = isinstance(tensor, torch.Tensor) and (chk.force_device_path or tensor.device.type != "cpu")
    a = None if on_device else checks.as_numpy(tensor)
    if on_device and chk.capturing():
        with chk._lock:
            chk.stats.skipped_capture += 1
        return []
    with chk._lock:
        chk.stats.fields_checked += 1
        if on_device:
            chk.stats.host_syncs += 1
    if on_device:  # the fused reduction and one copy to the host: exactly one synchronisation
        rows_first = tensor.movedim(axis, 0) if axis else tensor
        items = [(rows_first, num_real, padded, neutral)]
        packed, layout = checks.pack_device_rows(items)  # one cat, one copy to the host
        ((rows, values, num_bad),) = checks.unpack_device_rows(packed.cpu(), layout, items, chk.max_rows)
    elif a is not None and not checks.cpu_has_stale(a, num_real, padded, neutral, axis):
        return []
    else:
        rows, values, num_bad = checks.find_stale_rows(tensor, num_real, padded, neutral, axis, chk.max_rows)
    if not num_bad:
        return []
    lead = ":, " * axis  # the padding rows are on `axis`: index it, not axis 0
    fill = rule.neutral_text if neutral is not FLAT else f"{field}[{lead}{num_real - 1}]"
    v = Violation(owner=owner or "check_padding", field=field, axis=rule.axis, real=num_real,
                  padded=padded, start=num_real, stop=padded, dtype=str(tensor.dtype),
                  device=str(getattr(tensor, "device", "cpu (numpy)")), shape=tuple(tensor.shape),
                  expected=rule.expected_text(), why=why, rows=rows, values=values, num_bad=num_bad,
                  fix=f"{field}[{lead}{num_real}:{padded}] = {fill}",
                  constructed_at=_caller(), when="explicit check", test=chk.label)
    return chk._emit([v])


def _neutral(value: Any, name: str) -> Any:
    if value is FLAT:
        return value
    if isinstance(value, str):
        if value.strip().lower() == "flat":
            return FLAT
        raise ValueError(f"{name}: neutral value {value!r}: expected a number, a bool or 'flat'")
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        value = value.item() if isinstance(value, np.generic) else value
        if isinstance(value, complex) and not value.imag:
            value = value.real  # 0j is 0: compared as a real number (no ComplexWarning, no dtype mismatch)
        return value
    raise TypeError(f"{name}: neutral value {value!r}: expected a number, a bool or 'flat'")


def _caller() -> str:
    f = sys._getframe(2)
    return f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"


def _pair(value: Any, what: str) -> tuple[int | None, int | None]:
    """``(real, padded)`` from ``value``: None, a real count, or a pair whose padded
    count may be None ("not padded", as vLLM passes ``num_reqs_padded=None``)."""
    if value is None:
        return None, None
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{what}: expected (real, padded), got {value!r}")
        real = row_count(value[0], f"{what}: real count")
        if value[1] is None:
            return real, real
        padded = row_count(value[1], f"{what}: padded count")
        if padded < real:
            raise ValueError(f"{what}: padded count {padded} is below the real count {real}")
        return real, padded
    try:
        return row_count(value, what), None
    except TypeError as e:
        raise TypeError(f"{e} (or a (real, padded) pair)") from None


def check_metadata(obj: Any, num_reqs: Any = None, num_tokens: Any = None, *, mode: str | None = None,
                   profile: str | None = None) -> list[Violation]:
    """Check every profile field of a metadata object (e.g. ``CommonAttentionMetadata``).

    ``num_reqs``/``num_tokens``: ``(real, padded)`` pairs (``padded`` None:
    not padded, the vLLM convention), or the real count alone (the padded
    count is then each field's own length: for ``query_start_loc`` ``len -
    1``).  An axis not given takes the counts of the enclosing provider call
    when hooks are installed, else counts inferred from the object (trailing
    requests with zero query length in a CPU cumulative-offset field are
    padding).  ``mode`` as in :func:`check_padding`; ``profile``: the
    engine profile whose fields are checked (default: the installed
    checker's, else "vllm").  CUDA fields cost one host synchronisation for
    the whole object (the installed checker's ``deferred`` policy does not
    apply to an explicit call).
    Returns the violations (strict mode raises :class:`StalePaddingError`).
    Raises ``TypeError`` (``obj`` None, a mapping, list or tuple; counts that
    are not integers) and ``ValueError`` (an unknown profile; negative counts,
    padded below real; no counts given and none can be inferred; an object
    with none of the profile's fields; a field whose length fits neither the
    real nor the padded count given).
    """
    if obj is None or isinstance(obj, (Mapping, list, tuple, str, bytes)):
        what = "None" if obj is None else type(obj).__name__
        hint = " (for a per-layer dict or a list of micro-batches, check each value)" if obj is not None else ""
        raise TypeError(f"check_metadata: expected one metadata object, got {what}{hint}")
    inst = hooks.checker()
    if mode is None and profile is None and inst is not None:
        if not inst.active:
            return []
        if inst.cuda_policy == "deferred":
            mode = inst.mode  # an explicit call expects an answer now: same mode, one sync
    elif mode is None and inst is not None and not inst.active:
        return []
    chk = _checker(mode, profile)
    if not chk.active:
        return []
    fields = [r.name for r in chk.spec.rules]
    if not any(chk.field_value(obj, n) is not None for n in fields):  # never through a property
        raise ValueError(f"check_metadata: {type(obj).__name__} has none of the profile's fields "
                         f"({', '.join(fields[:6])}{', ...' if len(fields) > 6 else ''})")
    if type(obj) not in chk._infer:
        names = next((c.infer_from for c in chk.spec.classes), ("query_start_loc_cpu", "query_start_loc"))
        chk.register_class(type(obj), names or ("query_start_loc_cpu", "query_start_loc"))
    counts = None
    if num_reqs is not None or num_tokens is not None:
        rr, rp = _pair(num_reqs, "num_reqs")
        tr, tp = _pair(num_tokens, "num_tokens")
        if num_reqs is None or num_tokens is None:  # the other axis: the step's counts, else inferred
            other = context.current() or chk._infer_counts(obj)
            if other is not None and num_reqs is None:
                rr, rp = other.num_reqs, other.num_reqs_padded
            if other is not None and num_tokens is None:
                tr, tp = other.num_tokens, other.num_tokens_padded
        counts = StepCounts(rr, rp, tr, tp, provider="check_metadata",
                            names={"reqs": chk.spec.count_names("reqs"), "tokens": chk.spec.count_names("tokens")})
    elif context.current() is None and chk._infer_counts(obj) is None:
        raise ValueError(f"check_metadata: cannot tell the real counts of {type(obj).__name__}: it has no CPU "
                         f"cumulative-offset field ({', '.join(chk._infer[type(obj)])}) to infer them from; "
                         f"pass num_reqs=(real, padded) and num_tokens=(real, padded)")
    mismatched: list[tuple[str, int, int]] = []
    found = chk.check_object(obj, counts, when="explicit check", frame=sys._getframe(1), mismatched=mismatched)
    if mismatched and counts is not None:
        raise ValueError("check_metadata: " + "; ".join(
            f"{name} has {length} rows, but the counts given say {stop}" for name, length, stop in mismatched)
            + f" ({counts.describe()})")
    return found


def summary() -> Stats | None:
    """The tally of the installed checker (None when nothing is installed)."""
    chk = hooks.checker()
    return chk.stats if chk else None


def register_poison_buffer(buffer: Any, *, axis: str = "reqs", sentinel: Any = None, name: str = "") -> Any:
    """Register a persistent source buffer for poison mode (see :mod:`padlint.runtime.poison`).

    ``buffer``: ``Tensor[rows, ...]``, a numpy array, or a CpuGpuBuffer-like
    object (its ``.cpu``/``.np`` views are poisoned).  ``sentinel``: default
    per dtype (bool True, floats NaN, signed integers -99, unsigned the
    dtype's max; never a profile neutral value).  Raises RuntimeError unless
    hooks are installed with ``poison=True``; TypeError for a buffer that is
    none of those or an unsupported dtype; ValueError for an ``axis`` other
    than "reqs", "reqs+1", "tokens", a 0-d buffer, or a sentinel the dtype
    cannot hold.
    """
    inst = hooks.installed()
    if inst is None or inst.poison is None:
        raise RuntimeError("poison mode is off: install(..., poison=True) first")
    return inst.poison.register(buffer, axis=axis, sentinel=sentinel, name=name)


def poison_padding(num_reqs: int | None, num_tokens: int | None = None) -> int:
    """Fill rows past the real counts of every registered buffer with its sentinel now
    (engines without a step hook call this between steps).  Returns buffers filled.

    A buffer that cannot be poisoned does not stop the others: it is recorded
    (``installed().poison.failures``) and warned about once.  Raises
    RuntimeError unless poison mode is on; TypeError for a count that is not
    an integer; ValueError for a negative one.
    """
    inst = hooks.installed()
    if inst is None or inst.poison is None:
        raise RuntimeError("poison mode is off: install(..., poison=True) first")
    return inst.poison.poison(num_reqs, num_tokens)


__all__ = [
    "StalePaddingError",
    "Violation",
    "check_metadata",
    "check_padding",
    "poison_padding",
    "register_poison_buffer",
    "summary",
]
