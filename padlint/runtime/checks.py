"""Tensor-level checks of padding rows (torch and numpy).

Three paths, all checking only the padding slice ``[start:stop)`` of one axis:

* CPU (:func:`cpu_has_stale`): a numpy view of the CPU tensor, one
  vectorised reduction; no torch dispatch on the hot path.
* device, fused (:func:`pack_device_checks`): every device field of one
  metadata object reduced on the device into one small ``float64`` tensor
  (per field: number of offending rows, first offending rows, their
  values), with no host synchronisation; the caller copies it to the host
  once (``sync`` policy: one blocking copy; ``deferred``: a non-blocking
  copy into pinned memory plus a CUDA event, read later).
* details (:func:`find_stale_rows`): only after a check failed; may
  synchronise.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from padlint.runtime.errors import MAX_ROWS_SHOWN
from padlint.runtime.spec import FLAT

#: pytest leaves padlint's own frames (and their locals) out of tracebacks
__tracebackhide__ = True


def stream_is_capturing() -> bool:
    """True while the current CUDA stream is capturing a graph.

    Guarded: a CPU-only torch build (or a build without a usable driver)
    may raise from ``torch.cuda.is_current_stream_capturing()``; that counts
    as "not capturing".
    """
    try:
        return bool(torch.cuda.is_current_stream_capturing())
    except Exception:  # noqa: BLE001 - any failure means no CUDA capture is possible
        return False


def as_numpy(t: Any) -> np.ndarray | None:
    """Numpy view (no copy) of a CPU tensor or ndarray; None when there is none
    (device tensor, bfloat16, tensor that requires grad)."""
    if isinstance(t, np.ndarray):
        return t
    if not isinstance(t, torch.Tensor):  # a list or str where a tensor belongs: nothing to view
        return None
    try:
        return t.numpy()
    except (TypeError, RuntimeError):
        return None


def _axis_slice(ndim: int, axis: int, start: int, stop: int) -> tuple:
    return (slice(None),) * axis + (slice(start, stop),)


# Small integer/bool padding slices are compared as bytes (``x.tobytes()`` and a
# memcmp) instead of with a numpy reduction: below about 8 KiB the copy is cheaper
# than numpy's per-call overhead, and for a non-zero neutral value it also saves
# building the ``x != v`` mask (about 0.3 against 1.3 microseconds for 2048
# int32 rows; numbers in docs/runtime.md).  Bytes equal exactly when values are
# equal only for two's-complement integers and 0/1 bools, so floats always take
# the numpy path (-0.0 == 0.0, NaN).
BYTES_COMPARE_MAX = 8192
_UNSET: Any = object()
_EXACT_BYTES_KINDS = frozenset("iub")
_ZERO_BYTES = bytes(BYTES_COMPARE_MAX)


def _nonzero(a: np.ndarray, start: int, stop: int) -> bool:
    x = a[start:stop]
    if x.nbytes <= BYTES_COMPARE_MAX and x.dtype.kind in _EXACT_BYTES_KINDS:
        return not _ZERO_BYTES.startswith(x.tobytes())
    return bool(np.count_nonzero(x))


def _flat(a: np.ndarray, start: int, stop: int) -> bool:
    x = a[start:stop]
    if x.nbytes <= BYTES_COMPARE_MAX and x.dtype.kind in _EXACT_BYTES_KINDS:
        return x.tobytes() != a[start - 1:start].tobytes() * (stop - start)
    return bool(np.count_nonzero(x != a[start - 1]))


def _numpy_value(dtype: np.dtype, neutral: Any) -> Any:
    """``neutral`` as a scalar of ``dtype`` when the dtype holds it exactly, else None (then
    every entry differs from it: -1 in uint8, NaN or 0.5 in int32, 1e6 in float16, 1j in a
    real dtype).  Never warns, never raises (numpy's cast warnings are suppressed: a test run
    with ``-W error`` must not turn them into errors)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = np.array(neutral).astype(dtype, casting="unsafe")[()]
            same = bool(v == neutral)
    except (OverflowError, ValueError, TypeError):
        return None
    return v if same else None


def _value_bytes(dtype: np.dtype, neutral: Any) -> bytes | None:
    """``BYTES_COMPARE_MAX`` bytes of ``neutral`` repeated in ``dtype``; None when the
    bytes cannot stand for the value (a float dtype, or a value the dtype cannot
    hold exactly, e.g. -1 in bool or uint8: there every entry differs from it)."""
    if dtype.kind not in _EXACT_BYTES_KINDS:
        return None
    v = _numpy_value(dtype, neutral)
    if v is None:
        return None
    return np.full(BYTES_COMPARE_MAX // dtype.itemsize, v, dtype=dtype).tobytes()


def stale_test(neutral: Any, axis: int = 0) -> Callable[[np.ndarray, int, int], bool]:
    """The padding-slice test for one neutral value: ``f(a, start, stop)`` is
    True when some entry of ``a[start:stop]`` (on ``axis``) differs from
    ``neutral``.

    Chosen once per field (the runtime checker binds one per profile field
    when it is created), so that checking a field costs one call, one slice
    and one pass over the padding rows only: a byte comparison for small
    integer/bool slices (see ``BYTES_COMPARE_MAX``), else one vectorised
    numpy reduction.  ``neutral`` is a scalar or :data:`FLAT` (compare with
    ``a[start - 1]``, the last real cumulative offset).  False and 0 test
    "any non-zero entry" (NaN counts as non-zero) without building a mask.
    """
    if axis:
        def test(a: np.ndarray, start: int, stop: int) -> bool:
            x = a[_axis_slice(a.ndim, axis, start, stop)]
            if neutral is FLAT:
                return bool(np.count_nonzero(x != a[_axis_slice(a.ndim, axis, start - 1, start)]))
            if not neutral:
                return bool(np.count_nonzero(x))
            v = _numpy_value(x.dtype, neutral)
            return x.size > 0 if v is None else bool(np.count_nonzero(x != v))
        return test
    if neutral is FLAT:
        return _flat
    if not neutral:
        return _nonzero
    patterns: dict[np.dtype, bytes | None] = {}
    values: dict[np.dtype, Any] = {}

    def test_value(a: np.ndarray, start: int, stop: int) -> bool:
        x = a[start:stop]
        dt = x.dtype
        if x.nbytes <= BYTES_COMPARE_MAX:
            pattern = patterns.get(dt, b"")
            if pattern == b"":
                pattern = patterns[dt] = _value_bytes(dt, neutral)
            if pattern is not None:
                return not pattern.startswith(x.tobytes())
        v = values.get(dt, _UNSET)
        if v is _UNSET:
            v = values[dt] = _numpy_value(dt, neutral)
        if v is None:  # the dtype cannot hold the neutral value: every entry differs from it
            return x.size > 0
        return bool(np.count_nonzero(x != v))
    return test_value


def cpu_has_stale(a: np.ndarray, start: int, stop: int, neutral: Any, axis: int = 0) -> bool:
    """True when some entry of ``a[start:stop]`` (on ``axis``) differs from ``neutral``.

    ``a``: numpy view of a CPU tensor (``ndarray[rows, ...]``).  ``neutral``
    is a scalar or :data:`FLAT`.  The same test as :func:`stale_test`, which
    the checker binds once per field.
    """
    return stale_test(neutral, axis)(a, start, stop)


def _as_torch(t: Any) -> torch.Tensor:
    """A plain tensor to compare: numpy arrays wrapped (a copy when not contiguous, e.g. a
    negative-stride view), quantized tensors dequantized, autograd detached (reading values
    must neither fail on ``requires_grad`` nor record a graph)."""
    if isinstance(t, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(t))
    if t.requires_grad:
        t = t.detach()
    if t.is_quantized:
        t = t.dequantize()
    return t


def _torch_value(dtype: torch.dtype, neutral: Any) -> Any:
    """``neutral`` as a Python scalar to compare a ``dtype`` tensor with, or None when the
    dtype cannot hold it exactly (every entry then differs from it).  Floats: an integer
    too large for a float (2**1100), or a value the dtype rounds (1e6 in float16), is not
    held; 2**70 is (a power of two), compared as a float, not overflowing int64."""
    if isinstance(neutral, complex) and not dtype.is_complex:
        if neutral.imag:
            return None
        neutral = neutral.real
    if dtype.is_complex:
        return complex(neutral)
    if dtype.is_floating_point:
        try:
            f = float(neutral)
        except (OverflowError, TypeError, ValueError):
            return None
        if math.isnan(f):
            return f
        try:
            held = torch.tensor(f, dtype=dtype).item()
        except (OverflowError, RuntimeError):
            return None
        return f if held == neutral else None
    return neutral if holds_exactly(dtype, neutral) else None


def holds_exactly(dtype: torch.dtype, neutral: Any) -> bool:
    """Whether a tensor of ``dtype`` can hold the scalar ``neutral`` exactly.

    False for -1 in ``bool`` or ``uint8``, 300 in ``int8``, 0.5 in an integer
    dtype: torch would wrap or truncate the value before comparing (``x != -1``
    on ``uint8`` compares with 255), so every entry must count as differing,
    as numpy (and Python) compare.  Floating and complex dtypes hold every
    real scalar for this purpose.
    """
    if dtype.is_floating_point or dtype.is_complex:
        return True
    if isinstance(neutral, (bool, int, np.integer)):
        value = int(neutral)  # exact: float() would round 2**63 - 1 up
    else:
        try:
            f = float(neutral)
        except (TypeError, ValueError):
            return False
        if math.isnan(f) or not f.is_integer():
            return False
        value = int(f)
    if dtype == torch.bool:
        return value in (0, 1)
    info = torch.iinfo(dtype)
    return info.min <= value <= info.max


def _rows_view(t: torch.Tensor, start: int, stop: int, neutral: Any, axis: int):
    """(x, ne): padding rows moved to dim 0 and flattened to [n, -1], and the
    per-entry mismatch mask (all True when ``t``'s dtype cannot hold ``neutral``)."""
    x = t.narrow(axis, start, stop - start)
    if neutral is FLAT:
        ne = x != t.narrow(axis, start - 1, 1)
    else:
        v = _torch_value(t.dtype, neutral)
        ne = torch.ones_like(x, dtype=torch.bool) if v is None else x != v
    if axis != 0:
        x = x.movedim(axis, 0)
        ne = ne.movedim(axis, 0)
    n = stop - start
    return x.reshape(n, -1), ne.reshape(n, -1)


def find_stale_rows(t: Any, start: int, stop: int, neutral: Any, axis: int = 0,
                    max_rows: int = MAX_ROWS_SHOWN) -> tuple[tuple[int, ...], tuple[Any, ...], int]:
    """(rows, values, num_bad) of the padding rows ``[start:stop)`` that are not neutral.

    ``rows`` are absolute row indices (first ``max_rows``), ``values`` the
    value in each (for rows of a 2-D tensor, the first non-neutral entry).
    Used only after a check failed: on a device tensor this synchronises.
    """
    t = _as_torch(t)
    if stop <= start:
        return (), (), 0
    x, ne = _rows_view(t, start, stop, neutral, axis)
    if x.shape[1] == 0:  # zero-width rows (a [rows, 0] block table) hold no value to be stale
        return (), (), 0
    rowbad = ne.any(1)
    idx = torch.nonzero(rowbad).flatten()
    num_bad = int(idx.numel())
    idx = idx[:max_rows]
    cols = ne[idx].to(torch.uint8).argmax(1)
    vals = x[idx, cols].cpu().tolist()
    return tuple(start + int(i) for i in idx.cpu().tolist()), tuple(vals), num_bad


def pack_device_checks(items: list[tuple[torch.Tensor, int, int, Any]],
                       max_rows: int = MAX_ROWS_SHOWN) -> torch.Tensor:
    """Fused check of several fields, entirely on their device; no host sync.

    ``items``: (tensor, start, stop, neutral) with padding rows on dim 0.
    Returns ``Tensor[sum(1 + 2 * k_i)] float64`` on the same device: per
    field ``[num_bad, row_0..row_{k-1}, value_0..value_{k-1}]`` with
    ``k = min(max_rows, stop - start)``; a row index ``>= stop - start``
    means "no offending row" (rows are relative to ``start``).  Values go
    through float64, exact for integers below 2**53.
    """
    parts = []
    for t, start, stop, neutral in items:
        n = stop - start
        t = _as_torch(t)
        x, ne = _rows_view(t, start, stop, neutral, 0)
        if x.shape[1] == 0:  # zero-width rows hold no value: a column of False to take from
            x = torch.zeros(n, 1, dtype=x.dtype, device=x.device)
            ne = torch.zeros(n, 1, dtype=torch.bool, device=x.device)
        rowbad = ne.any(1)
        k = min(max_rows, n)
        key = torch.where(rowbad, torch.arange(n, device=t.device), n)
        first = torch.topk(key, k, largest=False, sorted=True).values
        safe = first.clamp(max=n - 1)
        cols = ne[safe].to(torch.uint8).argmax(1)
        vals = x[safe, cols]
        parts.append(rowbad.sum().reshape(1).to(torch.float64))
        parts.append(first.to(torch.float64))
        parts.append(vals.to(torch.float64))
    return torch.cat(parts)


def pack_device_rows(items: list[tuple[torch.Tensor, int, int, Any]]) -> tuple[torch.Tensor, list[tuple]]:
    """Every device field of one metadata object in one byte buffer on the device: two kernel
    launches per object (one ``cat``, then the caller's one copy to the host), no host sync.

    ``items``: (tensor, start, stop, neutral) with padding rows on dim 0.  The padding rows
    ``[start:stop)`` of each (for :data:`FLAT` also row ``start - 1``, the last real offset)
    are viewed as bytes (a view, no kernel; a non-contiguous slice costs one copy) and
    concatenated into one ``uint8`` tensor: the comparison with the neutral values runs on
    the host, on the copied padding rows, when the result is read
    (:func:`unpack_device_rows`).  Returns (bytes on the device, layout for the unpack).
    """
    parts, layout, offset = [], [], 0
    for t, start, stop, neutral in items:
        x = _as_torch(t)
        lo = start - 1 if neutral is FLAT else start
        x = x[lo:stop]  # one slice (no kernel)
        if not x.is_contiguous():
            x = x.contiguous()
        flat = x if x.dim() == 1 else x.reshape(-1)
        b = flat.view(torch.uint8) if flat.dtype != torch.uint8 else flat
        layout.append((offset, b.numel(), lo, x.dtype, tuple(x.shape)))
        offset += b.numel()
        parts.append(b)
    if not parts:
        return torch.empty(0, dtype=torch.uint8), layout
    return (torch.cat(parts) if len(parts) > 1 else parts[0].clone()), layout


@functools.cache
def _numpy_dtype(dtype: torch.dtype) -> np.dtype | None:
    """The numpy dtype of a torch dtype, None where numpy has none (bfloat16, float8, ...)."""
    try:
        return torch.empty(0, dtype=dtype).numpy().dtype
    except (TypeError, RuntimeError):
        return None


def unpack_device_rows(host: torch.Tensor, layout: list[tuple], items: list[tuple[Any, int, int, Any]],
                       max_rows: int = MAX_ROWS_SHOWN,
                       tests: list[Callable[[np.ndarray, int, int], bool] | None] | None = None,
                       ) -> list[tuple[tuple[int, ...], tuple[Any, ...], int]]:
    """Per field (rows, values, num_bad) from a host copy of :func:`pack_device_rows`.

    ``tests``: per item, the field's numpy padding-slice test (:func:`stale_test`, bound to
    its neutral value) or None.  A field whose bytes numpy can view is tested with it first,
    on a view of the host copy (the CPU path's cost, no torch dispatch); only a field that
    fails, or one numpy cannot view (bfloat16), goes through torch to find its rows."""
    data = host.numpy() if tests is not None else None
    out = []
    for i, ((offset, nbytes, lo, dtype, shape), (_, start, stop, neutral)) in enumerate(zip(layout, items)):
        test = tests[i] if tests is not None and i < len(tests) else None
        if test is not None and nbytes:
            np_dtype = _numpy_dtype(dtype)
            if np_dtype is not None:
                a = data[offset:offset + nbytes].view(np_dtype).reshape(shape)
                if not test(a, start - lo, stop - lo):
                    out.append(((), (), 0))
                    continue
        seg = host[offset:offset + nbytes].clone()  # aligned for the view as `dtype`
        x = seg.view(dtype).reshape(shape) if nbytes else torch.empty(shape, dtype=dtype)
        rows, values, num_bad = find_stale_rows(x, start - lo, stop - lo, neutral, max_rows=max_rows)
        out.append((tuple(r + lo for r in rows), values, num_bad))
    return out


def unpack_device_checks(host: torch.Tensor | np.ndarray, items: list[tuple[Any, int, int, Any]],
                         max_rows: int = MAX_ROWS_SHOWN) -> list[tuple[tuple[int, ...], tuple[Any, ...], int]]:
    """Per field (rows, values, num_bad) from a host copy of :func:`pack_device_checks`."""
    flat = np.asarray(host).tolist()
    out, pos = [], 0
    for t, start, stop, _ in items:
        n = stop - start
        k = min(max_rows, n)
        num_bad = int(flat[pos])
        rel = flat[pos + 1: pos + 1 + k]
        vals = flat[pos + 1 + k: pos + 1 + 2 * k]
        pos += 1 + 2 * k
        rows, shown = [], []
        for r, v in zip(rel, vals):
            if r < n:
                rows.append(start + int(r))
                shown.append(_pyvalue(v, torch.float32 if getattr(t, "is_quantized", False) else t.dtype))
        out.append((tuple(rows), tuple(shown), num_bad))
    return out


def _pyvalue(v: float, dtype: torch.dtype) -> Any:
    if dtype == torch.bool:
        return bool(v)
    if not dtype.is_floating_point and not dtype.is_complex:
        return int(v)
    return v
